//! An Engine API `POST /containers/create` body as a [`ContainerSpec`] (the engine guard): the
//! keys the container rules judge, read as compose sends them. Which keys a body may hold at
//! all is the guard's own allow-list (`policy`), walked before.

use serde_json::Value;

use super::{Bind, ContainerSpec, Namespace, Setting, Source, Ulimit};
use crate::policy::{is_zero, short_value};
use crate::volume;

/// The `HostConfig` keys of each namespace.
const NAMESPACES: &[(&str, Namespace)] = &[
    ("NetworkMode", Namespace::Network),
    ("PidMode", Namespace::Pid),
    ("IpcMode", Namespace::Ipc),
    ("UTSMode", Namespace::Uts),
    ("UsernsMode", Namespace::Userns),
    ("CgroupnsMode", Namespace::Cgroup),
];

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .map(|s| str_of(s).to_string())
        .collect()
}

impl ContainerSpec {
    /// A create body; `name` is the create's `name` query parameter ("" = compose's own).
    pub fn from_engine(body: &Value, name: &str) -> ContainerSpec {
        let empty = Value::Object(Default::default());
        let hc = body.get("HostConfig").unwrap_or(&empty);
        let set = |k: &str| hc.get(k).filter(|v| !is_zero(v));
        let setting = |k: &str, v: &Value| Setting {
            key: format!("HostConfig.{k}"),
            value: short_value(v),
        };
        ContainerSpec {
            source: Source::Engine,
            service: body
                .pointer("/Labels/com.docker.compose.service")
                .map(str_of)
                .unwrap_or("?")
                .to_string(),
            image: Some(body.get("Image").map(str_of).unwrap_or("").to_string()),
            privileged: set("Privileged").map(|v| setting("Privileged", v)),
            namespaces: NAMESPACES
                .iter()
                .filter_map(|(k, ns)| Some((*ns, setting(k, set(k)?))))
                .collect(),
            cap_add: strings(hc.get("CapAdd")),
            devices: ["Devices", "DeviceRequests", "DeviceCgroupRules"]
                .iter()
                .filter_map(|k| Some(setting(k, set(k)?)))
                .collect(),
            security_opt: strings(hc.get("SecurityOpt")),
            sysctls: hc
                .get("Sysctls")
                .and_then(|m| m.as_object())
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
            oom_score_adj: set("OomScoreAdj").and_then(|v| v.as_i64()),
            ulimits: hc
                .get("Ulimits")
                .and_then(|u| u.as_array())
                .into_iter()
                .flatten()
                .map(|u| {
                    let num = |k: &str| u.get(k).and_then(|x| x.as_i64()).unwrap_or(0);
                    Ulimit {
                        name: u.get("Name").map(str_of).unwrap_or("").to_string(),
                        soft: num("Soft"),
                        hard: num("Hard"),
                    }
                })
                .collect(),
            binds: binds(hc),
            // `{"80/tcp": [{"HostIp": "", "HostPort": "8080"}]}`
            ports: hc
                .get("PortBindings")
                .and_then(|p| p.as_object())
                .into_iter()
                .flat_map(|m| m.values())
                .flat_map(|b| b.as_array().into_iter().flatten())
                .map(|hb| {
                    let f = |k: &str| hb.get(k).map(str_of).unwrap_or("").to_string();
                    (f("HostIp"), f("HostPort"))
                })
                .collect(),
            name: (!name.is_empty()).then(|| name.to_string()),
            memory: hc.get("Memory").and_then(|v| v.as_u64()).unwrap_or(0),
            pids: hc.get("PidsLimit").and_then(|v| v.as_i64()).unwrap_or(0),
            waits: Vec::new(),
        }
    }
}

/// `Binds` entries with a host path (`/src:/dst[:ro,…]`; others name volumes) and every `Mounts`
/// entry of type `bind`.
fn binds(hc: &Value) -> Vec<Bind> {
    let mut out = Vec::new();
    for b in hc
        .get("Binds")
        .and_then(|b| b.as_array())
        .into_iter()
        .flatten()
    {
        let b = volume::engine_bind(str_of(b));
        if b.source.starts_with('/') {
            out.push(Bind {
                key: "HostConfig.Binds".into(),
                source: b.source.to_string(),
                read_only: b.read_only(),
            });
        }
    }
    for m in hc
        .get("Mounts")
        .and_then(|m| m.as_array())
        .into_iter()
        .flatten()
    {
        if m.get("Type").map(str_of) == Some("bind") {
            out.push(Bind {
                key: "HostConfig.Mounts".into(),
                source: m.get("Source").map(str_of).unwrap_or("").to_string(),
                read_only: m.get("ReadOnly").and_then(|r| r.as_bool()).unwrap_or(false),
            });
        }
    }
    out
}

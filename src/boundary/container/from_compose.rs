//! A compose service as a [`ContainerSpec`] (the file passes): the keys the container rules
//! judge, read as compose writes them (short and long syntax, compose's normalised output).

use serde_yaml_ng::{Mapping, Value};

use super::{Bind, ContainerSpec, Namespace, Setting, Source, Ulimit};
use crate::boundary::compose_check::yaml::{as_str, get, seq_strings, truthy, untag};
use crate::boundary::policy::rules;

/// The compose keys of each namespace.
const NAMESPACES: &[(&str, Namespace)] = &[
    ("network_mode", Namespace::Network),
    ("pid", Namespace::Pid),
    ("ipc", Namespace::Ipc),
    ("uts", Namespace::Uts),
    ("userns_mode", Namespace::Userns),
    ("cgroup", Namespace::Cgroup),
];

impl ContainerSpec {
    /// The service `service` of a compose file. `first_pass`: the bundle's own YAML, before
    /// `.env` is rendered, so an interpolated image is left to the second pass.
    pub fn from_compose(service: &str, s: &Mapping, first_pass: bool) -> ContainerSpec {
        let setting = |key: &str, value: String| Setting {
            key: key.into(),
            value,
        };
        let image = get(s, "image").and_then(as_str).unwrap_or_default();
        ContainerSpec {
            source: Source::File,
            service: service.to_string(),
            image: (!first_pass || !image.contains('$')).then_some(image),
            privileged: get(s, "privileged")
                .filter(|v| truthy(v))
                .map(|_| setting("privileged", "true".into())),
            // an interpolated mode is judged where it is resolved: by the second pass, on
            // compose's own value, and by the guard
            namespaces: NAMESPACES
                .iter()
                .filter_map(|(k, ns)| {
                    let mode = get(s, k).and_then(as_str).filter(|m| !m.contains('$'))?;
                    Some((*ns, setting(k, mode)))
                })
                .collect(),
            cap_add: get(s, "cap_add").map(seq_strings).unwrap_or_default(),
            devices: ["devices", "device_cgroup_rules"]
                .iter()
                .filter(|k| get(s, k).is_some_and(|v| !empty(v)))
                .map(|k| setting(k, String::new()))
                .collect(),
            security_opt: get(s, "security_opt").map(seq_strings).unwrap_or_default(),
            sysctls: get(s, "sysctls").map(sysctls).unwrap_or_default(),
            oom_score_adj: get(s, "oom_score_adj").and_then(int),
            ulimits: get(s, "ulimits").map(ulimits).unwrap_or_default(),
            binds: get(s, "volumes").map(binds).unwrap_or_default(),
            ports: get(s, "ports").map(ports).unwrap_or_default(),
            name: get(s, "container_name").and_then(as_str),
            memory: memory(s),
            pids: pids(s),
        }
    }
}

fn empty(v: &Value) -> bool {
    match untag(v) {
        Value::Sequence(x) => x.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

/// A number as YAML or compose's normalised output writes it; `None` for an interpolation,
/// which the second pass sees resolved.
fn int(v: &Value) -> Option<i64> {
    as_str(v).and_then(|s| s.trim().parse().ok())
}

/// A mapping or a `name=value` list.
fn sysctls(v: &Value) -> Vec<String> {
    match untag(v) {
        Value::Mapping(m) => m.keys().filter_map(as_str).collect(),
        other => seq_strings(other)
            .into_iter()
            .map(|x| x.split('=').next().unwrap_or_default().to_string())
            .collect(),
    }
}

/// `{nofile: 1024}` or `{nofile: {soft: 1024, hard: 2048}}`.
fn ulimits(v: &Value) -> Vec<Ulimit> {
    let Value::Mapping(m) = untag(v) else {
        return Vec::new();
    };
    m.iter()
        .map(|(k, l)| {
            let (soft, hard) = match untag(l) {
                Value::Mapping(sh) => (
                    get(sh, "soft").and_then(int).unwrap_or(0),
                    get(sh, "hard").and_then(int).unwrap_or(0),
                ),
                other => {
                    let n = int(other).unwrap_or(0);
                    (n, n)
                }
            };
            Ulimit {
                name: as_str(k).unwrap_or_default(),
                soft,
                hard,
            }
        })
        .collect()
}

/// The service's `volumes` with an absolute host source: short (`/src:/dst[:ro]`) or long
/// (`type: bind` or an absolute `source`) syntax. A relative source is the file passes' own
/// rule (it stays inside the release).
fn binds(v: &Value) -> Vec<Bind> {
    let Value::Sequence(vols) = v else {
        return Vec::new();
    };
    let bind = |source: String, read_only: bool| {
        source.trim().starts_with('/').then(|| Bind {
            key: "volumes".into(),
            source,
            read_only,
        })
    };
    vols.iter()
        .filter_map(|vol| match untag(vol) {
            Value::String(short) => {
                let src = short.split(':').next().unwrap_or_default();
                let ro = short
                    .split(':')
                    .nth(2)
                    .is_some_and(|m| m.split(',').any(|o| o.trim() == "ro"));
                bind(src.to_string(), ro)
            }
            Value::Mapping(m) => {
                let src = get(m, "source").and_then(as_str).unwrap_or_default();
                // read-only only when plainly so (`${RO}` is not)
                let ro = matches!(get(m, "read_only"), Some(Value::Bool(true)))
                    || get(m, "read_only").and_then(as_str).as_deref() == Some("true");
                bind(src, ro)
            }
            _ => None,
        })
        .collect()
}

/// Published host ports, short (`[IP:]HOST[-HOST]:CONTAINER[/proto]`, `[::1]:80:80`) or long
/// (`published`, `host_ip`) syntax.
fn ports(v: &Value) -> Vec<(String, String)> {
    let Value::Sequence(items) = untag(v) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match untag(item) {
            Value::Mapping(m) => Some((
                get(m, "host_ip").and_then(as_str).unwrap_or_default(),
                get(m, "published").and_then(as_str).unwrap_or_default(),
            )),
            other => as_str(other).map(|s| short_port(&s)),
        })
        .collect()
}

/// `(host ip, host port range)` of a short port entry; no host part means any free port.
fn short_port(s: &str) -> (String, String) {
    let s = s.split('/').next().unwrap_or_default().trim();
    // an IPv6 host address is bracketed: `[::1]:8080:80`
    let (ip, rest) = match s.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((ip, rest)) => (ip.to_string(), rest.trim_start_matches(':')),
        None => (String::new(), s),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    match (ip.is_empty(), parts.as_slice()) {
        (true, [ip, host, _]) => (ip.to_string(), host.to_string()),
        (_, [host, _]) => (ip, host.to_string()),
        _ => (ip, String::new()),
    }
}

/// `deploy.resources.limits.<k>`.
fn deploy_limit(s: &Mapping, k: &str) -> Option<String> {
    let Some(Value::Mapping(d)) = get(s, "deploy") else {
        return None;
    };
    let Some(Value::Mapping(r)) = get(d, "resources") else {
        return None;
    };
    let Some(Value::Mapping(l)) = get(r, "limits") else {
        return None;
    };
    get(l, k).and_then(as_str)
}

/// `mem_limit` or `deploy.resources.limits.memory`, in bytes (0 = none).
fn memory(s: &Mapping) -> u64 {
    get(s, "mem_limit")
        .and_then(as_str)
        .or_else(|| deploy_limit(s, "memory"))
        .and_then(|m| rules::parse_bytes(&m))
        .unwrap_or(0)
}

/// `pids_limit` or `deploy.resources.limits.pids` (0 = none).
fn pids(s: &Mapping) -> i64 {
    get(s, "pids_limit")
        .and_then(int)
        .or_else(|| deploy_limit(s, "pids").and_then(|p| p.trim().parse().ok()))
        .unwrap_or(0)
}

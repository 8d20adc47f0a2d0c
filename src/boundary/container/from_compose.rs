//! A compose service as a [`ContainerSpec`] (the file passes): the keys the container rules
//! judge, read as compose writes them (short and long syntax, compose's normalised output).

use serde_yaml_ng::{Mapping, Value};

use super::{Bind, ContainerSpec, Namespace, Setting, Source, Ulimit};
use crate::compose_check::yaml::{as_str, get, seq_strings, sets_nothing, truthy, untag};
use crate::policy::rules;
use crate::volume;

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
    /// The service `service` of a compose file. `first_pass`: the bundle's own YAML after the
    /// first pass's interpolation (`compose_check::interp`): a value still holding `$` is one it
    /// could not resolve (a secret, an unset variable), and the rule that reads it waits for the
    /// second pass, which sees compose's value ([`ContainerSpec::waits`]).
    pub fn from_compose(service: &str, s: &Mapping, first_pass: bool) -> ContainerSpec {
        let setting = |key: &str, value: String| Setting {
            key: key.into(),
            value,
        };
        let known = |v: &String| !(first_pass && v.contains('$'));
        let strings = |k: &str| -> Vec<String> {
            get(s, k)
                .map(seq_strings)
                .unwrap_or_default()
                .into_iter()
                .filter(known)
                .collect()
        };
        let mut waits = Vec::new();
        let mut wait = |k: &str, v: Option<String>| match v {
            Some(v) if !known(&v) => {
                waits.push(k.to_string());
                None
            }
            other => other,
        };
        let image = get(s, "image").and_then(as_str).unwrap_or_default();
        let image = wait("image", Some(image));
        let p = get(s, "privileged").and_then(as_str);
        let privileged_waits = p.is_some() && wait("privileged", p).is_none();
        let name = wait("container_name", get(s, "container_name").and_then(as_str));
        let mem = memory_text(s);
        let memory = wait("memory", mem.clone()).map(|_| ());
        let pid = pids_text(s);
        let pid_known = wait("pids", pid.clone()).map(|_| ());
        ContainerSpec {
            source: Source::File,
            service: service.to_string(),
            image,
            privileged: get(s, "privileged")
                .filter(|v| truthy(v) && !privileged_waits)
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
            cap_add: strings("cap_add"),
            devices: ["devices", "device_cgroup_rules"]
                .iter()
                .filter(|k| get(s, k).is_some_and(|v| !sets_nothing(v)))
                .map(|k| setting(k, String::new()))
                .collect(),
            security_opt: strings("security_opt"),
            sysctls: get(s, "sysctls")
                .map(sysctls)
                .unwrap_or_default()
                .into_iter()
                .filter(known)
                .collect(),
            oom_score_adj: get(s, "oom_score_adj").and_then(int),
            ulimits: get(s, "ulimits").map(ulimits).unwrap_or_default(),
            binds: get(s, "volumes")
                .map(|v| binds(v, first_pass))
                .unwrap_or_default(),
            ports: get(s, "ports")
                .map(ports)
                .unwrap_or_default()
                .into_iter()
                .filter(|(ip, host)| known(ip) && known(host))
                .collect(),
            name,
            memory: memory
                .and(mem)
                .and_then(|m| rules::parse_bytes(&m))
                .unwrap_or(0),
            pids: pid_known
                .and(pid)
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(0),
            waits,
        }
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

/// The service's `volumes` with an absolute host source, short or long syntax, read by the one
/// parser ([`crate::volume`]). A relative source is the file passes' own rule (it
/// stays inside the release); an entry the first pass could not interpolate is the second's.
fn binds(v: &Value, first_pass: bool) -> Vec<Bind> {
    volume::service_volumes(v, first_pass)
        .into_iter()
        .filter_map(|e| match e {
            volume::Entry::Known(m) if m.absolute_bind() => Some(Bind {
                key: "volumes".into(),
                source: m.source,
                read_only: m.read_only,
            }),
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

/// `mem_limit` or `deploy.resources.limits.memory`, as written.
fn memory_text(s: &Mapping) -> Option<String> {
    get(s, "mem_limit")
        .and_then(as_str)
        .or_else(|| deploy_limit(s, "memory"))
}

/// `pids_limit` or `deploy.resources.limits.pids`, as written.
fn pids_text(s: &Mapping) -> Option<String> {
    get(s, "pids_limit")
        .and_then(as_str)
        .or_else(|| deploy_limit(s, "pids"))
}

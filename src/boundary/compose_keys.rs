//! The compose allow-list: every key a compose file may use, with the reason it is allowed.
//! A key not in these tables is refused as `COMPOSE_KEY_REFUSED: <service>.<path.to.key>`
//! (names only), on the bundle's own YAML before the lease and again on compose's normalised
//! `config` — so a key a new compose release invents is refused until someone reads what it
//! does and adds it here (docs/POLICY.md says how). The deep analysis in `compose_check` and
//! the engine guard judge the *values* of the keys marked "checked".

use serde_yaml_ng::{Mapping, Value};

use crate::compose_check::yaml::sets_nothing;
use crate::keys::{self, How};
use crate::{Refusal, RefusalCode};

pub const CODE: RefusalCode = RefusalCode::ComposeKeyRefused;

/// Top-level keys.
pub const TOP: &[(&str, &str)] = &[
    ("version", "informational"),
    ("name", "the project name; the agent passes its own with -p"),
    ("services", "judged key by key below"),
    ("volumes", "judged key by key below"),
    ("networks", "judged key by key below"),
    (
        "secrets",
        "checked: file sources must be inside the release",
    ),
    (
        "configs",
        "checked: file sources must be inside the release",
    ),
];

/// Keys under `deploy`.
pub const DEPLOY: &[(&str, &str)] = &[
    ("resources", "limits and reservations; devices refused"),
    ("restart_policy", "its own lifecycle"),
    ("replicas", "how many"),
    ("labels", "metadata"),
    ("mode", "replicated/global"),
    ("update_config", "rollout order"),
    ("rollback_config", "rollout order"),
    ("placement", "swarm only; ignored by compose"),
    ("endpoint_mode", "swarm only; ignored by compose"),
];

/// Keys of a top-level `volumes:` entry.
pub const VOLUME: &[(&str, &str)] = &[
    ("name", "a name"),
    (
        "external",
        "checked by the engine guard: only the project's own volumes are joined",
    ),
    ("labels", "metadata"),
    ("driver", "checked by the engine guard: local only"),
    (
        "driver_opts",
        "checked: a mount(2) in disguise, refused unless the box permits",
    ),
];

/// Keys of a top-level `networks:` entry.
pub const NETWORK: &[(&str, &str)] = &[
    ("name", "a name"),
    (
        "external",
        "checked by the engine guard: only the project's own networks are joined",
    ),
    ("labels", "metadata"),
    ("driver", "checked by the engine guard: bridge only"),
    ("driver_opts", "checked by the engine guard: MTU only"),
    ("internal", "less, not more"),
    ("attachable", "within the project"),
    (
        "enable_ipv6",
        "addressing; an IPv6 subnet is judged under ipam",
    ),
    ("enable_ipv4", "addressing"),
    (
        "ipam",
        "checked: subnets from the box's network_pools, clear of its routes (NETWORK_REFUSED)",
    ),
];

/// Keys of a top-level `secrets:` / `configs:` entry.
pub const SECRET: &[(&str, &str)] = &[
    ("name", "a name"),
    ("file", "checked: inside the release"),
    ("content", "inline text from the bundle"),
    ("labels", "metadata"),
];

fn known(table: &[(&str, &str)], k: &str) -> bool {
    table.iter().any(|(n, _)| *n == k)
}

fn key_name(k: &Value) -> String {
    match k {
        Value::String(s) => s.clone(),
        _ => "<non-string key>".into(),
    }
}

fn mapping(v: &Value) -> Option<&Mapping> {
    match v {
        Value::Mapping(m) => Some(m),
        Value::Tagged(t) => mapping(&t.value),
        _ => None,
    }
}

fn refuse(path: String) -> Refusal {
    Refusal::new(CODE, path)
}

fn keys_in(m: &Mapping, table: &[(&str, &str)], prefix: &str, out: &mut Vec<Refusal>) {
    for k in m.keys() {
        let name = key_name(k);
        // extension fields are ignored by compose and carry anchors
        if name.starts_with("x-") {
            continue;
        }
        if !known(table, &name) {
            out.push(refuse(format!("{prefix}{name}")));
        }
    }
}

/// A service's keys against the key table: a key without a row, or a refused one, is
/// `COMPOSE_KEY_REFUSED: <service>.<key>`; a privilege key set to anything but an empty value
/// is `PRIVILEGED_REFUSED` (this pass runs only where the box does not permit privilege).
fn service_keys(svc: &Mapping, name: &str, out: &mut Vec<Refusal>) {
    for (k, v) in svc {
        let key = key_name(k);
        if key.starts_with("x-") {
            continue;
        }
        let r = match keys::compose_row(&key) {
            None => refuse(format!("{name}.{key}")),
            Some(row) => match row.how {
                How::Harmless | How::Rule(_) => continue,
                How::Privilege if sets_nothing(v) || engine_default(&key, v) => continue,
                How::Privilege => Refusal::new(
                    RefusalCode::PrivilegedRefused,
                    format!("service {name} sets {key} ({})", row.why),
                )
                .lifted_by(row.lift),
                How::Refused => {
                    let r = refuse(format!("{name}.{key}"));
                    if row.lift.is_empty() {
                        r
                    } else {
                        r.lifted_by(format!("{} ({})", row.lift, row.why))
                    }
                }
            },
        };
        out.push(r.at(name, &key));
    }
}

/// The engine's own default for `key` ([`keys::ENGINE_DEFAULTS`]): it changes nothing.
fn engine_default(key: &str, v: &Value) -> bool {
    let Value::String(v) = v else { return false };
    keys::ENGINE_DEFAULTS.contains(&(key, v.as_str()))
}

/// Judges every key of a parsed compose document (aliases and merge keys already resolved):
/// the first refusal.
pub fn check(root: &Mapping) -> Result<(), Refusal> {
    match check_all(root).into_iter().next() {
        Some(r) => Err(r),
        None => Ok(()),
    }
}

/// Every key the allow-list refuses, in document order.
pub fn check_all(root: &Mapping) -> Vec<Refusal> {
    let mut out = Vec::new();
    keys_in(root, TOP, "", &mut out);
    if let Some(services) = root.get("services").and_then(mapping) {
        for (name, svc) in services {
            let name = key_name(name);
            let Some(svc) = mapping(svc) else { continue };
            service_keys(svc, &name, &mut out);
            if let Some(d) = svc.get("deploy").and_then(mapping) {
                keys_in(d, DEPLOY, &format!("{name}.deploy."), &mut out);
                if let Some(res) = d.get("resources").and_then(mapping) {
                    for (kind, r) in res {
                        if let Some(r) = mapping(r) {
                            if r.contains_key("devices") {
                                out.push(refuse(format!(
                                    "{name}.deploy.resources.{}.devices",
                                    key_name(kind)
                                )));
                            }
                        }
                    }
                }
            }
        }
    }
    for (top, table) in [
        ("volumes", VOLUME),
        ("networks", NETWORK),
        ("secrets", SECRET),
        ("configs", SECRET),
    ] {
        if let Some(defs) = root.get(top).and_then(mapping) {
            for (name, def) in defs {
                if let Some(def) = mapping(def) {
                    keys_in(def, table, &format!("{top}.{}.", key_name(name)), &mut out);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(y: &str) -> Result<(), Refusal> {
        let v: Value = serde_yaml_ng::from_str(y).unwrap();
        check(mapping(&v).unwrap())
    }

    #[test]
    fn unknown_keys_are_named_known_pass() {
        assert!(run("services:\n  a:\n    image: x\n    ports: ['80:80']\n    deploy: {resources: {limits: {memory: 1G}}}\nvolumes:\n  d: {}\n").is_ok());
        let e = run("services:\n  a:\n    image: x\n    use_api_socket: true\n").unwrap_err();
        assert_eq!((e.code, e.detail.as_str()), (CODE, "a.use_api_socket"));
        let e = run("services:\n  a:\n    image: x\n    deploy: {resources: {reservations: {devices: [{driver: nvidia}]}}}\n").unwrap_err();
        assert_eq!(e.detail, "a.deploy.resources.reservations.devices");
        let e = run("services: {}\nmodels:\n  m: {}\n").unwrap_err();
        assert_eq!(e.detail, "models");
        let e = run("services: {}\nsecrets:\n  s: {environment: DOCKER_CONFIG}\n").unwrap_err();
        assert_eq!(e.detail, "secrets.s.environment");
        assert!(run("x-common: &c {image: x}\nservices:\n  a: {image: y, x-note: 1}\n").is_ok());
    }
}

//! The compose allow-list: every key a compose file may use, with the reason it is allowed.
//! A key not in these tables is refused as `COMPOSE_KEY_REFUSED: <service>.<path.to.key>`
//! (names only), on the bundle's own YAML before the lease and again on compose's normalised
//! `config` — so a key a new compose release invents is refused until someone reads what it
//! does and adds it here (docs/POLICY.md says how). The deep analysis in `compose_check` and
//! the engine guard judge the *values* of the keys marked "checked".

use serde_yaml_ng::{Mapping, Value};

use crate::boundary::bundle::{Refusal, RefusalCode};

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

/// Service keys.
pub const SERVICE: &[(&str, &str)] = &[
    ("image", "what to run"),
    ("command", "the process inside the container"),
    ("entrypoint", "the process inside the container"),
    ("environment", "the container's own environment"),
    ("env_file", "checked: files inside the release only"),
    ("healthcheck", "runs inside the container"),
    ("ports", "checked: no host port the box reserves"),
    ("expose", "metadata"),
    ("restart", "its own lifecycle"),
    ("depends_on", "start order within the project"),
    ("deploy", "resources and restart policy; devices refused"),
    (
        "labels",
        "metadata (the engine guard keeps the project label)",
    ),
    (
        "logging",
        "checked by the engine guard: local log drivers only",
    ),
    ("networks", "checked: the project's own networks only"),
    (
        "volumes",
        "checked: binds and volumes judged by the bind rule",
    ),
    ("tmpfs", "memory inside the container"),
    ("working_dir", "inside the container"),
    ("user", "a user inside the container"),
    ("group_add", "groups inside the container"),
    ("hostname", "its own UTS namespace"),
    ("domainname", "its own UTS namespace"),
    ("init", "an init process inside the container"),
    ("stop_grace_period", "its own shutdown"),
    ("stop_signal", "its own shutdown"),
    ("stdin_open", "stream plumbing"),
    ("tty", "stream plumbing"),
    ("read_only", "less, not more"),
    ("shm_size", "its own /dev/shm"),
    (
        "ulimits",
        "checked: rtprio, nice and memlock above the defaults are privilege",
    ),
    (
        "mem_limit",
        "resource limit, checked against the box's container_limits",
    ),
    ("mem_reservation", "resource limit"),
    ("memswap_limit", "resource limit"),
    ("mem_swappiness", "resource limit"),
    ("cpus", "resource limit"),
    ("cpu_count", "resource limit"),
    ("cpu_percent", "resource limit"),
    ("cpu_shares", "resource limit"),
    ("cpu_quota", "resource limit"),
    ("cpu_period", "resource limit"),
    ("cpuset", "resource limit"),
    (
        "pids_limit",
        "resource limit, checked against the box's container_limits",
    ),
    ("blkio_config", "resource limit"),
    (
        "oom_score_adj",
        "checked: a negative score makes the OOM killer pick the box's other processes",
    ),
    ("cap_drop", "less, not more"),
    ("cap_add", "checked: namespaced capabilities only"),
    ("security_opt", "checked: options that only take away"),
    ("sysctls", "checked: namespaced sysctls only"),
    ("dns", "resolver inside the container"),
    ("dns_search", "resolver inside the container"),
    ("dns_opt", "resolver inside the container"),
    ("extra_hosts", "/etc/hosts inside the container"),
    ("container_name", "checked: inside the project's namespace"),
    ("mac_address", "its own interface"),
    ("platform", "which image variant to pull"),
    (
        "pull_policy",
        "when to pull; the engine guard runs only images this project pulled",
    ),
    ("scale", "how many"),
    ("links", "names within the project"),
    ("secrets", "checked: sources inside the release"),
    ("configs", "checked: sources inside the release"),
    ("profiles", "which services start"),
    ("network_mode", "checked: host and other containers refused"),
    ("pid", "checked: host and other containers refused"),
    ("ipc", "checked: host and other containers refused"),
    ("privileged", "checked: refused unless the box permits"),
    ("devices", "checked: refused unless the box permits"),
    ("userns_mode", "checked: refused unless the box permits"),
    ("cgroup_parent", "checked: refused unless the box permits"),
    (
        "volumes_from",
        "checked: refused (another container's mounts)",
    ),
    ("build", "checked: refused (runs on the host)"),
];

/// Keys under `deploy`.
const DEPLOY: &[(&str, &str)] = &[
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
const VOLUME: &[(&str, &str)] = &[
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
const NETWORK: &[(&str, &str)] = &[
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
const SECRET: &[(&str, &str)] = &[
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
            keys_in(svc, SERVICE, &format!("{name}."), &mut out);
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

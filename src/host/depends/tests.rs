//! The derivation holds every config key that names a host, a port or a path: each is set to
//! a sentinel and must come out of [`of_config`] under some transport. A key added to the
//! config without a row in [`KEYS`] fails the census.

use super::*;

/// What a config key names, for the census.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A host the agent (or the engine for it) dials.
    Host,
    /// A port listened on or dialled on loopback.
    Port,
    /// A list of ports.
    Ports,
    /// A URL whose host and port are dialled.
    Url,
    /// A file or directory the agent reads or writes.
    File,
    /// Paths an instance's containers own (`bind_roots`).
    Claims,
    /// Names no host, port or path of the box: the reason is in the row.
    Not(&'static str),
}

use Kind::*;

/// Every leaf key of the config (dotted), and what it names.
const KEYS: &[(&str, Kind)] = &[
    ("env_id", Not("an id")),
    ("site", Not("a label")),
    ("transport", Not("a choice")),
    ("identity", File),
    ("sdk_refresh_s", Not("a duration")),
    (
        "tenancy.service",
        Not("a Ziti service name, dialled through the mesh"),
    ),
    ("tenancy.host", Host),
    (
        "tenancy.port",
        Not("dialled with tenancy.host (its sentinel covers both)"),
    ),
    ("tenancy.scheme", Not("a choice")),
    ("tenancy.proxy_port", Port),
    ("tenancy.timeout_s", Not("a duration")),
    ("tenancy.ca_file", File),
    (
        "bao.service",
        Not("a Ziti service name, dialled through the mesh"),
    ),
    ("bao.host", Host),
    (
        "bao.port",
        Not("dialled with bao.host (its sentinel covers both)"),
    ),
    ("bao.scheme", Not("a choice")),
    ("bao.proxy_port", Port),
    ("bao.timeout_s", Not("a duration")),
    ("bao.ca_file", File),
    ("bao.auth_mount", Not("an OpenBao path")),
    ("bao.role", Not("an OpenBao role")),
    ("bao.kv_mount", Not("an OpenBao path")),
    ("bao.renew_below_s", Not("a duration")),
    ("state_dir", File),
    ("bootstrap_path", File),
    ("laptop_mode", Not("a switch")),
    ("interval_s", Not("a duration")),
    ("prod", Not("a switch")),
    ("volumes_on_absent", Not("a choice")),
    ("healthy_timeout_s", Not("a duration")),
    ("tick_budget_s", Not("a duration")),
    (
        "compose_project",
        Not("a name: kept apart by instance::clashes"),
    ),
    ("docker_bin", File),
    ("compose_cmd", Not("a choice")),
    ("compose_bin", File),
    (
        "docker_host",
        Not("the engine socket: BoxFacts::engine_paths (privileged bundles may bind it)"),
    ),
    ("bind_roots", Claims),
    ("reserved_ports", Ports),
    ("container_limits.memory", Not("a size")),
    ("container_limits.pids", Not("a count")),
    (
        "network_pools",
        Not("where bundle networks may be: what the box lends, not what it depends on"),
    ),
    ("egress_proxy.url", Url),
    (
        "egress_proxy.no_proxy",
        Not("patterns choosing direct or proxied for the hosts above; dials nothing itself"),
    ),
    ("egress_proxy.credentials_file", File),
    ("permit_privileged", Not("a switch")),
    ("permit_rollback", Not("a switch")),
    ("bundle_signing_keys", Not("keys")),
    ("agent_signing_keys", Not("keys")),
    ("require_statements", Not("a switch")),
    ("require_image_digests", Not("a switch")),
    ("permit_agent_downgrade", Not("a switch")),
    ("agent_update_probation_s", Not("a duration")),
    ("metrics_textfile", File),
    ("apply_windows", Not("times")),
    ("apply_windows_tz", Not("a zone name")),
    ("auto_rollback", Not("a switch")),
    ("retry_failed_after_s", Not("a duration")),
    ("rollback_window_s", Not("a duration")),
    ("settle_s", Not("a duration")),
    ("heal_drift", Not("a switch")),
    ("retry_backoff_max_s", Not("a duration")),
    ("registry_host", Host),
    ("keep_releases", Not("a count")),
    ("disk_reclaim_below", Not("a size")),
    ("diagnostics_min_interval_s", Not("a duration")),
    ("log_level", Not("a choice")),
    ("statement_serial_max_jump", Not("a bound")),
    ("statement_clock_skew_s", Not("a duration")),
    ("keep_snapshots", Not("a count")),
    ("update_lock_max_s", Not("a duration")),
];

/// Every leaf key of a serialised config, dotted (maps of keys are leaves: their keys are ids).
fn leaves(v: &serde_yaml_ng::Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        serde_yaml_ng::Value::Mapping(m) if !prefix.ends_with("signing_keys") => {
            for (k, v) in m {
                let k = k.as_str().expect("string keys");
                let key = if prefix.is_empty() {
                    k.to_string()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(v, &key, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

const BASE: &str = "env_id: env-a\nsite: s\ncompose_project: p-a\nbao: {ca_file: \"\"}\n";

/// The base config with `transport` and each dotted `key: yaml value` of `set`.
fn cfg_with(set: &[(&str, &str)]) -> Config {
    let mut doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(BASE).unwrap();
    for (key, v) in set {
        let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(v).unwrap();
        let mut at = &mut doc;
        let mut parts = key.split('.').peekable();
        while let Some(p) = parts.next() {
            let m = at.as_mapping_mut().unwrap();
            if parts.peek().is_none() {
                m.insert(p.into(), v.clone());
                break;
            }
            at = m
                .entry(p.into())
                .or_insert_with(|| serde_yaml_ng::Value::Mapping(Default::default()));
        }
    }
    let text = serde_yaml_ng::to_string(&doc).unwrap();
    Config::parse(
        &text,
        std::path::Path::new("/etc/monky-deployd/config.yaml"),
    )
    .unwrap_or_else(|e| panic!("{set:?}: {e}"))
}

fn cfg(transport: &str) -> Config {
    cfg_with(&[("transport", transport)])
}

/// Whether a derivation holds a key's sentinel.
type Hit = Box<dyn Fn(&Depends) -> bool>;

#[test]
fn every_config_key_is_classified_and_every_host_port_and_path_reaches_the_derivation() {
    let full = serde_yaml_ng::to_value(Config::default()).unwrap();
    let mut keys = Vec::new();
    leaves(&full, "", &mut keys);
    let unclassified: Vec<&String> = keys
        .iter()
        .filter(|k| !KEYS.iter().any(|(n, _)| n == k))
        .collect();
    assert!(
        unclassified.is_empty(),
        "config keys with no row in depends/tests.rs KEYS (say whether each names a host, \
         a port or a path the box depends on, and derive it in depends::of_config): {unclassified:?}"
    );
    let stale: Vec<&str> = KEYS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !keys.iter().any(|k| k == n))
        .collect();
    assert!(
        stale.is_empty(),
        "rows for keys the config no longer has: {stale:?}"
    );
    // a row that calls a host/port/path key by another kind is caught by its name
    for (k, kind) in KEYS {
        let last = k.rsplit('.').next().unwrap();
        let suspicious = last.split('_').any(|w| {
            [
                "host", "port", "ports", "path", "dir", "file", "textfile", "url", "bin", "roots",
                "identity",
            ]
            .contains(&w)
        });
        if suspicious && matches!(kind, Not(_)) {
            assert!(
                matches!(*k, "tenancy.port" | "bao.port" | "docker_host"),
                "{k} sounds like a host, port or path but its row says {kind:?}"
            );
        }
    }
    // files that exist: some keys (a CA file) are checked at load
    let tmp = tempfile::tempdir().unwrap();
    for (n, (k, kind)) in KEYS.iter().enumerate() {
        let n = n as u16;
        let host = format!("sentinel-{n}.invalid");
        let port = 40000 + n;
        let path = tmp
            .path()
            .join(format!("sentinel-{n}.prom"))
            .display()
            .to_string();
        std::fs::write(&path, "").unwrap();
        let (yaml, hit): (String, Hit) = match kind {
            Not(_) => continue,
            Host => (
                host.clone(),
                Box::new(move |d: &Depends| d.remotes.iter().any(|r| r.value.host == host)),
            ),
            Url => (
                format!("http://{host}:{port}"),
                Box::new(move |d: &Depends| {
                    d.remotes
                        .iter()
                        .any(|r| r.value.host == host && r.value.port == port)
                }),
            ),
            Port => (
                port.to_string(),
                Box::new(move |d: &Depends| d.ports.iter().any(|p| p.value == port)),
            ),
            Ports => (
                format!("[{port}]"),
                Box::new(move |d: &Depends| d.ports.iter().any(|p| p.value == port)),
            ),
            File => (
                path.clone(),
                Box::new(move |d: &Depends| {
                    d.paths
                        .iter()
                        .any(|p| p.value == std::path::Path::new(&path))
                }),
            ),
            Claims => (
                format!("[{path}]"),
                Box::new(move |d: &Depends| {
                    d.claims
                        .iter()
                        .any(|p| p.value == std::path::Path::new(&path))
                        && d.clone()
                            .as_peer("x")
                            .paths
                            .iter()
                            .any(|p| p.value == std::path::Path::new(&path))
                }),
            ),
        };
        let reached = ["system", "sdk", "proxy"].iter().any(|t| {
            let c = cfg_with(&[("transport", t), (k, &yaml)]);
            hit(&of_config(&c, &|_| None, &[]))
        });
        assert!(
            reached,
            "{k} = sentinel: not in the derivation under any transport"
        );
    }
}

#[test]
fn the_environments_proxy_a_local_proxys_port_and_the_sdks_connects_are_dependencies() {
    let c = cfg("system");
    let env = |k: &str| (k == "HTTPS_PROXY").then(|| "http://u:p@127.0.0.1:3129".to_string());
    let d = of_config(&c, &env, &[]);
    assert!(d
        .remotes
        .iter()
        .any(|r| r.value.host == "127.0.0.1" && r.value.port == 3129 && r.from == "HTTPS_PROXY"));
    assert!(d.ports.iter().any(|p| p.value == 3129));
    // the proxy transport dials only the tunneller's loopback ports
    let d = of_config(&cfg("proxy"), &env, &[]);
    assert!(d.remotes.iter().all(|r| r.from == "registry_host"));
    assert_eq!(d.port_values(), [18200, 18443]);
    let d = of_config(&cfg("sdk"), &|_| None, &[("er1.example".into(), 3022)]);
    assert!(d
        .remotes
        .iter()
        .any(|r| r.value.host == "er1.example" && r.value.port == 3022));
}

#[test]
fn an_identitys_controllers_are_read_from_both_fields() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("id.json");
    std::fs::write(
        &p,
        r#"{"ztAPI":"https://ctrl.example:1280","ztAPIs":["https://[fd00::1]:8441/edge","https://ctrl.example:1280"]}"#,
    )
    .unwrap();
    assert_eq!(
        controllers(&p),
        [("ctrl.example".into(), 1280), ("fd00::1".into(), 8441)]
    );
    assert!(controllers(&dir.path().join("none")).is_empty());
}

#[test]
fn gateways_come_from_both_route_tables() {
    let v4 = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n\
              eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\n\
              eth0\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\n";
    let v6 = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 \
              fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n";
    let g = gateways(v4, v6);
    assert_eq!(
        g,
        [
            "192.168.1.1".parse::<IpAddr>().unwrap(),
            "fe80::1".parse().unwrap()
        ]
    );
    let h = host_net(
        &[
            ("/etc/resolv.conf", "nameserver 127.0.0.53\n".into()),
            (RESOLVED_UPSTREAM, "nameserver 10.9.8.7\n".into()),
        ],
        v4,
        "",
    );
    assert_eq!(h.resolvers.len(), 2);
    assert!(h.resolvers[1].from.contains(RESOLVED_UPSTREAM));
    assert_eq!(h.gateways.len(), 1);
}

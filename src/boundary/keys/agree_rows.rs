//! Each row of the key table judged from its compose spelling (the first file pass) and from
//! its engine spelling (the guard's create rules) gives the same verdict and the same code
//! (`COMPOSE_KEY_REFUSED` and `ENGINE_REFUSED` are one code in two layers' words: refused by
//! name or shape). Every row with both spellings has a sample here, or says why the agreement
//! corpus (`boundary::agree`, which runs the engine's answers) judges it instead.

use serde_json::json;

use super::*;
use crate::compose_check::{self, Variables};
use crate::{policy, BoxFacts};

/// `(compose key, its value as YAML, engine key, its value as JSON)`: a value that matters (a
/// privilege for privilege rows, a harmless one for harmless rows).
const SAMPLES: &[(&str, &str, &str, &str)] = &[
    ("command", "[sh]", "Config.Cmd", r#"["sh"]"#),
    ("entrypoint", "[sh]", "Config.Entrypoint", r#"["sh"]"#),
    ("environment", "{A: '1'}", "Config.Env", r#"["A=1"]"#),
    (
        "healthcheck",
        "{test: [CMD, 'true']}",
        "Config.Healthcheck",
        r#"{"Test":["CMD","true"]}"#,
    ),
    ("working_dir", "/app", "Config.WorkingDir", r#""/app""#),
    ("user", "'1000'", "Config.User", r#""1000""#),
    (
        "group_add",
        "[audio]",
        "HostConfig.GroupAdd",
        r#"["audio"]"#,
    ),
    ("hostname", "h", "Config.Hostname", r#""h""#),
    ("domainname", "d", "Config.Domainname", r#""d""#),
    ("init", "true", "HostConfig.Init", "true"),
    ("stop_grace_period", "10s", "Config.StopTimeout", "10"),
    ("stop_signal", "SIGINT", "Config.StopSignal", r#""SIGINT""#),
    ("stdin_open", "true", "Config.OpenStdin", "true"),
    ("tty", "true", "Config.Tty", "true"),
    ("read_only", "true", "HostConfig.ReadonlyRootfs", "true"),
    ("shm_size", "64m", "HostConfig.ShmSize", "67108864"),
    ("tmpfs", "[/run]", "HostConfig.Tmpfs", r#"{"/run":""}"#),
    (
        "restart",
        "always",
        "HostConfig.RestartPolicy",
        r#"{"Name":"always"}"#,
    ),
    (
        "ports",
        "['8080:80']",
        "HostConfig.PortBindings",
        r#"{"80/tcp":[{"HostIp":"","HostPort":"8080"}]}"#,
    ),
    (
        "expose",
        "['80']",
        "Config.ExposedPorts",
        r#"{"80/tcp":{}}"#,
    ),
    (
        "links",
        "[b]",
        "HostConfig.Links",
        r#"["/monky-a-b-1:/monky-a-web-1/b"]"#,
    ),
    ("dns", "[1.1.1.1]", "HostConfig.Dns", r#"["1.1.1.1"]"#),
    ("dns_search", "[x]", "HostConfig.DnsSearch", r#"["x"]"#),
    (
        "dns_opt",
        "['ndots:1']",
        "HostConfig.DnsOptions",
        r#"["ndots:1"]"#,
    ),
    (
        "extra_hosts",
        "['h:192.0.2.4']",
        "HostConfig.ExtraHosts",
        r#"["h:192.0.2.4"]"#,
    ),
    (
        "mac_address",
        "'02:42:ac:11:00:02'",
        "Config.MacAddress",
        r#""02:42:ac:11:00:02""#,
    ),
    (
        "network_mode",
        "host",
        "HostConfig.NetworkMode",
        r#""host""#,
    ),
    ("pid", "host", "HostConfig.PidMode", r#""host""#),
    ("ipc", "host", "HostConfig.IpcMode", r#""host""#),
    ("uts", "host", "HostConfig.UTSMode", r#""host""#),
    ("userns_mode", "host", "HostConfig.UsernsMode", r#""host""#),
    ("cgroup", "host", "HostConfig.CgroupnsMode", r#""host""#),
    ("privileged", "true", "HostConfig.Privileged", "true"),
    (
        "cap_add",
        "[SYS_ADMIN]",
        "HostConfig.CapAdd",
        r#"["SYS_ADMIN"]"#,
    ),
    ("cap_drop", "[ALL]", "HostConfig.CapDrop", r#"["ALL"]"#),
    (
        "security_opt",
        "['seccomp=unconfined']",
        "HostConfig.SecurityOpt",
        r#"["seccomp=unconfined"]"#,
    ),
    (
        "sysctls",
        "{kernel.panic: '1'}",
        "HostConfig.Sysctls",
        r#"{"kernel.panic":"1"}"#,
    ),
    (
        "devices",
        "[/dev/kmsg]",
        "HostConfig.Devices",
        r#"[{"PathOnHost":"/dev/kmsg","PathInContainer":"/dev/kmsg","CgroupPermissions":"rwm"}]"#,
    ),
    (
        "device_cgroup_rules",
        "['c 1:3 mr']",
        "HostConfig.DeviceCgroupRules",
        r#"["c 1:3 mr"]"#,
    ),
    (
        "gpus",
        "all",
        "HostConfig.DeviceRequests",
        r#"[{"Driver":"","Count":-1,"Capabilities":[["gpu"]]}]"#,
    ),
    ("cgroup_parent", "/x", "HostConfig.CgroupParent", r#""/x""#),
    (
        "annotations",
        "{a: b}",
        "HostConfig.Annotations",
        r#"{"a":"b"}"#,
    ),
    (
        "storage_opt",
        "{size: 1G}",
        "HostConfig.StorageOpt",
        r#"{"size":"1G"}"#,
    ),
    (
        "oom_kill_disable",
        "true",
        "HostConfig.OomKillDisable",
        "true",
    ),
    (
        "cpu_rt_period",
        "1000",
        "HostConfig.CpuRealtimePeriod",
        "1000",
    ),
    (
        "cpu_rt_runtime",
        "1000",
        "HostConfig.CpuRealtimeRuntime",
        "1000",
    ),
    ("runtime", "nvidia", "HostConfig.Runtime", r#""nvidia""#),
    ("isolation", "hyperv", "HostConfig.Isolation", r#""hyperv""#),
    (
        "logging",
        "{driver: syslog}",
        "HostConfig.LogConfig",
        r#"{"Type":"syslog","Config":{}}"#,
    ),
    (
        "ulimits",
        "{rtprio: 99}",
        "HostConfig.Ulimits",
        r#"[{"Name":"rtprio","Soft":99,"Hard":99}]"#,
    ),
    ("mem_limit", "64m", "HostConfig.Memory", "67108864"),
    (
        "mem_reservation",
        "32m",
        "HostConfig.MemoryReservation",
        "33554432",
    ),
    (
        "memswap_limit",
        "128m",
        "HostConfig.MemorySwap",
        "134217728",
    ),
    ("mem_swappiness", "10", "HostConfig.MemorySwappiness", "10"),
    ("cpus", "0.5", "HostConfig.NanoCpus", "500000000"),
    ("cpu_count", "1", "HostConfig.CpuCount", "1"),
    ("cpu_percent", "50", "HostConfig.CpuPercent", "50"),
    ("cpu_shares", "512", "HostConfig.CpuShares", "512"),
    ("cpu_quota", "50000", "HostConfig.CpuQuota", "50000"),
    ("cpu_period", "100000", "HostConfig.CpuPeriod", "100000"),
    ("cpuset", "'0'", "HostConfig.CpusetCpus", r#""0""#),
    ("pids_limit", "100", "HostConfig.PidsLimit", "100"),
    (
        "blkio_config",
        "{weight: 300}",
        "HostConfig.BlkioWeight",
        "300",
    ),
    ("oom_score_adj", "-500", "HostConfig.OomScoreAdj", "-500"),
];

/// Rows with both spellings whose verdict needs the engine's answers (what this project pulled,
/// owns, mounts): the agreement corpus judges them on a real engine and in `boundary::agree`.
const BY_THE_CORPUS: &[&str] = &["image", "labels", "volumes", "volumes_from"];

fn facts() -> BoxFacts {
    BoxFacts {
        project: "monky-a".into(),
        release_dir: Some(compose_check::FIRST_PASS_ROOT.into()),
        bundle_files: vec!["compose.yaml".into()],
        ..Default::default()
    }
}

fn compose_code(key: &str, value: &str) -> &'static str {
    let y = format!(
        "services:\n  web:\n    image: busybox:1\n    {key}: {value}\n  b:\n    image: busybox:1\n"
    );
    let doc = compose_check::parse(y.as_bytes()).unwrap();
    let j = compose_check::judge_bundle(&doc, false, &facts(), &Variables::none());
    j.refusals.first().map_or("", |r| r.code.as_str())
}

fn engine_code(key: &str, value: &str) -> &'static str {
    let v: serde_json::Value = serde_json::from_str(value).unwrap();
    let mut body = json!({
        "Image": "busybox:1",
        "Labels": {"com.docker.compose.project": "monky-a", "com.docker.compose.service": "web"},
        "HostConfig": {},
    });
    match key.split_once('.').unwrap() {
        ("Config", k) => body[k] = v,
        ("HostConfig", k) => body["HostConfig"][k] = v,
        _ => unreachable!(),
    }
    match policy::container_create(&body, &facts()) {
        Ok(_) => "",
        Err(r) => r.code.as_str(),
    }
}

fn same(a: &str, b: &str) -> bool {
    let by_name = |c: &str| c == "COMPOSE_KEY_REFUSED" || c == "ENGINE_REFUSED";
    a == b || (by_name(a) && by_name(b))
}

#[test]
fn every_row_gives_one_verdict_and_code_from_either_spelling() {
    let mut wrong = Vec::new();
    for row in ROWS
        .iter()
        .filter(|r| !r.compose.is_empty() && !r.engine.is_empty())
    {
        if BY_THE_CORPUS.contains(&row.compose) {
            continue;
        }
        let Some(&(k, y, e, j)) = SAMPLES.iter().find(|s| s.0 == row.compose) else {
            wrong.push(format!("{}: no sample", row.compose));
            continue;
        };
        assert!(row.engine.contains(&e), "{k}: {e} is not its engine key");
        let (c, g) = (compose_code(k, y), engine_code(e, j));
        let expected = match row.how {
            How::Harmless => "",
            How::Privilege => "PRIVILEGED_REFUSED",
            How::Refused => "COMPOSE_KEY_REFUSED",
            // a rule row's sample is one its rule refuses or passes: both layers must say so
            How::Rule(_) => c,
        };
        if !same(c, g) || !same(c, expected) {
            wrong.push(format!(
                "{k}: {y} → {c:?} | {e}: {j} → {g:?} (row: {:?})",
                row.how
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "the layers disagree:\n{}",
        wrong.join("\n")
    );
}

/// A privilege row's engine default changes nothing and passes both layers.
#[test]
fn an_engine_default_passes_both_layers() {
    for (key, value) in ENGINE_DEFAULTS {
        let row = compose_row(key).unwrap();
        assert_eq!(row.how, How::Privilege, "{key}");
        let engine = row.engine[0];
        assert_eq!(compose_code(key, value), "", "{key}: {value}");
        assert_eq!(
            engine_code(engine, &format!("{value:?}")),
            "",
            "{engine}: {value}"
        );
        // and any other value is the privilege, in both
        assert_eq!(compose_code(key, "crun"), "PRIVILEGED_REFUSED");
        assert_eq!(engine_code(engine, "\"crun\""), "PRIVILEGED_REFUSED");
    }
}

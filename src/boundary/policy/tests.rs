//! The Engine API create-body rules over JSON bodies (keys, privileges, volumes, networks, the
//! rule table's shape) and the bind-source rule on real paths.

use super::*;
use serde_json::json;
use std::path::{Path, PathBuf};

fn boundary(dir: &Path) -> BoxFacts {
    BoxFacts {
        project: "monky-t".into(),
        release_dir: Some(dir.join("state/releases/abc")),
        bind_roots: vec![dir.join("srv")],
        agent_files: vec![dir.join("state")],
        engine_paths: vec![PathBuf::from("/var/run/docker.sock")],
        release_files: Vec::new(),
        privileged: false,
        ..Default::default()
    }
}

fn create(hc: Value) -> Value {
    json!({"Image": "x", "Labels": {"com.docker.compose.project": "monky-t"}, "HostConfig": hc})
}

#[test]
fn known_keys_pass_unknown_keys_are_named() {
    let d = tempfile::tempdir().unwrap();
    let b = boundary(d.path());
    let ok = create(
        json!({"Memory": 100, "PortBindings": {"80/tcp": [{"HostPort": "8080"}]},
        "NetworkMode": "monky-t_default", "Privileged": false, "CapAdd": ["NET_ADMIN"]}),
    );
    // a capability is a privilege, the code the file passes give `cap_add: [NET_ADMIN]`
    assert_eq!(
        container_create(&ok, &b).unwrap_err(),
        Refusal::new(
            RefusalCode::PrivilegedRefused,
            "HostConfig.CapAdd NET_ADMIN"
        )
    );
    let ok = create(json!({"Memory": 100, "NetworkMode": "monky-t_default", "CapAdd": ["CHOWN"]}));
    let r = container_create(&ok, &b).unwrap();
    assert!(r.networks.contains("monky-t_default"));
    let bad = create(json!({"FutureKnob": "x"}));
    assert_eq!(
        container_create(&bad, &b).unwrap_err(),
        Refusal::engine("HostConfig.FutureKnob x")
    );
    let top = json!({"Labels": {"com.docker.compose.project": "monky-t"}, "NewThing": 1});
    assert_eq!(
        container_create(&top, &b).unwrap_err(),
        Refusal::engine("NewThing")
    );
    let other = json!({"Labels": {"com.docker.compose.project": "someone-else"}});
    assert!(container_create(&other, &b).is_err());
}

#[test]
fn privileges_refused_unless_permitted() {
    let d = tempfile::tempdir().unwrap();
    let mut b = boundary(d.path());
    for hc in [
        json!({"Privileged": true}),
        json!({"PidMode": "host"}),
        json!({"IpcMode": "host"}),
        json!({"UsernsMode": "host"}),
        json!({"UTSMode": "host"}),
        json!({"NetworkMode": "host"}),
        json!({"Devices": [{"PathOnHost": "/dev/mem"}]}),
        json!({"SecurityOpt": ["seccomp=unconfined"]}),
        json!({"SecurityOpt": ["apparmor=unconfined"]}),
        json!({"MaskedPaths": []}),
        json!({"Sysctls": {"kernel.core_pattern": "|/x"}}),
        json!({"Runtime": "nvidia"}),
        json!({"CgroupParent": "/"}),
        json!({"LogConfig": {"Type": "syslog"}}),
    ] {
        assert!(container_create(&create(hc.clone()), &b).is_err(), "{hc}");
    }
    b.privileged = true;
    assert!(container_create(&create(json!({"Privileged": true, "PidMode": "host"})), &b).is_ok());
}

#[test]
fn bind_sources() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let rel = root.join("state/releases/abc");
    std::fs::create_dir_all(rel.join("data")).unwrap();
    std::fs::create_dir_all(root.join("srv/app")).unwrap();
    std::os::unix::fs::symlink("/", rel.join("data/up")).unwrap();
    std::os::unix::fs::symlink(root.join("state"), rel.join("st")).unwrap();
    let b = boundary(&root);
    use crate::container::{host_path, Source};
    let ok = |p: &Path, ro: bool| {
        host_path(
            Source::Engine,
            "HostConfig.Binds",
            p.to_str().unwrap(),
            ro,
            Some(&b),
        )
    };
    assert!(ok(&rel.join("data"), false).is_ok());
    assert!(ok(&root.join("srv/app/x"), false).is_ok());
    assert!(ok(Path::new("/etc/localtime"), true).is_ok());
    assert!(ok(Path::new("/etc/localtime"), false).is_err());
    assert!(ok(&rel.join("data/up"), true).is_err(), "symlink to /");
    assert!(
        ok(&rel.join("st"), true).is_err(),
        "symlink to the state dir"
    );
    assert!(ok(&rel.join("../abc/../../bao.token"), true).is_err());
    assert!(ok(Path::new("/var/run/docker.sock"), false).is_err());
    assert!(ok(Path::new("/"), true).is_err());
    assert!(ok(Path::new("/var"), true).is_err());
    assert!(ok(Path::new("/srv/other"), true).is_err());
    assert!(ok(Path::new("/etc/cron.d"), false).is_err());
    assert_eq!(
        ok(Path::new("/sys/kernel"), true).unwrap_err().to_string(),
        "BIND_SOURCE_REFUSED: HostConfig.Binds: /sys/kernel: reaches /sys"
    );
    // a create records its binds for the invariant, and judges them by the same rule
    let bind = |src: &Path| {
        let body = json!({"Image": "x", "Labels": {"com.docker.compose.project": "monky-t"},
            "HostConfig": {"Binds": [format!("{}:/d", src.display())]}});
        container_create(&body, &b)
    };
    let refs = bind(&rel.join("data")).unwrap();
    assert_eq!(refs.binds, vec![HostBind::new(&rel.join("data"), true)]);
    assert_eq!(
        bind(Path::new("/var/run/docker.sock")).unwrap_err().code,
        RefusalCode::BindSourceRefused
    );
}

/// The invariant over every bind on the box, on real paths: nesting in both directions, paths
/// that pass through a writable bind by a symlink, the release's files.
#[test]
fn no_resolved_path_passes_through_a_writable_bind() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let rel = root.join("rel");
    std::fs::create_dir_all(rel.join("data/sub")).unwrap();
    std::fs::create_dir_all(rel.join("config")).unwrap();
    std::fs::create_dir_all(root.join("srv/a")).unwrap();
    // a symlink elsewhere that points into a writable directory
    std::os::unix::fs::symlink(rel.join("data/sub"), root.join("srv/via")).unwrap();
    let rw = |p: &Path| HostBind::new(p, true);
    let ro = |p: &Path| HostBind::new(p, false);
    let files = vec![
        rel.clone(),
        rel.join("compose.yaml"),
        rel.join("config/app.conf"),
    ];
    let ok = |new: &[HostBind], others: &[HostBind]| binds_invariant(new, others, &files);
    // the benign layout: ./data writable, ./config read-only, one data dir shared
    assert!(ok(&[rw(&rel.join("data")), ro(&rel.join("config"))], &[]).is_ok());
    assert!(ok(&[rw(&rel.join("data"))], &[rw(&rel.join("data"))]).is_ok());
    assert!(ok(&[ro(&rel.join("data"))], &[rw(&rel.join("data"))]).is_ok());
    // nesting, in both directions, in one container or across the box
    for (new, other) in [
        (rw(&rel.join("data")), ro(&rel.join("data/sub"))),
        (ro(&rel.join("data/sub")), rw(&rel.join("data"))),
        (rw(&rel.join("data/sub")), ro(&rel.join("data"))),
        (ro(&rel.join("data")), rw(&rel.join("data/sub"))),
    ] {
        assert!(
            ok(std::slice::from_ref(&new), std::slice::from_ref(&other)).is_err(),
            "{new:?} {other:?}"
        );
        assert!(
            ok(&[new.clone(), other.clone()], &[]).is_err(),
            "{new:?} {other:?}"
        );
    }
    // two read-only binds may nest: nobody can change either
    assert!(ok(&[ro(&rel.join("data"))], &[ro(&rel.join("data/sub"))]).is_ok());
    // a bind whose resolution passes through a symlink into a writable bind
    let via = ro(&root.join("srv/via"));
    assert_eq!(via.traced.real, rel.join("data/sub"));
    assert!(via.traced.visited.contains(&root.join("srv/via")));
    assert!(ok(std::slice::from_ref(&via), &[rw(&rel.join("data"))]).is_err());
    assert!(ok(&[rw(&rel.join("data"))], &[via]).is_err());
    // the release root or a file of the bundle inside a writable bind
    assert!(ok(&[rw(&rel)], &[]).is_err(), "the release root writable");
    assert!(
        ok(&[rw(&rel.join("config"))], &[]).is_err(),
        "a bundle dir writable"
    );
    assert!(ok(&[rw(&root)], &[]).is_err(), "an ancestor of the release");
    assert!(release_outside_writable(&[ro(&rel)], &files).is_ok());
}

#[test]
fn trace_records_each_symlink_and_follows_dotdot_after_it() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    std::os::unix::fs::symlink("a/b", root.join("l1")).unwrap();
    std::os::unix::fs::symlink(root.join("l1"), root.join("l2")).unwrap();
    let t = trace(&root.join("l2/../x/missing"));
    // l2 → l1 → a/b, then `..` is taken physically: root/a, then the missing rest lexically
    assert_eq!(t.real, root.join("a/x/missing"));
    for v in ["l2", "l1", "a", "a/b"] {
        assert!(t.visited.contains(&root.join(v)), "{v} not visited: {t:?}");
    }
    // a loop ends (the engine would fail it with ELOOP)
    std::os::unix::fs::symlink(root.join("loop"), root.join("loop")).unwrap();
    let _ = trace(&root.join("loop/x"));
}

#[test]
fn volumes_and_networks() {
    let d = tempfile::tempdir().unwrap();
    let b = boundary(d.path());
    let l = json!({"com.docker.compose.project": "monky-t"});
    assert!(volume_create(
        &json!({"Name": "monky-t_data", "Driver": "local", "Labels": l}),
        &b
    )
    .is_ok());
    assert!(volume_create(
        &json!({"Name": "h", "Labels": l, "DriverOpts": {"type": "none", "o": "bind", "device": "/"}}),
        &b
    )
    .is_err());
    assert!(volume_create(&json!({"Name": "h", "Driver": "rexray", "Labels": l}), &b).is_err());
    assert!(volume_create(&json!({"Name": "h"}), &b).is_err());
    assert!(network_create(
        &json!({"Name": "monky-t_default", "Driver": "bridge", "Labels": l}),
        &b
    )
    .is_ok());
    assert!(network_create(&json!({"Name": "n", "Driver": "macvlan", "Labels": l}), &b).is_err());
    assert!(network_create(
        &json!({"Name": "n", "Labels": l, "Options": {"com.docker.network.bridge.name": "docker0"}}),
        &b
    )
    .is_err());
}

#[test]
fn host_config_rules_are_exactly_the_key_tables_judged_host_keys() {
    use crate::keys::{How, ROWS};
    use host_config::HOST_RULES;
    let mut seen = BTreeSet::new();
    for (k, _) in HOST_RULES {
        assert!(seen.insert(*k), "{k} twice");
        // harmless keys pass before any rule is looked up
        assert!(
            !crate::keys::engine_passes_by_name("HostConfig", k),
            "{k} is also harmless"
        );
    }
    // every HostConfig key the table says a rule or the privilege judges has its rule here; a
    // rule here for any other key may only narrow a row that refuses it
    let host = |f: fn(&How) -> bool| -> BTreeSet<&str> {
        ROWS.iter()
            .filter(|r| f(&r.how))
            .flat_map(|r| r.engine.iter())
            .filter_map(|e| e.strip_prefix("HostConfig."))
            .collect()
    };
    let judged = host(|h| matches!(h, How::Rule(_) | How::Privilege));
    let refused = host(|h| *h == How::Refused);
    assert!(judged.is_subset(&seen), "{:?}", judged.difference(&seen));
    let narrowing: BTreeSet<&str> = seen.difference(&judged).copied().collect();
    assert!(
        narrowing.is_subset(&refused),
        "rules for keys without a row: {narrowing:?}"
    );
}

/// The box's shared resources in create bodies: the same rules as the file passes.
#[test]
fn the_boxs_ports_names_scheduling_and_ceilings() {
    let d = tempfile::tempdir().unwrap();
    let mut b = boundary(d.path());
    b.reserved_ports = vec![22, 18443];
    let body = |hc: Value| {
        json!({"Image": "x", "Labels": {"com.docker.compose.project": "monky-t",
            "com.docker.compose.service": "web"}, "HostConfig": hc})
    };
    let err =
        |hc: Value, b: &BoxFacts| container_create(&body(hc), b).err().map(|d| d.guard_text());
    assert_eq!(
        err(
            json!({"PortBindings": {"80/tcp": [{"HostIp": "", "HostPort": "18440-18450"}]}}),
            &b
        ),
        Some("PORT_REFUSED: web 0.0.0.0:18443 (reserved by the box)".into())
    );
    assert_eq!(
        err(
            json!({"PortBindings": {"80/tcp": [{"HostIp": "127.0.0.1", "HostPort": "8080"}, {"HostPort": ""}]},
            "OomScoreAdj": 300, "Ulimits": [{"Name": "nofile", "Soft": 1024, "Hard": 2048}]}),
            &b
        ),
        None
    );
    for (hc, why) in [
        (json!({"OomScoreAdj": -500}), "HostConfig.OomScoreAdj -500"),
        (
            json!({"CapAdd": ["SYS_NICE"]}),
            "HostConfig.CapAdd SYS_NICE",
        ),
        (
            json!({"CapAdd": ["CAP_IPC_LOCK"]}),
            "HostConfig.CapAdd IPC_LOCK",
        ),
        (
            json!({"Ulimits": [{"Name": "rtprio", "Soft": 99, "Hard": 99}]}),
            "HostConfig.Ulimits rtprio 99",
        ),
        (
            json!({"Ulimits": [{"Name": "memlock", "Soft": -1, "Hard": -1}]}),
            "HostConfig.Ulimits memlock unlimited",
        ),
    ] {
        // the file passes' code for the same key
        assert_eq!(
            err(hc.clone(), &b),
            Some(format!("PRIVILEGED_REFUSED: {why}")),
            "{hc}"
        );
    }
    // names: the query's container name, volumes, networks, v1's parked rename
    assert!(container_name("monky-t-web-1", "web", &b).is_ok());
    assert!(container_name("/monky-t_web_1", "web", &b).is_ok());
    assert!(object_name("volume", "monky-t_data", &b).is_ok());
    assert_eq!(
        container_name("monky-victim-web-1", "web", &b)
            .unwrap_err()
            .guard_text(),
        "NAME_REFUSED: container monky-victim-web-1 (outside project monky-t)"
    );
    let vol =
        json!({"Name": "monky-victim_data", "Labels": {"com.docker.compose.project": "monky-t"}});
    assert!(volume_create(&vol, &b)
        .unwrap_err()
        .guard_text()
        .starts_with("NAME_REFUSED: volume monky-victim_data"));
    let net = json!({"Name": "monky-t_default", "Driver": "bridge", "Labels": {"com.docker.compose.project": "monky-t"}});
    assert!(network_create(&net, &b).is_ok());
    assert!(container_name("0123456789ab_monky-t_web_1", "web", &b).is_ok());
    assert!(container_name("0123456789ab_monky-t-web-1", "web", &b).is_ok());
    assert!(container_name("0123456789ab_monky-victim_web_1", "web", &b).is_err());
    assert!(container_name("monky-t-victim-web-1", "web", &b).is_err());
    assert!(object_name("volume", "monky-t-victim_data", &b).is_err());
    // ceilings: declared and under, with or without a HostConfig
    b.limits = Limits {
        memory: Some(256 << 20),
        pids: Some(100),
    };
    assert_eq!(err(json!({"Memory": 134217728, "PidsLimit": 50}), &b), None);
    assert!(err(json!({"Memory": 134217728}), &b)
        .unwrap()
        .starts_with("LIMIT_REFUSED: web pids unset"));
    assert!(err(json!({"Memory": 1073741824u64, "PidsLimit": 50}), &b)
        .unwrap()
        .starts_with("LIMIT_REFUSED: web memory 1073741824 bytes"));
    let bare = json!({"Image": "x", "Labels": {"com.docker.compose.project": "monky-t"}});
    assert!(container_create(&bare, &b)
        .unwrap_err()
        .guard_text()
        .starts_with("LIMIT_REFUSED"));
    // a box that permits privilege trusts the bundle with all of it
    b.privileged = true;
    assert_eq!(
        err(json!({"OomScoreAdj": -500, "CapAdd": ["SYS_NICE"]}), &b),
        None
    );
}

#[test]
fn network_subnets_and_static_addresses_are_the_boxs() {
    let d = tempfile::tempdir().unwrap();
    let mut b = boundary(d.path());
    let mut net = netpool::AddressSpace::new(&["10.100.0.0/16".into()]);
    net.take(
        monky_base::cidr::Cidr::parse("10.100.5.0/24").unwrap(),
        "a route of the host via eth1",
    );
    b.net = Some(net);
    let l = json!({"com.docker.compose.project": "monky-t"});
    let create =
        |ipam: Value| json!({"Name": "monky-t_n", "Driver": "bridge", "Labels": l, "IPAM": ipam});
    let ok = |ipam: Value| network_create(&create(ipam), &b).unwrap();
    let no = |ipam: Value| network_create(&create(ipam), &b).unwrap_err().guard_text();
    ok(json!({"Driver": "default", "Config": []}));
    ok(
        json!({"Config": [{"Subnet": "10.100.1.0/24", "Gateway": "10.100.1.1",
        "IPRange": "10.100.1.128/25", "AuxiliaryAddresses": {"r": "10.100.1.2"}}]}),
    );
    assert_eq!(
        no(json!({"Config": [{"Subnet": "10.100.5.0/25"}]})),
        "NETWORK_REFUSED: monky-t_n 10.100.5.0/25 (overlaps 10.100.5.0/24, a route of the host via eth1)"
    );
    assert!(no(json!({"Config": [{"Subnet": "169.254.0.0/16"}]})).contains("outside"));
    assert!(no(json!({"Config": [{"Subnet": "fd00::/64"}]})).contains("no IPv6 pool"));
    assert!(
        no(json!({"Config": [{"Subnet": "10.100.1.0/24", "Gateway": "10.100.5.1"}]}))
            .contains("outside the network's own subnet")
    );
    assert!(no(json!({"Config": [{"Gateway": "10.100.5.1"}]})).contains("no subnet"));
    assert!(no(json!({"Config": [{"Subnet": "10.100.1.0/24",
        "AuxiliaryAddresses": {"x": "169.254.169.254"}}]}))
    .contains("169.254.169.254"));
    assert!(no(json!({"Driver": "other"})).contains("IPAM driver"));
    // a container's static addresses are handed to the guard, which knows the subnet
    let c = json!({"Image": "x", "Labels": l, "NetworkingConfig": {"EndpointsConfig": {
        "monky-t_n": {"IPAMConfig": {"IPv4Address": "10.100.1.9", "LinkLocalIPs": ["169.254.169.254"]}}}}});
    let refs = container_create(&c, &b).unwrap();
    assert_eq!(
        refs.addresses,
        vec![
            ("monky-t_n".to_string(), "10.100.1.9".to_string()),
            ("monky-t_n".to_string(), "169.254.169.254".to_string())
        ]
    );
    // a box that judges no address space (or permits privilege) does not
    b.net = None;
    assert!(network_create(
        &create(json!({"Config": [{"Subnet": "10.100.5.0/25"}]})),
        &b
    )
    .is_ok());
}

/// Issue 41: a bind of a verified file (or of a directory of the release holding one) is made
/// read-only in the create body, in `Binds` and `Mounts`; the release root, a directory holding
/// none, a bind already read-only and anything outside the release stay as written. Before the
/// rewrite the body breaks the invariant; after it, it passes.
#[test]
fn binds_of_verified_files_are_made_read_only_by_construction() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let rel = root.join("state/releases/abc");
    std::fs::create_dir_all(rel.join("prometheus/rules")).unwrap();
    let mut b = boundary(&root);
    b.release_dir = Some(rel.clone());
    b.release_files = vec![
        rel.clone(),
        rel.join(".env"),
        rel.join("compose.yaml"),
        rel.join("prometheus/prometheus.yml"),
        rel.join("config.yml"),
    ];
    let r = rel.display();
    let body = || {
        create(json!({
            "Binds": [
                format!("{r}/prometheus:/etc/prometheus"),
                format!("{r}/config.yml:/app/config.yml:rw,rprivate"),
                format!("{r}/prometheus/rules:/rules"),
                format!("{r}/data:/data"),
                "data:/v".to_string(),
            ],
            "Mounts": [
                {"Type": "bind", "Source": format!("{r}/prometheus/prometheus.yml"), "Target": "/p.yml"},
                {"Type": "bind", "Source": format!("{r}/config.yml"), "Target": "/c.yml", "ReadOnly": true},
                {"Type": "volume", "Source": "data", "Target": "/w"},
            ],
        }))
    };
    let judge = |v: &Value| {
        let refs = container_create(v, &b)?;
        binds_invariant(&refs.binds, &[], &b.release_files)
    };
    let raw = body();
    assert_eq!(
        judge(&raw).unwrap_err().code,
        RefusalCode::BindSourceRefused
    );
    let mut v = body();
    let changed = read_only_release_binds(&mut v, &b);
    assert_eq!(
        changed,
        [
            format!("{r}/prometheus"),
            format!("{r}/config.yml"),
            format!("{r}/prometheus/prometheus.yml"),
        ]
    );
    let hc = &v["HostConfig"];
    assert_eq!(
        hc["Binds"],
        json!([
            format!("{r}/prometheus:/etc/prometheus:ro"),
            format!("{r}/config.yml:/app/config.yml:rprivate,ro"),
            format!("{r}/prometheus/rules:/rules"),
            format!("{r}/data:/data"),
            "data:/v",
        ])
    );
    assert_eq!(hc["Mounts"][0]["ReadOnly"], json!(true));
    assert_eq!(hc["Mounts"][2], raw["HostConfig"]["Mounts"][2]);
    // ./prometheus/rules writable inside the read-only ./prometheus: still the invariant's
    assert!(judge(&v).is_err());
    v["HostConfig"]["Binds"].as_array_mut().unwrap().remove(2);
    judge(&v).unwrap();
    // the release root is never made read-only: a writable bind of it stays refused
    let mut root_bind = create(json!({"Binds": [format!("{r}:/app")]}));
    assert!(read_only_release_binds(&mut root_bind, &b).is_empty());
    assert!(judge(&root_bind).is_err());
    assert!(read_only_by_construction(
        &rel.join("config.yml"),
        &rel,
        &b.release_files
    ));
    assert!(!read_only_by_construction(
        &rel.join("data"),
        &rel,
        &b.release_files
    ));
    assert!(!read_only_by_construction(&rel, &rel, &b.release_files));
    assert!(!read_only_by_construction(
        &root.join("srv"),
        &rel,
        &b.release_files
    ));
}

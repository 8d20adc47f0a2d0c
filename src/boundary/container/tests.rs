//! The container rules from both sides: a compose service and the create body compose sends for
//! it become specs the same rules judge alike, with the same code.

use serde_json::json;

use super::*;
use crate::compose_check;

fn from_yaml(service: &str) -> ContainerSpec {
    let doc = compose_check::parse(format!("web:\n{service}").as_bytes()).unwrap();
    let m = doc.as_mapping().unwrap()["web"]
        .as_mapping()
        .unwrap()
        .clone();
    ContainerSpec::from_compose("web", &m, false)
}

fn from_body(hc: serde_json::Value) -> ContainerSpec {
    let body = json!({"Image": "busybox", "HostConfig": hc,
        "Labels": {"com.docker.compose.service": "web"}});
    ContainerSpec::from_engine(&body, "")
}

fn facts() -> BoxFacts {
    BoxFacts {
        project: "monky-t".into(),
        reserved_ports: vec![22, 18443],
        limits: rules::Limits {
            memory: Some(256 << 20),
            pids: Some(100),
        },
        require_image_digests: true,
        ..BoxFacts::default()
    }
}

#[test]
fn both_layers_describe_a_shape_alike_and_the_rules_judge_it_alike() {
    let f = BoxFacts::default();
    for (yaml, hc, code) in [
        (
            "  privileged: true\n",
            json!({"Privileged": true}),
            Some(CODE),
        ),
        ("  pid: host\n", json!({"PidMode": "host"}), Some(CODE)),
        ("  ipc: host\n", json!({"IpcMode": "host"}), Some(CODE)),
        ("  uts: host\n", json!({"UTSMode": "host"}), Some(CODE)),
        (
            "  userns_mode: host\n",
            json!({"UsernsMode": "host"}),
            Some(CODE),
        ),
        (
            "  cgroup: host\n",
            json!({"CgroupnsMode": "host"}),
            Some(CODE),
        ),
        (
            "  network_mode: host\n",
            json!({"NetworkMode": "host"}),
            Some(CODE),
        ),
        (
            "  cap_add: [SYS_ADMIN]\n",
            json!({"CapAdd": ["SYS_ADMIN"]}),
            Some(CODE),
        ),
        (
            "  devices: [\"/dev/mem:/dev/mem\"]\n",
            json!({"Devices": [{"PathOnHost": "/dev/mem"}]}),
            Some(CODE),
        ),
        (
            "  security_opt: [seccomp=unconfined]\n",
            json!({"SecurityOpt": ["seccomp=unconfined"]}),
            Some(CODE),
        ),
        (
            "  sysctls: {kernel.core_pattern: x}\n",
            json!({"Sysctls": {"kernel.core_pattern": "x"}}),
            Some(CODE),
        ),
        (
            "  oom_score_adj: -1\n",
            json!({"OomScoreAdj": -1}),
            Some(CODE),
        ),
        (
            "  ulimits: {memlock: -1}\n",
            json!({"Ulimits": [{"Name": "memlock", "Soft": -1, "Hard": -1}]}),
            Some(CODE),
        ),
        (
            "  ipc: shareable\n  pid: \"service:db\"\n",
            json!({"IpcMode": "shareable", "PidMode": "container:abc"}),
            None,
        ),
        (
            "  cgroup: private\n  cap_add: [NET_BIND_SERVICE]\n",
            json!({"CgroupnsMode": "private", "CapAdd": ["NET_BIND_SERVICE"]}),
            None,
        ),
        (
            "  security_opt: [\"no-new-privileges:true\"]\n  oom_score_adj: 100\n",
            json!({"SecurityOpt": ["no-new-privileges:true"], "OomScoreAdj": 100}),
            None,
        ),
    ] {
        let (file, engine) = (from_yaml(yaml), from_body(hc.clone()));
        let (a, b) = (privilege(&file, &f), privilege(&engine, &f));
        assert_eq!(a.as_ref().err().map(|r| r.code), code, "{yaml}: {a:?}");
        assert_eq!(b.as_ref().err().map(|r| r.code), code, "{hc}: {b:?}");
        // a box that permits privilege lets all of it through
        let p = BoxFacts {
            privileged: true,
            ..BoxFacts::default()
        };
        assert!(privilege(&file, &p).is_ok() && privilege(&engine, &p).is_ok());
    }
}

#[test]
fn refusals_name_the_key_as_the_layer_wrote_it() {
    let f = BoxFacts::default();
    let file = privilege(&from_yaml("  cap_add: [sys_nice]\n"), &f).unwrap_err();
    assert_eq!(
        file.to_string(),
        "PRIVILEGED_REFUSED: service web adds capability sys_nice"
    );
    let engine = privilege(&from_body(json!({"CapAdd": ["sys_nice"]})), &f).unwrap_err();
    assert_eq!(
        engine.to_string(),
        "PRIVILEGED_REFUSED: HostConfig.CapAdd SYS_NICE"
    );
    let u = privilege(&from_yaml("  ulimits: {rtprio: 99}\n"), &f).unwrap_err();
    assert_eq!(u.detail, "service web sets ulimits rtprio 99");
    let n = privilege(&from_yaml("  pid: host\n"), &f).unwrap_err();
    assert_eq!(n.detail, "service web sets pid: host");
}

#[test]
fn the_boxs_ports_names_ceilings_and_images_from_both_sides() {
    let f = facts();
    let hex = "0123456789abcdef".repeat(4);
    let file = from_yaml(&format!(
        "  image: app@sha256:{hex}\n  ports: [\"127.0.0.1:18440-18450:80\"]\n  \
         container_name: monky-victim-web\n  mem_limit: 512m\n  pids_limit: 50\n"
    ));
    let mut engine = from_body(json!({
        "PortBindings": {"80/tcp": [{"HostIp": "127.0.0.1", "HostPort": "18440-18450"}]},
        "Memory": 512u64 << 20, "PidsLimit": 50}));
    engine.name = Some("monky-victim-web".into());
    engine.image = Some(format!("app@sha256:{hex}"));
    for s in [&file, &engine] {
        assert_eq!(
            ports(s, &f).unwrap_err().to_string(),
            "PORT_REFUSED: web 127.0.0.1:18443 (reserved by the box)"
        );
        assert_eq!(
            name(s, &f).unwrap_err().to_string(),
            "NAME_REFUSED: container monky-victim-web (outside project monky-t)"
        );
        assert_eq!(limits(s, &f).unwrap_err().code, RefusalCode::LimitRefused);
        assert!(image(s, &f).is_ok());
        assert_eq!(judge(s, &f).unwrap_err().code, RefusalCode::PortRefused);
    }
    let tagged = from_yaml("  image: app:1\n");
    assert_eq!(
        image(&tagged, &f).unwrap_err().code,
        RefusalCode::ImageRefused
    );
    // the first pass leaves an interpolated image to the second
    let doc = compose_check::parse(b"web:\n  image: ${IMG}\n").unwrap();
    let m = doc.as_mapping().unwrap()["web"]
        .as_mapping()
        .unwrap()
        .clone();
    assert!(image(&ContainerSpec::from_compose("web", &m, true), &f).is_ok());
    assert!(image(&ContainerSpec::from_compose("web", &m, false), &f).is_err());
}

#[test]
fn namespaces_stay_the_containers_own() {
    use Namespace::*;
    for (ns, mode, ok) in [
        (Network, "host", false),
        (Network, "monky-t_default", true),
        (Network, "container:x", true),
        (Pid, "host", false),
        (Pid, "service:db", true),
        (Pid, "private", false),
        (Ipc, "private", true),
        (Ipc, "HOST", false),
        (Cgroup, "private", true),
        (Cgroup, "host", false),
        (Uts, "host", false),
        (Uts, "container:x", false),
        (Userns, "host", false),
        (Userns, "", true),
    ] {
        assert_eq!(namespace_allowed(ns, mode), ok, "{ns:?} {mode}");
    }
}

#[test]
fn a_bind_is_judged_by_one_rule_from_both_sides() {
    let f = facts();
    let file = from_yaml("  volumes: [\"/sys/kernel:/k:ro\", \"./data:/d\", \"data:/v\"]\n");
    assert_eq!(
        file.binds,
        vec![Bind {
            key: "volumes".into(),
            source: "/sys/kernel".into(),
            read_only: true
        }]
    );
    let engine = from_body(json!({"Binds": ["/sys/kernel:/k:ro", "monky-t_data:/v"],
        "Mounts": [{"Type": "bind", "Source": "/sys/kernel", "Target": "/m"}]}));
    assert_eq!(engine.binds.len(), 2);
    assert!(engine.binds[0].read_only && !engine.binds[1].read_only);
    let (a, b) = (binds(&file, Some(&f)), binds(&engine, Some(&f)));
    assert_eq!(
        a.unwrap_err().to_string(),
        "BIND_SOURCE_REFUSED: web /sys/kernel (a private or system path)"
    );
    assert_eq!(
        b.unwrap_err().to_string(),
        "BIND_SOURCE_REFUSED: HostConfig.Binds: /sys/kernel: reaches /sys"
    );
}

#[test]
fn an_interpolated_namespace_is_left_to_the_pass_that_resolves_it() {
    let f = BoxFacts::default();
    for yaml in [
        "  pid: ${PID}\n",
        "  ipc: \"${IPC}\"\n",
        "  userns_mode: ${U}\n",
    ] {
        let spec = from_yaml(yaml);
        assert!(spec.namespaces.is_empty(), "{yaml}");
        assert!(privilege(&spec, &f).is_ok(), "{yaml}");
    }
    // resolved, the same key is judged
    assert!(privilege(&from_yaml("  pid: host\n"), &f).is_err());
}

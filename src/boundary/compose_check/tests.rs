//! The compose file passes over YAML documents: what each pass refuses and allows, and the
//! rule tables' shape.

use super::*;

fn run(y: &str) -> Result<Vec<String>, Refusal> {
    check(&parse(y.as_bytes())?, false)
}

#[test]
fn refuses_the_obvious_and_the_disguised() {
    let cases = [
        "services:\n  api:\n    image: x\n    privileged: true\n",
        "services:\n  api:\n    image: x\n    privileged: \"true\"\n",
        "services:\n  api:\n    image: x\n    privileged: ${P}\n",
        "x-base: &b\n  privileged: true\nservices:\n  api:\n    <<: *b\n    image: x\n",
        "services:\n  api:\n    image: x\n    network_mode: host\n",
        "services:\n  api:\n    image: x\n    pid: host\n",
        "services:\n  api:\n    image: x\n    ipc: \"host\"\n",
        "services:\n  api:\n    image: x\n    cap_add: [sys_admin]\n",
        "services:\n  api:\n    image: x\n    cap_add: [CAP_SYS_ADMIN]\n",
        "services:\n  api:\n    image: x\n    cap_add: [ALL]\n",
        "services:\n  api:\n    image: x\n    devices: [\"/dev/sda:/dev/sda\"]\n",
        "services:\n  api:\n    image: x\n    volumes: [\"/var/run/docker.sock:/s\"]\n",
        "services:\n  api:\n    image: x\n    volumes: [\"//:/host\"]\n",
        "services:\n  api:\n    image: x\n    volumes: [\"/var/run/../run/docker.sock:/s\"]\n",
        "services:\n  api:\n    image: x\n    volumes:\n      - type: bind\n        source: /\n        target: /h\n",
        "services:\n  api:\n    image: x\n    volumes: [\"./../../../../:/h\"]\n",
        "services:\n  api:\n    image: x\n    volumes: [\"h:/h\"]\nvolumes:\n  h:\n    driver_opts: {type: none, o: bind, device: /}\n",
        "services:\n  api:\n    image: x\n    networks: [hn]\nnetworks:\n  hn:\n    external: true\n    name: host\n",
        "services:\n  api:\n    image: x\n    security_opt: [\"seccomp=unconfined\"]\n",
        "include: [other.yaml]\nservices:\n  api:\n    image: x\n",
        "services:\n  api:\n    extends: {file: ../x.yaml, service: y}\n",
    ];
    for c in cases {
        let r = run(c);
        assert!(r.is_err(), "not refused: {c}");
    }
}

#[test]
fn allows_ordinary_services() {
    let y = "x-c: &c\n  restart: unless-stopped\nservices:\n  web:\n    <<: *c\n    image: x\n    privileged: false\n    \
             volumes: [\"data:/data\", \"./conf:/conf:ro\", \"/etc/localtime:/etc/localtime:ro\"]\n    cap_add: [NET_BIND_SERVICE]\n  api:\n    image: y\nvolumes:\n  data: {}\n";
    assert_eq!(run(y).unwrap(), vec!["web".to_string(), "api".to_string()]);
    assert!(check(
        &parse(b"services:\n  a:\n    privileged: true\n").unwrap(),
        true
    )
    .is_ok());
}

#[test]
fn secrets_and_configs_files_are_binds() {
    for y in [
        "services:\n  a:\n    image: x\n    secrets: [s]\nsecrets:\n  s:\n    file: /var/run/docker.sock\n",
        "services:\n  a:\n    image: x\nconfigs:\n  c:\n    file: /\n",
        "services:\n  a:\n    image: x\nsecrets:\n  s:\n    file: ${F}\n",
        "services:\n  a:\n    image: x\nsecrets:\n  s:\n    file: sub/../../../etc/shadow\n",
        "services:\n  a:\n    image: x\n    volumes:\n      - type: bind\n        source: sub/../../x\n        target: /x\n",
    ] {
        assert!(run(y).is_err(), "not refused: {y}");
    }
    assert!(run("services:\n  a:\n    image: x\nsecrets:\n  s:\n    file: ./secret.txt\n").is_ok());
}

#[test]
fn second_pass_confines_binds_to_the_release_and_bind_roots() {
    let ctx = BoxFacts {
        release_dir: Some("/var/lib/monky-deployd/staging/abc".into()),
        agent_files: vec!["/var/lib/monky-deployd".into()],
        bundle_files: Vec::new(),
        bind_roots: vec!["/srv/monky".into()],
        ..Default::default()
    };
    let doc = |src: &str| {
        parse(format!("services:\n  a:\n    image: x\n    volumes: [\"{src}\"]\n").as_bytes())
            .unwrap()
    };
    for ok in [
        "/var/lib/monky-deployd/staging/abc/data:/d",
        "/srv/monky/app:/d",
        "/etc/localtime:/etc/localtime:ro",
    ] {
        assert!(check_normalised(&doc(ok), false, &ctx).is_ok(), "{ok}");
    }
    for bad in [
        "/srv/other:/d",
        "/opt/app:/d:ro",
        "/var/log:/l",
        "/etc/localtime:/x",
    ] {
        let e = check_normalised(&doc(bad), false, &ctx).unwrap_err();
        assert_eq!(e.code, BIND_CODE, "{bad}");
    }
}

#[test]
fn second_pass_knows_the_project_dir_and_the_agents_files() {
    let ctx = BoxFacts {
        release_dir: Some("/var/lib/monky-deployd/staging/abc".into()),
        agent_files: vec![
            "/var/lib/monky-deployd".into(),
            "/etc/monky-deployd/bootstrap.jwt".into(),
        ],
        bundle_files: Vec::new(),
        ..Default::default()
    };
    let doc = |src: &str| {
        parse(format!("services:\n  a:\n    image: x\n    volumes:\n      - type: bind\n        source: {src}\n        target: /t\n").as_bytes())
            .unwrap()
    };
    // the release's own files: fine in production, where the state dir is a forbidden host path
    for ok in [
        "/var/lib/monky-deployd/staging/abc/conf",
        "/var/lib/monky-deployd/staging/abc/a/b.txt",
    ] {
        assert!(check_normalised(&doc(ok), false, &ctx).is_ok(), "{ok}");
    }
    for bad in [
        "/var/lib/monky-deployd/staging/abc/../../bao.token",
        "/var/lib/monky-deployd/bao.token",
        "/var/lib/monky-deployd/docker",
        "/var/lib/monky-deployd/staging/abd",
        "/var/lib",
        "/etc/monky-deployd/bootstrap.jwt",
    ] {
        let r = check_normalised(&doc(bad), false, &ctx);
        assert!(r.is_err(), "not refused: {bad}");
    }
    let tmp = BoxFacts {
        release_dir: Some("/tmp/it/state/staging/abc".into()),
        agent_files: vec!["/tmp/it/state".into()],
        bundle_files: Vec::new(),
        bind_roots: vec!["/srv".into()],
        ..Default::default()
    };
    for bad in ["/tmp/it/state/bao.token", "/tmp/it", "/tmp"] {
        assert!(
            check_normalised(&doc(bad), false, &tmp).is_err(),
            "not refused: {bad}"
        );
    }
    assert!(check_normalised(&doc("/srv/data"), false, &tmp).is_ok());
}

#[test]
fn other_containers_host_files_builds_hooks_and_profiles() {
    let svc = |extra: &str| format!("services:\n  a:\n    image: x\n{extra}");
    for extra in [
        "    network_mode: container:other-env-db\n",
        "    pid: \"container:abc123\"\n",
        "    ipc: container:x\n",
        "    volumes_from: [\"container:other-env-db\"]\n",
        "    env_file: /etc/monky-deployd/config.yaml\n",
        "    env_file: [../../bao.token]\n",
        "    env_file:\n      - path: ./${F}\n        required: false\n",
        "    build: /\n",
        "    build:\n      context: ../..\n",
        "    build:\n      context: .\n      network: host\n",
        "    build:\n      context: .\n      additional_contexts:\n        st: /var/lib/monky-deployd\n",
        "    provider:\n      type: evil\n",
        "    post_start:\n      - command: id\n        privileged: true\n",
        // hooks are exec calls, which the engine guard refuses; the key table says so first
        "    post_start:\n      - command: id\n",
        "    security_opt: [\"seccomp=./allow-all.json\"]\n",
        "    security_opt: [\"apparmor=my-lax-profile\"]\n",
        "    security_opt: [\"label=type:spc_t\"]\n",
        "    security_opt: [\"label:disable\"]\n",
        "    security_opt: [\"no-new-privileges=false\"]\n",
    ] {
        assert!(run(&svc(extra)).is_err(), "not refused: {extra}");
    }
    for extra in [
        "    network_mode: service:b\n",
        "    volumes_from: [b, \"service:b:ro\"]\n",
        "    env_file: [.env, ./conf/extra.env]\n",
        "    build: .\n",
        "    build:\n      context: ./app\n      additional_contexts:\n        r: https://github.com/x/y.git\n",
        "    security_opt: [\"no-new-privileges:true\", \"apparmor=docker-default\", \"label=level:s0:c100,c200\"]\n",
    ] {
        assert!(run(&svc(extra)).is_ok(), "refused: {extra}");
    }
    let ctx = BoxFacts {
        release_dir: Some("/var/lib/monky-deployd/staging/abc".into()),
        agent_files: vec!["/var/lib/monky-deployd".into()],
        bundle_files: Vec::new(),
        ..Default::default()
    };
    let ok = parse(b"services:\n  a:\n    image: x\n    env_file: [/var/lib/monky-deployd/staging/abc/.env]\n    build:\n      context: /var/lib/monky-deployd/staging/abc/app\n").unwrap();
    assert!(check_normalised(&ok, false, &ctx).is_ok());
    let bad = parse(
        b"services:\n  a:\n    image: x\n    build:\n      context: /var/lib/monky-deployd\n",
    )
    .unwrap();
    assert!(check_normalised(&bad, false, &ctx).is_err());
}

#[test]
fn system_trees_read_only_at_most() {
    let bind = |spec: &str| format!("services:\n  a:\n    image: x\n    volumes: [\"{spec}\"]\n");
    let long = |src: &str, ro: &str| {
        format!("services:\n  a:\n    image: x\n    volumes:\n      - type: bind\n        source: {src}\n        target: /t\n        read_only: {ro}\n")
    };
    for bad in [
        bind("/etc/cron.d:/c"),
        bind("/etc/cron.d:/c:rw"),
        bind("/etc/sudoers.d:/s:ro"),
        bind("/etc/ssh:/s:ro"),
        bind("/etc/shadow:/s:ro"),
        bind("/etc:/e:ro"),
        bind("/root/.ssh:/k"),
        bind("/root/.ssh:/k:ro"),
        bind("/home/admin/.ssh:/k:ro"),
        bind("/usr/local/bin:/b"),
        bind("/lib/systemd/system:/u"),
        bind("/var/lib/dpkg/info:/d"),
        bind("/var/spool/cron/crontabs:/c:ro"),
        bind("/opt:/o"),
        bind("/var:/v:ro"),
        bind("/run/systemd/private:/p:ro"),
        long("/etc/cron.d", "false"),
        long("/etc/cron.d", "\"${RO}\""),
    ] {
        assert!(run(&bad).is_err(), "not refused: {bad}");
    }
    // /etc/localtime is often a symlink into /usr/share/zoneinfo: a writable bind writes the
    // host's zone file (the guard refuses it too; one rule since 0.5)
    for bad in [
        bind("/etc/localtime:/etc/localtime"),
        bind("/etc/timezone:/etc/timezone:rw"),
    ] {
        assert!(run(&bad).is_err(), "not refused: {bad}");
    }
    for ok in [
        bind("/etc/localtime:/etc/localtime:ro"),
        bind("/etc/timezone:/etc/timezone:ro"),
        bind("/etc/ssl/certs:/etc/ssl/certs:ro"),
        bind("/usr/share/zoneinfo:/usr/share/zoneinfo:ro,z"),
        bind("/srv/data:/data"),
        bind("/var/log/app:/logs"),
        bind("/opt/app/data:/data"),
        bind("/tmp/scratch:/scratch"),
        long("/etc/ssl/certs", "true"),
    ] {
        assert!(run(&ok).is_ok(), "refused: {ok} {:?}", run(&ok));
    }
}

#[test]
fn each_rule_judges_a_distinct_key_the_allow_list_does_not_wave_through() {
    use crate::boundary::compose_keys;
    for (table, keys) in [
        (
            "file",
            rules::FILE_RULES.iter().map(|r| r.0).collect::<Vec<_>>(),
        ),
        (
            "service",
            rules::SERVICE_RULES.iter().map(|r| r.0).collect(),
        ),
    ] {
        let mut seen = std::collections::BTreeSet::new();
        for k in keys {
            assert!(seen.insert(k), "{table} rule {k} twice");
        }
    }
    for (k, _) in rules::FILE_RULES {
        assert!(compose_keys::TOP.iter().any(|(t, _)| t == k), "{k}");
    }
    // a service key a rule judges is either marked checked in the allow-list or refused by it
    for (k, _) in rules::SERVICE_RULES {
        if let Some((_, why)) = compose_keys::SERVICE.iter().find(|(t, _)| t == k) {
            assert!(why.starts_with("checked"), "{k}: {why}");
        }
    }
}

/// The box's shared resources in the file passes: ports it reserves, names outside the
/// project's namespace, scheduling and OOM priority, its ceilings.
#[test]
fn the_boxs_ports_names_scheduling_and_ceilings() {
    let ctx = BoxFacts {
        release_dir: Some(FIRST_PASS_ROOT.into()),
        project: "monky-a".into(),
        reserved_ports: vec![22, 18443],
        ..Default::default()
    };
    let svc = |body: &str| format!("services:\n  web:\n    image: x\n{body}");
    let code = |y: &str, c: &BoxFacts| {
        check_bundle(&parse(y.as_bytes()).unwrap(), false, c)
            .err()
            .map(|r| (r.code.as_str(), r.detail))
    };
    for (body, detail) in [
        ("    ports: [\"22:22\"]\n", "web 0.0.0.0:22 (reserved by the box)"),
        ("    ports: [\"127.0.0.1:18443:80\"]\n", "web 127.0.0.1:18443 (reserved by the box)"),
        ("    ports: [\"18440-18450:8080-8090/udp\"]\n", "web 0.0.0.0:18443 (reserved by the box)"),
        ("    ports: [\"[::1]:22:80\"]\n", "web [::1]:22 (reserved by the box)"),
        (
            "    ports:\n      - target: 80\n        published: \"18443\"\n        host_ip: 10.0.0.1\n",
            "web 10.0.0.1:18443 (reserved by the box)",
        ),
    ] {
        assert_eq!(
            code(&svc(body), &ctx),
            Some(("PORT_REFUSED", detail.to_string())),
            "{body}"
        );
    }
    for body in [
        "    ports: [\"8080:80\", \"80\", \"127.0.0.1::80\", \"8000-8010:8000-8010\"]\n",
        "    ports:\n      - target: 80\n",
        "    container_name: monky-a-web\n",
        "    container_name: monky-a_web_1\n",
        "    oom_score_adj: 500\n    ulimits: {nofile: {soft: 1024, hard: 2048}, memlock: 65536}\n",
        "    sysctls: {net.core.somaxconn: 1024}\n",
    ] {
        assert_eq!(code(&svc(body), &ctx), None, "{body}");
    }
    let named =
        |y: &str| code(y, &ctx).map(|(c, d)| (c, d.split(" (").next().unwrap().to_string()));
    // a longer project's names look like this one's: refused, the namespace is prefix-free
    assert_eq!(
        named(&svc("    container_name: monky-a-eu-web\n")),
        Some(("NAME_REFUSED", "container monky-a-eu-web".into()))
    );
    assert_eq!(
        named(&format!(
            "{}volumes:\n  data:\n    name: monky-a-eu_data\n",
            svc("")
        )),
        Some(("NAME_REFUSED", "volume monky-a-eu_data".into()))
    );
    assert_eq!(
        named(&svc("    container_name: monky-b-web-1\n")),
        Some(("NAME_REFUSED", "container monky-b-web-1".into()))
    );
    assert_eq!(
        named(&format!(
            "{}volumes:\n  data:\n    name: monky-b_data\n",
            svc("")
        )),
        Some(("NAME_REFUSED", "volume monky-b_data".into()))
    );
    assert_eq!(
        named(&format!(
            "{}networks:\n  n:\n    external: true\n    name: bridge2\n",
            svc("")
        )),
        Some(("NAME_REFUSED", "network bridge2".into()))
    );
    for body in [
        "    oom_score_adj: -500\n",
        "    cap_add: [SYS_NICE]\n",
        "    cap_add: [ipc_lock]\n",
        "    cap_add: [CAP_SYS_RESOURCE]\n",
        "    ulimits: {rtprio: 99}\n",
        "    ulimits: {nice: {soft: 0, hard: 10}}\n",
        "    ulimits: {memlock: -1}\n",
        "    ulimits: {memlock: 1073741824}\n",
        "    sysctls: [kernel.panic=1]\n",
        "    security_opt: [\"label=disable\"]\n",
    ] {
        assert_eq!(
            code(&svc(body), &ctx).map(|c| c.0),
            Some(CODE.as_str()),
            "{body}"
        );
    }
    let capped = BoxFacts {
        limits: crate::boundary::policy::Limits {
            memory: Some(256 << 20),
            pids: Some(100),
        },
        ..ctx.clone()
    };
    for ok in [
        "    mem_limit: 128m\n    pids_limit: 50\n",
        "    deploy: {resources: {limits: {memory: 64M, pids: 10}}}\n",
    ] {
        assert_eq!(code(&svc(ok), &capped), None, "{ok}");
    }
    for bad in [
        "    pids_limit: 50\n",
        "    mem_limit: 512m\n    pids_limit: 50\n",
        "    mem_limit: 128m\n",
        "    mem_limit: 128m\n    pids_limit: 500\n",
    ] {
        assert_eq!(
            code(&svc(bad), &capped).map(|c| c.0),
            Some("LIMIT_REFUSED"),
            "{bad}"
        );
    }
}

#[test]
fn jobs_from_compose_depends_on_and_the_marker_label() {
    let doc = parse(
        b"services:\n  migrate:\n    image: x\n  seed:\n    image: x\n    labels: [\"monky.job=true\"]\n  \
          report:\n    image: x\n    labels: {monky.job: \"true\"}\n  web:\n    image: x\n    depends_on:\n      \
          migrate: {condition: service_completed_successfully}\n      db: {condition: service_healthy}\n  \
          db:\n    image: x\n    labels: {monky.job: \"false\"}\n",
    )
    .unwrap();
    let j: Vec<String> = jobs(&doc).into_iter().collect();
    assert_eq!(j, vec!["migrate", "report", "seed"]);
}

#[test]
fn a_writable_bind_of_the_release_is_named_for_an_operator() {
    let ctx = BoxFacts {
        release_dir: Some(FIRST_PASS_ROOT.into()),
        project: "monky-a".into(),
        bundle_files: vec!["compose.yaml".into(), "conf/app.conf".into()],
        ..Default::default()
    };
    let first = |y: &str| {
        check_bundle(&parse(y.as_bytes()).unwrap(), false, &ctx)
            .map(|_| ())
            .unwrap_err()
    };
    let svc = |v: &str| format!("services:\n  a:\n    image: x\n    volumes: [\"{v}\"]\n");
    for v in ["./:/app", ".:/app"] {
        let r = first(&svc(v));
        assert_eq!(r.code, BIND_CODE, "{v}: {r:?}");
        assert!(
            r.detail.contains("the release directory (./)"),
            "{v}: {r:?}"
        );
        assert!(!r.detail.contains(FIRST_PASS_ROOT), "{v}: {r:?}");
    }
    // a file of the bundle inside a writable bind keeps its ./ path
    let r = first(&svc("./conf:/c"));
    assert_eq!(r.code, BIND_CODE, "{r:?}");
    assert!(r.detail.contains("./conf/app.conf"), "{r:?}");
    assert!(!r.detail.contains(FIRST_PASS_ROOT), "{r:?}");
    assert_eq!(
        release_shown("/.release/.release-notes: writable, and holds /.release, which"),
        "./.release-notes: writable, and holds the release directory (./), which"
    );
}

#[test]
fn the_boxs_address_space_subnets_and_static_addresses() {
    let mut net = crate::boundary::policy::netpool::AddressSpace::new(&["10.100.0.0/16".into()]);
    net.take(
        crate::boundary::policy::netpool::Cidr::parse("10.100.5.0/24").unwrap(),
        "a route of the host via eth1",
    );
    let ctx = BoxFacts {
        release_dir: Some("/rel".into()),
        project: "monky-t".into(),
        net: Some(net),
        ..BoxFacts::default()
    };
    let judge = |y: &str| check_normalised(&parse(y.as_bytes()).unwrap(), false, &ctx);
    let svc = |nets: &str| {
        format!("services:\n  web:\n    image: x\n    networks:\n{nets}networks:\n  front:\n    ipam:\n      config:\n        - subnet: 10.100.1.0/24\n          gateway: 10.100.1.1\n")
    };
    // a subnet of the pool, an address inside it; a network with no subnet
    judge(&svc("      front:\n        ipv4_address: 10.100.1.9\n")).unwrap();
    judge("services:\n  web:\n    image: x\nnetworks:\n  back: {}\n").unwrap();
    let code = |y: &str| {
        let r = judge(y).unwrap_err();
        assert_eq!(r.code, "NETWORK_REFUSED", "{r:?}");
        r.detail
    };
    assert_eq!(
        code(&svc("      front:\n        ipv4_address: 10.100.2.9\n")),
        "service web: front 10.100.2.9 (outside the network's own subnet)"
    );
    let net = |ipam: &str| {
        format!("services:\n  web:\n    image: x\nnetworks:\n  front:\n    ipam:\n{ipam}")
    };
    assert_eq!(
        code(&net("      config:\n        - subnet: 10.100.5.0/25\n")),
        "front 10.100.5.0/25 (overlaps 10.100.5.0/24, a route of the host via eth1)"
    );
    assert!(code(&net("      config:\n        - subnet: 169.254.169.0/24\n")).contains("outside"));
    assert!(code(&net("      config:\n        - subnet: fd00::/64\n")).contains("no IPv6 pool"));
    assert!(code(&net(
        "      config:\n        - subnet: 10.100.1.0/24\n          ip_range: 10.100.2.0/25\n"
    ))
    .contains("outside the network's own subnet"));
    assert!(code(&net("      driver: other\n")).contains("IPAM driver"));
    // an external network's subnet is the engine's: the guard judges the address
    judge("services:\n  web:\n    image: x\n    networks:\n      ext:\n        ipv4_address: 10.100.7.9\nnetworks:\n  ext:\n    external: true\n    name: monky-t_ext\n").unwrap();
    // the first pass leaves an interpolated subnet to the second
    let first = BoxFacts {
        bundle_files: vec![],
        ..ctx.clone()
    };
    check_bundle(
        &parse(net("      config:\n        - subnet: ${SUBNET}\n").as_bytes()).unwrap(),
        false,
        &first,
    )
    .unwrap();
}

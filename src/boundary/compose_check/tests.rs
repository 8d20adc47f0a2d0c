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
    use crate::compose_keys;
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
    // a service key a rule judges has a row that says a rule judges it, or that refuses it
    for (k, _) in rules::SERVICE_RULES {
        let row = crate::keys::compose_row(k).unwrap_or_else(|| panic!("{k} has no row"));
        assert!(
            matches!(
                row.how,
                crate::keys::How::Rule(_) | crate::keys::How::Refused
            ),
            "{k}: {:?}",
            row.how
        );
    }
}

mod box_resources;
mod issue41;

use super::*;

#[test]
fn names_follow_the_rule() {
    for ok in ["qa", "a", "0", "staging-2", "tenant_7", &"a".repeat(31)] {
        assert_eq!(check_name(ok), Ok(()), "{ok}");
    }
    for bad in [
        "",
        "-qa",
        "_qa",
        "Qa",
        "q.a",
        "q/a",
        "..",
        "qa ",
        "é",
        &"a".repeat(32),
    ] {
        assert!(
            matches!(check_name(bad), Err(NameError::Form(_))),
            "{bad:?}"
        );
    }
    for r in RESERVED {
        assert_eq!(check_name(r), Err(NameError::Reserved(r.to_string())));
    }
}

/// Every path the config derives inside a state dir that could pass for a name is reserved.
#[test]
fn config_paths_in_the_state_dir_are_reserved() {
    let c = Config::default();
    for p in [
        c.state_path(),
        c.token_path(),
        c.high_water_path(),
        c.lock_path(),
        c.releases_dir(),
        c.current_link(),
        c.staging_dir(),
        c.update_dir(),
        c.docker_config_dir(),
        c.snapshots_dir(),
        c.data_journal_path(),
        c.overrides_dir(),
        c.state_dir.join(monky_guard::IMAGE_LEDGER),
        crate::state::synced_path(&c.state_path()),
    ] {
        assert_eq!(p.parent(), Some(c.state_dir.as_path()));
        let n = p.file_name().unwrap().to_str().unwrap();
        assert!(
            n.contains('.') || RESERVED.contains(&n),
            "{n} is written in a state dir and is not reserved"
        );
        assert!(check_name(n).is_err(), "{n}");
    }
}

#[test]
fn paths_of_the_default_and_a_named_instance() {
    let d = Instance::default();
    assert_eq!(d.config_path(), Path::new("/etc/monky-deployd/config.yaml"));
    assert_eq!(d.default_state_dir(), Path::new("/var/lib/monky-deployd"));
    assert_eq!(
        d.default_bootstrap_path(),
        Path::new("/etc/monky-deployd/bootstrap.jwt")
    );
    assert_eq!(d.label(), "");
    assert_eq!(d.units(), crate::selfupdate::install::AGENT_UNITS);
    let q = Instance::new(Some("qa"), Path::new(ETC_DIR)).unwrap();
    assert_eq!(
        q.config_path(),
        Path::new("/etc/monky-deployd/qa/config.yaml")
    );
    assert_eq!(
        q.default_state_dir(),
        Path::new("/var/lib/monky-deployd/qa")
    );
    assert_eq!(
        q.default_bootstrap_path(),
        Path::new("/etc/monky-deployd/qa/bootstrap.jwt")
    );
    assert_eq!(q.label(), "qa");
    assert_eq!(
        q.units(),
        [
            "monky-deployd@qa.service",
            "monky-deployd-run@qa.service",
            "monky-deployd-laptop@qa.service"
        ]
    );
    assert!(Instance::new(Some("update"), Path::new(ETC_DIR)).is_err());
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const BASE: &str = "site: t\ntransport: system\nbao: {scheme: http, ca_file: \"\"}\n";

#[test]
fn the_box_instances_are_found_and_judged() {
    let etc = tempfile::tempdir().unwrap();
    let e = etc.path();
    write(e, "config.yaml", &format!("env_id: env-main\n{BASE}"));
    write(
        e,
        "qa/config.yaml",
        &format!("env_id: env-qa\n{BASE}").replace("system", "proxy"),
    );
    write(
        e,
        "stage/config.yaml",
        &format!("env_id: env-st\n{BASE}reserved_ports: [9000]\ntenancy: {{proxy_port: 28443}}\n"),
    );
    // not instances: a reserved name, a bad name, a dir without config
    write(e, "update/config.yaml", &format!("env_id: env-x\n{BASE}"));
    write(e, "Bad/config.yaml", &format!("env_id: env-y\n{BASE}"));
    std::fs::create_dir_all(e.join("empty")).unwrap();
    let all = all(e);
    let names: Vec<&str> = all.iter().map(|p| p.instance.display()).collect();
    assert_eq!(names, ["default", "qa", "stage"]);
    // defaults follow the name; an explicit key still wins
    let qa = all[1].config.as_ref().unwrap();
    assert_eq!(qa.state_dir, Path::new("/var/lib/monky-deployd/qa"));
    assert_eq!(qa.bootstrap_path, e.join("qa/bootstrap.jwt"));
    assert_eq!(
        all[0].config.as_ref().unwrap().state_dir,
        Path::new(STATE_ROOT)
    );

    let me = Instance::new(Some("qa"), e).unwrap();
    let others = others(&me);
    assert_eq!(others.len(), 2);
    assert_eq!(peer_ports(&others), [9000, 18200, 18443, 28443]);
    // their own files are kept from qa's bundles: state dirs, grants, configs
    let files = peer_files(&others);
    for f in [
        PathBuf::from(STATE_ROOT),
        PathBuf::from("/var/lib/monky-deployd/stage"),
        e.join("config.yaml"),
        e.join("stage/config.yaml"),
        e.join("stage/bootstrap.jwt"),
    ] {
        assert!(files.contains(&f), "{f:?} in {files:?}");
    }
    assert!(
        !files.iter().any(|f| f.starts_with(e.join("qa"))),
        "{files:?}"
    );
    // a config that does not load still keeps its file and default dirs
    write(e, "broken/config.yaml", "env_id: [\n");
    let files = peer_files(&others_of(e, "qa"));
    assert!(files.contains(&e.join("broken/config.yaml")), "{files:?}");
    assert!(
        files.contains(&PathBuf::from("/var/lib/monky-deployd/broken")),
        "{files:?}"
    );
    std::fs::remove_dir_all(e.join("broken")).unwrap();
    assert!(
        clashes(qa, &others).is_empty(),
        "{:?}",
        clashes(qa, &others)
    );

    // a second instance of the same env, project and state dir is a clash, named
    write(
        e,
        "qa2/config.yaml",
        &format!("env_id: env-qa\n{BASE}state_dir: /var/lib/monky-deployd/qa\n"),
    );
    let c = clashes(qa, &others_of(e, "qa"));
    assert!(
        c.iter()
            .any(|m| m.starts_with("state_dir") && m.contains("qa2")),
        "{c:?}"
    );
    assert!(c.iter().any(|m| m.starts_with("env_id")), "{c:?}");
    assert!(c.iter().any(|m| m.starts_with("compose_project")), "{c:?}");
}

fn others_of(e: &Path, me: &str) -> Vec<Peer> {
    others(&Instance::new(Some(me), e).unwrap())
}

#[test]
fn two_proxy_instances_on_one_port_clash() {
    let etc = tempfile::tempdir().unwrap();
    let e = etc.path();
    let proxy = BASE.replace("system", "proxy");
    write(e, "a/config.yaml", &format!("env_id: env-a\n{proxy}"));
    write(e, "b/config.yaml", &format!("env_id: env-b\n{proxy}"));
    let a = Config::load_for(
        &e.join("a/config.yaml"),
        &Instance::new(Some("a"), e).unwrap(),
    )
    .unwrap();
    let c = clashes(&a, &others_of(e, "a"));
    assert!(
        c.contains(&"proxy port 18443 is instance b's too".to_string()),
        "{c:?}"
    );
    write(
        e,
        "b/config.yaml",
        &format!("env_id: env-b\n{proxy}tenancy: {{proxy_port: 28443}}\n")
            .replace("scheme: http", "scheme: http, proxy_port: 28200"),
    );
    assert!(clashes(&a, &others_of(e, "a")).is_empty());
}

#[test]
fn the_updater_is_the_first_with_self_update_on() {
    let etc = tempfile::tempdir().unwrap();
    let e = etc.path();
    use base64::Engine as _;
    let k = ed25519_dalek::SigningKey::from_bytes(&[9; 32]);
    let pubk = base64::engine::general_purpose::STANDARD.encode(k.verifying_key().as_bytes());
    let key = format!("agent_signing_keys: {{k: \"{pubk}\"}}\n");
    write(e, "config.yaml", &format!("env_id: env-main\n{BASE}"));
    write(e, "b/config.yaml", &format!("env_id: env-b\n{BASE}{key}"));
    write(e, "a/config.yaml", &format!("env_id: env-a\n{BASE}"));
    let all = all(e);
    assert_eq!(updater(&all).map(|p| p.instance.display()), Some("b"));
    write(e, "config.yaml", &format!("env_id: env-main\n{BASE}{key}"));
    let all = super::all(e);
    assert_eq!(updater(&all).map(|p| p.instance.display()), Some("default"));
    std::fs::remove_file(e.join("config.yaml")).unwrap();
    std::fs::remove_file(e.join("b/config.yaml")).unwrap();
    assert!(updater(&super::all(e)).is_none());
}

#[test]
fn overlapping_data_roots_and_projects_that_extend_one_another_clash() {
    let etc = tempfile::tempdir().unwrap();
    let e = etc.path();
    let base = BASE.replace("compose_project: ", "compose_project_was: ");
    let conf = |env: &str, project: &str, roots: &str| {
        format!("env_id: {env}\ncompose_project: {project}\nbind_roots: [{roots}]\n{base}")
            .replace("compose_project_was: ", "# ")
    };
    write(e, "a/config.yaml", &conf("env-a", "shop", "/srv/data"));
    write(
        e,
        "b/config.yaml",
        &conf("env-b", "shop-eu", "/srv/data/eu"),
    );
    let a = Config::load_for(
        &e.join("a/config.yaml"),
        &Instance::new(Some("a"), e).unwrap(),
    )
    .unwrap();
    let c = clashes(&a, &others_of(e, "a"));
    assert!(
        c.iter()
            .any(|m| m.starts_with("compose_project shop and instance b's shop-eu")),
        "{c:?}"
    );
    assert!(
        c.iter()
            .any(|m| m.starts_with("bind_roots /srv/data overlaps instance b's /srv/data/eu")),
        "{c:?}"
    );
    // apart: another project that merely starts alike, and disjoint roots
    write(
        e,
        "b/config.yaml",
        &conf("env-b", "shopping", "/srv/data-b"),
    );
    assert!(
        clashes(&a, &others_of(e, "a")).is_empty(),
        "{:?}",
        clashes(&a, &others_of(e, "a"))
    );
    // and a peer's roots are files this instance's bundles never reach
    assert!(peer_files(&others_of(e, "a")).contains(&PathBuf::from("/srv/data-b")));
    assert!(projects_overlap("shop", "shop_eu") && !projects_overlap("shop", "shopeu"));
}

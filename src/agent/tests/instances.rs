//! Ticks beside other instances: the state-dir entries they reserve, one update owner, clashes.

use super::*;

/// A named instance's state dir sits inside the default one's (`/var/lib/monky-deployd/<name>`):
/// every entry ticks leave in a state dir that the name rule would allow must be reserved.
#[test]
fn every_entry_a_tick_leaves_in_the_state_dir_is_reserved_for_instances() {
    let mut b = TestBox::with(|c| c.metrics_textfile = String::new());
    let s = sha('a');
    b.applied(&s, &["web"]);
    b.running(&[("web", "running", "healthy")]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "none", "desired_sha": "{s}"}}"#));
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    let t = b.bundle(&[(
        "compose.yaml",
        "services:\n  web:\n    image: busybox\n    privileged: true\n",
    )]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "apply", "desired_sha": "{t}"}}"#));
    assert!(b.tick().is_err());
    let dir = &b.agent.cfg.state_dir;
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for must in [
        "lock",
        "releases",
        "current",
        "staging",
        "docker",
        "state.json",
    ] {
        assert!(names.iter().any(|n| n == must), "{must} not in {names:?}");
    }
    for n in &names {
        assert!(
            monky_host::instance::check_name(n).is_err(),
            "{n} in a state dir could be taken for an instance's directory: reserve it"
        );
    }
}

/// Several instances on one box: only the first with self-update on stages the package (the
/// others' `plan` says which does), and an instance that shares its env with another refuses
/// to start.
#[test]
fn one_instance_stages_updates_and_a_clash_refuses_to_start() {
    use monky_host::instance::Instance;
    let etc = tempfile::tempdir().unwrap();
    let e = etc.path();
    let k = ed25519_dalek::SigningKey::from_bytes(&[9; 32]);
    let pubk = base64::engine::general_purpose::STANDARD.encode(k.verifying_key().as_bytes());
    let write = |name: &str, env: &str| {
        std::fs::create_dir_all(e.join(name)).unwrap();
        std::fs::write(
            e.join(name).join("config.yaml"),
            format!(
                "env_id: {env}\nsite: t\ntransport: system\nstate_dir: {}\n\
                 bao: {{scheme: http, ca_file: \"\"}}\nagent_signing_keys: {{k: \"{pubk}\"}}\n",
                e.join(format!("state-{name}")).display()
            ),
        )
        .unwrap();
    };
    write("a", "env-a");
    write("b", "env-b");
    let agent = |name: &str| {
        let i = Instance::new(Some(name), e).unwrap();
        let cfg = Config::load_for(&i.config_path(), &i).unwrap();
        Agent::new(cfg, false)
    };
    let a = agent("a").unwrap();
    assert!(!a.agent_keys.is_empty());
    assert_eq!(a.update_elsewhere, None);
    assert_eq!(a.update_step(None, false), update::Step::Keep);
    let b = agent("b").unwrap();
    assert!(b.agent_keys.is_empty(), "b stages nothing");
    assert_eq!(
        b.update_step(None, false),
        update::Step::Elsewhere("a".into())
    );

    write("c", "env-b");
    let f = agent("c").err().expect("c shares b's env");
    assert_eq!(f.exit(), Exit::Fail);
    assert!(
        f.message().contains(
            "env_id env-b is instance b's too; compose_project monky-env-b is instance b's too"
        ),
        "{}",
        f.message()
    );
}

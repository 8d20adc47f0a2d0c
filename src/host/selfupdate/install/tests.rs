use super::*;
use base64::Engine as _;
use ed25519_dalek::{Signer, SigningKey};

fn script(p: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The box as `install` sees it: 0.3.0 installed and kept, 0.3.1 staged and signed. The
/// stand-in dpkg takes over a second (as a real one does) and records what the postinst
/// would see; the stand-in systemctl records whether the tick lock was free and the
/// probation record at the moment of the restart.
#[test]
fn the_restart_comes_after_the_lock_and_probation_counts_from_it() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n);
    let k = SigningKey::from_bytes(&[9; 32]);
    let pubk = base64::engine::general_purpose::STANDARD.encode(k.verifying_key().as_bytes());
    let cfg = Config::parse(
        &format!(
            "env_id: env-up\nsite: test\ntransport: system\nstate_dir: {}\n\
             bao:\n  scheme: http\n  ca_file: \"\"\n\
             agent_signing_keys:\n  agent-2026: \"{pubk}\"\nagent_update_probation_s: 10\n",
            p("state").display()
        ),
        &p("config.yaml"),
    )
    .unwrap();
    let keys = Keys::parse_key("agent_signing_keys", &cfg.agent_signing_keys).unwrap();
    let lock = cfg.lock_path();
    let o = Opts {
        keep_dir: p("keep"),
        dpkg: p("dpkg").display().to_string(),
        dpkg_query: p("dpkg-query").display().to_string(),
        systemctl: p("systemctl").display().to_string(),
        dpkg_deb: p("dpkg-deb").display().to_string(),
        poll: Duration::from_millis(100),
        ..Default::default()
    };
    script(&p("dpkg-query"), "echo 0.3.0");
    script(
        &p("dpkg-deb"),
        &format!(
            "printf 'Package: monky-deployd\\nVersion: 0.3.1\\nArchitecture: {}\\n'",
            su::arch()
        ),
    );
    script(
        &p("dpkg"),
        &format!(
            "{{ echo \"postinst sees {UNDER_INSTALLER}=${{{UNDER_INSTALLER}:-}}\"
               flock -n {lock} true && echo lock free || echo lock held; }} >> {log}
             sleep 1.2
             date +%s > {done}",
            lock = lock.display(),
            log = p("dpkg.log").display(),
            done = p("dpkg.done").display(),
        ),
    );
    script(
        &p("systemctl"),
        &format!(
            "{{ echo \"$*\"; flock -n {lock} true && echo lock free || echo lock held; }} >> {log}
             cp {keep}/probation.json {seen}",
            lock = lock.display(),
            log = p("systemctl.log").display(),
            keep = o.keep_dir.display(),
            seen = p("probation.at-restart").display(),
        ),
    );
    std::fs::create_dir_all(o.keep_dir.join("packages")).unwrap();
    std::fs::write(
        o.keep_dir
            .join("packages")
            .join(su::package_name("0.3.0", su::arch())),
        b"old",
    )
    .unwrap();
    let upd = cfg.update_dir();
    std::fs::create_dir_all(&upd).unwrap();
    let package = su::package_name("0.3.1", su::arch());
    std::fs::write(upd.join(&package), b"new package").unwrap();
    let sha = su::file_sha256(&upd.join(&package)).unwrap();
    let staged = Staged {
        version: "0.3.1".into(),
        sha256: sha.clone(),
        from_version: "0.3.0".into(),
        arch: su::arch().into(),
        package,
        staged_at: 1,
        signatures: vec![monky_wire::tenancy::SignatureWire {
            key_id: "agent-2026".into(),
            alg: "ed25519".into(),
            sig: base64::engine::general_purpose::STANDARD
                .encode(k.sign(sha.as_bytes()).to_bytes()),
        }],
        statement: None,
    };

    let got = install(&cfg, &o, &keys, &staged)
        .unwrap()
        .expect("installed");

    let dpkg_log = std::fs::read_to_string(p("dpkg.log")).unwrap();
    assert_eq!(
        dpkg_log,
        format!("postinst sees {UNDER_INSTALLER}=1\nlock held\n"),
        "dpkg runs under the lock, and tells the postinst to leave the restart to us"
    );
    let sctl = std::fs::read_to_string(p("systemctl.log")).unwrap();
    assert_eq!(
        sctl,
        "try-restart monky-deployd.service monky-deployd-run.service \
         monky-deployd-laptop.service\nlock free\n",
        "one restart of every agent unit, with the tick lock free for the first tick"
    );
    let dpkg_done: u64 = std::fs::read_to_string(p("dpkg.done"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let seen: Probation =
        serde_json::from_slice(&std::fs::read(p("probation.at-restart")).unwrap()).unwrap();
    assert!(
        seen.started_at >= dpkg_done,
        "probation on disk at the restart counts from {}, before dpkg finished at {dpkg_done}",
        seen.started_at
    );
    assert_eq!(got.started_at, seen.started_at);
    assert_eq!((got.new.as_str(), got.old.as_str()), ("0.3.1", "0.3.0"));
}

/// The package is the box's: after an install every instance's units are try-restarted, the
/// default instance's first.
#[test]
fn every_instance_units_are_restarted() {
    let d = tempfile::tempdir().unwrap();
    let etc = d.path().join("etc");
    for (dir, env) in [
        ("", "env-main"),
        ("qa", "env-qa"),
        ("b2", "env-b2"),
        ("update", "env-x"),
    ] {
        std::fs::create_dir_all(etc.join(dir)).unwrap();
        std::fs::write(
            etc.join(dir).join("config.yaml"),
            format!(
                "env_id: {env}\nsite: t\ntransport: system\nbao: {{scheme: http, ca_file: \"\"}}\n"
            ),
        )
        .unwrap();
    }
    let o = Opts {
        etc_dir: etc,
        ..Default::default()
    };
    assert_eq!(
        all_units(&o),
        [
            "monky-deployd.service",
            "monky-deployd-run.service",
            "monky-deployd-laptop.service",
            "monky-deployd@b2.service",
            "monky-deployd-run@b2.service",
            "monky-deployd-laptop@b2.service",
            "monky-deployd@qa.service",
            "monky-deployd-run@qa.service",
            "monky-deployd-laptop@qa.service",
        ]
    );
}

/// Issue 40.3, root's half: the copy in `keep_dir` is hashed and its signature and the
/// statement's binding to exactly those bytes are checked before `dpkg-deb` reads it. A
/// statement the key signed for another sha256 never reaches the reader; the right one does
/// and is installed.
#[test]
fn root_runs_no_reader_before_the_statement_names_the_copy() {
    for right in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        let k = SigningKey::from_bytes(&[9; 32]);
        let pubk = base64::engine::general_purpose::STANDARD.encode(k.verifying_key().as_bytes());
        let cfg = Config::parse(
            &format!(
                "env_id: env-up\nsite: test\ntransport: system\nstate_dir: {}\n\
                 bao:\n  scheme: http\n  ca_file: \"\"\n\
                 agent_signing_keys:\n  agent-2026: \"{pubk}\"\nrequire_statements: false\n",
                p("state").display()
            ),
            &p("config.yaml"),
        )
        .unwrap();
        let keys = Keys::parse_key("agent_signing_keys", &cfg.agent_signing_keys).unwrap();
        let o = Opts {
            keep_dir: p("keep"),
            dpkg: p("dpkg").display().to_string(),
            dpkg_query: p("dpkg-query").display().to_string(),
            systemctl: p("systemctl").display().to_string(),
            dpkg_deb: p("dpkg-deb").display().to_string(),
            etc_dir: p("etc"),
            poll: Duration::from_millis(100),
            ..Default::default()
        };
        let marker = p("dpkg-deb.ran");
        script(&p("dpkg-query"), "echo 0.3.0");
        script(&p("dpkg"), "true");
        script(&p("systemctl"), "true");
        script(
            &p("dpkg-deb"),
            &format!(
                "touch {}\nprintf 'Package: monky-deployd\\nVersion: 0.3.1\\nArchitecture: {}\\n'",
                marker.display(),
                su::arch()
            ),
        );
        let pkgs = o.keep_dir.join("packages");
        std::fs::create_dir_all(&pkgs).unwrap();
        std::fs::write(pkgs.join(su::package_name("0.3.0", su::arch())), b"old").unwrap();
        let upd = cfg.update_dir();
        std::fs::create_dir_all(&upd).unwrap();
        let package = su::package_name("0.3.1", su::arch());
        std::fs::write(upd.join(&package), b"new package").unwrap();
        let sha = su::file_sha256(&upd.join(&package)).unwrap();
        let named = if right { sha.clone() } else { "cd".repeat(32) };
        let now = i64::try_from(state::now()).unwrap();
        let statement = serde_json::to_vec(&serde_json::json!({
            "kind": monky_boundary::statement::AGENT_KIND, "version": "0.3.1",
            "arch": su::arch(), "sha256": named,
            "issued_at": monky_boundary::statement::rfc3339(now - 60),
            "expires_at": monky_boundary::statement::rfc3339(now + 3600),
        }))
        .unwrap();
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let staged = Staged {
            version: "0.3.1".into(),
            sha256: sha.clone(),
            from_version: "0.3.0".into(),
            arch: su::arch().into(),
            package,
            staged_at: 1,
            signatures: vec![monky_wire::tenancy::SignatureWire {
                key_id: "agent-2026".into(),
                alg: "ed25519".into(),
                sig: b64(&k.sign(&statement).to_bytes()),
            }],
            statement: Some(b64(&statement)),
        };
        let res = install(&cfg, &o, &keys, &staged);
        if right {
            let got = res.expect("installed").expect("a probation");
            assert_eq!(got.new, "0.3.1");
            assert!(marker.exists(), "the reader runs once the bytes are bound");
        } else {
            let e = res.expect_err("refused").to_string();
            assert!(e.starts_with("STATEMENT_REFUSED: sha256 ("), "{e}");
            assert!(!marker.exists(), "dpkg-deb ran over unbound bytes");
            assert!(
                !pkgs.join(&staged.package).exists(),
                "the refused copy stays"
            );
        }
    }
}

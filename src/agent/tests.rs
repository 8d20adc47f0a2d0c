//! Whole ticks against fakes of tenancy, OpenBao and the engine (`fakes.rs`), on a real state
//! directory: what each check-in answer leads to, which calls the agent makes, what it reports
//! and what it leaves on disk, in milliseconds. An apply that passes every check reaches the
//! compose CLI, which is not faked: those paths are the real-parts suites' (tests/tick.rs).

use base64::Engine as _;

use super::fakes::{FakeBao, FakeEngine, FakeTenancy, HandClock, ENV};
use super::*;
use crate::agent::error::Kind;
use crate::host::state::{TokenMeta, TokenSource};

const STORED: &str = "hvs.stored-token-aaaaaaaaaaaaaaaaaaaa";

struct TestBox {
    /// keeps the temporary directory alive as long as the box
    _dir: tempfile::TempDir,
    agent: Agent<FakeTenancy, FakeBao, FakeEngine>,
}

impl TestBox {
    /// A box with a stored token and nothing applied.
    fn new() -> TestBox {
        TestBox::with(|_| {})
    }

    fn with(edit: impl FnOnce(&mut Config)) -> TestBox {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = Config {
            env_id: ENV.into(),
            state_dir: dir.path().join("state"),
            bootstrap_path: dir.path().join("bootstrap.jwt"),
            compose_project: "monky-test".into(),
            ..Config::default()
        };
        edit(&mut cfg);
        std::fs::create_dir_all(&cfg.state_dir).unwrap();
        std::fs::write(cfg.token_path(), STORED).unwrap();
        let c = Clients {
            tenancy: FakeTenancy::default(),
            bao: FakeBao::new(),
        };
        let engine = FakeEngine::new(dir.path().to_path_buf());
        let agent = Agent::from_parts(cfg, false, c, engine).unwrap();
        TestBox { _dir: dir, agent }
    }

    fn tick(&mut self) -> Result<Exit, Failure> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(self.agent.tick())
    }

    fn tenancy(&self) -> &FakeTenancy {
        &self.agent.c.tenancy
    }

    fn bao(&self) -> &FakeBao {
        &self.agent.c.bao
    }

    fn calls(&self) -> Vec<String> {
        self.tenancy().calls.borrow().clone()
    }

    fn reports(&self) -> Vec<serde_json::Value> {
        self.tenancy().reports.borrow().clone()
    }

    fn saved(&self) -> State {
        State::load(&self.agent.cfg.state_path()).unwrap()
    }

    /// `sha` applied and current, its compose file naming `services`.
    fn applied(&mut self, sha: &str, services: &[&str]) {
        let cfg = &self.agent.cfg;
        let rel = cfg.releases_dir().join(sha);
        std::fs::create_dir_all(&rel).unwrap();
        let compose: String = std::iter::once("services:\n".to_string())
            .chain(
                services
                    .iter()
                    .map(|s| format!("  {s}:\n    image: busybox\n")),
            )
            .collect();
        std::fs::write(rel.join("compose.yaml"), compose).unwrap();
        std::os::unix::fs::symlink(&rel, cfg.current_link()).unwrap();
        let mut st = State {
            applied_sha: Some(sha.into()),
            ..State::default()
        };
        st.save(&cfg.state_path()).unwrap();
    }

    fn running(&self, cs: &[(&str, &str, &str)]) {
        *self.agent.engine.containers.borrow_mut() = cs
            .iter()
            .map(|(s, st, h)| test_container(s, st, h))
            .collect();
    }

    /// Offer `files` as a bundle; its sha.
    fn bundle(&self, files: &[(&str, &str)]) -> String {
        let sha = bundle::canonical_sha(files.iter().map(|(p, c)| (*p, c.as_bytes())));
        let body = serde_json::json!({
            "env_id": ENV,
            "sha": sha,
            "files": files.iter().map(|(p, c)| serde_json::json!({
                "path": p,
                "content_b64": base64::engine::general_purpose::STANDARD.encode(c),
            })).collect::<Vec<_>>(),
        });
        self.tenancy()
            .bundles
            .borrow_mut()
            .insert(sha.clone(), body.to_string());
        sha
    }
}

fn sha(c: char) -> String {
    c.to_string().repeat(64)
}

#[test]
fn a_converged_box_reports_applied_and_asks_openbao_nothing() {
    let mut b = TestBox::new();
    let s = sha('a');
    b.applied(&s, &["web", "db"]);
    b.running(&[("web", "running", "healthy"), ("db", "running", "")]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "none", "desired_sha": "{s}"}}"#));
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(
        b.calls(),
        [
            format!("checkin {STORED} applied={s}"),
            "report applied".into()
        ]
    );
    assert_eq!(b.reports()[0]["sha"], s.as_str());
    assert_eq!(b.reports()[0]["containers"].as_array().unwrap().len(), 2);
    assert!(b.bao().calls.borrow().is_empty());
    let st = b.saved();
    assert!(st.last_checkin.is_some());
    assert_eq!(st.last_result.as_deref(), Some("applied"));
    assert_eq!(st.counters.ticks.get("0"), Some(&1));
}

#[test]
fn an_unwell_service_is_reported_and_the_tick_fails() {
    let mut b = TestBox::new();
    let s = sha('a');
    b.applied(&s, &["web", "db"]);
    b.running(&[("web", "running", "healthy"), ("db", "exited", "")]);
    let f = b.tick().unwrap_err();
    assert_eq!(f.exit(), Exit::Fail);
    assert_eq!(f.message(), "UNHEALTHY: db");
    let r = &b.reports()[0];
    assert_eq!(
        (r["result"].as_str(), r["detail"].as_str()),
        (Some("failed"), Some("UNHEALTHY: db"))
    );
    let st = b.saved();
    assert_eq!(st.last_error.as_deref(), Some("UNHEALTHY: db"));
    assert_eq!(st.counters.failures.get("UNHEALTHY"), Some(&1));
}

#[test]
fn an_engine_that_is_down_is_named_in_the_report() {
    let mut b = TestBox::new();
    b.applied(&sha('a'), &["web"]);
    b.agent.engine.down.set(true);
    let f = b.tick().unwrap_err();
    assert_eq!(f.code(), Some(crate::agent::error::Code::DockerUnavailable));
    assert!(
        f.message().contains("connection refused"),
        "{}",
        f.message()
    );
    assert_eq!(b.reports()[0]["result"], "failed");
}

#[test]
fn a_box_with_nothing_applied_checks_in_and_reports_nothing() {
    let mut b = TestBox::new();
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(b.calls(), [format!("checkin {STORED} applied=-")]);
}

#[test]
fn a_refused_token_with_a_waiting_grant_bootstraps_and_checks_in_again() {
    let mut b = TestBox::new();
    b.bao().live.borrow_mut().insert(STORED.into(), 600);
    std::fs::write(&b.agent.cfg.bootstrap_path, "kit-grant").unwrap();
    b.tenancy().fail_checkin(TenancyError::Unauthenticated {
        code: "AGENT_TOKEN_INVALID".into(),
        message: "superseded".into(),
    });
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    let calls = b.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[1].starts_with("checkin hvs.token-1-"), "{calls:?}");
    assert_eq!(
        *b.bao().calls.borrow(),
        ["login kit-grant".to_string(), format!("revoke {STORED}")]
    );
    assert!(!b.agent.cfg.bootstrap_path.exists());
    let st = b.saved();
    assert_eq!(st.token.unwrap().source, TokenSource::Bootstrap);
}

#[test]
fn a_refused_token_without_a_grant_is_exit_1_with_the_advice() {
    let mut b = TestBox::new();
    b.tenancy().fail_checkin(TenancyError::Unauthenticated {
        code: "AGENT_TOKEN_INVALID".into(),
        message: "unknown".into(),
    });
    let f = b.tick().unwrap_err();
    assert_eq!(f.exit(), Exit::Fail);
    assert_eq!(
        f.code(),
        Some(crate::agent::error::Code::AgentUnauthenticated)
    );
    assert!(f.message().contains("bootstrap --force"));
    assert!(b.bao().calls.borrow().is_empty());
}

#[test]
fn tenancy_409_is_78_and_429_is_75_and_nothing_follows() {
    let mut b = TestBox::new();
    b.tenancy()
        .fail_checkin(TenancyError::EnvMismatch("box moved".into()));
    assert_eq!(b.tick().unwrap_err().exit(), Exit::EnvMismatch);
    b.tenancy().fail_checkin(TenancyError::RateLimited {
        what: "checkin",
        code: "RATE_LIMITED".into(),
        retry_after: 5,
    });
    let f = b.tick().unwrap_err();
    assert_eq!((f.kind(), f.exit()), (Kind::RateLimited, Exit::TempFail));
    assert!(b.reports().is_empty());
    assert_eq!(b.saved().counters.ticks.get("78"), Some(&1));
    assert_eq!(b.saved().counters.ticks.get("75"), Some(&1));
}

#[test]
fn laptop_mode_turns_an_unreachable_tenancy_into_exit_0() {
    for (laptop, want) in [(true, Ok(Exit::Ok)), (false, Err(Exit::TempFail))] {
        let mut b = TestBox::with(|c| c.laptop_mode = laptop);
        b.tenancy()
            .fail_checkin(TenancyError::Unavailable("no route".into(), None));
        assert_eq!(b.tick().map_err(|f| f.exit()), want, "laptop_mode {laptop}");
    }
}

#[test]
fn a_stored_token_pinned_elsewhere_stops_before_the_check_in() {
    let mut b = TestBox::new();
    let mut st = State {
        token: Some(TokenMeta {
            source: TokenSource::Lease,
            obtained_at: 0,
            expires_at: 0,
            renewable: true,
            grant_jti: String::new(),
            env_id: "env-b".into(),
            expires_boot: 0,
            boot_id: String::new(),
        }),
        ..State::default()
    };
    st.save(&b.agent.cfg.state_path()).unwrap();
    assert_eq!(b.tick().unwrap_err().exit(), Exit::EnvMismatch);
    assert!(b.calls().is_empty());
}

#[test]
fn a_privileged_bundle_is_refused_and_reported_before_any_lease() {
    let mut b = TestBox::new();
    let s = b.bundle(&[
        (
            "compose.yaml",
            "services:\n  web:\n    image: busybox\n    privileged: true\n",
        ),
        (
            "secrets.manifest.json",
            r#"{"entries": [{"var": "K", "path": "monky/data/env-a/see/k"}]}"#,
        ),
        ("env.template", "K=${K}\n"),
    ]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#));
    let f = b.tick().unwrap_err();
    assert_eq!(
        f.code().map(|c| c.as_str()),
        Some("PRIVILEGED_REFUSED"),
        "{}",
        f.message()
    );
    assert_eq!(
        b.calls(),
        [
            format!("checkin {STORED} applied=-"),
            format!("bundle {s}"),
            "report failed".into()
        ]
    );
    assert!(b.bao().calls.borrow().is_empty());
    assert!(b.reports()[0]["detail"]
        .as_str()
        .unwrap()
        .starts_with("PRIVILEGED_REFUSED"));
    // nothing staged, nothing promoted
    assert!(!b.agent.cfg.current_link().exists());
    assert_eq!(
        std::fs::read_dir(b.agent.cfg.staging_dir())
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn a_bundle_that_does_not_hash_to_its_sha_is_refused() {
    let mut b = TestBox::new();
    let real = b.bundle(&[("compose.yaml", "services: {}\n")]);
    let body = b.tenancy().bundles.borrow().get(&real).cloned().unwrap();
    let claimed = sha('c');
    b.tenancy()
        .bundles
        .borrow_mut()
        .insert(claimed.clone(), body.replace(&real, &claimed));
    b.tenancy().answer(&format!(
        r#"{{"action": "apply", "desired_sha": "{claimed}"}}"#
    ));
    let f = b.tick().unwrap_err();
    assert_eq!(
        f.code().map(|c| c.as_str()),
        Some("BUNDLE_SHA_MISMATCH"),
        "{}",
        f.message()
    );
    assert_eq!(b.reports()[0]["sha"], claimed.as_str());
    assert!(b.tenancy().leases.calls.borrow().is_empty());
}

#[test]
fn an_unreadable_secret_refuses_the_bundle_after_a_lease_and_names_the_variable() {
    let mut b = TestBox::new();
    let s = b.bundle(&[
        ("compose.yaml", "services:\n  web:\n    image: busybox\n"),
        (
            "secrets.manifest.json",
            r#"{"entries": [{"var": "API_KEY", "path": "monky/data/env-a/see/api", "version": 2}]}"#,
        ),
        ("env.template", "API_KEY=${API_KEY}\n"),
    ]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#));
    let f = b.tick().unwrap_err();
    assert_eq!(
        f.code().map(|c| c.as_str()),
        Some("SECRET_UNREADABLE"),
        "{}",
        f.message()
    );
    assert!(f.message().contains("API_KEY"), "{}", f.message());
    // the stored token was dead: leased, logged in, the old one revoked, then the read
    let bao = b.bao().calls.borrow().clone();
    assert_eq!(
        bao[..3],
        [
            "lookup".to_string(),
            "login grant1".into(),
            format!("revoke {STORED}")
        ]
    );
    assert_eq!(bao[3], "kv monky/data/env-a/see/api");
    assert_eq!(*b.tenancy().leases.calls.borrow(), ["lease apply"]);
    assert_eq!(b.reports()[0]["result"], "failed");
    // the new token is the one stored and described
    let tok = std::fs::read_to_string(b.agent.cfg.token_path()).unwrap();
    assert!(tok.starts_with("hvs.token-1-"), "{tok}");
    assert_eq!(b.saved().token.unwrap().source, TokenSource::Lease);
}

#[test]
fn down_with_nothing_running_reports_down() {
    let mut b = TestBox::new();
    b.tenancy().answer(r#"{"action": "down"}"#);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(b.reports()[0]["result"], "down");
    assert!(b.reports()[0]["sha"].is_null());
}

/// A refused bundle, as a failing release: each attempt is refused before any lease.
fn failing_bundle(b: &TestBox) -> String {
    b.bundle(&[(
        "compose.yaml",
        "services:\n  web:\n    image: busybox\n    privileged: true\n",
    )])
}

#[test]
fn a_failing_sha_backs_off_on_the_agents_clock_and_urgent_or_a_new_sha_lifts_it() {
    let mut b = TestBox::with(|c| c.retry_backoff_max_s = 3600);
    let clock = HandClock::at(1_000_000);
    b.agent.clock = std::sync::Arc::new(clock.clone());
    let s = failing_bundle(&b);
    let apply = format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#);
    let fetches = |b: &TestBox| b.calls().iter().filter(|c| c.starts_with("bundle")).count();
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    assert_eq!(fetches(&b), 1);
    let hold = b.saved().retry.expect("held");
    assert_eq!(hold.attempts, 1);
    // 60 s, plus up to a fifth more for this box
    let wait = hold.next_at - 1_000_000;
    assert!((60..=72).contains(&wait), "{wait}");
    // inside the wait: nothing fetched, the hold reported (nothing runs: no report at all)
    clock.advance(wait - 1);
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(fetches(&b), 1);
    // at the time: attempt 2, which doubles the wait
    clock.advance(1);
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    assert_eq!(fetches(&b), 2);
    let hold = b.saved().retry.unwrap();
    assert_eq!(hold.attempts, 2);
    assert!((120..=144).contains(&(hold.next_at - 1_000_000 - wait)));
    // urgent lifts the hold
    b.tenancy().answer(&format!(
        r#"{{"action": "apply", "desired_sha": "{s}", "urgent": true}}"#
    ));
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    assert_eq!(fetches(&b), 3);
    assert_eq!(b.saved().retry.unwrap().attempts, 3);
    // a new desired sha starts afresh
    let t = b.bundle(&[(
        "compose.yaml",
        "services:\n  web:\n    image: busybox:1\n    privileged: true\n",
    )]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "apply", "desired_sha": "{t}"}}"#));
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    let hold = b.saved().retry.unwrap();
    assert_eq!((hold.sha.as_str(), hold.attempts), (t.as_str(), 1));
}

#[test]
fn a_rolled_back_sha_is_held_until_retry_failed_after_s_on_the_agents_clock() {
    let mut b = TestBox::with(|c| {
        c.auto_rollback = true;
        c.retry_failed_after_s = 600;
        c.retry_backoff_max_s = 0;
    });
    let clock = HandClock::at(2_000_000);
    b.agent.clock = std::sync::Arc::new(clock.clone());
    let old = sha('a');
    b.applied(&old, &["web"]);
    b.running(&[("web", "running", "healthy")]);
    let s = failing_bundle(&b);
    let mut st = b.saved();
    st.failed_release = Some(crate::host::state::FailedRelease {
        sha: s.clone(),
        at: 2_000_000 - 100,
        rolled_back_to: old.clone(),
        rollback_ok: true,
    });
    st.save(&b.agent.cfg.state_path()).unwrap();
    let apply = format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#);
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    let r = b.reports().last().cloned().unwrap();
    assert_eq!(r["sha"], old.as_str());
    let until = crate::agent::rollback::rfc3339(2_000_000 + 500);
    assert_eq!(
        r["detail"],
        format!("ROLLED_BACK_FROM: {s}; not retried before {until}")
    );
    assert!(!b.calls().iter().any(|c| c.starts_with("bundle")));
    // 500 s later the hold is over: the sha is tried again
    clock.advance(500);
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    assert!(b.calls().iter().any(|c| c.starts_with("bundle")));
}

#[test]
fn a_heartbeat_parses_the_release_once_and_again_only_when_its_compose_file_changes() {
    let mut b = TestBox::new();
    let s = sha('a');
    b.applied(&s, &["web", "db"]);
    b.running(&[("web", "running", "healthy"), ("db", "running", "")]);
    let none = format!(r#"{{"action": "none", "desired_sha": "{s}"}}"#);
    b.tenancy().answer(&none);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    let memo = b.saved().shape.expect("the parsed shape is kept");
    assert_eq!(memo.services, ["web", "db"]);

    // the kept shape is what the next heartbeat uses: one that names another service (same
    // file, same build) makes db's absence an error without a parse to contradict it
    let mut st = b.saved();
    st.shape.as_mut().unwrap().services = vec!["web".into(), "db".into(), "cache".into()];
    st.save(&b.agent.cfg.state_path()).unwrap();
    b.tenancy().answer(&none);
    let f = b.tick().unwrap_err();
    assert!(f.message().contains("cache"), "{}", f.message());

    // a changed compose.yaml is parsed again, whatever is kept
    let rel = b.agent.cfg.releases_dir().join(&s);
    std::fs::write(
        rel.join("compose.yaml"),
        "services:\n  web:\n    image: busybox\n",
    )
    .unwrap();
    b.running(&[("web", "running", "healthy")]);
    b.tenancy().answer(&none);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(b.saved().shape.unwrap().services, ["web"]);
}

/// The one way a tick runs compose (apply, rollback, heal, down): the check-in's containers
/// are forgotten, a SIGTERM stops the running step, and no step outlives the tick's budget.
#[test]
fn every_compose_run_is_bounded_by_the_tick_and_forgets_what_it_saw() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = tempfile::tempdir().unwrap();
    let slow = scratch.path().join("compose");
    std::fs::write(&slow, "#!/bin/sh\nexec sleep 30\n").unwrap();
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut b = TestBox::with(|c| {
        c.compose_cmd = crate::host::config::ComposeCmd::Standalone;
        c.compose_bin = slow.display().to_string();
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (tx, rx) = tokio::sync::watch::channel(false);
        b.agent.set_interrupt(rx);
        b.agent.now.seen = Some(Vec::new());
        let compose = b.agent.compose().await.unwrap();
        assert!(b.agent.now.seen.is_none(), "compose changes what runs");
        let t = std::time::Instant::now();
        let stop = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            tx.send(true).unwrap();
        };
        let (up, ()) = tokio::join!(compose.up(scratch.path()), stop);
        assert!(matches!(up, Err(RuntimeError::Interrupted(_))), "{up:?}");
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());

        // no interrupt this time: the tick's deadline cuts the step
        let (_tx, rx) = tokio::sync::watch::channel(false);
        b.agent.set_interrupt(rx);
        b.agent.now.deadline = tokio::time::Instant::now() + Duration::from_millis(300);
        let compose = b.agent.compose().await.unwrap();
        let t = std::time::Instant::now();
        let up = compose.up(scratch.path()).await;
        assert!(
            matches!(up, Err(RuntimeError::Compose { rc: -1, .. })),
            "{up:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    });
}

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
            crate::host::instance::check_name(n).is_err(),
            "{n} in a state dir could be taken for an instance's directory: reserve it"
        );
    }
}

/// Several instances on one box: only the first with self-update on stages the package (the
/// others' `plan` says which does), and an instance that shares its env with another refuses
/// to start.
#[test]
fn one_instance_stages_updates_and_a_clash_refuses_to_start() {
    use crate::host::instance::Instance;
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

//! The tick end to end on real parts: real OpenBao, the test tenancy, a real dockerd with
//! compose v1 (Debian `docker-compose`) and v2 (the `docker compose` plugin), the real binary.

use std::path::Path;

use crate::common::*;

/// First apply from the kit's bootstrap grant, then a heartbeat, then a new sha.
fn apply_heartbeat_update(f: Flavour) {
    require_docker();
    let s = Stack::new("apply", f);
    s.give_bootstrap();
    let b = web_bundle(&s, 1, "one", "k3y-value-one");
    let sha = s.tenancy.set_bundle(&s.env, b.files());

    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    // tenancy saw: a check-in with no applied sha, one lease, one applied report
    let ck = s.tenancy.checkins();
    assert_eq!(ck.len(), 1);
    assert!(ck[0]["applied_sha"].is_null());
    assert_eq!(ck[0]["agent_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        s.tenancy.leases().len(),
        1,
        "bootstrap token swapped for a lease once"
    );
    let rep = s.last_report();
    assert_eq!(rep["result"], "applied", "{rep}");
    assert_eq!(rep["sha"], sha.as_str());
    assert!(rep["containers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["service"] == "web" && c["health"] == "healthy"));
    // files and modes
    let sd = s.state_dir();
    assert!(!s.bootstrap_path().exists(), "used bootstrap grant deleted");
    assert_eq!(mode(&sd), 0o700);
    assert_eq!(mode(&sd.join("bao.token")), 0o600);
    assert_eq!(mode(&sd.join("state.json")), 0o600);
    let rel = sd.join("releases").join(&sha);
    assert_eq!(std::fs::read_link(sd.join("current")).unwrap(), rel);
    assert_eq!(mode(&rel.join(".env")), 0o600);
    assert_eq!(
        std::fs::read_to_string(rel.join(".env")).unwrap(),
        "API_KEY=k3y-value-one\n"
    );
    assert_eq!(
        std::fs::read_dir(sd.join("staging")).unwrap().count(),
        0,
        "staging cleaned"
    );
    let st = s.state();
    assert_eq!(st["applied_sha"], sha.as_str());
    assert_eq!(st["token"]["source"], "lease");
    // the container really runs with the secret
    assert_eq!(
        s.containers(),
        vec![("web".to_string(), "running".to_string())]
    );
    assert!(s
        .container_env("web")
        .contains(&"API_KEY=k3y-value-one".to_string()));

    // heartbeat: action none → applied report, no lease, no bundle fetch
    let fetches = s.tenancy.bundle_fetches().len();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        s.tenancy.checkins().last().unwrap()["applied_sha"],
        sha.as_str()
    );
    assert_eq!(s.tenancy.bundle_fetches().len(), fetches);
    assert_eq!(s.tenancy.leases().len(), 1);
    assert_eq!(s.last_report()["result"], "applied");
    assert_eq!(s.tenancy.reports().len(), 2);

    // a new sha: applied with the lease-derived token reused (0.1.6: no second lease)
    let b2 = web_bundle(&s, 2, "two", "k3y-value-two");
    let sha2 = s.tenancy.set_bundle(&s.env, b2.files());
    assert_ne!(sha, sha2);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha2.as_str());
    assert_eq!(s.last_report()["result"], "applied");
    assert_eq!(s.tenancy.leases().len(), 1, "valid lease token reused");
    assert_eq!(
        std::fs::read_link(sd.join("current")).unwrap(),
        sd.join("releases").join(&sha2)
    );
    assert!(s
        .container_env("web")
        .contains(&"API_KEY=k3y-value-two".to_string()));
    assert_eq!(s.state()["applied_sha"], sha2.as_str());
}
all_composes!(apply_heartbeat_update);

fn down_purge_and_prod(f: Flavour) {
    require_docker();
    let s = Stack::new("down", f);
    s.give_bootstrap();
    let sha = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "d", "v-down-1").files());
    assert_eq!(s.tick().code, 0);
    assert_eq!(s.volumes().len(), 1, "the data volume exists");

    // prod: purge asked, volumes kept
    s.tenancy.set_prod(&s.env, true);
    s.tenancy.set_down(&s.env, true);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "down");
    assert_eq!(rep["sha"], sha.as_str());
    assert!(rep["detail"].as_str().unwrap().contains("prod"), "{rep}");
    assert!(s.containers().is_empty(), "containers removed");
    assert_eq!(s.volumes().len(), 1, "prod volumes never purged");
    assert!(s.state()["applied_sha"].is_null());

    // not prod: bring it back, then down with purge removes the volume
    s.tenancy.set_prod(&s.env, false);
    s.tenancy
        .set_bundle(&s.env, web_bundle(&s, 2, "d2", "v-down-2").files());
    assert_eq!(s.tick().code, 0);
    assert_eq!(s.containers().len(), 1);
    s.tenancy.set_down(&s.env, true);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["result"], "down");
    assert!(s.containers().is_empty());
    assert!(s.volumes().is_empty(), "purged");
}
both_composes!(down_purge_and_prod);

fn unhealthy_reports_failed_with_log_tail(f: Flavour) {
    require_docker();
    let mut s = Stack::new("unhealthy", f);
    s.set_extra("healthy_timeout_s: 20\n");
    s.give_bootstrap();
    let compose = format!(
        "services:\n  sick:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"echo booting-sick-service; echo token=$$TOKEN; exec sleep 600\"]\n    \
         environment:\n      TOKEN: ${{TOKEN}}\n    \
         healthcheck:\n      test: [\"CMD\", \"false\"]\n      interval: 1s\n      timeout: 1s\n      retries: 1\n"
    );
    let v = s
        .bao
        .put_secret(&s.env, "token", &[("value", "very-secret-token-value")]);
    let spec = BundleSpec {
        serial: 1,
        compose,
        env_template: "TOKEN=${TOKEN}\n".into(),
        manifest: serde_json::json!({"entries": [{"var": "TOKEN", "path": format!("monky/data/{}/see/token", s.env), "version": v}]}),
        meta_extra: serde_json::json!({}),
    };
    let sha = s.tenancy.set_bundle(&s.env, spec.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        !s.tenancy.reports().is_empty(),
        "{r:?}\n{:?}",
        s.tenancy.requests()
    );
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed");
    assert_eq!(rep["sha"], sha.as_str());
    assert!(
        rep["detail"].as_str().unwrap().starts_with("UNHEALTHY:"),
        "{rep}"
    );
    let tail = rep["log_tail"].as_str().unwrap();
    assert!(
        tail.contains("booting-sick-service"),
        "compose log tail forwarded: {tail}"
    );
    assert!(
        !tail.contains("very-secret-token-value"),
        "log tail redacted: {tail}"
    );
    assert!(tail.contains("token=***"), "{tail}");
    assert!(
        s.state()["applied_sha"].is_null(),
        "a failed apply is not recorded as applied"
    );
}
both_composes!(unhealthy_reports_failed_with_log_tail);

#[test]
fn concurrent_tick_exits_zero_at_once() {
    let s = Stack::new("lock", Flavour::V2);
    s.give_bootstrap();
    std::fs::create_dir_all(s.state_dir()).unwrap();
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(s.state_dir().join("lock"))
        .unwrap();
    f.try_lock().unwrap();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("another tick"), "{r:?}");
    assert!(
        s.tenancy.requests().is_empty(),
        "the second tick did nothing"
    );
    assert!(s.bootstrap_path().exists(), "and consumed nothing");
    drop(f);
    // two real processes at once: both exit 0
    let spawn = || {
        std::process::Command::new(BIN)
            .args([
                "--config",
                s.config_path().to_str().unwrap(),
                "run",
                "--once",
            ])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (ra, rb) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(ra.status.success() && rb.status.success());
    assert!(s.tenancy.checkins().len() <= 2);
}

#[test]
fn tenancy_unreachable_is_temporary() {
    let mut s = Stack::new("unreach", Flavour::V2);
    s.give_bootstrap();
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let text = s.config_text().replace(
        &format!("port: {}\n", s.tenancy.port()),
        &format!("port: {dead}\n"),
    );
    std::fs::write(s.config_path(), &text).unwrap();
    let r = s.tick();
    assert_eq!(r.code, 75, "{r:?}");
    assert!(r.stderr.contains("tenancy"), "{r:?}");
    // laptop mode: the same offline tick exits 0
    s.extra = "laptop_mode: true\n".into();
    let text = s.config_text().replace(
        &format!("port: {}\n", s.tenancy.port()),
        &format!("port: {dead}\n"),
    );
    std::fs::write(s.config_path(), text).unwrap();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("offline"), "{r:?}");
    // a 5xx is temporary too, and so is a 429 on check-in
    s.set_extra("");
    s.tenancy.fail_next("/v1/agent/checkin", 503, "UNAVAILABLE");
    assert_eq!(s.tick().code, 75);
    s.tenancy
        .fail_next("/v1/agent/checkin", 429, "RATE_LIMITED");
    assert_eq!(s.tick().code, 75);
    assert_eq!(s.tick().code, 0, "recovers on the next tick");
}

#[test]
fn env_mismatch_exits_78_and_loop_stops() {
    let s = Stack::new("mismatch", Flavour::V2);
    // a grant minted for another env: OpenBao pins the token to it
    let other = format!("{}-x", s.env);
    let g = s.tenancy.bootstrap_grant(&other);
    std::fs::write(s.bootstrap_path(), g.jwt).unwrap();
    let r = s.tick();
    assert_eq!(r.code, 78, "{r:?}");
    assert!(r.stderr.contains("AGENT_ENV_MISMATCH"), "{r:?}");
    // tenancy's own 409 on check-in: same exit, and `run` (loop) stops instead of retrying
    s.give_bootstrap();
    s.tenancy
        .fail_next("/v1/agent/checkin", 409, "AGENT_ENV_MISMATCH");
    let r = s.cmd(&["run"]);
    assert_eq!(r.code, 78, "{r:?}");
    assert!(r.stderr.contains("loop stops"), "{r:?}");
}

#[test]
fn superseded_grant_is_401_exit_1_with_advice() {
    let s = Stack::new("superseded", Flavour::V2);
    s.give_bootstrap();
    assert_eq!(s.tick().code, 0);
    s.tenancy.supersede(&s.env);
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("AGENT_UNAUTHENTICATED") && r.stderr.contains("bootstrap --force"),
        "{r:?}"
    );
    // a re-revealed kit's grant placed at the bootstrap path is picked up by the next tick
    s.give_bootstrap();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!s.bootstrap_path().exists());
}

#[test]
fn bad_config_names_the_key() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("c.yaml");
    for (text, needle) in [
        ("env_id: a\nsite: b\ntenancy:\n  hots: x\n", "hots"),
        ("env_id: a\nsite: b\ntransport: pigeon\n", "pigeon"),
        ("env_id: a\nsite: b\ninterval_s: 1\n", "interval_s"),
        ("site: b\n", "env_id"),
    ] {
        std::fs::write(&p, text).unwrap();
        let r = run_bin(&p, &["run", "--once"]);
        assert_eq!(r.code, 1, "{r:?}");
        assert!(r.stderr.contains(needle), "{needle}: {r:?}");
    }
    let r = run_bin(Path::new("/nonexistent/config.yaml"), &["status"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("/nonexistent/config.yaml"), "{r:?}");
}

#[test]
fn no_credentials_is_a_clear_failure() {
    let s = Stack::new("nocreds", Flavour::V2);
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("no credentials") && r.stderr.contains("bootstrap"),
        "{r:?}"
    );
    assert!(s.tenancy.requests().is_empty());
}

#[test]
fn status_reports_state_and_containers() {
    require_docker();
    let s = Stack::new("status", Flavour::V2);
    s.give_bootstrap();
    let sha = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "s", "status-secret-1").files());
    assert_eq!(s.tick().code, 0);
    let r = s.cmd(&["status", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["applied_sha"], sha.as_str());
    assert_eq!(v["in_sync"], true);
    assert_eq!(v["token_present"], true);
    assert!(v["token_ttl_s"].as_u64().unwrap() > 0);
    assert_eq!(v["containers"][0]["service"], "web");
    assert_eq!(v["containers"][0]["health"], "healthy");
    let r = s.cmd(&["status"]);
    assert!(
        r.stdout.contains("in sync") && r.stdout.contains("web"),
        "{r:?}"
    );
    assert!(
        !r.stdout.contains(&s.token()),
        "status never prints the token"
    );
}

#[test]
fn loop_stops_cleanly_on_sigterm_between_ticks() {
    let mut s = Stack::new("loop", Flavour::V2);
    s.set_extra("interval_s: 5\n");
    s.give_bootstrap();
    let mut child = std::process::Command::new(BIN)
        .args(["--config", s.config_path().to_str().unwrap(), "run"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the first check-in", || !s.tenancy.checkins().is_empty());
    // let the tick finish and the loop go to sleep, then stop it
    wait_for("state.json", || s.state_dir().join("state.json").exists());
    std::thread::sleep(std::time::Duration::from_millis(300));
    let t0 = std::time::Instant::now();
    unsafe_kill(child.id() as i32, 15);
    let st = child.wait().unwrap();
    assert!(st.success(), "SIGTERM between ticks exits 0: {st:?}");
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(3),
        "stops at once, not after the interval"
    );
    assert_eq!(s.tenancy.checkins().len(), 1);
    assert!(
        s.state()["last_checkin"].as_u64().is_some(),
        "state saved and readable"
    );
}

fn unsafe_kill(pid: i32, sig: i32) {
    let ok = std::process::Command::new("kill")
        .args([format!("-{sig}"), pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[test]
fn prune_keeps_the_configured_releases() {
    require_docker();
    let mut s = Stack::new("prune", Flavour::V2);
    s.set_extra("keep_releases: 1\n");
    s.give_bootstrap();
    let mut shas = Vec::new();
    for i in 1..=3u64 {
        let b = web_bundle(&s, i, &format!("p{i}"), &format!("prune-secret-{i}"));
        shas.push(s.tenancy.set_bundle(&s.env, b.files()));
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
    }
    let rels = s.state_dir().join("releases");
    // the automatic reclaim (issue 22) keeps keep_releases and the rollback target
    let mut left: Vec<String> = std::fs::read_dir(&rels)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut want = vec![shas[1].clone(), shas[2].clone()];
    want.sort();
    assert_eq!(left, want, "release 1 reclaimed, the rollback target kept");
    let r = s.cmd(&["run", "--once", "--prune"]);
    assert_eq!(r.code, 0, "{r:?}");
    let left: Vec<String> = std::fs::read_dir(&rels)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec![shas[2].clone()],
        "only the current release is kept"
    );
    assert!(r.stderr.contains("dangling images removed"), "{r:?}");
    assert_eq!(
        std::fs::read_link(s.state_dir().join("current")).unwrap(),
        rels.join(&shas[2])
    );
}

/// A quiet server whose health check fails prints nothing to its log: the report says why
/// from the engine — the probe's exit code and output, a stopped container's exit code —
/// redacted like everything else.
#[test]
fn unhealthy_report_carries_the_probe_output_and_exit_codes() {
    require_docker();
    let mut s = Stack::new("why", Flavour::V2);
    s.set_extra("healthy_timeout_s: 20\n");
    s.give_bootstrap();
    let compose = format!(
        "services:\n  quiet:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"exec sleep 600\"]\n    \
         environment:\n      TOKEN: ${{TOKEN}}\n    \
         healthcheck:\n      test: [\"CMD\", \"sh\", \"-c\", \"echo probe-said-no token=$$TOKEN; exit 3\"]\n      interval: 1s\n      timeout: 2s\n      retries: 1\n"
    );
    let v = s
        .bao
        .put_secret(&s.env, "token", &[("value", "probe-secret-value")]);
    let spec = BundleSpec {
        serial: 1,
        compose,
        env_template: "TOKEN=${TOKEN}\n".into(),
        manifest: serde_json::json!({"entries": [{"var": "TOKEN", "path": format!("monky/data/{}/see/token", s.env), "version": v}]}),
        meta_extra: serde_json::json!({}),
    };
    s.tenancy.set_bundle(&s.env, spec.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    assert!(
        rep["detail"].as_str().unwrap().starts_with("UNHEALTHY:"),
        "{rep}"
    );
    let tail = rep["log_tail"].as_str().unwrap();
    assert!(
        tail.contains("probe exit 3: probe-said-no token=***"),
        "{tail}"
    );
    assert!(!tail.contains("probe-secret-value"), "{tail}");
    // a service that stopped: its exit code (a separate bundle, so the agent's early give-up
    // on a stopped container cannot race the other service's first probe)
    // (with a health check, so a container caught running before it exits is not "healthy")
    let crash = format!(
        "services:\n  crash:\n    image: {IMAGE}\n    command: [\"sh\", \"-c\", \"sleep 2; exit 42\"]\n    \
         healthcheck:\n      test: [\"CMD\", \"true\"]\n      interval: 30s\n      start_period: 30s\n"
    );
    s.tenancy.set_bundle(&s.env, plain_bundle(2, crash).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let tail = s.last_report()["log_tail"].as_str().unwrap().to_string();
    assert!(tail.contains("crash: exited, exit code 42"), "{tail}");
}

/// Re-applying the sha that failed (tenancy retries after UNHEALTHY) keeps the release
/// directory its containers bind into, with what they wrote there, and runs `up` again.
#[test]
fn re_applying_the_same_sha_keeps_the_live_release_directory() {
    require_docker();
    let mut s = Stack::new("reapply", Flavour::V2);
    s.set_extra("healthy_timeout_s: 5\n");
    s.give_bootstrap();
    let compose = format!(
        "services:\n  w:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"date >> /data/written-by-container; exec sleep 600\"]\n    \
         volumes: [\"./data:/data\"]\n    \
         healthcheck:\n      test: [\"CMD\", \"false\"]\n      interval: 1s\n      retries: 1\n"
    );
    let spec = plain_bundle(1, compose);
    let sha = s.tenancy.set_bundle(&s.env, spec.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let rel = s.state_dir().join("releases").join(&sha);
    let written = rel.join("data/written-by-container");
    wait_for("the container's write", || written.exists());
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(&rel).unwrap().ino();
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(s.tenancy.reports().len(), reports + 1, "the retry reported");
    assert!(s.last_report()["detail"]
        .as_str()
        .unwrap()
        .starts_with("UNHEALTHY:"));
    assert_eq!(
        std::fs::metadata(&rel).unwrap().ino(),
        ino,
        "release dir replaced"
    );
    assert!(written.exists(), "the container's data was deleted");
    assert!(rel.join("compose.yaml").is_file());
    assert!(std::fs::read_dir(s.state_dir().join("staging"))
        .unwrap()
        .next()
        .is_none());
}

/// systemd stopping a `--once` tick mid-apply (stop, or TimeoutStartSec): the health wait ends,
/// the tick reports INTERRUPTED, saves state and exits 75 at once.
#[test]
fn sigterm_in_once_mode_reports_interrupted_and_exits_75() {
    require_docker();
    let mut s = Stack::new("sigterm", Flavour::V2);
    s.set_extra("healthy_timeout_s: 120\n");
    s.give_bootstrap();
    let compose = format!(
        "services:\n  slow:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"exec sleep 600\"]\n    \
         healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/never\"]\n      interval: 30s\n      start_period: 60s\n"
    );
    let spec = plain_bundle(1, compose);
    let sha = s.tenancy.set_bundle(&s.env, spec.files());
    let mut child = std::process::Command::new(BIN)
        .args([
            "--config",
            s.config_path().to_str().unwrap(),
            "run",
            "--once",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the container", || {
        s.containers().iter().any(|(_, state)| state == "running")
    });
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let t0 = std::time::Instant::now();
    unsafe_kill(child.id() as i32, 15);
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(75), "{st:?}");
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        t0.elapsed()
    );
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed");
    assert_eq!(rep["sha"], sha.as_str());
    // the step depends on timing: still in `up`, or already waiting for health
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d == "INTERRUPTED: waiting for health (SIGTERM)"
            || (d.starts_with("INTERRUPTED: ") && d.contains(" up") && d.ends_with("(SIGTERM)")),
        "{d}"
    );
    assert!(
        s.state()["last_error"]
            .as_str()
            .unwrap()
            .contains("INTERRUPTED"),
        "state saved"
    );
    assert!(std::fs::read_dir(s.state_dir().join("staging"))
        .unwrap()
        .next()
        .is_none());
}

//! Automatic rollback end to end on real parts (issue 11): real OpenBao, the test tenancy, a real
//! dockerd under both composes, the real binary. Healthy v1 → broken v2 → v1 back by itself with
//! its own `.env` (no lease, no OpenBao read), two exact reports, v2 held until the desired sha
//! changes or `retry_failed_after_s` passes; `auto_rollback: false` keeps the seed's behaviour;
//! an old release that fails too is reported and left alone (no loop).

use crate::common::*;
use serde_json::json;

/// The web app of `web_compose`, but its health check never passes.
fn broken_compose(variant: &str) -> String {
    web_compose(variant).replace(
        "test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]",
        "test: [\"CMD\", \"test\", \"-f\", \"/tmp/never\"]",
    )
}

/// A bundle of `compose` that reads the stack's `api_key` at `version` (no new version).
fn bundle_at(s: &Stack, serial: u64, compose: String, version: u64) -> BundleSpec {
    BundleSpec {
        serial,
        compose,
        env_template: "API_KEY=${API_KEY}\n".into(),
        manifest: json!({"entries": [
            {"var": "API_KEY", "path": format!("monky/data/{}/see/api_key", s.env), "version": version}
        ]}),
        meta_extra: json!({}),
    }
}

fn docker_health(s: &Stack, service: &str) -> String {
    let o = std::process::Command::new("docker")
        .args([
            "ps",
            "-a",
            "--filter",
            &format!("label=com.docker.compose.project={}", s.project()),
            "--filter",
            &format!("label=com.docker.compose.service={service}"),
            "--format",
            "{{.Status}}",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn rolls_back_to_the_last_healthy_release(f: Flavour) {
    require_docker();
    let mut s = Stack::new("rollback", f);
    let prom = s.dir.path().join("deployd.prom");
    s.set_extra(&format!(
        "auto_rollback: true\nhealthy_timeout_s: 20\nmetrics_textfile: {}\n",
        prom.display()
    ));
    s.give_bootstrap();
    let v = s
        .bao
        .put_secret(&s.env, "api_key", &[("value", "rb-secret-one")]);
    let sha1 = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 1, web_compose("v1"), v).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha1.as_str());

    // broken v2, with a new secret version: the apply reads it, the rollback reads nothing
    let v2 = s
        .bao
        .put_secret(&s.env, "api_key", &[("value", "rb-secret-two")]);
    let sha2 = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 2, broken_compose("v2"), v2).files());
    let leases = s.tenancy.leases().len();
    let reads = s.bao.secret_reads().len();
    let logins = s.bao.login_count();
    let reports = s.tenancy.reports().len();
    let t = std::time::Instant::now();
    let r = s.tick();
    eprintln!(
        "measure: failed apply + rollback tick {:?} ({f:?})",
        t.elapsed()
    );
    assert_eq!(r.code, 1, "the rollback tick exits 1: {r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(reps.len(), reports + 2, "exactly two reports: {reps:#?}");
    let (failed, applied) = (&reps[reports], &reps[reports + 1]);
    assert_eq!(failed["result"], "failed");
    assert_eq!(failed["sha"], sha2.as_str());
    let d = failed["detail"].as_str().unwrap();
    assert!(
        d.starts_with("UNHEALTHY: not healthy within 20s: web running/unhealthy")
            || d.starts_with("UNHEALTHY: not healthy within 20s: web running/starting"),
        "{d}"
    );
    assert!(d.ends_with(&format!("; rolled back to {sha1}")), "{d}");
    assert!(
        failed["log_tail"]
            .as_str()
            .unwrap()
            .contains("why (engine)"),
        "the failure's own log tail is kept: {failed}"
    );
    assert_eq!(applied["result"], "applied");
    assert_eq!(applied["sha"], sha1.as_str());
    assert_eq!(applied["detail"], format!("ROLLED_BACK_FROM: {sha2}"));
    assert!(applied["containers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["service"] == "web" && c["health"] == "healthy"));
    // the old release runs again, with its own .env, and nothing asked OpenBao or tenancy for it
    assert_eq!(
        s.tenancy.leases().len(),
        leases,
        "no lease for the rollback"
    );
    assert_eq!(s.bao.login_count(), logins, "no login for the rollback");
    assert_eq!(
        s.bao.secret_reads().len(),
        reads + 1,
        "v2's one secret read, none for the rollback"
    );
    let env = s.container_env("web");
    assert!(
        env.contains(&"API_KEY=rb-secret-one".to_string()),
        "{env:?}"
    );
    assert!(env.contains(&"VARIANT=v1".to_string()), "{env:?}");
    assert!(docker_health(&s, "web").contains("(healthy)"));
    assert_eq!(current(&s), s.state_dir().join("releases").join(&sha1));
    let st = s.state();
    assert_eq!(st["applied_sha"], sha1.as_str());
    assert_eq!(st["applied_serial"], 1);
    assert_eq!(st["failed_release"]["sha"], sha2.as_str());
    assert_eq!(st["failed_release"]["rolled_back_to"], sha1.as_str());
    assert_eq!(st["failed_release"]["rollback_ok"], true);
    let m = std::fs::read_to_string(&prom).unwrap();
    assert!(
        m.contains("monky_deployd_rollbacks_total{result=\"ok\"} 1\n"),
        "{m}"
    );
    assert!(
        m.contains("monky_deployd_rollbacks_total{result=\"failed\"} 0\n"),
        "{m}"
    );
    let status = s.cmd(&["status", "--json"]);
    let sj: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(sj["failed_release"]["sha"], sha2.as_str(), "{status:?}");
    let status = s.cmd(&["status"]);
    assert!(
        status.stdout.contains(&format!(
            "rolled back    {sha2} failed, {sha1} brought back"
        )),
        "{status:?}"
    );

    // the next ticks: v2 is not applied again, v1 reported as running
    let fetches = s.tenancy.bundle_fetches().len();
    for _ in 0..2 {
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
        assert_eq!(
            s.tenancy.checkins().last().unwrap()["applied_sha"],
            sha1.as_str(),
            "check-ins carry the old sha"
        );
        let rep = s.last_report();
        assert_eq!(rep["result"], "applied");
        assert_eq!(rep["sha"], sha1.as_str());
        let d = rep["detail"].as_str().unwrap();
        assert!(
            d.starts_with(&format!("ROLLED_BACK_FROM: {sha2}; not retried before ")),
            "{d}"
        );
    }
    assert_eq!(
        s.tenancy.bundle_fetches().len(),
        fetches,
        "v2 not fetched again"
    );
    assert_eq!(s.bao.secret_reads().len(), reads + 1);
    // plan says the same, and holds to its promises
    let (leases_now, reports_now) = (s.tenancy.leases().len(), s.tenancy.reports().len());
    let r = s.cmd(&["plan", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let p: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(p["would"], "hold", "{p:#}");
    assert_eq!(p["desired"]["sha"], sha2.as_str());
    assert!(p["rollback"]["held_until"].is_string());
    assert_eq!(s.tenancy.leases().len(), leases_now);
    assert_eq!(s.tenancy.reports().len(), reports_now);
    assert_eq!(s.bao.secret_reads().len(), reads + 1);
    let fetches = fetches + 1; // the plan fetched the bundle once

    // tenancy changes its mind (back to v1: nothing to do), then v2 again: tried again
    let back = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 1, web_compose("v1"), v).files());
    assert_eq!(back, sha1);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        s.state()["failed_release"].is_null(),
        "forgotten once desired changed"
    );
    let again = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 2, broken_compose("v2"), v2).files());
    assert_eq!(again, sha2);
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        s.tenancy.bundle_fetches().len(),
        fetches + 1,
        "v2 tried again"
    );
    assert_eq!(s.last_report()["sha"], sha1.as_str());
    assert_eq!(
        s.last_report()["detail"],
        format!("ROLLED_BACK_FROM: {sha2}")
    );

    // retry_failed_after_s passed: the same sha is tried once more
    s.set_extra("auto_rollback: true\nhealthy_timeout_s: 20\nretry_failed_after_s: 1\n");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(s.tenancy.bundle_fetches().len(), fetches + 2, "retried");
    assert_eq!(
        s.last_report()["detail"],
        format!("ROLLED_BACK_FROM: {sha2}")
    );
    assert_eq!(current(&s), s.state_dir().join("releases").join(&sha1));

    // a fixed v3 applies and clears the memory
    let sha3 = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 3, web_compose("v3"), v2).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha3.as_str());
    assert_eq!(s.last_report()["detail"], "");
    assert!(s.state()["failed_release"].is_null());
    assert!(s
        .container_env("web")
        .contains(&"API_KEY=rb-secret-two".to_string()));
}
all_composes!(rolls_back_to_the_last_healthy_release);

fn without_auto_rollback_the_seed_behaviour(f: Flavour) {
    require_docker();
    let mut s = Stack::new("norollback", f);
    s.set_extra("healthy_timeout_s: 20\n");
    s.give_bootstrap();
    let v = s
        .bao
        .put_secret(&s.env, "api_key", &[("value", "nr-secret")]);
    let sha1 = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 1, web_compose("v1"), v).files());
    assert_eq!(s.tick().code, 0);
    let sha2 = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 2, broken_compose("v2"), v).files());
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(reps.len(), reports + 1, "one report: {reps:#?}");
    let rep = &reps[reports];
    assert_eq!(rep["result"], "failed");
    assert_eq!(rep["sha"], sha2.as_str());
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d.starts_with("UNHEALTHY:") && !d.contains("rolled back"),
        "{d}"
    );
    // the broken release stays; the next tick tries it again
    assert_eq!(current(&s), s.state_dir().join("releases").join(&sha2));
    assert!(s.container_env("web").contains(&"VARIANT=v2".to_string()));
    assert_eq!(s.state()["applied_sha"], sha1.as_str());
    assert!(s.state()["failed_release"].is_null());
    let fetches = s.tenancy.bundle_fetches().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(s.tenancy.bundle_fetches().len(), fetches + 1, "retried");
    assert_eq!(s.last_report()["sha"], sha2.as_str());
    assert_eq!(s.last_report()["result"], "failed");
}
both_composes!(without_auto_rollback_the_seed_behaviour);

/// v2 "migrates" the shared volume, then fails; v1 refuses to run on migrated data: the rollback
/// fails too. Reported, box left as it is, and no loop on the next ticks.
fn old_release_failing_too_is_not_a_loop(f: Flavour) {
    require_docker();
    let mut s = Stack::new("rbfail", f);
    let prom = s.dir.path().join("deployd.prom");
    s.set_extra(&format!(
        "auto_rollback: true\nhealthy_timeout_s: 20\nmetrics_textfile: {}\n",
        prom.display()
    ));
    s.give_bootstrap();
    let v = s
        .bao
        .put_secret(&s.env, "api_key", &[("value", "rf-secret")]);
    let v1 = web_compose("v1").replace(
        "test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]",
        "test: [\"CMD\", \"sh\", \"-c\", \"test -f /tmp/ok && test ! -f /data/migrated\"]",
    );
    let v2 = broken_compose("v2").replace(
        "touch /tmp/ok; exec httpd",
        "touch /data/migrated; exec httpd",
    );
    assert_ne!(v2, broken_compose("v2"));
    let sha1 = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 1, v1, v).files());
    assert_eq!(s.tick().code, 0);
    assert_eq!(s.last_report()["sha"], sha1.as_str());
    let sha2 = s
        .tenancy
        .set_bundle(&s.env, bundle_at(&s, 2, v2, v).files());
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(reps.len(), reports + 2, "{reps:#?}");
    let (new, old) = (&reps[reports], &reps[reports + 1]);
    assert_eq!(new["result"], "failed");
    assert_eq!(new["sha"], sha2.as_str());
    let d = new["detail"].as_str().unwrap();
    assert!(
        d.starts_with("UNHEALTHY:") && d.ends_with(&format!("; rollback to {sha1} failed")),
        "{d}"
    );
    assert_eq!(old["result"], "failed");
    assert_eq!(old["sha"], sha1.as_str());
    let d = old["detail"].as_str().unwrap();
    assert!(
        d.starts_with("ROLLBACK_FAILED: UNHEALTHY: not healthy within 20s: web")
            && d.ends_with(&format!("(rolling back from {sha2})")),
        "{d}"
    );
    assert!(r.stderr.contains("rollback to"), "{r:?}");
    // the box as it is: v1's containers (unhealthy), current names them; v2 held
    assert!(s.container_env("web").contains(&"VARIANT=v1".to_string()));
    assert_eq!(current(&s), s.state_dir().join("releases").join(&sha1));
    assert_eq!(s.state()["failed_release"]["rollback_ok"], false);
    let m = std::fs::read_to_string(&prom).unwrap();
    assert!(
        m.contains("monky_deployd_rollbacks_total{result=\"failed\"} 1\n"),
        "{m}"
    );
    let fetches = s.tenancy.bundle_fetches().len();
    for _ in 0..2 {
        let before = s.tenancy.reports().len();
        let r = s.tick();
        assert_eq!(r.code, 1, "the heartbeat reports the unhealthy box: {r:?}");
        let reps = s.tenancy.reports();
        assert_eq!(
            reps.len(),
            before + 1,
            "one heartbeat report, no new rollback"
        );
        let rep = reps.last().unwrap();
        assert_eq!(rep["sha"], sha1.as_str());
        assert_eq!(rep["result"], "failed");
        assert!(
            rep["detail"]
                .as_str()
                .unwrap()
                .starts_with("UNHEALTHY: web"),
            "{rep}"
        );
    }
    assert_eq!(s.tenancy.bundle_fetches().len(), fetches, "no ping-pong");
    assert!(s.container_env("web").contains(&"VARIANT=v1".to_string()));
}
both_composes!(old_release_failing_too_is_not_a_loop);

#[test]
fn bad_retry_setting_is_a_config_error() {
    let mut s = Stack::new("rbcfg", Flavour::V2);
    s.set_extra("auto_rollback: true\nretry_failed_after_s: 0\n");
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("retry_failed_after_s"), "{r:?}");
    s.set_extra("auto_rollback: maybe\n");
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("auto_rollback"), "{r:?}");
}

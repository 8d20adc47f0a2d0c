//! The security model, attacked on real parts: a real OpenBao (templated policy), the test
//! tenancy, a real dockerd with compose v1 and v2, the htpasswd registry, and the real binary.
//!
//! Every refusal test proves the refusal (exit 1, report `detail` starting with the code, names
//! only) *and* what did not happen: no lease, no OpenBao secret read, nothing outside staging,
//! no container. The 0.1.6 token scenarios assert on the number of leases tenancy issued.

use std::path::Path;
use std::time::Duration;

use crate::common::*;
use base64::Engine;
use serde_json::{json, Value};

// ---- helpers ------------------------------------------------------------------------------

type Files = Vec<(String, Vec<u8>)>;

/// Seeds `monky/data/<env>/see/<name>` = {value} and returns its manifest entry for `var`.
fn entry(s: &Stack, var: &str, name: &str, value: &str) -> Value {
    let v = s.bao.put_secret(&s.env, name, &[("value", value)]);
    json!({"var": var, "path": format!("monky/data/{}/see/{name}", s.env), "version": v})
}

/// Seeds the registry credential and returns its `use: registry-auth` entry.
fn registry_entry(s: &Stack, name: &str, value: &str) -> Value {
    let v = s.bao.put_secret(&s.env, name, &[("value", value)]);
    json!({"use": "registry-auth", "path": format!("monky/data/{}/see/{name}", s.env), "version": v})
}

fn spec(
    serial: u64,
    compose: String,
    env_template: &str,
    entries: Vec<Value>,
    meta: Value,
) -> BundleSpec {
    BundleSpec {
        serial,
        compose,
        env_template: env_template.into(),
        manifest: json!({ "entries": entries }),
        meta_extra: meta,
    }
}

/// A stack whose agent already holds the bootstrap token (`monky-deployd bootstrap`).
fn bootstrapped(name: &str, f: Flavour) -> (Stack, String) {
    let s = crate::common::bootstrapped(name, f);
    let t = s.token();
    (s, t)
}

/// A stack with other role TTLs and `bao.renew_below_s`.
fn lifecycle_stack(name: &str, ttl: u64, max_ttl: u64, renew_below: u64) -> Stack {
    let s = Stack::with_role(
        name,
        Flavour::V2,
        BaoRoleOpts {
            token_ttl: Duration::from_secs(ttl),
            token_max_ttl: Duration::from_secs(max_ttl),
        },
    );
    let text = s.config_text().replace(
        "  ca_file: \"\"\n",
        &format!("  ca_file: \"\"\n  renew_below_s: {renew_below}\n"),
    );
    assert!(text.contains("renew_below_s"), "{text}");
    std::fs::write(s.config_path(), text).unwrap();
    s
}

/// OpenBao requests made by anyone but tenancy's own bearer checks (`auth/token/lookup`).
fn agent_bao_requests(s: &Stack) -> Vec<(String, String)> {
    s.bao
        .audit_requests()
        .into_iter()
        .filter(|(_, p)| p != "auth/token/lookup")
        .collect()
}

fn dir_entries(p: &Path) -> Vec<String> {
    std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Nothing outside staging: no release, no `current`, no registry config, staging empty,
/// and no container for the project.
fn assert_nothing_written(s: &Stack) {
    let sd = s.state_dir();
    assert!(
        dir_entries(&sd.join("releases")).is_empty(),
        "releases: {:?}",
        dir_entries(&sd.join("releases"))
    );
    assert!(
        sd.join("current").symlink_metadata().is_err(),
        "current exists"
    );
    assert!(
        !sd.join("docker").join("config.json").exists(),
        "docker config written"
    );
    assert!(
        dir_entries(&sd.join("staging")).is_empty(),
        "staging left: {:?}",
        dir_entries(&sd.join("staging"))
    );
    assert!(
        s.containers().is_empty(),
        "a container was started: {:?}",
        s.containers()
    );
}

/// A refusal before the lease: exit 1, the report's detail starts with `code`, no lease, no
/// OpenBao secret read, nothing written outside staging, no container.
fn assert_refused_before_lease(s: &Stack, r: &Run, code: &str) -> String {
    assert_eq!(r.code, 1, "{code}: {r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed", "{rep}");
    let detail = rep["detail"].as_str().unwrap().to_string();
    assert!(
        detail.starts_with(&format!("{code}:")) || detail == code,
        "want {code}, got {detail:?}"
    );
    assert!(r.stderr.contains(code), "{r:?}");
    assert!(
        s.tenancy.leases().is_empty(),
        "{code}: a refused bundle leased"
    );
    assert!(
        s.bao.secret_reads().is_empty(),
        "{code}: OpenBao reads {:?}",
        s.bao.secret_reads()
    );
    assert_nothing_written(s);
    detail
}

fn docker_root() -> String {
    let o = std::process::Command::new("docker")
        .args(["info", "--format", "{{.DockerRootDir}}"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn quiet_service(image: &str, extra: &str) -> String {
    format!(
        "services:\n  app:\n    image: {image}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"exec sleep 600\"]\n{extra}"
    )
}

// ---- 1. token lifecycle (seed + 0.1.6) ------------------------------------------------------

#[test]
fn bootstrap_swapped_for_a_lease_once_then_reused() {
    require_docker();
    let (s, t0) = bootstrapped("life", Flavour::V2);
    assert!(!s.bootstrap_path().exists(), "used grant deleted");
    assert_eq!(mode(&s.state_dir().join("bao.token")), 0o600);
    assert_eq!(s.state()["token"]["source"], "bootstrap");
    assert_eq!(s.tenancy.leases().len(), 0);
    assert_eq!(s.bao.login_count(), 1);
    let meta = s.bao.lookup(&t0).unwrap();
    assert_eq!(meta["meta"]["env_id"], s.env.as_str());

    // first apply: the bootstrap token is swapped for a lease-derived one, once
    s.tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "a", "life-secret-one").files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.leases().len(), 1);
    assert_eq!(s.bao.login_count(), 2);
    let t1 = s.token();
    assert_ne!(t0, t1);
    assert!(
        s.bao.lookup(&t0).is_err(),
        "the replaced bootstrap token is revoked"
    );
    let m1 = s.bao.lookup(&t1).unwrap();
    assert_eq!(
        m1["meta"]["grant_jti"],
        s.tenancy.issued_jtis(&s.env).last().unwrap().as_str()
    );
    assert_eq!(s.state()["token"]["source"], "lease");
    assert_eq!(s.bao.secret_reads().len(), 1);

    // a new bundle: the valid lease-derived token is reused (no lease, no login)
    s.tenancy
        .set_bundle(&s.env, web_bundle(&s, 2, "b", "life-secret-two").files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.leases().len(), 1, "lease-derived token reused");
    assert_eq!(s.bao.login_count(), 2);
    assert_eq!(s.token(), t1);
    assert_eq!(s.bao.secret_reads().len(), 2);

    // heartbeats: no lease, no OpenBao call at all (cached expiry)
    let before = agent_bao_requests(&s).len();
    for _ in 0..2 {
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
    }
    assert_eq!(s.tenancy.leases().len(), 1);
    assert_eq!(
        agent_bao_requests(&s).len(),
        before,
        "heartbeat made OpenBao calls"
    );
}

/// The env-qa-02 pilot incident: a deploy that keeps failing after the lease, retried by the
/// timer, must not burn tenancy's 5-leases-per-hour budget.
#[test]
fn a_failing_deploy_retried_by_the_timer_leases_once() {
    require_docker();
    let (s, _) = bootstrapped("retry", Flavour::V2);
    let e = entry(&s, "API_KEY", "api_key", "retry-secret");
    // the private image without a credential: fails at pull, after the lease, every time
    let b = spec(
        1,
        quiet_service(PRIVATE_IMAGE, ""),
        "API_KEY=${API_KEY}\n",
        vec![e],
        json!({}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    for i in 0..7 {
        let r = s.tick();
        assert_eq!(r.code, 1, "retry {i}: {r:?}");
        let d = s.last_report()["detail"].as_str().unwrap().to_string();
        assert!(d.starts_with("COMPOSE_PULL_FAILED:"), "retry {i}: {d}");
    }
    assert_eq!(s.tenancy.leases().len(), 1, "one lease for seven attempts");
    assert!(
        !s.tenancy.requests().iter().any(|q| q.status == 429),
        "rate-limited"
    );
    assert_eq!(
        s.bao.secret_reads().len(),
        7,
        "each attempt reads its secrets afresh"
    );
}

#[test]
fn rate_limited_lease_with_a_working_token_defers_the_swap() {
    require_docker();
    let (s, t0) = bootstrapped("ratelim", Flavour::V2);
    s.tenancy.set_lease_limit(0);
    let sha = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "r", "ratelim-secret").files());
    let r = s.tick();
    assert_eq!(
        r.code, 0,
        "the apply goes on with the bootstrap token: {r:?}"
    );
    assert!(r.stderr.contains("swap deferred"), "{r:?}");
    assert_eq!(s.tenancy.leases().len(), 0);
    assert!(s
        .tenancy
        .requests()
        .iter()
        .any(|q| q.path == "/v1/agent/lease" && q.status == 429));
    let rep = s.last_report();
    assert_eq!(
        (rep["result"].as_str(), rep["sha"].as_str()),
        (Some("applied"), Some(sha.as_str()))
    );
    let st = s.state();
    assert_eq!(st["lease_swap_due"], true);
    assert_eq!(st["token"]["source"], "bootstrap");
    assert_eq!(s.token(), t0);

    // still limited: heartbeat is fine, the swap stays due
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.state()["lease_swap_due"], true);
    assert_eq!(s.tenancy.leases().len(), 0);

    // the limit lifts: a later tick does the swap (one lease), the old token is revoked
    s.tenancy.set_lease_limit(5);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.leases().len(), 1);
    let st = s.state();
    assert_eq!(st["lease_swap_due"], false);
    assert_eq!(st["token"]["source"], "lease");
    assert_ne!(s.token(), t0);
    assert!(
        s.bao.lookup(&t0).is_err(),
        "bootstrap token revoked after the deferred swap"
    );
    // and no further leases on the following ticks
    assert_eq!(s.tick().code, 0);
    assert_eq!(s.tenancy.leases().len(), 1);
}

/// Polls OpenBao until `token`'s TTL is at most `below` seconds.
fn wait_ttl_at_most(s: &Stack, token: &str, below: u64) {
    for _ in 0..240 {
        let ttl = s.bao.lookup(token).unwrap()["ttl"].as_u64().unwrap();
        if ttl <= below {
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("ttl of the token never fell to {below}s");
}

#[test]
fn renew_self_with_an_explicit_increment_when_the_ttl_runs_low() {
    require_docker();
    // role: 90 s TTL, 600 s max; the agent renews below 60 s
    let s = lifecycle_stack("renew", 90, 600, 60);
    s.give_bootstrap();
    s.tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "n", "renew-secret").files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.leases().len(), 1);
    assert!(
        !r.stderr.contains("token renewed"),
        "the apply took too long for this test: {r:?}"
    );
    let t1 = s.token();
    wait_ttl_at_most(&s, &t1, 58);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("token renewed"), "{r:?}");
    assert_eq!(s.token(), t1, "renewed, not replaced");
    assert_eq!(s.tenancy.leases().len(), 1, "renewal needs no lease");
    let ttl = s.bao.lookup(&t1).unwrap()["ttl"].as_u64().unwrap();
    // an empty renew body would have reset the TTL to the role's 90 s
    assert!(
        ttl > 120,
        "renew-self used an explicit increment: ttl {ttl}"
    );
    assert!(agent_bao_requests(&s)
        .iter()
        .any(|(_, p)| p == "auth/token/renew-self"));
}

/// The wall clock stepping backwards (NTP, a laptop's RTC) makes the cached wall-clock expiry
/// look far away; renewal follows the boot clock, so the token is still renewed in time.
#[test]
fn a_wall_clock_step_backwards_cannot_strand_the_token() {
    require_docker();
    let s = lifecycle_stack("clock", 90, 600, 60);
    s.give_bootstrap();
    s.tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "c", "clock-secret").files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let t1 = s.token();
    // what a backward step of about eleven days does to the cached view
    let path = s.state_dir().join("state.json");
    let mut st: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let far = st["token"]["expires_at"].as_u64().unwrap() + 1_000_000;
    st["token"]["expires_at"] = json!(far);
    std::fs::write(&path, serde_json::to_vec(&st).unwrap()).unwrap();
    wait_ttl_at_most(&s, &t1, 58);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("token renewed"), "{r:?}");
    let ttl = s.bao.lookup(&t1).unwrap()["ttl"].as_u64().unwrap();
    assert!(ttl > 120, "renewed: ttl {ttl}");
}

#[test]
fn re_lease_before_the_max_ttl_and_revoke_the_replaced_token() {
    require_docker();
    // max TTL = TTL: renewal cannot extend, so the agent leases a new grant in time
    let s = lifecycle_stack("release", 90, 90, 60);
    s.give_bootstrap();
    s.tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "m", "release-secret").files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.leases().len(), 1, "{r:?}");
    let t1 = s.token();
    wait_ttl_at_most(&s, &t1, 58);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        s.tenancy.leases().len(),
        2,
        "re-leased before the max TTL: {r:?}"
    );
    let t2 = s.token();
    assert_ne!(t1, t2);
    assert!(s.bao.lookup(&t1).is_err(), "replaced token revoked");
    assert!(s.bao.lookup(&t2).unwrap()["ttl"].as_u64().unwrap() > 60);
    assert_eq!(s.state()["token"]["source"], "lease");
    assert_eq!(
        s.state()["token"]["grant_jti"],
        s.tenancy.issued_jtis(&s.env).last().unwrap().as_str()
    );
}

/// An idle box (nothing to apply) keeps its identity: the bootstrap token is re-leased before
/// it runs out, so the box is not locked out when its first bundle finally arrives.
#[test]
fn an_idle_box_re_leases_before_its_bootstrap_token_expires() {
    let s = lifecycle_stack("idle", 90, 90, 60);
    s.give_bootstrap();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let t0 = s.token();
    assert_eq!(s.state()["token"]["source"], "bootstrap");
    assert_eq!(s.tenancy.leases().len(), 0);
    wait_ttl_at_most(&s, &t0, 58);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.leases().len(), 1, "{r:?}");
    assert_eq!(s.state()["token"]["source"], "lease");
    assert!(s.bao.lookup(&t0).is_err(), "old token revoked");
    assert_eq!(s.tick().code, 0);
    assert_eq!(s.tenancy.leases().len(), 1);
}

#[test]
fn superseded_grant_is_401_exit_1_no_lease_no_report() {
    let (s, _t0) = bootstrapped("supersede", Flavour::V2);
    assert_eq!(s.tick().code, 0, "nothing to apply yet");
    s.tenancy.supersede(&s.env);
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("AGENT_UNAUTHENTICATED"), "{r:?}");
    assert!(
        r.stderr.contains("reveal the install kit again") && r.stderr.contains("bootstrap --force"),
        "{r:?}"
    );
    assert_eq!(s.tenancy.leases().len(), 0);
    assert_eq!(
        s.tenancy.reports().len(),
        reports,
        "a report is impossible with a superseded token"
    );
    assert!(s.state()["last_error"]
        .as_str()
        .unwrap()
        .contains("AGENT_UNAUTHENTICATED"));
}

#[test]
fn bootstrap_force_revokes_the_replaced_token() {
    let (s, t0) = bootstrapped("force", Flavour::V2);
    s.give_bootstrap();
    let r = s.cmd(&["bootstrap"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.token(), t0, "without --force the stored token is kept");
    let r = s.cmd(&["bootstrap", "--force"]);
    assert_eq!(r.code, 0, "{r:?}");
    let t1 = s.token();
    assert_ne!(t0, t1);
    assert!(
        s.bao.lookup(&t0).is_err(),
        "bootstrap --force left the replaced token alive"
    );
    assert!(s.bao.lookup(&t1).is_ok());
}

#[test]
fn lease_answered_with_approle_material_is_refused_and_never_used() {
    let (s, t0) = bootstrapped("legacy", Flavour::V2);
    s.tenancy.set_lease_override(Some(json!({
        "role_id": "legacy-role-id-0a1b2c",
        "secret_id": "legacy-secret-id-3d4e5f",
        "wrap_token": "s.LegacyWrapTokenAbcdefghij0123",
    })));
    s.tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "l", "legacy-kv-secret").files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("LEASE_LEGACY_REFUSED"), "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed");
    assert!(
        rep["detail"]
            .as_str()
            .unwrap()
            .starts_with("LEASE_LEGACY_REFUSED:"),
        "{rep}"
    );
    // never used: no AppRole login, no other login than the bootstrap one, no read
    let reqs = agent_bao_requests(&s);
    assert!(
        !reqs
            .iter()
            .any(|(_, p)| p.contains("approle") || p.contains("unwrap")),
        "{reqs:?}"
    );
    assert_eq!(s.bao.login_count(), 1);
    assert!(s.bao.secret_reads().is_empty());
    assert_eq!(s.token(), t0);
    assert_nothing_written(&s);
    for leak in ["legacy-secret-id-3d4e5f", "LegacyWrapToken"] {
        assert!(!r.stderr.contains(leak), "{leak} in stderr: {r:?}");
        assert!(!rep.to_string().contains(leak));
    }
}

#[test]
fn a_lease_for_another_env_is_refused_and_its_token_never_used() {
    let (s, t0) = bootstrapped("otherlease", Flavour::V2);
    let other = format!("{}-x", s.env);
    // the probe below sees a live token of the other env
    let probe = s.bao.login(&s.tenancy.bootstrap_grant(&other).jwt).unwrap();
    assert_eq!(live_tokens_for(&s, &other).len(), 1);
    s.bao.revoke(&probe);
    assert!(live_tokens_for(&s, &other).is_empty());
    let g = s.tenancy.bootstrap_grant(&other);
    s.tenancy.set_lease_override(Some(
        json!({"grant": g.jwt, "jti": g.jti, "expires_at": "2099-01-01T00:00:00Z"}),
    ));
    s.tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "o", "otherlease-secret").files());
    let r = s.tick();
    assert_eq!(r.code, 78, "{r:?}");
    assert!(r.stderr.contains("AGENT_ENV_MISMATCH"), "{r:?}");
    assert_eq!(s.token(), t0, "the other env's token was stored");
    assert_eq!(s.state()["token"]["source"], "bootstrap");
    assert!(
        s.bao.secret_reads().is_empty(),
        "read with the other env's token"
    );
    assert_nothing_written(&s);
    assert!(
        live_tokens_for(&s, &other).is_empty(),
        "the other env's token was left alive"
    );
}

/// Accessors of the live OpenBao tokens whose `meta.env_id` is `env`.
fn live_tokens_for(s: &Stack, env: &str) -> Vec<String> {
    let (st, v) = s.bao.request(
        "LIST",
        "/v1/auth/token/accessors",
        Some(s.bao.root_token()),
        None,
    );
    assert_eq!(st, 200, "{v}");
    v["data"]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .filter(|a| {
            let (st, v) = s.bao.request(
                "POST",
                "/v1/auth/token/lookup-accessor",
                Some(s.bao.root_token()),
                Some(&json!({ "accessor": a })),
            );
            st == 200 && v["data"]["meta"]["env_id"] == env
        })
        .map(String::from)
        .collect()
}

// ---- 2. refusals: the refusal, and what did not happen ---------------------------------------

#[test]
fn bundle_sha_mismatch_refused_before_anything() {
    let (s, _) = bootstrapped("shamis", Flavour::V2);
    let sha = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "t", "sha-secret").files());
    s.tenancy.tamper_bundle(true);
    let r = s.tick();
    let d = assert_refused_before_lease(&s, &r, "BUNDLE_SHA_MISMATCH");
    assert!(d.contains(&sha), "{d}");
    assert_eq!(s.last_report()["sha"], sha.as_str());
}

#[test]
fn unsafe_bundle_paths_are_refused_before_a_byte_is_written() {
    let (s, _) = bootstrapped("paths", Flavour::V2);
    let base = web_bundle(&s, 1, "p", "paths-secret").files();
    let outside = s.dir.path().join(format!("escaped-{}", s.env));
    let cases: Vec<(&str, Files)> = vec![
        (
            "absolute",
            vec![(outside.display().to_string(), b"x".to_vec())],
        ),
        (
            "dotdot",
            vec![(format!("../../../escaped-{}", s.env), b"x".to_vec())],
        ),
        (
            "inner dotdot",
            vec![(format!("conf/../../../../escaped-{}", s.env), b"x".to_vec())],
        ),
        ("NUL", vec![("conf/a\0b".into(), b"x".to_vec())]),
        ("backslash", vec![("..\\..\\escaped".into(), b"x".to_vec())]),
        ("empty component", vec![("conf//x".into(), b"x".to_vec())]),
        (
            "dot",
            vec![("./compose.yaml".into(), b"services: {}\n".to_vec())],
        ),
        (
            "duplicate",
            vec![(
                "compose.yaml".into(),
                b"services:\n  evil:\n    image: x\n    privileged: true\n".to_vec(),
            )],
        ),
        (
            "file and dir",
            vec![
                ("conf".into(), b"x".to_vec()),
                ("conf/x".into(), b"y".to_vec()),
            ],
        ),
        ("empty", vec![("".into(), b"x".to_vec())]),
    ];
    for (what, extra) in cases {
        let mut files = base.clone();
        files.extend(extra);
        let sha = s.tenancy.set_bundle(&s.env, files);
        let r = s.tick();
        let d = assert_refused_before_lease(&s, &r, "BUNDLE_PATH_UNSAFE");
        assert_eq!(s.last_report()["sha"], sha.as_str(), "{what}");
        assert!(!d.contains('\0'), "{what}: {d:?}");
        assert!(!outside.exists(), "{what}: wrote {}", outside.display());
        assert!(
            !s.state_dir().join(format!("escaped-{}", s.env)).exists(),
            "{what}"
        );
    }
}

#[test]
fn symlinks_planted_in_releases_and_staging_are_not_followed() {
    require_docker();
    let (s, _) = bootstrapped("symlink", Flavour::V2);
    let sha = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "s", "symlink-secret").files());
    let victim = tempfile::tempdir().unwrap();
    std::fs::write(victim.path().join("keep"), "keep").unwrap();
    let victim2 = tempfile::tempdir().unwrap();
    std::fs::write(victim2.path().join("keep"), "keep").unwrap();
    let sd = s.state_dir();
    for d in ["releases", "staging"] {
        std::fs::create_dir_all(sd.join(d)).unwrap();
    }
    std::os::unix::fs::symlink(victim.path(), sd.join("releases").join(&sha)).unwrap();
    std::os::unix::fs::symlink(victim2.path(), sd.join("staging").join(&sha)).unwrap();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    for v in [victim.path(), victim2.path()] {
        assert_eq!(
            dir_entries(v),
            vec!["keep".to_string()],
            "{} written through a symlink",
            v.display()
        );
        assert_eq!(std::fs::read_to_string(v.join("keep")).unwrap(), "keep");
    }
    let rel = sd.join("releases").join(&sha);
    assert!(
        rel.symlink_metadata().unwrap().file_type().is_dir(),
        "release is a real directory"
    );
    assert!(rel.join(".env").exists());
    assert_eq!(std::fs::read_link(sd.join("current")).unwrap(), rel);
}

#[test]
fn env_incomplete_is_refused_before_the_lease_naming_names_only() {
    let (s, _) = bootstrapped("envinc", Flavour::V2);
    let e = entry(&s, "API_KEY", "api_key", "envinc-value-123");
    let b = spec(
        1,
        web_compose("e"),
        "API_KEY=${API_KEY}\nDB_URL=${DB_URL}\nX=${OTHER:-dflt}\n",
        vec![e],
        json!({}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    let d = assert_refused_before_lease(&s, &r, "ENV_INCOMPLETE");
    assert!(d.contains("DB_URL"), "{d}");
    assert!(
        !d.contains("API_KEY") && !d.contains("envinc-value"),
        "names only, unresolved only: {d}"
    );
}

#[test]
fn foreign_manifest_paths_are_refused_before_any_openbao_request() {
    let (s, _) = bootstrapped("foreign", Flavour::V2);
    let other = format!("{}-other", s.env);
    s.bao
        .put_secret(&other, "api_key", &[("value", "other-env-secret")]);
    let env = s.env.clone();
    let paths = [
        format!("monky/data/{other}/see/api_key"),
        format!("monky/data/{env}/see/../../{other}/see/api_key"),
        format!("monky/data/{env}/see/%2e%2e/%2e%2e/{other}/see/api_key"),
        format!("monky/data/{env}/seeother/api_key"),
        format!("monky/data/{env}/see/"),
        format!("monky/metadata/{env}/see/api_key"),
        format!("monky/data/{env}/see/api_key?version=1"),
        format!("monky/data/{env}/see/api_key#frag"),
        format!("sys/raw/monky/data/{env}/see/api_key"),
        format!("/monky/data/{env}/see/api_key"),
        "auth/token/create".to_string(),
    ];
    for (i, p) in paths.iter().enumerate() {
        let b = spec(
            1 + i as u64,
            web_compose("f"),
            "API_KEY=${API_KEY}\n",
            vec![json!({"var": "API_KEY", "path": p, "version": 1})],
            json!({}),
        );
        s.tenancy.set_bundle(&s.env, b.files());
        let before = agent_bao_requests(&s);
        let r = s.tick();
        let d = assert_refused_before_lease(&s, &r, "MANIFEST_PATH_FOREIGN");
        assert!(!d.contains("other-env-secret"));
        let after = agent_bao_requests(&s);
        assert_eq!(before, after, "{p}: OpenBao requests were made");
    }
    // and a registry-auth entry is held to the same prefix
    let b = spec(
        100,
        web_compose("f"),
        "",
        vec![
            json!({"use": "registry-auth", "path": format!("monky/data/{other}/see/registry"), "version": 1}),
        ],
        json!({}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_refused_before_lease(&s, &r, "MANIFEST_PATH_FOREIGN");
}

#[test]
fn privileged_settings_are_refused_end_to_end_unless_allowed() {
    require_docker();
    let (mut s, _) = bootstrapped("priv", Flavour::V2);
    let e = entry(&s, "API_KEY", "api_key", "priv-secret-value");
    let cases = [
        ("privileged", "    privileged: true\n"),
        ("network_mode", "    network_mode: host\n"),
        ("cap_add SYS_ADMIN", "    cap_add: [SYS_ADMIN]\n"),
        ("cap_add ALL", "    cap_add: [\"ALL\"]\n"),
        ("pid", "    pid: host\n"),
        ("ipc", "    ipc: host\n"),
        (
            "docker socket",
            "    volumes: [\"/var/run/docker.sock:/var/run/docker.sock\"]\n",
        ),
        (
            "root bind",
            "    volumes:\n      - type: bind\n        source: /\n        target: /host\n",
        ),
        ("devices", "    devices: [\"/dev/mem:/dev/mem\"]\n"),
        ("anchored", "    <<: *p\n"),
    ];
    for (i, (what, extra)) in cases.iter().enumerate() {
        let mut compose = quiet_service(
            IMAGE,
            &format!("{extra}    environment:\n      API_KEY: ${{API_KEY}}\n"),
        );
        if *what == "anchored" {
            compose = format!("x-p: &p\n  privileged: true\n{compose}");
        }
        let b = spec(
            1 + i as u64,
            compose,
            "API_KEY=${API_KEY}\n",
            vec![e.clone()],
            json!({}),
        );
        s.tenancy.set_bundle(&s.env, b.files());
        let r = s.tick();
        // host paths have their own code (PROTOCOL 0.3): `<service> <path> (<reason>)`
        let (code, who) = if matches!(*what, "docker socket" | "root bind") {
            ("BIND_SOURCE_REFUSED", "app /")
        } else {
            ("PRIVILEGED_REFUSED", "service app")
        };
        let d = assert_refused_before_lease(&s, &r, code);
        assert!(d.contains(who), "{what}: {d}");
    }
    // allow_privileged from tenancy alone is not enough: the box's own config must permit it
    let b = spec(
        50,
        quiet_service(IMAGE, "    cap_add: [SYS_ADMIN]\n"),
        "API_KEY=${API_KEY}\n",
        vec![e],
        json!({"agent": {"allow_privileged": true}}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    let d = assert_refused_before_lease(&s, &r, "PRIVILEGED_REFUSED");
    assert!(d.contains("permit_privileged is false"), "{d}");
    // the box's opt-in (permit_privileged) together with the bundle's lets it through
    s.set_extra("permit_privileged: true\n");
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["result"], "applied");
    assert_eq!(
        s.containers(),
        vec![("app".to_string(), "running".to_string())]
    );
}

#[test]
fn host_files_and_other_containers_are_refused_end_to_end() {
    let (s, _) = bootstrapped("hostfiles", Flavour::V2);
    let e = entry(&s, "API_KEY", "api_key", "hostfiles-secret");
    let svc = |extra: &str| quiet_service(IMAGE, extra);
    let cases = [
        (
            "secret from the docker socket",
            format!(
                "{}secrets:\n  s:\n    file: /var/run/docker.sock\n",
                svc("    secrets: [s]\n")
            ),
        ),
        (
            "config from the state dir",
            format!(
                "{}configs:\n  c:\n    file: ../../bao.token\n",
                svc("    configs: [c]\n")
            ),
        ),
        (
            "env_file from the state dir",
            svc("    env_file: [../../bao.token]\n"),
        ),
        (
            "env_file absolute",
            svc("    env_file: /etc/monky-deployd/config.yaml\n"),
        ),
        (
            "another container's pid namespace",
            svc("    pid: \"container:monky-demo-01-web-1\"\n"),
        ),
        (
            "another container's volumes",
            svc("    volumes_from: [\"container:monky-demo-01-web-1\"]\n"),
        ),
        (
            "super-privileged SELinux type",
            svc("    security_opt: [\"label=type:spc_t\"]\n"),
        ),
        (
            "custom seccomp profile",
            svc("    security_opt: [\"seccomp=./allow.json\"]\n"),
        ),
        (
            "build context of the state dir",
            svc("    build:\n      context: ../..\n"),
        ),
        (
            "named volume binding /",
            format!(
                "{}volumes:\n  h:\n    driver_opts: {{type: none, o: bind, device: /}}\n",
                svc("    volumes: [\"h:/h\"]\n")
            ),
        ),
        ("include", format!("include: [other.yaml]\n{}", svc(""))),
        (
            "writable cron dir",
            svc("    volumes: [\"/etc/cron.d:/cron\"]\n"),
        ),
        (
            "root's ssh keys",
            svc("    volumes: [\"/root/.ssh:/k:ro\"]\n"),
        ),
        (
            "writable binaries",
            svc("    volumes: [\"/usr/local/bin:/b\"]\n"),
        ),
    ];
    for (i, (what, compose)) in cases.iter().enumerate() {
        let b = spec(
            1 + i as u64,
            compose.clone(),
            "API_KEY=${API_KEY}\n",
            vec![e.clone()],
            json!({}),
        );
        s.tenancy.set_bundle(&s.env, b.files());
        let r = s.tick();
        let bind = [
            "secret from the docker socket",
            "config from the state dir",
            "build context of the state dir",
            "named volume binding /",
            "writable cron dir",
            "root's ssh keys",
            "writable binaries",
        ];
        let code = if bind.contains(what) {
            "BIND_SOURCE_REFUSED"
        } else {
            "PRIVILEGED_REFUSED"
        };
        let d = assert_refused_before_lease(&s, &r, code);
        assert!(!d.contains("hostfiles-secret"), "{what}: {d}");
    }
}

#[test]
fn oversized_bundles_are_refused_before_anything() {
    let (s, _) = bootstrapped("large", Flavour::V2);
    // over the 16 MiB response limit once base64-encoded
    let mut files = web_bundle(&s, 1, "l", "large-secret").files();
    files.push(("blob.bin".into(), vec![b'A'; 13 << 20]));
    s.tenancy.set_bundle(&s.env, files);
    let r = s.tick();
    assert_refused_before_lease(&s, &r, "BUNDLE_TOO_LARGE");
    // too many files
    let mut files = web_bundle(&s, 2, "l", "large-secret").files();
    files.extend((0..600).map(|i| (format!("f/{i}"), b"x".to_vec())));
    s.tenancy.set_bundle(&s.env, files);
    let r = s.tick();
    assert_refused_before_lease(&s, &r, "BUNDLE_TOO_LARGE");
}

#[test]
fn rollback_refused_unless_allowed() {
    require_docker();
    let (s, _) = bootstrapped("rollback", Flavour::V2);
    let sha5 = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 5, "five", "rb-secret-5").files());
    assert_eq!(s.tick().code, 0);
    let leases = s.tenancy.leases().len();
    let reads = s.bao.secret_reads().len();
    let releases = dir_entries(&s.state_dir().join("releases"));
    let sha4 = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 4, "four", "rb-secret-4").files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["sha"], sha4.as_str());
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d.starts_with("ROLLBACK_REFUSED:") && d.contains('4') && d.contains('5'),
        "{d}"
    );
    assert_eq!(s.tenancy.leases().len(), leases);
    assert_eq!(
        s.bao.secret_reads().len(),
        reads,
        "no OpenBao read for a refused rollback"
    );
    assert_eq!(dir_entries(&s.state_dir().join("releases")), releases);
    assert_eq!(
        std::fs::read_link(s.state_dir().join("current")).unwrap(),
        s.state_dir().join("releases").join(&sha5)
    );
    assert!(
        s.container_env("web").contains(&"VARIANT=five".to_string()),
        "old release still runs"
    );
    assert_eq!(s.state()["applied_sha"], sha5.as_str());
    // allowed explicitly
    let mut b = web_bundle(&s, 4, "four", "rb-secret-4b");
    b.meta_extra = json!({"agent": {"allow_rollback": true}});
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(s.container_env("web").contains(&"VARIANT=four".to_string()));
}

#[test]
fn disk_insufficient_measured_on_the_docker_root() {
    let (s, _) = bootstrapped("disk", Flavour::V2);
    let mut b = web_bundle(&s, 1, "d", "disk-secret");
    b.meta_extra = json!({"need_bytes": 1u64 << 60});
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    let d = assert_refused_before_lease(&s, &r, "DISK_INSUFFICIENT");
    assert!(
        d.contains(&docker_root()),
        "measured on the Docker data root: {d}"
    );
}

// ---- 3. no way around the privilege check: the second pass ------------------------------------

/// Settings that the first pass (bundle YAML) cannot see, because the dangerous part only
/// appears once compose interpolates `.env` with a secret: the second pass on `compose config`
/// must refuse.
fn interpolation_cannot_smuggle_privilege(f: Flavour) {
    require_docker();
    let (s, _) = bootstrapped("smuggle", f);
    let e = entry(&s, "API_KEY", "api_key", "smuggle-secret");
    let cases: &[(&str, &str, &str)] = &[
        ("pid via .env", "    pid: ${PID}\n", "PID=host\n"),
        ("ipc via .env", "    ipc: \"${IPC}\"\n", "IPC=host\n"),
        (
            "socket via .env",
            "    volumes: [\"/${SOCK}:/s\"]\n",
            "SOCK=var/run/docker.sock\n",
        ),
        (
            "root via relative",
            "    volumes: [\"./${UP}:/h\"]\n",
            "UP=../../../../../../../../../..\n",
        ),
        (
            "state dir via relative",
            "    volumes: [\"./${UP}:/t:ro\"]\n",
            "UP=../../bao.token\n",
        ),
        ("userns via .env", "    userns_mode: ${U}\n", "U=host\n"),
    ];
    // (a capability spelled with a variable waits for what it becomes since issue 41: `SYS_${C}`
    // may be SYS_CHROOT; with `C=ADMIN` in env.template the first pass refuses it)
    let cap = quiet_service(IMAGE, "    cap_add: [\"SYS_${C}\"]\n");
    let doc = monky_deployd::boundary::compose_check::parse(cap.as_bytes()).unwrap();
    assert!(monky_deployd::boundary::compose_check::check(&doc, false).is_ok());
    assert_eq!(
        monky_deployd::boundary::compose_check::check_bundle(
            &doc,
            false,
            &monky_deployd::boundary::BoxFacts::default(),
            &monky_deployd::boundary::bundle::dotenv_variables("C=ADMIN\n"),
        )
        .unwrap_err()
        .code,
        "PRIVILEGED_REFUSED"
    );
    for (i, (what, extra, tmpl)) in cases.iter().enumerate() {
        // the dangerous value is a secret: a plain value of env.template is the first pass's to
        // judge since issue 41, so only a secret's reaches the second pass alone
        let (name, value) = tmpl.trim_end().split_once('=').unwrap();
        let smuggled = entry(
            &s,
            &format!("SMUGGLED_{i}"),
            &format!("smuggled_{i}"),
            value,
        );
        let tmpl = format!("{name}=${{SMUGGLED_{i}}}\n");
        let compose = quiet_service(
            IMAGE,
            &format!("{extra}    environment:\n      API_KEY: ${{API_KEY}}\n"),
        );
        // the first pass really cannot see it
        let doc = monky_deployd::boundary::compose_check::parse(compose.as_bytes()).unwrap();
        assert!(
            monky_deployd::boundary::compose_check::check(&doc, false).is_ok(),
            "{what}: first pass already refuses"
        );
        let b = spec(
            1 + i as u64,
            compose,
            &format!("API_KEY=${{API_KEY}}\n{tmpl}"),
            vec![e.clone(), smuggled],
            json!({}),
        );
        let sha = s.tenancy.set_bundle(&s.env, b.files());
        let r = s.tick();
        assert_eq!(r.code, 1, "{what}: {r:?}");
        let rep = s.last_report();
        assert_eq!(rep["sha"], sha.as_str());
        let d = rep["detail"].as_str().unwrap();
        assert!(
            d.starts_with("PRIVILEGED_REFUSED:") || d.starts_with("BIND_SOURCE_REFUSED:"),
            "{what}: {d}"
        );
        assert!(!d.contains("smuggle-secret"), "{d}");
        assert_nothing_written(&s);
    }
}
both_composes!(interpolation_cannot_smuggle_privilege);

/// An ordinary relative bind (`./conf`) passes both analyses, so the second pass does not refuse
/// the release's own files.
fn relative_binds_into_the_release_still_apply(f: Flavour) {
    require_docker();
    let (s, _) = bootstrapped("relbind", f);
    let compose = quiet_service(
        IMAGE,
        "    volumes: [\"./conf:/conf:ro\", \"/etc/localtime:/etc/localtime:ro\", \"/etc/ssl/certs:/etc/ssl/certs:ro\"]\n",
    );
    let mut files = spec(1, compose, "", vec![], json!({})).files();
    files.push(("conf/app.conf".into(), b"hello=1\n".to_vec()));
    s.tenancy.set_bundle(&s.env, files);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        s.containers(),
        vec![("app".to_string(), "running".to_string())]
    );
}
both_composes!(relative_binds_into_the_release_still_apply);

/// Secret values with the characters compose's `.env` parsers interpret (`$`, ` #`, quotes,
/// backslashes, surrounding blanks) reach the container byte for byte; values no quoting can
/// carry exactly through both parsers, and values with line breaks, are refused by name.
fn secret_values_reach_the_container_verbatim(f: Flavour) {
    require_docker();
    let (s, _) = bootstrapped("verbatim", f);
    let vals: &[(&str, &str)] = &[
        ("V_DOLLAR", "pa$word$1"),
        ("V_HASH", "a #b#c"),
        ("V_SPACE", "  lead and trail  "),
        ("V_QUOTE", "it's \"quoted\""),
        ("V_BSL", "back\\slash\\n"),
        ("V_UTF", "ütf ✓ ß"),
        ("V_PUNCT", "x=y;z|&<>(){}[]!*?"),
        ("V_DQ", "say \"hi\" $USER"),
        ("V_PLAIN", "Plain-Value_1.2"),
    ];
    let mut entries = Vec::new();
    let mut tmpl = String::new();
    let mut env = String::new();
    for (i, (var, val)) in vals.iter().enumerate() {
        entries.push(entry(&s, var, &format!("v{i}"), val));
        tmpl.push_str(&format!("{var}=${{{var}}}\n"));
        env.push_str(&format!("      {var}: ${{{var}}}\n"));
    }
    let compose = quiet_service(IMAGE, &format!("    environment:\n{env}"));
    s.tenancy.set_bundle(
        &s.env,
        spec(1, compose.clone(), &tmpl, entries.clone(), json!({})).files(),
    );
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let cenv = s.container_env("app");
    for (var, val) in vals {
        let want = format!("{var}={val}");
        assert!(cenv.contains(&want), "{var}: want {want:?} in {cenv:?}");
    }
    // not representable exactly for both parsers, or a line break: refused by name
    for (i, bad) in ["uses ${HOME} inside", "it's $x", "two\nlines"]
        .iter()
        .enumerate()
    {
        let mut e2 = entries.clone();
        e2.push(entry(&s, "V_BAD", &format!("bad{i}"), bad));
        let t2 = format!("{tmpl}V_BAD=${{V_BAD}}\n");
        let sha = s.tenancy.set_bundle(
            &s.env,
            spec(2 + i as u64, compose.clone(), &t2, e2, json!({})).files(),
        );
        let r = s.tick();
        assert_eq!(r.code, 1, "{bad:?}: {r:?}");
        let rep = s.last_report();
        assert_eq!(rep["sha"], sha.as_str());
        let d = rep["detail"].as_str().unwrap();
        assert!(
            d.starts_with("ENV_VALUE_UNSAFE:") && d.ends_with("V_BAD"),
            "{d}"
        );
        assert!(!d.contains(bad) && !r.stderr.contains(bad), "{d}");
        assert_eq!(
            std::fs::read_link(s.state_dir().join("current"))
                .unwrap()
                .file_name()
                .unwrap()
                .len(),
            64
        );
        assert_eq!(
            dir_entries(&s.state_dir().join("releases")).len(),
            1,
            "nothing promoted"
        );
    }
}
both_composes!(secret_values_reach_the_container_verbatim);

/// `.env` is also read by compose itself: a bundle that sets the compose CLI's own variables
/// there (another file, another project, another daemon, another credential store) changes
/// nothing — the agent's explicit `-f`, `-p` and process environment win.
fn dotenv_cannot_steer_the_compose_cli(f: Flavour) {
    require_docker();
    let (s, _) = bootstrapped("steer", f);
    let victim = format!("victim-{}", s.env);
    let tmpl = format!(
        "API_KEY=${{API_KEY}}\nCOMPOSE_FILE=evil.yaml\nCOMPOSE_PROJECT_NAME={victim}\nCOMPOSE_PROFILES=evil\n\
         DOCKER_HOST=tcp://127.0.0.1:9\nDOCKER_CONFIG=/tmp/{victim}-config\nCOMPOSE_PATH_SEPARATOR=;\n"
    );
    let e = entry(&s, "API_KEY", "api_key", "steer-secret");
    let mut files = spec(1, web_compose("steer"), &tmpl, vec![e], json!({})).files();
    files.push((
        "evil.yaml".into(),
        format!("services:\n  evil:\n    image: {IMAGE}\n    privileged: true\n    command: [\"sleep\", \"600\"]\n").into_bytes(),
    ));
    // and the override files compose loads by itself when no -f is given
    for name in [
        "compose.override.yaml",
        "docker-compose.override.yml",
        "docker-compose.yml",
    ] {
        files.push((
            name.into(),
            b"services:\n  web:\n    privileged: true\n    pid: host\n".to_vec(),
        ));
    }
    s.tenancy.set_bundle(&s.env, files);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        s.containers(),
        vec![("web".to_string(), "running".to_string())]
    );
    let o = std::process::Command::new("docker")
        .args([
            "ps",
            "-q",
            "--filter",
            &format!("label=com.docker.compose.project={}", s.project()),
        ])
        .output()
        .unwrap();
    let id = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let o = std::process::Command::new("docker")
        .args([
            "inspect",
            "--format",
            "{{.HostConfig.Privileged}} {{.HostConfig.PidMode}}",
            &id,
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "false",
        "an override file was loaded"
    );
    let o = std::process::Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=com.docker.compose.project={victim}"),
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).trim().is_empty(),
        "a container ran as project {victim}"
    );
    assert!(!Path::new(&format!("/tmp/{victim}-config")).exists());
}
both_composes!(dotenv_cannot_steer_the_compose_cli);

/// A bundle refused after the lease (second pass, unrepresentable value) leaves no registry
/// credential behind, and a manifest cannot route the registry password into `.env`.
#[test]
fn registry_credential_only_for_bundles_that_pass() {
    require_docker();
    let (s, _) = bootstrapped("regrefuse", Flavour::V2);
    let reg = registry_entry(&s, "registry", &format!("monky:{}", registry_password()));
    let e = entry(&s, "API_KEY", "api_key", "regrefuse-secret");
    let compose = quiet_service(PRIVATE_IMAGE, "    pid: ${PID}\n");
    let b = spec(
        1,
        compose,
        "API_KEY=${API_KEY}\nPID=host\n",
        vec![e.clone(), reg.clone()],
        json!({}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(
        d.starts_with("PRIVILEGED_REFUSED:") || d.starts_with("BIND_SOURCE_REFUSED:"),
        "{d}"
    );
    assert!(
        !s.state_dir().join("docker/config.json").exists(),
        "credential written for a refused bundle"
    );
    assert_nothing_written(&s);
    // the registry entry named as a variable: still not an env var → unresolved, before the lease
    let leases = s.tenancy.leases().len();
    let mut reg_var = reg.clone();
    reg_var["var"] = json!("REGISTRY_PASSWORD");
    let b = spec(
        2,
        quiet_service(PRIVATE_IMAGE, ""),
        "API_KEY=${API_KEY}\nREGISTRY_PASSWORD=${REGISTRY_PASSWORD}\n",
        vec![e, reg_var],
        json!({}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert_eq!(d, "ENV_INCOMPLETE: unresolved: REGISTRY_PASSWORD");
    assert_eq!(s.tenancy.leases().len(), leases);
}

#[test]
fn manifest_paths_that_need_escaping_are_refused_not_retried() {
    let (s, _) = bootstrapped("escaping", Flavour::V2);
    for (i, name) in ["a b", "a%20b", "caf\u{e9}", "a\"b", "a;b"]
        .iter()
        .enumerate()
    {
        let p = format!("monky/data/{}/see/{name}", s.env);
        let b = spec(
            1 + i as u64,
            web_compose("x"),
            "API_KEY=${API_KEY}\n",
            vec![json!({"var": "API_KEY", "path": p, "version": 1})],
            json!({}),
        );
        s.tenancy.set_bundle(&s.env, b.files());
        let r = s.tick();
        assert_eq!(r.code, 1, "{name:?}: {r:?}");
        let d = s.last_report()["detail"].as_str().unwrap().to_string();
        assert!(
            d.starts_with("BUNDLE_INVALID:") || d.starts_with("MANIFEST_PATH_FOREIGN:"),
            "{d}"
        );
        assert!(s.bao.secret_reads().is_empty() && s.tenancy.leases().is_empty());
    }
}

/// A variable compose.yaml uses but nothing defines would reach the container as a blank
/// string (compose only warns): refused by name, and compose's warnings on stderr never make
/// the second pass misread the normalised config.
fn compose_variables_nothing_defines_are_refused_by_name(f: Flavour) {
    require_docker();
    let (s, _) = bootstrapped("unsetvar", f);
    let e = entry(&s, "API_KEY", "api_key", "unsetvar-secret");
    let compose = quiet_service(
        IMAGE,
        "    environment:\n      API_KEY: ${API_KEY}\n      DB_PASSWORD: ${DB_PASSWORD}\n      MODE: ${MODE:-prod}\n",
    );
    let b = spec(
        1,
        compose,
        "API_KEY=${API_KEY}\n",
        vec![e.clone()],
        json!({}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(
        d.starts_with("ENV_INCOMPLETE:") && d.contains("DB_PASSWORD") && !d.contains("MODE"),
        "{d}"
    );
    assert!(s.containers().is_empty());
    // defined in env.template: applies, and the default is compose's business
    let compose = quiet_service(
        IMAGE,
        "    environment:\n      API_KEY: ${API_KEY}\n      DB_PASSWORD: ${DB_PASSWORD}\n      MODE: ${MODE:-prod}\n",
    );
    let b = spec(
        2,
        compose,
        "API_KEY=${API_KEY}\nDB_PASSWORD=literal-pw\n",
        vec![e],
        json!({}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let env = s.container_env("app");
    assert!(
        env.contains(&"DB_PASSWORD=literal-pw".to_string())
            && env.contains(&"MODE=prod".to_string()),
        "{env:?}"
    );
}
both_composes!(compose_variables_nothing_defines_are_refused_by_name);

// ---- 4. registry credential (0.1.7), real htpasswd registry ----------------------------------

fn private_bundle(s: &Stack, serial: u64, extra_entries: Vec<Value>) -> BundleSpec {
    let mut entries = vec![entry(
        s,
        "API_KEY",
        "api_key",
        &format!("reg-api-key-{serial}"),
    )];
    entries.extend(extra_entries);
    spec(
        serial,
        quiet_service(
            PRIVATE_IMAGE,
            &format!("    environment:\n      API_KEY: ${{API_KEY}}\n      SERIAL: \"{serial}\"\n"),
        ),
        "API_KEY=${API_KEY}\n",
        entries,
        json!({}),
    )
}

fn registry_credential(f: Flavour) {
    require_docker();
    let (s, _) = bootstrapped("registry", f);
    let pw = registry_password();
    let sd = s.state_dir();

    // no credential: the registry's own words reach the report
    s.tenancy
        .set_bundle(&s.env, private_bundle(&s, 1, vec![]).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(
        d.starts_with("COMPOSE_PULL_FAILED:") && d.contains("no basic auth credentials"),
        "{d}"
    );
    assert!(s.containers().is_empty());

    // wrong password
    let wrong = registry_entry(
        &s,
        "registry",
        r#"{"registry":"127.0.0.1:5000","username":"monky","password":"wrong-pw-Zq9"}"#,
    );
    s.tenancy
        .set_bundle(&s.env, private_bundle(&s, 2, vec![wrong]).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d.starts_with("COMPOSE_PULL_FAILED:") && d.contains("unauthorized"),
        "{d}"
    );
    assert!(!rep.to_string().contains("wrong-pw-Zq9"), "{rep}");
    assert!(!r.stderr.contains("wrong-pw-Zq9"), "{r:?}");

    // the seeded credential, JSON shape
    let json_cred =
        json!({"registry": "127.0.0.1:5000", "username": "monky", "password": pw}).to_string();
    let good = registry_entry(&s, "registry", &json_cred);
    s.tenancy
        .set_bundle(&s.env, private_bundle(&s, 3, vec![good]).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        s.containers(),
        vec![("app".to_string(), "running".to_string())]
    );
    let dc = sd.join("docker");
    assert_eq!(mode(&dc), 0o700);
    assert_eq!(mode(&dc.join("config.json")), 0o600);
    let cfg: Value =
        serde_json::from_slice(&std::fs::read(dc.join("config.json")).unwrap()).unwrap();
    let auth = cfg["auths"]["127.0.0.1:5000"]["auth"].as_str().unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(auth)
        .unwrap();
    assert_eq!(decoded, format!("monky:{pw}").into_bytes());
    let cur = std::fs::read_link(sd.join("current")).unwrap();
    let env_file = std::fs::read_to_string(cur.join(".env")).unwrap();
    assert!(!env_file.contains(&pw), "credential in .env");
    let cenv = s.container_env("app").join("\n");
    assert!(
        !cenv.contains(&pw) && !cenv.contains(auth),
        "credential in the container env"
    );
    assert!(cenv.contains("API_KEY=reg-api-key-3"));

    // the seeded credential, `user:password` shape with registry_host 127.0.0.1:5000
    std::fs::remove_file(dc.join("config.json")).unwrap();
    let plain = registry_entry(&s, "registry", &format!("monky:{pw}"));
    s.tenancy
        .set_bundle(&s.env, private_bundle(&s, 4, vec![plain]).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(s.container_env("app").contains(&"SERIAL=4".to_string()));
    assert_eq!(mode(&dc.join("config.json")), 0o600);
    for ch in [
        r.stderr.clone(),
        std::fs::read_to_string(sd.join("state.json")).unwrap(),
    ] {
        assert!(!ch.contains(&pw), "credential leaked: {ch}");
    }
}
both_composes!(registry_credential);

// ---- 5. the leak test -------------------------------------------------------------------------

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// Searches every channel the agent writes for every secret (and its base64).
fn assert_no_leak(s: &Stack, runs: &[Run], secrets: &[String]) {
    let mut channels: Vec<(String, String)> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        channels.push((format!("run {i} stderr"), r.stderr.clone()));
        channels.push((format!("run {i} stdout"), r.stdout.clone()));
    }
    channels.push((
        "state.json".into(),
        std::fs::read_to_string(s.state_dir().join("state.json")).unwrap(),
    ));
    for (i, rep) in s.tenancy.reports().iter().enumerate() {
        channels.push((format!("report {i}"), rep.to_string()));
        // the JSON encoding escapes quotes; search the decoded strings too
        for k in ["detail", "log_tail"] {
            channels.push((
                format!("report {i} {k}"),
                rep[k].as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    for (i, c) in s.tenancy.checkins().iter().enumerate() {
        channels.push((format!("checkin {i}"), c.to_string()));
    }
    let st = s.cmd(&["status", "--json"]);
    channels.push((
        "status --json".into(),
        format!("{}{}", st.stdout, st.stderr),
    ));
    let st = s.cmd(&["status"]);
    channels.push(("status".into(), format!("{}{}", st.stdout, st.stderr)));
    for secret in secrets {
        for needle in [secret.clone(), b64(secret)] {
            for (name, text) in &channels {
                assert!(
                    !text.contains(&needle),
                    "{needle:?} leaked in {name}:\n{text}"
                );
            }
        }
    }
}

fn full_apply_leaks_nothing(f: Flavour) {
    require_docker();
    let mut s = Stack::new("leak", f);
    s.set_extra("healthy_timeout_s: 15\n");
    let grant = {
        s.give_bootstrap();
        std::fs::read_to_string(s.bootstrap_path()).unwrap()
    };
    let pw = registry_password();
    let secrets = [
        ("API_KEY", "api_key", "leak-api-key-7f3a9c2e11"),
        ("DB_PASSWORD", "db_password", "Db-Pa55w0rd-leak-4412"),
        (
            "SIGNING_KEY",
            "signing_key",
            "sk_live_leak_0123456789abcdefABCDEF",
        ),
        ("SHORTISH", "shortish", "q7Zk"),
    ];
    let mut entries: Vec<Value> = secrets
        .iter()
        .map(|(v, n, val)| entry(&s, v, n, val))
        .collect();
    entries.push(registry_entry(&s, "registry", &format!("monky:{pw}")));
    let compose = format!(
        "services:\n  app:\n    image: {PRIVATE_IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"echo starting-leaky-app; env | sort; echo b64=$$(printf %s \\\"$$DB_PASSWORD\\\" | base64); \
         echo key=$$API_KEY; exec sleep 600\"]\n    \
         environment:\n      API_KEY: ${{API_KEY}}\n      DB_PASSWORD: ${{DB_PASSWORD}}\n      SIGNING_KEY: ${{SIGNING_KEY}}\n      SHORTISH: ${{SHORTISH}}\n    \
         healthcheck:\n      test: [\"CMD\", \"false\"]\n      interval: 1s\n      timeout: 1s\n      retries: 1\n"
    );
    let b = spec(
        1,
        compose,
        "API_KEY=${API_KEY}\nDB_PASSWORD=${DB_PASSWORD}\nSIGNING_KEY=${SIGNING_KEY}\nSHORTISH=${SHORTISH}\n",
        entries,
        json!({}),
    );
    s.tenancy.set_bundle(&s.env, b.files());
    let r1 = s.tick();
    assert_eq!(r1.code, 1, "{r1:?}");
    let rep = s.last_report();
    assert!(
        rep["detail"].as_str().unwrap().starts_with("UNHEALTHY:"),
        "{rep}"
    );
    let tail = rep["log_tail"].as_str().unwrap();
    assert!(
        tail.contains("starting-leaky-app"),
        "logs forwarded: {tail}"
    );
    assert!(tail.contains("key=***"), "{tail}");
    // the container really had them (so the search below is meaningful)
    let cenv = s.container_env("app");
    assert!(cenv.contains(&"DB_PASSWORD=Db-Pa55w0rd-leak-4412".to_string()));
    // a second tick (retry) and a heartbeat-style status
    let r2 = s.tick();
    assert_eq!(r2.code, 1, "{r2:?}");
    let token = s.token();
    let mut all: Vec<String> = secrets
        .iter()
        .map(|(_, _, v)| v.to_string())
        .filter(|v| v.len() >= 4)
        .collect();
    all.push(pw.clone());
    all.push(format!("monky:{pw}"));
    all.push(token);
    all.push(grant.trim().to_string());
    assert_no_leak(&s, &[r1, r2], &all);
}
both_composes!(full_apply_leaks_nothing);

/// A secret that ends up inside a compose error message (here: a port mapping compose rejects)
/// must be masked in the report, the journal and `state.json` alike.
fn secret_in_a_compose_error_is_masked_everywhere(f: Flavour) {
    require_docker();
    let (s, _) = bootstrapped("errleak", f);
    let secret = "not-a-port-Secr3tVal";
    let e = entry(&s, "PORT", "port", secret);
    let compose = quiet_service(IMAGE, "    ports: [\"${PORT}:80\"]\n");
    s.tenancy.set_bundle(
        &s.env,
        spec(1, compose, "PORT=${PORT}\n", vec![e], json!({})).files(),
    );
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(d.starts_with("COMPOSE_"), "{d}");
    assert_no_leak(&s, &[r], &[secret.to_string()]);
}
both_composes!(secret_in_a_compose_error_is_masked_everywhere);

// ---- 6. policy isolation end to end ------------------------------------------------------------

#[test]
fn a_token_for_one_env_gets_403_on_another_envs_path() {
    let (s, _) = bootstrapped("policy", Flavour::V2);
    let token = s.token();
    let other = format!("{}-b", s.env);
    s.bao.put_secret(&s.env, "api_key", &[("value", "mine")]);
    s.bao.put_secret(&other, "api_key", &[("value", "theirs")]);
    let (st, v) = s.bao.read_secret(&token, &s.env, "api_key", None);
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["data"]["data"]["value"], "mine");
    let (st, v) = s.bao.read_secret(&token, &other, "api_key", None);
    assert_eq!(st, 403, "another env's path: {v}");
    // and not around it: metadata, listing, writing, a prefix sibling, another mount
    let env = s.env.clone();
    for (m, p) in [
        ("GET", format!("/v1/monky/metadata/{env}/see/api_key")),
        ("LIST", format!("/v1/monky/metadata/{env}/see")),
        ("GET", format!("/v1/monky/data/{env}-b/see/api_key")),
        ("GET", format!("/v1/monky/data/{env}/other/api_key")),
        ("GET", "/v1/sys/mounts".to_string()),
        ("GET", format!("/v1/secret/data/{env}/see/api_key")),
    ] {
        let (st, v) = s.bao.request(m, &p, Some(&token), None);
        assert_eq!(st, 403, "{m} {p}: {v}");
    }
    let (st, v) = s.bao.request(
        "POST",
        &format!("/v1/monky/data/{env}/see/api_key"),
        Some(&token),
        Some(&json!({"data": {"value": "overwritten"}})),
    );
    assert_eq!(st, 403, "read-only policy: {v}");
}

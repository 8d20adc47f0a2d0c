//! Self-tests of the harness against a real OpenBao dev server.

use monky_test_tenancy::*;
use serde_json::{json, Value};
use std::time::Duration;

const HOUR: Duration = Duration::from_secs(3600);

fn stack() -> (Bao, Tenancy) {
    let bao = Bao::start();
    let signer = Signer::new();
    bao.configure(&signer.public_key_pem(), BaoRoleOpts::default());
    let t = Tenancy::start(TenancyOpts {
        bao_addr: bao.addr(),
        bao_root_token: bao.root_token().to_string(),
        signer,
        lease_limit_per_hour: 5,
    });
    (bao, t)
}

/// ENVIRONMENT.md's isolation: env A's token reads A's secret, gets 403 on B's path.
#[test]
fn bao_policy_isolates_envs() {
    let bao = Bao::start();
    let signer = Signer::new();
    bao.configure(&signer.public_key_pem(), BaoRoleOpts::default());
    assert_eq!(bao.put_secret("env-a", "api", &[("value", "a1")]), 1);
    assert_eq!(bao.put_secret("env-a", "api", &[("value", "a2")]), 2);
    bao.put_secret("env-b", "api", &[("value", "b1")]);

    let grant = signer.mint_grant("env-a", HOUR);
    let full = bao.login_full(&grant.jwt).unwrap();
    assert_eq!(full["auth"]["metadata"]["env_id"], "env-a");
    assert_eq!(full["auth"]["metadata"]["grant_jti"], grant.jti.as_str());
    let token = full["auth"]["client_token"].as_str().unwrap().to_string();
    assert!(token.starts_with("s."), "{token}");

    let (st, v) = bao.read_secret(&token, "env-a", "api", Some(1));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["data"]["data"]["value"], "a1");
    let (st, v) = bao.read_secret(&token, "env-a", "api", None);
    assert_eq!((st, v["data"]["data"]["value"].clone()), (200, json!("a2")));
    let (st, _) = bao.read_secret(&token, "env-b", "api", Some(1));
    assert_eq!(st, 403);

    let data = bao.lookup(&token).unwrap();
    assert_eq!(data["meta"]["env_id"], "env-a");
    assert_eq!(data["meta"]["grant_jti"], grant.jti.as_str());
    assert!(data["ttl"].as_u64().unwrap() > 3500);

    // the role's bindings: wrong audience / kind / signer are refused
    let mut bad = json!({"iss": GRANT_ISSUER, "aud": "other", "kind": GRANT_KIND, "env_id": "env-a",
        "jti": "x", "iat": 0, "nbf": 0, "exp": 4_000_000_000u64});
    assert_eq!(
        bao.login(&signer.sign_claims(&bad)).unwrap_err().status,
        400
    );
    bad["aud"] = json!(GRANT_AUDIENCE);
    bad["kind"] = json!("other");
    assert_eq!(
        bao.login(&signer.sign_claims(&bad)).unwrap_err().status,
        400
    );
    let stranger = Signer::new().mint_grant("env-a", HOUR);
    assert_eq!(bao.login(&stranger.jwt).unwrap_err().status, 400);

    bao.revoke(&token);
    assert!(bao.lookup(&token).is_err());
}

fn checkin_body(env: &str, applied: Option<&str>) -> Value {
    json!({"env_id": env, "agent_version": "0.2.0", "applied_sha": applied, "host": "h",
           "containers": [{"service": "web", "state": "running", "health": "healthy"}]})
}

fn report_body(env: &str, sha: &str, result: &str, detail: &str) -> Value {
    json!({"env_id": env, "sha": sha, "result": result, "detail": detail, "log_tail": "",
           "agent_version": "0.2.0", "containers": []})
}

#[test]
fn tenancy_speaks_the_protocol() {
    let (bao, t) = stack();
    let a = t.addr();
    let kit = t.bootstrap_grant("env-a");
    assert!(t.is_kit_jti(&kit.jti));
    let token = bao.login(&kit.jwt).unwrap();

    // no bearer / unknown bearer → 401
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        None,
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(r.status, 401);
    assert_eq!(r.body["error"]["code"], "AGENT_UNAUTHENTICATED");
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some("s.nope"),
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(r.status, 401);

    // nothing desired → none
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&token),
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(r.status, 200, "{:?}", r);
    assert_eq!(
        r.body,
        json!({"action": "none", "desired_sha": null, "prod": false, "purge_volumes": false})
    );

    // a bundle → apply, then none once applied
    let files = vec![
        ("compose.yaml".to_string(), b"services: {}\n".to_vec()),
        ("bundle.json".to_string(), b"{\"serial\": 1}\n".to_vec()),
    ];
    let sha = t.set_bundle("env-a", files.clone());
    assert_eq!(sha, bundle_sha(&files));
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&token),
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(r.body["action"], "apply");
    assert_eq!(r.body["desired_sha"], sha.as_str());
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&token),
        Some(&checkin_body("env-a", Some(&sha))),
    );
    assert_eq!(r.body["action"], "none");

    // strict bodies
    let mut extra = checkin_body("env-a", None);
    extra["surprise"] = json!(1);
    let r = agent_call(&a, "POST", "/v1/agent/checkin", Some(&token), Some(&extra));
    assert_eq!(
        (r.status, r.body["error"]["code"].clone()),
        (400, json!("INVALID_REQUEST"))
    );

    // env mismatch → 409 (body and bundle URL)
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&token),
        Some(&checkin_body("env-b", None)),
    );
    assert_eq!(
        (r.status, r.body["error"]["code"].clone()),
        (409, json!("AGENT_ENV_MISMATCH"))
    );
    let r = agent_call(
        &a,
        "GET",
        &format!("/v1/agent/bundle/env-b/{sha}"),
        Some(&token),
        None,
    );
    assert_eq!(r.status, 409);

    // bundle: content, header, recomputed sha
    let r = agent_call(
        &a,
        "GET",
        &format!("/v1/agent/bundle/env-a/{sha}"),
        Some(&token),
        None,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.bundle_sha_header.as_deref(), Some(sha.as_str()));
    let decode = |body: &Value| -> Vec<(String, Vec<u8>)> {
        use base64::Engine;
        body["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_string(),
                    base64::engine::general_purpose::STANDARD
                        .decode(f["content_b64"].as_str().unwrap())
                        .unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(bundle_sha(&decode(&r.body)), sha);
    t.tamper_bundle(true);
    let r = agent_call(
        &a,
        "GET",
        &format!("/v1/agent/bundle/env-a/{sha}"),
        Some(&token),
        None,
    );
    assert_ne!(bundle_sha(&decode(&r.body)), sha);
    assert_eq!(r.body["sha"], sha.as_str());
    t.tamper_bundle(false);
    let r = agent_call(
        &a,
        "GET",
        "/v1/agent/bundle/env-a/deadbeef",
        Some(&token),
        None,
    );
    assert_eq!(r.status, 404);
    assert_eq!(t.bundle_fetches().len(), 4);

    // leases: 5 then 429 + Retry-After; each grant logs in and carries its jti
    for i in 0..5 {
        let r = agent_call(
            &a,
            "POST",
            "/v1/agent/lease",
            Some(&token),
            Some(&json!({"env_id": "env-a", "reason": "apply"})),
        );
        assert_eq!(r.status, 200, "lease {i}: {:?}", r);
        let full = bao.login_full(r.body["grant"].as_str().unwrap()).unwrap();
        assert_eq!(full["auth"]["metadata"]["grant_jti"], r.body["jti"]);
        assert!(r.body["expires_at"].as_str().unwrap().ends_with('Z'));
    }
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/lease",
        Some(&token),
        Some(&json!({"env_id": "env-a", "reason": "apply"})),
    );
    assert_eq!(
        (r.status, r.body["error"]["code"].clone()),
        (429, json!("LEASE_RATE_LIMITED"))
    );
    let wait: u64 = r.retry_after.unwrap().parse().unwrap();
    assert!(wait > 3500 && wait <= 3601, "{wait}");
    assert_eq!(t.leases().len(), 5);
    assert_eq!(t.issued_jtis("env-a").len(), 6);
    t.reset_lease_window();
    t.set_lease_override(Some(json!({"role_id": "r", "secret_id": "s"})));
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/lease",
        Some(&token),
        Some(&json!({"env_id": "env-a", "reason": "apply"})),
    );
    assert_eq!(r.body, json!({"role_id": "r", "secret_id": "s"}));
    t.set_lease_override(None);

    // reports: 204, strict, recorded
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/report",
        Some(&token),
        Some(&report_body("env-a", &sha, "applied", "")),
    );
    assert_eq!(r.status, 204);
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/report",
        Some(&token),
        Some(&report_body("env-a", &sha, "failed", "it broke")),
    );
    assert_eq!(r.status, 400);
    let mut missing = report_body("env-a", &sha, "applied", "");
    missing.as_object_mut().unwrap().remove("log_tail");
    let r = agent_call(&a, "POST", "/v1/agent/report", Some(&token), Some(&missing));
    assert_eq!(r.status, 400);
    assert_eq!(t.reports(), vec![report_body("env-a", &sha, "applied", "")]);

    // down, prod
    t.set_prod("env-a", true);
    t.set_down("env-a", true);
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&token),
        Some(&checkin_body("env-a", Some(&sha))),
    );
    assert_eq!(
        r.body,
        json!({"action": "down", "desired_sha": null, "prod": true, "purge_volumes": true})
    );

    // one-shot faults: a dropped connection, then an error answer
    t.fail_next("/v1/agent/checkin", 0, "DROP");
    let dropped = std::panic::catch_unwind(|| {
        agent_call(
            &a,
            "POST",
            "/v1/agent/checkin",
            Some(&token),
            Some(&checkin_body("env-a", None)),
        )
    });
    assert!(dropped.is_err(), "the connection should have been dropped");
    t.fail_next("/v1/agent/checkin", 503, "MAINTENANCE");
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&token),
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(
        (r.status, r.body["error"]["code"].clone()),
        (503, json!("MAINTENANCE"))
    );
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&token),
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(r.status, 200);

    // kit re-reveal: the kit-derived token is refused
    t.supersede("env-a");
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&token),
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(
        (r.status, r.body["error"]["code"].clone()),
        (401, json!("AGENT_UNAUTHENTICATED"))
    );
    let fresh = bao.login(&t.bootstrap_grant("env-a").jwt).unwrap();
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&fresh),
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(r.status, 200);

    // one-shot delay
    t.delay_next("/v1/agent/checkin", Duration::from_millis(400));
    let t0 = std::time::Instant::now();
    let r = agent_call(
        &a,
        "POST",
        "/v1/agent/checkin",
        Some(&fresh),
        Some(&checkin_body("env-a", None)),
    );
    assert_eq!(r.status, 200);
    assert!(t0.elapsed() >= Duration::from_millis(400));

    // records
    let reqs = t.requests();
    let bad = reqs.iter().find(|r| r.status == 400).unwrap();
    assert!(
        bad.message.as_deref().unwrap().contains("surprise"),
        "{bad:?}"
    );
    assert!(reqs
        .iter()
        .all(|r| r.user_agent.as_deref() == Some("monky-test-tenancy")));
    assert!(reqs
        .iter()
        .any(|r| r.status == 429 && r.code.as_deref() == Some("LEASE_RATE_LIMITED")));
    assert!(!t.checkins().is_empty());
}

/// The stack seeds a bundle's manifest (pinned versions exist), audits reads, writes agent files.
#[test]
fn stack_publishes_seeds_and_audits() {
    let stack = Stack::start();
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("bundle");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(b.join("compose.yaml"), "services: {}\n").unwrap();
    std::fs::write(
        b.join("secrets.manifest.json"),
        r#"{"entries": [
          {"var": "API_KEY", "path": "monky/data/env-a/see/api", "version": 2},
          {"var": "DB_PW", "path": "monky/data/env-a/see/api", "key": "db", "version": 1},
          {"use": "registry-auth", "path": "monky/data/env-a/see/registry", "version": 1},
          {"var": "X", "path": "secret/elsewhere", "version": 1}]}"#,
    )
    .unwrap();
    let (sha, seeded) = stack.publish_dir("env-a", &b, Some("user:pw"));
    assert_eq!(
        stack.tenancy.desired_sha("env-a").as_deref(),
        Some(sha.as_str())
    );
    // api: v1 and v2 each with value+db; registry v1
    assert_eq!(seeded.len(), 5, "{seeded:?}");
    let reg = seeded
        .iter()
        .find(|s| s.path.ends_with("/registry"))
        .unwrap();
    assert_eq!(reg.value, "user:pw");
    // publishing again adds nothing
    assert!(stack.publish_dir("env-a", &b, Some("user:pw")).1.is_empty());

    let files = stack.write_agent_files(
        "env-a",
        &dir.path().join("agent"),
        "healthy_timeout_s: 30\n",
    );
    let cfg = std::fs::read_to_string(&files.config).unwrap();
    assert!(cfg.contains(&format!("port: {}", stack.tenancy.port())));
    assert!(cfg.contains(&format!("port: {}", stack.bao.port())));
    assert!(cfg.ends_with("healthy_timeout_s: 30\n"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&files.bootstrap)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(stack.tenancy.is_kit_jti(&files.grant.jti));

    assert!(stack.bao.secret_reads().is_empty());
    let token = stack.bao.login(&files.grant.jwt).unwrap();
    let v2 = seeded
        .iter()
        .find(|s| s.version == 2 && s.key == "value")
        .unwrap();
    let (st, v) = stack.bao.read_secret(&token, "env-a", "api", Some(2));
    assert_eq!(
        (st, v["data"]["data"]["value"].as_str()),
        (200, Some(v2.value.as_str()))
    );
    assert_eq!(
        stack.bao.secret_reads(),
        vec!["monky/data/env-a/see/api".to_string()]
    );
    assert_eq!(stack.bao.login_count(), 1);
}

/// A persistent server keeps data, tokens and port across restarts.
#[test]
fn persistent_bao_survives_restart() {
    let mut bao = Bao::start_persistent();
    let signer = Signer::new();
    bao.configure(&signer.public_key_pem(), BaoRoleOpts::default());
    bao.put_secret("env-a", "api", &[("value", "a1")]);
    let token = bao.login(&signer.mint_grant("env-a", HOUR).jwt).unwrap();
    let addr = bao.addr();
    bao.kill();
    bao.restart();
    assert_eq!(bao.addr(), addr);
    let (st, v) = bao.read_secret(&token, "env-a", "api", Some(1));
    assert_eq!((st, v["data"]["data"]["value"].as_str()), (200, Some("a1")));
    assert_eq!(bao.secret_reads().len(), 1);
}

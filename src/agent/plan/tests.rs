//! `plan` verifies a bundle exactly as the apply does (issue 40): one function,
//! [`Agent::verify_bundle`], for both; the signature before any parser reads the bundle.

use base64::Engine as _;
use ed25519_dalek::Signer as _;

use super::*;
use crate::fakes::{FakeBao, FakeEngine, FakeTenancy, HandClock, ENV};
use monky_boundary::statement;
use monky_wire::tenancy::{BundleWire, SignatureWire};

const NOW: u64 = 1_796_500_000;
const KEY_ID: &str = "release-2026";
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

struct Signed {
    _dir: tempfile::TempDir,
    agent: Agent<FakeTenancy, FakeBao, FakeEngine>,
    key: ed25519_dalek::SigningKey,
}

/// A box that trusts `KEY_ID` and requires statements; nothing on it can reach an engine.
fn signed_box() -> Signed {
    let dir = tempfile::tempdir().unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let cfg = Config {
        env_id: ENV.into(),
        state_dir: dir.path().join("state"),
        bootstrap_path: dir.path().join("bootstrap.jwt"),
        compose_project: "monky-test".into(),
        bundle_signing_keys: [(
            KEY_ID.to_string(),
            B64.encode(key.verifying_key().as_bytes()),
        )]
        .into(),
        require_statements: true,
        docker_bin: dir.path().join("no-docker").display().to_string(),
        compose_bin: dir.path().join("no-compose").display().to_string(),
        docker_host: format!("unix://{}", dir.path().join("no.sock").display()),
        ..Config::default()
    };
    std::fs::create_dir_all(&cfg.state_dir).unwrap();
    let c = Clients {
        tenancy: FakeTenancy::default(),
        bao: FakeBao::new(),
    };
    let engine = FakeEngine::new(dir.path().to_path_buf());
    let mut agent = Agent::from_parts(cfg, false, c, engine).unwrap();
    agent.clock = std::sync::Arc::new(HandClock::at(NOW));
    Signed {
        _dir: dir,
        agent,
        key,
    }
}

/// The wire bundle of `files`, with a statement for `serial` signed by `key` (over the
/// statement's bytes, not the bare sha); its sha.
fn statement_signed(
    key: &ed25519_dalek::SigningKey,
    files: &[(&str, &str)],
    serial: u64,
) -> (String, BundleWire) {
    let (sha, body) = statement_signed_body(key, files, serial);
    (sha, serde_json::from_value(body).unwrap())
}

/// As tenancy serves it (JSON).
fn statement_signed_body(
    key: &ed25519_dalek::SigningKey,
    files: &[(&str, &str)],
    serial: u64,
) -> (String, serde_json::Value) {
    let sha = bundle::canonical_sha(files.iter().map(|(p, c)| (*p, c.as_bytes())));
    let now = i64::try_from(NOW).unwrap();
    let bytes = statement::render_bundle(ENV, &sha, serial, now - 60, now + 3600);
    let body = serde_json::json!({
        "env_id": ENV,
        "sha": sha,
        "files": files.iter().map(|(p, c)| serde_json::json!({
            "path": p, "content_b64": B64.encode(c),
        })).collect::<Vec<_>>(),
        "statement": B64.encode(&bytes),
        "signatures": [SignatureWire {
            key_id: KEY_ID.into(),
            alg: "ed25519".into(),
            sig: B64.encode(key.sign(&bytes).to_bytes()),
        }],
    });
    (sha, body)
}

const FILES: &[(&str, &str)] = &[
    ("bundle.json", "{\"serial\": 9}\n"),
    ("compose.yaml", "services: {}\n"),
];

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn plan_accepts_a_statement_signed_bundle_as_the_apply_does() {
    let mut s = signed_box();
    let (sha, wire) = statement_signed(&s.key, FILES, 9);
    // what `plan` did before: the bare sha against signatures over a statement
    assert_eq!(
        s.agent
            .keys
            .verify(&sha, &wire.signatures)
            .unwrap_err()
            .code,
        RefusalCode::BundleSignatureInvalid
    );
    let mut p = Plan::default();
    let mut refusals = Vec::new();
    let res = rt().block_on(async {
        tokio::time::timeout(
            Duration::from_secs(60),
            s.agent
                .plan_apply(&sha, wire, &BTreeMap::new(), &mut p, &mut refusals),
        )
        .await
        .expect("the plan ends")
    });
    // the engine is unreachable here: whatever the later steps say, never the signature
    refusals.extend(res.err());
    for r in &refusals {
        assert!(
            !matches!(
                r.code,
                RefusalCode::BundleSignatureInvalid
                    | RefusalCode::StatementRefused
                    | RefusalCode::BundleExpiredRefused
            ),
            "{r}"
        );
    }
    assert_eq!(p.signed_by.as_deref(), Some(KEY_ID));
    assert_eq!(p.desired.serial, Some(9));
    // a plan never raises the mark
    assert!(!s.agent.cfg.high_water_path().exists());
    assert_eq!(s.agent.state.high_water, None);
}

#[test]
fn plan_and_apply_judge_through_the_same_function() {
    let mut s = signed_box();
    let (sha, wire) = statement_signed(&s.key, FILES, 9);
    let v = s.agent.verify_bundle(wire, &sha).unwrap();
    assert_eq!(v.signed_by.as_deref(), Some(KEY_ID));
    assert_eq!(v.bundle.statement.as_ref().map(|x| x.serial), Some(9));
    assert_eq!(v.raise.as_ref().map(|h| h.serial), Some(9));
    // verifying writes nothing; the apply's fetch writes the mark
    assert!(!s.agent.cfg.high_water_path().exists());
    let (_, body) = statement_signed_body(&s.key, FILES, 9);
    s.agent
        .c
        .tenancy
        .bundles
        .borrow_mut()
        .insert(sha.clone(), body.to_string());
    let b = rt().block_on(s.agent.fetch_bundle(&sha)).unwrap();
    assert_eq!(b.statement.map(|x| x.serial), Some(9));
    let mark: statement::HighWater =
        serde_json::from_slice(&std::fs::read(s.agent.cfg.high_water_path()).unwrap()).unwrap();
    assert_eq!(mark.serial, 9);
    // the plan of the same bundle now sees the mark the apply raised (same serial, same sha)
    let (_, wire) = statement_signed(&s.key, FILES, 9);
    assert!(s.agent.verify_bundle(wire, &sha).is_ok());
    // and refuses what the apply refuses: a jump past the bound, a statement from the future
    let far: &[(&str, &str)] = &[
        ("bundle.json", "{\"serial\": 2000000}\n"),
        ("compose.yaml", "services: {}\n"),
    ];
    let (far_sha, wire) = statement_signed(&s.key, far, 2_000_000);
    assert_eq!(
        s.agent.verify_bundle(wire, &far_sha).err().unwrap().code,
        RefusalCode::StatementSerialJump
    );
}

#[test]
fn no_bundle_byte_is_parsed_before_its_sha_and_signature_are_checked() {
    let s = signed_box();
    // bundle.json that no parser accepts: signed by another key, the refusal is the
    // signature's (the parse is never reached)
    let bad: &[(&str, &str)] = &[("bundle.json", "{not json"), ("compose.yaml", "x")];
    let other = ed25519_dalek::SigningKey::from_bytes(&[8; 32]);
    let (sha, wire) = statement_signed(&other, bad, 9);
    let r = s.agent.verify_bundle(wire, &sha).err().unwrap();
    assert_eq!(r.code, RefusalCode::BundleSignatureInvalid, "{r}");
    // signed properly, but the files are not the ones the statement names: the sha's refusal,
    // still before bundle.json is parsed
    let (sha, mut wire) = statement_signed(&s.key, bad, 9);
    wire.files[0].content_b64 = B64.encode("{also not json");
    let r = s.agent.verify_bundle(wire, &sha).err().unwrap();
    assert_eq!(r.code, RefusalCode::BundleShaMismatch, "{r}");
    // a signed statement that names another sha: refused from the statement alone
    let (_, wire) = statement_signed(&s.key, bad, 9);
    let r = s.agent.verify_bundle(wire, &"00".repeat(32)).err().unwrap();
    assert_eq!(r.code, RefusalCode::StatementRefused, "{r}");
    assert!(r.detail.starts_with("sha ("), "{r}");
    // only with every check passed does the parser see it
    let (sha, wire) = statement_signed(&s.key, bad, 9);
    let r = s.agent.verify_bundle(wire, &sha).err().unwrap();
    assert_eq!(r.code, RefusalCode::BundleInvalid, "{r}");
}

/// Issue 41: every first-pass refusal reaches the plan, each with the service, the key, the
/// rule and what lifts it; and no refusal quotes the plan's scratch copy.
#[test]
fn the_plan_lists_every_refusal_with_where_it_was_found_and_what_lifts_it() {
    let mut s = signed_box();
    let files: &[(&str, &str)] = &[
        ("bundle.json", "{\"serial\": 9}\n"),
        (
            "compose.yaml",
            "services:\n  api:\n    build: .\n  web:\n    image: x\n    container_name: monky-b-web\n    privileged: true\n",
        ),
    ];
    let (sha, wire) = statement_signed(&s.key, files, 9);
    let mut p = Plan::default();
    let mut refusals = Vec::new();
    let res = rt().block_on(async {
        tokio::time::timeout(
            Duration::from_secs(60),
            s.agent
                .plan_apply(&sha, wire, &BTreeMap::new(), &mut p, &mut refusals),
        )
        .await
        .expect("the plan ends")
    });
    refusals.extend(res.err());
    let listed: Vec<PlanRefusal> = refusals.into_iter().map(PlanRefusal::of).collect();
    let find = |code: &str| {
        listed
            .iter()
            .find(|r| r.code == code)
            .unwrap_or_else(|| panic!("{code} not in {listed:#?}"))
    };
    let b = find("BUILD_REFUSED");
    assert_eq!(
        (b.service.as_deref(), b.key.as_deref()),
        (Some("api"), Some("build"))
    );
    assert!(
        b.lift.contains("image:") && b.rule.contains("POLICY.md"),
        "{b:?}"
    );
    let n = find("NAME_REFUSED");
    assert_eq!(
        (n.service.as_deref(), n.key.as_deref()),
        (Some("web"), Some("container_name"))
    );
    assert!(n.lift.contains("monky-test-web"), "{n:?}");
    let pr = find("PRIVILEGED_REFUSED");
    assert_eq!(pr.key.as_deref(), Some("privileged"));
    assert!(pr.lift.contains("permit_privileged"), "{pr:?}");
    // the scratch copy, spelled as written or canonical, is `./` in whatever quotes it
    let scratch = s.agent.cfg.staging_dir().join("plan-7");
    std::fs::create_dir_all(&scratch).unwrap();
    let d = scratch.display();
    let r = Refusal::new(
        RefusalCode::BindSourceRefused,
        format!("{d}/data: writable, and holds {d}, which compose and the agent read"),
    );
    let r = apply::scratch_roots(&scratch)
        .iter()
        .fold(r, |r, root| r.relative_to(root));
    assert_eq!(
        r.detail,
        "./data: writable, and holds the release directory (./), which compose and the agent read"
    );
}

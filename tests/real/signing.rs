//! Signed bundles end to end (PROTOCOL 0.3): a box with `bundle_signing_keys` applies only
//! bundles signed by one of them — over the sha it computed itself — and refuses everything
//! else before the lease, before any OpenBao read, with nothing written outside staging.

use std::process::Command;

use crate::common::*;
use monky_test_tenancy::{bundle_statement, release_public_key, release_sign, unix_now};
use serde_json::json;

const A: [u8; 32] = [7; 32];
const B: [u8; 32] = [8; 32];
const C: [u8; 32] = [9; 32];

fn keys_config(keys: &[(&str, &[u8; 32])]) -> String {
    let mut s = String::from("bundle_signing_keys:\n");
    for (id, seed) in keys {
        s.push_str(&format!("  {id}: \"{}\"\n", release_public_key(seed)));
    }
    s
}

fn assert_refused_untouched(s: &Stack, r: &Run, want: &str) {
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed");
    let d = rep["detail"].as_str().unwrap_or("");
    assert!(d.starts_with("BUNDLE_SIGNATURE_INVALID:"), "{d}");
    assert!(d.contains(want), "want {want:?} in {d:?}");
    assert!(
        s.tenancy.leases().is_empty(),
        "leased for an unsigned bundle"
    );
    assert!(s.bao.secret_reads().is_empty(), "OpenBao read");
    let rel = s.state_dir().join("releases");
    let n = std::fs::read_dir(&rel).map(|d| d.count()).unwrap_or(0);
    assert_eq!(n, 0, "a release was written");
    assert!(!s.state_dir().join("current").exists());
    assert!(s.containers().is_empty());
}

#[test]
fn only_bundles_signed_by_a_configured_key_apply() {
    require_docker();
    let mut s = Stack::new("signed", Flavour::V2);
    s.set_extra(&keys_config(&[("release-2026", &A)]));
    s.give_bootstrap();
    let st = s.cmd(&["status"]);
    assert!(
        st.stdout.contains("required, by one of: release-2026"),
        "{st:?}"
    );
    let mut serial = 1;
    let mut next = |s: &Stack| {
        serial += 1;
        let b = web_bundle(s, serial, &format!("v{serial}"), "signed-secret-value");
        s.tenancy.set_bundle(&s.env, b.files())
    };
    // no signature
    next(&s);
    assert_refused_untouched(&s, &s.tick(), "no signature");
    // signed, but by another key under the trusted id
    s.tenancy.sign_bundles_with(&[("release-2026", B)]);
    next(&s);
    assert_refused_untouched(&s, &s.tick(), "seen: release-2026");
    // a valid signature by a key this box does not list
    s.tenancy.sign_bundles_with(&[("release-2030", C)]);
    next(&s);
    assert_refused_untouched(&s, &s.tick(), "release-2030 (not trusted here)");
    // the right key, over another sha
    let sha = next(&s);
    let other = "0".repeat(64);
    assert_ne!(sha, other);
    s.tenancy.set_raw_signatures(Some(json!([
        {"key_id": "release-2026", "alg": "ed25519", "sig": release_sign(&A, &other)}
    ])));
    assert_refused_untouched(&s, &s.tick(), "seen: release-2026");
    // malformed base64, a wrong alg
    s.tenancy.set_raw_signatures(Some(json!([
        {"key_id": "release-2026", "alg": "ed25519", "sig": "not//base64!!"},
        {"key_id": "release-2026", "alg": "rsa", "sig": release_sign(&A, &sha)}
    ])));
    assert_refused_untouched(&s, &s.tick(), "seen: release-2026");
    // the release pipeline's signature: applies
    s.tenancy.set_raw_signatures(None);
    s.tenancy.sign_bundles_with(&[("release-2026", A)]);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["result"], "applied");
    assert!(r.stderr.contains("signed by release-2026"), "{r:?}");
    // rotation: two keys trusted at once, the pipeline moved to the new one
    s.set_extra(&keys_config(&[("release-2026", &A), ("release-2027", &B)]));
    s.tenancy.sign_bundles_with(&[("release-2027", B)]);
    let sha = next(&s);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha.as_str());
    assert_eq!(s.last_report()["result"], "applied");
}

#[test]
fn unsigned_bundles_apply_where_no_keys_are_configured() {
    require_docker();
    let s = Stack::new("unsigned", Flavour::V2);
    s.give_bootstrap();
    let st = s.cmd(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&st.stdout).unwrap();
    assert_eq!(v["bundle_signatures"]["required"], false, "{st:?}");
    let b = web_bundle(&s, 1, "u", "unsigned-secret-value");
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["result"], "applied");
}

/// The documented release-pipeline recipe (docs/OPERATIONS.md), with the openssl CLI, verifies
/// in the agent.
#[test]
fn the_openssl_recipe_signs_what_the_agent_verifies() {
    require_docker();
    let d = tempfile::tempdir().unwrap();
    let key = d.path().join("release.pem");
    let sh = |script: &str| {
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!("set -euo pipefail; {script}"))
            .env("KEY", &key)
            .output()
            .unwrap();
        assert!(o.status.success(), "{script}: {o:?}");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    sh("openssl genpkey -algorithm ed25519 -out \"$KEY\"");
    let public = sh("openssl pkey -in \"$KEY\" -pubout -outform DER | tail -c 32 | base64 -w0");
    let mut s = Stack::new("openssl", Flavour::V2);
    s.set_extra(&format!("bundle_signing_keys:\n  ci: \"{public}\"\n"));
    s.give_bootstrap();
    let b = web_bundle(&s, 1, "o", "openssl-secret-value");
    let sha = s.tenancy.set_bundle(&s.env, b.files());
    // pkeyutl signs Ed25519 only from a file (-rawin needs its size)
    let msg = d.path().join("sha.txt");
    std::fs::write(&msg, &sha).unwrap();
    let sig = sh(&format!(
        "openssl pkeyutl -sign -inkey \"$KEY\" -rawin -in {} | base64 -w0",
        msg.display()
    ));
    s.tenancy.set_raw_signatures(Some(
        json!([{"key_id": "ci", "alg": "ed25519", "sig": sig}]),
    ));
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["result"], "applied");
}

#[test]
fn a_bad_key_in_the_config_is_named() {
    let mut s = Stack::new("badkey", Flavour::V2);
    s.set_extra("bundle_signing_keys:\n  release-2026: \"AAAA\"\n");
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("bundle_signing_keys.release-2026"),
        "{r:?}"
    );
}

// ---- release statements (PROTOCOL 0.5, issue 33) -------------------------------------------

fn statements_config(keys: &[(&str, &[u8; 32])], require: bool) -> String {
    format!("{}require_statements: {require}\n", keys_config(keys))
}

/// A statement-mode refusal: the code, before any lease or OpenBao read, what ran still runs.
fn assert_statement_refused(
    s: &Stack,
    r: &Run,
    want: &str,
    leases: usize,
    ran: &[(String, String)],
) {
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed", "{rep}");
    let d = rep["detail"].as_str().unwrap_or("");
    assert!(d.starts_with(want), "want {want:?} at the start of {d:?}");
    assert_eq!(
        s.tenancy.leases().len(),
        leases,
        "a lease after a refused statement"
    );
    assert_eq!(s.containers(), ran, "what ran changed");
}

fn serve(s: &Stack, serial: u64, meta_extra: serde_json::Value) -> String {
    let mut b = web_bundle(s, serial, &format!("v{serial}"), "stated-secret-value");
    b.meta_extra = meta_extra;
    s.tenancy.set_bundle(&s.env, b.files())
}

/// Each attack on a bare-sha signature works with statements off (0.4 behaviour) and is
/// refused with them on: another environment's bundle, a statement whose serial is not
/// bundle.json's, a statement of another kind, an expired one, none at all; a benign signed
/// flow and a key rotation keep working.
#[test]
fn statements_bind_env_serial_kind_and_life() {
    require_docker();
    // off: the pipeline signed a render for env-other (bare sha); this box applies it
    let mut off = Stack::new("stmt-off", Flavour::V2);
    off.set_extra(&keys_config(&[("release-2026", &A)]));
    off.give_bootstrap();
    off.tenancy.sign_bundles_with(&[("release-2026", A)]);
    serve(&off, 1, json!({}));
    let r = off.tick();
    assert_eq!(
        r.code, 0,
        "with statements off a signature binds no box: {r:?}"
    );
    drop(off);

    let mut s = Stack::new("stmt-on", Flavour::V2);
    s.set_extra(&statements_config(&[("release-2026", &A)], true));
    s.give_bootstrap();
    s.tenancy.sign_bundles_with(&[("release-2026", A)]);
    // required and absent
    serve(&s, 1, json!({}));
    assert_statement_refused(&s, &s.tick(), "STATEMENT_REFUSED: missing", 0, &[]);
    // benign: a statement rendered by the pipeline for this env
    s.tenancy
        .auto_statements(Some(std::time::Duration::from_secs(3600)));
    let sha1 = serve(&s, 1, json!({}));
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains("serial 1 signed by release-2026"),
        "{r:?}"
    );
    let hw: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.state_dir().join("high-water.json")).unwrap())
            .unwrap();
    assert_eq!(
        (hw["serial"].as_u64(), hw["sha"].as_str()),
        (Some(1), Some(sha1.as_str()))
    );
    let ran = s.containers();
    let leases = s.tenancy.leases().len();
    let now = unix_now();
    type Render<'a> = Box<dyn Fn(&str) -> Vec<u8> + 'a>;
    let attacks: [(&str, Render); 4] = [
        (
            "STATEMENT_REFUSED: env_id",
            Box::new(|sha: &str| bundle_statement("env-other", sha, 2, now, now + 3600)),
        ),
        (
            "STATEMENT_REFUSED: serial (7 differs from bundle.json's 2)",
            Box::new(|sha: &str| bundle_statement(&s.env, sha, 7, now, now + 3600)),
        ),
        (
            "STATEMENT_REFUSED: kind",
            Box::new(|sha: &str| {
                let mut v: serde_json::Value =
                    serde_json::from_slice(&bundle_statement(&s.env, sha, 2, now, now + 3600))
                        .unwrap();
                v["kind"] = "monky-agent/1".into();
                serde_json::to_vec(&v).unwrap()
            }),
        ),
        (
            "BUNDLE_EXPIRED_REFUSED",
            Box::new(|sha: &str| bundle_statement(&s.env, sha, 2, now - 7200, now - 3600)),
        ),
    ];
    for (want, make) in attacks {
        let sha = serve(&s, 2, json!({}));
        s.tenancy.set_statement(&s.env, &sha, Some(make(&sha)));
        assert_statement_refused(&s, &s.tick(), want, leases, &ran);
        s.tenancy.set_statement(&s.env, &sha, None);
    }
    // rotation: both keys trusted, the pipeline moved to the new one
    s.set_extra(&statements_config(
        &[("release-2026", &A), ("release-2027", &B)],
        true,
    ));
    s.tenancy.sign_bundles_with(&[("release-2027", B)]);
    let sha3 = serve(&s, 3, json!({}));
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha3.as_str());
    assert!(
        r.stderr.contains("serial 3 signed by release-2027"),
        "{r:?}"
    );
}

/// A signed older render after a newer one — `allow_rollback` set, the statement fresh and
/// valid — applies with statements off and is refused with them on, also after `state.json`
/// was restored from a backup taken before the newer release; a rollback the pipeline wants
/// (the old content re-rendered under a new serial) applies.
#[test]
fn the_high_water_mark_refuses_a_signed_replay() {
    require_docker();
    for on in [false, true] {
        let mut s = Stack::new(if on { "hw-on" } else { "hw-off" }, Flavour::V2);
        s.set_extra(&statements_config(&[("release-2026", &A)], on));
        s.give_bootstrap();
        s.tenancy.sign_bundles_with(&[("release-2026", A)]);
        if on {
            s.tenancy
                .auto_statements(Some(std::time::Duration::from_secs(3600)));
        }
        let back = json!({"agent": {"allow_rollback": true}});
        serve(&s, 2, back.clone());
        assert_eq!(s.tick().code, 0);
        let backup = std::fs::read(s.state_dir().join("state.json")).unwrap();
        serve(&s, 3, json!({}));
        assert_eq!(s.tick().code, 0);
        let ran = s.containers();
        let leases = s.tenancy.leases().len();
        // tenancy serves release 2's signed render again (a fresh statement for it)
        serve(&s, 2, back.clone());
        let r = s.tick();
        if !on {
            assert_eq!(
                r.code, 0,
                "statements off: the signed old render applies: {r:?}"
            );
            continue;
        }
        assert_statement_refused(&s, &r, "ROLLBACK_REFUSED: serial 2 below 3", leases, &ran);
        // a restored older state file does not lower the mark
        std::fs::write(s.state_dir().join("state.json"), &backup).unwrap();
        let _ = std::fs::remove_file(s.state_dir().join("state.synced.json"));
        assert_eq!(
            s.state()["high_water"]["serial"],
            2,
            "the backup holds the old mark"
        );
        let r = s.tick();
        assert_statement_refused(&s, &r, "ROLLBACK_REFUSED: serial 2 below 3", leases, &ran);
        // the pipeline's rollback: release 2's content under serial 4
        serve(&s, 4, json!({}));
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
        assert_eq!(s.state()["high_water"]["serial"], 4);
    }
}

/// An expired statement never stops what runs: the heartbeat says STATEMENT_EXPIRED (a frozen
/// box is visible), and a new apply of an expired statement is refused.
#[test]
fn an_expired_statement_keeps_what_runs_and_says_so() {
    require_docker();
    let mut s = Stack::new("stmt-exp", Flavour::V2);
    s.set_extra(&statements_config(&[("release-2026", &A)], true));
    s.give_bootstrap();
    s.tenancy.sign_bundles_with(&[("release-2026", A)]);
    let sha = serve(&s, 1, json!({}));
    let now = unix_now();
    let expires = now + 20;
    s.tenancy.set_statement(
        &s.env,
        &sha,
        Some(bundle_statement(&s.env, &sha, 1, now, expires)),
    );
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["detail"], "", "not expired yet");
    let ran = s.containers();
    assert!(!ran.is_empty());
    let wait = (expires + 1 - unix_now()).max(0) as u64;
    std::thread::sleep(std::time::Duration::from_secs(wait));
    let r = s.tick();
    assert_eq!(r.code, 0, "what runs keeps running: {r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "applied");
    let d = rep["detail"].as_str().unwrap_or("");
    assert!(
        d.starts_with(&format!("STATEMENT_EXPIRED: {} expired ", &sha[..12])),
        "{d}"
    );
    assert_eq!(s.containers(), ran);
    // the same bundle again (a re-apply) is refused: its statement is past its life
    std::fs::remove_file(s.state_dir().join("state.json")).unwrap();
    let _ = std::fs::remove_file(s.state_dir().join("state.synced.json"));
    let leases = s.tenancy.leases().len();
    assert_statement_refused(&s, &s.tick(), "BUNDLE_EXPIRED_REFUSED", leases, &ran);
}

// ---- images pinned by digest (PROTOCOL 0.5, issue 33) ---------------------------------------

fn digest_compose(image: &str) -> String {
    format!(
        "services:\n  web:\n    image: {image}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"exec sleep 600\"]\n"
    )
}

/// The image id the project's `web` container runs.
fn running_image(s: &Stack) -> String {
    let ids = service_containers(s, "web");
    assert_eq!(ids.len(), 1, "{ids:?}");
    inspect_format(&ids[0], "{{.Image}}")
}

/// `reference`'s digest form as the registry serves it now (`name@sha256:…`).
fn registry_digest(reference: &str) -> String {
    docker(&["pull", "-q", reference]);
    let d = docker(&[
        "image",
        "inspect",
        "--format",
        "{{index .RepoDigests 0}}",
        reference,
    ]);
    docker(&["rmi", reference]);
    d
}

/// Mutable images (issue 33): with `require_image_digests` off, a tag moved in the registry
/// between two applies changes what runs. On, a tag is refused by the file pass and — with the
/// file passes off — by the engine guard; a pinned image keeps running the same bytes after the
/// tag moved, its digest is in the report, and an unknown digest fails the pull readably.
fn image_digests_pin_what_runs(f: Flavour) {
    require_docker();
    let mut made = Images(Vec::new());
    let name = format!("digest-{}-{f:?}", std::process::id()).to_lowercase();
    let tag = make_image(&name, 4, true, &mut made);
    let mut serial = 0;

    // off: the tag moves, what runs moves with it
    let off = bootstrapped("digest-off", f);
    let o = apply_plain(&off, &mut serial, &digest_compose(&tag), "on");
    assert_eq!(o.result, "applied", "{o:?}");
    let first = running_image(&off);
    make_image(&name, 4, true, &mut made);
    let o = apply_plain(&off, &mut serial, &digest_compose(&tag), "on");
    assert_eq!(o.result, "applied", "{o:?}");
    assert_ne!(
        running_image(&off),
        first,
        "digests off: a moved tag changes what runs"
    );
    drop(off);

    let mut on = bootstrapped("digest-on", f);
    on.set_extra("require_image_digests: true\n");
    let o = apply_plain(&on, &mut serial, &digest_compose(&tag), "on");
    assert_eq!(o.result, "failed", "{o:?}");
    assert_eq!(
        o.detail,
        format!("IMAGE_REFUSED: web {tag} (not pinned by digest)")
    );
    assert!(service_containers(&on, "web").is_empty());
    // the engine guard holds the rule alone (the file passes off)
    let o = apply_plain(&on, &mut serial, &digest_compose(&tag), "no-file");
    assert_eq!(o.result, "failed", "{o:?}");
    assert!(
        o.detail.starts_with("IMAGE_REFUSED: ") && o.detail.contains("(not pinned by digest)"),
        "{o:?}"
    );
    assert!(service_containers(&on, "web").is_empty());
    // pinned: applies, and keeps the same bytes after the tag moved
    let pinned = registry_digest(&tag);
    assert!(pinned.contains("@sha256:"), "{pinned}");
    let o = apply_plain(&on, &mut serial, &digest_compose(&pinned), "on");
    assert_eq!(o.result, "applied", "{o:?}");
    let runs = running_image(&on);
    let rep = on.last_report();
    assert_eq!(rep["containers"][0]["image"], pinned.as_str(), "{rep}");
    make_image(&name, 4, true, &mut made);
    let o = apply_plain(&on, &mut serial, &digest_compose(&pinned), "on");
    assert_eq!(o.result, "applied", "{o:?}");
    assert_eq!(
        running_image(&on),
        runs,
        "digests on: a moved tag changes nothing"
    );
    // a digest the registry cannot serve: a readable failure, what runs stays
    let (repo, _) = pinned.split_once('@').unwrap();
    let unknown = format!("{repo}@sha256:{}", "0".repeat(64));
    let o = apply_plain(&on, &mut serial, &digest_compose(&unknown), "on");
    assert_eq!(o.result, "failed", "{o:?}");
    assert!(o.detail.starts_with("COMPOSE_PULL_FAILED"), "{o:?}");
    assert_eq!(running_image(&on), runs);
}

all_composes!(image_digests_pin_what_runs);

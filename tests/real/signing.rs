//! Signed bundles end to end (PROTOCOL 0.3): a box with `bundle_signing_keys` applies only
//! bundles signed by one of them — over the sha it computed itself — and refuses everything
//! else before the lease, before any OpenBao read, with nothing written outside staging.

use std::process::Command;

use crate::common::*;
use monky_test_tenancy::{release_public_key, release_sign};
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

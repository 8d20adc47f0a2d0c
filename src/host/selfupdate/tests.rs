use super::*;

#[test]
fn versions_order_as_dpkg_does() {
    use Ordering::*;
    for (a, b, want) in [
        ("0.4.1", "0.4.0", Greater),
        ("0.4.10", "0.4.9", Greater),
        ("0.4.0", "0.4.0", Equal),
        ("0.4.0~rc1", "0.4.0", Less),
        ("0.4.0-1", "0.4.0", Greater),
        ("1.0", "1.0.0", Less),
        ("0.04", "0.4", Equal),
        ("0.4a", "0.4+", Less),
        ("0.3.0", "0.10.0", Less),
    ] {
        assert_eq!(cmp_versions(a, b), want, "{a} vs {b}");
        assert_eq!(cmp_versions(b, a), want.reverse(), "{b} vs {a}");
    }
}

#[test]
fn versions_are_path_safe_and_downgrades_need_the_permit() {
    for bad in [
        "",
        "../0.4",
        "0.4/x",
        "v0.4",
        "1:0.4",
        "0.4 ",
        &"1".repeat(65),
    ] {
        assert!(!valid_version(bad), "{bad:?}");
        assert!(judge_version(bad, "0.3.0", true).is_err());
    }
    assert!(judge_version("0.4.0", "0.3.0", false).is_ok());
    let e = judge_version("0.2.9", "0.3.0", false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "0.2.9 is older than the running 0.3.0 (permit_agent_downgrade is false)"
    );
    assert!(judge_version("0.2.9", "0.3.0", true).is_ok());
}

#[test]
fn a_package_must_match_its_offer_and_be_signed() {
    use base64::Engine;
    use ed25519_dalek::{Signer, SigningKey};
    let k = SigningKey::from_bytes(&[5; 32]);
    let pubk = base64::engine::general_purpose::STANDARD.encode(k.verifying_key().as_bytes());
    let keys = Keys::parse_key(
        "agent_signing_keys",
        &std::collections::BTreeMap::from([("agent-2026".into(), pubk)]),
    )
    .unwrap();
    let sha = "ab".repeat(32);
    let sig = |m: &str| SignatureWire {
        key_id: "agent-2026".into(),
        alg: "ed25519".into(),
        sig: base64::engine::general_purpose::STANDARD.encode(k.sign(m.as_bytes()).to_bytes()),
    };
    assert_eq!(
        judge_package(&keys, &sha, &sha, &[sig(&sha)], None).unwrap(),
        "agent-2026"
    );
    let e = judge_package(&keys, &sha, &"cd".repeat(32), &[sig(&sha)], None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sha256 mismatch: offered abababababab, package is cdcdcdcdcdcd"
    );
    let e = judge_package(&keys, &sha, &sha, &[], None).unwrap_err();
    assert!(
        matches!(e, PackageError::Signature(SignatureError::Missing)),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "signature: no signature; this box requires one by a configured key"
    );
    let e = judge_package(&keys, &sha, &sha, &[sig(&"cd".repeat(32))], None).unwrap_err();
    assert!(e.to_string().ends_with("seen: agent-2026"), "{e}");
    assert!(judge_package(&keys, "zz", "zz", &[], None).is_err());
    // no keys: nothing verifies (self-update off is decided before, never "unsigned ok")
    assert!(judge_package(&Keys::default(), &sha, &sha, &[sig(&sha)], None).is_err());
}

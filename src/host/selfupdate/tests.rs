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

/// dpkg's full ordering (issue 40.5), each row checked with `dpkg --compare-versions`:
/// epochs dominate, the revision counts (none is "", below any digit), `~` sorts before
/// everything, even the end.
#[test]
fn versions_order_as_dpkg_does_with_epochs_and_revisions() {
    use Ordering::*;
    for (a, b, want) in [
        ("0.5.0", "0.5.0-2", Less),
        ("0.5.0-1", "0.5.0-2", Less),
        ("0.5.0-2", "0.5.0-10", Less),
        ("1.0", "1.0-0", Equal),
        ("0.5.0-1", "0.5.0-1.1", Less),
        ("0.5.0-1~bpo", "0.5.0-1", Less),
        ("1.0-a", "1.0-1", Greater),
        // the last '-' splits: the upstream may hold '-'
        ("1.0-1-2", "1.0-1-10", Less),
        ("1:0.1", "9.9", Greater),
        ("2:1", "10:0", Less),
        ("0:1.0", "1.0", Equal),
        ("00:1", "0:1", Equal),
        ("1:0.5.0", "0.9.9-9", Greater),
        ("1.0~rc1", "1.0", Less),
        ("1.0~~", "1.0~", Less),
        ("1.0~", "1.0", Less),
        ("1.0", "1.0+", Less),
        ("1.0a", "1.0+", Less),
        ("0.5.0~rc1-1", "0.5.0-1", Less),
    ] {
        assert_eq!(cmp_versions(a, b), want, "{a} vs {b}");
        assert_eq!(cmp_versions(b, a), want.reverse(), "{b} vs {a}");
    }
    // a running version with an epoch is ordered; an offered one is still refused (':' stays
    // out of URLs and file names)
    assert!(!valid_version("1:0.6.0"));
    let e = judge_version("0.9.0", "1:0.5.0-1", false).unwrap_err();
    assert!(matches!(e, PackageError::Downgrade { .. }), "{e}");
    assert!(judge_version("0.5.0-2", "0.5.0-1", false).is_ok());
    assert!(judge_version("0.5.0-1", "0.5.0-2", false).is_err());
}

/// `bind_statement` holds a verified statement to the bytes received, the label and the box's
/// architecture, with no package parser involved.
#[test]
fn a_statement_is_bound_to_the_bytes_before_any_parser() {
    let sha = "ab".repeat(32);
    let now = 2_000_000_000_i64;
    let st = |sha256: &str, version: &str| {
        serde_json::to_vec(&serde_json::json!({
            "kind": monky_boundary::statement::AGENT_KIND, "version": version,
            "arch": "amd64", "sha256": sha256,
            "issued_at": monky_boundary::statement::rfc3339(now - 5),
            "expires_at": monky_boundary::statement::rfc3339(now + 5),
        }))
        .unwrap()
    };
    let now = u64::try_from(now).unwrap();
    assert!(bind_statement(
        &st(&sha, "0.5.1"),
        "0.5.1",
        "amd64",
        &sha,
        now,
        &Default::default()
    )
    .is_ok());
    let e = bind_statement(
        &st(&"cd".repeat(32), "0.5.1"),
        "0.5.1",
        "amd64",
        &sha,
        now,
        &Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("STATEMENT_REFUSED: sha256 ("), "{e}");
    let e = bind_statement(
        &st(&sha, "0.5.0"),
        "0.5.1",
        "amd64",
        &sha,
        now,
        &Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("STATEMENT_REFUSED: version ("), "{e}");
    let e = bind_statement(
        &st(&sha, "0.5.1"),
        "0.5.1",
        "arm64",
        &sha,
        now,
        &Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("STATEMENT_REFUSED: arch ("), "{e}");
    let e = bind_statement(
        &st(&sha, "0.5.1"),
        "0.5.1",
        "amd64",
        &sha,
        now + 10,
        &Default::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("BUNDLE_EXPIRED_REFUSED: "), "{e}");
}

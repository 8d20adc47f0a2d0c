use super::*;

const SHA: &str = "ab41ab41ab41ab41ab41ab41ab41ab41ab41ab41ab41ab41ab41ab41ab41ab41";
const NOW: i64 = 1_796_500_000;

fn facts<'a>(hw: Option<&'a HighWater>) -> BundleFacts<'a> {
    BundleFacts {
        env_id: "env-qa-02",
        sha: SHA,
        serial: 42,
        high_water: hw,
        now: NOW,
    }
}

fn stmt(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut v: serde_json::Value =
        serde_json::from_slice(&render_bundle("env-qa-02", SHA, 42, NOW - 60, NOW + 3600)).unwrap();
    edit(&mut v);
    serde_json::to_vec(&v).unwrap()
}

fn rejected(bytes: &[u8], hw: Option<&HighWater>) -> String {
    check_bundle(bytes, &facts(hw)).unwrap_err().to_string()
}

#[test]
fn a_rendered_statement_passes() {
    let s = check_bundle(&stmt(|_| {}), &facts(None)).unwrap();
    assert_eq!(
        (s.serial, s.sha.as_str(), s.expires_at),
        (42, SHA, NOW + 3600)
    );
    // the same serial again, for the same sha: a retry or a re-check
    let hw = HighWater {
        serial: 42,
        sha: SHA.into(),
    };
    assert!(check_bundle(&stmt(|_| {}), &facts(Some(&hw))).is_ok());
}

#[test]
fn every_field_is_checked_and_named() {
    type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| v["kind"] = "monky-agent/1".into()),
            "STATEMENT_REFUSED: kind (\"monky-agent/1\" is not monky-bundle/1)",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("kind");
            }),
            "STATEMENT_REFUSED: kind (missing)",
        ),
        (
            Box::new(|v| v["env_id"] = "env-prod-01".into()),
            "STATEMENT_REFUSED: env_id (\"env-prod-01\" is not this box's env-qa-02)",
        ),
        (
            Box::new(|v| v["sha"] = "cd".repeat(32).into()),
            "STATEMENT_REFUSED: sha (",
        ),
        (
            Box::new(|v| v["serial"] = 41.into()),
            "STATEMENT_REFUSED: serial (41 differs from bundle.json's 42)",
        ),
        (
            Box::new(|v| v["serial"] = "42".into()),
            "STATEMENT_REFUSED: serial (not a whole number)",
        ),
        (
            Box::new(|v| v["serial"] = (-1).into()),
            "STATEMENT_REFUSED: serial (not a whole number)",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("serial");
            }),
            "STATEMENT_REFUSED: serial (missing)",
        ),
        (
            Box::new(|v| v["issued_at"] = "yesterday".into()),
            "STATEMENT_REFUSED: issued_at (not an RFC 3339 time)",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("expires_at");
            }),
            "STATEMENT_REFUSED: expires_at (missing)",
        ),
        (
            Box::new(|v| v["expires_at"] = v["issued_at"].clone()),
            "STATEMENT_REFUSED: expires_at (not after issued_at)",
        ),
        (
            Box::new(|v| v["expires_at"] = rfc3339(NOW).into()),
            "BUNDLE_EXPIRED_REFUSED: ab41ab41ab41 expired 2026-12-05T19:46:40Z",
        ),
    ];
    for (edit, want) in cases {
        let got = rejected(&stmt(edit), None);
        assert!(got.starts_with(want), "{got} / {want}");
    }
    assert_eq!(
        rejected(b"[1]", None),
        "STATEMENT_REFUSED: statement (not a JSON object)"
    );
    assert_eq!(
        rejected(b"", None),
        "STATEMENT_REFUSED: statement (not a JSON object)"
    );
}

#[test]
fn the_high_water_mark_is_never_lowered() {
    let hw = HighWater {
        serial: 43,
        sha: "ef".repeat(32),
    };
    assert_eq!(
        rejected(&stmt(|_| {}), Some(&hw)),
        "ROLLBACK_REFUSED: serial 42 below 43"
    );
    let same = HighWater {
        serial: 42,
        sha: "ef".repeat(32),
    };
    assert!(rejected(&stmt(|_| {}), Some(&same)).starts_with("ROLLBACK_REFUSED: serial 42 equals"));
    let a = HighWater {
        serial: 5,
        sha: "a".into(),
    };
    let b = HighWater {
        serial: 7,
        sha: "b".into(),
    };
    assert_eq!(
        HighWater::max(Some(a.clone()), Some(b.clone())),
        Some(b.clone())
    );
    assert_eq!(
        HighWater::max(Some(b.clone()), Some(a.clone())),
        Some(b.clone())
    );
    assert_eq!(HighWater::max(None, Some(a.clone())), Some(a));
    // a rollback below the mark is refused even when also expired: the older claim is named
    let old = stmt(|v| v["expires_at"] = rfc3339(NOW - 1).into());
    assert!(rejected(&old, Some(&hw)).starts_with("ROLLBACK_REFUSED"));
}

#[test]
fn decode_is_bounded_and_exact() {
    let bytes = stmt(|_| {});
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
    assert_eq!(decode(&b64).unwrap(), bytes);
    assert!(decode("%%").unwrap_err().to_string().contains("not base64"));
    let big = base64::engine::general_purpose::STANDARD.encode(vec![b' '; MAX_BYTES + 1]);
    assert!(decode(&big)
        .unwrap_err()
        .to_string()
        .contains("over 4096 bytes"));
}

#[test]
fn agent_statements_bind_version_arch_and_hash() {
    let pkg = "12".repeat(32);
    let good = serde_json::json!({"kind": AGENT_KIND, "version": "0.5.1", "arch": "amd64",
        "sha256": pkg, "issued_at": rfc3339(NOW - 5), "expires_at": rfc3339(NOW + 5)});
    let f = AgentFacts {
        sha256: &pkg,
        version: "0.5.1",
        arch: "amd64",
        now: NOW,
    };
    assert!(check_agent(&serde_json::to_vec(&good).unwrap(), &f).is_ok());
    let at_now = rfc3339(NOW);
    for (k, v, want) in [
        (
            "version",
            "0.4.0",
            "STATEMENT_REFUSED: version (\"0.4.0\" is not the package's 0.5.1)",
        ),
        (
            "arch",
            "arm64",
            "STATEMENT_REFUSED: arch (\"arm64\" is not the package's amd64)",
        ),
        ("kind", BUNDLE_KIND, "STATEMENT_REFUSED: kind"),
        ("sha256", "00", "STATEMENT_REFUSED: sha256"),
        (
            "expires_at",
            at_now.as_str(),
            "BUNDLE_EXPIRED_REFUSED: agent 0.5.1 expired",
        ),
    ] {
        let mut s = good.clone();
        s[k] = v.into();
        let e = check_agent(&serde_json::to_vec(&s).unwrap(), &f)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(want), "{e} / {want}");
    }
}

/// A statement for `serial` (bundle.json says the same), judged against `hw`.
fn judged(serial: u64, hw: Option<&HighWater>, l: &Limits) -> Result<BundleStatement, Refusal> {
    let bytes = render_bundle("env-qa-02", SHA, serial, NOW - 60, NOW + 3600);
    let f = BundleFacts {
        serial,
        ..facts(hw)
    };
    check_bundle_within(&bytes, &f, l)
}

#[test]
fn a_serial_cannot_jump_past_the_bound() {
    let l = Limits::default();
    let hw = HighWater {
        serial: 42,
        sha: "cd".repeat(32),
    };
    // exactly the bound is accepted, one above is its own refusal
    assert!(judged(42 + DEFAULT_SERIAL_MAX_JUMP, Some(&hw), &l).is_ok());
    let e = judged(43 + DEFAULT_SERIAL_MAX_JUMP, Some(&hw), &l).unwrap_err();
    assert_eq!(e.code, RefusalCode::StatementSerialJump);
    assert_eq!(
        e.to_string(),
        "STATEMENT_SERIAL_JUMP: serial 1000043 is more than 1000000 above the high-water mark 42"
    );
    // a configured bound is the one used
    let tight = Limits {
        serial_max_jump: 10,
        ..l
    };
    assert!(judged(52, Some(&hw), &tight).is_ok());
    assert_eq!(
        judged(53, Some(&hw), &tight).unwrap_err().code,
        RefusalCode::StatementSerialJump
    );
    // with no mark yet the bound is absolute: 2^53
    assert!(judged(FIRST_SERIAL_CAP, None, &l).is_ok());
    let e = judged(FIRST_SERIAL_CAP + 1, None, &l).unwrap_err();
    assert_eq!(e.code, RefusalCode::StatementSerialJump);
    assert!(e.detail.contains("no high-water mark yet"), "{e}");
    // check_bundle judges with the default limits
    let far = HighWater {
        serial: 1,
        sha: "cd".repeat(32),
    };
    assert!(check_bundle(&stmt(|_| {}), &facts(Some(&far))).is_ok());
    let bytes = render_bundle("env-qa-02", SHA, u64::MAX, NOW - 60, NOW + 3600);
    let f = BundleFacts {
        serial: u64::MAX,
        ..facts(Some(&far))
    };
    assert_eq!(
        check_bundle(&bytes, &f).unwrap_err().code,
        RefusalCode::StatementSerialJump
    );
}

#[test]
fn a_serial_of_u64_max_never_locks_the_box() {
    let l = Limits::default();
    for hw in [
        None,
        Some(HighWater {
            serial: 7,
            sha: SHA.into(),
        }),
        Some(HighWater {
            serial: FIRST_SERIAL_CAP,
            sha: SHA.into(),
        }),
    ] {
        let e = judged(u64::MAX, hw.as_ref(), &l).unwrap_err();
        assert_eq!(e.code, RefusalCode::StatementSerialJump, "{hw:?}: {e}");
    }
    // a mark already near the end (accepted before the bound existed): the bound saturates,
    // it does not wrap round and refuse everything
    let end = HighWater {
        serial: u64::MAX - 5,
        sha: "cd".repeat(32),
    };
    assert!(judged(u64::MAX, Some(&end), &l).is_ok());
    // the mark is not touched by a refusal: a normal next release still goes
    assert!(judged(
        8,
        Some(&HighWater {
            serial: 7,
            sha: SHA.into()
        }),
        &l
    )
    .is_ok());
}

#[test]
fn a_statement_from_the_future_is_refused_within_the_skew_accepted() {
    let l = Limits::default();
    let at = |issued: i64| {
        let bytes = render_bundle("env-qa-02", SHA, 42, issued, issued + 86_400);
        check_bundle_within(&bytes, &facts(None), &l)
    };
    // within the allowance (a clock a few minutes behind the pipeline's)
    assert!(at(NOW + 1).is_ok());
    assert!(at(NOW + 300).is_ok());
    let e = at(NOW + 301).unwrap_err();
    assert_eq!(e.code, RefusalCode::StatementFromFuture);
    assert_eq!(
        e.to_string(),
        format!(
            "STATEMENT_FROM_FUTURE: issued_at {} is 301 s ahead of this box's clock (allowance 300 s)",
            rfc3339(NOW + 301)
        )
    );
    // 2099
    let e = at(4_070_908_800).unwrap_err();
    assert_eq!(e.code, RefusalCode::StatementFromFuture);
    // the allowance is configurable, 0 included
    let strict = Limits {
        clock_skew_s: 0,
        ..l
    };
    let bytes = render_bundle("env-qa-02", SHA, 42, NOW + 1, NOW + 3600);
    assert_eq!(
        check_bundle_within(&bytes, &facts(None), &strict)
            .unwrap_err()
            .code,
        RefusalCode::StatementFromFuture
    );
    let bytes = render_bundle("env-qa-02", SHA, 42, NOW, NOW + 3600);
    assert!(check_bundle_within(&bytes, &facts(None), &strict).is_ok());
}

#[test]
fn agent_statements_from_the_future_are_refused_too() {
    let pkg = "12".repeat(32);
    let f = AgentFacts {
        sha256: &pkg,
        version: "0.5.1",
        arch: "amd64",
        now: NOW,
    };
    let at = |issued: i64| {
        serde_json::to_vec(&serde_json::json!({"kind": AGENT_KIND, "version": "0.5.1",
            "arch": "amd64", "sha256": pkg, "issued_at": rfc3339(issued),
            "expires_at": rfc3339(issued + 86_400)}))
        .unwrap()
    };
    assert!(check_agent(&at(NOW + 300), &f).is_ok());
    let e = check_agent(&at(NOW + 301), &f).unwrap_err();
    assert_eq!(e.code, RefusalCode::StatementFromFuture);
    let e = check_agent(&at(4_070_908_800), &f).unwrap_err();
    assert_eq!(e.code, RefusalCode::StatementFromFuture);
    let wide = Limits {
        clock_skew_s: 3600,
        ..Limits::default()
    };
    assert!(check_agent_within(&at(NOW + 3000), &f, &wide).is_ok());
}

#[test]
fn binding_comes_before_the_bundle_is_read() {
    // kind, env and sha are judged from the signed bytes alone (no bundle.json needed)
    let ok = bind_bundle(&stmt(|_| {}), "env-qa-02", SHA).unwrap();
    assert!(ok.judge(&facts(None), &Limits::default()).is_ok());
    let e = bind_bundle(&stmt(|_| {}), "env-qa-02", &"cd".repeat(32)).unwrap_err();
    assert!(e.to_string().starts_with("STATEMENT_REFUSED: sha ("), "{e}");
    let e = bind_bundle(&stmt(|_| {}), "env-prod-01", SHA).unwrap_err();
    assert!(
        e.to_string().starts_with("STATEMENT_REFUSED: env_id ("),
        "{e}"
    );
    // and the judge holds the claim to the sha computed later
    let claim = bind_bundle(&stmt(|_| {}), "env-qa-02", SHA).unwrap();
    let other = "cd".repeat(32);
    let f = BundleFacts {
        sha: &other,
        ..facts(None)
    };
    let e = claim.judge(&f, &Limits::default()).unwrap_err();
    assert!(e.to_string().starts_with("STATEMENT_REFUSED: sha ("), "{e}");
}

use super::*;

#[test]
fn masks_token_shapes() {
    let t = "token s.abcdefghijklmnopqrstuvwxyz hvs.CAESIabcdefghijklmnopqrstuv jwt eyJhbGciOi.eyJzdWIiOiIx.c2ln \
             Authorization: Bearer abc.def.ghijklmnop https://robot:pa55word@reg.example/v2 {\"auth\": \"cm9ib3Q6cA==\"}";
    let r = redact(t);
    for bad in [
        "abcdefghijklmnopqrstuvwxyz",
        "CAESI",
        "eyJzdWIiOiIx",
        "ghijklmnop",
        "pa55word",
        "cm9ib3Q6cA",
    ] {
        assert!(!r.contains(bad), "{bad} leaked in {r}");
    }
    assert!(r.contains("https://***@reg.example"), "{r}");
}

#[test]
fn the_prefilter_never_skips_a_pattern_that_matches() {
    let samples = [
        "checkin: action=none desired=a48dfc43fd2b applied=a48dfc43fd2b",
        "s.abcdefghijklmnopqrstuvwxyz",
        "x hvr.ABCDEFGHIJKLMNOPQRST_- y",
        "eyJa1234.b12345.c",
        "BeArEr abcdefgh12345678",
        "authorization:\tBASIC dXNlcjpwYXNz",
        "{\"AUTH\" :  \"x\"}",
        "naïve s.abcdefghijklmnopqrstuvwxyz bearer ſecret",
        "baſic abcdefgh12345678",
        "",
        "....................................",
    ];
    for t in samples {
        for i in 0..PATTERNS.len() {
            if pattern(i).is_match(t) {
                assert!(may_hold(i, t), "pattern {i} matches {t:?} but was skipped");
            }
        }
    }
    assert!(!may_hold(0, "version 0.4.0 (abc)"));
    assert!(!may_hold(2, "checkin: action=none"));
}

#[test]
fn masks_registered_values_and_encodings() {
    register("sup3r-s3cret\"quote");
    let r = redact("value sup3r-s3cret\"quote json sup3r-s3cret\\\"quote");
    assert!(!r.contains("sup3r"), "{r}");
    register("hunter22");
    use base64::Engine;
    let b = base64::engine::general_purpose::STANDARD.encode("hunter22");
    assert!(!redact(&format!("x {b} y")).contains(&b));
    register("ab");
    assert_eq!(redact("ab cd"), "ab cd");
    let v = "p@ss/w?rd+$x>~";
    register(v);
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    for shape in [
        STANDARD_NO_PAD.encode(v),
        URL_SAFE_NO_PAD.encode(v),
        hex::encode(v),
        "p%40ss%2Fw%3Frd%2B%24x%3E~".to_string(),
        "p@ss/w?rd+$$x>~".to_string(),
    ] {
        let r = redact(&format!("<{shape}>"));
        assert!(!r.contains(&shape), "{shape} leaked: {r}");
    }
}

#[test]
fn a_mask_cannot_complete_a_value() {
    // `x` + the mask of `zz9z` spells the secret `x***` (same length: `x***` is tried first)
    register("x***");
    register("zz9z");
    let r = redact("xzz9z");
    assert!(!r.contains("x***"), "{r}");
}

/// The secret as one of the shapes it reaches text in: `.env` quoting, composites, JSON,
/// URLs, base64 of `user:password`, compose's `$$`.
fn placed(secret: &str, user: &str, shape: usize) -> String {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use base64::Engine;
    let dq = secret.replace('\\', "\\\\").replace('"', "\\\"");
    match shape {
        0 => secret.to_string(),
        1 => format!("postgres://{user}:{secret}@h/db"),
        2 => format!("PW='{secret}'"),
        3 => format!("PW=\"{dq}\""),
        4 => serde_json::to_string(&format!("DB=postgres://{user}:{secret}@h")).unwrap(),
        5 => serde_json::json!({ "line": format!("PW=\"{dq}\"") }).to_string(),
        6 => format!(
            "https://h/?pw={}&x=1",
            percent(secret, true, false).as_str()
        ),
        7 => format!("q=pw%3D{}", percent(secret, false, true).as_str()),
        8 => format!("cred={} ", STANDARD.encode(format!("{user}:{secret}"))),
        9 => format!("u={}", URL_SAFE_NO_PAD.encode(format!("{user}:{secret}"))),
        10 => format!("image: ${{X}} {}", secret.replace('$', "$$")),
        _ => format!("hex {}", hex::encode(secret)),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
    /// POLICY "Redaction": whatever the secret, wherever it sits, wherever a cut falls (ours
    /// or an earlier one), no channel function returns a registered form, nor a piece of
    /// one of MIN_LEN bytes or more.
    #[test]
    fn no_form_nor_edge_piece_survives(
        secret in "[ -~é€😀]{6,64}",
        user in "[a-z]{1,8}",
        shape in 0usize..12,
        before in "[ -~é]{0,40}",
        after in "[ -~é]{0,40}",
        cut in 0.0f64..1.2,
        upstream in 0.0f64..1.0,
    ) {
        let mut r = Registry::default();
        r.add_basic(&user, &secret);
        let text = format!("{before}{}{after}", placed(&secret, &user, shape));
        let n = (text.len() as f64 * cut) as usize;
        let up = head(&text, (text.len() as f64 * upstream) as usize).to_string();
        let outs = [
            r.redact(&text),
            r.redact_cut(&text, n, Keep::Head),
            r.redact_cut(&text, n, Keep::Tail),
            // cut before it got here (Docker's probe cap, a log tail), then ours
            r.redact_cut(&up, text.len(), Keep::Head),
            r.redact_cut(&up, n, Keep::Tail),
        ];
        let mut all = forms(&secret);
        all.extend(forms(&format!("{user}:{secret}")));
        for (i, out) in outs.iter().enumerate() {
            proptest::prop_assert!(out.len() <= text.len().max(n));
            if i > 0 {
                proptest::prop_assert!(out.len() <= n.max(up.len()), "{}", out);
            }
            for f in all.iter().filter(|f| f.len() >= MIN_LEN) {
                proptest::prop_assert!(!out.contains(f.as_str()), "channel {i}: {f:?} in {out:?}");
                // whole text: no cut; only a form's whole can be looked for
                if i == 0 {
                    continue;
                }
                let (ep, es) = (edge_prefix(out, f), edge_suffix(out, f));
                proptest::prop_assert!(ep < MIN_LEN, "channel {i}: {f:?} begins at the end of {out:?}");
                proptest::prop_assert!(es < MIN_LEN, "channel {i}: {f:?} ends at the start of {out:?}");
            }
        }
    }
}

/// Bytes of the longest suffix of `out` that is a prefix of `f`.
fn edge_prefix(out: &str, f: &str) -> usize {
    (1..=out.len().min(f.len()))
        .rev()
        .find(|&k| out.as_bytes()[out.len() - k..] == f.as_bytes()[..k])
        .unwrap_or(0)
}

/// Bytes of the longest prefix of `out` that is a suffix of `f`.
fn edge_suffix(out: &str, f: &str) -> usize {
    (1..=out.len().min(f.len()))
        .rev()
        .find(|&k| out.as_bytes()[..k] == f.as_bytes()[f.len() - k..])
        .unwrap_or(0)
}

#[test]
fn a_cut_inside_a_value_masks_its_head_and_short_values_are_not_registered() {
    let mut r = Registry::default();
    r.add("hunter2-is-long");
    r.add("ab");
    // redacted before the cut: the whole value is masked, then cut
    assert_eq!(
        r.redact_cut("pw=hunter2-is-long ok", 8, Keep::Head),
        "pw=*** o"
    );
    // cut before it got here, at either end: the piece at the edge is masked
    assert_eq!(r.redact_cut("pw=hunter2-is", 100, Keep::Head), "pw=***");
    assert_eq!(r.redact_cut("-is-long ok", 100, Keep::Tail), "*** ok");
    // 3 bytes of the value at the edge: under MIN_LEN, kept
    assert_eq!(r.redact_cut("pw=hunter2", 6, Keep::Head), "pw=hun");
    assert_eq!(r.redact("ab cd"), "ab cd");
    // an unrelated text is not touched, however it is cut
    assert_eq!(
        r.redact_cut("checkin: action=none", 12, Keep::Head),
        "checkin: act"
    );
}

#[test]
fn every_form_of_a_registry_credential_is_masked() {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    let mut r = Registry::default();
    r.add_basic("robot", "p\"w\\$d%20é");
    for t in [
        STANDARD.encode("robot:p\"w\\$d%20é"),
        "p\\\"w\\\\$d%20é".to_string(),
        "p%22w%5C%24d%2520%C3%A9".to_string(),
        "p%22w%5c%24d%2520%c3%a9".to_string(),
        "p\"w\\$$d%20é".to_string(),
    ] {
        let out = r.redact(&format!("<{t}>"));
        assert_eq!(out, "<***>", "{t}");
    }
}

/// Unit tests share no registry: another thread's registrations and `forget_all` (a tick's
/// end) leave this test's registry as it was.
#[test]
fn another_thread_neither_clears_nor_adds_to_this_test_s_registry() {
    register("this-test-s-own-secret");
    std::thread::spawn(|| {
        register("another-test-s-secret");
        forget_all();
    })
    .join()
    .unwrap();
    assert_eq!(
        redact("this-test-s-own-secret another-test-s-secret"),
        "*** another-test-s-secret"
    );
}

/// Issue 40 (6): credentials in every URL shape, registered or not, on any channel.
#[test]
fn credentials_in_every_url_shape_are_masked() {
    let r = Registry::default();
    for (text, want) in [
        ("http://user:pass@host:3128", "http://***@host:3128"),
        ("https://user:pass@host", "https://***@host"),
        ("HTTPS://u:p@h", "HTTPS://***@h"),
        (
            "git+ssh://me:pw@example.org/x",
            "git+ssh://***@example.org/x",
        ),
        ("user:pass@host:3128", "***@host:3128"),
        ("http://us%40er:p%3Ass@host", "http://***@host"),
        ("socks5h://u:p@h:1080/x?y", "socks5h://***@h:1080/x?y"),
        (
            "HTTPS_PROXY=http://a:b@h1,http://c:d@h2",
            "HTTPS_PROXY=http://***@h1,http://***@h2",
        ),
        (
            "NO_PROXY=a:b@h1,c:d@h2,.corp",
            "NO_PROXY=***@h1,***@h2,.corp",
        ),
        (
            r#"{"proxy":"http://u:p@h","x":"u2:p2@h2"}"#,
            r#"{"proxy":"http://***@h","x":"***@h2"}"#,
        ),
        (r#"\"http://u:p@h\""#, r#"\"http://***@h\""#),
        (
            "https_proxy=http://u:p@h:3128",
            "https_proxy=http://***@h:3128",
        ),
        ("ALL_PROXY=u:p@h", "ALL_PROXY=***@h"),
        ("ALL_PROXY='u:p=1@h'", "ALL_PROXY='***@h'"),
        ("http://u:p@[fd00::1]:3128", "http://***@[fd00::1]:3128"),
        ("u:p@[fd00::1]:3128", "***@[fd00::1]:3128"),
        ("http://u:p@ss@h", "http://***@h"),
        ("http://u:p:s@h", "http://***@h"),
        ("u:p@ss:w@h:3128 next", "***@h:3128 next"),
        ("redis://:pw@h", "redis://***@h"),
        (
            "https://ghp_token@github.com/o/r",
            "https://***@github.com/o/r",
        ),
        ("dsn user:pw@tcp(db:3306)/x", "dsn ***@tcp(db:3306)/x"),
        ("(see http://u:p@h).", "(see http://***@h)."),
    ] {
        assert_eq!(r.redact(text), want, "{text}");
    }
}

/// Ordinary text that only looks like it: e-mail addresses in prose (no password), image
/// digests, `host:port`, timestamps, a query's e-mail address.
#[test]
fn text_that_only_looks_like_a_url_credential_is_kept() {
    let r = Registry::default();
    let digest = format!("sha256:{}", "0123456789abcdef".repeat(4));
    for text in [
        "mail ops@example.com or git@github.com:org/repo.git".to_string(),
        "mailto:ops@example.com".to_string(),
        format!("image@{digest}"),
        format!("image: docker.io/library/nginx:1.25@{digest}"),
        format!("nginx:1.25@{digest}"),
        format!("docker://nginx:1.25@{digest}"),
        "proxy.corp:3128 and [fd00::1]:3128, http://[fd00::1]:3128/x".to_string(),
        "12:30:45 up at 2026-12-07T12:30:45Z".to_string(),
        "https://h.example/a?to=ops@example.com#x@y".to_string(),
        "NO_PROXY=localhost,127.0.0.1,.corp,10.0.0.0/8".to_string(),
        "@decorator pw:@ end, a:b@ c".to_string(),
    ] {
        assert_eq!(r.redact(&text), text);
    }
}

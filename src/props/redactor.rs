//! The redactor: a registered value never survives, token shapes are masked unregistered.

use super::{b64, config};
use crate::base::redact;
use proptest::prelude::*;

proptest! {
    #![proptest_config(config())]

    /// A registered value never survives redaction: alone, inside random text, repeated, JSON-
    /// escaped or base64-encoded.
    #[test]
    fn registered_values_never_survive(
        value in "[ -~]{4,24}",
        pre in ".{0,16}",
        post in ".{0,16}",
        times in 1usize..3,
    ) {
        redact::isolate_this_thread();
        redact::register(&value);
        let json = serde_json::to_string(&value).unwrap();
        let json = json.trim_matches('"');
        let b = b64(value.as_bytes());
        for text in [
            value.clone(),
            format!("{pre}{}{post}", value.repeat(times)),
            format!("{pre}{json}{post}"),
            format!("{pre}{b}{post}"),
            format!("{pre}{value}{post}{value}"),
        ] {
            let out = redact::redact(&text);
            prop_assert!(!out.contains(&value), "{:?} survives in {:?}", value, out);
            prop_assert!(!out.contains(&b), "base64 survives in {:?}", out);
        }
    }

    /// Token shapes are masked without being registered.
    #[test]
    fn token_shapes_are_masked(
        body in "[A-Za-z0-9]{24,40}",
        prefix in prop_oneof![Just("s."), Just("hvs."), Just("hvb."), Just("b.")],
        pre in "([a-z]{0,6}[ :=])?",
    ) {
        for text in [
            format!("{pre}{prefix}{body} tail"),
            format!("{pre}Authorization: Bearer {body}"),
            format!("{pre}eyJhbGciOiJFUzI1NiJ9.eyJ{body}.{body}"),
            format!("{pre}https://robot:{body}@harbor.example/v2/"),
            format!("{{\"auths\": {{\"r\": {{\"auth\": \"{body}\"}}}}}}"),
        ] {
            let out = redact::redact(&text);
            prop_assert!(!out.contains(&body), "{:?} → {:?}", text, out);
        }
    }

    /// Issue 40 (6): a credential in a URL, of any shape, is masked unregistered: with or
    /// without a scheme, percent-encoded, a literal `:` or `@` in the password, an IPv6 host,
    /// a path or query, several in a list, quoted, JSON, in `KEY=value` lines, inside random
    /// text. The password never survives; every host does.
    #[test]
    fn url_credentials_of_any_shape_are_masked(
        creds in proptest::collection::vec((user(), password(), host(), port(), path()), 1..4),
        scheme in prop_oneof![Just("http"), Just("https"), Just("socks5h"), Just("HTTP"),
            Just("postgres"), Just("git+ssh")],
        with_scheme in proptest::bool::ANY,
        json in proptest::bool::ANY,
        pre in "[ -~]{0,16}",
        lead in prop_oneof![Just(""), Just("HTTPS_PROXY="), Just("https_proxy="),
            Just("ALL_PROXY="), Just("--proxy="), Just("\""), Just("'"), Just("("),
            Just("proxy: "), Just("{\"p\":\"")],
        trail in prop_oneof![Just(""), Just("\""), Just("'"), Just(")"), Just(","), Just(".")],
        post in "[ -~]{0,16}",
    ) {
        let one = |(u, p, h, port, path): &(String, String, String, String, String)| {
            if with_scheme {
                format!("{scheme}://{u}:{p}@{h}{port}{path}")
            } else {
                format!("{u}:{p}@{h}{port}")
            }
        };
        let list = creds.iter().map(one).collect::<Vec<_>>().join(",");
        let list = if json { serde_json::to_string(&list).unwrap() } else { list };
        let text = format!("{pre} {lead}{list}{trail} {post}");
        let out = redact::redact(&text);
        for (u, p, h, ..) in &creds {
            let around = format!("{pre}{post}{h}{u}{scheme}");
            prop_assume!(!around.contains(p.as_str()));
            prop_assert!(!out.contains(p.as_str()), "{:?} survives in {:?} (from {:?})", p, out, text);
            prop_assert!(out.contains(h.as_str()), "host {:?} lost in {:?} (from {:?})", h, out, text);
        }
    }

    /// What only looks like a URL credential is kept as it is: e-mail addresses (no
    /// password), image references with a digest, `host:port`, timestamps.
    #[test]
    fn text_like_a_url_credential_is_kept(
        local in "[a-z0-9][a-z0-9._-]{0,9}",
        domain in "[a-z]{2,10}\\.(com|org|corp)",
        image in "[a-z][a-z0-9-]{0,9}",
        tag in "[a-z0-9][a-z0-9._-]{0,9}",
        hex in "[0-9a-f]{64}",
        port in 1u16..,
        (h, m, sec) in (0u8..24, 0u8..60, 0u8..60),
        sep in prop_oneof![Just(" "), Just(", "), Just("\n"), Just(" | ")],
    ) {
        let text = [
            format!("mail {local}@{domain} now"),
            format!("mailto:{local}@{domain}"),
            format!("git@{domain}:{image}/{tag}.git"),
            format!("{image}@sha256:{hex}"),
            format!("registry.{domain}:5000/{image}:{tag}@sha256:{hex}"),
            format!("image: {image}:{tag}@sha256:{hex}"),
            format!("{domain}:{port} [fd00::1]:{port} http://{domain}:{port}/x?to={local}@{domain}"),
            format!("{h:02}:{m:02}:{sec:02} at 2026-12-07T{h:02}:{m:02}:{sec:02}Z"),
            format!("NO_PROXY=localhost,{domain},.{domain},10.0.0.0/8"),
        ]
        .join(sep);
        prop_assert_eq!(redact::redact(&text), text);
    }
}

/// A URL's user: unreserved characters, percent-escapes, a literal `@`; never `:` (the first
/// `:` ends the user) nor `=` (it would end a `KEY=`).
fn user() -> impl Strategy<Value = String> {
    "([A-Za-z0-9._~-]|%[0-9A-F]{2}|@){0,8}"
}

/// A URL's password: unreserved characters, sub-delims, percent-escapes (upper and lower hex),
/// literal `:` and `@`, `[` `]`.
fn password() -> impl Strategy<Value = String> {
    "([A-Za-z0-9._~!$&*+=\\[\\]-]|%[0-9A-Fa-f]{2}|:|@){6,20}"
}

/// A name, an IPv4 or a bracketed IPv6 address.
fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9-]{2,9}(\\.[a-z]{2,6}){0,2}",
        "10\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
        "\\[fd[0-9a-f]{2}::[0-9a-f]{1,4}\\]",
    ]
}

fn port() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "(:[0-9]{2,5})"]
}

/// What follows the host in a URL with a scheme.
fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("/".to_string()),
        Just("/x?y".to_string()),
        Just("/v2/?token=t#f".to_string()),
        Just("?q=1".to_string()),
    ]
}

//! One redactor for every channel the agent writes: log lines, error messages, the report's
//! `detail` and `log_tail`. It masks token shapes and every secret value this process has read.

use std::sync::{Mutex, OnceLock};

use regex::Regex;
use zeroize::Zeroizing;

pub const MASK: &str = "***";

struct Redactor {
    values: Mutex<Vec<Zeroizing<String>>>,
}

/// The token shapes every output is masked for, in the order `redact` applies them.
const PATTERNS: [&str; 5] = [
    // OpenBao / Vault service and batch tokens (s.…, hvs.…, hvb.…, b.…)
    r"\b(?:hvs|hvb|hvr|s|b|r)\.[A-Za-z0-9_-]{20,}",
    // JWTs (three base64url segments, header starts with eyJ)
    r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    // Authorization headers
    r"(?i)\b(?:authorization:\s*)?(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}",
    // credentials in URLs: scheme://user:pass@host
    r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@",
    // docker config.json auth blobs
    r#"(?i)"auth"\s*:\s*"[^"]+""#,
];

/// Pattern `i`, compiled the first time a text may hold it (most log lines hold none, and a
/// heartbeat then compiles no regex at all).
fn pattern(i: usize) -> &'static Regex {
    static COMPILED: [OnceLock<Regex>; PATTERNS.len()] =
        [const { OnceLock::new() }; PATTERNS.len()];
    COMPILED[i].get_or_init(|| Regex::new(PATTERNS[i]).expect("static pattern"))
}

/// False only when pattern `i` cannot match `text`: a literal every match contains is absent.
/// Text that is not all ASCII always answers true (Unicode case folding and word boundaries
/// are the regex's to judge).
fn may_hold(i: usize, text: &str) -> bool {
    if !text.is_ascii() {
        return true;
    }
    let b = text.as_bytes();
    let has_ci = |lit: &[u8]| b.windows(lit.len()).any(|w| w.eq_ignore_ascii_case(lit));
    let token_char = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-';
    match i {
        // a `.` followed by at least 20 token characters
        0 => b
            .windows(21)
            .any(|w| w[0] == b'.' && w[1..].iter().all(token_char)),
        1 => text.contains("eyJ"),
        2 => has_ci(b"bearer") || has_ci(b"basic"),
        3 => text.contains("://") && text.contains('@'),
        4 => has_ci(b"\"auth\""),
        _ => true,
    }
}

fn redactor() -> &'static Redactor {
    static R: OnceLock<Redactor> = OnceLock::new();
    R.get_or_init(|| Redactor {
        values: Mutex::new(Vec::new()),
    })
}

/// Remember a value this process read, so every later output masks it. Short values (< 4
/// bytes) are not registered: masking them would shred ordinary text without protecting much.
pub fn register(value: &str) {
    if value.len() < 4 {
        return;
    }
    let r = redactor();
    let mut v = r.values.lock().unwrap_or_else(|e| e.into_inner());
    if !v.iter().any(|x| x.as_str() == value) {
        v.push(Zeroizing::new(value.to_string()));
        // longest first, so a value that contains another is masked whole
        v.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
    // also the shapes a value takes once it is encoded in a message: JSON, base64 (padded,
    // unpadded, URL-safe), hex, percent-encoding, compose's `$$` escaping
    for derived in encodings(value) {
        if derived != value && derived.len() >= 4 && !v.iter().any(|x| x.as_str() == derived) {
            v.push(Zeroizing::new(derived));
            v.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }
}

/// Drop every registered value (end of a tick: the values are zeroized on drop).
pub fn forget_all() {
    let r = redactor();
    r.values.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

pub fn redact(text: &str) -> String {
    let r = redactor();
    let mut out = mask_values(r, text);
    for i in 0..PATTERNS.len() {
        if !may_hold(i, &out) {
            continue;
        }
        let p = pattern(i);
        if i == 3 {
            out = p.replace_all(&out, format!("${{1}}{MASK}@")).into_owned();
        } else if i == 4 {
            out = p
                .replace_all(&out, format!("\"auth\": \"{MASK}\""))
                .into_owned();
        } else {
            out = p.replace_all(&out, MASK).into_owned();
        }
    }
    // a mask can complete a value with the text around it (`x` + `***` when a secret is
    // `x***`): mask again; every pass shrinks the text, so this ends
    if r.values
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|s| out.contains(s.as_str()))
    {
        out = mask_values(r, &out);
    }
    out
}

/// Every registered value (longest first) → [`MASK`], repeated until none is left.
fn mask_values(r: &Redactor, text: &str) -> String {
    let v = r.values.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = text.to_string();
    loop {
        let mut changed = false;
        for s in v.iter() {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), MASK);
                changed = true;
            }
        }
        if !changed {
            return out;
        }
    }
}

fn json_escaped(v: &str) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    s.trim_matches('"').to_string()
}

fn encodings(v: &str) -> Vec<String> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use base64::Engine;
    let b = v.as_bytes();
    let mut pct = String::with_capacity(b.len() * 3);
    for &c in b {
        if c.is_ascii_alphanumeric() || b"-_.~".contains(&c) {
            pct.push(c as char);
        } else {
            pct.push_str(&format!("%{c:02X}"));
        }
    }
    vec![
        json_escaped(v),
        STANDARD.encode(b),
        STANDARD_NO_PAD.encode(b),
        URL_SAFE.encode(b),
        URL_SAFE_NO_PAD.encode(b),
        hex::encode(b),
        hex::encode_upper(b),
        pct.clone(),
        pct.to_ascii_lowercase(),
        v.replace('$', "$$"),
    ]
}

#[cfg(test)]
mod tests {
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
            "HTTPS://u:p@h",
            "git+ssh://me:pw@example.org/x",
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
}

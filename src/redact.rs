//! One redactor for every channel the agent writes: log lines, error messages, the report's
//! `detail` and `log_tail`, probe output, diagnostics. It masks token shapes and every secret
//! value this process has read, in every form that can reach text (docs/POLICY.md
//! "Redaction"); [`redact_cut`] is the one way text is cut.

use std::sync::{Mutex, OnceLock};

use regex::Regex;
use zeroize::Zeroizing;

pub const MASK: &str = "***";

/// Shortest value registered, and shortest partial masked at a cut edge (bytes).
pub const MIN_LEN: usize = 4;

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

/// The registered forms and an index over their first two bytes. Everything that holds secret
/// bytes is zeroized on drop; the index is built at its final size (no reallocation copies).
#[derive(Default)]
pub struct Registry {
    forms: Vec<Zeroizing<String>>,
    /// `first two bytes << 32 | form index`, sorted by key then longest form first.
    index: Zeroizing<Vec<u64>>,
    /// One bit per two-byte key present in `index` (65 536 bits).
    bits: Zeroizing<Vec<u64>>,
}

fn key(b: &[u8]) -> u64 {
    (u64::from(b[0]) << 8) | u64::from(b[1])
}

impl Registry {
    /// A value and every form it can take in text (POLICY "Redaction"). Under [`MIN_LEN`]
    /// bytes: nothing is registered.
    pub fn add(&mut self, value: &str) {
        if value.len() < MIN_LEN {
            return;
        }
        for f in forms(value) {
            self.add_form(f);
        }
        self.reindex();
    }

    /// A `user:password` credential: the password's forms, and the pair's (base64 of it is what
    /// a docker `auth` blob and a Basic header carry).
    pub fn add_basic(&mut self, user: &str, password: &str) {
        self.add(password);
        if password.len() >= MIN_LEN {
            self.add(&Zeroizing::new(format!("{user}:{password}")));
        }
    }

    fn add_form(&mut self, f: Zeroizing<String>) {
        if f.len() >= MIN_LEN && !self.forms.iter().any(|x| **x == *f) {
            self.forms.push(f);
        }
    }

    fn reindex(&mut self) {
        let mut index = Zeroizing::new(Vec::with_capacity(self.forms.len()));
        let mut bits = Zeroizing::new(vec![0u64; 1024]);
        for (i, f) in self.forms.iter().enumerate() {
            let k = key(f.as_bytes());
            index.push((k << 32) | i as u64);
            bits[(k >> 6) as usize] |= 1 << (k & 63);
        }
        let forms = &self.forms;
        index.sort_by(|a, b| {
            (a >> 32).cmp(&(b >> 32)).then(
                forms[(*b & 0xffff_ffff) as usize]
                    .len()
                    .cmp(&forms[(*a & 0xffff_ffff) as usize].len()),
            )
        });
        self.index = index;
        self.bits = bits;
    }

    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Drop every form (zeroized).
    pub fn clear(&mut self) {
        *self = Registry::default();
    }

    /// The forms that may start at `b[0..2]`, longest first.
    fn candidates(&self, b: &[u8]) -> impl Iterator<Item = &str> {
        let k = key(b);
        let hit = !self.bits.is_empty() && self.bits[(k >> 6) as usize] & (1 << (k & 63)) != 0;
        let lo = if hit {
            self.index.partition_point(|e| (e >> 32) < k)
        } else {
            self.index.len()
        };
        self.index[lo..]
            .iter()
            .take_while(move |e| (*e >> 32) == k)
            .map(|e| self.forms[(e & 0xffff_ffff) as usize].as_str())
    }

    /// One left-to-right pass, the longest form at each position → [`MASK`]. A form is valid
    /// UTF-8, so a match starts and ends on character boundaries.
    fn mask_once(&self, text: &str) -> Option<String> {
        if self.forms.is_empty() {
            return None;
        }
        let b = text.as_bytes();
        let (mut out, mut last, mut i) = (None::<String>, 0, 0);
        while i + 1 < b.len() {
            let hit = self
                .candidates(&b[i..])
                .find(|f| b[i..].starts_with(f.as_bytes()));
            match hit {
                Some(f) => {
                    let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
                    o.push_str(&text[last..i]);
                    o.push_str(MASK);
                    i += f.len();
                    last = i;
                }
                None => i += 1,
            }
        }
        out.map(|mut o| {
            o.push_str(&text[last..]);
            o
        })
    }

    /// Every form → [`MASK`], again until none is left (a mask can complete a form with the
    /// text around it; every pass shrinks the text, so this ends).
    pub fn mask(&self, text: &str) -> String {
        let mut out = match self.mask_once(text) {
            Some(o) => o,
            None => return text.to_string(),
        };
        while let Some(o) = self.mask_once(&out) {
            out = o;
        }
        out
    }

    /// The longest suffix of `t` (at least [`MIN_LEN`] bytes, on a char boundary) that is a
    /// prefix of a form; with `at_start`, the longest prefix of `t` that is a suffix of one.
    fn edge(&self, t: &str, at_start: bool) -> usize {
        let b = t.as_bytes();
        let mut best = 0;
        for f in &self.forms {
            let f = f.as_bytes();
            let most = f.len().min(b.len());
            for k in (MIN_LEN.max(best + 1)..=most).rev() {
                let hit = if at_start {
                    t.is_char_boundary(k) && b[..k] == f[f.len() - k..]
                } else {
                    t.is_char_boundary(b.len() - k) && b[b.len() - k..] == f[..k]
                };
                if hit {
                    best = k;
                    break;
                }
            }
        }
        best
    }

    /// Mask a partial form at both edges of `t`, until neither edge holds one.
    fn mask_edges(&self, mut t: String) -> String {
        loop {
            let end = self.edge(&t, false);
            if end > 0 {
                t.truncate(t.len() - end);
                t.push_str(MASK);
            }
            let start = self.edge(&t, true);
            if start > 0 {
                t.replace_range(..start, MASK);
            }
            if end == 0 && start == 0 {
                return t;
            }
        }
    }

    /// Forms, then token shapes, then forms again (a shape's mask can complete a form).
    pub fn redact(&self, text: &str) -> String {
        let mut out = self.mask(text);
        let mut shaped = false;
        for i in 0..PATTERNS.len() {
            if !may_hold(i, &out) {
                continue;
            }
            let p = pattern(i);
            let r = match i {
                3 => p.replace_all(&out, format!("${{1}}{MASK}@")),
                4 => p.replace_all(&out, format!("\"auth\": \"{MASK}\"")),
                _ => p.replace_all(&out, MASK),
            };
            if let std::borrow::Cow::Owned(r) = r {
                out = r;
                shaped = true;
            }
        }
        if shaped && !self.is_empty() {
            out = self.mask(&out);
        }
        out
    }

    /// Redact, cut to at most `max` bytes on a char boundary (keeping the head or the tail),
    /// then mask a partial form at either edge: ours, or one cut before the text got here.
    pub fn redact_cut(&self, text: &str, max: usize, keep: Keep) -> String {
        let r = self.redact(text);
        let cut = match keep {
            Keep::Head => head(&r, max),
            Keep::Tail => tail(&r, max),
        };
        if self.is_empty() {
            return cut.to_string();
        }
        self.mask_edges(cut.to_string())
    }
}

/// Which end of a text a cut keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Head,
    Tail,
}

/// The first `max` bytes or fewer, on a char boundary.
fn head(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The last `max` bytes or fewer, on a char boundary.
fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// The process's registry. Unit tests get one per thread ([`isolate`]): `tick()` clears the
/// process's registry, and tests run ticks on other threads.
static GLOBAL: Mutex<Option<Registry>> = Mutex::new(None);

#[cfg(test)]
thread_local! {
    static LOCAL: std::cell::RefCell<Option<Registry>> = const { std::cell::RefCell::new(None) };
}

/// This test thread gets its own empty registry from now on.
#[cfg(test)]
pub fn isolate() {
    LOCAL.with(|l| *l.borrow_mut() = Some(Registry::default()));
}

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    #[cfg(test)]
    {
        let mut f = Some(f);
        let local = LOCAL.with(|l| {
            l.borrow_mut()
                .as_mut()
                .map(|r| (f.take().expect("once"))(r))
        });
        if let Some(r) = local {
            return r;
        }
        let f = f.expect("unused");
        let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
        f(g.get_or_insert_with(Registry::default))
    }
    #[cfg(not(test))]
    {
        let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
        f(g.get_or_insert_with(Registry::default))
    }
}

/// Remember a value this process read, in every form it can reach text (see [`Registry::add`]).
pub fn register(value: &str) {
    with(|r| r.add(value));
}

/// Remember a `user:password` credential (see [`Registry::add_basic`]).
pub fn register_basic(user: &str, password: &str) {
    with(|r| r.add_basic(user, password));
}

/// Drop every registered value (end of a tick: the values are zeroized on drop).
pub fn forget_all() {
    with(Registry::clear);
}

/// The text with every registered form and token shape masked.
pub fn redact(text: &str) -> String {
    with(|r| r.redact(text))
}

/// [`redact`], then cut to `max` bytes, then a partial form at either edge masked: the one way
/// text that leaves the process is cut.
pub fn redact_cut(text: &str, max: usize, keep: Keep) -> String {
    with(|r| r.redact_cut(text, max, keep))
}

fn z(s: String) -> Zeroizing<String> {
    Zeroizing::new(s)
}

/// The JSON string body of `v` (serde_json's escaping, without the quotes).
fn json_body(v: &str) -> Zeroizing<String> {
    let s = z(serde_json::to_string(v).unwrap_or_default());
    z(s.get(1..s.len().saturating_sub(1))
        .unwrap_or_default()
        .to_string())
}

/// Percent-encoding of every byte but the unreserved ones; `plus` writes a space as `+`.
fn percent(v: &str, upper: bool, plus: bool) -> Zeroizing<String> {
    const UP: &[u8; 16] = b"0123456789ABCDEF";
    const LO: &[u8; 16] = b"0123456789abcdef";
    let hex = if upper { UP } else { LO };
    let mut o = z(String::with_capacity(v.len() * 3));
    for &c in v.as_bytes() {
        if c.is_ascii_alphanumeric() || b"-_.~".contains(&c) {
            o.push(c as char);
        } else if plus && c == b' ' {
            o.push('+');
        } else {
            o.push('%');
            o.push(hex[usize::from(c >> 4)] as char);
            o.push(hex[usize::from(c & 15)] as char);
        }
    }
    o
}

/// Every form in which `v` can reach text (POLICY "Redaction").
fn forms(v: &str) -> Vec<Zeroizing<String>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    use base64::Engine;
    let b = v.as_bytes();
    // `.env`'s double-quoted body (bundle::env::dotenv_encode): `\` and `"` escaped
    let mut dq = z(String::with_capacity(v.len() * 2));
    for c in v.chars() {
        if c == '\\' || c == '"' {
            dq.push('\\');
        }
        dq.push(c);
    }
    let mut f = vec![
        z(v.to_string()),
        json_body(v),
        json_body(&dq),
        percent(v, true, false),
        percent(v, false, false),
        percent(v, true, true),
        z(STANDARD.encode(b)),
        z(STANDARD_NO_PAD.encode(b)),
        z(URL_SAFE.encode(b)),
        z(URL_SAFE_NO_PAD.encode(b)),
        z(hex::encode(b)),
        z(hex::encode_upper(b)),
        z(v.replace('$', "$$")),
    ];
    f.push(dq);
    f
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
        isolate();
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
        isolate();
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

    /// `cargo test --lib redact::tests::timing -- --ignored --nocapture`: a log line through the
    /// registry against 0.4.0's way (`contains` + `replace` per form), 20 values registered.
    #[test]
    #[ignore]
    fn timing() {
        let mut r = Registry::default();
        let values: Vec<String> = (0..20)
            .map(|i| format!("s3cr3t-value-{i:02}-{}", "x".repeat(i)))
            .collect();
        values.iter().for_each(|v| r.add(v));
        let old: Vec<&str> = r.forms.iter().map(|f| f.as_str()).collect();
        let line = "2026-01-01T00:00:00Z INFO checkin: action=none desired=a48dfc43fd2b applied=a48dfc43fd2b tenancy 12 ms\n";
        let hit = format!("{line} pw={}", values[7]);
        for (name, text) in [("clean line", line), ("line with a value", hit.as_str())] {
            let n = 20_000;
            let t = std::time::Instant::now();
            for _ in 0..n {
                std::hint::black_box(r.mask(std::hint::black_box(text)));
            }
            let new = t.elapsed() / n;
            let t = std::time::Instant::now();
            for _ in 0..n {
                let mut out = text.to_string();
                for f in &old {
                    if out.contains(f) {
                        out = out.replace(f, MASK);
                    }
                }
                std::hint::black_box(out);
            }
            let was = t.elapsed() / n;
            println!(
                "{name}: {} forms, index {new:?} per line, contains+replace {was:?}",
                old.len()
            );
        }
    }
}

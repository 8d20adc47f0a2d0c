//! One redactor for every channel the agent writes: log lines, error messages, the report's
//! `detail` and `log_tail`, probe output, diagnostics. It masks token shapes and every secret
//! value this process has read, in every form that can reach text (docs/POLICY.md
//! "Redaction"); [`redact_cut`] is the one way text is cut.

use std::sync::Mutex;
use std::sync::OnceLock;

use regex::Regex;
use zeroize::Zeroizing;

pub const MASK: &str = "***";

/// Shortest value registered, and shortest partial masked at a cut edge (bytes).
pub const MIN_LEN: usize = 4;

/// The token shapes every output is masked for, in the order `redact` applies them (then the
/// credentials in URLs, [`mask_url_credentials`], which no regex states well).
const PATTERNS: [&str; 4] = [
    // OpenBao / Vault service and batch tokens (s.…, hvs.…, hvb.…, b.…)
    r"\b(?:hvs|hvb|hvr|s|b|r)\.[A-Za-z0-9_-]{20,}",
    // JWTs (three base64url segments, header starts with eyJ)
    r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    // Authorization headers
    r"(?i)\b(?:authorization:\s*)?(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}",
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
        3 => has_ci(b"\"auth\""),
        _ => true,
    }
}

/// Credentials in URLs, whoever wrote them (the agent's config, its environment, or what it
/// copies from the host and the engine) → [`MASK`], the user with the password:
///
/// - **With a scheme** (`scheme://userinfo@host`, any scheme): the authority runs from `://` to
///   the first `/`, `?`, `#`, `\`, quote, `<`, `>`, whitespace or control character, as a URL
///   parser ends it; everything before its *last* `@` is the userinfo and is masked
///   (`http://u:p@ss@h` → `http://***@h`: a literal `@` or `:` in the password is covered).
///   A bare user is masked too (`https://<token>@github.com` carries a token that way). Not
///   when the last `@` starts an image digest (`docker://nginx:1@sha256:…`).
/// - **Without a scheme** (`user:password@host[:port]`, as `ALL_PROXY=u:p@h:3128`, JSON
///   `"u:p@h"`, a comma list `a:b@h1,c:d@h2`): in a word (delimited by whitespace, quotes,
///   `/ \ , ; | ( ) { } < >`), the part before its last `@` that a host follows, from after
///   an `=` that precedes its first `:` (`KEY=` is kept), when it holds a `:` with a password
///   after it. A word with no `:` before its `@` carries no password and is kept: an e-mail
///   address in prose (`ops@example.com`), `git@github.com:org/x`, `mailto:ops@example.com`;
///   so is an image digest (`nginx:1.25@sha256:<hex>`), `host:port`, `12:30:45`.
/// - **Not covered:** a password with a literal `/`, `?`, `#`, `\`, quote or whitespace (a URL
///   parser would end the authority there too, so the URL would not work); such a password is
///   masked where the agent read it itself, because it is registered.
///
/// `None` when the text holds none.
fn mask_url_credentials(text: &str) -> Option<String> {
    let b = text.as_bytes();
    if !b.contains(&b'@') {
        return None;
    }
    // 1. scheme://userinfo@
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while let Some(k) = find(b, i, b"://") {
        let start = k + 3;
        let end = (start..b.len())
            .find(|&j| ends_authority(b[j]))
            .unwrap_or(b.len());
        if let Some(at) = (start..end).rev().find(|&j| b[j] == b'@') {
            if at > start && !is_digest(&b[at + 1..]) {
                cuts.push((start, at));
            }
        }
        i = end.max(start);
    }
    let once = splice(text, &cuts);
    let text = once.as_deref().unwrap_or(text);
    // 2. user:password@host without a scheme, in each word of what is left
    let b = text.as_bytes();
    let mut cuts = Vec::new();
    let mut w = 0;
    while w < b.len() {
        let end = (w..b.len()).find(|&j| ends_word(b[j])).unwrap_or(b.len());
        if let Some(c) = bare_userinfo(b, w, end) {
            cuts.push(c);
        }
        w = end + 1;
    }
    splice(text, &cuts).or(once)
}

/// The userinfo to mask in the word `b[w..end]`, if it is `user:password@host`.
fn bare_userinfo(b: &[u8], w: usize, end: usize) -> Option<(usize, usize)> {
    let at = (w..end)
        .rev()
        .find(|&j| b[j] == b'@' && has_host(&b[j + 1..]))?;
    let colon = (w..at).find(|&j| b[j] == b':')?;
    if colon + 1 >= at {
        return None; // no password
    }
    let start = (w..colon)
        .rev()
        .find(|&j| b[j] == b'=')
        .map_or(w, |e| e + 1);
    if b[start..colon].eq_ignore_ascii_case(b"mailto") {
        return None;
    }
    Some((start, at))
}

/// The text with each `[from, to)` (in order, disjoint) replaced by [`MASK`]; `None` if none.
/// The bounds sit on ASCII bytes or the text's ends, so on character boundaries.
fn splice(text: &str, cuts: &[(usize, usize)]) -> Option<String> {
    if cuts.is_empty() {
        return None;
    }
    let mut o = String::with_capacity(text.len());
    let mut last = 0;
    for &(from, to) in cuts {
        o.push_str(&text[last..from]);
        o.push_str(MASK);
        last = to;
    }
    o.push_str(&text[last..]);
    Some(o)
}

fn find(b: &[u8], from: usize, lit: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(lit.len())
        .position(|x| x == lit)
        .map(|p| p + from)
}

/// Where a URL's authority ends (with the characters a URL cannot hold unquoted in text).
fn ends_authority(c: u8) -> bool {
    c.is_ascii_whitespace()
        || c.is_ascii_control()
        || matches!(
            c,
            b'/' | b'?' | b'#' | b'\\' | b'"' | b'\'' | b'`' | b'<' | b'>'
        )
}

/// Where a word ends, for credentials written without a scheme.
fn ends_word(c: u8) -> bool {
    c.is_ascii_whitespace()
        || c.is_ascii_control()
        || matches!(
            c,
            b'/' | b'\\'
                | b'"'
                | b'\''
                | b'`'
                | b','
                | b';'
                | b'|'
                | b'('
                | b')'
                | b'{'
                | b'}'
                | b'<'
                | b'>'
        )
}

/// Whether `b` (what follows an `@`) starts with a host: a name, an address or `[IPv6]`, and
/// not an image digest.
fn has_host(b: &[u8]) -> bool {
    match b.first() {
        Some(c) if c.is_ascii_alphanumeric() || *c == b'[' || *c >= 0x80 => !is_digest(b),
        _ => false,
    }
}

/// Whether `b` starts with an image digest, `algorithm:hex` of 32 hex digits or more
/// (`sha256:…`): no port is that long.
fn is_digest(b: &[u8]) -> bool {
    let alg = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'_' | b'-'))
        .count();
    alg > 0
        && b.get(alg) == Some(&b':')
        && b[alg + 1..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit())
            .count()
            >= 32
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
                3 => p.replace_all(&out, format!("\"auth\": \"{MASK}\"")),
                _ => p.replace_all(&out, MASK),
            };
            if let std::borrow::Cow::Owned(r) = r {
                out = r;
                shaped = true;
            }
        }
        if let Some(r) = mask_url_credentials(&out) {
            out = r;
            shaped = true;
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

/// The process's registry.
static GLOBAL: Mutex<Option<Registry>> = Mutex::new(None);

#[cfg(any(test, feature = "test-hooks"))]
thread_local! {
    /// Unit tests: a registry for this thread instead of the process's. libtest runs each test
    /// on a thread of its own, so a test that isolates sees only what it registered itself: a
    /// tick that clears the registry (`forget_all`) or registers a value in another test cannot
    /// change what this one's redaction returns, whatever the order or the test threads.
    static LOCAL: std::cell::RefCell<Option<Registry>> =
        std::cell::RefCell::new(cfg!(test).then(Registry::default));
}

/// From now on this thread has a registry of its own (see [`LOCAL`]); this crate's own unit
/// tests always do. Only for tests that run a tick and redact on the same thread.
#[cfg(any(test, feature = "test-hooks"))]
pub fn isolate_this_thread() {
    LOCAL.with(|l| {
        l.borrow_mut().get_or_insert_with(Registry::default);
    });
}

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    #[cfg(any(test, feature = "test-hooks"))]
    if LOCAL.with(|l| l.borrow().is_some()) {
        return LOCAL.with(|l| f(l.borrow_mut().get_or_insert_with(Registry::default)));
    }
    let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Registry::default))
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
mod tests;

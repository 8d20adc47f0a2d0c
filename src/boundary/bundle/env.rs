//! `.env` rendering from `env.template`: the one-pass `${VAR}` substitution, the quoting that
//! makes compose v1 and v2 read a secret back exactly (or a refusal by name), variable-name
//! validity, and the pre-lease check that every placeholder is a manifest variable.

use std::collections::{BTreeMap, BTreeSet};

use zeroize::Zeroizing;

use super::{Bundle, Refusal, RefusalCode};
use crate::compose_check::interp::{Var, Variables};

impl Bundle {
    /// Every placeholder `env.template` uses must be a manifest variable: `ENV_INCOMPLETE` is
    /// known before the lease, so a bundle that cannot render leases nothing and reads nothing.
    pub fn check_env_template(&self) -> Result<(), Refusal> {
        self.render_env_with_every_var_as("").map(|_| ())
    }

    /// `env.template` rendered with `value` for every manifest variable (no secret read).
    pub fn render_env_with_every_var_as(&self, value: &str) -> Result<Zeroizing<String>, Refusal> {
        let vars: BTreeMap<String, Zeroizing<String>> = self
            .manifest
            .entries
            .iter()
            .filter(|e| !e.is_registry_auth())
            .filter_map(|e| e.var.clone())
            .map(|v| (v, Zeroizing::new(value.to_string())))
            .collect();
        render_env(&self.env_template(), &vars)
    }

    /// The variables compose will interpolate `compose.yaml` with, as the first pass knows them
    /// before the lease ([`dotenv_variables`]).
    pub fn first_pass_variables(&self) -> Variables {
        dotenv_variables(&self.env_template())
    }
}

/// `env.template`'s variables as compose will read them from the rendered `.env`, known before
/// any secret is read (the first pass's interpolation, issue 41): a line without a placeholder
/// is written to `.env` unchanged, so its value is [`Var::Plain`] when compose's `.env` parser
/// reads it back exactly — bare (up to a ` #` comment), `'single-quoted'`, or `"double-quoted"`
/// without `\` or `$`. Everything else is [`Var::Opaque`]: a line with a placeholder (it holds
/// a secret), a value compose would expand or unescape (`$`, `\`, quotes inside), a bare
/// `NAME` (compose takes it from its environment), and every line after a quote that does not
/// close on its own line (compose reads on across lines). The last definition of a name wins,
/// as in compose; compose's own environment is over all of them ([`Variables::new`]).
pub fn dotenv_variables(template: &str) -> Variables {
    let mut vars = BTreeMap::new();
    let mut lost = false;
    for line in template.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some(at) = assignment_value(line) else {
            if valid_var(t) {
                vars.insert(t.to_string(), Var::Opaque);
            }
            continue;
        };
        let head = line[..at].trim_end_matches('=').trim();
        let name = head
            .strip_prefix("export ")
            .map(str::trim_start)
            .unwrap_or(head)
            .to_string();
        let value = &line[at..];
        let known = if lost || value.contains("${") {
            None
        } else {
            let (v, closed) = literal_value(value);
            lost |= !closed;
            v
        };
        vars.insert(name, known.map(Var::Plain).unwrap_or(Var::Opaque));
    }
    Variables::new(vars)
}

/// A literal `.env` value as compose reads it, if it reads it exactly; and whether its quotes
/// closed on this line.
fn literal_value(value: &str) -> (Option<String>, bool) {
    let v = value.trim();
    let quoted = |q: char| -> (Option<String>, bool) {
        let Some(j) = v[1..].find(q).map(|j| j + 1) else {
            return (None, false);
        };
        let inner = &v[1..j];
        let after = v[j + 1..].trim_start();
        let rest_ok = after.is_empty() || after.starts_with('#');
        // compose v1's parser unescapes `\\` and `\'` even in single quotes
        let exact = !inner.contains('\\') && (q == '\'' || !inner.contains('$'));
        ((rest_ok && exact).then(|| inner.to_string()), true)
    };
    match v.chars().next() {
        Some('\'') => quoted('\''),
        Some('"') => {
            // a closing quote is one no backslash escapes; any backslash makes it inexact
            if v[1..].contains('\\') {
                let closed = v.len() > 1 && v.ends_with('"') && !v.ends_with("\\\"");
                return (None, closed);
            }
            quoted('"')
        }
        _ => {
            let t = template_value(value);
            let exact = !t.contains(['$', '\\', '\'', '"']);
            (exact.then(|| t.to_string()), true)
        }
    }
}

pub fn valid_var(v: &str) -> bool {
    let mut b = v.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Fill `${VAR}` placeholders in one pass (a value is never re-scanned by the agent) and write
/// every assignment that received a secret so that compose's own `.env` parser — python-dotenv
/// in v1, compose-go in v2, which both interpolate `$`, strip ` #comments`, trim whitespace and
/// decode escapes — reads back exactly the value: bare when it is plain, in single quotes when
/// it has no `'` or `\`, in double quotes (`\\`, `\"` escaped) when it has no `$`.
/// Unresolved names → `ENV_INCOMPLETE`; a value with a line break, or one no quoting carries
/// exactly through both parsers (`${`, or `$` together with `'`/`\`) → `ENV_VALUE_UNSAFE`.
/// Names only, never values.
pub fn render_env(
    template: &str,
    values: &BTreeMap<String, Zeroizing<String>>,
) -> Result<Zeroizing<String>, Refusal> {
    let mut out = Zeroizing::new(String::with_capacity(template.len() + 64));
    let mut missing = BTreeSet::new();
    let mut unsafe_vals = BTreeSet::new();
    let mut inexact = BTreeSet::new();
    for line in template.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        match assignment_value(body) {
            Some(at) if body[at..].contains("${") => {
                let inner = template_value(&body[at..]);
                let mut used = BTreeSet::new();
                let rendered = substitute(inner, values, &mut missing, &mut unsafe_vals, &mut used);
                match dotenv_encode(&rendered) {
                    Some(enc) => {
                        out.push_str(&body[..at]);
                        out.push_str(&enc);
                    }
                    None => inexact.extend(used),
                }
            }
            _ => {
                let mut used = BTreeSet::new();
                let rendered = substitute(body, values, &mut missing, &mut unsafe_vals, &mut used);
                out.push_str(&rendered);
            }
        }
        out.push_str(nl);
    }
    if !missing.is_empty() {
        return Err(Refusal::new(
            RefusalCode::EnvIncomplete,
            format!(
                "unresolved: {}",
                missing.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    if !unsafe_vals.is_empty() {
        return Err(Refusal::new(
            RefusalCode::EnvValueUnsafe,
            format!(
                "secret value contains a line break: {}",
                unsafe_vals.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    if !inexact.is_empty() {
        return Err(Refusal::new(
            RefusalCode::EnvValueUnsafe,
            format!(
                "secret value cannot be written to .env so that compose reads it back exactly \
                 (it contains `${{`, or `$` with a quote or backslash): {}",
                inexact.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(out)
}

/// One pass over `text`: `${NAME}` → its value; values are never scanned again.
fn substitute(
    text: &str,
    values: &BTreeMap<String, Zeroizing<String>>,
    missing: &mut BTreeSet<String>,
    unsafe_vals: &mut BTreeSet<String>,
    used: &mut BTreeSet<String>,
) -> Zeroizing<String> {
    let mut out = Zeroizing::new(String::with_capacity(text.len() + 32));
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find('}') {
            Some(j) if valid_var(&after[..j]) => {
                let name = &after[..j];
                match values.get(name) {
                    Some(v) => {
                        if v.contains(['\n', '\r', '\0']) {
                            unsafe_vals.insert(name.to_string());
                        }
                        used.insert(name.to_string());
                        out.push_str(v);
                    }
                    None => {
                        missing.insert(name.to_string());
                    }
                }
                rest = &after[j + 1..];
            }
            _ => {
                // not a placeholder we fill (e.g. `${X:-default}`): left for compose, but a
                // left-over `${` is still unresolved from the agent's side.
                let end = after.find('}').map(|j| j + 1).unwrap_or(after.len());
                let name: String = after[..end].trim_end_matches('}').to_string();
                missing.insert(name);
                out.push_str(&rest[i..i + 2 + end]);
                rest = &after[end..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `[export ]NAME=` → the byte offset where the value starts.
fn assignment_value(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let lead = line.len() - t.len();
    let (t, lead) = match t.strip_prefix("export ") {
        Some(r) => {
            let r2 = r.trim_start();
            (r2, lead + 7 + (r.len() - r2.len()))
        }
        None => (t, lead),
    };
    let name_len = t
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || b"_.-".contains(b))
        .count();
    if name_len == 0 || t.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let after = &t[name_len..];
    let sp = after.len() - after.trim_start_matches([' ', '\t']).len();
    after[sp..]
        .starts_with('=')
        .then_some(lead + name_len + sp + 1)
}

/// The literal text of a template value: inside its quotes if the operator quoted it, else
/// without a trailing ` # comment` and surrounding blanks (what dotenv would have done).
fn template_value(v: &str) -> &str {
    let t = v.trim();
    for q in ['\'', '"'] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return &t[1..t.len() - 1];
        }
    }
    let cut = t
        .char_indices()
        .find(|&(i, c)| c == '#' && i > 0 && t[..i].ends_with([' ', '\t']))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    t[..cut].trim_end()
}

/// How a value is written so that compose v1 and v2 both read back exactly it (see
/// [`render_env`]); `None` when no form does.
pub fn dotenv_encode(v: &str) -> Option<Zeroizing<String>> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.:/@+=,%~^*!?&()[]{}|;<>".contains(c);
    if v.chars().all(plain) {
        return Some(Zeroizing::new(v.to_string()));
    }
    if v.contains("${") || v.contains(['\n', '\r', '\0']) {
        return None;
    }
    if !v.contains(['\'', '\\']) {
        return Some(Zeroizing::new(format!("'{v}'")));
    }
    if v.contains('$') {
        return None;
    }
    let mut o = Zeroizing::new(String::with_capacity(v.len() + 8));
    o.push('"');
    for c in v.chars() {
        if c == '\\' || c == '"' {
            o.push('\\');
        }
        o.push(c);
    }
    o.push('"');
    Some(o)
}

/// The inverse of [`dotenv_encode`]: a value as written in `.env` (bare, `'…'`, or `"…"` with
/// `\\` and `\"`) → the value.
pub fn dotenv_decode(v: &str) -> Zeroizing<String> {
    let t = v.trim();
    if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') {
        return Zeroizing::new(t[1..t.len() - 1].to_string());
    }
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        let mut o = Zeroizing::new(String::with_capacity(t.len()));
        let mut esc = false;
        for c in t[1..t.len() - 1].chars() {
            if esc || c != '\\' {
                o.push(c);
                esc = false;
            } else {
                esc = true;
            }
        }
        return o;
    }
    Zeroizing::new(t.to_string())
}

/// The values a rendered `.env` holds, read back against its `env.template` (for the redactor:
/// a tick that reads nothing still masks the running release's values, not only its lines).
/// Each line with placeholders is matched against the rendered line; a placeholder's value is
/// taken by a shortest and a longest match (they differ only when a value contains the literal
/// text after its placeholder, and then both are kept), and the whole rendered value too. Lines
/// that do not line up, or a `.env` without a template: every value whole.
pub fn values_from_rendered(template: Option<&str>, rendered: &str) -> Vec<Zeroizing<String>> {
    let mut out = Vec::new();
    let whole = |out: &mut Vec<Zeroizing<String>>, line: &str| {
        if let Some(at) = assignment_value(line) {
            out.push(dotenv_decode(&line[at..]));
        }
    };
    let t_lines: Vec<&str> = template
        .map(|t| t.split('\n').collect())
        .unwrap_or_default();
    let r_lines: Vec<&str> = rendered.split('\n').collect();
    if t_lines.len() != r_lines.len() {
        r_lines.iter().for_each(|l| whole(&mut out, l));
        return out;
    }
    for (t, r) in t_lines.iter().zip(&r_lines) {
        if !t.contains("${") {
            continue;
        }
        let (tmpl, val) = match assignment_value(t) {
            Some(at) if t[at..].contains("${") => {
                if !r.starts_with(&t[..at]) {
                    whole(&mut out, r);
                    continue;
                }
                (template_value(&t[at..]), dotenv_decode(&r[at..]))
            }
            _ => (*t, Zeroizing::new(r.to_string())),
        };
        match placeholder_values(tmpl, &val) {
            Some(vs) => out.extend(vs),
            None => whole(&mut out, r),
        }
        out.push(val);
    }
    out
}

/// `${NAME}` placeholders of `tmpl` matched in `val`: each literal between them found first
/// from the left (shortest values), then from the right (longest). No regex: this runs at the
/// start of every tick.
fn placeholder_values(tmpl: &str, val: &str) -> Option<Vec<Zeroizing<String>>> {
    let mut lits = Vec::new();
    let mut rest = tmpl;
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        let j = after.find('}')?;
        if !valid_var(&after[..j]) {
            return None;
        }
        lits.push(&rest[..i]);
        rest = &after[j + 1..];
    }
    lits.push(rest);
    let (first, last) = (lits[0], lits[lits.len() - 1]);
    if !val.starts_with(first) || !val.ends_with(last) || first.len() + last.len() > val.len() {
        return None;
    }
    let (lo, hi) = (first.len(), val.len() - last.len());
    let mut out = Vec::new();
    let mut pos = lo;
    for lit in &lits[1..lits.len() - 1] {
        let k = val[pos..hi].find(lit)?;
        out.push(Zeroizing::new(val[pos..pos + k].to_string()));
        pos += k + lit.len();
    }
    out.push(Zeroizing::new(val[pos..hi].to_string()));
    let mut end = hi;
    for lit in lits[1..lits.len() - 1].iter().rev() {
        let k = val[lo..end].rfind(lit)? + lo;
        out.push(Zeroizing::new(val[k + lit.len()..end].to_string()));
        end = k;
    }
    out.push(Zeroizing::new(val[lo..end].to_string()));
    Some(out)
}

#[cfg(test)]
mod tests;

//! The rendered bundle: decoding, the canonical sha, path safety, its metadata and secrets
//! manifest, `.env` rendering, and staging it on disk. Every refusal here happens before a
//! lease or an OpenBao request.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::tenancy::BundleWire;

pub const MAX_FILES: usize = 512;
pub const MAX_PATH: usize = 255;
pub const MAX_ENTRIES: usize = 256;

/// A refusal: a code from the protocol's list plus a detail that names things, never values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub detail: String,
}

impl Refusal {
    pub fn new(code: &'static str, detail: impl Into<String>) -> Self {
        Refusal {
            code,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl std::error::Error for Refusal {}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AgentFlags {
    pub allow_privileged: bool,
    pub allow_rollback: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Meta {
    pub serial: u64,
    pub need_bytes: u64,
    pub agent: AgentFlags,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Entry {
    #[serde(default)]
    pub var: Option<String>,
    pub path: String,
    #[serde(default = "default_key")]
    pub key: String,
    #[serde(default)]
    pub version: Option<u64>,
    #[serde(default, rename = "use")]
    pub use_: Option<String>,
}

fn default_key() -> String {
    "value".into()
}

pub const USE_REGISTRY_AUTH: &str = "registry-auth";

impl Entry {
    pub fn is_registry_auth(&self) -> bool {
        self.use_.as_deref() == Some(USE_REGISTRY_AUTH)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Manifest {
    #[serde(default)]
    pub entries: Vec<Entry>,
}

pub struct Bundle {
    pub sha: String,
    pub files: BTreeMap<String, Vec<u8>>,
    pub meta: Meta,
    pub manifest: Manifest,
}

/// The protocol's canonical sha: for each file in ascending byte order of path,
/// `path ‖ 0x00 ‖ u64-be(len) ‖ content`.
pub fn canonical_sha<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut sorted: Vec<(&str, &[u8])> = files.into_iter().collect();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    for (p, c) in sorted {
        h.update(p.as_bytes());
        h.update([0u8]);
        h.update((c.len() as u64).to_be_bytes());
        h.update(c);
    }
    hex::encode(h.finalize())
}

/// Relative, `/`-separated, no empty/`.`/`..` components, no NUL or backslash, bounded length.
pub fn check_path(p: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err("empty path".into());
    }
    if p.len() > MAX_PATH {
        return Err(format!("path longer than {MAX_PATH} bytes"));
    }
    if p.contains('\0') {
        return Err("path contains NUL".into());
    }
    if p.contains('\\') {
        return Err(format!("{p:?} contains a backslash"));
    }
    if p.starts_with('/') {
        return Err(format!("{p:?} is absolute"));
    }
    for c in p.split('/') {
        match c {
            "" => return Err(format!("{p:?} has an empty component")),
            "." | ".." => return Err(format!("{p:?} has a {c:?} component")),
            _ => {}
        }
    }
    Ok(())
}

impl Bundle {
    /// Decode the wire bundle, check every path, and verify the sha against the one asked for.
    pub fn decode(w: BundleWire, env_id: &str, want_sha: &str) -> Result<Bundle, Refusal> {
        if w.env_id != env_id {
            return Err(Refusal::new(
                "BUNDLE_ENV_MISMATCH",
                format!("bundle is for {:?}, this box is {env_id:?}", w.env_id),
            ));
        }
        if w.files.len() > MAX_FILES {
            return Err(Refusal::new(
                "BUNDLE_TOO_LARGE",
                format!("{} files (max {MAX_FILES})", w.files.len()),
            ));
        }
        let mut files = BTreeMap::new();
        for f in w.files {
            check_path(&f.path).map_err(|e| Refusal::new("BUNDLE_PATH_UNSAFE", e))?;
            // a file and a directory of the same name cannot both be written
            let content = base64::engine::general_purpose::STANDARD
                .decode(f.content_b64.as_bytes())
                .map_err(|e| {
                    Refusal::new("BUNDLE_INVALID", format!("{}: content_b64: {e}", f.path))
                })?;
            if files.insert(f.path.clone(), content).is_some() {
                return Err(Refusal::new(
                    "BUNDLE_PATH_UNSAFE",
                    format!("{:?} appears twice", f.path),
                ));
            }
        }
        for p in files.keys() {
            let mut prefix = String::new();
            for c in p.split('/').collect::<Vec<_>>().iter().rev().skip(1).rev() {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(c);
                if files.contains_key(&prefix) {
                    return Err(Refusal::new(
                        "BUNDLE_PATH_UNSAFE",
                        format!("{prefix:?} is both a file and a directory"),
                    ));
                }
            }
        }
        let sha = canonical_sha(files.iter().map(|(p, c)| (p.as_str(), c.as_slice())));
        if sha != want_sha || w.sha.to_ascii_lowercase() != want_sha {
            return Err(Refusal::new(
                "BUNDLE_SHA_MISMATCH",
                format!("content hashes to {sha}, expected {want_sha}"),
            ));
        }
        if !files.contains_key("compose.yaml") {
            return Err(Refusal::new(
                "BUNDLE_INVALID",
                "no compose.yaml in the bundle",
            ));
        }
        let meta: Meta = match files.get("bundle.json") {
            Some(b) => serde_json::from_slice(b)
                .map_err(|e| Refusal::new("BUNDLE_INVALID", format!("bundle.json: {e}")))?,
            None => Meta::default(),
        };
        let manifest: Manifest = match files.get("secrets.manifest.json") {
            Some(b) => serde_json::from_slice(b).map_err(|e| {
                Refusal::new("BUNDLE_INVALID", format!("secrets.manifest.json: {e}"))
            })?,
            None => Manifest::default(),
        };
        if manifest.entries.len() > MAX_ENTRIES {
            return Err(Refusal::new(
                "BUNDLE_INVALID",
                "secrets manifest has too many entries",
            ));
        }
        Ok(Bundle {
            sha,
            files,
            meta,
            manifest,
        })
    }

    pub fn compose(&self) -> &[u8] {
        self.files
            .get("compose.yaml")
            .map(|v| v.as_slice())
            .unwrap_or_default()
    }

    pub fn env_template(&self) -> String {
        self.files
            .get("env.template")
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    }

    /// Every manifest path must sit under `<kv_mount>/data/<env_id>/see/`: refused before any
    /// OpenBao request. Env entries need a valid variable name; a variable appears once.
    pub fn check_manifest(&self, kv_mount: &str, env_id: &str) -> Result<(), Refusal> {
        let prefix = format!("{kv_mount}/data/{env_id}/see/");
        let mut vars = BTreeSet::new();
        for e in &self.manifest.entries {
            let rest = e.path.strip_prefix(&prefix);
            let ok = matches!(rest, Some(r) if !r.is_empty() && check_path(r).is_ok() && !r.contains(['?', '#', '%']));
            if !ok {
                return Err(Refusal::new(
                    "MANIFEST_PATH_FOREIGN",
                    format!("{} is outside {prefix}", e.path),
                ));
            }
            // the path goes into a URL as is: only what needs no escaping (anything else would
            // fail as a transport error and be retried forever)
            if !e
                .path
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~/".contains(c))
            {
                return Err(Refusal::new(
                    "BUNDLE_INVALID",
                    format!(
                        "manifest path {:?} has characters outside [A-Za-z0-9._~/-]",
                        e.path
                    ),
                ));
            }
            if e.key.is_empty() {
                return Err(Refusal::new(
                    "BUNDLE_INVALID",
                    format!("manifest entry {} has an empty key", e.path),
                ));
            }
            if e.is_registry_auth() {
                continue;
            }
            if let Some(u) = &e.use_ {
                return Err(Refusal::new(
                    "BUNDLE_INVALID",
                    format!("manifest entry {}: unknown use {u:?}", e.path),
                ));
            }
            let var = e.var.as_deref().unwrap_or_default();
            if !valid_var(var) {
                return Err(Refusal::new(
                    "BUNDLE_INVALID",
                    format!("manifest entry {} has no valid var name", e.path),
                ));
            }
            if !vars.insert(var) {
                return Err(Refusal::new(
                    "BUNDLE_INVALID",
                    format!("manifest names {var} twice"),
                ));
            }
        }
        Ok(())
    }
}

impl Bundle {
    /// Every placeholder `env.template` uses must be a manifest variable: `ENV_INCOMPLETE` is
    /// known before the lease, so a bundle that cannot render leases nothing and reads nothing.
    pub fn check_env_template(&self) -> Result<(), Refusal> {
        let names: BTreeMap<String, Zeroizing<String>> = self
            .manifest
            .entries
            .iter()
            .filter(|e| !e.is_registry_auth())
            .filter_map(|e| e.var.clone())
            .map(|v| (v, Zeroizing::new(String::new())))
            .collect();
        render_env(&self.env_template(), &names).map(|_| ())
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
            "ENV_INCOMPLETE",
            format!(
                "unresolved: {}",
                missing.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    if !unsafe_vals.is_empty() {
        return Err(Refusal::new(
            "ENV_VALUE_UNSAFE",
            format!(
                "secret value contains a line break: {}",
                unsafe_vals.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    if !inexact.is_empty() {
        return Err(Refusal::new(
            "ENV_VALUE_UNSAFE",
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

/// Write the bundle and `.env` into a fresh staging directory (0700 dirs, 0600 files).
pub fn stage(dir: &Path, b: &Bundle, env: &str) -> Result<(), crate::state::StateError> {
    use crate::state::{ensure_dir, write_private, StateError};
    if dir.symlink_metadata().is_ok() {
        std::fs::remove_dir_all(dir)
            .map_err(|e| StateError::new("cannot clear staging", dir, e))?;
    }
    ensure_dir(dir, 0o700)?;
    for (p, content) in &b.files {
        let target = dir.join(p);
        if let Some(parent) = target.parent() {
            if parent != dir {
                ensure_dir(parent, 0o700)?;
            }
        }
        write_private(&target, content, 0o600)?;
    }
    write_private(&dir.join(".env"), env.as_bytes(), 0o600)
}

#[cfg(test)]
mod tests;

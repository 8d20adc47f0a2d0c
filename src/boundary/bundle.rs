//! The rendered bundle: the refusal type, decoding, the canonical sha, path safety, its
//! metadata and secrets manifest, and staging it on disk. `.env` rendering lives in
//! `bundle/env.rs` (re-exported here). Every refusal here happens before a lease or an OpenBao
//! request.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use monky_wire::tenancy::BundleWire;

mod env;
pub use env::{
    dotenv_decode, dotenv_encode, dotenv_variables, render_env, valid_var, values_from_rendered,
};

pub const MAX_FILES: usize = 512;
pub const MAX_PATH: usize = 255;
pub const MAX_ENTRIES: usize = 256;
/// A file of a release read back by the agent (compose.yaml, bundle.json, .env) is at most this.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

use crate::{Refusal, RefusalCode};

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
    /// The release's data (PROTOCOL 0.6): volumes snapshotted before it starts, and the
    /// services stopped for the copy.
    pub data: Option<DataSpec>,
    /// Services whose containers may hold the update lock (PROTOCOL 0.6).
    pub update_lock: Vec<String>,
}

/// `bundle.json`'s `data` (PROTOCOL 0.6).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct DataSpec {
    /// Top-level volume keys of the bundle's compose file.
    pub snapshot: Vec<String>,
    /// Services of the running release stopped while the copy runs.
    pub stop: Vec<String>,
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
    /// The release statement accepted for it (PROTOCOL 0.5), once `fetch_bundle` checked it.
    pub statement: Option<crate::statement::BundleStatement>,
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

/// Why a bundle path is unsafe (the path quoted, never raw: it may hold anything).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsafePath {
    #[error("empty path")]
    Empty,
    #[error("path longer than {MAX_PATH} bytes")]
    TooLong,
    #[error("path contains NUL")]
    Nul,
    #[error("{0:?} contains a backslash")]
    Backslash(String),
    #[error("{0:?} is absolute")]
    Absolute(String),
    #[error("{0:?} has an empty component")]
    EmptyComponent(String),
    /// A `.` or `..` component.
    #[error("{0:?} has a {1:?} component")]
    Dots(String, &'static str),
}

/// Relative, `/`-separated, no empty/`.`/`..` components, no NUL or backslash, bounded length.
pub fn check_path(p: &str) -> Result<(), UnsafePath> {
    if p.is_empty() {
        return Err(UnsafePath::Empty);
    }
    if p.len() > MAX_PATH {
        return Err(UnsafePath::TooLong);
    }
    if p.contains('\0') {
        return Err(UnsafePath::Nul);
    }
    if p.contains('\\') {
        return Err(UnsafePath::Backslash(p.to_string()));
    }
    if p.starts_with('/') {
        return Err(UnsafePath::Absolute(p.to_string()));
    }
    for c in p.split('/') {
        match c {
            "" => return Err(UnsafePath::EmptyComponent(p.to_string())),
            "." => return Err(UnsafePath::Dots(p.to_string(), ".")),
            ".." => return Err(UnsafePath::Dots(p.to_string(), "..")),
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
                RefusalCode::BundleEnvMismatch,
                format!("bundle is for {:?}, this box is {env_id:?}", w.env_id),
            ));
        }
        if w.files.len() > MAX_FILES {
            return Err(Refusal::new(
                RefusalCode::BundleTooLarge,
                format!("{} files (max {MAX_FILES})", w.files.len()),
            ));
        }
        let mut files = BTreeMap::new();
        for f in w.files {
            check_path(&f.path)
                .map_err(|e| Refusal::new(RefusalCode::BundlePathUnsafe, e.to_string()))?;
            // a file and a directory of the same name cannot both be written
            let content = base64::engine::general_purpose::STANDARD
                .decode(f.content_b64.as_bytes())
                .map_err(|e| {
                    Refusal::new(
                        RefusalCode::BundleInvalid,
                        format!("{}: content_b64: {e}", f.path),
                    )
                })?;
            if files.insert(f.path.clone(), content).is_some() {
                return Err(Refusal::new(
                    RefusalCode::BundlePathUnsafe,
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
                        RefusalCode::BundlePathUnsafe,
                        format!("{prefix:?} is both a file and a directory"),
                    ));
                }
            }
        }
        let sha = canonical_sha(files.iter().map(|(p, c)| (p.as_str(), c.as_slice())));
        if sha != want_sha || w.sha.to_ascii_lowercase() != want_sha {
            return Err(Refusal::new(
                RefusalCode::BundleShaMismatch,
                format!("content hashes to {sha}, expected {want_sha}"),
            ));
        }
        if !files.contains_key("compose.yaml") {
            return Err(Refusal::new(
                RefusalCode::BundleInvalid,
                "no compose.yaml in the bundle",
            ));
        }
        let meta: Meta = match files.get("bundle.json") {
            Some(b) => serde_json::from_slice(b).map_err(|e| {
                Refusal::new(RefusalCode::BundleInvalid, format!("bundle.json: {e}"))
            })?,
            None => Meta::default(),
        };
        let manifest: Manifest = match files.get("secrets.manifest.json") {
            Some(b) => serde_json::from_slice(b).map_err(|e| {
                Refusal::new(
                    RefusalCode::BundleInvalid,
                    format!("secrets.manifest.json: {e}"),
                )
            })?,
            None => Manifest::default(),
        };
        if manifest.entries.len() > MAX_ENTRIES {
            return Err(Refusal::new(
                RefusalCode::BundleInvalid,
                "secrets manifest has too many entries",
            ));
        }
        Ok(Bundle {
            sha,
            files,
            meta,
            manifest,
            statement: None,
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
                    RefusalCode::ManifestPathForeign,
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
                    RefusalCode::BundleInvalid,
                    format!(
                        "manifest path {:?} has characters outside [A-Za-z0-9._~/-]",
                        e.path
                    ),
                ));
            }
            if e.key.is_empty() {
                return Err(Refusal::new(
                    RefusalCode::BundleInvalid,
                    format!("manifest entry {} has an empty key", e.path),
                ));
            }
            if e.is_registry_auth() {
                continue;
            }
            if let Some(u) = &e.use_ {
                return Err(Refusal::new(
                    RefusalCode::BundleInvalid,
                    format!("manifest entry {}: unknown use {u:?}", e.path),
                ));
            }
            let var = e.var.as_deref().unwrap_or_default();
            if !valid_var(var) {
                return Err(Refusal::new(
                    RefusalCode::BundleInvalid,
                    format!("manifest entry {} has no valid var name", e.path),
                ));
            }
            if !vars.insert(var) {
                return Err(Refusal::new(
                    RefusalCode::BundleInvalid,
                    format!("manifest names {var} twice"),
                ));
            }
        }
        Ok(())
    }
}
/// Write the bundle and `.env` into a fresh staging directory (0700 dirs, 0600 files).
/// The list of the bundle's files in a release, one per line: what compose and the agent read on
/// the host, which no container may ever write (docs/POLICY.md).
pub const FILE_LIST: &str = ".monky-files";

pub fn stage(dir: &Path, b: &Bundle, env: &str) -> Result<(), monky_base::files::StateError> {
    use monky_base::files::{ensure_dir, write_private, StateError};
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
    let list: String = b.files.keys().map(|p| format!("{p}\n")).collect();
    write_private(&dir.join(FILE_LIST), list.as_bytes(), 0o600)?;
    write_private(&dir.join(".env"), env.as_bytes(), 0o600)
}

/// The compose label that marks a service as a one-shot job (PROTOCOL 0.4): its container is
/// done when it exited 0.
pub const JOB_LABEL: &str = "monky.job";

#[cfg(test)]
mod tests;

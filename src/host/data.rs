//! The box's data snapshots (PROTOCOL 0.6): where they live, what is recorded of each, which
//! are kept, and the journal that lets the next tick finish what a killed one started. The
//! copying itself is [`crate::snapshot`]'s.
//!
//! Layout, under `<state_dir>/snapshots/` (0700, root's, inside the state dir every bundle is
//! already refused from): `<release sha>/<volume key>/` is the tree, `<release sha>/<volume
//! key>.json` what was taken. The tree is renamed into place only once complete, and the
//! record is written (fsynced) after it: a snapshot counts only when both exist, so a kill at
//! any point leaves either a whole snapshot or one that [`Store::discard_incomplete`] removes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use monky_base::files::{self, StateError};

/// What was taken: the release whose data it holds and the apply that took it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapMeta {
    /// The sha that ran when it was taken (its data).
    pub release: String,
    /// The sha whose apply took it.
    pub taken_for: String,
    /// The volume as `bundle.json`'s `data.snapshot` names it (the compose key).
    pub volume: String,
    /// The engine's name of the volume (`<project>_<key>` or its `name:`).
    pub engine_volume: String,
    /// Apparent bytes of its regular files.
    pub bytes: u64,
    /// Unix seconds.
    pub taken_at: u64,
}

/// A complete snapshot: its record and its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub meta: SnapMeta,
    pub tree: PathBuf,
}

/// The snapshot directory of one instance.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// A volume key is a compose key; only names that are one path component land on disk.
pub fn safe_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 128
        && key != "."
        && key != ".."
        && !key.starts_with('.')
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl Store {
    pub fn new(root: PathBuf) -> Self {
        Store { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn ensure(&self) -> Result<(), StateError> {
        files::ensure_dir(&self.root, 0o700)
    }

    /// Where `release`'s snapshot of `key` is (or will be).
    pub fn tree(&self, release: &str, key: &str) -> PathBuf {
        self.root.join(release).join(key)
    }

    fn record(&self, release: &str, key: &str) -> PathBuf {
        self.root.join(release).join(format!("{key}.json"))
    }

    /// The directory `take` copies into; created 0700.
    pub fn prepare(&self, release: &str) -> Result<PathBuf, StateError> {
        self.ensure()?;
        let dir = self.root.join(release);
        files::ensure_dir(&dir, 0o700)?;
        Ok(dir)
    }

    /// Records a tree that is in place: from now on it counts.
    pub fn commit(&self, meta: &SnapMeta) -> Result<(), StateError> {
        let body = serde_json::to_vec_pretty(meta).unwrap_or_default();
        files::write_private(&self.record(&meta.release, &meta.volume), &body, 0o600)
    }

    /// Every complete snapshot, newest first.
    pub fn list(&self) -> Vec<Snapshot> {
        let mut out = Vec::new();
        let Ok(rd) = std::fs::read_dir(&self.root) else {
            return out;
        };
        for rel in rd.flatten() {
            let Ok(inner) = std::fs::read_dir(rel.path()) else {
                continue;
            };
            for e in inner.flatten() {
                let p = e.path();
                if p.extension().and_then(|x| x.to_str()) != Some("json") {
                    continue;
                }
                let Some(meta) = std::fs::read(&p)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<SnapMeta>(&b).ok())
                else {
                    continue;
                };
                let tree = self.tree(&meta.release, &meta.volume);
                let whole = tree.symlink_metadata().is_ok_and(|m| m.is_dir());
                if whole && safe_key(&meta.volume) {
                    out.push(Snapshot { meta, tree });
                }
            }
        }
        out.sort_by(|a, b| {
            (b.meta.taken_at, &b.meta.release, &b.meta.volume).cmp(&(
                a.meta.taken_at,
                &a.meta.release,
                &a.meta.volume,
            ))
        });
        out
    }

    /// The complete snapshot of `key` that the apply of `taken_for` took of `release`.
    pub fn find(&self, release: &str, taken_for: &str, key: &str) -> Option<Snapshot> {
        self.list().into_iter().find(|s| {
            s.meta.release == release && s.meta.taken_for == taken_for && s.meta.volume == key
        })
    }

    /// Removes what no record vouches for: `.partial` copies, trees without a record, records
    /// without a tree. Returns the paths removed.
    pub fn discard_incomplete(&self) -> Vec<PathBuf> {
        let mut gone = Vec::new();
        let Ok(rd) = std::fs::read_dir(&self.root) else {
            return gone;
        };
        for rel in rd.flatten() {
            let dir = rel.path();
            let Ok(inner) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in inner.flatten() {
                let p = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                let keep = if let Some(key) = name.strip_suffix(".json") {
                    dir.join(key).symlink_metadata().is_ok_and(|m| m.is_dir())
                } else {
                    !name.contains(".partial")
                        && dir.join(format!("{name}.json")).is_file()
                        && e.file_type().is_ok_and(|t| t.is_dir())
                };
                if !keep && remove_any(&p) {
                    gone.push(p);
                }
            }
            // an emptied release directory goes too
            let _ = std::fs::remove_dir(&dir);
        }
        gone
    }

    /// Removes every snapshot of `release`.
    pub fn remove_release(&self, release: &str) -> bool {
        let dir = self.root.join(release);
        dir.symlink_metadata().is_ok() && remove_any(&dir)
    }

    /// Keeps the snapshots of the newest `keep` releases (by the newest `taken_at` of each)
    /// and removes the rest. Returns the releases removed.
    pub fn retain(&self, keep: usize) -> Vec<String> {
        let mut newest: BTreeMap<String, u64> = BTreeMap::new();
        for s in self.list() {
            let e = newest.entry(s.meta.release.clone()).or_default();
            *e = (*e).max(s.meta.taken_at);
        }
        let mut order: Vec<(u64, String)> = newest.into_iter().map(|(r, t)| (t, r)).collect();
        order.sort_by(|a, b| b.cmp(a));
        let mut gone = Vec::new();
        for (_, r) in order.into_iter().skip(keep) {
            if self.remove_release(&r) {
                gone.push(r);
            }
        }
        gone
    }
}

/// `remove_dir_all` never follows a symlink it meets inside (it unlinks the link); a tree
/// here holds whatever a container wrote, so that matters.
fn remove_any(p: &Path) -> bool {
    match p.symlink_metadata() {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(p).is_ok(),
        Ok(_) => std::fs::remove_file(p).is_ok(),
        Err(_) => false,
    }
}

/// Where an apply that touches data is, written before each step it cannot take back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The `stop` services are being stopped or are stopped, the copy runs.
    Copying,
    /// Every snapshot is recorded; the new release is being brought up.
    Up,
    /// The new release's containers are being stopped and the volumes restored.
    Restoring,
}

/// The data journal (`<state_dir>/data.json`): what the next tick must finish or undo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub phase: Phase,
    /// The running release (whose data is snapshotted).
    pub release: String,
    /// The sha being applied.
    pub taken_for: String,
    /// Container ids stopped for the copy: started again if the apply does not go on.
    #[serde(default)]
    pub stopped: Vec<String>,
    /// Volume key → engine volume name.
    #[serde(default)]
    pub volumes: BTreeMap<String, String>,
    /// Unix seconds the journal was first written.
    pub at: u64,
}

impl Journal {
    pub fn load(path: &Path) -> Option<Journal> {
        let b = std::fs::read(path).ok()?;
        serde_json::from_slice(&b).ok()
    }

    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let body = serde_json::to_vec_pretty(self).unwrap_or_default();
        files::write_private(path, &body, 0o600)
    }

    pub fn clear(path: &Path) -> Result<(), StateError> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StateError::new("cannot remove", path, e)),
        }
    }
}

/// Free space needed on the snapshot's filesystem for `bytes` of data (PROTOCOL 0.6).
pub fn need_for(bytes: u64) -> u64 {
    bytes.saturating_add(bytes / 2).saturating_add(2 << 30)
}

#[cfg(test)]
mod tests;

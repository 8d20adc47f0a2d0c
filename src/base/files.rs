//! The private-file writer every module uses: a temporary file in the same directory, created
//! with its final mode, renamed into place — fsynced (data and directory) unless the caller's
//! reader takes a torn file as absent.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// A file operation that failed: what was attempted, on which path, and the system's error.
#[derive(Debug, thiserror::Error)]
#[error("{what} {path}: {err}")]
pub struct StateError {
    pub what: &'static str,
    pub op: FileOp,
    pub path: String,
    pub err: String,
}

/// What failed, where behaviour depends on it (never read out of the text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    /// The private-file writer: the state filesystem is full, read-only or gone.
    Write,
    Other,
}

impl StateError {
    pub fn new(what: &'static str, path: &Path, err: impl ToString) -> Self {
        StateError {
            what,
            op: FileOp::Other,
            path: path.display().to_string(),
            err: err.to_string(),
        }
    }

    /// A write by the private-file writer that failed.
    pub fn write(path: &Path, err: impl ToString) -> Self {
        StateError {
            op: FileOp::Write,
            ..StateError::new("cannot write", path, err)
        }
    }
}

/// Create `dir` (and parents) and force its mode.
pub fn ensure_dir(dir: &Path, mode: u32) -> Result<(), StateError> {
    fs::create_dir_all(dir).map_err(|e| StateError::new("cannot create directory", dir, e))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(mode))
        .map_err(|e| StateError::new("cannot set mode on", dir, e))
}

fn fsync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Atomically replace `path` with `data`, created with `mode` (never briefly wider).
pub fn write_private(path: &Path, data: &[u8], mode: u32) -> Result<(), StateError> {
    write_with(path, data, mode, Sync::Fsync(None)).map(|_| ())
}

/// A file rewritten every tick whose reader takes an unparsable one as absent (`ticked.json`):
/// atomic for readers (tmp + rename) but not fsynced — a power cut may tear it until the next
/// tick writes it again.
pub fn write_unsynced(path: &Path, data: &[u8], mode: u32) -> Result<(), StateError> {
    write_with(path, data, mode, Sync::None).map(|_| ())
}

pub enum Sync<'a> {
    /// fsync the data and the directory; also link the data as this name (best effort).
    Fsync(Option<&'a Path>),
    None,
}

/// `Ok(true)` when the data was also linked as the name `Sync::Fsync` gave.
pub fn write_with(path: &Path, data: &[u8], mode: u32, sync: Sync<'_>) -> Result<bool, StateError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let res = (|| -> std::io::Result<bool> {
        let _ = fs::remove_file(&tmp);
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        f.write_all(data)?;
        let mut linked = false;
        if let Sync::Fsync(link) = &sync {
            f.sync_all()?;
            if let Some(link) = link {
                linked = link_over(&tmp, link);
            }
        }
        #[cfg(feature = "test-hooks")]
        crate::testhook::pause(&format!("mid-write:{name}"));
        fs::rename(&tmp, path)?;
        if let Sync::Fsync(_) = sync {
            fsync_dir(dir);
        }
        Ok(linked)
    })();
    res.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        StateError::write(path, e)
    })
}

/// `link` becomes another name of `file` (a hard link renamed into place). On failure the
/// old `link` is removed: a stale copy must not be mistaken for the fsynced one.
fn link_over(file: &Path, link: &Path) -> bool {
    let tmp = link.with_extension(format!("tmp.{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    if fs::hard_link(file, &tmp)
        .and_then(|_| fs::rename(&tmp, link))
        .is_ok()
    {
        return true;
    }
    let _ = fs::remove_file(&tmp);
    let _ = fs::remove_file(link);
    false
}

/// Point the symlink `link` at `target`, replacing it atomically.
pub fn swap_symlink(target: &Path, link: &Path) -> Result<(), StateError> {
    let dir = link.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".current.tmp.{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)
        .map_err(|e| StateError::new("cannot create symlink", &tmp, e))?;
    fs::rename(&tmp, link).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        StateError::new("cannot replace symlink", link, e)
    })?;
    fsync_dir(dir);
    Ok(())
}

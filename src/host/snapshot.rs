//! Data snapshots (issue 42, PROTOCOL.md "Additions for 0.6"): the copy engine that takes a
//! Docker volume's `_data` tree before a new release starts and, on an automatic rollback, makes
//! the volume exactly that tree again. Pure filesystem; the agent decides when.
//!
//! The volume was written by a container that may be hostile, so the engine never trusts a name
//! in it:
//! - every open is relative to a directory descriptor, by `openat2` with `RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV`, one name at a time; without
//!   `openat2` (Linux < 5.6) the engine refuses ([`SnapError::Unsupported`]) rather than use a
//!   weaker open. The roots themselves are reached like [`monky_boundary::beneath::open_root`]
//!   (the path up to them is the agent's own; the last component must not be a symlink).
//! - a symlink is recreated (`symlinkat`, target verbatim), never followed; device nodes, FIFOs
//!   and sockets are recreated with `mknodat`, never opened; a regular file is opened as
//!   `O_PATH`, `fstat`ed, and only a regular file is reopened for reading (through its own
//!   descriptor, `/proc/self/fd/N`, `O_NONBLOCK`), so a name swapped for a FIFO or a device
//!   between the directory read and the open is neither blocked on nor opened.
//! - the destination side creates with `O_CREAT | O_EXCL`, `mkdirat`, `symlinkat`, `mknodat`,
//!   and sets owners and times with `AT_SYMLINK_NOFOLLOW`: nothing is written through a link.
//! - a mount point inside a tree is refused (`RESOLVE_NO_XDEV`): a snapshot is of one filesystem.
//! - the walk is iterative; a directory deeper than [`MAX_DEPTH`] levels is
//!   [`SnapError::Refused`] (the copy holds two descriptors per level). Removal (the first half of
//!   a restore, [`discard`]) takes any depth: it holds a bounded chain and moves deeper
//!   subtrees up to the root, so a release cannot make its own rollback fail by nesting.
//!
//! What is copied per entry: type, uid/gid, mode with setuid/setgid/sticky (applied after the
//! chown, which clears them), atime and mtime (nanoseconds; directories after their children),
//! content (`FICLONE` where the filesystem can, else `copy_file_range`, holes kept with
//! `SEEK_DATA`/`SEEK_HOLE`), a symlink's target, and the extended attributes of files and
//! directories (set after the chown, which clears `security.capability`). Not copied: xattrs of
//! symlinks and special files; a `security.selinux` label the destination refuses (the
//! destination's default label stays). Hard links come back as separate copies.

mod copy;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::time::Instant;

use sha2::{Digest, Sha256};

/// The deepest directory the copy and the listing walk (levels below the root).
pub const MAX_DEPTH: usize = 4096;

/// What a [`take`] or [`restore`] copied.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub files: u64,
    /// Directories below the root (the root is not counted).
    pub dirs: u64,
    pub symlinks: u64,
    /// FIFOs, sockets, character and block devices.
    pub specials: u64,
    /// The regular files' apparent bytes.
    pub bytes: u64,
    /// Wall time of the whole operation.
    pub seconds: f64,
}

/// The running totals, reported every 256 entries or 64 MiB (and once at the end).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub bytes: u64,
    pub entries: u64,
}

/// Why a snapshot operation failed. `path` is the entry's path relative to the tree's root
/// (escaped: see [`escape`]; `.` is the root), or a root's own path.
#[derive(Debug, thiserror::Error)]
pub enum SnapError {
    /// Content the engine will not copy: too deep, a mount point, an unknown file type, a
    /// destination inside its source.
    #[error("{path}: refused ({reason})")]
    Refused { path: String, reason: String },
    /// The tree changed under the walk (an entry vanished, changed type, or a file shrank).
    #[error("{path}: changed while copied ({reason})")]
    Changed { path: String, reason: String },
    /// The kernel lacks what the engine needs (`openat2`, Linux 5.6).
    #[error("unsupported kernel: {0}")]
    Unsupported(String),
    #[error("{path}: {op}: {source}")]
    Io {
        path: String,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// Copies the tree at `volume_root` into the new directory `dest` (which must not exist; its
/// parent must). The copy goes to the sibling `<dest>.partial` (a stale one is removed first),
/// the filesystem is synced, and only then is it renamed to `dest` and the parent fsynced: a
/// `dest` that exists is a complete snapshot. On failure neither is left behind.
pub fn take(
    volume_root: &Path,
    dest: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats, SnapError> {
    let t0 = Instant::now();
    let mut stats = copy::take(volume_root, dest, progress)?;
    stats.seconds = t0.elapsed().as_secs_f64();
    Ok(stats)
}

/// Makes `volume_root` exactly the tree at `snapshot`: every entry of `volume_root` is removed
/// (never following a symlink, never leaving the root), the snapshot's entries are copied in,
/// and the root directory itself (which stays: Docker owns it) gets the snapshot root's owner,
/// mode, times and xattrs. The filesystem is synced before it returns.
pub fn restore(
    snapshot: &Path,
    volume_root: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats, SnapError> {
    let t0 = Instant::now();
    let mut stats = copy::restore(snapshot, volume_root, progress)?;
    stats.seconds = t0.elapsed().as_secs_f64();
    Ok(stats)
}

/// Removes the tree at `path` (a snapshot, a stale `.partial`) with the same beneath-only walk;
/// any depth. A missing `path` is not an error.
pub fn discard(path: &Path) -> Result<(), SnapError> {
    copy::discard(path)
}

/// The apparent size of the regular files under `root` (for the disk check).
pub fn apparent_bytes(root: &Path) -> Result<u64, SnapError> {
    let mut total = 0u64;
    copy::walk(root, &mut |v| {
        if v.kind == copy::Kind::File {
            total += v.st.st_size as u64;
        }
        Ok(())
    })?;
    Ok(total)
}

/// The tree at `root` as sorted lines, one per entry (the root is `.`):
/// `<path> <type> <uid> <gid> <mode> <mtime s> <what>` where `<path>` is [`escape`]d, `<mode>`
/// is 4 octal digits with the special bits, and `<what>` is `size=<n> sha256=<hex>` for a file,
/// `-> <escaped target>` for a symlink, `rdev=<major>,<minor>` for a device, `-` otherwise; a
/// file or directory with xattrs ends with ` xattrs=<name>:<sha256 of value, 16 hex>,...`.
/// Two trees with equal listings are what the engine promises to copy.
pub fn listing(root: &Path) -> Result<Vec<String>, SnapError> {
    let mut out = Vec::new();
    copy::walk(root, &mut |v| {
        let path = if v.rel.is_empty() {
            ".".to_string()
        } else {
            escape(v.rel)
        };
        let st = v.st;
        let mut xattrs = Vec::new();
        let what = match v.kind {
            copy::Kind::File => {
                let (sha, size, x) = copy::file_facts(v.parent, v.name, v.rel)?;
                xattrs = x;
                format!("size={size} sha256={}", hex::encode(sha))
            }
            copy::Kind::Dir => {
                if let Some(d) = v.dir {
                    xattrs = copy::xattrs_of(d).map_err(|e| SnapError::Io {
                        path: path.clone(),
                        op: "xattrs",
                        source: e.into(),
                    })?;
                }
                "-".to_string()
            }
            copy::Kind::Link => {
                format!("-> {}", escape(&copy::read_link(v.parent, v.name, v.rel)?))
            }
            copy::Kind::Chr | copy::Kind::Blk => format!(
                "rdev={},{}",
                rustix::fs::major(st.st_rdev),
                rustix::fs::minor(st.st_rdev)
            ),
            _ => "-".to_string(),
        };
        let mut line = format!(
            "{path} {} {} {} {:04o} {} {what}",
            v.kind.name(),
            st.st_uid,
            st.st_gid,
            st.st_mode & 0o7777,
            st.st_mtime
        );
        if !xattrs.is_empty() {
            let parts: Vec<String> = xattrs
                .iter()
                .map(|(n, val)| {
                    format!("{}:{}", escape(n), &hex::encode(Sha256::digest(val))[..16])
                })
                .collect();
            line.push_str(" xattrs=");
            line.push_str(&parts.join(","));
        }
        out.push(line);
        Ok(())
    })?;
    out.sort();
    Ok(out)
}

/// A name (bytes: it may hold a newline or be no UTF-8) for a message or the listing: printable
/// ASCII but space and `\` as is, `\n` `\t` `\\`, every other byte `\xNN`.
pub fn escape(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            0x21..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s
}

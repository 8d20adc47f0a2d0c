//! Files inside a release read and checked without following a symlink: every path component is
//! opened relative to its parent's descriptor with `O_NOFOLLOW`, so nothing planted in a
//! release (by a container or a person) can send the agent elsewhere. This is `openat2`'s
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, built from `openat` so it works on any kernel.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Opens `name` in the directory `dir` with `flags | O_NOFOLLOW | O_CLOEXEC`.
fn openat(dir: &OwnedFd, name: &std::ffi::OsStr, flags: i32) -> io::Result<OwnedFd> {
    let c = CString::new(name.as_bytes()).map_err(|_| io::Error::other("NUL in a path"))?;
    // SAFETY: a valid descriptor and a NUL-terminated name; the result is checked.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        // a symlink where a directory or file was expected
        if e.raw_os_error() == Some(libc::ELOOP) || e.raw_os_error() == Some(libc::ENOTDIR) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is a symlink or not a directory", name.to_string_lossy()),
            ));
        }
        return Err(e);
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The release root itself, as a directory descriptor (it must be a real directory, not a
/// symlink). The path up to it is the agent's own (state dir), so it is opened normally up to its
/// last component.
pub fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let parent = root.parent().unwrap_or(Path::new("/"));
    let name = root
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{} has no name", root.display())))?;
    let p = File::open(parent)?;
    let p = OwnedFd::from(p);
    openat(&p, name, libc::O_RDONLY | libc::O_DIRECTORY)
}

/// `rel` (relative, no `..`) inside `root`, every component reached without a symlink; the file
/// must be a regular file.
pub fn open_file(root: &Path, rel: &Path) -> io::Result<File> {
    let mut dir = open_root(root)?;
    let comps: Vec<_> = rel.components().collect();
    let Some((last, dirs)) = comps.split_last() else {
        return Err(io::Error::other("empty path"));
    };
    for c in dirs {
        match c {
            Component::Normal(n) => dir = openat(&dir, n, libc::O_RDONLY | libc::O_DIRECTORY)?,
            Component::CurDir => {}
            _ => {
                return Err(io::Error::other(format!(
                    "{} leaves the release",
                    rel.display()
                )))
            }
        }
    }
    let Component::Normal(n) = last else {
        return Err(io::Error::other(format!(
            "{} leaves the release",
            rel.display()
        )));
    };
    let f = File::from(openat(&dir, n, libc::O_RDONLY)?);
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a regular file", rel.display()),
        ));
    }
    Ok(f)
}

/// The bytes of `rel` inside `root`, read without following a symlink; at most `max` bytes.
pub fn read(root: &Path, rel: &Path, max: u64) -> io::Result<Vec<u8>> {
    let f = open_file(root, rel)?;
    let mut out = Vec::new();
    f.take(max.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(io::Error::other(format!(
            "{} is over {max} bytes",
            rel.display()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn reads_real_files_and_refuses_every_symlink_on_the_way() {
        let d = tempfile::tempdir().unwrap();
        let rel = d.path().join("rel");
        std::fs::create_dir_all(rel.join("config")).unwrap();
        std::fs::write(rel.join("config/app.conf"), b"ok").unwrap();
        std::fs::write(d.path().join("secret"), b"host").unwrap();
        assert_eq!(read(&rel, Path::new("config/app.conf"), 10).unwrap(), b"ok");
        // a symlinked file, a symlinked directory, a symlinked root, `..`
        symlink(d.path().join("secret"), rel.join("link")).unwrap();
        symlink(d.path(), rel.join("dirlink")).unwrap();
        symlink(&rel, d.path().join("rootlink")).unwrap();
        for (root, p) in [
            (rel.clone(), "link"),
            (rel.clone(), "dirlink/secret"),
            (d.path().join("rootlink"), "config/app.conf"),
            (rel.clone(), "../secret"),
            (rel.clone(), "config"),
        ] {
            assert!(read(&root, Path::new(p), 10).is_err(), "{p} was read");
        }
        assert!(read(&rel, Path::new("config/app.conf"), 1).is_err(), "max");
    }
}

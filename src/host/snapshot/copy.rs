//! The engine behind [`super`]: the beneath-only open, the copy walk, the removal walk and the
//! read-only walk. Every name is one component opened relative to its directory's descriptor;
//! no path inside a tree is ever resolved from the top.

use std::ffi::{CStr, CString};
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{
    self as rfs, AtFlags, Dir, FileType, Gid, Mode, OFlags, RenameFlags, ResolveFlags, SeekFrom,
    Stat, Timespec, Timestamps, Uid, XattrFlags,
};
use rustix::io::Errno;
use sha2::{Digest, Sha256};

use super::{escape, Progress, SnapError, Stats, MAX_DEPTH};

/// Removal holds at most this many directory descriptors; a subtree below is moved up to the
/// root and taken by a later pass, so any depth is removed with bounded descriptors.
const REMOVE_CHAIN: usize = 64;
/// Passes over the root before removal gives up on a tree that keeps being refilled.
const REMOVE_PASSES: usize = 10_000;
const PROGRESS_ENTRIES: u64 = 256;
const PROGRESS_BYTES: u64 = 64 << 20;
/// One `copy_file_range` call: few enough calls not to count, small enough for progress.
const CHUNK: u64 = 64 << 20;
/// `XATTR_LIST_MAX` and `XATTR_SIZE_MAX`.
const XATTR_MAX: usize = 65536;

/// Every open inside a tree: no `..` out of the descriptor, no symlink (not even a last
/// component: with `O_NOFOLLOW` too), no magic link, no other filesystem.
fn resolve() -> ResolveFlags {
    ResolveFlags::BENEATH
        | ResolveFlags::NO_SYMLINKS
        | ResolveFlags::NO_MAGICLINKS
        | ResolveFlags::NO_XDEV
}

/// `name` in `dir` by `openat2` (see [`resolve`]), `O_NOFOLLOW | O_CLOEXEC` added.
fn open_beneath(
    dir: BorrowedFd<'_>,
    name: &CStr,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let mut again = 0;
    loop {
        match rfs::openat2(
            dir,
            name,
            flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            mode,
            resolve(),
        ) {
            // the kernel could not rule out a racing rename: it asks to try again
            Err(Errno::AGAIN) if again < 8 => again += 1,
            Err(Errno::INTR) => {}
            r => return r,
        }
    }
}

/// `/proc/self/fd/N`: the inode `fd` holds, whatever its name now names.
fn proc_path(fd: &OwnedFd) -> String {
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}

/// A readable descriptor of the regular file held by the `O_PATH` descriptor `opath`, reopened
/// through `/proc/self/fd` (that inode, not the name: a FIFO or device swapped in under the
/// name is never opened); `O_NONBLOCK` so a lease or lock cannot hang the walk.
fn reopen(opath: &OwnedFd) -> Result<OwnedFd, Errno> {
    rfs::open(
        proc_path(opath).as_str(),
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// `rel`, and `name` below it, for a message: escaped, cut in the middle when long (a deep
/// path would otherwise fill a report).
fn show(rel: &[u8], name: Option<&CStr>) -> String {
    let mut p = rel.to_vec();
    if let Some(n) = name {
        if !p.is_empty() {
            p.push(b'/');
        }
        p.extend_from_slice(n.to_bytes());
    }
    if p.is_empty() {
        return ".".to_string();
    }
    let s = escape(&p);
    if s.len() <= 400 {
        return s;
    }
    let levels = p.iter().filter(|b| **b == b'/').count() + 1;
    // `escape` is ASCII: any byte index is a char boundary
    format!("{}…({levels} levels)…{}", &s[..180], &s[s.len() - 180..])
}

fn io_err(path: String, op: &'static str, e: Errno) -> SnapError {
    SnapError::Io {
        path,
        op,
        source: e.into(),
    }
}

/// An `open_beneath` that failed, in the caller's words.
fn open_err(path: String, e: Errno) -> SnapError {
    match e {
        Errno::NOSYS => SnapError::Unsupported(
            "openat2 (Linux 5.6) is missing; the engine does not fall back to a weaker open"
                .to_string(),
        ),
        Errno::XDEV => SnapError::Refused {
            path,
            reason: "a mount point inside the tree".to_string(),
        },
        Errno::NOENT => SnapError::Changed {
            path,
            reason: "vanished".to_string(),
        },
        // a directory that became a symlink or a file between the read and the open
        Errno::LOOP | Errno::NOTDIR => SnapError::Changed {
            path,
            reason: "changed type".to_string(),
        },
        e => io_err(path, "open", e),
    }
}

fn root_err(root: &Path, e: std::io::Error) -> SnapError {
    SnapError::Io {
        path: escape(root.as_os_str().as_bytes()),
        op: "open root (a directory, not a symlink)",
        source: e,
    }
}

/// A tree's root: the path up to it is the agent's own, the root itself must not be a symlink.
fn open_root(root: &Path) -> Result<OwnedFd, SnapError> {
    monky_boundary::beneath::open_root(root).map_err(|e| root_err(root, e))
}

/// The directory holding `path` (opened normally: it is the agent's) and `path`'s last name.
fn open_parent(path: &Path) -> Result<(OwnedFd, CString), SnapError> {
    let shown = escape(path.as_os_str().as_bytes());
    let name = path.file_name().ok_or_else(|| SnapError::Refused {
        path: shown.clone(),
        reason: "no last component".to_string(),
    })?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let fd = rfs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io_err(shown.clone(), "open parent directory", e))?;
    let name = CString::new(name.as_bytes()).map_err(|_| SnapError::Refused {
        path: shown,
        reason: "NUL in the name".to_string(),
    })?;
    Ok((fd, name))
}

/// An entry's type as the listing names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Dir,
    File,
    Link,
    Fifo,
    Chr,
    Blk,
    Sock,
    Unknown,
}

impl Kind {
    fn of(st_mode: u32) -> Kind {
        match FileType::from_raw_mode(st_mode) {
            FileType::Directory => Kind::Dir,
            FileType::RegularFile => Kind::File,
            FileType::Symlink => Kind::Link,
            FileType::Fifo => Kind::Fifo,
            FileType::CharacterDevice => Kind::Chr,
            FileType::BlockDevice => Kind::Blk,
            FileType::Socket => Kind::Sock,
            _ => Kind::Unknown,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::Dir => "dir",
            Kind::File => "file",
            Kind::Link => "link",
            Kind::Fifo => "fifo",
            Kind::Chr => "chr",
            Kind::Blk => "blk",
            Kind::Sock => "sock",
            Kind::Unknown => "unknown",
        }
    }
}

fn times(st: &Stat) -> Timestamps {
    Timestamps {
        last_access: Timespec {
            tv_sec: st.st_atime as _,
            tv_nsec: st.st_atime_nsec as _,
        },
        last_modification: Timespec {
            tv_sec: st.st_mtime as _,
            tv_nsec: st.st_mtime_nsec as _,
        },
    }
}

fn owner(st: &Stat) -> (Option<Uid>, Option<Gid>) {
    (
        Some(Uid::from_raw(st.st_uid)),
        Some(Gid::from_raw(st.st_gid)),
    )
}

fn perm(st: &Stat) -> Mode {
    Mode::from_raw_mode(st.st_mode & 0o7777)
}

/// The copy walk's needs as one value (two descriptors per level: see [`raise_nofile`]). Raises
/// the soft limit towards the hard one, once: the limit is per process, and the agent uses
/// epoll, not `select`, so descriptors above 1024 are harmless.
fn raise_nofile() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let want = (2 * MAX_DEPTH + 256) as u64;
        let lim = getrlimit(Resource::Nofile);
        let Some(cur) = lim.current else { return };
        let new = lim.maximum.map_or(want, |max| max.min(want));
        if cur < new {
            // best effort: without it, a deep tree fails with EMFILE naming the path
            let _ = setrlimit(
                Resource::Nofile,
                Rlimit {
                    current: Some(new),
                    maximum: lim.maximum,
                },
            );
        }
    });
}

struct Ctx<'p> {
    stats: Stats,
    entries: u64,
    progress: &'p mut dyn FnMut(Progress),
    told_entries: u64,
    told_bytes: u64,
    /// `FICLONE` and `copy_file_range` until the filesystem says it cannot.
    clone_ok: bool,
    cfr_ok: bool,
    /// The `pread`/`pwrite` fallback's buffer and the xattr buffers, allocated on first use.
    buf: Vec<u8>,
    xlist: Vec<u8>,
    xval: Vec<u8>,
    /// The destination root (dev, ino): met inside the source, it would copy itself.
    dst_root: (u64, u64),
}

impl<'p> Ctx<'p> {
    fn new(progress: &'p mut dyn FnMut(Progress), dst_root: &Stat) -> Self {
        Ctx {
            stats: Stats::default(),
            entries: 0,
            progress,
            told_entries: 0,
            told_bytes: 0,
            clone_ok: true,
            cfr_ok: true,
            buf: Vec::new(),
            xlist: Vec::new(),
            xval: Vec::new(),
            dst_root: (dst_root.st_dev, dst_root.st_ino),
        }
    }

    fn tick(&mut self) {
        if self.entries - self.told_entries >= PROGRESS_ENTRIES
            || self.stats.bytes - self.told_bytes >= PROGRESS_BYTES
        {
            self.tell();
        }
    }

    fn tell(&mut self) {
        self.told_entries = self.entries;
        self.told_bytes = self.stats.bytes;
        (self.progress)(Progress {
            bytes: self.stats.bytes,
            entries: self.entries,
        });
    }

    fn finish(mut self) -> Stats {
        self.tell();
        self.stats
    }
}

pub(super) fn take(
    volume_root: &Path,
    dest: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats, SnapError> {
    raise_nofile();
    let shown = escape(dest.as_os_str().as_bytes());
    let (parent, name) = open_parent(dest)?;
    if let (Ok(p), Ok(v)) = (
        dest.parent().unwrap_or(Path::new(".")).canonicalize(),
        volume_root.canonicalize(),
    ) {
        if p.starts_with(&v) {
            return Err(SnapError::Refused {
                path: shown,
                reason: "the snapshot would be inside the volume".to_string(),
            });
        }
    }
    match rfs::statat(&parent, &name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(_) => {
            return Err(SnapError::Io {
                path: shown,
                op: "create snapshot",
                source: std::io::ErrorKind::AlreadyExists.into(),
            })
        }
        Err(Errno::NOENT) => {}
        Err(e) => return Err(io_err(shown, "stat", e)),
    }
    let mut p = name.as_bytes().to_vec();
    p.extend_from_slice(b".partial");
    let partial = CString::new(p).expect("no NUL: built from a CString");
    let pshown = format!("{shown}.partial");
    // a stale one is from a take that did not finish: never complete, so never restored
    remove_entry(parent.as_fd(), &partial, &pshown)?;
    let src = open_root(volume_root)?;
    rfs::mkdirat(&parent, &partial, Mode::from_raw_mode(0o700))
        .map_err(|e| io_err(pshown.clone(), "mkdir", e))?;
    let stats = match fill_partial(src, parent.as_fd(), &partial, &pshown, progress) {
        Ok(s) => s,
        Err(e) => {
            let _ = remove_entry(parent.as_fd(), &partial, &pshown);
            return Err(e);
        }
    };
    let renamed =
        match rfs::renameat_with(&parent, &partial, &parent, &name, RenameFlags::NOREPLACE) {
            // a filesystem without RENAME_NOREPLACE: `dest` was absent a moment ago
            Err(Errno::INVAL) => rfs::renameat(&parent, &partial, &parent, &name),
            r => r,
        };
    if let Err(e) = renamed {
        let _ = remove_entry(parent.as_fd(), &partial, &pshown);
        return Err(io_err(shown, "rename into place", e));
    }
    rfs::fsync(&parent).map_err(|e| io_err(shown, "fsync parent", e))?;
    Ok(stats)
}

/// The copy into the fresh `<dest>.partial`, synced to disk.
fn fill_partial(
    src: OwnedFd,
    parent: BorrowedFd<'_>,
    partial: &CStr,
    pshown: &str,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats, SnapError> {
    let dst = open_beneath(
        parent,
        partial,
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
    )
    .map_err(|e| open_err(pshown.to_string(), e))?;
    // a default ACL inherited from the parent would land on every entry created below
    strip_xattrs(dst.as_fd()).map_err(|e| io_err(pshown.to_string(), "remove xattr", e))?;
    let st = rfs::fstat(&dst).map_err(|e| io_err(pshown.to_string(), "fstat", e))?;
    let mut ctx = Ctx::new(progress, &st);
    copy_tree(src, dst, &mut ctx)?;
    rfs::syncfs(parent).map_err(|e| io_err(pshown.to_string(), "syncfs", e))?;
    Ok(ctx.finish())
}

pub(super) fn restore(
    snapshot: &Path,
    volume_root: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Stats, SnapError> {
    raise_nofile();
    let shown = escape(volume_root.as_os_str().as_bytes());
    // emptying the volume must not remove the snapshot, and the copy must not copy into itself
    if let (Ok(s), Ok(v)) = (snapshot.canonicalize(), volume_root.canonicalize()) {
        if s.starts_with(&v) || v.starts_with(&s) {
            return Err(SnapError::Refused {
                path: shown,
                reason: "the snapshot and the volume overlap".to_string(),
            });
        }
    }
    let src = open_root(snapshot)?;
    let dst = open_root(volume_root)?;
    empty_dir(dst.as_fd())?;
    strip_xattrs(dst.as_fd()).map_err(|e| io_err(".".to_string(), "remove xattr", e))?;
    let st = rfs::fstat(&dst).map_err(|e| io_err(".".to_string(), "fstat", e))?;
    let keep = dst.try_clone().map_err(|e| root_err(volume_root, e))?;
    let mut ctx = Ctx::new(progress, &st);
    copy_tree(src, dst, &mut ctx)?;
    rfs::syncfs(&keep).map_err(|e| io_err(".".to_string(), "syncfs", e))?;
    Ok(ctx.finish())
}

pub(super) fn discard(path: &Path) -> Result<(), SnapError> {
    let (parent, name) = open_parent(path)?;
    remove_entry(parent.as_fd(), &name, &escape(path.as_os_str().as_bytes()))
}

/// One directory level of the copy: the source being read, its copy, the source's stat (its
/// owner, mode and times go on the copy after its children), where `rel` ended above it.
struct Frame {
    src: Dir,
    dst: OwnedFd,
    st: Stat,
    rel_len: usize,
}

/// Copies the entries of `src_root` into `dst_root`, then `src_root`'s own metadata onto
/// `dst_root`. Iterative; a directory below [`MAX_DEPTH`] levels is refused.
fn copy_tree(src_root: OwnedFd, dst_root: OwnedFd, ctx: &mut Ctx<'_>) -> Result<(), SnapError> {
    let st = rfs::fstat(&src_root).map_err(|e| io_err(".".to_string(), "fstat", e))?;
    let src = Dir::new(src_root).map_err(|e| io_err(".".to_string(), "read directory", e))?;
    let mut rel: Vec<u8> = Vec::new();
    let mut stack = vec![Frame {
        src,
        dst: dst_root,
        st,
        rel_len: 0,
    }];
    loop {
        let depth = stack.len();
        let Some(top) = stack.last_mut() else {
            return Ok(());
        };
        let ent = match top.src.read() {
            None => {
                let f = stack.pop().expect("the frame just read");
                finish_dir(&f, ctx, &rel)?;
                rel.truncate(f.rel_len);
                continue;
            }
            Some(Err(e)) => return Err(io_err(show(&rel, None), "read directory", e)),
            Some(Ok(ent)) => ent,
        };
        let name = ent.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        ctx.entries += 1;
        ctx.tick();
        let sd = top
            .src
            .fd()
            .map_err(|e| io_err(show(&rel, None), "dirfd", e))?;
        let dd = top.dst.as_fd();
        let is_dir = match ent.file_type() {
            FileType::Directory => true,
            // a filesystem without d_type: ask
            FileType::Unknown => rfs::statat(sd, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| Kind::of(st.st_mode) == Kind::Dir),
            _ => false,
        };
        if !is_dir {
            copy_other(sd, dd, name, &rel, ctx)?;
            continue;
        }
        let child = open_dir_pair(sd, dd, name, &rel, depth, ctx)?;
        let rel_len = rel.len();
        if !rel.is_empty() {
            rel.push(b'/');
        }
        rel.extend_from_slice(name.to_bytes());
        ctx.stats.dirs += 1;
        stack.push(Frame { rel_len, ..child });
    }
}

/// The source directory `name` (at `depth` levels) opened and its copy created, 0700 until
/// [`finish_dir`] gives it the source's mode.
fn open_dir_pair(
    sd: BorrowedFd<'_>,
    dd: BorrowedFd<'_>,
    name: &CStr,
    rel: &[u8],
    depth: usize,
    ctx: &Ctx<'_>,
) -> Result<Frame, SnapError> {
    let at = || show(rel, Some(name));
    if depth > MAX_DEPTH {
        return Err(SnapError::Refused {
            path: at(),
            reason: format!("deeper than {MAX_DEPTH} directory levels"),
        });
    }
    let s = open_beneath(sd, name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
        .map_err(|e| open_err(at(), e))?;
    let st = rfs::fstat(&s).map_err(|e| io_err(at(), "fstat", e))?;
    if (st.st_dev, st.st_ino) == ctx.dst_root {
        return Err(SnapError::Refused {
            path: at(),
            reason: "the destination is inside the source".to_string(),
        });
    }
    rfs::mkdirat(dd, name, Mode::from_raw_mode(0o700)).map_err(|e| io_err(at(), "mkdir", e))?;
    let d = open_beneath(dd, name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
        .map_err(|e| open_err(at(), e))?;
    let src = Dir::new(s).map_err(|e| io_err(at(), "read directory", e))?;
    Ok(Frame {
        src,
        dst: d,
        st,
        rel_len: 0,
    })
}

/// A directory's own metadata, once its children are in (their creation changed its mtime).
fn finish_dir(f: &Frame, ctx: &mut Ctx<'_>, rel: &[u8]) -> Result<(), SnapError> {
    let at = || show(rel, None);
    let d = f.dst.as_fd();
    let (uid, gid) = owner(&f.st);
    rfs::fchown(d, uid, gid).map_err(|e| io_err(at(), "chown", e))?;
    let s = f.src.fd().map_err(|e| io_err(at(), "dirfd", e))?;
    copy_xattrs(s, d, ctx).map_err(|(op, e)| io_err(at(), op, e))?;
    rfs::fchmod(d, perm(&f.st)).map_err(|e| io_err(at(), "chmod", e))?;
    rfs::futimens(d, &times(&f.st)).map_err(|e| io_err(at(), "set times", e))
}

/// Anything but a directory: opened as `O_PATH` (no open of the thing itself), its type taken
/// from that descriptor, and recreated.
fn copy_other(
    sd: BorrowedFd<'_>,
    dd: BorrowedFd<'_>,
    name: &CStr,
    rel: &[u8],
    ctx: &mut Ctx<'_>,
) -> Result<(), SnapError> {
    let at = || show(rel, Some(name));
    let p = open_beneath(sd, name, OFlags::PATH, Mode::empty()).map_err(|e| open_err(at(), e))?;
    let st = rfs::fstat(&p).map_err(|e| io_err(at(), "fstat", e))?;
    let (uid, gid) = owner(&st);
    match Kind::of(st.st_mode) {
        Kind::File => {
            let src = reopen(&p).map_err(|e| io_err(at(), "reopen for reading", e))?;
            drop(p);
            let dst = open_beneath(
                dd,
                name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
                Mode::from_raw_mode(0o600),
            )
            .map_err(|e| io_err(at(), "create", e))?;
            copy_data(&src, &dst, &st, ctx, &at)?;
            // chown clears setuid/setgid and security.capability: the mode and xattrs after it
            rfs::fchown(&dst, uid, gid).map_err(|e| io_err(at(), "chown", e))?;
            copy_xattrs(src.as_fd(), dst.as_fd(), ctx).map_err(|(op, e)| io_err(at(), op, e))?;
            rfs::fchmod(&dst, perm(&st)).map_err(|e| io_err(at(), "chmod", e))?;
            rfs::futimens(&dst, &times(&st)).map_err(|e| io_err(at(), "set times", e))?;
            ctx.stats.files += 1;
        }
        Kind::Link => {
            let target =
                rfs::readlinkat(&p, c"", Vec::new()).map_err(|e| io_err(at(), "readlink", e))?;
            rfs::symlinkat(&target, dd, name).map_err(|e| io_err(at(), "symlink", e))?;
            rfs::chownat(dd, name, uid, gid, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| io_err(at(), "chown", e))?;
            rfs::utimensat(dd, name, &times(&st), AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| io_err(at(), "set times", e))?;
            ctx.stats.symlinks += 1;
        }
        kind @ (Kind::Fifo | Kind::Chr | Kind::Blk | Kind::Sock) => {
            rfs::mknodat(
                dd,
                name,
                FileType::from_raw_mode(st.st_mode),
                perm(&st),
                st.st_rdev,
            )
            .map_err(|e| io_err(at(), "mknod", e))?;
            set_node_meta(dd, name, &st, kind).map_err(|(op, e)| io_err(at(), op, e))?;
            ctx.stats.specials += 1;
        }
        Kind::Dir => {
            return Err(SnapError::Changed {
                path: at(),
                reason: "became a directory".to_string(),
            })
        }
        Kind::Unknown => {
            return Err(SnapError::Refused {
                path: at(),
                reason: format!("unknown file type {:o}", st.st_mode),
            })
        }
    }
    Ok(())
}

/// Owner, mode (mknod's was cut by the umask, chown clears setuid) and times of the node just
/// made, through an `O_PATH` descriptor checked to be that node: a node is never opened, and
/// `fchmodat` has no "don't follow" before Linux 6.6.
fn set_node_meta(
    dd: BorrowedFd<'_>,
    name: &CStr,
    st: &Stat,
    kind: Kind,
) -> Result<(), (&'static str, Errno)> {
    let q = open_beneath(dd, name, OFlags::PATH, Mode::empty()).map_err(|e| ("open", e))?;
    let now = rfs::fstat(&q).map_err(|e| ("fstat", e))?;
    if Kind::of(now.st_mode) != kind {
        return Err(("check the node", Errno::STALE));
    }
    let (uid, gid) = owner(st);
    let p = proc_path(&q);
    rfs::chownat(rfs::CWD, p.as_str(), uid, gid, AtFlags::empty()).map_err(|e| ("chown", e))?;
    rfs::chmodat(rfs::CWD, p.as_str(), perm(st), AtFlags::empty()).map_err(|e| ("chmod", e))?;
    rfs::utimensat(rfs::CWD, p.as_str(), &times(st), AtFlags::empty()).map_err(|e| ("set times", e))
}

/// The content of `src` (a regular file of `st`) into the empty `dst`: a clone where the
/// filesystem shares extents, else the kernel's copy, only the data segments of a sparse file.
fn copy_data(
    src: &OwnedFd,
    dst: &OwnedFd,
    st: &Stat,
    ctx: &mut Ctx<'_>,
    at: &dyn Fn() -> String,
) -> Result<(), SnapError> {
    let size = st.st_size as u64;
    if size == 0 {
        return Ok(());
    }
    if ctx.clone_ok {
        match rfs::ioctl_ficlone(dst, src) {
            Ok(()) => {
                ctx.stats.bytes += size;
                ctx.tick();
                return Ok(());
            }
            // not this filesystem (ext4: EOPNOTSUPP): not asked again in this run
            Err(Errno::OPNOTSUPP | Errno::XDEV | Errno::INVAL | Errno::NOTTY | Errno::NOSYS) => {
                ctx.clone_ok = false
            }
            // this file only (busy, …): copied below
            Err(_) => {}
        }
    }
    if (st.st_blocks as u64).saturating_mul(512) >= size {
        return copy_range(src, dst, 0, size, ctx, at);
    }
    // fewer blocks than bytes: holes, kept as holes (the kernel's copy would write zeros)
    let counted = ctx.stats.bytes;
    let mut off = 0;
    while off < size {
        let data = match rfs::seek(src, SeekFrom::Data(off)) {
            Ok(d) => d,
            Err(Errno::NXIO) => break,
            // no SEEK_DATA here: the rest as data
            Err(Errno::INVAL | Errno::OPNOTSUPP) => off,
            Err(e) => return Err(io_err(at(), "seek data", e)),
        };
        if data >= size {
            break;
        }
        let hole = match rfs::seek(src, SeekFrom::Hole(data)) {
            Ok(h) => h.min(size),
            Err(Errno::INVAL | Errno::OPNOTSUPP) => size,
            Err(e) => return Err(io_err(at(), "seek hole", e)),
        };
        copy_range(src, dst, data, hole - data, ctx, at)?;
        off = hole;
    }
    rfs::ftruncate(dst, size).map_err(|e| io_err(at(), "truncate", e))?;
    // the stats count apparent bytes: the holes too
    ctx.stats.bytes = counted + size;
    Ok(())
}

/// `len` bytes at `off` from `src` to the same offset in `dst`: `copy_file_range`, or
/// `pread`/`pwrite` where the kernel cannot.
fn copy_range(
    src: &OwnedFd,
    dst: &OwnedFd,
    off: u64,
    len: u64,
    ctx: &mut Ctx<'_>,
    at: &dyn Fn() -> String,
) -> Result<(), SnapError> {
    let end = off + len;
    let (mut i, mut o) = (off, off);
    while i < end {
        let want = (end - i).min(CHUNK) as usize;
        let n = if ctx.cfr_ok {
            // the kernel moves `i` and `o`
            match rfs::copy_file_range(src, Some(&mut i), dst, Some(&mut o), want) {
                Ok(n) => n,
                Err(Errno::INTR) => continue,
                Err(Errno::XDEV | Errno::INVAL | Errno::OPNOTSUPP | Errno::NOSYS) => {
                    ctx.cfr_ok = false;
                    continue;
                }
                Err(e) => return Err(io_err(at(), "copy_file_range", e)),
            }
        } else {
            if ctx.buf.is_empty() {
                ctx.buf = vec![0; 1 << 20];
            }
            let want = want.min(ctx.buf.len());
            let n = match rustix::io::pread(src, &mut ctx.buf[..want], i) {
                Ok(n) => n,
                Err(Errno::INTR) => continue,
                Err(e) => return Err(io_err(at(), "read", e)),
            };
            let mut w = 0;
            while w < n {
                match rustix::io::pwrite(dst, &ctx.buf[w..n], o + w as u64) {
                    Ok(0) => return Err(io_err(at(), "write", Errno::IO)),
                    Ok(k) => w += k,
                    Err(Errno::INTR) => {}
                    Err(e) => return Err(io_err(at(), "write", e)),
                }
            }
            i += n as u64;
            o += n as u64;
            n
        };
        if n == 0 {
            return Err(SnapError::Changed {
                path: at(),
                reason: "shrank while copied".to_string(),
            });
        }
        ctx.stats.bytes += n as u64;
        ctx.tick();
    }
    Ok(())
}

/// The extended attributes of `src` onto `dst`. A destination without xattrs keeps none; a
/// `security.selinux` label it refuses stays its own.
fn copy_xattrs(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    ctx: &mut Ctx<'_>,
) -> Result<(), (&'static str, Errno)> {
    if ctx.xlist.is_empty() {
        ctx.xlist = vec![0; XATTR_MAX];
        ctx.xval = vec![0; XATTR_MAX];
    }
    let n = match rfs::flistxattr(src, &mut ctx.xlist[..]) {
        Ok(n) => n,
        Err(Errno::OPNOTSUPP) => return Ok(()),
        Err(e) => return Err(("list xattrs", e)),
    };
    let (list, val) = (&ctx.xlist[..n], &mut ctx.xval);
    for raw in list.split_inclusive(|b| *b == 0) {
        let Ok(name) = CStr::from_bytes_with_nul(raw) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let len = match rfs::fgetxattr(src, name, &mut val[..]) {
            Ok(l) => l,
            Err(Errno::NODATA) => continue,
            Err(e) => return Err(("get xattr", e)),
        };
        match rfs::fsetxattr(dst, name, &val[..len], XattrFlags::empty()) {
            Ok(()) => {}
            Err(Errno::OPNOTSUPP) => return Ok(()),
            Err(_) if name.to_bytes() == b"security.selinux" => {}
            Err(e) => return Err(("set xattr", e)),
        }
    }
    Ok(())
}

/// Removes the xattrs of `fd` but `security.*` (a label is the host's to keep): before a
/// directory is filled, so nothing is inherited from it (a default ACL).
fn strip_xattrs(fd: BorrowedFd<'_>) -> Result<(), Errno> {
    let mut list = vec![0u8; XATTR_MAX];
    let n = match rfs::flistxattr(fd, &mut list[..]) {
        Ok(n) => n,
        Err(Errno::OPNOTSUPP) => return Ok(()),
        Err(e) => return Err(e),
    };
    for raw in list[..n].split_inclusive(|b| *b == 0) {
        let Ok(name) = CStr::from_bytes_with_nul(raw) else {
            continue;
        };
        if name.is_empty() || name.to_bytes().starts_with(b"security.") {
            continue;
        }
        match rfs::fremovexattr(fd, name) {
            Ok(()) | Err(Errno::NODATA) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Names and values.
pub(super) type Xattrs = Vec<(Vec<u8>, Vec<u8>)>;

/// The xattrs of `fd`, sorted (the listing's).
pub(super) fn xattrs_of(fd: BorrowedFd<'_>) -> Result<Xattrs, Errno> {
    let mut list = vec![0u8; XATTR_MAX];
    let n = match rfs::flistxattr(fd, &mut list[..]) {
        Ok(n) => n,
        Err(Errno::OPNOTSUPP) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut val = vec![0u8; XATTR_MAX];
    let mut out = Vec::new();
    for raw in list[..n].split_inclusive(|b| *b == 0) {
        let Ok(name) = CStr::from_bytes_with_nul(raw) else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        match rfs::fgetxattr(fd, name, &mut val[..]) {
            Ok(l) => out.push((name.to_bytes().to_vec(), val[..l].to_vec())),
            Err(Errno::NODATA) => {}
            Err(e) => return Err(e),
        }
    }
    out.sort();
    Ok(out)
}

/// Removes `name` in `dir`: a directory with everything in it, anything else unlinked (a
/// symlink is the link). Absent is done.
fn remove_entry(dir: BorrowedFd<'_>, name: &CStr, shown: &str) -> Result<(), SnapError> {
    let st = match rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(io_err(shown.to_string(), "stat", e)),
    };
    if Kind::of(st.st_mode) != Kind::Dir {
        return rfs::unlinkat(dir, name, AtFlags::empty())
            .map_err(|e| io_err(shown.to_string(), "remove", e));
    }
    let fd = open_beneath(dir, name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
        .map_err(|e| open_err(shown.to_string(), e))?;
    empty_dir(fd.as_fd()).map_err(|e| match e {
        SnapError::Io { path, op, source } => SnapError::Io {
            path: format!("{shown}: {path}"),
            op,
            source,
        },
        e => e,
    })?;
    drop(fd);
    rfs::unlinkat(dir, name, AtFlags::REMOVEDIR)
        .map_err(|e| io_err(shown.to_string(), "remove directory", e))
}

/// Removes every entry of the directory `root`, never following a symlink (an unlink removes
/// the link), never opening anything but directories, any depth: the chain of open directories
/// stops at [`REMOVE_CHAIN`] and what is below moves up to `root` for a later pass. Passes go on
/// until one finds `root` empty.
fn empty_dir(root: BorrowedFd<'_>) -> Result<(), SnapError> {
    let mut flattened = 0u64;
    for _ in 0..REMOVE_PASSES {
        let mut top = Dir::read_from(root).map_err(|e| io_err(".".to_string(), "read", e))?;
        // below the root: each directory, its name in its parent, where `rel` ended above it
        let mut chain: Vec<(Dir, CString, usize)> = Vec::new();
        let mut rel: Vec<u8> = Vec::new();
        let mut seen = false;
        loop {
            let deep = chain.len() >= REMOVE_CHAIN;
            let cur = match chain.last_mut() {
                Some(c) => &mut c.0,
                None => &mut top,
            };
            let ent = match cur.read() {
                Some(Ok(ent)) => ent,
                Some(Err(e)) => return Err(io_err(show(&rel, None), "read directory", e)),
                None => {
                    let Some((d, name, len)) = chain.pop() else {
                        break;
                    };
                    drop(d);
                    rel.truncate(len);
                    let parent = match chain.last() {
                        Some(c) => c.0.fd(),
                        None => top.fd(),
                    }
                    .map_err(|e| io_err(show(&rel, None), "dirfd", e))?;
                    match rfs::unlinkat(parent, &name, AtFlags::REMOVEDIR) {
                        // refilled, or entries this read missed: the next pass
                        Ok(()) | Err(Errno::NOENT) | Err(Errno::NOTEMPTY) => {}
                        Err(e) => {
                            return Err(io_err(show(&rel, Some(&name)), "remove directory", e))
                        }
                    }
                    continue;
                }
            };
            let name = ent.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            seen = true;
            let dir = cur.fd().map_err(|e| io_err(show(&rel, None), "dirfd", e))?;
            let at = || show(&rel, Some(name));
            let is_dir = match ent.file_type() {
                FileType::Directory => true,
                FileType::Unknown => rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| Kind::of(st.st_mode) == Kind::Dir),
                _ => false,
            };
            if !is_dir {
                match rfs::unlinkat(dir, name, AtFlags::empty()) {
                    // gone, or became a directory: the next pass
                    Ok(()) | Err(Errno::NOENT) | Err(Errno::ISDIR) => {}
                    Err(e) => return Err(io_err(at(), "remove", e)),
                }
                continue;
            }
            if deep {
                loop {
                    flattened += 1;
                    let to =
                        CString::new(format!(".monky-snapshot-deep.{flattened}")).expect("no NUL");
                    match rfs::renameat_with(dir, name, root, &to, RenameFlags::NOREPLACE) {
                        Ok(()) | Err(Errno::NOENT) => break,
                        Err(Errno::EXIST) => {}
                        Err(e) => return Err(io_err(at(), "move up", e)),
                    }
                }
                continue;
            }
            let child =
                match open_beneath(dir, name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()) {
                    Ok(fd) => fd,
                    Err(Errno::NOENT) => continue,
                    // no longer a directory: the name goes, whatever it is now
                    Err(Errno::NOTDIR | Errno::LOOP) => {
                        match rfs::unlinkat(dir, name, AtFlags::empty()) {
                            Ok(()) | Err(Errno::NOENT) | Err(Errno::ISDIR) => {}
                            Err(e) => return Err(io_err(at(), "remove", e)),
                        }
                        continue;
                    }
                    Err(e) => return Err(open_err(at(), e)),
                };
            let d = Dir::new(child).map_err(|e| io_err(at(), "read directory", e))?;
            let len = rel.len();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(name.to_bytes());
            chain.push((d, name.to_owned(), len));
        }
        if !seen {
            return Ok(());
        }
    }
    Err(SnapError::Changed {
        path: ".".to_string(),
        reason: "kept being refilled while emptied".to_string(),
    })
}

/// One entry of [`walk`]: its path under the root (empty for the root), its `lstat`, its
/// directory's descriptor and name there, and its own descriptor when it is a directory.
pub(super) struct Visit<'a> {
    pub rel: &'a [u8],
    pub st: &'a Stat,
    pub kind: Kind,
    pub parent: BorrowedFd<'a>,
    pub name: &'a CStr,
    pub dir: Option<BorrowedFd<'a>>,
}

/// Every entry under `root`, the root first, read-only: entries are `lstat`ed by name in their
/// directory's descriptor, only directories are opened.
pub(super) fn walk(
    root: &Path,
    visit: &mut dyn FnMut(&Visit<'_>) -> Result<(), SnapError>,
) -> Result<(), SnapError> {
    raise_nofile();
    let rfd = open_root(root)?;
    let st = rfs::fstat(&rfd).map_err(|e| io_err(".".to_string(), "fstat", e))?;
    visit(&Visit {
        rel: b"",
        st: &st,
        kind: Kind::Dir,
        parent: rfd.as_fd(),
        name: c".",
        dir: Some(rfd.as_fd()),
    })?;
    let mut rel: Vec<u8> = Vec::new();
    let top = Dir::new(rfd).map_err(|e| io_err(".".to_string(), "read directory", e))?;
    let mut stack: Vec<(Dir, usize)> = vec![(top, 0)];
    loop {
        let depth = stack.len();
        let Some((d, _)) = stack.last_mut() else {
            return Ok(());
        };
        let ent = match d.read() {
            Some(Ok(ent)) => ent,
            Some(Err(e)) => return Err(io_err(show(&rel, None), "read directory", e)),
            None => {
                let (_, len) = stack.pop().expect("the frame just read");
                rel.truncate(len);
                continue;
            }
        };
        let name = ent.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        let dfd = d.fd().map_err(|e| io_err(show(&rel, None), "dirfd", e))?;
        let st = rfs::statat(dfd, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| match e {
            Errno::NOENT => open_err(show(&rel, Some(name)), e),
            e => io_err(show(&rel, Some(name)), "stat", e),
        })?;
        let kind = Kind::of(st.st_mode);
        let len = rel.len();
        if !rel.is_empty() {
            rel.push(b'/');
        }
        rel.extend_from_slice(name.to_bytes());
        if kind != Kind::Dir {
            visit(&Visit {
                rel: &rel,
                st: &st,
                kind,
                parent: dfd,
                name,
                dir: None,
            })?;
            rel.truncate(len);
            continue;
        }
        if depth > MAX_DEPTH {
            return Err(SnapError::Refused {
                path: show(&rel, None),
                reason: format!("deeper than {MAX_DEPTH} directory levels"),
            });
        }
        let sub = open_beneath(dfd, name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
            .map_err(|e| open_err(show(&rel, None), e))?;
        let st = rfs::fstat(&sub).map_err(|e| io_err(show(&rel, None), "fstat", e))?;
        visit(&Visit {
            rel: &rel,
            st: &st,
            kind,
            parent: dfd,
            name,
            dir: Some(sub.as_fd()),
        })?;
        let sub = Dir::new(sub).map_err(|e| io_err(show(&rel, None), "read directory", e))?;
        stack.push((sub, len));
    }
}

/// The regular file `name` in `dir` for reading, by the `O_PATH` open and reopen the copy uses:
/// anything else is refused without being opened.
pub(super) fn open_regular(
    dir: BorrowedFd<'_>,
    name: &CStr,
    rel: &[u8],
) -> Result<(OwnedFd, Stat), SnapError> {
    let p = open_beneath(dir, name, OFlags::PATH, Mode::empty())
        .map_err(|e| open_err(show(rel, None), e))?;
    let st = rfs::fstat(&p).map_err(|e| io_err(show(rel, None), "fstat", e))?;
    if Kind::of(st.st_mode) != Kind::File {
        return Err(SnapError::Changed {
            path: show(rel, None),
            reason: format!("not a regular file but a {}", Kind::of(st.st_mode).name()),
        });
    }
    let fd = reopen(&p).map_err(|e| io_err(show(rel, None), "reopen for reading", e))?;
    Ok((fd, st))
}

/// A regular file's sha256, size and xattrs (the listing's).
pub(super) fn file_facts(
    dir: BorrowedFd<'_>,
    name: &CStr,
    rel: &[u8],
) -> Result<([u8; 32], u64, Xattrs), SnapError> {
    let (fd, _) = open_regular(dir, name, rel)?;
    let x = xattrs_of(fd.as_fd()).map_err(|e| io_err(show(rel, None), "xattrs", e))?;
    let mut f = std::fs::File::from(fd);
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| SnapError::Io {
            path: show(rel, None),
            op: "read",
            source: e,
        })?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    Ok((h.finalize().into(), size, x))
}

/// A symlink's target, read through an `O_PATH` descriptor of the link (never followed).
pub(super) fn read_link(
    dir: BorrowedFd<'_>,
    name: &CStr,
    rel: &[u8],
) -> Result<Vec<u8>, SnapError> {
    let p = open_beneath(dir, name, OFlags::PATH, Mode::empty())
        .map_err(|e| open_err(show(rel, None), e))?;
    let t =
        rfs::readlinkat(&p, c"", Vec::new()).map_err(|e| io_err(show(rel, None), "readlink", e))?;
    Ok(t.into_bytes())
}

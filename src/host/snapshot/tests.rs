//! The snapshot engine on real trees in the temp dir: every shape a hostile container can leave
//! in a volume, `take` then `restore` over a "migrated" volume, sparse, deep and mounted trees.
//! Owners and device nodes need root: as another user those tests say so and return.

use super::*;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, Timespec, Timestamps};
use sha2::{Digest, Sha256};
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The engine's tests need root (owners, device nodes, a mount), as the agent has; the test
/// command runs as root, so a run without it fails rather than passing untested.
fn root() -> bool {
    assert!(
        rustix::process::geteuid().is_root(),
        "the snapshot tests need root (owners, device nodes, a mount)"
    );
    true
}

/// A fresh directory under the temp dir, removed (with the engine: any shape, any depth) on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "monky-snap-{what}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = discard(&p);
        std::fs::create_dir(&p).unwrap();
        Scratch(p)
    }

    fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = discard(&self.0);
    }
}

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

fn chown(p: &Path, uid: u32, gid: u32) {
    rfs::chownat(
        rfs::CWD,
        p,
        Some(rfs::Uid::from_raw(uid)),
        Some(rfs::Gid::from_raw(gid)),
        AtFlags::SYMLINK_NOFOLLOW,
    )
    .unwrap();
}

fn chmod(p: &Path, mode: u32) {
    rfs::chmodat(rfs::CWD, p, Mode::from_raw_mode(mode), AtFlags::empty()).unwrap();
}

/// atime and mtime `secs` (and some nanoseconds), not following a symlink.
fn touch(p: &Path, secs: i64) {
    let t = Timespec {
        tv_sec: secs,
        tv_nsec: 123_456_789,
    };
    rfs::utimensat(
        rfs::CWD,
        p,
        &Timestamps {
            last_access: t,
            last_modification: t,
        },
        AtFlags::SYMLINK_NOFOLLOW,
    )
    .unwrap();
}

fn mknod(p: &Path, ft: FileType, mode: u32, dev: u64) {
    rfs::mknodat(rfs::CWD, p, ft, Mode::from_raw_mode(mode), dev).unwrap();
    // past the umask
    chmod(p, mode);
}

fn write(p: &Path, data: &[u8], uid: u32, gid: u32, mode: u32) {
    std::fs::write(p, data).unwrap();
    chown(p, uid, gid);
    chmod(p, mode);
}

fn mkdir(p: &Path, uid: u32, gid: u32, mode: u32) {
    std::fs::create_dir(p).unwrap();
    chown(p, uid, gid);
    chmod(p, mode);
}

/// A POSIX default ACL (the `system.posix_acl_default` value) granting `uid` rwx: inherited by
/// every entry created below, unless the engine strips it.
fn default_acl(uid: u32) -> Vec<u8> {
    let mut v = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (0x01u16, 7u16, u32::MAX),
        (0x02, 7, uid),
        (0x04, 5, u32::MAX),
        (0x10, 7, u32::MAX),
        (0x20, 5, u32::MAX),
    ] {
        v.extend_from_slice(&tag.to_le_bytes());
        v.extend_from_slice(&perm.to_le_bytes());
        v.extend_from_slice(&id.to_le_bytes());
    }
    v
}

/// /etc/passwd's bytes, size and mtime, and /etc's mtime: what a followed link would change.
fn etc_facts() -> (Vec<u8>, i64, i64) {
    let data = std::fs::read("/etc/passwd").unwrap();
    let m = std::fs::metadata("/etc/passwd").unwrap();
    let e = std::fs::metadata("/etc").unwrap();
    (Sha256::digest(&data).to_vec(), m.mtime(), e.mtime())
}

/// Every shape the engine copies, with owners, special bits and old mtimes.
fn hostile_tree(v: &Path) {
    write(&v.join("a.txt"), b"hello", 1000, 1000, 0o640);
    let noise: Vec<u8> = (0..100_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    write(&v.join("b.bin"), &noise, 1001, 1002, 0o600);
    write(&v.join("suid"), b"#!/bin/sh\n", 0, 0, 0o4755);
    mkdir(&v.join("sgid_dir"), 1000, 1001, 0o2775);
    write(&v.join("sgid_dir/inner"), b"in", 1001, 1001, 0o2644);
    mkdir(&v.join("sticky"), 0, 0, 0o1777);
    mkdir(&v.join("empty"), 1000, 1000, 0o700);
    symlink("/etc/passwd", v.join("passwd")).unwrap();
    chown(&v.join("passwd"), 1000, 1000);
    symlink("../../x", v.join("up")).unwrap();
    symlink("..", v.join("dotdot")).unwrap();
    symlink("/etc", v.join("etc")).unwrap();
    write(&v.join("h1"), b"linked", 1000, 1000, 0o644);
    std::fs::hard_link(v.join("h1"), v.join("h2")).unwrap();
    mknod(&v.join("fifo"), FileType::Fifo, 0o620, 0);
    chown(&v.join("fifo"), 1000, 1000);
    mknod(
        &v.join("null"),
        FileType::CharacterDevice,
        0o666,
        rfs::makedev(1, 3),
    );
    mknod(&v.join("sock"), FileType::Socket, 0o755, 0);
    // 64 MiB apparent, two 4 KiB data blocks
    let f = std::fs::File::create(v.join("sparse")).unwrap();
    use std::os::unix::fs::FileExt;
    f.write_all_at(&[1u8; 4096], 0).unwrap();
    f.write_all_at(&[2u8; 4096], 32 << 20).unwrap();
    f.set_len(64 << 20).unwrap();
    drop(f);
    write(&v.join("new\nline"), b"nl", 1000, 1000, 0o644);
    std::fs::create_dir(v.join(OsStr::from_bytes(b"caf\xe9 \\dir"))).unwrap();
    write(
        &v.join(OsStr::from_bytes(b"caf\xe9 \\dir/f")),
        b"",
        1000,
        1000,
        0o444,
    );
    write(&v.join("xattr"), b"x", 1000, 1000, 0o644);
    rfs::setxattr(
        v.join("xattr"),
        "user.note",
        b"kept",
        rfs::XattrFlags::empty(),
    )
    .unwrap();
    std::fs::create_dir_all(v.join("d1/d2/d3")).unwrap();
    write(&v.join("d1/d2/d3/f"), b"deep", 1000, 1000, 0o600);
    // times last, children before their directory (creating a child moves its mtime)
    for (i, p) in [
        "a.txt",
        "b.bin",
        "suid",
        "sgid_dir/inner",
        "passwd",
        "up",
        "dotdot",
        "etc",
        "h1",
        "fifo",
        "null",
        "sock",
        "sparse",
        "new\nline",
        "xattr",
        "d1/d2/d3/f",
        "d1/d2/d3",
        "d1/d2",
        "d1",
        "sgid_dir",
        "sticky",
        "empty",
    ]
    .iter()
    .enumerate()
    {
        touch(&v.join(p), 1_000_000_000 + i as i64 * 1000);
    }
    touch(&v.join(OsStr::from_bytes(b"caf\xe9 \\dir")), 1_200_000_000);
    chown(v, 999, 998);
    chmod(v, 0o750);
    touch(v, 1_500_000_000);
}

fn nothing(_: Progress) {}

#[test]
fn snapshot_take_copies_every_shape() {
    if !root() {
        return;
    }
    let s = Scratch::new("take");
    let vol = s.join("vol");
    std::fs::create_dir(&vol).unwrap();
    hostile_tree(&vol);
    let etc = etc_facts();
    let before = listing(&vol).unwrap();
    let snap = s.join("snap");
    let stats = take(&vol, &snap, &mut nothing).unwrap();

    assert_eq!(listing(&snap).unwrap(), before);
    assert_eq!(listing(&vol).unwrap(), before, "the source is untouched");
    assert_eq!(etc_facts(), etc, "/etc was not written through a link");
    assert!(!s.join("snap.partial").exists());
    // what the listing says, spelled out
    let has = |line: &str| before.iter().any(|l| l == line);
    assert!(has(". dir 999 998 0750 1500000000 -"), "{before:#?}");
    assert!(before.iter().any(|l| l.starts_with("suid file 0 0 4755 ")));
    assert!(before
        .iter()
        .any(|l| l.starts_with("sgid_dir dir 1000 1001 2775 ")));
    assert!(before.iter().any(|l| l.starts_with("sticky dir 0 0 1777 ")));
    assert!(before
        .iter()
        .any(|l| l.starts_with("b.bin file 1001 1002 0600 ")));
    assert!(before
        .iter()
        .any(|l| l.starts_with("passwd link 1000 1000 ") && l.ends_with("-> /etc/passwd")));
    assert!(before
        .iter()
        .any(|l| l.starts_with("up link ") && l.ends_with("-> ../../x")));
    assert!(before
        .iter()
        .any(|l| l.starts_with("fifo fifo 1000 1000 0620 ")));
    assert!(before
        .iter()
        .any(|l| l.starts_with("null chr 0 0 0666 ") && l.ends_with("rdev=1,3")));
    assert!(before.iter().any(|l| l.starts_with("sock sock 0 0 0755 ")));
    assert!(before.iter().any(|l| l.starts_with("new\\nline file ")));
    assert!(before
        .iter()
        .any(|l| l.starts_with("caf\\xe9\\x20\\\\dir/f file 1000 1000 0444 ")));
    assert!(before
        .iter()
        .any(|l| l.starts_with("xattr file ") && l.contains(" xattrs=user.note:")));
    // nanoseconds too, not only the listing's seconds
    let m = std::fs::symlink_metadata(snap.join("d1/d2")).unwrap();
    assert_eq!(
        (m.mtime(), m.mtime_nsec()),
        (1_000_000_000 + 17_000, 123_456_789)
    );
    // hard links come back as two files
    let (h1, h2) = (
        std::fs::metadata(snap.join("h1")).unwrap(),
        std::fs::metadata(snap.join("h2")).unwrap(),
    );
    assert_ne!(h1.ino(), h2.ino());
    assert_eq!(std::fs::read(snap.join("h2")).unwrap(), b"linked");
    // holes stayed holes
    let sp = std::fs::metadata(snap.join("sparse")).unwrap();
    assert_eq!(sp.len(), 64 << 20);
    assert!(sp.blocks() * 512 <= 1 << 20, "{} blocks", sp.blocks());
    assert_eq!(
        (stats.files, stats.dirs, stats.symlinks, stats.specials),
        (11, 7, 4, 3),
        "{stats:?}"
    );
    assert_eq!(stats.bytes, apparent_bytes(&vol).unwrap());
    assert_eq!(apparent_bytes(&snap).unwrap(), stats.bytes);
}

#[test]
fn snapshot_restore_undoes_a_migration() {
    if !root() {
        return;
    }
    let s = Scratch::new("restore");
    let vol = s.join("vol");
    std::fs::create_dir(&vol).unwrap();
    hostile_tree(&vol);
    let etc = etc_facts();
    let before = listing(&vol).unwrap();
    let snap = s.join("snap");
    take(&vol, &snap, &mut nothing).unwrap();

    // the new release's migration, and a hostile one's traps
    std::fs::write(vol.join("a.txt"), b"migrated").unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(vol.join("sgid_dir/inner"))
        .unwrap();
    std::fs::remove_file(vol.join("suid")).unwrap();
    std::fs::write(vol.join("added"), b"new").unwrap();
    std::fs::create_dir_all(vol.join("newdir/sub")).unwrap();
    std::fs::remove_dir_all(vol.join("sgid_dir")).unwrap();
    symlink("/etc", vol.join("sgid_dir")).unwrap();
    std::fs::remove_file(vol.join("b.bin")).unwrap();
    mknod(&vol.join("b.bin"), FileType::Fifo, 0o666, 0);
    std::fs::remove_file(vol.join("passwd")).unwrap();
    std::fs::hard_link(vol.join("h1"), vol.join("passwd")).unwrap();
    std::fs::remove_dir(vol.join("empty")).unwrap();
    mknod(&vol.join("empty"), FileType::Fifo, 0o600, 0);
    symlink("/etc/passwd", vol.join("d1/d2/d3/f2")).unwrap();
    // deeper than the removal's descriptor chain
    let mut p = vol.join("deep");
    for _ in 0..150 {
        p.push("n");
    }
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("leaf"), b"leaf").unwrap();
    chown(&vol, 1234, 1234);
    chmod(&vol, 0o777);
    rfs::setxattr(&vol, "user.evil", b"1", rfs::XattrFlags::empty()).unwrap();
    rfs::setxattr(
        &vol,
        "system.posix_acl_default",
        &default_acl(4242),
        rfs::XattrFlags::empty(),
    )
    .unwrap();
    assert_ne!(listing(&vol).unwrap(), before);

    let mut calls = 0;
    let stats = restore(&snap, &vol, &mut |_| calls += 1).unwrap();
    assert_eq!(listing(&vol).unwrap(), before);
    assert_eq!(listing(&snap).unwrap(), before, "the snapshot is untouched");
    assert_eq!(etc_facts(), etc, "/etc was not written through a link");
    assert!(calls >= 1);
    assert_eq!(stats.files, 11);
    // no entry inherited the planted default ACL
    assert!(rfs::getxattr(
        vol.join("a.txt"),
        "system.posix_acl_access",
        &mut [0u8; 256][..]
    )
    .is_err());
    // a second restore over the restored volume is the same tree
    restore(&snap, &vol, &mut nothing).unwrap();
    assert_eq!(listing(&vol).unwrap(), before);
}

#[test]
fn snapshot_sparse_gibibyte_is_copied_as_holes() {
    let s = Scratch::new("sparse");
    let vol = s.join("vol");
    std::fs::create_dir(&vol).unwrap();
    let f = std::fs::File::create(vol.join("big")).unwrap();
    use std::os::unix::fs::FileExt;
    f.write_all_at(&[7u8; 4096], 0).unwrap();
    f.write_all_at(&[8u8; 4096], 512 << 20).unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    let snap = s.join("snap");
    let t = std::time::Instant::now();
    let stats = take(&vol, &snap, &mut nothing).unwrap();
    assert_eq!(stats.bytes, 1 << 30);
    let check = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        assert_eq!(m.len(), 1 << 30);
        assert!(m.blocks() * 512 <= 1 << 20, "{} blocks", m.blocks());
        let f = std::fs::File::open(p).unwrap();
        let mut b = [0u8; 4096];
        f.read_exact_at(&mut b, 0).unwrap();
        assert_eq!(b, [7u8; 4096]);
        f.read_exact_at(&mut b, 512 << 20).unwrap();
        assert_eq!(b, [8u8; 4096]);
        f.read_exact_at(&mut b, 256 << 20).unwrap();
        assert_eq!(b, [0u8; 4096]);
    };
    check(&snap.join("big"));
    std::fs::remove_file(vol.join("big")).unwrap();
    restore(&snap, &vol, &mut nothing).unwrap();
    check(&vol.join("big"));
    // 1 GiB of zeros would take seconds even in the page cache
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}

/// `n` nested directories named `d` under `top`, by descriptor (no path is that long).
fn nest(top: &Path, n: usize) {
    let mut fd = rfs::open(top, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    for _ in 0..n {
        rfs::mkdirat(&fd, "d", Mode::from_raw_mode(0o755)).unwrap();
        fd = rfs::openat(&fd, "d", OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    }
    rfs::openat(
        &fd,
        "leaf",
        OFlags::WRONLY | OFlags::CREATE,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
}

#[test]
fn snapshot_deep_tree_is_refused_and_removed() {
    let s = Scratch::new("deep");
    let vol = s.join("vol");
    std::fs::create_dir(&vol).unwrap();
    std::fs::write(
        vol.join("before"),
        b"some content copied before the refusal",
    )
    .unwrap();
    nest(&vol, 5000);
    let snap = s.join("snap");
    let err = take(&vol, &snap, &mut nothing).unwrap_err();
    let SnapError::Refused { path, reason } = &err else {
        panic!("{err}");
    };
    assert!(reason.contains("deeper than 4096"), "{err}");
    assert!(
        path.starts_with("d/d/d/") && path.contains("(4097 levels)"),
        "{path}"
    );
    assert!(err.to_string().len() < 600, "{err}");
    // a failure mid-copy leaves no snapshot, not even a partial one
    assert!(!snap.exists());
    assert!(!s.join("snap.partial").exists());
    assert!(matches!(listing(&vol), Err(SnapError::Refused { .. })));
    assert!(matches!(
        apparent_bytes(&vol),
        Err(SnapError::Refused { .. })
    ));

    // removal takes any depth: a restore over it, then a discard of another copy
    let small = s.join("small");
    std::fs::create_dir(&small).unwrap();
    std::fs::write(small.join("f"), b"f").unwrap();
    let snap = s.join("snap2");
    take(&small, &snap, &mut nothing).unwrap();
    restore(&snap, &vol, &mut nothing).unwrap();
    assert_eq!(listing(&vol).unwrap(), listing(&small).unwrap());
    let other = s.join("other");
    std::fs::create_dir(&other).unwrap();
    nest(&other, 5000);
    discard(&other).unwrap();
    assert!(!other.exists());
    discard(&other).unwrap();
}

#[test]
fn snapshot_stale_partial_is_replaced_and_dest_never_overwritten() {
    let s = Scratch::new("partial");
    let vol = s.join("vol");
    std::fs::create_dir(&vol).unwrap();
    std::fs::write(vol.join("f"), b"real").unwrap();
    let etc = etc_facts();
    let stale = s.join("snap.partial");
    std::fs::create_dir_all(stale.join("half/way")).unwrap();
    std::fs::write(stale.join("half/way/junk"), b"junk").unwrap();
    symlink("/etc", stale.join("etc")).unwrap();
    symlink("/etc/passwd", stale.join("half/passwd")).unwrap();
    rustix::fs::mkfifoat(rfs::CWD, stale.join("fifo"), Mode::from_raw_mode(0o600)).unwrap();
    let snap = s.join("snap");
    take(&vol, &snap, &mut nothing).unwrap();
    assert_eq!(listing(&snap).unwrap(), listing(&vol).unwrap());
    assert!(!stale.exists());
    assert_eq!(etc_facts(), etc);

    // an existing dest is an error and stays as it was
    std::fs::write(vol.join("g"), b"later").unwrap();
    let held = listing(&snap).unwrap();
    let err = take(&vol, &snap, &mut nothing).unwrap_err();
    assert!(
        matches!(&err, SnapError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists),
        "{err}"
    );
    assert_eq!(listing(&snap).unwrap(), held);
    // also a dangling symlink as dest
    let link = s.join("link");
    symlink(s.join("nowhere"), &link).unwrap();
    assert!(take(&vol, &link, &mut nothing).is_err());
    assert!(!s.join("nowhere").exists());
}

#[test]
fn snapshot_never_opens_a_fifo_a_device_or_a_link_as_a_file() {
    if !root() {
        return;
    }
    let s = Scratch::new("open");
    mknod(&s.join("fifo"), FileType::Fifo, 0o666, 0);
    mknod(
        &s.join("null"),
        FileType::CharacterDevice,
        0o666,
        rfs::makedev(1, 3),
    );
    symlink("/etc/passwd", s.join("link")).unwrap();
    std::fs::create_dir(s.join("dir")).unwrap();
    std::fs::write(s.join("file"), b"ok").unwrap();
    let dir = rfs::open(&s.0, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    use std::os::fd::AsFd;
    // a FIFO opened for reading without O_NONBLOCK would hang here: finishing is the proof
    for name in ["fifo", "null", "dir"] {
        let e = copy::open_regular(dir.as_fd(), &CString::new(name).unwrap(), name.as_bytes())
            .unwrap_err();
        assert!(matches!(e, SnapError::Changed { .. }), "{name}: {e}");
    }
    // a symlink is not even reached: the open refuses it (ELOOP)
    let e = copy::open_regular(dir.as_fd(), c"link", b"link").unwrap_err();
    assert!(matches!(e, SnapError::Changed { .. }), "{e}");
    let (fd, st) = copy::open_regular(dir.as_fd(), c"file", b"file").unwrap();
    assert_eq!(st.st_size, 2);
    drop(fd);
    // the whole engine on the same directory: copies them all, opens none
    let snap = s.join("../").join(format!(
        "{}-snap",
        s.0.file_name().unwrap().to_string_lossy()
    ));
    take(&s.0, &snap, &mut nothing).unwrap();
    assert_eq!(listing(&snap).unwrap(), listing(&s.0).unwrap());
    discard(&snap).unwrap();
}

#[test]
fn snapshot_mount_point_inside_the_volume_is_refused() {
    if !root() {
        return;
    }
    let s = Scratch::new("mount");
    let vol = s.join("vol");
    std::fs::create_dir_all(vol.join("mnt")).unwrap();
    let target = c(&vol.join("mnt"));
    // SAFETY: NUL-terminated strings; the result is checked.
    let rc = unsafe {
        libc::mount(
            c"none".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    assert_eq!(
        rc,
        0,
        "cannot mount a tmpfs here: {}",
        std::io::Error::last_os_error()
    );
    struct Unmount(CString);
    impl Drop for Unmount {
        fn drop(&mut self) {
            // SAFETY: as above.
            unsafe { libc::umount2(self.0.as_ptr(), libc::MNT_DETACH) };
        }
    }
    let _u = Unmount(target);
    std::fs::write(vol.join("mnt/other-fs"), b"x").unwrap();
    let snap = s.join("snap");
    let err = take(&vol, &snap, &mut nothing).unwrap_err();
    assert!(
        matches!(&err, SnapError::Refused { path, reason } if path == "mnt" && reason.contains("mount point")),
        "{err}"
    );
    assert!(!snap.exists() && !s.join("snap.partial").exists());
}

#[test]
fn snapshot_progress_is_reported_in_steps() {
    let s = Scratch::new("progress");
    let vol = s.join("vol");
    std::fs::create_dir(&vol).unwrap();
    for i in 0..1000 {
        std::fs::write(vol.join(format!("f{i}")), [0u8; 100]).unwrap();
    }
    let mut seen: Vec<Progress> = Vec::new();
    let stats = take(&vol, &s.join("snap"), &mut |p| seen.push(p)).unwrap();
    // every 256 entries, and once at the end
    assert_eq!(seen.len(), 1000 / 256 + 1, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].entries < w[1].entries));
    assert_eq!(
        *seen.last().unwrap(),
        Progress {
            bytes: 100_000,
            entries: 1000
        }
    );
    assert_eq!((stats.files, stats.bytes), (1000, 100_000));
}

#[test]
fn snapshot_refuses_overlap_and_symlinked_roots() {
    let s = Scratch::new("overlap");
    let vol = s.join("vol");
    std::fs::create_dir_all(vol.join("sub")).unwrap();
    std::fs::write(vol.join("f"), b"f").unwrap();
    let inside = vol.join("sub/snap");
    assert!(matches!(
        take(&vol, &inside, &mut nothing),
        Err(SnapError::Refused { .. })
    ));
    assert!(!inside.exists() && !vol.join("sub/snap.partial").exists());
    let snap = s.join("snap");
    take(&vol, &snap, &mut nothing).unwrap();
    // restoring a volume over the snapshot that holds it would remove the snapshot
    assert!(matches!(
        restore(&snap, &s.0, &mut nothing),
        Err(SnapError::Refused { .. })
    ));
    assert!(snap.join("f").exists());
    // a root that is a symlink is refused, and its target is not touched
    let elsewhere = s.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("keep"), b"keep").unwrap();
    symlink(&elsewhere, s.join("volink")).unwrap();
    assert!(restore(&snap, &s.join("volink"), &mut nothing).is_err());
    assert!(take(&s.join("volink"), &s.join("snap3"), &mut nothing).is_err());
    assert_eq!(std::fs::read(elsewhere.join("keep")).unwrap(), b"keep");
    assert!(!s.join("snap3").exists());
}

#[test]
fn snapshot_escape_keeps_names_one_line() {
    assert_eq!(escape(b"a b\nc\\d\xe9\t"), "a\\x20b\\nc\\\\d\\xe9\\t");
    assert_eq!(escape("ok-name_1.txt".as_bytes()), "ok-name_1.txt");
    let s = Scratch::new("escape");
    std::fs::write(s.join("two\nlines and space"), b"").unwrap();
    let l = listing(&s.0).unwrap();
    assert_eq!(l.len(), 2);
    assert!(
        l.iter()
            .all(|l| !l.contains('\n') && l.split(' ').count() >= 7),
        "{l:?}"
    );
    assert!(
        l[1].starts_with("two\\nlines\\x20and\\x20space file "),
        "{l:?}"
    );
}

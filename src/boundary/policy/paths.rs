//! Host paths: how a bind source is resolved (as the engine will) and which ones a container
//! may reach.

use std::path::{Component, Path, PathBuf};

use super::{BoxFacts, R};
use crate::{Refusal, RefusalCode};

/// Every refusal of this file: the code the file passes give a host path too.
fn deny(detail: String) -> R {
    Err(Refusal::new(RefusalCode::BindSourceRefused, detail))
}

/// Host files a container may bind read-only wherever they live.
pub const READ_ONLY_FILES: &[&str] = &[
    "/etc/localtime",
    "/etc/timezone",
    "/usr/share/zoneinfo",
    "/etc/ssl/certs",
    "/usr/share/ca-certificates",
];

/// Trees no bind may reach, nor any ancestor of them (a bind of `/var` exposes the engine).
pub const PRIVATE_TREES: &[&str] = &[
    "/proc",
    "/sys",
    "/dev",
    "/boot",
    "/root",
    "/home",
    "/run",
    "/var/run",
    "/var/lib/docker",
    "/var/lib/containerd",
    "/var/lib/kubelet",
    "/etc/monky-deployd",
    "/var/lib/monky-deployd",
    "/opt/openziti",
    "/etc/ssh",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/var/spool/cron",
    "/etc/cron.d",
    "/usr/local/bin",
];

/// Lexically normalised absolute path (no `.`, `..` or doubled slashes).
pub fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// A host path as the engine will resolve it, and every host path that resolution visits: each
/// component walked, every symlink on the way (its own location) and what it pointed to. The
/// engine resolves a bind source again at every container start, so each of these must stay out
/// of every container's reach, not just the final path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traced {
    pub real: PathBuf,
    pub visited: Vec<PathBuf>,
}

/// Symlinks followed at most, as the kernel's own limit (ELOOP past it).
const MAX_HOPS: usize = 40;

/// Resolves `p` component by component as the kernel will (symlinks followed while the path
/// exists, `..` taken after them; a missing rest appended lexically, as the engine creates a
/// missing bind source), recording every path visited.
pub fn trace(p: &Path) -> Traced {
    let mut todo: std::collections::VecDeque<std::ffi::OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut cur = PathBuf::from("/");
    let mut visited = Vec::new();
    let mut hops = 0;
    let mut exists = true;
    while let Some(c) = todo.pop_front() {
        if c == ".." {
            cur.pop();
            continue;
        }
        let next = cur.join(&c);
        visited.push(next.clone());
        if exists {
            match std::fs::symlink_metadata(&next) {
                Ok(m) if m.file_type().is_symlink() && hops < MAX_HOPS => {
                    hops += 1;
                    if let Ok(t) = std::fs::read_link(&next) {
                        if t.is_absolute() {
                            cur = PathBuf::from("/");
                        }
                        for tc in t.components().rev() {
                            match tc {
                                Component::Normal(n) => todo.push_front(n.to_owned()),
                                Component::ParentDir => todo.push_front("..".into()),
                                _ => {}
                            }
                        }
                        continue;
                    }
                }
                Ok(_) => {}
                Err(_) => exists = false,
            }
        }
        cur = next;
    }
    Traced { real: cur, visited }
}

/// Resolves a host path the way the engine will (see [`trace`]).
pub fn resolve(p: &Path) -> PathBuf {
    trace(p).real
}

fn under(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

/// System trees a container may bind read-only (time zone, CA certificates, …) but never
/// writable: a writable bind is root on the host (cron, sudoers, systemd units, binaries,
/// package maintainer scripts, `ld.so.preload`). Also refused writable: anything above them.
pub const READ_ONLY_DEEP: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/var/lib",
    "/var/spool",
];

/// Why a host path is out of a container's reach ([`bind_rule`]); each layer words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreachable {
    NotAbsolute,
    /// It is, is inside, or is above one of the agent's own files.
    AgentFile(PathBuf),
    /// It is, is inside, or is above the engine's paths or a private tree.
    Private(PathBuf),
    /// A socket or a device node.
    SocketOrDevice,
    /// Writable, and reaches a system tree ([`READ_ONLY_DEEP`]).
    SystemTreeWritable,
    /// Outside the release, the box's bind roots and the harmless read-only files.
    OutsideRoots,
}

/// A bind source as the rule judged it: written (lexical), resolved, and how to show it.
#[derive(Debug, Clone)]
pub struct Judged {
    pub lex: PathBuf,
    pub real: PathBuf,
    /// `lex`, or `lex (resolves to real)` when they differ.
    pub shown: String,
}

/// The bind-source rule, the one both layers call. Judged on the path as written and as the
/// engine resolves it: inside the release is allowed; the agent's files, the engine's paths and
/// the private trees are never reachable (nor any ancestor of them; the box's privilege permit
/// lifts all but the agent's files); sockets and devices never; writable never into a system
/// tree; outside the release only into a `bind_roots` entry or, read-only, a harmless system
/// file. `facts` is `None` for a pass that does not know the box: its own trees only, not
/// confined to any root.
pub fn bind_rule(
    src: &Path,
    read_only: bool,
    facts: Option<&BoxFacts>,
) -> (Judged, Result<(), Unreachable>) {
    let lex = lexical(src);
    let real = trace(src).real;
    let shown = if real == lex {
        real.display().to_string()
    } else {
        format!("{} (resolves to {})", lex.display(), real.display())
    };
    let verdict = judge_bind(src, &lex, &real, read_only, facts);
    (Judged { lex, real, shown }, verdict)
}

fn judge_bind(
    src: &Path,
    lex: &Path,
    real: &Path,
    read_only: bool,
    facts: Option<&BoxFacts>,
) -> Result<(), Unreachable> {
    if !src.is_absolute() {
        return Err(Unreachable::NotAbsolute);
    }
    let none = BoxFacts::default();
    let b = facts.unwrap_or(&none);
    let in_release = b
        .release_dir
        .as_ref()
        .is_some_and(|r| under(real, r) && under(lex, r));
    let agent = b.agent_files.iter().map(|p| (p.clone(), true));
    let others = b
        .engine_paths
        .iter()
        .cloned()
        .chain(PRIVATE_TREES.iter().map(PathBuf::from))
        .map(|p| (p, false));
    for (p, is_agent) in agent.chain(others) {
        for cand in [lex, real] {
            // the release dir lives in the state dir: inside it is the one allowed place
            let inside_release = in_release && under(cand, b.release_dir.as_deref().unwrap_or(&p));
            if (under(cand, &p) && !inside_release) || p.starts_with(cand) {
                if b.privileged && !is_agent_file(&p, b) {
                    continue;
                }
                return Err(if is_agent {
                    Unreachable::AgentFile(p)
                } else {
                    Unreachable::Private(p)
                });
            }
        }
    }
    if let Ok(md) = std::fs::metadata(real) {
        use std::os::unix::fs::FileTypeExt;
        let ft = md.file_type();
        if (ft.is_socket() || ft.is_block_device() || ft.is_char_device()) && !b.privileged {
            return Err(Unreachable::SocketOrDevice);
        }
    }
    let in_root = b.bind_roots.iter().any(|r| under(real, r) && under(lex, r));
    // a box's bind_roots entry is the operator's word for writable data
    let system = READ_ONLY_DEEP
        .iter()
        .map(Path::new)
        .any(|d| under(lex, d) || d.starts_with(lex));
    if !read_only && !in_release && !in_root && !b.privileged && system {
        return Err(Unreachable::SystemTreeWritable);
    }
    let confined = facts.is_some() && !b.privileged;
    let harmless_ro = read_only && READ_ONLY_FILES.iter().any(|f| under(real, Path::new(f)));
    if confined && !(in_release || in_root || harmless_ro) {
        return Err(Unreachable::OutsideRoots);
    }
    Ok(())
}

/// The agent's own files stay out of reach even with `privileged` permitted.
fn is_agent_file(p: &Path, b: &BoxFacts) -> bool {
    b.agent_files.iter().any(|q| q == p)
}

/// One bind of a container, as the invariant sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostBind {
    /// The source as written (for the refusal).
    pub source: PathBuf,
    pub traced: Traced,
    pub writable: bool,
}

impl HostBind {
    pub fn new(source: &Path, writable: bool) -> HostBind {
        HostBind {
            source: lexical(source),
            traced: trace(source),
            writable,
        }
    }
}

impl HostBind {
    /// A bind judged by its written path alone (the file passes: the release does not exist
    /// yet); every ancestor counts as visited.
    pub fn lexical(source: &Path, writable: bool) -> HostBind {
        let real = lexical(source);
        let mut visited = Vec::new();
        let mut cur = PathBuf::from("/");
        for c in real.components().skip(1) {
            cur.push(c);
            visited.push(cur.clone());
        }
        HostBind {
            source: real.clone(),
            traced: Traced { real, visited },
            writable,
        }
    }
}

fn strictly_under(p: &Path, dir: &Path) -> bool {
    p != dir && p.starts_with(dir)
}

/// The host boundary's invariant (docs/POLICY.md): no host path that the agent, compose or the
/// engine resolves — at create time or at any later start — passes through a directory that a
/// container on the box can write. `new` are the binds of the container being created, `box_binds`
/// every other bind on the box (other containers, earlier creates of this compose call, earlier
/// releases), `release` the release root and every file of the bundle compose and the agent read.
///
/// Concretely: a writable bind source is never strictly nested in, nor an ancestor of, another
/// bind source (the same directory shared is fine: a mount point cannot be swapped from inside);
/// no path visited resolving any bind (symlinks included) lies inside a writable one; and no
/// file of the release is inside, or is, a writable bind.
pub fn binds_invariant(new: &[HostBind], box_binds: &[HostBind], release: &[PathBuf]) -> R {
    let all: Vec<&HostBind> = new.iter().chain(box_binds).collect();
    for (i, x) in new.iter().enumerate() {
        for (j, y) in all.iter().enumerate() {
            if i == j || !(x.writable || y.writable) {
                continue;
            }
            let (xr, yr) = (&x.traced.real, &y.traced.real);
            let (w, o) = if x.writable { (x, *y) } else { (*y, x) };
            if strictly_under(xr, yr) || strictly_under(yr, xr) {
                return deny(format!(
                    "{}: nested with {}, and {} is writable by a container",
                    x.source.display(),
                    y.source.display(),
                    w.source.display()
                ));
            }
            // a path visited resolving one of them lies inside the other, writable one
            for (a, b) in [(o, w), (w, o)] {
                if !b.writable {
                    continue;
                }
                if let Some(v) = a
                    .traced
                    .visited
                    .iter()
                    .find(|v| strictly_under(v, &b.traced.real))
                {
                    return deny(format!(
                        "{}: resolving it passes through {}, inside {}, which a container may write",
                        a.source.display(),
                        v.display(),
                        b.source.display()
                    ));
                }
            }
        }
    }
    release_outside_writable(new, release)
}

/// A bind the box mounts read-only whatever the bundle wrote (issue 41, POLICY.md "Bundle files
/// bound writable"): its source (as the engine resolves it, or lexically in the file passes) is
/// strictly inside the release root and is, or holds, a file of the release the agent verifies
/// (`release`: the root and every file). The release root itself is not: a writable bind of it
/// is refused, as a container that expects its working directory writable would break on a
/// read-only one, and it holds `.env`.
pub fn read_only_by_construction(source: &Path, release_root: &Path, release: &[PathBuf]) -> bool {
    strictly_under(source, release_root)
        && release
            .iter()
            .any(|f| f.as_path() != release_root && f.starts_with(source))
}

/// No file of the release (nor its root) is a writable bind or inside one: compose and the agent
/// read them on the host, so a container must never be able to change them.
pub fn release_outside_writable(binds: &[HostBind], release: &[PathBuf]) -> R {
    for w in binds.iter().filter(|b| b.writable) {
        if let Some(f) = release.iter().find(|f| f.starts_with(&w.traced.real)) {
            return deny(format!(
                "{}: writable, and holds {}, which compose and the agent read on the host",
                w.source.display(),
                f.display()
            ));
        }
    }
    Ok(())
}

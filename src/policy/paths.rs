//! Host paths: how a bind source is resolved (as the engine will) and which ones a container
//! may reach.

use std::path::{Component, Path, PathBuf};

use super::{deny, Boundary, Refs, R};

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

/// Resolves a host path the way the engine will: symlinks followed as far as the path exists,
/// the rest appended lexically (a missing bind source is created by the engine).
pub fn resolve(p: &Path) -> PathBuf {
    let lex = lexical(p);
    let mut existing = lex.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&existing) {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return lexical(&out);
        }
        match (
            existing.file_name().map(|f| f.to_owned()),
            existing.parent(),
        ) {
            (Some(f), Some(parent)) => {
                rest.push(f);
                existing = parent.to_path_buf();
            }
            _ => return lex,
        }
    }
}

fn under(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

/// The bind-source rule: the engine socket, the Docker data root, the agent's files and the
/// private trees are never reachable (nor any ancestor of them); sockets and devices never;
/// writable only inside the release or a `bind_roots` entry; read-only also for a few
/// harmless system files.
pub fn bind_source(src: &Path, read_only: bool, b: &Boundary, refs: &mut Refs) -> R {
    if !src.is_absolute() {
        return deny(format!("{}: bind source is not absolute", src.display()));
    }
    let lex = lexical(src);
    let real = resolve(src);
    let shown = if real == lex {
        real.display().to_string()
    } else {
        format!("{} (resolves to {})", lex.display(), real.display())
    };
    let in_release = b
        .release_dir
        .as_ref()
        .is_some_and(|r| under(&real, r) && under(&lex, r));
    let mut private: Vec<PathBuf> = b.agent_files.clone();
    private.extend(b.private.iter().cloned());
    private.extend(PRIVATE_TREES.iter().map(PathBuf::from));
    for p in &private {
        for cand in [&lex, &real] {
            // the release dir lives in the state dir: inside it is the one allowed place
            let inside_release = in_release && under(cand, b.release_dir.as_deref().unwrap_or(p));
            if (under(cand, p) && !inside_release) || (p.starts_with(cand.as_path())) {
                if b.privileged && !is_agent_file(p, b) {
                    continue;
                }
                return deny(format!("{shown}: reaches {}", p.display()));
            }
        }
    }
    if let Ok(md) = std::fs::metadata(&real) {
        use std::os::unix::fs::FileTypeExt;
        let ft = md.file_type();
        if (ft.is_socket() || ft.is_block_device() || ft.is_char_device()) && !b.privileged {
            return deny(format!("{shown}: a socket or device"));
        }
    }
    let in_root = b
        .bind_roots
        .iter()
        .any(|r| under(&real, r) && under(&lex, r));
    let harmless_ro = read_only && READ_ONLY_FILES.iter().any(|f| under(&real, Path::new(f)));
    if !(in_release || in_root || harmless_ro || b.privileged) {
        return deny(format!(
            "{shown}: {} bind outside the release and the box's bind_roots",
            if read_only { "read-only" } else { "writable" }
        ));
    }
    if !read_only {
        refs.writable.push(real.clone());
    }
    refs.binds.push(real);
    Ok(())
}

/// The agent's own files stay out of reach even with `privileged` permitted.
fn is_agent_file(p: &Path, b: &Boundary) -> bool {
    b.agent_files.iter().any(|q| q == p)
}

/// "No bind source inside a path another container may write": `writable` are the writable
/// bind sources of every other container on the box.
pub fn inside_writable(refs: &Refs, writable: &[PathBuf]) -> R {
    for s in &refs.binds {
        // strictly inside: the mount point itself cannot be swapped from within a container
        if let Some(w) = writable.iter().find(|w| under(s, w) && s != *w) {
            return deny(format!(
                "{}: inside {}, which another container may write",
                s.display(),
                w.display()
            ));
        }
    }
    Ok(())
}

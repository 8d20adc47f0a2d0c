//! The host-path rules of the file passes: which bind, volume device, secret/config file, build
//! context or env_file a compose file may name, judged lexically (the guard judges the resolved
//! path again).

use std::path::Path;

use super::{BoxFacts, BIND_CODE, CODE};
use crate::bundle::Refusal;
use crate::policy;

/// Host paths a container must not bind, read-only or not: these, anything below them, and
/// anything above them (a bind of `/var` exposes `/var/lib/docker`). One list for the file
/// passes and the engine guard.
const FORBIDDEN_DEEP: &[&str] = policy::PRIVATE_TREES;

/// System trees a container may bind read-only (time zone, CA certificates, …) but never
/// writable: a writable bind is root on the host (cron, sudoers, systemd units, binaries,
/// package maintainer scripts, `ld.so.preload`). Also refused writable: anything above them.
const READ_ONLY_DEEP: &[&str] = &[
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

fn bind_refused(who: &str, src: &str, reason: &str) -> Refusal {
    let who = who.strip_prefix("service ").unwrap_or(who);
    Refusal::new(BIND_CODE, format!("{who} {src} ({reason})"))
}

/// Lexically normalise an absolute path (`//`, `/.`, `/x/..`): the engine guard's normaliser.
pub(super) fn normalise(p: &str) -> String {
    policy::lexical(Path::new(p)).to_string_lossy().into_owned()
}

fn under(p: &str, dir: &str) -> bool {
    dir == "/" || p == dir || p.starts_with(&format!("{dir}/"))
}

fn host_path_forbidden(src: &str, read_only: bool, in_root: bool) -> bool {
    let n = normalise(src);
    if FORBIDDEN_DEEP.iter().any(|d| under(&n, d) || under(d, &n)) {
        return true;
    }
    // a box's bind_roots entry is the operator's word for writable data, as in the guard
    !read_only && !in_root && READ_ONLY_DEEP.iter().any(|d| under(&n, d) || under(d, &n))
}

/// A host path bound into a container (`who` names it in the refusal).
pub(super) fn check_bind(
    who: &str,
    src: &str,
    read_only: bool,
    ctx: Option<&BoxFacts>,
) -> Result<(), Refusal> {
    let s = src.trim();
    if s.starts_with('/') {
        if let Some(ctx) = ctx {
            // compose resolved `./x` against the project dir: the release's own files are fine
            // even when the state dir itself is a forbidden host path (/var/lib/monky-deployd)
            let n = normalise(s);
            let pd = normalise(&super::rules::release_root(Some(ctx)));
            if under(&n, &pd) {
                return Ok(());
            }
            for p in &ctx.agent_files {
                let p = normalise(&p.to_string_lossy());
                if under(&n, &p) || under(&p, &n) {
                    return Err(bind_refused(who, s, "the agent's own files"));
                }
            }
        }
        let real = policy::resolve(Path::new(s));
        let lex = policy::lexical(Path::new(s));
        // confined to the release and the bind roots unless the box permits privilege, as in
        // the guard
        let roots = ctx.filter(|c| !c.privileged).map(|c| &c.bind_roots);
        let in_root = roots
            .into_iter()
            .flatten()
            .any(|r| real.starts_with(r) && lex.starts_with(r));
        if host_path_forbidden(s, read_only, in_root) {
            let how = if read_only { "" } else { ", writable" };
            return Err(bind_refused(
                who,
                s,
                &format!("a private or system path{how}"),
            ));
        }
        // the engine guard's bind rule, early and readable: outside the release only into the
        // box's bind_roots (or a harmless system file, read-only)
        if roots.is_some() {
            let harmless = read_only && policy::READ_ONLY_FILES.iter().any(|f| real.starts_with(f));
            if !in_root && !harmless {
                return Err(bind_refused(
                    who,
                    s,
                    "outside the release and the box's bind_roots",
                ));
            }
        }
    } else if s.starts_with('~') || s.starts_with('$') {
        return Err(bind_refused(who, s, "not a path inside the release"));
    } else if s.split('/').any(|c| c == "..") {
        return Err(bind_refused(who, s, "outside the release"));
    }
    Ok(())
}

/// A volume device is mounted writable whatever the service's mode says.
pub(super) fn check_bind_source(
    who: &str,
    src: &str,
    ctx: Option<&BoxFacts>,
) -> Result<(), Refusal> {
    check_bind(who, src, false, ctx)
}

/// A file compose reads on the host (`env_file`): inside the release only — relative, no `..`,
/// no interpolation; after normalisation, under the project directory.
pub(super) fn check_file_in_release(
    who: &str,
    what: &str,
    p: &str,
    ctx: Option<&BoxFacts>,
) -> Result<(), Refusal> {
    let t = p.trim();
    let inside = if t.starts_with('/') {
        ctx.map(|c| {
            under(
                &normalise(t),
                &normalise(&super::rules::release_root(Some(c))),
            )
        })
        .unwrap_or(false)
    } else {
        !t.starts_with('~') && !t.contains('$') && !t.split('/').any(|c| c == "..")
    };
    if inside {
        Ok(())
    } else {
        Err(Refusal::new(
            CODE,
            format!("{who} reads {what} {t:?} from outside the release"),
        ))
    }
}

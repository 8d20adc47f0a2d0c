//! The host-path rules of the file passes: which bind, volume device, secret/config file, build
//! context or env_file a compose file may name. An absolute source is judged by the engine
//! guard's own bind rule; a relative one must stay inside the release.

use std::path::Path;

use super::{BoxFacts, BIND_CODE, CODE};
use crate::container::{self, Source};
use crate::policy;
use crate::Refusal;

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

/// A host path bound into a container (`who` names it in the refusal): an absolute one by the
/// one bind rule, worded for the file ([`container::host_path`]); a relative one must stay
/// inside the release.
pub(super) fn check_bind(
    who: &str,
    src: &str,
    read_only: bool,
    ctx: Option<&BoxFacts>,
) -> Result<(), Refusal> {
    let s = src.trim();
    if s.starts_with('/') {
        return container::host_path(Source::File, who, s, read_only, ctx);
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
    } else if t.contains('$') && !t.starts_with('/') {
        // compose opens it while it reads the project, before the second pass could judge it
        Err(Refusal::new(
            CODE,
            format!("{who} reads {what} {t:?}, which compose opens before the second pass and the first cannot resolve"),
        )
        .lifted_by(format!("name the {what} plainly (a file of the bundle), or give its variable a plain value in env.template")))
    } else {
        Err(Refusal::new(
            CODE,
            format!("{who} reads {what} {t:?} from outside the release"),
        )
        .lifted_by(format!("read the {what} from a file of the bundle")))
    }
}

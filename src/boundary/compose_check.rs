//! The privilege analysis of a compose file. It runs twice: on the bundle's YAML before the
//! lease (anchors and merge keys resolved), and on the compose CLI's own normalised `config`
//! after `.env` is rendered, so interpolation cannot smuggle a setting past the first pass.
//! This file walks the document and hands each service, as a
//! [`crate::boundary::container::ContainerSpec`], to the container rules the engine guard calls
//! too; `rules` holds the rules only the file shows (one per key), `paths` the host-path
//! wording, `yaml` the parse.

use std::path::PathBuf;

use serde_yaml_ng::Value;

use crate::boundary::bundle::{Refusal, RefusalCode};
use crate::boundary::container::{self, ContainerSpec};

mod paths;
mod rules;
pub(crate) mod yaml;

pub use yaml::{parse, MAX_NODES};

use rules::{Ctx, FILE_RULES, SERVICE_RULES};
use yaml::{as_str, get, untag};

const CODE: RefusalCode = RefusalCode::PrivilegedRefused;
/// A host path a bind, volume device, secret/config file or build context may not use
/// (`<service> <path> (<reason>)`, PROTOCOL 0.3).
pub const BIND_CODE: RefusalCode = RefusalCode::BindSourceRefused;

/// The box's facts both passes judge against (the engine guard's own, [`BoxFacts`]): the
/// release directory compose resolved relative paths against, the agent's own files no
/// container may see, the box's bind roots, project, ports, ceilings and address space.
pub use crate::boundary::BoxFacts;

/// Where the first pass places the release, which does not exist yet: relative paths are judged
/// under it, and it is nowhere on the host.
pub const FIRST_PASS_ROOT: &str = rules::RELEASE;

/// The service names alone, without judging anything (for test builds with the analysis off).
pub fn services(doc: &Value) -> Vec<String> {
    match untag(doc) {
        Value::Mapping(root) => match get(root, "services") {
            Some(Value::Mapping(m)) => m.keys().filter_map(as_str).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// One-shot services (PROTOCOL 0.4): those another service waits on with `depends_on: {x:
/// {condition: service_completed_successfully}}` (compose's own signal), and those labelled
/// `monky.job: "true"` (for a job nothing waits on).
pub fn jobs(doc: &Value) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let Value::Mapping(root) = untag(doc) else {
        return out;
    };
    let Some(Value::Mapping(services)) = get(root, "services") else {
        return out;
    };
    for (k, v) in services {
        let (Some(name), Value::Mapping(s)) = (as_str(k), untag(v)) else {
            continue;
        };
        if let Some(Value::Mapping(deps)) = get(s, "depends_on") {
            for (dk, dv) in deps {
                if let (Some(dep), Value::Mapping(d)) = (as_str(dk), untag(dv)) {
                    if get(d, "condition").and_then(as_str).as_deref()
                        == Some("service_completed_successfully")
                    {
                        out.insert(dep);
                    }
                }
            }
        }
        let label = match get(s, "labels") {
            Some(Value::Mapping(l)) => get(l, crate::boundary::bundle::JOB_LABEL).and_then(as_str),
            Some(Value::Sequence(l)) => l.iter().filter_map(as_str).find_map(|x| {
                x.strip_prefix(crate::boundary::bundle::JOB_LABEL)
                    .and_then(|r| r.strip_prefix('='))
                    .map(String::from)
            }),
            _ => None,
        };
        if label
            .is_some_and(|l| matches!(l.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
        {
            out.insert(name);
        }
    }
    out
}

/// `privileged`, host namespaces, dangerous capabilities, devices, unconfined security options,
/// and bind mounts of the Docker socket, `/` and other host internals. Returns the service names.
pub fn check(doc: &Value, allow_privileged: bool) -> Result<Vec<String>, Refusal> {
    check_in(doc, allow_privileged, None, None)
}

/// The first pass of an apply or a plan, knowing the box (its `ctx.release_dir` is
/// [`FIRST_PASS_ROOT`]): `env_file` and secret/config `file:` must name a bundle file, no
/// writable bind may hold one, and the box's binds, names, ports and limits are judged by the
/// same rules as the second pass and the engine guard.
pub fn check_bundle(
    doc: &Value,
    allow_privileged: bool,
    ctx: &BoxFacts,
) -> Result<Vec<String>, Refusal> {
    check_in(doc, allow_privileged, Some(ctx), Some(&ctx.bundle_files))
}

/// The second pass, on the compose CLI's own normalised `config` (paths already absolute):
/// as [`check`], and a bind of the agent's own files — or of an ancestor of them — is refused
/// while a bind inside the project directory is not.
pub fn check_normalised(
    doc: &Value,
    allow_privileged: bool,
    ctx: &BoxFacts,
) -> Result<Vec<String>, Refusal> {
    check_in(doc, allow_privileged, Some(ctx), None)
}

fn check_in(
    doc: &Value,
    allow_privileged: bool,
    normalised: Option<&BoxFacts>,
    bundle_files: Option<&[String]>,
) -> Result<Vec<String>, Refusal> {
    let root = match untag(doc) {
        Value::Mapping(m) => m,
        _ => {
            return Err(Refusal::new(
                RefusalCode::BundleInvalid,
                "compose.yaml is not a mapping",
            ))
        }
    };
    if get(root, "include").is_some() {
        return Err(Refusal::new(
            CODE,
            "compose.yaml uses include (files outside the bundle's analysis)",
        ));
    }
    let services = match get(root, "services") {
        Some(Value::Mapping(m)) => m,
        _ => {
            return Err(Refusal::new(
                RefusalCode::BundleInvalid,
                "compose.yaml has no services",
            ))
        }
    };
    // a box that permits privileged bundles skips the rules, not the shape checks
    let ctx = if allow_privileged {
        None
    } else {
        let mut ctx = Ctx {
            normalised,
            bundle_files,
            ..Ctx::default()
        };
        for (key, rule) in FILE_RULES {
            if let Some(v) = get(root, key) {
                rule(&mut ctx, key, v)?;
            }
        }
        Some(ctx)
    };
    let mut names = Vec::new();
    for (k, v) in services {
        let svc = as_str(k).unwrap_or_else(|| "?".into());
        names.push(svc.clone());
        let s = match untag(v) {
            Value::Mapping(m) => m,
            Value::Null => continue,
            _ => {
                return Err(Refusal::new(
                    RefusalCode::BundleInvalid,
                    format!("service {svc} is not a mapping"),
                ))
            }
        };
        if let Some(ext) = get(s, "extends") {
            rules::extends(&svc, ext)?;
        }
        // the container rules, the guard's too, over the same description of the service
        let spec = ContainerSpec::from_compose(&svc, s, bundle_files.is_some());
        let none = BoxFacts::default();
        let facts = normalised.unwrap_or(&none);
        // pinning is not a privilege: judged whatever the box permits. The first pass leaves an
        // interpolated image to the second, which sees compose's value
        if normalised.is_some() {
            container::image(&spec, facts)?;
        }
        let Some(ctx) = &ctx else { continue };
        container::privilege(&spec, facts)?;
        for (key, rule) in SERVICE_RULES {
            if let Some(v) = get(s, key) {
                rule(ctx, &svc, key, v)?;
            }
        }
        container::ports(&spec, facts)?;
        container::name(&spec, facts)?;
        container::binds(&spec, normalised)?;
        if let Some(v) = get(s, "volumes") {
            rules::volumes(ctx, &svc, "volumes", v)?;
        }
        container::limits(&spec, facts)?;
    }
    if let Some(ctx) = &ctx {
        binds_invariant(ctx, normalised, bundle_files)?;
    }
    // last: the allow-list, so a known privileged shape keeps its PRIVILEGED_REFUSED name; a
    // box that permits privileged bundles trusts their keys too
    if !allow_privileged {
        crate::boundary::compose_keys::check(root)?;
    }
    Ok(names)
}

/// The engine guard's invariant over the file's own binds, judged lexically (the guard judges
/// them again, resolved, against every bind on the box): the same function, so both layers agree.
fn binds_invariant(
    ctx: &Ctx,
    normalised: Option<&BoxFacts>,
    bundle_files: Option<&[String]>,
) -> Result<(), Refusal> {
    use crate::boundary::policy::{self, HostBind};
    use std::path::Path;
    let binds: Vec<HostBind> = ctx
        .binds
        .borrow()
        .iter()
        .map(|(p, w)| HostBind::lexical(Path::new(p), *w))
        .collect();
    let root = PathBuf::from(ctx.root());
    let files = bundle_files
        .or(normalised.map(|n| n.bundle_files.as_slice()))
        .unwrap_or_default();
    let mut release = vec![root.clone(), root.join(".env"), root.join("compose.yaml")];
    release.extend(files.iter().map(|f| root.join(f)));
    policy::binds_invariant(&binds, &[], &release)
        .map_err(|d| Refusal::new(BIND_CODE, release_shown(&d.detail)))
}

/// A first-pass message as an operator reads it: the placeholder root the release is judged
/// under (it does not exist yet) becomes `./…` before a path in it, and `the release directory
/// (./)` where it stands alone.
fn release_shown(msg: &str) -> String {
    let root = rules::RELEASE;
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(root) {
        let (before, at) = rest.split_at(i);
        out.push_str(before);
        let token_start = out.is_empty() || out.ends_with([' ', '(', ',']);
        let after = &at[root.len()..];
        if token_start && after.starts_with('/') {
            out.push_str("./");
            rest = &after[1..];
        } else if token_start && (after.is_empty() || after.starts_with([' ', ',', ')', ':'])) {
            out.push_str("the release directory (./)");
            rest = after;
        } else {
            out.push_str(root);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;

//! The privilege analysis of a compose file. It runs twice: on the bundle's YAML before the
//! lease (anchors and merge keys resolved, then interpolated as compose will with
//! `env.template`'s plain values, `interp`: what depends on a secret waits), and on the compose
//! CLI's own normalised `config` after `.env` is rendered, so interpolation cannot smuggle a
//! setting past the first pass. Each pass collects every refusal ([`Judged`]): the apply
//! reports the first, `plan` lists them all.
//! This file walks the document and hands each service, as a
//! [`crate::container::ContainerSpec`], to the container rules the engine guard calls
//! too; `rules` holds the rules only the file shows (one per key), `paths` the host-path
//! wording, `yaml` the parse.

use std::path::PathBuf;

use serde_yaml_ng::Value;

use crate::container::{self, ContainerSpec};
use crate::{Refusal, RefusalCode};

pub mod interp;
mod paths;
mod rules;
pub mod yaml;

pub use interp::{Var, Variables};
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
use crate::BoxFacts;

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
            Some(Value::Mapping(l)) => get(l, crate::bundle::JOB_LABEL).and_then(as_str),
            Some(Value::Sequence(l)) => l.iter().filter_map(as_str).find_map(|x| {
                x.strip_prefix(crate::bundle::JOB_LABEL)
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

/// What a pass found: the services, and every refusal in the order the rules ran (the apply
/// reports the first, `plan` lists them all).
#[derive(Debug, Default)]
pub struct Judged {
    pub services: Vec<String>,
    pub refusals: Vec<Refusal>,
}

impl Judged {
    /// The services, or the first refusal.
    pub fn first(self) -> Result<Vec<String>, Refusal> {
        match self.refusals.into_iter().next() {
            Some(r) => Err(r),
            None => Ok(self.services),
        }
    }
}

/// The first pass without a box or an `env.template`: `privileged`, host namespaces, dangerous
/// capabilities, devices, unconfined security options, and bind mounts of the Docker socket,
/// `/` and other host internals. Every variable but compose's own environment is unset, so an
/// interpolated value is left to the second pass. Returns the service names.
pub fn check(doc: &Value, allow_privileged: bool) -> Result<Vec<String>, Refusal> {
    let doc = interp::interpolate_doc(doc, &Variables::none());
    check_in(&doc, allow_privileged, None, true).first()
}

/// The first pass of an apply or a plan, knowing the box (its `ctx.release_dir` is
/// [`FIRST_PASS_ROOT`]) and `env.template`'s plain values (`vars`): the document is interpolated
/// as compose will ([`interp`]), what depends on a secret is left to the second pass; `env_file`
/// and secret/config `file:` must name a bundle file, no writable bind may hold one (a bind of
/// a bundle file is mounted read-only by construction), and the box's binds, names, ports and
/// limits are judged by the same rules as the second pass and the engine guard.
pub fn check_bundle(
    doc: &Value,
    allow_privileged: bool,
    ctx: &BoxFacts,
    vars: &Variables,
) -> Result<Vec<String>, Refusal> {
    judge_bundle(doc, allow_privileged, ctx, vars).first()
}

/// [`check_bundle`], every refusal.
pub fn judge_bundle(
    doc: &Value,
    allow_privileged: bool,
    ctx: &BoxFacts,
    vars: &Variables,
) -> Judged {
    let doc = interp::interpolate_doc(doc, vars);
    check_in(&doc, allow_privileged, Some(ctx), true)
}

/// The second pass, on the compose CLI's own normalised `config` (paths already absolute):
/// as [`check`], and a bind of the agent's own files — or of an ancestor of them — is refused
/// while a bind inside the project directory is not.
pub fn check_normalised(
    doc: &Value,
    allow_privileged: bool,
    ctx: &BoxFacts,
) -> Result<Vec<String>, Refusal> {
    judge_normalised(doc, allow_privileged, ctx).first()
}

/// [`check_normalised`], every refusal.
pub fn judge_normalised(doc: &Value, allow_privileged: bool, ctx: &BoxFacts) -> Judged {
    check_in(doc, allow_privileged, Some(ctx), false)
}

fn check_in(
    doc: &Value,
    allow_privileged: bool,
    facts: Option<&BoxFacts>,
    first_pass: bool,
) -> Judged {
    let mut out = Judged::default();
    let root = match untag(doc) {
        Value::Mapping(m) => m,
        _ => {
            out.refusals.push(Refusal::new(
                RefusalCode::BundleInvalid,
                "compose.yaml is not a mapping",
            ));
            return out;
        }
    };
    if get(root, "include").is_some() {
        out.refusals.push(
            Refusal::new(
                CODE,
                "compose.yaml uses include (files outside the bundle's analysis)",
            )
            .lifted_by("put every service in compose.yaml itself"),
        );
        return out;
    }
    let services = match get(root, "services") {
        Some(Value::Mapping(m)) => m,
        _ => {
            out.refusals.push(Refusal::new(
                RefusalCode::BundleInvalid,
                "compose.yaml has no services",
            ));
            return out;
        }
    };
    let mut ctx = Ctx {
        facts,
        first_pass,
        ..Ctx::default()
    };
    // a box that permits privileged bundles skips the rules, not the shape checks
    let judging = !allow_privileged;
    if judging {
        for (key, rule) in FILE_RULES {
            if let Some(v) = get(root, key) {
                rule(&mut ctx, key, v);
            }
        }
    }
    for (k, v) in services {
        let svc = as_str(k).unwrap_or_else(|| "?".into());
        out.services.push(svc.clone());
        let s = match untag(v) {
            Value::Mapping(m) => m,
            Value::Null => continue,
            _ => {
                ctx.refuse(Refusal::new(
                    RefusalCode::BundleInvalid,
                    format!("service {svc} is not a mapping"),
                ));
                continue;
            }
        };
        if let Some(ext) = get(s, "extends") {
            ctx.refuse_at(&svc, "extends", rules::extends(&svc, ext));
        }
        // the box never builds: a service must name an image to pull (judged whatever the box
        // permits: a build fails at the guard on every box)
        let builds_only = get(s, "build").is_some() && get(s, "image").is_none();
        if builds_only {
            ctx.refuse(build_refused(&svc));
        }
        // the container rules, the guard's too, over the same description of the service
        let spec = ContainerSpec::from_compose(&svc, s, first_pass);
        let none = BoxFacts::default();
        let box_facts = facts.unwrap_or(&none);
        // pinning is not a privilege: judged whatever the box permits. The first pass leaves an
        // interpolated image to the second, which sees compose's value
        if facts.is_some() && !builds_only {
            ctx.refuse_at(&svc, "image", container::image(&spec, box_facts));
        }
        if !judging {
            continue;
        }
        // the container rules, the guard's own entry point and order; then what only the
        // file has
        for r in container::judge_all(&spec, box_facts, facts) {
            ctx.refuse(r);
        }
        for (key, rule) in SERVICE_RULES {
            if let Some(v) = get(s, key) {
                rule(&ctx, &svc, key, v);
            }
        }
        if let Some(v) = get(s, "volumes") {
            rules::volumes(&ctx, &svc, "volumes", v);
        }
    }
    if judging {
        binds_invariant(&ctx);
        // last: the allow-list, so a known privileged shape keeps its PRIVILEGED_REFUSED name
        // (a key a rule already refused is not listed twice); a box that permits privileged
        // bundles trusts their keys too
        for r in crate::compose_keys::check_all(root) {
            let detail = r.detail.clone();
            let (svc, key) = match (r.service(), r.key()) {
                (Some(s), Some(k)) => (s.to_string(), k.to_string()),
                _ => detail
                    .split_once('.')
                    .map(|(s, k)| (s.to_string(), k.to_string()))
                    .unwrap_or_default(),
            };
            let said = ctx
                .found
                .borrow()
                .iter()
                .any(|x| x.service() == Some(svc.as_str()) && x.key() == Some(key.as_str()));
            if !said {
                let r =
                    if r.service().is_none() && services.contains_key(Value::String(svc.clone())) {
                        r.at(&svc, &key)
                    } else {
                        r
                    };
                ctx.refuse(r);
            }
        }
    }
    let root_dir = ctx.root();
    out.refusals.extend(
        ctx.found
            .into_inner()
            .into_iter()
            .map(|r| r.relative_to(&root_dir)),
    );
    out
}

/// `BUILD_REFUSED: <service> builds its image here (build: without image:)`.
fn build_refused(svc: &str) -> Refusal {
    Refusal::new(
        RefusalCode::BuildRefused,
        format!("{svc} builds its image here (build: without image:); this box never builds"),
    )
    .at(svc, "build")
}

/// The engine guard's invariant over the file's own binds, judged lexically (the guard judges
/// them again, resolved, against every bind on the box): the same function, so both layers agree.
/// A bind of a file of the release (or of a directory that holds one, inside the release) is
/// read-only whatever the file says: the guard mounts it so ([`policy::read_only_by_construction`]).
fn binds_invariant(ctx: &Ctx) {
    use crate::policy::{self, HostBind};
    use std::path::Path;
    let root = PathBuf::from(ctx.root());
    let files = ctx
        .facts
        .map(|n| n.bundle_files.as_slice())
        .unwrap_or_default();
    let mut release = vec![root.clone(), root.join(".env"), root.join("compose.yaml")];
    release.extend(files.iter().map(|f| root.join(f)));
    let binds: Vec<HostBind> = ctx
        .binds
        .borrow()
        .iter()
        .map(|(p, w)| {
            let lex = policy::lexical(Path::new(p));
            let w = *w && !policy::read_only_by_construction(&lex, &root, &release);
            HostBind::lexical(&lex, w)
        })
        .collect();
    if let Err(d) = policy::binds_invariant(&binds, &[], &release) {
        ctx.refuse(Refusal::new(BIND_CODE, d.detail).at_key("volumes"));
    }
}

/// A first-pass message as an operator reads it (see [`Refusal::relative_to`]).
#[cfg(test)]
fn release_shown(msg: &str) -> String {
    crate::refusal::relative(msg, rules::RELEASE)
}

#[cfg(test)]
mod tests;

//! The rules only the file passes can judge: one function per rule, tabled by the compose key it
//! judges, in the order `check_in` applies them (the first refusal is the one reported, so the
//! order is part of the behaviour). They read the file's own shape: top-level objects a service
//! refers to, `extends`, `build`, hooks, `env_file`, interpolation, relative host paths. The
//! privilege keys, ports, names, ceilings and images are the container rules
//! (`boundary::container`), which the engine guard calls too; the file's networks and object
//! names are in `rules/box_rules.rs`.

use serde_yaml_ng::Value;

use super::paths::{check_bind, check_bind_source, check_file_in_release};
use super::yaml::{as_str, get, seq_strings, truthy, untag};
use super::{BoxFacts, CODE};
use crate::boundary::bundle::Refusal;
use crate::boundary::policy::rules as shared;

mod box_rules;
use box_rules::{network_subnets, object_names, static_addresses};

/// What the service rules need from the rest of the file.
#[derive(Default)]
pub(super) struct Ctx<'a> {
    /// Set on the second pass (compose's normalised `config`).
    pub(super) normalised: Option<&'a BoxFacts>,
    /// Named volumes that are really host binds: (name, device).
    pub(super) bind_volumes: Vec<(String, String)>,
    /// Keys of top-level networks that are the host's network.
    pub(super) host_networks: Vec<String>,
    /// Top-level networks' own subnets (`ipam.config[].subnet`), by key; `None` when this pass
    /// cannot know them (an external network, an interpolated subnet): the guard judges those.
    pub(super) subnets: Vec<(String, Option<Vec<String>>)>,
    /// The bundle's files (first pass) — what `env_file` and secret/config files must name.
    pub(super) bundle_files: Option<&'a [String]>,
    /// Every host path bound by the file, for the invariant once all services are read:
    /// (absolute path, relative ones under [`RELEASE`] on the first pass; writable).
    pub(super) binds: std::cell::RefCell<Vec<(String, bool)>>,
}

/// Where the first pass places the release (it does not exist yet): relative paths are judged
/// under it.
pub(super) const RELEASE: &str = "/.release";

/// The release root a pass judges under: the box's release directory, or [`RELEASE`].
pub(super) fn release_root(facts: Option<&BoxFacts>) -> String {
    facts
        .and_then(|n| n.release_dir.as_ref())
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|| RELEASE.to_string())
}

impl Ctx<'_> {
    /// The release root this pass judges under.
    pub(super) fn root(&self) -> String {
        release_root(self.normalised)
    }

    /// The project whose namespace names must be in ("" = not known: names not judged).
    fn project(&self) -> &str {
        self.normalised.map(|n| n.project.as_str()).unwrap_or("")
    }

    /// A volume's or network's `name:` (`kind`).
    fn name(&self, kind: &str, name: &str) -> R {
        let p = self.project();
        if p.is_empty() || shared::object_name_ok(name, p) {
            return Ok(());
        }
        Err(shared::name_refused(kind, name, p))
    }

    fn record(&self, src: &str, writable: bool) {
        let s = src.trim();
        let abs = if s.starts_with('/') {
            s.to_string()
        } else {
            format!("{}/{s}", self.root())
        };
        self.binds.borrow_mut().push((abs, writable));
    }

    /// A file compose opens on the host must be one of the bundle's (or the rendered `.env`):
    /// nothing else in a release is known to hold checked bytes.
    fn bundle_file(&self, who: &str, what: &str, p: &str) -> R {
        let t = p.trim();
        let root = self.root();
        let rel = match t.strip_prefix(&format!("{root}/")) {
            Some(r) => r.to_string(),
            None if t.starts_with('/') => return Ok(()), // refused by the caller's path rule
            None => t.trim_start_matches("./").to_string(),
        };
        let rel = super::paths::normalise(&format!("/{rel}"))[1..].to_string();
        let known = rel == ".env"
            || match (self.bundle_files, self.normalised) {
                (Some(files), _) => files.contains(&rel),
                (None, Some(n)) => n.bundle_files.contains(&rel),
                (None, None) => true,
            };
        if known {
            Ok(())
        } else {
            refuse(format!(
                "{who} reads {what} {t:?}, which is not a file of the bundle"
            ))
        }
    }
}

type R = Result<(), Refusal>;
/// A rule over a top-level key's value: refuses, or records what the service rules need.
pub(super) type FileRule = fn(&mut Ctx, &str, &Value) -> R;
/// A rule over a service key's value: `(ctx, service name, key, value)`.
pub(super) type ServiceRule = fn(&Ctx, &str, &str, &Value) -> R;

/// Top-level keys, judged before any service.
pub(super) const FILE_RULES: &[(&str, FileRule)] = &[
    ("volumes", bind_volumes),
    ("secrets", file_sources),
    ("configs", file_sources),
    ("networks", host_networks),
];

/// Service keys only the file passes judge, in this order for each service in turn (after the
/// container rules' privilege keys; `volumes` after its ports and name).
pub(super) const SERVICE_RULES: &[(&str, ServiceRule)] = &[
    ("network_mode", joins_outside),
    ("pid", joins_outside),
    ("ipc", joins_outside),
    ("uts", joins_outside),
    ("userns_mode", joins_outside),
    ("cgroup", joins_outside),
    ("networks", networks),
    ("volumes_from", volumes_from),
    ("env_file", env_file),
    ("build", build),
    ("provider", provider),
    ("post_start", hook),
    ("pre_stop", hook),
];

fn refuse(msg: String) -> R {
    Err(Refusal::new(CODE, msg))
}

/// `extends` with `file:` pulls in a file the analysis never sees; applied even on a box that
/// permits privileged bundles.
pub(super) fn extends(svc: &str, v: &Value) -> R {
    if matches!(untag(v), Value::Mapping(m) if get(m, "file").is_some()) {
        return refuse(format!("service {svc} extends another file"));
    }
    Ok(())
}

fn bind_volumes(ctx: &mut Ctx, key: &str, v: &Value) -> R {
    object_names(ctx, key, v)?;
    let Value::Mapping(vols) = v else {
        return Ok(());
    };
    for (k, v) in vols {
        let (Some(name), Value::Mapping(vm)) = (as_str(k), untag(v)) else {
            continue;
        };
        if let Some(Value::Mapping(opts)) = get(vm, "driver_opts") {
            let o = get(opts, "o").and_then(as_str).unwrap_or_default();
            if let Some(dev) = get(opts, "device").and_then(as_str) {
                if o.split(',')
                    .any(|x| x.trim() == "bind" || x.trim() == "rbind")
                    || dev.starts_with('/')
                {
                    ctx.bind_volumes.push((name, dev));
                }
            }
        }
    }
    Ok(())
}

/// Top-level secrets and configs with `file:` are bind mounts too (a read-only bind of the
/// Docker socket still drives the Docker API).
fn file_sources(ctx: &mut Ctx, key: &str, v: &Value) -> R {
    let Value::Mapping(m) = v else {
        return Ok(());
    };
    let kind = key.trim_end_matches('s');
    for (k, v) in m {
        let name = as_str(k).unwrap_or_else(|| "?".into());
        if let Value::Mapping(sm) = untag(v) {
            if let Some(f) = get(sm, "file").and_then(as_str) {
                let who = format!("{kind} {name}");
                check_bind(&who, &f, true, ctx.normalised)?;
                ctx.bundle_file(&who, "file", &f)?;
                ctx.record(&f, false);
            }
        }
    }
    Ok(())
}

/// Names, the host's network, and each network's addressing ([`network_subnets`]).
fn host_networks(ctx: &mut Ctx, key: &str, v: &Value) -> R {
    object_names(ctx, key, v)?;
    network_subnets(ctx, key, v)?;
    let Value::Mapping(nets) = v else {
        return Ok(());
    };
    for (k, v) in nets {
        let Some(key) = as_str(k) else { continue };
        if let Value::Mapping(nm) = untag(v) {
            let name = get(nm, "name")
                .and_then(as_str)
                .unwrap_or_else(|| key.clone());
            let driver = get(nm, "driver").and_then(as_str).unwrap_or_default();
            if name == "host" || driver == "host" {
                ctx.host_networks.push(key);
            }
        }
    }
    Ok(())
}

/// `container:<name>` names a container outside the file (another env's processes,
/// environment and secrets): compose writes the project's own as `service:<name>`. A network
/// mode left to interpolation is judged by nobody else before compose. File-only: the guard
/// sees `container:<id>` for both and asks the engine whose it is. (`host` and the other modes
/// are the container rules'.)
fn joins_outside(_: &Ctx, svc: &str, key: &str, v: &Value) -> R {
    let Some(val) = as_str(v) else { return Ok(()) };
    let l = val.trim().to_ascii_lowercase();
    if l.starts_with("container:") || (key == "network_mode" && l.starts_with('$')) {
        return refuse(format!("service {svc} sets {key}: {val}"));
    }
    Ok(())
}

fn networks(ctx: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    let names: Vec<String> = match v {
        Value::Mapping(nets) => nets.keys().filter_map(as_str).collect(),
        other => seq_strings(other),
    };
    if let Some(n) = names.iter().find(|n| ctx.host_networks.contains(n)) {
        return refuse(format!("service {svc} joins the host network via {n}"));
    }
    static_addresses(ctx, svc, v)
}

fn volumes_from(_: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    for v in seq_strings(v) {
        if v.trim().to_ascii_lowercase().starts_with("container:") || v.trim().starts_with('$') {
            return refuse(format!(
                "service {svc} mounts the volumes of {v} (outside the project)"
            ));
        }
    }
    Ok(())
}

fn env_file(ctx: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    let paths: Vec<String> = match v {
        Value::Sequence(items) => items
            .iter()
            .filter_map(|i| match untag(i) {
                Value::Mapping(m) => get(m, "path").and_then(as_str),
                other => as_str(other),
            })
            .collect(),
        other => as_str(other).into_iter().collect(),
    };
    for p in paths {
        check_file_in_release(&format!("service {svc}"), "env_file", &p, ctx.normalised)?;
        ctx.bundle_file(&format!("service {svc}"), "env_file", &p)?;
    }
    Ok(())
}

fn build(ctx: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    let (context, extra, network) = match v {
        Value::Mapping(m) => (
            get(m, "context").and_then(as_str),
            match get(m, "additional_contexts") {
                Some(Value::Mapping(ac)) => ac.values().filter_map(as_str).collect(),
                Some(other) => seq_strings(other)
                    .into_iter()
                    .map(|x| x.split_once('=').map(|(_, p)| p.to_string()).unwrap_or(x))
                    .collect(),
                None => Vec::new(),
            },
            get(m, "network").and_then(as_str),
        ),
        other => (as_str(other), Vec::new(), None),
    };
    if network
        .map(|n| n.trim().eq_ignore_ascii_case("host"))
        .unwrap_or(false)
    {
        return refuse(format!("service {svc} builds on the host network"));
    }
    for c in context.into_iter().chain(extra) {
        let remote = c.contains("://") || c.starts_with("git@") || c.starts_with("docker-image:");
        if !remote {
            check_bind(
                &format!("service {svc} build context"),
                &c,
                true,
                ctx.normalised,
            )?;
        }
    }
    Ok(())
}

fn provider(_: &Ctx, svc: &str, _: &str, _: &Value) -> R {
    refuse(format!(
        "service {svc} is run by a provider plugin on the host"
    ))
}

fn hook(_: &Ctx, svc: &str, key: &str, v: &Value) -> R {
    let Value::Sequence(hooks) = v else {
        return Ok(());
    };
    for h in hooks {
        if let Value::Mapping(hm) = untag(h) {
            if get(hm, "privileged").map(truthy).unwrap_or(false) {
                return refuse(format!("service {svc} runs a privileged {key} hook"));
            }
        }
    }
    Ok(())
}

/// A service's bind source: an absolute one is the container rules' (`container::binds`, the
/// guard's too), judged before this rule; a relative one stays inside the release.
fn relative_bind(who: &str, src: &str, ro: bool, n: Option<&BoxFacts>) -> R {
    if src.trim().starts_with('/') {
        return Ok(());
    }
    check_bind(who, src, ro, n)
}

pub(super) fn volumes(ctx: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    let Value::Sequence(vols) = v else {
        return Ok(());
    };
    let who = format!("service {svc}");
    let n = ctx.normalised;
    let device = |name: &str| {
        ctx.bind_volumes
            .iter()
            .find(|(vol, _)| vol == name)
            .map(|(_, d)| d)
    };
    for vol in vols {
        match untag(vol) {
            Value::String(short) => {
                // SRC:DST[:MODE]; a source without '/' or '.' is a named volume
                let src = short.split(':').next().unwrap_or_default();
                let ro = short
                    .split(':')
                    .nth(2)
                    .map(|m| m.split(',').any(|o| o.trim() == "ro"))
                    .unwrap_or(false);
                if let Some(dev) = device(src) {
                    check_bind_source(&who, dev, n)?;
                    ctx.record(dev, true);
                } else if short.contains(':') || src.starts_with('/') {
                    relative_bind(&who, src, ro, n)?;
                    if src.starts_with('/') || src.starts_with('.') {
                        ctx.record(src, !ro);
                    }
                }
            }
            Value::Mapping(m) => {
                let typ = get(m, "type")
                    .and_then(as_str)
                    .unwrap_or_else(|| "volume".into());
                let src = get(m, "source").and_then(as_str).unwrap_or_default();
                // read-only only when plainly so (`${RO}` is not)
                let ro = matches!(get(m, "read_only"), Some(Value::Bool(true)))
                    || get(m, "read_only").and_then(as_str).as_deref() == Some("true");
                if typ == "bind" || src.starts_with('/') {
                    relative_bind(&who, &src, ro, n)?;
                    ctx.record(&src, !ro);
                } else if let Some(dev) = device(&src) {
                    check_bind_source(&who, dev, n)?;
                    ctx.record(dev, true);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

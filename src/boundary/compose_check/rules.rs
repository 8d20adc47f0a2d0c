//! The rules only the file passes can judge: one function per rule, tabled by the compose key it
//! judges, in the order `check_in` applies them. Each pushes every refusal it finds into the
//! context, with the service and the key; the apply reports the first, so the order is part of
//! the behaviour. They read the file's own shape: top-level objects a service
//! refers to, `extends`, `build`, hooks, `env_file`, interpolation, relative host paths. The
//! privilege keys, ports, names, ceilings and images are the container rules
//! (`boundary::container`), which the engine guard calls too; the file's networks and object
//! names are in `rules/box_rules.rs`.

use serde_yaml_ng::Value;

use super::paths::{check_bind, check_bind_source, check_file_in_release};
use super::yaml::{as_str, get, seq_strings, truthy, untag};
use super::{BoxFacts, BIND_CODE, CODE};
use crate::policy::rules as shared;
use crate::volume::{self, Entry, Kind};
use crate::{Refusal, RefusalCode};

mod box_rules;
use box_rules::{network_subnets, object_names, static_addresses};

/// What the service rules need from the rest of the file, and what they found.
#[derive(Default)]
pub(super) struct Ctx<'a> {
    /// The box (both passes of an apply or a plan; `None`: a pass that does not know it).
    pub(super) facts: Option<&'a BoxFacts>,
    /// The bundle's own file after the first pass's interpolation: a value still holding `$` is
    /// one it could not resolve, left to the second pass ([`Ctx::unknown`]).
    pub(super) first_pass: bool,
    /// Named volumes that are really host binds: (name, device).
    pub(super) bind_volumes: Vec<(String, String)>,
    /// Keys of top-level networks that are the host's network.
    pub(super) host_networks: Vec<String>,
    /// Top-level networks' own subnets (`ipam.config[].subnet`), by key; `None` when this pass
    /// cannot know them (an external network, an interpolated subnet): the guard judges those.
    pub(super) subnets: Vec<(String, Option<Vec<String>>)>,
    /// Every host path bound by the file, for the invariant once all services are read:
    /// (absolute path, relative ones under [`RELEASE`] on the first pass; writable).
    pub(super) binds: std::cell::RefCell<Vec<(String, bool)>>,
    /// Every refusal so far, in the order the rules ran.
    pub(super) found: std::cell::RefCell<Vec<Refusal>>,
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
        release_root(self.facts)
    }

    /// A value the first pass could not interpolate: the rule that needs it waits for the
    /// second pass, which judges compose's own value.
    pub(super) fn unknown(&self, v: &str) -> bool {
        self.first_pass && v.contains('$')
    }

    pub(super) fn refuse(&self, r: Refusal) {
        self.found.borrow_mut().push(r);
    }

    /// A rule's verdict on `svc`'s `key`.
    pub(super) fn refuse_at(&self, svc: &str, key: &str, r: R) {
        if let Err(r) = r {
            self.refuse(r.at(svc, key));
        }
    }

    /// The project whose namespace names must be in ("" = not known: names not judged).
    fn project(&self) -> &str {
        self.facts.map(|n| n.project.as_str()).unwrap_or("")
    }

    /// A volume's or network's `name:` (`kind`).
    fn name(&self, kind: &str, name: &str) -> R {
        let p = self.project();
        if p.is_empty() || self.unknown(name) || shared::object_name_ok(name, p) {
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
    /// nothing else in a release is known to hold checked bytes. Refused as
    /// `BIND_SOURCE_REFUSED: <who> ./<path> (not a file of the bundle)`, the path relative to
    /// the release whichever pass found it.
    fn bundle_file(&self, who: &str, p: &str) -> R {
        let t = p.trim();
        let root = self.root();
        let rel = match t.strip_prefix(&format!("{root}/")) {
            Some(r) => r.to_string(),
            None if t.starts_with('/') => return Ok(()), // refused by the caller's path rule
            None => t.trim_start_matches("./").to_string(),
        };
        let rel = super::paths::normalise(&format!("/{rel}"))[1..].to_string();
        let known = rel == ".env"
            || match self.facts {
                Some(n) => n.bundle_files.contains(&rel),
                None => true,
            };
        if known {
            return Ok(());
        }
        let who = who.strip_prefix("service ").unwrap_or(who);
        Err(Refusal::new(
            BIND_CODE,
            format!("{who} ./{rel} (not a file of the bundle)"),
        )
        .lifted_by(format!(
            "add {rel} to the bundle, or point the key at a file the bundle has"
        )))
    }
}

type R = Result<(), Refusal>;
/// A rule over a top-level key's value: refuses (into the context), or records what the service
/// rules need.
pub(super) type FileRule = fn(&mut Ctx, &str, &Value);
/// A rule over a service key's value: `(ctx, service name, key, value)`.
pub(super) type ServiceRule = fn(&Ctx, &str, &str, &Value);

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
    ("logging", logging),
    ("post_start", hook),
    ("pre_stop", hook),
];

fn refuse(msg: String) -> R {
    Err(Refusal::new(CODE, msg))
}

/// A log driver the engine guard refuses (`HostConfig.LogConfig`), refused here first.
fn logging(ctx: &Ctx, svc: &str, key: &str, v: &Value) {
    let Value::Mapping(m) = untag(v) else { return };
    let Some(drv) = get(m, "driver").and_then(as_str) else {
        return;
    };
    if (ctx.first_pass && drv.contains('$')) || shared::LOG_DRIVERS.contains(&drv.as_str()) {
        return;
    }
    ctx.refuse_at(
        svc,
        key,
        Err(Refusal::new(
            RefusalCode::ComposeKeyRefused,
            format!("service {svc} logs through the {drv} driver (the box keeps logs on itself)"),
        )
        .lifted_by(format!(
            "use one of {} (the default json-file is fine)",
            shared::LOG_DRIVERS.join(", ")
        ))),
    );
}

/// `extends` with `file:` pulls in a file the analysis never sees (compose reads it before
/// the second pass, so an interpolated one too); applied even on a box that permits
/// privileged bundles.
pub(super) fn extends(svc: &str, v: &Value) -> R {
    if matches!(untag(v), Value::Mapping(m) if get(m, "file").is_some()) {
        return Err(
            Refusal::new(CODE, format!("service {svc} extends another file")).lifted_by(
                "write the service out in compose.yaml (extends within the file is fine)",
            ),
        );
    }
    Ok(())
}

fn bind_volumes(ctx: &mut Ctx, key: &str, v: &Value) {
    object_names(ctx, key, v);
    let Value::Mapping(vols) = v else {
        return;
    };
    for (k, v) in vols {
        let (Some(name), Value::Mapping(vm)) = (as_str(k), untag(v)) else {
            continue;
        };
        if let Some(Value::Mapping(opts)) = get(vm, "driver_opts") {
            let o = get(opts, "o").and_then(as_str).unwrap_or_default();
            if let Some(dev) = get(opts, "device").and_then(as_str) {
                if ctx.unknown(&dev) || ctx.unknown(&o) {
                    // the guard refuses every driver_opts anyway; the second pass sees the value
                    continue;
                }
                if o.split(',')
                    .any(|x| x.trim() == "bind" || x.trim() == "rbind")
                    || dev.starts_with('/')
                {
                    ctx.bind_volumes.push((name, dev));
                }
            }
        }
    }
}

/// Top-level secrets and configs with `file:` are bind mounts too (a read-only bind of the
/// Docker socket still drives the Docker API), and must be files of the bundle.
fn file_sources(ctx: &mut Ctx, key: &str, v: &Value) {
    let Value::Mapping(m) = v else {
        return;
    };
    let kind = key.trim_end_matches('s');
    for (k, v) in m {
        let name = as_str(k).unwrap_or_else(|| "?".into());
        if let Value::Mapping(sm) = untag(v) {
            if let Some(f) = get(sm, "file").and_then(as_str) {
                if ctx.unknown(&f) {
                    continue;
                }
                let who = format!("{kind} {name}");
                match check_bind(&who, &f, true, ctx.facts) {
                    Ok(()) => ctx.refuse_at(&who, "file", ctx.bundle_file(&who, &f)),
                    Err(r) => ctx.refuse(r.at(&who, "file")),
                }
                ctx.record(&f, false);
            }
        }
    }
}

/// Names, the host's network, and each network's addressing ([`network_subnets`]).
fn host_networks(ctx: &mut Ctx, key: &str, v: &Value) {
    object_names(ctx, key, v);
    network_subnets(ctx, key, v);
    let Value::Mapping(nets) = v else {
        return;
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
}

/// `container:<name>` names a container outside the file (another env's processes,
/// environment and secrets): compose writes the project's own as `service:<name>`. A network
/// mode compose's output still spells with `$` is refused; one the first pass could not
/// interpolate is the second pass's (and the guard's). File-only: the guard sees
/// `container:<id>` for both and asks the engine whose it is. (`host` and the other modes are
/// the container rules'.)
fn joins_outside(ctx: &Ctx, svc: &str, key: &str, v: &Value) {
    let Some(val) = as_str(v) else { return };
    if ctx.unknown(&val) {
        return;
    }
    let l = val.trim().to_ascii_lowercase();
    if l.starts_with("container:") || (key == "network_mode" && l.starts_with('$')) {
        ctx.refuse_at(
            svc,
            key,
            Err(
                Refusal::new(CODE, format!("service {svc} sets {key}: {val}")).lifted_by(format!(
                    "join a service of this file instead ({key}: service:<name>)"
                )),
            ),
        );
    }
}

fn networks(ctx: &Ctx, svc: &str, key: &str, v: &Value) {
    let names: Vec<String> = match v {
        Value::Mapping(nets) => nets.keys().filter_map(as_str).collect(),
        other => seq_strings(other),
    };
    if let Some(n) = names.iter().find(|n| ctx.host_networks.contains(n)) {
        ctx.refuse_at(
            svc,
            key,
            refuse(format!("service {svc} joins the host network via {n}")),
        );
    }
    static_addresses(ctx, svc, v);
}

fn volumes_from(ctx: &Ctx, svc: &str, key: &str, v: &Value) {
    for v in seq_strings(v) {
        if ctx.unknown(&v) {
            continue;
        }
        if v.trim().to_ascii_lowercase().starts_with("container:") || v.trim().starts_with('$') {
            ctx.refuse_at(
                svc,
                key,
                refuse(format!(
                    "service {svc} mounts the volumes of {v} (outside the project)"
                )),
            );
        }
    }
}

/// Compose opens an `env_file` while it reads the project — before the second pass — so this
/// rule never waits: one the first pass could not interpolate is refused here.
fn env_file(ctx: &Ctx, svc: &str, key: &str, v: &Value) {
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
    let who = format!("service {svc}");
    for p in paths {
        match check_file_in_release(&who, "env_file", &p, ctx.facts) {
            Ok(()) => ctx.refuse_at(svc, key, ctx.bundle_file(&who, &p)),
            Err(r) => ctx.refuse(r.at(svc, key)),
        }
    }
}

fn build(ctx: &Ctx, svc: &str, key: &str, v: &Value) {
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
        ctx.refuse_at(
            svc,
            key,
            refuse(format!("service {svc} builds on the host network")),
        );
    }
    for c in context.into_iter().chain(extra) {
        let remote = c.contains("://") || c.starts_with("git@") || c.starts_with("docker-image:");
        if !remote && !ctx.unknown(&c) {
            ctx.refuse_at(
                svc,
                key,
                check_bind(&format!("service {svc} build context"), &c, true, ctx.facts),
            );
        }
    }
}

fn provider(ctx: &Ctx, svc: &str, key: &str, _: &Value) {
    ctx.refuse_at(
        svc,
        key,
        refuse(format!(
            "service {svc} is run by a provider plugin on the host"
        )),
    );
}

fn hook(ctx: &Ctx, svc: &str, key: &str, v: &Value) {
    let Value::Sequence(hooks) = v else {
        return;
    };
    for h in hooks {
        if let Value::Mapping(hm) = untag(h) {
            if get(hm, "privileged").map(truthy).unwrap_or(false) {
                ctx.refuse_at(
                    svc,
                    key,
                    refuse(format!("service {svc} runs a privileged {key} hook")),
                );
            }
        }
    }
}

/// A service's mounts, read by the one parser ([`volume::service_volumes`]): an absolute bind
/// source is the container rules' (`container::binds`, the guard's too), judged before this
/// rule; a relative one stays inside the release; a named volume that is a host bind
/// (`driver_opts.device`) is judged as its device. Every host path is recorded for the
/// invariant. An anonymous volume (`- /var/www/html/modules`) binds nothing; an entry the first
/// pass could not interpolate is the second pass's.
pub(super) fn volumes(ctx: &Ctx, svc: &str, key: &str, v: &Value) {
    let who = format!("service {svc}");
    let n = ctx.facts;
    let device = |name: &str| {
        ctx.bind_volumes
            .iter()
            .find(|(vol, _)| vol == name)
            .map(|(_, d)| d.clone())
    };
    let mut targets: Vec<String> = Vec::new();
    for e in volume::service_volumes(v, ctx.first_pass) {
        let Entry::Known(m) = e else { continue };
        let target = m.target.trim_end_matches('/').to_string();
        if !target.is_empty() && !target.contains('$') {
            if targets.contains(&target) {
                // compose v2 and v5 pass it and the engine fails at `up`; v1 fails `config`
                ctx.refuse_at(
                    svc,
                    key,
                    Err(Refusal::new(
                        RefusalCode::ComposeConfigInvalid,
                        format!(
                            "service {svc} mounts two volumes at {target} (the engine refuses \
                             a duplicate mount point)"
                        ),
                    )
                    .lifted_by("mount one source at each container path")),
                );
            }
            targets.push(target);
        }
        match m.kind {
            Kind::Bind => {
                if !m.absolute_bind() {
                    ctx.refuse_at(svc, key, check_bind(&who, &m.source, m.read_only, n));
                }
                ctx.record(&m.source, !m.read_only);
            }
            Kind::Volume if !m.source.is_empty() => {
                if let Some(dev) = device(&m.source) {
                    ctx.refuse_at(svc, key, check_bind_source(&who, &dev, n));
                    ctx.record(&dev, true);
                }
            }
            _ => {}
        }
    }
}

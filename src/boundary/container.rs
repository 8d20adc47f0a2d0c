//! One container as every layer of the boundary sees it ([`ContainerSpec`]), and the container
//! rules over it. The file passes build it from a compose service (`from_compose`), the engine
//! guard from an Engine API create body (`from_engine`); both then call the same rules below,
//! so a shape one layer refuses the other refuses with the same code. Each rule takes the spec
//! and the box's facts and returns a typed [`Refusal`]; only the wording of the key names the
//! layer's own spelling (`cap_add` / `HostConfig.CapAdd`), so an operator reads the key they wrote.
//!
//! What only one layer can judge stays in that layer, said there: the compose file's own shape
//! (top-level networks, `extends`, `build`, hooks, interpolation) in `compose_check`, the
//! engine-only keys (`LogConfig`, `Runtime`, `MaskedPaths`, …) and what needs the engine's state
//! (whose object this is) in `policy` and `guard`.

use std::path::Path;

use crate::policy::{self, rules};
use crate::{BoxFacts, Refusal, RefusalCode};

mod from_compose;
mod from_engine;

/// Which layer described the container: how a refusal words its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// A compose service (the file passes): `service <name> sets <key> …`.
    #[default]
    File,
    /// An Engine API create body (the guard): `HostConfig.<Key> …`.
    Engine,
}

/// A namespace a container may share with the host or another container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    Network,
    Pid,
    Ipc,
    Uts,
    Userns,
    Cgroup,
}

/// One setting as the layer wrote it: its key (the layer's spelling) and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub key: String,
    pub value: String,
}

/// A host path bound into the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    /// Where the layer found it (`volumes`; `HostConfig.Binds`, `HostConfig.Mounts`).
    pub key: String,
    /// The source as written.
    pub source: String,
    pub read_only: bool,
}

/// A ulimit: `name`, soft and hard (negative = unlimited).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ulimit {
    pub name: String,
    pub soft: i64,
    pub hard: i64,
}

/// What the container rules look at, whichever layer read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerSpec {
    pub source: Source,
    /// The compose service (names it in refusals).
    pub service: String,
    /// The image reference; `None`: not judged by this pass (an interpolated one on the first
    /// pass, which the second sees resolved).
    pub image: Option<String>,
    /// `privileged` / `HostConfig.Privileged` set, with its key.
    pub privileged: Option<Setting>,
    /// Namespace modes, with their key.
    pub namespaces: Vec<(Namespace, Setting)>,
    /// Capabilities added, as written.
    pub cap_add: Vec<String>,
    /// Device keys set to something (`devices`, `device_cgroup_rules`, `Devices`, …).
    pub devices: Vec<Setting>,
    pub security_opt: Vec<String>,
    /// Sysctl names.
    pub sysctls: Vec<String>,
    /// `None`: unset, or not a number this pass can read (an interpolation).
    pub oom_score_adj: Option<i64>,
    pub ulimits: Vec<Ulimit>,
    /// Host paths bound in: absolute sources, and the guard's every bind mount. (A relative
    /// source, a named volume's device, a secret's file are the file passes' own: only the file
    /// shows them.)
    pub binds: Vec<Bind>,
    /// Published host ports: `(host ip, host port or range)`.
    pub ports: Vec<(String, String)>,
    /// The container's own name (`container_name`, or the create's `name`), if set.
    pub name: Option<String>,
    /// Memory limit in bytes (0 = none) and pids limit (0 or negative = none).
    pub memory: u64,
    pub pids: i64,
    /// What this pass could not read and leaves to the next (the first pass: a value it could
    /// not interpolate, by key: `image`, `privileged`, `container_name`, `memory`, `pids`). The
    /// rule that needs it does not judge it here; the second pass and the guard judge the value.
    pub waits: Vec<String>,
}

type R = Result<(), Refusal>;

const CODE: RefusalCode = RefusalCode::PrivilegedRefused;

impl ContainerSpec {
    /// A refusal of `key` (the layer's spelling) set to `value`, worded for the layer.
    fn sets(&self, key: &str, value: &str, file: String) -> Refusal {
        let r = Refusal::new(
            CODE,
            match self.source {
                Source::File => file,
                Source::Engine if value.is_empty() => key.to_string(),
                Source::Engine => format!("{key} {value}"),
            },
        );
        self.found(r, key)
    }

    /// A file pass's refusal says where it found it (`plan`); the guard's detail does.
    fn found(&self, r: Refusal, key: &str) -> Refusal {
        match self.source {
            Source::File => r.at(&self.service, key),
            Source::Engine => r,
        }
    }

    fn key(&self, file: &str, engine: &str) -> String {
        match self.source {
            Source::File => file.to_string(),
            Source::Engine => engine.to_string(),
        }
    }
}

/// The container rules, every refusal, in the one order both layers report them: privilege,
/// then the box's shared resources (ports, the name), the host paths, then the ceilings. The
/// file passes (`compose_check`) and the engine guard (`policy::container_create`) both call
/// this on their own [`ContainerSpec`] of the same container; `bind_facts` is `None` for a file
/// pass that does not know the box. Pinned images are each layer's own (the file pass judges
/// the reference, the guard what this project pulled): [`image`].
pub fn judge_all(
    spec: &ContainerSpec,
    facts: &BoxFacts,
    bind_facts: Option<&BoxFacts>,
) -> Vec<Refusal> {
    let mut out = privilege_all(spec, facts);
    out.extend(ports_all(spec, facts));
    out.extend(name(spec, facts).err());
    out.extend(binds_all(spec, bind_facts));
    out.extend(limits(spec, facts).err());
    out
}

/// [`judge_all`]'s first refusal, then [`image`].
pub fn judge(spec: &ContainerSpec, facts: &BoxFacts) -> R {
    first(judge_all(spec, facts, Some(facts)))?;
    image(spec, facts)
}

/// The bind rule over every host path the container binds (`BIND_SOURCE_REFUSED`). `facts` is
/// `None` for a file pass that does not know the box (its own trees only, not confined to any
/// root).
pub fn binds(spec: &ContainerSpec, facts: Option<&BoxFacts>) -> R {
    first(binds_all(spec, facts))
}

/// [`binds`], every refusal.
pub fn binds_all(spec: &ContainerSpec, facts: Option<&BoxFacts>) -> Vec<Refusal> {
    let mut out = Vec::new();
    for b in &spec.binds {
        let who = match spec.source {
            Source::File => format!("service {}", spec.service),
            Source::Engine => b.key.clone(),
        };
        if let Err(r) = host_path(spec.source, &who, &b.source, b.read_only, facts) {
            out.push(spec.found(r, &b.key));
        }
    }
    out
}

/// The first of a rule's refusals.
fn first(v: Vec<Refusal>) -> R {
    match v.into_iter().next() {
        Some(r) => Err(r),
        None => Ok(()),
    }
}

/// One host path a container reaches (a bind; in a file also a volume's device, a secret's or
/// config's file, a build context), judged by the one bind rule ([`policy::bind_rule`]) and
/// worded for the layer: `<who> <path> (<reason>)` in a file, `<key>: <path>: <reason>` at the
/// engine.
pub fn host_path(
    source: Source,
    who: &str,
    src: &str,
    read_only: bool,
    facts: Option<&BoxFacts>,
) -> R {
    use policy::Unreachable as U;
    let src = match source {
        Source::File => src.trim(),
        Source::Engine => src,
    };
    let (j, verdict) = policy::bind_rule(Path::new(src), read_only, facts);
    let Err(why) = verdict else {
        return Ok(());
    };
    let detail = match source {
        Source::File => {
            let how = if read_only { "" } else { ", writable" };
            let reason = match why {
                U::AgentFile(_) => "the agent's own files".to_string(),
                U::Private(_) | U::SystemTreeWritable | U::NotAbsolute => {
                    format!("a private or system path{how}")
                }
                U::SocketOrDevice => "a socket or device".to_string(),
                U::OutsideRoots => "outside the release and the box's bind_roots".to_string(),
            };
            let who = who.strip_prefix("service ").unwrap_or(who);
            format!("{who} {src} ({reason})")
        }
        Source::Engine => {
            let shown = &j.shown;
            let why = match why {
                U::NotAbsolute => format!("{src}: bind source is not absolute"),
                U::AgentFile(p) | U::Private(p) => format!("{shown}: reaches {}", p.display()),
                U::SocketOrDevice => format!("{shown}: a socket or device"),
                U::SystemTreeWritable | U::OutsideRoots => format!(
                    "{shown}: {} bind outside the release and the box's bind_roots",
                    if read_only { "read-only" } else { "writable" }
                ),
            };
            format!("{who}: {why}")
        }
    };
    Err(Refusal::new(RefusalCode::BindSourceRefused, detail))
}

/// The privilege keys (`PRIVILEGED_REFUSED`): `privileged`, host namespaces, capabilities
/// outside Docker's default set, devices, security options that loosen, non-namespaced
/// sysctls, a negative OOM score, ulimits over a share of the box. A box that permits
/// privilege lets them all through.
pub fn privilege(spec: &ContainerSpec, facts: &BoxFacts) -> R {
    first(privilege_all(spec, facts))
}

/// [`privilege`], every refusal (in the order [`privilege`] reports the first).
pub fn privilege_all(spec: &ContainerSpec, facts: &BoxFacts) -> Vec<Refusal> {
    let mut out = Vec::new();
    if facts.privileged {
        return out;
    }
    let svc = &spec.service;
    if let Some(p) = &spec.privileged {
        out.push(spec.sets(&p.key, &p.value, format!("service {svc} sets privileged")));
    }
    for (ns, s) in &spec.namespaces {
        if !namespace_allowed(*ns, &s.value) {
            let file = format!("service {svc} sets {}: {}", s.key, s.value);
            out.push(spec.sets(&s.key, &s.value, file));
        }
    }
    for c in &spec.cap_add {
        if !rules::cap_allowed(c) {
            let key = spec.key("cap_add", "HostConfig.CapAdd");
            let file = format!("service {svc} adds capability {c}");
            out.push(spec.sets(&key, &rules::cap_name(c), file));
        }
    }
    if let Some(d) = spec.devices.first() {
        let file = format!("service {svc} sets {}", d.key);
        out.push(spec.sets(&d.key, &d.value, file));
    }
    for o in &spec.security_opt {
        if !rules::security_opt_allowed(o) {
            let key = spec.key("security_opt", "HostConfig.SecurityOpt");
            let file = format!("service {svc} sets security_opt {o}");
            out.push(spec.sets(&key, o, file));
        }
    }
    for n in spec.sysctls.iter().filter(|n| !rules::sysctl_allowed(n)) {
        let key = spec.key("sysctls", "HostConfig.Sysctls");
        let file = format!("service {svc} sets sysctl {n}");
        out.push(spec.sets(&key, n, file));
    }
    if let Some(n) = spec.oom_score_adj {
        if !rules::oom_score_adj_allowed(n) {
            let key = spec.key("oom_score_adj", "HostConfig.OomScoreAdj");
            let file = format!("service {svc} sets oom_score_adj {n}");
            out.push(spec.sets(&key, &n.to_string(), file));
        }
    }
    for u in &spec.ulimits {
        if !rules::ulimit_allowed(&u.name, u.soft, u.hard) {
            let v = if u.soft < 0 || u.hard < 0 {
                "unlimited".to_string()
            } else {
                u.soft.max(u.hard).to_string()
            };
            let key = spec.key("ulimits", "HostConfig.Ulimits");
            let file = format!("service {svc} sets ulimits {} {v}", u.name);
            out.push(spec.sets(&key, &format!("{} {v}", u.name), file));
        }
    }
    out
}

/// A namespace mode that keeps the container in its own namespaces. `host` never. Joining
/// another container's network, PID or IPC namespace (`container:<x>`, compose's `service:<x>`)
/// is allowed here, and each layer proves the other container is the project's own (the file
/// pass refuses `container:`, which names something outside the file; the guard asks the engine
/// whose it is). `ipc` may also be `private`, `shareable` or `none`, `cgroup` only `private`, a
/// network mode any network's name (the guard checks whose network it is); `uts` and
/// `userns_mode` nothing but their default.
pub fn namespace_allowed(ns: Namespace, mode: &str) -> bool {
    let m = mode.trim().to_ascii_lowercase();
    if m.is_empty() {
        return true;
    }
    let joins = m.starts_with("container:") || m.starts_with("service:");
    match ns {
        Namespace::Network => m != "host",
        Namespace::Pid => joins,
        Namespace::Ipc => joins || ["private", "shareable", "none"].contains(&m.as_str()),
        Namespace::Cgroup => m == "private",
        Namespace::Uts | Namespace::Userns => false,
    }
}

/// Published host ports: none the box reserves (`PORT_REFUSED`).
pub fn ports(spec: &ContainerSpec, facts: &BoxFacts) -> R {
    first(ports_all(spec, facts))
}

/// [`ports`], every refusal.
pub fn ports_all(spec: &ContainerSpec, facts: &BoxFacts) -> Vec<Refusal> {
    if facts.privileged {
        return Vec::new();
    }
    let key = spec.key("ports", "HostConfig.PortBindings");
    spec.ports
        .iter()
        .filter_map(|(ip, host)| {
            let range = rules::port_range(host)?;
            rules::port_refusal(&spec.service, ip, range, &facts.reserved_ports)
                .err()
                .map(|r| spec.found(r, &key))
        })
        .collect()
}

/// The container's own name is compose's for its service, or a free-standing one in no
/// project's namespace the box knows ([`rules::container_name_taken`]; `NAME_REFUSED`). The
/// guard also asks the engine who holds the name and which projects are on the box.
pub fn name(spec: &ContainerSpec, facts: &BoxFacts) -> R {
    let Some(n) = spec.name.as_deref().filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    if facts.privileged
        || facts.project.is_empty()
        || rules::container_name_ok(n, &facts.project, &spec.service)
    {
        return Ok(());
    }
    let Some(why) = rules::container_name_taken(n, &facts.project, &facts.foreign_projects) else {
        return Ok(());
    };
    let mut r = rules::name_refused("container", n, &facts.project);
    if !why.is_empty() {
        r.detail = format!("{}: {why})", r.detail.trim_end_matches(')'));
    }
    Err(spec.found(r, "container_name").lifted_by(format!(
        "drop container_name, use {}-{} (compose's own), or a name outside {}-… and every other \
         project's prefix",
        facts.project,
        spec.service,
        rules::BOX_NAMESPACE
    )))
}

/// The box's `container_limits`: a memory and a pids limit under them (`LIMIT_REFUSED`).
pub fn limits(spec: &ContainerSpec, facts: &BoxFacts) -> R {
    if facts.privileged {
        return Ok(());
    }
    // a limit this pass could not read is judged by the next one: stand in the ceiling itself
    let waits = |k: &str| spec.waits.iter().any(|w| w == k);
    let memory = match facts.limits.memory {
        Some(max) if waits("memory") => max,
        _ => spec.memory,
    };
    let pids = match facts.limits.pids {
        Some(max) if waits("pids") => i64::try_from(max).unwrap_or(i64::MAX),
        _ => spec.pids,
    };
    facts
        .limits
        .refusal(&spec.service, memory, pids)
        .map_err(|r| spec.found(r, "mem_limit"))
}

/// The box's `require_image_digests` (`IMAGE_REFUSED`): judged whatever the box permits.
pub fn image(spec: &ContainerSpec, facts: &BoxFacts) -> R {
    match &spec.image {
        Some(i) => rules::image_digest_refusal(facts, &spec.service, i),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;

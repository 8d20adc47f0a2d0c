//! The privilege analysis of a compose file. It runs twice: on the bundle's YAML before the
//! lease (anchors and merge keys resolved), and on the compose CLI's own normalised `config`
//! after `.env` is rendered, so interpolation cannot smuggle a setting past the first pass.

use std::path::PathBuf;

use serde_yaml_ng::{Mapping, Value};

use crate::bundle::Refusal;

const CODE: &str = "PRIVILEGED_REFUSED";
/// A host path a bind, volume device, secret/config file or build context may not use
/// (`<service> <path> (<reason>)`, PROTOCOL 0.3).
pub const BIND_CODE: &str = "BIND_SOURCE_REFUSED";

fn bind_refused(who: &str, src: &str, reason: &str) -> Refusal {
    let who = who.strip_prefix("service ").unwrap_or(who);
    Refusal::new(BIND_CODE, format!("{who} {src} ({reason})"))
}

/// Capabilities that amount to root on the host.
const DANGEROUS_CAPS: &[&str] = &[
    "ALL",
    "SYS_ADMIN",
    "SYS_MODULE",
    "SYS_RAWIO",
    "SYS_PTRACE",
    "SYS_BOOT",
    "DAC_READ_SEARCH",
    "NET_ADMIN",
    "BPF",
    "PERFMON",
    "MAC_ADMIN",
    "MAC_OVERRIDE",
    "SYS_TIME",
    "SYSLOG",
];

/// Host paths a container must not bind, read-only or not: these, anything below them, and
/// anything above them (a bind of `/var` exposes `/var/lib/docker`). One list for the file
/// passes and the engine guard.
const FORBIDDEN_DEEP: &[&str] = crate::policy::PRIVATE_TREES;

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

/// Harmless files commonly bound without `:ro`.
const WRITABLE_OK: &[&str] = &["/etc/localtime", "/etc/timezone"];

/// Parse compose YAML into a value with aliases and merge keys resolved.
pub fn parse(text: &[u8]) -> Result<Value, Refusal> {
    let mut v: Value = serde_yaml_ng::from_slice(text)
        .map_err(|e| Refusal::new("BUNDLE_INVALID", format!("compose.yaml: {e}")))?;
    v.apply_merge()
        .map_err(|e| Refusal::new("BUNDLE_INVALID", format!("compose.yaml merge keys: {e}")))?;
    // merge keys may sit at any depth (service level, under deploy, …)
    fn deep_merge(v: &mut Value) -> Result<(), serde_yaml_ng::Error> {
        match v {
            Value::Mapping(m) => {
                for (_, x) in m.iter_mut() {
                    x.apply_merge()?;
                    deep_merge(x)?;
                }
            }
            Value::Sequence(s) => {
                for x in s.iter_mut() {
                    deep_merge(x)?;
                }
            }
            Value::Tagged(t) => deep_merge(&mut t.value)?,
            _ => {}
        }
        Ok(())
    }
    deep_merge(&mut v)
        .map_err(|e| Refusal::new("BUNDLE_INVALID", format!("compose.yaml merge keys: {e}")))?;
    // what our parser and compose's could read differently is refused, not interpreted:
    // tags (`!reset`, `!!binary`, …) and non-string keys; and the expanded size is bounded
    let mut nodes = 0usize;
    shape(&v, &mut nodes)?;
    Ok(v)
}

/// Nodes a parsed compose file may expand to (anchors and aliases included).
pub const MAX_NODES: usize = 100_000;

fn shape(v: &Value, nodes: &mut usize) -> Result<(), Refusal> {
    *nodes += 1;
    if *nodes > MAX_NODES {
        return Err(Refusal::new(
            "BUNDLE_INVALID",
            format!("compose.yaml expands to more than {MAX_NODES} nodes"),
        ));
    }
    match v {
        Value::Tagged(t) => Err(Refusal::new(
            "BUNDLE_INVALID",
            format!(
                "compose.yaml uses the YAML tag {} (tags are not accepted)",
                t.tag
            ),
        )),
        Value::Mapping(m) => {
            for (k, x) in m {
                if !matches!(k, Value::String(_)) {
                    return Err(Refusal::new(
                        "BUNDLE_INVALID",
                        "compose.yaml has a non-string key",
                    ));
                }
                shape(x, nodes)?;
            }
            Ok(())
        }
        Value::Sequence(s) => s.iter().try_for_each(|x| shape(x, nodes)),
        _ => Ok(()),
    }
}

fn untag(v: &Value) -> &Value {
    match v {
        Value::Tagged(t) => untag(&t.value),
        other => other,
    }
}

fn get<'a>(m: &'a Mapping, k: &str) -> Option<&'a Value> {
    m.get(Value::String(k.into())).map(untag)
}

fn as_str(v: &Value) -> Option<String> {
    match untag(v) {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Conservative: anything that is not clearly false counts as set (`"${X}"` included).
fn truthy(v: &Value) -> bool {
    match untag(v) {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "" | "false" | "no" | "0" | "off" | "n"
        ),
        _ => true,
    }
}

fn seq_strings(v: &Value) -> Vec<String> {
    match untag(v) {
        Value::Sequence(s) => s.iter().filter_map(as_str).collect(),
        other => as_str(other).into_iter().collect(),
    }
}

/// Lexically normalise an absolute path (`//`, `/.`, `/x/..`).
fn normalise(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

fn host_path_forbidden(src: &str, read_only: bool) -> bool {
    let n = normalise(src);
    if FORBIDDEN_DEEP.iter().any(|d| under(&n, d) || under(d, &n)) {
        return true;
    }
    !read_only
        && !WRITABLE_OK.contains(&n.as_str())
        && READ_ONLY_DEEP.iter().any(|d| under(&n, d) || under(d, &n))
}

/// Where the second pass runs: the project directory compose resolved relative paths against,
/// and the agent's own files (state dir, bootstrap grant, config) no container may see.
#[derive(Debug, Clone, Default)]
pub struct Normalised {
    pub project_dir: PathBuf,
    pub private: Vec<PathBuf>,
    /// The box's `bind_roots`; `None` when the box permits privileged bundles (no confinement).
    pub bind_roots: Option<Vec<PathBuf>>,
}

fn under(p: &str, dir: &str) -> bool {
    dir == "/" || p == dir || p.starts_with(&format!("{dir}/"))
}

fn check_bind_source(who: &str, src: &str, ctx: Option<&Normalised>) -> Result<(), Refusal> {
    check_bind(who, src, false, ctx)
}

fn check_bind(
    who: &str,
    src: &str,
    read_only: bool,
    ctx: Option<&Normalised>,
) -> Result<(), Refusal> {
    let s = src.trim();
    if s.starts_with('/') {
        if let Some(ctx) = ctx {
            // compose resolved `./x` against the project dir: the release's own files are fine
            // even when the state dir itself is a forbidden host path (/var/lib/monky-deployd)
            let n = normalise(s);
            let pd = normalise(&ctx.project_dir.to_string_lossy());
            if under(&n, &pd) {
                return Ok(());
            }
            for p in &ctx.private {
                let p = normalise(&p.to_string_lossy());
                if under(&n, &p) || under(&p, &n) {
                    return Err(bind_refused(who, s, "the agent's own files"));
                }
            }
        }
        if host_path_forbidden(s, read_only) {
            let how = if read_only { "" } else { ", writable" };
            return Err(bind_refused(
                who,
                s,
                &format!("a private or system path{how}"),
            ));
        }
        // the engine guard's bind rule, early and readable: outside the release only into the
        // box's bind_roots (or a harmless system file, read-only)
        if let Some(roots) = ctx.and_then(|c| c.bind_roots.as_ref()) {
            let real = crate::policy::resolve(std::path::Path::new(s));
            let lex = crate::policy::lexical(std::path::Path::new(s));
            let in_root = roots
                .iter()
                .any(|r| real.starts_with(r) && lex.starts_with(r));
            let harmless = read_only
                && crate::policy::READ_ONLY_FILES
                    .iter()
                    .any(|f| real.starts_with(f));
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

/// A file compose reads on the host (`env_file`): inside the release only — relative, no `..`,
/// no interpolation; after normalisation, under the project directory.
fn check_file_in_release(
    who: &str,
    what: &str,
    p: &str,
    ctx: Option<&Normalised>,
) -> Result<(), Refusal> {
    let t = p.trim();
    let inside = if t.starts_with('/') {
        ctx.map(|c| under(&normalise(t), &normalise(&c.project_dir.to_string_lossy())))
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

/// `privileged`, host namespaces, dangerous capabilities, devices, unconfined security options,
/// and bind mounts of the Docker socket, `/` and other host internals. Returns the service names.
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

pub fn check(doc: &Value, allow_privileged: bool) -> Result<Vec<String>, Refusal> {
    check_in(doc, allow_privileged, None)
}

/// The second pass, on the compose CLI's own normalised `config` (paths already absolute):
/// as [`check`], and a bind of the agent's own files — or of an ancestor of them — is refused
/// while a bind inside the project directory is not.
pub fn check_normalised(
    doc: &Value,
    allow_privileged: bool,
    ctx: &Normalised,
) -> Result<Vec<String>, Refusal> {
    check_in(doc, allow_privileged, Some(ctx))
}

fn check_in(
    doc: &Value,
    allow_privileged: bool,
    ctx: Option<&Normalised>,
) -> Result<Vec<String>, Refusal> {
    let root = match untag(doc) {
        Value::Mapping(m) => m,
        _ => {
            return Err(Refusal::new(
                "BUNDLE_INVALID",
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
                "BUNDLE_INVALID",
                "compose.yaml has no services",
            ))
        }
    };
    let mut names = Vec::new();
    // named volumes that are really host binds (driver_opts o=bind, device=<host path>)
    let mut bind_volumes: Vec<(String, String)> = Vec::new();
    if let Some(Value::Mapping(vols)) = get(root, "volumes") {
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
                        bind_volumes.push((name, dev));
                    }
                }
            }
        }
    }
    // top-level secrets and configs with `file:` are bind mounts too (a read-only bind of the
    // Docker socket still drives the Docker API)
    if !allow_privileged {
        for (top, kind) in [("secrets", "secret"), ("configs", "config")] {
            if let Some(Value::Mapping(m)) = get(root, top) {
                for (k, v) in m {
                    let name = as_str(k).unwrap_or_else(|| "?".into());
                    if let Value::Mapping(sm) = untag(v) {
                        if let Some(f) = get(sm, "file").and_then(as_str) {
                            check_bind(&format!("{kind} {name}"), &f, true, ctx)?;
                        }
                    }
                }
            }
        }
    }
    let mut host_networks: Vec<String> = Vec::new();
    if let Some(Value::Mapping(nets)) = get(root, "networks") {
        for (k, v) in nets {
            let Some(key) = as_str(k) else { continue };
            if let Value::Mapping(nm) = untag(v) {
                let name = get(nm, "name")
                    .and_then(as_str)
                    .unwrap_or_else(|| key.clone());
                let driver = get(nm, "driver").and_then(as_str).unwrap_or_default();
                if name == "host" || driver == "host" {
                    host_networks.push(key);
                }
            }
        }
    }
    for (k, v) in services {
        let svc = as_str(k).unwrap_or_else(|| "?".into());
        names.push(svc.clone());
        let who = format!("service {svc}");
        let s = match untag(v) {
            Value::Mapping(m) => m,
            Value::Null => continue,
            _ => {
                return Err(Refusal::new(
                    "BUNDLE_INVALID",
                    format!("service {svc} is not a mapping"),
                ))
            }
        };
        if let Some(ext) = get(s, "extends") {
            if matches!(untag(ext), Value::Mapping(m) if get(m, "file").is_some()) {
                return Err(Refusal::new(
                    CODE,
                    format!("service {svc} extends another file"),
                ));
            }
        }
        if allow_privileged {
            continue;
        }
        if get(s, "privileged").map(truthy).unwrap_or(false) {
            return Err(Refusal::new(CODE, format!("service {svc} sets privileged")));
        }
        for key in ["network_mode", "pid", "ipc", "uts", "userns_mode", "cgroup"] {
            if let Some(val) = get(s, key).and_then(as_str) {
                let l = val.trim().to_ascii_lowercase();
                // `container:<name>` joins a container outside the project (another env's
                // processes, environment and secrets); `service:<name>` stays inside it
                if l == "host"
                    || l.starts_with("container:")
                    || (key == "network_mode" && l.starts_with('$'))
                {
                    return Err(Refusal::new(
                        CODE,
                        format!("service {svc} sets {key}: {val}"),
                    ));
                }
            }
        }
        if let Some(Value::Mapping(nets)) = get(s, "networks") {
            for (nk, _) in nets {
                if let Some(n) = as_str(nk) {
                    if host_networks.contains(&n) {
                        return Err(Refusal::new(
                            CODE,
                            format!("service {svc} joins the host network via {n}"),
                        ));
                    }
                }
            }
        } else if let Some(nets) = get(s, "networks") {
            for n in seq_strings(nets) {
                if host_networks.contains(&n) {
                    return Err(Refusal::new(
                        CODE,
                        format!("service {svc} joins the host network via {n}"),
                    ));
                }
            }
        }
        if let Some(caps) = get(s, "cap_add") {
            for c in seq_strings(caps) {
                let norm = c.trim().to_ascii_uppercase();
                let norm = norm.strip_prefix("CAP_").unwrap_or(&norm);
                if DANGEROUS_CAPS.contains(&norm) || norm.starts_with('$') {
                    return Err(Refusal::new(
                        CODE,
                        format!("service {svc} adds capability {c}"),
                    ));
                }
            }
        }
        for key in ["devices", "device_cgroup_rules"] {
            if let Some(d) = get(s, key) {
                let empty = match d {
                    Value::Sequence(x) => x.is_empty(),
                    Value::Null => true,
                    _ => false,
                };
                if !empty {
                    return Err(Refusal::new(CODE, format!("service {svc} sets {key}")));
                }
            }
        }
        if let Some(vf) = get(s, "volumes_from") {
            for v in seq_strings(vf) {
                if v.trim().to_ascii_lowercase().starts_with("container:")
                    || v.trim().starts_with('$')
                {
                    return Err(Refusal::new(
                        CODE,
                        format!("service {svc} mounts the volumes of {v} (outside the project)"),
                    ));
                }
            }
        }
        if let Some(ef) = get(s, "env_file") {
            let paths: Vec<String> = match ef {
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
                check_file_in_release(&who, "env_file", &p, ctx)?;
            }
        }
        if let Some(b) = get(s, "build") {
            let (context, extra, network) = match b {
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
                return Err(Refusal::new(
                    CODE,
                    format!("service {svc} builds on the host network"),
                ));
            }
            for c in context.into_iter().chain(extra) {
                let remote =
                    c.contains("://") || c.starts_with("git@") || c.starts_with("docker-image:");
                if !remote {
                    check_bind(&format!("{who} build context"), &c, true, ctx)?;
                }
            }
        }
        if get(s, "provider").is_some() {
            return Err(Refusal::new(
                CODE,
                format!("service {svc} is run by a provider plugin on the host"),
            ));
        }
        for hook in ["post_start", "pre_stop"] {
            if let Some(Value::Sequence(hooks)) = get(s, hook) {
                for h in hooks {
                    if let Value::Mapping(hm) = untag(h) {
                        if get(hm, "privileged").map(truthy).unwrap_or(false) {
                            return Err(Refusal::new(
                                CODE,
                                format!("service {svc} runs a privileged {hook} hook"),
                            ));
                        }
                    }
                }
            }
        }
        if let Some(opts) = get(s, "security_opt") {
            for o in seq_strings(opts) {
                let l = o.trim().to_ascii_lowercase().replace('=', ":");
                // any seccomp profile but the default (a custom one can allow everything), any
                // AppArmor profile but docker-default, SELinux labels other than a level
                // (`type:spc_t` is the "super privileged container" type)
                if l.contains("unconfined")
                    || l.starts_with("seccomp")
                    || (l.starts_with("apparmor") && l != "apparmor:docker-default")
                    || (l.starts_with("label") && !l.starts_with("label:level:"))
                    || l.starts_with("no-new-privileges:false")
                    || l.starts_with('$')
                {
                    return Err(Refusal::new(
                        CODE,
                        format!("service {svc} sets security_opt {o}"),
                    ));
                }
            }
        }
        if let Some(Value::Sequence(vols)) = get(s, "volumes") {
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
                        if let Some((_, dev)) = bind_volumes.iter().find(|(n, _)| n == src) {
                            check_bind_source(&who, dev, ctx)?;
                        } else if short.contains(':') || src.starts_with('/') {
                            check_bind(&who, src, ro, ctx)?;
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
                            check_bind(&who, &src, ro, ctx)?;
                        } else if let Some((_, dev)) = bind_volumes.iter().find(|(n, _)| *n == src)
                        {
                            check_bind_source(&who, dev, ctx)?;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // last: the allow-list, so a known privileged shape keeps its PRIVILEGED_REFUSED name; a
    // box that permits privileged bundles trusts their keys too
    if !allow_privileged {
        crate::compose_keys::check(root)?;
    }
    Ok(names)
}

#[cfg(test)]
mod tests;

//! The host boundary, judged on what compose finally asks the Docker engine to do. Every
//! container, volume and network create body that passes through the agent's checking socket
//! (`guard`) is read key by key against the allow-lists below: a key the table does not know
//! is refused by name unless it holds its zero value, so a field a future engine or compose
//! release invents is refused until someone reads it and adds it here (see docs/POLICY.md).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

/// What a create body may touch on this box, fixed for one compose call.
#[derive(Debug, Clone, Default)]
pub struct Boundary {
    /// `com.docker.compose.project` every created object must carry.
    pub project: String,
    /// The release directory compose runs from (canonical): binds inside it are allowed.
    pub release_dir: Option<PathBuf>,
    /// Operator-listed data roots (box config `bind_roots`, canonical).
    pub bind_roots: Vec<PathBuf>,
    /// The agent's own files (state dir, config, bootstrap grant): never reachable by a bind,
    /// nor any ancestor of them, whatever the box permits.
    pub agent_files: Vec<PathBuf>,
    /// The Docker data root and the engine socket: never reachable unless privileged.
    pub private: Vec<PathBuf>,
    /// The bundle asked for `allow_privileged` and the box's `permit_privileged` agreed.
    pub privileged: bool,
}

/// Keys whose every value is harmless on the host (resources, ports, names, process settings
/// inside the container's own namespaces).
const CONTAINER_HARMLESS: &[(&str, &str)] = &[
    ("Hostname", "the container's own UTS name"),
    ("Domainname", "the container's own UTS name"),
    ("User", "a user inside the container's user namespace"),
    ("AttachStdin", "stream plumbing"),
    ("AttachStdout", "stream plumbing"),
    ("AttachStderr", "stream plumbing"),
    (
        "ExposedPorts",
        "metadata; publishing is HostConfig.PortBindings",
    ),
    ("Tty", "stream plumbing"),
    ("OpenStdin", "stream plumbing"),
    ("StdinOnce", "stream plumbing"),
    ("Env", "the container's own environment"),
    ("Cmd", "the process inside the container"),
    ("Healthcheck", "runs inside the container"),
    ("ArgsEscaped", "Windows quoting flag"),
    ("Image", "what to run; pulls are judged separately"),
    ("Volumes", "anonymous volumes, owned by the container"),
    ("WorkingDir", "inside the container"),
    ("Entrypoint", "the process inside the container"),
    ("NetworkDisabled", "less, not more"),
    ("MacAddress", "the container's own interface"),
    ("OnBuild", "image metadata"),
    ("StopSignal", "signal to its own process"),
    ("StopTimeout", "its own shutdown"),
    ("Shell", "image metadata"),
];

const HOST_HARMLESS: &[(&str, &str)] = &[
    ("PortBindings", "publishing ports is what services do"),
    ("RestartPolicy", "the container's own lifecycle"),
    ("AutoRemove", "the container's own lifecycle"),
    ("ConsoleSize", "terminal size"),
    ("Dns", "resolver inside the container"),
    ("DnsOptions", "resolver inside the container"),
    ("DnsSearch", "resolver inside the container"),
    ("ExtraHosts", "/etc/hosts inside the container"),
    ("GroupAdd", "groups inside the container's user namespace"),
    ("Links", "names of the project's own containers"),
    ("OomScoreAdj", "its own OOM priority"),
    ("PublishAllPorts", "publishing ports"),
    ("ReadonlyRootfs", "less, not more"),
    ("ShmSize", "its own /dev/shm"),
    ("Tmpfs", "memory-backed, inside the container"),
    ("CapDrop", "less, not more"),
    ("Init", "an init process inside the container"),
    ("CpuShares", "resource limit"),
    ("Memory", "resource limit"),
    ("NanoCpus", "resource limit"),
    ("CpuPeriod", "resource limit"),
    ("CpuQuota", "resource limit"),
    ("CpusetCpus", "resource limit"),
    ("CpusetMems", "resource limit"),
    ("MemoryReservation", "resource limit"),
    ("MemorySwap", "resource limit"),
    ("MemorySwappiness", "resource limit"),
    ("PidsLimit", "resource limit"),
    ("Ulimits", "resource limit"),
    ("BlkioWeight", "resource limit"),
    ("BlkioWeightDevice", "resource limit"),
    ("BlkioDeviceReadBps", "resource limit"),
    ("BlkioDeviceWriteBps", "resource limit"),
    ("BlkioDeviceReadIOps", "resource limit"),
    ("BlkioDeviceWriteIOps", "resource limit"),
    ("KernelMemory", "deprecated resource limit"),
    ("KernelMemoryTCP", "deprecated resource limit"),
    ("CpuCount", "Windows resource limit"),
    ("CpuPercent", "Windows resource limit"),
    ("IOMaximumIOps", "Windows resource limit"),
    ("IOMaximumBandwidth", "Windows resource limit"),
];

/// Capabilities that stay inside the container's namespaces (Docker's default set plus a few
/// that grant nothing on the host when the other namespaces are private).
pub const SAFE_CAPS: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "NET_RAW",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
    "IPC_LOCK",
    "SYS_NICE",
    "SYS_RESOURCE",
];

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

/// Why a body was refused: the JSON path of the key (names only, never values, except host
/// paths and network/volume names, which are not secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied(pub String);

type R = Result<(), Denied>;

fn deny(msg: impl Into<String>) -> R {
    Err(Denied(msg.into()))
}

/// `null`, `false`, `0`, `""`, `[]`, `{}`: a key holding this changes nothing.
pub fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

fn known(table: &[(&str, &str)], k: &str) -> bool {
    table.iter().any(|(n, _)| *n == k)
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn labels_ok(b: &Map<String, Value>, what: &str, project: &str) -> R {
    let p = b
        .get("Labels")
        .and_then(|l| l.get("com.docker.compose.project"))
        .and_then(|v| v.as_str());
    if p != Some(project) {
        return deny(format!("{what} without this project's label ({project})"));
    }
    Ok(())
}

/// Names of volumes and networks a container create refers to, for the caller to check that
/// each belongs to the project (the guard asks the engine).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Refs {
    pub volumes: BTreeSet<String>,
    pub networks: BTreeSet<String>,
    /// Containers whose namespaces or volumes this one shares (`network_mode: service:x`,
    /// `volumes_from`): they must be the project's own.
    pub containers: BTreeSet<String>,
    /// Host paths this container may write (for the "no bind inside a writable mount" rule).
    pub writable: Vec<PathBuf>,
    /// Every bind source (resolved).
    pub binds: Vec<PathBuf>,
}

/// Judges a `POST /containers/create` body. `Ok` carries the names the caller must still
/// check against the engine.
pub fn container_create(body: &Value, b: &Boundary) -> Result<Refs, Denied> {
    let Some(top) = body.as_object() else {
        return Err(Denied("container create body is not an object".into()));
    };
    let mut refs = Refs::default();
    labels_ok(top, "container", &b.project)?;
    for (k, v) in top {
        match k.as_str() {
            "Labels" => {}
            "HostConfig" => host_config(v, b, &mut refs)?,
            "NetworkingConfig" => {
                if let Some(eps) = v.get("EndpointsConfig").and_then(|e| e.as_object()) {
                    for name in eps.keys() {
                        network_name(name, &mut refs)?;
                    }
                }
                if let Some(o) = v.as_object() {
                    if let Some(other) = o.keys().find(|k| *k != "EndpointsConfig") {
                        return Err(Denied(format!("NetworkingConfig.{other}")));
                    }
                }
            }
            _ if known(CONTAINER_HARMLESS, k) => {}
            _ if is_zero(v) => {}
            _ => return Err(Denied(k.clone())),
        }
    }
    Ok(refs)
}

fn network_name(name: &str, refs: &mut Refs) -> R {
    match name {
        "" | "default" | "bridge" | "none" => Ok(()),
        "host" => deny("network host"),
        n if n.starts_with("container:") => {
            refs.containers.insert(n["container:".len()..].to_string());
            Ok(())
        }
        n => {
            refs.networks.insert(n.to_string());
            Ok(())
        }
    }
}

fn host_config(hc: &Value, b: &Boundary, refs: &mut Refs) -> R {
    let Some(hc) = hc.as_object() else {
        return deny("HostConfig is not an object");
    };
    for (k, v) in hc {
        let path = format!("HostConfig.{k}");
        if known(HOST_HARMLESS, k) || is_zero(v) {
            continue;
        }
        match k.as_str() {
            "Binds" => {
                for s in v.as_array().into_iter().flatten() {
                    bind_string(str_of(s), b, refs)
                        .map_err(|d| Denied(format!("{path}: {}", d.0)))?;
                }
            }
            "Mounts" => {
                for m in v.as_array().into_iter().flatten() {
                    mount(m, b, refs).map_err(|d| Denied(format!("{path}: {}", d.0)))?;
                }
            }
            "NetworkMode" => network_name(str_of(v), refs)?,
            // another container of the project: its mounts were judged when it was created
            "VolumesFrom" => {
                for c in v.as_array().into_iter().flatten() {
                    let c = str_of(c);
                    let id = c.split(':').next().unwrap_or("");
                    refs.containers.insert(id.to_string());
                }
            }
            "IpcMode" | "PidMode" if str_of(v).starts_with("container:") => {
                refs.containers
                    .insert(str_of(v)["container:".len()..].to_string());
            }
            "LogConfig" => {
                let drv = v.get("Type").map(str_of).unwrap_or("");
                if !["", "json-file", "local", "journald", "none"].contains(&drv) {
                    return deny(format!("{path}.Type {drv}"));
                }
            }
            "IpcMode" if ["private", "shareable", "none"].contains(&str_of(v)) => {}
            "CgroupnsMode" if str_of(v) == "private" => {}
            "Isolation" if str_of(v) == "default" => {}
            "Runtime" if str_of(v) == "runc" => {}
            "SecurityOpt" => {
                for o in v.as_array().into_iter().flatten() {
                    let o = str_of(o);
                    let ok = matches!(
                        o,
                        "no-new-privileges" | "no-new-privileges:true" | "no-new-privileges=true"
                    );
                    if !ok && !b.privileged {
                        return deny(format!("{path} {o}"));
                    }
                }
            }
            "CapAdd" => {
                for c in v.as_array().into_iter().flatten() {
                    let c = str_of(c).trim_start_matches("CAP_").to_ascii_uppercase();
                    if !SAFE_CAPS.contains(&c.as_str()) && !b.privileged {
                        return deny(format!("{path} {c}"));
                    }
                }
            }
            "Sysctls" => {
                for name in v.as_object().into_iter().flat_map(|m| m.keys()) {
                    // namespaced sysctls only: they change the container's own namespaces
                    let ns = name.starts_with("net.")
                        || name.starts_with("fs.mqueue.")
                        || [
                            "kernel.shmmax",
                            "kernel.shmall",
                            "kernel.shmmni",
                            "kernel.msgmax",
                            "kernel.msgmnb",
                            "kernel.msgmni",
                            "kernel.sem",
                            "kernel.shm_rmid_forced",
                        ]
                        .contains(&name.as_str());
                    if !ns && !b.privileged {
                        return deny(format!("{path} {name}"));
                    }
                }
            }
            // privilege proper: only the box's own permit lets these through
            "Privileged" | "PidMode" | "UTSMode" | "UsernsMode" | "IpcMode" | "CgroupnsMode"
            | "Devices" | "DeviceRequests" | "DeviceCgroupRules" | "CgroupParent" | "Cgroup"
            | "OomKillDisable" | "MaskedPaths" | "ReadonlyPaths" | "Runtime" | "Annotations"
            | "StorageOpt" | "CpuRealtimePeriod" | "CpuRealtimeRuntime"
                if b.privileged => {}
            // MaskedPaths: [] (systempaths=unconfined) unmasks /proc; zero-ness is not enough
            "MaskedPaths" | "ReadonlyPaths" => return deny(path),
            _ => return deny(format!("{path} {}", short_value(v))),
        }
    }
    // An empty MaskedPaths list is "zero" above but means "unmask everything".
    for k in ["MaskedPaths", "ReadonlyPaths"] {
        if matches!(hc.get(k), Some(Value::Array(a)) if a.is_empty()) && !b.privileged {
            return deny(format!(
                "HostConfig.{k} (empty list unmasks /proc and /sys)"
            ));
        }
    }
    Ok(())
}

/// A short, secret-free rendering of a refused value: strings and numbers are settings
/// (host, private, SYS_ADMIN…), objects and lists are summarised.
fn short_value(v: &Value) -> String {
    match v {
        Value::String(s) if s.len() <= 64 => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => format!("[{} entries]", a.len()),
        Value::Object(_) => "{…}".into(),
        _ => "…".into(),
    }
}

fn bind_string(s: &str, b: &Boundary, refs: &mut Refs) -> R {
    let mut parts = s.splitn(3, ':');
    let src = parts.next().unwrap_or("");
    let _dst = parts.next().unwrap_or("");
    let opts = parts.next().unwrap_or("");
    let mut read_only = false;
    for o in opts.split(',').filter(|o| !o.is_empty()) {
        match o {
            "ro" => read_only = true,
            "rw" | "nocopy" | "rprivate" | "private" => {}
            other => return deny(format!("{src}: bind option {other}")),
        }
    }
    if src.starts_with('/') {
        bind_source(Path::new(src), read_only, b, refs)
    } else {
        refs.volumes.insert(src.to_string());
        Ok(())
    }
}

fn mount(m: &Value, b: &Boundary, refs: &mut Refs) -> R {
    let ty = m.get("Type").map(str_of).unwrap_or("");
    let src = m.get("Source").map(str_of).unwrap_or("");
    let read_only = m.get("ReadOnly").and_then(|v| v.as_bool()).unwrap_or(false);
    if let Some(o) = m.as_object() {
        for k in o.keys() {
            if ![
                "Type",
                "Source",
                "Target",
                "ReadOnly",
                "Consistency",
                "BindOptions",
                "VolumeOptions",
                "TmpfsOptions",
            ]
            .contains(&k.as_str())
                && !is_zero(&o[k])
            {
                return deny(format!("mount key {k}"));
            }
        }
    }
    match ty {
        "bind" => {
            if let Some(bo) = m.get("BindOptions").and_then(|v| v.as_object()) {
                for (k, v) in bo {
                    let ok = match k.as_str() {
                        "Propagation" => ["", "rprivate", "private"].contains(&str_of(v)),
                        "CreateMountpoint"
                        | "NonRecursive"
                        | "ReadOnlyNonRecursive"
                        | "ReadOnlyForceRecursive" => true,
                        _ => is_zero(v),
                    };
                    if !ok {
                        return deny(format!("{src}: BindOptions.{k} {}", short_value(v)));
                    }
                }
            }
            bind_source(Path::new(src), read_only, b, refs)
        }
        "volume" => {
            if let Some(vo) = m.get("VolumeOptions").and_then(|v| v.as_object()) {
                for (k, v) in vo {
                    if !["NoCopy", "Labels", "Subpath"].contains(&k.as_str()) && !is_zero(v) {
                        return deny(format!("volume {src}: VolumeOptions.{k}"));
                    }
                }
            }
            if !src.is_empty() {
                refs.volumes.insert(src.to_string());
            }
            Ok(())
        }
        "tmpfs" => Ok(()),
        other => deny(format!("mount type {other:?}")),
    }
}

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

/// `POST /volumes/create`: the local driver, no driver options (a mount(2) in disguise), the
/// project's label.
pub fn volume_create(body: &Value, b: &Boundary) -> R {
    let Some(o) = body.as_object() else {
        return deny("volume create body is not an object");
    };
    labels_ok(o, "volume", &b.project)?;
    for (k, v) in o {
        match k.as_str() {
            "Name" | "Labels" => {}
            "Driver" if ["", "local"].contains(&str_of(v)) => {}
            "DriverOpts" if is_zero(v) || b.privileged => {}
            _ if is_zero(v) => {}
            _ => {
                return deny(format!(
                    "volume {}: {k}",
                    o.get("Name").map(str_of).unwrap_or("")
                ))
            }
        }
    }
    Ok(())
}

/// `POST /networks/create`: a bridge network of the project's own.
pub fn network_create(body: &Value, b: &Boundary) -> R {
    let Some(o) = body.as_object() else {
        return deny("network create body is not an object");
    };
    labels_ok(o, "network", &b.project)?;
    let name = o.get("Name").map(str_of).unwrap_or("");
    for (k, v) in o {
        match k.as_str() {
            "Name" | "Labels" | "CheckDuplicate" | "Internal" | "Attachable" | "EnableIPv6"
            | "EnableIPv4" | "IPAM" => {}
            "Driver" if ["", "bridge"].contains(&str_of(v)) => {}
            "Options" => {
                for ok in v.as_object().into_iter().flat_map(|m| m.keys()) {
                    if ok != "com.docker.network.driver.mtu" && !b.privileged {
                        return deny(format!("network {name}: Options.{ok}"));
                    }
                }
            }
            _ if is_zero(v) => {}
            _ => return deny(format!("network {name}: {k} {}", short_value(v))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

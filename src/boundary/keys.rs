//! The one table of what a container may ask for (issue 41): a row for every compose service
//! key and every container-create key of the Engine API (`Config` at the top of the body,
//! `HostConfig`), each with its compose spelling, its engine spelling(s), how its value is
//! judged, why, and what lifts a refusal. Pure data, no I/O.
//!
//! What is derived from it: the file passes' service-key allow-list (`compose_keys`), the
//! engine guard's keys that pass by name (`policy`, `Config` and `HostConfig`), the set of
//! `HostConfig` keys the guard's per-key rules must cover (a test), POLICY.md's key table
//! (a test renders and compares it), and the census against the compose-spec schema and the
//! Engine API definitions at pinned versions ([`census`] tests: a key of either without a row
//! fails). The rules themselves are functions elsewhere (`container`, `compose_check::rules`,
//! `policy::host_config`); a row names the one that reads its value.

/// How a key's value is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// Every value is harmless on the host: passes by name in both layers.
    Harmless,
    /// A rule judges the value (named as POLICY.md names it); the key itself is allowed.
    Rule(&'static str),
    /// Any non-empty value is a privilege: `PRIVILEGED_REFUSED` unless the box permits
    /// privileged bundles (`permit_privileged` and the bundle's `allow_privileged`).
    Privilege,
    /// Refused by name in every value (`COMPOSE_KEY_REFUSED` in the file passes,
    /// `ENGINE_REFUSED` at the guard) until someone reads what it does and gives it a rule.
    Refused,
}

/// One key.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The compose service key (`""`: none, the engine sets it alone).
    pub compose: &'static str,
    /// The create body's keys it becomes: `Config.X` (top level of the body) or
    /// `HostConfig.X` (`[]`: the engine never sees it as a key: compose reads it itself, or
    /// names objects with it).
    pub engine: &'static [&'static str],
    pub how: How,
    pub why: &'static str,
    /// What lifts a refusal of this key (`""`: the rule's own words say it).
    pub lift: &'static str,
}

const fn harmless(
    compose: &'static str,
    engine: &'static [&'static str],
    why: &'static str,
) -> Row {
    Row {
        compose,
        engine,
        how: How::Harmless,
        why,
        lift: "",
    }
}

const fn rule(
    compose: &'static str,
    engine: &'static [&'static str],
    rule: &'static str,
    why: &'static str,
) -> Row {
    Row {
        compose,
        engine,
        how: How::Rule(rule),
        why,
        lift: "",
    }
}

const PRIVILEGE_LIFT: &str =
    "drop it; a box that must run it sets permit_privileged: true and the bundle carries allow_privileged";

const fn privilege(
    compose: &'static str,
    engine: &'static [&'static str],
    why: &'static str,
) -> Row {
    Row {
        compose,
        engine,
        how: How::Privilege,
        why,
        lift: PRIVILEGE_LIFT,
    }
}

const fn refused(
    compose: &'static str,
    engine: &'static [&'static str],
    why: &'static str,
    lift: &'static str,
) -> Row {
    Row {
        compose,
        engine,
        how: How::Refused,
        why,
        lift,
    }
}

const PRIV: &str = "privilege (POLICY.md §2)";
const BINDS: &str = "binds (POLICY.md §3)";
const NAMESPACES: &str = "namespaces (POLICY.md §2)";
const SHARED: &str = "the box's shared resources (POLICY.md §6)";
const FILES: &str = "files of the release (POLICY.md §3)";
const ENGINE: &str = "the engine guard (POLICY.md §2)";

/// Every key, compose's first (in compose-spec's order of kinds), then those only the engine
/// has.
pub const ROWS: &[Row] = &[
    // what runs
    rule(
        "image",
        &["Config.Image"],
        "images (POLICY.md §6)",
        "what to run; pinning judged",
    ),
    harmless(
        "command",
        &["Config.Cmd"],
        "the process inside the container",
    ),
    harmless(
        "entrypoint",
        &["Config.Entrypoint"],
        "the process inside the container",
    ),
    harmless(
        "environment",
        &["Config.Env"],
        "the container's own environment",
    ),
    rule(
        "env_file",
        &[],
        FILES,
        "compose reads it: a file of the bundle only",
    ),
    refused(
        "label_file",
        &[],
        "compose reads it from the host, outside the analysis",
        "write the labels under labels:",
    ),
    harmless(
        "healthcheck",
        &["Config.Healthcheck"],
        "runs inside the container",
    ),
    harmless(
        "working_dir",
        &["Config.WorkingDir"],
        "inside the container",
    ),
    harmless(
        "user",
        &["Config.User"],
        "a user inside the container's user namespace",
    ),
    harmless(
        "group_add",
        &["HostConfig.GroupAdd"],
        "groups inside the container",
    ),
    harmless("hostname", &["Config.Hostname"], "its own UTS namespace"),
    harmless(
        "domainname",
        &["Config.Domainname"],
        "its own UTS namespace",
    ),
    harmless(
        "init",
        &["HostConfig.Init"],
        "an init process inside the container",
    ),
    harmless(
        "stop_grace_period",
        &["Config.StopTimeout"],
        "its own shutdown",
    ),
    harmless("stop_signal", &["Config.StopSignal"], "its own shutdown"),
    harmless("stdin_open", &["Config.OpenStdin"], "stream plumbing"),
    harmless("tty", &["Config.Tty"], "stream plumbing"),
    harmless("attach", &[], "whether compose streams its logs"),
    harmless(
        "read_only",
        &["HostConfig.ReadonlyRootfs"],
        "less, not more",
    ),
    harmless("shm_size", &["HostConfig.ShmSize"], "its own /dev/shm"),
    harmless(
        "tmpfs",
        &["HostConfig.Tmpfs"],
        "memory inside the container",
    ),
    rule(
        "labels",
        &["Config.Labels"],
        ENGINE,
        "metadata; the project's label is the guard's",
    ),
    harmless("profiles", &[], "which services start"),
    harmless("depends_on", &[], "start order within the project"),
    harmless(
        "restart",
        &["HostConfig.RestartPolicy"],
        "its own lifecycle",
    ),
    harmless("scale", &[], "how many"),
    harmless("platform", &[], "which image variant to pull"),
    harmless(
        "pull_policy",
        &[],
        "when to pull; the engine guard runs only images this project pulled",
    ),
    harmless("pull_refresh_after", &[], "when to pull again"),
    harmless(
        "develop",
        &[],
        "read only by `compose watch`, which the agent never runs",
    ),
    refused(
        "post_start",
        &[],
        "a hook is an exec call, which the engine guard refuses (a privileged one is privilege)",
        "run it from the entrypoint or the command",
    ),
    refused(
        "pre_stop",
        &[],
        "a hook is an exec call, which the engine guard refuses (a privileged one is privilege)",
        "run it from the entrypoint or the command",
    ),
    rule(
        "build",
        &[],
        "the box never builds (POLICY.md §4)",
        "an image: is pulled, never built",
    ),
    rule("extends", &[], FILES, "within the file only"),
    // names, networks and ports the box shares
    rule(
        "container_name",
        &[],
        SHARED,
        "a name in no other project's namespace",
    ),
    rule(
        "ports",
        &["HostConfig.PortBindings"],
        SHARED,
        "no host port the box keeps",
    ),
    harmless(
        "expose",
        &["Config.ExposedPorts"],
        "metadata; publishing is ports",
    ),
    rule("networks", &[], SHARED, "the project's own networks only"),
    harmless(
        "links",
        &["HostConfig.Links"],
        "names of the project's own containers",
    ),
    refused(
        "external_links",
        &[],
        "names containers of other projects",
        "put the service in this project, or reach it by an address",
    ),
    harmless("dns", &["HostConfig.Dns"], "resolver inside the container"),
    harmless(
        "dns_search",
        &["HostConfig.DnsSearch"],
        "resolver inside the container",
    ),
    harmless(
        "dns_opt",
        &["HostConfig.DnsOptions"],
        "resolver inside the container",
    ),
    harmless(
        "extra_hosts",
        &["HostConfig.ExtraHosts"],
        "/etc/hosts inside the container",
    ),
    harmless("mac_address", &["Config.MacAddress"], "its own interface"),
    // mounts
    rule(
        "volumes",
        &["HostConfig.Binds", "HostConfig.Mounts", "Config.Volumes"],
        BINDS,
        "binds by the bind rule; named and anonymous volumes the project's own",
    ),
    rule(
        "volumes_from",
        &["HostConfig.VolumesFrom"],
        BINDS,
        "another container's mounts: the project's own only",
    ),
    rule("secrets", &[], FILES, "sources inside the release"),
    rule("configs", &[], FILES, "sources inside the release"),
    refused(
        "use_api_socket",
        &[],
        "hands the container the Docker socket",
        "drop it: a container that drives the engine owns the box",
    ),
    // namespaces and privilege
    rule(
        "network_mode",
        &["HostConfig.NetworkMode"],
        NAMESPACES,
        "host and other projects' containers refused",
    ),
    rule(
        "pid",
        &["HostConfig.PidMode"],
        NAMESPACES,
        "host and other projects' containers refused",
    ),
    rule(
        "ipc",
        &["HostConfig.IpcMode"],
        NAMESPACES,
        "host and other projects' containers refused",
    ),
    rule(
        "uts",
        &["HostConfig.UTSMode"],
        NAMESPACES,
        "the host's refused",
    ),
    rule(
        "userns_mode",
        &["HostConfig.UsernsMode"],
        NAMESPACES,
        "the host's refused",
    ),
    rule(
        "cgroup",
        &["HostConfig.CgroupnsMode"],
        NAMESPACES,
        "private only",
    ),
    rule(
        "privileged",
        &["HostConfig.Privileged"],
        PRIV,
        "refused unless the box permits",
    ),
    rule(
        "cap_add",
        &["HostConfig.CapAdd"],
        PRIV,
        "namespaced capabilities only",
    ),
    harmless("cap_drop", &["HostConfig.CapDrop"], "less, not more"),
    rule(
        "security_opt",
        &["HostConfig.SecurityOpt"],
        PRIV,
        "options that only take away",
    ),
    rule(
        "sysctls",
        &["HostConfig.Sysctls"],
        PRIV,
        "namespaced sysctls only",
    ),
    rule(
        "devices",
        &["HostConfig.Devices"],
        PRIV,
        "host devices: refused unless the box permits",
    ),
    rule(
        "device_cgroup_rules",
        &["HostConfig.DeviceCgroupRules"],
        PRIV,
        "host devices: refused unless the box permits",
    ),
    privilege("gpus", &["HostConfig.DeviceRequests"], "host devices"),
    privilege(
        "cgroup_parent",
        &["HostConfig.CgroupParent"],
        "a cgroup outside the engine's",
    ),
    privilege(
        "annotations",
        &["HostConfig.Annotations"],
        "read by OCI runtimes and hooks on the host",
    ),
    privilege(
        "storage_opt",
        &["HostConfig.StorageOpt"],
        "the storage driver's options",
    ),
    privilege(
        "oom_kill_disable",
        &["HostConfig.OomKillDisable"],
        "the OOM killer takes the box's other processes instead",
    ),
    privilege(
        "cpu_rt_period",
        &["HostConfig.CpuRealtimePeriod"],
        "real-time scheduling",
    ),
    privilege(
        "cpu_rt_runtime",
        &["HostConfig.CpuRealtimeRuntime"],
        "real-time scheduling",
    ),
    privilege(
        "runtime",
        &["HostConfig.Runtime"],
        "another OCI runtime than the engine's (`runc`, its default, passes both layers)",
    ),
    refused(
        "isolation",
        &["HostConfig.Isolation"],
        "Windows isolation (the guard passes `default`, which changes nothing)",
        "drop it (only `default` means anything on Linux)",
    ),
    refused("credential_spec", &[], "Windows credentials", "drop it"),
    refused(
        "provider",
        &[],
        "runs a provider plugin on the host",
        "run the service from an image",
    ),
    refused(
        "models",
        &[],
        "a model runner on the host",
        "run the model server from an image",
    ),
    // resources
    rule(
        "logging",
        &["HostConfig.LogConfig"],
        ENGINE,
        "local log drivers only",
    ),
    rule(
        "ulimits",
        &["HostConfig.Ulimits"],
        PRIV,
        "rtprio, nice and memlock above the defaults are privilege",
    ),
    rule(
        "mem_limit",
        &["HostConfig.Memory"],
        "ceilings (POLICY.md §6)",
        "under the box's container_limits",
    ),
    harmless(
        "mem_reservation",
        &["HostConfig.MemoryReservation"],
        "resource limit",
    ),
    harmless(
        "memswap_limit",
        &["HostConfig.MemorySwap"],
        "resource limit",
    ),
    harmless(
        "mem_swappiness",
        &["HostConfig.MemorySwappiness"],
        "resource limit",
    ),
    harmless("cpus", &["HostConfig.NanoCpus"], "resource limit"),
    harmless(
        "cpu_count",
        &["HostConfig.CpuCount"],
        "resource limit (Windows)",
    ),
    harmless(
        "cpu_percent",
        &["HostConfig.CpuPercent"],
        "resource limit (Windows)",
    ),
    harmless("cpu_shares", &["HostConfig.CpuShares"], "resource limit"),
    harmless("cpu_quota", &["HostConfig.CpuQuota"], "resource limit"),
    harmless("cpu_period", &["HostConfig.CpuPeriod"], "resource limit"),
    harmless("cpuset", &["HostConfig.CpusetCpus"], "resource limit"),
    rule(
        "pids_limit",
        &["HostConfig.PidsLimit"],
        "ceilings (POLICY.md §6)",
        "under the box's container_limits",
    ),
    harmless(
        "blkio_config",
        &[
            "HostConfig.BlkioWeight",
            "HostConfig.BlkioWeightDevice",
            "HostConfig.BlkioDeviceReadBps",
            "HostConfig.BlkioDeviceWriteBps",
            "HostConfig.BlkioDeviceReadIOps",
            "HostConfig.BlkioDeviceWriteIOps",
        ],
        "resource limit",
    ),
    rule(
        "oom_score_adj",
        &["HostConfig.OomScoreAdj"],
        PRIV,
        "a negative score makes the OOM killer pick the box's other processes",
    ),
    rule(
        "deploy",
        &[],
        "ceilings (POLICY.md §6)",
        "resources and restart policy; devices refused",
    ),
    // only the engine's
    harmless(
        "",
        &[
            "Config.AttachStdin",
            "Config.AttachStdout",
            "Config.AttachStderr",
            "Config.StdinOnce",
        ],
        "stream plumbing",
    ),
    harmless("", &["Config.ArgsEscaped"], "Windows quoting flag"),
    harmless("", &["Config.NetworkDisabled"], "less, not more"),
    harmless("", &["Config.OnBuild", "Config.Shell"], "image metadata"),
    harmless(
        "",
        &["HostConfig.AutoRemove"],
        "the container's own lifecycle",
    ),
    harmless("", &["HostConfig.ConsoleSize"], "terminal size"),
    harmless("", &["HostConfig.PublishAllPorts"], "publishing ports"),
    harmless("", &["HostConfig.CpusetMems"], "resource limit"),
    harmless(
        "",
        &["HostConfig.KernelMemory", "HostConfig.KernelMemoryTCP"],
        "deprecated resource limit",
    ),
    harmless(
        "",
        &["HostConfig.IOMaximumIOps", "HostConfig.IOMaximumBandwidth"],
        "resource limit (Windows)",
    ),
    rule(
        "",
        &["HostConfig.MaskedPaths", "HostConfig.ReadonlyPaths"],
        PRIV,
        "unmasking /proc and /sys is privilege",
    ),
    privilege("", &["HostConfig.Cgroup"], "another container's cgroup"),
    refused(
        "",
        &["HostConfig.ContainerIDFile"],
        "a file the CLI writes on the host",
        "",
    ),
    refused(
        "",
        &["HostConfig.VolumeDriver"],
        "a volume plugin for every volume",
        "",
    ),
];

/// Values of a privilege row that change nothing (the engine's own default), passed by both
/// layers: `(compose key, value)`.
pub const ENGINE_DEFAULTS: &[(&str, &str)] = &[("runtime", "runc")];

/// The row of a compose service key.
pub fn compose_row(key: &str) -> Option<&'static Row> {
    ROWS.iter()
        .find(|r| !r.compose.is_empty() && r.compose == key)
}

/// The row of a create body key: `section` is `Config` (the body's top level) or `HostConfig`.
pub fn engine_row(section: &str, key: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| {
        r.engine
            .iter()
            .any(|e| e.split_once('.') == Some((section, key)))
    })
}

/// A create body key the guard passes by name, before any rule: a `HostConfig` key whose every
/// value is harmless; a `Config` key whose row allows it (`Config` has no per-key rule: the
/// container rules judge the whole create).
pub fn engine_passes_by_name(section: &str, key: &str) -> bool {
    match engine_row(section, key).map(|r| r.how) {
        Some(How::Harmless) => true,
        Some(How::Rule(_)) => section == "Config",
        _ => false,
    }
}

/// POLICY.md's key table, as the table says it (a test compares the document with it).
pub fn policy_table() -> String {
    let mut s = String::from("| compose key | engine key(s) | judged | why |\n|---|---|---|---|\n");
    for r in ROWS {
        let compose = if r.compose.is_empty() {
            "—".to_string()
        } else {
            format!("`{}`", r.compose)
        };
        let engine = if r.engine.is_empty() {
            "—".to_string()
        } else {
            r.engine
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let how = match r.how {
            How::Harmless => "allowed".to_string(),
            How::Rule(n) => format!("by {n}"),
            How::Privilege => "privilege (PRIVILEGED_REFUSED)".to_string(),
            How::Refused => "refused".to_string(),
        };
        let why = if r.lift.is_empty() || r.how == How::Privilege {
            r.why.to_string()
        } else {
            format!("{}; lift: {}", r.why, r.lift)
        };
        s.push_str(&format!("| {compose} | {engine} | {how} | {why} |\n"));
    }
    s
}

#[cfg(test)]
mod agree_rows;
#[cfg(test)]
mod census;

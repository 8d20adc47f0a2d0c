//! The policy's value rules, shared by both layers: the container rules
//! (`boundary::container`, over a compose service or a create body) and the object-name and
//! image rules of the file passes and the engine guard call these same functions, so a shape
//! one layer refuses the other refuses too (docs/POLICY.md, "one rule set"). Each rule judges
//! one value.

/// Capabilities that stay inside the container's namespaces: Docker's default set. `IPC_LOCK`,
/// `SYS_NICE` and `SYS_RESOURCE` are not here: memory locking, real-time and nice priorities,
/// and raised resource limits are shared by everything on the box (privilege).
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
];

/// A capability as written (`cap_net_raw`, `CAP_NET_RAW`, `NET_RAW`), in Docker's spelling.
pub fn cap_name(c: &str) -> String {
    let u = c.trim().to_ascii_uppercase();
    u.strip_prefix("CAP_").unwrap_or(&u).to_string()
}

pub fn cap_allowed(c: &str) -> bool {
    SAFE_CAPS.contains(&cap_name(c).as_str())
}

/// Security options that only take away: `no-new-privileges`, Docker's default AppArmor
/// profile, an SELinux level. Any other (a seccomp or AppArmor profile of the bundle's,
/// `unconfined`, `systempaths=unconfined`, `label=disable`, an SELinux type) can loosen it.
pub fn security_opt_allowed(o: &str) -> bool {
    let l = o.trim().to_ascii_lowercase().replace('=', ":");
    matches!(
        l.as_str(),
        "no-new-privileges" | "no-new-privileges:true" | "apparmor:docker-default"
    ) || l.strip_prefix("label:level:").is_some_and(|lvl| {
        lvl.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".:,-".contains(&b))
    })
}

/// Namespaced sysctls only: they change the container's own namespaces.
pub fn sysctl_allowed(name: &str) -> bool {
    let name = name.trim();
    name.starts_with("net.")
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
        .contains(&name)
}

/// A negative OOM score makes the kernel kill something else on the box first (the agent,
/// dockerd, another app).
pub fn oom_score_adj_allowed(v: i64) -> bool {
    v >= 0
}

/// The highest `memlock` a container may set without privilege: the kernel's default (8 MiB
/// since Linux 5.16), which is what dockerd passes on.
/// Log drivers that write on the box itself (a driver that ships logs elsewhere reaches a host
/// daemon or the network from the engine, outside the container's own egress).
pub const LOG_DRIVERS: &[&str] = &["json-file", "local", "journald", "none"];

pub const MEMLOCK_MAX: i64 = 8 << 20;

/// Ulimits that raise a share of the box: real-time priority, nice priority, locked memory.
/// Others (`nofile`, `nproc`, `core`, …) stay inside the container's own accounting.
pub fn ulimit_allowed(name: &str, soft: i64, hard: i64) -> bool {
    let max = soft.max(hard);
    !match name.trim().to_ascii_lowercase().as_str() {
        "rtprio" | "nice" => soft != 0 || hard != 0,
        "memlock" => soft < 0 || hard < 0 || max > MEMLOCK_MAX,
        _ => false,
    }
}

/// A host port range as compose and the engine write it (`8080`, `8000-8010`); `None` for
/// something that is not one (an empty host port means "any free port", judged harmless).
pub fn port_range(s: &str) -> Option<(u16, u16)> {
    let s = s.trim();
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let (a, b) = (a.trim().parse::<u16>().ok()?, b.trim().parse::<u16>().ok()?);
    Some((a.min(b), a.max(b)))
}

/// The first reserved port inside `range`.
pub fn reserved_in(range: (u16, u16), reserved: &[u16]) -> Option<u16> {
    let mut hit: Vec<u16> = reserved
        .iter()
        .copied()
        .filter(|p| *p >= range.0 && *p <= range.1)
        .collect();
    hit.sort_unstable();
    hit.first().copied()
}

use crate::{BoxFacts, Refusal, RefusalCode};

pub const PORT_CODE: RefusalCode = RefusalCode::PortRefused;
pub const NAME_CODE: RefusalCode = RefusalCode::NameRefused;
pub const IMAGE_CODE: RefusalCode = RefusalCode::ImageRefused;
pub const LIMIT_CODE: RefusalCode = RefusalCode::LimitRefused;

/// An image reference that names its bytes: `name[:tag]@sha256:<64 lowercase hex>`. A tag
/// alone names whatever the registry says today.
pub fn image_pinned(image: &str) -> bool {
    let Some((name, digest)) = image.rsplit_once('@') else {
        return false;
    };
    let Some(hex) = digest.strip_prefix("sha256:") else {
        return false;
    };
    !name.is_empty()
        && !name.contains('$')
        && hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `IMAGE_REFUSED: <who> <image> (not pinned by digest)` where the box requires digests: the
/// one rule the file passes and the engine guard (creates and pulls) both call.
pub fn image_digest_refusal(facts: &BoxFacts, who: &str, image: &str) -> Result<(), Refusal> {
    if !facts.require_image_digests || image_pinned(image) {
        return Ok(());
    }
    Err(Refusal::new(
        IMAGE_CODE,
        format!(
            "{who} {} (not pinned by digest)",
            if image.is_empty() {
                "(no image)"
            } else {
                image
            }
        ),
    ))
}

/// A published host port: `PORT_REFUSED: <service> <ip:port> (reserved by the box)` when the
/// box reserves one in `range`.
pub fn port_refusal(
    who: &str,
    host_ip: &str,
    range: (u16, u16),
    reserved: &[u16],
) -> Result<(), Refusal> {
    let Some(p) = reserved_in(range, reserved) else {
        return Ok(());
    };
    let ip = match host_ip.trim() {
        "" => "0.0.0.0",
        ip => ip,
    };
    let addr = if ip.contains(':') {
        format!("[{}]:{p}", ip.trim_matches(['[', ']']))
    } else {
        format!("{ip}:{p}")
    };
    Err(Refusal::new(
        PORT_CODE,
        format!("{who} {addr} (reserved by the box)"),
    ))
}

/// The lexical namespace `<project>_…` / `<project>-…`. Not prefix-free on its own
/// (`monky-shop-eu_data` is inside `monky-shop-…` too): the rules below narrow it.
pub fn name_in_namespace(name: &str, project: &str) -> bool {
    let n = name.trim().trim_start_matches('/');
    !project.is_empty()
        && n.len() > project.len() + 1
        && n.starts_with(project)
        && matches!(n.as_bytes()[project.len()], b'_' | b'-')
}

/// A volume's or network's name: `<project>_<rest>`, as compose names them. Project names hold
/// no `_` (env ids are `[a-z0-9-]`), so no other project's namespace can contain it.
pub fn object_name_ok(name: &str, project: &str) -> bool {
    let n = name.trim().trim_start_matches('/');
    !project.is_empty() && n.len() > project.len() + 1 && n.starts_with(&format!("{project}_"))
}

/// A container's name: compose's own for its service — `<project>-<service>[-<n>]` (v2+),
/// `<project>_<service>[_<n>]` (v1), or with compose's `<12 hex>_` prefix while it recreates.
/// Anything else (`container_name: monky-shop-eu-web` in project `monky-shop`) could be
/// another project's container.
pub fn container_name_ok(name: &str, project: &str, service: &str) -> bool {
    let n = name.trim().trim_start_matches('/');
    let n = match n.split_once('_') {
        Some((id, rest)) if id.len() == 12 && id.bytes().all(|b| b.is_ascii_hexdigit()) => rest,
        _ => n,
    };
    if project.is_empty() || service.is_empty() {
        return false;
    }
    [
        ('-', format!("{project}-{service}")),
        ('_', format!("{project}_{service}")),
    ]
    .iter()
    .any(|(sep, base)| match n.strip_prefix(base.as_str()) {
        Some("") => true,
        Some(rest) => rest
            .strip_prefix(*sep)
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())),
        None => false,
    })
}

/// The namespace the box keeps for its projects: every project tenancy renders is
/// `monky-<env>`, and an instance added to the box later takes one, so no free-standing
/// container name may start with it.
pub const BOX_NAMESPACE: &str = "monky";

/// A container name as the engine takes it: `[a-zA-Z0-9][a-zA-Z0-9_.-]+`.
pub fn engine_container_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(c))
}

/// Why a `container_name` that is not compose's own for its service ([`container_name_ok`]) is
/// not this project's to take, or `None`: a **free-standing** name (issue 41, POLICY.md §6) —
/// one the engine takes, in no project's namespace the box knows: not this project's
/// (`<project>-…` is compose's name for another of its services, or a longer project's), not the
/// box's own (`monky-…`, [`BOX_NAMESPACE`]), not another instance's project on the box
/// (`foreign`). The engine guard also refuses one held by a container that is not this
/// service's, or inside the namespace of any project with objects on the box.
pub fn container_name_taken(name: &str, project: &str, foreign: &[String]) -> Option<String> {
    let n = name.trim().trim_start_matches('/');
    let n = match n.split_once('_') {
        Some((id, rest)) if id.len() == 12 && id.bytes().all(|b| b.is_ascii_hexdigit()) => rest,
        _ => n,
    };
    if !engine_container_name(n) {
        return Some("not a container name the engine takes".into());
    }
    if name_in_namespace(n, project) || n == project {
        return Some(String::new());
    }
    if name_in_namespace(n, BOX_NAMESPACE) || n == BOX_NAMESPACE {
        return Some(String::new());
    }
    foreign
        .iter()
        .find(|q| name_in_namespace(n, q) || n == q.as_str())
        .map(|q| format!("project {q} of another instance on this box owns that prefix"))
}

/// `NAME_REFUSED: <volume|network|container> <name> (outside project <project>)` (PROTOCOL
/// 0.4).
pub fn name_refused(kind: &str, name: &str, project: &str) -> Refusal {
    let name = name.trim().trim_start_matches('/');
    Refusal::new(
        NAME_CODE,
        format!("{kind} {name} (outside project {project})"),
    )
}

/// Box ceilings every container must declare and stay under (`container_limits`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    pub memory: Option<u64>,
    pub pids: Option<u64>,
}

impl Limits {
    /// `LIMIT_REFUSED` when a container's memory limit (bytes, 0 = none) or pids limit (0 or
    /// negative = none) is missing or above the box's ceiling.
    pub fn refusal(&self, who: &str, memory: u64, pids: i64) -> Result<(), Refusal> {
        let refuse = |d: String| Err(Refusal::new(LIMIT_CODE, d));
        if let Some(max) = self.memory {
            if memory == 0 {
                return refuse(format!(
                    "{who} memory unset (the box requires at most {max} bytes)"
                ));
            }
            if memory > max {
                return refuse(format!(
                    "{who} memory {memory} bytes (the box allows at most {max})"
                ));
            }
        }
        if let Some(max) = self.pids {
            if pids <= 0 {
                return refuse(format!("{who} pids unset (the box requires at most {max})"));
            }
            if pids as u64 > max {
                return refuse(format!("{who} pids {pids} (the box allows at most {max})"));
            }
        }
        Ok(())
    }
}

/// A byte size as compose and Docker write it: `134217728`, `128m`, `1.5g`, `512MiB`, `64M`
/// (binary units, as compose reads them).
pub fn parse_bytes(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mul: u64 = match unit.trim().trim_end_matches("ib").trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    let v = n * mul as f64;
    (v.is_finite() && v >= 0.0 && v < u64::MAX as f64).then_some(v as u64)
}

#[cfg(test)]
mod tests;

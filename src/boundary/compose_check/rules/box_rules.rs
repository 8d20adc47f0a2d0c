//! The file passes' rules over what the whole box shares: namespaced sysctls, OOM score and
//! ulimits, published host ports, object names and the box's ceilings. Each judges with the
//! same function the engine guard does (`policy::rules`).

use serde_yaml_ng::Value;

use super::super::yaml::{as_str, get, seq_strings, untag};
use super::{refuse, shared, Ctx, R};
use crate::boundary::bundle::Refusal;
use crate::boundary::policy::netpool::{self, NETWORK_CODE};

/// A mapping or a `name=value` list; namespaced sysctls only, as the engine guard.
pub(super) fn sysctls(_: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    let names: Vec<String> = match untag(v) {
        Value::Mapping(m) => m.keys().filter_map(as_str).collect(),
        other => seq_strings(other)
            .into_iter()
            .map(|x| x.split('=').next().unwrap_or_default().to_string())
            .collect(),
    };
    match names.iter().find(|n| !shared::sysctl_allowed(n)) {
        Some(n) => refuse(format!("service {svc} sets sysctl {n}")),
        None => Ok(()),
    }
}

/// A number as YAML or compose's normalised output writes it; `None` for an interpolation,
/// which the second pass sees resolved.
fn int(v: &Value) -> Option<i64> {
    as_str(v).and_then(|s| s.trim().parse().ok())
}

pub(super) fn oom_score_adj(_: &Ctx, svc: &str, key: &str, v: &Value) -> R {
    match int(v) {
        Some(n) if !shared::oom_score_adj_allowed(n) => {
            refuse(format!("service {svc} sets {key} {n}"))
        }
        _ => Ok(()),
    }
}

/// `{nofile: 1024}` or `{nofile: {soft: 1024, hard: 2048}}`.
pub(super) fn ulimits(_: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    let Value::Mapping(m) = untag(v) else {
        return Ok(());
    };
    for (k, l) in m {
        let name = as_str(k).unwrap_or_default();
        let (soft, hard) = match untag(l) {
            Value::Mapping(sh) => (
                get(sh, "soft").and_then(int).unwrap_or(0),
                get(sh, "hard").and_then(int).unwrap_or(0),
            ),
            other => {
                let n = int(other).unwrap_or(0);
                (n, n)
            }
        };
        if let Some(why) = shared::ulimit_refusal(&name, soft, hard) {
            return refuse(format!("service {svc} sets ulimits {why}"));
        }
    }
    Ok(())
}

/// Published host ports, short (`[IP:]HOST[-HOST]:CONTAINER[/proto]`, `[::1]:80:80`) or long
/// (`published`, `host_ip`) syntax: none the box reserves (`PORT_REFUSED`).
pub(super) fn ports(ctx: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    let Some(n) = ctx.normalised else {
        return Ok(());
    };
    let Value::Sequence(items) = untag(v) else {
        return Ok(());
    };
    for item in items {
        let (ip, host) = match untag(item) {
            Value::Mapping(m) => (
                get(m, "host_ip").and_then(as_str).unwrap_or_default(),
                get(m, "published").and_then(as_str).unwrap_or_default(),
            ),
            other => match as_str(other) {
                Some(s) => short_port(&s),
                None => continue,
            },
        };
        let Some(range) = shared::port_range(&host) else {
            continue;
        };
        if let Some(why) = shared::port_refusal(svc, &ip, range, &n.reserved_ports) {
            return Err(Refusal::new(shared::PORT_CODE, why));
        }
    }
    Ok(())
}

/// `(host ip, host port range)` of a short port entry; no host part means any free port.
fn short_port(s: &str) -> (String, String) {
    let s = s.split('/').next().unwrap_or_default().trim();
    // an IPv6 host address is bracketed: `[::1]:8080:80`
    let (ip, rest) = match s.strip_prefix('[').and_then(|r| r.split_once(']')) {
        Some((ip, rest)) => (ip.to_string(), rest.trim_start_matches(':')),
        None => (String::new(), s),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    match (ip.is_empty(), parts.as_slice()) {
        (true, [ip, host, _]) => (ip.to_string(), host.to_string()),
        (_, [host, _]) => (ip, host.to_string()),
        _ => (ip, String::new()),
    }
}

pub(super) fn container_name(ctx: &Ctx, svc: &str, _: &str, v: &Value) -> R {
    match as_str(v) {
        Some(n) => ctx.name("container", &n, Some(svc)),
        None => Ok(()),
    }
}

/// Top-level volumes and networks with a `name:` (external ones included: another project's
/// objects are never joined).
pub(super) fn object_names(ctx: &Ctx, key: &str, v: &Value) -> R {
    let Value::Mapping(m) = v else {
        return Ok(());
    };
    let kind = key.trim_end_matches('s');
    for v in m.values() {
        if let Value::Mapping(o) = untag(v) {
            if let Some(name) = get(o, "name").and_then(as_str) {
                ctx.name(kind, &name, None)?;
            }
        }
    }
    Ok(())
}

/// The box's `container_limits` over one service: `mem_limit` / `deploy.resources.limits.memory`
/// and `pids_limit` / `deploy.resources.limits.pids` set and under the ceilings.
pub(in crate::boundary::compose_check) fn limits(
    ctx: &Ctx,
    svc: &str,
    s: &serde_yaml_ng::Mapping,
) -> R {
    let Some(n) = ctx.normalised else {
        return Ok(());
    };
    if n.limits == shared::Limits::default() {
        return Ok(());
    }
    let deploy = get(s, "deploy")
        .and_then(|d| match d {
            Value::Mapping(d) => get(d, "resources"),
            _ => None,
        })
        .and_then(|r| match r {
            Value::Mapping(r) => get(r, "limits"),
            _ => None,
        });
    let from_deploy = |k: &str| match deploy {
        Some(Value::Mapping(l)) => get(l, k).and_then(as_str),
        _ => None,
    };
    let memory = get(s, "mem_limit")
        .and_then(as_str)
        .or_else(|| from_deploy("memory"))
        .and_then(|m| shared::parse_bytes(&m))
        .unwrap_or(0);
    let pids = get(s, "pids_limit")
        .and_then(int)
        .or_else(|| from_deploy("pids").and_then(|p| p.trim().parse().ok()))
        .unwrap_or(0);
    match n.limits.refusal(svc, memory, pids) {
        Some(why) => Err(Refusal::new(shared::LIMIT_CODE, why)),
        None => Ok(()),
    }
}

/// A value the second pass sees interpolated (`${SUBNET}`): judged there, not here.
fn interpolated(s: &str) -> bool {
    s.contains('$')
}

/// Top-level networks' `ipam`: the engine's own IPAM driver; every `subnet` from the box's
/// pools and clear of what the box routes and dials; `ip_range`, `gateway`, `aux_addresses`
/// inside their entry's subnet (`NETWORK_REFUSED`, the guard's rule). Records each network's
/// subnets for the services' static addresses.
pub(super) fn network_subnets(ctx: &mut Ctx, _: &str, v: &Value) -> R {
    let Some(space) = ctx.normalised.and_then(|n| n.net.as_ref()) else {
        return Ok(());
    };
    let Value::Mapping(nets) = v else {
        return Ok(());
    };
    let refuse = |why: String| Err(Refusal::new(NETWORK_CODE, why));
    for (k, nv) in nets {
        let Some(key) = as_str(k) else { continue };
        let Value::Mapping(nm) = untag(nv) else {
            continue;
        };
        let name = get(nm, "name")
            .and_then(as_str)
            .unwrap_or_else(|| key.clone());
        // an external network is not created here: its subnet is the engine's to report
        if get(nm, "external").is_some_and(|e| !matches!(untag(e), Value::Bool(false))) {
            ctx.subnets.push((key, None));
            continue;
        }
        let mut subnets = Vec::new();
        if let Some(Value::Mapping(ipam)) = get(nm, "ipam").map(untag) {
            // what the second pass sees interpolated is judged there, not here
            let driver = get(ipam, "driver").and_then(as_str).unwrap_or_default();
            let driver = if interpolated(&driver) { "" } else { &driver };
            let configs = match get(ipam, "config").map(untag) {
                Some(Value::Sequence(c)) => c.as_slice(),
                _ => &[],
            };
            let mut entries = Vec::new();
            for c in configs {
                let Value::Mapping(c) = untag(c) else {
                    continue;
                };
                let subnet = get(c, "subnet").and_then(as_str).unwrap_or_default();
                subnets.push(subnet.clone());
                if interpolated(&subnet) {
                    continue;
                }
                let mut addrs: Vec<String> = ["ip_range", "gateway"]
                    .iter()
                    .filter_map(|k| get(c, k).and_then(as_str))
                    .collect();
                if let Some(Value::Mapping(aux)) = get(c, "aux_addresses").map(untag) {
                    addrs.extend(aux.values().filter_map(as_str));
                }
                addrs.retain(|a| !a.is_empty() && !interpolated(a));
                entries.push(netpool::IpamEntry { subnet, addrs });
            }
            subnets.retain(|s| !s.is_empty());
            if let Some(why) = netpool::ipam_refusal(&name, driver, &entries, space) {
                return refuse(why);
            }
        }
        let known = !subnets.iter().any(|s| interpolated(s));
        ctx.subnets.push((key, known.then_some(subnets)));
    }
    Ok(())
}

/// A service's static addresses on a network (`ipv4_address`, `ipv6_address`,
/// `link_local_ips`): inside that network's own subnet, as the guard judges `IPAMConfig`.
pub(super) fn static_addresses(ctx: &Ctx, svc: &str, v: &Value) -> R {
    if ctx.normalised.and_then(|n| n.net.as_ref()).is_none() {
        return Ok(());
    }
    let Value::Mapping(nets) = untag(v) else {
        return Ok(());
    };
    for (k, nv) in nets {
        let (Some(key), Value::Mapping(m)) = (as_str(k), untag(nv)) else {
            continue;
        };
        let subnets = match ctx.subnets.iter().find(|(n, _)| *n == key) {
            Some((_, None)) => continue,
            Some((_, Some(s))) => s.clone(),
            None => Vec::new(),
        };
        let mut addrs: Vec<String> = ["ipv4_address", "ipv6_address"]
            .iter()
            .filter_map(|k| get(m, k).and_then(as_str))
            .collect();
        if let Some(l) = get(m, "link_local_ips") {
            addrs.extend(seq_strings(l));
        }
        for a in addrs.iter().filter(|a| !a.is_empty() && !interpolated(a)) {
            if let Some(why) = netpool::address_refusal(&key, a, &subnets) {
                return Err(Refusal::new(NETWORK_CODE, format!("service {svc}: {why}")));
            }
        }
    }
    Ok(())
}

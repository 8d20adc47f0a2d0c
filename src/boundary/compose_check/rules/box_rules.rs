//! The file passes' rules over what the whole box shares that only the file shows together:
//! top-level volumes' and networks' names, each network's addressing, and a service's static
//! addresses on them. Each judges with the function the engine guard calls (`policy::rules`,
//! `policy::netpool`); a service's own ports, name and ceilings are the container rules.

use serde_yaml_ng::Value;

use super::super::yaml::{as_str, get, seq_strings, untag};
use super::Ctx;
use crate::policy::netpool;

/// Top-level volumes and networks with a `name:` (external ones included: another project's
/// objects are never joined).
pub(super) fn object_names(ctx: &Ctx, key: &str, v: &Value) {
    let Value::Mapping(m) = v else {
        return;
    };
    let kind = key.trim_end_matches('s');
    for (k, v) in m {
        if let Value::Mapping(o) = untag(v) {
            if let Some(name) = get(o, "name").and_then(as_str) {
                let who = format!("{kind} {}", as_str(k).unwrap_or_default());
                ctx.refuse_at(&who, "name", ctx.name(kind, &name));
            }
        }
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
pub(super) fn network_subnets(ctx: &mut Ctx, _: &str, v: &Value) {
    let Some(space) = ctx.facts.and_then(|n| n.net.as_ref()) else {
        return;
    };
    let Value::Mapping(nets) = v else {
        return;
    };
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
            let who = format!("network {key}");
            ctx.refuse_at(
                &who,
                "ipam",
                netpool::ipam_refusal(&name, driver, &entries, space),
            );
        }
        let known = !subnets.iter().any(|s| interpolated(s));
        ctx.subnets.push((key, known.then_some(subnets)));
    }
}

/// A service's static addresses on a network (`ipv4_address`, `ipv6_address`,
/// `link_local_ips`): inside that network's own subnet, as the guard judges `IPAMConfig`.
pub(super) fn static_addresses(ctx: &Ctx, svc: &str, v: &Value) {
    if ctx.facts.and_then(|n| n.net.as_ref()).is_none() {
        return;
    }
    let Value::Mapping(nets) = untag(v) else {
        return;
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
            let r = netpool::address_refusal(&key, a, &subnets)
                .map_err(|r| r.within(format!("service {svc}")));
            ctx.refuse_at(svc, "networks", r);
        }
    }
}

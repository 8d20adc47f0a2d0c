//! The box's address space (docs/POLICY.md §6): the one place that decides whether a network's
//! subnet or a container's static address may be used, for the file passes and the engine guard
//! alike. A bundle's subnet must lie inside one of the box's `network_pools` and overlap nothing
//! the box already routes or dials; addresses set inside a network (gateway, IP range, auxiliary
//! and static container addresses) must lie inside that network's own subnet.

use std::net::IpAddr;

use crate::{Refusal, RefusalCode};
use monky_base::cidr::Cidr;

/// The refusal code of every network rule.
pub const NETWORK_CODE: RefusalCode = RefusalCode::NetworkRefused;

fn refused(detail: String) -> Result<(), Refusal> {
    Err(Refusal::new(NETWORK_CODE, detail))
}

/// Docker's built-in default address pools (`/info` does not expose them): 172.17–31.x/16 and
/// 192.168.0.0/16. Used when the box's config sets no `network_pools`.
pub fn engine_default_pools() -> Vec<String> {
    let mut v: Vec<String> = (17..=31).map(|b| format!("172.{b}.0.0/16")).collect();
    v.push("192.168.0.0/16".into());
    v
}

/// What the box keeps for itself, fixed for one check: the pools bundle networks take subnets
/// from, and what no subnet may overlap (each with why: a host route, an address the agent
/// dials, the metadata range).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressSpace {
    pub pools: Vec<Cidr>,
    pub taken: Vec<(Cidr, String)>,
}

/// The link-local range, where cloud metadata services answer (169.254.169.254).
pub const LINK_LOCAL: &str = "169.254.0.0/16";

impl AddressSpace {
    /// `pools` as the config writes them (validated there; an unparsable one is dropped, which
    /// only narrows), with the metadata range always taken.
    pub fn new(pools: &[String]) -> AddressSpace {
        let mut s = AddressSpace {
            pools: pools.iter().filter_map(|p| Cidr::parse(p)).collect(),
            taken: Vec::new(),
        };
        if let Some(c) = Cidr::parse(LINK_LOCAL) {
            s.take(c, "the link-local metadata range");
        }
        s
    }

    pub fn take(&mut self, c: Cidr, why: impl Into<String>) {
        self.taken.push((c, why.into()));
    }

    /// Whether `subnet` (a network's `Subnet`) may be used: `NETWORK_REFUSED: <network>
    /// <subnet> (<reason>)` when not.
    pub fn subnet_refusal(&self, network: &str, subnet: &str) -> Result<(), Refusal> {
        let why = match Cidr::parse(subnet) {
            None => "not an address prefix".to_string(),
            Some(c) => match self.subnet_why(&c) {
                Some(why) => why,
                None => return Ok(()),
            },
        };
        refused(format!("{network} {} ({why})", subnet.trim()))
    }

    fn subnet_why(&self, c: &Cidr) -> Option<String> {
        if !self.pools.iter().any(|p| p.is_v6() == c.is_v6()) {
            let fam = if c.is_v6() { "IPv6" } else { "IPv4" };
            return Some(format!("no {fam} pool in the box's network_pools"));
        }
        if !self.pools.iter().any(|p| p.contains(c)) {
            return Some("outside the box's network_pools".into());
        }
        // the most specific prefix in the way names what the subnet would take (the proxy's
        // /32, not the /24 route it is reached by); the first listed of equals
        self.taken
            .iter()
            .rev()
            .filter(|(t, _)| t.overlaps(c))
            .max_by_key(|(t, _)| t.prefix_len())
            .map(|(t, why)| format!("overlaps {t}, {why}"))
    }
}

/// Why an address set inside a network (gateway, IP range, auxiliary or static container
/// address) may not be used: it must lie inside one of the network's own `subnets`, each of
/// which was judged by [`AddressSpace::subnet_refusal`] (`NETWORK_REFUSED` when not).
pub fn address_refusal(network: &str, addr: &str, subnets: &[String]) -> Result<(), Refusal> {
    let why = match Cidr::parse(addr) {
        None => "not an address",
        Some(a) => {
            let own: Vec<Cidr> = subnets.iter().filter_map(|s| Cidr::parse(s)).collect();
            if own.iter().any(|s| s.contains(&a)) {
                return Ok(());
            }
            if own.is_empty() {
                "the network sets no subnet of its own"
            } else {
                "outside the network's own subnet"
            }
        }
    };
    refused(format!("{network} {} ({why})", addr.trim()))
}

/// One entry of a network's IPAM config: its subnet ("" = the engine picks one) and the
/// addresses set inside it (IP range, gateway, auxiliary addresses).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IpamEntry {
    pub subnet: String,
    pub addrs: Vec<String>,
}

/// The IPAM rule, the one both layers call (`NETWORK_REFUSED`): the engine's own IPAM driver;
/// every subnet from the box's pools and clear of what the box routes and dials; every address
/// of an entry inside that entry's subnet.
pub fn ipam_refusal(
    network: &str,
    driver: &str,
    entries: &[IpamEntry],
    space: &AddressSpace,
) -> Result<(), Refusal> {
    if !["", "default"].contains(&driver) {
        return refused(format!(
            "{network} IPAM driver {driver} (only the engine's own)"
        ));
    }
    for e in entries {
        let own: Vec<String> = if e.subnet.is_empty() {
            Vec::new()
        } else {
            space.subnet_refusal(network, &e.subnet)?;
            vec![e.subnet.clone()]
        };
        for a in &e.addrs {
            address_refusal(network, a, &own)?;
        }
    }
    Ok(())
}

/// The host's routes (main table, IPv4 and IPv6) with their interface, from `/proc/net/route`
/// and `/proc/net/ipv6_route` texts. Default routes (/0) are left out: they cover every address
/// and say nothing about who owns one.
pub fn parse_routes(v4: &str, v6: &str) -> Vec<(Cidr, String)> {
    let mut out = Vec::new();
    for l in v4.lines().skip(1) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 8 {
            continue;
        }
        let (Ok(dst), Ok(mask)) = (u32::from_str_radix(f[1], 16), u32::from_str_radix(f[7], 16))
        else {
            continue;
        };
        // the kernel prints the network-order word as a native integer
        let (dst, mask) = (u32::from_be(dst), u32::from_be(mask));
        let len = mask.count_ones() as u8;
        if len == 0 {
            continue;
        }
        out.push((Cidr::from_bits(false, dst as u128, len), f[0].to_string()));
    }
    for l in v6.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 10 {
            continue;
        }
        let (Ok(dst), Ok(len)) = (u128::from_str_radix(f[0], 16), u8::from_str_radix(f[1], 16))
        else {
            continue;
        };
        if len == 0 || len > 128 {
            continue;
        }
        out.push((Cidr::from_bits(true, dst, len), f[9].to_string()));
    }
    out
}

/// The name servers of a resolv.conf text.
pub fn parse_resolv(text: &str) -> Vec<IpAddr> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("nameserver"))
                .then(|| w.next())
                .flatten()
                .and_then(|a| a.split('%').next()?.parse().ok())
        })
        .collect()
}

#[cfg(test)]
mod tests;

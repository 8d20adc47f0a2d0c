//! The box's address space for one apply (docs/POLICY.md §6): the configured `network_pools`,
//! and what the box already uses — its routes (except those of the project's own networks)
//! and their gateways, its name servers, and every endpoint any instance on the box dials
//! (`host::depends`, derived from the dialers' own values), the metadata range. The
//! rule itself is `policy::netpool`, shared by the file passes and the engine guard.

use std::net::IpAddr;
use std::time::Duration;

use super::*;
use monky_base::cidr::Cidr;
use monky_boundary::policy::netpool::{self, AddressSpace};

/// How long one host's name may take to resolve before it is left out (and said so).
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// Read fresh at every check: routes and resolved addresses change under a running agent.
    pub(super) async fn address_space(&self) -> AddressSpace {
        let mut s = AddressSpace::new(&self.cfg.network_pools);
        // the project's own networks' bridges: their routes are its own
        let own: Vec<String> = match self.engine.networks_raw(&self.cfg.compose_project).await {
            Ok(nets) => nets.iter().filter_map(bridge_name).collect(),
            Err(e) => {
                warn!("cannot list the project's networks ({e}): every host route counts");
                Vec::new()
            }
        };
        // /proc/self/net, not /proc/net: the units mount /proc with ProcSubset=pid, which hides
        // /proc/net (0.5.0's first cut read it there and, finding nothing, judged no route at
        // all). A table that cannot be read fails closed: every subnet of that family is taken.
        let v4 = std::fs::read_to_string("/proc/self/net/route");
        let v6 = match std::fs::read_to_string("/proc/self/net/ipv6_route") {
            // a kernel without IPv6 has no table and no IPv6 routes to take over
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && !std::path::Path::new("/proc/self/net/if_inet6").exists() =>
            {
                Ok(String::new())
            }
            other => other,
        };
        for (r, all) in [(&v4, "0.0.0.0/0"), (&v6, "::/0")] {
            if let (Err(e), Some(c)) = (r, Cidr::parse(all)) {
                warn!("cannot read the host's routes ({e}): no {all} subnet can be judged free");
                s.take(c, format!("the host's routes cannot be read: {e}"));
            }
        }
        let text = |r: &std::io::Result<String>| r.as_deref().unwrap_or_default().to_string();
        let routes = netpool::parse_routes(&text(&v4), &text(&v6));
        for (c, dev) in routes {
            if !own.contains(&dev) {
                s.take(c, format!("a route of the host via {dev}"));
            }
        }
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let host = monky_host::depends::host_net(
            &[
                ("/etc/resolv.conf", read("/etc/resolv.conf")),
                (
                    monky_host::depends::RESOLVED_UPSTREAM,
                    read(monky_host::depends::RESOLVED_UPSTREAM),
                ),
            ],
            &text(&v4),
            &text(&v6),
        );
        for d in host.resolvers.iter().chain(&host.gateways) {
            s.take(Cidr::host(d.value), d.from.clone());
        }
        // what this instance and every other one dials: the derivation, not a list
        let mine = self.cfg.depends().remotes;
        for d in mine.iter().chain(&self.peers().remotes) {
            let (host, port) = (&d.value.host, d.value.port);
            for ip in resolve(host, port).await {
                s.take(Cidr::host(ip), format!("{host} ({})", d.from));
            }
        }
        s
    }
}

/// The bridge interface the engine made for a network: its `bridge.name` option, or `br-` and
/// the first 12 characters of its id.
fn bridge_name(n: &serde_json::Value) -> Option<String> {
    if let Some(b) = n
        .pointer("/Options/com.docker.network.bridge.name")
        .and_then(|b| b.as_str())
    {
        return Some(b.to_string());
    }
    let id = n.get("Id")?.as_str()?;
    Some(format!("br-{}", id.get(..12)?))
}

async fn resolve(host: &str, port: u16) -> Vec<IpAddr> {
    if host.is_empty() {
        return Vec::new();
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return vec![ip];
    }
    match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port))).await {
        Ok(Ok(addrs)) => addrs.map(|a| a.ip()).collect(),
        Ok(Err(e)) => {
            debug!("{host} does not resolve ({e}): not in the box's address space");
            Vec::new()
        }
        Err(_) => {
            warn!(
                "{host} did not resolve within {RESOLVE_TIMEOUT:?}: not in the box's address space"
            );
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bridge_names() {
        let n = serde_json::json!({"Id": "c7a42b2c15dfeeee", "Options": {}});
        assert_eq!(bridge_name(&n).as_deref(), Some("br-c7a42b2c15df"));
        let n =
            serde_json::json!({"Id": "x", "Options": {"com.docker.network.bridge.name": "mine0"}});
        assert_eq!(bridge_name(&n).as_deref(), Some("mine0"));
    }
}

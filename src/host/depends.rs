//! What the box depends on (docs/POLICY.md, "Nothing the box depends on"): every endpoint an
//! instance dials, every host port one listens on or dials on loopback, every path one reads or
//! writes, and the data roots one claims. Derived from the very values the dialer and the
//! listeners are built from ([`remotes::endpoints`], [`remotes::egress_from`], the identity's
//! controllers, the SDK's own connects), for this instance and each peer, so a new remote is
//! reserved without touching the boundary. `tests.rs` sets every config key that names a host,
//! a port or a path to a sentinel and fails when the sentinel does not reach the derivation.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use crate::config::{Config, Transport};
use crate::remotes;

/// One thing an instance depends on, and the config key (or source) it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dep<T> {
    pub value: T,
    /// `tenancy.host`, `HTTPS_PROXY`, `identity (ztAPI)`, …: what an operator greps for.
    pub from: String,
}

/// An endpoint dialled by name or address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    pub host: String,
    pub port: u16,
}

/// Everything one instance depends on.
#[derive(Debug, Clone, Default)]
pub struct Depends {
    /// Endpoints the agent (or the engine for it) dials: their addresses are never a bundle
    /// network's.
    pub remotes: Vec<Dep<Remote>>,
    /// Host ports an instance or its tunneller listens on, or the agent dials on loopback: no
    /// container publishes them.
    pub ports: Vec<Dep<u16>>,
    /// Files and directories the agent reads or writes: never reachable by a bind.
    pub paths: Vec<Dep<PathBuf>>,
    /// The instance's `bind_roots`: its containers' data, never another instance's.
    pub claims: Vec<Dep<PathBuf>>,
}

impl Depends {
    pub fn port_values(&self) -> Vec<u16> {
        let mut v: Vec<u16> = self.ports.iter().map(|d| d.value).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    pub fn path_values(&self) -> Vec<PathBuf> {
        self.paths.iter().map(|d| d.value.clone()).collect()
    }

    /// Another instance's dependencies as this one must keep them: its claimed data roots are
    /// files no bundle of this instance reaches.
    pub fn as_peer(mut self, who: &str) -> Depends {
        for c in std::mem::take(&mut self.claims) {
            self.paths.push(Dep {
                value: c.value,
                from: format!("{} (instance {who}'s data)", c.from),
            });
        }
        for d in &mut self.ports {
            d.from = format!("instance {who}'s {}", d.from);
        }
        for d in &mut self.remotes {
            d.from = format!("instance {who}'s {}", d.from);
        }
        self
    }

    pub fn extend(&mut self, o: Depends) {
        self.remotes.extend(o.remotes);
        self.ports.extend(o.ports);
        self.paths.extend(o.paths);
        self.claims.extend(o.claims);
    }
}

/// What `cfg`'s instance depends on: `env` is the process environment the dialer reads
/// (`HTTPS_PROXY` …); `sdk_dialled` the targets the SDK has connected to in this process (the
/// edge routers it learned from the controller), empty for a peer.
pub fn of_config(
    cfg: &Config,
    env: &dyn Fn(&str) -> Option<String>,
    sdk_dialled: &[(String, u16)],
) -> Depends {
    let mut d = Depends::default();
    let remote = |d: &mut Depends, host: &str, port: u16, from: &str| {
        if !host.is_empty() {
            d.remotes.push(Dep {
                value: Remote {
                    host: host.to_string(),
                    port,
                },
                from: from.to_string(),
            });
        }
    };
    let (t, b) = remotes::endpoints(cfg);
    match cfg.transport {
        Transport::System => {
            remote(&mut d, &t.host, t.port, "tenancy.host");
            remote(&mut d, &b.host, b.port, "bao.host");
        }
        Transport::Sdk => {
            for (h, p) in controllers(Path::new(&cfg.identity)) {
                remote(&mut d, &h, p, "the identity's controller (ztAPI)");
            }
            for (h, p) in sdk_dialled {
                remote(
                    &mut d,
                    h,
                    *p,
                    "an edge router or controller the SDK dialled",
                );
            }
        }
        Transport::Proxy => {}
    }
    // the tunneller's listeners, whatever the transport (a box may switch to `proxy`)
    for (ep, key) in [(&t, "tenancy.proxy_port"), (&b, "bao.proxy_port")] {
        d.ports.push(Dep {
            value: ep.proxy_port,
            from: key.into(),
        });
    }
    for p in &cfg.reserved_ports {
        d.ports.push(Dep {
            value: *p,
            from: "reserved_ports".into(),
        });
    }
    if cfg.transport != Transport::Proxy {
        let from = if cfg.egress_proxy.url.is_empty() {
            "HTTPS_PROXY"
        } else {
            "egress_proxy.url"
        };
        match remotes::egress_from(cfg, env) {
            Ok(e) => {
                if let Some(r) = e.proxy() {
                    remote(&mut d, &r.host, r.port, from);
                    if is_loopback(&r.host) {
                        d.ports.push(Dep {
                            value: r.port,
                            from: format!("{from} (a local proxy)"),
                        });
                    }
                }
            }
            // the dialer refuses to start too; nothing of it can be reserved
            Err(e) => tracing::debug!("egress unusable, nothing of it reserved: {e}"),
        }
    }
    if !cfg.registry_host.is_empty() {
        if let Ok((h, p)) = monky_wire::egress::split_host_port(&cfg.registry_host, 443) {
            remote(&mut d, &h, p, "registry_host");
        }
    }
    let mut path = |p: &Path, from: &str| {
        if !p.as_os_str().is_empty() {
            d.paths.push(Dep {
                value: p.to_path_buf(),
                from: from.to_string(),
            });
        }
    };
    path(&cfg.state_dir, "state_dir");
    path(&cfg.bootstrap_path, "bootstrap_path");
    path(&cfg.path, "the config file");
    path(Path::new(&cfg.identity), "identity");
    path(
        Path::new(&cfg.egress_proxy.credentials_file),
        "egress_proxy.credentials_file",
    );
    path(Path::new(&cfg.tenancy.ca_file), "tenancy.ca_file");
    path(Path::new(&cfg.bao.ca_file), "bao.ca_file");
    path(Path::new(&cfg.metrics_textfile), "metrics_textfile");
    // executables named by path (a bare name is found on PATH, the box's own)
    for (bin, key) in [
        (&cfg.docker_bin, "docker_bin"),
        (&cfg.compose_bin, "compose_bin"),
    ] {
        if Path::new(bin).is_absolute() {
            path(Path::new(bin), key);
        }
    }
    for r in &cfg.bind_roots {
        d.claims.push(Dep {
            value: r.clone(),
            from: "bind_roots".into(),
        });
    }
    d
}

/// The controllers an identity names (`ztAPI`, and `ztAPIs` where the SDK wrote it): the
/// box's own file, read lexically; an unreadable one names none (the SDK refuses it anyway).
pub fn controllers(identity: &Path) -> Vec<(String, u16)> {
    let Ok(b) = std::fs::read(identity) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&b) else {
        return Vec::new();
    };
    let mut urls: Vec<&str> = v
        .get("ztAPI")
        .and_then(|u| u.as_str())
        .into_iter()
        .collect();
    if let Some(a) = v.get("ztAPIs").and_then(|a| a.as_array()) {
        urls.extend(a.iter().filter_map(|u| u.as_str()));
    }
    let mut out: Vec<(String, u16)> = urls.into_iter().filter_map(url_host).collect();
    out.sort();
    out.dedup();
    out
}

/// `https://host:port/...` → (host, port); the port defaults by scheme.
pub fn url_host(u: &str) -> Option<(String, u16)> {
    let (scheme, rest) = u.split_once("://")?;
    let auth = rest.split(['/', '?', '#']).next()?;
    let auth = auth.rsplit('@').next()?;
    let default = if scheme == "http" { 80 } else { 443 };
    monky_wire::egress::split_host_port(auth, default).ok()
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The box's own network dependencies, whatever its instances' configs say: the name servers
/// (`/etc/resolv.conf` and systemd-resolved's upstream list) and the default gateways.
#[derive(Debug, Default)]
pub struct HostNet {
    pub resolvers: Vec<Dep<IpAddr>>,
    pub gateways: Vec<Dep<IpAddr>>,
}

/// systemd-resolved's list of its upstream servers (the stub 127.0.0.53 is in /etc/resolv.conf).
pub const RESOLVED_UPSTREAM: &str = "/run/systemd/resolve/resolv.conf";

pub fn host_net(resolv: &[(&str, String)], v4_routes: &str, v6_routes: &str) -> HostNet {
    let mut h = HostNet::default();
    for (file, text) in resolv {
        for ns in monky_boundary::policy::netpool::parse_resolv(text) {
            h.resolvers.push(Dep {
                value: ns,
                from: format!("a name server of the box ({file})"),
            });
        }
    }
    for gw in gateways(v4_routes, v6_routes) {
        h.gateways.push(Dep {
            value: gw,
            from: "a gateway of the box's routes".into(),
        });
    }
    h
}

/// Every next hop of the kernel's route tables (`/proc/self/net/route`, `ipv6_route`): the
/// default gateway and any other router the box sends through.
pub fn gateways(v4: &str, v6: &str) -> Vec<IpAddr> {
    let mut out = Vec::new();
    for l in v4.lines().skip(1) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let Some(gw) = f.get(2).and_then(|g| u32::from_str_radix(g, 16).ok()) {
            if gw != 0 {
                // the kernel prints the network-order word as a native integer
                out.push(IpAddr::from(u32::from_be(gw).to_be_bytes()));
            }
        }
    }
    for l in v6.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let Some(gw) = f.get(4).and_then(|g| u128::from_str_radix(g, 16).ok()) {
            if gw != 0 {
                out.push(IpAddr::from(gw.to_be_bytes()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests;

//! The host boundary, judged on what compose finally asks the Docker engine to do. Every
//! container, volume and network create body that passes through the agent's checking socket
//! (`guard`) is read key by key against the allow-lists below: a key the table does not know
//! is refused by name unless it holds its zero value, so a field a future engine or compose
//! release invents is refused until someone reads it and adds it here (see docs/POLICY.md).
//! This file owns the create bodies' top level; `host_config` the per-key rules of
//! `HostConfig`, `paths` the bind-source rule.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

mod host_config;
pub mod netpool;
mod paths;
pub mod rules;

pub use paths::{
    bind_rule, binds_invariant, lexical, read_only_by_construction, release_outside_writable,
    resolve, trace, HostBind, Judged, Traced, Unreachable, PRIVATE_TREES, READ_ONLY_DEEP,
    READ_ONLY_FILES,
};
pub use rules::{Limits, SAFE_CAPS};

use crate::container::{self, ContainerSpec};
use crate::keys;
use host_config::host_config;

// What a create body may touch on this box: the box's one set of facts, which the file passes
// judge against too.
use crate::BoxFacts;

/// Why a body was refused: `ENGINE_REFUSED` with the JSON path of the key (names only, never
/// values, except host paths and network/volume names, which are not secrets), or the code of
/// the box's rule that refused it.
use crate::{Refusal, RefusalCode};

type R = Result<(), Refusal>;

fn deny(msg: impl Into<String>) -> R {
    Err(Refusal::engine(msg))
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
    /// Every bind source, traced (for the invariant over all binds on the box).
    pub binds: Vec<HostBind>,
    /// The compose service the container is for (names it in coded refusals).
    pub service: String,
    /// Static addresses asked for on a network: `(network, address)`. Each must lie inside
    /// that network's own subnet, which the caller asks the engine for.
    pub addresses: Vec<(String, String)>,
}

/// Judges a `POST /containers/create` body. `Ok` carries the names the caller must still
/// check against the engine.
pub fn container_create(body: &Value, b: &BoxFacts) -> Result<Refs, Refusal> {
    let Some(top) = body.as_object() else {
        return Err(Refusal::engine("container create body is not an object"));
    };
    let mut refs = Refs {
        service: top
            .get("Labels")
            .and_then(|l| l.get("com.docker.compose.service"))
            .map(str_of)
            .unwrap_or("?")
            .to_string(),
        ..Refs::default()
    };
    labels_ok(top, "container", &b.project)?;
    for (k, v) in top {
        match k.as_str() {
            "Labels" => {}
            "HostConfig" => host_config(v, b, &mut refs)?,
            "NetworkingConfig" => {
                if let Some(eps) = v.get("EndpointsConfig").and_then(|e| e.as_object()) {
                    for (name, ep) in eps {
                        network_name(name, &mut refs)?;
                        static_addresses(name, ep, b, &mut refs);
                    }
                }
                if let Some(o) = v.as_object() {
                    if let Some(other) = o.keys().find(|k| *k != "EndpointsConfig") {
                        return Err(Refusal::engine(format!("NetworkingConfig.{other}")));
                    }
                }
            }
            _ if keys::engine_passes_by_name("Config", k) => {}
            _ if is_zero(v) => {}
            _ => return Err(Refusal::engine(k.clone())),
        }
    }
    // the rules a compose service is judged by too, over the same description of the container
    let spec = ContainerSpec::from_engine(body, "");
    if let Some(r) = container::judge_all(&spec, b, Some(b)).into_iter().next() {
        return Err(r);
    }
    Ok(refs)
}

/// Makes read-only, in a container create body, every bind of a file the agent verifies (or of
/// a directory inside the release that holds one; [`read_only_by_construction`]), in
/// `HostConfig.Binds` (`rw` dropped, `ro` added) and `HostConfig.Mounts` (`ReadOnly: true`).
/// The engine guard applies it to every create before judging it, so such a bind passes the
/// invariant and no container can change what the agent verified and compose reads (issue 41).
/// The verified compose bytes are not touched: only the request compose sends. Returns the
/// sources it changed. Whatever the box permits: the release stays unwritable.
pub fn read_only_release_binds(body: &mut Value, b: &BoxFacts) -> Vec<String> {
    let Some(root) = b.release_dir.as_deref() else {
        return Vec::new();
    };
    let ours = |src: &str| {
        src.starts_with('/')
            && read_only_by_construction(
                &resolve(std::path::Path::new(src)),
                root,
                &b.release_files,
            )
    };
    let mut changed = Vec::new();
    let Some(hc) = body.get_mut("HostConfig").and_then(|h| h.as_object_mut()) else {
        return changed;
    };
    if let Some(binds) = hc.get_mut("Binds").and_then(|v| v.as_array_mut()) {
        for e in binds.iter_mut() {
            let Some(s) = e.as_str() else { continue };
            let eb = crate::volume::engine_bind(s);
            if !eb.read_only() && ours(eb.source) {
                changed.push(eb.source.to_string());
                *e = Value::String(eb.as_read_only());
            }
        }
    }
    if let Some(mounts) = hc.get_mut("Mounts").and_then(|v| v.as_array_mut()) {
        for m in mounts.iter_mut() {
            let Some(o) = m.as_object_mut() else { continue };
            let bind = o.get("Type").and_then(|t| t.as_str()) == Some("bind");
            let ro = o.get("ReadOnly").and_then(|r| r.as_bool()).unwrap_or(false);
            let src = o
                .get("Source")
                .and_then(|s| s.as_str())
                .unwrap_or("")
                .to_string();
            if bind && !ro && ours(&src) {
                o.insert("ReadOnly".into(), Value::Bool(true));
                changed.push(src);
            }
        }
    }
    changed
}

/// A volume's or network's name is `<project>_…`, so no bundle can take another project's
/// (`NAME_REFUSED`). `kind` is `volume` or `network`.
pub fn object_name(kind: &str, name: &str, b: &BoxFacts) -> R {
    if b.privileged || name.is_empty() || rules::object_name_ok(name, &b.project) {
        return Ok(());
    }
    Err(rules::name_refused(kind, name, &b.project))
}

/// A container's name (at create or rename) is compose's own for its service: the container
/// rule ([`container::name`]) the file passes judge `container_name` by.
pub fn container_name(name: &str, service: &str, b: &BoxFacts) -> R {
    let spec = ContainerSpec {
        service: service.to_string(),
        name: Some(name.to_string()),
        ..ContainerSpec::default()
    };
    container::name(&spec, b)
}

/// The addresses an endpoint asks for (`IPAMConfig`), recorded for the caller to judge against
/// the network's subnet; a box that judges no address space records none.
pub fn static_addresses(network: &str, ep: &Value, b: &BoxFacts, refs: &mut Refs) {
    if b.net.is_none() || b.privileged {
        return;
    }
    let Some(ipam) = ep.get("IPAMConfig") else {
        return;
    };
    for k in ["IPv4Address", "IPv6Address"] {
        if let Some(a) = ipam.get(k).map(str_of).filter(|a| !a.is_empty()) {
            refs.addresses.push((network.to_string(), a.to_string()));
        }
    }
    for a in ipam
        .get("LinkLocalIPs")
        .and_then(|l| l.as_array())
        .into_iter()
        .flatten()
    {
        refs.addresses
            .push((network.to_string(), str_of(a).to_string()));
    }
}

/// A network's `IPAM`: the default driver; every `Subnet` from the box's pools and clear of what
/// the box routes and dials; `IPRange`, `Gateway` and `AuxiliaryAddresses` inside that entry's
/// subnet (`NETWORK_REFUSED`). A network that sets no subnet gets one from the engine's pool.
fn network_ipam(name: &str, ipam: &Value, b: &BoxFacts) -> R {
    let Some(space) = b.net.as_ref().filter(|_| !b.privileged) else {
        return Ok(());
    };
    let driver = ipam.get("Driver").map(str_of).unwrap_or("");
    let entries: Vec<netpool::IpamEntry> = ipam
        .get("Config")
        .and_then(|c| c.as_array())
        .into_iter()
        .flatten()
        .map(|c| {
            let mut addrs: Vec<String> = ["IPRange", "Gateway"]
                .iter()
                .filter_map(|k| c.get(*k).map(str_of))
                .filter(|a| !a.is_empty())
                .map(String::from)
                .collect();
            if let Some(aux) = c.get("AuxiliaryAddresses").and_then(|a| a.as_object()) {
                addrs.extend(aux.values().map(|a| str_of(a).to_string()));
            }
            netpool::IpamEntry {
                subnet: c.get("Subnet").map(str_of).unwrap_or("").to_string(),
                addrs,
            }
        })
        .collect();
    netpool::ipam_refusal(name, driver, &entries, space)
}

fn network_name(name: &str, refs: &mut Refs) -> R {
    match name {
        "" | "default" | "bridge" | "none" => Ok(()),
        // the host's network namespace: the container rules' `network_mode: host`
        "host" => Err(Refusal::new(RefusalCode::PrivilegedRefused, "network host")),
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

/// A short, secret-free rendering of a refused value: strings and numbers are settings
/// (host, private, SYS_ADMIN…), objects and lists are summarised.
pub fn short_value(v: &Value) -> String {
    match v {
        Value::String(s) if s.len() <= 64 => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(a) => format!("[{} entries]", a.len()),
        Value::Object(_) => "{…}".into(),
        _ => "…".into(),
    }
}

/// `POST /volumes/create`: the local driver, no driver options (a mount(2) in disguise), the
/// project's label.
pub fn volume_create(body: &Value, b: &BoxFacts) -> R {
    let Some(o) = body.as_object() else {
        return deny("volume create body is not an object");
    };
    labels_ok(o, "volume", &b.project)?;
    object_name("volume", o.get("Name").map(str_of).unwrap_or(""), b)?;
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
pub fn network_create(body: &Value, b: &BoxFacts) -> R {
    let Some(o) = body.as_object() else {
        return deny("network create body is not an object");
    };
    labels_ok(o, "network", &b.project)?;
    let name = o.get("Name").map(str_of).unwrap_or("");
    object_name("network", name, b)?;
    for (k, v) in o {
        match k.as_str() {
            "Name" | "Labels" | "CheckDuplicate" | "Internal" | "Attachable" | "EnableIPv6"
            | "EnableIPv4" => {}
            "IPAM" => network_ipam(name, v, b)?,
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

//! What each request the engine guard receives is ([`Route`], after the API version prefix)
//! and whether it may pass: create bodies judged by [`monky_boundary::policy`], objects checked to be the
//! project's own by inspecting them on the real engine, bind sources checked against every
//! writable bind on the box and in this compose call.

use std::collections::HashMap;
use std::path::Path;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use tracing::{debug, info};

use super::{full, refused, upstream_get, Body, Shared};

mod own;
use super::poisoned;
use monky_boundary::policy;
use monky_boundary::Refusal;
use monky_wire::http::Cause;
use own::{container_name_free, forget, forget_all, not_claimed, owned, service_of};
pub(super) use own::{learn, Made};

/// Create bodies are small JSON documents; anything bigger is refused unread.
const CREATE_BODY_MAX: usize = 1 << 20;
const LABEL: &str = "com.docker.compose.project";

/// What a request is, once the API version prefix is gone.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    /// Read-only or lifecycle calls that touch nothing outside the project.
    Pass,
    /// A call on one container: it must belong to the project.
    Container(String),
    CreateContainer,
    CreateVolume,
    CreateNetwork,
    /// Connecting a container to a network: both must be the project's.
    Connect(String),
    /// Renaming one of the project's containers: the new name stays in its namespace.
    Rename(String),
    /// Removing a volume or network: only the project's own.
    DeleteVolume(String),
    DeleteNetwork(String),
    Pull,
    /// Optional side channels (BuildKit sessions) compose v2 opens and does without: refused
    /// but not reported, so they never mask the real cause of a failure.
    Quiet,
    Refuse(String),
}

fn strip_version(path: &str) -> &str {
    if let Some(rest) = path.strip_prefix("/v") {
        if let Some(i) = rest.find('/') {
            let v = &rest[..i];
            if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return &rest[i..];
            }
        }
    }
    path
}

fn route(method: &Method, path: &str, query: &str) -> Route {
    let p = strip_version(path);
    let seg: Vec<&str> = p.trim_start_matches('/').split('/').collect();
    let m = method.as_str();
    match (m, seg.as_slice()) {
        ("GET" | "HEAD", ["_ping"]) | ("GET", ["version"]) | ("GET", ["info"]) => Route::Pass,
        ("GET", ["events"]) => Route::Pass,
        ("GET", ["containers", "json"]) => Route::Pass,
        ("GET", ["images", "json"]) => Route::Pass,
        ("GET", ["images", ..]) if seg.last() == Some(&"json") => Route::Pass,
        ("GET", ["distribution", ..]) if seg.last() == Some(&"json") => Route::Pass,
        ("GET", ["networks"]) | ("GET", ["networks", _]) => Route::Pass,
        ("GET", ["volumes"]) | ("GET", ["volumes", _]) => Route::Pass,
        ("POST", ["images", "create"]) => {
            if query.contains("fromSrc=") || !query.contains("fromImage=") {
                Route::Refuse("image import (only registry pulls are allowed)".into())
            } else {
                Route::Pull
            }
        }
        ("POST", ["grpc" | "session"]) => Route::Quiet,
        ("POST", ["containers", "create"]) => Route::CreateContainer,
        ("GET", ["containers", id, "json" | "logs"]) => Route::Container(id.to_string()),
        ("POST", ["containers", id, "rename"]) => Route::Rename(id.to_string()),
        (
            "POST",
            ["containers", id, "start" | "stop" | "kill" | "restart" | "wait" | "pause" | "unpause"],
        ) => Route::Container(id.to_string()),
        ("DELETE", ["containers", id]) => Route::Container(id.to_string()),
        ("POST", ["volumes", "create"]) => Route::CreateVolume,
        ("DELETE", ["volumes", name]) => Route::DeleteVolume(name.to_string()),
        ("POST", ["networks", "create"]) => Route::CreateNetwork,
        ("POST", ["networks", id, "connect" | "disconnect"]) => Route::Connect(id.to_string()),
        ("DELETE", ["networks", id]) => Route::DeleteNetwork(id.to_string()),
        _ => Route::Refuse(format!("{m} {p} is not an endpoint compose needs")),
    }
}

/// The image reference a request pulls from a registry, if it is a pull.
pub(super) fn pull_reference<B>(req: &Request<B>) -> Option<String> {
    let query = req.uri().query().unwrap_or("");
    match route(req.method(), req.uri().path(), query) {
        Route::Pull => super::images::pull_reference(query),
        _ => None,
    }
}

/// A query parameter's value, percent-decoded.
fn query_param(query: &str, key: &str) -> String {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| super::images::percent_decode(v))
        .unwrap_or_default()
}

/// The request to forward (with what it makes, if it is a create), or the answer that replaces
/// it.
pub(super) async fn decide(
    sh: &Shared,
    req: Request<Incoming>,
) -> (Option<Request<Body>>, Option<Response<Body>>, Option<Made>) {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let r = route(req.method(), &path, &query);
    debug!("engine {} {} → {:?}", req.method(), path, r);
    if let Route::Connect(n) = &r {
        if path.ends_with("/connect") {
            return connect(sh, req, n, &path).await;
        }
    }
    let check = match &r {
        Route::Pull => match super::images::pull_reference(&query) {
            Some(image) => policy::rules::image_digest_refusal(&sh.boundary, "pull", &image),
            None => Ok(()),
        },
        Route::Pass => Ok(()),
        Route::Refuse(why) => Err(Refusal::engine(why.clone())),
        Route::Quiet => {
            let r = Response::builder()
                .status(StatusCode::FORBIDDEN)
                .body(full(Bytes::from_static(
                    b"{\"message\":\"refused by monky-deployd\"}",
                )))
                .unwrap_or_else(|_| Response::new(full(Bytes::new())));
            return (None, Some(r), None);
        }
        Route::Container(id) => owned(sh, &format!("/containers/{id}/json"), "container", id).await,
        Route::DeleteVolume(n) => owned(sh, &format!("/volumes/{n}"), "volume", n).await,
        Route::DeleteNetwork(n) => owned(sh, &format!("/networks/{n}"), "network", n).await,
        Route::Connect(n) => owned(sh, &format!("/networks/{n}"), "network", n).await,
        Route::Rename(id) => {
            match owned(sh, &format!("/containers/{id}/json"), "container", id).await {
                Ok(()) if sh.boundary.privileged => Ok(()),
                Ok(()) => {
                    let name = query_param(&query, "name");
                    let service = service_of(sh, id).await;
                    match policy::container_name(&name, &service, &sh.boundary) {
                        Ok(()) => container_name_free(sh, &name, &service).await,
                        Err(d) => Err(d),
                    }
                }
                Err(e) => Err(e),
            }
        }
        Route::CreateContainer | Route::CreateVolume | Route::CreateNetwork => {
            let (mut parts, body) = req.into_parts();
            let mut bytes = match read_body(sh, body, &path).await {
                Ok(b) => b,
                Err(r) => return (None, Some(r), None),
            };
            let mut v: Value = match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(e) => {
                    return (
                        None,
                        Some(refused(
                            sh,
                            Refusal::engine(format!("{path}: body is not JSON ({e})")),
                        )),
                        None,
                    )
                }
            };
            if r == Route::CreateContainer {
                // a bind of a file the agent verifies is mounted read-only, by construction
                let ro = policy::read_only_release_binds(&mut v, &sh.boundary);
                if !ro.is_empty() {
                    info!(
                        "engine guard: mounted read-only (files the agent verifies): {}",
                        ro.join(", ")
                    );
                    bytes = Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
                    parts.headers.remove(hyper::header::TRANSFER_ENCODING);
                    parts
                        .headers
                        .insert(hyper::header::CONTENT_LENGTH, bytes.len().into());
                }
            }
            let verdict = match r {
                Route::CreateContainer => {
                    check_container(sh, &v, &query_param(&query, "name")).await
                }
                Route::CreateVolume => match policy::volume_create(&v, &sh.boundary) {
                    Ok(()) => not_claimed(sh, "volume", v["Name"].as_str().unwrap_or("")).await,
                    Err(d) => Err(d),
                },
                _ => match policy::network_create(&v, &sh.boundary) {
                    Ok(()) => not_claimed(sh, "network", v["Name"].as_str().unwrap_or("")).await,
                    Err(d) => Err(d),
                },
            };
            if let Err(why) = verdict {
                // a refusal with its own code (a port, a name, an image) reads alone
                let what = match r {
                    Route::CreateContainer => {
                        let svc = v
                            .pointer("/Labels/com.docker.compose.service")
                            .and_then(|s| s.as_str())
                            .unwrap_or("?");
                        format!("container for service {svc}")
                    }
                    Route::CreateVolume => "volume create".into(),
                    _ => "network create".into(),
                };
                return (None, Some(refused(sh, why.for_request(what))), None);
            }
            let made = match r {
                Route::CreateContainer => Made::Container,
                Route::CreateVolume => Made::Volume,
                _ => Made::Network(v["Name"].as_str().unwrap_or("").to_string()),
            };
            return (
                Some(Request::from_parts(parts, full(bytes))),
                None,
                Some(made),
            );
        }
    };
    if let Err(why) = check {
        return (None, Some(refused(sh, why)), None);
    }
    // a removal passed: the name may be made again, by anyone
    match &r {
        Route::DeleteVolume(n) => forget(sh, &format!("volume:{n}")),
        Route::DeleteNetwork(_) => forget_all(sh, "network:"),
        _ => {}
    }
    let (parts, body) = req.into_parts();
    (Some(Request::from_parts(parts, body.boxed())), None, None)
}

/// `POST /networks/{n}/connect`: the project's own network, and any address the endpoint asks
/// for inside that network's subnet.
async fn connect(
    sh: &Shared,
    req: Request<Incoming>,
    n: &str,
    path: &str,
) -> (Option<Request<Body>>, Option<Response<Body>>, Option<Made>) {
    if let Err(why) = owned(sh, &format!("/networks/{n}"), "network", n).await {
        return (None, Some(refused(sh, why)), None);
    }
    let (parts, body) = req.into_parts();
    let bytes = match read_body(sh, body, path).await {
        Ok(b) => b,
        Err(r) => return (None, Some(r), None),
    };
    // an empty body asks for nothing; anything else must be JSON
    if !bytes.iter().all(|b| b.is_ascii_whitespace()) {
        let v: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                let r = refused(
                    sh,
                    Refusal::engine(format!("{path}: body is not JSON ({e})")),
                );
                return (None, Some(r), None);
            }
        };
        let mut refs = policy::Refs::default();
        let ep = v.get("EndpointConfig").unwrap_or(&Value::Null);
        policy::static_addresses(n, ep, &sh.boundary, &mut refs);
        for (net, a) in &refs.addresses {
            if let Err(why) = address_in_network(sh, net, a).await {
                return (None, Some(refused(sh, why)), None);
            }
        }
    }
    (Some(Request::from_parts(parts, full(bytes))), None, None)
}

/// A static address lies inside the network's own subnet, as the engine reports it
/// (`NETWORK_REFUSED` otherwise; the engine's default networks have none a bundle may use).
async fn address_in_network(sh: &Shared, network: &str, addr: &str) -> Result<(), Refusal> {
    let subnets: Vec<String> = match network {
        "" | "default" | "bridge" | "none" => Vec::new(),
        n => {
            let (status, body) =
                upstream_get(sh, &format!("/networks/{n}"))
                    .await
                    .map_err(|e| {
                        Refusal::engine(format!("cannot inspect network {n}: {}", Cause(&*e)))
                    })?;
            let v: Value = serde_json::from_slice(&body).map_err(|e| {
                Refusal::engine(format!(
                    "cannot inspect network {n}: engine answered {status} ({e})"
                ))
            })?;
            v.pointer("/IPAM/Config")
                .and_then(|c| c.as_array())
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("Subnet").and_then(|s| s.as_str()))
                .map(String::from)
                .collect()
        }
    };
    policy::netpool::address_refusal(network, addr, &subnets)
}

async fn check_container(sh: &Shared, v: &Value, name: &str) -> Result<(), Refusal> {
    let refs = policy::container_create(v, &sh.boundary)?;
    policy::container_name(name, &refs.service, &sh.boundary)?;
    container_name_free(sh, name, &refs.service).await?;
    let image = v.get("Image").and_then(|i| i.as_str()).unwrap_or("");
    policy::rules::image_digest_refusal(&sh.boundary, &refs.service, image)?;
    super::images::may_run(sh, &refs.service, image).await?;
    for n in &refs.volumes {
        owned(sh, &format!("/volumes/{n}"), "volume", n).await?;
    }
    for n in &refs.networks {
        owned(sh, &format!("/networks/{n}"), "network", n).await?;
    }
    for (n, a) in &refs.addresses {
        address_in_network(sh, n, a).await?;
    }
    for c in &refs.containers {
        owned(sh, &format!("/containers/{c}/json"), "container", c).await?;
    }
    // the invariant over every bind on the box: this container's, those of every container the
    // engine lists, and those allowed earlier in this compose call (compose creates services in
    // parallel, before the engine lists them)
    let mut box_binds = box_binds(sh).await?;
    let mut seen = sh
        .seen
        .lock()
        .map_err(|_| Refusal::engine("guard state poisoned"))?;
    box_binds.extend(seen.iter().cloned());
    let verdict = if sh.boundary.privileged {
        // a box that permits privilege trusts the bundle's layout; the release stays unwritable
        policy::release_outside_writable(&refs.binds, &sh.boundary.release_files)
    } else {
        policy::binds_invariant(&refs.binds, &box_binds, &sh.boundary.release_files)
    };
    verdict.map_err(|d| d.within("HostConfig.Binds"))?;
    seen.extend(refs.binds);
    Ok(())
}

fn lock<T>(m: &std::sync::Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>, Refusal> {
    m.lock()
        .map_err(|_| Refusal::engine("guard state poisoned"))
}

/// Every bind and volume mount of every container on the box, traced as the engine resolves it
/// (a volume's directory counts as writable: containers write it).
///
/// The box is listed again at every call, so a container anyone created since is judged; a
/// container already traced by this guard is not traced again: its mounts are fixed at create,
/// and the directories its sources pass through are outside every writable bind (the
/// invariant), so no container can change how they resolve during this compose call.
pub(super) async fn box_binds(sh: &Shared) -> Result<Vec<policy::HostBind>, Refusal> {
    let (status, body) = upstream_get(sh, "/containers/json?all=1")
        .await
        .map_err(|e| Refusal::engine(format!("cannot list containers: {}", Cause(&*e))))?;
    // an unreadable list is not an empty box
    let listed: Vec<Listed> = serde_json::from_slice(&body).map_err(|e| {
        Refusal::engine(format!(
            "cannot list containers: engine answered {status} ({e})"
        ))
    })?;
    let mut traced = lock(&sh.box_mounts)?;
    let mut now: HashMap<String, Vec<policy::HostBind>> = HashMap::with_capacity(listed.len());
    for c in listed {
        let binds = match traced.remove(&c.id) {
            Some(b) => b,
            None => c
                .mounts
                .unwrap_or_default()
                .into_iter()
                .filter(|m| (m.ty == "bind" || m.ty == "volume") && m.source.starts_with('/'))
                .map(|m| policy::HostBind::new(Path::new(&m.source), m.rw))
                .collect(),
        };
        now.insert(c.id, binds);
    }
    let out = now.values().flatten().cloned().collect();
    // containers gone from the box are forgotten
    *traced = now;
    Ok(out)
}

/// One entry of `GET /containers/json`: only what the bind invariant reads.
#[derive(Deserialize)]
struct Listed {
    #[serde(rename = "Id")]
    id: String,
    #[serde(rename = "Mounts", default)]
    mounts: Option<Vec<ListedMount>>,
}

#[derive(Deserialize)]
struct ListedMount {
    #[serde(rename = "Type", default)]
    ty: String,
    #[serde(rename = "Source", default)]
    source: String,
    #[serde(rename = "RW", default = "writable")]
    rw: bool,
}

/// A mount that does not say is taken as writable.
fn writable() -> bool {
    true
}

/// A request body the guard judges, read whole up to [`CREATE_BODY_MAX`]; a larger one is refused.
async fn read_body(sh: &Shared, body: Incoming, path: &str) -> Result<Bytes, Response<Body>> {
    match Limited::new(body, CREATE_BODY_MAX).collect().await {
        Ok(b) => Ok(b.to_bytes()),
        Err(_) => Err(refused(
            sh,
            Refusal::engine(format!("{path}: body over {CREATE_BODY_MAX} bytes")),
        )),
    }
}

#[cfg(test)]
mod tests;

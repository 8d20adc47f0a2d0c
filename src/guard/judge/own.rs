//! Whose an object is: looked up on the engine (its label), or known from a create this guard
//! passed, and kept for the compose call; and which project on the box owns a name's prefix.

use std::collections::BTreeMap;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::{Response, StatusCode};
use serde::Deserialize;
use serde_json::Value;

use super::super::{full, upstream_get, Body, Shared};
use super::{lock, poisoned, CREATE_BODY_MAX, LABEL};
use monky_boundary::policy;
use monky_boundary::Refusal;
use monky_wire::http::Cause;

/// What a create this guard passed makes: once the engine says it made it, the object is the
/// project's (the create carried the project's label) and needs no look-up in this compose call.
pub(crate) enum Made {
    Container,
    Volume,
    Network(String),
}

pub(super) fn forget(sh: &Shared, key: &str) {
    if let Ok(mut own) = sh.own.lock() {
        own.remove(key);
    }
}

pub(super) fn forget_all(sh: &Shared, prefix: &str) {
    if let Ok(mut own) = sh.own.lock() {
        own.retain(|k| !k.starts_with(prefix));
    }
}

/// The engine made what a passed create asked for: remember it as the project's, and hand
/// compose the answer unchanged.
pub(crate) async fn learn(sh: &Shared, made: Made, resp: Response<Body>) -> Response<Body> {
    let (parts, body) = resp.into_parts();
    let bytes = match Limited::new(body, CREATE_BODY_MAX).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            let msg = serde_json::json!({"message": format!("docker engine: {e}")});
            return Response::builder()
                .status(StatusCode::BAD_GATEWAY)
                .body(full(Bytes::from(msg.to_string())))
                .unwrap_or_else(|_| Response::new(full(Bytes::new())));
        }
    };
    #[derive(Deserialize, Default)]
    struct Answer {
        #[serde(rename = "Id", default)]
        id: String,
        #[serde(rename = "Name", default)]
        name: String,
    }
    let a: Answer = serde_json::from_slice(&bytes).unwrap_or_default();
    let keys = match made {
        Made::Container if is_full_id(&a.id) => vec![format!("container:{}", a.id)],
        Made::Volume if !a.name.is_empty() => vec![format!("volume:{}", a.name)],
        Made::Network(name) => [name, a.id]
            .into_iter()
            .filter(|n| !n.is_empty())
            .map(|n| format!("network:{n}"))
            .collect(),
        _ => Vec::new(),
    };
    if let Ok(mut own) = sh.own.lock() {
        own.extend(keys);
    }
    Response::from_parts(parts, full(bytes))
}

/// A name inside this project's namespace may still be inside another's: `monky-shop` and
/// `monky-shop-eu` share the prefix, so `monky-shop-eu_data` passes the lexical rule for both.
/// The longest project on the box whose namespace holds the name owns it (`NAME_REFUSED`).
pub(super) async fn not_claimed(sh: &Shared, kind: &str, name: &str) -> Result<(), Refusal> {
    if sh.boundary.privileged || name.is_empty() {
        return Ok(());
    }
    let own = sh.boundary.project.as_str();
    let projects = projects_on_box(sh).await?;
    let n = name.trim_start_matches('/');
    let claimed = projects.iter().find(|q| {
        q.len() > own.len() && q.as_str() != own && policy::rules::name_in_namespace(n, q)
            || n.split_once('_').is_some_and(|(id, rest)| {
                id.len() == 12 && q.len() > own.len() && policy::rules::name_in_namespace(rest, q)
            })
    });
    match claimed {
        Some(q) => Err(Refusal::new(
            policy::rules::NAME_CODE,
            format!("{kind} {n} (outside project {own}: project {q} owns that prefix)"),
        )),
        None => Ok(()),
    }
}

/// A container's name at create or rename, against the engine's state (issue 41): compose's own
/// name for the service may not be inside a longer project's namespace ([`not_claimed`]); a
/// free-standing one ([`policy::rules::container_name_taken`] judged it free of the namespaces
/// the box knows by config) may not be inside the namespace of any other project with objects
/// on the box. And whichever it is, no container that is not this service's may hold it now:
/// the name is the box's to hand out, first come, and never another project's.
pub(super) async fn container_name_free(
    sh: &Shared,
    name: &str,
    service: &str,
) -> Result<(), Refusal> {
    if sh.boundary.privileged || name.is_empty() {
        return Ok(());
    }
    let own = sh.boundary.project.as_str();
    let n = name.trim_start_matches('/');
    let bare = match n.split_once('_') {
        Some((id, rest)) if id.len() == 12 && id.bytes().all(|b| b.is_ascii_hexdigit()) => rest,
        _ => n,
    };
    let refused = |why: String| {
        Err(Refusal::new(
            policy::rules::NAME_CODE,
            format!("container {n} (outside project {own}: {why})"),
        )
        .at(service, "container_name"))
    };
    if policy::rules::container_name_ok(n, own, service) {
        not_claimed(sh, "container", name).await?;
    } else {
        let projects = projects_on_box(sh).await?;
        if let Some(q) = projects
            .iter()
            .find(|q| q.as_str() != own && policy::rules::name_in_namespace(bare, q))
        {
            return refused(format!("project {q} owns that prefix"));
        }
    }
    if !policy::rules::engine_container_name(bare) {
        return Ok(()); // the engine refuses it itself
    }
    let (status, body) = upstream_get(sh, &format!("/containers/{n}/json"))
        .await
        .map_err(|e| Refusal::engine(format!("container {n}: cannot inspect: {}", Cause(&*e))))?;
    if status == StatusCode::NOT_FOUND {
        return Ok(());
    }
    if !status.is_success() {
        return Err(Refusal::engine(format!(
            "container {n}: cannot inspect: engine answered {status}"
        )));
    }
    let o: Labelled = serde_json::from_slice(&body).unwrap_or_default();
    let labels = o
        .labels
        .or(o.config.and_then(|c| c.labels))
        .unwrap_or_default();
    let project = labels.get(LABEL).map(String::as_str);
    let svc = labels.get("com.docker.compose.service").map(String::as_str);
    match (project, svc) {
        (Some(p), Some(s)) if p == own && s == service => Ok(()),
        (Some(p), Some(s)) if p == own => refused(format!("held by its service {s}")),
        (Some(p), _) => refused(format!("held by a container of project {p}")),
        (None, _) => refused("held by a container of no compose project".into()),
    }
}

/// The compose service a container belongs to (its label), "" when it cannot be read.
pub(super) async fn service_of(sh: &Shared, id: &str) -> String {
    let Ok((_, body)) = upstream_get(sh, &format!("/containers/{id}/json")).await else {
        return String::new();
    };
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    v.pointer("/Config/Labels/com.docker.compose.service")
        .and_then(|s| s.as_str())
        .unwrap_or("")
        .to_string()
}

/// Every compose project with a container, volume or network on the box, read once per guard.
pub(super) async fn projects_on_box(
    sh: &Shared,
) -> Result<std::collections::BTreeSet<String>, Refusal> {
    if let Some(p) = sh.projects.lock().map_err(poisoned)?.clone() {
        return Ok(p);
    }
    let mut out = std::collections::BTreeSet::new();
    for path in ["/containers/json?all=1", "/volumes", "/networks"] {
        let (_, body) = upstream_get(sh, path)
            .await
            .map_err(|e| Refusal::engine(format!("cannot list {path}: {}", Cause(&*e))))?;
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let items = v
            .get("Volumes")
            .and_then(|x| x.as_array())
            .or_else(|| v.as_array())
            .cloned()
            .unwrap_or_default();
        for it in items {
            if let Some(p) = it
                .pointer("/Labels/com.docker.compose.project")
                .and_then(|x| x.as_str())
            {
                out.insert(p.to_string());
            }
        }
    }
    *sh.projects.lock().map_err(poisoned)? = Some(out.clone());
    Ok(out)
}

/// The object exists and carries the project's label (an `external` volume or network of
/// another project, or one made by hand, is never joined or removed).
pub(super) async fn owned(sh: &Shared, path: &str, what: &str, name: &str) -> Result<(), Refusal> {
    // labels are fixed at create, a container's full id is never reused, and a volume's or
    // network's name changes hands only by a removal (this guard forgets the name when it
    // passes one; only the engine's own users, never a bundle, remove objects behind it): so
    // an object found to be the project's stays so for this compose call (compose asks about
    // the same objects many times)
    let key = (what != "container" || is_full_id(name)).then(|| format!("{what}:{name}"));
    if let Some(k) = &key {
        if lock(&sh.own)?.contains(k) {
            return Ok(());
        }
    }
    let (status, body) = upstream_get(sh, path)
        .await
        .map_err(|e| Refusal::engine(format!("{what} {name}: cannot inspect: {}", Cause(&*e))))?;
    if status == StatusCode::NOT_FOUND {
        return Err(Refusal::engine(format!(
            "{what} {name} does not exist (external objects are not joined)"
        )));
    }
    // only the labels are read (an inspect body is kilobytes of settings)
    let o: Labelled = serde_json::from_slice(&body).unwrap_or_default();
    let labels = o.labels.or(o.config.and_then(|c| c.labels));
    let p = labels.as_ref().and_then(|l| l.get(LABEL));
    if p != Some(&sh.boundary.project) {
        return Err(Refusal::engine(format!(
            "{what} {name} belongs to {}",
            p.map(|p| format!("project {p}"))
                .unwrap_or_else(|| "something else on this box".into())
        )));
    }
    if let Some(k) = key {
        lock(&sh.own)?.insert(k);
    }
    Ok(())
}

/// The labels of an inspected volume, network (`Labels`) or container (`Config.Labels`).
#[derive(Deserialize, Default)]
struct Labelled {
    #[serde(rename = "Labels", default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(rename = "Config", default)]
    config: Option<ConfigLabels>,
}

#[derive(Deserialize)]
struct ConfigLabels {
    #[serde(rename = "Labels", default)]
    labels: Option<BTreeMap<String, String>>,
}

/// A container's full id (64 hex digits), as compose addresses the containers it made.
fn is_full_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

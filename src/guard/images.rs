//! Which images this project may run: those it pulled itself, with its own credential, through
//! the guard — in this compose call, or in an earlier one recorded in `<state_dir>/images.json`
//! (a rollback or a re-apply with `pull_policy: missing` must keep working). An image that is
//! only in the local store because another app pulled it is refused (`IMAGE_REFUSED`): the
//! engine would otherwise hand out another app's private image without any credential.
//!
//! Images are judged by id, not by name: a name can be re-tagged to anything, an id is the
//! content the pull brought.

use std::collections::BTreeMap;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::poisoned;
use super::{upstream_get, Body, Shared};
use monky_boundary::policy::rules;
use monky_boundary::Refusal;
use monky_wire::http::Cause;

/// File name of the ledger in the state dir.
pub const IMAGE_LEDGER: &str = "images.json";
/// Entries kept (oldest dropped): far more than `keep_releases` releases use.
const MAX_ENTRIES: usize = 512;

/// Image ids this project pulled, with the reference pulled and when (unix seconds).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Ledger {
    pub images: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub reference: String,
    pub at: u64,
}

/// Why the ledger could not be written.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    #[error(transparent)]
    Write(#[from] monky_base::files::StateError),
}

impl Ledger {
    /// `None` when there is no ledger yet (a box upgraded from before it, or a new one).
    pub fn load(path: &Path) -> Option<Ledger> {
        let b = std::fs::read(path).ok()?;
        Some(serde_json::from_slice(&b).unwrap_or_default())
    }

    pub fn save(&self, path: &Path) -> Result<(), LedgerError> {
        let b = serde_json::to_vec_pretty(self)?;
        Ok(monky_base::files::write_private(path, &b, 0o600)?)
    }

    fn add(&mut self, id: &str, reference: &str) -> bool {
        if self.images.contains_key(id) {
            return false;
        }
        self.images.insert(
            id.to_string(),
            Entry {
                reference: reference.to_string(),
                at: monky_base::clock::now(),
            },
        );
        while self.images.len() > MAX_ENTRIES {
            let oldest = self
                .images
                .iter()
                .min_by_key(|(_, e)| e.at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.images.remove(&k),
                None => break,
            };
        }
        true
    }
}

/// The ledger this guard works with, loaded once. A box with no ledger yet starts it from the
/// images of the containers this project already runs (they were pulled for it before the
/// ledger existed).
pub(super) async fn ledger(sh: &Shared) -> Result<Ledger, Refusal> {
    let Some(path) = &sh.boundary.image_ledger else {
        return Ok(Ledger::default());
    };
    if let Some(l) = sh.ledger.lock().map_err(poisoned)?.clone() {
        return Ok(l);
    }
    let l = match Ledger::load(path) {
        Some(l) => l,
        None => {
            let mut l = Ledger::default();
            let filt = format!(
                "{{\"label\":[\"com.docker.compose.project={}\"]}}",
                sh.boundary.project
            );
            let q = format!(
                "/containers/json?all=1&filters={}",
                monky_wire::http::urlencode(&filt)
            );
            let (_, body) = upstream_get(sh, &q)
                .await
                .map_err(|e| Refusal::engine(format!("cannot list containers: {}", Cause(&*e))))?;
            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            for c in v.as_array().into_iter().flatten() {
                let id = c.get("ImageID").and_then(|x| x.as_str()).unwrap_or("");
                let r = c.get("Image").and_then(|x| x.as_str()).unwrap_or("");
                if !id.is_empty() {
                    l.add(id, r);
                }
            }
            l.save(path).map_err(|e| Refusal::engine(e.to_string()))?;
            l
        }
    };
    *sh.ledger.lock().map_err(poisoned)? = Some(l.clone());
    Ok(l)
}

/// The id the engine gives `image` now; `None` when it has no such image (the create then
/// fails on its own: the Engine API never pulls on create).
async fn image_id(sh: &Shared, image: &str) -> Result<Option<String>, Refusal> {
    let (status, body) = upstream_get(sh, &format!("/images/{image}/json"))
        .await
        .map_err(|e| Refusal::engine(format!("image {image}: cannot inspect: {}", Cause(&*e))))?;
    if status == StatusCode::NOT_FOUND {
        return Ok(None);
    }
    // only the id is read (an image inspect carries its whole config and history)
    #[derive(Deserialize)]
    struct Inspected {
        #[serde(rename = "Id")]
        id: Option<String>,
    }
    let v: Option<Inspected> = serde_json::from_slice(&body).ok();
    Ok(v.and_then(|v| v.id))
}

/// A container of `service` may run `image`: its id is one this project pulled.
pub(super) async fn may_run(sh: &Shared, service: &str, image: &str) -> Result<(), Refusal> {
    let Some(path) = sh.boundary.image_ledger.clone() else {
        return Ok(());
    };
    if sh.boundary.privileged || image.is_empty() {
        return Ok(());
    }
    let _one = sh.judging_images.lock().await;
    // a reference moves to another image only by a pull, through this guard (tag, load and
    // import are refused) or by the engine's own users: until the next pull, a verdict stands
    if sh.pulled.lock().map_err(poisoned)?.is_empty()
        && sh.runnable.lock().map_err(poisoned)?.contains(image)
    {
        return Ok(());
    }
    let Some(id) = image_id(sh, image).await? else {
        return Ok(());
    };
    let l = ledger(sh).await?;
    // what this compose call pulled: recorded by id now that the pull is done. The references
    // stay listed until the shared ledger holds them: compose creates services in parallel,
    // and a create that found the list already drained by another (still resolving the ids)
    // would not see the pull at all
    let pulled: Vec<String> = sh.pulled.lock().map_err(poisoned)?.clone();
    let mut ids = Vec::new();
    for r in &pulled {
        if let Some(pid) = image_id(sh, r).await? {
            ids.push((pid, r.clone()));
        }
    }
    let l = {
        let mut cached = sh.ledger.lock().map_err(poisoned)?;
        let mut l = cached.clone().unwrap_or(l);
        let mut changed = false;
        for (pid, r) in &ids {
            changed |= l.add(pid, r);
        }
        if changed {
            l.save(&path).map_err(|e| Refusal::engine(e.to_string()))?;
            *cached = Some(l.clone());
        }
        l
    };
    sh.pulled
        .lock()
        .map_err(poisoned)?
        .retain(|r| !pulled.contains(r));
    if l.images.contains_key(&id) {
        sh.runnable
            .lock()
            .map_err(poisoned)?
            .insert(image.to_string());
        return Ok(());
    }
    Err(Refusal::new(
        rules::IMAGE_CODE,
        format!("{service} {image} (not pulled by this project)"),
    ))
}

/// A pull passes (or ends): every reference may point elsewhere now.
pub(super) fn pulling(sh: &Shared) {
    if let Ok(mut r) = sh.runnable.lock() {
        r.clear();
    }
}

/// The image reference of a registry pull (`fromImage` + `tag`, a digest as `@sha256:…`).
pub(super) fn pull_reference(query: &str) -> Option<String> {
    let mut from = None;
    let mut tag = None;
    for kv in query.split('&') {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let v = percent_decode(v);
        match k {
            "fromImage" => from = Some(v),
            "tag" => tag = Some(v),
            _ => {}
        }
    }
    let from = from.filter(|f| !f.is_empty())?;
    Some(match tag.filter(|t| !t.is_empty()) {
        Some(t) if t.starts_with("sha256:") => format!("{from}@{t}"),
        Some(t) => format!("{from}:{t}"),
        None => from,
    })
}

/// A query value as a form encodes it: `+` is a space, then %-escapes decoded (a malformed
/// escape stays as written, as the engine's Go `url.ParseQuery` would refuse it anyway).
pub(super) fn percent_decode(s: &str) -> String {
    let spaced = s.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

/// A pull's progress stream, forwarded as it comes; when it ends without an error message the
/// reference counts as pulled by this project (the engine reports a failed pull inside a 200).
pub(super) struct PullWatch {
    inner: Body,
    sh: Arc<Shared>,
    reference: String,
    failed: bool,
    /// The end of the previous frame, so a marker split across frames is still seen.
    tail: Vec<u8>,
}

impl PullWatch {
    pub(super) fn new(inner: Body, sh: Arc<Shared>, reference: String, ok: bool) -> PullWatch {
        PullWatch {
            inner,
            sh,
            reference,
            failed: !ok,
            tail: Vec::new(),
        }
    }

    pub(super) fn boxed(self) -> Body {
        BodyExt::boxed(self)
    }
}

impl hyper::body::Body for PullWatch {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.inner).poll_frame(cx);
        match &r {
            Poll::Ready(Some(Ok(f))) => {
                if let Some(d) = f.data_ref() {
                    let mut seen = std::mem::take(&mut this.tail);
                    seen.extend_from_slice(d);
                    if seen.windows(7).any(|w| w == b"\"error\"")
                        || seen.windows(13).any(|w| w == b"\"errorDetail\"")
                    {
                        this.failed = true;
                    }
                    let keep = seen.len().saturating_sub(16);
                    this.tail = seen.split_off(keep);
                }
            }
            Poll::Ready(Some(Err(_))) => this.failed = true,
            Poll::Ready(None) if !this.failed => {
                if let Ok(mut p) = this.sh.pulled.lock() {
                    p.push(std::mem::take(&mut this.reference));
                }
                pulling(&this.sh);
                this.failed = true; // recorded once
            }
            _ => {}
        }
        r
    }

    // `is_end_stream` stays false: the server must poll to the end, where the pull is recorded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_references_from_the_query() {
        assert_eq!(
            pull_reference("fromImage=127.0.0.1%3A5000%2Fmonky%2Fprivate&tag=1").as_deref(),
            Some("127.0.0.1:5000/monky/private:1")
        );
        assert_eq!(
            pull_reference("tag=sha256%3Aabc&fromImage=busybox").as_deref(),
            Some("busybox@sha256:abc")
        );
        assert_eq!(
            pull_reference("fromImage=busybox").as_deref(),
            Some("busybox")
        );
        assert_eq!(pull_reference("fromSrc=-"), None);
    }

    #[test]
    fn the_ledger_keeps_ids_and_drops_the_oldest_past_its_size() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(IMAGE_LEDGER);
        assert!(Ledger::load(&p).is_none());
        let mut l = Ledger::default();
        assert!(l.add("sha256:a", "x:1"));
        assert!(!l.add("sha256:a", "x:1"));
        l.save(&p).unwrap();
        assert!(Ledger::load(&p).unwrap().images.contains_key("sha256:a"));
        for i in 0..MAX_ENTRIES + 3 {
            l.add(&format!("sha256:{i}"), "y");
        }
        assert_eq!(l.images.len(), MAX_ENTRIES);
    }
}

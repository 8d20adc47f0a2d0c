//! The agent's checking socket: every compose call talks to the Docker engine through it
//! (`DOCKER_HOST` for that child only), so the requests compose finally sends are what the
//! host-boundary policy judges, whatever a compose release does with the file. Endpoints
//! compose needs pass as streams (registry auth headers untouched); create bodies are checked
//! by [`monky_boundary::policy`]; objects another project owns are never touched; everything else —
//! build, exec, plugins, swarm, anything unlisted — is refused with a 403 whose message names
//! the rule, and remembered so the report can say why.
//!
//! This file owns the socket and the plumbing: serving it, the refusal answers, the client to
//! the real engine and the forward of what passed. What each request is and whether it passes
//! is `guard/judge.rs`'s.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::UnixListener;
use tracing::{debug, warn};

use monky_boundary::BoxFacts;
use monky_boundary::{Refusal, RefusalCode};
use monky_wire::http::{BoxError, Cause};
use monky_wire::transport::UnixConnector;

mod images;
mod judge;
mod meter;
pub use images::{Ledger, IMAGE_LEDGER};
use judge::decide;

type Body = BoxBody<Bytes, hyper::Error>;

struct Shared {
    /// The real engine socket, through the same pooled client as `runtime::Engine`.
    upstream: Client<UnixConnector, Body>,
    boundary: BoxFacts,
    denied: Mutex<Vec<Refusal>>,
    /// Requests seen, and the time spent deciding them (the hop's own cost, logged on drop).
    requests: AtomicU64,
    check_us: AtomicU64,
    /// Requests the guard itself made to the engine (look-ups for its judgements).
    lookups: AtomicU64,
    /// Binds allowed so far in this compose call.
    seen: Mutex<Vec<monky_boundary::policy::HostBind>>,
    /// References pulled without an error in this compose call, not yet in the ledger.
    pulled: Mutex<Vec<String>>,
    /// References judged runnable in this compose call, until the next pull (`images::may_run`).
    runnable: Mutex<std::collections::HashSet<String>>,
    /// The image ledger, once loaded.
    ledger: Mutex<Option<Ledger>>,
    /// Objects known to be this project's (`judge::owned`): `container:<full id>`,
    /// `volume:<name>`, `network:<name or id>` — found so by a look-up, or made by a create this
    /// guard passed (every create carries the project's label).
    own: Mutex<std::collections::HashSet<String>>,
    /// The traced mounts of each container on the box, by id (`judge::box_binds`).
    box_mounts: Mutex<std::collections::HashMap<String, Vec<monky_boundary::policy::HostBind>>>,
    /// The compose projects on the box, once listed.
    projects: Mutex<Option<std::collections::BTreeSet<String>>>,
    /// Compose creates services in parallel: one image judgement at a time, so a create never
    /// sees the pulls half moved into the ledger by another.
    judging_images: tokio::sync::Mutex<()>,
}

/// A running checking socket; dropping it stops serving and removes the socket.
///
/// The guard runs on a thread of its own (a current-thread runtime): its cost is that thread's
/// CPU, read from the thread's clock once, with nothing measured per poll, and a busy agent
/// loop never stalls the engine calls compose is waiting on.
pub struct Guard {
    socket: PathBuf,
    shared: Arc<Shared>,
    rt: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    cpu: meter::ThreadClock,
}

impl Guard {
    /// Listens on `dir/engine.sock` (dir created 0700) and forwards to `upstream`.
    pub fn start(upstream: &Path, dir: &Path, boundary: BoxFacts) -> std::io::Result<Guard> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let socket = dir.join("engine.sock");
        let _ = std::fs::remove_file(&socket);
        let listener = std::os::unix::net::UnixListener::bind(&socket)?;
        listener.set_nonblocking(true)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let rt_handle = rt.handle().clone();
        let shared = Arc::new(Shared {
            upstream: Client::builder(GuardExecutor(rt_handle.clone()))
                .pool_timer(TokioTimer::new())
                .pool_idle_timeout(std::time::Duration::from_secs(30))
                .build(UnixConnector::new(upstream)),
            boundary,
            denied: Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
            check_us: AtomicU64::new(0),
            lookups: AtomicU64::new(0),
            seen: Mutex::new(Vec::new()),
            pulled: Mutex::new(Vec::new()),
            runnable: Mutex::new(Default::default()),
            ledger: Mutex::new(None),
            own: Mutex::new(Default::default()),
            box_mounts: Mutex::new(Default::default()),
            projects: Mutex::new(None),
            judging_images: tokio::sync::Mutex::new(()),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (clock_tx, clock_rx) = std::sync::mpsc::channel();
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name("engine-guard".into())
            .spawn(move || {
                let _ = clock_tx.send(meter::ThreadClock::current());
                rt.block_on(async move {
                    let Ok(listener) = UnixListener::from_std(listener) else {
                        return;
                    };
                    let accept = async move {
                        loop {
                            let Ok((s, _)) = listener.accept().await else {
                                continue;
                            };
                            let sh = sh.clone();
                            tokio::spawn(async move {
                                let svc = hyper::service::service_fn(move |req| {
                                    let sh = sh.clone();
                                    async move { Ok::<_, Infallible>(handle(&sh, req).await) }
                                });
                                let _ = hyper::server::conn::http1::Builder::new()
                                    .serve_connection(TokioIo::new(s), svc)
                                    .await;
                            });
                        }
                    };
                    tokio::select! {
                        _ = accept => {}
                        _ = stopped => {}
                    }
                });
                // dropping the runtime here ends every connection still open
            })?;
        let cpu = clock_rx
            .recv()
            .map_err(|_| std::io::Error::other("the engine guard thread did not start"))?;
        Ok(Guard {
            socket,
            shared,
            rt: rt_handle,
            stop: Some(stop),
            thread: Some(thread),
            cpu,
        })
    }

    /// `DOCKER_HOST` for a compose child.
    pub fn docker_host(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// Before compose reads the release: no container on the box (made by anyone, with any
    /// policy) may write a file of it. The guard keeps that from being created; this catches
    /// what was there before.
    /// A refusal is `BIND_SOURCE_REFUSED`, whatever kept the check from passing.
    pub async fn preflight(&self) -> Result<(), Preflight> {
        // on the guard's thread, with its engine client
        let sh = self.shared.clone();
        self.rt
            .spawn(async move {
                // an engine that cannot answer is not a box that refuses: the next tick retries
                let binds = judge::box_binds(&sh)
                    .await
                    .map_err(|r| Preflight::Engine(r.detail))?;
                monky_boundary::policy::release_outside_writable(&binds, &sh.boundary.release_files)
                    .map_err(|r| {
                        Preflight::Refused(Refusal::new(RefusalCode::BindSourceRefused, r.detail))
                    })
            })
            .await
            .map_err(|e| Preflight::Engine(format!("engine guard: {e}")))?
    }

    /// Requests the guard itself has sent the engine so far, to judge.
    pub fn lookups(&self) -> u64 {
        self.shared.lookups.load(Ordering::Relaxed)
    }

    /// What was refused so far, in order (names and host paths only).
    pub fn denied(&self) -> Denials {
        Denials(
            self.shared
                .denied
                .lock()
                .map(|d| d.clone())
                .unwrap_or_default(),
        )
    }
}

/// Why the preflight did not pass: the box as it is refuses the call (permanent), or the
/// engine could not be asked (temporary: exit 75 with the engine's own message).
#[derive(Debug, thiserror::Error)]
pub enum Preflight {
    #[error(transparent)]
    Refused(Refusal),
    #[error("the engine could not be asked which containers bind what: {0}")]
    Engine(String),
}

impl Drop for Guard {
    fn drop(&mut self) {
        // read while the thread lives: a clock of an ended thread is gone
        let cpu_ns = self.cpu.ns();
        debug!(
            "engine guard: {} requests, {} refused, {} µs deciding, {} µs cpu, {} look-ups",
            self.shared.requests.load(Ordering::Relaxed),
            self.denied().len(),
            self.shared.check_us.load(Ordering::Relaxed),
            cpu_ns / 1000,
            self.shared.lookups.load(Ordering::Relaxed)
        );
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// The executor of the guard's engine client: its connection tasks run on the guard's thread.
#[derive(Clone)]
struct GuardExecutor(tokio::runtime::Handle);

impl<F> hyper::rt::Executor<F> for GuardExecutor
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        self.0.spawn(fut);
    }
}

/// The guard's refusals of one compose call, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Denials(pub Vec<Refusal>);

impl std::ops::Deref for Denials {
    type Target = [Refusal];
    fn deref(&self) -> &[Refusal] {
        &self.0
    }
}

impl Denials {
    /// As the guard words them, joined by `sep`.
    pub fn join(&self, sep: &str) -> String {
        let texts: Vec<String> = self.0.iter().map(Refusal::guard_text).collect();
        texts.join(sep)
    }

    /// What a failed compose call reports: the first refusal when a rule named its code (a
    /// bind, a privilege, a reserved port, a name, an image: the code the file passes give the
    /// same shape), else `ENGINE_REFUSED` with all of them.
    pub fn reported(&self) -> Option<Refusal> {
        let first = self.0.first()?;
        Some(if first.code != RefusalCode::EngineRefused {
            first.clone()
        } else {
            Refusal::engine(self.join("; "))
        })
    }
}

/// A lock the guard's state is behind was poisoned (a judging task panicked).
fn poisoned<T>(_: T) -> Refusal {
    Refusal::engine("guard poisoned")
}

fn refused(sh: &Shared, r: Refusal) -> Response<Body> {
    let why = r.guard_text();
    warn!("engine request refused: {why}");
    if let Ok(mut d) = sh.denied.lock() {
        if !d.contains(&r) {
            d.push(r);
        }
    }
    let msg = serde_json::json!({"message": format!("refused by monky-deployd: {why}")});
    Response::builder()
        .status(StatusCode::FORBIDDEN)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(full(Bytes::from(msg.to_string())))
        .unwrap_or_else(|_| Response::new(full(Bytes::new())))
}

fn full(b: Bytes) -> Body {
    Full::new(b).map_err(|never| match never {}).boxed()
}

async fn handle(sh: &Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    sh.requests.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    let pull = judge::pull_reference(&req);
    let (req, verdict, made) = decide(sh, req).await;
    sh.check_us
        .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
    match (req, verdict) {
        (Some(req), None) => {
            let resp = forward(sh, req).await;
            let resp = match made {
                Some(m) if resp.status().is_success() => judge::learn(sh, m, resp).await,
                _ => resp,
            };
            match pull {
                // what this project pulls it may run: recorded once the stream ends well
                Some(r) => {
                    images::pulling(sh);
                    let ok = resp.status().is_success();
                    let (parts, body) = resp.into_parts();
                    let body = images::PullWatch::new(body, sh.clone(), r, ok).boxed();
                    Response::from_parts(parts, body)
                }
                None => resp,
            }
        }
        (_, Some(resp)) => resp,
        (None, None) => refused(sh, Refusal::engine("internal: nothing to forward")),
    }
}
/// `path` on the real engine: the Uri the pooled client needs (its authority is ignored).
fn engine_uri(path_and_query: &str) -> Result<hyper::Uri, hyper::http::Error> {
    hyper::Uri::builder()
        .scheme("http")
        .authority("docker")
        .path_and_query(path_and_query)
        .build()
}

async fn upstream_get(sh: &Shared, path: &str) -> Result<(StatusCode, Bytes), BoxError> {
    sh.lookups.fetch_add(1, Ordering::Relaxed);
    let req = Request::builder()
        .uri(engine_uri(path)?)
        .header(hyper::header::HOST, "docker")
        .body(
            Empty::<Bytes>::new()
                .map_err(|never| match never {})
                .boxed(),
        )?;
    let resp = sh.upstream.request(req).await?;
    let status = resp.status();
    let body = Limited::new(resp.into_body(), 16 << 20)
        .collect()
        .await?
        .to_bytes();
    Ok((status, body))
}

async fn forward(sh: &Shared, mut req: Request<Body>) -> Response<Body> {
    let pq = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let resp: Result<_, BoxError> = match engine_uri(&pq) {
        Ok(uri) => {
            *req.uri_mut() = uri;
            sh.upstream.request(req).await.map_err(Into::into)
        }
        Err(e) => Err(e.into()),
    };
    match resp {
        Ok(r) => {
            let (parts, body) = r.into_parts();
            Response::from_parts(parts, body.boxed())
        }
        Err(e) => {
            let msg = serde_json::json!({"message": format!("docker engine: {}", Cause(&*e))});
            Response::builder()
                .status(StatusCode::BAD_GATEWAY)
                .body(full(Bytes::from(msg.to_string())))
                .unwrap_or_else(|_| Response::new(full(Bytes::new())))
        }
    }
}

#[cfg(test)]
mod denials_tests {
    use super::*;

    #[test]
    fn a_failed_call_reports_an_own_code_alone_and_anything_else_as_engine_refused() {
        let port = Refusal::new(
            RefusalCode::PortRefused,
            "web 0.0.0.0:22 (reserved by the box)",
        );
        let key = Refusal::engine("container for service web: HostConfig.X");
        assert_eq!(Denials::default().reported(), None);
        assert_eq!(
            Denials(vec![port.clone(), key.clone()]).reported(),
            Some(port.clone())
        );
        // a bind the file passes would refuse keeps their code
        let bind = Refusal::new(
            RefusalCode::BindSourceRefused,
            "container for service web: HostConfig.Binds: /sys: reaches /sys",
        );
        assert_eq!(
            Denials(vec![bind.clone(), key.clone()]).reported(),
            Some(bind)
        );
        let r = Denials(vec![key, port]).reported().unwrap();
        assert_eq!(r.code, RefusalCode::EngineRefused);
        assert_eq!(
            r.detail,
            "container for service web: HostConfig.X; PORT_REFUSED: web 0.0.0.0:22 (reserved by the box)"
        );
    }
}

#[cfg(test)]
mod fake_engine_tests;

//! The fake monky-tenancy: the four agent calls of PROTOCOL.md, nothing more lenient.

use crate::http::request;
use crate::sha::{bundle_sha, read_bundle_dir};
use crate::signer::{Grant, Signer};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How tenancy is wired: where OpenBao is (for `auth/token/lookup`), its root token, the grant
/// signing key (whose public half is in OpenBao's `jwt-tenancy`), and the lease limit (5 in
/// production).
pub struct TenancyOpts {
    pub bao_addr: String,
    pub bao_root_token: String,
    pub signer: Signer,
    pub lease_limit_per_hour: usize,
}

/// One HTTP request as tenancy saw it (every request, including refused ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRecord {
    pub method: String,
    /// Path without the query string.
    pub path: String,
    pub status: u16,
    pub user_agent: Option<String>,
    /// The error code answered, if any (`AGENT_UNAUTHENTICATED`, `INVALID_REQUEST`, …).
    pub code: Option<String>,
    /// The error message answered, if any (says which field a 400 is about).
    pub message: Option<String>,
}

/// One `GET /v1/agent/bundle/{env}/{sha}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleFetch {
    pub env_id: String,
    pub sha: String,
    pub status: u16,
}

#[derive(Default)]
struct EnvState {
    /// Every bundle ever set, by sha (older shas stay fetchable, like a real render store).
    bundles: HashMap<String, Vec<(String, Vec<u8>)>>,
    desired: Option<String>,
    /// `Some(purge_volumes)` when the test asked for `down`.
    down: Option<bool>,
    prod: bool,
    /// Check-in answers carry `"urgent": true` (PROTOCOL 0.3): maintenance windows are bypassed.
    urgent: bool,
    /// `agent` of check-in answers (PROTOCOL 0.4), verbatim.
    agent: Option<Value>,
    /// Every grant jti issued for the env (kit + leases), in order.
    issued: Vec<String>,
    /// Issue times of leases inside the sliding hour.
    lease_times: VecDeque<Instant>,
}

struct Fault {
    prefix: String,
    status: u16,
    code: String,
}

struct State {
    delays: Vec<(String, Duration)>,
    envs: HashMap<String, EnvState>,
    superseded: HashSet<String>,
    kit_jtis: HashSet<String>,
    lease_limit: usize,
    grant_ttl: Duration,
    faults: Vec<Fault>,
    lease_override: Option<Value>,
    tamper_content: bool,
    tamper_header: bool,
    /// The release pipeline's keys: every bundle served is signed by each (PROTOCOL 0.3).
    release_keys: Vec<(String, [u8; 32])>,
    /// Served verbatim as `signatures` instead (malformed or foreign signatures on purpose).
    raw_signatures: Option<Value>,
    /// The pipeline's release statements (PROTOCOL 0.5), by (env, sha): relayed as
    /// `statement`, and then the release keys sign these bytes instead of the bare sha.
    statements: HashMap<(String, String), Vec<u8>>,
    /// `Some(life)`: every bundle without a statement of its own gets one rendered here
    /// (serial from its bundle.json, issued now, expiring `life` later), as a pipeline would.
    auto_statements: Option<Duration>,
    /// Agent packages by (version, arch) (PROTOCOL 0.4).
    packages: HashMap<(String, String), Vec<u8>>,
    checkins: Vec<Value>,
    leases: Vec<Value>,
    reports: Vec<Value>,
    bundle_fetches: Vec<BundleFetch>,
    requests: Vec<RequestRecord>,
    /// Added to tenancy's clock in every `Date` header (a box then sees a skew of `-offset`).
    clock_offset_s: i64,
    /// Diagnostics requests not answered yet, by env (PROTOCOL 0.4 `collect`).
    collect: HashMap<String, String>,
    /// Diagnostics uploads accepted, as sent.
    diagnostics: Vec<Value>,
    /// Diagnostics uploads answer 429 (tenancy does not want them now).
    refuse_diagnostics: bool,
    /// Every request body as received (path, bytes): what reached tenancy at all.
    bodies: Vec<(String, Bytes)>,
}

struct Inner {
    bao_addr: String,
    bao_root_token: String,
    signer: Signer,
    state: Mutex<State>,
}

impl Inner {
    fn st(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running fake tenancy on `127.0.0.1:<free port>` (plain HTTP), served from a background
/// thread with its own tokio runtime. Stopped on drop.
///
/// Pinned behaviour:
/// - every request needs `Authorization: Bearer <OpenBao token>`, verified with OpenBao
///   `POST /v1/auth/token/lookup` (root token): unknown/expired token, no `meta.env_id`, or a
///   `meta.grant_jti` that was [superseded](Tenancy::supersede) → 401 `AGENT_UNAUTHENTICATED`;
///   `meta.env_id` ≠ the request's `env_id` (body, or the bundle URL) → 409 `AGENT_ENV_MISMATCH`;
/// - bodies are validated strictly: a missing field, a wrong type or an unknown field → 400
///   `INVALID_REQUEST` (checked after authentication, before the env check);
/// - errors are `{"error": {"code", "message"}}`; 429s carry `Retry-After: <seconds>`;
/// - leases: `lease_limit_per_hour` per env in a sliding hour, then 429 `LEASE_RATE_LIMITED`.
pub struct Tenancy {
    inner: Arc<Inner>,
    port: u16,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Tenancy {
    /// Binds `127.0.0.1:0` and starts serving before returning.
    pub fn start(opts: TenancyOpts) -> Tenancy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind tenancy");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("local addr").port();
        let inner = Arc::new(Inner {
            bao_addr: opts.bao_addr,
            bao_root_token: opts.bao_root_token,
            signer: opts.signer,
            state: Mutex::new(State {
                delays: Vec::new(),
                envs: HashMap::new(),
                superseded: HashSet::new(),
                kit_jtis: HashSet::new(),
                lease_limit: opts.lease_limit_per_hour,
                grant_ttl: Duration::from_secs(3600),
                faults: Vec::new(),
                lease_override: None,
                tamper_content: false,
                tamper_header: false,
                release_keys: Vec::new(),
                raw_signatures: None,
                statements: HashMap::new(),
                auto_statements: None,
                packages: HashMap::new(),
                checkins: Vec::new(),
                leases: Vec::new(),
                reports: Vec::new(),
                bundle_fetches: Vec::new(),
                requests: Vec::new(),
                clock_offset_s: 0,
                collect: HashMap::new(),
                diagnostics: Vec::new(),
                refuse_diagnostics: false,
                bodies: Vec::new(),
            }),
        });
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let srv = inner.clone();
        let thread = std::thread::Builder::new()
            .name("fake-tenancy".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    loop {
                        tokio::select! {
                            _ = &mut rx => break,
                            acc = listener.accept() => {
                                let Ok((stream, _)) = acc else { continue };
                                let inner = srv.clone();
                                tokio::spawn(async move {
                                    let svc = service_fn(move |req| handle(inner.clone(), req));
                                    let _ = http1::Builder::new()
                                        .serve_connection(TokioIo::new(stream), svc)
                                        .await;
                                });
                            }
                        }
                    }
                });
            })
            .expect("spawn tenancy thread");
        Tenancy {
            inner,
            port,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`
    pub fn addr(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The grant signer (to mint grants outside tenancy's bookkeeping).
    pub fn signer(&self) -> &Signer {
        &self.inner.signer
    }

    fn st(&self) -> MutexGuard<'_, State> {
        self.inner.st()
    }

    /// Renders a bundle for `env` from in-memory files and makes it the desired one (clears a
    /// pending `down`). Paths are taken as given, so unsafe bundles can be served on purpose.
    /// Returns the canonical sha.
    pub fn set_bundle(&self, env: &str, files: Vec<(String, Vec<u8>)>) -> String {
        let sha = bundle_sha(&files);
        let mut st = self.st();
        let e = st.envs.entry(env.to_string()).or_default();
        e.bundles.insert(sha.clone(), files);
        e.desired = Some(sha.clone());
        e.down = None;
        sha
    }

    /// [`Tenancy::set_bundle`] from a directory (recursive, relative `/` paths).
    pub fn set_bundle_dir(&self, env: &str, dir: impl AsRef<Path>) -> String {
        self.set_bundle(env, read_bundle_dir(dir.as_ref()))
    }

    /// The env's desired sha, if any.
    pub fn desired_sha(&self, env: &str) -> Option<String> {
        self.st().envs.get(env).and_then(|e| e.desired.clone())
    }

    /// Forgets the desired bundle: check-ins answer `none` with `desired_sha: null`.
    pub fn clear_bundle(&self, env: &str) {
        if let Some(e) = self.st().envs.get_mut(env) {
            e.desired = None;
        }
    }

    /// Check-ins answer `down` (with `purge_volumes = purge`) until the next `set_bundle`.
    pub fn set_down(&self, env: &str, purge: bool) {
        self.st().envs.entry(env.to_string()).or_default().down = Some(purge);
    }

    /// Cancels a pending [`Tenancy::set_down`].
    pub fn clear_down(&self, env: &str) {
        if let Some(e) = self.st().envs.get_mut(env) {
            e.down = None;
        }
    }

    /// The `prod` flag of check-in answers for `env` (default false).
    pub fn set_prod(&self, env: &str, prod: bool) {
        self.st().envs.entry(env.to_string()).or_default().prod = prod;
    }

    /// The `urgent` flag of check-in answers for `env` (default false).
    pub fn set_urgent(&self, env: &str, urgent: bool) {
        self.st().envs.entry(env.to_string()).or_default().urgent = urgent;
    }

    /// The install kit's one-time grant for `env` (TTL as leases, default 1 h). Its jti is
    /// recorded as issued and as a kit jti. Does not count against the lease limit.
    pub fn bootstrap_grant(&self, env: &str) -> Grant {
        let mut st = self.st();
        let g = self.inner.signer.mint_grant(env, st.grant_ttl);
        st.kit_jtis.insert(g.jti.clone());
        st.envs
            .entry(env.to_string())
            .or_default()
            .issued
            .push(g.jti.clone());
        g
    }

    /// Kit re-reveal: every grant jti issued for `env` so far (kit and leases) is superseded;
    /// tokens carrying them get 401 `AGENT_UNAUTHENTICATED` from now on.
    pub fn supersede(&self, env: &str) {
        let mut st = self.st();
        let jtis = st
            .envs
            .get(env)
            .map(|e| e.issued.clone())
            .unwrap_or_default();
        st.superseded.extend(jtis);
    }

    /// Every grant jti issued for `env` (kit first if it was minted first), in order.
    pub fn issued_jtis(&self, env: &str) -> Vec<String> {
        self.st()
            .envs
            .get(env)
            .map(|e| e.issued.clone())
            .unwrap_or_default()
    }

    /// Whether `jti` came from [`Tenancy::bootstrap_grant`].
    pub fn is_kit_jti(&self, jti: &str) -> bool {
        self.st().kit_jtis.contains(jti)
    }

    /// Leases allowed per env per sliding hour (production: 5).
    pub fn set_lease_limit(&self, n: usize) {
        self.st().lease_limit = n;
    }

    /// Forgets the lease times of every env (the sliding hour starts afresh).
    pub fn reset_lease_window(&self) {
        for e in self.st().envs.values_mut() {
            e.lease_times.clear();
        }
    }

    /// TTL of grants minted from now on (leases and kit), default 1 h.
    pub fn set_grant_ttl(&self, ttl: Duration) {
        self.st().grant_ttl = ttl;
    }

    /// One-shot fault: the next request whose path starts with `path_prefix` is answered
    /// `status` with `{"error":{"code": code,…}}` before anything else is checked (a 429 also
    /// carries `Retry-After: 60`). `status` 0 closes the connection without an answer.
    /// Faults queue; each fires once.
    pub fn fail_next(&self, path_prefix: &str, status: u16, code: &str) {
        self.st().faults.push(Fault {
            prefix: path_prefix.to_string(),
            status,
            code: code.to_string(),
        });
    }

    /// One-shot delay: the next request whose path starts with `path_prefix` is held `delay`
    /// before it is handled (timeouts). Delays queue; each fires once.
    pub fn delay_next(&self, path_prefix: &str, delay: Duration) {
        self.st().delays.push((path_prefix.to_string(), delay));
    }

    /// `Some(body)`: successful leases answer `body` verbatim (e.g. retired AppRole material
    /// `{"role_id":…,"secret_id":…}`) instead of a grant. Still counted and recorded.
    pub fn set_lease_override(&self, body: Option<Value>) {
        self.st().lease_override = body;
    }

    /// Serve bundle content whose sha does not match the URL (the header and body `sha` still
    /// claim the URL sha): the agent must refuse with `BUNDLE_SHA_MISMATCH`.
    pub fn tamper_bundle(&self, on: bool) {
        self.st().tamper_content = on;
    }

    /// Sign every bundle served with these release keys (key id, Ed25519 seed), as a release
    /// pipeline would; empty = unsigned.
    pub fn sign_bundles_with(&self, keys: &[(&str, [u8; 32])]) {
        self.st().release_keys = keys.iter().map(|(i, k)| (i.to_string(), *k)).collect();
    }

    /// Publish an agent package as a release pipeline does: served at
    /// `/v1/agent/package/{version}/{arch}`; the returned offer (`{version, sha256, signatures}`)
    /// is signed over the sha256 hex of `bytes` by each of `keys`.
    pub fn publish_agent(
        &self,
        version: &str,
        arch: &str,
        bytes: Vec<u8>,
        keys: &[(&str, [u8; 32])],
    ) -> Value {
        self.publish_agent_stated(version, arch, bytes, keys, |_| None)
    }

    /// [`Tenancy::publish_agent`] with a release statement (PROTOCOL 0.5): `statement` gets the
    /// package's sha256 hex and returns the statement bytes (or `None`); the keys then sign
    /// those bytes, and the offer carries them as `statement`.
    pub fn publish_agent_stated(
        &self,
        version: &str,
        arch: &str,
        bytes: Vec<u8>,
        keys: &[(&str, [u8; 32])],
        statement: impl FnOnce(&str) -> Option<Vec<u8>>,
    ) -> Value {
        use sha2::Digest;
        let sha = hex::encode(sha2::Sha256::digest(&bytes));
        self.st()
            .packages
            .insert((version.to_string(), arch.to_string()), bytes);
        let stmt = statement(&sha);
        let message = stmt.clone().unwrap_or_else(|| sha.as_bytes().to_vec());
        let sigs: Vec<Value> = keys
            .iter()
            .map(|(id, seed)| json!({"key_id": id, "alg": "ed25519", "sig": release_sign_bytes(seed, &message)}))
            .collect();
        let mut offer = json!({"version": version, "sha256": sha, "signatures": sigs});
        if let Some(b) = stmt {
            offer["statement"] = B64.encode(b).into();
        }
        offer
    }

    /// The `agent` of `env`'s check-in answers (`None`: absent, keep the running version).
    pub fn offer_agent(&self, env: &str, offer: Option<Value>) {
        self.st().envs.entry(env.to_string()).or_default().agent = offer;
    }

    /// The statement served (and signed) with `env`'s bundle `sha`, byte for byte, as the
    /// release pipeline made it (`None`: none, or an automatic one).
    pub fn set_statement(&self, env: &str, sha: &str, bytes: Option<Vec<u8>>) {
        let k = (env.to_string(), sha.to_string());
        match bytes {
            Some(b) => self.st().statements.insert(k, b),
            None => self.st().statements.remove(&k),
        };
    }

    /// `Some(life)`: render a statement for every bundle that has none (serial from its
    /// bundle.json, issued now, expiring `life` later).
    pub fn auto_statements(&self, life: Option<Duration>) {
        self.st().auto_statements = life;
    }

    /// Serve `sigs` verbatim as the bundle's `signatures` (`None`: back to signing).
    pub fn set_raw_signatures(&self, sigs: Option<Value>) {
        self.st().raw_signatures = sigs;
    }

    /// Serve a wrong `X-Bundle-Sha256` header with correct content (only a warning for the agent).
    pub fn tamper_bundle_header(&self, on: bool) {
        self.st().tamper_header = on;
    }

    /// Accepted check-in bodies (passed auth, validation and env check), in order.
    pub fn checkins(&self) -> Vec<Value> {
        self.st().checkins.clone()
    }

    /// Bodies of leases that were *issued* (200), in order; refused ones (429, 401…) are only in
    /// [`Tenancy::requests`].
    pub fn leases(&self) -> Vec<Value> {
        self.st().leases.clone()
    }

    /// Accepted report bodies (204), in order.
    pub fn reports(&self) -> Vec<Value> {
        self.st().reports.clone()
    }

    /// Every bundle fetch that passed authentication, with the status answered.
    pub fn bundle_fetches(&self) -> Vec<BundleFetch> {
        self.st().bundle_fetches.clone()
    }

    /// Every request, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.st().requests.clone()
    }

    /// Tenancy's clock runs `secs` ahead (negative: behind) in its `Date` headers.
    pub fn set_clock_offset(&self, secs: i64) {
        self.st().clock_offset_s = secs;
    }

    /// Check-in answers for `env` carry `collect: <id>` until a diagnostics upload for it
    /// arrives (PROTOCOL 0.4).
    pub fn request_diagnostics(&self, env: &str, id: &str) {
        self.st().collect.insert(env.to_string(), id.to_string());
    }

    /// Diagnostics uploads answer 429 with `Retry-After` while `on`.
    pub fn refuse_diagnostics(&self, on: bool) {
        self.st().refuse_diagnostics = on;
    }

    /// Diagnostics uploads accepted, in order.
    pub fn diagnostics(&self) -> Vec<Value> {
        self.st().diagnostics.clone()
    }

    /// Every request body tenancy received (path, bytes), refused ones included.
    pub fn bodies(&self) -> Vec<(String, Bytes)> {
        self.st().bodies.clone()
    }

    /// Clears all records (check-ins, leases, reports, fetches, requests); not the lease window.
    pub fn clear_records(&self) {
        let mut st = self.st();
        st.checkins.clear();
        st.leases.clear();
        st.reports.clear();
        st.bundle_fetches.clear();
        st.requests.clear();
        st.diagnostics.clear();
        st.bodies.clear();
    }
}

/// What [`agent_call`] got back.
#[derive(Clone, Debug)]
pub struct AgentResponse {
    pub status: u16,
    /// `Retry-After`, when present.
    pub retry_after: Option<String>,
    /// `X-Bundle-Sha256`, when present.
    pub bundle_sha_header: Option<String>,
    /// JSON body (`Null` when empty).
    pub body: Value,
}

/// A minimal agent-side call (`Authorization: Bearer`, `User-Agent: monky-test-tenancy`), for
/// the harness's own tests and for poking tenancy from a test. Transport errors panic.
pub fn agent_call(
    addr: &str,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    body: Option<&Value>,
) -> AgentResponse {
    let mut h = vec![("user-agent", "monky-test-tenancy".to_string())];
    if let Some(b) = bearer {
        h.push(("authorization", format!("Bearer {b}")));
    }
    let r = crate::http::block_on(crate::http::request_with(addr, method, path, &h, body))
        .unwrap_or_else(|e| panic!("tenancy: {e}"));
    let hdr = |n: &str| {
        r.headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    AgentResponse {
        status: r.status,
        retry_after: hdr("retry-after"),
        bundle_sha_header: hdr("x-bundle-sha256"),
        body: r.json(),
    }
}

impl Drop for Tenancy {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Request handling

struct Reply {
    status: u16,
    code: Option<String>,
    message: Option<String>,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn json(status: u16, v: &Value) -> Reply {
        Reply {
            status,
            code: None,
            message: None,
            headers: vec![("content-type", "application/json".into())],
            body: serde_json::to_vec(v).expect("json"),
        }
    }

    fn error(status: u16, code: &str, message: impl Into<String>) -> Reply {
        let message = message.into();
        let mut r = Reply::json(
            status,
            &json!({"error": {"code": code, "message": &message}}),
        );
        r.code = Some(code.to_string());
        r.message = Some(message);
        r
    }

    fn header(mut self, name: &'static str, value: String) -> Reply {
        self.headers.push((name, value));
        self
    }
}

fn unauthenticated(msg: &str) -> Reply {
    Reply::error(401, "AGENT_UNAUTHENTICATED", msg)
}

async fn handle(
    inner: Arc<Inner>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let method = req.method().as_str().to_string();
    let path = req.uri().path().to_string();
    let ua = req
        .headers()
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bearer = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|s| s.trim().to_string());
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    inner.st().bodies.push((path.clone(), body.clone()));
    let delay = {
        let mut st = inner.st();
        let i = st.delays.iter().position(|d| path.starts_with(&d.0));
        i.map(|i| st.delays.remove(i).1)
    };
    if let Some(d) = delay {
        tokio::time::sleep(d).await;
    }
    let reply = route(&inner, &method, &path, bearer.as_deref(), &body).await;
    if reply.status >= 300 || reply.status == 0 {
        // shows up in the failing test's captured output
        eprintln!(
            "fake-tenancy: {method} {path} -> {} {}: {}",
            reply.status,
            reply.code.as_deref().unwrap_or("-"),
            reply.message.as_deref().unwrap_or("-")
        );
    }
    inner.st().requests.push(RequestRecord {
        method,
        path,
        status: reply.status,
        user_agent: ua,
        code: reply.code.clone(),
        message: reply.message.clone(),
    });
    if reply.status == 0 {
        // injected: hyper aborts the connection when the service fails
        return Err(std::io::Error::other("injected connection drop"));
    }
    let offset = inner.st().clock_offset_s;
    let mut b = Response::builder()
        .status(reply.status)
        .header("date", http_date(now_unix() + offset));
    for (k, v) in &reply.headers {
        b = b.header(*k, v);
    }
    Ok(b.body(Full::new(Bytes::from(reply.body)))
        .expect("response"))
}

enum Endpoint {
    Package { version: String, arch: String },
    Checkin,
    Diagnostics,
    Bundle { env: String, sha: String },
    Lease,
    Report,
}

fn endpoint(method: &str, path: &str) -> Result<Endpoint, Reply> {
    let (want, ep) = match path {
        "/v1/agent/checkin" => ("POST", Endpoint::Checkin),
        "/v1/agent/lease" => ("POST", Endpoint::Lease),
        "/v1/agent/report" => ("POST", Endpoint::Report),
        "/v1/agent/diagnostics" => ("POST", Endpoint::Diagnostics),
        p if p.starts_with("/v1/agent/package/") => {
            let parts: Vec<&str> = p["/v1/agent/package/".len()..].split('/').collect();
            if parts.len() != 2 || parts[0].is_empty() || parts[1].is_empty() {
                return Err(Reply::error(404, "NOT_FOUND", format!("no route {p}")));
            }
            (
                "GET",
                Endpoint::Package {
                    version: parts[0].to_string(),
                    arch: parts[1].to_string(),
                },
            )
        }
        p => match p.strip_prefix("/v1/agent/bundle/") {
            Some(rest) => {
                let parts: Vec<&str> = rest.split('/').collect();
                if parts.len() != 2 || parts[0].is_empty() || parts[1].is_empty() {
                    return Err(Reply::error(404, "NOT_FOUND", format!("no route {p}")));
                }
                (
                    "GET",
                    Endpoint::Bundle {
                        env: parts[0].to_string(),
                        sha: parts[1].to_string(),
                    },
                )
            }
            None => return Err(Reply::error(404, "NOT_FOUND", format!("no route {p}"))),
        },
    };
    if method != want {
        return Err(
            Reply::error(405, "METHOD_NOT_ALLOWED", format!("{path} takes {want}"))
                .header("allow", want.to_string()),
        );
    }
    Ok(ep)
}

/// The token's `meta.env_id`, after checking it is alive and not superseded.
async fn authenticate(inner: &Inner, bearer: Option<&str>) -> Result<String, Reply> {
    let Some(token) = bearer.filter(|t| !t.is_empty()) else {
        return Err(unauthenticated("missing bearer token"));
    };
    let r = request(
        &inner.bao_addr,
        "POST",
        "/v1/auth/token/lookup",
        Some(&inner.bao_root_token),
        Some(&json!({ "token": token })),
    )
    .await
    .map_err(|e| Reply::error(503, "UPSTREAM_UNAVAILABLE", format!("openbao: {e}")))?;
    if r.status != 200 {
        return Err(unauthenticated("token unknown or expired"));
    }
    let v = r.json();
    let meta = &v["data"]["meta"];
    let Some(env_id) = meta["env_id"].as_str() else {
        return Err(unauthenticated("token carries no env_id"));
    };
    if let Some(jti) = meta["grant_jti"].as_str() {
        if inner.st().superseded.contains(jti) {
            return Err(unauthenticated(
                "the grant this token came from was superseded (kit re-revealed)",
            ));
        }
    }
    Ok(env_id.to_string())
}

async fn route(
    inner: &Inner,
    method: &str,
    path: &str,
    bearer: Option<&str>,
    body: &[u8],
) -> Reply {
    // one-shot faults win over everything
    {
        let mut st = inner.st();
        if let Some(i) = st.faults.iter().position(|f| path.starts_with(&f.prefix)) {
            let f = st.faults.remove(i);
            let r = Reply::error(f.status, &f.code, "injected fault");
            return if f.status == 429 {
                r.header("retry-after", "60".into())
            } else {
                r
            };
        }
    }
    let ep = match endpoint(method, path) {
        Ok(ep) => ep,
        Err(r) => return r,
    };
    let token_env = match authenticate(inner, bearer).await {
        Ok(e) => e,
        Err(r) => return r,
    };
    match ep {
        Endpoint::Package { version, arch } => {
            match inner.st().packages.get(&(version.clone(), arch.clone())) {
                Some(b) => Reply {
                    status: 200,
                    code: None,
                    message: None,
                    headers: vec![(
                        "content-type",
                        "application/vnd.debian.binary-package".into(),
                    )],
                    body: b.clone(),
                },
                None => Reply::error(
                    404,
                    "NOT_FOUND",
                    format!("no agent package {version} for {arch}"),
                ),
            }
        }
        Endpoint::Bundle { env, sha } => bundle(inner, &token_env, &env, &sha),
        Endpoint::Checkin => {
            let v = match parse(body, CHECKIN) {
                Ok(v) => v,
                Err(r) => return r,
            };
            if let Err(r) = env_check(&token_env, &v) {
                return r;
            }
            checkin(inner, v)
        }
        Endpoint::Diagnostics => {
            if body.len() > 1 << 20 {
                return Reply::error(413, "TOO_LARGE", "a diagnostics body is at most 1 MiB");
            }
            let v = match parse(body, DIAGNOSTICS) {
                Ok(v) => v,
                Err(r) => return r,
            };
            if let Err(r) = env_check(&token_env, &v) {
                return r;
            }
            diagnostics(inner, v)
        }
        Endpoint::Lease => {
            let v = match parse(body, LEASE) {
                Ok(v) => v,
                Err(r) => return r,
            };
            if let Err(r) = env_check(&token_env, &v) {
                return r;
            }
            lease(inner, v)
        }
        Endpoint::Report => {
            let v = match parse(body, REPORT).and_then(|v| report_rules(&v).map(|_| v)) {
                Ok(v) => v,
                Err(r) => return r,
            };
            if let Err(r) = env_check(&token_env, &v) {
                return r;
            }
            inner.st().reports.push(v);
            Reply {
                status: 204,
                code: None,
                message: None,
                headers: Vec::new(),
                body: Vec::new(),
            }
        }
    }
}

fn env_check(token_env: &str, body: &Value) -> Result<(), Reply> {
    let env = body["env_id"].as_str().unwrap_or_default();
    if env != token_env {
        return Err(Reply::error(
            409,
            "AGENT_ENV_MISMATCH",
            format!("token is for {token_env}, request is for {env}"),
        ));
    }
    Ok(())
}

fn checkin(inner: &Inner, v: Value) -> Reply {
    let mut st = inner.st();
    let env = v["env_id"].as_str().unwrap_or_default().to_string();
    let applied = v["applied_sha"].as_str().map(str::to_string);
    st.checkins.push(v);
    let e = st.envs.get(&env);
    let prod = e.map(|e| e.prod).unwrap_or(false);
    let urgent = e.map(|e| e.urgent).unwrap_or(false);
    let desired = e.and_then(|e| e.desired.clone());
    let answer = match e.and_then(|e| e.down) {
        Some(purge) => {
            json!({"action": "down", "desired_sha": null, "prod": prod, "purge_volumes": purge})
        }
        None => {
            let action = match &desired {
                Some(d) if applied.as_deref() != Some(d.as_str()) => "apply",
                _ => "none",
            };
            let mut a = json!({"action": action, "desired_sha": desired, "prod": prod, "purge_volumes": false});
            if urgent {
                a["urgent"] = json!(true);
            }
            if let Some(agent) = e.and_then(|e| e.agent.clone()) {
                a["agent"] = agent;
            }
            a
        }
    };
    let mut answer = answer;
    if let Some(id) = st.collect.get(&env) {
        answer["collect"] = json!(id);
    }
    Reply::json(200, &answer)
}

/// `POST /v1/agent/diagnostics`: the request id must be one tenancy asked this env for; 429
/// while refusing; the upload ends the request.
fn diagnostics(inner: &Inner, v: Value) -> Reply {
    let mut st = inner.st();
    if st.refuse_diagnostics {
        return Reply::error(429, "RATE_LIMITED", "not now").header("retry-after", "600".into());
    }
    let env = v["env_id"].as_str().unwrap_or_default().to_string();
    let id = v["request_id"].as_str().unwrap_or_default();
    if st.collect.get(&env).map(String::as_str) != Some(id) {
        return invalid(format!("request_id {id} was not asked for"));
    }
    if v["collected_at"]
        .as_str()
        .unwrap_or_default()
        .parse::<jiff::Timestamp>()
        .is_err()
    {
        return invalid("collected_at must be RFC 3339");
    }
    st.collect.remove(&env);
    st.diagnostics.push(v);
    Reply {
        status: 204,
        code: None,
        message: None,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 has servers send.
pub fn http_date(unix: i64) -> String {
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(unix.max(0) as u64))
}

fn bundle(inner: &Inner, token_env: &str, env: &str, sha: &str) -> Reply {
    let mut st = inner.st();
    let reply = if env != token_env {
        Reply::error(
            409,
            "AGENT_ENV_MISMATCH",
            format!("token is for {token_env}, bundle URL is for {env}"),
        )
    } else {
        match st.envs.get(env).and_then(|e| e.bundles.get(sha)) {
            None => Reply::error(
                404,
                "BUNDLE_NOT_FOUND",
                format!("no bundle {sha} for {env}"),
            ),
            Some(files) => {
                let mut files = files.clone();
                if st.tamper_content {
                    match files.first_mut() {
                        Some(f) => f.1.extend_from_slice(b"\n# tampered\n"),
                        None => files.push(("tampered".into(), b"x".to_vec())),
                    }
                }
                let out: Vec<Value> = files
                    .iter()
                    .map(|(p, c)| json!({"path": p, "content_b64": B64.encode(c)}))
                    .collect();
                let header_sha = if st.tamper_header {
                    "0".repeat(64)
                } else {
                    sha.to_string()
                };
                let mut body = json!({"env_id": env, "sha": sha, "files": out});
                let statement = st
                    .statements
                    .get(&(env.to_string(), sha.to_string()))
                    .cloned()
                    .or_else(|| {
                        let life = st.auto_statements?;
                        let now = unix_now();
                        Some(bundle_statement(
                            env,
                            sha,
                            bundle_serial(&files),
                            now,
                            now + life.as_secs() as i64,
                        ))
                    });
                // with a statement the keys sign its bytes exactly, else the bare sha (0.3)
                let message = statement.clone().unwrap_or_else(|| sha.as_bytes().to_vec());
                if let Some(b) = &statement {
                    body["statement"] = B64.encode(b).into();
                }
                let sigs = st.raw_signatures.clone().unwrap_or_else(|| {
                    Value::Array(
                        st.release_keys
                            .iter()
                            .map(|(id, seed)| {
                                json!({"key_id": id, "alg": "ed25519", "sig": release_sign_bytes(seed, &message)})
                            })
                            .collect(),
                    )
                });
                if sigs.as_array().map(|a| !a.is_empty()).unwrap_or(true) {
                    body["signatures"] = sigs;
                }
                Reply::json(200, &body).header("x-bundle-sha256", header_sha)
            }
        }
    };
    st.bundle_fetches.push(BundleFetch {
        env_id: env.to_string(),
        sha: sha.to_string(),
        status: reply.status,
    });
    reply
}

fn lease(inner: &Inner, v: Value) -> Reply {
    let mut st = inner.st();
    let env = v["env_id"].as_str().unwrap_or_default().to_string();
    let limit = st.lease_limit;
    let ttl = st.grant_ttl;
    let hour = Duration::from_secs(3600);
    let e = st.envs.entry(env.clone()).or_default();
    while e.lease_times.front().is_some_and(|t| t.elapsed() >= hour) {
        e.lease_times.pop_front();
    }
    if e.lease_times.len() >= limit {
        let wait = e
            .lease_times
            .front()
            .map(|t| hour.saturating_sub(t.elapsed()).as_secs() + 1)
            .unwrap_or(3600);
        return Reply::error(
            429,
            "LEASE_RATE_LIMITED",
            format!("{limit} leases per hour for {env}"),
        )
        .header("retry-after", wait.to_string());
    }
    e.lease_times.push_back(Instant::now());
    let answer = match st.lease_override.clone() {
        Some(o) => o,
        None => {
            let g = inner.signer.mint_grant(&env, ttl);
            let e = st.envs.entry(env.clone()).or_default();
            e.issued.push(g.jti.clone());
            json!({"grant": g.jwt, "jti": g.jti, "expires_at": g.expires_at})
        }
    };
    st.leases.push(v);
    Reply::json(200, &answer)
}

// ---------------------------------------------------------------------------------------------
// Strict validation

#[derive(Clone, Copy)]
enum Kind {
    Str,
    NonEmptyStr,
    StrOrNull,
    Containers,
    OneOf(&'static [&'static str]),
    NumOrNull,
    Object,
    /// May be absent; when present, of the inner kind (PROTOCOL 0.4's optional fields).
    Opt(&'static Kind),
}

type Spec = &'static [(&'static str, Kind)];

const CHECKIN: Spec = &[
    ("env_id", Kind::NonEmptyStr),
    ("agent_version", Kind::NonEmptyStr),
    ("applied_sha", Kind::StrOrNull),
    ("host", Kind::Str),
    ("containers", Kind::Containers),
    ("clock_skew_s", Kind::Opt(&Kind::NumOrNull)),
    ("agent_mode", Kind::Opt(&Kind::OneOf(&["service", "timer"]))),
];
const DIAGNOSTICS: Spec = &[
    ("env_id", Kind::NonEmptyStr),
    ("request_id", Kind::NonEmptyStr),
    ("agent_version", Kind::NonEmptyStr),
    ("collected_at", Kind::NonEmptyStr),
    ("bundle", Kind::Object),
];
const LEASE: Spec = &[("env_id", Kind::NonEmptyStr), ("reason", Kind::NonEmptyStr)];
const REPORT: Spec = &[
    ("env_id", Kind::NonEmptyStr),
    ("sha", Kind::StrOrNull),
    ("result", Kind::OneOf(&["applied", "failed", "down"])),
    ("detail", Kind::Str),
    ("log_tail", Kind::Str),
    ("agent_version", Kind::NonEmptyStr),
    ("containers", Kind::Containers),
];

fn invalid(msg: impl Into<String>) -> Reply {
    Reply::error(400, "INVALID_REQUEST", msg)
}

fn check_kind(name: &str, v: &Value, kind: Kind) -> Result<(), String> {
    match kind {
        Kind::Str if v.is_string() => Ok(()),
        Kind::Str => Err(format!("{name} must be a string")),
        Kind::NonEmptyStr if v.as_str().is_some_and(|s| !s.is_empty()) => Ok(()),
        Kind::NonEmptyStr => Err(format!("{name} must be a non-empty string")),
        Kind::StrOrNull if v.is_string() || v.is_null() => Ok(()),
        Kind::StrOrNull => Err(format!("{name} must be a string or null")),
        Kind::OneOf(allowed) if v.as_str().is_some_and(|s| allowed.contains(&s)) => Ok(()),
        Kind::OneOf(allowed) => Err(format!("{name} must be one of {allowed:?}")),
        Kind::NumOrNull if v.is_number() || v.is_null() => Ok(()),
        Kind::NumOrNull => Err(format!("{name} must be a number or null")),
        Kind::Object if v.is_object() => Ok(()),
        Kind::Object => Err(format!("{name} must be an object")),
        Kind::Opt(inner) => check_kind(name, v, *inner),
        Kind::Containers => {
            let arr = v
                .as_array()
                .ok_or_else(|| format!("{name} must be an array"))?;
            for (i, c) in arr.iter().enumerate() {
                let obj = c
                    .as_object()
                    .ok_or_else(|| format!("{name}[{i}] must be an object"))?;
                for key in obj.keys() {
                    if ![
                        "service",
                        "state",
                        "health",
                        "restarts",
                        "exit_code",
                        "job",
                        "image",
                    ]
                    .contains(&key.as_str())
                    {
                        return Err(format!("{name}[{i}] has unknown field {key}"));
                    }
                }
                // PROTOCOL 0.4: optional restart count, exit code, job flag
                for key in ["restarts", "exit_code"] {
                    if obj.get(key).is_some_and(|v| !v.is_i64() && !v.is_u64()) {
                        return Err(format!("{name}[{i}].{key} must be an integer"));
                    }
                }
                if obj.get("job").is_some_and(|v| !v.is_boolean()) {
                    return Err(format!("{name}[{i}].job must be a boolean"));
                }
                // PROTOCOL 0.5: the running image as name@sha256:<64 hex>
                if let Some(img) = obj.get("image") {
                    let pinned = img
                        .as_str()
                        .and_then(|s| s.rsplit_once("@sha256:"))
                        .is_some_and(|(n, h)| {
                            !n.is_empty()
                                && h.len() == 64
                                && h.bytes().all(|b| b.is_ascii_hexdigit())
                        });
                    if !pinned {
                        return Err(format!("{name}[{i}].image must be name@sha256:<64 hex>"));
                    }
                }
                for key in ["service", "state", "health"] {
                    match obj.get(key) {
                        Some(Value::String(_)) => {}
                        Some(_) => return Err(format!("{name}[{i}].{key} must be a string")),
                        None => return Err(format!("{name}[{i}] lacks {key}")),
                    }
                }
            }
            Ok(())
        }
    }
}

/// Parses a JSON object with exactly the fields of `spec`, each of its kind.
fn parse(body: &[u8], spec: Spec) -> Result<Value, Reply> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| invalid(format!("body is not JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| invalid("body must be a JSON object"))?;
    for key in obj.keys() {
        if !spec.iter().any(|(n, _)| n == key) {
            return Err(invalid(format!("unknown field {key}")));
        }
    }
    for (name, kind) in spec {
        let field = match obj.get(*name) {
            Some(f) => f,
            None if matches!(kind, Kind::Opt(_)) => continue,
            None => return Err(invalid(format!("missing field {name}"))),
        };
        check_kind(name, field, *kind).map_err(invalid)?;
    }
    Ok(v)
}

/// PROTOCOL §4: `detail` ≤ 900 characters and, on failure, starting with a refusal code
/// (`CODE` or `CODE: …`); `log_tail` ≤ 16 KiB.
fn report_rules(v: &Value) -> Result<(), Reply> {
    let detail = v["detail"].as_str().unwrap_or_default();
    if detail.chars().count() > 900 {
        return Err(invalid("detail is longer than 900 characters"));
    }
    if v["log_tail"].as_str().unwrap_or_default().len() > 16 * 1024 {
        return Err(invalid("log_tail is longer than 16 KiB"));
    }
    if v["result"] == "failed" {
        let code: String = detail
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        let rest = &detail[code.len()..];
        let code_ok = code.len() >= 2 && code.starts_with(|c: char| c.is_ascii_uppercase());
        if !code_ok || !(rest.is_empty() || rest.starts_with(':')) {
            return Err(invalid(
                "a failed report's detail must start with its code (CODE: …)",
            ));
        }
    }
    Ok(())
}

/// The release pipeline's signature over a bundle sha: Ed25519 over its 64 lowercase hex ASCII
/// bytes, base64 (PROTOCOL 0.3).
pub fn release_sign(seed: &[u8; 32], sha: &str) -> String {
    release_sign_bytes(seed, sha.to_ascii_lowercase().as_bytes())
}

/// An Ed25519 signature (base64) over `msg` exactly: a release statement's bytes.
pub fn release_sign_bytes(seed: &[u8; 32], msg: &[u8]) -> String {
    use ed25519_dalek::Signer;
    let k = ed25519_dalek::SigningKey::from_bytes(seed);
    B64.encode(k.sign(msg).to_bytes())
}

/// A bundle release statement (PROTOCOL 0.5) as a pipeline renders it: compact JSON.
pub fn bundle_statement(
    env: &str,
    sha: &str,
    serial: u64,
    issued_at: i64,
    expires_at: i64,
) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "kind": "monky-bundle/1",
        "env_id": env,
        "sha": sha,
        "serial": serial,
        "issued_at": rfc3339(issued_at),
        "expires_at": rfc3339(expires_at),
    }))
    .expect("json")
}

/// An agent package release statement (PROTOCOL 0.5).
pub fn agent_statement(
    version: &str,
    arch: &str,
    sha256: &str,
    issued_at: i64,
    expires_at: i64,
) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "kind": "monky-agent/1",
        "version": version,
        "arch": arch,
        "sha256": sha256,
        "issued_at": rfc3339(issued_at),
        "expires_at": rfc3339(expires_at),
    }))
    .expect("json")
}

fn rfc3339(unix: i64) -> String {
    jiff::Timestamp::from_second(unix.max(0))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `serial` of a bundle's bundle.json (0 when it has none).
fn bundle_serial(files: &[(String, Vec<u8>)]) -> u64 {
    files
        .iter()
        .find(|(p, _)| p == "bundle.json")
        .and_then(|(_, c)| serde_json::from_slice::<Value>(c).ok())
        .and_then(|v| v["serial"].as_u64())
        .unwrap_or(0)
}

/// The public half of a release key, as a box's `bundle_signing_keys` holds it (base64).
pub fn release_public_key(seed: &[u8; 32]) -> String {
    B64.encode(
        ed25519_dalek::SigningKey::from_bytes(seed)
            .verifying_key()
            .as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_validation() {
        let ok = br#"{"env_id":"e","agent_version":"0.2.0","applied_sha":null,"host":"h","containers":[{"service":"web","state":"running","health":"healthy"}]}"#;
        assert!(parse(ok, CHECKIN).is_ok());
        let missing = br#"{"env_id":"e","agent_version":"0.2.0","host":"h","containers":[]}"#;
        assert_eq!(parse(missing, CHECKIN).unwrap_err().status, 400);
        let extra = br#"{"env_id":"e","agent_version":"0.2.0","applied_sha":null,"host":"h","containers":[],"x":1}"#;
        assert_eq!(parse(extra, CHECKIN).unwrap_err().status, 400);
        let typed =
            br#"{"env_id":"e","agent_version":"0.2.0","applied_sha":1,"host":"h","containers":[]}"#;
        assert_eq!(parse(typed, CHECKIN).unwrap_err().status, 400);
        let bad_container = br#"{"env_id":"e","agent_version":"0.2.0","applied_sha":null,"host":"h","containers":[{"service":"web"}]}"#;
        assert_eq!(parse(bad_container, CHECKIN).unwrap_err().status, 400);
        // PROTOCOL 0.4: clock_skew_s and agent_mode may be there, each of its kind
        let skew = br#"{"env_id":"e","agent_version":"0.4.0","applied_sha":null,"host":"h","containers":[],"clock_skew_s":-240,"agent_mode":"timer"}"#;
        assert!(parse(skew, CHECKIN).is_ok());
        let unknown = br#"{"env_id":"e","agent_version":"0.4.0","applied_sha":null,"host":"h","containers":[],"clock_skew_s":null}"#;
        assert!(parse(unknown, CHECKIN).is_ok());
        let bad_skew = br#"{"env_id":"e","agent_version":"0.4.0","applied_sha":null,"host":"h","containers":[],"clock_skew_s":"4m"}"#;
        assert_eq!(parse(bad_skew, CHECKIN).unwrap_err().status, 400);
        let bad_mode = br#"{"env_id":"e","agent_version":"0.4.0","applied_sha":null,"host":"h","containers":[],"agent_mode":"cron"}"#;
        assert_eq!(parse(bad_mode, CHECKIN).unwrap_err().status, 400);
        let diag = br#"{"env_id":"e","request_id":"r1","agent_version":"0.4.0","collected_at":"2026-12-04T08:00:00Z","bundle":{}}"#;
        assert!(parse(diag, DIAGNOSTICS).is_ok());
        let no_bundle = br#"{"env_id":"e","request_id":"r1","agent_version":"0.4.0","collected_at":"2026-12-04T08:00:00Z","bundle":"x"}"#;
        assert_eq!(parse(no_bundle, DIAGNOSTICS).unwrap_err().status, 400);
    }

    #[test]
    fn http_dates_are_imf_fixdate() {
        assert_eq!(http_date(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(1_835_438_400), "Tue, 29 Feb 2028 12:00:00 GMT");
    }

    #[test]
    fn report_rules_pin_detail_shape() {
        let mk = |result: &str, detail: &str| json!({"env_id":"e","sha":null,"result":result,"detail":detail,"log_tail":"","agent_version":"0.2.0","containers":[]});
        assert!(report_rules(&mk(
            "failed",
            "PRIVILEGED_REFUSED: service api sets privileged"
        ))
        .is_ok());
        assert!(report_rules(&mk("failed", "ENV_INCOMPLETE")).is_ok());
        assert!(report_rules(&mk("failed", "compose failed")).is_err());
        assert!(report_rules(&mk("failed", "")).is_err());
        assert!(report_rules(&mk("applied", "")).is_ok());
        assert!(report_rules(&mk("applied", &"x".repeat(901))).is_err());
    }
}

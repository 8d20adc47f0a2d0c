//! The SDK's egress (PROTOCOL "Egress proxy"): tlsuv's global connector, which every socket the
//! SDK opens goes through (the controller's HTTP clients, the edge routers' TLS streams), is
//! set once per process before the SDK starts: tlsuv's direct connector when there is no proxy,
//! else a dispatching connector of ours that hands each target matched by `no_proxy` to the
//! direct connector and every other one to tlsuv's HTTP `CONNECT` connector (Basic auth when
//! credentials exist). Setting it explicitly also keeps tlsuv from reading `HTTP_PROXY` itself
//! (it would route by it and log the whole URL, password included).
//!
//! A proxy that refuses a `CONNECT` reaches the SDK only as `ECONNREFUSED`; when a load or an
//! enrolment fails, [`proxy_verdict`] asks the proxy itself what it answers, for the message.

use std::ffi::c_void;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::raw::{c_char, c_int};

use zeroize::Zeroizing;
use ziti_sys::tlsuv::{self, tlsuv_connect_cb, tlsuv_connector_req, tlsuv_connector_t};

use super::*;
use crate::egress::{authority, Egress, ProxyRoute};

/// `UV_ENOTSUP` (libuv's codes are negated errnos on Unix).
const UV_ENOTSUP: c_int = -libc::ENOTSUP;
/// tlsuv formats `user:password` into a 256-byte buffer before encoding it.
const MAX_BASIC_PAIR: usize = 255;
/// Bound on each step of [`proxy_verdict`]'s probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// What this process installed, for `describe` and to warn about a different second request.
static INSTALLED: OnceLock<String> = OnceLock::new();
/// Held while installing, so two first starts on two threads install once.
static INSTALLING: Mutex<()> = Mutex::new(());

/// Install tlsuv's global connector for `egress`; once per process, before `Ziti_lib_init`
/// (tlsuv streams take the global connector when they are made). A later call with another
/// route changes nothing and says so.
pub(super) fn install(egress: &Egress) -> Result<(), TransportError> {
    let wanted = describe(egress);
    let _one = lock(&INSTALLING);
    if let Some(done) = INSTALLED.get() {
        if *done != wanted {
            tracing::warn!(
                "ziti: egress already set for this process ({done}); {wanted} takes effect at the next start"
            );
        }
        return Ok(());
    }
    // SAFETY: NULL selects tlsuv's static direct connector; no SDK thread runs yet (the caller
    // runs before `Ziti_lib_init`), so nothing reads the global concurrently.
    unsafe { tlsuv::tlsuv_set_global_connector(std::ptr::null()) };
    // SAFETY: the global is set (above), so tlsuv's one-time init reads no environment and
    // this returns the static direct connector (or NULL in a build without an SDK).
    let direct = unsafe { tlsuv::tlsuv_global_connector() };
    // ours even without a proxy: every target the SDK connects to (the controllers, the edge
    // routers the controller names) is recorded for the box's dependencies (host::depends)
    if ziti_sys::LINKED {
        let proxy = match egress.proxy() {
            Some(route) => proxy_connector(route)?,
            None => std::ptr::null_mut(),
        };
        let d: &'static Dispatch = Box::leak(Box::new(Dispatch {
            base: tlsuv_connector_t {
                connect: Some(dispatch_connect),
                set_auth: Some(dispatch_set_auth),
                cancel: Some(dispatch_cancel),
                free: Some(dispatch_free),
            },
            direct,
            proxy,
            egress: egress.clone(),
        }));
        // SAFETY: `d` is leaked, so it outlives every client that keeps it; its first field
        // is the C struct (repr(C)), so the pointer is a valid `tlsuv_connector_t`.
        unsafe { tlsuv::tlsuv_set_global_connector(&d.base) };
    }
    let _ = INSTALLED.set(wanted.clone());
    tracing::debug!("ziti: egress {wanted}");
    Ok(())
}

/// The egress installed in this process, if any: `direct`, or `via http://p:3128 …`.
pub(super) fn installed() -> Option<&'static str> {
    INSTALLED.get().map(String::as_str)
}

fn describe(egress: &Egress) -> String {
    match egress.proxy() {
        None => "direct".into(),
        Some(p) => format!(
            "via {}{}{}",
            p.shown(),
            if p.credentials.is_some() {
                " (Basic auth)"
            } else {
                ""
            },
            if egress.no_proxy().is_empty() {
                ""
            } else {
                ", no_proxy targets direct"
            }
        ),
    }
}

/// tlsuv's `CONNECT` connector for `route`, with Basic auth when it has credentials.
fn proxy_connector(route: &ProxyRoute) -> Result<*mut tlsuv_connector_t, TransportError> {
    let shown = route.shown();
    let bad = |why: &str| TransportError::setup(format!("egress_proxy {shown}: {why}"));
    let host = CString::new(route.host.as_str()).map_err(|_| bad("host contains NUL"))?;
    let port = CString::new(route.port.to_string()).expect("digits");
    // the user and our copy of the password (wiped when it drops; tlsuv keeps only the encoded
    // header), checked before tlsuv sees them
    let auth = match &route.credentials {
        None => None,
        Some(cred) => {
            if cred.user.len() + 1 + cred.password.len() > MAX_BASIC_PAIR {
                return Err(bad(&format!(
                    "credentials longer than the SDK's limit ({MAX_BASIC_PAIR} bytes for \
                     user:password)"
                )));
            }
            let user =
                CString::new(cred.user.as_str()).map_err(|_| bad("credentials contain NUL"))?;
            let mut pw = Zeroizing::new(Vec::with_capacity(cred.password.len() + 1));
            pw.extend_from_slice(cred.password.as_bytes());
            if pw.contains(&0) {
                return Err(bad("credentials contain NUL"));
            }
            pw.push(0);
            Some((user, pw))
        }
    };
    // SAFETY: both strings are valid NUL-terminated and copied by tlsuv.
    let c = unsafe {
        tlsuv::tlsuv_new_proxy_connector(tlsuv::PROXY_HTTP, host.as_ptr(), port.as_ptr())
    };
    if c.is_null() {
        return Err(bad("the SDK made no proxy connector"));
    }
    let Some((user, pw)) = auth else {
        return Ok(c);
    };
    // SAFETY: `c` is the connector just made; tlsuv's proxy connector fills every pointer.
    let (set_auth, free) = unsafe { ((*c).set_auth, (*c).free) };
    let Some(set_auth) = set_auth else {
        if let Some(free) = free {
            // SAFETY: `c` is ours, never handed to tlsuv's global; freed once, not used after.
            unsafe { free(c.cast()) };
        }
        return Err(bad("the SDK's proxy connector cannot carry credentials"));
    };
    // SAFETY: `c` is a live proxy connector; user and password are NUL-terminated and only read
    // during the call.
    let rc = unsafe {
        set_auth(
            c,
            tlsuv::PROXY_BASIC,
            user.as_ptr(),
            pw.as_ptr().cast::<c_char>(),
        )
    };
    if rc != 0 {
        if let Some(free) = free {
            // SAFETY: `c` is ours, never handed to tlsuv's global; freed once, not used after.
            unsafe { free(c.cast()) };
        }
        return Err(bad(&format!("credentials not accepted by the SDK ({rc})")));
    }
    Ok(c)
}

/// Our connector: the C struct first, so a pointer to it is a `tlsuv_connector_t *`.
#[repr(C)]
struct Dispatch {
    base: tlsuv_connector_t,
    direct: *const tlsuv_connector_t,
    /// Null when there is no proxy: every target goes direct.
    proxy: *mut tlsuv_connector_t,
    egress: Egress,
}

/// One request in flight: which inner connector made it (for `cancel`), and the caller's
/// callback, called through [`relay`], which frees this.
struct Request {
    inner: *const tlsuv_connector_t,
    req: tlsuv_connector_req,
    cb: tlsuv_connect_cb,
    ctx: *mut c_void,
    /// `host:port`, when it went to the proxy.
    proxied: Option<String>,
    /// The route, to ask the proxy why when it failed.
    egress: &'static Egress,
}

/// The last target a proxied connect failed for (the SDK learns only "refused"), so a dial
/// that then fails can ask the proxy why; taken by [`take_refused`].
static REFUSED: Mutex<Option<String>> = Mutex::new(None);

/// The first time a proxied connect to `target` fails in this process, ask the proxy why on a
/// thread of its own (never on the SDK's loop) and log its answer: the SDK retries edge routers
/// until the caller's time-out, whose message cannot name the proxy.
fn explain_once(egress: &'static Egress, target: &str) {
    static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());
    {
        let mut seen = lock(&SEEN);
        if seen.iter().any(|s| s == target) {
            return;
        }
        seen.push(target.to_string());
    }
    let url = format!("tcp://{target}");
    let _ = std::thread::Builder::new()
        .name("ziti-proxy-probe".into())
        .spawn(move || {
            if let Some(v) = proxy_verdict(egress, &url).filter(|v| v.fault) {
                tracing::warn!("ziti: {}", v.text);
            }
        });
}

/// The last target the proxy failed to connect, if any since the last call.
pub(super) fn take_refused() -> Option<String> {
    lock(&REFUSED).take()
}

/// The targets the SDK connected to in this process, each once (a box knows a handful).
static DIALLED: Mutex<Vec<(String, u16)>> = Mutex::new(Vec::new());

fn record_dialled(host: &str, port: u16) {
    let mut v = lock(&DIALLED);
    if !v.iter().any(|(h, p)| h == host && *p == port) && v.len() < 256 {
        v.push((host.to_ascii_lowercase(), port));
    }
}

/// Every target the SDK has connected to in this process: the controllers and edge routers.
pub(super) fn dialled() -> Vec<(String, u16)> {
    lock(&DIALLED).clone()
}

/// Whether `host` goes through the proxy: `no_proxy` decides, as for the `system` transport.
fn proxied(egress: &Egress, host: &str) -> bool {
    egress.route(host).is_some()
}

unsafe extern "C" fn dispatch_connect(
    loop_: *mut c_void,
    this: *const tlsuv_connector_t,
    host: *const c_char,
    port: *const c_char,
    cb: tlsuv_connect_cb,
    ctx: *mut c_void,
) -> tlsuv_connector_req {
    // a panic here would abort the agent: what cannot be dialled fails the one request
    if this.is_null() || host.is_null() || port.is_null() {
        tracing::error!("ziti: a connect without a connector, host or port; refused");
        return fail_now(cb, ctx);
    }
    // SAFETY: tlsuv passes back the connector it was given, which is our leaked `Dispatch`.
    let d = unsafe { &*this.cast::<Dispatch>() };
    // SAFETY: tlsuv passes NUL-terminated host and port strings, valid during the call.
    let h = unsafe { CStr::from_ptr(host) }.to_string_lossy();
    // SAFETY: as `host`.
    let p = unsafe { CStr::from_ptr(port) }.to_string_lossy();
    if let Ok(port) = p.parse::<u16>() {
        record_dialled(&h, port);
    }
    let via_proxy = !d.proxy.is_null() && proxied(&d.egress, &h);
    let inner: *const tlsuv_connector_t = if via_proxy { d.proxy } else { d.direct };
    let target = authority(&h, &p);
    tracing::debug!(
        "ziti: connect {target} {}",
        if via_proxy { "via the proxy" } else { "direct" }
    );
    let r = Box::into_raw(Box::new(Request {
        inner,
        req: std::ptr::null(),
        cb,
        ctx,
        proxied: via_proxy.then_some(target),
        egress: &d.egress,
    }));
    // SAFETY: `inner` is one of tlsuv's two live connectors (non-null: checked when built).
    let Some(connect) = (unsafe { (*inner).connect }) else {
        // SAFETY: `r` was made above and handed to no one.
        drop(unsafe { Box::from_raw(r) });
        tracing::error!("ziti: the SDK's connector has no connect function; {h}:{p} refused");
        return fail_now(cb, ctx);
    };
    // SAFETY: tlsuv's connectors call `relay` once, later on the loop thread (never before
    // returning), with `r` as its context; the strings are only read or copied during the call.
    let req = unsafe { connect(loop_, inner, host, port, Some(relay), r.cast()) };
    // SAFETY: `r` is live until `relay` runs, which is not before this returns (above).
    unsafe { (*r).req = req };
    r.cast_const().cast()
}

/// A request that cannot start: its callback gets `EINVAL` at once, and there is nothing to
/// cancel. Only reached on input tlsuv never gives.
fn fail_now(cb: tlsuv_connect_cb, ctx: *mut c_void) -> tlsuv_connector_req {
    if let Some(cb) = cb {
        // SAFETY: the caller's own callback and context, called once.
        unsafe { cb(-1, -libc::EINVAL, ctx) };
    }
    std::ptr::null()
}

/// The inner connector's callback: hand the socket (or status) to the caller, then free the
/// request (tlsuv's callers never cancel after their callback ran).
unsafe extern "C" fn relay(sock: c_int, status: c_int, ctx: *mut c_void) {
    // SAFETY: `ctx` is the `Request` `dispatch_connect` leaked; this is its one callback.
    let r = unsafe { Box::from_raw(ctx.cast::<Request>()) };
    if status < 0 && status != -libc::ECANCELED {
        if let Some(t) = &r.proxied {
            *lock(&REFUSED) = Some(t.clone());
            explain_once(r.egress, t);
        }
    }
    if let Some(cb) = r.cb {
        // SAFETY: the caller's own callback and context, called once as tlsuv would.
        unsafe { cb(sock, status, r.ctx) };
    }
}

unsafe extern "C" fn dispatch_cancel(req: tlsuv_connector_req) {
    // SAFETY: `req` is what `dispatch_connect` returned, live until its callback ran.
    let r = unsafe { &*req.cast::<Request>() };
    // SAFETY: the connector that made the request; cancel makes it call back (with an error).
    if let Some(cancel) = unsafe { (*r.inner).cancel } {
        // SAFETY: `r.req` is that connector's own request.
        unsafe { cancel(r.req) };
    }
}

unsafe extern "C" fn dispatch_set_auth(
    _this: *mut tlsuv_connector_t,
    _auth: c_int,
    _user: *const c_char,
    _password: *const c_char,
) -> c_int {
    UV_ENOTSUP
}

/// Ours lives as long as the process (the global connector is never replaced): as tlsuv's
/// direct one, `free` does nothing.
unsafe extern "C" fn dispatch_free(_this: *mut c_void) {}

/// What the proxy on the way to a target said when asked directly.
pub(super) struct Verdict {
    /// The proxy is down or refused: not the target's fault.
    pub(super) fault: bool,
    /// One sentence naming the proxy (never its credentials).
    pub(super) text: String,
}

/// `e` with the proxy's [`Verdict`] appended; a proxy at fault makes it a temporary failure
/// (75) whatever class the SDK's code gave it.
pub(super) fn classify(e: TransportError, verdict: Option<Verdict>) -> TransportError {
    let Some(v) = verdict else { return e };
    match e {
        TransportError::Setup { msg, source } if !v.fault => TransportError::Setup {
            msg: format!("{msg}; {}", v.text),
            source,
        },
        TransportError::Unreachable { msg, source } | TransportError::Setup { msg, source } => {
            TransportError::Unreachable {
                msg: format!("{msg}; {}", v.text),
                source,
            }
        }
    }
}

/// What the proxy on the way to `url`'s host says, when it is the route: `None` when the
/// target goes direct, else whether it is down, refusing (its status line), or letting the
/// `CONNECT` through. One blocking probe of at most a few seconds: call off the runtime.
pub(super) fn proxy_verdict(egress: &Egress, url: &str) -> Option<Verdict> {
    probe(egress, url).map(|(fault, text)| Verdict { fault, text })
}

fn probe(egress: &Egress, url: &str) -> Option<(bool, String)> {
    let (host, port) = host_port(url)?;
    let route = egress.route(&host)?;
    let shown = route.shown();
    let target = authority(&host, port);
    let addrs = match (route.host.as_str(), route.port).to_socket_addrs() {
        Ok(a) => a.collect::<Vec<_>>(),
        Err(e) => return Some((true, format!("proxy {shown} does not resolve ({e})"))),
    };
    let mut last = None;
    let mut s = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, PROBE_TIMEOUT) {
            Ok(c) => {
                s = Some(c);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let Some(mut s) = s else {
        return Some((
            true,
            format!(
                "proxy {shown} is down ({})",
                last.map(|e| e.to_string())
                    .unwrap_or_else(|| "no address".into())
            ),
        ));
    };
    let _ = s.set_read_timeout(Some(PROBE_TIMEOUT));
    let _ = s.set_write_timeout(Some(PROBE_TIMEOUT));
    let auth = route
        .credentials
        .as_ref()
        .map(|c| Zeroizing::new(format!("Proxy-Authorization: {}\r\n", *c.basic_header())))
        .unwrap_or_default();
    let req = Zeroizing::new(format!(
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n{}\r\n",
        *auth
    ));
    if let Err(e) = s.write_all(req.as_bytes()) {
        return Some((true, format!("proxy {shown} dropped the connection ({e})")));
    }
    let mut buf = [0u8; 512];
    let n = match s.read(&mut buf) {
        Ok(0) => {
            let text = format!("proxy {shown} closed the connection without an answer");
            return Some((true, text));
        }
        Ok(n) => n,
        Err(e) => {
            let text = format!("proxy {shown} did not answer CONNECT {target} ({e})");
            return Some((true, text));
        }
    };
    let text = String::from_utf8_lossy(&buf[..n]);
    let status = text.lines().next().unwrap_or_default();
    let code = status.split_whitespace().nth(1).unwrap_or_default();
    let printable: String = status
        .chars()
        .filter(|c| !c.is_control())
        .take(120)
        .collect();
    Some(if code == "200" {
        (
            false,
            format!("proxy {shown} lets CONNECT {target} through"),
        )
    } else {
        (
            true,
            format!("proxy {shown} refused CONNECT {target}: {printable}"),
        )
    })
}

/// `https://host:port[/…]` → (host, port); 443 when the URL has none.
pub(super) fn host_port(url: &str) -> Option<(String, u16)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let hp = rest.split(['/', '?', '#']).next()?;
    let hp = hp.rsplit_once('@').map_or(hp, |(_, h)| h);
    crate::egress::split_host_port(hp, 443).ok()
}

/// Why the controller of an identity file is not known.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("{0}")]
    Identity(String),
    #[error("{0}: not a URL")]
    NotUrl(String),
}

/// The controller an identity file names (`ztAPI`), as host and port.
pub fn controller_address(identity: &Path) -> Result<(String, u16), ControllerError> {
    let controller = check_identity(identity)
        .map_err(|e| ControllerError::Identity(e.to_string()))?
        .controller;
    host_port(&controller).ok_or(ControllerError::NotUrl(controller))
}

#[cfg(test)]
mod tests;

//! `sdk` transport: dial Ziti services by name from inside this process, through the OpenZiti C
//! SDK (zitilib, 1.x) that `ziti-sys` linked — or none: then start-up fails with a message saying
//! how to get one.
//!
//! Owns the SDK's process-wide state: `Ziti_lib_init` once; each identity file loaded once per
//! process on its own thread with `Ziti_load_context_with_timeout` (started when the connector is
//! made, awaited by the first dial, so the load overlaps the tick's local work); every blocking
//! zitilib call (`Ziti_socket`, `Ziti_connect`, loading, enrolment) runs on a plain thread, never
//! on the async runtime, and `Ziti_last_error` is read on the thread that made the call. A dial
//! yields the SDK's loopback TCP socket, connected without blocking; the stream closes through
//! `Ziti_close`, falling back to `close(2)` for the sockets the SDK does not track.
//!
//! Typed errors: what an operator must fix is [`TransportError::Setup`] (exit 1), what the next
//! tick may find healed is [`TransportError::Unreachable`] (exit 75).

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Mutex, Once, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;
use ziti_sys::codes::*;

use super::{Endpoint, TransportError};

/// Largest identity file accepted (a 4096-bit RSA identity with its CA bundle is ~12 KiB).
const MAX_IDENTITY_BYTES: u64 = 1 << 20;
/// Largest enrolment JWT accepted.
const MAX_JWT_BYTES: u64 = 64 << 10;
/// Bound on `Ziti_enroll_identity` (a network round trip plus key generation).
const ENROLL_TIMEOUT: Duration = Duration::from_secs(60);
/// Beyond the SDK's own load time-out: the hop back from the loader thread.
const LOAD_MARGIN: Duration = Duration::from_secs(2);
/// Dials the SDK's bridge refused before anything was sent are retried this often in all.
const DIAL_ATTEMPTS: usize = 3;

/// Version of the linked C SDK (e.g. `1.18.2`), if any.
pub fn sdk_version() -> Option<String> {
    if !ziti_sys::LINKED {
        return None;
    }
    // SAFETY: ziti_get_version returns a pointer to a static struct of static C strings.
    unsafe {
        let v = ziti_sys::ziti_get_version();
        if v.is_null() || (*v).version.is_null() {
            return Some("unknown".into());
        }
        Some(CStr::from_ptr((*v).version).to_string_lossy().into_owned())
    }
}

fn no_sdk(what: &str) -> TransportError {
    TransportError::Setup(format!(
        "{what}: this build of monky-deployd has no OpenZiti SDK linked; {}",
        ziti_sys::HOW_TO_GET
    ))
}

/// The SDK's text for a zitilib error code, or the OS text for an errno.
fn errorstr(code: i32) -> String {
    if code > 0 {
        return io::Error::from_raw_os_error(code).to_string();
    }
    // SAFETY: ziti_errorstr returns a static string for any code.
    unsafe {
        let p = ziti_sys::ziti_errorstr(code);
        if p.is_null() {
            return format!("error {code}");
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

fn lib_init() {
    static INIT: Once = Once::new();
    // SAFETY: called once per process, before any other zitilib call.
    INIT.call_once(|| unsafe { ziti_sys::Ziti_lib_init() });
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The parts of an identity file that are checked before the SDK sees it.
#[derive(Clone)]
struct IdentityInfo {
    controller: String,
}

/// Read and sanity-check an identity file, so a missing or corrupt one is a clear Setup error
/// naming the file rather than whatever the SDK makes of it.
fn check_identity(path: &Path) -> Result<IdentityInfo, TransportError> {
    let p = path.display();
    let meta = fs::metadata(path)
        .map_err(|e| TransportError::Setup(format!("ziti identity {p}: cannot read: {e}")))?;
    if meta.len() > MAX_IDENTITY_BYTES {
        return Err(TransportError::Setup(format!(
            "ziti identity {p}: {} bytes, larger than any identity ({MAX_IDENTITY_BYTES} max)",
            meta.len()
        )));
    }
    let text = fs::read(path)
        .map_err(|e| TransportError::Setup(format!("ziti identity {p}: cannot read: {e}")))?;
    let v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        TransportError::Setup(format!(
            "ziti identity {p} is not valid JSON ({e}); re-enrol with `monky-deployd enroll`"
        ))
    })?;
    let controller = v
        .get("ztAPI")
        .and_then(|x| x.as_str())
        .unwrap_or_default()
        .to_string();
    let id = v.get("id");
    // Each of cert/key/ca is inline PEM ("pem:-----BEGIN …" or bare) or a file reference.
    let field = |k: &str| {
        id.and_then(|i| i.get(k))
            .and_then(|x| x.as_str())
            .is_some_and(|s| s.contains("-----BEGIN ") || s.starts_with("file:"))
    };
    let missing: Vec<&str> = [
        ("ztAPI", !controller.is_empty()),
        ("id.cert", field("cert")),
        ("id.key", field("key")),
        ("id.ca", field("ca")),
    ]
    .iter()
    .filter(|(_, ok)| !ok)
    .map(|(k, _)| *k)
    .collect();
    if !missing.is_empty() {
        return Err(TransportError::Setup(format!(
            "ziti identity {p} is not a Ziti identity: missing {}; re-enrol with `monky-deployd enroll`",
            missing.join(", ")
        )));
    }
    Ok(IdentityInfo { controller })
}

/// The identity path as the C string the SDK keeps: its loader thread still reads it after a
/// time-out, and keys its context table by it. One per distinct path per process, never freed.
fn identity_cstr(key: &Path) -> Result<&'static CStr, TransportError> {
    static PATHS: OnceLock<Mutex<HashMap<PathBuf, &'static CStr>>> = OnceLock::new();
    let mut map = lock(PATHS.get_or_init(Default::default));
    if let Some(c) = map.get(key) {
        return Ok(c);
    }
    let c = CString::new(key.as_os_str().as_encoded_bytes()).map_err(|_| {
        TransportError::Setup(format!(
            "ziti identity {}: path contains NUL",
            key.display()
        ))
    })?;
    let c: &'static CStr = Box::leak(c.into_boxed_c_str());
    map.insert(key.to_path_buf(), c);
    Ok(c)
}

/// `None` while loading, then the handle or the zitilib code.
type LoadState = Option<Result<ziti_sys::ziti_handle_t, i32>>;

/// Start loading `key` unless a load of it is under way or done; a failed load is started anew.
fn start_load(
    key: &Path,
    cpath: &'static CStr,
    timeout: Duration,
) -> Result<watch::Receiver<LoadState>, TransportError> {
    static LOADS: OnceLock<Mutex<HashMap<PathBuf, watch::Receiver<LoadState>>>> = OnceLock::new();
    let mut map = lock(LOADS.get_or_init(Default::default));
    if let Some(rx) = map.get(key) {
        if !matches!(*rx.borrow(), Some(Err(_))) {
            return Ok(rx.clone());
        }
    }
    let (tx, rx) = watch::channel(None);
    let timeout_ms = i32::try_from(timeout.as_millis())
        .unwrap_or(i32::MAX)
        .max(1);
    std::thread::Builder::new()
        .name("ziti-load".into())
        .spawn(move || {
            let t0 = std::time::Instant::now();
            let mut h = ziti_sys::INVALID_HANDLE;
            // SAFETY: lib initialised; cpath is 'static (the SDK may read it after a time-out);
            // h is a valid out pointer.
            let rc = unsafe {
                ziti_sys::Ziti_load_context_with_timeout(&mut h, cpath.as_ptr(), timeout_ms)
            };
            tracing::debug!(
                "ziti: identity load returned {rc} after {} ms",
                t0.elapsed().as_millis()
            );
            let _ = tx.send(Some(if rc == ZITI_OK { Ok(h) } else { Err(rc) }));
        })
        .map_err(|e| {
            TransportError::Setup(format!(
                "ziti: cannot start the identity loader thread: {e}"
            ))
        })?;
    map.insert(key.to_path_buf(), rx.clone());
    Ok(rx)
}

fn load_error(path: &Path, info: &IdentityInfo, timeout: Duration, code: i32) -> TransportError {
    let p = path.display();
    let c = &info.controller;
    let msg = errorstr(code);
    match code {
        ZITI_TIMEOUT => TransportError::Unreachable(format!(
            "ziti identity {p}: not loaded within {}s (controller {c} unreachable, or no service \
             is granted to this identity)",
            timeout.as_secs()
        )),
        ZITI_CONTROLLER_UNAVAILABLE | ZITI_GATEWAY_UNAVAILABLE => {
            TransportError::Unreachable(format!("ziti identity {p}: controller {c}: {msg}"))
        }
        // an earlier load of this file timed out and the SDK has not finished cleaning it up
        ZITI_INVALID_STATE => TransportError::Unreachable(format!(
            "ziti identity {p}: the SDK is still winding down an earlier load ({msg}); retrying \
             next tick"
        )),
        ZITI_NOT_AUTHORIZED | ZITI_AUTHENTICATION_FAILED => TransportError::Setup(format!(
            "ziti identity {p}: rejected by controller {c} ({msg}); re-enrol with `monky-deployd enroll`"
        )),
        _ => TransportError::Setup(format!(
            "ziti identity {p}: the SDK cannot load it ({msg}, code {code})"
        )),
    }
}

/// Dials services by name with one identity loaded into the linked C SDK.
pub struct SdkConnector {
    identity: PathBuf,
    key: PathBuf,
    cpath: &'static CStr,
    info: IdentityInfo,
    load_timeout: Duration,
    handle: OnceLock<ziti_sys::ziti_handle_t>,
    version: String,
}

impl SdkConnector {
    /// Check `identity` and start loading it (once per process) without waiting; the first
    /// dial, or [`SdkConnector::ready`], waits at most `load_timeout` for it.
    pub fn new(identity: &Path, load_timeout: Duration) -> Result<SdkConnector, TransportError> {
        if !ziti_sys::LINKED {
            return Err(no_sdk("transport sdk"));
        }
        let info = check_identity(identity)?;
        let key = identity
            .canonicalize()
            .unwrap_or_else(|_| identity.to_path_buf());
        let cpath = identity_cstr(&key)?;
        lib_init();
        start_load(&key, cpath, load_timeout)?;
        Ok(SdkConnector {
            identity: identity.to_path_buf(),
            key,
            cpath,
            info,
            load_timeout,
            handle: OnceLock::new(),
            version: sdk_version().unwrap_or_else(|| "unknown".into()),
        })
    }

    /// [`SdkConnector::new`], then wait until the identity is loaded.
    pub async fn load(identity: &Path, load_timeout: Duration) -> Result<Self, TransportError> {
        let c = Self::new(identity, load_timeout)?;
        c.ready().await?;
        Ok(c)
    }

    /// Wait until the identity is loaded (a failed load is retried once per call).
    pub async fn ready(&self) -> Result<(), TransportError> {
        self.handle().await.map(|_| ())
    }

    async fn handle(&self) -> Result<ziti_sys::ziti_handle_t, TransportError> {
        if let Some(h) = self.handle.get() {
            return Ok(*h);
        }
        let mut rx = start_load(&self.key, self.cpath, self.load_timeout)?;
        let waited = tokio::time::timeout(
            self.load_timeout + LOAD_MARGIN,
            rx.wait_for(|s| s.is_some()),
        )
        .await;
        let state = match waited {
            Ok(Ok(s)) => *s,
            Ok(Err(_)) => None,
            Err(_) => Some(Err(ZITI_TIMEOUT)),
        };
        match state {
            Some(Ok(h)) => Ok(*self.handle.get_or_init(|| h)),
            Some(Err(code)) => Err(load_error(
                &self.identity,
                &self.info,
                self.load_timeout,
                code,
            )),
            None => Err(TransportError::Unreachable(format!(
                "ziti identity {}: the loader thread vanished",
                self.identity.display()
            ))),
        }
    }
}

impl SdkConnector {
    /// Dial `ep.service` (waiting for the identity first); [`super::ZitiConnector`] is this as
    /// a hyper connector.
    pub async fn connect(&self, ep: &Endpoint) -> Result<ZitiStream, TransportError> {
        let t0 = std::time::Instant::now();
        let h = self.handle().await?;
        let loaded = t0.elapsed();
        let s = dial(h, &self.identity, ep).await?;
        tracing::debug!(
            "ziti: {} connected via '{}' in {} ms (waited {} ms for the identity)",
            ep.label,
            ep.service,
            t0.elapsed().as_millis(),
            loaded.as_millis()
        );
        Ok(s)
    }

    /// e.g. `sdk (libziti 1.18.2, identity /etc/…/id.json)`.
    pub fn describe(&self) -> String {
        format!(
            "sdk (libziti {}, identity {})",
            self.version,
            self.identity.display()
        )
    }
}

fn dial_error(ep: &Endpoint, identity: &Path, code: i32) -> TransportError {
    let s = &ep.service;
    let msg = errorstr(code);
    let hint = match code {
        ZITI_SERVICE_UNAVAILABLE | ZITI_NOT_FOUND => format!(
            ": identity {} may not dial service '{s}' (no Dial policy, or no such service)",
            identity.display()
        ),
        ZITI_GATEWAY_UNAVAILABLE => ": no edge router reachable".into(),
        ZITI_TIMEOUT | ZITI_CONNABORT | ZITI_CONN_CLOSED | ZITI_EOF => {
            ": the service's host did not answer (is it running and bound?)".into()
        }
        _ => String::new(),
    };
    TransportError::Unreachable(format!(
        "{} via ziti service '{s}': {msg} (ziti error {code}){hint}",
        ep.label
    ))
}

/// Why one dial attempt failed.
enum DialFail {
    /// The SDK's bridge was gone before our socket reached it: its dial finished before our
    /// `connect()` ("client not connected in time", a 1 ms window in `zl_on_ziti_connect`).
    /// Nothing was sent, so trying again is safe.
    Refused,
    Other(TransportError),
}

/// `Ziti_socket` + `Ziti_connect` on the calling (plain) thread. The socket is non-blocking and
/// close-on-exec before the SDK sees it, so `Ziti_connect` returns at once (`EINPROGRESS`: the
/// loopback connect to the bridge completes in the kernel). Returns the fd, or the errno and the
/// thread's `Ziti_last_error`.
fn dial_blocking(h: ziti_sys::ziti_handle_t, service: &CStr) -> Result<OwnedFd, (i32, i32)> {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: plain zitilib/libc calls on an fd we own from here on; `service` outlives them.
    unsafe {
        let fd = ziti_sys::Ziti_socket(libc::SOCK_STREAM);
        if fd < 0 {
            return Err((errno(), ziti_sys::Ziti_last_error()));
        }
        // A connect socket never enters the SDK's socket table (only bind/accept ones do), so
        // `close(2)` is its right close if we give up on it here.
        let owned = OwnedFd::from_raw_fd(fd);
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0
            || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0
            || libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) < 0
        {
            return Err((errno(), 0));
        }
        if ziti_sys::Ziti_connect(fd, h, service.as_ptr(), std::ptr::null()) == 0 {
            return Ok(owned);
        }
        let e = errno();
        if e == libc::EINPROGRESS {
            return Ok(owned);
        }
        Err((e, ziti_sys::Ziti_last_error()))
    }
}

async fn dial(
    h: ziti_sys::ziti_handle_t,
    identity: &Path,
    ep: &Endpoint,
) -> Result<ZitiStream, TransportError> {
    let service = CString::new(ep.service.as_bytes())
        .map_err(|_| TransportError::Setup(format!("{}: service name contains NUL", ep.label)))?;
    let deadline = tokio::time::Instant::now() + ep.timeout;
    let mut attempt = 1;
    loop {
        match dial_once(h, &service, identity, ep, deadline).await {
            Ok(s) => return Ok(s),
            Err(DialFail::Refused) if attempt < DIAL_ATTEMPTS => {
                tracing::debug!(
                    "ziti: {} dial {attempt} refused by the SDK's bridge before sending; retrying",
                    ep.label
                );
                attempt += 1;
            }
            Err(DialFail::Refused) => {
                return Err(TransportError::Unreachable(format!(
                "{} via ziti service '{}': the SDK refused the connection {DIAL_ATTEMPTS} times",
                ep.label, ep.service
            )))
            }
            Err(DialFail::Other(e)) => return Err(e),
        }
    }
}

fn timed_out(ep: &Endpoint) -> DialFail {
    DialFail::Other(TransportError::Unreachable(format!(
        "{} via ziti service '{}': dial timed out after {}s",
        ep.label,
        ep.service,
        ep.timeout.as_secs()
    )))
}

async fn dial_once(
    h: ziti_sys::ziti_handle_t,
    service: &CString,
    identity: &Path,
    ep: &Endpoint,
    deadline: tokio::time::Instant,
) -> Result<ZitiStream, DialFail> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let svc = service.clone();
    // A plain thread, not the runtime's blocking pool: a call stuck in the SDK must not hold the
    // runtime's shutdown hostage. If we give up first, the fd is dropped (closed) there.
    std::thread::Builder::new()
        .name("ziti-dial".into())
        .spawn(move || {
            let _ = tx.send(dial_blocking(h, &svc));
        })
        .map_err(|e| {
            DialFail::Other(TransportError::Unreachable(format!(
                "{}: cannot start a dial thread: {e}",
                ep.label
            )))
        })?;
    let fd = match tokio::time::timeout_at(deadline, rx).await {
        Ok(Ok(Ok(fd))) => fd,
        Ok(Ok(Err((errno, zerr)))) => {
            return Err(match (errno, zerr) {
                (libc::ECONNREFUSED, 0) => DialFail::Refused,
                (_, z) if z < 0 => DialFail::Other(dial_error(ep, identity, z)),
                (e, _) => DialFail::Other(TransportError::Unreachable(format!(
                    "{} via ziti service '{}': {}",
                    ep.label,
                    ep.service,
                    errorstr(e)
                ))),
            })
        }
        Ok(Err(_)) => {
            return Err(DialFail::Other(TransportError::Unreachable(format!(
                "{}: ziti dial thread vanished",
                ep.label
            ))))
        }
        Err(_) => return Err(timed_out(ep)),
    };
    let std = std::net::TcpStream::from(fd);
    let _ = std.set_nodelay(true);
    let tcp = tokio::net::TcpStream::from_std(std).map_err(|e| {
        DialFail::Other(TransportError::Unreachable(format!(
            "{}: ziti connection fd: {e}",
            ep.label
        )))
    })?;
    let stream = ZitiStream { inner: Some(tcp) };
    let t = stream.inner.as_ref().expect("just set");
    // the loopback connect to the SDK's bridge: writable once it completed (or failed)
    match tokio::time::timeout_at(deadline, t.writable()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(DialFail::Other(TransportError::Unreachable(format!(
                "{}: ziti connection: {e}",
                ep.label
            ))))
        }
        Err(_) => return Err(timed_out(ep)),
    }
    match t.take_error() {
        Ok(None) => Ok(stream),
        Ok(Some(e)) if e.raw_os_error() == Some(libc::ECONNREFUSED) => Err(DialFail::Refused),
        Ok(Some(e)) | Err(e) => Err(DialFail::Other(TransportError::Unreachable(format!(
            "{} via ziti service '{}': {e}",
            ep.label, ep.service
        )))),
    }
}

/// A dialled Ziti connection (the SDK's loopback TCP socket) as an async byte stream.
pub struct ZitiStream {
    inner: Option<tokio::net::TcpStream>,
}

impl ZitiStream {
    fn io(&mut self) -> io::Result<&mut tokio::net::TcpStream> {
        self.inner
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }
}

impl Drop for ZitiStream {
    fn drop(&mut self) {
        let Some(t) = self.inner.take() else { return };
        // Deregister from the runtime, then hand the fd to the SDK's close; it returns -1 without
        // closing for a socket it does not track (every connect socket), and then it is ours.
        if let Ok(std) = t.into_std() {
            let fd = std.into_raw_fd();
            // SAFETY: we own fd; exactly one of the two calls closes it.
            unsafe {
                if ziti_sys::Ziti_close(fd) != 0 {
                    libc::close(fd);
                }
            }
        }
    }
}

impl AsyncRead for ZitiStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.io() {
            Ok(s) => Pin::new(s).poll_read(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl AsyncWrite for ZitiStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.io() {
            Ok(s) => Pin::new(s).poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match self.io() {
            Ok(s) => Pin::new(s).poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match self.io() {
            Ok(s) => Pin::new(s).poll_shutdown(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl AsRawFd for ZitiStream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.inner.as_ref().map_or(-1, |t| t.as_raw_fd())
    }
}

/// Enrol an identity from a one-time JWT with the SDK (`Ziti_enroll_identity`); writes the
/// identity JSON 0600 to `out` atomically (temporary file, fsync, rename, fsync of the directory).
pub fn enroll(jwt: &Path, out: &Path) -> Result<(), TransportError> {
    if !ziti_sys::LINKED {
        return Err(no_sdk("enroll"));
    }
    let j = jwt.display();
    let meta =
        fs::metadata(jwt).map_err(|e| TransportError::Setup(format!("enroll: JWT {j}: {e}")))?;
    if meta.len() > MAX_JWT_BYTES {
        return Err(TransportError::Setup(format!(
            "enroll: JWT {j}: {} bytes is not a JWT",
            meta.len()
        )));
    }
    let text = fs::read_to_string(jwt)
        .map_err(|e| TransportError::Setup(format!("enroll: JWT {j}: {e}")))?;
    let token = text.trim();
    if token.split('.').count() != 3 {
        return Err(TransportError::Setup(format!(
            "enroll: {j} does not hold a JWT (expected header.payload.signature)"
        )));
    }
    let ctoken = CString::new(token)
        .map_err(|_| TransportError::Setup(format!("enroll: JWT {j} contains NUL")))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(TransportError::Setup(format!(
                "enroll: directory {} does not exist",
                dir.display()
            )));
        }
    }
    lib_init();
    let (tx, rx) = std::sync::mpsc::channel::<Result<Vec<u8>, i32>>();
    std::thread::Builder::new()
        .name("ziti-enroll".into())
        .spawn(move || {
            let mut json: *mut libc::c_char = std::ptr::null_mut();
            let mut len: libc::c_ulong = 0;
            // SAFETY: ctoken outlives the call; key/cert NULL (the SDK generates the key);
            // out pointers are valid.
            let rc = unsafe {
                ziti_sys::Ziti_enroll_identity(
                    ctoken.as_ptr(),
                    std::ptr::null(),
                    std::ptr::null(),
                    &mut json,
                    &mut len,
                )
            };
            let res = if rc == 0 && !json.is_null() {
                // SAFETY: the SDK returned a malloc'd buffer of len bytes that we must free.
                let bytes =
                    unsafe { std::slice::from_raw_parts(json as *const u8, len as usize).to_vec() };
                unsafe { libc::free(json.cast()) };
                Ok(bytes)
            } else {
                Err(if rc != 0 { rc } else { ZITI_INVALID_STATE })
            };
            let _ = tx.send(res);
        })
        .map_err(|e| TransportError::Setup(format!("enroll: cannot start a thread: {e}")))?;
    let bytes = match rx.recv_timeout(ENROLL_TIMEOUT) {
        Ok(Ok(b)) => b,
        Ok(Err(code)) => {
            let msg = errorstr(code);
            return Err(match code {
                ZITI_CONTROLLER_UNAVAILABLE | ZITI_TIMEOUT => {
                    TransportError::Unreachable(format!("enroll: controller named in {j}: {msg}"))
                }
                _ => TransportError::Setup(format!(
                    "enroll with {j}: {msg} (code {code}); a JWT is good for one enrolment only"
                )),
            });
        }
        Err(_) => {
            return Err(TransportError::Unreachable(format!(
                "enroll: no answer from the controller within {}s",
                ENROLL_TIMEOUT.as_secs()
            )))
        }
    };
    // Trailing NUL, if the SDK counted it.
    let bytes = match bytes.split_last() {
        Some((0, rest)) => rest.to_vec(),
        _ => bytes,
    };
    crate::state::write_private(out, &bytes, 0o600)
        .map_err(|e| TransportError::Setup(format!("enroll: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_identity_is_a_setup_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("id.json");
        fs::write(
            &p,
            b"{\"ztAPI\": \"https://x:1280\", \"id\": {\"cert\": \"\"",
        )
        .unwrap();
        match check_identity(&p) {
            Err(TransportError::Setup(m)) => assert!(
                m.contains(&p.display().to_string()) && m.contains("JSON"),
                "{m}"
            ),
            Err(other) => panic!("wrong class: {other}"),
            Ok(_) => panic!("corrupt identity accepted"),
        }
        fs::write(
            &p,
            b"{\"ztAPI\": \"https://x:1280\", \"id\": {\"cert\": \"c\"}}",
        )
        .unwrap();
        match check_identity(&p) {
            Err(TransportError::Setup(m)) => {
                assert!(m.contains("id.key") && m.contains("id.ca"), "{m}")
            }
            _ => panic!("identity without key accepted"),
        }
    }

    #[test]
    fn sdk_version_matches_link_state() {
        assert_eq!(sdk_version().is_some(), ziti_sys::LINKED);
        if ziti_sys::SOURCE == "vendored" {
            assert_eq!(sdk_version().as_deref(), Some("1.18.2"));
        }
        if !ziti_sys::LINKED {
            match SdkConnector::new(Path::new("/nonexistent"), Duration::from_secs(1)) {
                Err(TransportError::Setup(m)) => assert!(m.contains("proxy"), "{m}"),
                _ => panic!("sdk transport must refuse to start without an SDK"),
            }
        }
    }

    #[test]
    fn load_errors_are_classed_for_the_exit_code() {
        let info = IdentityInfo {
            controller: "https://c:1280".into(),
        };
        let p = Path::new("/etc/monky/id.json");
        let t = Duration::from_secs(7);
        for code in [
            ZITI_TIMEOUT,
            ZITI_CONTROLLER_UNAVAILABLE,
            ZITI_INVALID_STATE,
        ] {
            assert!(matches!(
                load_error(p, &info, t, code),
                TransportError::Unreachable(_)
            ));
        }
        match load_error(p, &info, t, ZITI_TIMEOUT) {
            TransportError::Unreachable(m) => assert!(m.contains("within 7s"), "{m}"),
            _ => unreachable!(),
        }
        for code in [
            ZITI_NOT_AUTHORIZED,
            ZITI_INVALID_CONFIG,
            ZITI_KEY_LOAD_FAILED,
        ] {
            match load_error(p, &info, t, code) {
                TransportError::Setup(m) => assert!(m.contains("/etc/monky/id.json"), "{m}"),
                other => panic!("{code}: {other}"),
            }
        }
    }
}

//! `sdk` transport: dial Ziti services by name from inside this process, through the OpenZiti C
//! SDK that `ziti-sys` linked (or none: then start-up fails with a message saying how to get one).
//!
//! Owns the SDK's process-wide state: `Ziti_lib_init` once, one loaded context per identity file
//! per process (loading is bounded in time: the 0.29 line's `Ziti_load_context` can block
//! forever), dials off the async runtime on plain threads (a dial the caller gave up on closes its
//! own fd when it finally returns), and [`shutdown`] at exit. Typed errors: what an operator must
//! fix is [`TransportError::Setup`] (exit 1), what the next tick may find healed is
//! [`TransportError::Unreachable`] (exit 75).
//!
//! This file uses nothing from the rest of the crate but `super`, so integration tests can mount
//! `src/transport` as a module and dial through exactly this code.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fs;
use std::io;
use std::os::fd::{FromRawFd, IntoRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, Once, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use ziti_sys::codes::*;
use ziti_sys::compat::{self, Context};

use super::{ConnectFuture, Connector, Endpoint, TransportError};

/// Largest identity file accepted (a 4096-bit RSA identity with its CA bundle is ~12 KiB).
const MAX_IDENTITY_BYTES: u64 = 1 << 20;
/// Largest enrolment JWT accepted.
const MAX_JWT_BYTES: u64 = 64 << 10;
/// Bound on `Ziti_enroll_identity` (a network round trip plus key generation).
const ENROLL_TIMEOUT: Duration = Duration::from_secs(60);
/// Bound on `Ziti_lib_shutdown` at exit.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);

/// Version of the linked C SDK (e.g. `0.29.3`), if any.
pub fn sdk_version() -> Option<String> {
    if !ziti_sys::LINKED {
        return None;
    }
    // SAFETY: ziti_get_version returns a pointer to a static struct of static C strings.
    unsafe {
        let v = compat::version();
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

/// The SDK's text for a zitilib error code.
fn errorstr(code: i32) -> String {
    if code > 0 {
        // zitilib passes errno values through for socket-level failures
        return io::Error::from_raw_os_error(code).to_string();
    }
    // SAFETY: ziti_errorstr returns a static string for any code.
    unsafe {
        let p = compat::errorstr(code);
        if p.is_null() {
            return format!("error {code}");
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

fn lib_init() {
    static INIT: Once = Once::new();
    // SAFETY: called once per process, before any other zitilib call.
    INIT.call_once(|| unsafe { compat::lib_init() });
    LIB_STARTED.get_or_init(|| ());
}
static LIB_STARTED: OnceLock<()> = OnceLock::new();

/// Shut the SDK down (contexts, loop thread); idempotent, bounded in time. `main` calls it once
/// before the process exits. Skipped when a load or
/// dial is still stuck inside the SDK (shutting down under it can block): the process is exiting.
#[allow(dead_code)] // not called at exit: see main (0.29.3 crashes in it after a failed load)
pub fn shutdown() {
    static DONE: Once = Once::new();
    if !ziti_sys::LINKED || LIB_STARTED.get().is_none() {
        return;
    }
    DONE.call_once(|| {
        if STUCK.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            tracing::debug!("ziti: skipping Ziti_lib_shutdown, a call is still blocked in the SDK");
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("ziti-shutdown".into())
            .spawn(move || {
                // SAFETY: the library was initialised (LIB_STARTED) and no call is in flight.
                unsafe { compat::lib_shutdown() };
                let _ = tx.send(());
            });
        if spawned.is_ok() && rx.recv_timeout(SHUTDOWN_TIMEOUT).is_err() {
            tracing::warn!(
                "ziti: Ziti_lib_shutdown did not finish within {}s",
                SHUTDOWN_TIMEOUT.as_secs()
            );
        }
    });
}

/// Calls currently blocked inside the SDK past their caller's deadline.
static STUCK: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

/// The parts of an identity file that are checked before the SDK sees it.
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

/// One identity load, shared by every caller in the process that asks for the same file.
struct LoadSlot {
    result: Mutex<Option<Result<Context, i32>>>,
    done: Condvar,
    /// Every waiter gave up on it: counted in [`STUCK`] until it returns.
    abandoned: std::sync::atomic::AtomicBool,
}

fn slots() -> &'static Mutex<HashMap<PathBuf, Arc<LoadSlot>>> {
    static SLOTS: OnceLock<Mutex<HashMap<PathBuf, Arc<LoadSlot>>>> = OnceLock::new();
    SLOTS.get_or_init(|| Mutex::new(HashMap::new()))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Load `path` once per process; wait at most `timeout` for it. A load that outlives its caller
/// keeps running and its result is kept for the next caller.
fn load_context(
    path: &Path,
    info: &IdentityInfo,
    timeout: Duration,
) -> Result<Context, TransportError> {
    let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let (slot, start) = {
        let mut map = lock(slots());
        match map.get(&key) {
            Some(s) => (s.clone(), false),
            None => {
                let s = Arc::new(LoadSlot {
                    result: Mutex::new(None),
                    done: Condvar::new(),
                    abandoned: std::sync::atomic::AtomicBool::new(false),
                });
                map.insert(key.clone(), s.clone());
                (s, true)
            }
        }
    };
    if start {
        let cpath = CString::new(key.as_os_str().as_encoded_bytes()).map_err(|_| {
            TransportError::Setup(format!(
                "ziti identity {}: path contains NUL",
                path.display()
            ))
        })?;
        let slot2 = slot.clone();
        let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        std::thread::Builder::new()
            .name("ziti-load".into())
            .spawn(move || {
                let mut ctx = Context(0);
                // The SDK may keep the path (0.29 keys its context table by it): one small,
                // deliberate leak per identity per process.
                let cpath: &'static CStr = Box::leak(cpath.into_boxed_c_str());
                // SAFETY: lib initialised; cpath lives forever; ctx is a valid out pointer.
                let rc = unsafe { compat::load_context(cpath.as_ptr(), timeout_ms, &mut ctx) };
                *lock(&slot2.result) = Some(if rc == 0 { Ok(ctx) } else { Err(rc) });
                slot2.done.notify_all();
                if slot2.abandoned.load(std::sync::atomic::Ordering::SeqCst) {
                    STUCK.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                }
            })
            .map_err(|e| {
                TransportError::Setup(format!(
                    "ziti: cannot start the identity loader thread: {e}"
                ))
            })?;
    }
    let deadline = Instant::now() + timeout;
    let mut guard = lock(&slot.result);
    while guard.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        guard = slot
            .done
            .wait_timeout(guard, left)
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    }
    match *guard {
        Some(Ok(ctx)) => Ok(ctx),
        Some(Err(code)) => {
            drop(guard);
            lock(slots()).remove(&key); // a later attempt loads afresh
            Err(load_error(path, info, code))
        }
        None => {
            if !slot
                .abandoned
                .swap(true, std::sync::atomic::Ordering::SeqCst)
            {
                STUCK.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Err(TransportError::Unreachable(format!(
                "ziti identity {}: not loaded within {}s (controller {} unreachable, or no service \
                 is granted to this identity)",
                path.display(),
                timeout.as_secs(),
                info.controller
            )))
        }
    }
}

fn load_error(path: &Path, info: &IdentityInfo, code: i32) -> TransportError {
    let p = path.display();
    let msg = errorstr(code);
    match code {
        ZITI_CONTROLLER_UNAVAILABLE | ZITI_TIMEOUT | ZITI_GATEWAY_UNAVAILABLE => {
            TransportError::Unreachable(format!("ziti identity {p}: controller {}: {msg}", info.controller))
        }
        ZITI_NOT_AUTHORIZED => TransportError::Setup(format!(
            "ziti identity {p}: rejected by controller {} ({msg}); re-enrol with `monky-deployd enroll`",
            info.controller
        )),
        _ => TransportError::Setup(format!("ziti identity {p}: the SDK cannot load it ({msg}, code {code})")),
    }
}

/// Dials services by name with one identity loaded into the linked C SDK.
pub struct SdkConnector {
    ctx: Context,
    identity: PathBuf,
    version: String,
}

impl SdkConnector {
    /// Load `identity` (once per process) and wait at most `load_timeout` for it.
    pub fn new(identity: &Path, load_timeout: Duration) -> Result<SdkConnector, TransportError> {
        if !ziti_sys::LINKED {
            return Err(no_sdk("transport sdk"));
        }
        let info = check_identity(identity)?;
        lib_init();
        let ctx = load_context(identity, &info, load_timeout)?;
        Ok(SdkConnector {
            ctx,
            identity: identity.to_path_buf(),
            version: sdk_version().unwrap_or_else(|| "unknown".into()),
        })
    }
}

impl Connector for SdkConnector {
    fn connect<'a>(&'a self, ep: &'a Endpoint) -> ConnectFuture<'a> {
        Box::pin(dial(self.ctx, &self.identity, ep))
    }
    fn describe(&self) -> String {
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

/// How often a dial is retried when the SDK still holds a stale record of the fd number.
const EALREADY_RETRIES: usize = 5;

/// `Ziti_socket` + `Ziti_connect`, blocking. Returns the connected fd or a zitilib/errno code.
///
/// The 0.29 line keeps a record per client fd until its bridge has seen the close; a new socket
/// that the kernel gives the same number before that is refused with `EALREADY` ("socket N
/// already connecting/connected"; later lines clear stale records in `Ziti_socket`). Then the
/// refused fd is held open, so the next socket gets another number, and closed afterwards.
///
/// # Safety
/// `ctx` must be a loaded context; the library must be initialised.
unsafe fn dial_blocking(ctx: Context, service: &CStr) -> Result<RawFd, i32> {
    // Leave free fd numbers below this connection's fds: the kernel hands out the lowest free
    // number, so while holes remain below the SDK's bridge fd, a file another thread opens during
    // the SDK's double close of that fd (see `ZitiStream`) lands in a hole, not on the closed fd.
    let holes = FdHoles::reserve(FD_HOLES);
    let res = dial_blocking_inner(ctx, service);
    drop(holes);
    res
}

/// How many free fd numbers each dial leaves below its own (see [`dial_blocking`]).
const FD_HOLES: usize = 16;

/// Placeholder fds (dups of /dev/null) occupying the lowest free numbers until dropped.
struct FdHoles(Vec<RawFd>);

impl FdHoles {
    fn reserve(n: usize) -> FdHoles {
        let mut v = Vec::with_capacity(n);
        // SAFETY: open/fcntl of fds we own; failures just mean fewer holes.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if null >= 0 {
                v.push(null);
                for _ in 1..n {
                    let fd = libc::fcntl(null, libc::F_DUPFD_CLOEXEC, 0);
                    if fd < 0 {
                        break;
                    }
                    v.push(fd);
                }
            }
        }
        FdHoles(v)
    }
}

impl Drop for FdHoles {
    fn drop(&mut self) {
        for fd in self.0.drain(..) {
            // SAFETY: placeholders we opened and nobody else knows about.
            unsafe { libc::close(fd) };
        }
    }
}

/// # Safety
/// As [`dial_blocking`].
unsafe fn dial_blocking_inner(ctx: Context, service: &CStr) -> Result<RawFd, i32> {
    let mut held = Vec::new();
    let mut res = Err(libc::EALREADY);
    for _ in 0..EALREADY_RETRIES {
        let fd = compat::socket(libc::SOCK_STREAM);
        if fd < 0 {
            res = Err(compat::last_error());
            break;
        }
        let rc = compat::connect(fd, ctx, service.as_ptr(), std::ptr::null());
        if rc == 0 {
            res = Ok(fd);
            break;
        }
        let e = compat::last_error();
        let code = if e != 0 { e } else { rc };
        if code == libc::EINPROGRESS || code == -libc::EINPROGRESS {
            res = Ok(fd); // 1.17+: a loopback TCP fd still connecting; awaited by the caller
            break;
        }
        if code == libc::EALREADY || code == -libc::EALREADY {
            tracing::debug!(
                "ziti: fd {fd} still known to the SDK from a closed connection; retrying"
            );
            held.push(fd);
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        compat::close(fd);
        res = Err(code);
        break;
    }
    for fd in held {
        libc::close(fd);
    }
    res
}

/// Dial on a plain thread (`Ziti_connect` blocks; a tokio blocking task would hold runtime
/// shutdown hostage if the SDK never returns), bounded by the endpoint's timeout.
async fn dial(
    ctx: Context,
    identity: &Path,
    ep: &Endpoint,
) -> Result<super::BoxIo, TransportError> {
    let service = CString::new(ep.service.as_bytes())
        .map_err(|_| TransportError::Setup(format!("{}: service name contains NUL", ep.label)))?;
    let (tx, rx) = tokio::sync::oneshot::channel::<Result<RawFd, i32>>();
    std::thread::Builder::new()
        .name("ziti-dial".into())
        .spawn(move || {
            // SAFETY: ctx is a loaded context (never freed before shutdown); service outlives the
            // call; the fd is ours until handed over or closed here.
            let res = unsafe { dial_blocking(ctx, &service) };
            if let Err(Ok(fd)) = tx.send(res) {
                // SAFETY: the caller gave up; nobody else owns this fd.
                unsafe { compat::close(fd) };
                STUCK.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
        })
        .map_err(|e| {
            TransportError::Unreachable(format!("{}: cannot start a dial thread: {e}", ep.label))
        })?;
    let deadline = tokio::time::Instant::now() + ep.timeout;
    let fd = match tokio::time::timeout_at(deadline, rx).await {
        Ok(Ok(Ok(fd))) => fd,
        Ok(Ok(Err(code))) => return Err(dial_error(ep, identity, code)),
        Ok(Err(_)) => {
            return Err(TransportError::Unreachable(format!(
                "{}: ziti dial thread vanished",
                ep.label
            )))
        }
        Err(_) => {
            STUCK.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Err(TransportError::Unreachable(format!(
                "{} via ziti service '{}': dial timed out after {}s",
                ep.label,
                ep.service,
                ep.timeout.as_secs()
            )));
        }
    };
    let stream = ZitiStream::from_fd(fd).map_err(|e| {
        // SAFETY: fd is ours and not wrapped yet.
        unsafe { compat::close(fd) };
        TransportError::Unreachable(format!("{}: ziti connection fd: {e}", ep.label))
    })?;
    if let Some(Inner::Tcp(t)) = stream.inner.as_ref() {
        // 1.17+ loopback fd: wait until the SDK's side accepted it.
        match tokio::time::timeout_at(deadline, t.writable()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(TransportError::Unreachable(format!(
                    "{}: ziti connection: {e}",
                    ep.label
                )))
            }
            Err(_) => {
                return Err(TransportError::Unreachable(format!(
                    "{} via ziti service '{}': dial timed out after {}s",
                    ep.label,
                    ep.service,
                    ep.timeout.as_secs()
                )))
            }
        }
        if let Ok(Some(e)) = t.take_error() {
            return Err(TransportError::Unreachable(format!(
                "{} via ziti service '{}': {e}",
                ep.label, ep.service
            )));
        }
    }
    Ok(Box::new(stream))
}

enum Inner {
    /// 0.29 … 1.16: a blocking AF_UNIX stream bridged by the SDK's loop thread.
    Unix(tokio::net::UnixStream),
    /// 1.17+: a loopback TCP socket.
    Tcp(tokio::net::TcpStream),
}

/// A dialled Ziti connection as an async byte stream. Closing goes through the SDK
/// (`Ziti_close` where it exists) so its bridge sees the end promptly.
///
/// libziti 0.29.3 closes its own end of the bridge (the AF_UNIX peer of our fd) **twice**, about
/// 0.3 ms apart, whenever a connection ends (seen with strace: `close(N)` from the SDK's loop
/// thread, then libuv's `close(N)` again). An fd another thread of ours opens in between gets
/// that number and is closed under it. This stream keeps our own thread out of that window: on
/// drop it half-closes, waits for the SDK to close its end, waits out the second close, and only
/// then returns; on end-of-stream it waits the same short moment before reporting it.
pub struct ZitiStream {
    inner: Option<Inner>,
    eof_seen: bool,
}

/// Longer than the gap between libziti 0.29.3's two closes of a bridge fd (≈0.3 ms observed).
const DOUBLE_CLOSE_GRACE: Duration = Duration::from_millis(3);
/// Bound on waiting for the SDK to let go of a connection we drop.
const BRIDGE_CLOSE_WAIT: Duration = Duration::from_millis(500);

/// Half-close `fd`, wait until the SDK has closed the other end (draining what still arrives),
/// then wait out its second close. Bounded by [`BRIDGE_CLOSE_WAIT`].
fn await_bridge_close(fd: RawFd) {
    let deadline = Instant::now() + BRIDGE_CLOSE_WAIT;
    // SAFETY: plain socket calls on an fd we own; buf is a local buffer.
    unsafe {
        libc::shutdown(fd, libc::SHUT_WR);
        let mut buf = [0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN | libc::POLLRDHUP,
                revents: 0,
            };
            let n = libc::poll(&mut p, 1, left.as_millis().clamp(1, 500) as libc::c_int);
            if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
            if p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                break;
            }
            if p.revents & libc::POLLIN != 0
                && libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) == 0
            {
                break; // end of stream: the SDK closed its end
            }
        }
    }
    std::thread::sleep(DOUBLE_CLOSE_GRACE);
}

impl ZitiStream {
    fn from_fd(fd: RawFd) -> io::Result<ZitiStream> {
        // SAFETY: plain fcntl/getsockopt on an fd we own.
        let domain = unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
                return Err(io::Error::last_os_error());
            }
            let mut domain: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            if libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_DOMAIN,
                (&mut domain as *mut libc::c_int).cast(),
                &mut len,
            ) < 0
            {
                return Err(io::Error::last_os_error());
            }
            domain
        };
        let inner = if domain == libc::AF_UNIX {
            // SAFETY: fd is an AF_UNIX stream socket we own; ownership moves into the stream.
            let std = unsafe { std::os::unix::net::UnixStream::from_raw_fd(fd) };
            Inner::Unix(tokio::net::UnixStream::from_std(std)?)
        } else {
            // SAFETY: fd is an inet stream socket we own; ownership moves into the stream.
            let std = unsafe { std::net::TcpStream::from_raw_fd(fd) };
            let _ = std.set_nodelay(true);
            Inner::Tcp(tokio::net::TcpStream::from_std(std)?)
        };
        Ok(ZitiStream {
            inner: Some(inner),
            eof_seen: false,
        })
    }

    fn io(&mut self) -> io::Result<&mut Inner> {
        self.inner
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }
}

impl Drop for ZitiStream {
    fn drop(&mut self) {
        let (fd, unix) = match self.inner.take() {
            Some(Inner::Unix(s)) => (s.into_std().map(|s| s.into_raw_fd()), true),
            Some(Inner::Tcp(s)) => (s.into_std().map(|s| s.into_raw_fd()), false),
            None => return,
        };
        if let Ok(fd) = fd {
            if unix && !self.eof_seen {
                await_bridge_close(fd);
            }
            // SAFETY: we own fd and nothing else refers to it any more.
            unsafe { compat::close(fd) };
        }
    }
}

impl AsyncRead for ZitiStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let want = buf.remaining() > 0;
        let r = match self.io() {
            Ok(Inner::Unix(s)) => Pin::new(s).poll_read(cx, buf),
            Ok(Inner::Tcp(s)) => return Pin::new(s).poll_read(cx, buf),
            Err(e) => return Poll::Ready(Err(e)),
        };
        if let Poll::Ready(Ok(())) = r {
            if want && buf.filled().len() == before && !self.eof_seen {
                // The far side ended the connection: the SDK is closing its end right now
                // (twice, see the type's doc). Stay off the fd table until it is done.
                self.eof_seen = true;
                std::thread::sleep(DOUBLE_CLOSE_GRACE);
            }
        }
        r
    }
}

impl AsyncWrite for ZitiStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.io() {
            Ok(Inner::Unix(s)) => Pin::new(s).poll_write(cx, buf),
            Ok(Inner::Tcp(s)) => Pin::new(s).poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match self.io() {
            Ok(Inner::Unix(s)) => Pin::new(s).poll_flush(cx),
            Ok(Inner::Tcp(s)) => Pin::new(s).poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match self.io() {
            Ok(Inner::Unix(s)) => Pin::new(s).poll_shutdown(cx),
            Ok(Inner::Tcp(s)) => Pin::new(s).poll_shutdown(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

/// Enrol an identity from a one-time JWT with the SDK; writes the identity JSON 0600 to `out`
/// atomically (temporary file in the same directory, fsync, rename, fsync of the directory).
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
            // SAFETY: ctoken outlives the call; key/cert NULL (CA-issued enrolment); out pointers valid.
            let rc = unsafe {
                compat::enroll_identity(
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
    fn private_write_is_0600_and_complete() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("id.json");
        crate::state::write_private(&p, b"{}", 0o600).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"{}");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temporary file left behind"
        );
    }

    #[test]
    fn sdk_version_matches_link_state() {
        assert_eq!(sdk_version().is_some(), ziti_sys::LINKED);
        if !ziti_sys::LINKED {
            match SdkConnector::new(Path::new("/nonexistent"), Duration::from_secs(1)) {
                Err(TransportError::Setup(m)) => {
                    assert!(m.contains("ZITI_SDK_DIR") && m.contains("proxy"), "{m}")
                }
                _ => panic!("sdk transport must refuse to start without an SDK"),
            }
        }
    }
}

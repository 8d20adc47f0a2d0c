//! One dial: `Ziti_socket` + a non-blocking `Ziti_connect` on a plain thread, the loopback
//! connect awaited on the runtime, the one retry the SDK's bridge race needs, and the stream
//! that closes with `close(2)`, as the SDK expects of a connect socket.

use super::*;

pub(super) fn dial_error(ep: &Endpoint, identity: &Path, code: i32) -> TransportError {
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
    TransportError::unreachable(format!(
        "{} via ziti service '{s}': {msg} (ziti error {code}){hint}",
        ep.label
    ))
}

/// Why one dial attempt failed.
pub(super) enum DialFail {
    /// The SDK's bridge was gone before our socket reached it: its dial finished before our
    /// `connect()` ("client not connected in time", a 1 ms window in `zl_on_ziti_connect`).
    /// Nothing was sent, so trying again is safe.
    Refused,
    Other(TransportError),
}

/// `Ziti_socket` + `Ziti_connect` on the calling (plain) thread. The socket is created
/// non-blocking and close-on-exec (`SOCK_NONBLOCK | SOCK_CLOEXEC`: no window in which a fork
/// and exec elsewhere in the process inherits it), so `Ziti_connect` returns at once
/// (`EINPROGRESS`: the loopback connect to the bridge completes in the kernel). Returns the fd,
/// or the errno and the thread's `Ziti_last_error`.
///
/// The fd is ours to close with `close(2)` (dropping the `OwnedFd`), whatever happens: only
/// `Ziti_bind`/`Ziti_accept` put a socket into the SDK's socket map, so a connect socket has
/// nothing there to clean up, and `Ziti_close` would only read that map off the SDK's loop
/// thread, the one thread that may touch it (ziti-sys does not export it).
pub(super) fn dial_blocking(
    h: ziti_sys::ziti_handle_t,
    service: &CStr,
) -> Result<OwnedFd, (i32, i32)> {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let fd = new_socket()?;
    // SAFETY: `fd` is an open socket (borrowed for the call); `service` is a NUL-terminated
    // string that outlives the call; a NULL terminator means "any".
    let rc =
        unsafe { ziti_sys::Ziti_connect(fd.as_raw_fd(), h, service.as_ptr(), std::ptr::null()) };
    if rc == 0 {
        return Ok(fd);
    }
    let e = errno();
    if e == libc::EINPROGRESS {
        return Ok(fd);
    }
    // SAFETY: takes nothing; reads this thread's last zitilib error.
    let zerr = unsafe { ziti_sys::Ziti_last_error() };
    Err((e, zerr))
}

/// A TCP socket from `Ziti_socket`, non-blocking and close-on-exec from its creation.
pub(super) fn new_socket() -> Result<OwnedFd, (i32, i32)> {
    // SAFETY: `Ziti_socket` passes its argument to `socket(AF_INET, type, 0)` (which takes the
    // two flags) and waits on the SDK's loop, started by `start_sdk` before any dial.
    let fd = unsafe {
        ziti_sys::Ziti_socket(libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC)
    };
    if fd < 0 {
        let e = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        // SAFETY: takes nothing; reads this thread's last zitilib error.
        let zerr = unsafe { ziti_sys::Ziti_last_error() };
        return Err((e, zerr));
    }
    // SAFETY: `socket(2)` just returned this fd to this thread and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(super) async fn dial(
    h: ziti_sys::ziti_handle_t,
    identity: &Path,
    ep: &Endpoint,
) -> Result<ZitiStream, TransportError> {
    let service = CString::new(ep.service.as_bytes())
        .map_err(|_| TransportError::setup(format!("{}: service name contains NUL", ep.label)))?;
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
                return Err(TransportError::unreachable(format!(
                "{} via ziti service '{}': the SDK refused the connection {DIAL_ATTEMPTS} times",
                ep.label, ep.service
            )))
            }
            Err(DialFail::Other(e)) => return Err(e),
        }
    }
}

/// Calls into the SDK that have not returned yet, by start time: one that never returns means
/// the SDK's loop is wedged (its requests are futures that loop completes), which the
/// service's watchdog must see (`oldest_pending_call`).
static PENDING: Mutex<std::collections::BTreeMap<u64, std::time::Instant>> =
    Mutex::new(std::collections::BTreeMap::new());

struct Pending(u64);

impl Pending {
    fn start() -> Pending {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&PENDING).insert(id, std::time::Instant::now());
        Pending(id)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        lock(&PENDING).remove(&self.0);
    }
}

/// How long the oldest dial still inside the SDK has been there.
pub fn oldest_pending_call() -> Option<Duration> {
    lock(&PENDING).values().min().map(|t| t.elapsed())
}

pub(super) fn timed_out(ep: &Endpoint) -> DialFail {
    DialFail::Other(TransportError::unreachable(format!(
        "{} via ziti service '{}': dial timed out after {}s",
        ep.label,
        ep.service,
        ep.timeout.as_secs()
    )))
}

pub(super) async fn dial_once(
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
            let _call = Pending::start();
            monky_base::testhook::wedge("sdk");
            let _ = tx.send(dial_blocking(h, &svc));
        })
        .map_err(|e| {
            DialFail::Other(TransportError::unreachable(format!(
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
                (e, _) => DialFail::Other(TransportError::unreachable(format!(
                    "{} via ziti service '{}': {}",
                    ep.label,
                    ep.service,
                    errorstr(e)
                ))),
            })
        }
        Ok(Err(_)) => {
            return Err(DialFail::Other(TransportError::unreachable(format!(
                "{}: ziti dial thread vanished",
                ep.label
            ))))
        }
        Err(_) => return Err(timed_out(ep)),
    };
    let std = std::net::TcpStream::from(fd);
    let _ = std.set_nodelay(true);
    let tcp = tokio::net::TcpStream::from_std(std).map_err(|e| {
        DialFail::Other(TransportError::unreachable(format!(
            "{}: ziti connection fd: {e}",
            ep.label
        )))
    })?;
    let stream = ZitiStream { inner: tcp };
    let t = &stream.inner;
    // the loopback connect to the SDK's bridge: writable once it completed (or failed)
    match tokio::time::timeout_at(deadline, t.writable()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(DialFail::Other(TransportError::unreachable(format!(
                "{}: ziti connection: {e}",
                ep.label
            ))))
        }
        Err(_) => return Err(timed_out(ep)),
    }
    match t.take_error() {
        Ok(None) => Ok(stream),
        Ok(Some(e)) if e.raw_os_error() == Some(libc::ECONNREFUSED) => Err(DialFail::Refused),
        Ok(Some(e)) | Err(e) => Err(DialFail::Other(TransportError::unreachable(format!(
            "{} via ziti service '{}': {e}",
            ep.label, ep.service
        )))),
    }
}

/// A dialled Ziti connection (the SDK's loopback TCP socket) as an async byte stream. Dropping
/// it closes the socket with `close(2)` (see [`dial_blocking`]); the SDK sees the bridge's end
/// close and closes the Ziti connection on its loop.
pub struct ZitiStream {
    inner: tokio::net::TcpStream,
}

impl AsyncRead for ZitiStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if monky_base::testhook::wedged("sdk") {
            // the SDK's loop pumps these bytes: wedged, nothing arrives (the caller's time-out
            // wakes it)
            return Poll::Pending;
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for ZitiStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

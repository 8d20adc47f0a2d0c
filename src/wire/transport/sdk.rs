//! `sdk` transport: dial Ziti services by name from inside this process, through the OpenZiti C
//! SDK (zitilib, 1.x) that `ziti-sys` linked — or none: then start-up fails with a message saying
//! how to get one.
//!
//! Owns the SDK's process-wide state: `Ziti_lib_init` and the exit hook once, at context start
//! (the first connector or enrolment); each identity file loaded once per process on its own
//! thread with `Ziti_load_context_with_timeout` (started when the connector is made, awaited by
//! the first dial, so the load overlaps the tick's local work); every blocking
//! zitilib call (`Ziti_socket`, `Ziti_connect`, loading, enrolment) runs on a plain thread, never
//! on the async runtime, and `Ziti_last_error` is read on the thread that made the call. A dial
//! yields the SDK's loopback TCP socket, connected without blocking; the stream closes it with
//! `close(2)`, the SDK's close for a connect socket.
//!
//! Typed errors: what an operator must fix is [`TransportError::Setup`] (exit 1), what the next
//! tick may find healed is [`TransportError::Unreachable`] (exit 75).

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Mutex, Once, OnceLock};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;
use ziti_sys::codes::*;

mod dial;
mod egress;
mod enroll;
mod identity;

use dial::dial;
pub use dial::{oldest_pending_call, ZitiStream};
pub use egress::controller_address;

/// Every target the SDK connected to in this process (controllers, edge routers): what the
/// box depends on under `sdk` beyond the identity's controller (`host::depends`).
pub fn dialled_targets() -> Vec<(String, u16)> {
    egress::dialled()
}
pub use enroll::{enroll, enroll_via};
use identity::*;

use super::{Endpoint, TransportError};
use crate::egress::Egress;

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
    // SAFETY: takes nothing; returns NULL or a pointer to a static struct.
    let v = unsafe { ziti_sys::ziti_get_version() };
    // SAFETY: NULL or a valid pointer to a static struct (above).
    let Some(v) = (unsafe { v.as_ref() }) else {
        return Some("unknown".into());
    };
    if v.version.is_null() {
        return Some("unknown".into());
    }
    // SAFETY: a non-NULL static NUL-terminated string of the SDK's.
    let version = unsafe { CStr::from_ptr(v.version) };
    Some(version.to_string_lossy().into_owned())
}

fn no_sdk(what: &str) -> TransportError {
    TransportError::setup(format!(
        "{what}: this build of monky-deployd has no OpenZiti SDK linked; {}",
        ziti_sys::HOW_TO_GET
    ))
}

/// The SDK's text for a zitilib error code, or the OS text for an errno.
fn errorstr(code: i32) -> String {
    if code > 0 {
        return io::Error::from_raw_os_error(code).to_string();
    }
    // SAFETY: takes any int; returns NULL or a static NUL-terminated string.
    let p = unsafe { ziti_sys::ziti_errorstr(code) };
    if p.is_null() {
        return format!("error {code}");
    }
    // SAFETY: a non-NULL static NUL-terminated string (above).
    let text = unsafe { CStr::from_ptr(p) };
    text.to_string_lossy().into_owned()
}

/// Context start, once per process, before any identity is loaded or enrolled: set the egress
/// (tlsuv's global connector, see `egress`), start the SDK's loop (`Ziti_lib_init`), have its
/// TLS library register its exit-time clean-up now, then install the exit hook
/// ([`install_exit_hook`]) — after that clean-up, so it runs first.
fn start_sdk(egress: &Egress) -> Result<(), TransportError> {
    egress::install(egress)?;
    start_loop();
    Ok(())
}

fn start_loop() {
    static START: Once = Once::new();
    START.call_once(|| {
        // SAFETY: the first zitilib call of the process (guarded by `START`); it takes no
        // arguments and starts the SDK's loop thread.
        unsafe { ziti_sys::Ziti_lib_init() };
        // registers OpenSSL's `atexit` clean-up (where the build knows OpenSSL is linked)
        ziti_sys::init_tls_library();
        install_exit_hook();
    });
}

/// From now on the process leaves through `_exit(status)` when it exits, before the C exit
/// handlers the SDK registered (OpenSSL's clean-up) free state under the SDK's loop thread, which
/// still runs — the crash at exit docs/ZITI.md describes. `main` already leaves so; this covers
/// every other process that loads the SDK (the test binaries). `on_exit` handlers run
/// last-registered first, so this must be registered after the SDK's: [`start_sdk`] does so.
fn install_exit_hook() {
    extern "C" {
        fn on_exit(
            f: extern "C" fn(libc::c_int, *mut libc::c_void),
            arg: *mut libc::c_void,
        ) -> libc::c_int;
    }
    extern "C" fn leave_before_sdk_cleanup(status: libc::c_int, _: *mut libc::c_void) {
        // SAFETY: flushes every C stdio stream (NULL means all); Rust's own buffers are flushed
        // before `exit` is called.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        // SAFETY: ends the process at once with the status `exit` was given; nothing after it
        // runs, so no state is left half-freed.
        unsafe { libc::_exit(status) }
    }
    // SAFETY: registers a plain `extern "C"` function that ignores its (null) argument.
    let rc = unsafe { on_exit(leave_before_sdk_cleanup, std::ptr::null_mut()) };
    if rc != 0 {
        tracing::warn!("ziti: cannot register the exit hook (on_exit: {rc})");
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Dials services by name with one identity loaded into the linked C SDK.
pub struct SdkConnector {
    identity: PathBuf,
    key: PathBuf,
    cpath: &'static CStr,
    info: IdentityInfo,
    load_timeout: Duration,
    egress: Egress,
    handle: OnceLock<ziti_sys::ziti_handle_t>,
    version: String,
}

impl SdkConnector {
    /// Check `identity` and start loading it (once per process) without waiting; the first
    /// dial, or [`SdkConnector::ready`], waits at most `load_timeout` for it. No proxy.
    pub fn new(identity: &Path, load_timeout: Duration) -> Result<SdkConnector, TransportError> {
        Self::with_egress(identity, load_timeout, &Egress::direct())
    }

    /// [`SdkConnector::new`] with the box's egress: the controller and the edge routers are
    /// reached through its proxy unless `no_proxy` lists them. The first start in a process
    /// fixes the egress for the process.
    pub fn with_egress(
        identity: &Path,
        load_timeout: Duration,
        egress: &Egress,
    ) -> Result<SdkConnector, TransportError> {
        if !ziti_sys::LINKED {
            return Err(no_sdk("transport sdk"));
        }
        let info = check_identity(identity)?;
        let key = identity
            .canonicalize()
            .unwrap_or_else(|_| identity.to_path_buf());
        let cpath = identity_cstr(&key)?;
        start_sdk(egress)?;
        start_load(&key, cpath, load_timeout)?;
        Ok(SdkConnector {
            identity: identity.to_path_buf(),
            key,
            cpath,
            info,
            load_timeout,
            egress: egress.clone(),
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
        let state = match tokio::time::timeout(
            self.load_timeout + LOAD_MARGIN,
            rx.wait_for(|s| s.is_some()),
        )
        .await
        {
            Ok(Ok(s)) => *s,
            Ok(Err(_)) => None,
            Err(_) => Some(Err(ZITI_TIMEOUT)),
        };
        match state {
            Some(Ok(h)) => Ok(*self.handle.get_or_init(|| h)),
            Some(Err(code)) => {
                let e = load_error(&self.identity, &self.info, self.load_timeout, code);
                Err(self.with_proxy_verdict(e).await)
            }
            None => Err(TransportError::unreachable(format!(
                "ziti identity {}: the loader thread vanished",
                self.identity.display()
            ))),
        }
    }
}

impl SdkConnector {
    /// `e` with what the proxy says when the controller is reached through one: a proxy that is
    /// down or refuses makes it a temporary failure whatever the SDK's code was.
    async fn with_proxy_verdict(&self, e: TransportError) -> TransportError {
        let (eg, url) = (self.egress.clone(), self.info.controller.clone());
        let verdict = tokio::task::spawn_blocking(move || egress::proxy_verdict(&eg, &url))
            .await
            .ok()
            .flatten();
        egress::classify(e, verdict)
    }

    /// `e` with what the proxy says about the last target it failed to connect (an edge
    /// router, typically) since the last failure, when the proxy is at fault.
    async fn with_refused_verdict(&self, e: TransportError) -> TransportError {
        let Some(target) = egress::take_refused() else {
            return e;
        };
        let eg = self.egress.clone();
        let url = format!("tcp://{target}");
        let verdict = tokio::task::spawn_blocking(move || egress::proxy_verdict(&eg, &url))
            .await
            .ok()
            .flatten()
            // a proxy that lets it through now has nothing to say about this failure
            .filter(|v| v.fault);
        egress::classify(e, verdict)
    }

    /// Dial `ep.service` (waiting for the identity first); [`super::ZitiConnector`] is this as
    /// a hyper connector.
    pub async fn connect(&self, ep: &Endpoint) -> Result<ZitiStream, TransportError> {
        let t0 = std::time::Instant::now();
        let h = self.handle().await?;
        let loaded = t0.elapsed();
        let s = match dial(h, &self.identity, ep).await {
            Ok(s) => s,
            Err(e) => return Err(self.with_refused_verdict(e).await),
        };
        tracing::debug!(
            "ziti: {} connected via '{}' in {} ms (waited {} ms for the identity)",
            ep.label,
            ep.service,
            t0.elapsed().as_millis(),
            loaded.as_millis()
        );
        Ok(s)
    }

    /// The egress route this connector was made with (the process's first one is what the SDK
    /// follows); the tick registers its password with the redactor.
    pub fn egress(&self) -> &Egress {
        &self.egress
    }

    /// e.g. `sdk (libziti 1.18.2, identity /etc/…/id.json)`, with `, egress via …` behind a
    /// proxy.
    pub fn describe(&self) -> String {
        let via = match egress::installed() {
            Some(e) if e != "direct" => format!(", egress {e}"),
            _ => String::new(),
        };
        format!(
            "sdk (libziti {}, identity {}{via})",
            self.version,
            self.identity.display()
        )
    }
}

#[cfg(test)]
mod tests;

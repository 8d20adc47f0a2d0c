//! The identity file: checked before the SDK sees it, and loaded once per process on a
//! thread of its own (`Ziti_load_context_with_timeout`).

use super::*;

/// The parts of an identity file that are checked before the SDK sees it.
#[derive(Clone)]
pub(super) struct IdentityInfo {
    pub(super) controller: String,
}

/// Read and sanity-check an identity file, so a missing or corrupt one is a clear Setup error
/// naming the file rather than whatever the SDK makes of it.
pub(super) fn check_identity(path: &Path) -> Result<IdentityInfo, TransportError> {
    let p = path.display();
    let meta = fs::metadata(path).map_err(|e| {
        TransportError::setup(format!("ziti identity {p}: cannot read: {e}")).because(e)
    })?;
    if meta.len() > MAX_IDENTITY_BYTES {
        return Err(TransportError::setup(format!(
            "ziti identity {p}: {} bytes, larger than any identity ({MAX_IDENTITY_BYTES} max)",
            meta.len()
        )));
    }
    let text = fs::read(path).map_err(|e| {
        TransportError::setup(format!("ziti identity {p}: cannot read: {e}")).because(e)
    })?;
    let v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        TransportError::setup(format!(
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
        return Err(TransportError::setup(format!(
            "ziti identity {p} is not a Ziti identity: missing {}; re-enrol with `monky-deployd enroll`",
            missing.join(", ")
        )));
    }
    Ok(IdentityInfo { controller })
}

/// The identity path as the C string the SDK keeps: its loader thread still reads it after a
/// time-out, and keys its context table by it. One per distinct path per process, never freed.
pub(super) fn identity_cstr(key: &Path) -> Result<&'static CStr, TransportError> {
    static PATHS: OnceLock<Mutex<HashMap<PathBuf, &'static CStr>>> = OnceLock::new();
    let mut map = lock(PATHS.get_or_init(Default::default));
    if let Some(c) = map.get(key) {
        return Ok(c);
    }
    let c = CString::new(key.as_os_str().as_encoded_bytes()).map_err(|_| {
        TransportError::setup(format!(
            "ziti identity {}: path contains NUL",
            key.display()
        ))
    })?;
    let c: &'static CStr = Box::leak(c.into_boxed_c_str());
    map.insert(key.to_path_buf(), c);
    Ok(c)
}

/// `None` while loading, then the handle or the zitilib code.
pub(super) type LoadState = Option<Result<ziti_sys::ziti_handle_t, i32>>;

/// Start loading `key` unless a load of it is under way or done; a failed load is started anew.
pub(super) fn start_load(
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
            TransportError::setup(format!(
                "ziti: cannot start the identity loader thread: {e}"
            ))
        })?;
    map.insert(key.to_path_buf(), rx.clone());
    Ok(rx)
}

pub(super) fn load_error(
    path: &Path,
    info: &IdentityInfo,
    timeout: Duration,
    code: i32,
) -> TransportError {
    let p = path.display();
    let c = &info.controller;
    let msg = errorstr(code);
    match code {
        ZITI_TIMEOUT => TransportError::unreachable(format!(
            "ziti identity {p}: not loaded within {}s (controller {c} unreachable, or no service \
             is granted to this identity)",
            timeout.as_secs()
        )),
        ZITI_CONTROLLER_UNAVAILABLE | ZITI_GATEWAY_UNAVAILABLE => {
            TransportError::unreachable(format!("ziti identity {p}: controller {c}: {msg}"))
        }
        // an earlier load of this file timed out and the SDK has not finished cleaning it up
        ZITI_INVALID_STATE => TransportError::unreachable(format!(
            "ziti identity {p}: the SDK is still winding down an earlier load ({msg}); retrying \
             next tick"
        )),
        ZITI_NOT_AUTHORIZED | ZITI_AUTHENTICATION_FAILED => TransportError::setup(format!(
            "ziti identity {p}: rejected by controller {c} ({msg}); re-enrol with `monky-deployd enroll`"
        )),
        _ => TransportError::setup(format!(
            "ziti identity {p}: the SDK cannot load it ({msg}, code {code})"
        )),
    }
}

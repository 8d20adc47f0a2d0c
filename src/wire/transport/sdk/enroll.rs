//! Enrolment from a one-time JWT (`Ziti_enroll_identity`).

use super::*;

/// Enrol an identity from a one-time JWT with the SDK (`Ziti_enroll_identity`); writes the
/// identity JSON 0600 to `out` atomically (temporary file, fsync, rename, fsync of the directory).
/// No proxy.
pub fn enroll(jwt: &Path, out: &Path) -> Result<(), TransportError> {
    enroll_via(jwt, out, &Egress::direct())
}

/// [`enroll`] with the box's egress: the controller named in the JWT is reached through the
/// proxy unless `no_proxy` lists it.
pub fn enroll_via(jwt: &Path, out: &Path, egress: &Egress) -> Result<(), TransportError> {
    if !ziti_sys::LINKED {
        return Err(no_sdk("enroll"));
    }
    let j = jwt.display();
    let meta = fs::metadata(jwt)
        .map_err(|e| TransportError::setup(format!("enroll: JWT {j}: {e}")).because(e))?;
    if meta.len() > MAX_JWT_BYTES {
        return Err(TransportError::setup(format!(
            "enroll: JWT {j}: {} bytes is not a JWT",
            meta.len()
        )));
    }
    let text = fs::read_to_string(jwt)
        .map_err(|e| TransportError::setup(format!("enroll: JWT {j}: {e}")).because(e))?;
    let token = text.trim();
    if token.split('.').count() != 3 {
        return Err(TransportError::setup(format!(
            "enroll: {j} does not hold a JWT (expected header.payload.signature)"
        )));
    }
    let ctoken = CString::new(token)
        .map_err(|_| TransportError::setup(format!("enroll: JWT {j} contains NUL")))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            return Err(TransportError::setup(format!(
                "enroll: directory {} does not exist",
                dir.display()
            )));
        }
    }
    super::start_sdk(egress)?;
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
                // SAFETY: on success the SDK returned a malloc'd buffer of `len` bytes, which
                // nothing else refers to; copied out before it is freed below.
                let bytes =
                    unsafe { std::slice::from_raw_parts(json as *const u8, len as usize).to_vec() };
                // SAFETY: the SDK's malloc'd buffer, freed once, not used after.
                unsafe { libc::free(json.cast()) };
                Ok(bytes)
            } else {
                Err(if rc != 0 { rc } else { ZITI_INVALID_STATE })
            };
            let _ = tx.send(res);
        })
        .map_err(|e| {
            TransportError::setup(format!("enroll: cannot start a thread: {e}")).because(e)
        })?;
    let got = rx.recv_timeout(ENROLL_TIMEOUT);
    let bytes = match got {
        Ok(Ok(b)) => b,
        Ok(Err(code)) => {
            let msg = errorstr(code);
            let e = match code {
                ZITI_CONTROLLER_UNAVAILABLE | ZITI_TIMEOUT => {
                    TransportError::unreachable(format!("enroll: controller named in {j}: {msg}"))
                }
                _ => TransportError::setup(format!(
                    "enroll with {j}: {msg} (code {code}); a JWT is good for one enrolment only"
                )),
            };
            return Err(via_proxy(e, token, egress));
        }
        Err(_) => {
            let e = TransportError::unreachable(format!(
                "enroll: no answer from the controller within {}s",
                ENROLL_TIMEOUT.as_secs()
            ));
            return Err(via_proxy(e, token, egress));
        }
    };
    // Trailing NUL, if the SDK counted it.
    let bytes = match bytes.split_last() {
        Some((0, rest)) => rest.to_vec(),
        _ => bytes,
    };
    monky_base::files::write_private(out, &bytes, 0o600)
        .map_err(|e| TransportError::setup(format!("enroll: {e}")))
}

/// `e` with what the proxy says, when the JWT's controller (its `iss`) is reached through one.
fn via_proxy(e: TransportError, token: &str, egress: &Egress) -> TransportError {
    let verdict = jwt_issuer(token).and_then(|url| egress::proxy_verdict(egress, &url));
    egress::classify(e, verdict)
}

/// The `iss` claim of an enrolment JWT: the controller's URL.
fn jwt_issuer(token: &str) -> Option<String> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    v.get("iss")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_of_an_enrolment_jwt_is_its_issuer() {
        use base64::Engine as _;
        let b = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let t = format!(
            "{}.{}.sig",
            b(r#"{"alg":"RS256"}"#),
            b(r#"{"iss":"https://ctrl.example:1280","em":"ott"}"#)
        );
        assert_eq!(jwt_issuer(&t).as_deref(), Some("https://ctrl.example:1280"));
        assert_eq!(jwt_issuer("a.!!!.c"), None);
        assert_eq!(jwt_issuer(&format!("a.{}.c", b("{}"))), None);
    }
}

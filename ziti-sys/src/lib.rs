//! Raw FFI to the OpenZiti C SDK (zitilib), as decided by `build.rs`: a vendored source build, a
//! prebuilt `ZITI_SDK_DIR`, or no SDK at all.
//!
//! * [`raw`] (only with an SDK): the bindgen output, exactly the SDK line's signatures.
//! * [`compat`]: the same calls with one signature across SDK lines (pointer context of 0.29–1.7
//!   vs `ziti_handle_t` of 1.8+, `Ziti_close` only from 0.30.7). Still raw and `unsafe`; without
//!   an SDK every call returns [`NO_SDK`] and [`LINKED`] is false. The safe wrapper lives in the
//!   agent (`src/transport/sdk.rs`).
#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    clippy::missing_safety_doc
)]

include!(concat!(env!("OUT_DIR"), "/sdk_info.rs"));

/// True when a libziti is linked into this build.
pub const LINKED: bool = cfg!(ziti_sdk);

/// What to tell an operator whose build has no SDK.
pub const HOW_TO_GET: &str = "rebuild monky-deployd with an OpenZiti C SDK: set ZITI_SDK_DIR to a \
prebuilt SDK (lib/libziti.so; scripts/provision.sh puts libziti 0.29.3 in \
/var/cache/monky-deployd-dev/libziti) or fill vendor/ziti-sdk-c (see vendor/README.md); \
or use `transport: proxy` with `ziti tunnel proxy`";

/// Returned by every [`compat`] call in a build without an SDK (not a zitilib code).
pub const NO_SDK: i32 = -10_000;

/// zitilib error codes (errors.h), stable from 0.29 through 1.x for the ones named here.
pub mod codes {
    pub const ZITI_OK: i32 = 0;
    pub const ZITI_CONFIG_NOT_FOUND: i32 = -1;
    pub const ZITI_JWT_NOT_FOUND: i32 = -2;
    pub const ZITI_JWT_INVALID: i32 = -3;
    pub const ZITI_JWT_INVALID_FORMAT: i32 = -4;
    pub const ZITI_KEY_LOAD_FAILED: i32 = -11;
    pub const ZITI_INVALID_CONFIG: i32 = -13;
    pub const ZITI_NOT_AUTHORIZED: i32 = -14;
    pub const ZITI_CONTROLLER_UNAVAILABLE: i32 = -15;
    pub const ZITI_GATEWAY_UNAVAILABLE: i32 = -16;
    pub const ZITI_SERVICE_UNAVAILABLE: i32 = -17;
    pub const ZITI_EOF: i32 = -18;
    pub const ZITI_TIMEOUT: i32 = -19;
    pub const ZITI_CONNABORT: i32 = -20;
    pub const ZITI_INVALID_STATE: i32 = -21;
    pub const ZITI_CRYPTO_FAIL: i32 = -22;
    pub const ZITI_CONN_CLOSED: i32 = -23;
    pub const ZITI_NOT_FOUND: i32 = -28;
    pub const ZITI_DISABLED: i32 = -29;
}

#[cfg(ziti_sdk)]
pub mod raw {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}

pub mod compat {
    //! One signature per call across SDK lines. All functions are thin `unsafe` shims.
    use std::os::raw::{c_char, c_int, c_ulong};

    /// A loaded context: the pointer (0.29–1.7) or the handle (1.8+) widened to `usize`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Context(pub usize);

    /// Prefix common to every line's `ziti_version`.
    #[repr(C)]
    pub struct Version {
        pub version: *const c_char,
        pub revision: *const c_char,
        pub build_date: *const c_char,
    }

    #[cfg(ziti_sdk)]
    mod imp {
        use super::*;
        use crate::raw;

        pub unsafe fn lib_init() {
            raw::Ziti_lib_init()
        }
        pub unsafe fn lib_shutdown() {
            raw::Ziti_lib_shutdown()
        }
        pub unsafe fn last_error() -> c_int {
            raw::Ziti_last_error()
        }
        pub unsafe fn errorstr(code: c_int) -> *const c_char {
            raw::ziti_errorstr(code)
        }
        pub unsafe fn version() -> *const Version {
            raw::ziti_get_version() as *const Version
        }
        pub unsafe fn socket(kind: c_int) -> c_int {
            raw::Ziti_socket(kind) as c_int
        }

        /// Blocks until the context is loaded (0.29: until the first service event, possibly
        /// forever). Returns 0 and sets `*out`, or a zitilib error code.
        #[cfg(not(ziti_api_handle))]
        pub unsafe fn load_context(
            identity: *const c_char,
            _timeout_ms: c_int,
            out: *mut Context,
        ) -> c_int {
            let ctx = raw::Ziti_load_context(identity);
            if ctx.is_null() {
                let e = raw::Ziti_last_error();
                return if e == 0 {
                    crate::codes::ZITI_INVALID_CONFIG
                } else {
                    e
                };
            }
            *out = Context(ctx as usize);
            0
        }
        #[cfg(all(ziti_api_handle, ziti_has_load_timeout))]
        pub unsafe fn load_context(
            identity: *const c_char,
            timeout_ms: c_int,
            out: *mut Context,
        ) -> c_int {
            let mut h: raw::ziti_handle_t = raw::ziti_handle_t::MAX;
            let rc = raw::Ziti_load_context_with_timeout(&mut h, identity, timeout_ms);
            if rc == 0 {
                *out = Context(h as usize);
            }
            rc
        }
        #[cfg(all(ziti_api_handle, not(ziti_has_load_timeout)))]
        pub unsafe fn load_context(
            identity: *const c_char,
            _timeout_ms: c_int,
            out: *mut Context,
        ) -> c_int {
            let mut h: raw::ziti_handle_t = raw::ziti_handle_t::MAX;
            let rc = raw::Ziti_load_context(&mut h, identity);
            if rc == 0 {
                *out = Context(h as usize);
            }
            rc
        }

        pub unsafe fn connect(
            fd: c_int,
            ctx: Context,
            service: *const c_char,
            terminator: *const c_char,
        ) -> c_int {
            #[cfg(ziti_api_handle)]
            let c = ctx.0 as raw::ziti_handle_t;
            #[cfg(not(ziti_api_handle))]
            let c = ctx.0 as raw::ziti_context;
            raw::Ziti_connect(fd as _, c, service, terminator)
        }

        /// `Ziti_close` where the SDK has it (0.30.7+), plain `close(2)` before.
        pub unsafe fn close(fd: c_int) -> c_int {
            #[cfg(ziti_has_close)]
            {
                raw::Ziti_close(fd as _)
            }
            #[cfg(not(ziti_has_close))]
            {
                libc::close(fd)
            }
        }

        pub unsafe fn enroll_identity(
            jwt: *const c_char,
            key: *const c_char,
            cert: *const c_char,
            id_json: *mut *mut c_char,
            id_json_len: *mut c_ulong,
        ) -> c_int {
            raw::Ziti_enroll_identity(jwt, key, cert, id_json, id_json_len as _)
        }
    }

    #[cfg(not(ziti_sdk))]
    mod imp {
        use super::*;
        use crate::NO_SDK;

        pub unsafe fn lib_init() {}
        pub unsafe fn lib_shutdown() {}
        pub unsafe fn last_error() -> c_int {
            NO_SDK
        }
        pub unsafe fn errorstr(_code: c_int) -> *const c_char {
            c"no OpenZiti SDK linked".as_ptr()
        }
        pub unsafe fn version() -> *const Version {
            std::ptr::null()
        }
        pub unsafe fn socket(_kind: c_int) -> c_int {
            -1
        }
        pub unsafe fn load_context(
            _identity: *const c_char,
            _timeout_ms: c_int,
            _out: *mut Context,
        ) -> c_int {
            NO_SDK
        }
        pub unsafe fn connect(
            _fd: c_int,
            _ctx: Context,
            _service: *const c_char,
            _terminator: *const c_char,
        ) -> c_int {
            NO_SDK
        }
        pub unsafe fn close(fd: c_int) -> c_int {
            libc::close(fd)
        }
        pub unsafe fn enroll_identity(
            _jwt: *const c_char,
            _key: *const c_char,
            _cert: *const c_char,
            _id_json: *mut *mut c_char,
            _id_json_len: *mut c_ulong,
        ) -> c_int {
            NO_SDK
        }
    }

    pub use imp::*;
}

#[cfg(all(test, ziti_sdk))]
mod tests {
    use super::*;
    use std::ffi::CStr;

    /// The linked library answers with its own version and its own error texts.
    #[test]
    fn linked_library_reports_version_and_error_text() {
        unsafe {
            let v = compat::version();
            assert!(!v.is_null());
            let ver = CStr::from_ptr((*v).version).to_string_lossy().into_owned();
            assert!(
                ver.chars().next().is_some_and(|c| c.is_ascii_digit()),
                "version {ver:?}"
            );
            let msg = CStr::from_ptr(compat::errorstr(codes::ZITI_SERVICE_UNAVAILABLE))
                .to_string_lossy()
                .into_owned();
            assert_eq!(msg, "Service not available");
            let msg = CStr::from_ptr(compat::errorstr(codes::ZITI_CONTROLLER_UNAVAILABLE))
                .to_string_lossy()
                .into_owned();
            assert_eq!(msg, "Ziti Controller is not available");
        }
    }
}

#[cfg(all(test, not(ziti_sdk)))]
mod tests_none {
    /// Without an SDK the crate still builds and says so.
    #[test]
    fn no_sdk_build_says_so() {
        const { assert!(!super::LINKED) };
        assert_eq!(super::SOURCE, "none");
        assert_eq!(
            unsafe { super::compat::load_context(std::ptr::null(), 0, std::ptr::null_mut()) },
            super::NO_SDK
        );
    }
}

//! Raw FFI to the OpenZiti C SDK's zitilib (1.x line, handle API), as decided by `build.rs`: the
//! vendored ziti-sdk-c built from source (default), a prebuilt `ZITI_SDK_DIR`, or no SDK at all.
//!
//! With an SDK, the functions below are bindgen's output over the linked SDK's own `zitilib.h`.
//! Without one, the same names and signatures exist and fail with [`NO_SDK`], and [`LINKED`] is
//! false, so the safe wrapper (`src/transport/sdk.rs` in the agent) compiles either way.
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
pub const HOW_TO_GET: &str = "rebuild monky-deployd with its default features (the vendored \
OpenZiti C SDK is built from vendor/) or with ZITI_SDK_DIR pointing at a prebuilt 1.x SDK; \
or use `transport: proxy` with `ziti tunnel proxy`";

/// Returned by every call in a build without an SDK (not a zitilib code).
pub const NO_SDK: i32 = -10_000;

/// `ZITI_INVALID_HANDLE`.
pub const INVALID_HANDLE: u32 = u32::MAX;

/// zitilib error codes of the 1.x line (`ziti/errors.h`); a test checks them against the header
/// of the linked SDK.
pub mod codes {
    pub const ZITI_OK: i32 = 0;
    pub const ZITI_CONFIG_NOT_FOUND: i32 = -1;
    pub const ZITI_JWT_NOT_FOUND: i32 = -2;
    pub const ZITI_JWT_INVALID: i32 = -3;
    pub const ZITI_JWT_INVALID_FORMAT: i32 = -4;
    pub const ZITI_KEY_LOAD_FAILED: i32 = -11;
    pub const ZITI_INVALID_CONFIG: i32 = -13;
    pub const ZITI_AUTHENTICATION_FAILED: i32 = -14;
    pub const ZITI_NOT_AUTHORIZED: i32 = -15;
    pub const ZITI_CONTROLLER_UNAVAILABLE: i32 = -16;
    pub const ZITI_GATEWAY_UNAVAILABLE: i32 = -17;
    pub const ZITI_SERVICE_UNAVAILABLE: i32 = -18;
    pub const ZITI_EOF: i32 = -19;
    pub const ZITI_TIMEOUT: i32 = -20;
    pub const ZITI_CONNABORT: i32 = -21;
    pub const ZITI_INVALID_STATE: i32 = -22;
    pub const ZITI_CRYPTO_FAIL: i32 = -23;
    pub const ZITI_CONN_CLOSED: i32 = -24;
    pub const ZITI_NOT_FOUND: i32 = -29;
    pub const ZITI_DISABLED: i32 = -30;
}

/// Whether the linked SDK lets the caller set its service refresh period (the vendored SDK's
/// patch 0006; upstream zitilib fixes it at 60 s).
pub const REFRESH_KNOB: bool = cfg!(ziti_refresh_knob);

/// Sets the service refresh period, in seconds, of every context loaded after the call; does
/// nothing when [`REFRESH_KNOB`] is false.
pub fn set_refresh_interval(seconds: u32) {
    #[cfg(ziti_refresh_knob)]
    // SAFETY: stores a number the loop thread reads when it next loads a context.
    unsafe {
        raw::Ziti_set_refresh_interval(std::os::raw::c_long::from(seconds))
    };
    #[cfg(not(ziti_refresh_knob))]
    let _ = seconds;
}

/// The prefix of `ziti_version` that every 1.x SDK shares.
pub use raw::monky_ziti_version as Version;

/// Everything bindgen generated (with an SDK), or the stubs below (without).
#[cfg(ziti_sdk)]
pub mod raw {
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}

#[cfg(not(ziti_sdk))]
pub mod raw {
    use crate::NO_SDK;
    use std::os::raw::{c_char, c_int, c_ulong};

    pub type ziti_handle_t = u32;
    pub type ziti_socket_t = c_int;
    #[repr(C)]
    pub struct monky_ziti_version {
        pub version: *const c_char,
        pub revision: *const c_char,
        pub build_date: *const c_char,
    }

    pub unsafe fn Ziti_lib_init() {}
    pub unsafe fn Ziti_lib_shutdown() {}
    pub unsafe fn Ziti_last_error() -> c_int {
        NO_SDK
    }
    pub unsafe fn ziti_errorstr(_err: c_int) -> *const c_char {
        c"no OpenZiti SDK linked".as_ptr()
    }
    pub unsafe fn ziti_get_version() -> *const monky_ziti_version {
        std::ptr::null()
    }
    pub unsafe fn Ziti_socket(_type: c_int) -> ziti_socket_t {
        -1
    }
    pub unsafe fn Ziti_load_context_with_timeout(
        _h: *mut ziti_handle_t,
        _identity: *const c_char,
        _timeout_ms: c_int,
    ) -> c_int {
        NO_SDK
    }
    pub unsafe fn Ziti_connect(
        _socket: ziti_socket_t,
        _ztx: ziti_handle_t,
        _service: *const c_char,
        _terminator: *const c_char,
    ) -> c_int {
        NO_SDK
    }
    pub unsafe fn Ziti_close(_socket: ziti_socket_t) -> c_int {
        -1
    }
    pub unsafe fn Ziti_enroll_identity(
        _jwt: *const c_char,
        _key: *const c_char,
        _cert: *const c_char,
        _id_json: *mut *mut c_char,
        _id_json_len: *mut c_ulong,
    ) -> c_int {
        NO_SDK
    }
}

pub use raw::{
    ziti_errorstr, ziti_get_version, ziti_handle_t, ziti_socket_t, Ziti_close, Ziti_connect,
    Ziti_enroll_identity, Ziti_last_error, Ziti_lib_init, Ziti_lib_shutdown,
    Ziti_load_context_with_timeout, Ziti_socket,
};

#[cfg(all(test, ziti_sdk))]
mod tests {
    use super::*;
    use std::ffi::CStr;

    /// The linked library answers with its own version and its own error texts.
    #[test]
    fn linked_library_reports_version_and_error_text() {
        unsafe {
            let v = ziti_get_version();
            assert!(!v.is_null());
            let ver = CStr::from_ptr((*v).version).to_string_lossy().into_owned();
            if SOURCE == "vendored" {
                assert_eq!(ver, BUILT_VERSION, "the SDK reports the vendored version");
                assert_eq!(ver, "1.18.2");
                let knob = std::hint::black_box(REFRESH_KNOB);
                assert!(knob, "the vendored SDK carries patch 0006");
            }
            let msg = CStr::from_ptr(ziti_errorstr(codes::ZITI_SERVICE_UNAVAILABLE))
                .to_string_lossy()
                .into_owned();
            assert_eq!(msg, "service not available");
            let msg = CStr::from_ptr(ziti_errorstr(codes::ZITI_CONTROLLER_UNAVAILABLE))
                .to_string_lossy()
                .into_owned();
            assert_eq!(msg, "ziti controller is not available");
        }
    }

    /// The hand-written codes (needed by builds without an SDK) are the linked header's.
    #[test]
    fn codes_match_the_linked_header() {
        use raw as h;
        let pairs: &[(i32, i64)] = &[
            (
                codes::ZITI_CONFIG_NOT_FOUND,
                h::ZITI_CONFIG_NOT_FOUND as i64,
            ),
            (codes::ZITI_JWT_INVALID, h::ZITI_JWT_INVALID as i64),
            (codes::ZITI_KEY_LOAD_FAILED, h::ZITI_KEY_LOAD_FAILED as i64),
            (codes::ZITI_INVALID_CONFIG, h::ZITI_INVALID_CONFIG as i64),
            (
                codes::ZITI_AUTHENTICATION_FAILED,
                h::ZITI_AUTHENTICATION_FAILED as i64,
            ),
            (codes::ZITI_NOT_AUTHORIZED, h::ZITI_NOT_AUTHORIZED as i64),
            (
                codes::ZITI_CONTROLLER_UNAVAILABLE,
                h::ZITI_CONTROLLER_UNAVAILABLE as i64,
            ),
            (
                codes::ZITI_GATEWAY_UNAVAILABLE,
                h::ZITI_GATEWAY_UNAVAILABLE as i64,
            ),
            (
                codes::ZITI_SERVICE_UNAVAILABLE,
                h::ZITI_SERVICE_UNAVAILABLE as i64,
            ),
            (codes::ZITI_EOF, h::ZITI_EOF as i64),
            (codes::ZITI_TIMEOUT, h::ZITI_TIMEOUT as i64),
            (codes::ZITI_CONNABORT, h::ZITI_CONNABORT as i64),
            (codes::ZITI_INVALID_STATE, h::ZITI_INVALID_STATE as i64),
            (codes::ZITI_CONN_CLOSED, h::ZITI_CONN_CLOSED as i64),
            (codes::ZITI_NOT_FOUND, h::ZITI_NOT_FOUND as i64),
            (codes::ZITI_DISABLED, h::ZITI_DISABLED as i64),
        ];
        for (ours, header) in pairs {
            assert_eq!(*ours as i64, *header);
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
        let mut h = 0u32;
        assert_eq!(
            unsafe { super::Ziti_load_context_with_timeout(&mut h, std::ptr::null(), 0) },
            super::NO_SDK
        );
    }
}

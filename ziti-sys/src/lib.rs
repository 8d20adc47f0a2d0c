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

/// Declares each code once: as a constant of [`codes`] and as a row of [`codes::ALL`], which the
/// header test walks, so no code can exist unchecked.
macro_rules! codes {
    ($($name:ident = $value:expr),+ $(,)?) => {
        $(pub const $name: i32 = $value;)+
        /// Every code above, by its header name.
        pub const ALL: &[(&str, i32)] = &[$((stringify!($name), $name)),+];
        /// Every code above beside the linked header's value of the same name.
        #[cfg(all(test, ziti_sdk))]
        pub(crate) fn header_pairs() -> Vec<(&'static str, i64, i64)> {
            vec![$((stringify!($name), i64::from($name), crate::raw::$name as i64)),+]
        }
    };
}

/// zitilib error codes of the 1.x line (`ziti/errors.h`); a test checks every one against the
/// header of the linked SDK.
pub mod codes {
    codes! {
        ZITI_OK = 0,
        ZITI_CONFIG_NOT_FOUND = -1,
        ZITI_JWT_NOT_FOUND = -2,
        ZITI_JWT_INVALID = -3,
        ZITI_JWT_INVALID_FORMAT = -4,
        ZITI_KEY_LOAD_FAILED = -11,
        ZITI_INVALID_CONFIG = -13,
        ZITI_AUTHENTICATION_FAILED = -14,
        ZITI_NOT_AUTHORIZED = -15,
        ZITI_CONTROLLER_UNAVAILABLE = -16,
        ZITI_GATEWAY_UNAVAILABLE = -17,
        ZITI_SERVICE_UNAVAILABLE = -18,
        ZITI_EOF = -19,
        ZITI_TIMEOUT = -20,
        ZITI_CONNABORT = -21,
        ZITI_INVALID_STATE = -22,
        ZITI_CRYPTO_FAIL = -23,
        ZITI_CONN_CLOSED = -24,
        ZITI_NOT_FOUND = -29,
        ZITI_DISABLED = -30,
    }
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

/// Whether this build knows OpenSSL is linked into the binary as the SDK's TLS library (the
/// vendored SDK, or a static prebuilt one with `ssl` among its link libraries).
pub const OPENSSL_LINKED: bool = cfg!(ziti_openssl);

/// Initialise the SDK's TLS library on the calling thread now, which registers its `atexit`
/// clean-up now instead of at the first identity load: a caller that wants a handler of its own to
/// run before that clean-up registers it after this call (`exit` runs handlers last-registered
/// first). Returns whether it did so: never when [`OPENSSL_LINKED`] is false.
pub fn init_tls_library() -> bool {
    #[cfg(ziti_openssl)]
    {
        extern "C" {
            fn OPENSSL_init_ssl(opts: u64, settings: *const std::ffi::c_void) -> std::ffi::c_int;
        }
        // what tlsuv asks for: OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS
        const SSL_DEFAULT: u64 = 0x0020_0000 | 0x0000_0002;
        // SAFETY: thread-safe and idempotent in OpenSSL 3; NULL settings mean the defaults.
        unsafe { OPENSSL_init_ssl(SSL_DEFAULT, std::ptr::null()) == 1 }
    }
    #[cfg(not(ziti_openssl))]
    false
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

/// The calls the safe wrapper makes. Not `Ziti_close` nor `Ziti_check_socket` (bindgen leaves
/// them out): both read the SDK's socket map on the calling thread, while only its loop thread
/// may touch that map; and the wrapper only makes connect sockets, which never enter it and close
/// with `close(2)`.
pub use raw::{
    ziti_errorstr, ziti_get_version, ziti_handle_t, ziti_socket_t, Ziti_connect,
    Ziti_enroll_identity, Ziti_last_error, Ziti_lib_init, Ziti_lib_shutdown,
    Ziti_load_context_with_timeout, Ziti_socket,
};

/// tlsuv's connectors (`tlsuv/connector.h` of the vendored tlsuv; every 1.x SDK links tlsuv):
/// how the SDK's HTTP clients (controller) and TLS streams (edge routers) open their sockets.
/// Declared by hand, not by bindgen: the header needs libuv's, which a prebuilt SDK may not ship.
/// Without an SDK the functions are stubs (`tlsuv_new_proxy_connector` answers NULL).
pub mod tlsuv {
    use std::os::raw::{c_char, c_int, c_void};

    /// `tlsuv_PROXY_HTTP` of `tlsuv_proxy_t`.
    pub const PROXY_HTTP: c_int = 0;
    /// `tlsuv_PROXY_BASIC` of `tlsuv_auth_t`.
    pub const PROXY_BASIC: c_int = 1;

    /// `tlsuv_connector_req`: opaque to the caller, owned by the connector that made it.
    pub type tlsuv_connector_req = *const c_void;
    /// `tlsuv_connect_cb`: called once per request, on the loop thread, with a connected socket
    /// (an `int` fd on Unix) or a negative libuv status.
    pub type tlsuv_connect_cb =
        Option<unsafe extern "C" fn(sock: c_int, status: c_int, ctx: *mut c_void)>;
    pub type tlsuv_connect = Option<
        unsafe extern "C" fn(
            loop_: *mut c_void,
            connector: *const tlsuv_connector_t,
            host: *const c_char,
            port: *const c_char,
            cb: tlsuv_connect_cb,
            ctx: *mut c_void,
        ) -> tlsuv_connector_req,
    >;

    /// `struct tlsuv_connector_s`: four function pointers, which a connector of ours fills.
    #[repr(C)]
    pub struct tlsuv_connector_t {
        pub connect: tlsuv_connect,
        pub set_auth: Option<
            unsafe extern "C" fn(
                this: *mut tlsuv_connector_t,
                auth: c_int,
                username: *const c_char,
                password: *const c_char,
            ) -> c_int,
        >,
        pub cancel: Option<unsafe extern "C" fn(req: tlsuv_connector_req)>,
        pub free: Option<unsafe extern "C" fn(this: *mut c_void)>,
    }

    #[cfg(ziti_sdk)]
    extern "C" {
        /// The connector of every client made from now on that has none of its own; NULL
        /// means tlsuv's direct one. Once set, tlsuv never reads `HTTP_PROXY` itself.
        pub fn tlsuv_set_global_connector(connector: *const tlsuv_connector_t);
        /// The global connector. Before any `tlsuv_set_global_connector` it is taken from
        /// `HTTP_PROXY`/`http_proxy` (and that URL logged, credentials included): set it first.
        pub fn tlsuv_global_connector() -> *const tlsuv_connector_t;
        /// An HTTP `CONNECT` proxy connector (host and port copied); freed by its `free`.
        pub fn tlsuv_new_proxy_connector(
            kind: c_int,
            host: *const c_char,
            port: *const c_char,
        ) -> *mut tlsuv_connector_t;
    }

    #[cfg(not(ziti_sdk))]
    pub unsafe fn tlsuv_set_global_connector(_connector: *const tlsuv_connector_t) {}
    #[cfg(not(ziti_sdk))]
    pub unsafe fn tlsuv_global_connector() -> *const tlsuv_connector_t {
        std::ptr::null()
    }
    #[cfg(not(ziti_sdk))]
    pub unsafe fn tlsuv_new_proxy_connector(
        _kind: c_int,
        _host: *const c_char,
        _port: *const c_char,
    ) -> *mut tlsuv_connector_t {
        std::ptr::null_mut()
    }
}

#[cfg(all(test, ziti_sdk))]
mod tests {
    use super::*;
    use std::ffi::CStr;

    /// The SDK's text for `code`.
    fn text(code: i32) -> String {
        // SAFETY: takes any int; returns a static NUL-terminated string.
        let p = unsafe { ziti_errorstr(code) };
        assert!(!p.is_null());
        // SAFETY: a non-NULL static string (above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// The linked library answers with its own version and its own error texts.
    #[test]
    fn linked_library_reports_version_and_error_text() {
        // SAFETY: takes nothing; returns a pointer to a static struct.
        let v = unsafe { ziti_get_version() };
        assert!(!v.is_null());
        // SAFETY: non-NULL (above); its `version` is a static NUL-terminated string.
        let ver = unsafe { CStr::from_ptr((*v).version) }
            .to_string_lossy()
            .into_owned();
        if SOURCE == "vendored" {
            let openssl = std::hint::black_box(OPENSSL_LINKED);
            assert!(openssl, "the vendored SDK is built over OpenSSL");
            assert_eq!(ver, BUILT_VERSION, "the SDK reports the vendored version");
            assert_eq!(ver, "1.18.2");
            let knob = std::hint::black_box(REFRESH_KNOB);
            assert!(knob, "the vendored SDK carries patch 0006");
        }
        assert_eq!(
            text(codes::ZITI_SERVICE_UNAVAILABLE),
            "service not available"
        );
        assert_eq!(
            text(codes::ZITI_CONTROLLER_UNAVAILABLE),
            "ziti controller is not available"
        );
        assert_eq!(init_tls_library(), OPENSSL_LINKED);
    }

    /// The hand-written codes (needed by builds without an SDK) are the linked header's, every
    /// one of them, and each has the SDK's own text.
    #[test]
    fn codes_match_the_linked_header() {
        let pairs = codes::header_pairs();
        assert_eq!(pairs.len(), codes::ALL.len());
        assert_eq!(pairs.len(), 20, "ZITI_OK and the 19 error codes");
        for (name, ours, header) in &pairs {
            assert_eq!(ours, header, "{name}");
        }
        let unknown = text(-9999);
        for (name, code) in codes::ALL {
            assert_ne!(
                text(*code),
                unknown,
                "{name}: the SDK has no text for {code}"
            );
        }
    }
}

#[cfg(all(test, ziti_sdk))]
mod tests_tlsuv {
    use super::tlsuv::*;

    /// The hand-written declarations link and match: a proxy connector is made, takes Basic
    /// auth, frees itself; NULL makes the global connector tlsuv's direct one.
    #[test]
    fn proxy_connector_and_global_connector_calls() {
        // SAFETY: valid NUL-terminated strings, copied by tlsuv.
        let c = unsafe {
            tlsuv_new_proxy_connector(PROXY_HTTP, c"127.0.0.1".as_ptr(), c"3128".as_ptr())
        };
        assert!(!c.is_null());
        // SAFETY: `c` is live; tlsuv's proxy connector fills all four pointers.
        let (set_auth, free) = unsafe { ((*c).set_auth.unwrap(), (*c).free.unwrap()) };
        assert!(unsafe { (*c).connect.is_some() && (*c).cancel.is_some() });
        // SAFETY: `c` is live; the strings are only read during the call.
        let rc = unsafe { set_auth(c, PROXY_BASIC, c"bob".as_ptr(), c"pw".as_ptr()) };
        assert_eq!(rc, 0);
        // SAFETY: frees `c` once; not used after.
        unsafe { free(c.cast()) };
        // SAFETY: no SDK loop runs in this test binary; NULL selects the direct connector.
        unsafe { tlsuv_set_global_connector(std::ptr::null()) };
        // SAFETY: as above; returns the static direct connector.
        let d = unsafe { tlsuv_global_connector() };
        assert!(!d.is_null());
        // SAFETY: the direct connector is static; its set_auth refuses (UV_ENOTSUP).
        let rc = unsafe {
            (*d).set_auth.unwrap()(d.cast_mut(), PROXY_BASIC, c"a".as_ptr(), c"b".as_ptr())
        };
        assert_ne!(rc, 0);
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

use super::*;
use crate::egress::{Credentials, NoProxy};
use std::net::TcpListener;

const PW: &str = "s3cret-pw";

fn egress(port: u16, no_proxy: &[&str]) -> Egress {
    Egress::new(
        Some(ProxyRoute {
            host: "127.0.0.1".into(),
            port,
            credentials: Some(Credentials::parse(&format!("bob:{PW}")).unwrap()),
        }),
        NoProxy::parse(no_proxy.iter().copied()).unwrap(),
    )
}

/// A one-shot proxy on loopback: answers `status` to the first request, hands back what
/// it was sent.
fn fake_proxy(status: &'static str) -> (u16, std::thread::JoinHandle<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = [0u8; 1024];
        let mut got = Vec::new();
        while !got.ends_with(b"\r\n\r\n") {
            let n = s.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        s.write_all(format!("{status}\r\nContent-Length: 0\r\n\r\n").as_bytes())
            .unwrap();
        String::from_utf8(got).unwrap()
    });
    (port, t)
}

#[test]
fn a_refusing_proxy_is_named_with_its_status_and_never_the_password() {
    let (port, t) = fake_proxy("HTTP/1.1 407 Proxy Authentication Required");
    let v = proxy_verdict(&egress(port, &[]), "https://ctrl.example:1280/edge").unwrap();
    let sent = t.join().unwrap();
    assert!(
        sent.starts_with("CONNECT ctrl.example:1280 HTTP/1.1\r\n"),
        "{sent}"
    );
    // Basic base64("bob:s3cret-pw")
    assert!(
        sent.contains("Proxy-Authorization: Basic Ym9iOnMzY3JldC1wdw==\r\n"),
        "{sent}"
    );
    assert!(v.fault);
    assert_eq!(
        v.text,
        format!(
            "proxy http://127.0.0.1:{port} refused CONNECT ctrl.example:1280: HTTP/1.1 407 \
             Proxy Authentication Required"
        )
    );
    assert!(!v.text.contains(PW));

    let (port, t) = fake_proxy("HTTP/1.1 200 Connection established");
    let v = proxy_verdict(&egress(port, &[]), "https://[::1]:1280").unwrap();
    assert!(t.join().unwrap().starts_with("CONNECT [::1]:1280 "));
    assert!(!v.fault, "{}", v.text);
    assert!(
        v.text.contains("lets CONNECT [::1]:1280 through"),
        "{}",
        v.text
    );
}

#[test]
fn a_proxy_that_is_down_is_named_and_no_proxy_targets_are_not_probed() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let v = proxy_verdict(&egress(port, &[]), "https://ctrl.example:1280").unwrap();
    assert!(v.fault);
    assert!(
        v.text
            .starts_with(&format!("proxy http://127.0.0.1:{port} is down (")),
        "{}",
        v.text
    );
    assert!(proxy_verdict(&egress(port, &[".example"]), "https://ctrl.example:1280").is_none());
    assert!(proxy_verdict(&Egress::direct(), "https://ctrl.example:1280").is_none());
}

#[test]
fn credentials_the_sdk_cannot_carry_are_a_setup_error_without_the_password() {
    let long = "p".repeat(MAX_BASIC_PAIR);
    for pw in [long.as_str(), "with\0nul"] {
        let route = ProxyRoute {
            host: "proxy.example".into(),
            port: 3128,
            credentials: Some(Credentials::parse(&format!("bob:{pw}")).unwrap()),
        };
        match proxy_connector(&route) {
            Err(TransportError::Setup { msg, .. }) => {
                assert!(msg.starts_with("egress_proxy http://proxy.example:3128: credentials"));
                assert!(!msg.contains(pw), "{msg}");
            }
            other => panic!("{:?}", other.map(|_| "a connector")),
        }
    }
}

#[test]
fn a_proxy_at_fault_makes_any_failure_temporary() {
    let v = |fault| {
        Some(Verdict {
            fault,
            text: "proxy http://p:3128 is down".into(),
        })
    };
    match classify(TransportError::setup("enroll: bad"), v(true)) {
        TransportError::Unreachable { msg, .. } => {
            assert_eq!(msg, "enroll: bad; proxy http://p:3128 is down")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        classify(TransportError::setup("x"), v(false)),
        TransportError::Setup { .. }
    ));
    assert!(matches!(
        classify(TransportError::unreachable("x"), v(false)),
        TransportError::Unreachable { .. }
    ));
    assert_eq!(classify(TransportError::setup("x"), None).to_string(), "x");
}

#[test]
fn controller_urls_split_into_host_and_port() {
    for (url, want) in [
        ("https://localhost:1280", Some(("localhost", 1280))),
        (
            "https://Ctrl.Example/edge/client/v1",
            Some(("ctrl.example", 443)),
        ),
        ("https://[fd00::1]:8441/", Some(("fd00::1", 8441))),
        ("https://u@c:1", Some(("c", 1))),
        ("https://c:notaport", None),
        ("https://:1280", None),
    ] {
        let got = host_port(url);
        assert_eq!(got.as_ref().map(|(h, p)| (h.as_str(), *p)), want, "{url}");
    }
}

#[test]
fn the_installed_connector_is_described_without_credentials() {
    assert_eq!(
        describe(&egress(3128, &["x"])),
        "via http://127.0.0.1:3128 (Basic auth), no_proxy targets direct"
    );
}

/// The connect callback is called by C: input tlsuv never gives (no connector, no host, an
/// inner connector without `connect`) fails that one request with `EINVAL`, never a panic
/// (which would abort the agent).
#[test]
fn the_connect_callback_refuses_bad_input_without_a_panic() {
    use std::sync::atomic::{AtomicI32, Ordering};
    static STATUS: AtomicI32 = AtomicI32::new(0);
    unsafe extern "C" fn cb(_sock: c_int, status: c_int, _ctx: *mut c_void) {
        STATUS.store(status, Ordering::SeqCst);
    }
    // SAFETY: an all-null connector is a valid value of the C struct (every field optional)
    let empty: tlsuv_connector_t = unsafe { std::mem::zeroed() };
    let d = Dispatch {
        // SAFETY: as above
        base: unsafe { std::mem::zeroed() },
        direct: &empty,
        proxy: std::ptr::null_mut(),
        egress: Egress::direct(),
    };
    let this = (&d as *const Dispatch).cast::<tlsuv_connector_t>();
    let (h, p) = (c"ctrl.example".as_ptr(), c"443".as_ptr());
    let (none, nul) = (std::ptr::null(), std::ptr::null());
    for (what, this, host, port) in [
        ("no connector", none, h, p),
        ("no host", this, nul, p),
        ("no port", this, h, nul),
        ("an inner connector without connect", this, h, p),
    ] {
        STATUS.store(0, Ordering::SeqCst);
        // SAFETY: the callback under test, with the pointers it is documented to accept or
        // refuse; nothing is retained past the call
        let req = unsafe {
            dispatch_connect(
                std::ptr::null_mut(),
                this,
                host,
                port,
                Some(cb),
                std::ptr::null_mut(),
            )
        };
        assert!(req.is_null(), "{what}");
        assert_eq!(STATUS.load(Ordering::SeqCst), -libc::EINVAL, "{what}");
    }
}

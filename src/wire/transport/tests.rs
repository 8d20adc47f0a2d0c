//! The connectors over local TCP: what system and proxy dial, how a refused dial is classed,
//! and that each is a hyper-util `Connect` service.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn ep(port: u16, proxy_port: u16) -> Endpoint {
    Endpoint {
        label: "tenancy",
        service: "monky.tenancy.deploy".into(),
        host: "localhost".into(),
        port,
        proxy_port,
        timeout: Duration::from_secs(2),
    }
}

async fn echo_once(l: tokio::net::TcpListener) {
    let (mut s, _) = l.accept().await.unwrap();
    let mut b = [0u8; 4];
    s.read_exact(&mut b).await.unwrap();
    s.write_all(&b).await.unwrap();
}

async fn roundtrip(mut c: impl Service<Uri, Response = Io, Error = TransportError>) {
    let io = c
        .call(Uri::from_static("https://tenancy.example:443/"))
        .await
        .expect("connect");
    let Io::Tcp(io) = io else { panic!("not tcp") };
    let mut s = io.into_inner();
    s.write_all(b"ping").await.unwrap();
    let mut b = [0u8; 4];
    s.read_exact(&mut b).await.unwrap();
    assert_eq!(&b, b"ping");
}

#[tokio::test]
async fn system_dials_the_endpoint_host_not_the_uri() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let srv = tokio::spawn(echo_once(l));
    let mut e = ep(port, 1);
    e.host = "127.0.0.1".into();
    roundtrip(Dialer::system().connector(&e)).await;
    srv.await.unwrap();
}

#[tokio::test]
async fn proxy_dials_loopback_proxy_port() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let srv = tokio::spawn(echo_once(l));
    roundtrip(Dialer::Proxy.connector(&ep(1, port))).await;
    srv.await.unwrap();
}

#[tokio::test]
async fn refused_dial_is_unreachable_naming_the_endpoint() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let mut c = Dialer::Proxy.connector(&ep(1, port));
    match c.call(Uri::from_static("http://x/")).await {
        Err(TransportError::Unreachable { msg: m, source }) => {
            assert!(
                m.starts_with(&format!("tenancy at 127.0.0.1:{port}: ")),
                "{m}"
            );
            // the OS error is kept, not only its text
            let kind = source.map(|e| e.kind());
            assert_eq!(kind, Some(io::ErrorKind::ConnectionRefused));
        }
        Err(e) => panic!("wrong class: {e}"),
        Ok(_) => panic!("dialled a closed port"),
    }
}

#[test]
fn connectors_are_hyper_util_connect_services() {
    fn is_connect<C: hyper_util::client::legacy::connect::Connect + Clone>() {}
    is_connect::<SystemConnector>();
    is_connect::<ProxyConnector>();
    is_connect::<ZitiConnector>();
    is_connect::<Connector>();
    is_connect::<UnixConnector>();
    is_connect::<hyper_rustls::HttpsConnector<Connector>>();
}

mod through_the_egress_proxy {
    use super::*;
    use crate::egress::{Credentials, NoProxy, ProxyRoute};

    fn egress(proxy_port: u16, creds: Option<&str>, no_proxy: &[&str]) -> Egress {
        Egress::new(
            Some(ProxyRoute {
                host: "127.0.0.1".into(),
                port: proxy_port,
                credentials: creds.map(|c| Credentials::parse(c).unwrap()),
            }),
            NoProxy::parse(no_proxy.iter().copied()).unwrap(),
        )
    }

    /// A one-connection CONNECT proxy: reads the request head, answers `status_line`, and on
    /// 200 echoes 4 bytes through the "tunnel". Returns the request head it read.
    async fn fake_proxy(l: tokio::net::TcpListener, status_line: &'static str) -> String {
        let (mut s, _) = l.accept().await.unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            s.read_exact(&mut b).await.unwrap();
            head.push(b[0]);
        }
        s.write_all(format!("{status_line}\r\nContent-Length: 0\r\n\r\n").as_bytes())
            .await
            .unwrap();
        if status_line.contains(" 200 ") {
            let mut p = [0u8; 4];
            s.read_exact(&mut p).await.unwrap();
            s.write_all(&p).await.unwrap();
        }
        String::from_utf8(head).unwrap()
    }

    #[tokio::test]
    async fn connect_carries_basic_auth_and_the_tunnel_is_the_stream() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let pp = l.local_addr().unwrap().port();
        let srv = tokio::spawn(fake_proxy(l, "HTTP/1.1 200 Connection established"));
        let mut e = ep(8443, 1);
        e.host = "tenancy.example".into();
        let d = Dialer::System(egress(pp, Some("bob:s3cret"), &[]));
        roundtrip(d.connector(&e)).await;
        let head = srv.await.unwrap();
        assert!(
            head.starts_with("CONNECT tenancy.example:8443 HTTP/1.1\r\n"),
            "{head}"
        );
        let auth = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("proxy-authorization")
                .then(|| v.trim())
        });
        // base64("bob:s3cret")
        assert_eq!(auth, Some("Basic Ym9iOnMzY3JldA=="), "{head}");
    }

    #[tokio::test]
    async fn a_refusal_is_temporary_naming_the_proxy_and_its_status_never_the_password() {
        for (line, want) in [
            (
                "HTTP/1.1 407 Proxy Authentication Required",
                "answered 407 Proxy Authentication Required",
            ),
            ("HTTP/1.1 403 Forbidden", "answered 403 Forbidden"),
            ("HTTP/1.1 502 Bad Gateway", "answered 502 Bad Gateway"),
        ] {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let pp = l.local_addr().unwrap().port();
            let srv = tokio::spawn(fake_proxy(l, line));
            let mut e = ep(443, 1);
            e.host = "tenancy.x".into();
            let mut c = Dialer::System(egress(pp, Some("bob:s3cret"), &[])).connector(&e);
            match c.call(Uri::from_static("https://tenancy.x/")).await {
                Err(TransportError::Unreachable { msg, .. }) => {
                    assert_eq!(
                        msg,
                        format!(
                            "tenancy via proxy http://127.0.0.1:{pp}: CONNECT tenancy.x:443 {want}"
                        )
                    );
                    assert!(!msg.contains("s3cret") && !msg.contains("bob"), "{msg}");
                }
                Err(e) => panic!("wrong class: {e}"),
                Ok(_) => panic!("{line}: tunnel accepted"),
            }
            srv.await.unwrap();
        }
    }

    #[tokio::test]
    async fn a_proxy_that_is_down_is_temporary_naming_it() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let pp = l.local_addr().unwrap().port();
        drop(l);
        let mut c = Dialer::System(egress(pp, Some("bob:s3cret"), &[])).connector(&ep(443, 1));
        match c.call(Uri::from_static("https://x/")).await {
            Err(TransportError::Unreachable { msg, source }) => {
                assert!(
                    msg.starts_with(&format!("tenancy via proxy http://127.0.0.1:{pp}: ")),
                    "{msg}"
                );
                assert_eq!(
                    source.map(|e| e.kind()),
                    Some(io::ErrorKind::ConnectionRefused)
                );
            }
            Err(e) => panic!("wrong class: {e}"),
            Ok(_) => panic!("dialled a closed port"),
        }
    }

    #[tokio::test]
    async fn a_proxy_that_never_answers_times_out_naming_it() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let pp = l.local_addr().unwrap().port();
        // accepts and reads, never answers
        let srv = tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            let mut b = Vec::new();
            let _ = s.read_to_end(&mut b).await;
        });
        let mut e = ep(443, 1);
        e.timeout = Duration::from_millis(300);
        let mut c = Dialer::System(egress(pp, None, &[])).connector(&e);
        match c.call(Uri::from_static("https://x/")).await {
            Err(TransportError::Unreachable { msg, .. }) => assert_eq!(
                msg,
                format!("tenancy via proxy http://127.0.0.1:{pp}: CONNECT localhost:443 timed out after 0s")
            ),
            Err(e) => panic!("wrong class: {e}"),
            Ok(_) => panic!("no tunnel was offered"),
        }
        srv.abort();
    }

    #[tokio::test]
    async fn no_proxy_goes_direct() {
        // the proxy port is closed: only a direct dial can succeed
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let pp = l.local_addr().unwrap().port();
        drop(l);
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let srv = tokio::spawn(echo_once(l));
        let mut e = ep(port, 1);
        e.host = "127.0.0.1".into();
        roundtrip(Dialer::System(egress(pp, None, &["127.0.0.0/8"])).connector(&e)).await;
        srv.await.unwrap();
    }
}

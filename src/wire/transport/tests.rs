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
    roundtrip(Dialer::System.connector(&e)).await;
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

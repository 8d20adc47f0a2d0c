//! The HTTP stack against local servers: TLS with a fixed server name over the `proxy`
//! connector, connection reuse, a stale pooled connection, limits, timeouts, error classes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::transport::Dialer;

fn ep(host: &str, proxy_port: u16, timeout_s: u64) -> Endpoint {
    Endpoint {
        label: "tenancy",
        service: "monky.tenancy.deploy".into(),
        host: host.into(),
        port: 443,
        proxy_port,
        timeout: Duration::from_secs(timeout_s),
    }
}

fn client(host: &str, port: u16, scheme: Scheme, ca: &str) -> HttpClient {
    let e = ep(host, port, 3);
    HttpClient::new(
        Dialer::Proxy.connector(&e),
        e,
        scheme,
        ca,
        &Roots::default(),
    )
    .expect("client")
}

async fn get(c: &HttpClient, limit: usize) -> Result<Response, HttpError> {
    c.request(Method::GET, "/x?y=1", None, None, limit).await
}

/// A throwaway CA and a server certificate for `name`, made by the openssl CLI.
fn pki(dir: &Path, name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let sh = format!(
        "set -e; cd {d}; \
         openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
           -subj /CN=monky-unit-ca -keyout ca.key -out ca.pem 2>/dev/null; \
         openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN={name} \
           -keyout srv.key -out srv.csr 2>/dev/null; \
         printf 'subjectAltName=DNS:{name}\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > ext; \
         openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
           -extfile ext -out srv.pem 2>/dev/null",
        d = dir.display()
    );
    let ok = Command::new("sh")
        .arg("-c")
        .arg(&sh)
        .status()
        .expect("openssl")
        .success();
    assert!(ok, "openssl could not make the test PKI");
    (dir.join("ca.pem"), dir.join("srv.pem"), dir.join("srv.key"))
}

/// An HTTPS server (hyper over tokio-rustls) on 127.0.0.1 answering `ok` to every request.
async fn tls_server(cert: &Path, key: &Path) -> (u16, Arc<AtomicUsize>) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<_> = CertificateDer::pem_file_iter(cert)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(key).unwrap();
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let conns = Arc::new(AtomicUsize::new(0));
    let n = conns.clone();
    tokio::spawn(async move {
        loop {
            let Ok((s, _)) = l.accept().await else { return };
            n.fetch_add(1, Ordering::SeqCst);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(s).await else {
                    return;
                };
                let svc =
                    hyper::service::service_fn(|req: Request<hyper::body::Incoming>| async move {
                        let host = req.headers().get("host").cloned();
                        let mut r = hyper::Response::new(Full::new(Bytes::from_static(b"ok")));
                        if let Some(h) = host {
                            r.headers_mut().insert("x-host", h);
                        }
                        Ok::<_, std::convert::Infallible>(r)
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    (port, conns)
}

#[tokio::test]
async fn https_checks_the_configured_host_not_the_dialled_address_and_reuses_the_connection() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = pki(dir.path(), "tenancy.test");
    let (port, conns) = tls_server(&cert, &key).await;
    let c = client("tenancy.test", port, Scheme::Https, ca.to_str().unwrap());
    for _ in 0..3 {
        let r = get(&c, 1024).await.expect("https via proxy");
        assert_eq!(r.status, 200);
        assert_eq!(&r.body[..], b"ok");
        assert_eq!(r.headers.get("x-host").unwrap(), "tenancy.test");
    }
    assert_eq!(
        conns.load(Ordering::SeqCst),
        1,
        "the pooled connection was not reused"
    );
    c.probe().await.expect("probe completes the TLS handshake");
    assert_eq!(conns.load(Ordering::SeqCst), 2);

    // another name than the certificate's, or no ca_file: TLS failures, not transport ones
    for c in [
        client("other.test", port, Scheme::Https, ca.to_str().unwrap()),
        client("tenancy.test", port, Scheme::Https, ""),
    ] {
        for r in [get(&c, 1024).await.map(|_| ()), c.probe().await] {
            match r {
                Err(e @ HttpError::Tls(..)) => {
                    let m = e.to_string();
                    assert!(m.starts_with("tenancy: TLS handshake failed: "), "{m}");
                    assert!(m.contains("certificate"), "{m}");
                    assert!(e.source().is_some(), "cause lost");
                }
                other => panic!("expected a TLS failure, got {:?}", other.err()),
            }
        }
    }
}

/// A plain HTTP/1.1 server on 127.0.0.1 that answers every request with `body`, and closes
/// each connection after `per_conn` responses without saying so (a keep-alive peer's idle
/// close). Counts connections.
async fn plain_server(body: &'static str, per_conn: usize) -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let conns = Arc::new(AtomicUsize::new(0));
    let n = conns.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            n.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                for _ in 0..per_conn {
                    let mut head = Vec::new();
                    let mut b = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut b).await {
                            Ok(0) | Err(_) => return,
                            Ok(k) => head.extend_from_slice(&b[..k]),
                        }
                    }
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if s.write_all(resp.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, conns)
}

/// The old client reused its one connection after a `ready()` check; a peer that closed it
/// while idle must cost a new dial, never a failed request. (The narrower race — the close
/// arriving while the request is queued on the pooled connection — is the legacy client's
/// retry of a cancelled request; it cannot be staged deterministically with real sockets.)
#[tokio::test]
async fn a_pooled_connection_the_peer_closed_is_not_a_failed_request() {
    let (port, conns) = plain_server("fine", 1).await;
    let c = client("tenancy.test", port, Scheme::Http, "");
    for i in 0..3 {
        let r = get(&c, 1024)
            .await
            .unwrap_or_else(|e| panic!("request {i}: {e}"));
        assert_eq!(&r.body[..], b"fine");
        // let the close arrive while the connection idles in the pool
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(conns.load(Ordering::SeqCst), 3);
    // and back to back, without giving the close time to arrive
    for i in 0..5 {
        get(&c, 1024)
            .await
            .unwrap_or_else(|e| panic!("request {i}: {e}"));
    }
}

#[tokio::test]
async fn limits_timeouts_and_transport_failures_keep_their_class() {
    let (port, _) = plain_server("0123456789abcdef", usize::MAX).await;
    let c = client("tenancy.test", port, Scheme::Http, "");
    match get(&c, 8).await {
        Err(HttpError::TooLarge("tenancy", 8)) => {}
        other => panic!("expected TooLarge, got {:?}", other.err()),
    }
    assert_eq!(
        &get(&c, 16).await.expect("at the limit").body[..],
        b"0123456789abcdef"
    );

    // a peer that accepts and never answers: the endpoint's timeout (+1 s), as before
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent = l.local_addr().unwrap().port();
    let _hold = tokio::spawn(async move {
        let _s = l.accept().await;
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let e = ep("tenancy.test", silent, 1);
    let c = HttpClient::new(
        Dialer::Proxy.connector(&e),
        e,
        Scheme::Http,
        "",
        &Roots::default(),
    )
    .unwrap();
    match get(&c, 16).await {
        Err(e @ HttpError::Timeout("tenancy", 1)) => {
            assert_eq!(e.to_string(), "tenancy: request timed out after 1s")
        }
        other => panic!("expected Timeout, got {:?}", other.err()),
    }

    // nothing listening: the transport's own error, through the client and the probe alike
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for scheme in [Scheme::Http, Scheme::Https] {
        let c = client("tenancy.test", closed, scheme, "");
        for r in [get(&c, 16).await.map(|_| ()), c.probe().await] {
            match r {
                Err(HttpError::Transport(TransportError::Unreachable { msg: m, .. })) => {
                    assert!(
                        m.starts_with(&format!("tenancy at 127.0.0.1:{closed}: ")),
                        "{m}"
                    )
                }
                other => panic!("expected Transport, got {:?}", other.err()),
            }
        }
    }
}

#[test]
fn an_invalid_host_is_refused_when_the_client_is_made() {
    let e = ep("not a host", 1, 1);
    let r = HttpClient::new(
        Dialer::Proxy.connector(&e),
        e,
        Scheme::Http,
        "",
        &Roots::default(),
    );
    assert!(r.is_err());
}

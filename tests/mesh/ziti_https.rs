//! HTTPS above every transport is the same: the agent's own HTTP client (rustls, server name =
//! the configured host, roots = system + `ca_file`) fetches a page from a real TLS server
//! (`openssl s_server -www` on 127.0.0.1, certificate for `localhost` from a throwaway CA) over
//! `sdk` (Ziti service by name), `proxy` (a real `ziti tunnel proxy`) and `system` (DNS + TCP).
//! A certificate for another name is refused over Ziti just as it would be directly.
//!
//! With `MONKY_BENCH_OUT=FILE` each test also appends its timings (identity load, first HTTPS
//! response) to FILE; `scripts/bench-ziti.sh` runs each test in a fresh process for that. Nothing
//! here asserts on time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::common::ziti::*;
use hyper::Method;
use monky_deployd::wire::http::HttpClient;
use monky_deployd::wire::http::Scheme;
use monky_deployd::wire::transport::sdk::SdkConnector;
use monky_deployd::wire::transport::{Dialer, Endpoint};

/// A throwaway CA and a `localhost` server certificate, made by the openssl CLI.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn new(name: &str) -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let sh = format!(
            "set -e; cd {d}; \
             openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
               -subj /CN=monky-test-ca -keyout ca.key -out ca.pem 2>/dev/null; \
             openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN={name} \
               -keyout srv.key -out srv.csr 2>/dev/null; \
             printf 'subjectAltName=DNS:{name}\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > ext; \
             openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
               -extfile ext -out srv.pem 2>/dev/null",
            d = d.display()
        );
        let ok = Command::new("sh")
            .arg("-c")
            .arg(&sh)
            .status()
            .expect("run openssl")
            .success();
        assert!(ok, "openssl could not make the test PKI");
        Pki { dir }
    }
    fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }
}

/// `openssl s_server -www`: a real TLS 1.2/1.3 server answering every GET with a status page.
struct TlsServer {
    _watchdog: Child,
    port: u16,
}

impl TlsServer {
    fn start(pki: &Pki) -> TlsServer {
        let port = free_port();
        // The fixture lives in a static (never dropped): a watchdog ends the server when this
        // test process is gone, so no s_server outlives the run.
        let script = format!(
            "openssl s_server -quiet -www -accept 127.0.0.1:{port} -cert '{d}/srv.pem' -key '{d}/srv.key' \
               </dev/null >/dev/null 2>&1 & srv=$!; \
             while kill -0 {me} 2>/dev/null && kill -0 $srv 2>/dev/null; do sleep 0.5; done; kill $srv 2>/dev/null",
            d = pki.dir.path().display(),
            me = std::process::id()
        );
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn openssl s_server");
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "openssl s_server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        TlsServer {
            _watchdog: child,
            port,
        }
    }
}

/// One network-side setup per test process: PKI, TLS server, service, identity.
struct Fixture {
    pki: Pki,
    server: TlsServer,
    service: String,
    identity: PathBuf,
    _wrong_pki: Pki,
    wrong_server: TlsServer,
    wrong_service: String,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let net = Net::shared();
        let pki = Pki::new("localhost");
        let server = TlsServer::start(&pki);
        let service = unique("https");
        net.service(&service, server.port);
        // a server whose certificate names someone else
        let wrong_pki = Pki::new("elsewhere.test");
        let wrong_server = TlsServer::start(&wrong_pki);
        let wrong_service = unique("https-wrong");
        net.service(&wrong_service, wrong_server.port);
        let identity = net.identity(&unique("agent-https"), &[&service, &wrong_service]);
        Fixture {
            pki,
            server,
            service,
            identity,
            _wrong_pki: wrong_pki,
            wrong_server,
            wrong_service,
        }
    })
}

fn endpoint(service: &str, port: u16, proxy_port: u16) -> Endpoint {
    Endpoint {
        label: "tenancy",
        service: service.to_string(),
        host: "localhost".into(),
        port,
        proxy_port,
        timeout: Duration::from_secs(15),
    }
}

fn bench_record(transport: &str, load: Duration, first: Duration) {
    if let Some(out) = std::env::var_os("MONKY_BENCH_OUT") {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(out)
            .expect("bench out");
        writeln!(f, "{transport} {} {}", load.as_micros(), first.as_micros())
            .expect("write bench out");
    }
}

/// GET / over HTTPS through `conn`; returns the body.
async fn https_get(conn: &Dialer, ep: Endpoint, ca: &Path) -> Result<String, String> {
    let client = HttpClient::new(
        conn.connector(&ep),
        ep,
        Scheme::Https,
        ca.to_str().unwrap(),
        &monky_deployd::wire::http::Roots::default(),
    )
    .map_err(|e| e.to_string())?;
    // the full stack without a request: dial + TLS handshake (what `status` checks)
    client.probe().await.map_err(|e| e.to_string())?;
    let r = client
        .request(Method::GET, "/", None, None, 1 << 20)
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(r.status, 200);
    Ok(String::from_utf8_lossy(&r.body).into_owned())
}

fn assert_s_server_page(body: &str) {
    // s_server -www answers with a page that reports the negotiated session
    assert!(
        body.contains("Ciphers supported in s_server binary"),
        "not the s_server page: {body:.300}"
    );
}

#[tokio::test]
async fn https_over_sdk_checks_the_configured_server_name() {
    require_sdk();
    let f = fixture();
    let t0 = Instant::now();
    let conn = Dialer::Sdk(Arc::new(
        SdkConnector::load(&f.identity, Duration::from_secs(20))
            .await
            .expect("load"),
    ));
    let load = t0.elapsed();
    let body = https_get(&conn, endpoint(&f.service, 1, 1), &f.pki.ca())
        .await
        .expect("https over sdk");
    let first = t0.elapsed();
    assert_s_server_page(&body);
    bench_record("sdk", load, first);

    let err = https_get(&conn, endpoint(&f.wrong_service, 1, 1), &f.pki.ca())
        .await
        .expect_err("wrong cert accepted");
    assert!(
        err.contains("tls") || err.contains("TLS") || err.contains("certificate"),
        "{err}"
    );
    let _ = &f.wrong_server;
}

#[tokio::test]
async fn https_over_a_real_ziti_tunnel_proxy() {
    let f = fixture();
    let port = free_port();
    let _p = TunnelProxy::start(Net::shared(), &f.identity, &[(&f.service, port)]);
    let t0 = Instant::now();
    let body = https_get(&Dialer::Proxy, endpoint(&f.service, 1, port), &f.pki.ca())
        .await
        .expect("https over proxy");
    let first = t0.elapsed();
    assert_s_server_page(&body);
    bench_record("proxy", Duration::ZERO, first);
}

#[tokio::test]
async fn https_over_system_dns_and_tcp() {
    let f = fixture();
    let t0 = Instant::now();
    let body = https_get(
        &Dialer::system(),
        endpoint(&f.service, f.server.port, 1),
        &f.pki.ca(),
    )
    .await
    .expect("https over system");
    let first = t0.elapsed();
    assert_s_server_page(&body);
    bench_record("system", Duration::ZERO, first);
}

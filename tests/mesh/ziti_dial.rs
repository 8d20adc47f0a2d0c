//! The `sdk` and `proxy` transports over a real OpenZiti network (quickstart controller + edge
//! router, `scripts/ziti-net.sh`): a `host.v1` service pointing at a 127.0.0.1 HTTP server is
//! dialled by name through the linked C SDK, and through a real `ziti tunnel proxy`; the far
//! side's record of the request is the assertion. Also: a service the identity may not dial,
//! a corrupt identity file, and enrolment with a real one-time JWT.

use std::time::{Duration, Instant};

use crate::common::ziti::*;
use monky_deployd::wire::transport::sdk::{self, SdkConnector};
use monky_deployd::wire::transport::{Endpoint, ProxyConnector, TransportError};
use tower_service::Service;

fn endpoint(service: &str, proxy_port: u16) -> Endpoint {
    Endpoint {
        label: "tenancy",
        service: service.to_string(),
        host: "tenancy.test".into(),
        port: 443,
        proxy_port,
        timeout: Duration::from_secs(15),
    }
}

#[tokio::test]
async fn sdk_dials_a_service_by_name_and_the_far_side_sees_the_request() {
    require_sdk();
    let net = Net::shared();
    let http = HttpServer::start("hello over ziti sdk");
    let svc = unique("echo-sdk");
    net.service(&svc, http.port);
    let id = net.identity(&unique("agent-sdk"), &[&svc]);

    let t0 = Instant::now();
    let conn = SdkConnector::load(&id, Duration::from_secs(20))
        .await
        .expect("identity loads");
    let loaded = t0.elapsed();
    assert!(
        conn.describe().starts_with("sdk (libziti "),
        "{}",
        conn.describe()
    );
    let mut s = conn
        .connect(&endpoint(&svc, 0))
        .await
        .expect("dial by service name");
    let resp = http_get(&mut s, "/via-sdk").await;
    assert!(resp.starts_with("HTTP/1.1 200"), "response: {resp}");
    assert!(resp.ends_with("hello over ziti sdk"), "response: {resp}");
    assert_eq!(
        http.seen.lock().unwrap().as_slice(),
        ["GET /via-sdk HTTP/1.1"]
    );

    // A second dial reuses the loaded context (no second load) and works the same.
    let conn2 = SdkConnector::load(&id, Duration::from_secs(1))
        .await
        .expect("cached context");
    let mut s2 = conn2
        .connect(&endpoint(&svc, 0))
        .await
        .expect("second dial");
    assert!(http_get(&mut s2, "/again")
        .await
        .ends_with("hello over ziti sdk"));
    assert_eq!(http.seen.lock().unwrap().len(), 2);
    eprintln!("identity load {loaded:?}");
}

#[tokio::test]
async fn proxy_transport_goes_through_a_real_ziti_tunnel_proxy() {
    let net = Net::shared();
    let http = HttpServer::start("hello over ziti proxy");
    let svc = unique("echo-proxy");
    net.service(&svc, http.port);
    let id = net.identity(&unique("agent-proxy"), &[&svc]);
    let port = free_port();
    let _proxy = TunnelProxy::start(net, &id, &[(&svc, port)]);

    let mut s = ProxyConnector::new(endpoint(&svc, port))
        .call("https://tenancy.test/".parse().unwrap())
        .await
        .expect("connect to the proxy port")
        .into_inner();
    let resp = http_get(&mut s, "/via-proxy").await;
    assert!(resp.ends_with("hello over ziti proxy"), "response: {resp}");
    assert!(
        http.seen
            .lock()
            .unwrap()
            .iter()
            .any(|l| l == "GET /via-proxy HTTP/1.1"),
        "far side saw {:?}",
        http.seen.lock().unwrap()
    );
}

#[tokio::test]
async fn sdk_dial_of_a_service_without_dial_rights_is_a_clear_unreachable_error() {
    require_sdk();
    let net = Net::shared();
    let http = HttpServer::start("never");
    let allowed = unique("allowed");
    let denied = unique("denied");
    net.service(&allowed, http.port);
    net.service(&denied, http.port);
    let id = net.identity(&unique("agent-deny"), &[&allowed]);
    let conn = SdkConnector::load(&id, Duration::from_secs(20))
        .await
        .expect("identity loads");

    let t0 = Instant::now();
    let err = match conn.connect(&endpoint(&denied, 0)).await {
        Ok(_) => panic!("dial of {denied} succeeded without a Dial policy"),
        Err(e) => e,
    };
    assert!(
        t0.elapsed() < Duration::from_secs(15),
        "took {:?}",
        t0.elapsed()
    );
    match &err {
        TransportError::Unreachable { msg: m, .. } => {
            assert!(m.contains(&denied) && m.contains("may not dial"), "{m}");
        }
        other => panic!("expected Unreachable (exit 75), got {other:?}"),
    }
    assert!(
        http.seen.lock().unwrap().is_empty(),
        "the denied service was reached"
    );
}

#[tokio::test]
async fn sdk_load_of_an_identity_without_services_is_bounded() {
    require_sdk();
    // An identity granted no service: the load must end within the configured bound, either
    // loaded (1.x returns once authenticated) or as a temporary failure naming the file.
    let net = Net::shared();
    let id = net.identity(&unique("agent-nosvc"), &[]);
    let t0 = Instant::now();
    let r = SdkConnector::load(&id, Duration::from_secs(3)).await;
    let took = t0.elapsed();
    match r {
        Err(TransportError::Unreachable { msg: m, .. }) => {
            assert!(
                m.contains(&id.display().to_string()) && m.contains("within 3s"),
                "{m}"
            );
        }
        Err(other) => panic!("expected Unreachable (exit 75), got {other:?}"),
        Ok(c) => {
            // loaded: a dial of a service it was not granted is a clear refusal
            let e = match c.connect(&endpoint("not-granted", 0)).await {
                Ok(_) => panic!("dialled a service without any grant"),
                Err(e) => e.to_string(),
            };
            assert!(e.contains("may not dial"), "{e}");
        }
    }
    assert!(took < Duration::from_secs(6), "not bounded: {took:?}");
}

#[test]
fn corrupt_identity_file_is_a_setup_error_naming_the_file() {
    require_sdk();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("box.json");
    std::fs::write(
        &p,
        "{\"ztAPI\":\"https://localhost:1280\",\"id\":{\"cert\":\"pem:-----BEGIN CERT",
    )
    .unwrap();
    match SdkConnector::new(&p, Duration::from_secs(5)) {
        Err(TransportError::Setup { msg: m, .. }) => {
            assert!(m.contains(&p.display().to_string()), "{m}")
        }
        Err(other) => panic!("expected Setup (exit 1), got {other:?}"),
        Ok(_) => panic!("a corrupt identity loaded"),
    }
}

#[tokio::test]
async fn enroll_with_a_real_one_time_jwt_yields_an_identity_that_dials() {
    require_sdk();
    use std::os::unix::fs::PermissionsExt;
    let net = Net::shared();
    let http = HttpServer::start("hello enrolled");
    let svc = unique("echo-enroll");
    net.service(&svc, http.port);
    let jwt = net.jwt(&unique("agent-enroll"), &[&svc]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("identity.json");

    sdk::enroll(&jwt, &out).expect("enrolment with the SDK");
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "identity file mode");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("identity is JSON");
    assert_eq!(
        v["ztAPI"]
            .as_str()
            .map(|s| s.contains(&format!(":{}", net.ctrl_port()))),
        Some(true),
        "{v}"
    );

    let conn = SdkConnector::load(&out, Duration::from_secs(20))
        .await
        .expect("enrolled identity loads");
    let mut s = conn
        .connect(&endpoint(&svc, 0))
        .await
        .expect("enrolled identity dials");
    assert!(http_get(&mut s, "/enrolled")
        .await
        .ends_with("hello enrolled"));

    // The JWT is single-use: a second enrolment is refused by the controller.
    let out2 = dir.path().join("again.json");
    match sdk::enroll(&jwt, &out2) {
        Err(TransportError::Setup { msg: m, .. }) => assert!(m.contains("one enrolment"), "{m}"),
        other => panic!("second enrolment with the same JWT: {other:?}"),
    }
    assert!(!out2.exists());
}

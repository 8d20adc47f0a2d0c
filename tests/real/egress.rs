//! The egress proxy (issue 34, point 1) on real parts: a real tinyproxy with Basic auth
//! (tests/common/proxy.rs), and the only-route guard that makes the proxy the agent's only way
//! to the tenancy and OpenBao.

use std::net::TcpListener;
use std::process::Command;

use crate::common::proxy::*;

/// A plain TCP target on a free loopback port, accepting and holding connections.
fn target() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let p = l.local_addr().unwrap().port();
    (l, p)
}

/// curl through the proxy (CONNECT) with the guard's gid: the CONNECT status curl saw.
fn curl_connect(gid: u32, proxy: &str, port: u16) -> String {
    use std::os::unix::process::CommandExt;
    let o = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-p",
            "-x",
            proxy,
            "-w",
            "%{http_connect}",
        ])
        .args(["--max-time", "3"])
        .arg(format!("http://127.0.0.1:{port}/"))
        .gid(gid)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The rig itself: the guard really cuts the direct route for its gid only, the proxy (another
/// user) still reaches the target, logs every CONNECT, and asks for its password.
#[test]
fn rig_guard_blocks_the_direct_route_and_the_proxy_is_the_way() {
    let (_t, port) = target();
    let proxy = Tinyproxy::start();
    let free = OnlyRoute::new();
    assert!(
        free.reachable("127.0.0.1", port),
        "no rule yet: direct works"
    );
    let guard = OnlyRoute::block(&[("127.0.0.1", port)]);
    assert!(
        !guard.reachable("127.0.0.1", port),
        "the guard's gid cannot reach it directly"
    );
    assert!(
        free.reachable("127.0.0.1", port),
        "other gids are unaffected"
    );
    assert_eq!(
        curl_connect(guard.gid(), &proxy.url_with_auth(), port),
        "200"
    );
    assert_eq!(proxy.connects_to("127.0.0.1", port), 1, "{}", proxy.log());
    // no credentials: 407; a wrong password: tinyproxy 1.11 answers 401 to a CONNECT
    assert_eq!(curl_connect(guard.gid(), &proxy.url(), port), "407");
    let bad = proxy
        .url_with_auth()
        .replace(proxy.password().unwrap(), "wrong");
    assert_eq!(curl_connect(guard.gid(), &bad, port), "401");
    let gid = guard.gid();
    drop(guard);
    let after = OnlyRoute::new();
    assert_ne!(after.gid(), gid);
    let o = Command::new(IPTABLES)
        .args(["-w", "-S", "OUTPUT"])
        .output()
        .unwrap();
    let rules = String::from_utf8_lossy(&o.stdout);
    assert!(
        !rules.contains(&format!("--gid-owner {gid} ")),
        "rule removed on drop: {rules}"
    );
}

/// `ConnectPort` limits: a CONNECT to another port is answered 403.
#[test]
fn rig_connect_port_limit_answers_403() {
    let (_t, port) = target();
    let proxy = Tinyproxy::with(ProxyOpts {
        connect_ports: vec![443],
        ..ProxyOpts::default()
    });
    let g = OnlyRoute::new();
    assert_eq!(curl_connect(g.gid(), &proxy.url_with_auth(), port), "403");
}

//! The egress proxy (issue 34, point 1) on real parts: a real tinyproxy with Basic auth
//! (tests/common/proxy.rs), and the only-route guard that makes the proxy the agent's only way
//! to the tenancy and OpenBao.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
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

// ---- the agent through the proxy: the test tenancy and a real OpenBao on `system` ----

use crate::common::*;

/// A stack with a web bundle waiting, and a running tinyproxy.
fn stack(name: &str) -> (Stack, Tinyproxy, String) {
    require_docker();
    let s = Stack::new(name, Flavour::V2);
    s.give_bootstrap();
    let b = web_bundle(&s, 1, "one", "k3y-egress-value");
    let sha = s.tenancy.set_bundle(&s.env, b.files());
    (s, Tinyproxy::start(), sha)
}

fn ports(s: &Stack) -> [(&'static str, u16); 2] {
    [("127.0.0.1", s.tenancy.port()), ("127.0.0.1", s.bao.port())]
}

fn egress_cfg(proxy: &Tinyproxy, cred: Option<&std::path::Path>, no_proxy: &str) -> String {
    let mut y = format!("egress_proxy:\n  url: {}\n", proxy.url());
    if let Some(c) = cred {
        y.push_str(&format!("  credentials_file: {}\n", c.display()));
    }
    if !no_proxy.is_empty() {
        y.push_str(&format!("  no_proxy: [{no_proxy}]\n"));
    }
    y
}

/// The password, and the base64 a `Proxy-Authorization` header carries, appear nowhere.
fn assert_no_password(proxy: &Tinyproxy, what: &str, text: &str) {
    use base64::Engine as _;
    let (u, p) = proxy.opts.auth.clone().unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
    assert!(
        !text.contains(&p) && !text.contains(&b64),
        "the proxy password reached {what}:\n{text}"
    );
}

fn assert_no_password_at_tenancy(s: &Stack, proxy: &Tinyproxy) {
    for (path, body) in s.tenancy.bodies() {
        assert_no_password(
            proxy,
            &format!("tenancy ({path})"),
            &String::from_utf8_lossy(&body),
        );
    }
}

/// The agent converges and heartbeats with the proxy as its only route to tenancy and OpenBao
/// (without the proxy it cannot reach them); every connection shows in the proxy's log; the
/// password shows in no channel (agent output, tenancy's bodies, state, status, diagnose, the
/// diagnostics bundle).
#[test]
fn converges_and_heartbeats_with_the_proxy_as_the_only_route() {
    let (mut s, proxy, _) = stack("egress-only-route");
    // a release whose log prints the proxy password: the bundle's log tail must mask it (the
    // password is registered, not only absent)
    let pw = proxy.password().unwrap().to_string();
    let sha = s.tenancy.set_bundle(
        &s.env,
        plain_bundle(
            1,
            format!(
                "services:\n  web:\n    image: {IMAGE}\n    init: true\n    \
                 command: [\"sh\", \"-c\", \"echo proxy-auth {pw} end; touch /tmp/ok; exec httpd -f -p 8080 -h /tmp\"]\n    \
                 healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n"
            ),
        )
        .files(),
    );
    let [t, b] = ports(&s);
    let guard = OnlyRoute::block(&[t, b]);
    assert!(!guard.reachable(t.0, t.1) && !guard.reachable(b.0, b.1));
    let gid = Some(guard.gid());

    // no proxy configured: the guarded agent reaches neither (the route is really cut)
    let r = s.cmd_as(&["run", "--once"], &[], gid);
    assert_eq!(r.code, 75, "{r:?}");
    // the first tick logs in at OpenBao with the kit's grant: the first remote it needs
    assert!(
        r.stderr
            .contains(&format!("openbao at 127.0.0.1:{}: Connection refused", b.1)),
        "names the unreachable OpenBao: {r:?}"
    );
    assert!(s.tenancy.checkins().is_empty());
    assert!(proxy.connects().is_empty());

    let cred = proxy.credentials_file(s.dir.path());
    s.set_extra(&egress_cfg(&proxy, Some(&cred), ""));
    let r = s.cmd_as(&["run", "--once"], &[], gid);
    assert_eq!(r.code, 0, "{r:?}\nproxy log:\n{}", proxy.log());
    assert_eq!(s.last_report()["result"], "applied", "{r:?}");
    assert_eq!(s.state()["applied_sha"], sha.as_str());
    let (ct, cb) = (proxy.connects_to(t.0, t.1), proxy.connects_to(b.0, b.1));
    assert!(
        ct >= 1 && cb >= 1,
        "a CONNECT to each: {:?}",
        proxy.connects()
    );
    assert_eq!(
        proxy.connects().len(),
        proxy.connects_to(t.0, t.1) + proxy.connects_to(b.0, b.1),
        "nothing else through the proxy: {:?}",
        proxy.connects()
    );
    let mut outputs = vec![r];

    // a heartbeat: the check-in goes through the proxy again
    let r = s.cmd_as(&["run", "--once"], &[], gid);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.checkins().len(), 2);
    assert!(proxy.connects_to(t.0, t.1) > ct, "{:?}", proxy.connects());
    outputs.push(r);

    // a diagnostics bundle on request: it says the route, and dockerd's proxy state
    s.tenancy.request_diagnostics(&s.env, "req-egress");
    let r = s.cmd_as(&["run", "--once"], &[], gid);
    assert_eq!(r.code, 0, "{r:?}");
    let d = s.tenancy.diagnostics();
    assert_eq!(d.len(), 1, "{r:?}");
    let eg = &d[0]["bundle"]["egress"];
    assert_eq!(eg["proxy"], proxy.url().as_str(), "{eg}");
    assert_eq!(eg["basic_auth"], true);
    assert_eq!(
        eg["targets"][0]["route"],
        format!("via {} (Basic auth)", proxy.url()).as_str()
    );
    assert!(eg["dockerd"].get("any").is_some(), "{eg}");
    let tail = d[0]["bundle"]["services"][0]["log_tail"]
        .as_str()
        .unwrap_or("");
    assert!(
        tail.contains("proxy-auth *** end"),
        "masked in the log tail: {tail}"
    );
    outputs.push(r);

    let r = s.cmd_as(&["status"], &[], gid);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains(&format!("egress proxy   {} (Basic auth)", proxy.url())),
        "{r:?}"
    );
    assert!(r.stdout.contains("tenancy      dialable"), "{r:?}");
    outputs.push(r);
    let r = s.cmd_as(&["diagnose"], &[], gid);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains(&format!("  tenancy      via {} (Basic auth)", proxy.url())),
        "{r:?}"
    );
    assert!(r.stdout.contains("dockerd proxy  "), "{r:?}");
    assert!(r.stdout.contains("proxy-auth *** end"), "{r:?}");
    outputs.push(r);
    let r = s.cmd_as(&["diagnose", "--json"], &[], gid);
    assert_eq!(r.code, 0, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["links"]["tenancy"]["state"], "dialable", "{v}");
    assert_eq!(v["links"]["openbao"]["state"], "dialable", "{v}");
    outputs.push(r);

    for r in &outputs {
        assert_no_password(&proxy, "the agent's output", &format!("{r:?}"));
    }
    assert_no_password_at_tenancy(&s, &proxy);
    let state = std::fs::read_to_string(s.state_dir().join("state.json")).unwrap();
    assert_no_password(&proxy, "state.json", &state);
}

/// `no_proxy` listing the targets: they go direct, the proxy sees nothing.
#[test]
fn no_proxy_listing_the_targets_bypasses_the_proxy() {
    let (mut s, proxy, _sha) = stack("egress-no-proxy");
    let cred = proxy.credentials_file(s.dir.path());
    s.set_extra(&egress_cfg(&proxy, Some(&cred), "127.0.0.1"));
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["result"], "applied");
    let r = s.cmd(&["diagnose"]);
    assert!(
        r.stdout.contains("  tenancy      direct (no_proxy)"),
        "{r:?}"
    );
    assert!(
        r.stdout.contains("  openbao      direct (no_proxy)"),
        "{r:?}"
    );
    assert!(proxy.connects().is_empty(), "{}", proxy.log());
}

/// `url` empty: `HTTPS_PROXY` with userinfo is the route (and its credentials); the guard
/// proves it is used; the password from the environment is masked like the file's.
#[test]
fn https_proxy_from_the_environment_with_userinfo() {
    let (s, proxy, _sha) = stack("egress-env");
    let [t, b] = ports(&s);
    let guard = OnlyRoute::block(&[t, b]);
    let url = proxy.url_with_auth();
    let env = [("HTTPS_PROXY", url.as_str())];
    let r = s.cmd_as(&["run", "--once"], &env, Some(guard.gid()));
    assert_eq!(r.code, 0, "{r:?}\n{}", proxy.log());
    assert_eq!(s.last_report()["result"], "applied");
    assert!(proxy.connects_to(t.0, t.1) >= 1 && proxy.connects_to(b.0, b.1) >= 1);
    let st = s.cmd_as(&["status", "--json"], &env, Some(guard.gid()));
    let v: serde_json::Value = serde_json::from_str(&st.stdout).unwrap();
    assert_eq!(v["egress_proxy"], proxy.url().as_str(), "{st:?}");
    for o in [&r, &st] {
        assert_no_password(&proxy, "the agent's output", &format!("{o:?}"));
    }
    assert_no_password_at_tenancy(&s, &proxy);
}

/// A proxy that is down, asks for credentials (407), rejects them (tinyproxy 1.11 answers 401
/// to a CONNECT with a wrong password) or forbids the port (403): exit 75, naming the proxy and
/// the status, never the password.
#[test]
fn a_proxy_down_or_refusing_is_a_temporary_failure_naming_it() {
    let (mut s, mut proxy, _sha) = stack("egress-refusals");
    let [t, b] = ports(&s);
    let guard = OnlyRoute::block(&[t, b]);
    let gid = Some(guard.gid());
    let tick = |s: &Stack| s.cmd_as(&["run", "--once"], &[], gid);
    // the first tick logs in at OpenBao with the kit's grant: the first remote it needs
    let via = format!("openbao via proxy {}", proxy.url());

    // no credentials configured: 407
    s.set_extra(&egress_cfg(&proxy, None, ""));
    let r = tick(&s);
    assert_eq!(r.code, 75, "{r:?}");
    let want = format!(
        "{via}: CONNECT 127.0.0.1:{} answered 407 Proxy Authentication Required",
        b.1
    );
    assert!(r.stderr.contains(&want), "{want}\n{r:?}");

    // a wrong password
    let bad = s.dir.path().join("bad.cred");
    std::fs::write(&bad, "monkyproxy:wrong-Pw-77\n").unwrap();
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
    s.set_extra(&egress_cfg(&proxy, Some(&bad), ""));
    let r = tick(&s);
    assert_eq!(r.code, 75, "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("{via}: CONNECT 127.0.0.1:{} answered 401", b.1)),
        "{r:?}"
    );
    assert!(!format!("{r:?}").contains("wrong-Pw-77"), "{r:?}");

    // down
    let cred = proxy.credentials_file(s.dir.path());
    s.set_extra(&egress_cfg(&proxy, Some(&cred), ""));
    proxy.stop();
    let r = tick(&s);
    assert_eq!(r.code, 75, "{r:?}");
    assert!(r.stderr.contains(&format!("{via}: ")), "{r:?}");
    assert_no_password(&proxy, "the agent's output", &format!("{r:?}"));

    // the port is not one the proxy allows: 403
    let strict = Tinyproxy::with(ProxyOpts {
        connect_ports: vec![443],
        ..ProxyOpts::default()
    });
    let cred = strict.credentials_file(s.dir.path());
    s.set_extra(&egress_cfg(&strict, Some(&cred), ""));
    let r = tick(&s);
    assert_eq!(r.code, 75, "{r:?}");
    let want = format!(
        "openbao via proxy {}: CONNECT 127.0.0.1:{} answered 403 Forbidden",
        strict.url(),
        b.1
    );
    assert!(r.stderr.contains(&want), "{want}\n{r:?}");
    assert_no_password(&strict, "the agent's output", &format!("{r:?}"));
    assert!(s.tenancy.checkins().is_empty(), "nothing got through");
}

//! The `sdk` transport through an HTTP egress proxy (issue 34, point 1) on real parts: the
//! mesh tests' OpenZiti network, a real tinyproxy with Basic auth, and the only-route guard
//! (tests/common/proxy.rs): the agent runs with a gid whose TCP to the controller and the edge
//! router is rejected, so what it reaches, it reached through the proxy.

use std::path::Path;

use crate::common::proxy::{OnlyRoute, ProxyOpts, Tinyproxy};
use crate::common::ziti::{require_sdk, unique, Net};
use crate::common::*;
use crate::ziti_tick::{services, write, ziti_config, ZitiSvcs};

/// Every channel the agent writes to (its output; what tenancy was told) holds no secret of
/// the proxy's: neither the password nor the Basic header's base64 of `user:password`.
fn assert_no_secret(what: &str, text: &str, proxy: &Tinyproxy, extra: &[&str]) {
    use base64::Engine as _;
    let (user, pw) = proxy.opts.auth.clone().expect("a proxy with auth");
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pw}"));
    for s in [pw.as_str(), b64.as_str()].iter().chain(extra) {
        assert!(!text.contains(s), "{what} leaks {s:?}:\n{text}");
    }
}

fn all_output(r: &Run) -> String {
    format!("{}\n{}", r.stdout, r.stderr)
}

/// `egress_proxy` for `proxy`, credentials from `cred`.
fn egress_yaml(proxy: &Tinyproxy, cred: &Path, no_proxy: &[&str]) -> String {
    format!(
        "egress_proxy:\n  url: {}\n  credentials_file: {}\n  no_proxy: [{}]\n",
        proxy.url(),
        cred.display(),
        no_proxy.join(", ")
    )
}

fn sdk_config(s: &Stack, z: &ZitiSvcs, id: &Path, egress: &str) -> String {
    let base = ziti_config(
        s,
        &format!("transport: sdk\nidentity: {}\n", id.display()),
        z,
        (1, 1),
    );
    format!("{base}{egress}")
}

/// The SDK must never take its route (nor a line of its log) from `HTTP_PROXY`: every run has
/// one naming the real proxy with its real password.
/// The SDK and its tlsuv log at DEBUG, so any line either would log is seen (tlsuv, left to
/// itself, logs the `HTTP_PROXY` URL at INFO).
fn env_trap(proxy: &Tinyproxy) -> [(&'static str, String); 4] {
    let u = proxy.url_with_auth();
    [
        ("HTTP_PROXY", u.clone()),
        ("http_proxy", u),
        ("ZITI_LOG", "4".into()),
        ("TLSUV_DEBUG", "4".into()),
    ]
}

#[test]
fn sdk_reaches_controller_and_router_only_through_the_proxy() {
    require_sdk();
    require_docker();
    let net = Net::shared();
    let (ctrl, router) = (net.ctrl_port(), net.router_port());
    let s = Stack::new("ziti-egress", Flavour::V2);
    let z = services(net, &s);
    let mut proxy = Tinyproxy::start();
    let guard = OnlyRoute::block(&[("127.0.0.1", ctrl), ("127.0.0.1", router)]);
    // localhost is 127.0.0.1 only here, so the guard covers every address the agent may try
    assert!(!guard.reachable("127.0.0.1", ctrl) && !guard.reachable("127.0.0.1", router));
    let gid = Some(guard.gid());
    let trap = env_trap(&proxy);
    let env: Vec<(&str, &str)> = trap.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let cred = proxy.credentials_file(s.dir.path());
    let via = egress_yaml(&proxy, &cred, &[]);
    let system_cfg = s.config_text();

    // enrol: without egress_proxy the controller is out of reach (HTTP_PROXY is not a route)
    let jwt = net.jwt(&unique("box-egress"), &[&z.tenancy, &z.bao]);
    let id = s.dir.path().join("identity.json");
    let enroll = [
        "enroll",
        "--jwt",
        jwt.to_str().unwrap(),
        "--out",
        id.to_str().unwrap(),
    ];
    std::fs::write(s.config_path(), &system_cfg).unwrap();
    let r = s.cmd_as(&enroll, &env, gid);
    eprintln!("enroll, no egress_proxy: {r:?}");
    assert_ne!(r.code, 0, "{r:?}");
    assert!(!id.exists());
    assert_eq!(proxy.connects().len(), 0, "{}", proxy.log());
    assert_no_secret("enroll output", &all_output(&r), &proxy, &[]);
    // with it: through the proxy
    std::fs::write(s.config_path(), format!("{system_cfg}{via}")).unwrap();
    let r = s.cmd_as(&enroll, &env, gid);
    assert_eq!(r.code, 0, "enroll through the proxy: {r:?}");
    assert_eq!(mode(&id), 0o600);
    assert!(proxy.connects_to("localhost", ctrl) >= 1, "{}", proxy.log());
    assert_no_secret("enroll output", &all_output(&r), &proxy, &[]);

    // a tick without egress_proxy cannot reach the controller: the guard holds
    write(&s, &sdk_config(&s, &z, &id, ""));
    s.give_bootstrap();
    let before = proxy.connects().len();
    let r = s.cmd_as(&["run", "--once"], &env, gid);
    eprintln!("tick, no egress_proxy: {r:?}");
    assert_eq!(r.code, 75, "{r:?}");
    assert_eq!(proxy.connects().len(), before, "{}", proxy.log());
    assert!(s.tenancy.checkins().is_empty());
    assert_no_secret("tick output", &all_output(&r), &proxy, &[]);

    // with it: apply, then heartbeat, every Ziti connection a CONNECT through the proxy
    write(&s, &sdk_config(&s, &z, &id, &via));
    let b = web_bundle(&s, 1, "egress", "egress-secret");
    let sha = s.tenancy.set_bundle(&s.env, b.files());
    let r = s.cmd_as(&["run", "--once"], &env, gid);
    assert_eq!(r.code, 0, "apply through the proxy: {r:?}");
    assert_eq!(s.last_report()["result"], "applied");
    assert_eq!(s.state()["applied_sha"], sha.as_str());
    assert_no_secret("tick output", &all_output(&r), &proxy, &[]);
    let r = s.cmd_as(&["run", "--once"], &env, gid);
    assert_eq!(r.code, 0, "heartbeat through the proxy: {r:?}");
    assert_eq!(s.tenancy.checkins().len(), 2);
    assert_no_secret("heartbeat output", &all_output(&r), &proxy, &[]);
    assert!(proxy.connects_to("localhost", ctrl) >= 3, "{}", proxy.log());
    assert!(
        proxy.connects_to("localhost", router) >= 2,
        "{}",
        proxy.log()
    );
    assert!(
        r.stderr
            .contains(&format!("connect localhost:{router} via the proxy")),
        "{r:?}"
    );

    // status: says the egress, never the password
    let r = s.cmd_as(&["status", "--json"], &env, gid);
    assert_eq!(r.code, 0, "status: {r:?}");
    assert!(
        r.stdout
            .contains(&format!("egress via {} (Basic auth)", proxy.url())),
        "{r:?}"
    );
    assert!(
        r.stdout
            .contains(&format!("\"egress_proxy\":\"{}\"", proxy.url()))
            || r.stdout
                .contains(&format!("\"egress_proxy\": \"{}\"", proxy.url())),
        "{r:?}"
    );
    assert_no_secret("status", &all_output(&r), &proxy, &[]);
    // diagnose: how the controller and the routers are reached
    let r = s.cmd_as(&["diagnose"], &env, gid);
    assert_eq!(r.code, 0, "diagnose: {r:?}");
    assert!(
        r.stdout
            .contains(&format!("  controller   via {} (Basic auth)", proxy.url()))
            && r.stdout.contains("  edge routers through the proxy"),
        "{r:?}"
    );
    assert_no_secret("diagnose", &all_output(&r), &proxy, &[]);
    let told = format!("{:?}", s.tenancy.requests());
    assert_no_secret("what tenancy was told", &told, &proxy, &[]);

    // a proxy that lets the controller through but not the router (tinyproxy's ConnectPort):
    // 75, and a warning naming the proxy and the router it refused (the SDK retries the router
    // until the request's time-out, whose message cannot name it)
    let ctrl_only = Tinyproxy::with(ProxyOpts {
        connect_ports: vec![ctrl],
        ..ProxyOpts::default()
    });
    write(
        &s,
        &sdk_config(&s, &z, &id, &egress_yaml(&ctrl_only, &cred, &[])),
    );
    let r = s.cmd_as(&["run", "--once"], &env, gid);
    eprintln!("tick, router refused by the proxy: {r:?}");
    assert_eq!(r.code, 75, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "proxy {} refused CONNECT localhost:{router}",
            ctrl_only.url()
        )) && r.stderr.contains("403"),
        "{r:?}"
    );
    assert!(
        ctrl_only.connects_to("localhost", ctrl) >= 1,
        "{}",
        ctrl_only.log()
    );
    assert_no_secret("router-refused output", &all_output(&r), &proxy, &[]);
    drop(ctrl_only);

    // a wrong password: 75, naming the proxy and what it answered, no password at all
    let wrong = s.dir.path().join("wrong.cred");
    std::fs::write(&wrong, "monkyproxy:wr0ng-pw-canary\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrong, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    write(
        &s,
        &sdk_config(&s, &z, &id, &egress_yaml(&proxy, &wrong, &[])),
    );
    let r = s.cmd_as(&["run", "--once"], &env, gid);
    eprintln!("tick, wrong password: {r:?}");
    assert_eq!(r.code, 75, "{r:?}");
    assert!(
        r.stderr.contains(&format!("proxy {} refused", proxy.url())),
        "{r:?}"
    );
    assert!(
        r.stderr.contains("401") || r.stderr.contains("407"),
        "{r:?}"
    );
    assert_no_secret(
        "wrong-password output",
        &all_output(&r),
        &proxy,
        &["wr0ng-pw-canary"],
    );

    // no_proxy listing the controller's and router's name: direct (a gid without the guard),
    // the proxy not even running
    proxy.stop();
    let free = OnlyRoute::new();
    write(
        &s,
        &sdk_config(&s, &z, &id, &egress_yaml(&proxy, &cred, &["localhost"])),
    );
    let before = proxy.connects().len();
    let r = s.cmd_as(&["run", "--once"], &env, Some(free.gid()));
    assert_eq!(r.code, 0, "no_proxy bypass: {r:?}");
    assert_eq!(s.tenancy.checkins().len(), 3);
    assert_eq!(proxy.connects().len(), before);

    // the proxy down: 75, naming it
    write(&s, &sdk_config(&s, &z, &id, &via));
    let r = s.cmd_as(&["run", "--once"], &env, gid);
    eprintln!("tick, proxy down: {r:?}");
    assert_eq!(r.code, 75, "{r:?}");
    assert!(
        r.stderr.contains(&format!("proxy {} is down", proxy.url())),
        "{r:?}"
    );
    assert_no_secret("proxy-down output", &all_output(&r), &proxy, &[]);
}

//! The agent binary's tick over a real OpenZiti network: tenancy and OpenBao are reached only as
//! Ziti services (`host.v1` terminators on the quickstart's edge router pointing at the test
//! tenancy's and the real OpenBao's 127.0.0.1 ports). The configured host names do not resolve
//! and the configured ports are closed, so a tick that succeeds went through Ziti.
//!
//! * `sdk`: the embedded C SDK with an identity the agent enrolled itself (`monky-deployd enroll`).
//! * `proxy`: a real `ziti tunnel proxy` on 127.0.0.1 ports.
//! * failures: a service the identity may not dial (exit 75), the controller stopped (exit 75
//!   within the configured timeout), a corrupt identity file (exit 1 naming the file).

use std::time::{Duration, Instant};

use crate::common::ziti::{self, require_sdk, unique, Net, TunnelProxy};
use crate::common::*;

/// Host names that resolve nowhere: only the Ziti path can reach tenancy and OpenBao.
const T_HOST: &str = "tenancy.ziti.invalid";
const B_HOST: &str = "bao.ziti.invalid";

pub(crate) struct ZitiSvcs {
    pub(crate) tenancy: String,
    pub(crate) bao: String,
}

/// Services for this stack's tenancy and OpenBao, hosted by the network's router.
pub(crate) fn services(net: &Net, s: &Stack) -> ZitiSvcs {
    let z = ZitiSvcs {
        tenancy: unique("monky.tenancy.deploy"),
        bao: unique("openbao"),
    };
    net.service(&z.tenancy, s.tenancy.port());
    net.service(&z.bao, s.bao.port());
    z
}

/// The stack's config with `transport` switched and the endpoints reachable only through Ziti.
pub(crate) fn ziti_config(
    s: &Stack,
    transport_lines: &str,
    z: &ZitiSvcs,
    proxy_ports: (u16, u16),
) -> String {
    let text = s.config_text();
    assert!(
        text.contains("transport: system\n"),
        "harness config changed shape:\n{text}"
    );
    text.replace("transport: system\n", transport_lines)
        .replace(
            &format!(
                "tenancy:\n  host: 127.0.0.1\n  port: {}\n",
                s.tenancy.port()
            ),
            &format!(
                "tenancy:\n  host: {T_HOST}\n  port: 1\n  service: {}\n  proxy_port: {}\n",
                z.tenancy, proxy_ports.0
            ),
        )
        .replace(
            &format!("bao:\n  host: 127.0.0.1\n  port: {}\n", s.bao.port()),
            &format!(
                "bao:\n  host: {B_HOST}\n  port: 1\n  service: {}\n  proxy_port: {}\n",
                z.bao, proxy_ports.1
            ),
        )
}

pub(crate) fn write(s: &Stack, text: &str) {
    assert!(
        text.contains(T_HOST) && text.contains(B_HOST),
        "endpoints not rewritten:\n{text}"
    );
    std::fs::write(s.config_path(), text).unwrap();
}

/// Apply + heartbeat, asserting on what tenancy and OpenBao saw.
fn apply_then_heartbeat(s: &Stack, how: &str) {
    s.give_bootstrap();
    let b = web_bundle(s, 1, how, "z1t1-secret");
    let sha = s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 0, "apply over {how}: {r:?}");
    // tenancy saw one check-in, one lease, one bundle fetch and an applied report
    assert_eq!(s.tenancy.checkins().len(), 1, "{r:?}");
    assert_eq!(s.tenancy.leases().len(), 1);
    assert_eq!(s.tenancy.bundle_fetches().len(), 1);
    let rep = s.last_report();
    assert_eq!(rep["result"], "applied", "{rep}");
    assert_eq!(rep["sha"], sha.as_str());
    let ua = s
        .tenancy
        .requests()
        .iter()
        .filter_map(|q| q.user_agent.clone())
        .collect::<Vec<_>>();
    assert!(ua.iter().all(|u| u.starts_with("monky-deployd/")), "{ua:?}");
    // OpenBao saw two logins (the kit's bootstrap grant, then the lease's deploy grant) and the
    // agent's read of exactly the manifest's secret
    assert_eq!(s.bao.login_count(), 2);
    assert_eq!(
        s.bao.secret_reads(),
        vec![format!("monky/data/{}/see/api_key", s.env)]
    );
    assert!(s
        .container_env("web")
        .contains(&"API_KEY=z1t1-secret".to_string()));
    assert_eq!(s.state()["applied_sha"], sha.as_str());

    // heartbeat over the same transport: check-in + report, no lease, no fetch
    let r = s.tick();
    assert_eq!(r.code, 0, "heartbeat over {how}: {r:?}");
    assert_eq!(s.tenancy.checkins().len(), 2);
    assert_eq!(s.tenancy.checkins()[1]["applied_sha"], sha.as_str());
    assert_eq!(s.tenancy.leases().len(), 1);
    assert_eq!(s.tenancy.bundle_fetches().len(), 1);
    assert_eq!(s.tenancy.reports().len(), 2);
}

#[test]
fn sdk_enrolled_by_the_agent_applies_and_heartbeats() {
    require_sdk();
    require_docker();
    let net = Net::shared();
    let s = Stack::new("ziti-sdk", Flavour::V2);
    let z = services(net, &s);

    // enrol with the agent's own CLI from a real one-time JWT
    let jwt = net.jwt(&unique("box-sdk"), &[&z.tenancy, &z.bao]);
    let id = s.dir.path().join("ziti").join("identity.json");
    std::fs::create_dir_all(id.parent().unwrap()).unwrap();
    let r = run_bin(
        &s.config_path(),
        &[
            "enroll",
            "--jwt",
            jwt.to_str().unwrap(),
            "--out",
            id.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "enroll: {r:?}");
    assert_eq!(mode(&id), 0o600);

    write(
        &s,
        &ziti_config(
            &s,
            &format!("transport: sdk\nidentity: {}\n", id.display()),
            &z,
            (1, 1),
        ),
    );
    apply_then_heartbeat(&s, "sdk");
    heartbeat_controller_connections_are_few(net, &s);

    // status: transport, linked SDK, identity loads, both services dialable
    let r = s.cmd(&["status", "--json"]);
    assert_eq!(r.code, 0, "status: {r:?}");
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    assert_eq!(v["transport"], "sdk", "{v}");
    assert_eq!(v["ziti_sdk"], "1.18.2", "{v}");
    let detail = v["transport_detail"].as_str().unwrap_or_default();
    assert!(detail.contains("libziti 1.18.2"), "{v}");
    let eps = v["endpoints"].as_array().cloned().unwrap_or_default();
    assert_eq!(eps.len(), 2, "{v}");
    assert!(eps.iter().all(|e| e["state"] == "dialable"), "{v}");
}

/// One more heartbeat, under `strace`: a fresh process makes at most two TLS connections to the
/// controller (the controller client's, kept between batches by vendor patch ziti-sdk-c-0002,
/// and the OIDC client's). 1.18.2 unpatched made five.
fn heartbeat_controller_connections_are_few(net: &Net, s: &Stack) {
    let trace = s.dir.path().join("connect.strace");
    let o = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=connect", "-o"])
        .arg(&trace)
        .arg(BIN)
        .arg("--config")
        .arg(s.config_path())
        .args(["run", "--once"])
        .env_remove("MONKY_LOG")
        .output()
        .expect("run strace (apt-get install strace; scripts/provision.sh installs it)");
    assert!(
        o.status.success(),
        "heartbeat under strace: {o:?}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        s.tenancy.checkins().len(),
        3,
        "the traced heartbeat checked in"
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let to = |port: u16| {
        text.lines()
            .filter(|l| l.contains(&format!("sin_port=htons({port})")))
            .count()
    };
    let (ctrl, router) = (to(net.ctrl_port()), to(net.router_port()));
    assert!(
        (1..=2).contains(&ctrl),
        "{ctrl} controller connections for one heartbeat:\n{text}"
    );
    assert_eq!(router, 1, "one edge-router connection:\n{text}");
}

#[test]
fn proxy_through_a_real_ziti_tunnel_proxy_applies_and_heartbeats() {
    require_docker();
    let net = Net::shared();
    let s = Stack::new("ziti-proxy", Flavour::V2);
    let z = services(net, &s);
    let id = net.identity(&unique("box-proxy"), &[&z.tenancy, &z.bao]);
    let (tp, bp) = (ziti::free_port(), ziti::free_port());
    let _proxy = TunnelProxy::start(net, &id, &[(&z.tenancy, tp), (&z.bao, bp)]);
    write(&s, &ziti_config(&s, "transport: proxy\n", &z, (tp, bp)));
    apply_then_heartbeat(&s, "proxy");
}

#[test]
fn sdk_service_the_identity_may_not_dial_exits_75_naming_it() {
    require_sdk();
    let net = Net::shared();
    let s = Stack::new("ziti-deny", Flavour::V2);
    let z = services(net, &s);
    // Dial rights on OpenBao only: tenancy (dialled first) is refused by the network.
    let id = net.identity(&unique("box-deny"), &[&z.bao]);
    write(
        &s,
        &ziti_config(
            &s,
            &format!("transport: sdk\nidentity: {}\n", id.display()),
            &z,
            (1, 1),
        ),
    );
    s.give_bootstrap();
    let r = s.tick();
    eprintln!("{r:?}"); // the operator-facing message, shown with --nocapture
    assert_eq!(r.code, 75, "{r:?}");
    assert!(
        r.stderr.contains(&z.tenancy) && r.stderr.contains("may not dial"),
        "{r:?}"
    );
    assert!(
        s.tenancy.checkins().is_empty(),
        "tenancy must not have been reached"
    );
}

#[test]
fn sdk_corrupt_identity_exits_1_naming_the_file() {
    require_sdk();
    let net = Net::shared();
    let s = Stack::new("ziti-corrupt", Flavour::V2);
    let z = services(net, &s);
    let id = s.dir.path().join("identity.json");
    std::fs::write(
        &id,
        "{\"ztAPI\": \"https://localhost:1280\", \"id\": {\"key\": \"pem:-----BEGIN",
    )
    .unwrap();
    write(
        &s,
        &ziti_config(
            &s,
            &format!("transport: sdk\nidentity: {}\n", id.display()),
            &z,
            (1, 1),
        ),
    );
    s.give_bootstrap();
    let r = s.tick();
    eprintln!("{r:?}"); // the operator-facing message, shown with --nocapture
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains(&id.display().to_string()), "{r:?}");
    assert!(s.tenancy.checkins().is_empty());
}

#[test]
fn sdk_controller_stopped_exits_75_within_the_timeout() {
    require_sdk();
    // A network of its own (the shared one's ports + 1), so stopping its controller disturbs no
    // other test.
    let dir = ziti::repo().join("target/ziti-net-down");
    let (ctrl, router) = ziti::ports();
    let net = Net::start_in(&dir, ctrl + 1, router + 1);
    let s = Stack::new("ziti-down", Flavour::V2);
    let z = services(&net, &s);
    let id = net.identity(&unique("box-down"), &[&z.tenancy, &z.bao]);
    write(
        &s,
        &ziti_config(
            &s,
            &format!("transport: sdk\nidentity: {}\n", id.display()),
            &z,
            (1, 1),
        ),
    );
    s.give_bootstrap();

    net.stop();
    let t0 = Instant::now();
    let r = s.tick();
    let took = t0.elapsed();
    // the same box in laptop mode: offline at start-up is quiet, exit 0 (the laptop-mode rule)
    let cfg = std::fs::read_to_string(s.config_path()).unwrap();
    write(&s, &format!("{cfg}laptop_mode: true\n"));
    let laptop = s.tick();
    write(&s, &cfg);
    net.restart(); // leave it as found for the next run
    assert_eq!(laptop.code, 0, "{laptop:?}");
    assert!(
        laptop.stderr.contains("offline (laptop mode)"),
        "{laptop:?}"
    );
    eprintln!("{r:?}"); // the operator-facing message, shown with --nocapture
    assert_eq!(r.code, 75, "{r:?}");
    // timeout_s is 5 in the harness config; allow process start and teardown
    assert!(took < Duration::from_secs(5 + 5), "took {took:?}: {r:?}");
    assert!(
        r.stderr.contains("controller") || r.stderr.contains("ziti identity"),
        "{r:?}"
    );
    assert!(s.tenancy.checkins().is_empty());
}

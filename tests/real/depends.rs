//! Nothing this box or any of its instances depends on can be claimed by a bundle (issue 40), on
//! real parts: dockerd, OpenBao, the test tenancy, a real tinyproxy with Basic auth, two and
//! three instances. Each shape is shown twice: with the policy off (`MONKY_DEPLOYD_TEST_POLICY`)
//! the bundle takes what the box depends on and a container receives what the agent sends
//! there (the proxy's Basic credentials, a peer's bearer token) or a peer's data; with it on
//! (the full agent, and the engine guard alone) the bundle is refused with its code and nothing
//! is created. The reason names the dependency the derivation found (`egress_proxy.url`,
//! `HTTPS_PROXY`, `instance stage's tenancy.host`…), so a test fails when a dependency stops
//! reaching it.
//!
//! Remotes that a route reaches live in network namespaces (tests/common/netns.rs); each test
//! has its own /24s (10.231–10.236.0.0) and ports.

use std::path::Path;

use base64::Engine as _;

use crate::common::netns::NsRemote;
use crate::common::proxy::*;
use crate::common::*;

/// The port a catcher listens on: what the agent dials at the address it took.
fn catcher(port: u16, net: Option<(&str, &str)>, ports: &str) -> String {
    let (svc_net, top) = match net {
        Some((subnet, addr)) => (
            format!("    networks:\n      front:\n        ipv4_address: {addr}\n"),
            format!("networks:\n  front:\n    ipam:\n      config:\n        - subnet: {subnet}\n"),
        ),
        None => (String::new(), String::new()),
    };
    // nc prints what it receives and closes at once (stdin is empty): the agent's request
    // ends in the container's log, and the agent sees a closed connection, not a hang
    format!(
        "services:\n  catch:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"while true; do nc -l -p {port} </dev/null; done\"]\n\
         {ports}{svc_net}{top}"
    )
}

/// The one catcher container's log (empty when there is none).
fn caught(s: &Stack) -> String {
    service_containers(s, "catch")
        .first()
        .map(|id| logs_of(id))
        .unwrap_or_default()
}

/// The `Proxy-Authorization` value the proxy's credentials make.
fn basic(proxy: &Tinyproxy) -> String {
    let (u, p) = proxy.opts.auth.clone().unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
    format!("Basic {b64}")
}

/// Whether a request in `log` carried header `name` (any case, as HTTP/1.1 allows) = `value`.
fn sent(log: &str, name: &str, value: &str) -> bool {
    log.lines().any(|l| {
        l.split_once(':')
            .is_some_and(|(n, v)| n.eq_ignore_ascii_case(name) && v.trim() == value)
    })
}

/// `policy` ("on" or "no-file") refuses `compose` with `code`, the detail containing `needle`,
/// with `env` added to the agent's environment; no container is created.
fn refused(
    s: &Stack,
    serial: &mut u64,
    compose: &str,
    policy: &str,
    code: &str,
    needle: &str,
    env: &[(&str, &str)],
) -> String {
    *serial += 1;
    s.tenancy
        .set_bundle(&s.env, bundle(*serial, compose.to_string()));
    let mut e = vec![("MONKY_DEPLOYD_TEST_POLICY", policy)];
    e.extend_from_slice(env);
    let r = s.cmd_as(&["run", "--once"], &e, None);
    let rep = s.last_report();
    let detail = rep["detail"].as_str().unwrap_or("").to_string();
    assert_eq!(r.code, 1, "{policy}: not refused: {r:?}");
    assert_eq!(rep["result"], "failed", "{policy}: {detail}");
    assert!(
        detail.starts_with(&format!("{code}: ")) && detail.contains(needle),
        "{policy}: want {code} with {needle:?}, got {detail:?}"
    );
    assert!(
        project_objects(s, "container").is_empty(),
        "{policy}: a container was created: {detail}"
    );
    purge_project(s);
    detail
}

fn flavour_octet(f: Flavour) -> u8 {
    match f {
        Flavour::V1 => 231,
        Flavour::V2 => 232,
        Flavour::V5 => 233,
    }
}

/// The egress proxy on another host, reached by a route (a namespace): a bundle network whose
/// subnet holds the proxy's address takes the route, and the agent's next request hands the
/// proxy's Basic credentials to the bundle's container. Refused naming `egress_proxy.url`.
fn a_routed_egress_proxy_is_the_boxs(f: Flavour) {
    require_docker();
    let o = flavour_octet(f);
    let remote = NsRemote::new(&format!("10.{o}.0"));
    let proxy = Tinyproxy::start();
    remote.relay(8888, proxy.port());
    let mut s = Stack::new("dep-proxy", f);
    s.give_bootstrap();
    let cred = proxy.credentials_file(s.dir.path());
    s.set_extra(&format!(
        "network_pools: [\"10.{o}.0.0/16\", \"172.16.0.0/12\"]\n\
         egress_proxy:\n  url: http://{}:8888\n  credentials_file: {}\n",
        remote.addr,
        cred.display()
    ));
    let dev = remote.host_if().to_string();
    assert_eq!(remote.route_dev(), dev);

    // the rig: the agent converges through the proxy, reached over the route
    let sha = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "one", "k3y-dep").files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.state()["applied_sha"], sha.as_str());
    assert!(
        proxy.connects_to("127.0.0.1", s.tenancy.port()) > 0,
        "the agent did not go through the proxy: {}",
        proxy.log()
    );
    purge_project(&s);

    let attack = catcher(8888, Some((&format!("10.{o}.0.128/25"), &remote.addr)), "");
    let mut serial = 10;
    let want = format!("(overlaps {0}/32, {0} (egress_proxy.url))", remote.addr);
    let mut table = Vec::new();
    for policy in ["on", "no-file"] {
        let d = refused(
            &s,
            &mut serial,
            &attack,
            policy,
            "NETWORK_REFUSED",
            &want,
            &[],
        );
        assert_eq!(remote.route_dev(), dev);
        table.push(format!("{f:?} | routed egress proxy | {policy}: {d}"));
    }

    // policy off: the route moves to the project's bridge, the credentials to the container
    serial += 1;
    s.tenancy.set_bundle(&s.env, bundle(serial, attack.clone()));
    // the tick that applies it, then heartbeats until the catcher listens
    let (log, runs) = ticks_until_sent(
        || tick_with(&s, "off"),
        &s,
        "proxy-authorization",
        &basic(&proxy),
    );
    let nets = project_objects(&s, "network");
    assert_eq!(nets.len(), 1, "{runs:?}");
    let bridge = format!("br-{}", &nets[0][..12]);
    assert_eq!(remote.route_dev(), bridge, "the route to the proxy moved");
    assert!(
        sent(&log, "proxy-authorization", &basic(&proxy)),
        "the container did not receive the proxy's credentials: {log:?} {runs:?}"
    );
    table.push(format!(
        "{f:?} | routed egress proxy | off: route to {} via {bridge}; the container logged `{}`",
        remote.addr,
        log.lines()
            .find(|l| l.starts_with("CONNECT"))
            .unwrap_or("")
            .trim()
    ));
    purge_project(&s);
    assert_eq!(remote.route_dev(), dev);
    for l in table {
        eprintln!("{l}");
    }
}
all_composes!(a_routed_egress_proxy_is_the_boxs);

/// A local proxy's loopback port: a container that holds it while the proxy restarts receives
/// the credentials the agent sends there. Refused, from `egress_proxy.url` and from
/// `HTTPS_PROXY` alike. One compose line: the port rule's proofs on all three lines are
/// tests/real/host_shared.rs's; what this adds is the dependency's source.
#[test]
fn a_local_proxys_port_is_the_boxs() {
    require_docker();
    let mut proxy = Tinyproxy::start();
    let p = proxy.port();
    let mut s = bootstrapped("dep-lproxy", Flavour::V2);
    let cred = proxy.credentials_file(s.dir.path());
    let (plain, basic_header) = (proxy.url(), basic(&proxy));
    let cfg = |no_proxy: &str| {
        format!(
            "egress_proxy:\n  url: {plain}\n  credentials_file: {}\n{no_proxy}",
            cred.display()
        )
    };
    s.set_extra(&cfg(""));
    let attack = catcher(
        8888,
        None,
        &format!("    ports: [\"127.0.0.1:{p}:8888\"]\n"),
    );
    let want = format!("127.0.0.1:{p} (reserved by the box)");
    let mut serial = 0;
    for policy in ["on", "no-file"] {
        let d = refused(&s, &mut serial, &attack, policy, "PORT_REFUSED", &want, &[]);
        eprintln!("local egress proxy (egress_proxy.url) | {policy}: {d}");
    }
    // the same proxy from the environment, credentials in its URL
    s.set_extra("");
    let url = proxy.url_with_auth();
    for policy in ["on", "no-file"] {
        let d = refused(
            &s,
            &mut serial,
            &attack,
            policy,
            "PORT_REFUSED",
            &want,
            &[("HTTPS_PROXY", &url)],
        );
        eprintln!("local egress proxy (HTTPS_PROXY) | {policy}: {d}");
    }

    // policy off: the proxy restarts; the bundle that applies meanwhile (the agent reaching
    // tenancy directly for that tick) holds its port, and the next tick hands it the password
    proxy.stop();
    s.set_extra(&cfg("  no_proxy: [127.0.0.1]\n"));
    serial += 1;
    s.tenancy.set_bundle(&s.env, bundle(serial, attack.clone()));
    let r = tick_with(&s, "off");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(service_containers(&s, "catch").len(), 1);
    s.set_extra(&cfg(""));
    let (log, runs) = ticks_until_sent(
        || tick_with(&s, "off"),
        &s,
        "proxy-authorization",
        &basic_header,
    );
    assert!(
        sent(&log, "proxy-authorization", &basic_header),
        "the container did not receive the proxy's credentials: {log:?} {runs:?}"
    );
    let r = runs.last().unwrap();
    eprintln!(
        "local egress proxy | off: the container on 127.0.0.1:{p} logged `{}`; the tick: exit {}",
        log.lines()
            .find(|l| l.starts_with("CONNECT"))
            .unwrap_or("")
            .trim(),
        r.code
    );
    purge_project(&s);
}

/// Runs `tick` (at most twenty times, half a second apart: the catcher may not listen yet) until
/// `s`'s catcher logged header `name: value`; its log and the runs.
fn ticks_until_sent(
    mut tick: impl FnMut() -> Run,
    s: &Stack,
    name: &str,
    value: &str,
) -> (String, Vec<Run>) {
    let mut runs = Vec::new();
    for _ in 0..20 {
        runs.push(tick());
        let log = caught(s);
        if sent(&log, name, value) {
            return (log, runs);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    (caught(s), runs)
}

/// The test build's policy for one instance's tick.
fn tick_instance(etc: &Path, name: &str, policy: &str) -> Run {
    run_instance(
        etc,
        name,
        &["run", "--once"],
        &[("MONKY_DEPLOYD_TEST_POLICY", policy)],
    )
}

/// `s`'s config with its tenancy and OpenBao dialled at other hosts.
fn dial_at(s: &Stack, tenancy: &str, bao: &str) {
    let t = s.config_text();
    let n = t
        .replacen(
            "tenancy:\n  host: 127.0.0.1\n",
            &format!("tenancy:\n  host: {tenancy}\n"),
            1,
        )
        .replacen(
            "bao:\n  host: 127.0.0.1\n",
            &format!("bao:\n  host: {bao}\n"),
            1,
        );
    assert_ne!(n, t, "config layout changed:\n{t}");
    std::fs::write(s.config_path(), n).unwrap();
}

/// Another instance's tenancy and OpenBao, reached by routes: one instance's bundle network
/// over them cuts the other off, and over plain http the other's bearer token goes to the
/// container. Two instances on one box; then their data roots and their project names.
#[test]
fn a_peers_remotes_data_and_names_are_the_boxs() {
    require_docker();
    let etc_dir = tempfile::Builder::new()
        .prefix("monky-etc-")
        .tempdir()
        .unwrap();
    let etc = etc_dir.path();
    let rt = NsRemote::new("10.234.0");
    let rb = NsRemote::new("10.235.0");
    let mut qa = Stack::new("dep-qa", Flavour::V2);
    let stage = Stack::new("dep-stage", Flavour::V2);
    for s in [&qa, &stage] {
        s.give_bootstrap();
    }
    let (tp, bp) = (stage.tenancy.port(), stage.bao.port());
    rt.relay(tp, tp);
    rb.relay(bp, bp);
    dial_at(&stage, &rt.addr, &rb.addr);
    qa.set_extra("network_pools: [\"10.234.0.0/15\", \"172.16.0.0/12\"]\n");
    link_instance(etc, "qa", &qa);
    link_instance(etc, "stage", &stage);

    // the rig: stage converges over the routes
    let sha = stage.tenancy.set_bundle(
        &stage.env,
        web_bundle(&stage, 1, "one", "k3y-stage").files(),
    );
    let r = run_instance(etc, "stage", &["run", "--once"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(stage.state()["applied_sha"], sha.as_str());
    let bearer = format!("Bearer {}", stage.token());

    let mut table = Vec::new();
    let mut serial = 10;
    for (remote, port, key) in [(&rt, tp, "tenancy.host"), (&rb, bp, "bao.host")] {
        let pre = remote.addr.trim_end_matches(".130");
        let attack = catcher(port, Some((&format!("{pre}.128/25"), &remote.addr)), "");
        let want = format!(
            "(overlaps {0}/32, {0} (instance stage's {key}))",
            remote.addr
        );
        for policy in ["on", "no-file"] {
            serial += 1;
            qa.tenancy
                .set_bundle(&qa.env, bundle(serial, attack.clone()));
            let r = tick_instance(etc, "qa", policy);
            let rep = qa.last_report();
            let d = rep["detail"].as_str().unwrap_or("").to_string();
            assert_eq!(r.code, 1, "{key} {policy}: {r:?}");
            assert!(
                d.starts_with("NETWORK_REFUSED: ") && d.contains(&want),
                "{key} {policy}: want {want:?}, got {d:?}"
            );
            assert!(
                service_containers(&qa, "catch").is_empty(),
                "{key} {policy}"
            );
            assert_eq!(remote.route_dev(), remote.host_if());
            table.push(format!("peer's {key} | {policy}: {d}"));
            purge_project(&qa);
        }
        serial += 1;
        qa.tenancy
            .set_bundle(&qa.env, bundle(serial, attack.clone()));
        let r = tick_instance(etc, "qa", "off");
        assert_eq!(r.code, 0, "{key} off: {r:?}");
        let nets = project_objects(&qa, "network");
        let bridge = format!("br-{}", &nets[0][..12]);
        assert_eq!(
            remote.route_dev(),
            bridge,
            "stage's route to its {key} moved"
        );
        let stage_tick = || run_instance(etc, "stage", &["run", "--once"], &[]);
        // a heartbeat does not call OpenBao: the moved route is the effect there
        let (log, runs) = if key == "tenancy.host" {
            ticks_until_sent(stage_tick, &qa, "authorization", &bearer)
        } else {
            (String::new(), vec![stage_tick()])
        };
        let st = runs.last().unwrap();
        let mut effect = format!(
            "stage's route to {} via qa's {bridge}; stage's tick exit {}",
            remote.addr, st.code
        );
        if key == "tenancy.host" {
            assert_eq!(st.code, 75, "stage is cut off from its tenancy: {st:?}");
            assert!(
                sent(&log, "authorization", &bearer),
                "stage's bearer did not reach qa's container: {log:?} after {runs:?}"
            );
            effect.push_str("; qa's container logged stage's `Authorization: Bearer` token");
        }
        table.push(format!("peer's {key} | off: {effect}"));
        purge_project(&qa);
        assert_eq!(remote.route_dev(), remote.host_if());
        let st = run_instance(etc, "stage", &["run", "--once"], &[]);
        assert_eq!(st.code, 0, "stage converges again: {st:?}");
    }

    // data roots: stage's data under its root; qa's root over it
    let roots = tempfile::Builder::new()
        .prefix("monky-roots-")
        .tempdir()
        .unwrap();
    let mine = roots.path().join("stage");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("ledger.txt"), "stage-ledger-entry\n").unwrap();
    let mut stage = stage;
    stage.set_extra(&format!("bind_roots: [{}]\n", mine.display()));
    dial_at(&stage, &rt.addr, &rb.addr);
    qa.set_extra(&format!("bind_roots: [{}]\n", roots.path().display()));
    let reader = format!(
        "services:\n  catch:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"cat /x/ledger.txt; exec sleep 600\"]\n    \
         volumes: [\"{}:/x:ro\"]\n",
        mine.display()
    );
    // the rule off: the box not told of stage (qa alone) lets qa read stage's data
    std::fs::remove_dir_all(etc.join("stage")).unwrap();
    serial += 1;
    qa.tenancy
        .set_bundle(&qa.env, bundle(serial, reader.clone()));
    let r = run_instance(etc, "qa", &["run", "--once"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    wait_for("qa's container to print stage's ledger", || {
        caught(&qa).contains("stage-ledger-entry")
    });
    table.push(
        "overlapping bind_roots | off (stage not known): qa's container printed stage's ledger"
            .into(),
    );
    purge_project(&qa);
    // with stage known, neither instance starts
    link_instance(etc, "stage", &stage);
    for (who, other) in [("qa", "stage"), ("stage", "qa")] {
        let r = run_instance(etc, who, &["run", "--once"], &[]);
        assert_eq!(r.code, 1, "{who}: {r:?}");
        assert!(
            r.stderr.contains("overlaps instance")
                && r.stderr.contains(&format!("instance {other}'s")),
            "{who}: {}",
            r.stderr
        );
        let line = r
            .stderr
            .lines()
            .find(|l| l.contains("overlaps instance"))
            .unwrap_or("");
        table.push(format!(
            "overlapping bind_roots | {who} at start: {}",
            line.trim()
        ));
    }
    assert!(service_containers(&qa, "catch").is_empty());

    // project names that extend one another: a third instance whose env extends qa's
    qa.set_extra("");
    stage.set_extra("");
    dial_at(&stage, &rt.addr, &rb.addr);
    let eu_dir = tempfile::Builder::new()
        .prefix("monky-eu-")
        .tempdir()
        .unwrap();
    let eu_cfg = eu_dir.path().join("config.yaml");
    let text = qa
        .config_text()
        .replacen(
            &format!("env_id: {}\n", qa.env),
            &format!("env_id: {}-eu\n", qa.env),
            1,
        )
        .replace(
            &qa.state_dir().display().to_string(),
            &eu_dir.path().join("state").display().to_string(),
        )
        .replace(
            &qa.bootstrap_path().display().to_string(),
            &eu_dir.path().join("bootstrap.jwt").display().to_string(),
        );
    std::fs::write(&eu_cfg, text).unwrap();
    std::fs::create_dir_all(etc.join("qa-eu")).unwrap();
    std::os::unix::fs::symlink(&eu_cfg, etc.join("qa-eu").join("config.yaml")).unwrap();
    let r = run_instance(etc, "qa", &["run", "--once"], &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "compose_project {} and instance qa-eu's {}-eu share a name space",
            qa.project(),
            qa.project()
        )),
        "{}",
        r.stderr
    );
    table.push(format!(
        "projects {0} and {0}-eu | qa at start: refused, naming both",
        qa.project()
    ));
    for l in table {
        eprintln!("{l}");
    }
}

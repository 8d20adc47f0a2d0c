//! The box's address space is the box's (issue 31 §2), on real dockerd and compose v1, v2 and
//! v5. A project network whose subnet covers a route the host has takes that route over: with
//! the policy off (`MONKY_DEPLOYD_TEST_POLICY=off`) `ip route get` moves from the host's route to
//! the project's bridge; with the engine guard alone (`no-file`) and with the full agent the
//! bundle is refused with `NETWORK_REFUSED` and nothing is created. A subnet from the box's
//! `network_pools` with a static address inside it applies.
//!
//! The host route is one the test adds on `lo` (nothing is sent anywhere but loopback) and
//! removes again; each flavour has its own /16 (10.221–223.0.0/16).

use std::process::Command;

use crate::common::netns::route_dev;
use crate::common::*;

/// A route on the loopback device, removed on drop (also when the test fails).
struct LoRoute(String);

impl LoRoute {
    fn add(prefix: &str) -> LoRoute {
        let _ = Command::new("ip")
            .args(["route", "del", prefix, "dev", "lo"])
            .output();
        let o = Command::new("ip")
            .args(["route", "add", prefix, "dev", "lo"])
            .output()
            .unwrap();
        assert!(o.status.success(), "ip route add {prefix} dev lo: {o:?}");
        LoRoute(prefix.to_string())
    }
}

impl Drop for LoRoute {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["route", "del", &self.0, "dev", "lo"])
            .output();
    }
}

fn octet(f: Flavour) -> u8 {
    match f {
        Flavour::V1 => 221,
        Flavour::V2 => 222,
        Flavour::V5 => 223,
    }
}

/// Refused under `policy` with `NETWORK_REFUSED` naming `needle`; no container, and no network
/// unless `net_ok` (its subnet passes, the container's address does not).
fn refused(
    s: &Stack,
    serial: &mut u64,
    compose: &str,
    policy: &str,
    needle: &str,
    net_ok: bool,
) -> String {
    let o = apply_plain(s, serial, compose, policy);
    assert_eq!(o.run.code, 1, "{policy}: not refused: {o:?}");
    assert_eq!(o.result, "failed", "{policy}: {o:?}");
    assert!(
        o.detail.starts_with("NETWORK_REFUSED: ") && o.detail.contains(needle),
        "{policy}: {o:?}"
    );
    assert!(
        project_objects(s, "container").is_empty(),
        "{policy}: a container was created: {o:?}"
    );
    assert!(
        net_ok || project_objects(s, "network").is_empty(),
        "{policy}: a network was created: {o:?}"
    );
    purge_project(s);
    o.detail
}

/// One service on network `front` with `subnet`, at `addr` if given.
fn bundle(subnet: &str, addr: Option<&str>) -> String {
    let net = match addr {
        Some(a) => format!("    networks:\n      front:\n        ipv4_address: {a}\n"),
        None => "    networks: [front]\n".into(),
    };
    format!(
        "services:\n  web:\n    image: {IMAGE}\n    init: true\n    command: [\"sleep\", \"600\"]\n{net}\
         networks:\n  front:\n    ipam:\n      config:\n        - subnet: {subnet}\n"
    )
}

fn the_boxs_address_space_is_the_boxs(f: Flavour) {
    require_docker();
    let o = octet(f);
    let mut s = Stack::new("netpool", f);
    s.give_bootstrap();
    assert_eq!(s.cmd(&["bootstrap"]).code, 0);
    // the metadata range in a pool is still the box's
    s.set_extra(&format!(
        "network_pools: [\"10.{o}.0.0/16\", \"169.254.0.0/16\"]\n"
    ));
    let host_route = format!("10.{o}.5.0/24");
    let _route = LoRoute::add(&host_route);
    let victim = format!("10.{o}.5.10");
    assert_eq!(route_dev(&victim), "lo");
    let mut serial = 0;

    // benign: a subnet of the box's pool, a static address inside it
    let ok = apply_plain(
        &s,
        &mut serial,
        &bundle(&format!("10.{o}.1.0/24"), Some(&format!("10.{o}.1.9"))),
        "on",
    );
    assert_eq!((ok.run.code, ok.result.as_str()), (0, "applied"), "{ok:?}");
    let c = project_objects(&s, "container");
    assert_eq!(c.len(), 1, "{ok:?}");
    let ip = Command::new("docker")
        .args([
            "inspect",
            "-f",
            "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
            &c[0],
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&ip.stdout).trim(),
        format!("10.{o}.1.9")
    );
    purge_project(&s);

    // the attack, policy off: the project's bridge takes the host's route
    let over = bundle(&format!("10.{o}.5.0/25"), None);
    let off = apply_plain(&s, &mut serial, &over, "off");
    assert_eq!(off.run.code, 0, "policy off should apply: {off:?}");
    let nets = project_objects(&s, "network");
    assert_eq!(nets.len(), 1, "{off:?}");
    let bridge = format!("br-{}", &nets[0][..12]);
    assert_eq!(
        route_dev(&victim),
        bridge,
        "the host's route moved to the project's bridge"
    );
    purge_project(&s);
    assert_eq!(route_dev(&victim), "lo");
    eprintln!("{f:?} | overlap {host_route} | off: route to {victim} via {bridge}");

    // the engine guard alone, then the full agent
    for policy in ["no-file", "on"] {
        let d = refused(
            &s,
            &mut serial,
            &over,
            policy,
            &format!("(overlaps {host_route}, a route of the host via lo)"),
            false,
        );
        eprintln!("{f:?} | overlap | {policy}: {d}");
        assert_eq!(route_dev(&victim), "lo");
        let d = refused(
            &s,
            &mut serial,
            &bundle("169.254.169.0/24", None),
            policy,
            "169.254.169.0/24 (overlaps 169.254.0.0/16, the link-local metadata range)",
            false,
        );
        eprintln!("{f:?} | metadata | {policy}: {d}");
        let d = refused(
            &s,
            &mut serial,
            &bundle(&format!("10.{o}.1.0/24"), Some(&format!("10.{o}.2.9"))),
            policy,
            &format!("10.{o}.2.9 (outside the network's own subnet)"),
            true,
        );
        eprintln!("{f:?} | static address | {policy}: {d}");
    }
}

all_composes!(the_boxs_address_space_is_the_boxs);

//! The file passes on what the box shares: the ports it reserves, names outside the project's
//! namespace, scheduling and ceilings, jobs, the release directory, the address space.

use super::*;

/// The box's shared resources in the file passes: ports it reserves, names outside the
/// project's namespace, scheduling and OOM priority, its ceilings.
#[test]
fn the_boxs_ports_names_scheduling_and_ceilings() {
    let ctx = BoxFacts {
        release_dir: Some(FIRST_PASS_ROOT.into()),
        project: "monky-a".into(),
        reserved_ports: vec![22, 18443],
        ..Default::default()
    };
    let svc = |body: &str| format!("services:\n  web:\n    image: x\n{body}");
    let code = |y: &str, c: &BoxFacts| {
        check_bundle(&parse(y.as_bytes()).unwrap(), false, c, &Variables::none())
            .err()
            .map(|r| (r.code.as_str(), r.detail))
    };
    for (body, detail) in [
        ("    ports: [\"22:22\"]\n", "web 0.0.0.0:22 (reserved by the box)"),
        ("    ports: [\"127.0.0.1:18443:80\"]\n", "web 127.0.0.1:18443 (reserved by the box)"),
        ("    ports: [\"18440-18450:8080-8090/udp\"]\n", "web 0.0.0.0:18443 (reserved by the box)"),
        ("    ports: [\"[::1]:22:80\"]\n", "web [::1]:22 (reserved by the box)"),
        (
            "    ports:\n      - target: 80\n        published: \"18443\"\n        host_ip: 10.0.0.1\n",
            "web 10.0.0.1:18443 (reserved by the box)",
        ),
    ] {
        assert_eq!(
            code(&svc(body), &ctx),
            Some(("PORT_REFUSED", detail.to_string())),
            "{body}"
        );
    }
    for body in [
        "    ports: [\"8080:80\", \"80\", \"127.0.0.1::80\", \"8000-8010:8000-8010\"]\n",
        "    ports:\n      - target: 80\n",
        "    container_name: monky-a-web\n",
        "    container_name: monky-a_web_1\n",
        "    oom_score_adj: 500\n    ulimits: {nofile: {soft: 1024, hard: 2048}, memlock: 65536}\n",
        "    sysctls: {net.core.somaxconn: 1024}\n",
    ] {
        assert_eq!(code(&svc(body), &ctx), None, "{body}");
    }
    let named =
        |y: &str| code(y, &ctx).map(|(c, d)| (c, d.split(" (").next().unwrap().to_string()));
    // a longer project's names look like this one's: refused, the namespace is prefix-free
    assert_eq!(
        named(&svc("    container_name: monky-a-eu-web\n")),
        Some(("NAME_REFUSED", "container monky-a-eu-web".into()))
    );
    assert_eq!(
        named(&format!(
            "{}volumes:\n  data:\n    name: monky-a-eu_data\n",
            svc("")
        )),
        Some(("NAME_REFUSED", "volume monky-a-eu_data".into()))
    );
    assert_eq!(
        named(&svc("    container_name: monky-b-web-1\n")),
        Some(("NAME_REFUSED", "container monky-b-web-1".into()))
    );
    assert_eq!(
        named(&format!(
            "{}volumes:\n  data:\n    name: monky-b_data\n",
            svc("")
        )),
        Some(("NAME_REFUSED", "volume monky-b_data".into()))
    );
    assert_eq!(
        named(&format!(
            "{}networks:\n  n:\n    external: true\n    name: bridge2\n",
            svc("")
        )),
        Some(("NAME_REFUSED", "network bridge2".into()))
    );
    for body in [
        "    oom_score_adj: -500\n",
        "    cap_add: [SYS_NICE]\n",
        "    cap_add: [ipc_lock]\n",
        "    cap_add: [CAP_SYS_RESOURCE]\n",
        "    ulimits: {rtprio: 99}\n",
        "    ulimits: {nice: {soft: 0, hard: 10}}\n",
        "    ulimits: {memlock: -1}\n",
        "    ulimits: {memlock: 1073741824}\n",
        "    sysctls: [kernel.panic=1]\n",
        "    security_opt: [\"label=disable\"]\n",
    ] {
        assert_eq!(
            code(&svc(body), &ctx).map(|c| c.0),
            Some(CODE.as_str()),
            "{body}"
        );
    }
    let capped = BoxFacts {
        limits: crate::policy::Limits {
            memory: Some(256 << 20),
            pids: Some(100),
        },
        ..ctx.clone()
    };
    for ok in [
        "    mem_limit: 128m\n    pids_limit: 50\n",
        "    deploy: {resources: {limits: {memory: 64M, pids: 10}}}\n",
    ] {
        assert_eq!(code(&svc(ok), &capped), None, "{ok}");
    }
    for bad in [
        "    pids_limit: 50\n",
        "    mem_limit: 512m\n    pids_limit: 50\n",
        "    mem_limit: 128m\n",
        "    mem_limit: 128m\n    pids_limit: 500\n",
    ] {
        assert_eq!(
            code(&svc(bad), &capped).map(|c| c.0),
            Some("LIMIT_REFUSED"),
            "{bad}"
        );
    }
}

#[test]
fn jobs_from_compose_depends_on_and_the_marker_label() {
    let doc = parse(
        b"services:\n  migrate:\n    image: x\n  seed:\n    image: x\n    labels: [\"monky.job=true\"]\n  \
          report:\n    image: x\n    labels: {monky.job: \"true\"}\n  web:\n    image: x\n    depends_on:\n      \
          migrate: {condition: service_completed_successfully}\n      db: {condition: service_healthy}\n  \
          db:\n    image: x\n    labels: {monky.job: \"false\"}\n",
    )
    .unwrap();
    let j: Vec<String> = jobs(&doc).into_iter().collect();
    assert_eq!(j, vec!["migrate", "report", "seed"]);
}

#[test]
fn a_writable_bind_of_the_release_is_named_for_an_operator() {
    let ctx = BoxFacts {
        release_dir: Some(FIRST_PASS_ROOT.into()),
        project: "monky-a".into(),
        bundle_files: vec!["compose.yaml".into(), "conf/app.conf".into()],
        ..Default::default()
    };
    let first = |y: &str| {
        check_bundle(
            &parse(y.as_bytes()).unwrap(),
            false,
            &ctx,
            &Variables::none(),
        )
        .map(|_| ())
        .unwrap_err()
    };
    let svc = |v: &str| format!("services:\n  a:\n    image: x\n    volumes: [\"{v}\"]\n");
    for v in ["./:/app", ".:/app"] {
        let r = first(&svc(v));
        assert_eq!(r.code, BIND_CODE, "{v}: {r:?}");
        assert!(
            r.detail.contains("the release directory (./)"),
            "{v}: {r:?}"
        );
        assert!(!r.detail.contains(FIRST_PASS_ROOT), "{v}: {r:?}");
    }
    // a directory of the bundle's files bound writable is admitted since issue 41: the guard
    // mounts it read-only (read_only_by_construction), so the invariant holds; a writable bind
    // that holds one but is not inside the release (its root) is still refused
    check_bundle(
        &parse(svc("./conf:/c").as_bytes()).unwrap(),
        false,
        &ctx,
        &Variables::none(),
    )
    .unwrap();
    // a file of the bundle inside a writable bind elsewhere keeps its ./ path
    let r = first(
        "services:\n  a:\n    image: x\n    volumes: [\"./conf:/c:ro\", \"./conf/sub:/s\"]\n",
    );
    assert_eq!(r.code, BIND_CODE, "{r:?}");
    assert!(r.detail.contains("./conf/sub"), "{r:?}");
    assert!(!r.detail.contains(FIRST_PASS_ROOT), "{r:?}");
    assert_eq!(
        release_shown("/.release/.release-notes: writable, and holds /.release, which"),
        "./.release-notes: writable, and holds the release directory (./), which"
    );
}

#[test]
fn the_boxs_address_space_subnets_and_static_addresses() {
    let mut net = crate::policy::netpool::AddressSpace::new(&["10.100.0.0/16".into()]);
    net.take(
        monky_base::cidr::Cidr::parse("10.100.5.0/24").unwrap(),
        "a route of the host via eth1",
    );
    let ctx = BoxFacts {
        release_dir: Some("/rel".into()),
        project: "monky-t".into(),
        net: Some(net),
        ..BoxFacts::default()
    };
    let judge = |y: &str| check_normalised(&parse(y.as_bytes()).unwrap(), false, &ctx);
    let svc = |nets: &str| {
        format!("services:\n  web:\n    image: x\n    networks:\n{nets}networks:\n  front:\n    ipam:\n      config:\n        - subnet: 10.100.1.0/24\n          gateway: 10.100.1.1\n")
    };
    // a subnet of the pool, an address inside it; a network with no subnet
    judge(&svc("      front:\n        ipv4_address: 10.100.1.9\n")).unwrap();
    judge("services:\n  web:\n    image: x\nnetworks:\n  back: {}\n").unwrap();
    let code = |y: &str| {
        let r = judge(y).unwrap_err();
        assert_eq!(r.code, "NETWORK_REFUSED", "{r:?}");
        r.detail
    };
    assert_eq!(
        code(&svc("      front:\n        ipv4_address: 10.100.2.9\n")),
        "service web: front 10.100.2.9 (outside the network's own subnet)"
    );
    let net = |ipam: &str| {
        format!("services:\n  web:\n    image: x\nnetworks:\n  front:\n    ipam:\n{ipam}")
    };
    assert_eq!(
        code(&net("      config:\n        - subnet: 10.100.5.0/25\n")),
        "front 10.100.5.0/25 (overlaps 10.100.5.0/24, a route of the host via eth1)"
    );
    assert!(code(&net("      config:\n        - subnet: 169.254.169.0/24\n")).contains("outside"));
    assert!(code(&net("      config:\n        - subnet: fd00::/64\n")).contains("no IPv6 pool"));
    assert!(code(&net(
        "      config:\n        - subnet: 10.100.1.0/24\n          ip_range: 10.100.2.0/25\n"
    ))
    .contains("outside the network's own subnet"));
    assert!(code(&net("      driver: other\n")).contains("IPAM driver"));
    // an external network's subnet is the engine's: the guard judges the address
    judge("services:\n  web:\n    image: x\n    networks:\n      ext:\n        ipv4_address: 10.100.7.9\nnetworks:\n  ext:\n    external: true\n    name: monky-t_ext\n").unwrap();
    // the first pass leaves an interpolated subnet to the second
    let first = BoxFacts {
        bundle_files: vec![],
        ..ctx.clone()
    };
    check_bundle(
        &parse(net("      config:\n        - subnet: ${SUBNET}\n").as_bytes()).unwrap(),
        false,
        &first,
        &Variables::none(),
    )
    .unwrap();
}

use super::*;

use monky_base::cidr::Cidr;

fn c(s: &str) -> Cidr {
    Cidr::parse(s).unwrap()
}

fn space() -> AddressSpace {
    let mut s = AddressSpace::new(&["10.100.0.0/16".into(), "fd00:10::/48".into()]);
    s.take(c("10.100.5.0/24"), "host route via eth1");
    s.take(c("10.100.9.9"), "DNS server");
    s
}

#[test]
fn a_subnet_comes_from_the_pool_and_overlaps_nothing_the_box_has() {
    let s = space();
    assert_eq!(s.subnet_refusal("p_n", "10.100.1.0/24"), Ok(()));
    assert_eq!(s.subnet_refusal("p_n", "fd00:10:0:1::/64"), Ok(()));
    let r = |sub: &str| {
        let e = s.subnet_refusal("p_n", sub).unwrap_err();
        assert_eq!(e.code, NETWORK_CODE);
        e.detail
    };
    assert_eq!(
        r("10.100.5.128/25"),
        "p_n 10.100.5.128/25 (overlaps 10.100.5.0/24, host route via eth1)"
    );
    assert!(r("10.100.0.0/16").contains("overlaps"));
    // an endpoint reached by a route: the refusal names the endpoint, the more specific
    let mut p = space();
    p.take(c("10.100.5.130"), "egress_proxy.url");
    p.take(c("10.100.5.0/24"), "a second route to it");
    assert_eq!(
        p.subnet_refusal("p_n", "10.100.5.128/25")
            .unwrap_err()
            .detail,
        "p_n 10.100.5.128/25 (overlaps 10.100.5.130/32, egress_proxy.url)"
    );
    assert!(p
        .subnet_refusal("p_n", "10.100.5.0/26")
        .unwrap_err()
        .detail
        .ends_with("(overlaps 10.100.5.0/24, host route via eth1)"));
    assert!(r("10.100.9.0/24").contains("DNS server"));
    assert!(r("10.101.0.0/24").contains("outside the box's network_pools"));
    assert!(r("10.0.0.0/8").contains("outside"), "wider than the pool");
    assert!(r("169.254.169.0/24").contains("outside"));
    assert!(r("fd00:11::/64").contains("outside"));
    assert!(r("nonsense").contains("not an address prefix"));
    // the metadata range is taken even when a pool covers it
    let m = AddressSpace::new(&["169.254.0.0/16".into()]);
    assert!(m
        .subnet_refusal("p_n", "169.254.169.0/24")
        .unwrap_err()
        .detail
        .contains("metadata"));
    // no IPv6 pool: every IPv6 subnet is refused
    let v4 = AddressSpace::new(&["10.100.0.0/16".into()]);
    assert!(v4
        .subnet_refusal("p_n", "fd00:10::/64")
        .unwrap_err()
        .detail
        .contains("no IPv6 pool"));
}

#[test]
fn addresses_stay_inside_the_networks_own_subnet() {
    let subs = vec!["10.100.1.0/24".to_string(), "fd00:10:0:1::/64".to_string()];
    assert_eq!(address_refusal("p_n", "10.100.1.7", &subs), Ok(()));
    assert_eq!(address_refusal("p_n", "10.100.1.128/25", &subs), Ok(()));
    assert_eq!(address_refusal("p_n", "fd00:10:0:1::7", &subs), Ok(()));
    assert_eq!(
        address_refusal("p_n", "10.100.2.7", &subs)
            .unwrap_err()
            .to_string(),
        "NETWORK_REFUSED: p_n 10.100.2.7 (outside the network's own subnet)"
    );
    assert!(address_refusal("p_n", "fd00:10:0:2::7", &subs).is_err());
    assert!(address_refusal("p_n", "10.100.1.7", &[])
        .unwrap_err()
        .detail
        .contains("no subnet"));
}

#[test]
fn routes_and_resolv_conf_are_read_as_the_kernel_writes_them() {
    let v4 =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
                  eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
                  docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n\
                  eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
    let v6 = "fd000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000000 00000000 00000001     eth0\n\
                  00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 00000400 00000000 00000000 00000001     eth0\n";
    let r = parse_routes(v4, v6);
    let shown: Vec<String> = r.iter().map(|(c, i)| format!("{c} {i}")).collect();
    assert_eq!(
        shown,
        [
            "172.17.0.0/16 docker0",
            "192.0.2.0/24 eth0",
            "fd00::/8 eth0"
        ]
    );
    let ns = parse_resolv("# x\nnameserver 10.255.255.53\nnameserver fe80::1%eth0\nsearch a\n");
    assert_eq!(
        ns,
        vec![
            "10.255.255.53".parse::<IpAddr>().unwrap(),
            "fe80::1".parse().unwrap()
        ]
    );
}

#[test]
fn the_default_pools_are_the_engines() {
    let p = engine_default_pools();
    assert_eq!(p.len(), 16);
    let s = AddressSpace::new(&p);
    assert_eq!(s.subnet_refusal("n", "172.20.0.0/16"), Ok(()));
    assert_eq!(s.subnet_refusal("n", "192.168.77.0/24"), Ok(()));
    assert!(s.subnet_refusal("n", "172.16.0.0/16").is_err());
    assert!(s.subnet_refusal("n", "10.0.0.0/24").is_err());
}

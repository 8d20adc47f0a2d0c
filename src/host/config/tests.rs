//! config.yaml: the example parses, unknown keys and bad values are named, the tick budget
//! fits the unit's timeout.

use super::*;

fn parse(s: &str) -> Result<Config, ConfigError> {
    Config::parse(s, Path::new("/x/config.yaml"))
}

#[test]
fn example_parses() {
    let text = include_str!("../../../config.example.yaml").replace(
        "ca_file: /etc/monky-deployd/openbao-ca.pem",
        "ca_file: \"\"",
    );
    let c = parse(&text).unwrap();
    assert_eq!(c.env_id, "env-qa-02");
    assert_eq!(c.compose_project, "monky-env-qa-02");
    assert_eq!(c.tenancy.proxy_port, 18443);
    assert_eq!(c.bao.renew_below_s, 900);
}

/// The default tick budget plus the margin fits the timer unit's TimeoutStartSec.
#[test]
fn tick_budget_fits_the_units_timeout() {
    let unit = include_str!("../../../packaging/systemd/monky-deployd.service");
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("TimeoutStartSec="))
        .expect("TimeoutStartSec in the unit");
    let secs = line
        .trim()
        .parse::<jiff::SignedDuration>()
        .unwrap()
        .as_secs() as u64;
    assert!(
        DEFAULT_TICK_BUDGET_S + TICK_MARGIN_S <= secs,
        "budget {DEFAULT_TICK_BUDGET_S}s + margin {TICK_MARGIN_S}s > TimeoutStartSec {secs}s"
    );
}

#[test]
fn unknown_key_named_with_line() {
    let e = parse("env_id: a\nsite: b\ntenancy:\n  hots: x\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("hots") && e.contains("line 4"), "{e}");
}

#[test]
fn bad_values_named() {
    let e = parse("env_id: a\nsite: b\ntransport: carrier-pigeon\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("carrier-pigeon") && e.contains("sdk"), "{e}");
    let e = parse("env_id: Bad_Env\nsite: b\n").unwrap_err().to_string();
    assert!(e.contains("env_id"), "{e}");
    let e = parse("site: b\n").unwrap_err().to_string();
    assert!(e.contains("env_id is required"), "{e}");
    let e = parse("env_id: a\nsite: b\nbao:\n  ca_file: /nope.pem\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bao.ca_file"), "{e}");
}

#[test]
fn reclaim_watermark_and_diagnostics_interval() {
    let base = "env_id: a\nsite: b\nbao:\n  ca_file: \"\"\n";
    let ok = |extra: &str| parse(&format!("{base}{extra}")).unwrap();
    let c = ok("");
    assert_eq!(
        c.disk_reclaim_below(),
        None,
        "unset: derived from the bundle"
    );
    assert_eq!(c.diagnostics_min_interval_s, 600);
    assert_eq!(
        ok("disk_reclaim_below: 10g\n").disk_reclaim_below(),
        Some(10 << 30)
    );
    assert_eq!(
        ok("disk_reclaim_below: 1073741824\n").disk_reclaim_below(),
        Some(1 << 30)
    );
    assert_eq!(
        ok("diagnostics_min_interval_s: 0\n").diagnostics_min_interval_s,
        0
    );
    let e = parse(&format!("{base}disk_reclaim_below: lots\n"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("disk_reclaim_below lots is not a byte size"),
        "{e}"
    );
}

#[test]
fn sdk_refresh_period() {
    let base = "env_id: a\nsite: b\nbao:\n  ca_file: \"\"\n";
    assert_eq!(parse(base).unwrap().sdk_refresh_s, 300);
    assert_eq!(
        parse(&format!("{base}sdk_refresh_s: 60\n"))
            .unwrap()
            .sdk_refresh_s,
        60
    );
    for bad in ["0", "29", "3601"] {
        let e = parse(&format!("{base}sdk_refresh_s: {bad}\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("sdk_refresh_s must be 30-3600"), "{bad}: {e}");
    }
}

#[test]
fn network_pools_default_to_the_engines_and_must_be_prefixes() {
    let c = parse("env_id: a\nsite: b\nbao:\n  ca_file: \"\"\n").unwrap();
    assert_eq!(
        c.network_pools.first().map(String::as_str),
        Some("172.17.0.0/16")
    );
    assert_eq!(
        c.network_pools.last().map(String::as_str),
        Some("192.168.0.0/16")
    );
    let c = parse("env_id: a\nsite: b\nbao:\n  ca_file: \"\"\nnetwork_pools: [10.40.0.0/16, \"fd00:10::/48\"]\n")
        .unwrap();
    assert_eq!(c.network_pools, ["10.40.0.0/16", "fd00:10::/48"]);
    let e = parse("env_id: a\nsite: b\nbao:\n  ca_file: \"\"\nnetwork_pools: [10.40.0.0/33]\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("network_pools") && e.contains("10.40.0.0/33"),
        "{e}"
    );
}

#[test]
fn egress_proxy_keys_are_checked_and_never_hold_credentials() {
    let base = "env_id: a\nsite: b\nbao:\n  ca_file: \"\"\n";
    let c = parse(&format!(
        "{base}egress_proxy:\n  url: http://proxy.corp:3128\n  no_proxy: [.corp, 10.0.0.0/8]\n  credentials_file: /etc/monky-deployd/proxy.cred\n"
    ))
    .unwrap();
    assert_eq!(c.egress_proxy.url, "http://proxy.corp:3128");
    assert_eq!(c.egress_proxy.no_proxy, [".corp", "10.0.0.0/8"]);
    for (yaml, needle) in [
        (
            "egress_proxy:\n  url: http://u:pw@proxy:3128\n",
            "credentials_file",
        ),
        ("egress_proxy:\n  url: https://proxy:3128\n", "only http://"),
        ("egress_proxy:\n  no_proxy: [10.0.0.0/40]\n", "10.0.0.0/40"),
        (
            "egress_proxy:\n  credentials_file: proxy.cred\n",
            "absolute",
        ),
        ("egress_proxy:\n  pasword: x\n", "pasword"),
    ] {
        let e = parse(&format!("{base}{yaml}")).unwrap_err().to_string();
        assert!(e.contains(needle), "{yaml}: {e}");
        assert!(!e.contains(":pw@"), "{e}");
    }
}

//! Bundles refused before anything runs: privilege, a wrong sha, an unreadable secret; and
//! `down` with nothing running.

use super::*;

#[test]
fn a_privileged_bundle_is_refused_and_reported_before_any_lease() {
    let mut b = TestBox::new();
    let s = b.bundle(&[
        (
            "compose.yaml",
            "services:\n  web:\n    image: busybox\n    privileged: true\n",
        ),
        (
            "secrets.manifest.json",
            r#"{"entries": [{"var": "K", "path": "monky/data/env-a/see/k"}]}"#,
        ),
        ("env.template", "K=${K}\n"),
    ]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#));
    let f = b.tick().unwrap_err();
    assert_eq!(
        f.code().map(|c| c.as_str()),
        Some("PRIVILEGED_REFUSED"),
        "{}",
        f.message()
    );
    assert_eq!(
        b.calls(),
        [
            format!("checkin {STORED} applied=-"),
            format!("bundle {s}"),
            "report failed".into()
        ]
    );
    assert!(b.bao().calls.borrow().is_empty());
    assert!(b.reports()[0]["detail"]
        .as_str()
        .unwrap()
        .starts_with("PRIVILEGED_REFUSED"));
    // nothing staged, nothing promoted
    assert!(!b.agent.cfg.current_link().exists());
    assert_eq!(
        std::fs::read_dir(b.agent.cfg.staging_dir())
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn a_bundle_that_does_not_hash_to_its_sha_is_refused() {
    let mut b = TestBox::new();
    let real = b.bundle(&[("compose.yaml", "services: {}\n")]);
    let body = b.tenancy().bundles.borrow().get(&real).cloned().unwrap();
    let claimed = sha('c');
    b.tenancy()
        .bundles
        .borrow_mut()
        .insert(claimed.clone(), body.replace(&real, &claimed));
    b.tenancy().answer(&format!(
        r#"{{"action": "apply", "desired_sha": "{claimed}"}}"#
    ));
    let f = b.tick().unwrap_err();
    assert_eq!(
        f.code().map(|c| c.as_str()),
        Some("BUNDLE_SHA_MISMATCH"),
        "{}",
        f.message()
    );
    assert_eq!(b.reports()[0]["sha"], claimed.as_str());
    assert!(b.tenancy().leases.calls.borrow().is_empty());
}

#[test]
fn an_unreadable_secret_refuses_the_bundle_after_a_lease_and_names_the_variable() {
    let mut b = TestBox::new();
    let s = b.bundle(&[
        ("compose.yaml", "services:\n  web:\n    image: busybox\n"),
        (
            "secrets.manifest.json",
            r#"{"entries": [{"var": "API_KEY", "path": "monky/data/env-a/see/api", "version": 2}]}"#,
        ),
        ("env.template", "API_KEY=${API_KEY}\n"),
    ]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#));
    let f = b.tick().unwrap_err();
    assert_eq!(
        f.code().map(|c| c.as_str()),
        Some("SECRET_UNREADABLE"),
        "{}",
        f.message()
    );
    assert!(f.message().contains("API_KEY"), "{}", f.message());
    // the stored token was dead: leased, logged in, the old one revoked, then the read
    let bao = b.bao().calls.borrow().clone();
    assert_eq!(
        bao[..3],
        [
            "lookup".to_string(),
            "login grant1".into(),
            format!("revoke {STORED}")
        ]
    );
    assert_eq!(bao[3], "kv monky/data/env-a/see/api");
    assert_eq!(*b.tenancy().leases.calls.borrow(), ["lease apply"]);
    assert_eq!(b.reports()[0]["result"], "failed");
    // the new token is the one stored and described
    let tok = std::fs::read_to_string(b.agent.cfg.token_path()).unwrap();
    assert!(tok.starts_with("hvs.token-1-"), "{tok}");
    assert_eq!(b.saved().token.unwrap().source, TokenSource::Lease);
}

#[test]
fn down_with_nothing_running_reports_down() {
    let mut b = TestBox::new();
    b.tenancy().answer(r#"{"action": "down"}"#);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(b.reports()[0]["result"], "down");
    assert!(b.reports()[0]["sha"].is_null());
}

/// What the box depends on is derived (host::depends): the egress proxy the dialer would use,
/// never listed for the boundary, is still out of a bundle's reach, by address and by port.
#[test]
fn the_egress_proxys_address_and_a_local_proxys_port_are_never_a_bundles() {
    let shapes = [
        (
            "http://100.127.77.5:3128",
            "services:\n  web:\n    image: busybox\n    networks: [n]\nnetworks:\n  n:\n    ipam:\n      config:\n        - subnet: 100.127.77.0/24\n",
            "NETWORK_REFUSED",
            "egress_proxy.url",
        ),
        (
            "http://127.0.0.1:3129",
            "services:\n  web:\n    image: busybox\n    ports: [\"3129:80\"]\n",
            "PORT_REFUSED",
            "3129",
        ),
    ];
    for (url, compose, code, named) in shapes {
        let mut b = TestBox::with(|c| {
            c.transport = Transport::System;
            c.egress_proxy.url = url.into();
            // a pool no host here routes (the host's own routes would refuse it first)
            c.network_pools = vec!["100.127.0.0/16".into()];
        });
        let s = b.bundle(&[("compose.yaml", compose)]);
        b.tenancy()
            .answer(&format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#));
        let f = b.tick().unwrap_err();
        assert_eq!(f.code().map(|c| c.as_str()), Some(code), "{}", f.message());
        assert!(f.message().contains(named), "{}", f.message());
        assert!(b.bao().calls.borrow().is_empty(), "nothing leased or read");
    }
}

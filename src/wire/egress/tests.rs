use super::*;

fn np(list: &[&str]) -> NoProxy {
    NoProxy::parse(list.iter().copied()).unwrap()
}

#[test]
fn no_proxy_forms_match_as_curl_and_go_read_them() {
    let n = np(&[
        "corp.example",
        ".svc.local",
        "10.0.0.0/8",
        "192.168.1.7",
        "::1",
        "fd00::/8",
    ]);
    for (host, direct) in [
        ("corp.example", true),
        ("api.corp.example", true),
        ("CORP.example.", true),
        ("notcorp.example", false),
        ("svc.local", false),
        ("a.svc.local", true),
        ("10.2.3.4", true),
        ("11.2.3.4", false),
        ("192.168.1.7", true),
        ("192.168.1.8", false),
        ("[::1]", true),
        ("::1", true),
        ("fd12::1", true),
        ("fe80::1", false),
        ("127.0.0.1", false),
        ("localhost", false),
    ] {
        assert_eq!(n.matches(host), direct, "{host}");
    }
    assert!(np(&["*"]).matches("anything.example"));
    assert!(np(&["a.example:8443, b.example  c.example"]).matches("b.example"));
    assert!(np(&["a.example:8443"]).matches("a.example"));
    assert!(np(&["*.wild.example"]).matches("x.wild.example"));
    assert!(!np(&["*.wild.example"]).matches("wild.example"));
    assert!(np(&["127.0.0.0/8"]).matches("127.0.0.1"));
    // an IPv4-mapped IPv6 address is the IPv4 one
    assert!(np(&["10.0.0.0/8"]).matches("::ffff:10.1.1.1"));
}

#[test]
fn no_proxy_rejects_what_is_none_of_the_forms() {
    for e in [
        "10.0.0.0/33",
        "fd00::/129",
        "bad/8",
        "a..b",
        "exa mple/x",
        "[zz]",
        "é.example",
    ] {
        assert!(NoProxy::parse([e]).is_err(), "{e}");
    }
}

#[test]
fn proxy_urls_parse_and_never_show_credentials() {
    let u = ProxyUrl::parse("http://alice:s%3Acr%40t@Proxy.Corp:3128/").unwrap();
    assert_eq!((u.host.as_str(), u.port), ("proxy.corp", 3128));
    let c = u.credentials.unwrap();
    assert_eq!((c.user.as_str(), c.password.as_str()), ("alice", "s:cr@t"));
    assert_eq!(*c.basic_header(), "Basic YWxpY2U6czpjckB0");
    assert!(!format!("{c:?}").contains("s:cr@t"));
    let r = ProxyRoute {
        host: "proxy.corp".into(),
        port: 3128,
        credentials: Some(c),
    };
    assert_eq!(r.shown(), "http://proxy.corp:3128");
    assert!(!format!("{r:?}").contains("s:cr@t"));

    let u = ProxyUrl::parse("proxy:8080").unwrap();
    assert_eq!(
        (u.host.as_str(), u.port, u.credentials.is_none()),
        ("proxy", 8080, true)
    );
    assert_eq!(ProxyUrl::parse("http://proxy").unwrap().port, 80);
    let v6 = ProxyUrl::parse("http://[fd00::1]:3128").unwrap();
    assert_eq!((v6.host.as_str(), v6.port), ("fd00::1", 3128));
    for bad in [
        "https://proxy:443",
        "socks5://proxy:1080",
        "http://proxy:0",
        "http://proxy:99999",
        "http://proxy:3128/path",
        "http://:3128",
        "http://u:p%zz@proxy:1",
    ] {
        assert!(ProxyUrl::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn credentials_are_one_user_password_line() {
    let c = Credentials::parse("bob:pa:ss\n").unwrap();
    assert_eq!((c.user.as_str(), c.password.as_str()), ("bob", "pa:ss"));
    assert!(Credentials::parse("nocolon").is_err());
    assert!(Credentials::parse(":pw").is_err());
    assert!(Credentials::parse("a:b\nc:d").is_err());
}

#[test]
fn the_route_skips_the_exempt_and_says_which() {
    let e = Egress::new(
        Some(ProxyRoute {
            host: "p".into(),
            port: 3128,
            credentials: None,
        }),
        np(&[".internal"]),
    );
    assert!(e.route("tenancy.example").is_some());
    assert!(e.route("bao.internal").is_none());
    assert_eq!(e.describe_for("tenancy.example"), "via http://p:3128");
    assert_eq!(e.describe_for("bao.internal"), "direct (no_proxy)");
    assert_eq!(Egress::direct().describe_for("x"), "direct");
    assert!(Egress::direct().route("x").is_none());
}

use super::*;

#[test]
fn caps_are_one_allow_list() {
    assert!(cap_allowed("chown") && cap_allowed("CAP_NET_RAW"));
    for c in [
        "SYS_NICE",
        "cap_ipc_lock",
        "SYS_RESOURCE",
        "SYS_ADMIN",
        "ALL",
        "$X",
    ] {
        assert!(!cap_allowed(c), "{c}");
    }
}

#[test]
fn ulimits_that_share_the_box_are_named() {
    assert!(ulimit_allowed("nofile", 1024, 65536));
    assert!(ulimit_allowed("rtprio", 0, 0));
    assert!(!ulimit_allowed("rtprio", 99, 99));
    assert!(!ulimit_allowed("nice", 0, 10));
    assert!(ulimit_allowed("memlock", 65536, 65536));
    assert!(!ulimit_allowed("memlock", -1, -1));
    assert!(!ulimit_allowed("memlock", 1 << 30, 1 << 30));
    assert!(oom_score_adj_allowed(500) && !oom_score_adj_allowed(-1));
}

#[test]
fn reserved_ports_inside_ranges() {
    let r = [22, 18443];
    assert_eq!(port_range("8080"), Some((8080, 8080)));
    assert_eq!(port_range("18440-18450"), Some((18440, 18450)));
    assert_eq!(port_range(""), None);
    assert_eq!(
        port_refusal("web", "", (18440, 18450), &r)
            .unwrap_err()
            .to_string(),
        "PORT_REFUSED: web 0.0.0.0:18443 (reserved by the box)"
    );
    assert_eq!(
        port_refusal("web", "::1", (22, 22), &r).unwrap_err().detail,
        "web [::1]:22 (reserved by the box)"
    );
    assert!(port_refusal("web", "127.0.0.1", (8080, 8080), &r).is_ok());
}

#[test]
fn names_are_compose_s_own_and_prefix_free() {
    let p = "monky-a";
    assert!(object_name_ok("monky-a_data", p));
    assert!(!object_name_ok("monky-a-eu_data", p), "another project's");
    assert!(!object_name_ok("monky-a_", p));
    for n in [
        "monky-a-web",
        "monky-a-web-1",
        "/monky-a_web_1",
        "0123456789ab_monky-a-web-1",
    ] {
        assert!(container_name_ok(n, p, "web"), "{n}");
    }
    for n in [
        "monky-a-eu-web",
        "monky-a-web-x",
        "monky-a-webby",
        "monky-a-web-",
        "monky-b-web-1",
    ] {
        assert!(!container_name_ok(n, p, "web"), "{n}");
    }
}

#[test]
fn names_inside_the_namespace() {
    let p = "monky-a";
    for n in [
        "monky-a_data",
        "monky-a-web-1",
        "/monky-a_web_1",
        "monky-a_default",
    ] {
        assert!(name_in_namespace(n, p), "{n}");
    }
    for n in [
        "monky-b_data",
        "monky-a",
        "monky-a_",
        "data",
        "monky-ab_data",
        "",
    ] {
        assert!(!name_in_namespace(n, p), "{n}");
    }
}

#[test]
fn byte_sizes_and_limits() {
    assert_eq!(parse_bytes("128m"), Some(128 << 20));
    assert_eq!(parse_bytes("64M"), Some(64 << 20));
    assert_eq!(parse_bytes("1.5g"), Some(3 << 29));
    assert_eq!(parse_bytes("512MiB"), Some(512 << 20));
    assert_eq!(parse_bytes("100"), Some(100));
    assert_eq!(parse_bytes("lots"), None);
    let l = Limits {
        memory: Some(256 << 20),
        pids: Some(100),
    };
    let no = |m: u64, p: i64| {
        let r = l.refusal("web", m, p).unwrap_err();
        assert_eq!(r.code, LIMIT_CODE);
        r.detail
    };
    assert!(l.refusal("web", 128 << 20, 50).is_ok());
    assert!(no(0, 50).contains("memory unset"));
    assert!(no(512 << 20, 50).contains("at most"));
    assert!(no(128 << 20, -1).contains("pids unset"));
    assert!(Limits::default().refusal("web", 0, 0).is_ok());
}

#[test]
fn images_pinned_by_digest_only_where_required() {
    let hex = "0123456789abcdef".repeat(4);
    for ok in [
        format!("registry.example:5000/app@sha256:{hex}"),
        format!("app:1.2@sha256:{hex}"),
    ] {
        assert!(image_pinned(&ok), "{ok}");
    }
    for bad in [
        "app".to_string(),
        "app:1.2".into(),
        format!("app@sha256:{}", &hex[..63]),
        format!("app@sha256:{}", hex.to_uppercase()),
        format!("app@sha512:{hex}"),
        format!("@sha256:{hex}"),
        format!("${{IMG}}@sha256:{hex}"),
        "".into(),
    ] {
        assert!(!image_pinned(&bad), "{bad}");
    }
    let on = BoxFacts {
        require_image_digests: true,
        ..Default::default()
    };
    assert_eq!(
        image_digest_refusal(&on, "web", "app:1")
            .unwrap_err()
            .to_string(),
        "IMAGE_REFUSED: web app:1 (not pinned by digest)"
    );
    assert!(image_digest_refusal(&on, "web", &format!("app@sha256:{hex}")).is_ok());
    assert!(image_digest_refusal(&BoxFacts::default(), "web", "app:1").is_ok());
}

//! The compose privilege analysis (the first pass): no panic on any input, every dangerous
//! setting refused in every spelling, benign services pass, alias bombs refused quickly.

use super::config;
use crate::boundary::compose_check;
use proptest::prelude::*;

/// YAML-ish noise: the tokens a compose file is made of, in any order.
fn yamlish() -> impl Strategy<Value = String> {
    let tok = prop_oneof![
        Just("services:".to_string()),
        Just("\n".to_string()),
        Just("  ".to_string()),
        Just("- ".to_string()),
        Just("<<: *a".to_string()),
        Just("&a ".to_string()),
        Just("*a".to_string()),
        Just("privileged: true".to_string()),
        Just("volumes:".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just(": ".to_string()),
        Just("!!binary ".to_string()),
        Just("!tag ".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("${X}".to_string()),
        Just("? ".to_string()),
        Just("|\n".to_string()),
        "[a-z_/.:0-9-]{1,10}",
    ];
    prop::collection::vec(tok, 0..40).prop_map(|v| v.concat())
}

/// One dangerous setting, in one of its spellings (the service-level lines, indented 4).
fn dangerous() -> impl Strategy<Value = String> {
    let case = |s: &'static str| {
        prop::collection::vec(any::<bool>(), s.len()).prop_map(move |up| {
            s.chars()
                .zip(up)
                .map(|(c, u)| {
                    if u {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    }
                })
                .collect::<String>()
        })
    };
    prop_oneof![
        prop_oneof![
            Just("true"),
            Just("\"true\""),
            Just("yes"),
            Just("1"),
            Just("on"),
            Just("${P}"),
            Just("!!bool true")
        ]
        .prop_map(|v| format!("    privileged: {v}\n")),
        (
            prop_oneof![
                Just("network_mode"),
                Just("pid"),
                Just("ipc"),
                Just("uts"),
                Just("userns_mode"),
                Just("cgroup")
            ],
            case("host")
        )
            .prop_map(|(k, v)| format!("    {k}: \"{v}\"\n")),
        (
            prop_oneof![Just("pid"), Just("ipc"), Just("network_mode")],
            "[a-z0-9-]{1,12}"
        )
            .prop_map(|(k, v)| format!("    {k}: \"container:{v}\"\n")),
        (prop_oneof![
            case("sys_admin"),
            case("cap_sys_admin"),
            case("all"),
            case("sys_module"),
            case("sys_ptrace"),
            case("net_admin")
        ])
        .prop_map(|c| format!("    cap_add: [NET_BIND_SERVICE, \"{c}\"]\n")),
        prop_oneof![
            Just("/var/run/docker.sock"),
            Just("/run/docker.sock"),
            Just("//var//run/./docker.sock"),
            Just("/var/run/../run/docker.sock"),
            Just("/"),
            Just("//"),
            Just("/tmp/.."),
            Just("/proc"),
            Just("/etc"),
            Just("/var/lib/docker/volumes"),
            Just("/dev/sda"),
            Just("../../.."),
            Just("./../x"),
            Just("~/.ssh"),
            Just("${SRC}"),
        ]
        .prop_flat_map(|src| prop_oneof![
            Just(format!("    volumes: [\"{src}:/h\"]\n")),
            Just(format!("    volumes: [\"{src}:/h:ro\"]\n")),
            Just(format!(
                "    volumes:\n      - type: bind\n        source: \"{src}\"\n        target: /h\n"
            )),
        ]),
        Just("    devices: [\"/dev/mem:/dev/mem\"]\n".to_string()),
        Just("    device_cgroup_rules: [\"c 1:1 rwm\"]\n".to_string()),
        prop_oneof![
            Just("seccomp=unconfined"),
            Just("seccomp:unconfined"),
            Just("apparmor=unconfined"),
            Just("label=disable"),
            Just("label:type:spc_t"),
            Just("systempaths=unconfined")
        ]
        .prop_map(|o| format!("    security_opt: [\"{o}\"]\n")),
        Just("    volumes_from: [\"container:other\"]\n".to_string()),
        // writable binds of system trees, and any bind of private ones
        prop_oneof![
            Just("/etc/cron.d:/c"),
            Just("/etc/sudoers.d:/s:rw"),
            Just("/usr/local/bin:/b"),
            Just("/lib/systemd/system:/u"),
            Just("/var/lib/dpkg/info:/d"),
            Just("/opt:/o"),
            Just("/root/.ssh:/k:ro"),
            Just("/home/admin/.ssh:/k:ro"),
            Just("/etc/shadow:/s:ro"),
            Just("/etc:/e:ro"),
            Just("/var:/v:ro"),
        ]
        .prop_map(|b| format!("    volumes: [\"{b}\"]\n")),
        Just("    env_file: [../../bao.token]\n".to_string()),
    ]
}

fn benign_service() -> impl Strategy<Value = String> {
    (
        "[a-z][a-z0-9]{0,6}",
        prop::collection::vec(
            prop_oneof![
                Just("    restart: unless-stopped\n"),
                Just("    privileged: false\n"),
                Just("    cap_add: [NET_BIND_SERVICE]\n"),
                Just("    volumes: [\"data:/data\", \"./conf:/conf:ro\"]\n"),
                Just("    environment:\n      A: ${A}\n"),
                Just("    network_mode: bridge\n"),
                Just("    ports: [\"8080:80\"]\n"),
                Just("    security_opt: [\"no-new-privileges:true\"]\n"),
                Just("    volumes: [\"/etc/localtime:/etc/localtime:ro\", \"/etc/ssl/certs:/etc/ssl/certs:ro\"]\n"),
                Just("    volumes: [\"/srv/app:/srv\", \"/var/log/app:/logs\"]\n"),
            ],
            0..4,
        ),
    )
        .prop_map(|(name, lines)| {
            format!(
                "  b{name}:\n    image: example/{name}:1\n{}",
                lines.concat()
            )
        })
}

proptest! {
    #![proptest_config(config())]

    /// No panic, whatever the input; a refusal always carries a code.
    #[test]
    fn compose_analysis_never_panics(text in yamlish(), allow in any::<bool>()) {
        if let Ok(doc) = compose_check::parse(text.as_bytes()) {
            if let Err(r) = compose_check::check(&doc, allow) {
                prop_assert!(["PRIVILEGED_REFUSED", "BIND_SOURCE_REFUSED", "BUNDLE_INVALID"].contains(&r.code.as_str()));
            }
        }
    }

    #[test]
    fn compose_analysis_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(doc) = compose_check::parse(&bytes) {
            let _ = compose_check::check(&doc, false);
        }
    }

    /// A dangerous setting is refused wherever it sits among benign services, directly or
    /// through an anchor and merge key, and passes only with `allow_privileged`.
    #[test]
    fn privileged_variants_are_always_refused(
        before in prop::collection::vec(benign_service(), 0..3),
        after in prop::collection::vec(benign_service(), 0..3),
        bad in dangerous(),
        via_anchor in any::<bool>(),
    ) {
        let (head, svc) = if via_anchor {
            // the dangerous lines live in an extension field, merged into the service
            let body: String = bad.lines().map(|l| format!("{}\n", &l[2..])).collect();
            (format!("x-bad: &bad\n{body}"), "  evil:\n    <<: *bad\n    image: example/evil:1\n".to_string())
        } else {
            (String::new(), format!("  evil:\n    image: example/evil:1\n{bad}"))
        };
        let y = format!("{head}services:\n{}{svc}{}", before.concat(), after.concat());
        let doc = match compose_check::parse(y.as_bytes()) {
            Ok(d) => d,
            // duplicate service names from the generator: not the property under test
            Err(r) => { prop_assume!(!r.detail.contains("duplicate")); return Err(TestCaseError::fail(format!("{r}\n{y}"))); }
        };
        let r = compose_check::check(&doc, false);
        let refused = |r: &Result<Vec<String>, crate::boundary::Refusal>| {
            matches!(r, Err(r) if r.code == "PRIVILEGED_REFUSED" || r.code == "BIND_SOURCE_REFUSED")
        };
        if bad.contains("${") {
            // a value the first pass cannot interpolate (issue 41) is the second pass's: it
            // judges what compose makes of it — here, the dangerous value
            prop_assert!(r.is_ok() || refused(&r), "{}\n{:?}", y, r);
            let known = y.replace("${P}", "true").replace("${SRC}", "/var/run/docker.sock");
            let box_ = crate::boundary::BoxFacts {
                release_dir: Some("/srv/rel".into()),
                ..Default::default()
            };
            let second = compose_check::parse(known.as_bytes())
                .and_then(|d| compose_check::check_normalised(&d, false, &box_));
            prop_assert!(refused(&second), "not refused by the second pass:\n{}\n{:?}", known, second);
        } else {
            prop_assert!(refused(&r), "not refused:\n{}\n{:?}", y, r);
        }
        let allowed = compose_check::check(&doc, true);
        prop_assert!(allowed.is_ok(), "allow_privileged still refused:\n{}\n{:?}", y, allowed);
    }

    /// Benign services alone are never refused (the analysis is not a blanket no).
    #[test]
    fn benign_services_pass(svcs in prop::collection::btree_map("[a-z]{1,6}", benign_service(), 1..4)) {
        let y = format!("services:\n{}volumes:\n  data: {{}}\n", svcs.values().cloned().collect::<String>());
        let doc = compose_check::parse(y.as_bytes());
        prop_assume!(doc.is_ok());
        let r = compose_check::check(&doc.unwrap(), false);
        prop_assert!(r.is_ok(), "{}\n{:?}", y, r);
    }
}

/// An alias bomb (billion laughs) and deep nesting are refused quickly, not expanded.
#[test]
fn alias_bombs_and_deep_nesting_are_refused_quickly() {
    let mut y = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        y.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    y.push_str("services:\n  web:\n    image: x\n    command: *a11\n");
    let t = std::time::Instant::now();
    let r = compose_check::parse(y.as_bytes()).and_then(|d| compose_check::check(&d, false));
    assert!(r.is_err(), "alias bomb accepted");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
    let deep = format!(
        "services:\n  web:\n    image: x\n    labels: {}{}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let t = std::time::Instant::now();
    let r = compose_check::parse(deep.as_bytes()).and_then(|d| compose_check::check(&d, false));
    assert!(r.is_err(), "5000-deep nesting accepted");
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
}

/// The spellings a YAML file allows for the same setting: all refused by the first pass.
#[test]
fn disguised_spellings_are_refused() {
    let cases = [
        "services:\n  a:\n    image: x\n    \"privileged\": true\n",
        "services:\n  a:\n    image: x\n    \"privil\\u0065ged\": true\n",
        "services:\n  a:\n    image: x\n    ? privileged\n    : true\n",
        "services: {a: {image: x, privileged: true}}\n",
        "{\"services\": {\"a\": {\"image\": \"x\", \"privileged\": true}}}\n",
        "services:\n  a:\n    image: x\n    privileged: !!bool \"true\"\n",
        "services:\n  a:\n    image: x\n    privileged: !reset true\n",
        "services:\n  a:\n    image: x\n    privileged: false\n    privileged: true\n",
        "x-a: &a {privileged: true}\nx-b: &b {image: x}\nservices:\n  a:\n    <<: [*b, *a]\n",
        "x-t: &t true\nservices:\n  a:\n    image: x\n    privileged: *t\n",
        "x-c: &c [SYS_ADMIN]\nservices:\n  a:\n    image: x\n    cap_add: *c\n",
        "services:\n  a:\n    image: x\n    deploy: {}\n    <<: {network_mode: host}\n",
        "services:\n  a:\n    image: x\n    volumes:\n      - {type: bind, source: /var/run/docker.sock, target: /s}\n",
        "services:\n  a:\n    image: x\n    volumes:\n      - \"/var/run/docker.sock:/s:ro,z\"\n",
        "services:\n  a:\n    image: x\n    network_mode: \"  HOST \"\n",
        "services:\n  a:\n    image: x\n    cap_add: \"SYS_ADMIN\"\n",
        "services:\n  a:\n    image: x\n    cap_add: [\" cap_sys_admin \"]\n",
        "services:\n  a:\n    image: x\n    devices:\n      - source: /dev/kvm\n        target: /dev/kvm\n",
        "services:\n  a: &a\n    image: x\n    privileged: true\n  b: *a\n",
    ];
    for y in cases {
        let r = compose_check::parse(y.as_bytes()).and_then(|d| compose_check::check(&d, false));
        assert!(r.is_err(), "not refused:\n{y}");
    }
}

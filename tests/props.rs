//! Property tests of the parsers and checks that stand between tenancy and the box: check-in and
//! lease answers of any shape, bundle decoding and the canonical sha, path safety, the compose
//! privilege analysis, `.env` rendering and the redactor. No panic, no escape, no value surviving.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};

use base64::Engine;
use monky_deployd::bundle::{self, Bundle};
use monky_deployd::compose_check;
use monky_deployd::redact;
use monky_deployd::tenancy::{BundleFileWire, BundleWire};
use proptest::prelude::*;
use zeroize::Zeroizing;

const ENV: &str = "env-prop-01";

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn wire(files: &[(String, Vec<u8>)], sha: &str) -> BundleWire {
    BundleWire {
        env_id: ENV.into(),
        sha: sha.into(),
        files: files
            .iter()
            .map(|(p, c)| BundleFileWire {
                path: p.clone(),
                content_b64: b64(c),
            })
            .collect(),
        signatures: Vec::new(),
    }
}

/// A safe relative path: 1–3 components of `[a-z0-9._-]`, none `.` or `..`, never one of the
/// bundle's own well-known names.
fn safe_path() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z0-9_-][a-z0-9._-]{0,7}", 1..4)
        .prop_map(|c| format!("d/{}", c.join("/")))
        .prop_filter("no dot components", |p| {
            !p.split('/').any(|c| c == "." || c == "..")
        })
}

/// Any path at all, biased towards the shapes that escape.
fn any_path() -> impl Strategy<Value = String> {
    prop_oneof![
        safe_path(),
        "[a-z./\\\\\u{0}~]{0,12}",
        prop::collection::vec(
            prop_oneof![
                Just("..".to_string()),
                Just(".".to_string()),
                Just(String::new()),
                "[a-z]{1,3}"
            ],
            1..5
        )
        .prop_map(|c| c.join("/")),
        "/[a-z/.]{0,10}",
        ".{0,20}",
    ]
}

/// Lexically: does `base.join(p)` stay inside `base`, through plain components only?
fn stays_inside(p: &str) -> bool {
    let joined = Path::new("/base").join(p);
    let rel = match joined.strip_prefix("/base") {
        Ok(r) => r.to_path_buf(),
        Err(_) => return false,
    };
    !rel.as_os_str().is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)))
}

fn minimal_files() -> Vec<(String, Vec<u8>)> {
    vec![(
        "compose.yaml".into(),
        b"services:\n  web:\n    image: example/web:1\n".to_vec(),
    )]
}

proptest! {
    #![proptest_config(config())]

    /// The agent's sha equals the test tenancy's independent implementation, decoding accepts
    /// exactly that sha, and any change of content, path or the asked-for sha is refused.
    #[test]
    fn canonical_sha_matches_an_independent_implementation(
        extra in prop::collection::btree_map(safe_path(), prop::collection::vec(any::<u8>(), 0..64), 0..6)
            .prop_filter("a path is not also a directory", |m| {
                !m.keys().any(|a| m.keys().any(|b| b.starts_with(&format!("{a}/"))))
            }),
        flip in any::<prop::sample::Index>(),
    ) {
        let mut files = minimal_files();
        files.extend(extra);
        let want = monky_test_tenancy::bundle_sha(&files);
        let ours = bundle::canonical_sha(files.iter().map(|(p, c)| (p.as_str(), c.as_slice())));
        prop_assert_eq!(&ours, &want);
        // order of the wire files does not matter
        let mut rev = files.clone();
        rev.reverse();
        let b = Bundle::decode(wire(&rev, &want), ENV, &want).map_err(|r| TestCaseError::fail(r.to_string()))?;
        prop_assert_eq!(&b.sha, &want);
        prop_assert_eq!(b.files.len(), files.len());
        // one byte more in one file: refused
        let mut t = files.clone();
        let i = flip.index(t.len());
        t[i].1.push(0);
        let r = Bundle::decode(wire(&t, &want), ENV, &want).err().expect("tampered content accepted");
        prop_assert_eq!(r.code, "BUNDLE_SHA_MISMATCH");
        // the body claiming another sha than the URL: refused
        let other = "0".repeat(64);
        let r = Bundle::decode(wire(&files, &other), ENV, &want).err().expect("body sha ignored");
        prop_assert_eq!(r.code, "BUNDLE_SHA_MISMATCH");
    }

    /// Whatever the paths, a bundle either decodes with every path inside the release, or is
    /// refused before anything is written — and staging it writes only below the staging dir.
    #[test]
    fn any_path_set_decodes_safely_or_is_refused(
        paths in prop::collection::vec(any_path(), 0..6),
    ) {
        let mut files = minimal_files();
        files.extend(paths.iter().map(|p| (p.clone(), b"x".to_vec())));
        let sha = monky_test_tenancy::bundle_sha(&files);
        match Bundle::decode(wire(&files, &sha), ENV, &sha) {
            Ok(b) => {
                for p in b.files.keys() {
                    prop_assert!(stays_inside(p), "{:?} escapes", p);
                    prop_assert!(bundle::check_path(p).is_ok());
                }
                let uniq: BTreeSet<&String> = files.iter().map(|(p, _)| p).collect();
                prop_assert_eq!(uniq.len(), files.len(), "duplicates accepted");
                let d = tempfile::tempdir().unwrap();
                let stage = d.path().join("staging").join("sha");
                bundle::stage(&stage, &b, "").map_err(|e| TestCaseError::fail(e.to_string()))?;
                let outside: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
                prop_assert_eq!(outside.len(), 1, "written outside staging: {:?}", outside);
                for p in b.files.keys() {
                    prop_assert!(stage.join(p).is_file());
                }
            }
            Err(r) => prop_assert!(
                ["BUNDLE_PATH_UNSAFE", "BUNDLE_INVALID"].contains(&r.code),
                "unexpected refusal {}", r
            ),
        }
    }

    /// `check_path` accepts only relative, `/`-separated paths of plain components.
    #[test]
    fn check_path_accepts_only_plain_relative_paths(p in any_path()) {
        match bundle::check_path(&p) {
            Ok(()) => {
                prop_assert!(stays_inside(&p), "{:?}", p);
                prop_assert!(!p.contains('\0') && !p.contains('\\') && !p.starts_with('/'));
                prop_assert!(p.len() <= bundle::MAX_PATH);
                prop_assert!(p.split('/').all(|c| !c.is_empty() && c != "." && c != ".."));
            }
            Err(msg) => prop_assert!(!msg.contains('\0'), "the message carries a raw NUL: {:?}", msg),
        }
    }
}

// ---- the compose analysis ----------------------------------------------------------------------

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
                prop_assert!(["PRIVILEGED_REFUSED", "BIND_SOURCE_REFUSED", "BUNDLE_INVALID"].contains(&r.code));
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
        prop_assert!(matches!(&r, Err(r) if r.code == "PRIVILEGED_REFUSED" || r.code == "BIND_SOURCE_REFUSED"), "not refused:\n{}\n{:?}", y, r);
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

// ---- .env rendering ------------------------------------------------------------------------------

/// What compose v1 and v2 both read back from one rendered value (the forms render_env uses).
fn dotenv_read(v: &str) -> String {
    if let Some(inner) = v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
        return inner.to_string();
    }
    if let Some(inner) = v.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        let mut o = String::new();
        let mut it = inner.chars();
        while let Some(c) = it.next() {
            if c == '\\' {
                o.push(it.next().expect("dangling escape"));
            } else {
                o.push(c);
            }
        }
        return o;
    }
    v.to_string()
}

fn secret_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9_.-]{0,16}",
        "[ -~]{0,24}",
        "[a-z$#'\"\\\\ {}]{0,12}",
        ".{0,12}",
    ]
}

proptest! {
    #![proptest_config(config())]

    /// No panic on any template and values.
    #[test]
    fn render_env_never_panics(
        template in ".{0,200}",
        values in prop::collection::btree_map("[A-Z_][A-Z0-9_]{0,5}", ".{0,20}", 0..5),
    ) {
        let v: BTreeMap<String, Zeroizing<String>> = values.into_iter().map(|(k, x)| (k, Zeroizing::new(x))).collect();
        let _ = bundle::render_env(&template, &v);
    }

    /// `NAME=${VAR}` lines: either every value reads back exactly as compose will see it, or
    /// the refusal names exactly the variables whose values cannot be carried — and nothing of
    /// any value. A value is never expanded by the agent.
    #[test]
    fn render_env_is_exact_or_refuses_by_name(values in prop::collection::btree_map("V[A-Z0-9_]{0,5}", secret_value(), 1..6)) {
        let template: String = values.keys().map(|k| format!("{k}=${{{k}}}\n")).collect();
        let v: BTreeMap<String, Zeroizing<String>> = values.iter().map(|(k, x)| (k.clone(), Zeroizing::new(x.clone()))).collect();
        let broken: BTreeSet<&String> = values.iter().filter(|(_, x)| x.contains(['\n', '\r', '\0'])).map(|(k, _)| k).collect();
        let inexact: BTreeSet<&String> = values
            .iter()
            .filter(|(_, x)| x.contains("${") || (x.contains('$') && x.contains(['\'', '\\'])))
            .map(|(k, _)| k)
            .collect();
        match bundle::render_env(&template, &v) {
            Ok(out) => {
                prop_assert!(broken.is_empty() && inexact.is_empty());
                let lines: Vec<&str> = out.lines().collect();
                prop_assert_eq!(lines.len(), values.len(), "one line per assignment: {:?}", out.as_str());
                for ((k, x), line) in values.iter().zip(lines) {
                    let (name, enc) = line.split_once('=').unwrap();
                    prop_assert_eq!(name, k.as_str());
                    prop_assert_eq!(&dotenv_read(enc), x, "{} rendered as {:?}", k, enc);
                }
            }
            Err(r) => {
                prop_assert_eq!(r.code, "ENV_VALUE_UNSAFE");
                let names = |s: &BTreeSet<&String>| s.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", ");
                if !broken.is_empty() {
                    prop_assert_eq!(r.detail, format!("secret value contains a line break: {}", names(&broken)));
                } else {
                    prop_assert!(r.detail.ends_with(&format!(": {}", names(&inexact))), "{}", r.detail);
                    prop_assert!(r.detail.starts_with("secret value cannot be written to .env"));
                }
            }
        }
    }

    /// Placeholders without a value are reported by name, all of them, and nothing else.
    #[test]
    fn unresolved_names_are_reported(
        have in prop::collection::btree_set("A[A-Z]{0,3}", 0..4),
        missing in prop::collection::btree_set("M[A-Z]{0,3}", 1..4),
        value in "[a-z0-9]{0,8}",
    ) {
        let template: String = have.iter().chain(missing.iter()).map(|k| format!("{k}=x${{{k}}}y\n")).collect();
        let v: BTreeMap<String, Zeroizing<String>> = have.iter().map(|k| (k.clone(), Zeroizing::new(value.clone()))).collect();
        let r = match bundle::render_env(&template, &v) {
            Ok(_) => return Err(TestCaseError::fail("incomplete template accepted")),
            Err(r) => r,
        };
        prop_assert_eq!(r.code, "ENV_INCOMPLETE");
        let want: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        prop_assert_eq!(r.detail, format!("unresolved: {}", want.join(", ")));
    }
}

// ---- the redactor -------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    /// A registered value never survives redaction: alone, inside random text, repeated, JSON-
    /// escaped or base64-encoded.
    #[test]
    fn registered_values_never_survive(
        value in "[ -~]{4,24}",
        pre in ".{0,16}",
        post in ".{0,16}",
        times in 1usize..3,
    ) {
        redact::register(&value);
        let json = serde_json::to_string(&value).unwrap();
        let json = json.trim_matches('"');
        let b = b64(value.as_bytes());
        for text in [
            value.clone(),
            format!("{pre}{}{post}", value.repeat(times)),
            format!("{pre}{json}{post}"),
            format!("{pre}{b}{post}"),
            format!("{pre}{value}{post}{value}"),
        ] {
            let out = redact::redact(&text);
            prop_assert!(!out.contains(&value), "{:?} survives in {:?}", value, out);
            prop_assert!(!out.contains(&b), "base64 survives in {:?}", out);
        }
    }

    /// Token shapes are masked without being registered.
    #[test]
    fn token_shapes_are_masked(
        body in "[A-Za-z0-9]{24,40}",
        prefix in prop_oneof![Just("s."), Just("hvs."), Just("hvb."), Just("b.")],
        pre in "([a-z]{0,6}[ :=])?",
    ) {
        for text in [
            format!("{pre}{prefix}{body} tail"),
            format!("{pre}Authorization: Bearer {body}"),
            format!("{pre}eyJhbGciOiJFUzI1NiJ9.eyJ{body}.{body}"),
            format!("{pre}https://robot:{body}@harbor.example/v2/"),
            format!("{{\"auths\": {{\"r\": {{\"auth\": \"{body}\"}}}}}}"),
        ] {
            let out = redact::redact(&text);
            prop_assert!(!out.contains(&body), "{:?} → {:?}", text, out);
        }
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

// ---- everything tenancy sends: check-in and lease answers ----------------------------------

/// A JSON value of any shape, with the odd cases tenancy might send: huge and negative
/// numbers, floats, non-ASCII and empty strings, nesting.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        Just(json!(u64::MAX)),
        Just(json!(-1)),
        Just(json!(1e308)),
        ".{0,80}".prop_map(Value::String),
        "[a-f0-9]{63,65}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// `desired_sha` as tenancy might get it wrong: valid, upper case, odd length, multi-byte
/// characters straddling byte 12, a number.
fn any_sha() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    prop_oneof![
        "[a-f0-9]{64}".prop_map(Value::String),
        "[A-F0-9]{64}".prop_map(Value::String),
        "[a-f0-9]{0,70}".prop_map(Value::String),
        "[a-fé€😀]{1,40}".prop_map(Value::String),
        any::<u64>().prop_map(|n| json!(n)),
        Just(Value::Null),
        any_json(),
    ]
}

fn checkin_body() -> impl Strategy<Value = serde_json::Value> {
    (
        prop_oneof![
            Just("apply".to_string()),
            Just("none".to_string()),
            Just("down".to_string()),
            ".{0,20}".prop_map(|s| s),
        ],
        prop::option::of(any_sha()),
        prop::option::of(any_json()),
        prop::option::of(any_json()),
        prop::collection::btree_map("[a-z_]{1,10}", any_json(), 0..3),
    )
        .prop_map(|(action, sha, prod, urgent, extra)| {
            let mut m: serde_json::Map<String, serde_json::Value> = extra.into_iter().collect();
            m.insert("action".into(), serde_json::Value::String(action));
            if let Some(s) = sha {
                m.insert("desired_sha".into(), s);
            }
            if let Some(p) = prod {
                m.insert("prod".into(), p);
            }
            if let Some(u) = urgent {
                m.insert("urgent".into(), u);
            }
            serde_json::Value::Object(m)
        })
}

proptest! {
    #![proptest_config(config())]

    /// Whatever tenancy answers to a check-in: no panic; accepted only with a known action and,
    /// for apply, a well-formed sha; a malformed sha never survives into what the tick uses;
    /// every refusal is a protocol error, which ends the tick with exit 1.
    #[test]
    fn any_checkin_answer_is_accepted_only_when_well_formed(v in checkin_body()) {
        use monky_deployd::tenancy::{is_sha, parse_checkin, TenancyError};
        let body = serde_json::to_vec(&v).unwrap();
        match parse_checkin(&body) {
            Ok(r) => {
                prop_assert!(["apply", "none", "down"].contains(&r.action.as_str()));
                prop_assert!(r.desired_sha.as_deref().is_none_or(is_sha), "{:?}", r.desired_sha);
                if r.action == monky_deployd::tenancy::Action::Apply {
                    prop_assert!(r.desired_sha.is_some());
                }
                // the log line's short form never splits a character
                let s = monky_deployd::agent::short(r.desired_sha.as_deref());
                prop_assert!(s.chars().count() <= 12);
            }
            Err(e) => {
                prop_assert!(matches!(e, TenancyError::Protocol { what: "checkin", .. }), "{e}");
                let f = monky_deployd::agent::Failure::from(e);
                prop_assert_eq!(f.exit() as u8, 1);
                prop_assert!(f.message().contains("checkin"), "{}", f.message());
            }
        }
    }

    /// Raw bytes as a check-in answer: never a panic, never accepted unless it is JSON.
    #[test]
    fn checkin_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let r = monky_deployd::tenancy::parse_checkin(&bytes);
        if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
            prop_assert!(r.is_err());
        }
    }

    /// Any lease answer: accepted only with a non-empty string grant; the AppRole shape is
    /// refused by name; nothing panics.
    #[test]
    fn any_lease_answer_yields_a_grant_or_a_clear_error(v in any_json(), grant in prop::option::of(any_json()), approle in any::<bool>()) {
        use monky_deployd::tenancy::{parse_lease, TenancyError};
        let mut v = v;
        if let (Some(g), Some(m)) = (grant, v.as_object_mut()) {
            m.insert("grant".into(), g);
        }
        if approle {
            if let Some(m) = v.as_object_mut() {
                m.insert("secret_id".into(), serde_json::json!("x"));
            }
        }
        let body = serde_json::to_vec(&v).unwrap();
        match parse_lease(&body) {
            Ok(l) => {
                prop_assert!(!l.grant.is_empty());
                prop_assert_eq!(Some(l.grant.as_str()), v.get("grant").and_then(|g| g.as_str()));
            }
            Err(TenancyError::LegacyLease) => prop_assert!(v.get("secret_id").is_some() || v.get("role_id").is_some() || v.get("wrap_token").is_some()),
            Err(e) => {
                prop_assert!(matches!(e, TenancyError::Protocol { what: "lease", .. }), "{e}");
                prop_assert_eq!(monky_deployd::agent::Failure::from(e).exit() as u8, 1);
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// Any non-2xx answer from tenancy: no panic; the class (and so the exit code) follows the
    /// status as PROTOCOL.md says; code and message are bounded whatever the body holds.
    #[test]
    fn any_error_answer_maps_to_its_exit_code(
        status in 300u16..600,
        code in prop_oneof![Just("AGENT_ENV_MISMATCH".to_string()), ".{0,100}".prop_map(|s| s)],
        message in ".{0,400}",
        json_body in any::<bool>(),
        raw in prop::collection::vec(any::<u8>(), 0..400),
        retry_after in prop::option::of(prop_oneof![".{0,12}".prop_map(|s| s), any::<u64>().prop_map(|n| n.to_string())]),
    ) {
        use monky_deployd::tenancy::{rejection, TenancyError};
        let st = hyper::StatusCode::from_u16(status).unwrap();
        let body = if json_body {
            serde_json::to_vec(&serde_json::json!({"error": {"code": code, "message": message}})).unwrap()
        } else {
            raw
        };
        let e = rejection("checkin", st, retry_after.as_deref(), &body);
        let text = e.to_string();
        prop_assert!(text.chars().count() < 400, "{} chars", text.chars().count());
        let want = match status {
            401 => 1,
            409 if json_body && code == "AGENT_ENV_MISMATCH" => 78,
            429 => 75,
            500..=599 => 75,
            _ => 1,
        };
        match &e {
            TenancyError::Rejected { message, .. } | TenancyError::Unauthenticated { message, .. } => {
                prop_assert!(message.chars().count() <= 200)
            }
            _ => {}
        }
        prop_assert_eq!(monky_deployd::agent::Failure::from(e).exit() as u8, want);
    }
}

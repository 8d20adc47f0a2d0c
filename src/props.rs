//! Property tests of the parsers and checks that stand between tenancy, OpenBao and the box:
//! check-in, lease, error and bundle answers of any shape, OpenBao's login, lookup-self,
//! renew-self and KV answers, bundle decoding and the canonical sha, path safety, the compose
//! privilege analysis, `.env` rendering and the redactor. No panic, no escape, no value surviving.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path};

use crate::base::redact;
use crate::boundary::bundle::{self, Bundle};
use crate::boundary::compose_check;
use crate::wire::tenancy::{BundleFileWire, BundleWire};
use base64::Engine;
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
        statement: None,
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
                ["BUNDLE_PATH_UNSAFE", "BUNDLE_INVALID"].contains(&r.code.as_str()),
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
            Err(e) => prop_assert!(!e.to_string().contains('\0'), "the message carries a raw NUL: {:?}", e),
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
        use crate::wire::tenancy::{is_sha, parse_checkin, TenancyError};
        let body = serde_json::to_vec(&v).unwrap();
        match parse_checkin(&body) {
            Ok(r) => {
                prop_assert!(["apply", "none", "down"].contains(&r.action.as_str()));
                prop_assert!(r.desired_sha.as_deref().is_none_or(is_sha), "{:?}", r.desired_sha);
                if r.action == crate::wire::tenancy::Action::Apply {
                    prop_assert!(r.desired_sha.is_some());
                }
                // the log line's short form never splits a character
                let s = crate::wire::tenancy::short(r.desired_sha.as_deref());
                prop_assert!(s.chars().count() <= 12);
            }
            Err(e) => {
                prop_assert!(matches!(e, TenancyError::Protocol { what: "checkin", .. }), "{e}");
                let f = crate::agent::Failure::from(e);
                prop_assert_eq!(f.exit() as u8, 1);
                prop_assert!(f.message().contains("checkin"), "{}", f.message());
            }
        }
    }

    /// Raw bytes as a check-in answer: never a panic, never accepted unless it is JSON.
    #[test]
    fn checkin_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let r = crate::wire::tenancy::parse_checkin(&bytes);
        if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
            prop_assert!(r.is_err());
        }
    }

    /// Any lease answer: accepted only with a non-empty string grant; the AppRole shape is
    /// refused by name; nothing panics.
    #[test]
    fn any_lease_answer_yields_a_grant_or_a_clear_error(v in any_json(), grant in prop::option::of(any_json()), approle in any::<bool>()) {
        use crate::wire::tenancy::{parse_lease, TenancyError};
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
                prop_assert_eq!(crate::agent::Failure::from(e).exit() as u8, 1);
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
        use crate::wire::tenancy::{rejection, TenancyError};
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
        prop_assert_eq!(crate::agent::Failure::from(e).exit() as u8, want);
    }
}

// ---- everything tenancy sends: the bundle body ---------------------------------------------

/// A number as tenancy or OpenBao might get it wrong: fine, huge, negative, fractional, or not
/// a number at all.
fn any_number() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    prop_oneof![
        24 => (0u64..1_000_000).prop_map(|n| json!(n)),
        6 => any::<u64>().prop_map(|n| json!(n)),
        2 => any::<i64>().prop_map(|n| json!(n)),
        2 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        1 => Just(json!(u64::MAX)),
        1 => Just(json!(i64::MAX)),
        1 => Just(json!((1u64 << 63) - 1)),
        1 => Just(json!(1e300)),
        1 => Just(json!(-1)),
        1 => Just(json!(-0.5)),
        1 => Just(json!(3600.7)),
        1 => "[0-9]{1,25}".prop_map(Value::String),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
        1 => any_json(),
    ]
}

/// Mostly a plain count, sometimes any of [`any_number`]'s odd cases.
fn mostly_u64() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![8 => (0u64..1_000_000).prop_map(|n| serde_json::json!(n)), 1 => any_number()]
}

/// A flag: a boolean, or something that only looks like one.
fn any_flag() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    prop_oneof![
        48 => any::<bool>().prop_map(Value::Bool),
        1 => Just(json!("true")),
        1 => Just(json!(1)),
        1 => Just(Value::Null),
        1 => any_json(),
    ]
}

/// A string field, or another type in its place.
fn any_stringish(s: impl Strategy<Value = String> + 'static) -> BoxedStrategy<serde_json::Value> {
    use serde_json::Value;
    prop_oneof![24 => s.prop_map(Value::String), 1 => Just(Value::Null), 1 => any_json()].boxed()
}

/// An object with some of `fields` (each maybe absent) and unknown extra keys.
fn object_of(
    fields: Vec<(&'static str, BoxedStrategy<serde_json::Value>)>,
    presence: f64,
) -> impl Strategy<Value = serde_json::Value> {
    let n = fields.len();
    let (names, strats): (Vec<_>, Vec<_>) = fields.into_iter().unzip();
    (
        strats
            .into_iter()
            .map(|s| prop::option::weighted(presence, s))
            .collect::<Vec<_>>(),
        prop::collection::btree_map("x_[a-z]{1,6}", any_json(), 0..2),
    )
        .prop_map(move |(vals, extra)| {
            let mut m: serde_json::Map<_, _> = extra.into_iter().collect();
            for (k, v) in names.iter().zip(vals).take(n) {
                if let Some(v) = v {
                    m.insert(k.to_string(), v);
                }
            }
            serde_json::Value::Object(m)
        })
}

/// A JSON document that is not an object: serde would read an array positionally into a
/// struct, so only scalars stand for "the wrong shape".
fn scalar_doc() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,20}".prop_map(Value::String),
    ]
}

/// A file's bytes: a JSON document of the given shape, another shape, or not JSON at all.
fn json_file(doc: impl Strategy<Value = serde_json::Value> + 'static) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        32 => doc.prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => scalar_doc().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => prop::collection::vec(any::<u8>(), 0..40),
    ]
    .boxed()
}

fn meta_doc() -> impl Strategy<Value = serde_json::Value> {
    let agent = prop_oneof![
        24 => object_of(vec![("allow_privileged", any_flag().boxed()), ("allow_rollback", any_flag().boxed())], 0.8),
        1 => scalar_doc(),
    ];
    object_of(
        vec![
            ("serial", mostly_u64().boxed()),
            ("need_bytes", mostly_u64().boxed()),
            ("agent", agent.boxed()),
        ],
        0.8,
    )
}

fn manifest_doc() -> impl Strategy<Value = serde_json::Value> {
    let path = prop_oneof![
        4 => "[a-z_]{1,8}".prop_map(|n| format!("monky/data/{ENV}/see/{n}")),
        1 => "monky/data/[a-z-]{1,10}/see/[a-z]{1,4}",
        1 => ".{0,30}",
    ];
    let entry = prop_oneof![
        48 => object_of(vec![
            ("var", any_stringish("[A-Z_][A-Z0-9_]{0,6}|.{0,6}")),
            ("path", any_stringish(path)),
            ("key", any_stringish("[a-z]{0,6}")),
            ("version", mostly_u64().boxed()),
            ("use", any_stringish(prop_oneof![Just("registry-auth".to_string()), "[a-z-]{0,10}".prop_map(|s| s)])),
        ], 0.95),
        1 => scalar_doc(),
    ];
    let entries = prop_oneof![
        24 => prop::collection::vec(entry, 0..5).prop_map(serde_json::Value::Array),
        1 => scalar_doc(),
    ];
    object_of(vec![("entries", entries.boxed())], 0.8)
}

/// What serde accepts for a field that is a `u64` / `bool` / `String` / `Option<…>`.
fn is_u64(v: Option<&serde_json::Value>) -> bool {
    v.is_none_or(|v| v.is_u64())
}
fn is_bool(v: Option<&serde_json::Value>) -> bool {
    v.is_none_or(|v| v.is_boolean())
}
fn is_opt_str(v: Option<&serde_json::Value>) -> bool {
    v.is_none_or(|v| v.is_null() || v.is_string())
}
fn is_opt_u64(v: Option<&serde_json::Value>) -> bool {
    v.is_none_or(|v| v.is_null() || v.is_u64())
}

/// Independently of serde's derive: is this `bundle.json` a well-typed `Meta`?
fn meta_well_typed(bytes: &[u8]) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let o = v.as_object()?;
    let agent_ok = o.get("agent").is_none_or(|a| {
        a.as_object()
            .is_some_and(|a| is_bool(a.get("allow_privileged")) && is_bool(a.get("allow_rollback")))
    });
    (is_u64(o.get("serial")) && is_u64(o.get("need_bytes")) && agent_ok).then_some(v)
}

/// … and this `secrets.manifest.json` a well-typed `Manifest`?
fn manifest_well_typed(bytes: &[u8]) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let o = v.as_object()?;
    let entries_ok = o.get("entries").is_none_or(|e| {
        e.as_array().is_some_and(|es| {
            es.iter().all(|e| {
                e.as_object().is_some_and(|e| {
                    is_opt_str(e.get("var"))
                        && e.get("path").is_some_and(|p| p.is_string())
                        && e.get("key").is_none_or(|k| k.is_string())
                        && is_opt_u64(e.get("version"))
                        && is_opt_str(e.get("use"))
                })
            })
        })
    });
    entries_ok.then_some(v)
}

/// One entry of the body's `files`: well formed, or with a field of the wrong type or missing,
/// or content that is not base64.
#[derive(Debug, Clone)]
enum FileEntry {
    Good(String, Vec<u8>),
    BadBase64(String),
    Wrong(serde_json::Value),
}

fn bad_file_entry() -> impl Strategy<Value = FileEntry> {
    use serde_json::json;
    prop_oneof![
        safe_path().prop_map(FileEntry::BadBase64),
        any_json().prop_map(|p| FileEntry::Wrong(json!({"path": p, "content_b64": "eA=="}))),
        any_json().prop_map(|c| FileEntry::Wrong(json!({"path": "d/x", "content_b64": c}))),
        Just(FileEntry::Wrong(json!({"path": "d/x"}))),
        scalar_doc().prop_map(FileEntry::Wrong),
    ]
}

#[derive(Debug, Clone)]
struct BodyCase {
    body: serde_json::Value,
    /// The sha the URL asked for (always well formed: `parse_checkin` guarantees it).
    want: String,
}

fn bundle_body() -> impl Strategy<Value = BodyCase> {
    use serde_json::{json, Value};
    let files = (
        prop::option::weighted(0.9, Just(())),
        prop::option::weighted(0.8, json_file(meta_doc())),
        prop::option::weighted(0.8, json_file(manifest_doc())),
        prop::option::of("(A=\\$\\{[A-Z_]{1,4}\\}\n|B=x\n|#c\n){0,3}"),
        prop::collection::vec(prop_oneof![4 => safe_path(), 1 => any_path()], 0..3),
        prop::option::weighted(0.08, bad_file_entry()),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(compose, meta, man, tmpl, others, bad, at)| {
            let mut f: Vec<FileEntry> = Vec::new();
            if compose.is_some() {
                f.push(FileEntry::Good(
                    "compose.yaml".into(),
                    b"services:\n  web:\n    image: example/web:1\n".to_vec(),
                ));
            }
            if let Some(m) = meta {
                f.push(FileEntry::Good("bundle.json".into(), m));
            }
            if let Some(m) = man {
                f.push(FileEntry::Good("secrets.manifest.json".into(), m));
            }
            if let Some(t) = tmpl {
                f.push(FileEntry::Good("env.template".into(), t.into_bytes()));
            }
            f.extend(
                others
                    .into_iter()
                    .map(|p| FileEntry::Good(p, b"x".to_vec())),
            );
            if let Some(b) = bad {
                let i = at.index(f.len() + 1);
                f.insert(i, b);
            }
            f
        });
    let signatures = prop_oneof![
        4 => Just(None),
        8 => prop::collection::vec(
            prop_oneof![
                48 => object_of(vec![
                    ("key_id", any_stringish(prop_oneof![Just("release-test".to_string()), ".{0,70}".prop_map(|s| s)])),
                    ("alg", any_stringish(prop_oneof![Just("ed25519".to_string()), "[a-z0-9]{0,8}".prop_map(|s| s)])),
                    ("sig", any_stringish(prop_oneof![
                        prop::collection::vec(any::<u8>(), 64).prop_map(|b| b64(&b)),
                        ".{0,90}".prop_map(|s| s),
                    ])),
                ], 0.8),
                1 => scalar_doc(),
            ],
            0..3,
        ).prop_map(|v| Some(Value::Array(v))),
        1 => scalar_doc().prop_map(Some),
    ];
    (
        files,
        prop_oneof![24 => Just(Value::String(ENV.into())), 1 => any_stringish("[a-z0-9-]{0,12}"), 1 => Just(Value::Null)],
        prop_oneof![
            24 => Just("right"),
            2 => Just("upper"),
            1 => Just("missing"),
            3 => Just("other"),
        ],
        any_sha(),
        signatures,
        prop::option::weighted(0.1, "[a-f0-9]{64}"),
        prop::collection::btree_map("[a-z_]{1,10}", any_json(), 0..3),
        prop::option::weighted(0.03, scalar_doc()),
    )
        .prop_map(|(files, env, sha_kind, odd_sha, sigs, other_want, extra, whole)| {
            let good: Vec<(String, Vec<u8>)> = files
                .iter()
                .filter_map(|f| match f {
                    FileEntry::Good(p, c) => Some((p.clone(), c.clone())),
                    _ => None,
                })
                .collect();
            let real = monky_test_tenancy::bundle_sha(&good);
            let want = other_want.unwrap_or_else(|| real.clone());
            if let Some(w) = whole {
                return BodyCase { body: w, want };
            }
            let mut m: serde_json::Map<String, Value> = extra.into_iter().collect();
            m.insert("env_id".into(), env);
            match sha_kind {
                "right" => {
                    m.insert("sha".into(), json!(real));
                }
                "upper" => {
                    m.insert("sha".into(), json!(real.to_ascii_uppercase()));
                }
                "missing" => {
                    m.remove("sha");
                }
                _ => {
                    m.insert("sha".into(), odd_sha);
                }
            }
            let files: Vec<Value> = files
                .into_iter()
                .map(|f| match f {
                    FileEntry::Good(p, c) => json!({"path": p, "content_b64": b64(&c)}),
                    FileEntry::BadBase64(p) => json!({"path": p, "content_b64": "eA=!"}),
                    FileEntry::Wrong(v) => v,
                })
                .collect();
            m.insert("files".into(), Value::Array(files));
            match sigs {
                Some(s) => {
                    m.insert("signatures".into(), s);
                }
                None => {
                    m.remove("signatures");
                }
            }
            BodyCase { body: Value::Object(m), want }
        })
}

/// Independently of serde's derive: does this body deserialise as a `BundleWire`?
fn wire_well_typed(v: &serde_json::Value) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    let str_field = |x: Option<&serde_json::Value>| x.is_some_and(|s| s.is_string());
    let files_ok = o.get("files").and_then(|f| f.as_array()).is_some_and(|fs| {
        fs.iter().all(|f| {
            f.as_object()
                .is_some_and(|f| str_field(f.get("path")) && str_field(f.get("content_b64")))
        })
    });
    let sigs_ok = o.get("signatures").is_none_or(|s| {
        s.as_array().is_some_and(|ss| {
            ss.iter().all(|s| {
                s.as_object().is_some_and(|s| {
                    ["key_id", "alg", "sig"]
                        .iter()
                        .all(|k| s.get(*k).is_none_or(|x| x.is_string()))
                })
            })
        })
    });
    str_field(o.get("env_id")) && str_field(o.get("sha")) && files_ok && sigs_ok
}

/// The refusal `Bundle::decode` must give for a well-typed body, worked out step by step from
/// PROTOCOL.md's order of checks (env, paths, content, sha, compose.yaml, the two JSON files).
fn expected_refusal(w: &BundleWire, want: &str) -> Option<(&'static str, &'static str)> {
    if w.env_id != ENV {
        return Some(("BUNDLE_ENV_MISMATCH", ""));
    }
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for f in &w.files {
        if bundle::check_path(&f.path).is_err() {
            return Some(("BUNDLE_PATH_UNSAFE", ""));
        }
        let Ok(c) = base64::engine::general_purpose::STANDARD.decode(&f.content_b64) else {
            return Some(("BUNDLE_INVALID", ""));
        };
        if files.iter().any(|(p, _)| *p == f.path) {
            return Some(("BUNDLE_PATH_UNSAFE", ""));
        }
        files.push((f.path.clone(), c));
    }
    if files
        .iter()
        .any(|(a, _)| files.iter().any(|(b, _)| b.starts_with(&format!("{a}/"))))
    {
        return Some(("BUNDLE_PATH_UNSAFE", ""));
    }
    if monky_test_tenancy::bundle_sha(&files) != want || w.sha.to_ascii_lowercase() != want {
        return Some(("BUNDLE_SHA_MISMATCH", ""));
    }
    let get = |p: &str| {
        files
            .iter()
            .find(|(q, _)| q == p)
            .map(|(_, c)| c.as_slice())
    };
    if get("compose.yaml").is_none() {
        return Some(("BUNDLE_INVALID", "no compose.yaml"));
    }
    if get("bundle.json").is_some_and(|b| meta_well_typed(b).is_none()) {
        return Some(("BUNDLE_INVALID", "bundle.json: "));
    }
    if get("secrets.manifest.json").is_some_and(|b| manifest_well_typed(b).is_none()) {
        return Some(("BUNDLE_INVALID", "secrets.manifest.json: "));
    }
    None
}

fn signing_key() -> (ed25519_dalek::SigningKey, crate::boundary::signing::Keys) {
    let k = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let cfg = BTreeMap::from([(
        "release-test".to_string(),
        b64(k.verifying_key().as_bytes()),
    )]);
    (k, crate::boundary::signing::Keys::parse(&cfg).unwrap())
}

proptest! {
    #![proptest_config(config())]

    /// Any bundle body through what the apply does with it (`Tenancy::bundle`'s
    /// `serde_json::from_slice::<BundleWire>`, then `Bundle::decode`, the manifest and template
    /// checks, the signature check): a body with a field of the wrong type is a protocol error
    /// (exit 1) exactly when an independent reading says so; a well-typed one is refused with the
    /// code PROTOCOL.md's order of checks predicts, or decoded with its metadata and manifest
    /// exactly as sent — never half filled; nothing panics.
    #[test]
    fn any_bundle_body_is_decoded_whole_or_refused_with_its_code(case in bundle_body()) {
        use crate::wire::tenancy::TenancyError;
        let body = serde_json::to_vec(&case.body).unwrap();
        let w: BundleWire = match serde_json::from_slice(&body) {
            Ok(w) => {
                prop_assert!(wire_well_typed(&case.body), "ill-typed body accepted: {}", case.body);
                w
            }
            Err(e) => {
                prop_assert!(!wire_well_typed(&case.body), "well-typed body refused ({e}): {}", case.body);
                let f = crate::agent::Failure::from(TenancyError::Protocol { what: "bundle", detail: e.to_string() });
                prop_assert_eq!(f.exit() as u8, 1);
                prop_assert!(f.message().contains("bundle"), "{}", f.message());
                return Ok(());
            }
        };
        let mut w = w;
        let sigs = std::mem::take(&mut w.signatures);
        let expected = expected_refusal(&w, &case.want);
        let sent_files = w.files.len();
        match Bundle::decode(w, ENV, &case.want) {
            Err(r) => {
                let (code, prefix) = expected.ok_or_else(|| TestCaseError::fail(format!("refused {r}, expected success")))?;
                prop_assert_eq!(r.code, code, "{}", r);
                prop_assert!(r.detail.starts_with(prefix), "{}", r);
                prop_assert!(!r.detail.is_empty());
            }
            Ok(b) => {
                prop_assert!(expected.is_none(), "decoded, expected {:?}", expected);
                prop_assert_eq!(&b.sha, &case.want);
                prop_assert_eq!(b.files.len(), sent_files);
                prop_assert!(!b.compose().is_empty());
                // the metadata is what bundle.json said, field by field (or all defaults)
                let meta = b.files.get("bundle.json").map(|m| meta_well_typed(m).unwrap()).unwrap_or_default();
                let u = |k: &str| meta.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
                let flag = |k: &str| meta.pointer(&format!("/agent/{k}")).and_then(|x| x.as_bool()).unwrap_or(false);
                prop_assert_eq!(b.meta.serial, u("serial"));
                prop_assert_eq!(b.meta.need_bytes, u("need_bytes"));
                prop_assert_eq!(b.meta.agent.allow_privileged, flag("allow_privileged"));
                prop_assert_eq!(b.meta.agent.allow_rollback, flag("allow_rollback"));
                // and the manifest entry by entry
                let man = b.files.get("secrets.manifest.json").map(|m| manifest_well_typed(m).unwrap()).unwrap_or_default();
                let sent: Vec<serde_json::Value> = man.get("entries").and_then(|e| e.as_array()).cloned().unwrap_or_default();
                prop_assert_eq!(b.manifest.entries.len(), sent.len());
                for (e, s) in b.manifest.entries.iter().zip(&sent) {
                    prop_assert_eq!(Some(e.path.as_str()), s["path"].as_str());
                    prop_assert_eq!(e.key.as_str(), s.get("key").and_then(|k| k.as_str()).unwrap_or("value"));
                    prop_assert_eq!(e.var.as_deref(), s.get("var").and_then(|k| k.as_str()));
                    prop_assert_eq!(e.version, s.get("version").and_then(|k| k.as_u64()));
                    prop_assert_eq!(e.use_.as_deref(), s.get("use").and_then(|k| k.as_str()));
                }
                // the checks after decoding: a pass means every entry is usable, else a named code
                let prefix = format!("monky/data/{ENV}/see/");
                match b.check_manifest("monky", ENV) {
                    Ok(()) => {
                        let mut vars = BTreeSet::new();
                        for e in &b.manifest.entries {
                            prop_assert!(e.path.starts_with(&prefix) && e.path.len() > prefix.len(), "{}", e.path);
                            if !e.is_registry_auth() {
                                let v = e.var.as_deref().unwrap_or_default();
                                prop_assert!(bundle::valid_var(v) && vars.insert(v.to_string()), "{:?}", v);
                            }
                        }
                    }
                    Err(r) => prop_assert!(["MANIFEST_PATH_FOREIGN", "BUNDLE_INVALID"].contains(&r.code.as_str()), "{}", r),
                }
                if let Err(r) = b.check_env_template() {
                    prop_assert!(["ENV_INCOMPLETE", "ENV_VALUE_UNSAFE"].contains(&r.code.as_str()), "{}", r);
                }
                // signatures of any shape: no configured key → not judged; a configured key →
                // refused by name (never carrying signature bytes) unless one really verifies
                prop_assert!(crate::boundary::signing::Keys::default().verify(&b.sha, &sigs).unwrap().is_none());
                let (sk, keys) = signing_key();
                let r = keys.verify(&b.sha, &sigs).expect_err("an arbitrary signature verified");
                prop_assert_eq!(r.code, "BUNDLE_SIGNATURE_INVALID");
                for s in sigs.iter().filter(|s| s.sig.len() >= 8) {
                    prop_assert!(!r.detail.contains(&s.sig), "{}", r.detail);
                }
                let mut good = sigs.clone();
                good.push(crate::wire::tenancy::SignatureWire {
                    key_id: "release-test".into(),
                    alg: "ed25519".into(),
                    sig: b64(&ed25519_dalek::Signer::sign(&sk, b.sha.as_bytes()).to_bytes()),
                });
                let by = keys.verify(&b.sha, &good).unwrap();
                prop_assert_eq!(by.as_deref(), Some("release-test"));
            }
        }
    }

    /// Raw bytes as a bundle body: never a panic, and never a `BundleWire` unless they are JSON.
    #[test]
    fn bundle_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let w = serde_json::from_slice::<BundleWire>(&bytes);
        if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
            prop_assert!(w.is_err());
        }
        if let Ok(w) = w {
            let _ = Bundle::decode(w, ENV, &"0".repeat(64));
        }
    }
}

// ---- everything OpenBao sends: login, lookup-self, renew-self, KV reads ---------------------

/// What `bao::duration` must make of a JSON duration, worked out in floating point: absent or
/// null → 0; a negative number or a non-number → an error; otherwise the whole seconds, capped.
fn expected_duration(v: Option<&serde_json::Value>) -> Option<u64> {
    use crate::wire::bao::MAX_DURATION_S;
    match v {
        None | Some(serde_json::Value::Null) => Some(0),
        Some(serde_json::Value::Number(n)) => {
            if let Some(u) = n.as_u64() {
                return Some(u.min(MAX_DURATION_S));
            }
            let f = n.as_f64()?;
            if f < 0.0 {
                None
            } else if f >= MAX_DURATION_S as f64 {
                Some(MAX_DURATION_S)
            } else {
                Some(f.floor() as u64)
            }
        }
        Some(_) => None,
    }
}

/// An OpenBao body: the given shape as JSON, another JSON value, raw bytes, or nothing.
fn bao_body(doc: impl Strategy<Value = serde_json::Value> + 'static) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        12 => doc.prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => any_json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => prop::collection::vec(any::<u8>(), 0..60),
        1 => Just(Vec::new()),
        2 => prop::collection::vec(".{0,300}", 0..4)
            .prop_map(|e| serde_json::to_vec(&serde_json::json!({"errors": e})).unwrap()),
    ]
    .boxed()
}

fn login_doc() -> impl Strategy<Value = serde_json::Value> {
    let auth = prop_oneof![
        12 => object_of(vec![
            ("client_token", any_stringish("s\\.[A-Za-z0-9]{24}|.{0,4}")),
            ("lease_duration", any_number().boxed()),
            ("renewable", any_flag().boxed()),
            ("metadata", object_of(vec![
                ("env_id", any_stringish("[a-z0-9-]{1,12}")),
                ("grant_jti", any_stringish("[a-f0-9]{8}")),
            ], 0.9).boxed()),
        ], 0.9),
        1 => scalar_doc(),
    ];
    object_of(vec![("auth", auth.boxed())], 0.9)
}

fn lookup_doc() -> impl Strategy<Value = serde_json::Value> {
    let data = prop_oneof![
        12 => object_of(vec![("ttl", any_number().boxed()), ("renewable", any_flag().boxed())], 0.9),
        1 => scalar_doc(),
    ];
    object_of(vec![("data", data.boxed())], 0.9)
}

fn renew_doc() -> impl Strategy<Value = serde_json::Value> {
    let auth = prop_oneof![
        12 => object_of(vec![("lease_duration", any_number().boxed())], 0.9),
        1 => scalar_doc(),
    ];
    object_of(vec![("auth", auth.boxed())], 0.9)
}

fn kv_doc() -> impl Strategy<Value = serde_json::Value> {
    let value = prop_oneof![
        8 => "[ -~]{0,30}".prop_map(serde_json::Value::String),
        2 => any_json(),
    ];
    let inner = object_of(
        vec![("value", value.boxed()), ("other", any_json().boxed())],
        0.8,
    );
    let data = object_of(
        vec![("data", inner.boxed()), ("metadata", any_json().boxed())],
        0.9,
    );
    object_of(vec![("data", data.boxed())], 0.9)
}

fn status() -> impl Strategy<Value = hyper::StatusCode> {
    prop_oneof![
        12 => Just(200u16),
        1 => Just(204u16),
        2 => 100u16..600,
        1 => prop::sample::select(vec![400u16, 403, 404, 429, 500, 503]),
    ]
    .prop_map(|s| hyper::StatusCode::from_u16(s).unwrap())
}

/// The error class a status means (403 denied, 404 not found, 5xx unavailable, other non-2xx
/// refused with its status; a 2xx that does not parse is a protocol error), each naming the
/// call, OpenBao's message cut to 200 characters.
fn check_status_class(
    e: &crate::wire::bao::BaoError,
    what: &str,
    st: hyper::StatusCode,
) -> Result<(), TestCaseError> {
    use crate::wire::bao::BaoError;
    let text = e.to_string();
    prop_assert!(text.contains(what), "{text}");
    match (st.as_u16(), e) {
        (200..=299, BaoError::Protocol { .. }) => {}
        (403, BaoError::Denied { msg, .. }) | (_, BaoError::Refused { msg, .. }) => {
            prop_assert!(
                st != hyper::StatusCode::NOT_FOUND && !st.is_success() && !st.is_server_error()
            );
            prop_assert!(msg.chars().count() <= 200, "{} chars", msg.chars().count());
            if let BaoError::Refused { status, .. } = e {
                prop_assert_eq!(*status, st.as_u16());
                prop_assert!(st != hyper::StatusCode::FORBIDDEN);
            }
        }
        (404, BaoError::NotFound { .. }) => {}
        (500..=599, BaoError::Unavailable(m, _)) => {
            // "<what>: <status> <message cut to 200>"
            let most = what.chars().count() + st.to_string().chars().count() + 3 + 200;
            prop_assert!(m.chars().count() <= most, "{} chars", m.chars().count());
        }
        (s, e) => prop_assert!(false, "status {s} gave {e:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Any duration OpenBao could send: the documented reading (absent = 0, whole seconds,
    /// capped at 100 years, negative or non-numeric refused naming the field and not the value),
    /// and `now + ttl` in the signed seconds the metrics use never overflows.
    #[test]
    fn durations_saturate_and_never_overflow(v in prop::option::of(any_number())) {
        use crate::wire::bao::{duration, BaoError, MAX_DURATION_S};
        let got = duration("lookup-self", "data.ttl", v.as_ref());
        match (got, expected_duration(v.as_ref())) {
            (Ok(d), Some(want)) => {
                prop_assert_eq!(d, want);
                prop_assert!(d <= MAX_DURATION_S);
                let now = crate::base::clock::now();
                let until = now.checked_add(d).expect("now + ttl overflows u64");
                prop_assert!(i64::try_from(until).is_ok(), "now + ttl overflows i64");
            }
            (Err(BaoError::Protocol { what, msg }), None) => {
                prop_assert_eq!(what, "lookup-self");
                prop_assert!(msg.starts_with("data.ttl "), "{}", msg);
                if let Some(serde_json::Value::String(s)) = &v {
                    prop_assert!(s.len() < 3 || !msg.contains(s.as_str()), "{}", msg);
                }
            }
            (got, want) => prop_assert!(false, "{:?} for {:?}, expected {:?}", got, v, want),
        }
    }

    /// Any login answer: a token exactly when `auth.client_token` is a non-empty string, with
    /// the lease duration read as `durations_saturate_and_never_overflow` says and the
    /// metadata as sent; otherwise an error naming what was missing or wrong; the error class
    /// follows the status; the token never appears in an error.
    #[test]
    fn any_login_answer_yields_a_token_or_a_clear_error(st in status(), body in bao_body(login_doc())) {
        use crate::wire::bao::{parse_login, BaoError};
        let v: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
        let auth = v.as_ref().and_then(|v| v.get("auth")).filter(|a| a.is_object());
        let token = auth.and_then(|a| a.get("client_token")).and_then(|t| t.as_str()).filter(|t| !t.is_empty());
        match parse_login(st, &body) {
            Ok(l) => {
                prop_assert!(st.is_success());
                prop_assert_eq!(Some(l.token.as_str()), token);
                let want = expected_duration(auth.and_then(|a| a.get("lease_duration")));
                prop_assert_eq!(Some(l.lease_duration), want);
                prop_assert_eq!(l.renewable, auth.and_then(|a| a.get("renewable")) == Some(&serde_json::Value::Bool(true)));
                let meta = |k: &str| auth.and_then(|a| a.pointer(&format!("/metadata/{k}"))).and_then(|x| x.as_str()).unwrap_or_default().to_string();
                prop_assert_eq!(l.env_id, meta("env_id"));
                prop_assert_eq!(l.grant_jti, meta("grant_jti"));
            }
            Err(e) => {
                check_status_class(&e, "login", st)?;
                if let (true, BaoError::Protocol { msg, .. }) = (st.is_success() && v.is_some(), &e) {
                    let why = if auth.is_none() {
                        "no auth block"
                    } else if token.is_none() {
                        "no client_token"
                    } else {
                        "auth.lease_duration "
                    };
                    prop_assert!(msg.starts_with(why), "{} (expected {:?})", msg, why);
                }
                if let Some(t) = token.filter(|t| t.len() >= 8) {
                    prop_assert!(!e.to_string().contains(t), "{e}");
                }
            }
        }
    }

    /// Any lookup-self or renew-self answer: the ttl / lease duration as documented, or an
    /// error naming the block or the field; the class follows the status.
    #[test]
    fn any_lookup_or_renew_answer_yields_a_ttl_or_a_clear_error(
        st in status(),
        lookup in bao_body(lookup_doc()),
        renew in bao_body(renew_doc()),
    ) {
        use crate::wire::bao::{parse_lookup_self, parse_renew_self, BaoError};
        let v: Option<serde_json::Value> = serde_json::from_slice(&lookup).ok();
        let data = v.as_ref().and_then(|v| v.get("data")).filter(|d| d.is_object());
        match parse_lookup_self(st, &lookup) {
            Ok(info) => {
                prop_assert!(st.is_success() && data.is_some());
                prop_assert_eq!(Some(info.ttl), expected_duration(data.and_then(|d| d.get("ttl"))));
            }
            Err(e) => {
                check_status_class(&e, "lookup-self", st)?;
                if let (true, BaoError::Protocol { msg, .. }) = (st.is_success() && v.is_some(), &e) {
                    let why = if data.is_none() { "no data block" } else { "data.ttl " };
                    prop_assert!(msg.starts_with(why), "{}", msg);
                }
            }
        }
        let v: Option<serde_json::Value> = serde_json::from_slice(&renew).ok();
        let ld = v.as_ref().and_then(|v| v.get("auth")).and_then(|a| a.get("lease_duration"));
        match parse_renew_self(st, &renew) {
            Ok(d) => {
                prop_assert!(st.is_success());
                prop_assert_eq!(Some(d), expected_duration(ld));
            }
            Err(e) => {
                check_status_class(&e, "renew-self", st)?;
                if let (true, BaoError::Protocol { msg, .. }) = (st.is_success() && v.is_some(), &e) {
                    prop_assert!(msg.starts_with("auth.lease_duration "), "{}", msg);
                }
            }
        }
    }

    /// Any KV read answer: the string at `data.data.<key>` exactly (another JSON value as its
    /// JSON text), a not-found naming the key and the path, or the status's error class; a
    /// value never appears in an error.
    #[test]
    fn any_kv_answer_yields_the_value_or_names_the_key(st in status(), body in bao_body(kv_doc())) {
        use crate::wire::bao::{parse_kv_read, BaoError};
        let path = format!("monky/data/{ENV}/see/api");
        let v: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
        let val = v.as_ref().and_then(|v| v.pointer("/data/data/value")).filter(|x| !x.is_null());
        match parse_kv_read(st, &body, &path, "value") {
            Ok(s) => {
                prop_assert!(st.is_success());
                let want = match val {
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => return Err(TestCaseError::fail("a value out of nothing")),
                };
                prop_assert_eq!(s.as_str(), want.as_str());
            }
            Err(BaoError::NotFound { what }) if st.is_success() => {
                prop_assert!(val.is_none());
                prop_assert!(what.contains("\"value\"") && what.contains(&path), "{}", what);
            }
            Err(e) => {
                check_status_class(&e, &format!("read {path}"), st)?;
                if let Some(serde_json::Value::String(s)) = val.filter(|s| s.as_str().is_some_and(|s| s.len() >= 8)) {
                    prop_assert!(!e.to_string().contains(s.as_str()), "{e}");
                }
            }
        }
    }
}

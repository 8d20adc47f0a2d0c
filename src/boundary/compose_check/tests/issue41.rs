//! Issue 41: the first pass reads compose the way compose reads it (interpolation with
//! `env.template`'s plain values, one volume parser), benign patterns ship while the box keeps
//! its names and files, and every refusal is listed with where it was found.

use super::*;
use crate::bundle::dotenv_variables;

const PROJECT: &str = "monky-a";
const REL: &str = "/var/lib/monky-deployd/staging/abc";

/// The first pass's box: the release nowhere yet, the bundle's files known.
fn first_box() -> BoxFacts {
    BoxFacts {
        release_dir: Some(FIRST_PASS_ROOT.into()),
        project: PROJECT.into(),
        bundle_files: vec![
            "compose.yaml".into(),
            "prometheus/prometheus.yml".into(),
            "config.yml".into(),
            "secret.txt".into(),
            "app.env".into(),
        ],
        foreign_projects: vec!["shop".into()],
        ..Default::default()
    }
}

/// The second pass's box: the release where compose ran `config`.
fn second_box() -> BoxFacts {
    BoxFacts {
        release_dir: Some(REL.into()),
        agent_files: vec!["/var/lib/monky-deployd".into()],
        ..first_box()
    }
}

fn first(y: &str, template: &str) -> Judged {
    judge_bundle(
        &parse(y.as_bytes()).unwrap(),
        false,
        &first_box(),
        &dotenv_variables(template),
    )
}

fn second(y: &str) -> Judged {
    judge_normalised(&parse(y.as_bytes()).unwrap(), false, &second_box())
}

fn codes(j: &Judged) -> Vec<&'static str> {
    j.refusals.iter().map(|r| r.code.as_str()).collect()
}

fn svc(body: &str) -> String {
    format!("services:\n  web:\n    image: x\n{body}")
}

#[test]
fn a_bind_source_is_judged_after_interpolation_with_the_templates_plain_values() {
    let y = svc("    volumes: [\"${UPLOAD_LOCATION}:/data\"]\n");
    // a plain value of env.template: known before the lease, judged as compose will see it
    assert_eq!(
        codes(&first(&y, "UPLOAD_LOCATION=./library\n")),
        Vec::<&str>::new()
    );
    let r = first(&y, "UPLOAD_LOCATION=/etc\n");
    assert_eq!(codes(&r), ["BIND_SOURCE_REFUSED"], "{:?}", r.refusals);
    assert_eq!(r.refusals[0].service(), Some("web"));
    assert_eq!(r.refusals[0].key(), Some("volumes"));
    // quoted the ways .env allows, the same value
    for t in [
        "UPLOAD_LOCATION='/etc'\n",
        "export UPLOAD_LOCATION = \"/etc\" # x\n",
    ] {
        assert_eq!(codes(&first(&y, t)), ["BIND_SOURCE_REFUSED"], "{t}");
    }
    // a secret (a placeholder line) or a value compose would expand is not known here: the
    // first pass leaves the bind to the second, which judges compose's real output
    for t in [
        "UPLOAD_LOCATION=${UPLOAD_SECRET}\n",
        "UPLOAD_LOCATION=$HOME/x\n",
        "",
    ] {
        assert!(
            first(&y, t).refusals.is_empty(),
            "{t}: {:?}",
            first(&y, t).refusals
        );
    }
    let normalised = "services:\n  web:\n    image: x\n    volumes:\n      - type: bind\n        source: /etc\n        target: /data\n";
    assert_eq!(codes(&second(normalised)), ["BIND_SOURCE_REFUSED"]);
    let ok = format!("services:\n  web:\n    image: x\n    volumes:\n      - type: bind\n        source: {REL}/library\n        target: /data\n");
    assert!(
        second(&ok).refusals.is_empty(),
        "{:?}",
        second(&ok).refusals
    );
}

#[test]
fn a_default_is_interpolated_before_the_entry_is_split() {
    // `${DIR:-./data}:/data` is `./data:/data`, never split at the `:` inside the braces
    for (y, t) in [
        (svc("    volumes: [\"${DIR:-./data}:/data\"]\n"), ""),
        (svc("    volumes: [\"${DIR:-./data}:/data\"]\n"), "DIR=\n"),
        (svc("    volumes: [\"${A:-${B:-./x}}:/x:ro\"]\n"), ""),
        (svc("    volumes: [\"${DIR-/etc}:/data\"]\n"), "DIR=./d\n"),
    ] {
        assert!(
            first(&y, t).refusals.is_empty(),
            "{y} {t}: {:?}",
            first(&y, t).refusals
        );
    }
    assert_eq!(
        codes(&first(&svc("    volumes: [\"${DIR:-/etc}:/data\"]\n"), "")),
        ["BIND_SOURCE_REFUSED"]
    );
    assert_eq!(
        codes(&first(
            &svc("    volumes: [\"${DIR:-./data}:/data\"]\n"),
            "DIR=/root\n"
        )),
        ["BIND_SOURCE_REFUSED"]
    );
}

#[test]
fn a_bare_path_is_an_anonymous_volume_in_every_pass() {
    // `- /var/www/html/modules` is what compose makes of it: an anonymous volume, no host bind
    let y = svc("    volumes: [\"/var/www/html/modules\", /var/www/html/themes]\n");
    assert!(
        first(&y, "").refusals.is_empty(),
        "{:?}",
        first(&y, "").refusals
    );
    assert!(check(&parse(y.as_bytes()).unwrap(), false).is_ok());
    let normalised = "services:\n  web:\n    image: x\n    volumes:\n      - type: volume\n        target: /var/www/html/modules\n";
    assert!(second(normalised).refusals.is_empty());
}

#[test]
fn short_and_long_syntax_get_the_same_verdicts() {
    for (short, long) in [
        (
            "./data:/data",
            "{type: bind, source: ./data, target: /data}",
        ),
        (
            "/etc:/e:ro",
            "{type: bind, source: /etc, target: /e, read_only: true}",
        ),
        ("/srv/x:/x", "{type: bind, source: /srv/x, target: /x}"),
        ("../up:/u", "{type: bind, source: ../up, target: /u}"),
        ("data:/d", "{type: volume, source: data, target: /d}"),
        (
            "./prometheus:/etc/prometheus",
            "{type: bind, source: ./prometheus, target: /etc/prometheus}",
        ),
    ] {
        let a = first(&svc(&format!("    volumes: [\"{short}\"]\n")), "");
        let b = first(&svc(&format!("    volumes: [{long}]\n")), "");
        assert_eq!(codes(&a), codes(&b), "{short} / {long}");
    }
}

#[test]
fn an_interpolated_container_name_is_judged_on_what_it_renders_to() {
    let y = svc("    container_name: ${NAME}\n");
    assert!(first(&y, "NAME=monky-a-web\n").refusals.is_empty());
    assert!(
        first(&svc("    container_name: ${NAME:-monky-a-web}\n"), "")
            .refusals
            .is_empty()
    );
    let r = first(&y, "NAME=monky-b-web\n");
    assert_eq!(codes(&r), ["NAME_REFUSED"]);
    assert_eq!(r.refusals[0].key(), Some("container_name"));
    // a secret name: the second pass judges compose's value
    assert!(first(&y, "NAME=${N}\n").refusals.is_empty());
    assert_eq!(
        codes(&second(&svc("    container_name: monky-b-web\n"))),
        ["NAME_REFUSED"]
    );
}

#[test]
fn a_free_standing_container_name_ships_and_no_project_s_name_does() {
    // a name in no project's namespace the box knows: the box owns it (the guard keeps it from
    // a name another container holds)
    for n in ["nextcloud", "immich_server", "gitea.db", "monkyish"] {
        let y = svc(&format!("    container_name: {n}\n"));
        assert!(
            first(&y, "").refusals.is_empty(),
            "{n}: {:?}",
            first(&y, "").refusals
        );
        assert!(second(&y).refusals.is_empty(), "{n}");
    }
    for (n, why) in [
        // compose's name for another service of this project, or a longer project's
        ("monky-a-db-1", "(outside project monky-a)"),
        ("monky-a-eu-web", "(outside project monky-a)"),
        // the box's own namespace: every project tenancy renders
        ("monky-b-web-1", "(outside project monky-a)"),
        ("monky", "(outside project monky-a)"),
        // another instance's project on this box
        ("shop-web-1", "(outside project monky-a: project shop of another instance on this box owns that prefix)"),
        ("-x", "(outside project monky-a: not a container name the engine takes)"),
    ] {
        let r = first(&svc(&format!("    container_name: \"{n}\"\n")), "");
        assert_eq!(codes(&r), ["NAME_REFUSED"], "{n}");
        assert_eq!(r.refusals[0].detail, format!("container {n} {why}"));
        assert!(r.refusals[0].how_to_lift().contains("monky-a-web"), "{:?}", r.refusals[0]);
        assert_eq!(codes(&second(&svc(&format!("    container_name: \"{n}\"\n")))), ["NAME_REFUSED"], "{n}");
    }
}

#[test]
fn bundle_files_bound_writable_ship_read_only_by_construction() {
    for v in [
        "./prometheus:/etc/prometheus",
        "./config.yml:/app/config.yml",
        "./prometheus/prometheus.yml:/etc/prometheus/prometheus.yml",
    ] {
        let y = svc(&format!("    volumes: [\"{v}\", \"./data:/data\"]\n"));
        assert!(
            first(&y, "").refusals.is_empty(),
            "{v}: {:?}",
            first(&y, "").refusals
        );
        let abs = v.replacen("./", &format!("{REL}/"), 1);
        let n = svc(&format!("    volumes: [\"{abs}\"]\n"));
        assert!(
            second(&n).refusals.is_empty(),
            "{abs}: {:?}",
            second(&n).refusals
        );
    }
    // still refused: the release root writable, a writable bind nested in the read-only one
    assert_eq!(
        codes(&first(&svc("    volumes: [\".:/app\"]\n"), "")),
        ["BIND_SOURCE_REFUSED"]
    );
    let nested =
        svc("    volumes: [\"./prometheus:/etc/prometheus\", \"./prometheus/data:/prometheus\"]\n");
    let r = first(&nested, "");
    assert_eq!(codes(&r), ["BIND_SOURCE_REFUSED"], "{:?}", r.refusals);
    let d = &r.refusals[0].detail;
    assert!(
        d.contains("nested with") && d.contains("./prometheus/data is writable"),
        "{d}"
    );
}

#[test]
fn a_build_only_service_is_refused_by_name_in_both_passes() {
    let y = "services:\n  api:\n    build: ./api\n  web:\n    image: x\n    build: .\n";
    for j in [
        first(y, ""),
        second(&y.replace("./api", &format!("{REL}/api"))),
    ] {
        assert_eq!(codes(&j), ["BUILD_REFUSED"], "{:?}", j.refusals);
        let r = &j.refusals[0];
        assert_eq!(
            r.detail,
            "api builds its image here (build: without image:); this box never builds"
        );
        assert_eq!((r.service(), r.key()), (Some("api"), Some("build")));
        assert!(r.how_to_lift().contains("image:"));
    }
    // with the box's require_image_digests, BUILD_REFUSED alone (no image to pin)
    let digests = BoxFacts {
        require_image_digests: true,
        ..first_box()
    };
    let j = judge_bundle(
        &parse(b"services:\n  api:\n    build: .\n").unwrap(),
        false,
        &digests,
        &Variables::none(),
    );
    assert_eq!(codes(&j), ["BUILD_REFUSED"]);
}

#[test]
fn a_file_compose_opens_that_is_not_the_bundles_is_named_relative_to_it() {
    let y = "services:\n  web:\n    image: x\n    env_file: [./missing.env, app.env]\n    secrets: [s]\nsecrets:\n  s:\n    file: ./nope.txt\n  t:\n    file: ./secret.txt\n";
    let j = first(y, "");
    let got: Vec<String> = j.refusals.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        got,
        [
            "BIND_SOURCE_REFUSED: secret s ./nope.txt (not a file of the bundle)",
            "BIND_SOURCE_REFUSED: web ./missing.env (not a file of the bundle)",
        ]
    );
    // the second pass sees compose's absolute paths, and says them relative to the release
    let n = y
        .replace("./", &format!("{REL}/"))
        .replace(" app.env", &format!(" {REL}/app.env"));
    let got: Vec<String> = second(&n).refusals.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        got,
        [
            "BIND_SOURCE_REFUSED: secret s ./nope.txt (not a file of the bundle)",
            "BIND_SOURCE_REFUSED: web ./missing.env (not a file of the bundle)",
        ]
    );
    // compose opens an env_file before the second pass: one the first cannot resolve is refused
    let r = first(
        &svc("    env_file: [\"${ENV_FILE}\"]\n"),
        "ENV_FILE=${SECRET}\n",
    );
    assert_eq!(codes(&r), ["PRIVILEGED_REFUSED"]);
    assert!(
        first(&svc("    env_file: [\"${ENV_FILE:-./app.env}\"]\n"), "")
            .refusals
            .is_empty()
    );
}

#[test]
fn every_refusal_is_listed_in_order_with_where_it_was_found() {
    let y = "services:\n  web:\n    image: x\n    privileged: true\n    cap_add: [SYS_ADMIN]\n    volumes: [\"/var/run/docker.sock:/s\", \"/srv/other:/o\"]\n    container_name: monky-b-x\n    use_api_socket: true\n  db:\n    image: y\n    network_mode: host\n    post_start:\n      - command: id\n";
    let j = first(y, "");
    let got: Vec<(String, Option<String>, Option<String>)> = j
        .refusals
        .iter()
        .map(|r| {
            (
                r.code.to_string(),
                r.service().map(String::from),
                r.key().map(String::from),
            )
        })
        .collect();
    let want = [
        ("PRIVILEGED_REFUSED", "web", "privileged"),
        ("PRIVILEGED_REFUSED", "web", "cap_add"),
        ("NAME_REFUSED", "web", "container_name"),
        ("BIND_SOURCE_REFUSED", "web", "volumes"),
        ("BIND_SOURCE_REFUSED", "web", "volumes"),
        ("PRIVILEGED_REFUSED", "db", "network_mode"),
        ("COMPOSE_KEY_REFUSED", "web", "use_api_socket"),
        ("COMPOSE_KEY_REFUSED", "db", "post_start"),
    ];
    let want: Vec<_> = want
        .iter()
        .map(|(c, s, k)| (c.to_string(), Some(s.to_string()), Some(k.to_string())))
        .collect();
    assert_eq!(got, want, "{:#?}", j.refusals);
    // the apply reports the first, as before
    let e = check_bundle(
        &parse(y.as_bytes()).unwrap(),
        false,
        &first_box(),
        &Variables::none(),
    )
    .unwrap_err();
    assert_eq!(e, j.refusals[0]);
    // the second pass lists them all too, paths relative to the release
    let n = format!("{y}  cache:\n    image: z\n    volumes:\n      - type: bind\n        source: {REL}\n        target: /app\n");
    let s = second(&n);
    assert!(s.refusals.len() >= 8, "{:#?}", s.refusals);
    assert!(
        s.refusals.iter().all(|r| !r.detail.contains(REL)),
        "{:#?}",
        s.refusals
    );
    assert!(
        s.refusals
            .iter()
            .any(|r| r.detail.contains("holds the release directory (./)")),
        "{:#?}",
        s.refusals
    );
}

#[test]
fn a_secret_valued_setting_waits_for_the_second_pass_which_judges_it() {
    let t = "P=${P_SECRET}\nCAP=${C}\nMEM=${M}\n";
    let y = svc("    privileged: ${P}\n    cap_add: [\"${CAP}\"]\n    mem_limit: ${MEM}\n    pids_limit: 10\n    ports: [\"${PORT}:80\"]\n");
    let capped = BoxFacts {
        limits: crate::policy::Limits {
            memory: Some(256 << 20),
            pids: Some(100),
        },
        ..first_box()
    };
    let j = judge_bundle(
        &parse(y.as_bytes()).unwrap(),
        false,
        &capped,
        &dotenv_variables(t),
    );
    assert!(j.refusals.is_empty(), "{:#?}", j.refusals);
    // known: judged here, before the lease
    let j = judge_bundle(
        &parse(y.as_bytes()).unwrap(),
        false,
        &capped,
        &dotenv_variables("P=true\nCAP=SYS_ADMIN\nMEM=1g\nPORT=22\n"),
    );
    assert_eq!(
        codes(&j),
        ["PRIVILEGED_REFUSED", "PRIVILEGED_REFUSED", "LIMIT_REFUSED"]
    );
    // the second pass on compose's output refuses what the secrets turned out to be
    let n = svc("    privileged: true\n    cap_add: [SYS_ADMIN]\n    mem_limit: \"1073741824\"\n    pids_limit: 10\n");
    let s = judge_normalised(
        &parse(n.as_bytes()).unwrap(),
        false,
        &BoxFacts {
            release_dir: Some(REL.into()),
            ..capped
        },
    );
    assert_eq!(
        codes(&s),
        ["PRIVILEGED_REFUSED", "PRIVILEGED_REFUSED", "LIMIT_REFUSED"]
    );
}

/// awesome-compose's prometheus-grafana as published mounts a bind and a volume both at
/// `/prometheus`: compose v1 fails `config`, v2 and v5 pass it and the engine fails at `up`.
/// Refused before the lease, in every syntax, naming the path.
#[test]
fn two_mounts_at_one_container_path_are_refused_before_the_lease() {
    let y = format!(
        "{}volumes:\n  prom_data: {{}}\n",
        svc("    volumes:\n      - ./etc/prometheus:/prometheus\n      - prom_data:/prometheus/\n")
    );
    let j = first(&y, "");
    assert_eq!(codes(&j), ["COMPOSE_CONFIG_INVALID"], "{:?}", j.refusals);
    assert!(
        j.refusals[0].detail.contains("/prometheus"),
        "{:?}",
        j.refusals
    );
    assert_eq!(j.refusals[0].service(), Some("web"));
    let normalised = format!("services:\n  web:\n    image: x\n    volumes:\n      - type: bind\n        source: {REL}/etc\n        target: /p\n      - type: volume\n        source: d\n        target: /p\n");
    assert_eq!(codes(&second(&normalised)), ["COMPOSE_CONFIG_INVALID"]);
    // distinct paths, and one a subdirectory of another, are ordinary
    let ok = svc("    volumes:\n      - ./a:/p\n      - ./b:/p/sub\n");
    assert!(
        first(&ok, "").refusals.is_empty(),
        "{:?}",
        first(&ok, "").refusals
    );
}

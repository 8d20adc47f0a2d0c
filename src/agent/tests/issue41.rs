//! Issue 41 through the agent: the first pass interpolates with the bundle's own
//! `env.template`, before any lease; the checks `plan` runs list every refusal of both passes,
//! each with where it was found and what lifts it, and no path of the box's release directory.

use super::*;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

const COMPOSE: &str =
    "services:\n  web:\n    image: busybox\n    volumes: [\"${UPLOAD_LOCATION}:/data\"]\n";

#[test]
fn a_bind_source_from_env_template_is_refused_before_any_lease() {
    let mut b = TestBox::new();
    let s = b.bundle(&[
        ("compose.yaml", COMPOSE),
        ("env.template", "UPLOAD_LOCATION=/etc\nK=${K}\n"),
        (
            "secrets.manifest.json",
            r#"{"entries": [{"var": "K", "path": "monky/data/env-a/see/k"}]}"#,
        ),
    ]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#));
    let f = b.tick().unwrap_err();
    assert_eq!(
        f.code().map(|c| c.as_str()),
        Some("BIND_SOURCE_REFUSED"),
        "{}",
        f.message()
    );
    assert!(f.message().contains("web /etc"), "{}", f.message());
    assert!(b.bao().calls.borrow().is_empty(), "nothing leased or read");
}

#[test]
fn the_same_bind_ships_the_first_pass_with_a_path_of_the_release() {
    let mut b = TestBox::new();
    for (template, ok) in [
        ("UPLOAD_LOCATION=./library\n", true),
        // a secret: the first pass leaves it to the second
        ("UPLOAD_LOCATION=${K}\n", true),
        ("UPLOAD_LOCATION=/etc\n", false),
    ] {
        let s = b.bundle(&[
            ("compose.yaml", COMPOSE),
            ("env.template", template),
            (
                "secrets.manifest.json",
                r#"{"entries": [{"var": "K", "path": "monky/data/env-a/see/k"}]}"#,
            ),
        ]);
        let rt = rt();
        let bundle = rt.block_on(b.agent.fetch_bundle(&s)).unwrap();
        let checks = rt.block_on(b.agent.pre_lease_checks(&bundle));
        let policy: Vec<&Refusal> = checks
            .refusals
            .iter()
            .filter(|r| r.code == RefusalCode::BindSourceRefused)
            .collect();
        assert_eq!(policy.is_empty(), ok, "{template}: {policy:?}");
    }
}

#[test]
fn the_checks_plan_runs_list_every_refusal_of_both_passes() {
    let mut b = TestBox::new();
    let compose = "services:\n  api:\n    build: ./api\n  web:\n    image: busybox\n    container_name: monky-other-web\n    cap_add: [SYS_ADMIN]\n    volumes: [\"/srv/elsewhere:/x\"]\n    secrets: [s]\nsecrets:\n  s:\n    file: ./missing.txt\n";
    let s = b.bundle(&[("compose.yaml", compose)]);
    let rt = rt();
    let bundle = rt.block_on(b.agent.fetch_bundle(&s)).unwrap();
    let first = rt.block_on(b.agent.pre_lease_checks(&bundle));
    let got: Vec<String> = first
        .refusals
        .iter()
        .filter(|r| r.code != RefusalCode::DiskInsufficient)
        .map(|r| {
            format!(
                "{} {}.{}",
                r.code,
                r.service().unwrap_or("-"),
                r.key().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "BIND_SOURCE_REFUSED secret s.file",
            "BUILD_REFUSED api.build",
            "PRIVILEGED_REFUSED web.cap_add",
            "NAME_REFUSED web.container_name",
            "BIND_SOURCE_REFUSED web.volumes",
        ],
        "{:#?}",
        first.refusals
    );
    assert!(first.refusals.iter().all(|r| !r.how_to_lift().is_empty()));
    // the second pass on compose's normalised output (what `config` prints), in a directory of
    // the box: every refusal again, none quoting that directory
    let dir = b
        .agent
        .cfg
        .staging_dir()
        .join(format!("plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display();
    let normalised = format!(
        "name: monky-test\nservices:\n  api:\n    build:\n      context: {d}/api\n      dockerfile: Dockerfile\n  \
         web:\n    image: busybox\n    container_name: monky-other-web\n    cap_add: [SYS_ADMIN]\n    \
         volumes:\n      - type: bind\n        source: /srv/elsewhere\n        target: /x\n      \
         - type: bind\n        source: {d}\n        target: /app\n    secrets:\n      - source: s\n\
         secrets:\n  s:\n    file: {d}/missing.txt\n"
    );
    let second = rt.block_on(
        b.agent
            .normalised_checks(&bundle, &normalised, "", &dir, false),
    );
    let codes: Vec<&str> = second.iter().map(|r| r.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "BIND_SOURCE_REFUSED",
            "BUILD_REFUSED",
            "PRIVILEGED_REFUSED",
            "NAME_REFUSED",
            "BIND_SOURCE_REFUSED",
            "BIND_SOURCE_REFUSED",
        ],
        "{second:#?}"
    );
    let dir_text = dir.display().to_string();
    for r in &second {
        assert!(!r.detail.contains(&dir_text), "{r}");
    }
    assert_eq!(
        second[0].to_string(),
        "BIND_SOURCE_REFUSED: secret s ./missing.txt (not a file of the bundle)"
    );
    assert!(
        second[5].detail.contains("the release directory (./)"),
        "{}",
        second[5]
    );
}

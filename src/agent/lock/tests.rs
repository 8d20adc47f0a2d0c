use super::*;

fn doc(y: &str) -> Value {
    compose_check::parse(y.as_bytes()).unwrap()
}

#[test]
fn the_override_mounts_each_lock_volume_and_keeps_the_files_version() {
    let d = doc("version: \"3.8\"\nservices:\n  worker:\n    image: x\n  api:\n    image: y\n");
    let y = override_yaml(&d, &["worker".to_string()]);
    let o = doc(&y);
    let Value::Mapping(root) = &o else { panic!() };
    assert_eq!(
        compose_check::yaml::get(root, "version")
            .and_then(compose_check::yaml::as_str)
            .as_deref(),
        Some("3.8")
    );
    assert!(
        y.contains("      - monky-lock-worker:/run/monky-lock\n"),
        "{y}"
    );
    assert!(y.contains("volumes:\n  monky-lock-worker: {}\n"), "{y}");
    assert!(!y.contains("api"));
    // the agent's own override passes its own second-pass rule
    let norm = doc("services:\n  worker:\n    volumes:\n      - type: volume\n        source: monky-lock-worker\n        target: /run/monky-lock\n");
    assert!(normalised_refusals(&norm, &["worker".to_string()]).is_empty());
}

#[test]
fn a_bundle_cannot_take_a_lock_volume() {
    let d = doc("services:\n  a:\n    image: x\n    volumes: [\"monky-lock-b:/x\", {type: volume, source: monky-lock-c, target: /y}, \"fine:/z\"]\nvolumes:\n  monky-lock-a: {}\n  data:\n    name: proj_monky-lock-a\n  fine: {}\n");
    let r = reserved_refusals(&d);
    assert_eq!(r.len(), 4, "{r:?}");
    assert_eq!(
        r[2].to_string(),
        "NAME_REFUSED: a volume monky-lock-b (reserved for the box's update lock)"
    );
    assert!(r.iter().all(|x| x.code == RefusalCode::NameRefused));
    assert!(r[0].detail.contains("reserved for the box's update lock"));
}

#[test]
fn only_its_own_service_mounts_a_lock_volume_and_only_at_the_lock_path() {
    let lock = vec!["worker".to_string()];
    for (service, source, target, ok) in [
        ("worker", "monky-lock-worker", "/run/monky-lock", true),
        ("api", "monky-lock-worker", "/run/monky-lock", false),
        ("worker", "monky-lock-worker", "/etc", false),
        ("api", "monky-lock-api", "/run/monky-lock", false),
        ("api", "data", "/data", true),
    ] {
        let y = format!("services:\n  {service}:\n    volumes:\n      - type: volume\n        source: {source}\n        target: {target}\n");
        let r = normalised_refusals(&doc(&y), &lock);
        assert_eq!(r.is_empty(), ok, "{service} {source} {target}: {r:?}");
        let short = format!("services:\n  {service}:\n    volumes: [\"{source}:{target}:rw\"]\n");
        assert_eq!(
            normalised_refusals(&doc(&short), &lock).is_empty(),
            ok,
            "short {service}"
        );
    }
}

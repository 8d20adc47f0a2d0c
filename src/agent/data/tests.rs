use super::*;

fn doc(y: &str) -> Value {
    compose_check::parse(y.as_bytes()).unwrap()
}

fn spec(snapshot: &[&str], stop: &[&str]) -> DataSpec {
    DataSpec {
        snapshot: snapshot.iter().map(|s| s.to_string()).collect(),
        stop: stop.iter().map(|s| s.to_string()).collect(),
    }
}

const FILE: &str = "services:\n  db:\n    image: postgres\n    volumes: [pgdata:/var/lib/postgresql/data]\n  web:\n    image: nginx\nvolumes:\n  pgdata: {}\n  named:\n    name: shared-cache\n  ext:\n    external: true\n  nfs:\n    driver_opts: {type: nfs, o: addr=1.2.3.4, device: \":/x\"}\n  plugin:\n    driver: rexray\n  interp:\n    name: ${X}\n";

#[test]
fn the_engine_names_of_the_volumes_to_snapshot() {
    let d = doc(FILE);
    let got = volumes_of(&d, &spec(&["pgdata", "named"], &["db"]), "proj", 2).unwrap();
    assert_eq!(got["pgdata"], "proj_pgdata");
    assert_eq!(got["named"], "shared-cache");
}

#[test]
fn what_the_box_will_not_snapshot_is_refused_before_anything_changes() {
    let d = doc(FILE);
    let cases = [
        ("ext", "external"),
        ("nfs", "driver_opts"),
        ("plugin", "driver rexray"),
        ("interp", "plain string"),
        ("missing", "not a top-level volume"),
        ("../etc", "not a volume name"),
    ];
    for (key, why) in cases {
        let r = volumes_of(&d, &spec(&[key], &[]), "proj", 2).unwrap_err();
        assert_eq!(r.len(), 1, "{key}");
        assert_eq!(r[0].code, RefusalCode::SnapshotRefused, "{key}");
        assert!(
            r[0].detail.starts_with(key) && r[0].detail.contains(why),
            "{key}: {}",
            r[0].detail
        );
    }
    let r = volumes_of(&d, &spec(&["pgdata"], &["nosuch"]), "proj", 2).unwrap_err();
    assert_eq!(r[0].detail, "stop nosuch (not a service of compose.yaml)");
    let r = volumes_of(&d, &spec(&["pgdata"], &[]), "proj", 0).unwrap_err();
    assert_eq!(
        r[0].to_string(),
        "SNAPSHOT_REFUSED: pgdata (keep_snapshots is 0)"
    );
}

#[test]
fn update_lock_names_services_of_the_file() {
    let d = doc(FILE);
    assert!(lock_refusals(&d, &["db".to_string()]).is_empty());
    let r = lock_refusals(&d, &["worker".to_string()]);
    assert_eq!(
        r[0].to_string(),
        "BUNDLE_INVALID: update_lock worker (not a service of compose.yaml)"
    );
}

use super::*;
use monky_host::data::SnapMeta;

fn snap(release: &str, volume: &str, at: u64) -> Snapshot {
    Snapshot {
        meta: SnapMeta {
            release: release.into(),
            taken_for: "f".repeat(64),
            volume: volume.into(),
            engine_volume: format!("p_{volume}"),
            bytes: 1,
            taken_at: at,
        },
        tree: format!("/x/{release}/{volume}").into(),
    }
}

#[test]
fn a_restore_picks_the_newest_snapshot_of_each_volume_of_one_release() {
    let a = "a".repeat(64);
    let b = format!("{}{}", "a".repeat(12), "b".repeat(52));
    let all = vec![
        snap(&a, "db", 30),
        snap(&a, "up", 20),
        snap(&a, "db", 10),
        snap(&b, "db", 5),
    ];
    let got = chosen(&all, &a[..13], &[]).unwrap();
    let vols: Vec<(&str, u64)> = got
        .iter()
        .map(|s| (s.meta.volume.as_str(), s.meta.taken_at))
        .collect();
    assert_eq!(vols, [("db", 30), ("up", 20)]);
    let only = chosen(&all, &a, &["up".to_string()]).unwrap();
    assert_eq!(only.len(), 1);
    assert!(chosen(&all, &a[..12], &[])
        .unwrap_err()
        .contains("more than one"));
    assert!(chosen(&all, &a, &["nope".to_string()])
        .unwrap_err()
        .contains("no snapshot of volume nope"));
    assert!(chosen(&all, "abc", &[])
        .unwrap_err()
        .contains("not a release sha"));
    assert!(chosen(&all, &"c".repeat(12), &[])
        .unwrap_err()
        .contains("no snapshot"));
}

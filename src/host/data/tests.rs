use super::*;

fn store() -> (tempfile::TempDir, Store) {
    let d = tempfile::tempdir().unwrap();
    let s = Store::new(d.path().join("snapshots"));
    (d, s)
}

fn meta(release: &str, taken_for: &str, volume: &str, at: u64) -> SnapMeta {
    SnapMeta {
        release: release.into(),
        taken_for: taken_for.into(),
        volume: volume.into(),
        engine_volume: format!("p_{volume}"),
        bytes: 3,
        taken_at: at,
    }
}

fn put(s: &Store, m: &SnapMeta) {
    s.prepare(&m.release).unwrap();
    let t = s.tree(&m.release, &m.volume);
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("f"), b"abc").unwrap();
    s.commit(m).unwrap();
}

#[test]
fn a_snapshot_counts_only_with_its_tree_and_its_record() {
    let (_d, s) = store();
    put(&s, &meta("a", "b", "pgdata", 10));
    // a tree whose record was never written (killed between rename and commit)
    std::fs::create_dir_all(s.tree("a", "uploads")).unwrap();
    // a copy killed mid-way
    std::fs::create_dir_all(s.root().join("a").join("cache.partial")).unwrap();
    // a record whose tree is gone
    s.commit(&meta("a", "b", "gone", 10)).unwrap();
    let listed: Vec<String> = s.list().into_iter().map(|x| x.meta.volume).collect();
    assert_eq!(listed, ["pgdata"]);
    let gone = s.discard_incomplete();
    assert_eq!(gone.len(), 3, "{gone:?}");
    assert!(s.tree("a", "pgdata").join("f").is_file());
    assert!(!s.tree("a", "uploads").exists());
    assert!(s.find("a", "b", "pgdata").is_some());
    assert!(s.find("a", "c", "pgdata").is_none());
}

#[test]
fn retention_keeps_the_newest_releases() {
    let (_d, s) = store();
    put(&s, &meta("r1", "r2", "v", 10));
    put(&s, &meta("r2", "r3", "v", 20));
    put(&s, &meta("r3", "r4", "v", 30));
    put(&s, &meta("r3", "r4", "w", 30));
    assert_eq!(s.retain(2), ["r1"]);
    let left: Vec<String> = s.list().into_iter().map(|x| x.meta.release).collect();
    assert_eq!(left, ["r3", "r3", "r2"]);
    assert_eq!(s.retain(0).len(), 2);
    assert!(s.list().is_empty());
}

#[test]
fn a_removal_never_follows_a_link_inside_a_snapshot() {
    let (d, s) = store();
    let outside = d.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep"), b"x").unwrap();
    let m = meta("r1", "r2", "v", 1);
    put(&s, &m);
    std::os::unix::fs::symlink(&outside, s.tree("r1", "v").join("link")).unwrap();
    assert!(s.remove_release("r1"));
    assert!(outside.join("keep").is_file());
}

#[test]
fn volume_keys_land_on_disk_only_as_one_component() {
    for k in ["pgdata", "db-data", "a.b", "x_1"] {
        assert!(safe_key(k), "{k}");
    }
    for k in ["", ".", "..", "../x", "a/b", ".hidden", "a b", "a\nb"] {
        assert!(!safe_key(k), "{k:?}");
    }
}

#[test]
fn the_journal_round_trips_and_clears() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("data.json");
    assert!(Journal::load(&p).is_none());
    let j = Journal {
        phase: Phase::Copying,
        release: "a".into(),
        taken_for: "b".into(),
        stopped: vec!["c1".into()],
        volumes: [("pgdata".to_string(), "p_pgdata".to_string())].into(),
        at: 5,
    };
    j.save(&p).unwrap();
    assert_eq!(Journal::load(&p), Some(j));
    Journal::clear(&p).unwrap();
    Journal::clear(&p).unwrap();
    assert!(Journal::load(&p).is_none());
}

#[test]
fn the_disk_need_is_half_again_plus_two_gib() {
    assert_eq!(need_for(0), 2 << 30);
    assert_eq!(need_for(1 << 30), (1 << 30) + (1 << 29) + (2 << 30));
    assert_eq!(need_for(u64::MAX), u64::MAX);
}

use super::super::fakes::{FakeBao, FakeEngine, FakeTenancy, ENV};
use super::*;

fn sha(n: u8) -> String {
    format!("{n:x}").repeat(64)
}

/// Five releases, oldest first (mtimes a minute apart), under a fresh box.
fn agent_with_releases(
    dir: &Path,
    keep: usize,
) -> (Agent<FakeTenancy, FakeBao, FakeEngine>, Vec<PathBuf>) {
    let cfg = Config {
        env_id: ENV.into(),
        state_dir: dir.join("state"),
        compose_project: "monky-test".into(),
        keep_releases: keep,
        ..Config::default()
    };
    let mut rels = Vec::new();
    for n in 1..=5u8 {
        let r = cfg.releases_dir().join(sha(n));
        std::fs::create_dir_all(&r).unwrap();
        std::fs::write(r.join("compose.yaml"), vec![b'#'; 100 * n as usize]).unwrap();
        let t = std::time::SystemTime::now() - Duration::from_secs(600 - 60 * u64::from(n));
        std::fs::File::open(&r).unwrap().set_modified(t).unwrap();
        rels.push(r);
    }
    let c = Clients {
        tenancy: FakeTenancy::default(),
        bao: FakeBao::new(),
    };
    let engine = FakeEngine::new(dir.to_path_buf());
    (Agent::from_parts(cfg, false, c, engine).unwrap(), rels)
}

#[test]
fn reclaim_keeps_the_newest_the_running_and_the_rollback_target() {
    let d = tempfile::tempdir().unwrap();
    let (mut a, rels) = agent_with_releases(d.path(), 1);
    // release 4 runs, 2 ran before it, 5 is a newer one that failed
    a.state.applied_sha = Some(sha(4));
    a.state.care.rollback_target = Some(sha(2));
    let listed = state::releases(&a.cfg.releases_dir());
    assert_eq!(listed, rels, "oldest first by mtime");
    let kept = a.kept_releases(&listed);
    let want: BTreeSet<PathBuf> = [&rels[1], &rels[3], &rels[4]]
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(kept, want);

    // no rollback target known yet (a box upgraded mid-life): the newest other release
    a.state.care.rollback_target = None;
    let kept = a.kept_releases(&listed);
    let want: BTreeSet<PathBuf> = [&rels[3], &rels[4]].into_iter().cloned().collect();
    assert_eq!(kept, want);

    // the reclaim removes the rest and counts their bytes; this engine knows no images,
    // so none is touched
    a.state.care.rollback_target = Some(sha(2));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let r = rt.block_on(a.reclaim());
    assert_eq!(r.releases, vec![sha(1), sha(3)]);
    assert_eq!(r.bytes, 100 + 300);
    assert!(r.images.is_empty());
    assert_eq!(
        state::releases(&a.cfg.releases_dir()),
        vec![rels[1].clone(), rels[3].clone(), rels[4].clone()]
    );
}

#[test]
fn a_new_healthy_release_makes_the_old_one_the_rollback_target() {
    let d = tempfile::tempdir().unwrap();
    let (mut a, _) = agent_with_releases(d.path(), 5);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    a.state.applied_sha = Some(sha(4));
    rt.block_on(a.reclaim_after_action());
    assert_eq!(a.state.care.running, Some(sha(4)));
    assert_eq!(a.state.care.rollback_target, None, "nothing ran before");
    a.state.applied_sha = Some(sha(5));
    rt.block_on(a.reclaim_after_action());
    assert_eq!(a.state.care.running, Some(sha(5)));
    assert_eq!(a.state.care.rollback_target, Some(sha(4)));
    // a tick that applied nothing new changes nothing
    rt.block_on(a.reclaim_after_action());
    assert_eq!(a.state.care.rollback_target, Some(sha(4)));
    assert!(a.state.counters.docker_free_bytes.is_some());
}

#[test]
fn a_release_names_its_images_unless_one_is_interpolated() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("compose.yaml"),
        "services:\n  web:\n    image: r/web:1\n  db:\n    image: r/db:2\n  b:\n    build: .\n",
    )
    .unwrap();
    let mut v = release_images(d.path()).unwrap();
    v.sort();
    assert_eq!(v, vec!["r/db:2".to_string(), "r/web:1".to_string()]);
    std::fs::write(
        d.path().join("compose.yaml"),
        "services:\n  web:\n    image: r/web:${TAG}\n",
    )
    .unwrap();
    assert_eq!(release_images(d.path()), None);
    assert_eq!(release_images(&d.path().join("missing")), None);
}

/// The keep-set of the box's containers: every project's, running or stopped, by the id
/// each was created from and by the name it was created by (issue 31.5).
#[test]
fn every_container_on_the_box_keeps_its_image_and_its_name() {
    let cs = serde_json::json!([
        {"Image": "r/web:1", "ImageID": "sha256:aa", "State": "running",
         "Labels": {"com.docker.compose.project": "monky-test"}},
        {"Image": "r/db:2", "ImageID": "sha256:bb", "State": "exited",
         "Labels": {"com.docker.compose.project": "monky-other"}},
        {"Image": "sha256:cc", "ImageID": "sha256:cc", "State": "created", "Labels": {}},
        {"Image": "", "ImageID": ""},
        {"Names": ["/odd"]}
    ]);
    let (ids, names) = containers_images(cs.as_array().unwrap());
    let want_ids: BTreeSet<String> = ["sha256:aa", "sha256:bb", "sha256:cc"]
        .map(String::from)
        .into();
    // an id where a name was is resolved like a name (to itself)
    let want_names: BTreeSet<String> = ["r/db:2", "r/web:1", "sha256:cc"].map(String::from).into();
    assert_eq!(ids, want_ids);
    assert_eq!(names, want_names);
}

/// An engine that cannot list every container on the box: no image goes.
#[test]
fn without_the_boxs_containers_no_image_goes() {
    let d = tempfile::tempdir().unwrap();
    let (a, _) = agent_with_releases(d.path(), 1);
    let mut ledger = monky_guard::Ledger::default();
    ledger.images.insert(
        "sha256:dd".into(),
        serde_json::from_value(serde_json::json!({"reference": "r/x:1", "at": 1})).unwrap(),
    );
    let path = a.cfg.state_dir.join(monky_guard::IMAGE_LEDGER);
    ledger.save(&path).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut out = Reclaimed::default();
    rt.block_on(a.reclaim_images(&BTreeSet::new(), &mut out));
    assert!(out.images.is_empty());
    assert!(monky_guard::Ledger::load(&path)
        .unwrap()
        .images
        .contains_key("sha256:dd"));
}

#[test]
fn dir_bytes_counts_files_and_not_what_a_symlink_points_at() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::fs::write(d.path().join("a"), vec![0u8; 1000]).unwrap();
    std::fs::write(d.path().join("sub/b"), vec![0u8; 24]).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("big"), vec![0u8; 100_000]).unwrap();
    std::os::unix::fs::symlink(outside.path(), d.path().join("link")).unwrap();
    assert_eq!(dir_bytes(d.path()), 1024);
}

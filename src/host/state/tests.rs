use super::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn write_private_is_atomic_and_private() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("f");
    write_private(&p, b"one", 0o600).unwrap();
    write_private(&p, b"two", 0o600).unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"two");
    assert_eq!(
        fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        fs::read_dir(d.path()).unwrap().count(),
        1,
        "no temp file left behind"
    );
}

use std::os::unix::fs::MetadataExt;

fn ino(p: &Path) -> u64 {
    fs::metadata(p).unwrap().ino()
}

/// `state.json` at `p` saved (fsynced) with release `a…a` applied.
fn saved_with_release(p: &Path) {
    let mut st = State {
        applied_sha: Some("a".repeat(64)),
        ..Default::default()
    };
    st.save(p).unwrap();
}

/// What a power cut can leave of an unsynced write: a new inode with part of the data.
fn tear(p: &Path, bytes: &[u8]) {
    let t = p.with_extension("torn");
    fs::write(&t, bytes).unwrap();
    fs::rename(&t, p).unwrap();
}

#[test]
fn a_heartbeat_leaves_the_synced_copy_alone_and_a_durable_change_replaces_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("state.json");
    let mut st = State::load(&p).unwrap();
    st.applied_sha = Some("a".repeat(64));
    st.save_tick(&p).unwrap(); // first save: durable, linked
    assert_eq!(ino(&p), ino(&synced_path(&p)));

    let mut st = State::load(&p).unwrap();
    st.last_checkin = Some(7);
    st.counters.applies += 1;
    let copy = ino(&synced_path(&p));
    st.save_tick(&p).unwrap();
    assert_eq!(
        ino(&synced_path(&p)),
        copy,
        "heartbeat rewrote the fsynced copy"
    );
    assert_ne!(ino(&p), copy);
    assert_eq!(State::load(&p).unwrap().last_checkin, Some(7));

    let mut st = State::load(&p).unwrap();
    st.desired_sha = Some("b".repeat(64));
    st.save_tick(&p).unwrap();
    assert_eq!(
        ino(&p),
        ino(&synced_path(&p)),
        "a durable change went unsynced"
    );
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 2, "temp file left");
}

#[test]
fn a_torn_state_file_falls_back_to_the_synced_copy_and_a_missing_one_starts_fresh() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("state.json");
    saved_with_release(&p);
    let mut st = State::load(&p).unwrap();
    st.last_report = Some(9);
    st.save_tick(&p).unwrap();
    for torn in [&b""[..], b"{\"env_id\": \"e", b"\0\0\0\0"] {
        tear(&p, torn);
        let back = State::load(&p).unwrap();
        assert_eq!(back.applied_sha, Some("a".repeat(64)));
        assert_eq!(back.last_report, None, "the copy predates the heartbeat");
    }
    // nothing to fall back to: the error names the file
    fs::remove_file(synced_path(&p)).unwrap();
    let e = State::load(&p).unwrap_err().to_string();
    assert!(e.contains("corrupt") && e.contains("state.json"), "{e}");
    // moved aside = start over, even with a copy beside it
    st.save(&p).unwrap();
    fs::rename(&p, d.path().join("aside")).unwrap();
    assert_eq!(State::load(&p).unwrap().applied_sha, None);
}

#[test]
fn a_copy_that_is_not_this_states_forces_a_durable_save() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("state.json");
    saved_with_release(&p);
    // an older agent (no copy) rewrote state.json with another release
    let other = State {
        applied_sha: Some("b".repeat(64)),
        ..Default::default()
    };
    write_private(&p, &serde_json::to_vec(&other).unwrap(), 0o600).unwrap();
    let mut st = State::load(&p).unwrap();
    st.last_checkin = Some(1);
    st.save_tick(&p).unwrap();
    assert_eq!(ino(&p), ino(&synced_path(&p)));
    tear(&p, b"");
    assert_eq!(State::load(&p).unwrap().applied_sha, Some("b".repeat(64)));
}

#[test]
fn a_copy_that_cannot_be_linked_leaves_every_save_fsynced() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("state.json");
    fs::create_dir(synced_path(&p)).unwrap(); // a directory where the copy goes
    let mut st = State {
        applied_sha: Some("a".repeat(64)),
        ..Default::default()
    };
    st.save(&p).unwrap();
    assert!(
        st.synced.is_none(),
        "a save relied on a copy it could not make"
    );
    let mut st = State::load(&p).unwrap();
    assert!(st.synced.is_none());
    st.last_checkin = Some(3);
    st.save_tick(&p).unwrap();
    assert!(st.synced.is_none());
    assert_eq!(State::load(&p).unwrap().last_checkin, Some(3));
    assert!(
        synced_path(&p).is_dir(),
        "the planted directory was not ours to remove"
    );
}

proptest::proptest! {
    /// Any run of ticks, each changing durable fields or not, then a power cut that
    /// tears `state.json`: what loads has every durable field of the last save.
    #[test]
    fn a_torn_write_never_loses_a_durable_field(steps in proptest::collection::vec((0u8..4, 0u64..3), 1..12)) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("state.json");
        let mut last = State::default();
        for (what, v) in steps {
            let mut st = State::load(&p).unwrap();
            st.last_checkin = Some(v);
            st.counters.applies += v;
            match what {
                0 => st.applied_sha = Some(v.to_string()),
                1 => st.lease_swap_due = v == 1,
                2 => { st.restarts.insert("c".into(), v); }
                _ => {}
            }
            st.save_tick(&p).unwrap();
            last = st;
        }
        tear(&p, b"{");
        let back = State::load(&p).unwrap();
        proptest::prop_assert_eq!(back.durable_view(), last.durable_view());
    }
}

#[test]
fn second_lock_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("lock");
    let a = try_lock(&p).unwrap();
    assert!(a.is_some());
    assert!(try_lock(&p).unwrap().is_none());
    drop(a);
    assert!(try_lock(&p).unwrap().is_some());
}

/// A copy of the lock's descriptor that outlives the tick for a moment (a child forked while the
/// tick ran holds one until it execs) does not make the next tick think another one runs.
#[test]
fn a_copy_of_the_descriptor_held_for_a_moment_is_waited_out() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("lock");
    let tick = try_lock(&p).unwrap().expect("the first tick's lock");
    let child_copy = tick._file.try_clone().unwrap();
    drop(tick);
    let exec = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(150));
        drop(child_copy);
    });
    assert!(
        try_lock(&p).unwrap().is_some(),
        "the next tick took the lock once the copy closed"
    );
    exec.join().unwrap();
}

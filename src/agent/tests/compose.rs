//! What a tick does with compose: the release parsed once, every run bounded and forgotten.

use super::*;

#[test]
fn a_heartbeat_parses_the_release_once_and_again_only_when_its_compose_file_changes() {
    let mut b = TestBox::new();
    let s = sha('a');
    b.applied(&s, &["web", "db"]);
    b.running(&[("web", "running", "healthy"), ("db", "running", "")]);
    let none = format!(r#"{{"action": "none", "desired_sha": "{s}"}}"#);
    b.tenancy().answer(&none);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    let memo = b.saved().shape.expect("the parsed shape is kept");
    assert_eq!(memo.services, ["web", "db"]);

    // the kept shape is what the next heartbeat uses: one that names another service (same
    // file, same build) makes db's absence an error without a parse to contradict it
    let mut st = b.saved();
    st.shape.as_mut().unwrap().services = vec!["web".into(), "db".into(), "cache".into()];
    st.save(&b.agent.cfg.state_path()).unwrap();
    b.tenancy().answer(&none);
    let f = b.tick().unwrap_err();
    assert!(f.message().contains("cache"), "{}", f.message());

    // a changed compose.yaml is parsed again, whatever is kept
    let rel = b.agent.cfg.releases_dir().join(&s);
    std::fs::write(
        rel.join("compose.yaml"),
        "services:\n  web:\n    image: busybox\n",
    )
    .unwrap();
    b.running(&[("web", "running", "healthy")]);
    b.tenancy().answer(&none);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(b.saved().shape.unwrap().services, ["web"]);
}

/// The one way a tick runs compose (apply, rollback, heal, down): the check-in's containers
/// are forgotten, a SIGTERM stops the running step, and no step outlives the tick's budget.
#[test]
fn every_compose_run_is_bounded_by_the_tick_and_forgets_what_it_saw() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = tempfile::tempdir().unwrap();
    let slow = scratch.path().join("compose");
    std::fs::write(&slow, "#!/bin/sh\nexec sleep 30\n").unwrap();
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut b = TestBox::with(|c| {
        c.compose_cmd = monky_host::config::ComposeCmd::Standalone;
        c.compose_bin = slow.display().to_string();
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (tx, rx) = tokio::sync::watch::channel(false);
        b.agent.set_interrupt(rx);
        b.agent.now.seen = Some(Vec::new());
        let compose = b.agent.compose().await.unwrap();
        assert!(b.agent.now.seen.is_none(), "compose changes what runs");
        let t = std::time::Instant::now();
        let stop = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            tx.send(true).unwrap();
        };
        let (up, ()) = tokio::join!(compose.up(scratch.path()), stop);
        assert!(matches!(up, Err(RuntimeError::Interrupted(_))), "{up:?}");
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());

        // no interrupt this time: the tick's deadline cuts the step
        let (_tx, rx) = tokio::sync::watch::channel(false);
        b.agent.set_interrupt(rx);
        b.agent.now.deadline = tokio::time::Instant::now() + Duration::from_millis(300);
        let compose = b.agent.compose().await.unwrap();
        let t = std::time::Instant::now();
        let up = compose.up(scratch.path()).await;
        assert!(
            matches!(up, Err(RuntimeError::Compose { rc: -1, .. })),
            "{up:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    });
}

//! A failing or rolled-back sha held on the agent's clock, and what lifts the hold.

use super::*;

/// A refused bundle, as a failing release: each attempt is refused before any lease.
fn failing_bundle(b: &TestBox) -> String {
    b.bundle(&[(
        "compose.yaml",
        "services:\n  web:\n    image: busybox\n    privileged: true\n",
    )])
}

#[test]
fn a_failing_sha_backs_off_on_the_agents_clock_and_urgent_or_a_new_sha_lifts_it() {
    let mut b = TestBox::with(|c| c.retry_backoff_max_s = 3600);
    let clock = HandClock::at(1_000_000);
    b.agent.clock = std::sync::Arc::new(clock.clone());
    let s = failing_bundle(&b);
    let apply = format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#);
    let fetches = |b: &TestBox| b.calls().iter().filter(|c| c.starts_with("bundle")).count();
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    assert_eq!(fetches(&b), 1);
    let hold = b.saved().retry.expect("held");
    assert_eq!(hold.attempts, 1);
    // 60 s, plus up to a fifth more for this box
    let wait = hold.next_at - 1_000_000;
    assert!((60..=72).contains(&wait), "{wait}");
    // inside the wait: nothing fetched, the hold reported (nothing runs: no report at all)
    clock.advance(wait - 1);
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(fetches(&b), 1);
    // at the time: attempt 2, which doubles the wait
    clock.advance(1);
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    assert_eq!(fetches(&b), 2);
    let hold = b.saved().retry.unwrap();
    assert_eq!(hold.attempts, 2);
    assert!((120..=144).contains(&(hold.next_at - 1_000_000 - wait)));
    // urgent lifts the hold
    b.tenancy().answer(&format!(
        r#"{{"action": "apply", "desired_sha": "{s}", "urgent": true}}"#
    ));
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    assert_eq!(fetches(&b), 3);
    assert_eq!(b.saved().retry.unwrap().attempts, 3);
    // a new desired sha starts afresh
    let t = b.bundle(&[(
        "compose.yaml",
        "services:\n  web:\n    image: busybox:1\n    privileged: true\n",
    )]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "apply", "desired_sha": "{t}"}}"#));
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    let hold = b.saved().retry.unwrap();
    assert_eq!((hold.sha.as_str(), hold.attempts), (t.as_str(), 1));
}

#[test]
fn a_rolled_back_sha_is_held_until_retry_failed_after_s_on_the_agents_clock() {
    let mut b = TestBox::with(|c| {
        c.auto_rollback = true;
        c.retry_failed_after_s = 600;
        c.retry_backoff_max_s = 0;
    });
    let clock = HandClock::at(2_000_000);
    b.agent.clock = std::sync::Arc::new(clock.clone());
    let old = sha('a');
    b.applied(&old, &["web"]);
    b.running(&[("web", "running", "healthy")]);
    let s = failing_bundle(&b);
    let mut st = b.saved();
    st.failed_release = Some(monky_host::state::FailedRelease {
        sha: s.clone(),
        at: 2_000_000 - 100,
        rolled_back_to: old.clone(),
        rollback_ok: true,
    });
    st.save(&b.agent.cfg.state_path()).unwrap();
    let apply = format!(r#"{{"action": "apply", "desired_sha": "{s}"}}"#);
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    let r = b.reports().last().cloned().unwrap();
    assert_eq!(r["sha"], old.as_str());
    let until = crate::rollback::rfc3339(2_000_000 + 500);
    assert_eq!(
        r["detail"],
        format!("ROLLED_BACK_FROM: {s}; not retried before {until}")
    );
    assert!(!b.calls().iter().any(|c| c.starts_with("bundle")));
    // 500 s later the hold is over: the sha is tried again
    clock.advance(500);
    b.tenancy().answer(&apply);
    assert_eq!(b.tick().unwrap_err().exit(), Exit::Fail);
    assert!(b.calls().iter().any(|c| c.starts_with("bundle")));
}

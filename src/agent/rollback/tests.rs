use super::*;

#[test]
fn only_a_started_release_that_failed_is_rolled_back() {
    let coded = |code, kind| Failure::coded(kind, code, "x");
    for code in [Code::Unhealthy, Code::ComposeUpFailed, Code::CrashLoop] {
        assert!(rollback_worthy(&coded(code, Kind::Fail)), "{code}");
    }
    // refused before `up`: the running release was never touched
    assert!(!rollback_worthy(&coded(
        Code::COMPOSE_PULL_FAILED,
        Kind::Fail
    )));
    assert!(!rollback_worthy(&Failure::from(Refusal::new(
        RefusalCode::PrivilegedRefused,
        "web: privileged"
    ))));
    // SIGTERM or a dead OpenBao: the next tick converges, nothing to roll back
    assert!(!rollback_worthy(&coded(Code::Unhealthy, Kind::Temporary)));
    // a message that only reads like one is not a code
    assert!(!rollback_worthy(&Failure::fail("UNHEALTHY: typed")));
}

#[test]
fn an_apply_failure_is_reported_with_a_code_unless_it_is_temporary() {
    let sha = "a".repeat(64);
    let out = apply_failed(&sha, Failure::fail("cannot promote"));
    let f = out.res.as_ref().unwrap_err();
    assert_eq!(f.code(), Some(Code::ApplyFailed));
    assert_eq!(f.message(), "APPLY_FAILED: cannot promote");
    assert_eq!(out.said.len(), 1);
    let out = apply_failed(&sha, interrupt());
    assert_eq!(
        (out.said.len(), out.res.unwrap_err().exit()),
        (1, Exit::TempFail)
    );
    let out = apply_failed(&sha, Failure::temporary("OpenBao unavailable: refused"));
    assert!(out.said.is_empty());
}

fn interrupt() -> Failure {
    crate::apply::interrupted_during("up")
}

#[test]
fn a_failed_sha_is_held_until_the_retry_time_and_only_that_sha() {
    let f = FailedRelease {
        sha: "b".repeat(64),
        at: 1_000,
        rolled_back_to: "a".repeat(64),
        rollback_ok: true,
    };
    let b = "b".repeat(64);
    assert_eq!(held_until(&f, &b, 1_500, 3_600), Some(4_600));
    assert_eq!(held_until(&f, &b, 4_600, 3_600), None);
    assert_eq!(held_until(&f, &"c".repeat(64), 1_500, 3_600), None);
    // a huge retry time from the config saturates instead of wrapping to "now"
    assert_eq!(held_until(&f, &b, 1_500, u64::MAX), Some(u64::MAX));
}

#[test]
fn the_rollback_window_counts_from_the_apply() {
    assert!(in_window(1_000, 1_000, 600));
    assert!(in_window(1_000, 1_600, 600));
    assert!(!in_window(1_000, 1_601, 600));
    assert!(!in_window(1_000, 1_001, 0));
    // the wall clock stepped back: still the apply's window
    assert!(in_window(1_000, 900, 600));
}

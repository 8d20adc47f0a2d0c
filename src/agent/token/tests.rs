//! The token state machine against fakes of OpenBao, tenancy's lease and the clocks
//! (`agent/fakes.rs`, set up by `world.rs`): every rule of 0.1.6 / 0.3 with the calls it makes,
//! what it stores and what it revokes, in milliseconds. The real-parts suites (tests/tick.rs, tests/security.rs, tests/faults.rs)
//! cover the same rules on a real OpenBao with real TTLs.

mod world;

use world::World;

use crate::error::{Exit, Kind};
use crate::fakes::{ENV, HOUR};
use monky_host::state::TokenSource;

const BELOW: u64 = 900;

#[test]
fn a_stored_token_is_used_without_any_call() {
    let mut w = World::new();
    std::fs::write(
        w.cfg.token_path(),
        "hvs.stored-token-aaaaaaaaaaaaaaaaaaaa\n",
    )
    .unwrap();
    w.grant();
    w.run(async |tm, st, p| tm.load_or_bootstrap(st, p, false).await)
        .unwrap();
    assert_eq!(
        w.tm.bearer().as_str(),
        "hvs.stored-token-aaaaaaaaaaaaaaaaaaaa"
    );
    assert!(w.bao.take_calls().is_empty());
    // the grant waits for a `bootstrap --force`
    assert!(w.cfg.bootstrap_path.exists());
}

#[test]
fn bootstrap_stores_the_token_describes_it_and_deletes_the_grant() {
    let mut w = World::new();
    w.grant();
    w.run(async |tm, st, p| tm.load_or_bootstrap(st, p, false).await)
        .unwrap();
    assert_eq!(w.bao.take_calls(), ["login boot-grant"]);
    let tok = w.stored();
    assert_eq!(w.tm.bearer().as_str(), tok);
    assert!(!w.cfg.bootstrap_path.exists());
    // described on disk at once (a kill before the tick's save must not strand it)
    let meta = w.on_disk().token.unwrap();
    assert_eq!(meta.source, TokenSource::Bootstrap);
    assert_eq!(meta.env_id, ENV);
    assert_eq!(meta.expires_at, w.clock.wall.get() + 4 * HOUR);
    assert_eq!(meta.expires_boot, 1_000 + 4 * HOUR);
    assert_eq!(meta.boot_id, "boot-1");
}

#[test]
fn no_token_and_no_grant_is_a_clear_failure() {
    let mut w = World::new();
    let f = w
        .run(async |tm, st, p| tm.load_or_bootstrap(st, p, false).await)
        .unwrap_err();
    assert_eq!(f.exit(), Exit::Fail);
    assert!(f.message().contains("no credentials"), "{}", f.message());
    assert!(f.message().contains("bootstrap.jwt"), "{}", f.message());
    assert!(w.bao.take_calls().is_empty());
}

#[test]
fn a_forced_bootstrap_revokes_the_token_it_replaces() {
    let mut w = World::new();
    let old = w.leased();
    w.tm.forget();
    w.grant();
    w.run(async |tm, st, p| tm.load_or_bootstrap(st, p, true).await)
        .unwrap();
    assert_eq!(
        w.bao.take_calls(),
        ["login boot-grant".to_string(), format!("revoke {old}")]
    );
    assert!(!w.bao.alive(&old));
    assert_ne!(w.stored(), old);
    assert_eq!(w.on_disk().token.unwrap().source, TokenSource::Bootstrap);
}

#[test]
fn a_bootstrap_grant_for_another_env_is_revoked_and_never_stored() {
    let mut w = World::new();
    *w.bao.login_env.borrow_mut() = "env-b".into();
    w.grant();
    let f = w
        .run(async |tm, st, p| tm.load_or_bootstrap(st, p, false).await)
        .unwrap_err();
    assert_eq!(f.exit(), Exit::EnvMismatch);
    assert!(
        f.message().starts_with("AGENT_ENV_MISMATCH"),
        "{}",
        f.message()
    );
    assert!(f.message().contains("env-b"), "{}", f.message());
    let calls = w.bao.take_calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[1].starts_with("revoke hvs.token-1"), "{calls:?}");
    assert!(w.bao.live.borrow().is_empty());
    assert!(!w.cfg.token_path().exists());
    assert!(w.st.token.is_none());
}

#[test]
fn an_apply_reuses_a_valid_lease_derived_token() {
    let mut w = World::new();
    let tok = w.leased();
    let got = w.run(async |tm, st, p| tm.for_apply(st, p).await).unwrap();
    assert_eq!(got.as_str(), tok);
    assert_eq!(w.bao.take_calls(), ["lookup"]);
    assert!(w.leases.calls.borrow().is_empty());
}

#[test]
fn the_bootstrap_token_is_swapped_for_a_lease_once_and_revoked() {
    let mut w = World::new();
    w.bootstrap();
    let boot = w.stored();
    let got = w.run(async |tm, st, p| tm.for_apply(st, p).await).unwrap();
    assert_eq!(*w.leases.calls.borrow(), ["lease apply"]);
    assert_eq!(
        w.bao.take_calls(),
        [
            "lookup".to_string(),
            "login grant1".into(),
            format!("revoke {boot}")
        ]
    );
    assert_eq!(got.as_str(), w.stored());
    assert_ne!(got.as_str(), boot);
    assert_eq!(w.on_disk().token.unwrap().source, TokenSource::Lease);
    assert!(!w.st.lease_swap_due);
}

#[test]
fn a_lease_token_below_the_margin_is_replaced_for_an_apply() {
    let mut w = World::new();
    let old = w.leased();
    w.bao.live.borrow_mut().insert(old.clone(), BELOW);
    w.run(async |tm, st, p| tm.for_apply(st, p).await).unwrap();
    assert_eq!(*w.leases.calls.borrow(), ["lease apply"]);
    assert!(!w.bao.alive(&old));
}

#[test]
fn a_rate_limited_lease_applies_with_the_working_token_and_defers_the_swap() {
    let mut w = World::new();
    w.bootstrap();
    let boot = w.stored();
    w.leases.limited.set(true);
    let got = w.run(async |tm, st, p| tm.for_apply(st, p).await).unwrap();
    assert_eq!(got.as_str(), boot);
    assert!(w.st.lease_swap_due);
    assert!(w.bao.alive(&boot));
    // the next upkeep finishes the swap, with no lookup first
    w.leases.limited.set(false);
    w.bao.take_calls();
    w.run(async |tm, st, p| tm.upkeep(st, p).await).unwrap();
    assert_eq!(*w.leases.calls.borrow(), ["lease apply", "lease swap"]);
    assert_eq!(
        w.bao.take_calls(),
        ["login grant2".to_string(), format!("revoke {boot}")]
    );
    assert!(!w.st.lease_swap_due);
    assert_eq!(w.st.token.as_ref().unwrap().source, TokenSource::Lease);
}

#[test]
fn a_rate_limited_lease_with_a_dead_token_is_a_temporary_failure() {
    let mut w = World::new();
    let old = w.leased();
    w.bao.live.borrow_mut().remove(&old);
    w.leases.limited.set(true);
    let f = w
        .run(async |tm, st, p| tm.for_apply(st, p).await)
        .unwrap_err();
    assert_eq!(f.exit(), Exit::TempFail);
    assert_eq!(f.kind(), Kind::RateLimited);
    assert!(!w.st.lease_swap_due);
    assert_eq!(w.stored(), old);
}

#[test]
fn a_leased_grant_for_another_env_is_revoked_and_the_old_token_stays() {
    let mut w = World::new();
    let old = w.leased();
    w.bao.live.borrow_mut().insert(old.clone(), 10);
    *w.bao.login_env.borrow_mut() = "env-b".into();
    let f = w
        .run(async |tm, st, p| tm.for_apply(st, p).await)
        .unwrap_err();
    assert_eq!(f.exit(), Exit::EnvMismatch);
    assert!(
        f.message().contains("leased grant is for env-b"),
        "{}",
        f.message()
    );
    assert_eq!(w.tm.bearer().as_str(), old);
    assert_eq!(w.stored(), old);
    assert!(w.bao.alive(&old));
    // only the old token is left alive: the foreign one was revoked
    assert_eq!(w.bao.live.borrow().len(), 1);
}

#[test]
fn a_token_that_cannot_be_stored_is_revoked_and_the_old_one_stays_the_bearer() {
    let mut w = World::new();
    let old = w.leased();
    w.bao.live.borrow_mut().insert(old.clone(), 10);
    // bao.token cannot be replaced (a directory in its place: like a full filesystem, the
    // write fails after the login)
    std::fs::remove_file(w.cfg.token_path()).unwrap();
    std::fs::create_dir(w.cfg.token_path()).unwrap();
    let f = w
        .run(async |tm, st, p| tm.for_apply(st, p).await)
        .unwrap_err();
    assert_eq!(f.exit(), Exit::Fail);
    assert!(
        f.message().starts_with("STATE_WRITE_FAILED"),
        "{}",
        f.message()
    );
    assert_eq!(w.tm.bearer().as_str(), old);
    assert!(w.bao.alive(&old));
    assert_eq!(w.bao.live.borrow().len(), 1);
}

#[test]
fn openbao_down_during_an_apply_is_a_temporary_failure() {
    let mut w = World::new();
    w.leased();
    w.bao.down.set(true);
    let f = w
        .run(async |tm, st, p| tm.for_apply(st, p).await)
        .unwrap_err();
    assert_eq!(f.exit(), Exit::TempFail);
    assert!(
        f.message().contains("OpenBao unavailable"),
        "{}",
        f.message()
    );
    assert!(w.leases.calls.borrow().is_empty());
}

#[test]
fn upkeep_far_from_expiry_makes_no_call() {
    let mut w = World::new();
    w.leased();
    w.clock.advance(HOUR);
    w.run(async |tm, st, p| tm.upkeep(st, p).await).unwrap();
    assert!(w.bao.take_calls().is_empty());
    assert!(w.leases.calls.borrow().is_empty());
}

#[test]
fn upkeep_renews_below_the_margin_and_records_the_new_expiry() {
    let mut w = World::new();
    let tok = w.leased();
    w.clock.advance(4 * HOUR - BELOW + 1);
    w.bao.live.borrow_mut().insert(tok.clone(), BELOW - 1);
    w.run(async |tm, st, p| tm.upkeep(st, p).await).unwrap();
    assert_eq!(w.bao.take_calls(), ["lookup", "renew 14400"]);
    assert!(w.leases.calls.borrow().is_empty());
    let m = w.st.token.as_ref().unwrap();
    assert_eq!(m.expires_boot, w.clock.boot.get() + 14_400);
    assert_eq!(m.expires_at, w.clock.wall.get() + 14_400);
    assert_eq!(w.stored(), tok);
}

#[test]
fn a_renewal_capped_by_the_max_ttl_re_leases_and_revokes_the_old_token() {
    let mut w = World::new();
    let old = w.leased();
    w.clock.advance(4 * HOUR - 100);
    w.bao.live.borrow_mut().insert(old.clone(), 100);
    w.bao.renew_cap.set(300);
    w.run(async |tm, st, p| tm.upkeep(st, p).await).unwrap();
    assert_eq!(*w.leases.calls.borrow(), ["lease renew"]);
    let calls = w.bao.take_calls();
    assert_eq!(calls[..2], ["lookup", "renew 14400"]);
    assert_eq!(calls.last().unwrap(), &format!("revoke {old}"));
    assert_ne!(w.stored(), old);
    assert!(!w.bao.alive(&old));
}

#[test]
fn a_wall_clock_stepped_back_cannot_strand_the_token() {
    let mut w = World::new();
    let tok = w.leased();
    // the wall clock goes back a day while the boot clock runs on to near expiry
    w.clock.wall.set(w.clock.wall.get() - 86_400);
    w.clock.boot.set(w.clock.boot.get() + 4 * HOUR - 60);
    w.bao.live.borrow_mut().insert(tok, 60);
    w.run(async |tm, st, p| tm.upkeep(st, p).await).unwrap();
    assert_eq!(w.bao.take_calls(), ["lookup", "renew 14400"]);
}

#[test]
fn after_a_reboot_upkeep_asks_openbao_and_records_the_new_boot() {
    let mut w = World::new();
    w.leased();
    *w.clock.boot_id.borrow_mut() = "boot-2".into();
    w.clock.boot.set(30);
    w.run(async |tm, st, p| tm.upkeep(st, p).await).unwrap();
    assert_eq!(w.bao.take_calls(), ["lookup"]);
    let m = w.st.token.as_ref().unwrap();
    assert_eq!(m.boot_id, "boot-2");
    assert_eq!(m.expires_boot, 30 + 4 * HOUR);
}

#[test]
fn a_stored_token_pinned_to_another_env_is_refused() {
    let mut w = World::new();
    w.leased();
    w.st.token.as_mut().unwrap().env_id = "env-b".into();
    let f = w.tm.check_pin(&w.st).unwrap_err();
    assert_eq!(f.exit(), Exit::EnvMismatch);
    assert!(f.message().contains("pinned to env-b"), "{}", f.message());
    w.st.token.as_mut().unwrap().env_id = ENV.into();
    assert!(w.tm.check_pin(&w.st).is_ok());
}

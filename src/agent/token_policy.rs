//! The token state machine's decisions, as pure functions of what the agent knows (the cached
//! view, OpenBao's answers, the boot clock), so every rule is unit-tested without OpenBao. The
//! I/O around them is in `token.rs`.

use monky_host::state::{BootClock, TokenMeta};

/// Which token an apply reads its secrets with (0.1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ForApply {
    /// The lease-derived token is valid for longer than the renewal margin.
    Reuse,
    /// Lease a new one; with a 429, fall back to the current token if it still works.
    Lease { fallback: bool },
}

/// `is_lease`: the stored token came from a lease (not the bootstrap grant); `ttl`: OpenBao's
/// answer for it (`None`: it no longer works).
pub(super) fn for_apply(is_lease: bool, ttl: Option<u64>, renew_below: u64) -> ForApply {
    match ttl {
        Some(t) if is_lease && t > renew_below => ForApply::Reuse,
        Some(_) => ForApply::Lease { fallback: true },
        None => ForApply::Lease { fallback: false },
    }
}

/// The first step of the upkeep after a tick, decided without an OpenBao call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Upkeep {
    /// The boot clock says the token is far from expiry.
    Nothing,
    /// A lease swap was deferred by a 429: do it now.
    Swap,
    /// Near expiry, or no boot clock reading for it (a reboot, pre-0.3 state): ask OpenBao.
    Lookup,
}

pub(super) fn upkeep(
    meta: &TokenMeta,
    clock: &BootClock,
    renew_below: u64,
    swap_due: bool,
) -> Upkeep {
    if swap_due {
        return Upkeep::Swap;
    }
    match meta.remaining_on(clock) {
        Some(left) if left > renew_below => Upkeep::Nothing,
        _ => Upkeep::Lookup,
    }
}

/// After OpenBao said how long the token has left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AfterLookup {
    /// Enough left: record it, nothing else.
    Keep,
    /// Renew it (renew-self with this increment).
    Renew { increment: u64 },
    /// It cannot be renewed: lease a new one.
    NewLease,
}

pub(super) fn after_lookup(ttl: u64, renew_below: u64, renewable: bool) -> AfterLookup {
    if ttl > renew_below {
        AfterLookup::Keep
    } else if renewable {
        AfterLookup::Renew {
            increment: renew_below.max(3600).saturating_mul(4),
        }
    } else {
        AfterLookup::NewLease
    }
}

/// A renewal that could not push the TTL past the margin hit the max TTL: re-lease.
pub(super) fn renewal_capped(got: u64, renew_below: u64) -> bool {
    got <= renew_below
}

#[cfg(test)]
mod tests {
    use super::*;
    use monky_host::state::{TokenMeta, TokenSource};

    const BELOW: u64 = 900;

    fn meta(expires_boot: u64, boot: &str) -> TokenMeta {
        TokenMeta {
            source: TokenSource::Lease,
            obtained_at: 0,
            expires_at: 0,
            renewable: true,
            grant_jti: String::new(),
            env_id: "e".into(),
            expires_boot,
            boot_id: boot.into(),
        }
    }

    fn clock(secs: u64, boot: &str) -> BootClock {
        BootClock {
            secs,
            boot_id: boot.into(),
        }
    }

    #[test]
    fn an_apply_reuses_a_valid_lease_token_and_leases_otherwise() {
        assert_eq!(for_apply(true, Some(BELOW + 1), BELOW), ForApply::Reuse);
        // below the margin: a fresh lease, the current token as the 429 fallback
        assert_eq!(
            for_apply(true, Some(BELOW), BELOW),
            ForApply::Lease { fallback: true }
        );
        // the bootstrap token is swapped for a lease once, however long it has
        assert_eq!(
            for_apply(false, Some(86_400), BELOW),
            ForApply::Lease { fallback: true }
        );
        // a dead token leaves nothing to fall back on when the lease is rate-limited
        assert_eq!(
            for_apply(true, None, BELOW),
            ForApply::Lease { fallback: false }
        );
    }

    #[test]
    fn upkeep_asks_openbao_only_near_expiry_or_without_a_boot_reading() {
        let m = meta(10_000, "b1");
        assert_eq!(
            upkeep(&m, &clock(5_000, "b1"), BELOW, false),
            Upkeep::Nothing
        );
        assert_eq!(
            upkeep(&m, &clock(9_100, "b1"), BELOW, false),
            Upkeep::Lookup
        );
        assert_eq!(
            upkeep(&m, &clock(20_000, "b1"), BELOW, false),
            Upkeep::Lookup
        );
        // a reboot: the boot clock restarted, its reading says nothing about this token
        assert_eq!(upkeep(&m, &clock(5, "b2"), BELOW, false), Upkeep::Lookup);
        // state written before 0.3 has no boot expiry
        assert_eq!(
            upkeep(&meta(0, ""), &clock(5, "b1"), BELOW, false),
            Upkeep::Lookup
        );
        // a deferred swap (429 during the apply) is finished first
        assert_eq!(upkeep(&m, &clock(5_000, "b1"), BELOW, true), Upkeep::Swap);
    }

    #[test]
    fn a_wall_clock_step_cannot_strand_the_token() {
        // the wall clock says the token has days left (it was stepped back), the boot clock
        // says it is about to expire: the boot clock decides
        let mut m = meta(10_000, "b1");
        m.expires_at = u64::MAX / 2;
        assert_eq!(
            upkeep(&m, &clock(9_500, "b1"), BELOW, false),
            Upkeep::Lookup
        );
        // and a wall clock stepped forward changes nothing either
        m.expires_at = 1;
        assert_eq!(
            upkeep(&m, &clock(1_000, "b1"), BELOW, false),
            Upkeep::Nothing
        );
    }

    #[test]
    fn renewal_then_re_lease_at_the_max_ttl() {
        assert_eq!(after_lookup(BELOW + 1, BELOW, true), AfterLookup::Keep);
        assert_eq!(
            after_lookup(BELOW, BELOW, true),
            AfterLookup::Renew { increment: 14_400 }
        );
        assert_eq!(after_lookup(10, BELOW, false), AfterLookup::NewLease);
        // renew-self capped by the role's max TTL gives back less than asked
        assert!(renewal_capped(600, BELOW));
        assert!(!renewal_capped(3_600, BELOW));
        // a huge margin from the config does not overflow the increment
        assert_eq!(
            after_lookup(0, u64::MAX, true),
            AfterLookup::Renew {
                increment: u64::MAX
            }
        );
    }
}

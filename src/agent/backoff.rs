//! Backoff for a failing release: when a sha that failed may be tried again, and what a held
//! tick reports meanwhile (`RETRY_HELD`).

use super::*;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// A failing sha waits for its next attempt (backoff): the running release is reported as
    /// in a heartbeat, with `RETRY_HELD: <sha12> until <RFC 3339> (attempt <n>)`; exit 0.
    pub(super) async fn retry_held(
        &mut self,
        r: &state::RetryHold,
        containers: Vec<Container>,
    ) -> report::Outcome {
        let detail = format!(
            "RETRY_HELD: {} until {} (attempt {})",
            r.sha.get(..12).unwrap_or(&r.sha),
            rollback::rfc3339(r.next_at),
            r.attempts + 1
        );
        info!("{detail}");
        self.running_with(&detail, containers).await
    }

    /// After an apply attempt: a failure (exit 1) holds the sha back for 1, 2, 4, … minutes
    /// (capped at `retry_backoff_max_s`, with a per-box jitter so a fleet does not retry in
    /// step); success, or a temporary failure, clears the hold.
    pub(super) fn note_attempt(&mut self, sha: &str, res: &Result<Exit, Failure>) {
        let rolled_back = self.cfg.auto_rollback
            && self
                .state
                .failed_release
                .as_ref()
                .is_some_and(|f| f.sha == sha);
        match res {
            // an automatic rollback holds the sha itself (`retry_failed_after_s`); 0 = no backoff
            Err(_) if rolled_back || self.cfg.retry_backoff_max_s == 0 => self.state.retry = None,
            Err(f) if f.exit() == Exit::Fail => {
                let attempts = match &self.state.retry {
                    Some(r) if r.sha == sha => r.attempts + 1,
                    _ => 1,
                };
                let wait = retry_wait(attempts, self.cfg.retry_backoff_max_s, &self.host, sha);
                self.state.retry = Some(state::RetryHold {
                    sha: sha.to_string(),
                    attempts,
                    next_at: self.wall().saturating_add(wait),
                });
            }
            Ok(_) => self.state.retry = None,
            Err(_) => {}
        }
    }
}

/// Seconds before attempt `attempts + 1`: 60 · 2^(attempts−1), capped at `max`, plus up to a
/// fifth more, fixed for this box, sha and attempt.
fn retry_wait(attempts: u32, max: u64, host: &str, sha: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let base = 60u64
        .saturating_mul(1u64 << attempts.saturating_sub(1).min(32))
        .min(max.max(1));
    let h = Sha256::digest(format!("{host}\0{sha}\0{attempts}").as_bytes());
    let r = u64::from_be_bytes(h[..8].try_into().unwrap_or([0; 8]));
    (base + r % (base / 5 + 1)).min(max.max(1))
}

#[cfg(test)]
mod tests {
    use super::retry_wait;

    #[test]
    fn the_wait_doubles_is_capped_and_is_jittered_per_box() {
        let w: Vec<u64> = (1..=8).map(|a| retry_wait(a, 3600, "box-a", "s")).collect();
        for (i, base) in [60u64, 120, 240, 480, 960, 1920, 3600, 3600]
            .iter()
            .enumerate()
        {
            assert!(
                w[i] >= *base && w[i] <= (base + base / 5).min(3600),
                "{i}: {}",
                w[i]
            );
        }
        assert_eq!(
            retry_wait(3, 3600, "box-a", "s"),
            retry_wait(3, 3600, "box-a", "s")
        );
        let spread: std::collections::BTreeSet<u64> = (0..50)
            .map(|i| retry_wait(3, 3600, &format!("box-{i}"), "s"))
            .collect();
        assert!(spread.len() > 10, "a fleet spreads: {spread:?}");
        assert_eq!(retry_wait(40, 600, "b", "s"), 600);
    }
}

//! Automatic rollback (`auto_rollback`, issue 11): when an apply ends `UNHEALTHY` or
//! `COMPOSE_UP_FAILED` and the release that was `current` was healthy before it, that release
//! is brought back up from its own directory — its `.env` as it was, so no lease and no
//! OpenBao read — and `current` points back at it. Tenancy gets two reports: `failed` for the
//! new sha (`<failure>; rolled back to <old sha>`), then `applied` for the old one
//! (`ROLLED_BACK_FROM: <new sha>`). The failed sha is remembered in `state.json` and not applied
//! again until tenancy's desired sha changes or `retry_failed_after_s` has passed. If the old
//! release does not come back healthy either, both reports say so and the box is left as it is.

use zeroize::Zeroizing;

use super::*;
use crate::state::FailedRelease;
use crate::tenancy::ReportResult;

/// The apply's own `failed` report, held back while a rollback may still add to it.
#[derive(Default)]
pub(super) struct Hold {
    pub(super) holding: bool,
    pub(super) held: Option<Held>,
}

pub(super) struct Held {
    pub(super) detail: String,
    pub(super) log_tail: Zeroizing<String>,
}

/// The failures a rollback answers: the new release was started (or starting it failed) and
/// is not healthy. Refusals before `up` never touched the running release.
fn rollback_worthy(f: &Failure) -> bool {
    f.exit() == Exit::Fail
        && matches!(
            f.code(),
            Some("UNHEALTHY" | "COMPOSE_UP_FAILED" | "CRASH_LOOP")
        )
}

/// Whether `now` is within `window_s` seconds after `at` (a clock that went back counts as
/// inside: the apply was recent).
fn in_window(at: u64, now: u64, window_s: u64) -> bool {
    now.saturating_sub(at) <= window_s
}

/// Until when a sha that failed and was rolled back is not applied again (`None`: apply it).
pub(super) fn held_until(
    f: &FailedRelease,
    sha: &str,
    now: u64,
    retry_after_s: u64,
) -> Option<u64> {
    let until = f.at.saturating_add(retry_after_s);
    (f.sha == sha && now < until).then_some(until)
}

pub(super) fn rfc3339(unix: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(unix)).to_string()
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// The `apply` arm of the tick: a sha that failed and was rolled back is held; otherwise
    /// the apply runs, and rolls back by itself when `auto_rollback` allows it.
    pub(super) async fn apply_or_roll_back(
        &mut self,
        sha: &str,
        before: Vec<Container>,
    ) -> Result<Exit, Failure> {
        // the hold belongs to auto_rollback: with it off, the seed's behaviour (retry each tick)
        if let Some(f) = self
            .state
            .failed_release
            .clone()
            .filter(|_| self.cfg.auto_rollback)
        {
            if let Some(until) = held_until(&f, sha, self.wall(), self.cfg.retry_failed_after_s) {
                return self.held(&f, until, before).await;
            }
        }
        let Some(old) = self.rollback_candidate(sha, &before) else {
            let res = self.apply(sha).await;
            self.note_applied(sha, None, &res);
            return res;
        };
        self.now.rb = Hold {
            holding: true,
            held: None,
        };
        let res = self.apply(sha).await;
        let held = std::mem::take(&mut self.now.rb).held;
        match res {
            Err(f) if rollback_worthy(&f) => self.roll_back(sha, &old, f, held).await,
            other => {
                // not a failure a rollback answers: the apply's report goes out as it was
                if let Some(h) = held {
                    self.report(Some(sha), ReportResult::Failed, &h.detail, &h.log_tail)
                        .await;
                }
                self.note_applied(sha, Some(&old), &other);
                other
            }
        }
    }

    /// After an apply that ended applied: when, and which healthy release ran before it (the
    /// target of a crash loop a heartbeat finds within `rollback_window_s`).
    fn note_applied(&mut self, sha: &str, before: Option<&str>, res: &Result<Exit, Failure>) {
        if res.is_ok() && self.state.applied_sha.as_deref() == Some(sha) {
            self.state.applied_at = Some(self.wall());
            self.state.rollback_target = before.map(str::to_string);
        }
    }

    /// A heartbeat's crash loop: the release to go back to when `auto_rollback` is on, the
    /// running release was applied within `rollback_window_s`, and the one before it (healthy
    /// then) is still on disk. None outside the window: the heartbeat reports the crash loop.
    pub(super) fn late_rollback_target(&self, sha: &str) -> Option<String> {
        if !self.cfg.auto_rollback {
            return None;
        }
        let old = self.state.rollback_target.clone()?;
        let at = self.state.applied_at?;
        if !in_window(at, self.wall(), self.cfg.rollback_window_s) {
            info!(
                "auto_rollback: {} was applied over {}s ago (rollback_window_s); no rollback",
                short(Some(sha)),
                self.cfg.rollback_window_s
            );
            return None;
        }
        let rel = self.cfg.releases_dir().join(&old);
        let on_disk = rel.join("compose.yaml").is_file() && rel.join(".env").is_file();
        (old != sha && crate::tenancy::is_sha(&old) && on_disk).then_some(old)
    }

    /// The release to go back to: `auto_rollback` is on, a different sha was applied, it is
    /// still `current` with its directory and `.env` on disk, and it was healthy before this
    /// tick.
    pub(super) fn rollback_candidate(&self, sha: &str, before: &[Container]) -> Option<String> {
        if !self.cfg.auto_rollback {
            return None;
        }
        let old = self.state.applied_sha.clone()?;
        if old == sha || !crate::tenancy::is_sha(&old) {
            return None;
        }
        let rel = self.cfg.releases_dir().join(&old);
        if !rel.join("compose.yaml").is_file() || !rel.join(".env").is_file() {
            info!(
                "auto_rollback: release {} is not on disk; no rollback",
                short(Some(&old))
            );
            return None;
        }
        // the target is what runs (the applied sha, healthy before this tick), not wherever a
        // link points
        let (services, jobs) = self.release_shape(&rel);
        let mut before = before.to_vec();
        runtime::mark_jobs(&mut before, &jobs);
        if !runtime::converged(&services, &before) {
            info!(
                "auto_rollback: {} was not healthy before this apply; no rollback",
                short(Some(&old))
            );
            return None;
        }
        Some(old)
    }

    pub(super) async fn roll_back(
        &mut self,
        new: &str,
        old: &str,
        f: Failure,
        held: Option<Held>,
    ) -> Result<Exit, Failure> {
        let (detail, log_tail) = match held {
            Some(h) => (h.detail, h.log_tail),
            None => (f.message().to_string(), Zeroizing::new(String::new())),
        };
        warn!(
            "apply of {} failed; auto_rollback: bringing {} back",
            short(Some(new)),
            short(Some(old))
        );
        let back = self.bring_back(old, None).await;
        self.state.failed_release = Some(FailedRelease {
            sha: new.to_string(),
            at: self.wall(),
            rolled_back_to: old.to_string(),
            rollback_ok: back.is_ok(),
        });
        *self
            .state
            .counters
            .rollbacks
            .entry(if back.is_ok() { "ok" } else { "failed" }.to_string())
            .or_default() += 1;
        // the suffix must survive the report's 900-character cut
        let cut = |d: &str, suffix: &str| {
            format!(
                "{}{suffix}",
                truncate_head(&redact::redact(d), DETAIL_MAX.saturating_sub(suffix.len()))
            )
        };
        // the new sha's failure first, with how the rollback went
        let suffix = match &back {
            Ok(_) => format!("; rolled back to {old}"),
            Err(_) => format!("; rollback to {old} failed"),
        };
        self.report(
            Some(new),
            ReportResult::Failed,
            &cut(&detail, &suffix),
            &log_tail,
        )
        .await;
        match back {
            Ok(n) => {
                info!(
                    "rolled back to {} ({n} containers healthy); {} is not retried before {}",
                    short(Some(old)),
                    short(Some(new)),
                    rfc3339(self.wall().saturating_add(self.cfg.retry_failed_after_s))
                );
                self.report(
                    Some(old),
                    ReportResult::Applied,
                    &format!("ROLLED_BACK_FROM: {new}"),
                    "",
                )
                .await;
                Err(Failure::fail(format!("{}{suffix}", f.message())))
            }
            Err(why) => {
                warn!("rollback to {} failed: {why}", short(Some(old)));
                let why_old = format!("ROLLBACK_FAILED: {why} (rolling back from {new})");
                self.report(Some(old), ReportResult::Failed, &why_old, "")
                    .await;
                let msg = format!("{}{suffix}: {why}", f.message());
                Err(if self.interrupted() {
                    Failure::temporary(msg)
                } else {
                    Failure::fail(msg)
                })
            }
        }
    }

    /// `compose up` of a release (or of `only` these services) from its own directory (its `.env` as it is: no lease, no
    /// OpenBao read), then `current` → it, then the settle wait. `Ok(containers)` when healthy;
    /// otherwise what went wrong. The rollback's and `heal_drift`'s way back.
    pub(super) async fn bring_back(
        &mut self,
        old: &str,
        only: Option<&[String]>,
    ) -> Result<usize, String> {
        let rel = self.cfg.releases_dir().join(old);
        let meta: bundle::Meta = release::read_release_file(&rel, "bundle.json")
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let privileged = meta.agent.allow_privileged && self.cfg.permit_privileged;
        // compose reads that release's .env: its values are masked in whatever it prints
        register_env_values(&rel);
        self.now.seen = None; // compose changes what runs
        let mut compose = Compose::detect(&self.cfg, &self.docker_wait)
            .await
            .map_err(|e| e.to_string())?;
        compose.set_interrupt(self.interrupt.clone());
        compose.set_deadline(Some(self.now.deadline));
        let guard = self
            .guard(&mut compose, &rel, privileged)
            .await
            .map_err(|f| f.message().to_string())?;
        let up = match only {
            Some(services) => {
                info!(
                    "compose up -d --no-deps {} in {}",
                    services.join(" "),
                    rel.display()
                );
                compose.up_only(&rel, services).await
            }
            None => {
                info!("compose up -d --remove-orphans in {}", rel.display());
                compose.up(&rel).await
            }
        };
        let denied = guard.as_ref().map(|g| g.denied()).unwrap_or_default();
        drop(guard);
        if let Err(e) = up {
            if !denied.is_empty() {
                // a refusal with its own code (a name, an image) keeps it
                if policy::rules::split_code(&denied[0]).is_some() {
                    return Err(denied[0].clone());
                }
                return Err(format!("ENGINE_REFUSED: {}", denied.join("; ")));
            }
            return Err(match e {
                RuntimeError::Interrupted(step) => format!("INTERRUPTED: {step} (SIGTERM)"),
                e => format!("COMPOSE_UP_FAILED: {}", pull_diagnosis(e.output())),
            });
        }
        // what runs now is the old release's: `current` says so, healthy or not
        state::swap_symlink(&rel, &self.cfg.current_link()).map_err(|e| e.to_string())?;
        if self.state.applied_sha.as_deref() != Some(old) {
            // a heartbeat's rollback: the applied sha follows what runs
            self.state.applied_sha = Some(old.to_string());
            self.state.applied_serial = Some(meta.serial);
            self.state.applied_at = Some(self.wall());
        }
        self.state.rollback_target = None;
        let (services, jobs) = self.release_shape(&rel);
        let cs = match self.wait_settled(&services, &jobs).await {
            Settled::Healthy(cs) => {
                self.note_restarts(&cs);
                return Ok(cs.len());
            }
            Settled::JobFailed(d) | Settled::CrashLoop(d) => return Err(d),
            Settled::Unhealthy(cs) | Settled::Interrupted(cs) => cs,
        };
        let bad: Vec<String> = cs
            .iter()
            .filter(|c| unwell(c))
            .map(|c| format!("{} {}/{}", c.service, c.state, c.health))
            .collect();
        Err(super::unhealthy_detail(self.cfg.healthy_timeout_s, &bad))
    }

    /// A sha that failed and was rolled back, still desired: not applied again yet. The running
    /// release is reported as in a heartbeat, with why the desired one waits.
    async fn held(
        &mut self,
        f: &FailedRelease,
        until: u64,
        before: Vec<Container>,
    ) -> Result<Exit, Failure> {
        info!(
            "{} failed and was rolled back; not retried before {} (or until the desired sha changes)",
            short(Some(&f.sha)),
            rfc3339(until)
        );
        let converged = !before.is_empty()
            && runtime::converged(&self.expected_services(&self.running_release()), &before);
        match self.state.applied_sha.clone() {
            Some(applied) if f.rollback_ok && converged => {
                let detail = format!(
                    "ROLLED_BACK_FROM: {}; not retried before {}",
                    f.sha,
                    rfc3339(until)
                );
                self.report(Some(&applied), ReportResult::Applied, &detail, "")
                    .await;
                Ok(Exit::Ok)
            }
            // the rollback did not bring a healthy release back: the heartbeat says how it is
            _ => self.heartbeat(before).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_started_release_that_failed_is_rolled_back() {
        assert!(rollback_worthy(&Failure::fail(
            "UNHEALTHY: not healthy within 20s: web"
        )));
        assert!(rollback_worthy(&Failure::fail(
            "COMPOSE_UP_FAILED: port taken"
        )));
        // refused before `up`: the running release was never touched
        assert!(!rollback_worthy(&Failure::fail(
            "COMPOSE_PULL_FAILED: denied"
        )));
        assert!(!rollback_worthy(&Failure::fail(
            "PRIVILEGED_REFUSED: web: privileged"
        )));
        // SIGTERM or a dead OpenBao: the next tick converges, nothing to roll back
        assert!(!rollback_worthy(&Failure::temporary(
            "UNHEALTHY: interrupted"
        )));
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
}

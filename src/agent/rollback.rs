//! Automatic rollback (`auto_rollback`, issue 11): when an apply ends `UNHEALTHY` or
//! `COMPOSE_UP_FAILED` and the release that was `current` was healthy before it, that release
//! is brought back up from its own directory — its `.env` as it was, so no lease and no
//! OpenBao read — and `current` points back at it. Tenancy gets two reports: `failed` for the
//! new sha (`<failure>; rolled back to <old sha>`), then `applied` for the old one
//! (`ROLLED_BACK_FROM: <new sha>`). The failed sha is remembered in `state.json` and not applied
//! again until tenancy's desired sha changes or `retry_failed_after_s` has passed. If the old
//! release does not come back healthy either, both reports say so and the box is left as it is.

use super::*;
use crate::error::Code;
use monky_host::state::FailedRelease;
use monky_wire::tenancy::ReportResult;
use report::Outcome;

/// The failures a rollback answers: the new release was started (or starting it failed) and
/// is not healthy. Refusals before `up` never touched the running release.
fn rollback_worthy(f: &Failure) -> bool {
    f.exit() == Exit::Fail
        && matches!(
            f.code(),
            Some(Code::Unhealthy | Code::ComposeUpFailed | Code::CrashLoop)
        )
}

/// An apply's failure as the tick reports it: a failure of the box (exit 1), or a SIGTERM,
/// with its code — `APPLY_FAILED` when it carries none; a temporary one (OpenBao down, a rate
/// limit) is not reported: the next tick tries again.
fn apply_failed(sha: &str, f: Failure) -> Outcome {
    if f.exit() == Exit::Fail {
        let f = if f.code().is_some() {
            f
        } else {
            f.with_code(Code::ApplyFailed)
        };
        return Outcome::failed(Some(sha), f);
    }
    if f.code() == Some(Code::Interrupted) {
        return Outcome::failed(Some(sha), f);
    }
    Outcome::quiet(Err(f))
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

/// The old sha's `applied` detail after a rollback (PROTOCOL 0.6: `; RESTORED: <volumes>`).
fn rolled_back_from(new: &str, restored: &[String]) -> String {
    if restored.is_empty() {
        format!("ROLLED_BACK_FROM: {new}")
    } else {
        format!("ROLLED_BACK_FROM: {new}; RESTORED: {}", restored.join(", "))
    }
}

pub(super) fn rfc3339(unix: u64) -> String {
    monky_boundary::statement::rfc3339(i64::try_from(unix).unwrap_or(i64::MAX))
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// The `apply` arm of the tick: a sha that failed and was rolled back is held; otherwise
    /// the apply runs, and rolls back by itself when `auto_rollback` allows it.
    pub(super) async fn apply_or_roll_back(
        &mut self,
        sha: &str,
        before: Vec<Container>,
    ) -> Outcome {
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
        let old = self.rollback_candidate(sha, &before);
        let res = self.apply(sha).await;
        self.note_applied(sha, old.as_deref(), &res);
        match (res, old) {
            (Ok(e), _) => Outcome::says(Some(sha), ReportResult::Applied, "", Ok(e)),
            (Err(f), Some(old)) if rollback_worthy(&f) => self.roll_back(sha, &old, f).await,
            // a failed migration job is undone too when its data can be put back
            (Err(f), Some(old))
                if f.exit() == Exit::Fail
                    && f.code() == Some(Code::JobFailed)
                    && self.restore_due(sha, &old) =>
            {
                self.roll_back(sha, &old, f).await
            }
            (Err(f), _) => {
                self.data_settled(sha);
                apply_failed(sha, f)
            }
        }
    }

    /// After an apply that ended applied: when, and which healthy release ran before it (the
    /// target of a crash loop a heartbeat finds within `rollback_window_s`).
    fn note_applied(&mut self, sha: &str, before: Option<&str>, res: &Result<Exit, Failure>) {
        if res.is_ok() && self.state.applied_sha.as_deref() == Some(sha) {
            self.state.applied_at = Some(self.wall());
            self.state.replaced_healthy = before.map(str::to_string);
        }
    }

    /// A heartbeat's crash loop: the release to go back to when `auto_rollback` is on, the
    /// running release was applied within `rollback_window_s`, and the one before it (healthy
    /// then) is still on disk. None outside the window: the heartbeat reports the crash loop.
    pub(super) fn late_rollback_target(&self, sha: &str) -> Option<String> {
        if !self.cfg.auto_rollback {
            return None;
        }
        let old = self.state.replaced_healthy.clone()?;
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
        (old != sha && monky_wire::tenancy::is_sha(&old) && on_disk).then_some(old)
    }

    /// The release to go back to: `auto_rollback` is on, a different sha was applied, it is
    /// still `current` with its directory and `.env` on disk, and it was healthy before this
    /// tick.
    pub(super) fn rollback_candidate(&self, sha: &str, before: &[Container]) -> Option<String> {
        if !self.cfg.auto_rollback {
            return None;
        }
        let old = self.state.applied_sha.clone()?;
        if old == sha || !monky_wire::tenancy::is_sha(&old) {
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

    /// Brings `old` back after `new` failed with `f`: failed for `new` (with how the rollback
    /// went), then applied for `old` — or `ROLLBACK_FAILED` for it.
    pub(super) async fn roll_back(&mut self, new: &str, old: &str, f: Failure) -> Outcome {
        warn!(
            "{} failed; auto_rollback: bringing {} back",
            short(Some(new)),
            short(Some(old))
        );
        // data first, then the old release (never the old release on the new one's data)
        let restored = if self.restore_due(new, old) {
            match self.restore_data().await {
                Ok(v) => v,
                Err(why) => return self.restore_failed(new, old, f, &why),
            }
        } else {
            Vec::new()
        };
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
        let suffix = match &back {
            Ok(_) => format!("; rolled back to {old}"),
            Err(_) => format!("; rollback to {old} failed"),
        };
        let detail = format!(
            "{}{suffix}",
            redact::redact_cut(
                f.message(),
                DETAIL_MAX.saturating_sub(suffix.len()),
                redact::Keep::Head
            )
        );
        let tail = Zeroizing::new(f.log_tail().to_string());
        match back {
            Ok(n) => {
                info!(
                    "rolled back to {} ({n} containers healthy); {} is not retried before {}",
                    short(Some(old)),
                    short(Some(new)),
                    rfc3339(self.wall().saturating_add(self.cfg.retry_failed_after_s))
                );
                let f = f.map_message(|m| format!("{m}{suffix}"));
                Outcome::quiet(Err(f))
                    .and(Some(new), ReportResult::Failed, &detail, &tail)
                    .and(
                        Some(old),
                        ReportResult::Applied,
                        &rolled_back_from(new, &restored),
                        "",
                    )
            }
            Err(why) => {
                warn!("rollback to {} failed: {why}", short(Some(old)));
                let why_old = format!("ROLLBACK_FAILED: {why} (rolling back from {new})");
                let interrupted = self.interrupted();
                let f = f.map_message(|m| format!("{m}{suffix}: {why}"));
                let f = if interrupted {
                    f.with_kind(Kind::Temporary)
                } else {
                    f
                };
                Outcome::quiet(Err(f))
                    .and(Some(new), ReportResult::Failed, &detail, &tail)
                    .and(Some(old), ReportResult::Failed, &why_old, "")
            }
        }
    }

    /// A restore that failed: the new sha's `failed` report says so, the old release is not
    /// started on half-restored data, the tick exits 1; the next tick tries the restore again
    /// (the data journal says it is due).
    fn restore_failed(&mut self, new: &str, old: &str, f: Failure, why: &str) -> Outcome {
        warn!("RESTORE_FAILED: {why}; {} is not started", short(Some(old)));
        self.state.failed_release = Some(FailedRelease {
            sha: new.to_string(),
            at: self.wall(),
            rolled_back_to: old.to_string(),
            rollback_ok: false,
        });
        *self
            .state
            .counters
            .rollbacks
            .entry("failed".to_string())
            .or_default() += 1;
        let suffix = format!("; RESTORE_FAILED: {why}");
        let detail = format!(
            "{}{suffix}",
            redact::redact_cut(
                f.message(),
                DETAIL_MAX.saturating_sub(suffix.len()),
                redact::Keep::Head
            )
        );
        let tail = Zeroizing::new(f.log_tail().to_string());
        let f = f
            .map_message(|m| format!("{m}{suffix}"))
            .with_code(Code::RestoreFailed);
        Outcome::quiet(Err(f)).and(Some(new), ReportResult::Failed, &detail, &tail)
    }

    /// `compose up` of a release (or of `only` these services) from its own directory (its
    /// `.env` as it is: no lease, no OpenBao read), then `current` → it, then the settle wait.
    /// `Ok(containers)` when healthy; otherwise what went wrong, with its code. The rollback's
    /// and `heal_drift`'s way back.
    pub(super) async fn bring_back(
        &mut self,
        old: &str,
        only: Option<&[String]>,
    ) -> Result<usize, Failure> {
        let rel = self.cfg.releases_dir().join(old);
        let meta: bundle::Meta = release::read_release_file(&rel, "bundle.json")
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let privileged = meta.agent.allow_privileged && self.cfg.permit_privileged;
        // compose reads that release's .env: its values are masked in whatever it prints
        register_env_values(&rel);
        let mut compose = self.compose().await?;
        let guard = self.guard(&mut compose, &rel, privileged).await?;
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
                if let Some(r) = denied.reported() {
                    return Err(Failure::from(r));
                }
            }
            return Err(match e {
                RuntimeError::Interrupted(step) => Failure::coded(
                    Kind::Temporary,
                    Code::Interrupted,
                    format!("{step} (SIGTERM)"),
                ),
                e => Failure::coded(
                    Kind::Fail,
                    Code::ComposeUpFailed,
                    pull_diagnosis(e.output()),
                ),
            });
        }
        // what runs now is the old release's: `current` says so, healthy or not
        state::swap_symlink(&rel, &self.cfg.current_link())
            .map_err(|e| Failure::fail(e.to_string()).caused_by(e))?;
        if self.state.applied_sha.as_deref() != Some(old) {
            // a heartbeat's rollback: the applied sha follows what runs
            self.state.applied_sha = Some(old.to_string());
            self.state.applied_serial = Some(meta.serial);
            // its statement was accepted once; its life is not kept per release
            self.state.statement_expires_at = None;
            self.state.applied_at = Some(self.wall());
        }
        self.state.replaced_healthy = None;
        let (services, jobs) = self.release_shape(&rel);
        let cs = match self.wait_settled(&services, &jobs).await {
            Settled::Healthy(cs) => {
                self.note_restarts(&cs);
                return Ok(cs.len());
            }
            Settled::JobFailed(d) => return Err(Failure::fail(d).tagged(Code::JobFailed)),
            Settled::CrashLoop(d) => return Err(Failure::fail(d).tagged(Code::CrashLoop)),
            Settled::Unhealthy(cs) | Settled::Interrupted(cs) => cs,
        };
        let bad: Vec<String> = cs
            .iter()
            .filter(|c| unwell(c))
            .map(|c| format!("{} {}/{}", c.service, c.state, c.health))
            .collect();
        Err(
            Failure::fail(super::unhealthy_detail(self.cfg.healthy_timeout_s, &bad))
                .tagged(Code::Unhealthy),
        )
    }

    /// A sha that failed and was rolled back, still desired: not applied again yet. The running
    /// release is reported as in a heartbeat, with why the desired one waits.
    async fn held(&mut self, f: &FailedRelease, until: u64, before: Vec<Container>) -> Outcome {
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
                Outcome::applied(&applied, &detail)
            }
            // the rollback did not bring a healthy release back: the heartbeat says how it is
            _ => self.heartbeat(before).await,
        }
    }
}

#[cfg(test)]
mod tests;

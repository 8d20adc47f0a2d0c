//! The actions that are not an apply: heartbeat, deferred (outside every window), down.

use super::*;
use crate::tenancy::ReportResult;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// Outside every maintenance window: the running release is reported with why the desired
    /// one waits; exit 0. Nothing is fetched, leased or touched.
    pub(super) async fn deferred(
        &mut self,
        sha: &str,
        window: &str,
        next: &jiff::Zoned,
        containers: Vec<Container>,
    ) -> Result<Exit, Failure> {
        let detail = format!(
            "DEFERRED: {} waits for {window} (next {})",
            sha.get(..12).unwrap_or(sha),
            next.strftime("%Y-%m-%dT%H:%M:%S%:z")
        );
        info!("{detail}");
        self.running_with(&detail, containers).await
    }

    /// The running release reported as `applied` with why the desired one waits, or — when it
    /// is not well either — the heartbeat's report; exit 0 unless the heartbeat says otherwise.
    async fn running_with(
        &mut self,
        detail: &str,
        containers: Vec<Container>,
    ) -> Result<Exit, Failure> {
        let Some(applied) = self.state.applied_sha.clone() else {
            return Ok(Exit::Ok);
        };
        if containers.is_empty()
            || !runtime::well(
                &self.expected_services(&self.running_release()),
                &containers,
            )
        {
            return self.heartbeat(containers).await;
        }
        self.report(Some(&applied), ReportResult::Applied, detail, "")
            .await;
        Ok(Exit::Ok)
    }

    /// A failing sha waits for its next attempt (backoff): the running release is reported as
    /// in a heartbeat, with `RETRY_HELD: <sha12> until <RFC 3339> (attempt <n>)`; exit 0.
    pub(super) async fn retry_held(
        &mut self,
        r: &state::RetryHold,
        containers: Vec<Container>,
    ) -> Result<Exit, Failure> {
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
                    next_at: state::now() + wait,
                });
            }
            Ok(_) => self.state.retry = None,
            Err(_) => {}
        }
    }

    pub(super) async fn heartbeat(&mut self, containers: Vec<Container>) -> Result<Exit, Failure> {
        let Some(sha) = self.state.applied_sha.clone() else {
            debug!("nothing applied yet; the check-in was the heartbeat");
            return Ok(Exit::Ok);
        };
        let (expected, jobs) = self.release_shape(&self.running_release());
        if containers.is_empty() {
            // an empty list may mean the engine itself is down: say which
            if let Err(e) = self.engine.containers(&self.cfg.compose_project).await {
                let detail = format!("DOCKER_UNAVAILABLE: {e}");
                warn!("heartbeat: {detail}");
                self.report(Some(&sha), ReportResult::Failed, &detail, "")
                    .await;
                return Err(Failure::fail(detail));
            }
        }
        // a restart count that rose since the last tick: a crash loop, even if it runs now
        let since = self.state.last_checkin.unwrap_or(0).saturating_sub(120);
        let mut crash = None;
        for c in containers.iter().filter(|c| !c.job) {
            let before = self.state.restarts.get(&c.id).copied();
            if let (Some(b), Some(n)) = (before, c.restarts) {
                if n > b && crash.is_none() {
                    crash = Some(self.crash_loop(c, since).await);
                }
            }
        }
        self.state.restarts = containers
            .iter()
            .filter_map(|c| Some((c.id.clone(), c.restarts?)))
            .collect();
        if self.cfg.heal_drift && crash.is_none() {
            let gone = drifted(&expected, &jobs, &containers);
            if !gone.is_empty() {
                let detail = format!("HEALED: {}", gone.join(", "));
                info!("heal_drift: {} missing or stopped; up -d", gone.join(", "));
                match self.bring_back(&sha).await {
                    Ok(_) => {
                        self.report(Some(&sha), ReportResult::Applied, &detail, "")
                            .await;
                        return Ok(Exit::Ok);
                    }
                    Err(why) => warn!("heal_drift: {why}"),
                }
            }
        }
        match crash.or_else(|| unhealthy(&expected, &containers)) {
            None => {
                self.report(Some(&sha), ReportResult::Applied, "", "").await;
                Ok(Exit::Ok)
            }
            Some(detail) => {
                warn!("heartbeat: {detail}");
                self.report(Some(&sha), ReportResult::Failed, &detail, "")
                    .await;
                Err(Failure::fail(detail))
            }
        }
    }

    pub(super) fn expected_services(&self, dir: &Path) -> Vec<String> {
        self.release_shape(dir).0
    }

    /// A release's services and which of them are one-shot jobs, from its compose.yaml (read
    /// without following a symlink).
    pub(super) fn release_shape(
        &self,
        dir: &Path,
    ) -> (Vec<String>, std::collections::BTreeSet<String>) {
        let Some(doc) = release::read_release_file(dir, "compose.yaml")
            .and_then(|b| compose_check::parse(&b).ok())
        else {
            return Default::default();
        };
        let services = compose_check::check(&doc, true).unwrap_or_default();
        (services, compose_check::jobs(&doc))
    }

    pub(super) async fn down(&mut self, tenancy_prod: bool, purge: bool) -> Result<Exit, Failure> {
        let DownPlan { volumes, kept } = down_plan(
            tenancy_prod || self.cfg.prod == Some(true),
            purge || self.cfg.volumes_on_absent == VolumesOnAbsent::Purge,
        );
        if kept {
            warn!("down: volume purge requested but this is a prod environment: volumes are kept");
        }
        let running = self.containers().await;
        let sha = self.state.applied_sha.clone();
        if running.is_empty() && sha.is_none() {
            debug!("down: nothing running");
            self.report(None, ReportResult::Down, "", "").await;
            return Ok(Exit::Ok);
        }
        self.now.seen = None; // compose changes what runs
        let mut compose = Compose::detect(&self.cfg, &self.docker_wait)
            .await
            .map_err(Failure::from)?;
        let cur = self.cfg.current_link();
        let dir = if cur.join("compose.yaml").exists() {
            Some(cur.as_path())
        } else {
            None
        };
        // compose reads that release's .env again: its values must be masked in what it prints
        register_env_values(&cur);
        let guard = self.guard(&mut compose, &cur, false).await?;
        info!(
            "compose down --remove-orphans{}",
            if volumes { " -v" } else { "" }
        );
        let res = compose.down(dir, volumes).await;
        if let Some(d) = guard.as_ref().map(|g| g.denied()).filter(|d| !d.is_empty()) {
            warn!("down: the engine guard refused {}", d.join("; "));
        }
        drop(guard);
        match res {
            Ok(_) => {
                self.state.applied_sha = None;
                self.state.applied_serial = None;
                let detail = if kept {
                    "volumes kept: prod environment"
                } else {
                    ""
                };
                self.report(sha.as_deref(), ReportResult::Down, detail, "")
                    .await;
                Ok(Exit::Ok)
            }
            Err(e) => {
                let msg = format!("COMPOSE_DOWN_FAILED: {}", pull_diagnosis(e.output()));
                self.report(sha.as_deref(), ReportResult::Failed, &msg, e.output())
                    .await;
                Err(Failure::fail(msg))
            }
        }
    }
}

/// Services of the running release that `up -d` would bring back: long-running ones with no
/// container or a stopped one (a job that is done, or failed, is not drift).
fn drifted(
    expected: &[String],
    jobs: &std::collections::BTreeSet<String>,
    cs: &[Container],
) -> Vec<String> {
    expected
        .iter()
        .filter(|s| !jobs.contains(*s))
        .filter(|s| {
            let mine: Vec<&Container> = cs.iter().filter(|c| &c.service == *s).collect();
            mine.is_empty()
                || mine
                    .iter()
                    .any(|c| !c.job && matches!(c.state.as_str(), "exited" | "created" | "dead"))
        })
        .cloned()
        .collect()
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

/// The running release's health as the heartbeat reports it: `None` when converged, else the
/// `UNHEALTHY` detail naming every expected service without a well container and every
/// container that is not well (an extra one counts too: `converged` says so).
fn unhealthy(expected: &[String], cs: &[Container]) -> Option<String> {
    if runtime::well(expected, cs) {
        return None;
    }
    if let Some(d) = cs.iter().find_map(runtime::job_failed) {
        return Some(d);
    }
    let mut bad: Vec<&str> = expected
        .iter()
        .filter(|s| !cs.iter().any(|c| &c.service == *s && !unwell(c)))
        .map(|s| s.as_str())
        .collect();
    for c in cs.iter().filter(|c| unwell(c)) {
        if !bad.contains(&c.service.as_str()) {
            bad.push(&c.service);
        }
    }
    Some(if bad.is_empty() {
        "UNHEALTHY: no containers running".to_string()
    } else {
        format!("UNHEALTHY: {}", bad.join(", "))
    })
}

/// What `down` does with volumes: purged only when asked (by tenancy or `volumes_on_absent`)
/// and never in prod, where the request is `kept` and said so.
#[derive(Debug, PartialEq, Eq)]
struct DownPlan {
    volumes: bool,
    kept: bool,
}

fn down_plan(prod: bool, purge: bool) -> DownPlan {
    DownPlan {
        volumes: purge && !prod,
        kept: purge && prod,
    }
}

#[cfg(test)]
mod backoff_tests {
    use super::{drifted, retry_wait};
    use crate::agent::test_container as c;

    #[test]
    fn drift_is_a_missing_or_stopped_long_running_service_never_a_job() {
        let expected: Vec<String> = ["db", "migrate", "web", "worker"]
            .map(String::from)
            .to_vec();
        let jobs = ["migrate".to_string()].into_iter().collect();
        let mut done = c("migrate", "exited", "");
        done.job = true;
        done.exit_code = Some(0);
        let cs = vec![c("db", "running", "healthy"), done, c("web", "exited", "")];
        assert_eq!(drifted(&expected, &jobs, &cs), vec!["web", "worker"]);
        assert!(drifted(&expected[..1], &jobs, &cs).is_empty());
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_container as c;

    #[test]
    fn the_heartbeat_names_every_service_that_is_not_well() {
        let exp = vec!["web".to_string(), "db".to_string()];
        assert_eq!(
            unhealthy(
                &exp,
                &[c("web", "running", "healthy"), c("db", "running", "")]
            ),
            None
        );
        // db missing, web unhealthy
        assert_eq!(
            unhealthy(&exp, &[c("web", "running", "unhealthy")]).as_deref(),
            Some("UNHEALTHY: web, db")
        );
        // an extra container that is down makes the release unconverged: it is named
        assert_eq!(
            unhealthy(
                &exp,
                &[
                    c("web", "running", "healthy"),
                    c("db", "running", "healthy"),
                    c("worker", "exited", "")
                ]
            )
            .as_deref(),
            Some("UNHEALTHY: worker")
        );
        // nothing running and no service list (an unreadable compose.yaml): still a reason
        assert_eq!(
            unhealthy(&[], &[]).as_deref(),
            Some("UNHEALTHY: no containers running")
        );
    }

    #[test]
    fn down_never_purges_volumes_in_prod() {
        assert_eq!(
            down_plan(false, false),
            DownPlan {
                volumes: false,
                kept: false
            }
        );
        assert_eq!(
            down_plan(false, true),
            DownPlan {
                volumes: true,
                kept: false
            }
        );
        assert_eq!(
            down_plan(true, true),
            DownPlan {
                volumes: false,
                kept: true
            }
        );
        assert_eq!(
            down_plan(true, false),
            DownPlan {
                volumes: false,
                kept: false
            }
        );
    }
}

//! The actions that are not an apply: heartbeat, deferred (outside every window), down.

use super::*;
use crate::tenancy::ReportResult;

impl Agent {
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
        let Some(applied) = self.state.applied_sha.clone() else {
            return Ok(Exit::Ok);
        };
        if containers.is_empty()
            || !runtime::converged(
                &self.expected_services(&self.cfg.current_link()),
                &containers,
            )
        {
            // the running release is not healthy either: the heartbeat says so
            return self.heartbeat(containers).await;
        }
        self.report(Some(&applied), ReportResult::Applied, &detail, "")
            .await;
        Ok(Exit::Ok)
    }

    pub(super) async fn heartbeat(&mut self, containers: Vec<Container>) -> Result<Exit, Failure> {
        let Some(sha) = self.state.applied_sha.clone() else {
            debug!("nothing applied yet; the check-in was the heartbeat");
            return Ok(Exit::Ok);
        };
        let expected: Vec<String> = self.expected_services(&self.cfg.current_link());
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
        if runtime::converged(&expected, &containers) {
            self.report(Some(&sha), ReportResult::Applied, "", "").await;
            Ok(Exit::Ok)
        } else {
            let bad: Vec<String> = expected
                .iter()
                .filter(|s| {
                    !containers.iter().any(|c| {
                        &c.service == *s
                            && c.state == "running"
                            && (c.health.is_empty() || c.health == "healthy")
                    })
                })
                .cloned()
                .collect();
            let detail = format!("UNHEALTHY: {}", bad.join(", "));
            warn!("heartbeat: {detail}");
            self.report(Some(&sha), ReportResult::Failed, &detail, "")
                .await;
            Err(Failure::fail(detail))
        }
    }

    pub(super) fn expected_services(&self, dir: &Path) -> Vec<String> {
        std::fs::read(dir.join("compose.yaml"))
            .ok()
            .and_then(|b| compose_check::parse(&b).ok())
            .and_then(|v| compose_check::check(&v, true).ok())
            .unwrap_or_default()
    }

    pub(super) async fn down(&mut self, tenancy_prod: bool, purge: bool) -> Result<Exit, Failure> {
        let prod = tenancy_prod || self.cfg.prod == Some(true);
        let want_purge = purge || self.cfg.volumes_on_absent == VolumesOnAbsent::Purge;
        let volumes = want_purge && !prod;
        if want_purge && prod {
            warn!("down: volume purge requested but this is a prod environment: volumes are kept");
        }
        let running = self.containers().await;
        let sha = self.state.applied_sha.clone();
        if running.is_empty() && sha.is_none() {
            debug!("down: nothing running");
            self.report(None, ReportResult::Down, "", "").await;
            return Ok(Exit::Ok);
        }
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
        register_env_values(&cur.join(".env"));
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
                let detail = if want_purge && prod {
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

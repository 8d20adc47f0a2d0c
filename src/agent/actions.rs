//! The actions that are not an apply: heartbeat, deferred (outside every window), down.

use super::*;
use crate::error::Code;
use monky_wire::tenancy::ReportResult;
use report::Outcome;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// Outside every maintenance window: the running release is reported with why the desired
    /// one waits; exit 0. Nothing is fetched, leased or touched.
    pub(super) async fn deferred(
        &mut self,
        sha: &str,
        window: &str,
        next: &jiff::Zoned,
        containers: Vec<Container>,
    ) -> Outcome {
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
    pub(super) async fn running_with(
        &mut self,
        detail: &str,
        containers: Vec<Container>,
    ) -> Outcome {
        let Some(applied) = self.state.applied_sha.clone() else {
            return Outcome::quiet(Ok(Exit::Ok));
        };
        if containers.is_empty()
            || !runtime::well(
                &self.expected_services(&self.running_release()),
                &containers,
            )
        {
            return self.heartbeat(containers).await;
        }
        Outcome::applied(&applied, detail)
    }

    pub(super) async fn heartbeat(&mut self, containers: Vec<Container>) -> Outcome {
        let Some(sha) = self.state.applied_sha.clone() else {
            debug!("nothing applied yet; the check-in was the heartbeat");
            return Outcome::quiet(Ok(Exit::Ok));
        };
        let (expected, jobs) = self.release_shape(&self.running_release());
        if containers.is_empty() {
            // an empty list may mean the engine itself is down: say which
            if let Err(e) = self.engine.containers(&self.cfg.compose_project).await {
                let f = Failure::coded(Kind::Fail, Code::DOCKER_UNAVAILABLE, &e);
                warn!("heartbeat: {}", f.message());
                return Outcome::failed(Some(&sha), f);
            }
        }
        // a restart count that rose since the last tick: a crash loop, even if it runs now
        let since = self.state.last_checkin.unwrap_or(0).saturating_sub(120);
        let mut crash = None;
        for c in containers.iter().filter(|c| !c.job) {
            let before = self.state.restarts.get(&c.id).copied();
            if let (Some(b), Some(n)) = (before, c.restarts) {
                if n > b && crash.is_none() {
                    let d = self.crash_loop(c, since).await;
                    crash = Some(Failure::fail(d).tagged(Code::CrashLoop));
                }
            }
        }
        self.state.restarts = containers
            .iter()
            .filter_map(|c| Some((c.id.clone(), c.restarts?)))
            .collect();
        if let Some(f) = crash.take() {
            // soon after the apply, with auto_rollback: back to the release that ran before
            warn!("heartbeat: {}", f.message());
            if let Some(old) = self.late_rollback_target(&sha) {
                return self.roll_back(&sha, &old, f).await;
            }
            return Outcome::failed(Some(&sha), f);
        }
        if self.cfg.heal_drift {
            let gone = drifted(&expected, &jobs, &containers);
            if !gone.is_empty() {
                let detail = format!("HEALED: {}", gone.join(", "));
                info!("heal_drift: {} missing or stopped; up -d", gone.join(", "));
                match self.bring_back(&sha, Some(&gone)).await {
                    Ok(_) => return Outcome::applied(&sha, &detail),
                    Err(f) => warn!("heal_drift: {}", f.message()),
                }
            }
        }
        match unhealthy(&expected, &containers) {
            None => Outcome::applied(&sha, &self.statement_note(&sha)),
            Some(f) => {
                warn!("heartbeat: {}", f.message());
                Outcome::failed(Some(&sha), f)
            }
        }
    }

    /// `STATEMENT_EXPIRED: <sha12> expired <RFC 3339>` once the running release's statement
    /// is past its life on this box's clock (a frozen box: tenancy and the metrics see it);
    /// what runs keeps running. Empty otherwise.
    pub(super) fn statement_note(&self, sha: &str) -> String {
        match self.state.statement_expires_at {
            Some(t) if i64::try_from(self.wall()).unwrap_or(i64::MAX) >= t => {
                let d = monky_boundary::statement::expired(sha, t).detail;
                warn!("the running release's statement expired: {d}");
                format!("STATEMENT_EXPIRED: {d}")
            }
            _ => String::new(),
        }
    }

    /// What `down` does with volumes on this box, given tenancy's flags (the tick's and
    /// `plan`'s one rule).
    pub(super) fn down_plan(&self, tenancy_prod: bool, purge: bool) -> DownPlan {
        down_plan(
            tenancy_prod || self.cfg.prod == Some(true),
            purge || self.cfg.volumes_on_absent == VolumesOnAbsent::Purge,
        )
    }

    pub(super) fn expected_services(&self, dir: &Path) -> Vec<String> {
        self.release_shape(dir).0
    }

    /// A release's services and which of them are one-shot jobs, from its compose.yaml (read
    /// without following a symlink).
    pub(super) fn release_shape(&self, dir: &Path) -> ReleaseShape {
        let root = release::release_root(dir);
        let mut memo = self.now.shapes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, shape)) = memo.iter().find(|(d, _)| *d == root) {
            return shape.clone();
        }
        let Ok(bytes) =
            monky_boundary::beneath::read(&root, Path::new("compose.yaml"), bundle::MAX_FILE_BYTES)
        else {
            return Default::default();
        };
        let hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        let build = concat!(env!("CARGO_PKG_VERSION"), "+", env!("MONKY_GIT_REV"));
        let known = |m: &state::ShapeMemo| m.compose_sha256 == hash && m.build == build;
        let shape = match self.state.shape.as_ref().filter(|m| known(m)) {
            Some(m) => (m.services.clone(), m.jobs.clone()),
            None => {
                let Ok(doc) = compose_check::parse(&bytes) else {
                    return Default::default();
                };
                let services = compose_check::check(&doc, true).unwrap_or_default();
                let jobs = compose_check::jobs(&doc);
                *self.now.learned.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(state::ShapeMemo {
                        compose_sha256: hash,
                        build: build.to_string(),
                        services: services.clone(),
                        jobs: jobs.clone(),
                    });
                (services, jobs)
            }
        };
        memo.push((root, shape.clone()));
        shape
    }

    pub(super) async fn down(&mut self, tenancy_prod: bool, purge: bool) -> Outcome {
        let DownPlan { volumes, kept } = self.down_plan(tenancy_prod, purge);
        if kept {
            warn!("down: volume purge requested but this is a prod environment: volumes are kept");
        }
        let running = self.containers().await;
        let sha = self.state.applied_sha.clone();
        if running.is_empty() && sha.is_none() {
            debug!("down: nothing running");
            return Outcome::says(None, ReportResult::Down, "", Ok(Exit::Ok));
        }
        let mut compose = match self.compose().await {
            Ok(c) => c,
            Err(f) => return Outcome::quiet(Err(f)),
        };
        let cur = self.cfg.current_link();
        let dir = if cur.join("compose.yaml").exists() {
            Some(cur.as_path())
        } else {
            None
        };
        // compose reads that release's .env again: its values must be masked in what it prints
        register_env_values(&cur);
        let guard = match self.guard(&mut compose, &cur, false).await {
            Ok(g) => g,
            Err(f) => return Outcome::quiet(Err(f)),
        };
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
                if volumes {
                    // a purge takes the data's snapshots with the data (never on prod:
                    // `volumes` is false there)
                    self.purge_snapshots();
                }
                self.state.applied_sha = None;
                self.state.applied_serial = None;
                self.state.statement_expires_at = None;
                self.state.applied_at = None;
                self.state.replaced_healthy = None;
                let detail = if kept {
                    "volumes kept: prod environment"
                } else {
                    ""
                };
                Outcome::says(sha.as_deref(), ReportResult::Down, detail, Ok(Exit::Ok))
            }
            Err(e) => Outcome::failed(
                sha.as_deref(),
                apply::compose_failed(Code::ComposeDownFailed, &e),
            ),
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

/// The running release's health as the heartbeat reports it: `None` when converged, else the
/// `UNHEALTHY` detail naming every expected service without a well container and every
/// container that is not well (an extra one counts too: `converged` says so).
fn unhealthy(expected: &[String], cs: &[Container]) -> Option<Failure> {
    if runtime::well(expected, cs) {
        return None;
    }
    if let Some(d) = cs.iter().find_map(runtime::job_failed) {
        return Some(Failure::fail(d).tagged(Code::JobFailed));
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
    let what = if bad.is_empty() {
        "no containers running".to_string()
    } else {
        bad.join(", ")
    };
    Some(Failure::coded(Kind::Fail, Code::Unhealthy, what))
}

/// What `down` does with volumes: purged only when asked (by tenancy or `volumes_on_absent`)
/// and never in prod, where the request is `kept` and said so.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct DownPlan {
    pub(super) volumes: bool,
    kept: bool,
}

fn down_plan(prod: bool, purge: bool) -> DownPlan {
    DownPlan {
        volumes: purge && !prod,
        kept: purge && prod,
    }
}

#[cfg(test)]
mod drift_tests {
    use super::drifted;
    use crate::test_container as c;

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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_container as c;

    #[test]
    fn the_heartbeat_names_every_service_that_is_not_well() {
        let exp = vec!["web".to_string(), "db".to_string()];
        assert_eq!(
            unhealthy(
                &exp,
                &[c("web", "running", "healthy"), c("db", "running", "")]
            )
            .map(|f| f.to_string()),
            None
        );
        // db missing, web unhealthy
        assert_eq!(
            unhealthy(&exp, &[c("web", "running", "unhealthy")])
                .map(|f| f.to_string())
                .as_deref(),
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
            .map(|f| f.to_string())
            .as_deref(),
            Some("UNHEALTHY: worker")
        );
        // nothing running and no service list (an unreadable compose.yaml): still a reason
        assert_eq!(
            unhealthy(&[], &[]).map(|f| f.to_string()).as_deref(),
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

//! The tick: lock, state, check-in, dispatch to an action, its reports, token upkeep; then
//! `state.json` saved; then the extras tenancy can ask for (self-update staging, diagnostics)
//! and reclaim, and a save of what they changed; then the metrics file.

use super::*;
use monky_wire::tenancy::Action;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// One tick under the lock. A second concurrent tick returns `Ok` (after the lock's short
    /// grace, `state::try_lock`).
    pub async fn tick(&mut self) -> Result<Exit, Failure> {
        self.prepare_dirs()?;
        let Some(_lock) = state::try_lock(&self.cfg.lock_path())? else {
            info!(
                "another tick holds {}; nothing to do",
                self.cfg.lock_path().display()
            );
            return Ok(Exit::Ok);
        };
        self.state = State::load(&self.cfg.state_path())?;
        if self.state.env_id.is_empty() {
            self.state.env_id = self.cfg.env_id.clone();
        }
        // whatever this tick does, what the running release holds is masked in all it prints
        register_env_values(&self.running_release());
        register_docker_config(&self.cfg.docker_config_dir());
        self.egress.register_secrets();
        let started = std::time::Instant::now();
        self.now = TickCtx::start(self.cfg.tick_budget_s);
        let applied_before = self.state.applied_sha.clone();
        let checkin_before = self.state.last_checkin;
        let mut extras = None;
        let res = self.tick_locked(&mut extras).await;
        let res = self.clock_noted(res);
        let res = match res {
            Err(f) if f.exit() == Exit::TempFail && self.cfg.laptop_mode => {
                info!("offline (laptop mode): {}", redact::redact(f.message()));
                Ok(Exit::Ok)
            }
            other => other,
        };
        // The failure message is masked while the values this tick read are still registered:
        // it goes to the journal and state.json.
        let res = res.map_err(|f| f.map_message(|m| redact::redact(&m)));
        if let Err(f) = &res {
            self.state.last_error = Some(f.message().to_string());
        }
        if let Some(m) = self
            .now
            .learned
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            self.state.shape = Some(m);
        }
        self.count(&res, applied_before.as_deref());
        self.mark_ticked(&res, self.state.last_checkin != checkin_before);
        // The action's outcome is saved before any extra runs (issue 31): a kill or an OOM in
        // an extra cannot leave state.json naming the release that ran before.
        monky_base::testhook::pause("before-save");
        if let Err(e) = self.state.save_tick(&self.cfg.state_path()) {
            self.scrub();
            // the tick's own failure stays what the journal and the exit code say
            return Err(match res {
                Err(f) => f.map_message(|m| format!("{m}; and {e}")),
                Ok(_) => Failure::from(e),
            });
        }
        if let Some(x) = extras {
            let saved = serde_json::to_vec(&self.state).ok();
            self.extras(x).await;
            // again only for what the extras changed
            if serde_json::to_vec(&self.state).ok() != saved {
                if let Err(e) = self.state.save_tick(&self.cfg.state_path()) {
                    self.scrub();
                    return Err(match res {
                        Err(f) => f.map_message(|m| format!("{m}; and {e}")),
                        Ok(_) => Failure::from(e),
                    });
                }
            }
        }
        self.scrub();
        if !self.cfg.metrics_textfile.is_empty() {
            monky_base::testhook::pause("extra:metrics");
            self.write_metrics(&res, started.elapsed().as_secs_f64())
                .await;
        }
        res
    }

    /// The end of every tick: the token and the registered values forgotten, staging cleared.
    fn scrub(&mut self) {
        self.tokens.forget();
        redact::forget_all();
        if let Ok(rd) = std::fs::read_dir(self.cfg.staging_dir()) {
            for e in rd.flatten() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// What tenancy's answer asked for beyond the action, run after the tick's state is saved:
    /// self-update staging, `--prune`, reclaim, diagnostics. Each is bounded on its own.
    async fn extras(&mut self, x: Extras) {
        monky_base::testhook::pause("extra:update");
        let upd = self.agent_update(x.agent.as_ref(), x.urgent).await;
        for said in upd.said {
            self.send(said).await;
        }
        if self.prune && x.action_ok {
            self.prune_releases().await;
        }
        self.after_action(x.collect.as_deref()).await;
    }

    /// The counters the metrics file reports, kept in state.json across ticks.
    pub(super) fn count(&mut self, res: &Result<Exit, Failure>, applied_before: Option<&str>) {
        let c = &mut self.state.counters;
        let exit = match res {
            Ok(e) => *e,
            Err(f) => f.exit(),
        };
        *c.ticks.entry((exit as i32).to_string()).or_default() += 1;
        match res {
            Ok(Exit::Ok) => {
                c.last_success = Some(state::now());
                let applied = self.state.applied_sha.as_deref();
                if applied.is_some() && applied != applied_before {
                    c.applies += 1;
                }
            }
            Err(f) if f.exit() == Exit::Fail => {
                if let Some(code) = f.code() {
                    *c.failures.entry(code.as_str().to_string()).or_default() += 1;
                }
            }
            _ => {}
        }
    }

    pub(super) async fn write_metrics(&self, res: &Result<Exit, Failure>, duration_s: f64) {
        let containers = self
            .engine
            .containers(&self.cfg.compose_project)
            .await
            .unwrap_or_default();
        let now = state::now();
        let st = &self.state;
        let text = monky_host::metrics::render(&monky_host::metrics::Snapshot {
            version: VERSION,
            transport: self.cfg.transport.as_str(),
            ziti_sdk: &transport::sdk::sdk_version().unwrap_or_else(|| "none".into()),
            duration_s,
            end_time: now,
            exit_code: match res {
                Ok(e) => *e as i32,
                Err(f) => f.exit() as i32,
            },
            counters: &st.counters,
            applied_serial: st.applied_serial,
            in_sync: st.applied_sha.is_some() && st.applied_sha == st.desired_sha,
            agent_desired: st.agent_update.desired.as_deref(),
            statement_expires_at: st.statement_expires_at,
            token_ttl_s: st
                .token
                .as_ref()
                .map(|t| seconds_between(now, t.expires_at)),
            containers: &containers,
            instance: self.cfg.instance.label(),
        });
        let path = Path::new(&self.cfg.metrics_textfile);
        if let Err(e) = monky_host::metrics::write(path, &text) {
            warn!("metrics file: {e}");
        }
    }

    /// Check-in, the action, its reports and token upkeep; what the answer asked for beyond
    /// the action goes into `extras` for after the save.
    pub(super) async fn tick_locked(
        &mut self,
        extras: &mut Option<Extras>,
    ) -> Result<Exit, Failure> {
        self.load_or_bootstrap_token(false).await?;
        self.tokens.check_pin(&self.state)?;
        // what a killed tick left half-done with the data comes first (PROTOCOL 0.6)
        self.recover_data().await;
        let containers = self.containers().await;
        self.now.seen = Some(containers.clone());
        let resp = match self.checkin(&containers).await {
            Ok(r) => r,
            Err(TenancyError::Unauthenticated { .. }) if self.cfg.bootstrap_path.exists() => {
                // a re-revealed kit's grant is waiting: use it, then try once more
                warn!("tenancy refused the stored token; a bootstrap grant is present, logging in with it");
                self.load_or_bootstrap_token(true).await?;
                self.checkin(&containers).await.map_err(Failure::from)?
            }
            Err(e) => return Err(Failure::from(e)),
        };
        self.state.last_checkin = Some(state::now());
        self.state.desired_sha = resp.desired_sha.clone();
        if self
            .state
            .failed_release
            .as_ref()
            .is_some_and(|f| resp.desired_sha.as_deref() != Some(f.sha.as_str()))
        {
            // tenancy changed its mind: a rolled-back sha is not held any more
            self.state.failed_release = None;
        }
        self.state.last_action = Some(resp.action.to_string());
        info!(
            "checkin: action={} desired={} applied={}",
            resp.action,
            short(resp.desired_sha.as_deref()),
            short(self.state.applied_sha.as_deref())
        );
        if self
            .state
            .retry
            .as_ref()
            .is_some_and(|r| resp.desired_sha.as_deref() != Some(r.sha.as_str()))
        {
            // a new desired sha starts afresh
            self.state.retry = None;
        }
        let out = match resp.action {
            Action::Apply => {
                let sha = resp.desired_sha.clone().unwrap_or_default();
                let held = self
                    .state
                    .retry
                    .clone()
                    .filter(|r| !resp.urgent && self.wall() < r.next_at);
                match (self.windows.wait(&self.windows.now()), held) {
                    (Some((window, next)), _) if !resp.urgent => {
                        self.deferred(&sha, &window, &next, containers).await
                    }
                    (_, Some(r)) => self.retry_held(&r, containers).await,
                    _ => match self.lock_gate(&sha, resp.urgent, &containers).await {
                        (Some(deferred), _) => deferred,
                        (None, note) => {
                            self.state.counters.apply_attempts += 1;
                            let out = self.apply_or_roll_back(&sha, containers).await;
                            self.note_attempt(&sha, &out.res);
                            out.noted(note)
                        }
                    },
                }
            }
            Action::Down => match self.lock_gate("down", resp.urgent, &containers).await {
                (Some(deferred), _) => deferred,
                (None, note) => self.down(resp.prod, resp.purge_volumes).await.noted(note),
            },
            _ => self.heartbeat(containers).await,
        };
        // the one place that talks to tenancy about what the action did
        for said in out.said {
            self.send(said).await;
        }
        let result = out.res;
        if let Err(f) = self.token_upkeep().await {
            warn!("token upkeep: {}", f.message());
        }
        // after the action and its save, never inside it
        *extras = Some(Extras {
            agent: resp.agent,
            urgent: resp.urgent,
            collect: resp.collect,
            action_ok: result.is_ok(),
        });
        result
    }

    pub(super) async fn checkin(
        &self,
        containers: &[Container],
    ) -> Result<monky_wire::tenancy::CheckinResponse, TenancyError> {
        let token = self.tokens.bearer();
        self.c
            .tenancy
            .checkin(
                &token,
                &Checkin {
                    env_id: &self.cfg.env_id,
                    agent_version: VERSION,
                    applied_sha: self.state.applied_sha.as_deref(),
                    host: &self.host,
                    containers,
                    clock_skew_s: self.state.counters.clock_skew_s,
                },
            )
            .await
    }

    /// The project's containers as check-ins and reports carry them: jobs of the release
    /// `current` names marked, restart counts from the engine.
    pub(super) async fn containers(&self) -> Vec<Container> {
        let mut cs = self.listed().await;
        let (_, jobs) = self.release_shape(&self.cfg.current_link());
        runtime::mark_jobs(&mut cs, &jobs);
        self.fill_restarts(&mut cs).await;
        cs
    }

    /// The project's containers, one Engine API request.
    pub(super) async fn listed(&self) -> Vec<Container> {
        match self.engine.containers(&self.cfg.compose_project).await {
            Ok(c) => c,
            Err(e) => {
                warn!("{e}");
                Vec::new()
            }
        }
    }
}

/// The parts of a check-in answer the tick acts on after its state is saved.
pub(super) struct Extras {
    agent: Option<monky_wire::tenancy::AgentOffer>,
    urgent: bool,
    collect: Option<String>,
    action_ok: bool,
}

/// `to - from` in seconds, negative when `to` is past; saturating (both come from state.json,
/// whose numbers came from OpenBao).
fn seconds_between(from: u64, to: u64) -> i64 {
    let (from, to) = (i128::from(from), i128::from(to));
    i64::try_from(to - from).unwrap_or(if to > from { i64::MAX } else { i64::MIN })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_huge_expiry_saturates_instead_of_overflowing() {
        assert_eq!(super::seconds_between(100, 160), 60);
        assert_eq!(super::seconds_between(160, 100), -60);
        assert_eq!(super::seconds_between(0, u64::MAX), i64::MAX);
        assert_eq!(super::seconds_between(u64::MAX, 0), i64::MIN);
    }
}

//! `monky-deployd plan [--json]` (issue 11): what the next apply would do, without doing any of
//! it. One check-in with the stored token, the desired bundle fetched and its sha (and signature)
//! verified, then every check the apply runs — the static policy, the compose normalised pass
//! with placeholder values for the secrets, disk, serial/rollback, registry credential presence
//! — and a per-service diff against the running containers (compose's own config hashes against
//! their `com.docker.compose.config-hash` labels). Never: a lease, an OpenBao request, a `.env`,
//! a container change, a report. Exit 0 if the apply would proceed, 1 if a refusal would fire,
//! 75 on transport trouble. The JSON (`--json`) is documented in docs/OPERATIONS.md.

use std::collections::BTreeMap;

use serde::Serialize;

use super::*;
use monky_wire::tenancy::Action;

mod apply;
mod output;
#[cfg(test)]
mod tests;

use output::*;

/// Version of the `--json` document: bumped only when a field changes meaning or goes away.
pub const PLAN_SCHEMA: u32 = 1;

/// What every secret is replaced with in the normalised pass.
const PLACEHOLDER: &str = "monky-plan-placeholder";

/// Runs the plan and prints it; the process exit code.
pub async fn plan(cfg: Config, json: bool) -> Exit {
    let env_id = cfg.env_id.clone();
    let res = async {
        let mut agent = Agent::new(cfg, false)?;
        agent.plan_locked().await
    }
    .await;
    match res {
        Ok(p) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&p).unwrap_or_default());
            } else {
                print_text(&p);
            }
            if p.exit_code == 0 {
                Exit::Ok
            } else {
                Exit::Fail
            }
        }
        Err(f) => {
            let msg = redact::redact(f.message());
            if json {
                let v = serde_json::json!({
                    "schema": PLAN_SCHEMA, "env_id": env_id,
                    "error": msg, "exit_code": f.exit() as i32,
                });
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            }
            monky_host::journal::early_error(&format!("monky-deployd plan: {msg}"));
            f.exit()
        }
    }
}

fn rfc3339(z: &jiff::Zoned) -> String {
    z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    async fn plan_locked(&mut self) -> Result<Plan, Failure> {
        if !self.cfg.state_dir.is_dir() {
            return Err(Failure::fail(format!(
                "no state directory {}: this box has not been bootstrapped (plan never logs in)",
                self.cfg.state_dir.display()
            )));
        }
        let Some(_lock) = state::try_lock(&self.cfg.lock_path())? else {
            return Err(Failure::temporary(
                "a tick is running (the lock is held); try again in a moment",
            ));
        };
        self.state = State::load(&self.cfg.state_path())?;
        if !self.tokens.load()? {
            return Err(Failure::fail(format!(
                "no token at {}: run `monky-deployd bootstrap` or a tick first (plan never logs in)",
                self.cfg.token_path().display()
            )));
        }
        self.tokens.check_pin(&self.state)?;
        let containers = self.containers().await;
        let resp = self.checkin(&containers).await.map_err(Failure::from)?;
        let mut p = Plan {
            schema: PLAN_SCHEMA,
            env_id: self.cfg.env_id.clone(),
            action: resp.action.to_string(),
            urgent: resp.urgent,
            applied: Release {
                sha: self.state.applied_sha.clone(),
                serial: self.state.applied_serial,
            },
            desired: Release {
                sha: resp.desired_sha.clone(),
                serial: None,
            },
            registry_credential: RegistryCred {
                registry: self.cfg.registry_host.clone(),
                ..Default::default()
            },
            ..Default::default()
        };
        p.window.entries = self.cfg.apply_windows.clone();
        let wait = self.windows.wait(&self.windows.now());
        p.window.open_now = wait.is_none();
        if let Some((w, at)) = &wait {
            p.window.next_window = Some(w.clone());
            p.window.next_at = Some(rfc3339(at));
        }
        p.rollback.auto_rollback = self.cfg.auto_rollback;
        p.agent_update = resp.agent.as_ref().map(|o| {
            use update::Step;
            let (would, detail) = match self.update_step(Some(o), resp.urgent) {
                Step::Off => (
                    "off",
                    "agent_signing_keys is empty: self-update is off".into(),
                ),
                Step::Elsewhere(by) => (
                    "off",
                    format!("instance {by} stages this box's agent updates, not this one"),
                ),
                Step::Keep => ("keep", "the running version".into()),
                Step::Reverted(v) => (
                    "reverted",
                    format!("{v} was reverted here; waits for another version"),
                ),
                Step::Refused(v) => ("refused", format!("{v} was refused here (same sha)")),
                Step::Pending(v) => ("pending", format!("{v} is staged for the update unit")),
                Step::Waits(d) => ("defer", d),
                Step::Stage(v) => ("stage", format!("would download, verify and stage {v}")),
            };
            AgentUpdatePlan {
                running: VERSION.into(),
                offered: o.version.clone(),
                would: would.into(),
                detail,
            }
        });
        let running = self.running_services().await;
        match resp.action {
            Action::Apply => {
                let sha = resp.desired_sha.clone().unwrap_or_default();
                p.rollback.target = self.rollback_candidate(&sha, &containers);
                if let Some(f) = self
                    .state
                    .failed_release
                    .as_ref()
                    .filter(|_| self.cfg.auto_rollback)
                {
                    // the apply's own rule (rollback.rs), on the same clock
                    if let Some(until) =
                        rollback::held_until(f, &sha, self.wall(), self.cfg.retry_failed_after_s)
                    {
                        p.rollback.held_until = Some(rollback::rfc3339(until));
                    }
                }
                let mut refusals = Vec::new();
                let token = self.tokens.bearer();
                match self.c.tenancy.bundle(&token, &self.cfg.env_id, &sha).await {
                    Ok((wire, _)) => {
                        if let Err(r) = self
                            .plan_apply(&sha, wire, &running, &mut p, &mut refusals)
                            .await
                        {
                            refusals.push(r);
                        }
                    }
                    Err(TenancyError::BundleTooLarge(n)) => refusals.push(Refusal::new(
                        RefusalCode::BundleTooLarge,
                        format!("over {n} bytes"),
                    )),
                    // transport trouble (75) or tenancy's refusal to hand it out
                    Err(e) => return Err(Failure::from(e)),
                }
                for r in refusals {
                    let r = PlanRefusal::of(r);
                    if !p
                        .refusals
                        .iter()
                        .any(|x| x.code == r.code && x.detail == r.detail)
                    {
                        p.refusals.push(r);
                    }
                }
                p.retry = self
                    .state
                    .retry
                    .as_ref()
                    .filter(|r| r.sha == sha && !resp.urgent && self.wall() < r.next_at)
                    .map(|r| RetryInfo {
                        attempt: r.attempts + 1,
                        not_before: rollback::rfc3339(r.next_at),
                    });
                // the tick's order: a window, then the backoff, then the rollback's hold
                p.would = if !p.refusals.is_empty() {
                    "refuse"
                } else if wait.is_some() && !resp.urgent {
                    "defer"
                } else if p.retry.is_some() {
                    "retry_held"
                } else if p.rollback.held_until.is_some() {
                    "hold"
                } else {
                    "apply"
                }
                .into();
            }
            Action::Down => {
                // the tick's own rule (actions.rs)
                p.down_volumes = Some(self.down_plan(resp.prod, resp.purge_volumes).volumes);
                p.would = "down".into();
                p.services = running
                    .iter()
                    .map(|(s, (img, hash))| ServiceChange {
                        service: s.clone(),
                        change: "removed".into(),
                        image_running: Some(img.clone()),
                        config_hash_running: hash.clone(),
                        ..Default::default()
                    })
                    .collect();
            }
            _ => {
                p.would = "nothing".into();
                p.services = running
                    .iter()
                    .map(|(s, (img, hash))| ServiceChange {
                        service: s.clone(),
                        change: "unchanged".into(),
                        image_running: Some(img.clone()),
                        image_desired: Some(img.clone()),
                        config_hash_running: hash.clone(),
                        config_hash_desired: hash.clone(),
                        ..Default::default()
                    })
                    .collect();
            }
        }
        p.exit_code = if p.refusals.is_empty() { 0 } else { 1 };
        Ok(p)
    }

    /// `service → (image, config hash label)` of the running project.
    async fn running_services(&self) -> BTreeMap<String, (String, Option<String>)> {
        let raw = self
            .engine
            .containers_raw(&self.cfg.compose_project)
            .await
            .unwrap_or_default();
        let mut out = BTreeMap::new();
        for c in raw {
            let l = &c["Labels"];
            if l["com.docker.compose.oneoff"] == "True" {
                continue;
            }
            let Some(s) = l["com.docker.compose.service"].as_str() else {
                continue;
            };
            out.insert(
                s.to_string(),
                (
                    c["Image"].as_str().unwrap_or_default().to_string(),
                    l["com.docker.compose.config-hash"]
                        .as_str()
                        .map(String::from),
                ),
            );
        }
        out
    }
}

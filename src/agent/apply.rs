//! The apply pipeline: fetch and verify the bundle, checks before the lease, lease and
//! secrets, `.env`, promote, compose pull + up through the engine guard, wait healthy,
//! report.

use sha2::{Digest, Sha256};

use super::*;
use crate::error::Code;
use checks::engine_refused;
use report::refused;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// The pipeline, one named step after another; each step that refuses reports it first.
    pub(super) async fn apply(&mut self, sha: &str) -> Result<Exit, Failure> {
        let b = self.fetch_bundle(sha).await?;
        let mut checks = self.pre_lease_checks(&b).await;
        if self.reclaim_for_disk(&checks).await {
            checks = self.pre_lease_checks(&b).await;
        }
        if let Some(r) = checks.refusals.into_iter().next() {
            return Err(refused(r, ""));
        }
        let (services, jobs) = (checks.services, checks.jobs);
        let (env, registry_auth) = self.read_secrets(&b).await?;
        let staging = self.cfg.staging_dir().join(sha);
        bundle::stage(&staging, &b, &env)?;
        self.write_lock_override(&b)?;
        let env_sha = Sha256::digest(env.as_bytes());
        drop(env);
        let mut compose = self.compose().await?;
        let privileged = self.privileged(&b);
        self.second_pass(&b, &mut compose, &staging, privileged)
            .await?;
        if let Some(a) = &registry_auth {
            registry::write_docker_config(&self.cfg.docker_config_dir(), a)?;
            info!("registry credential for {} in place", a.registry);
        }
        // a retry refreshes an existing release in place: no container may write it first (a
        // planted symlink would send the refresh's writes to the host)
        let existing = self.cfg.releases_dir().join(sha);
        if existing.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            drop(self.guard(&mut compose, &existing, privileged).await?);
        }
        let release = self.promote(&staging, sha)?;
        monky_base::testhook::pause("after-promote");
        // the guard stays up until the tick is done with compose (the log tail reads through it)
        let _guard = self
            .start(&mut compose, &release, privileged, (&b, &env_sha), &jobs)
            .await?;
        let cs = match self.wait_settled(&services, &jobs).await {
            Settled::Healthy(cs) => cs,
            Settled::Interrupted(_) => return Err(interrupted_during("waiting for health")),
            Settled::Unhealthy(cs) => return Err(self.unhealthy(&compose, &release, &cs).await),
            Settled::JobFailed(detail) => {
                let f = Failure::fail(detail).tagged(Code::JobFailed);
                return Err(self.with_logs(f, &compose, &release).await);
            }
            Settled::CrashLoop(detail) => {
                let f = Failure::fail(detail).tagged(Code::CrashLoop);
                return Err(self.with_logs(f, &compose, &release).await);
            }
        };
        self.note_restarts(&cs);
        self.data_settled(sha);
        self.state.applied_sha = Some(sha.to_string());
        self.state.applied_serial = Some(b.meta.serial);
        self.state.statement_expires_at = b.statement.as_ref().map(|s| s.expires_at);
        info!(
            "applied {} ({} containers healthy)",
            short(Some(sha)),
            cs.len()
        );
        Ok(Exit::Ok)
    }

    /// Fetch the bundle, verify it ([`Agent::verify_bundle`]) and raise the high-water mark.
    pub(super) async fn fetch_bundle(&mut self, sha: &str) -> Result<Bundle, Failure> {
        let token = self.tokens.bearer();
        let (wire, hdr) = match self.c.tenancy.bundle(&token, &self.cfg.env_id, sha).await {
            Ok(x) => x,
            Err(TenancyError::BundleTooLarge(n)) => {
                let r = Refusal::new(RefusalCode::BundleTooLarge, format!("over {n} bytes"));
                return Err(refused(r, ""));
            }
            Err(e) => return Err(Failure::from(e)),
        };
        // the release pipeline's signature, over the statement or the sha, before anything
        // else (no lease, no OpenBao request)
        let v = self.verify_bundle(wire, sha).map_err(|r| refused(r, ""))?;
        if let Some(raised) = v.raise {
            let body = serde_json::to_vec(&raised).unwrap_or_default();
            // on disk before anything else happens: a crash after this cannot lower it
            state::write_private(&self.cfg.high_water_path(), &body, 0o600)
                .map_err(Failure::from)?;
            self.state.high_water = Some(raised);
        }
        let b = v.bundle;
        monky_base::testhook::pause("after-bundle");
        if let Some(h) = hdr {
            if h != b.sha {
                warn!(
                    "bundle header sha {} disagrees with its content {}",
                    short(Some(&h)),
                    short(Some(&b.sha))
                );
            }
        }
        Ok(b)
    }

    /// The one verification of a fetched bundle, the apply's and `plan`'s: the signature (over
    /// the release statement, or the bare sha), the statement's kind, env and sha, then the
    /// files (paths, sha computed here), and only then bundle.json and the manifest are parsed
    /// and the rest of the statement is judged (serial, high-water mark, jump, life; PROTOCOL
    /// 0.5, issue 40). Writes nothing: the mark an accepted statement raises is handed back.
    ///
    /// Every byte of the bundle's files that a parser reads has had its sha computed and
    /// compared with `sha`, and `sha` (or the statement naming it) has had its signature
    /// verified, where the box has `bundle_signing_keys`.
    pub(super) fn verify_bundle(
        &self,
        mut wire: monky_wire::tenancy::BundleWire,
        sha: &str,
    ) -> Result<Verified, Refusal> {
        use monky_boundary::statement::{self, BundleFacts};
        let signatures = std::mem::take(&mut wire.signatures);
        let statement = wire.statement.take();
        // 1. the signature, over bytes no parser has read yet
        let (signed_by, claim) = match statement.as_deref().filter(|_| !self.keys.is_empty()) {
            None => {
                if self.cfg.require_statements {
                    return Err(Refusal::new(RefusalCode::StatementRefused, "missing"));
                }
                (self.keys.verify(sha, &signatures)?, None)
            }
            Some(b64) => {
                let bytes = statement::decode(b64)?;
                let id = self.keys.verify_statement(&bytes, &signatures)?;
                // signed bytes: its kind, env and the sha it names
                (
                    id,
                    Some(statement::bind_bundle(&bytes, &self.cfg.env_id, sha)?),
                )
            }
        };
        // 2. the files: paths, then the sha computed over them, then bundle.json and the
        //    manifest are parsed (`Bundle::decode` compares the sha before it parses)
        let mut b = Bundle::decode(wire, &self.cfg.env_id, sha)?;
        if let (Some(id), None) = (&signed_by, &claim) {
            info!("bundle {} signed by {id}", short(Some(&b.sha)));
        }
        // 3. the rest of the statement against bundle.json, the mark and the box's clock
        let mut raise = None;
        if let Some(claim) = claim {
            let high_water = self.state.high_water_mark(&self.cfg.high_water_path());
            let s = claim.judge(
                &BundleFacts {
                    env_id: &self.cfg.env_id,
                    sha: &b.sha,
                    serial: b.meta.serial,
                    high_water: high_water.as_ref(),
                    now: i64::try_from(self.wall()).unwrap_or(i64::MAX),
                },
                &self.cfg.statement_limits(),
            )?;
            info!(
                "bundle {} serial {} signed by {} (statement expires {})",
                short(Some(&b.sha)),
                s.serial,
                signed_by.as_deref().unwrap_or_default(),
                statement::rfc3339(s.expires_at)
            );
            if high_water.as_ref().is_none_or(|h| s.serial > h.serial) {
                raise = Some(statement::HighWater {
                    serial: s.serial,
                    sha: s.sha.clone(),
                });
            }
            b.statement = Some(s);
        }
        Ok(Verified {
            bundle: b,
            signed_by,
            raise,
        })
    }

    /// Lease + login when the bundle reads secrets, read them, render `.env`. Names are
    /// logged, values never; the values are scrubbed on drop.
    async fn read_secrets(
        &mut self,
        b: &Bundle,
    ) -> Result<(Zeroizing<String>, Option<registry::RegistryAuth>), Failure> {
        let mut values: BTreeMap<String, Zeroizing<String>> = BTreeMap::new();
        let mut registry_auth: Option<registry::RegistryAuth> = None;
        let entries = b.manifest.entries.clone();
        if !entries.is_empty() {
            let tok = self.token_for_apply().await?;
            for e in &entries {
                let read = self.c.bao.kv_read(&tok, &e.path, &e.key, e.version).await;
                let v = match read.map_err(|err| unreadable(e, err)) {
                    Ok(v) => v,
                    Err(Unreadable::Retry(f)) => return Err(f),
                    Err(Unreadable::Refuse(r)) => return Err(refused(r, "")),
                };
                if e.is_registry_auth() {
                    match registry::parse(&v, &self.cfg.registry_host) {
                        Ok(a) => {
                            redact::register_basic(&a.username, &a.password);
                            // written once the bundle has passed every check, before the pull
                            registry_auth = Some(a);
                        }
                        Err(err) => warn!("{err} — private images will not pull"),
                    }
                } else if let Some(var) = &e.var {
                    values.insert(var.clone(), v);
                }
            }
            info!(
                "read {} secret(s): {}{}",
                entries.len(),
                values.keys().cloned().collect::<Vec<_>>().join(", "),
                if entries.iter().any(|e| e.is_registry_auth()) {
                    " (+ registry credential)"
                } else {
                    ""
                }
            );
        }
        let env = bundle::render_env(&b.env_template(), &values).map_err(|r| refused(r, ""))?;
        drop(values);
        Ok((env, registry_auth))
    }

    /// What compose itself will run, after interpolation from `.env`, checked again.
    async fn second_pass(
        &mut self,
        b: &Bundle,
        compose: &mut Compose,
        staging: &Path,
        privileged: bool,
    ) -> Result<(), Failure> {
        let guard = self.guard(compose, staging, privileged).await?;
        let config = compose.config(staging).await;
        drop(guard);
        match config {
            Ok((normalised, warnings)) => {
                // the normalised config carries every interpolated secret: a `Zeroizing`
                // buffer from compose's stdout on (`Compose::config`), scrubbed on drop
                if !warnings.trim().is_empty() {
                    warn!("compose config: {}", warnings.trim());
                }
                let refusals = self
                    .normalised_checks(b, &normalised, &warnings, staging, privileged)
                    .await;
                if let Some(r) = refusals.into_iter().next() {
                    return Err(refused(r, ""));
                }
            }
            Err(e) => {
                let r = Refusal::new(
                    RefusalCode::ComposeConfigInvalid,
                    config_diagnosis(e.output(), staging),
                );
                return Err(refused(r, e.output()));
            }
        }
        Ok(())
    }

    /// `compose pull` and `up -d` through the engine guard, which is handed back: compose's
    /// later calls go through it too. Before compose reads a byte: no container on the box can
    /// write the release (the guard's preflight), and its files are the checked ones.
    async fn start(
        &mut self,
        compose: &mut Compose,
        release: &Path,
        privileged: bool,
        checked: (&Bundle, &[u8]),
        jobs: &std::collections::BTreeSet<String>,
    ) -> Result<Option<Guard>, Failure> {
        let guard = self.guard(compose, release, privileged).await?;
        release::verify(release, checked.0, checked.1).map_err(|r| refused(r, ""))?;
        info!("compose pull ({})", compose.flavour());
        let pulled = compose.pull(release).await;
        if let Some(f) = engine_refused(guard.as_ref(), pulled.is_err()) {
            return Err(f);
        }
        if let Err(e) = pulled {
            return Err(compose_failed(Code::COMPOSE_PULL_FAILED, &e));
        }
        // the running release's data, after every check and the pull, right before `up`
        self.take_snapshots(checked.0, &checked.0.sha).await?;
        self.prepare_locks(checked.0).await?;
        info!("compose up -d --remove-orphans");
        let up = compose.up(release).await;
        if let Some(f) = engine_refused(guard.as_ref(), up.is_err()) {
            return Err(f);
        }
        if let Err(e) = up {
            // compose gives up itself when a job a service waits on fails: say which job
            let mut cs = self.listed().await;
            runtime::mark_jobs(&mut cs, jobs);
            if let (false, Some(d)) = (
                matches!(e, RuntimeError::Interrupted(_)),
                cs.iter().find_map(runtime::job_failed),
            ) {
                let f = Failure::fail(d).tagged(Code::JobFailed);
                return Err(self.with_logs(f, compose, release).await);
            }
            return Err(compose_failed(Code::ComposeUpFailed, &e));
        }
        // the release's containers exist: `current` names what runs from now on
        self.make_current(release)?;
        Ok(guard)
    }

    /// A job that failed or a container that restarted: with the compose log tail.
    async fn with_logs(&self, f: Failure, compose: &Compose, release: &Path) -> Failure {
        let logs = Zeroizing::new(
            compose
                .logs(release, 200)
                .await
                .unwrap_or_else(|e| e.to_string()),
        );
        warn!("{}", f.message());
        f.with_log_tail(logs.as_str())
    }

    /// Not healthy in time: why, not just that. The engine's view of each bad container (exit
    /// code, OOM, the last health probes with their output), then the compose log tail.
    /// Container output may hold secrets in clear: scrubbed on drop, redacted before the cut.
    async fn unhealthy(&self, compose: &Compose, release: &Path, cs: &[Container]) -> Failure {
        let mut why = String::new();
        for c in cs.iter().filter(|c| unwell(c)) {
            why.push_str(&self.engine.diagnose(c).await);
            why.push('\n');
        }
        // (the diagnosis goes last: the report keeps the tail when it must cut)
        let logs = Zeroizing::new(format!(
            "{}\n--- why (engine) ---\n{why}",
            compose
                .logs(release, 200)
                .await
                .unwrap_or_else(|e| e.to_string())
                .trim_end()
        ));
        let bad: Vec<String> = cs.iter().filter(|c| unwell(c)).map(condition).collect();
        Failure::fail(unhealthy_detail(self.cfg.healthy_timeout_s, &bad))
            .tagged(Code::Unhealthy)
            .with_log_tail(logs.as_str())
    }
}

/// A bundle that passed [`Agent::verify_bundle`].
pub(super) struct Verified {
    pub bundle: Bundle,
    /// The key id whose signature verified (`None`: the box has no `bundle_signing_keys`).
    pub signed_by: Option<String>,
    /// The high-water mark its statement raises, for the apply to write (`plan` does not).
    pub raise: Option<monky_boundary::statement::HighWater>,
}

/// SIGTERM during an apply: reported, then exit 75 (the next tick converges).
pub(super) fn interrupted_during(step: &str) -> Failure {
    let f = Failure::coded(
        Kind::Temporary,
        Code::Interrupted,
        format!("{step} (SIGTERM)"),
    );
    warn!("{}", f.message());
    f
}

/// A compose step that failed: its code with the registry's or compose's own words.
pub(super) fn compose_failed(code: Code, e: &RuntimeError) -> Failure {
    if let RuntimeError::Interrupted(step) = e {
        return interrupted_during(step);
    }
    let diag = match e {
        RuntimeError::Compose { .. } => pull_diagnosis(e.output()),
        other => other.to_string(),
    };
    Failure::coded(Kind::Fail, code, diag).with_log_tail(e.output())
}

/// A secret that could not be read: OpenBao down is retried by the next tick (75); anything
/// else (denied, missing, wrong version) refuses the bundle, naming the variable, not a value.
enum Unreadable {
    Retry(Failure),
    Refuse(Refusal),
}

fn unreadable(e: &bundle::Entry, err: BaoError) -> Unreadable {
    match err {
        BaoError::Unavailable(..) => Unreadable::Retry(Failure::from(err)),
        other => Unreadable::Refuse(Refusal::new(
            RefusalCode::SecretUnreadable,
            format!("{}: {other}", e.var.as_deref().unwrap_or(&e.path)),
        )),
    }
}

/// `service state[/health]`, as the UNHEALTHY detail lists it.
fn condition(c: &Container) -> String {
    if c.health.is_empty() {
        format!("{} {}", c.service, c.state)
    } else {
        format!("{} {}/{}", c.service, c.state, c.health)
    }
}

#[cfg(test)]
mod tests;

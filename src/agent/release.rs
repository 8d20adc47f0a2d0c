//! Release directories: promote (idempotent), wait until settled, prune old releases.

use super::*;

/// How a release's containers ended up after `up`.
pub(super) enum Settled {
    /// Healthy, and stayed so for the settle window.
    Healthy(Vec<Container>),
    /// Not healthy in time, or clearly never going to be.
    Unhealthy(Vec<Container>),
    /// A one-shot job ended with a non-zero exit: `JOB_FAILED: …`.
    JobFailed(String),
    /// A container restarted: `CRASH_LOOP: …`.
    CrashLoop(String),
    Interrupted(Vec<Container>),
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// staging/<sha> → releases/<sha>. `current` moves only once the release's containers
    /// exist ([`Agent::make_current`]): a refusal or a failed pull leaves it on what runs.
    pub(super) fn promote(&self, staging: &Path, sha: &str) -> Result<PathBuf, Failure> {
        let rel = self.cfg.releases_dir().join(sha);
        match rel.symlink_metadata() {
            // already there (a retry of the same sha, or a crash after promote): its containers
            // may bind into it and may have written files there (root-owned ones the agent
            // cannot delete), so it is never removed; the bundle's own files are replaced
            Ok(m) if m.file_type().is_dir() => {
                overlay(staging, &rel).map_err(|e| {
                    Failure::fail(format!("cannot refresh {}: {e}", rel.display())).caused_by(e)
                })?;
                let _ = std::fs::remove_dir_all(staging);
            }
            other => {
                if other.is_ok() {
                    // a symlink or a file planted where the release goes: never followed
                    std::fs::remove_file(&rel).map_err(|e| {
                        Failure::fail(format!("cannot replace {}: {e}", rel.display())).caused_by(e)
                    })?;
                }
                std::fs::rename(staging, &rel).map_err(|e| {
                    Failure::fail(format!("cannot promote to {}: {e}", rel.display())).caused_by(e)
                })?;
            }
        }
        // the tick's memo of release shapes may hold this directory's files from before
        self.now
            .shapes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        Ok(rel)
    }

    /// `current` → the release whose containers `up` just created (atomic symlink swap).
    pub(super) fn make_current(&self, rel: &Path) -> Result<(), Failure> {
        state::swap_symlink(rel, &self.cfg.current_link())?;
        Ok(())
    }

    /// After `up`: wait until the release is healthy (jobs done, long-running services up and
    /// healthy where they have a check) and has stayed so for `settle_s` with no container
    /// restarting, or until it is clear it will not be.
    pub(super) async fn wait_settled(
        &self,
        services: &[String],
        jobs: &std::collections::BTreeSet<String>,
    ) -> Settled {
        monky_base::testhook::pause("wait-healthy");
        let started = std::time::Instant::now();
        let r = self.wait_settled_inner(services, jobs).await;
        self.docker_wait.add(started);
        r
    }

    async fn wait_settled_inner(
        &self,
        services: &[String],
        jobs: &std::collections::BTreeSet<String>,
    ) -> Settled {
        let since = state::now().saturating_sub(1);
        let deadline = (tokio::time::Instant::now()
            + Duration::from_secs(self.cfg.healthy_timeout_s))
        .min(self.now.deadline);
        let settle = Duration::from_secs(self.cfg.settle_s);
        let mut bad_streak = 0;
        // restart counts when each container was first seen; any rise is a crash
        let mut base: BTreeMap<String, u64> = BTreeMap::new();
        let mut healthy_since: Option<tokio::time::Instant> = None;
        loop {
            let mut cs = self.listed().await;
            runtime::mark_jobs(&mut cs, jobs);
            if let Some(detail) = cs.iter().find_map(runtime::job_failed) {
                return Settled::JobFailed(detail);
            }
            self.fill_restarts(&mut cs).await;
            for c in cs.iter().filter(|c| !c.job) {
                let n = c.restarts.unwrap_or(0);
                let b = *base.entry(c.id.clone()).or_insert(n);
                if n > b {
                    let detail = self.crash_loop(c, since).await;
                    return Settled::CrashLoop(detail);
                }
            }
            if runtime::converged(services, &cs) {
                let t0 = *healthy_since.get_or_insert_with(tokio::time::Instant::now);
                if t0.elapsed() >= settle {
                    return Settled::Healthy(cs);
                }
            } else {
                healthy_since = None;
            }
            let hopeless = cs.iter().any(|c| {
                !c.job && (c.health == "unhealthy" || c.state == "exited" || c.state == "dead")
            });
            bad_streak = if hopeless { bad_streak + 1 } else { 0 };
            if bad_streak >= 3 || tokio::time::Instant::now() >= deadline {
                return Settled::Unhealthy(cs);
            }
            if self.interrupted() {
                return Settled::Interrupted(cs);
            }
            match self.interrupt.clone() {
                Some(mut rx) => {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                        _ = rx.wait_for(|stop| *stop) => return Settled::Interrupted(cs),
                    }
                }
                None => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
    }

    /// Each long-running container's restart count, from the engine (inspect).
    pub(super) async fn fill_restarts(&self, cs: &mut [Container]) {
        for c in cs.iter_mut().filter(|c| !c.job && !c.id.is_empty()) {
            c.restarts = self.engine.restarts(c).await;
        }
    }

    /// The restart counts a settled release ended its window with: the baseline the next
    /// heartbeat compares with, so a restart between this tick and that one is a crash loop too
    /// (the heartbeat knows no count for containers it has not seen).
    pub(super) fn note_restarts(&mut self, cs: &[Container]) {
        self.state.restarts = cs
            .iter()
            .filter_map(|c| Some((c.id.clone(), c.restarts?)))
            .collect();
    }

    /// `CRASH_LOOP: <service> restarted <n> times (last exit <code>)`.
    pub(super) async fn crash_loop(&self, c: &Container, since: u64) -> String {
        let exit = match self.engine.last_exit(c, since).await {
            Some(e) => e.to_string(),
            None => "unknown".into(),
        };
        format!(
            "CRASH_LOOP: {} restarted {} times (last exit {exit})",
            c.service,
            c.restarts.unwrap_or(0)
        )
    }

    /// The running release's directory: the applied sha's, whatever `current` says.
    pub(super) fn running_release(&self) -> PathBuf {
        match &self.state.applied_sha {
            Some(sha) if monky_wire::tenancy::is_sha(sha) => self.cfg.releases_dir().join(sha),
            _ => self.cfg.current_link(),
        }
    }

    pub(super) async fn prune_releases(&self) {
        let keep = self.cfg.keep_releases;
        let current = std::fs::read_link(self.cfg.current_link()).ok();
        let rels = state::releases(&self.cfg.releases_dir());
        let n = rels.len().saturating_sub(keep);
        for r in rels.into_iter().take(n) {
            if Some(&r) == current.as_ref() {
                continue;
            }
            match std::fs::remove_dir_all(&r) {
                Ok(()) => info!("prune: removed release {}", r.display()),
                Err(e) => warn!("prune: {}: {e}", r.display()),
            }
        }
        match self.engine.prune_images().await {
            Ok(b) => info!("prune: dangling images removed, {} MiB reclaimed", b >> 20),
            Err(e) => warn!("prune: {e}"),
        }
    }
}

/// Moves every file of `from` into the existing directory `to`, replacing what is there. A
/// symlink or file found where a directory goes is removed first (containers may write into a
/// release directory; nothing of theirs is followed).
pub(super) fn overlay(from: &Path, to: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dst = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            match dst.symlink_metadata() {
                Ok(m) if m.file_type().is_dir() => {}
                Ok(_) => {
                    std::fs::remove_file(&dst)?;
                    state::ensure_dir(&dst, 0o700).map_err(std::io::Error::other)?;
                }
                Err(_) => state::ensure_dir(&dst, 0o700).map_err(std::io::Error::other)?,
            }
            overlay(&e.path(), &dst)?;
        } else {
            if let Ok(m) = dst.symlink_metadata() {
                if m.file_type().is_dir() {
                    std::fs::remove_dir_all(&dst)?;
                }
            }
            // rename replaces a file or a symlink itself, never what a symlink points to
            std::fs::rename(e.path(), &dst)?;
        }
    }
    Ok(())
}

/// The release holds exactly the bytes that were checked: every file of the bundle and the
/// rendered `.env` (by its sha256), each read without following a symlink. `RELEASE_REFUSED`
/// otherwise — nothing may have changed them (no container can write there), so a difference
/// means something outside the policy did.
pub(super) fn verify(release: &Path, b: &Bundle, env_sha: &[u8]) -> Result<(), Refusal> {
    use sha2::{Digest, Sha256};
    let bad =
        |f: &str, why: String| Refusal::new(RefusalCode::ReleaseRefused, format!("{f}: {why}"));
    for (p, content) in &b.files {
        let got = monky_boundary::beneath::read(release, Path::new(p), bundle::MAX_FILE_BYTES)
            .map_err(|e| bad(p, e.to_string()))?;
        if got != *content {
            return Err(bad(p, "differs from the checked bundle".into()));
        }
    }
    let env = monky_boundary::beneath::read(release, Path::new(".env"), bundle::MAX_FILE_BYTES)
        .map(Zeroizing::new)
        .map_err(|e| bad(".env", e.to_string()))?;
    if Sha256::digest(env.as_slice())[..] != *env_sha {
        return Err(bad(".env", "differs from the rendered one".into()));
    }
    Ok(())
}

/// A file of a release (`compose.yaml`, `bundle.json`, `.env`), read without following a symlink.
pub(super) fn read_release_file(release: &Path, name: &str) -> Option<Vec<u8>> {
    let root = release_root(release);
    monky_boundary::beneath::read(&root, Path::new(name), bundle::MAX_FILE_BYTES).ok()
}

/// The release directory `release` names: `current` is the agent's own link, resolved once
/// here, then nothing below it is followed.
pub(super) fn release_root(release: &Path) -> PathBuf {
    match std::fs::read_link(release) {
        Ok(t) if t.is_absolute() => t,
        Ok(t) => release.parent().unwrap_or(Path::new("/")).join(t),
        Err(_) => release.to_path_buf(),
    }
}

/// Registers the values a release's `.env` holds, read back against its `env.template` (the
/// placeholders' values, not the rendered lines: POLICY "Redaction").
pub(super) fn register_env_values(release: &Path) {
    let Some(env) = read_release_file(release, ".env")
        .map(|b| Zeroizing::new(String::from_utf8_lossy(&b).into_owned()))
    else {
        return;
    };
    let tmpl = read_release_file(release, "env.template")
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    for v in bundle::values_from_rendered(tmpl.as_deref(), &env) {
        redact::register(&v);
    }
}

/// Registers the registry credential the agent wrote to `DOCKER_CONFIG/config.json` (a tick
/// that pulls nothing still masks it in what compose and the engine print).
pub(super) fn register_docker_config(dir: &Path) {
    use base64::Engine;
    let Ok(body) = std::fs::read(dir.join("config.json")).map(Zeroizing::new) else {
        return;
    };
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return;
    };
    for a in v["auths"].as_object().into_iter().flat_map(|m| m.values()) {
        let Some(blob) = a["auth"].as_str() else {
            continue;
        };
        redact::register(blob);
        let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(blob) else {
            continue;
        };
        let raw = Zeroizing::new(String::from_utf8_lossy(&raw).into_owned());
        if let Some((user, pw)) = raw.split_once(':') {
            redact::register_basic(user, pw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0.4.0 registered a heartbeat's `.env` lines: a value inside a composite, or written in
    /// double quotes, was masked only in that exact rendered form.
    #[test]
    fn a_tick_that_applies_nothing_masks_the_running_release_s_values() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("env.template"),
            "DB=postgres://app:${PW}@db/app\nQ=${Q}\n",
        )
        .unwrap();
        std::fs::write(
            d.path().join(".env"),
            "DB=postgres://app:s3cret-pw-42@db/app\nQ=\"say \\\"hi\\\" now\"\n",
        )
        .unwrap();
        register_env_values(d.path());
        let out = redact::redact("connect pw=s3cret-pw-42 failed; echo say \"hi\" now");
        assert_eq!(out, "connect pw=*** failed; echo ***", "{out}");
    }

    #[test]
    fn the_written_registry_credential_is_masked_in_later_ticks() {
        use base64::Engine;
        let d = tempfile::tempdir().unwrap();
        let blob = base64::engine::general_purpose::STANDARD.encode("robot:reg-pa55-word");
        std::fs::write(
            d.path().join("config.json"),
            format!("{{\"auths\": {{\"r:5000\": {{\"auth\": \"{blob}\"}}}}}}"),
        )
        .unwrap();
        register_docker_config(d.path());
        assert_eq!(redact::redact("denied for reg-pa55-word"), "denied for ***");
    }
}

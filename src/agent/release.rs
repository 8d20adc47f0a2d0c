//! Release directories: promote (idempotent), wait healthy, prune old releases.

use super::*;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// staging/<sha> → releases/<sha>, then `current` → it (atomic symlink swap).
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
        state::swap_symlink(&rel, &self.cfg.current_link())?;
        Ok(rel)
    }

    pub(super) async fn wait_healthy(&self, services: &[String]) -> (bool, Vec<Container>) {
        crate::testhook::pause("wait-healthy");
        let started = std::time::Instant::now();
        let r = self.wait_healthy_inner(services).await;
        self.docker_wait.add(started);
        r
    }

    pub(super) async fn wait_healthy_inner(&self, services: &[String]) -> (bool, Vec<Container>) {
        let deadline = (tokio::time::Instant::now()
            + Duration::from_secs(self.cfg.healthy_timeout_s))
        .min(self.deadline);
        let mut bad_streak = 0;
        loop {
            let cs = self.containers().await;
            if runtime::converged(services, &cs) {
                return (true, cs);
            }
            let hopeless = cs
                .iter()
                .any(|c| c.health == "unhealthy" || c.state == "exited" || c.state == "dead");
            bad_streak = if hopeless { bad_streak + 1 } else { 0 };
            if bad_streak >= 3 || tokio::time::Instant::now() >= deadline || self.interrupted() {
                return (false, cs);
            }
            match self.interrupt.clone() {
                Some(mut rx) => {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                        _ = rx.wait_for(|stop| *stop) => return (false, cs),
                    }
                }
                None => tokio::time::sleep(Duration::from_millis(500)).await,
            }
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
    let bad = |f: &str, why: String| Refusal::new("RELEASE_REFUSED", format!("{f}: {why}"));
    for (p, content) in &b.files {
        let got = crate::beneath::read(release, Path::new(p), bundle::MAX_FILE_BYTES)
            .map_err(|e| bad(p, e.to_string()))?;
        if got != *content {
            return Err(bad(p, "differs from the checked bundle".into()));
        }
    }
    let env = crate::beneath::read(release, Path::new(".env"), bundle::MAX_FILE_BYTES)
        .map(Zeroizing::new)
        .map_err(|e| bad(".env", e.to_string()))?;
    if Sha256::digest(env.as_slice())[..] != *env_sha {
        return Err(bad(".env", "differs from the rendered one".into()));
    }
    Ok(())
}

/// A file of a release (`compose.yaml`, `bundle.json`, `.env`), read without following a symlink.
pub(super) fn read_release_file(release: &Path, name: &str) -> Option<Vec<u8>> {
    // `current` is the agent's own link: resolved once here, then nothing below it is followed
    let root = match std::fs::read_link(release) {
        Ok(t) if t.is_absolute() => t,
        Ok(t) => release.parent().unwrap_or(Path::new("/")).join(t),
        Err(_) => release.to_path_buf(),
    };
    crate::beneath::read(&root, Path::new(name), bundle::MAX_FILE_BYTES).ok()
}

/// Registers every value of a rendered `.env` with the redactor (names stay readable).
pub(super) fn register_env_values(release: &Path) {
    let Some(text) = read_release_file(release, ".env")
        .map(|b| Zeroizing::new(String::from_utf8_lossy(&b).into_owned()))
    else {
        return;
    };
    for line in text.lines() {
        let Some((_, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim();
        redact::register(v);
        for q in ['\'', '"'] {
            if let Some(inner) = v.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
                redact::register(inner);
            }
        }
    }
}

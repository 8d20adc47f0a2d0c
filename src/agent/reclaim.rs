//! Disk reclaim without a human (issue 22). After every healthy apply, and whenever the Docker
//! data root has less free than the watermark (`disk_reclaim_below`, default the running
//! bundle's `need_bytes` × 1.5 + 2 GiB), the agent removes the release directories beyond
//! `keep_releases` and the images only they used. Never removed: the running release, the
//! rollback target (the release that ran before it), the newest `keep_releases`; an image any
//! container on the box (any project, running or not) was created from or names, whoever
//! pulled it; an image a kept release names; and any image that is not in the guard's ledger
//! of this project's own pulls (`<state_dir>/images.json`): another app's images are not this
//! agent's business. Images go without `force`, so the engine itself also keeps one that a
//! container uses or that has other names.
//!
//! A `DISK_INSUFFICIENT` refusal reclaims first and runs the checks once more. What went is
//! reported to tenancy as `RECLAIMED: <bytes> bytes (<n> releases, <m> images)` in an
//! `applied` report for the running sha, and counted in the metrics.

use std::collections::BTreeSet;

use super::checks::PreLease;
use super::report::Outcome;
use super::*;
use monky_host::care::Reclaimed;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// After the tick's action: a new healthy release moves the one it replaced to rollback
    /// target; then reclaim when a release became healthy or the data root is below the
    /// watermark; then tell tenancy what went.
    pub(super) async fn reclaim_after_action(&mut self) {
        let applied = self.state.applied_sha.clone();
        let new_release = applied.is_some() && applied != self.state.care.running;
        if new_release {
            let before = std::mem::replace(&mut self.state.care.running, applied);
            if before.is_some() {
                self.state.care.rollback_target = before;
            }
        }
        let watermark = self.watermark();
        let free = self.measure_disk().await;
        let low = free.is_some_and(|f| f < watermark);
        if low {
            info!(
                "reclaim: the Docker data root has {} MiB free, under the {} MiB watermark",
                free.unwrap_or(0) >> 20,
                watermark >> 20
            );
        }
        if new_release || low {
            let r = self.reclaim().await;
            self.note_reclaim(r);
            self.measure_disk().await;
        }
        if let Some(r) = self.state.care.unreported.take() {
            match self.state.applied_sha.clone() {
                Some(sha) => {
                    for said in Outcome::applied(&sha, &r.detail()).said {
                        self.send(said).await;
                    }
                }
                None => info!("{} (nothing applied to report it with)", r.detail()),
            }
        }
    }

    /// A `DISK_INSUFFICIENT` before the lease: reclaim, and say whether the checks are worth
    /// running once more (something went).
    pub(super) async fn reclaim_for_disk(&mut self, checks: &PreLease) -> bool {
        let disk_first = checks
            .refusals
            .first()
            .is_some_and(|r| r.code == RefusalCode::DiskInsufficient);
        if !disk_first || checks.disk.is_none() {
            return false;
        }
        info!("DISK_INSUFFICIENT: reclaiming old releases and images, then checking again");
        let r = self.reclaim().await;
        let any = !r.is_empty();
        self.note_reclaim(r);
        any
    }

    fn note_reclaim(&mut self, r: Reclaimed) {
        if r.is_empty() {
            return;
        }
        info!("reclaim: {}", r.detail());
        let care = &mut self.state.care;
        self.state.counters.reclaimed_bytes =
            self.state.counters.reclaimed_bytes.saturating_add(r.bytes);
        care.last_reclaim = Some(r.clone());
        match &mut care.unreported {
            Some(u) => u.merge(r),
            None => care.unreported = Some(r),
        }
    }

    /// Free bytes on the Docker data root (kept in the metrics); `None` when unmeasurable.
    pub(super) async fn measure_disk(&mut self) -> Option<u64> {
        let root = match self.state.care.docker_root.clone() {
            Some(r) => PathBuf::from(r),
            None => {
                let r = self.engine.docker_root().await.ok()?;
                self.state.care.docker_root = Some(r.display().to_string());
                r
            }
        };
        match runtime::free_bytes(&root) {
            Ok(f) => {
                self.state.counters.docker_free_bytes = Some(f);
                Some(f)
            }
            Err(e) => {
                // the engine may have moved its root: ask again next time
                warn!("reclaim: cannot measure {}: {e}", root.display());
                self.state.care.docker_root = None;
                None
            }
        }
    }

    /// `disk_reclaim_below`, or what the running bundle would need to apply again.
    pub(super) fn watermark(&self) -> u64 {
        watermark(&self.cfg, &self.running_release())
    }

    /// The release directories that stay: the newest `keep_releases`, the running one, the
    /// rollback target, the release a late crash loop would go back to, and what `current`
    /// points at.
    fn kept_releases(&self, rels: &[PathBuf]) -> BTreeSet<PathBuf> {
        let dir = self.cfg.releases_dir();
        let mut keep: BTreeSet<PathBuf> = rels
            .iter()
            .rev()
            .take(self.cfg.keep_releases)
            .cloned()
            .collect();
        let mut shas: Vec<String> = Vec::new();
        shas.extend(self.state.applied_sha.clone());
        shas.extend(self.state.care.rollback_target.clone());
        // where a crash loop found within rollback_window_s goes back to
        shas.extend(self.state.replaced_healthy.clone());
        if let Some(f) = &self.state.failed_release {
            shas.push(f.rolled_back_to.clone());
        }
        for s in shas.iter().filter(|s| monky_wire::tenancy::is_sha(s)) {
            keep.insert(dir.join(s));
        }
        if let Ok(t) = std::fs::read_link(self.cfg.current_link()) {
            keep.insert(if t.is_absolute() { t } else { dir.join(t) });
        }
        if self.state.care.rollback_target.is_none() {
            // no apply seen since the upgrade: the newest other release may be the way back
            let running = self.state.applied_sha.as_deref().map(|s| dir.join(s));
            if let Some(r) = rels.iter().rev().find(|r| Some(*r) != running.as_ref()) {
                keep.insert(r.clone());
            }
        }
        keep
    }

    /// Removes what is not kept; returns what went.
    pub(super) async fn reclaim(&mut self) -> Reclaimed {
        let mut out = Reclaimed {
            at: state::now(),
            ..Default::default()
        };
        let rels = state::releases(&self.cfg.releases_dir());
        let kept = self.kept_releases(&rels);
        for r in rels.iter().filter(|r| !kept.contains(*r)) {
            let size = dir_bytes(r);
            match std::fs::remove_dir_all(r) {
                Ok(()) => {
                    out.bytes = out.bytes.saturating_add(size);
                    out.releases
                        .push(r.file_name().unwrap_or_default().to_string_lossy().into());
                }
                Err(e) => warn!("reclaim: release {}: {e}", r.display()),
            }
        }
        self.reclaim_images(&kept, &mut out).await;
        out
    }

    /// The ledger's images that no container on the box and no kept release uses.
    async fn reclaim_images(&self, kept: &BTreeSet<PathBuf>, out: &mut Reclaimed) {
        let path = self.cfg.state_dir.join(monky_guard::IMAGE_LEDGER);
        let Some(mut ledger) = monky_guard::Ledger::load(&path) else {
            debug!("reclaim: no image ledger yet; no image is this agent's to remove");
            return;
        };
        // every container on the box, not only this project's: another project's stopped
        // container (or its rollback) may run what this project also pulled
        let (mut used, mut names) = match self.engine.all_containers_raw().await {
            Ok(cs) => containers_images(&cs),
            Err(e) => {
                warn!("reclaim: cannot list the box's containers ({e}); no image removed");
                return;
            }
        };
        for rel in kept {
            let Some(refs) = release_images(rel) else {
                warn!(
                    "reclaim: cannot tell which images release {} uses; no image removed",
                    rel.display()
                );
                return;
            };
            names.extend(refs);
        }
        // what the box's other instances run or may roll back to (PROTOCOL 0.5)
        let Some(refs) = peer_images(&self.cfg.instance) else {
            warn!(
                "reclaim: cannot tell which images the other instances may use; no image removed"
            );
            return;
        };
        names.extend(refs);
        // a name counts for the image it names now (what a recreate would run)
        for r in names {
            match self.engine.image(&r).await {
                Ok(Some((id, _))) => {
                    used.insert(id);
                }
                Ok(None) => {}
                Err(e) => {
                    warn!("reclaim: image {r}: {e}; no image removed");
                    return;
                }
            }
        }
        let mut freed = 0u64;
        let mut changed = false;
        let candidates: Vec<String> = ledger
            .images
            .keys()
            .filter(|id| !used.contains(*id))
            .cloned()
            .collect();
        for id in candidates {
            let size = match self.engine.image(&id).await {
                Ok(Some((_, s))) => s,
                Ok(None) => {
                    // gone already (a human's prune): the ledger forgets it
                    ledger.images.remove(&id);
                    changed = true;
                    continue;
                }
                Err(e) => {
                    warn!("reclaim: image {id}: {e}");
                    continue;
                }
            };
            match self.engine.remove_image(&id).await {
                Ok(true) => {
                    info!(
                        "reclaim: removed image {} ({}, {} MiB)",
                        short_id(&id),
                        ledger.images[&id].reference,
                        size >> 20
                    );
                    freed = freed.saturating_add(size);
                    out.images.push(id.clone());
                    ledger.images.remove(&id);
                    changed = true;
                }
                Ok(false) => debug!(
                    "reclaim: the engine keeps image {} (in use or named elsewhere)",
                    short_id(&id)
                ),
                Err(e) => warn!("reclaim: image {}: {e}", short_id(&id)),
            }
        }
        if changed {
            if let Err(e) = ledger.save(&path) {
                warn!("reclaim: {}: {e}", path.display());
            }
        }
        out.bytes = out.bytes.saturating_add(freed);
    }
}

/// What the containers `cs` (the engine's list) may run: the image ids they were created
/// from, and the image names they were created by (resolved by the caller: a name may point
/// at a newer image than the container's own, and a recreate would run that one).
pub(super) fn containers_images(cs: &[serde_json::Value]) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut ids = BTreeSet::new();
    let mut names = BTreeSet::new();
    for c in cs {
        if let Some(id) = c["ImageID"].as_str().filter(|s| !s.is_empty()) {
            ids.insert(id.to_string());
        }
        if let Some(n) = c["Image"].as_str().filter(|s| !s.is_empty()) {
            names.insert(n.to_string());
        }
    }
    (ids, names)
}

/// The image references every release directory of the box's other instances names (each
/// still on disk is one it runs or may roll back to; its own reclaim dropped the rest), read
/// from their state dirs (the same Unix user's). `None` when one cannot be read: a config that
/// does not load, a state dir or release that cannot be read, an interpolated image.
pub(super) fn peer_images(me: &monky_host::instance::Instance) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for p in monky_host::instance::others(me) {
        let c = match &p.config {
            Ok(c) => c,
            Err(e) => {
                warn!("reclaim: instance {}: {e}", p.instance.display());
                return None;
            }
        };
        for rel in monky_host::instance::peer_release_dirs(c)? {
            match release_images(&rel) {
                Some(refs) => out.extend(refs),
                None => {
                    warn!(
                        "reclaim: instance {}'s release {} names images that cannot be read",
                        p.instance.display(),
                        rel.display()
                    );
                    return None;
                }
            }
        }
    }
    Some(out)
}

/// `disk_reclaim_below`, or the `need_bytes` of the release at `running` × 1.5 + 2 GiB (the
/// disk check's own rule: below it the same bundle could not apply again).
pub(super) fn watermark(cfg: &Config, running: &Path) -> u64 {
    if let Some(b) = cfg.disk_reclaim_below() {
        return b;
    }
    let need = release::read_release_file(running, "bundle.json")
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["need_bytes"].as_u64())
        .unwrap_or(0);
    need.saturating_mul(3) / 2 + 2 * GIB
}

fn short_id(id: &str) -> &str {
    let h = id.strip_prefix("sha256:").unwrap_or(id);
    &h[..h.len().min(12)]
}

/// The image references a release's compose file names; `None` when one is interpolated
/// (`${TAG}`) or the file is unreadable, so what it runs cannot be known here.
pub(super) fn release_images(rel: &Path) -> Option<Vec<String>> {
    let doc = release::read_release_file(rel, "compose.yaml")
        .and_then(|b| compose_check::parse(&b).ok())?;
    let mut out = Vec::new();
    if let Some(services) = doc.get("services").and_then(|s| s.as_mapping()) {
        for (_, svc) in services {
            if let Some(img) = svc.get("image").and_then(|i| i.as_str()) {
                if img.contains('$') {
                    return None;
                }
                out.push(img.to_string());
            }
        }
    }
    Some(out)
}

/// Bytes of the regular files under `dir`, symlinks not followed (what removing it frees,
/// give or take the blocks).
pub(super) fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => {
                    total = total.saturating_add(e.metadata().map(|m| m.len()).unwrap_or(0))
                }
                _ => {}
            }
        }
    }
    total
}

#[cfg(test)]
mod tests;

//! The release's data (PROTOCOL 0.6): the volumes `bundle.json`'s `data` lists are copied
//! right before `up` (with the `stop` services stopped for the copy) and put back before an
//! automatic rollback starts the old release. Every step that cannot be taken back is written
//! to the data journal first ([`monky_host::data::Journal`]), so the next tick after a kill
//! starts what was stopped, discards a half-made copy, or finishes a restore it began.
//!
//! What is judged before the lease is [`refusals`]: pure, on the bundle and the box's config.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use serde_yaml_ng::Value;

use super::*;
use crate::error::Code;
use monky_boundary::bundle::DataSpec;
use monky_host::data::{self, Journal, Phase, SnapMeta, Store};
use monky_host::snapshot;

/// What an apply's snapshot step did: reported with `applied`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Taken {
    pub volumes: BTreeMap<String, u64>,
    pub seconds: f64,
    pub stopped_s: f64,
}

/// The engine's name of each volume `data.snapshot` lists, or why it cannot be snapshotted
/// (`SNAPSHOT_REFUSED`, before anything changes). Pure: the bundle's compose file, the
/// project name and `keep_snapshots`.
pub(super) fn volumes_of(
    doc: &Value,
    spec: &DataSpec,
    project: &str,
    keep_snapshots: usize,
) -> Result<BTreeMap<String, String>, Vec<Refusal>> {
    let refuse =
        |key: &str, why: &str| Refusal::new(RefusalCode::SnapshotRefused, format!("{key} ({why})"));
    let mut out = BTreeMap::new();
    let mut bad = Vec::new();
    let root = compose_check::yaml::untag(doc);
    let get = |m: &Value, k: &str| match m {
        Value::Mapping(m) => compose_check::yaml::get(m, k).cloned(),
        _ => None,
    };
    let top = get(root, "volumes").unwrap_or(Value::Null);
    let services = get(root, "services").unwrap_or(Value::Null);
    for key in &spec.snapshot {
        if keep_snapshots == 0 {
            bad.push(refuse(key, "keep_snapshots is 0"));
            continue;
        }
        if !data::safe_key(key) {
            bad.push(refuse(key, "not a volume name"));
            continue;
        }
        let Some(def) = get(&top, key) else {
            bad.push(refuse(key, "not a top-level volume of compose.yaml"));
            continue;
        };
        let def = compose_check::yaml::untag(&def).clone();
        let field = |k: &str| get(&def, k);
        if field("external").is_some_and(|v| yaml_set(&v)) {
            bad.push(refuse(
                key,
                "external: the box snapshots only the project's own volumes",
            ));
            continue;
        }
        if let Some(d) = field("driver").and_then(|v| v.as_str().map(str::to_string)) {
            if d != "local" {
                bad.push(refuse(
                    key,
                    &format!("driver {d}: only local volumes are copied"),
                ));
                continue;
            }
        }
        if field("driver_opts").is_some_and(|v| yaml_set(&v)) {
            bad.push(refuse(key, "driver_opts: not a directory of its own"));
            continue;
        }
        let name = match field("name") {
            None => format!("{project}_{key}"),
            Some(Value::String(n)) if !n.contains('$') && !n.is_empty() => n,
            Some(_) => {
                bad.push(refuse(key, "its name: must be a plain string"));
                continue;
            }
        };
        out.insert(key.clone(), name);
    }
    for s in &spec.stop {
        if get(&services, s).is_none() {
            bad.push(Refusal::new(
                RefusalCode::SnapshotRefused,
                format!("stop {s} (not a service of compose.yaml)"),
            ));
        }
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(bad)
    }
}

/// `update_lock` names services of the file (PROTOCOL 0.6).
pub(super) fn lock_refusals(doc: &Value, services: &[String]) -> Vec<Refusal> {
    let known = compose_check::services(doc);
    services
        .iter()
        .filter(|s| !known.contains(s))
        .map(|s| {
            Refusal::new(
                RefusalCode::BundleInvalid,
                format!("update_lock {s} (not a service of compose.yaml)"),
            )
        })
        .collect()
}

/// Everything `data` and `update_lock` can refuse before a lease.
pub(super) fn refusals(b: &Bundle, project: &str, keep_snapshots: usize) -> Vec<Refusal> {
    let Ok(doc) = compose_check::parse(b.compose()) else {
        // the compose check reports an unparsable file
        return Vec::new();
    };
    let mut out = lock_refusals(&doc, &b.meta.update_lock);
    out.extend(lock::reserved_refusals(&doc));
    if let Some(spec) = &b.meta.data {
        if let Err(r) = volumes_of(&doc, spec, project, keep_snapshots) {
            out.extend(r);
        }
    }
    out
}

/// A YAML value that says "yes" / holds something (`external: true`, a non-empty map).
fn yaml_set(v: &Value) -> bool {
    match compose_check::yaml::untag(v) {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty() && s != "false",
        Value::Mapping(m) => !m.is_empty(),
        Value::Sequence(q) => !q.is_empty(),
        _ => true,
    }
}

/// `sha` when it is being staged right now (its override must stay), else "".
fn sha_of<'a>(staging: &std::path::Path, sha: &'a str) -> &'a str {
    if staging.join(sha).is_dir() {
        sha
    } else {
        ""
    }
}

fn snapshot_failed(kind: Kind, what: impl std::fmt::Display) -> Failure {
    Failure::coded(
        kind,
        Code::SnapshotFailed,
        format!("SNAPSHOT_FAILED: {what}"),
    )
}

fn gib(n: u64) -> String {
    format!("{:.1} GiB", n as f64 / GIB as f64)
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    pub(super) fn store(&self) -> Store {
        Store::new(self.cfg.snapshots_dir())
    }

    fn journal(&self) -> Option<Journal> {
        Journal::load(&self.cfg.data_journal_path())
    }

    fn write_journal(&self, j: &Journal) -> Result<(), Failure> {
        j.save(&self.cfg.data_journal_path())
            .map_err(|e| Failure::fail(e.to_string()).caused_by(e))
    }

    fn clear_journal(&self) {
        if let Err(e) = Journal::clear(&self.cfg.data_journal_path()) {
            warn!("{e}");
        }
    }

    /// Where a volume's data is, when the engine keeps it as a plain directory under its own
    /// data root (a path that is a link, or outside the root, is not copied).
    async fn volume_dir(&self, key: &str, name: &str) -> Result<Option<PathBuf>, Failure> {
        let info = self.engine.volume(name).await.map_err(|e| {
            Failure::coded(Kind::Temporary, Code::DOCKER_UNAVAILABLE, e.to_string())
        })?;
        let Some(info) = info else {
            return Ok(None);
        };
        if info.driver != "local" || info.has_options {
            return Err(snapshot_failed(
                Kind::Fail,
                format!("{key} (volume {name} is not a local directory)"),
            ));
        }
        let root = self.engine.docker_root().await.map_err(|e| {
            Failure::coded(Kind::Temporary, Code::DOCKER_UNAVAILABLE, e.to_string())
        })?;
        let mp = info.mountpoint;
        let plain = mp.starts_with(&root)
            && mp.symlink_metadata().is_ok_and(|m| m.is_dir())
            && !mp
                .components()
                .any(|c| c == std::path::Component::ParentDir);
        if !plain {
            return Err(snapshot_failed(
                Kind::Fail,
                format!(
                    "{key} ({} is not a directory under {})",
                    mp.display(),
                    root.display()
                ),
            ));
        }
        Ok(Some(mp))
    }

    /// Right before `up` of `new`: the running release's data copied, the `stop` services
    /// stopped for the copy and, if the apply does not go on, started again. `None`: nothing
    /// to copy (no `data`, nothing running yet, no listed volume exists yet).
    pub(super) async fn take_snapshots(
        &mut self,
        b: &Bundle,
        new: &str,
    ) -> Result<Option<Taken>, Failure> {
        let Some(spec) = b.meta.data.clone().filter(|d| !d.snapshot.is_empty()) else {
            return Ok(None);
        };
        let Some(old) = self.state.applied_sha.clone().filter(|o| o != new) else {
            return Ok(None);
        };
        let doc = compose_check::parse(b.compose()).map_err(|r| report::refused(r, ""))?;
        let names = volumes_of(
            &doc,
            &spec,
            &self.cfg.compose_project,
            self.cfg.keep_snapshots,
        )
        .map_err(|r| report::refused(r.into_iter().next().expect("non-empty"), ""))?;
        let store = self.store();
        store.discard_incomplete();
        let mut todo: Vec<(String, String, PathBuf)> = Vec::new();
        let mut journal_volumes = BTreeMap::new();
        let mut taken = Taken::default();
        for (key, name) in &names {
            let Some(dir) = self.volume_dir(key, name).await? else {
                info!("data: volume {name} does not exist yet; nothing to snapshot");
                continue;
            };
            journal_volumes.insert(key.clone(), name.clone());
            if let Some(s) = store.find(&old, new, key) {
                // an earlier attempt of this apply took it; the data may have moved on since
                info!(
                    "data: {key} of {} already snapshotted for {}",
                    short(Some(&old)),
                    short(Some(new))
                );
                taken.volumes.insert(key.clone(), s.meta.bytes);
                continue;
            }
            todo.push((key.clone(), name.clone(), dir));
        }
        if journal_volumes.is_empty() {
            return Ok(None);
        }
        let mut journal = Journal {
            phase: Phase::Copying,
            release: old.clone(),
            taken_for: new.to_string(),
            stopped: Vec::new(),
            volumes: journal_volumes,
            at: self.wall(),
        };
        if todo.is_empty() {
            journal.phase = Phase::Up;
            self.write_journal(&journal)?;
            return Ok(Some(taken));
        }
        // room first, before anything is stopped
        let mut sizes = Vec::new();
        for (key, _, dir) in &todo {
            let dir = dir.clone();
            let n = tokio::task::spawn_blocking(move || snapshot::apparent_bytes(&dir))
                .await
                .map_err(|e| snapshot_failed(Kind::Temporary, format!("{key} ({e})")))?
                .map_err(|e| snapshot_failed(Kind::Temporary, format!("{key} ({e})")))?;
            sizes.push(n);
        }
        store
            .prepare(&old)
            .map_err(|e| snapshot_failed(Kind::Temporary, e))?;
        let total: u64 = sizes.iter().sum();
        let free = runtime::free_bytes(store.root())
            .map_err(|e| snapshot_failed(Kind::Temporary, format!("disk: {e}")))?;
        let need = data::need_for(total);
        if free < need {
            let keys: Vec<&str> = todo.iter().map(|t| t.0.as_str()).collect();
            return Err(snapshot_failed(
                Kind::Temporary,
                format!(
                    "{} (disk: need {}, free {})",
                    keys.join(", "),
                    gib(need),
                    gib(free)
                ),
            ));
        }
        // the stop services, recorded before they stop: the next tick starts them again if
        // this one dies before `up`
        let running: Vec<Container> = self
            .listed()
            .await
            .into_iter()
            .filter(|c| spec.stop.contains(&c.service) && c.state == "running")
            .collect();
        journal.stopped = running.iter().map(|c| c.id.clone()).collect();
        self.write_journal(&journal)?;
        let stop_started = Instant::now();
        for c in &running {
            info!("data: stopping {} for the snapshot", c.service);
            if let Err(e) = self.engine.stop(c).await {
                self.undo_stop(&journal).await;
                return Err(snapshot_failed(
                    Kind::Temporary,
                    format!("stop {} ({e})", c.service),
                ));
            }
        }
        monky_base::testhook::pause("data:stopped");
        let copy_started = Instant::now();
        for ((key, name, dir), bytes) in todo.iter().zip(sizes) {
            let dest = store.tree(&old, key);
            let label = key.clone();
            let src = dir.clone();
            let res = tokio::task::spawn_blocking(move || {
                let mut last = Instant::now();
                snapshot::take(&src, &dest, &mut |p: snapshot::Progress| {
                    if last.elapsed().as_secs() >= 5 {
                        last = Instant::now();
                        info!(
                            "data: snapshot of {label}: {} MiB, {} entries",
                            p.bytes >> 20,
                            p.entries
                        );
                    }
                })
            })
            .await;
            let res = match res {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if let Err(why) = res {
                self.undo_stop(&journal).await;
                store.discard_incomplete();
                return Err(snapshot_failed(Kind::Temporary, format!("{key} ({why})")));
            }
            let meta = SnapMeta {
                release: old.clone(),
                taken_for: new.to_string(),
                volume: key.clone(),
                engine_volume: name.clone(),
                bytes,
                taken_at: self.wall(),
            };
            if let Err(e) = store.commit(&meta) {
                self.undo_stop(&journal).await;
                store.discard_incomplete();
                return Err(snapshot_failed(Kind::Temporary, format!("{key} ({e})")));
            }
            monky_base::testhook::pause("data:copied-one");
            taken.volumes.insert(key.clone(), bytes);
            if self.interrupted() {
                self.undo_stop(&journal).await;
                return Err(apply::interrupted_during("the snapshot"));
            }
        }
        taken.seconds = copy_started.elapsed().as_secs_f64();
        journal.phase = Phase::Up;
        self.write_journal(&journal)?;
        taken.stopped_s = stop_started.elapsed().as_secs_f64();
        self.state.counters.snapshot_bytes += taken.volumes.values().sum::<u64>();
        self.state.counters.snapshot_seconds += taken.seconds;
        info!(
            "data: {} snapshotted in {:.1}s ({} stopped {:.1}s)",
            taken.volumes.keys().cloned().collect::<Vec<_>>().join(", "),
            taken.seconds,
            spec.stop.join(", "),
            taken.stopped_s
        );
        Ok(Some(taken))
    }

    /// The apply does not go on after the stop: what it stopped runs again, the journal goes.
    async fn undo_stop(&self, j: &Journal) {
        for id in &j.stopped {
            if let Err(e) = self.engine.start(id).await {
                warn!("data: cannot start {} again: {e}", short(Some(id)));
            }
        }
        self.clear_journal();
    }

    /// The apply of `sha` ended (applied, or failed with nothing to restore): the journal goes,
    /// the snapshots stay within `keep_snapshots`.
    pub(super) fn data_settled(&self, sha: &str) {
        if self.journal().is_some_and(|j| j.taken_for == sha) {
            self.clear_journal();
        }
        for r in self.store().retain(self.cfg.keep_snapshots) {
            info!(
                "data: snapshots of {} removed (keep_snapshots)",
                short(Some(&r))
            );
        }
        // an override outlives its release only until the next apply
        if let Ok(rd) = std::fs::read_dir(self.cfg.overrides_dir()) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let sha = name.strip_suffix(".yaml").unwrap_or(&name);
                if !self.cfg.releases_dir().join(sha).is_dir()
                    && sha != sha_of(&self.cfg.staging_dir(), sha)
                {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    /// `down` with `purge_volumes`: every snapshot goes with the volumes.
    pub(super) fn purge_snapshots(&self) {
        let store = self.store();
        let n = store.retain(0).len();
        if n > 0 {
            info!("data: snapshots of {n} releases removed with the volumes");
        }
        self.clear_journal();
    }

    /// Whether a rollback from `new` to `old` restores data first: this very apply took a
    /// snapshot of `old`'s data (never after `new` was applied: the journal is gone by then).
    pub(super) fn restore_due(&self, new: &str, old: &str) -> bool {
        self.journal()
            .is_some_and(|j| j.taken_for == new && j.release == old && j.phase != Phase::Copying)
    }

    /// Before the old release starts again: every container of the project stopped, then each
    /// snapshotted volume made exactly the snapshot's tree. `Ok(volumes restored)`; an error
    /// names the volume, and the old release must not be started.
    pub(super) async fn restore_data(&mut self) -> Result<Vec<String>, String> {
        let Some(mut j) = self.journal() else {
            return Ok(Vec::new());
        };
        j.phase = Phase::Restoring;
        if let Err(f) = self.write_journal(&j) {
            return Err(format!("journal ({})", f.message()));
        }
        for c in self.listed().await {
            if c.state == "running" || c.state == "restarting" {
                if let Err(e) = self.engine.stop(&c).await {
                    return Err(format!("stop {} ({e})", c.service));
                }
            }
        }
        monky_base::testhook::pause("data:restoring");
        let store = self.store();
        let mut done = Vec::new();
        for (key, name) in &j.volumes {
            let Some(snap) = store.find(&j.release, &j.taken_for, key) else {
                return Err(format!("{key} (no complete snapshot)"));
            };
            let dir = match self.volume_dir(key, name).await {
                Ok(Some(d)) => d,
                Ok(None) => return Err(format!("{key} (volume {name} is gone)")),
                Err(f) => return Err(format!("{key} ({})", f.message())),
            };
            let tree = snap.tree.clone();
            let res =
                tokio::task::spawn_blocking(move || snapshot::restore(&tree, &dir, &mut |_| {}))
                    .await;
            match res {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(format!("{key} ({e})")),
                Err(e) => return Err(format!("{key} ({e})")),
            }
            info!(
                "data: {key} restored from the snapshot of {}",
                short(Some(&j.release))
            );
            done.push(key.clone());
        }
        self.state.counters.restores += 1;
        self.clear_journal();
        Ok(done)
    }

    /// At the start of a tick, what a killed one left: stopped services started again and a
    /// half-made copy discarded (it died while copying), or the restore finished and the old
    /// release started (it died while restoring). One file read when there is nothing to do.
    pub(super) async fn recover_data(&mut self) {
        let Some(j) = self.journal() else {
            return;
        };
        match j.phase {
            Phase::Copying => {
                warn!(
                    "data: an earlier tick stopped services for a snapshot and did not finish; starting them again"
                );
                self.store().discard_incomplete();
                self.undo_stop(&j).await;
                // the release that runs is judged healthy or not by what follows (a rollback
                // needs it healthy before): it is given its time to come back first
                let (services, jobs) = self.release_shape(&self.cfg.current_link());
                let _ = self.wait_settled(&services, &jobs).await;
            }
            // the snapshot is whole; a retry of the same apply uses it, a rollback restores it
            Phase::Up => {}
            Phase::Restoring => {
                warn!(
                    "data: an earlier tick died restoring {} for a rollback from {}; finishing it",
                    short(Some(&j.release)),
                    short(Some(&j.taken_for))
                );
                match self.restore_data().await {
                    Ok(v) => {
                        info!("data: restored {}", v.join(", "));
                        let back = self.bring_back(&j.release, None).await;
                        self.state.failed_release = Some(monky_host::state::FailedRelease {
                            sha: j.taken_for.clone(),
                            at: self.wall(),
                            rolled_back_to: j.release.clone(),
                            rollback_ok: back.is_ok(),
                        });
                        if let Err(f) = back {
                            warn!(
                                "data: {} did not come back: {}",
                                short(Some(&j.release)),
                                f.message()
                            );
                        }
                    }
                    Err(why) => warn!("RESTORE_FAILED: {why}"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;

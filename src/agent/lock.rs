//! The app's update lock (PROTOCOL 0.6). Each `update_lock` service gets `/run/monky-lock`: a
//! Docker volume of the project that the agent creates and names (`<project>_monky-lock-<svc>`),
//! mounted by a compose file the agent writes beside the verified bytes
//! (`<state_dir>/overrides/<sha>.yaml`, given to compose after `compose.yaml`). It lives on the
//! engine's disk, not on `/run` or the state dir, so a container filling it fills nothing the
//! box needs. A bundle can neither declare nor mount a lock volume itself (NAME_REFUSED in the
//! first pass, and the second pass admits it only as that one mount of its own service).
//!
//! The agent only `lstat`s `updates.lock` there, and only while a new sha waits: a symlink,
//! FIFO or directory of that name holds nothing and nothing is opened or followed.

use serde_yaml_ng::Value;

use super::*;
use crate::error::Code;
use report::Outcome;

/// Where a lock service finds its lock directory.
pub const LOCK_TARGET: &str = "/run/monky-lock";
/// The file whose presence holds an update.
pub const LOCK_FILE: &str = "updates.lock";
const PREFIX: &str = "monky-lock";

/// The lock volume's compose key for `service`.
pub fn key(service: &str) -> String {
    format!("{PREFIX}-{service}")
}

/// The engine's name of `service`'s lock volume.
pub fn volume_name(project: &str, service: &str) -> String {
    format!("{project}_{}", key(service))
}

fn reserved(name: &str) -> bool {
    name.starts_with(PREFIX) || name.contains(&format!("_{PREFIX}"))
}

/// A service volume entry's source, short or long syntax (the first pass reads the raw file).
fn volume_source(v: &Value) -> String {
    match compose_check::yaml::untag(v) {
        Value::Mapping(m) => compose_check::yaml::get(m, "source")
            .and_then(compose_check::yaml::as_str)
            .unwrap_or_default(),
        Value::String(t) => t.split(':').next().unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

/// The first pass: a bundle's own volumes may not take a lock volume's key or name, and none
/// of its services may mount one (only the agent's override does).
pub(super) fn reserved_refusals(doc: &Value) -> Vec<Refusal> {
    let mut out = Vec::new();
    let Value::Mapping(root) = compose_check::yaml::untag(doc) else {
        return out;
    };
    if let Some(Value::Mapping(vols)) = compose_check::yaml::get(root, "volumes") {
        for (k, v) in vols {
            let key = compose_check::yaml::as_str(k).unwrap_or_default();
            let name = match compose_check::yaml::untag(v) {
                Value::Mapping(m) => compose_check::yaml::get(m, "name")
                    .and_then(compose_check::yaml::as_str)
                    .unwrap_or_default(),
                _ => String::new(),
            };
            for n in [&key, &name] {
                if reserved(n) {
                    out.push(Refusal::new(
                        RefusalCode::NameRefused,
                        format!("volume {n} (reserved for the box's update lock)"),
                    ));
                }
            }
        }
    }
    for (service, v) in service_volumes(root) {
        let source = volume_source(v);
        if reserved(&source) {
            out.push(Refusal::new(
                RefusalCode::NameRefused,
                format!("{service} volume {source} (reserved for the box's update lock)"),
            ));
        }
    }
    out
}

/// Every service's `volumes` entry, with the service's name.
fn service_volumes(root: &serde_yaml_ng::Mapping) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    if let Some(Value::Mapping(services)) = compose_check::yaml::get(root, "services") {
        for (s, def) in services {
            let service = compose_check::yaml::as_str(s).unwrap_or_default();
            if let Value::Mapping(def) = compose_check::yaml::untag(def) {
                if let Some(Value::Sequence(vols)) = compose_check::yaml::get(def, "volumes") {
                    out.extend(vols.iter().map(|v| (service.clone(), v)));
                }
            }
        }
    }
    out
}

/// The second pass (compose's normalised config, the override merged): a lock volume is
/// mounted only by its own `update_lock` service, only at [`LOCK_TARGET`].
pub(super) fn normalised_refusals(doc: &Value, update_lock: &[String]) -> Vec<Refusal> {
    let mut out = Vec::new();
    let Value::Mapping(root) = compose_check::yaml::untag(doc) else {
        return out;
    };
    for (service, v) in service_volumes(root) {
        let source = volume_source(v);
        let target = match compose_check::yaml::untag(v) {
            Value::Mapping(m) => compose_check::yaml::get(m, "target")
                .and_then(compose_check::yaml::as_str)
                .unwrap_or_default(),
            Value::String(t) => t.split(':').nth(1).unwrap_or_default().to_string(),
            _ => continue,
        };
        if !reserved(&source) {
            continue;
        }
        let own = update_lock.contains(&service) && source == key(&service);
        if !own || target != LOCK_TARGET {
            out.push(Refusal::new(
                    RefusalCode::NameRefused,
                    format!(
                        "{service} volume {source} (the update lock's volume: only {} mounts it, at {LOCK_TARGET})",
                        source.strip_prefix(&format!("{PREFIX}-")).unwrap_or("its service")
                    ),
                ));
        }
    }
    out
}

/// The agent's compose file for a release with `update_lock`: each service's lock volume at
/// [`LOCK_TARGET`] (short syntax and the file's own `version`, so compose v1 merges it too).
pub(super) fn override_yaml(doc: &Value, services: &[String]) -> String {
    let mut o = String::from("# written by monky-deployd: the update lock (PROTOCOL 0.6)\n");
    if let Value::Mapping(root) = compose_check::yaml::untag(doc) {
        if let Some(v) =
            compose_check::yaml::get(root, "version").and_then(compose_check::yaml::as_str)
        {
            o.push_str(&format!(
                "version: {}\n",
                serde_json::to_string(&v).unwrap_or_default()
            ));
        }
    }
    o.push_str("services:\n");
    for s in services {
        o.push_str(&format!(
            "  {}:\n    volumes:\n      - {}:{LOCK_TARGET}\n",
            serde_json::to_string(s).unwrap_or_default(),
            key(s)
        ));
    }
    o.push_str("volumes:\n");
    for s in services {
        o.push_str(&format!("  {}: {{}}\n", key(s)));
    }
    o
}

/// Removes every entry of a lock directory without following any (std's `remove_dir_all`
/// unlinks a symlink it meets, it does not descend through it).
fn empty_dir(dir: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let p = e.path();
        if e.file_type()?.is_dir() {
            std::fs::remove_dir_all(&p)?;
        } else {
            std::fs::remove_file(&p)?;
        }
    }
    Ok(())
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// After staging: the release's override written (or an old one removed), so the second
    /// pass judges what compose will run.
    pub(super) fn write_lock_override(&self, b: &Bundle) -> Result<(), Failure> {
        let path = self.cfg.overrides_dir().join(format!("{}.yaml", b.sha));
        if b.meta.update_lock.is_empty() {
            let _ = std::fs::remove_file(&path);
            return Ok(());
        }
        let doc = compose_check::parse(b.compose()).map_err(|r| report::refused(r, ""))?;
        let body = override_yaml(&doc, &b.meta.update_lock);
        monky_base::files::ensure_dir(&self.cfg.overrides_dir(), 0o700)
            .and_then(|_| state::write_private(&path, body.as_bytes(), 0o600))
            .map_err(|e| Failure::fail(e.to_string()).caused_by(e))
    }

    /// Right before `up`: each lock volume exists as the project's, emptied, writable by any
    /// user of the container (sticky, like /tmp).
    pub(super) async fn prepare_locks(&self, b: &Bundle) -> Result<(), Failure> {
        use std::os::unix::fs::PermissionsExt;
        let project = &self.cfg.compose_project;
        for s in &b.meta.update_lock {
            let name = volume_name(project, s);
            let labels: std::collections::BTreeMap<String, String> = [
                ("com.docker.compose.project".to_string(), project.clone()),
                ("com.docker.compose.volume".to_string(), key(s)),
                ("monky.lock".to_string(), s.clone()),
            ]
            .into();
            let temp = |e: RuntimeError| {
                Failure::coded(Kind::Temporary, Code::DOCKER_UNAVAILABLE, e.to_string())
            };
            self.engine
                .create_volume(&name, &labels)
                .await
                .map_err(temp)?;
            let Some(v) = self.engine.volume(&name).await.map_err(temp)? else {
                return Err(Failure::fail(format!("lock volume {name} was not created")));
            };
            let dir = v.mountpoint;
            if dir.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                empty_dir(&dir)
                    .and_then(|_| {
                        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777))
                    })
                    .map_err(|e| Failure::fail(format!("lock volume {name}: {e}")))?;
            }
        }
        Ok(())
    }

    /// The running release's lock services whose running container holds the lock: the first
    /// one found. Only `lstat`: nothing of the container's is opened or followed.
    async fn lock_holder(&self, containers: &[Container]) -> Option<String> {
        let rel = self.cfg.current_link();
        let meta: bundle::Meta = release::read_release_file(&rel, "bundle.json")
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        for s in &meta.update_lock {
            if !containers
                .iter()
                .any(|c| &c.service == s && c.state == "running")
            {
                continue;
            }
            let name = volume_name(&self.cfg.compose_project, s);
            let Ok(Some(v)) = self.engine.volume(&name).await else {
                continue;
            };
            let held = v
                .mountpoint
                .join(LOCK_FILE)
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_file());
            if held {
                return Some(s.clone());
            }
        }
        None
    }

    /// Before an apply of `what` (a sha, or `down`) replaces the running release: `Some` when
    /// its update lock holds it back (the outcome to report), `None` to go on — with the
    /// override's note for the report when `urgent` or `update_lock_max_s` ended a hold.
    pub(super) async fn lock_gate(
        &mut self,
        what: &str,
        urgent: bool,
        containers: &[Container],
    ) -> (Option<Outcome>, Option<String>) {
        let now = self.wall();
        let Some(service) = self.lock_holder(containers).await else {
            if let Some(h) = self.state.lock_hold.take() {
                self.state.counters.lock_held_seconds += now.saturating_sub(h.since);
                info!("update lock of {} released", h.service);
            }
            return (None, None);
        };
        let since = match &self.state.lock_hold {
            Some(h) if h.what == what && h.service == service => h.since,
            _ => now,
        };
        let held_s = now.saturating_sub(since);
        let max = self.cfg.update_lock_max_s;
        if urgent || (max > 0 && held_s >= max) {
            self.state.lock_hold = None;
            self.state.counters.lock_held_seconds += held_s;
            let note = format!("LOCK_OVERRIDDEN: {service} after {held_s} s");
            warn!(
                "{note} ({})",
                if urgent {
                    "urgent"
                } else {
                    "update_lock_max_s"
                }
            );
            return (None, Some(note));
        }
        self.state.lock_hold = Some(state::LockHold {
            what: what.to_string(),
            service: service.clone(),
            since,
        });
        let subject = if what == "down" {
            "down".to_string()
        } else {
            what.get(..12).unwrap_or(what).to_string()
        };
        let detail = format!(
            "DEFERRED: {subject} held by {service} lock (since {})",
            rollback::rfc3339(since)
        );
        info!("{detail}");
        let out = match self.state.applied_sha.clone() {
            Some(_) => self.running_with(&detail, containers.to_vec()).await,
            None => Outcome::quiet(Ok(Exit::Ok)),
        };
        (Some(out), None)
    }
}

#[cfg(test)]
mod tests;

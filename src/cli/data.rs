//! `monky-deployd snapshots [--json]` and `monky-deployd restore <sha12> [--volume V]... --yes`
//! (PROTOCOL 0.6): the operator's view of the box's data snapshots and the way back to one.

use std::path::Path;

use serde_json::json;

use monky_agent::Exit;
use monky_host::config::Config;
use monky_host::data::{Snapshot, Store};
use monky_host::{runtime, snapshot, state};

fn row(s: &Snapshot) -> serde_json::Value {
    json!({
        "release": s.meta.release,
        "taken_for": s.meta.taken_for,
        "volume": s.meta.volume,
        "engine_volume": s.meta.engine_volume,
        "bytes": s.meta.bytes,
        "taken_at": monky_boundary::statement::rfc3339(i64::try_from(s.meta.taken_at).unwrap_or(i64::MAX)),
        "location": s.tree.display().to_string(),
    })
}

/// The snapshots of the config's instance, newest first, as `status` and `snapshots` list them.
pub fn snapshot_rows(cfg: &Config) -> Vec<serde_json::Value> {
    Store::new(cfg.snapshots_dir())
        .list()
        .iter()
        .map(row)
        .collect()
}

pub fn snapshots(cfg: &Config, json: bool) -> Exit {
    let rows = snapshot_rows(cfg);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
        return Exit::Ok;
    }
    if rows.is_empty() {
        println!("no snapshots (a bundle asks for them with bundle.json `data`)");
        return Exit::Ok;
    }
    println!(
        "{:<14} {:<14} {:<20} {:>12}  {:<25}  location",
        "release", "taken_for", "volume", "bytes", "taken_at"
    );
    for r in &rows {
        let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
        println!(
            "{:<14} {:<14} {:<20} {:>12}  {:<25}  {}",
            s("release").get(..12).unwrap_or_default(),
            s("taken_for").get(..12).unwrap_or_default(),
            s("volume"),
            r["bytes"].as_u64().unwrap_or(0),
            s("taken_at"),
            s("location")
        );
    }
    Exit::Ok
}

fn say(json: bool, ok: bool, msg: &str, extra: serde_json::Value) {
    if json {
        let mut v = json!({"ok": ok, "message": msg});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else if ok {
        println!("{msg}");
    } else {
        monky_host::journal::early_error(&format!("monky-deployd: {msg}"));
    }
}

/// Which snapshots a `restore` means: the newest of each volume of the release whose sha
/// starts with `sha` (at least 12 hex digits), only the `volumes` named (all when none).
pub fn chosen(all: &[Snapshot], sha: &str, volumes: &[String]) -> Result<Vec<Snapshot>, String> {
    if sha.len() < 12 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "{sha:?} is not a release sha (12 or more hex digits)"
        ));
    }
    let releases: std::collections::BTreeSet<&str> = all
        .iter()
        .filter(|s| s.meta.release.starts_with(sha))
        .map(|s| s.meta.release.as_str())
        .collect();
    let release = match releases.len() {
        0 => {
            return Err(format!(
                "no snapshot of a release {sha}… (`monky-deployd snapshots` lists them)"
            ))
        }
        1 => releases.into_iter().next().unwrap_or_default().to_string(),
        _ => {
            return Err(format!(
                "{sha} names more than one release; give more of the sha"
            ))
        }
    };
    let mut out: Vec<Snapshot> = Vec::new();
    for s in all.iter().filter(|s| s.meta.release == release) {
        // newest first: the first of each volume wins
        if out.iter().any(|o| o.meta.volume == s.meta.volume) {
            continue;
        }
        if volumes.is_empty() || volumes.contains(&s.meta.volume) {
            out.push(s.clone());
        }
    }
    for v in volumes {
        if !out.iter().any(|o| &o.meta.volume == v) {
            return Err(format!("release {release} has no snapshot of volume {v}"));
        }
    }
    Ok(out)
}

/// `restore`: under the tick lock, the project's containers that mount those volumes stopped,
/// each volume made exactly its snapshot, those containers started again. Without `--yes` it
/// says what it would overwrite and changes nothing (exit 1).
pub async fn restore(cfg: &Config, sha: &str, volumes: &[String], yes: bool, json: bool) -> Exit {
    let store = Store::new(cfg.snapshots_dir());
    let picked = match chosen(&store.list(), sha, volumes) {
        Ok(p) => p,
        Err(e) => {
            say(json, false, &e, json!({}));
            return Exit::Fail;
        }
    };
    let names: Vec<String> = picked
        .iter()
        .map(|s| format!("{} (engine volume {})", s.meta.volume, s.meta.engine_volume))
        .collect();
    if !yes {
        say(
            json,
            false,
            &format!(
                "restore would stop the services mounting and overwrite everything in: {}; with the snapshot of release {} taken {}. Run again with --yes.",
                names.join(", "),
                picked[0].meta.release,
                monky_boundary::statement::rfc3339(i64::try_from(picked[0].meta.taken_at).unwrap_or(0))
            ),
            json!({"volumes": picked.iter().map(row).collect::<Vec<_>>()}),
        );
        return Exit::Fail;
    }
    let Ok(Some(_lock)) = state::try_lock(&cfg.lock_path()) else {
        say(
            json,
            false,
            "a tick is running (the tick lock is held); try again",
            json!({}),
        );
        return Exit::TempFail;
    };
    let engine = runtime::Engine::new(cfg.docker_socket());
    let cs = match engine.containers(&cfg.compose_project).await {
        Ok(c) => c,
        Err(e) => {
            say(json, false, &format!("DOCKER_UNAVAILABLE: {e}"), json!({}));
            return Exit::TempFail;
        }
    };
    let mut stopped = Vec::new();
    let mut done = Vec::new();
    let mut failed = None;
    for s in &picked {
        let vol = match engine.volume(&s.meta.engine_volume).await {
            Ok(Some(v)) => v,
            Ok(None) => {
                failed = Some(format!(
                    "{}: volume {} does not exist",
                    s.meta.volume, s.meta.engine_volume
                ));
                break;
            }
            Err(e) => {
                failed = Some(format!("{}: {e}", s.meta.volume));
                break;
            }
        };
        for c in cs
            .iter()
            .filter(|c| c.state == "running" || c.state == "restarting")
        {
            if stopped.contains(&c.id) {
                continue;
            }
            let mounts = engine.inspect(&c.id).await.ok();
            let uses = mounts
                .as_ref()
                .and_then(|v| v["Mounts"].as_array().cloned())
                .unwrap_or_default()
                .iter()
                .any(|m| m["Name"].as_str() == Some(vol.name.as_str()));
            if uses {
                if let Err(e) = engine.stop(&c.id).await {
                    failed = Some(format!("stop {}: {e}", c.service));
                    break;
                }
                stopped.push(c.id.clone());
            }
        }
        if failed.is_some() {
            break;
        }
        let (tree, dir) = (s.tree.clone(), vol.mountpoint.clone());
        let res = tokio::task::spawn_blocking(move || restore_into(&tree, &dir)).await;
        match res {
            Ok(Ok(())) => done.push(s.meta.volume.clone()),
            Ok(Err(e)) => {
                failed = Some(format!("RESTORE_FAILED: {} ({e})", s.meta.volume));
                break;
            }
            Err(e) => {
                failed = Some(format!("RESTORE_FAILED: {} ({e})", s.meta.volume));
                break;
            }
        }
    }
    if let Some(f) = failed {
        // half-restored data is not started on: what was stopped stays stopped
        say(
            json,
            false,
            &format!(
                "{f}; restored before it: {}; stopped services left stopped",
                if done.is_empty() {
                    "none".to_string()
                } else {
                    done.join(", ")
                }
            ),
            json!({"restored": done}),
        );
        return Exit::Fail;
    }
    for id in &stopped {
        if let Err(e) = engine.start(id).await {
            say(
                json,
                false,
                &format!("restored {}, but cannot start {id}: {e}", done.join(", ")),
                json!({"restored": done}),
            );
            return Exit::Fail;
        }
    }
    say(
        json,
        true,
        &format!(
            "RESTORED: {} (from release {})",
            done.join(", "),
            picked[0].meta.release
        ),
        json!({"restored": done, "release": picked[0].meta.release}),
    );
    Exit::Ok
}

fn restore_into(tree: &Path, dir: &Path) -> Result<(), String> {
    let mut last = std::time::Instant::now();
    snapshot::restore(tree, dir, &mut |p: snapshot::Progress| {
        if last.elapsed().as_secs() >= 5 {
            last = std::time::Instant::now();
            eprintln!("restoring: {} MiB, {} entries", p.bytes >> 20, p.entries);
        }
    })
    .map(|_| ())
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;

//! A Prometheus text-format file for node_exporter's textfile collector (box config
//! `metrics_textfile`), written atomically after every tick. Counters persist in `state.json`
//! so they survive the one-process-per-tick model and restarts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use monky_wire::tenancy::Container;

/// What the metrics remember between ticks (in `state.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    /// Ticks by exit code ("0", "1", "75", "78").
    pub ticks: BTreeMap<String, u64>,
    /// Applies that ended with the new release running and healthy.
    pub applies: u64,
    /// Refused or failed applies by their code (`PRIVILEGED_REFUSED`, `UNHEALTHY`, …).
    pub failures: BTreeMap<String, u64>,
    /// Automatic rollbacks by outcome (`ok`: the old release came back healthy; `failed`).
    pub rollbacks: BTreeMap<String, u64>,
    /// Apply attempts started (a held retry is not one).
    #[serde(default)]
    pub apply_attempts: u64,
    pub last_success: Option<u64>,
    /// The box's clock minus tenancy's at the last answer (PROTOCOL 0.4 `clock_skew_s`).
    pub clock_skew_s: Option<i64>,
    /// Free bytes on the Docker data root at the last measurement.
    pub docker_free_bytes: Option<u64>,
    /// Bytes the automatic reclaim freed, ever (releases and images).
    pub reclaimed_bytes: u64,
    /// Data snapshots (PROTOCOL 0.6): bytes copied and copy seconds, ever.
    pub snapshot_bytes: u64,
    pub snapshot_seconds: f64,
    /// Volumes sets restored before a rollback, ever.
    pub restores: u64,
    /// Seconds a new release waited on an app's update lock, ever.
    pub lock_held_seconds: u64,
}

/// One tick's facts, as the file reports them.
pub struct Snapshot<'a> {
    pub version: &'a str,
    pub transport: &'a str,
    pub ziti_sdk: &'a str,
    pub duration_s: f64,
    pub end_time: u64,
    pub exit_code: i32,
    pub counters: &'a Counters,
    pub applied_serial: Option<u64>,
    pub in_sync: bool,
    /// The agent version tenancy asks for (PROTOCOL 0.4); `None` = keep the running one.
    pub agent_desired: Option<&'a str>,
    pub token_ttl_s: Option<i64>,
    pub containers: &'a [Container],
    /// When the running release's statement expires (PROTOCOL 0.5); `None`: it has none.
    pub statement_expires_at: Option<i64>,
    /// The instance's name: an `instance` label on every series; "" (the default instance)
    /// adds none, so a single-instance box's series and dashboards stay as they were.
    pub instance: &'a str,
}

fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

pub fn render(s: &Snapshot) -> String {
    let mut o = String::new();
    head(
        &mut o,
        "monky_deployd_info",
        "gauge",
        "Agent build and transport (always 1).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_info{{version=\"{}\",transport=\"{}\",ziti_sdk=\"{}\"}} 1",
        label(s.version),
        label(s.transport),
        label(s.ziti_sdk)
    );
    head(
        &mut o,
        "monky_deployd_tick_duration_seconds",
        "gauge",
        "Wall time of the last tick.",
    );
    let _ = writeln!(o, "monky_deployd_tick_duration_seconds {:.3}", s.duration_s);
    head(
        &mut o,
        "monky_deployd_last_tick_timestamp_seconds",
        "gauge",
        "When the last tick ended (Unix time).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_last_tick_timestamp_seconds {}",
        s.end_time
    );
    head(
        &mut o,
        "monky_deployd_last_success_timestamp_seconds",
        "gauge",
        "When a tick last exited 0 (Unix time; 0 = never).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_last_success_timestamp_seconds {}",
        s.counters.last_success.unwrap_or(0)
    );
    head(
        &mut o,
        "monky_deployd_last_exit_code",
        "gauge",
        "Exit code of the last tick (0, 1, 75, 78).",
    );
    let _ = writeln!(o, "monky_deployd_last_exit_code {}", s.exit_code);
    head(
        &mut o,
        "monky_deployd_ticks_total",
        "counter",
        "Ticks by exit code.",
    );
    for (code, n) in &s.counters.ticks {
        let _ = writeln!(
            o,
            "monky_deployd_ticks_total{{exit_code=\"{}\"}} {n}",
            label(code)
        );
    }
    head(
        &mut o,
        "monky_deployd_applies_total",
        "counter",
        "Applies that ended healthy.",
    );
    let _ = writeln!(o, "monky_deployd_applies_total {}", s.counters.applies);
    head(
        &mut o,
        "monky_deployd_apply_attempts_total",
        "counter",
        "Apply attempts started (retries of a failing release held back by the backoff are not).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_apply_attempts_total {}",
        s.counters.apply_attempts
    );
    head(
        &mut o,
        "monky_deployd_apply_failures_total",
        "counter",
        "Refused or failed applies by code.",
    );
    for (code, n) in &s.counters.failures {
        let _ = writeln!(
            o,
            "monky_deployd_apply_failures_total{{code=\"{}\"}} {n}",
            label(code)
        );
    }
    head(
        &mut o,
        "monky_deployd_rollbacks_total",
        "counter",
        "Automatic rollbacks by outcome (ok: the old release came back healthy).",
    );
    for result in ["ok", "failed"] {
        let n = s.counters.rollbacks.get(result).copied().unwrap_or(0);
        let _ = writeln!(
            o,
            "monky_deployd_rollbacks_total{{result=\"{result}\"}} {n}"
        );
    }
    head(
        &mut o,
        "monky_deployd_snapshot_bytes_total",
        "counter",
        "Bytes copied into data snapshots before an apply.",
    );
    let _ = writeln!(
        o,
        "monky_deployd_snapshot_bytes_total {}",
        s.counters.snapshot_bytes
    );
    head(
        &mut o,
        "monky_deployd_snapshot_seconds_total",
        "counter",
        "Seconds spent copying data snapshots (the stop services' downtime).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_snapshot_seconds_total {:.3}",
        s.counters.snapshot_seconds
    );
    head(
        &mut o,
        "monky_deployd_restores_total",
        "counter",
        "Data restores before an automatic rollback.",
    );
    let _ = writeln!(o, "monky_deployd_restores_total {}", s.counters.restores);
    head(
        &mut o,
        "monky_deployd_update_lock_held_seconds_total",
        "counter",
        "Seconds a new release waited on an app's update lock.",
    );
    let _ = writeln!(
        o,
        "monky_deployd_update_lock_held_seconds_total {}",
        s.counters.lock_held_seconds
    );
    head(
        &mut o,
        "monky_deployd_applied_serial",
        "gauge",
        "Serial of the applied bundle (-1 = none).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_applied_serial {}",
        s.applied_serial.map(|x| x as i64).unwrap_or(-1)
    );
    head(
        &mut o,
        "monky_deployd_in_sync",
        "gauge",
        "1 when the applied sha is the desired one.",
    );
    let _ = writeln!(o, "monky_deployd_in_sync {}", u8::from(s.in_sync));
    head(
        &mut o,
        "monky_deployd_agent_version",
        "gauge",
        "The running agent version and the one tenancy asks for (desired = running when none is asked; always 1).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_agent_version{{running=\"{}\",desired=\"{}\"}} 1",
        label(s.version),
        label(s.agent_desired.unwrap_or(s.version))
    );
    head(
        &mut o,
        "monky_deployd_token_ttl_seconds",
        "gauge",
        "Seconds left on the OpenBao token (-1 = unknown).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_token_ttl_seconds {}",
        s.token_ttl_s.unwrap_or(-1)
    );
    render_care(&mut o, s.counters);
    head(
        &mut o,
        "monky_deployd_statement_expires_timestamp_seconds",
        "gauge",
        "When the running release's signed statement expires (Unix time); absent without one.",
    );
    if let Some(t) = s.statement_expires_at {
        let _ = writeln!(o, "monky_deployd_statement_expires_timestamp_seconds {t}");
    }
    head(
        &mut o,
        "monky_deployd_containers",
        "gauge",
        "The project's containers by state and health.",
    );
    let mut by: BTreeMap<(String, String), u64> = BTreeMap::new();
    for c in s.containers {
        let h = if c.health.is_empty() {
            "none"
        } else {
            c.health.as_str()
        };
        *by.entry((c.state.clone(), h.to_string())).or_default() += 1;
    }
    for ((st, h), n) in by {
        let _ = writeln!(
            o,
            "monky_deployd_containers{{state=\"{}\",health=\"{}\"}} {n}",
            label(&st),
            label(&h)
        );
    }
    if s.instance.is_empty() {
        o
    } else {
        with_instance(&o, s.instance)
    }
}

/// `text` with `instance="<name>"` as the first label of every sample line (comments as they
/// are).
pub fn with_instance(text: &str, name: &str) -> String {
    let tag = format!("instance=\"{}\"", label(name));
    let mut out = String::with_capacity(text.len() + text.lines().count() * (tag.len() + 3));
    for line in text.split_inclusive('\n') {
        if line.starts_with('#') || line.trim().is_empty() {
            out.push_str(line);
            continue;
        }
        // a metric name has no '{' nor ' ': the first of them ends it
        match line.find(['{', ' ']) {
            Some(i) if line[i..].starts_with("{}") => {
                out.push_str(&line[..i]);
                out.push_str(&format!("{{{tag}}}"));
                out.push_str(&line[i + 2..]);
            }
            Some(i) if line[i..].starts_with('{') => {
                out.push_str(&line[..=i]);
                out.push_str(&tag);
                out.push(',');
                out.push_str(&line[i + 1..]);
            }
            Some(i) => {
                out.push_str(&line[..i]);
                out.push_str(&format!("{{{tag}}}"));
                out.push_str(&line[i..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Clock skew, disk free and reclaim (issue 22): a gauge left out while unmeasured, so an
/// alert on it never fires on a box that has not looked yet.
fn render_care(o: &mut String, c: &Counters) {
    head(
        o,
        "monky_deployd_clock_skew_seconds",
        "gauge",
        "The box's clock minus tenancy's Date at the last answer.",
    );
    if let Some(s) = c.clock_skew_s {
        let _ = writeln!(o, "monky_deployd_clock_skew_seconds {s}");
    }
    head(
        o,
        "monky_deployd_docker_free_bytes",
        "gauge",
        "Free bytes on the Docker data root at the last measurement.",
    );
    if let Some(b) = c.docker_free_bytes {
        let _ = writeln!(o, "monky_deployd_docker_free_bytes {b}");
    }
    head(
        o,
        "monky_deployd_reclaimed_bytes_total",
        "counter",
        "Bytes freed by the automatic reclaim (old releases and their images).",
    );
    let _ = writeln!(
        o,
        "monky_deployd_reclaimed_bytes_total {}",
        c.reclaimed_bytes
    );
}

/// Writes `text` to `path` so a reader never sees a partial file (tmp + rename in the same
/// directory), 0644 whatever the unit's umask (node_exporter runs as another user). No fsync:
/// the file is rewritten every tick, and a scrape sees the old or the new one.
pub fn write(path: &Path, text: &str) -> Result<(), monky_base::files::StateError> {
    monky_base::files::write_unsynced(path, text.as_bytes(), 0o644)
}

#[cfg(test)]
mod tests;

//! Diagnostics on request (issue 22, PROTOCOL 0.4): a check-in answer carrying
//! `collect: <request id>` makes the agent send `POST /v1/agent/diagnostics` with a bundle of
//! what an operator would look at over SSH — `status --json`, per service the container state,
//! restart count, last exit, last health probe outputs and a log tail, disk figures, clock
//! skew, the transport and round-trip times, agent and compose versions. Every string in it
//! goes through the redactor (with the running release's `.env` values registered), and the
//! whole stays under 1 MiB. Each log tail is capped while it is read (issue 31: the Engine
//! API's response streams through a ring of `log_cap` bytes, never held whole), and the caps
//! share one budget, so memory stays bounded however busy the box; what was cut is said in the
//! bundle. At most one bundle per `diagnostics_min_interval_s`; `monky-deployd diagnose`
//! prints the same without sending it.

use serde_json::{json, Value};

use super::*;
use monky_wire::tenancy::Diagnostics;

mod egress;
pub use egress::egress_section;

/// The upload's limit (PROTOCOL: every body but the bundle's is at most 1 MiB).
pub const BUNDLE_MAX: usize = 1 << 20;
/// Room left for the envelope (`env_id`, `request_id`, …) around the bundle.
const ENVELOPE: usize = 4096;
/// Log lines per container asked of the engine.
const LOG_LINES: u32 = 200;
/// Bytes of one container's log tail at most (the per-source cap).
pub const LOG_SOURCE_MAX: usize = 64 << 10;
/// Bytes of all log tails together: the rest of the 1 MiB is for the figures and probes.
pub const LOG_BUDGET: usize = 640 << 10;
/// Below this share per container, log tails are left out (they would say nothing).
const LOG_SOURCE_MIN: usize = 256;

/// The log cap of each of `n` containers: the per-source cap, or an even share of the budget.
pub fn log_cap(n: usize) -> usize {
    let share = LOG_BUDGET / n.max(1);
    if share < LOG_SOURCE_MIN {
        0
    } else {
        share.min(LOG_SOURCE_MAX)
    }
}
/// Bytes of one health probe's output.
const PROBE_OUTPUT_MAX: usize = 2000;

/// What the caller measured of the links (the tick: its check-in and an OpenBao call; the
/// CLI: a probe of each).
pub struct Links {
    pub tenancy_rtt_ms: Option<u64>,
    pub tenancy_state: String,
    pub bao_rtt_ms: Option<u64>,
    pub bao_state: String,
    pub token_ttl_s: Option<u64>,
    /// The transport's egress route (direct when none applies).
    pub egress: monky_wire::egress::Egress,
}

/// The bundle: gathered from the engine and `state.json`, redacted, cut to fit.
pub async fn gather<E: EngineApi>(
    cfg: &Config,
    st: &State,
    engine: &E,
    links: &Links,
    compose_version: &str,
) -> Value {
    // the running release's secret values are masked wherever they show up (logs, probes)
    register_env_values(&running_release(cfg, st));
    register_docker_config(&cfg.docker_config_dir());
    let containers = engine.containers(&cfg.compose_project).await;
    let listed = containers.as_ref().map(|c| c.as_slice()).unwrap_or(&[]);
    let cap = log_cap(listed.len());
    let mut services = Vec::new();
    let mut logs_cut = 0;
    for c in listed {
        let (entry, cut) = service_entry(engine, c, cap).await;
        logs_cut += usize::from(cut);
        services.push(entry);
    }
    let endpoints = [
        ("tenancy", links.tenancy_state.clone()),
        ("openbao", links.bao_state.clone()),
    ];
    let status = super::status::status_value(
        cfg,
        st,
        cfg.token_path().exists(),
        links.token_ttl_s,
        cfg.transport.as_str(),
        &endpoints,
        &containers,
    );
    let root = st.care.docker_root.clone();
    let free = root
        .as_deref()
        .and_then(|r| runtime::free_bytes(Path::new(r)).ok());
    let releases: Vec<Value> = state::releases(&cfg.releases_dir())
        .iter()
        .map(|r| {
            json!({
                "sha": r.file_name().unwrap_or_default().to_string_lossy(),
                "bytes": super::reclaim::dir_bytes(r),
            })
        })
        .collect();
    let egress = egress_section(cfg, &links.egress, engine).await;
    let mut v = json!({
        "agent": {
            "version": VERSION,
            "compose": compose_version,
            "transport": cfg.transport.as_str(),
            "ziti_sdk": transport::sdk::sdk_version(),
            "host": hostname(),
        },
        "status": status,
        "services": services,
        "disk": {
            "docker_root": root,
            "free_bytes": free,
            "watermark_bytes": super::reclaim::watermark(cfg, &running_release(cfg, st)),
            "keep_releases": cfg.keep_releases,
            "releases": releases,
            "last_reclaim": st.care.last_reclaim,
            "reclaimed_bytes_total": st.counters.reclaimed_bytes,
        },
        "clock": {
            "skew_s": st.counters.clock_skew_s,
            "says": st.counters.clock_skew_s.map(monky_base::clock::describe),
        },
        "links": {
            "transport": cfg.transport.as_str(),
            "tenancy": {"rtt_ms": links.tenancy_rtt_ms, "state": links.tenancy_state},
            "openbao": {"rtt_ms": links.bao_rtt_ms, "state": links.bao_state},
        },
        "egress": egress,
        // a plan needs the desired bundle (up to 16 MiB) and compose's `config`: not cheap
        // enough for a support bundle; `monky-deployd plan --json` on the box does it
        "plan": null,
        "limits": {
            "log_lines": LOG_LINES,
            "log_bytes_per_container": cap,
            "logs_cut": logs_cut,
        },
        "truncated": logs_cut > 0,
    });
    redact_strings(&mut v);
    fit(&mut v, BUNDLE_MAX - ENVELOPE);
    v
}

/// The bundle for a human: the figures first, then each service with its probes and log.
pub fn text(v: &Value) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let s = |x: &Value| match x {
        Value::String(t) => t.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    };
    let a = &v["agent"];
    let _ = writeln!(
        o,
        "agent          {} (compose {}, transport {}, host {})",
        s(&a["version"]),
        s(&a["compose"]),
        s(&a["transport"]),
        s(&a["host"])
    );
    let st = &v["status"];
    let _ = writeln!(o, "env            {}", s(&st["env_id"]));
    let _ = writeln!(o, "applied        {}", s(&st["applied_sha"]));
    let _ = writeln!(o, "desired        {}", s(&st["desired_sha"]));
    let _ = writeln!(o, "last error     {}", s(&st["last_error"]));
    for l in ["tenancy", "openbao"] {
        let x = &v["links"][l];
        let _ = writeln!(o, "{l:<14} {} ({} ms)", s(&x["state"]), s(&x["rtt_ms"]));
    }
    let e = &v["egress"];
    let _ = writeln!(
        o,
        "egress proxy   {}",
        match e["proxy"].as_str() {
            Some(p) if e["basic_auth"] == true => format!("{p} (Basic auth)"),
            Some(p) => p.to_string(),
            None => "none".into(),
        }
    );
    for t in e["targets"].as_array().into_iter().flatten() {
        let _ = writeln!(o, "  {:<12} {}", s(&t["target"]), s(&t["route"]));
    }
    let d = &e["dockerd"];
    let _ = writeln!(
        o,
        "dockerd proxy  {}",
        if let Some(err) = d["error"].as_str() {
            format!("unknown ({err})")
        } else if d["any"] == true {
            let or_dash = |x: &Value| match x.as_str() {
                Some("") | None => "-".to_string(),
                Some(t) => t.to_string(),
            };
            format!(
                "https {} http {} no_proxy {}",
                or_dash(&d["https_proxy"]),
                or_dash(&d["http_proxy"]),
                or_dash(&d["no_proxy"])
            )
        } else {
            "none".into()
        }
    );
    if let Some(w) = e["warning"].as_str() {
        let _ = writeln!(o, "WARNING        {w}");
    }
    let _ = writeln!(
        o,
        "clock          {}",
        match v["clock"]["says"].as_str() {
            Some(t) => t.to_string(),
            None => "skew unknown (no tenancy answer yet)".into(),
        }
    );
    let d = &v["disk"];
    let _ = writeln!(
        o,
        "disk           {} free on {} ({} releases kept at most; {} bytes reclaimed so far)",
        s(&d["free_bytes"]),
        s(&d["docker_root"]),
        s(&d["keep_releases"]),
        s(&d["reclaimed_bytes_total"])
    );
    for r in d["releases"].as_array().into_iter().flatten() {
        let _ = writeln!(o, "  release {} {} bytes", s(&r["sha"]), s(&r["bytes"]));
    }
    for c in v["services"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "\n== {} ({}) {} {} restarts={} exit={} oom={}",
            s(&c["service"]),
            s(&c["container"]),
            s(&c["state"]),
            s(&c["health"]),
            s(&c["restarts"]),
            s(&c["exit_code"]),
            s(&c["oom_killed"])
        );
        for p in c["health_probes"].as_array().into_iter().flatten() {
            let _ = writeln!(
                o,
                "  probe exit {} at {}: {}",
                s(&p["exit_code"]),
                s(&p["at"]),
                s(&p["output"]).trim()
            );
        }
        let _ = writeln!(o, "  --- log tail");
        for line in c["log_tail"].as_str().unwrap_or("").lines() {
            let _ = writeln!(o, "  {line}");
        }
    }
    if v["truncated"] == true {
        if let Some(cap) = v["limits"]["log_bytes_per_container"].as_u64() {
            let _ = writeln!(o, "\n(log tails read capped at {cap} bytes each)");
        }
        let _ = writeln!(o, "\n(cut to fit 1 MiB: log tails shortened)");
    }
    o
}

/// The running release's directory, as `Agent::running_release` finds it.
fn running_release(cfg: &Config, st: &State) -> PathBuf {
    match &st.applied_sha {
        Some(sha) if monky_wire::tenancy::is_sha(sha) => cfg.releases_dir().join(sha),
        _ => cfg.current_link(),
    }
}

/// One container as the bundle shows it: the engine's state, restarts, last exit, the last
/// health probes and a log tail of at most `cap` bytes (read capped, then redacted and cut
/// with its edges masked). Never its environment or its labels (values live there). Also
/// whether the log tail was cut.
async fn service_entry<E: EngineApi>(engine: &E, c: &Container, cap: usize) -> (Value, bool) {
    let insp = engine.inspect(c).await.unwrap_or(Value::Null);
    let s = &insp["State"];
    let probes = probe_entries(&insp);
    let (logs, cut_bytes, cut) = if cap == 0 {
        (
            "(left out: too many containers for the bundle's log budget)".to_string(),
            Value::Null,
            true,
        )
    } else {
        match engine.log_tail(c, LOG_LINES, cap).await {
            Ok(r) => {
                let text = redact::redact_cut(&r.text, cap, redact::Keep::Tail);
                let mut text = if r.dropped > 0 && !text.is_empty() {
                    format!("(… {} earlier bytes cut)\n{text}", r.dropped)
                } else {
                    text
                };
                if r.timed_out {
                    text.push_str("\n(log read timed out: the tail of what arrived)");
                }
                (text, json!(r.dropped), r.dropped > 0 || r.timed_out)
            }
            Err(e) => (format!("(no logs: {e})"), Value::Null, false),
        }
    };
    let v = json!({
        "service": c.service,
        "container": c.id.chars().take(12).collect::<String>(),
        "image": insp["Config"]["Image"],
        "state": c.state,
        "health": c.health,
        "restarts": insp["RestartCount"],
        "exit_code": s["ExitCode"],
        "oom_killed": s["OOMKilled"],
        "started_at": s["StartedAt"],
        "finished_at": s["FinishedAt"],
        "error": s["Error"],
        "health_probes": probes,
        "log_tail": logs,
        "log_cut_bytes": cut_bytes,
    });
    (v, cut)
}

/// The last three health probes of an inspect document, each output redacted before it is cut.
fn probe_entries(insp: &Value) -> Vec<Value> {
    let log = insp["State"]["Health"]["Log"].as_array();
    let last3 = log
        .map(|l| &l[l.len().saturating_sub(3)..])
        .unwrap_or_default();
    last3
        .iter()
        .map(|p| {
            // the edges are masked too: Docker has cut the output already (4 KiB)
            let out = p["Output"].as_str().unwrap_or("");
            json!({
                "exit_code": p["ExitCode"],
                "at": p["End"],
                "output": redact::redact_cut(out, PROBE_OUTPUT_MAX, redact::Keep::Head),
            })
        })
        .collect()
}

/// Every string (not the keys, which are the bundle's own names) through the redactor.
fn redact_strings(v: &mut Value) {
    match v {
        Value::String(s) => {
            let r = redact::redact(s);
            if r != *s {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_strings),
        Value::Object(o) => o.values_mut().for_each(redact_strings),
        _ => {}
    }
}

fn size(v: &Value) -> usize {
    serde_json::to_vec(v).map(|b| b.len()).unwrap_or(usize::MAX)
}

/// Keeps the bundle under `max` serialised bytes: log tails are halved (their ends kept)
/// until it fits, then dropped, then the probe outputs; `truncated` says it happened.
fn fit(v: &mut Value, max: usize) {
    if size(v) <= max {
        return;
    }
    v["truncated"] = Value::Bool(true);
    for _ in 0..16 {
        if size(v) <= max {
            return;
        }
        for s in v["services"].as_array_mut().into_iter().flatten() {
            if let Some(t) = s["log_tail"].as_str() {
                let half = redact::redact_cut(t, t.len() / 2, redact::Keep::Tail);
                s["log_tail"] = Value::String(half);
            }
        }
    }
    for s in v["services"].as_array_mut().into_iter().flatten() {
        s["log_tail"] = Value::String(String::new());
        s["health_probes"] = json!([]);
    }
    if size(v) > max {
        // only the status and the figures are left: the services are what is large
        v["services"] = json!([]);
    }
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// `collect: <id>` in the check-in answer: gather and send the bundle, at most one per
    /// `diagnostics_min_interval_s`, once per request id.
    pub(super) async fn collect_if_asked(&mut self, request: Option<&str>) {
        let Some(id) = request else { return };
        if id.is_empty() || id.len() > 200 || id.chars().any(char::is_control) {
            warn!("diagnostics: ignoring a malformed request id");
            return;
        }
        let now = state::now();
        let care = &self.state.care;
        if care.last_diagnostics_id.as_deref() == Some(id) {
            debug!("diagnostics {id}: already sent");
            return;
        }
        if let Some(last) = care.last_diagnostics_at {
            let min = self.cfg.diagnostics_min_interval_s;
            if now < last.saturating_add(min) {
                info!(
                    "diagnostics {id}: not sent, the last bundle went {}s ago (diagnostics_min_interval_s: {min})",
                    now.saturating_sub(last)
                );
                return;
            }
        }
        let token = self.tokens.bearer();
        let started = std::time::Instant::now();
        let ttl = self.c.bao.ttl(&token).await;
        let bao_rtt = u64::try_from(started.elapsed().as_millis()).ok();
        let seen = self.c.tenancy.seen();
        let links = Links {
            tenancy_rtt_ms: seen.checkin_rtt_ms,
            tenancy_state: "answered the check-in".into(),
            bao_rtt_ms: bao_rtt,
            bao_state: match &ttl {
                Ok(_) => "answered lookup-self".into(),
                Err(e) => format!("lookup-self failed: {e}"),
            },
            token_ttl_s: ttl.ok(),
            egress: self.egress.clone(),
        };
        let compose = match Compose::detect(
            &self.cfg,
            &self.docker_wait,
            runtime::Bounds::within(Duration::from_secs(60)),
        )
        .await
        {
            Ok(c) => c.version().await,
            Err(e) => format!("unknown ({e})"),
        };
        let bundle = gather(&self.cfg, &self.state, &self.engine, &links, &compose).await;
        monky_base::testhook::pause("extra:collect");
        let d = Diagnostics {
            env_id: &self.cfg.env_id,
            request_id: id,
            agent_version: VERSION,
            collected_at: rollback::rfc3339(now),
            bundle: &bundle,
        };
        match self.c.tenancy.diagnostics(&token, &d).await {
            Ok(()) => {
                info!(
                    "diagnostics {id}: sent ({} bytes)",
                    size(&bundle)
                );
                self.state.care.last_diagnostics_at = Some(now);
                self.state.care.last_diagnostics_id = Some(id.to_string());
            }
            Err(TenancyError::RateLimited { retry_after, .. }) => info!(
                "diagnostics {id}: tenancy does not want it now (retry after {retry_after}s); sent when asked again"
            ),
            Err(e) => warn!("diagnostics {id}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests;

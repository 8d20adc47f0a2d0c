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
use crate::tenancy::Diagnostics;

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
    let status = crate::commands::status_value(
        cfg,
        st,
        cfg.token_path().exists(),
        links.token_ttl_s,
        cfg.transport.as_str(),
        &endpoints,
        &containers
            .as_ref()
            .map(|c| c.clone())
            .map_err(|e| e.to_string()),
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
            "says": st.counters.clock_skew_s.map(crate::clock::describe),
        },
        "links": {
            "transport": cfg.transport.as_str(),
            "tenancy": {"rtt_ms": links.tenancy_rtt_ms, "state": links.tenancy_state},
            "openbao": {"rtt_ms": links.bao_rtt_ms, "state": links.bao_state},
        },
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
        Some(sha) if crate::tenancy::is_sha(sha) => cfg.releases_dir().join(sha),
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
        };
        let compose = match Compose::detect(&self.cfg, &self.docker_wait).await {
            Ok(c) => c.version().await,
            Err(e) => format!("unknown ({e})"),
        };
        let bundle = gather(&self.cfg, &self.state, &self.engine, &links, &compose).await;
        crate::testhook::pause("extra:collect");
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
mod tests {
    use super::*;

    /// An engine whose containers each log `bytes` of long lines, streamed to the reader in
    /// 64 KiB chunks as the real one is; it records the largest tail it was asked to keep.
    struct Busy {
        n: usize,
        bytes: usize,
        secret: String,
        max_cap: std::cell::Cell<usize>,
    }

    impl EngineApi for Busy {
        async fn containers(&self, _p: &str) -> Result<Vec<Container>, RuntimeError> {
            Ok((0..self.n)
                .map(|i| Container {
                    service: format!("svc{i}"),
                    id: format!("{i:064}"),
                    state: "running".into(),
                    ..Default::default()
                })
                .collect())
        }
        async fn containers_raw(&self, _p: &str) -> Result<Vec<Value>, RuntimeError> {
            Ok(Vec::new())
        }
        async fn diagnose(&self, _c: &Container) -> String {
            String::new()
        }
        async fn restarts(&self, _c: &Container) -> Option<u64> {
            None
        }
        async fn last_exit(&self, _c: &Container, _s: u64) -> Option<i64> {
            None
        }
        async fn docker_root(&self) -> Result<PathBuf, RuntimeError> {
            Ok("/nonexistent".into())
        }
        async fn prune_images(&self) -> Result<u64, RuntimeError> {
            Ok(0)
        }
        async fn log_tail(
            &self,
            c: &Container,
            _lines: u32,
            cap: usize,
        ) -> Result<runtime::LogRead, RuntimeError> {
            self.max_cap.set(self.max_cap.get().max(cap));
            let mut t = runtime::LogTail::new(cap);
            // one long line per 256 KiB frame, the secret at each line's end (so at the cut)
            let line = format!("{}{} {}\n", "y".repeat(256 << 10), self.secret, c.service);
            let mut frame = vec![1u8, 0, 0, 0];
            frame.extend_from_slice(&(line.len() as u32).to_be_bytes());
            frame.extend_from_slice(line.as_bytes());
            let mut sent = 0;
            while sent < self.bytes {
                for chunk in frame.chunks(64 << 10) {
                    t.feed(chunk);
                }
                sent += frame.len();
            }
            let (text, dropped) = t.finish();
            Ok(runtime::LogRead {
                text,
                dropped,
                timed_out: false,
            })
        }
    }

    fn gather_busy(n: usize, bytes: usize) -> (Value, usize) {
        redact::isolate();
        let secret = "Kp4-busy-secret-value9";
        redact::register(secret);
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config {
            state_dir: dir.path().join("state"),
            ..Config::default()
        };
        let e = Busy {
            n,
            bytes,
            secret: secret.into(),
            max_cap: Default::default(),
        };
        let links = Links {
            tenancy_rtt_ms: None,
            tenancy_state: String::new(),
            bao_rtt_ms: None,
            bao_state: String::new(),
            token_ttl_s: None,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let v = rt.block_on(gather(&cfg, &State::default(), &e, &links, "test"));
        let t = v.to_string();
        assert!(
            !t.contains(&secret[..10]),
            "the secret, whole or cut, stays masked"
        );
        redact::forget_all();
        (v, e.max_cap.get())
    }

    #[test]
    fn a_busy_box_s_logs_are_capped_per_container_and_in_total() {
        // 30 containers × 8 MiB of 256 KiB lines: 240 MiB offered, the bundle under 1 MiB
        let (v, cap) = gather_busy(30, 8 << 20);
        assert_eq!(cap, LOG_BUDGET / 30);
        assert!(size(&v) <= BUNDLE_MAX - ENVELOPE, "{}", size(&v));
        let services = v["services"].as_array().unwrap();
        assert_eq!(services.len(), 30, "every container is in, its tail cut");
        for s in services {
            let t = s["log_tail"].as_str().unwrap();
            assert!(
                t.starts_with("(… ") && t.contains("earlier bytes cut)"),
                "{}",
                &t[..40]
            );
            assert!(t.len() <= cap + 40, "{}", t.len());
            assert!(t.ends_with(&format!("{}\n", s["service"].as_str().unwrap())));
            assert!(s["log_cut_bytes"].as_u64().unwrap() > 7 << 20);
        }
        assert_eq!(v["truncated"], true);
        assert_eq!(v["limits"]["logs_cut"], 30);

        // a few containers: each gets the per-source cap, not more
        let (v, cap) = gather_busy(2, 1 << 20);
        assert_eq!(cap, LOG_SOURCE_MAX);
        assert!(size(&v) <= BUNDLE_MAX - ENVELOPE);

        // thousands: the share is too small to say anything, logs are left out and it says so
        let (v, cap) = gather_busy(4000, 1 << 20);
        assert_eq!(cap, 0);
        assert!(size(&v) <= BUNDLE_MAX - ENVELOPE);
        assert_eq!(v["truncated"], true);
    }

    #[test]
    fn the_log_budget_fits_the_bundle_at_any_count() {
        for n in [0, 1, 9, 10, 11, 100, 2560, 2561, 100_000] {
            let cap = log_cap(n);
            assert!(cap <= LOG_SOURCE_MAX);
            assert!(cap * n.max(1) <= LOG_BUDGET, "{n}");
        }
        const { assert!(LOG_BUDGET + ENVELOPE < BUNDLE_MAX) };
    }

    #[test]
    fn every_string_is_redacted_and_names_stay() {
        redact::isolate();
        redact::register("hunter2-diag-secret");
        let mut v = json!({
            "services": [{"service": "web", "log_tail": "pw=hunter2-diag-secret ok",
                          "health_probes": [{"output": "token s.abcdefghijklmnopqrstuvwx"}]}],
            "n": 3,
        });
        redact_strings(&mut v);
        let t = v.to_string();
        assert!(!t.contains("hunter2-diag-secret"), "{t}");
        assert!(!t.contains("s.abcdefghijklmnopqrstuvwx"), "{t}");
        assert_eq!(v["services"][0]["service"], "web");
        assert_eq!(v["n"], 3);
        redact::forget_all();
    }

    #[test]
    fn probe_output_is_redacted_before_its_cut_and_at_docker_s_cut() {
        redact::isolate();
        let secret = "Zq9-probe-secret-v4lue";
        redact::register(secret);
        // straddling the cut: cut first (0.4.0), its head survived unmasked
        let straddle = format!("{}{secret} tail", "x".repeat(PROBE_OUTPUT_MAX - 8));
        // Docker's own cap ended the output inside the secret
        let docker_cut = format!("{}{}", "y".repeat(100), &secret[..9]);
        let insp = json!({"State": {"Health": {"Log": [
            {"ExitCode": 1, "Output": straddle}, {"ExitCode": 1, "Output": docker_cut}]}}});
        let got = Value::Array(probe_entries(&insp)).to_string();
        assert!(
            !got.contains(&secret[..8]) && !got.contains(&secret[..4]),
            "{got}"
        );
        assert!(got.contains("xxx***") && got.contains("yyy***"), "{got}");
    }

    #[test]
    fn the_text_form_leads_with_the_figures_then_each_service() {
        let v = json!({
            "agent": {"version": "0.3.0", "compose": "2.22.0", "transport": "system", "host": "h"},
            "status": {"env_id": "env-a", "applied_sha": "abc", "desired_sha": "abc", "last_error": null},
            "links": {"tenancy": {"state": "answered the check-in", "rtt_ms": 12},
                      "openbao": {"state": "answered lookup-self", "rtt_ms": 3}},
            "clock": {"skew_s": 240, "says": "the box's clock is 4 min ahead of tenancy"},
            "disk": {"free_bytes": 1000, "docker_root": "/var/lib/docker", "keep_releases": 5,
                     "reclaimed_bytes_total": 0, "releases": [{"sha": "abc", "bytes": 10}]},
            "services": [{"service": "web", "container": "0123456789ab", "state": "running",
                          "health": "unhealthy", "restarts": 2, "exit_code": 0, "oom_killed": false,
                          "health_probes": [{"exit_code": 1, "at": "t", "output": "no\n"}],
                          "log_tail": "one\ntwo\n"}],
            "truncated": true,
        });
        let t = text(&v);
        assert!(
            t.starts_with("agent          0.3.0 (compose 2.22.0, transport system, host h)\n"),
            "{t}"
        );
        assert!(
            t.contains("tenancy        answered the check-in (12 ms)\n"),
            "{t}"
        );
        assert!(
            t.contains("clock          the box's clock is 4 min ahead of tenancy\n"),
            "{t}"
        );
        assert!(t.contains("  release abc 10 bytes\n"), "{t}");
        assert!(
            t.contains("== web (0123456789ab) running unhealthy restarts=2 exit=0 oom=false\n"),
            "{t}"
        );
        assert!(t.contains("  probe exit 1 at t: no\n"), "{t}");
        assert!(t.contains("  --- log tail\n  one\n  two\n"), "{t}");
        assert!(
            t.ends_with("(cut to fit 1 MiB: log tails shortened)\n"),
            "{t}"
        );
        let unknown = text(&json!({"clock": {"says": null}}));
        assert!(unknown.contains("skew unknown"), "{unknown}");
    }

    #[test]
    fn a_bundle_over_the_limit_loses_log_text_first_and_says_so() {
        let big = "x".repeat(300_000);
        let mut v = json!({
            "status": {"env_id": "e"},
            "services": [
                {"service": "a", "log_tail": format!("{big}END-A"), "health_probes": []},
                {"service": "b", "log_tail": format!("{big}END-B"), "health_probes": []},
            ],
            "truncated": false,
        });
        fit(&mut v, 200_000);
        assert!(size(&v) <= 200_000, "{}", size(&v));
        assert_eq!(v["truncated"], true);
        // the newest lines are the ones kept
        assert!(v["services"][0]["log_tail"]
            .as_str()
            .unwrap()
            .ends_with("END-A"));
        assert_eq!(v["status"]["env_id"], "e");

        let mut small = json!({"services": [{"log_tail": "short"}], "truncated": false});
        fit(&mut small, 10_000);
        assert_eq!(small["truncated"], false);
        assert_eq!(small["services"][0]["log_tail"], "short");
    }
}

//! `status --json`'s document: what `monky-deployd status` prints and what a diagnostics bundle
//! carries under `status`.

use super::VERSION;
use monky_host::config::Config;
use monky_host::state;
use monky_wire::transport;

/// The maintenance windows, if any, and when the next opens (`None`: open now).
pub fn windows_now(cfg: &Config) -> (Option<monky_base::windows::Windows>, Option<String>) {
    let windows = monky_base::windows::Windows::parse(&cfg.apply_windows, &cfg.apply_windows_tz)
        .ok()
        .filter(|w| !w.is_empty());
    let next = windows.as_ref().and_then(|w| {
        w.wait(&w.now())
            .map(|(name, at)| format!("{name} at {}", at.strftime("%Y-%m-%dT%H:%M:%S%:z")))
    });
    (windows, next)
}

/// `status --json`'s document, from what the caller measured (the CLI probes the endpoints;
/// a diagnostics bundle passes what the tick saw).
pub fn status_value(
    cfg: &Config,
    st: &state::State,
    token_present: bool,
    token_ttl: Option<u64>,
    transport_detail: &str,
    endpoints: &[(&str, String)],
    containers: &Result<Vec<monky_wire::tenancy::Container>, monky_host::runtime::RuntimeError>,
) -> serde_json::Value {
    let (_, window_next) = windows_now(cfg);
    let signing_keys: Vec<&String> = cfg.bundle_signing_keys.keys().collect();
    let high_water = st.high_water_mark(&cfg.high_water_path());
    let snapshots: Vec<serde_json::Value> = monky_host::data::Store::new(cfg.snapshots_dir())
        .list()
        .iter()
        .map(|s| {
            serde_json::json!({"release": s.meta.release, "taken_for": s.meta.taken_for,
                "volume": s.meta.volume, "bytes": s.meta.bytes, "taken_at": s.meta.taken_at,
                "location": s.tree.display().to_string()})
        })
        .collect();
    serde_json::json!({
        "env_id": cfg.env_id,
        // the box's instance this is ("" = the default one)
        "instance": cfg.instance.label(),
        "agent_version": VERSION,
        "transport": cfg.transport.as_str(),
        "transport_detail": transport_detail,
        "ziti_sdk": transport::sdk::sdk_version(),
        "endpoints": endpoints.iter().map(|(l, s)| serde_json::json!({"name": l, "state": s})).collect::<Vec<_>>(),
        "token_present": token_present,
        "token_source": st.token.as_ref().map(|t| format!("{:?}", t.source).to_lowercase()),
        "token_ttl_s": token_ttl,
        "token_expires_at": st.token.as_ref().map(|t| t.expires_at),
        "applied_sha": st.applied_sha,
        "desired_sha": st.desired_sha,
        "in_sync": st.applied_sha.is_some() && st.applied_sha == st.desired_sha,
        "last_action": st.last_action,
        "last_checkin": st.last_checkin,
        "last_report": st.last_report,
        "last_result": st.last_result,
        "last_error": st.last_error,
        "containers": containers.as_ref().map(|c| c.as_slice()).unwrap_or(&[]),
        "docker": containers.as_ref().err().map(|e| e.to_string()),
        "bundle_signatures": {"required": !signing_keys.is_empty(), "key_ids": signing_keys},
        "statements": {"required": cfg.require_statements, "high_water": high_water,
            "running_expires_at": st.statement_expires_at},
        "metrics_textfile": (!cfg.metrics_textfile.is_empty()).then_some(&cfg.metrics_textfile),
        "apply_windows": {"entries": cfg.apply_windows, "open_now": window_next.is_none(), "next": window_next},
        "counters": st.counters,
        "last_success": st.counters.last_success,
        "applied_serial": st.applied_serial,
        "failed_release": st.failed_release,
        "clock_skew_s": st.counters.clock_skew_s,
        "last_reclaim": st.care.last_reclaim,
        "snapshots": snapshots,
        "update_lock_hold": st.lock_hold,
    })
}

//! The two operator commands besides the tick, as library functions `main` calls: `bootstrap`
//! and `status`.

use std::time::Duration;

use monky_agent::status::{status_value, windows_now};
use monky_agent::{self as agent, Agent, Exit, Failure};
use monky_base::redact;
use monky_host::config::Config;
use monky_host::journal::early_error;
use monky_host::{remotes, runtime, state};
use monky_wire::transport;

/// `monky-deployd bootstrap [--force]`: log in with the kit's grant and store the token, under
/// the tick's lock. `Ok` carries what to tell the operator.
pub async fn bootstrap(cfg: Config, force: bool) -> Result<String, Failure> {
    let token_path = cfg.token_path();
    if !force && token_path.exists() {
        return Ok(format!(
            "a token is already stored at {}; use --force to replace it",
            token_path.display()
        ));
    }
    let lock_dir = cfg.state_dir.clone();
    state::ensure_dir(&lock_dir, 0o700)?;
    let Some(_lock) = state::try_lock(&cfg.lock_path())? else {
        return Err(Failure::temporary(
            "a tick is running; try again in a moment",
        ));
    };
    Agent::new(cfg, false)?.bootstrap(force).await?;
    Ok(format!("token stored at {}", token_path.display()))
}

/// `monky-deployd status [--json]`: what the box knows (state, token, containers) and whether
/// each endpoint answers through the whole stack; printed. Never changes anything.
pub async fn status(cfg: Config, json: bool) -> Exit {
    let st = state::State::load(&cfg.state_path()).unwrap_or_default();
    let token = state::read_token(&cfg.token_path()).ok().flatten();
    let engine = runtime::Engine::new(cfg.docker_socket());
    let containers = engine.containers(&cfg.compose_project).await;
    let conn = remotes::connector(&cfg);
    let egress = conn
        .as_ref()
        .ok()
        .and_then(|c| c.egress().cloned())
        .unwrap_or_default();
    // the proxy password is masked in whatever this prints
    egress.register_secrets();
    let (transport_ok, token_ttl, tenancy_reach) = match &conn {
        Ok(c) => {
            let cl = remotes::clients(&cfg, c);
            let mut ttl = None;
            let mut reach = Vec::new();
            if let Err(e) = &cl {
                reach.push(("clients", format!("not usable: {e}")));
            }
            if let Ok(cl) = &cl {
                if let Some(t) = &token {
                    ttl = cl.bao().lookup_self(t).await.ok().map(|i| i.ttl);
                }
                // through the full stack: transport, then the TLS handshake for https
                for http in [cl.tenancy().http(), cl.bao().http()] {
                    let r = tokio::time::timeout(Duration::from_secs(10), http.probe()).await;
                    let ok = match r {
                        Ok(Ok(())) => "dialable".to_string(),
                        Ok(Err(e)) => format!("unreachable: {e}"),
                        Err(_) => "unreachable: timed out".to_string(),
                    };
                    reach.push((http.label(), redact::redact(&ok)));
                }
            }
            (Ok(c.describe()), ttl, reach)
        }
        Err(e) => (Err(e.to_string()), None, Vec::new()),
    };
    let transport_detail = transport_ok.clone().unwrap_or_else(|e| e);
    let mut v = status_value(
        &cfg,
        &st,
        token.is_some(),
        token_ttl,
        &transport_detail,
        &tenancy_reach,
        &containers,
    );
    // which mode runs: the service leaves its pid in service.json; otherwise the timer's
    // oneshot (or nothing) runs the ticks
    let svc = crate::service::running(&cfg.state_dir);
    v["egress_proxy"] = serde_json::json!(egress.proxy().map(|p| p.shown()));
    v["run_mode"] = match &svc {
        Some(d) => serde_json::json!({"mode": d.mode, "pid": d.pid, "since": d.started_at,
            "ticks": d.ticks, "last_tick_at": d.last_tick_at, "last_exit": d.last_exit,
            "watchdog_s": d.watchdog_s}),
        None => serde_json::json!({"mode": "timer"}),
    };
    let sdk = transport::sdk::sdk_version();
    let (windows, window_next) = windows_now(&cfg);
    let signing_keys: Vec<&String> = cfg.bundle_signing_keys.keys().collect();
    let high_water = st.high_water_mark(&cfg.high_water_path());
    let statements = format!(
        "{}; high-water serial {}{}",
        if cfg.require_statements {
            "required"
        } else {
            "optional"
        },
        high_water
            .as_ref()
            .map_or_else(|| "-".to_string(), |h| h.serial.to_string()),
        st.statement_expires_at
            .map(|t| format!(
                "; running release's expires {}",
                monky_boundary::statement::rfc3339(t)
            ))
            .unwrap_or_default()
    );
    let signatures = if signing_keys.is_empty() {
        "unsigned accepted (no bundle_signing_keys)".to_string()
    } else {
        format!(
            "required, by one of: {}",
            signing_keys
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        let ts = |t: Option<u64>| {
            t.map(|s| monky_boundary::statement::rfc3339(i64::try_from(s).unwrap_or(i64::MAX)))
                .unwrap_or_else(|| "never".into())
        };
        println!("env            {}", cfg.env_id);
        if let Some(n) = &cfg.instance.name {
            println!("instance       {n} (`monky-deployd instances` lists the box's)");
        }
        println!("agent          {}", agent::VERSION);
        match &svc {
            Some(d) => println!(
                "mode           {} (pid {}, since {}, {} ticks, last exit {})",
                d.mode,
                d.pid,
                ts(Some(d.started_at)),
                d.ticks,
                d.last_exit
            ),
            None => println!("mode           timer (no service running; ticks by `run --once`)"),
        }
        println!(
            "transport      {} ({}; ziti sdk {})",
            cfg.transport.as_str(),
            v["transport_detail"].as_str().unwrap_or(""),
            sdk.as_deref().unwrap_or("none")
        );
        for (l, s) in &tenancy_reach {
            println!("  {l:<12} {s}");
        }
        if let Some(p) = egress.proxy() {
            println!(
                "egress proxy   {}{}",
                p.shown(),
                if p.credentials.is_some() {
                    " (Basic auth)"
                } else {
                    ""
                }
            );
        }
        println!(
            "token          {}{}",
            if token.is_some() { "present" } else { "ABSENT" },
            match (token_ttl, &st.token) {
                (Some(t), Some(m)) => format!(" ({:?}, ttl {t}s)", m.source).to_lowercase(),
                (None, Some(m)) => format!(" ({:?}, ttl unknown)", m.source).to_lowercase(),
                _ => String::new(),
            }
        );
        println!(
            "applied        {}",
            st.applied_sha.as_deref().unwrap_or("-")
        );
        println!(
            "desired        {}{}",
            st.desired_sha.as_deref().unwrap_or("-"),
            if v["in_sync"].as_bool() == Some(true) {
                "  (in sync)"
            } else {
                ""
            }
        );
        println!("signatures     {signatures}");
        println!("statements     {statements}");
        if windows.is_some() {
            println!(
                "apply windows  {} ({})",
                cfg.apply_windows.join(", "),
                match &window_next {
                    None => "open now".to_string(),
                    Some(n) => format!("closed; next {n}"),
                }
            );
        }
        println!("last checkin   {}", ts(st.last_checkin));
        println!(
            "last report    {} {}",
            ts(st.last_report),
            st.last_result.as_deref().unwrap_or("")
        );
        if let Some(f) = &st.failed_release {
            println!(
                "rolled back    {} failed{}; not retried before {} unless the desired sha changes",
                f.sha,
                if f.rollback_ok {
                    format!(", {} brought back", f.rolled_back_to)
                } else {
                    format!(", bringing {} back failed too", f.rolled_back_to)
                },
                ts(Some(f.at.saturating_add(cfg.retry_failed_after_s)))
            );
        }
        if let Some(h) = &st.lock_hold {
            println!(
                "update lock    {} held by {}'s lock since {}",
                h.what.get(..12).unwrap_or(&h.what),
                h.service,
                ts(Some(h.since))
            );
        }
        if let Some(list) = v["snapshots"].as_array().filter(|l| !l.is_empty()) {
            println!("snapshots      (`monky-deployd snapshots` for where)");
            for s in list {
                println!(
                    "  {:<12} {:<20} {:>12} bytes  {}",
                    s["release"]
                        .as_str()
                        .unwrap_or_default()
                        .get(..12)
                        .unwrap_or_default(),
                    s["volume"].as_str().unwrap_or_default(),
                    s["bytes"].as_u64().unwrap_or(0),
                    ts(s["taken_at"].as_u64())
                );
            }
        }
        if let Some(e) = &st.last_error {
            println!("last error     {}", redact::redact(e));
        }
        match &containers {
            Ok(cs) if cs.is_empty() => println!("containers     none"),
            Ok(cs) => {
                println!("containers");
                for c in cs {
                    println!(
                        "  {:<20} {:<10} {}{}",
                        c.service,
                        c.state,
                        c.health,
                        c.image
                            .as_deref()
                            .map(|i| format!("  {i}"))
                            .unwrap_or_default()
                    );
                }
            }
            Err(e) => println!("containers     ? ({e})"),
        }
    }
    Exit::Ok
}

/// `monky-deployd diagnose [--json]`: the bundle tenancy gets on `collect` (redacted, under
/// 1 MiB), printed here; the links are probed (dial + TLS) and timed. Sends nothing.
pub async fn diagnose(cfg: Config, json: bool) -> Exit {
    let st = state::State::load(&cfg.state_path()).unwrap_or_default();
    let token = state::read_token(&cfg.token_path()).ok().flatten();
    let engine = runtime::Engine::new(cfg.docker_socket());
    let mut links = agent::diagnose::Links {
        tenancy_rtt_ms: None,
        tenancy_state: "not probed".into(),
        bao_rtt_ms: None,
        bao_state: "not probed".into(),
        token_ttl_s: None,
        egress: Default::default(),
    };
    let conn = remotes::connector(&cfg);
    if let Some(e) = conn.as_ref().ok().and_then(|c| c.egress()) {
        // the proxy password is masked in the bundle printed below
        e.register_secrets();
        links.egress = e.clone();
    }
    match conn.map(|c| remotes::clients(&cfg, &c)) {
        Ok(Ok(cl)) => {
            (links.tenancy_rtt_ms, links.tenancy_state) = probe_timed(cl.tenancy().http()).await;
            (links.bao_rtt_ms, links.bao_state) = probe_timed(cl.bao().http()).await;
            if let Some(t) = &token {
                links.token_ttl_s = cl.bao().lookup_self(t).await.ok().map(|i| i.ttl);
            }
        }
        Ok(Err(e)) => links.tenancy_state = format!("clients not usable: {e}"),
        Err(e) => links.tenancy_state = format!("transport not usable: {e}"),
    }
    let compose = match runtime::Compose::detect(
        &cfg,
        &Default::default(),
        runtime::Bounds::within(std::time::Duration::from_secs(60)),
    )
    .await
    {
        Ok(c) => c.version().await,
        Err(e) => format!("unknown ({e})"),
    };
    let v = agent::diagnose::gather(&cfg, &st, &engine, &links, &compose).await;
    if json {
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print!("{}", agent::diagnose::text(&v));
    }
    Exit::Ok
}

/// One endpoint through the full stack (dial, TLS), timed.
async fn probe_timed(http: &monky_wire::http::HttpClient) -> (Option<u64>, String) {
    let t = std::time::Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(10), http.probe()).await;
    let ms = u64::try_from(t.elapsed().as_millis()).ok();
    match r {
        Ok(Ok(())) => (ms, "dialable".to_string()),
        Ok(Err(e)) => (None, format!("unreachable: {e}")),
        Err(_) => (None, "unreachable: timed out".to_string()),
    }
}

/// One row of `instances`: what an instance's config and state files say (no network).
pub fn instance_row(p: &monky_host::instance::Peer) -> serde_json::Value {
    let name = p.instance.display();
    let cfg = match &p.config {
        Ok(c) => c,
        Err(e) => {
            return serde_json::json!({"instance": name, "config": p.instance.config_path(),
                "state": format!("config error: {}", redact::redact(&e.to_string()))})
        }
    };
    let path = cfg.state_path();
    let st = state::State::load(&path);
    // state.json is written at the end of every tick
    let last_tick = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    let what = match &st {
        Err(e) => format!("state unreadable: {e}"),
        Ok(_) if last_tick.is_none() => "never ticked".into(),
        Ok(s) => match (&s.last_result, &s.last_error) {
            (Some(r), Some(e)) if r != "applied" => format!("{r}: {e}"),
            (Some(r), _) => r.clone(),
            (None, Some(e)) => e.clone(),
            (None, None) => s.last_action.clone().unwrap_or_else(|| "-".into()),
        },
    };
    let st = st.unwrap_or_default();
    serde_json::json!({
        "instance": name,
        "config": cfg.path,
        "env_id": cfg.env_id,
        "transport": cfg.transport.as_str(),
        "state_dir": cfg.state_dir,
        "compose_project": cfg.compose_project,
        "last_tick": last_tick,
        "applied_sha": st.applied_sha,
        "desired_sha": st.desired_sha,
        "in_sync": st.applied_sha.is_some() && st.applied_sha == st.desired_sha,
        "state": redact::redact(&what),
    })
}

/// `monky-deployd instances` (and `status --all`): every instance on the box in one table, from
/// their config and state files. Exit 0; 1 when no instance is configured.
pub fn instances(etc_dir: &std::path::Path, json: bool) -> Exit {
    let rows: Vec<serde_json::Value> = monky_host::instance::all(etc_dir)
        .iter()
        .map(instance_row)
        .collect();
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "instances": rows }))
                .unwrap_or_default()
        );
    } else {
        print!("{}", instances_table(&rows));
    }
    if rows.is_empty() {
        early_error(&format!(
            "monky-deployd: no instance is configured in {}",
            etc_dir.display()
        ));
        return Exit::Fail;
    }
    Exit::Ok
}

/// The rows as an aligned text table.
pub fn instances_table(rows: &[serde_json::Value]) -> String {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("-").to_string();
    let mut lines = vec![[
        "INSTANCE",
        "ENV",
        "TRANSPORT",
        "LAST TICK",
        "APPLIED",
        "STATE",
    ]
    .map(String::from)
    .to_vec()];
    for r in rows {
        lines.push(vec![
            text(&r["instance"]),
            text(&r["env_id"]),
            text(&r["transport"]),
            r["last_tick"]
                .as_i64()
                .map_or_else(|| "never".into(), monky_boundary::statement::rfc3339),
            monky_wire::tenancy::short(r["applied_sha"].as_str()),
            text(&r["state"]),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in lines {
        let mut line = String::new();
        for (i, cell) in l.iter().enumerate() {
            if i + 1 == l.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `enroll --jwt … --out …`: the box's `egress_proxy` when its config exists (enrolment may
/// come first), else `HTTPS_PROXY`/`NO_PROXY` alone.
pub fn enroll(config: &std::path::Path, jwt: &std::path::Path, out: &std::path::Path) -> Exit {
    let cfg = if config.exists() {
        match Config::load(config) {
            Ok(c) => c,
            Err(e) => {
                early_error(&format!("monky-deployd: {e}"));
                return Exit::Fail;
            }
        }
    } else {
        Config::default()
    };
    let egress = match remotes::egress(&cfg) {
        Ok(e) => e,
        Err(e) => {
            tracing::error!("enroll: {e}");
            return Exit::Fail;
        }
    };
    egress.register_secrets();
    match transport::sdk::enroll_via(jwt, out, &egress) {
        Ok(()) => {
            tracing::info!("identity written to {}", out.display());
            Exit::Ok
        }
        Err(e) => {
            tracing::error!("enroll: {e}");
            Exit::Fail
        }
    }
}

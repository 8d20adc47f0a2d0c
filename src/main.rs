//! monky-deployd: the on-box pull agent for Monky backends.

use monky_deployd::{agent, config, redact, runtime, state, transport};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use tracing::{error, info};

use agent::{Agent, Exit, Failure};
use config::Config;

#[derive(Parser)]
#[command(name = "monky-deployd", version = agent::VERSION, about = "On-box pull agent for Monky backends")]
struct Cli {
    /// Configuration file.
    #[arg(long, global = true, default_value = config::DEFAULT_CONFIG_PATH)]
    config: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Converge: one tick with --once (what the timer runs), else loop every interval_s.
    Run {
        #[arg(long)]
        once: bool,
        /// Drop old releases (keeping keep_releases) and dangling images after the tick.
        #[arg(long)]
        prune: bool,
    },
    /// Token, applied vs desired sha, last check-in/report, containers, transport.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// What the next apply would do: check in, fetch and check the desired bundle, diff the
    /// services. No lease, no secret read, no `.env`, no container change, no report.
    /// Exit 0: the apply would proceed; 1: a refusal would fire; 75: transport trouble.
    Plan {
        #[arg(long)]
        json: bool,
    },
    /// Log in to OpenBao with the bootstrap grant and store the token.
    Bootstrap {
        /// Replace an existing token (kit re-revealed).
        #[arg(long)]
        force: bool,
    },
    /// Enrol a Ziti identity from a one-time JWT with the embedded SDK.
    Enroll {
        #[arg(long)]
        jwt: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    /// Print the version.
    Version,
}

/// Log lines go through the redactor before they reach stderr (journald).
struct RedactingWriter;

impl Write for RedactingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let s = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(redact::redact(&s).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn init_logging(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("MONKY_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!("monky_deployd={level},warn"))
    });
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| RedactingWriter)
        .with_ansi(false)
        .with_target(false);
    // journald stamps lines itself
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        b.without_time().init();
    } else {
        b.init();
    }
}

fn exit(e: Exit) -> ExitCode {
    ExitCode::from(e as u8)
}

fn load_config(path: &Path) -> Result<Config, ExitCode> {
    Config::load(path).map_err(|e| {
        eprintln!("monky-deployd: {e}");
        exit(Exit::Fail)
    })
}

fn report_failure(f: &Failure) -> ExitCode {
    let msg = redact::redact(&f.msg);
    match f.exit {
        Exit::TempFail => tracing::warn!("temporary failure (exit 75, next tick retries): {msg}"),
        _ => error!("{msg}"),
    }
    exit(f.exit)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn main() -> ExitCode {
    // The process holds OpenBao tokens and secret values: no core dumps, no ptrace by the same
    // uid (the docker group's other members included).
    // SAFETY: prctl with PR_SET_DUMPABLE takes plain integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    let cli = Cli::parse();
    // No Ziti_lib_shutdown at exit: process exit closes the SDK's sockets just as well, and
    // waiting for its loop to wind down would only add to every tick's wall time.
    dispatch(cli)
}

fn dispatch(cli: Cli) -> ExitCode {
    match cli.cmd {
        Cmd::Version => {
            println!(
                "monky-deployd {} ({}; ziti sdk: {})",
                agent::VERSION,
                env!("MONKY_GIT_REV"),
                transport::sdk::sdk_version().unwrap_or_else(|| "none".into())
            );
            ExitCode::SUCCESS
        }
        Cmd::Enroll { jwt, out } => {
            init_logging("info");
            match transport::sdk::enroll(&jwt, &out) {
                Ok(()) => {
                    info!("identity written to {}", out.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    error!("enroll: {e}");
                    exit(Exit::Fail)
                }
            }
        }
        Cmd::Run { once, prune } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging(cfg.log_level.as_str());
            runtime().block_on(run(cfg, once, prune))
        }
        Cmd::Status { json } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging("warn");
            runtime().block_on(status(cfg, json))
        }
        Cmd::Plan { json } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging("warn");
            exit(runtime().block_on(agent::plan(cfg, json)))
        }
        Cmd::Bootstrap { force } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging(cfg.log_level.as_str());
            runtime().block_on(bootstrap(cfg, force))
        }
    }
}

async fn run(cfg: Config, once: bool, prune: bool) -> ExitCode {
    // SIGTERM/SIGINT never interrupt a tick: they end the loop between ticks.
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            error!("cannot install SIGTERM handler: {e}");
            return exit(Exit::Fail);
        }
    };
    let interval = cfg.interval_s;
    let laptop = cfg.laptop_mode;
    // a transport that cannot start yet (sdk: controller unreachable at boot) is temporary:
    // `--once` follows the laptop-mode rule, the loop tries again after the interval
    let mut agent = loop {
        match Agent::new(cfg.clone(), prune) {
            Ok(a) => break a,
            Err(f) if f.exit == Exit::TempFail && laptop && once => {
                info!("offline (laptop mode): {}", redact::redact(&f.msg));
                return ExitCode::SUCCESS;
            }
            Err(f) if f.exit == Exit::TempFail && !once => {
                report_failure(&f);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(interval)) => {}
                    _ = term.recv() => { info!("SIGTERM: stopping"); return ExitCode::SUCCESS; }
                    _ = tokio::signal::ctrl_c() => { info!("SIGINT: stopping"); return ExitCode::SUCCESS; }
                }
            }
            Err(f) => return report_failure(&f),
        }
    };
    if once {
        // `--once` under systemd: SIGTERM (stop, or TimeoutStartSec) must not lose the tick —
        // the running compose step stops, the tick reports INTERRUPTED, saves state, exits 75
        let (tx, rx) = tokio::sync::watch::channel(false);
        agent.set_interrupt(rx);
        tokio::spawn(async move {
            if term.recv().await.is_some() {
                info!("SIGTERM: stopping the current step");
                let _ = tx.send(true);
            }
        });
        return finish_tick(&mut agent).await.0;
    }
    loop {
        let code = finish_tick(&mut agent).await.1;
        if code == Exit::EnvMismatch {
            error!("AGENT_ENV_MISMATCH is not retried: loop stops");
            return exit(code);
        }
        // ±10 % jitter so a fleet does not check in in lock-step
        let jitter = (interval as f64 * 0.1 * (fastrand::f64() * 2.0 - 1.0)) as i64;
        let wait = Duration::from_secs((interval as i64 + jitter).max(1) as u64);
        let wait = monky_deployd::testhook::interval(wait);
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = term.recv() => { info!("SIGTERM: stopping"); return ExitCode::SUCCESS; }
            _ = tokio::signal::ctrl_c() => { info!("SIGINT: stopping"); return ExitCode::SUCCESS; }
        }
    }
}

/// One tick with its cost logged; the process exit code and the agent's.
async fn finish_tick(agent: &mut Agent) -> (ExitCode, Exit) {
    {
        let started = std::time::Instant::now();
        let docker_before = runtime::docker_wait_ms();
        let res = agent.tick().await;
        let (wall, docker) = (
            started.elapsed().as_millis() as u64,
            runtime::docker_wait_ms() - docker_before,
        );
        let ru = self_rusage();
        tracing::debug!(
            "tick cost: wall {wall} ms, of which docker/compose {docker} ms; agent cpu {} ms; max rss {} KiB",
            ru.0,
            ru.1
        );
        let code = match &res {
            Ok(e) => *e,
            Err(f) => {
                report_failure(f);
                f.exit
            }
        };
        (exit(code), code)
    }
}

/// (user+system CPU ms, max RSS KiB) of this process alone (children excluded).
fn self_rusage() -> (u64, u64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a properly sized out-parameter for getrusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0, 0);
    }
    let ms = |t: libc::timeval| t.tv_sec as u64 * 1000 + t.tv_usec as u64 / 1000;
    (ms(ru.ru_utime) + ms(ru.ru_stime), ru.ru_maxrss as u64)
}

async fn bootstrap(cfg: Config, force: bool) -> ExitCode {
    let token_path = cfg.token_path();
    if !force && token_path.exists() {
        println!(
            "a token is already stored at {}; use --force to replace it",
            token_path.display()
        );
        return ExitCode::SUCCESS;
    }
    let lock_dir = cfg.state_dir.clone();
    if let Err(e) = state::ensure_dir(&lock_dir, 0o700) {
        error!("{e}");
        return exit(Exit::Fail);
    }
    let _lock = match state::try_lock(&cfg.lock_path()) {
        Ok(Some(l)) => l,
        Ok(None) => {
            error!("a tick is running; try again in a moment");
            return exit(Exit::TempFail);
        }
        Err(e) => {
            error!("{e}");
            return exit(Exit::Fail);
        }
    };
    let state_path = cfg.state_path();
    let mut agent = match Agent::new(cfg, false) {
        Ok(a) => a,
        Err(f) => return report_failure(&f),
    };
    agent.state = match state::State::load(&state_path) {
        Ok(s) => s,
        Err(e) => {
            error!("{e}");
            return exit(Exit::Fail);
        }
    };
    if force {
        if let Ok(Some(t)) = state::read_token(&agent.cfg.token_path()) {
            // so the replaced token is revoked after the new login
            redact::register(&t);
        }
    }
    match agent.load_or_bootstrap_token(force).await {
        Ok(()) => {
            if let Err(e) = agent.state.save(&state_path) {
                error!("{e}");
                return exit(Exit::Fail);
            }
            println!("token stored at {}", agent.cfg.token_path().display());
            ExitCode::SUCCESS
        }
        Err(f) => report_failure(&f),
    }
}

async fn status(cfg: Config, json: bool) -> ExitCode {
    let st = state::State::load(&cfg.state_path()).unwrap_or_default();
    let token = state::read_token(&cfg.token_path()).ok().flatten();
    let engine = runtime::Engine::new(cfg.docker_socket());
    let containers = engine.containers(&cfg.compose_project).await;
    let conn = agent::connector(&cfg);
    let (transport_ok, token_ttl, tenancy_reach) = match &conn {
        Ok(c) => {
            let cl = agent::clients(&cfg, c);
            let mut ttl = None;
            let mut reach = Vec::new();
            if let Err(f) = &cl {
                reach.push(("clients", format!("not usable: {}", f.msg)));
            }
            if let Ok(cl) = &cl {
                if let Some(t) = &token {
                    ttl = cl.bao.lookup_self(t).await.ok().map(|i| i.ttl);
                }
                // through the full stack: transport, then the TLS handshake for https
                for http in [&cl.tenancy.http, &cl.bao.http] {
                    let r = tokio::time::timeout(Duration::from_secs(10), http.probe()).await;
                    let ok = match r {
                        Ok(Ok(())) => "dialable".to_string(),
                        Ok(Err(e)) => format!("unreachable: {e}"),
                        Err(_) => "unreachable: timed out".to_string(),
                    };
                    reach.push((http.endpoint.label, ok));
                }
            }
            (Ok(c.describe()), ttl, reach)
        }
        Err(e) => (Err(e.to_string()), None, Vec::new()),
    };
    let sdk = transport::sdk::sdk_version();
    let cs = containers.as_ref().ok().cloned().unwrap_or_default();
    let windows = monky_deployd::windows::Windows::parse(&cfg.apply_windows, &cfg.apply_windows_tz)
        .ok()
        .filter(|w| !w.list.is_empty());
    let (window_open, window_next) = match &windows {
        None => (true, None),
        Some(w) => match w.wait(&w.now()) {
            None => (true, None),
            Some((name, at)) => (
                false,
                Some(format!("{name} at {}", at.strftime("%Y-%m-%dT%H:%M:%S%:z"))),
            ),
        },
    };
    let signing_keys: Vec<&String> = cfg.bundle_signing_keys.keys().collect();
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
    let v = serde_json::json!({
        "env_id": cfg.env_id,
        "agent_version": agent::VERSION,
        "transport": cfg.transport.as_str(),
        "transport_detail": transport_ok.clone().unwrap_or_else(|e| e),
        "ziti_sdk": sdk,
        "endpoints": tenancy_reach.iter().map(|(l, s)| serde_json::json!({"name": l, "state": s})).collect::<Vec<_>>(),
        "token_present": token.is_some(),
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
        "containers": cs,
        "docker": containers.as_ref().err().map(|e| e.to_string()),
        "bundle_signatures": {"required": !signing_keys.is_empty(), "key_ids": signing_keys},
        "metrics_textfile": (!cfg.metrics_textfile.is_empty()).then_some(&cfg.metrics_textfile),
        "apply_windows": {"entries": cfg.apply_windows, "open_now": window_open, "next": window_next},
        "counters": st.counters,
        "last_success": st.counters.last_success,
        "applied_serial": st.applied_serial,
        "failed_release": st.failed_release,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        let ts = |t: Option<u64>| {
            t.map(|s| {
                humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(s))
                    .to_string()
            })
            .unwrap_or_else(|| "never".into())
        };
        println!("env            {}", cfg.env_id);
        println!("agent          {}", agent::VERSION);
        println!(
            "transport      {} ({}; ziti sdk {})",
            cfg.transport.as_str(),
            v["transport_detail"].as_str().unwrap_or(""),
            sdk.as_deref().unwrap_or("none")
        );
        for (l, s) in &tenancy_reach {
            println!("  {l:<12} {s}");
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
        if let Some(e) = &st.last_error {
            println!("last error     {}", redact::redact(e));
        }
        match &containers {
            Ok(cs) if cs.is_empty() => println!("containers     none"),
            Ok(cs) => {
                println!("containers");
                for c in cs {
                    println!("  {:<20} {:<10} {}", c.service, c.state, c.health);
                }
            }
            Err(e) => println!("containers     ? ({e})"),
        }
    }
    ExitCode::SUCCESS
}

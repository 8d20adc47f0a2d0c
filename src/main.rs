//! monky-deployd: the on-box pull agent for Monky backends.

use monky_deployd::host::selfupdate::install;
use monky_deployd::{
    agent, base::redact, cli::commands, cli::data as data_cmds, cli::pipeline, cli::service,
    host::config, host::instance, host::journal, wire::transport,
};

#[path = "main/serve.rs"]
mod serve;
use serve::serve;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Parser, Subcommand};
use tracing::{error, info};

use agent::{Agent, Exit, Failure};
use config::Config;

#[derive(Parser)]
#[command(name = "monky-deployd", version = agent::VERSION, about = "On-box pull agent for Monky backends")]
struct Cli {
    /// Configuration file [default: /etc/monky-deployd/config.yaml, or
    /// /etc/monky-deployd/<instance>/config.yaml with --instance].
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// The instance (environment) of this box to act as; also $MONKY_DEPLOYD_INSTANCE.
    /// Without it: the default instance.
    #[arg(long, global = true)]
    instance: Option<String>,
    /// Where the instances' configs are: a test seam, absent from what ships (every instance
    /// must find every other one where the units put them).
    #[cfg(feature = "test-hooks")]
    #[arg(long, global = true, default_value = instance::ETC_DIR, hide = true)]
    etc_dir: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

impl Cli {
    fn etc_dir(&self) -> PathBuf {
        #[cfg(feature = "test-hooks")]
        return self.etc_dir.clone();
        #[cfg(not(feature = "test-hooks"))]
        PathBuf::from(instance::ETC_DIR)
    }
}

#[cfg(feature = "test-hooks")]
#[derive(clap::Args)]
struct InstallTools {
    #[arg(long, default_value = "dpkg", hide = true)]
    dpkg: String,
    #[arg(long, default_value = "dpkg-query", hide = true)]
    dpkg_query: String,
    #[arg(long, default_value = "systemctl", hide = true)]
    systemctl: String,
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
        /// Every instance on the box in one table, as `instances` prints it.
        #[arg(long)]
        all: bool,
    },
    /// Every instance on the box (default and /etc/monky-deployd/*/config.yaml): env,
    /// transport, last tick, applied sha, state. Reads their state files only, no network.
    Instances {
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
    /// The diagnostics bundle tenancy can ask for (redacted): status, per-service state,
    /// restarts, health probes and log tails, disk, clock skew, links, versions. Sends nothing.
    Diagnose {
        #[arg(long)]
        json: bool,
    },
    /// The data snapshots the box keeps (PROTOCOL 0.6): release, the apply that took it,
    /// volume, bytes, when, where.
    Snapshots {
        #[arg(long)]
        json: bool,
    },
    /// Put a release's data snapshot back: the services mounting those volumes are stopped,
    /// each volume made exactly the snapshot, the services started again (under the tick lock).
    /// Without --yes it says what it would overwrite and changes nothing.
    Restore {
        /// The release whose data to restore (12 or more hex digits of its sha).
        sha: String,
        /// Only this volume (repeatable); all of the release's by default.
        #[arg(long = "volume")]
        volumes: Vec<String>,
        #[arg(long)]
        yes: bool,
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
    /// Root only (monky-deployd-update.service): install the agent package the agent staged,
    /// after verifying it again; keep the running one; revert if the new one cannot tick.
    UpdateInstall {
        /// Root's own directory: kept packages, probation record.
        #[arg(long, default_value = "/var/lib/monky-deployd-update")]
        keep_dir: PathBuf,
        /// The agent's units, try-restarted after an install or a revert (repeatable).
        #[arg(long = "unit", default_values_t = install::AGENT_UNITS.map(String::from))]
        units: Vec<String>,
        /// Seconds between looks at the new agent's ticks during probation.
        #[arg(long, default_value_t = 5)]
        poll_s: u64,
        /// The tools it drives, stand-ins in tests: absent from what ships.
        #[cfg(feature = "test-hooks")]
        #[command(flatten)]
        tools: InstallTools,
    },
    /// The service unit's ExecReload: check the configuration as the service will (not
    /// signalled if bad, exit 1), then SIGHUP the service and wait for its answer. Exit 0 only
    /// when the service took the configuration up.
    Reload {
        /// The service's pid (systemd's $MAINPID).
        #[arg(long)]
        pid: u32,
        /// Longest wait for the answer; 0: tick_budget_s + 60 s (the service answers between
        /// ticks, so a SIGHUP mid-tick waits for the tick to end).
        #[arg(long, default_value_t = 0)]
        timeout_s: u64,
    },
    /// Release pipeline (not for boxes): render and sign the release statement of a bundle
    /// directory (--env, --bundle-dir) or of an agent package (--package), printing the
    /// `{sha, statement, signatures}` tenancy serves with it (PROTOCOL 0.5).
    SignStatement {
        /// The base64 of the 32-byte Ed25519 seed, mode 0600.
        #[arg(long)]
        key: PathBuf,
        /// The key id boxes know the key by (`bundle_signing_keys` / `agent_signing_keys`).
        #[arg(long, default_value = "release")]
        key_id: String,
        #[arg(long, requires = "bundle_dir", conflicts_with = "package")]
        env: Option<String>,
        #[arg(long, requires = "env")]
        bundle_dir: Option<PathBuf>,
        /// An agent .deb (its Version and Architecture are read with dpkg-deb).
        #[arg(long)]
        package: Option<PathBuf>,
        /// The statement's life; past it boxes refuse to apply it.
        #[arg(long, default_value_t = 14 * 86_400)]
        expires_in_s: u64,
        /// Print the key's public half (for the boxes' config) instead.
        #[arg(long)]
        print_public_key: bool,
    },
    /// Print the version.
    Version,
}

/// The parsed command line with the config path settled.
struct CliCfg {
    config: PathBuf,
    etc_dir: PathBuf,
    cmd: Cmd,
}

/// Log lines go through the redactor before they reach stderr; on the journal's stream each
/// line carries its priority ([`journal`]).
fn init_logging(level: &str) {
    // every layer crate is `monky_*` (a directive's target matches by prefix)
    let filter = tracing_subscriber::EnvFilter::try_from_env("MONKY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("monky={level},warn")));
    let journal = journal::stderr_is_journal();
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(journal::Stderr { journal })
        .with_ansi(false)
        .with_target(false);
    // journald stamps lines itself
    if journal {
        b.without_time().init();
    } else {
        b.init();
    }
    // every line of a named instance says which (the journal's unit name says it too)
    if let Some(n) = &instance::current().name {
        std::mem::forget(tracing::info_span!("instance", name = %n).entered());
    }
}

/// The process's exit status. `main` leaves through `_exit` (see there), so this is a plain
/// byte rather than `std::process::ExitCode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ExitCode(u8);

impl ExitCode {
    const SUCCESS: ExitCode = ExitCode(0);
    fn from(code: u8) -> ExitCode {
        ExitCode(code)
    }
}

fn exit(e: Exit) -> ExitCode {
    ExitCode::from(e as u8)
}

fn load_config(path: &Path) -> Result<Config, ExitCode> {
    Config::load(path).map_err(|e| {
        journal::early_error(&format!("monky-deployd: {e}"));
        exit(Exit::Fail)
    })
}

fn report_failure(f: &Failure) -> ExitCode {
    let msg = redact::redact(f.message());
    match f.exit() {
        Exit::TempFail => tracing::warn!("temporary failure (exit 75, next tick retries): {msg}"),
        _ => error!("{msg}"),
    }
    exit(f.exit())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn main() {
    // the loader is done with the relocation tables: ≈ 1 MiB of every heartbeat's peak
    monky_deployd::base::process::drop_relocation_tables();
    // The process holds OpenBao tokens and secret values: no core dumps, no ptrace by the same
    // uid (the docker group's other members included). Logging is not up yet: stderr.
    if let Err(e) = monky_deployd::base::process::forbid_core_dumps() {
        journal::early(
            tracing::Level::WARN,
            &format!("monky-deployd: cannot turn core dumps off: {e}"),
        );
    }
    let mut cli = match Cli::try_parse() {
        Ok(c) => c,
        // help and --version go to stdout as clap writes them; a usage error is an error line
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            leave(ExitCode::SUCCESS)
        }
        Err(e) => {
            journal::early_error(e.render().to_string().trim_end());
            leave(ExitCode::from(e.exit_code() as u8))
        }
    };
    let code = match instance_of(&mut cli) {
        Ok(()) => dispatch(cli),
        Err(code) => code,
    };
    leave(code)
}

/// Flush and leave with `_exit`, skipping the C library's `atexit` handlers. The OpenZiti SDK's
/// loop thread is still running at exit (there is no `Ziti_lib_shutdown`: it would only add to
/// every tick's wall time), and OpenSSL's exit-time cleanup freed state under it: about 1 in 100
/// `status` runs over `sdk` died by SIGSEGV after printing everything (docs/ZITI.md). Nothing of
/// ours needs those handlers: state files are fsynced when written, logs are written unbuffered.
fn leave(code: ExitCode) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process at once; nothing runs after it.
    unsafe { libc::_exit(i32::from(code.0)) }
}

/// `--instance` (or its variable) names this process's instance and, without `--config`, its
/// config file. `update-install` with neither acts for the instance that stages self-updates.
fn instance_of(cli: &mut Cli) -> Result<(), ExitCode> {
    let name = cli
        .instance
        .clone()
        .or_else(|| std::env::var(instance::ENV_VAR).ok())
        .filter(|n| !n.is_empty());
    let mut me = instance::Instance::new(name.as_deref(), &cli.etc_dir()).map_err(|e| {
        journal::early_error(&format!("monky-deployd: {e}"));
        exit(Exit::Fail)
    })?;
    if name.is_none() && cli.config.is_none() && matches!(cli.cmd, Cmd::UpdateInstall { .. }) {
        if let Some(u) = instance::updater(&instance::all(&cli.etc_dir())) {
            me = u.instance.clone();
        }
    }
    cli.config.get_or_insert_with(|| me.config_path());
    instance::set_current(me);
    Ok(())
}

fn dispatch(cli: Cli) -> ExitCode {
    let config = cli.config.clone().unwrap_or_default();
    let cli = CliCfg {
        config,
        etc_dir: cli.etc_dir(),
        cmd: cli.cmd,
    };
    match cli.cmd {
        Cmd::Version => {
            println!(
                "monky-deployd {} ({}; ziti sdk: {}{})",
                agent::VERSION,
                env!("MONKY_GIT_REV"),
                transport::sdk::sdk_version().unwrap_or_else(|| "none".into()),
                // a build with test hooks says so (packaging/tests/run.sh: the release has none)
                if cfg!(feature = "test-hooks") {
                    "; test-hooks"
                } else {
                    ""
                }
            );
            ExitCode::SUCCESS
        }
        Cmd::SignStatement {
            key,
            key_id,
            env,
            bundle_dir,
            package,
            expires_in_s,
            print_public_key,
        } => exit(pipeline::sign_statement(
            &key,
            &key_id,
            env.as_deref().zip(bundle_dir.as_deref()),
            package.as_deref(),
            expires_in_s,
            print_public_key,
        )),
        Cmd::Enroll { jwt, out } => {
            init_logging("info");
            exit(commands::enroll(&cli.config, &jwt, &out))
        }
        Cmd::Run { once, prune } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging(cfg.log_level.as_str());
            if once {
                runtime().block_on(run_once(cfg, prune))
            } else {
                runtime().block_on(serve(cli.config, cfg, prune))
            }
        }
        Cmd::Status { json, all: true } | Cmd::Instances { json } => {
            exit(commands::instances(&cli.etc_dir, json))
        }
        Cmd::Status { json, all: false } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging("warn");
            exit(runtime().block_on(commands::status(cfg, json)))
        }
        Cmd::Snapshots { json } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            exit(data_cmds::snapshots(&cfg, json))
        }
        Cmd::Restore {
            sha,
            volumes,
            yes,
            json,
        } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging(cfg.log_level.as_str());
            exit(runtime().block_on(data_cmds::restore(&cfg, &sha, &volumes, yes, json)))
        }
        Cmd::Diagnose { json } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging("warn");
            exit(runtime().block_on(commands::diagnose(cfg, json)))
        }
        Cmd::Plan { json } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging("warn");
            exit(runtime().block_on(agent::plan(cfg, json)))
        }
        Cmd::UpdateInstall {
            keep_dir,
            units,
            poll_s,
            #[cfg(feature = "test-hooks")]
            tools,
        } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging(cfg.log_level.as_str());
            let o = install::Opts {
                keep_dir,
                units,
                etc_dir: cli.etc_dir,
                poll: Duration::from_secs(poll_s.max(1)),
                ..Default::default()
            };
            #[cfg(feature = "test-hooks")]
            let o = install::Opts {
                dpkg: tools.dpkg,
                dpkg_query: tools.dpkg_query,
                systemctl: tools.systemctl,
                ..o
            };
            match install::run(&cfg, &o) {
                Ok(msg) => {
                    info!("update-install: {msg}");
                    ExitCode::SUCCESS
                }
                Err(why) => {
                    error!("update-install: {why}");
                    exit(Exit::Fail)
                }
            }
        }
        Cmd::Reload { pid, timeout_s } => {
            init_logging("info");
            exit(service::reload::request(&cli.config, pid, timeout_s))
        }
        Cmd::Bootstrap { force } => {
            let cfg = match load_config(&cli.config) {
                Ok(c) => c,
                Err(code) => return code,
            };
            init_logging(cfg.log_level.as_str());
            match runtime().block_on(commands::bootstrap(cfg, force)) {
                Ok(msg) => {
                    println!("{msg}");
                    ExitCode::SUCCESS
                }
                Err(f) => report_failure(&f),
            }
        }
    }
}

/// `reload --pid PID`: see [`service::reload`].
/// `run --once`: one tick, what the timer's oneshot unit runs.
async fn run_once(cfg: Config, prune: bool) -> ExitCode {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            error!("cannot install SIGTERM handler: {e}");
            return exit(Exit::Fail);
        }
    };
    // a transport that cannot start yet (sdk: controller unreachable at boot) is temporary:
    // `--once` follows the laptop-mode rule
    let mut agent = match Agent::new(cfg.clone(), prune) {
        Ok(a) => a,
        Err(f) if f.exit() == Exit::TempFail && cfg.laptop_mode => {
            info!("offline (laptop mode): {}", redact::redact(f.message()));
            return ExitCode::SUCCESS;
        }
        Err(f) => return report_failure(&f),
    };
    // SIGTERM under systemd (stop, or TimeoutStartSec) must not lose the tick — the running
    // compose step stops, the tick reports INTERRUPTED, saves state, exits 75
    let (tx, rx) = tokio::sync::watch::channel(false);
    agent.set_interrupt(rx);
    tokio::spawn(async move {
        if term.recv().await.is_some() {
            info!("SIGTERM: stopping the current step");
            let _ = tx.send(true);
        }
    });
    finish_tick(&mut agent).await.0
}
/// One tick with its cost logged; the process exit code and the agent's.
async fn finish_tick(agent: &mut Agent) -> (ExitCode, Exit) {
    {
        let started = std::time::Instant::now();
        let docker_before = agent.docker_wait_ms();
        let res = agent.tick().await;
        let (wall, docker) = (
            started.elapsed().as_millis() as u64,
            agent.docker_wait_ms() - docker_before,
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
                f.exit()
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

//! `run` without `--once`: the long-lived service loop (systemd `Type=notify`), its watchdog,
//! reload and fresh start: the wiring. Its decisions (the watchdog's length, what a reload
//! takes up, when an sdk context is rebuilt, the wait between ticks) are the library's
//! `cli::service::turn`, unit tested there. Each tick is `run --once`'s ([`super::finish_tick`]).

use super::*;
use monky_deployd::cli::service::reload;
use monky_deployd::cli::service::turn::{self, Outage, Woke};

/// The watchdog: fed only when the loop made progress, and not while a call into the SDK has
/// been stuck for longer than any dial may take (the SDK's own loop is then wedged, and only a
/// new process heals it).
struct Watchdog {
    notify: service::Notify,
    every: Option<Duration>,
    stuck_after: Duration,
}

impl Watchdog {
    fn new(cfg: &Config) -> Watchdog {
        Watchdog {
            notify: service::Notify::from_env(),
            every: service::watchdog_interval(),
            stuck_after: Self::stuck_after(cfg),
        }
    }

    /// The watchdog must outlast the longest tick (`tick_budget_s`, fed never during one): a
    /// configured budget above the unit's `WatchdogSec` raises it (sd_notify `WATCHDOG_USEC=`).
    fn fit(&mut self, cfg: &Config) {
        if let (Some(every), Some(need)) = (
            self.every,
            turn::watchdog_raise(self.every, cfg.tick_budget_s),
        ) {
            info!(
                "watchdog {} s is shorter than tick_budget_s {} s: raised to {} s",
                every.as_secs(),
                cfg.tick_budget_s,
                need.as_secs()
            );
            self.notify
                .send(&format!("WATCHDOG_USEC={}", need.as_micros()));
            self.every = Some(need);
        }
    }

    fn stuck_after(cfg: &Config) -> Duration {
        Duration::from_secs(2 * cfg.tenancy.timeout_s.max(cfg.bao.timeout_s) + 10)
    }

    fn progress(&self) {
        if let Some(age) =
            transport::sdk::oldest_pending_call().filter(|age| *age > self.stuck_after)
        {
            error!(
                "a call into the ziti SDK has not returned for {} s: its loop is wedged; \
                 not feeding the watchdog, so the service manager restarts the service",
                age.as_secs()
            );
            return;
        }
        self.notify.send("WATCHDOG=1");
    }
}

/// Wait `wait`, feeding the watchdog from this same task (a wedged loop feeds nothing).
async fn between_ticks(
    wait: Duration,
    wd: &Watchdog,
    stop: &mut tokio::sync::watch::Receiver<bool>,
    hup: &mut tokio::signal::unix::Signal,
) -> Woke {
    turn::between_ticks(wait, wd.every, || wd.progress(), stop, hup).await
}

fn sdk_identity(cfg: &Config) -> Option<service::FileId> {
    (cfg.transport == config::Transport::Sdk)
        .then(|| service::FileId::of(Path::new(&cfg.identity)))
        .flatten()
}

/// Start afresh in this pid (see [`service::reexec`]); returns only when that failed.
fn start_afresh(why: &str, reloading: bool) -> ExitCode {
    info!("{why}: starting afresh (same pid)");
    let e = service::reexec(reloading);
    error!("cannot re-execute /proc/self/exe: {e}");
    exit(Exit::TempFail)
}

/// `run` without `--once`: the long-lived service (systemd `Type=notify`). Every tick is the
/// `--once` tick (same lock, same scrub); between ticks it waits for this box's slot, reloads
/// on SIGHUP, takes up a replaced identity, and stops at once on SIGTERM (mid-tick: the tick
/// ends `INTERRUPTED` first).
pub(super) async fn serve(path: PathBuf, mut cfg: Config, prune: bool) -> ExitCode {
    use tokio::signal::unix::{signal, SignalKind};
    // SIGHUP first: its default action would end the process
    let (mut term, mut hup) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) {
        (Ok(t), Ok(h)) => (t, h),
        (Err(e), _) | (_, Err(e)) => {
            error!("cannot install the SIGTERM/SIGHUP handlers: {e}");
            return exit(Exit::Fail);
        }
    };
    let (stop_tx, mut stop) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => info!("SIGTERM: stopping"),
            _ = tokio::signal::ctrl_c() => info!("SIGINT: stopping"),
        }
        let _ = stop_tx.send(true);
    });
    let mut wd = Watchdog::new(&cfg);
    wd.fit(&cfg);
    let mode = |c: &Config| if c.laptop_mode { "laptop" } else { "service" };
    let mut marker = service::Marker::new(&cfg.state_dir, mode(&cfg));
    let machine = service::machine_id();
    let slot = |c: &Config| {
        let iv = Duration::from_secs(c.interval_s);
        (iv, service::box_offset(&machine, &c.env_id, iv))
    };
    let (mut interval, mut offset) = slot(&cfg);
    info!(
        "service: a tick every {} s at +{:.1} s in this box's slot{}",
        interval.as_secs(),
        offset.as_secs_f64(),
        wd.every
            .map(|e| format!(", watchdog {} s", e.as_secs()))
            .unwrap_or_default()
    );
    let mut ready = false;
    let mut ready_once = |n: &service::Notify| {
        if !ready {
            n.send("READY=1");
            ready = true;
        }
    };
    if service::reloaded() {
        ready_once(&wd.notify);
    }
    // a transport that cannot start yet is temporary: try again after the interval
    let mut agent = loop {
        match Agent::new(cfg.clone(), prune) {
            Ok(a) => break a,
            Err(f) if f.exit() == Exit::TempFail => {
                report_failure(&f);
                wd.notify.send(&format!(
                    "STATUS=transport not ready: {}",
                    redact::redact(f.message())
                ));
                wd.progress();
                ready_once(&wd.notify);
                match between_ticks(interval, &wd, &mut stop, &mut hup).await {
                    Woke::Stop => return ExitCode::SUCCESS,
                    Woke::Tick => {}
                    Woke::Reload => {
                        answer_reload(&cfg.state_dir, &path, reload::Outcome::Afresh, "");
                        return start_afresh("SIGHUP before the first tick", false);
                    }
                }
            }
            Err(f) => return report_failure(&f),
        }
    };
    agent.set_interrupt(stop.clone());
    let mut identity = sdk_identity(&cfg);
    let (mut ticks, mut outage) = (0u64, Outage::default());
    loop {
        service::loop_turn();
        let started = std::time::Instant::now();
        let (code, ex) = finish_tick(&mut agent).await;
        ticks += 1;
        outage.record(ex == Exit::TempFail, started);
        marker.write(ticks, ex as i32, wd.every);
        let wait = service::wait_from_now(interval, offset);
        wd.notify.send(&format!(
            "STATUS=tick {ticks}: exit {} in {} ms; next in {} s",
            ex as i32,
            started.elapsed().as_millis(),
            wait.as_secs()
        ));
        wd.progress();
        ready_once(&wd.notify);
        if *stop.borrow() {
            info!("stopped after tick {ticks}");
            wd.notify.send("STOPPING=1");
            marker.remove();
            return ExitCode::SUCCESS;
        }
        if ex == Exit::EnvMismatch {
            error!("AGENT_ENV_MISMATCH is not retried: the loop stops (a restart will not help)");
            marker.remove();
            return code;
        }
        let mut wait = wait;
        loop {
            match between_ticks(wait, &wd, &mut stop, &mut hup).await {
                Woke::Tick => break,
                Woke::Stop => {
                    info!("stopped between ticks");
                    wd.notify.send("STOPPING=1");
                    marker.remove();
                    return ExitCode::SUCCESS;
                }
                Woke::Reload => {
                    wd.notify.send("RELOADING=1");
                    let reloaded = reload(&path, &cfg, prune);
                    // `monky-deployd reload` (ExecReload) waits for this answer
                    let (outcome, why) = match &reloaded {
                        Reload::Keep(why) => (reload::Outcome::Refused, why.as_str()),
                        Reload::Afresh => (reload::Outcome::Afresh, ""),
                        Reload::New(_) => (reload::Outcome::Ok, ""),
                    };
                    answer_reload(&cfg.state_dir, &path, outcome, why);
                    // READY=1 ends the reload; a re-executed process says it once its own
                    // SIGTERM handler is in place (before that a stop would kill it)
                    if !matches!(reloaded, Reload::Afresh) {
                        wd.notify.send("READY=1");
                    }
                    match reloaded {
                        Reload::Keep(_) => {
                            // the rest of the wait
                            wait = service::wait_from_now(interval, offset);
                            continue;
                        }
                        Reload::Afresh => return start_afresh("configuration reloaded", true),
                        Reload::New(b) => {
                            let (c, mut a) = *b;
                            a.set_interrupt(stop.clone());
                            (agent, cfg) = (a, c);
                            (interval, offset) = slot(&cfg);
                            wd.stuck_after = Watchdog::stuck_after(&cfg);
                            wd.fit(&cfg);
                            marker = service::Marker::new(&cfg.state_dir, mode(&cfg));
                            identity = sdk_identity(&cfg);
                            info!(
                                "configuration reloaded from {}: ticking now",
                                path.display()
                            );
                            break;
                        }
                    }
                }
            }
        }
        if sdk_identity(&cfg) != identity {
            return start_afresh("the ziti identity file was replaced", false);
        }
        if outage.rebuild(cfg.transport, std::time::Instant::now()) {
            return start_afresh(
                &format!(
                    "{} ticks in a row failed temporarily over sdk for {} min",
                    outage.streak,
                    turn::REBUILD_AFTER_OUTAGE.as_secs() / 60
                ),
                false,
            );
        }
    }
}

/// The answer goes where the command looks (the state dir of the file as it reads now) and
/// where the running service keeps its state.
fn answer_reload(state_dir: &Path, path: &Path, outcome: reload::Outcome, why: &str) {
    let now = Config::load(path).ok().map(|c| c.state_dir);
    let mut dirs = vec![state_dir];
    if let Some(d) = now.as_deref().filter(|d| *d != state_dir) {
        dirs.push(d);
    }
    reload::answer(&dirs, outcome, why);
}

enum Reload {
    /// The new configuration is bad (why): the running one stays.
    Keep(String),
    /// Good, but only a new process takes it up.
    Afresh,
    New(Box<(Config, Agent)>),
}

fn reload(path: &Path, cfg: &Config, prune: bool) -> Reload {
    let new = match Config::load(path) {
        Ok(c) => c,
        Err(e) => {
            error!(
                "CONFIG_RELOAD_FAILED: {e} (a fresh start would exit 1); keeping the running configuration"
            );
            return Reload::Keep(e.to_string());
        }
    };
    if turn::needs_new_process(cfg, &new) {
        return Reload::Afresh;
    }
    match Agent::new(new.clone(), prune) {
        Ok(a) => Reload::New(Box::new((new, a))),
        Err(f) => {
            let why = redact::redact(f.message());
            error!(
                "CONFIG_RELOAD_FAILED: {why} (exit {}); keeping the running configuration",
                f.exit() as u8
            );
            Reload::Keep(why)
        }
    }
}

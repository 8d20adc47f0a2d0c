//! One tick: lock → token → check-in → apply | none | down → report → token upkeep → save.
//! Every outcome maps to one exit code (see [`Exit`]); every refusal and failure that can still
//! be reported is reported to tenancy with its code and names only.
//!
//! This file owns the wiring (the [`Agent`], its clients and connector) and the failure type;
//! each job of the tick has a room of its own:
//! `tick` (the orchestration), `token` (bootstrap, lease, renew, revoke), `apply` (the pipeline),
//! `checks` (everything judged before the lease), `release` (release directories, health),
//! `actions` (heartbeat, deferred, down), `report` (reports and their text helpers),
//! `rollback` (automatic rollback) and `plan` (the dry run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, info, warn};
use zeroize::Zeroizing;

use monky_base::redact;
use monky_boundary::bundle::{self, Bundle};
use monky_boundary::compose_check;
use monky_boundary::policy;
use monky_boundary::{Refusal, RefusalCode};
use monky_guard::Guard;
use monky_host::config::{Config, Transport, VolumesOnAbsent};
use monky_host::remotes::{self, Clients};
use monky_host::runtime::{self, Compose, Engine, RuntimeError};
use monky_host::state::{self, State};
use monky_wire::bao::{Bao, BaoError};
use monky_wire::registry;
use monky_wire::tenancy::{Checkin, Container, Report, Tenancy, TenancyError};
use monky_wire::transport::{self, Dialer};

mod actions;
mod apply;
mod backoff;
mod care;
mod checks;
mod data;
pub mod diagnose;
pub mod error;
#[cfg(test)]
mod fakes;
mod lock;
mod netspace;
mod plan;
pub mod ports;
mod reclaim;
mod release;
mod report;
mod rollback;
pub mod status;
#[cfg(test)]
mod tests;
mod tick;
mod token;
mod token_policy;
mod update;

use monky_wire::tenancy::short;
use ports::{EngineApi, TenancyApi, Vault};
use release::{register_docker_config, register_env_values, Settled};
use report::{config_diagnosis, pull_diagnosis, unhealthy_detail};
use runtime::unwell;

pub use crate::error::{Exit, Failure, Kind};
pub use plan::plan;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
const GIB: u64 = 1 << 30;
const DETAIL_MAX: usize = 900;
const LOG_TAIL_MAX: usize = 16 * 1024;

/// What the token manager may use: these clients and the system clocks.
fn token_ports<T: TenancyApi, V: Vault>(
    c: &Clients<T, V>,
) -> ports::Ports<'_, V, T, ports::SystemClock> {
    ports::Ports {
        vault: &c.bao,
        leaser: &c.tenancy,
        clock: &ports::SystemClock,
    }
}

type Parts = (
    monky_boundary::signing::Keys,
    monky_boundary::signing::Keys,
    monky_base::windows::Windows,
);

fn parsed_parts(cfg: &Config) -> Result<Parts, Failure> {
    let fail =
        |e: Box<dyn std::error::Error + Send + Sync>| Failure::fail(e.to_string()).caused_by(e);
    let keys = monky_boundary::signing::Keys::parse(&cfg.bundle_signing_keys)
        .map_err(|e| fail(e.into()))?;
    let agent_keys =
        monky_boundary::signing::Keys::parse_key("agent_signing_keys", &cfg.agent_signing_keys)
            .map_err(|e| fail(e.into()))?;
    let windows = monky_base::windows::Windows::parse(&cfg.apply_windows, &cfg.apply_windows_tz)
        .map_err(|e| fail(e.into()))?;
    Ok((keys, agent_keys, windows))
}

/// What [`Agent::new`] would refuse in `cfg`, short of starting its transport: the signing
/// keys, the apply windows, the HTTP clients (their CA files), and for `sdk` an identity file
/// this process can open. `reload` runs it before it signals the service.
pub fn check_config(cfg: &Config) -> Result<(), Failure> {
    remotes::clients(cfg, &Dialer::system())
        .map_err(|e| Failure::fail(e.to_string()).caused_by(e))?;
    if cfg.transport != Transport::Proxy {
        remotes::egress(cfg).map_err(|e| Failure::fail(e.to_string()))?;
    }
    parsed_parts(cfg)?;
    if cfg.transport == Transport::Sdk {
        std::fs::File::open(&cfg.identity)
            .map_err(|e| Failure::fail(format!("identity {}: {e}", cfg.identity)))?;
    }
    Ok(())
}

/// The box's host name, from uname(2): the units mount /proc with `ProcSubset=pid`, which hides
/// /proc/sys (reading /proc/sys/kernel/hostname there made every box "unknown" to tenancy).
pub fn hostname() -> String {
    // SAFETY: utsname is plain old data; uname fills it or fails.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    // SAFETY: nodename is NUL-terminated by the kernel within its fixed size.
    let name = unsafe { std::ffi::CStr::from_ptr(u.nodename.as_ptr()) };
    match name.to_string_lossy().trim() {
        "" => "unknown".into(),
        n => n.to_string(),
    }
}

/// The agent of one box. Generic over its ports (`agent::ports`): tenancy, OpenBao and the
/// engine are the real clients unless a unit test puts fakes in their place.
pub struct Agent<T = Tenancy, V = Bao, E = Engine> {
    cfg: Config,
    c: Clients<T, V>,
    engine: E,
    state: State,
    tokens: token::TokenManager,
    prune: bool,
    host: String,
    keys: monky_boundary::signing::Keys,
    /// `agent_signing_keys`: empty = self-update off.
    agent_keys: monky_boundary::signing::Keys,
    /// The box's instance that stages agent updates when it is another (its keys are then
    /// not this agent's to use: `agent_keys` is empty).
    update_elsewhere: Option<String>,
    /// SIGTERM in `--once`: the running compose step or health wait stops, the tick reports
    /// `INTERRUPTED` and saves state.
    interrupt: Option<tokio::sync::watch::Receiver<bool>>,
    windows: monky_base::windows::Windows,
    /// Time spent waiting on compose and on health, for the tick's cost line.
    docker_wait: runtime::DockerWait,
    /// The wall clock the rollback's hold and window and the backoff read (a test moves it).
    clock: Arc<dyn ports::Clock + Send + Sync>,
    /// The transport's egress route (its proxy password is registered every tick).
    egress: monky_wire::egress::Egress,
    /// What belongs to the running tick alone: made afresh when a tick starts, so nothing of one
    /// tick reaches the next (an agent may live for weeks in `run`).
    now: TickCtx,
}

/// The running tick's own state.
struct TickCtx {
    /// When this tick's budget (`tick_budget_s`) runs out.
    deadline: tokio::time::Instant,
    /// The containers as the check-in saw them, while nothing has changed them since (no
    /// compose run yet): a heartbeat's report reuses them instead of asking the engine again.
    seen: Option<Vec<Container>>,
    /// Release shapes read so far, by release directory (resolved): a heartbeat asks for the
    /// running release's twice (check-in, verdict). Forgotten whenever a promote writes a
    /// release (a same-sha retry overlays the bundle's files on its directory).
    shapes: std::sync::Mutex<Vec<(PathBuf, ReleaseShape)>>,
    /// The last shape this tick parsed, kept in state.json at the tick's end.
    learned: std::sync::Mutex<Option<state::ShapeMemo>>,
    /// The host ports the box's other instances keep, read once a tick when first needed.
    peers: std::sync::OnceLock<monky_host::instance::PeerFacts>,
}

/// A release's services and which of them are one-shot jobs.
pub(crate) type ReleaseShape = (Vec<String>, std::collections::BTreeSet<String>);

impl TickCtx {
    fn start(budget_s: u64) -> TickCtx {
        TickCtx {
            deadline: tokio::time::Instant::now() + Duration::from_secs(budget_s),
            seen: None,
            shapes: Default::default(),
            learned: Default::default(),
            peers: Default::default(),
        }
    }
}

impl Agent {
    pub fn new(cfg: Config, prune: bool) -> Result<Agent, Failure> {
        let conn = remotes::connector(&cfg).map_err(Failure::from)?;
        let c =
            remotes::clients(&cfg, &conn).map_err(|e| Failure::fail(e.to_string()).caused_by(e))?;
        let engine = Engine::new(cfg.docker_socket());
        let others = monky_host::instance::others(&cfg.instance);
        let clashes = monky_host::instance::clashes(&cfg, &others);
        if !clashes.is_empty() {
            return Err(Failure::fail(format!(
                "instance {} shares what must be its own with another instance on this box: {}",
                cfg.instance.display(),
                clashes.join("; ")
            )));
        }
        let mut a = Agent::from_parts(cfg, prune, c, engine)?;
        a.egress = conn.egress().cloned().unwrap_or_default();
        // masked in what `bootstrap` prints too (a tick registers it again at its start)
        a.egress.register_secrets();
        if !others.is_empty() && !a.agent_keys.is_empty() {
            // one package per box: only one instance stages it (docs/OPERATIONS.md)
            let all = monky_host::instance::all(&a.cfg.instance.etc_dir);
            let by = monky_host::instance::updater(&all).map(|p| p.instance.clone());
            if let Some(by) = by.filter(|by| *by != a.cfg.instance) {
                debug!(
                    "self-update: instance {} stages the box's agent updates, not this one",
                    by.display()
                );
                a.agent_keys = Default::default();
                a.update_elsewhere = Some(by.display().to_string());
            }
        }
        Ok(a)
    }
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// An agent over the given clients and engine (`new` passes the real ones).
    fn from_parts(cfg: Config, prune: bool, c: Clients<T, V>, engine: E) -> Result<Self, Failure> {
        let (keys, agent_keys, windows) = parsed_parts(&cfg)?;
        let cfg_budget = cfg.tick_budget_s;
        Ok(Agent {
            keys,
            agent_keys,
            update_elsewhere: None,
            tokens: token::TokenManager::new(&cfg),
            cfg,
            c,
            engine,
            state: State::default(),
            prune,
            host: hostname(),
            interrupt: None,
            now: TickCtx::start(cfg_budget),
            windows,
            docker_wait: Default::default(),
            clock: Arc::new(ports::SystemClock),
            egress: Default::default(),
        })
    }

    /// Unix seconds, from the injected clock.
    fn wall(&self) -> u64 {
        self.clock.wall()
    }

    pub fn set_interrupt(&mut self, rx: tokio::sync::watch::Receiver<bool>) {
        self.interrupt = Some(rx);
    }

    /// Milliseconds this agent has waited on compose and container health so far.
    pub fn docker_wait_ms(&self) -> u64 {
        self.docker_wait.ms()
    }

    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|r| *r.borrow())
    }

    /// The one way a tick runs compose (apply, rollback, heal, down): every step within the
    /// tick's deadline and stopped by its interrupt; the containers the check-in saw are
    /// forgotten (compose changes what runs).
    async fn compose(&mut self) -> Result<Compose, Failure> {
        self.now.seen = None;
        let bounds = runtime::Bounds {
            deadline: self.now.deadline,
            interrupt: self.interrupt.clone(),
        };
        Compose::detect(&self.cfg, &self.docker_wait, bounds)
            .await
            .map_err(Failure::from)
    }

    /// `bootstrap`: the state loaded, the token stored (see [`Agent::load_or_bootstrap_token`]),
    /// the state saved. The caller holds the tick's lock.
    pub async fn bootstrap(&mut self, force: bool) -> Result<(), Failure> {
        self.state = State::load(&self.cfg.state_path())?;
        self.load_or_bootstrap_token(force).await?;
        self.state.save(&self.cfg.state_path())?;
        Ok(())
    }

    /// The bearer: `bao.token`, or a login with the kit's bootstrap grant (see
    /// [`token::TokenManager::load_or_bootstrap`]).
    async fn load_or_bootstrap_token(&mut self, force: bool) -> Result<(), Failure> {
        self.tokens
            .load_or_bootstrap(&mut self.state, &token_ports(&self.c), force)
            .await
    }

    /// The token an apply reads its secrets with (0.1.6).
    async fn token_for_apply(&mut self) -> Result<Zeroizing<String>, Failure> {
        self.tokens
            .for_apply(&mut self.state, &token_ports(&self.c))
            .await
    }

    /// Renewal, re-lease, a deferred swap: after the tick's action.
    async fn token_upkeep(&mut self) -> Result<(), Failure> {
        self.tokens
            .upkeep(&mut self.state, &token_ports(&self.c))
            .await
    }

    fn prepare_dirs(&self) -> Result<(), Failure> {
        let c = &self.cfg;
        state::ensure_dir(&c.state_dir, 0o700)?;
        for d in [c.releases_dir(), c.staging_dir(), c.docker_config_dir()] {
            state::ensure_dir(&d, 0o700)?;
        }
        Ok(())
    }
}

/// A container as the engine lists it, for the rooms' unit tests.
#[cfg(test)]
fn test_container(service: &str, state: &str, health: &str) -> Container {
    Container {
        service: service.into(),
        state: state.into(),
        health: health.into(),
        id: String::new(),
        ..Default::default()
    }
}

//! One tick: lock → token → check-in → apply | none | down → report → token upkeep → save.
//! Every outcome maps to one exit code (see [`Exit`]); every refusal and failure that can still
//! be reported is reported to tenancy with its code and names only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, info, warn};
use zeroize::Zeroizing;

use crate::bao::{Bao, BaoError};
use crate::bundle::{self, Bundle, Refusal};
use crate::compose_check;
use crate::config::{Config, Transport, VolumesOnAbsent};
use crate::guard::Guard;
use crate::http::HttpClient;
use crate::policy::{self, Boundary};
use crate::redact;
use crate::registry;
use crate::runtime::{self, Compose, Engine, RuntimeError};
use crate::state::{self, State, TokenMeta, TokenSource};
use crate::tenancy::{Checkin, Container, Report, Tenancy, TenancyError};
use crate::transport::{self, Dialer, Endpoint, TransportError};

mod plan;
mod rollback;

pub use plan::plan;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
const GIB: u64 = 1 << 30;
const DETAIL_MAX: usize = 900;
const LOG_TAIL_MAX: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    Fail = 1,
    TempFail = 75,
    EnvMismatch = 78,
}

/// A tick that did not converge: what the operator reads, and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub exit: Exit,
    pub msg: String,
    /// Tenancy answered 429: the 0.1.6 rule lets an apply go on with a working token.
    pub rate_limited: bool,
}

impl Failure {
    pub fn new(exit: Exit, msg: impl Into<String>) -> Self {
        Failure {
            exit,
            msg: msg.into(),
            rate_limited: false,
        }
    }
    fn fail(msg: impl Into<String>) -> Self {
        Failure::new(Exit::Fail, msg)
    }
}

impl From<state::StateError> for Failure {
    fn from(e: state::StateError) -> Self {
        Failure::fail(e.to_string())
    }
}

fn from_transport(e: TransportError) -> Failure {
    match e {
        TransportError::Unreachable(m) => Failure::new(Exit::TempFail, m),
        TransportError::Setup(m) => Failure::fail(m),
    }
}

fn from_tenancy(e: TenancyError) -> Failure {
    let msg = e.to_string();
    match e {
        TenancyError::Unauthenticated { .. } => Failure::fail(format!(
            "AGENT_UNAUTHENTICATED: {msg}. The box's token is unknown, expired, or its grant was superseded \
             (kit re-revealed or environment retired): reveal the install kit again, put the new grant at the \
             bootstrap path and run `monky-deployd bootstrap --force`"
        )),
        TenancyError::EnvMismatch(_) => Failure::new(Exit::EnvMismatch, msg),
        TenancyError::RateLimited { .. } => Failure {
            rate_limited: true,
            ..Failure::new(Exit::TempFail, msg)
        },
        TenancyError::Unavailable(_) => Failure::new(Exit::TempFail, msg),
        _ => Failure::fail(msg),
    }
}

fn from_bao(e: BaoError) -> Failure {
    match e {
        BaoError::Unavailable(m) => {
            Failure::new(Exit::TempFail, format!("OpenBao unavailable: {m}"))
        }
        other => Failure::fail(other.to_string()),
    }
}

/// The configured transport, which makes each endpoint's connector.
pub fn connector(cfg: &Config) -> Result<Dialer, TransportError> {
    Ok(match cfg.transport {
        Transport::System => Dialer::System,
        Transport::Proxy => Dialer::Proxy,
        Transport::Sdk => Dialer::Sdk(Arc::new(transport::sdk::SdkConnector::new(
            Path::new(&cfg.identity),
            Duration::from_secs(cfg.tenancy.timeout_s.max(cfg.bao.timeout_s)),
        )?)),
    })
}

pub fn endpoints(cfg: &Config) -> (Endpoint, Endpoint) {
    (
        Endpoint {
            label: "tenancy",
            service: cfg.tenancy.service.clone(),
            host: cfg.tenancy.host.clone(),
            port: cfg.tenancy.port,
            proxy_port: cfg.tenancy.proxy_port,
            timeout: Duration::from_secs(cfg.tenancy.timeout_s),
        },
        Endpoint {
            label: "openbao",
            service: cfg.bao.service.clone(),
            host: cfg.bao.host.clone(),
            port: cfg.bao.port,
            proxy_port: cfg.bao.proxy_port,
            timeout: Duration::from_secs(cfg.bao.timeout_s),
        },
    )
}

pub struct Clients {
    pub tenancy: Tenancy,
    pub bao: Bao,
}

pub fn clients(cfg: &Config, dialer: &Dialer) -> Result<Clients, Failure> {
    let (t, b) = endpoints(cfg);
    let th = HttpClient::new(
        dialer.connector(&t),
        t,
        cfg.tenancy.scheme,
        &cfg.tenancy.ca_file,
    )
    .map_err(Failure::fail)?;
    let bh = HttpClient::new(dialer.connector(&b), b, cfg.bao.scheme, &cfg.bao.ca_file)
        .map_err(Failure::fail)?;
    Ok(Clients {
        tenancy: Tenancy { http: th },
        bao: Bao {
            http: bh,
            auth_mount: cfg.bao.auth_mount.clone(),
            role: cfg.bao.role.clone(),
        },
    })
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn truncate_tail(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}

fn truncate_head(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// The registry's own words from a failed pull, on one line (0.1.7). Redacted whole before it
/// is cut: a secret cut in half would no longer match.
fn pull_diagnosis(output: &str) -> String {
    let output = redact::redact(output);
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error")
                || l.contains("denied")
                || l.contains("unauthorized")
                || l.contains("manifest")
                || l.contains("credentials")
                || l.contains("refused")
                || l.contains("no such host")
                || l.contains("not found")
        })
        .collect();
    let joined = if lines.is_empty() {
        output.trim().to_string()
    } else {
        lines.join(" | ")
    };
    truncate_tail(&joined, 600)
}

pub struct Agent {
    pub cfg: Config,
    c: Clients,
    engine: Engine,
    pub state: State,
    token: Option<Zeroizing<String>>,
    prune: bool,
    host: String,
    keys: crate::signing::Keys,
    /// SIGTERM in `--once`: the running compose step or health wait stops, the tick reports
    /// `INTERRUPTED` and saves state.
    interrupt: Option<tokio::sync::watch::Receiver<bool>>,
    /// When this tick's budget (`tick_budget_s`) runs out.
    deadline: tokio::time::Instant,
    windows: crate::windows::Windows,
    /// A failed report held back while an automatic rollback may still add to it.
    rb: rollback::Hold,
}

impl Agent {
    pub fn new(cfg: Config, prune: bool) -> Result<Agent, Failure> {
        let conn = connector(&cfg).map_err(from_transport)?;
        let c = clients(&cfg, &conn)?;
        let engine = Engine::new(cfg.docker_socket());
        let keys = crate::signing::Keys::parse(&cfg.bundle_signing_keys).map_err(Failure::fail)?;
        let windows = crate::windows::Windows::parse(&cfg.apply_windows, &cfg.apply_windows_tz)
            .map_err(Failure::fail)?;
        Ok(Agent {
            keys,
            cfg,
            c,
            engine,
            state: State::default(),
            token: None,
            prune,
            host: hostname(),
            interrupt: None,
            deadline: tokio::time::Instant::now(),
            windows,
            rb: Default::default(),
        })
    }

    pub fn set_interrupt(&mut self, rx: tokio::sync::watch::Receiver<bool>) {
        self.interrupt = Some(rx);
    }

    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|r| *r.borrow())
    }

    fn prepare_dirs(&self) -> Result<(), Failure> {
        let c = &self.cfg;
        state::ensure_dir(&c.state_dir, 0o700)?;
        for d in [c.releases_dir(), c.staging_dir(), c.docker_config_dir()] {
            state::ensure_dir(&d, 0o700)?;
        }
        Ok(())
    }

    /// One tick under the lock. A second concurrent tick returns `Ok` at once.
    pub async fn tick(&mut self) -> Result<Exit, Failure> {
        self.prepare_dirs()?;
        let Some(_lock) = state::try_lock(&self.cfg.lock_path())? else {
            info!(
                "another tick holds {}; nothing to do",
                self.cfg.lock_path().display()
            );
            return Ok(Exit::Ok);
        };
        self.state = State::load(&self.cfg.state_path())?;
        if self.state.env_id.is_empty() {
            self.state.env_id = self.cfg.env_id.clone();
        }
        let started = std::time::Instant::now();
        self.deadline = tokio::time::Instant::now() + Duration::from_secs(self.cfg.tick_budget_s);
        let applied_before = self.state.applied_sha.clone();
        let res = self.tick_locked().await;
        let res = match res {
            Err(f) if f.exit == Exit::TempFail && self.cfg.laptop_mode => {
                info!("offline (laptop mode): {}", redact::redact(&f.msg));
                Ok(Exit::Ok)
            }
            other => other,
        };
        // finally: scrub, clean staging, save state. The failure message is masked while the
        // values this tick read are still registered: it goes to the journal and state.json.
        let res = res.map_err(|mut f| {
            f.msg = redact::redact(&f.msg);
            f
        });
        self.token = None;
        redact::forget_all();
        if let Ok(rd) = std::fs::read_dir(self.cfg.staging_dir()) {
            for e in rd.flatten() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        if let Err(f) = &res {
            self.state.last_error = Some(redact::redact(&f.msg));
        }
        self.count(&res, applied_before.as_deref());
        self.state.save(&self.cfg.state_path())?;
        if !self.cfg.metrics_textfile.is_empty() {
            self.write_metrics(&res, started.elapsed().as_secs_f64())
                .await;
        }
        res
    }

    /// The counters the metrics file reports, kept in state.json across ticks.
    fn count(&mut self, res: &Result<Exit, Failure>, applied_before: Option<&str>) {
        let c = &mut self.state.counters;
        let exit = match res {
            Ok(e) => *e,
            Err(f) => f.exit,
        };
        *c.ticks.entry((exit as i32).to_string()).or_default() += 1;
        match res {
            Ok(Exit::Ok) => {
                c.last_success = Some(state::now());
                let applied = self.state.applied_sha.as_deref();
                if applied.is_some() && applied != applied_before {
                    c.applies += 1;
                }
            }
            Err(f) if f.exit == Exit::Fail => {
                if let Some(code) = crate::metrics::failure_code(&f.msg) {
                    *c.failures.entry(code.to_string()).or_default() += 1;
                }
            }
            _ => {}
        }
    }

    async fn write_metrics(&self, res: &Result<Exit, Failure>, duration_s: f64) {
        let containers = self
            .engine
            .containers(&self.cfg.compose_project)
            .await
            .unwrap_or_default();
        let now = state::now();
        let st = &self.state;
        let text = crate::metrics::render(&crate::metrics::Snapshot {
            version: VERSION,
            transport: self.cfg.transport.as_str(),
            ziti_sdk: &transport::sdk::sdk_version().unwrap_or_else(|| "none".into()),
            duration_s,
            end_time: now,
            exit_code: match res {
                Ok(e) => *e as i32,
                Err(f) => f.exit as i32,
            },
            counters: &st.counters,
            applied_serial: st.applied_serial,
            in_sync: st.applied_sha.is_some() && st.applied_sha == st.desired_sha,
            token_ttl_s: st.token.as_ref().map(|t| t.expires_at as i64 - now as i64),
            containers: &containers,
        });
        let path = Path::new(&self.cfg.metrics_textfile);
        if let Err(e) = crate::metrics::write(path, &text) {
            warn!("metrics file {}: {e}", path.display());
        }
    }

    async fn tick_locked(&mut self) -> Result<Exit, Failure> {
        self.load_or_bootstrap_token(false).await?;
        if let Some(t) = &self.state.token {
            if !t.env_id.is_empty() && t.env_id != self.cfg.env_id {
                return Err(Failure::new(
                    Exit::EnvMismatch,
                    format!(
                        "AGENT_ENV_MISMATCH: the stored token is pinned to {} but config.yaml says {}; \
                         not retried — fix env_id or re-bootstrap this box",
                        t.env_id, self.cfg.env_id
                    ),
                ));
            }
        }
        let containers = self.containers().await;
        let resp = match self.checkin(&containers).await {
            Ok(r) => r,
            Err(TenancyError::Unauthenticated { .. }) if self.cfg.bootstrap_path.exists() => {
                // a re-revealed kit's grant is waiting: use it, then try once more
                warn!("tenancy refused the stored token; a bootstrap grant is present, logging in with it");
                self.load_or_bootstrap_token(true).await?;
                self.checkin(&containers).await.map_err(from_tenancy)?
            }
            Err(e) => return Err(from_tenancy(e)),
        };
        self.state.last_checkin = Some(state::now());
        self.state.desired_sha = resp.desired_sha.clone();
        if self
            .state
            .failed_release
            .as_ref()
            .is_some_and(|f| resp.desired_sha.as_deref() != Some(f.sha.as_str()))
        {
            // tenancy changed its mind: a rolled-back sha is not held any more
            self.state.failed_release = None;
        }
        self.state.last_action = Some(resp.action.clone());
        info!(
            "checkin: action={} desired={} applied={}",
            resp.action,
            short(resp.desired_sha.as_deref()),
            short(self.state.applied_sha.as_deref())
        );
        let result = match resp.action.as_str() {
            "apply" => {
                let sha = resp.desired_sha.clone().unwrap_or_default();
                match self.windows.wait(&self.windows.now()) {
                    Some((window, next)) if !resp.urgent => {
                        self.deferred(&sha, &window, &next, containers).await
                    }
                    _ => self.apply_or_roll_back(&sha, containers).await,
                }
            }
            "down" => self.down(resp.prod, resp.purge_volumes).await,
            _ => self.heartbeat(containers).await,
        };
        if let Err(f) = self.token_upkeep().await {
            warn!("token upkeep: {}", f.msg);
        }
        if self.prune && result.is_ok() {
            self.prune_releases().await;
        }
        result
    }

    async fn checkin(
        &self,
        containers: &[Container],
    ) -> Result<crate::tenancy::CheckinResponse, TenancyError> {
        let token = self.token.as_ref().map(|t| t.as_str()).unwrap_or_default();
        self.c
            .tenancy
            .checkin(
                token,
                &Checkin {
                    env_id: &self.cfg.env_id,
                    agent_version: VERSION,
                    applied_sha: self.state.applied_sha.as_deref(),
                    host: &self.host,
                    containers,
                },
            )
            .await
    }

    async fn containers(&self) -> Vec<Container> {
        match self.engine.containers(&self.cfg.compose_project).await {
            Ok(c) => c,
            Err(e) => {
                warn!("{e}");
                Vec::new()
            }
        }
    }

    // ---- token ------------------------------------------------------------------------

    /// The bearer: `bao.token`, or a login with the kit's bootstrap grant (then the grant file
    /// is deleted). `force` replaces an existing token.
    pub async fn load_or_bootstrap_token(&mut self, force: bool) -> Result<(), Failure> {
        if force && self.token.is_none() {
            // the token being replaced is revoked after the new login
            if let Some(t) = state::read_token(&self.cfg.token_path())? {
                redact::register(&t);
                self.token = Some(t);
            }
        }
        if !force {
            if let Some(t) = state::read_token(&self.cfg.token_path())? {
                redact::register(&t);
                self.token = Some(t);
                return Ok(());
            }
        }
        let gp = self.cfg.bootstrap_path.clone();
        let grant = match std::fs::read_to_string(&gp) {
            Ok(g) => Zeroizing::new(g.trim().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Failure::fail(format!(
                    "no credentials: no token at {} and no bootstrap grant at {} — reveal the install kit and \
                     place its grant there",
                    self.cfg.token_path().display(),
                    gp.display()
                )))
            }
            Err(e) => return Err(Failure::fail(format!("cannot read bootstrap grant {}: {e}", gp.display()))),
        };
        redact::register(&grant);
        let login = self.c.bao.login(&grant).await.map_err(|e| match e {
            BaoError::Unavailable(_) => from_bao(e),
            other => Failure::fail(format!(
                "bootstrap grant {} refused by OpenBao ({other}); it is single-use and valid for 1 h — reveal the kit again",
                gp.display()
            )),
        })?;
        if !login.env_id.is_empty() && login.env_id != self.cfg.env_id {
            let _ = self.c.bao.revoke_self(&login.token).await;
            return Err(Failure::new(
                Exit::EnvMismatch,
                format!(
                    "AGENT_ENV_MISMATCH: the bootstrap grant is for {} but config.yaml says {}",
                    login.env_id, self.cfg.env_id
                ),
            ));
        }
        let old = self.token.take();
        self.store_token(&login, TokenSource::Bootstrap)?;
        if let Err(e) = std::fs::remove_file(&gp) {
            warn!(
                "could not delete the used bootstrap grant {}: {e}",
                gp.display()
            );
        }
        info!(
            "bootstrap: logged in to OpenBao, token stored, grant {} deleted",
            gp.display()
        );
        if let Some(old) = old {
            if old.as_str() != login.token.as_str() {
                let _ = self.c.bao.revoke_self(&old).await;
            }
        }
        Ok(())
    }

    fn store_token(
        &mut self,
        login: &crate::bao::Login,
        source: TokenSource,
    ) -> Result<(), Failure> {
        state::write_private(&self.cfg.token_path(), login.token.as_bytes(), 0o600)?;
        let now = state::now();
        let mut meta = TokenMeta {
            source,
            obtained_at: now,
            expires_at: now + login.lease_duration,
            renewable: login.renewable,
            grant_jti: login.grant_jti.clone(),
            env_id: if login.env_id.is_empty() {
                self.cfg.env_id.clone()
            } else {
                login.env_id.clone()
            },
            expires_boot: 0,
            boot_id: String::new(),
        };
        meta.set_ttl(login.lease_duration);
        self.state.token = Some(meta);
        self.token = Some(login.token.clone());
        Ok(())
    }

    /// Lease a grant from tenancy, log in with it, store the new token and revoke the old one.
    async fn lease_login(&mut self, reason: &str) -> Result<(), Failure> {
        let bearer = self.token.clone().unwrap_or_default();
        let lease = self
            .c
            .tenancy
            .lease(&bearer, &self.cfg.env_id, reason)
            .await
            .map_err(|e| match e {
                TenancyError::LegacyLease => Failure::fail(format!("LEASE_LEGACY_REFUSED: {e}")),
                other => from_tenancy(other),
            })?;
        let login = self.c.bao.login(&lease.grant).await.map_err(from_bao)?;
        if !login.env_id.is_empty() && login.env_id != self.cfg.env_id {
            // never stored, never used: and not left alive either
            let _ = self.c.bao.revoke_self(&login.token).await;
            return Err(Failure::new(
                Exit::EnvMismatch,
                format!("AGENT_ENV_MISMATCH: leased grant is for {}", login.env_id),
            ));
        }
        let old = self.token.take();
        self.store_token(&login, TokenSource::Lease)?;
        self.state.lease_swap_due = false;
        info!("lease ({reason}): new token from grant {}", lease.jti);
        if let Some(old) = old {
            if old.as_str() != login.token.as_str() {
                if let Err(e) = self.c.bao.revoke_self(&old).await {
                    debug!("revoke of the replaced token: {e}");
                }
            }
        }
        Ok(())
    }

    /// The token to read this bundle's secrets with (0.1.6): a lease-derived token that is still
    /// valid is reused; the bootstrap token is swapped for a lease once; a rate-limited lease
    /// while a working token exists lets the apply go on with it and defers the swap.
    async fn token_for_apply(&mut self) -> Result<Zeroizing<String>, Failure> {
        let cur = self.token.clone().unwrap_or_default();
        let is_lease = self
            .state
            .token
            .as_ref()
            .map(|t| t.source == TokenSource::Lease)
            .unwrap_or(false);
        let cur_ttl = match self.c.bao.lookup_self(&cur).await {
            Ok(info) => Some(info.ttl),
            Err(BaoError::Unavailable(m)) => {
                return Err(Failure::new(
                    Exit::TempFail,
                    format!("OpenBao unavailable: {m}"),
                ))
            }
            Err(e) => {
                info!("current token is no longer valid ({e}); leasing");
                None
            }
        };
        if is_lease {
            if let Some(ttl) = cur_ttl {
                if ttl > self.cfg.bao.renew_below_s {
                    debug!("reusing the lease-derived token (ttl {ttl}s)");
                    return Ok(cur);
                }
            }
        }
        match self.lease_login("apply").await {
            Ok(()) => Ok(self.token.clone().unwrap_or_default()),
            Err(f) if f.rate_limited && cur_ttl.is_some() => {
                warn!("{}; applying with the current token, swap deferred", f.msg);
                self.state.lease_swap_due = true;
                Ok(cur)
            }
            Err(f) => Err(f),
        }
    }

    /// Renew when the TTL runs low; re-lease when renewal can no longer extend it (max TTL);
    /// finish a deferred swap. Uses the cached expiry so a normal tick makes no OpenBao call.
    async fn token_upkeep(&mut self) -> Result<(), Failure> {
        let Some(meta) = self.state.token.clone() else {
            return Ok(());
        };
        let Some(tok) = self.token.clone() else {
            return Ok(());
        };
        let below = self.cfg.bao.renew_below_s;
        // the boot clock decides, not the wall clock: a backward step of the wall clock must
        // not let the token run out unrenewed (no boot clock reading → ask OpenBao)
        let left = meta.remaining();
        if left.is_some_and(|l| l > below) && !self.state.lease_swap_due {
            return Ok(());
        }
        if self.state.lease_swap_due {
            return self.lease_login("swap").await;
        }
        let ttl = self.c.bao.lookup_self(&tok).await.map_err(from_bao)?.ttl;
        if ttl > below {
            if let Some(m) = self.state.token.as_mut() {
                m.set_ttl(ttl);
            }
            return Ok(());
        }
        if meta.renewable {
            let got = self
                .c
                .bao
                .renew_self(&tok, below.max(3600) * 4)
                .await
                .map_err(from_bao)?;
            if let Some(m) = self.state.token.as_mut() {
                m.set_ttl(got);
            }
            if got > below {
                info!("token renewed: ttl {got}s");
                return Ok(());
            }
            info!("token renewal capped at {got}s (max TTL near); re-leasing");
        }
        self.lease_login("renew").await
    }

    // ---- reports ------------------------------------------------------------------------

    async fn report(&mut self, sha: Option<&str>, result: &str, detail: &str, log_tail: &str) {
        if self.rb.holding && result == "failed" && self.rb.held.is_none() {
            // an automatic rollback may follow: rollback.rs sends it, with how that went
            self.rb.held = Some(rollback::Held {
                detail: detail.to_string(),
                log_tail: Zeroizing::new(log_tail.to_string()),
            });
            return;
        }
        let containers = self.containers().await;
        // redaction first, then the cut (as everywhere)
        let detail = truncate_head(&redact::redact(detail), DETAIL_MAX);
        let log_tail = truncate_tail(&redact::redact(log_tail), LOG_TAIL_MAX);
        let token = self.token.clone().unwrap_or_default();
        let rep = Report {
            env_id: &self.cfg.env_id,
            sha,
            result,
            detail,
            log_tail,
            agent_version: VERSION,
            containers: &containers,
        };
        match self.c.tenancy.report(&token, &rep).await {
            Ok(()) => {
                self.state.last_report = Some(state::now());
                self.state.last_result = Some(result.to_string());
                if result != "failed" {
                    self.state.last_error = None;
                }
            }
            Err(e) => warn!("report {result} not delivered: {e}"),
        }
    }

    async fn refuse(&mut self, sha: &str, r: Refusal, log_tail: &str) -> Failure {
        let msg = r.to_string();
        self.report(Some(sha), "failed", &msg, log_tail).await;
        Failure::fail(msg)
    }

    // ---- actions ------------------------------------------------------------------------

    /// Outside every maintenance window: the running release is reported with why the desired
    /// one waits; exit 0. Nothing is fetched, leased or touched.
    async fn deferred(
        &mut self,
        sha: &str,
        window: &str,
        next: &jiff::Zoned,
        containers: Vec<Container>,
    ) -> Result<Exit, Failure> {
        let detail = format!(
            "DEFERRED: {} waits for {window} (next {})",
            sha.get(..12).unwrap_or(sha),
            next.strftime("%Y-%m-%dT%H:%M:%S%:z")
        );
        info!("{detail}");
        let Some(applied) = self.state.applied_sha.clone() else {
            return Ok(Exit::Ok);
        };
        if containers.is_empty()
            || !runtime::converged(
                &self.expected_services(&self.cfg.current_link()),
                &containers,
            )
        {
            // the running release is not healthy either: the heartbeat says so
            return self.heartbeat(containers).await;
        }
        self.report(Some(&applied), "applied", &detail, "").await;
        Ok(Exit::Ok)
    }

    async fn heartbeat(&mut self, containers: Vec<Container>) -> Result<Exit, Failure> {
        let Some(sha) = self.state.applied_sha.clone() else {
            debug!("nothing applied yet; the check-in was the heartbeat");
            return Ok(Exit::Ok);
        };
        let expected: Vec<String> = self.expected_services(&self.cfg.current_link());
        if containers.is_empty() {
            // an empty list may mean the engine itself is down: say which
            if let Err(e) = self.engine.containers(&self.cfg.compose_project).await {
                let detail = format!("DOCKER_UNAVAILABLE: {e}");
                warn!("heartbeat: {detail}");
                self.report(Some(&sha), "failed", &detail, "").await;
                return Err(Failure::fail(detail));
            }
        }
        if runtime::converged(&expected, &containers) {
            self.report(Some(&sha), "applied", "", "").await;
            Ok(Exit::Ok)
        } else {
            let bad: Vec<String> = expected
                .iter()
                .filter(|s| {
                    !containers.iter().any(|c| {
                        &c.service == *s
                            && c.state == "running"
                            && (c.health.is_empty() || c.health == "healthy")
                    })
                })
                .cloned()
                .collect();
            let detail = format!("UNHEALTHY: {}", bad.join(", "));
            warn!("heartbeat: {detail}");
            self.report(Some(&sha), "failed", &detail, "").await;
            Err(Failure::fail(detail))
        }
    }

    fn expected_services(&self, dir: &Path) -> Vec<String> {
        std::fs::read(dir.join("compose.yaml"))
            .ok()
            .and_then(|b| compose_check::parse(&b).ok())
            .and_then(|v| compose_check::check(&v, true).ok())
            .unwrap_or_default()
    }

    async fn down(&mut self, tenancy_prod: bool, purge: bool) -> Result<Exit, Failure> {
        let prod = tenancy_prod || self.cfg.prod == Some(true);
        let want_purge = purge || self.cfg.volumes_on_absent == VolumesOnAbsent::Purge;
        let volumes = want_purge && !prod;
        if want_purge && prod {
            warn!("down: volume purge requested but this is a prod environment: volumes are kept");
        }
        let running = self.containers().await;
        let sha = self.state.applied_sha.clone();
        if running.is_empty() && sha.is_none() {
            debug!("down: nothing running");
            self.report(None, "down", "", "").await;
            return Ok(Exit::Ok);
        }
        let mut compose = Compose::detect(&self.cfg)
            .await
            .map_err(|e| Failure::fail(e.to_string()))?;
        let cur = self.cfg.current_link();
        let dir = if cur.join("compose.yaml").exists() {
            Some(cur.as_path())
        } else {
            None
        };
        // compose reads that release's .env again: its values must be masked in what it prints
        register_env_values(&cur.join(".env"));
        let guard = self.guard(&mut compose, &cur, false).await?;
        info!(
            "compose down --remove-orphans{}",
            if volumes { " -v" } else { "" }
        );
        let res = compose.down(dir, volumes).await;
        if let Some(d) = guard.as_ref().map(|g| g.denied()).filter(|d| !d.is_empty()) {
            warn!("down: the engine guard refused {}", d.join("; "));
        }
        drop(guard);
        match res {
            Ok(_) => {
                self.state.applied_sha = None;
                self.state.applied_serial = None;
                let detail = if want_purge && prod {
                    "volumes kept: prod environment"
                } else {
                    ""
                };
                self.report(sha.as_deref(), "down", detail, "").await;
                Ok(Exit::Ok)
            }
            Err(e) => {
                let msg = format!("COMPOSE_DOWN_FAILED: {}", pull_diagnosis(e.output()));
                self.report(sha.as_deref(), "failed", &msg, e.output())
                    .await;
                Err(Failure::fail(msg))
            }
        }
    }

    async fn apply(&mut self, sha: &str) -> Result<Exit, Failure> {
        let token = self.token.clone().unwrap_or_default();
        let (mut wire, hdr) = match self.c.tenancy.bundle(&token, &self.cfg.env_id, sha).await {
            Ok(x) => x,
            Err(TenancyError::BundleTooLarge(n)) => {
                return Err(self
                    .refuse(
                        sha,
                        Refusal::new("BUNDLE_TOO_LARGE", format!("over {n} bytes")),
                        "",
                    )
                    .await)
            }
            Err(e) => return Err(from_tenancy(e)),
        };
        let signatures = std::mem::take(&mut wire.signatures);
        let b = match Bundle::decode(wire, &self.cfg.env_id, sha) {
            Ok(b) => b,
            Err(r) => return Err(self.refuse(sha, r, "").await),
        };
        // the release pipeline's signature, over the sha computed here, before anything else
        match self.keys.verify(&b.sha, &signatures) {
            Ok(Some(id)) => info!("bundle {} signed by {id}", short(Some(&b.sha))),
            Ok(None) => {}
            Err(r) => return Err(self.refuse(sha, r, "").await),
        }
        if let Some(h) = hdr {
            if h != b.sha {
                warn!(
                    "bundle header sha {} disagrees with its content {}",
                    short(Some(&h)),
                    short(Some(&b.sha))
                );
            }
        }
        let services = match self.pre_lease_checks(&b).await {
            Ok(s) => s,
            Err(r) => return Err(self.refuse(sha, r, "").await),
        };
        // secrets: names are logged, values never
        let mut values: BTreeMap<String, Zeroizing<String>> = BTreeMap::new();
        let mut registry_auth: Option<registry::RegistryAuth> = None;
        let entries = b.manifest.entries.clone();
        if !entries.is_empty() {
            let tok = match self.token_for_apply().await {
                Ok(t) => t,
                Err(f) => {
                    if f.exit == Exit::Fail {
                        self.report(Some(sha), "failed", &f.msg, "").await;
                    }
                    return Err(f);
                }
            };
            for e in &entries {
                let read = self.c.bao.kv_read(&tok, &e.path, &e.key, e.version).await;
                let v = match read {
                    Ok(v) => v,
                    Err(BaoError::Unavailable(m)) => {
                        return Err(Failure::new(
                            Exit::TempFail,
                            format!("OpenBao unavailable: {m}"),
                        ))
                    }
                    Err(err) => {
                        let r = Refusal::new(
                            "SECRET_UNREADABLE",
                            format!("{}: {err}", e.var.as_deref().unwrap_or(&e.path)),
                        );
                        return Err(self.refuse(sha, r, "").await);
                    }
                };
                if e.is_registry_auth() {
                    match registry::parse(&v, &self.cfg.registry_host) {
                        Ok(a) => {
                            redact::register(&a.password);
                            // written once the bundle has passed every check, before the pull
                            registry_auth = Some(a);
                        }
                        Err(err) => warn!("{err} — private images will not pull"),
                    }
                } else if let Some(var) = &e.var {
                    values.insert(var.clone(), v);
                }
            }
            info!(
                "read {} secret(s): {}{}",
                entries.len(),
                values.keys().cloned().collect::<Vec<_>>().join(", "),
                if entries.iter().any(|e| e.is_registry_auth()) {
                    " (+ registry credential)"
                } else {
                    ""
                }
            );
        }
        let env = match bundle::render_env(&b.env_template(), &values) {
            Ok(e) => e,
            Err(r) => return Err(self.refuse(sha, r, "").await),
        };
        drop(values);
        let staging = self.cfg.staging_dir().join(sha);
        bundle::stage(&staging, &b, &env)?;
        drop(env);
        let mut compose = Compose::detect(&self.cfg)
            .await
            .map_err(|e| Failure::fail(e.to_string()))?;
        compose.set_interrupt(self.interrupt.clone());
        compose.set_deadline(Some(self.deadline));
        let privileged = self.privileged(&b);
        let guard = self.guard(&mut compose, &staging, privileged).await?;
        // second pass: what compose itself will run, after interpolation from .env
        let config = compose.config(&staging).await;
        drop(guard);
        match config {
            Ok((normalised, warnings)) => {
                // the normalised config carries every interpolated secret: scrubbed on drop
                let normalised = Zeroizing::new(normalised);
                let unset = runtime::unset_variables(&warnings);
                if !unset.is_empty() {
                    let r = Refusal::new(
                        "ENV_INCOMPLETE",
                        format!(
                            "compose.yaml uses variables nothing defines: {}",
                            unset.join(", ")
                        ),
                    );
                    return Err(self.refuse(sha, r, "").await);
                }
                if !warnings.trim().is_empty() {
                    warn!("compose config: {}", warnings.trim());
                }
                let ctx = self.normalised_ctx(&staging, privileged);
                let check = compose_check::parse(normalised.as_bytes())
                    .and_then(|v| compose_check::check_normalised(&v, privileged, &ctx));
                if let Err(r) = check.map_err(|r| self.why_privileged(&b, r)) {
                    if file_policy_on() {
                        return Err(self.refuse(sha, r, "").await);
                    }
                    warn!("test build: file policy off, would refuse {r}");
                }
            }
            Err(e) => {
                let r = Refusal::new("COMPOSE_CONFIG_INVALID", pull_diagnosis(e.output()));
                return Err(self.refuse(sha, r, e.output()).await);
            }
        }
        if let Some(a) = &registry_auth {
            registry::write_docker_config(&self.cfg.docker_config_dir(), a)?;
            info!("registry credential for {} in place", a.registry);
        }
        let release = self.promote(&staging, sha)?;
        let guard = self.guard(&mut compose, &release, privileged).await?;
        info!("compose pull ({})", compose.flavour);
        let pulled = compose.pull(&release).await;
        if let Some(f) = self
            .engine_refused(sha, guard.as_ref(), pulled.is_err())
            .await
        {
            return Err(f);
        }
        if let Err(e) = pulled {
            return Err(self.compose_failed(sha, "COMPOSE_PULL_FAILED", &e).await);
        }
        info!("compose up -d --remove-orphans");
        let up = compose.up(&release).await;
        if let Some(f) = self.engine_refused(sha, guard.as_ref(), up.is_err()).await {
            return Err(f);
        }
        if let Err(e) = up {
            return Err(self.compose_failed(sha, "COMPOSE_UP_FAILED", &e).await);
        }
        let (ok, cs) = self.wait_healthy(&services).await;
        if !ok && self.interrupted() {
            return Err(self.interrupted_during(sha, "waiting for health").await);
        }
        if ok {
            self.state.applied_sha = Some(sha.to_string());
            self.state.applied_serial = Some(b.meta.serial);
            info!(
                "applied {} ({} containers healthy)",
                short(Some(sha)),
                cs.len()
            );
            self.report(Some(sha), "applied", "", "").await;
            Ok(Exit::Ok)
        } else {
            // why, not just that: the engine's view of each bad container (exit code, OOM, the
            // last health probes with their output), then the compose log tail. Container
            // output may hold secrets in clear: scrubbed on drop, redacted before the cut.
            let mut why = String::new();
            for c in cs
                .iter()
                .filter(|c| c.state != "running" || !(c.health.is_empty() || c.health == "healthy"))
            {
                why.push_str(&self.engine.diagnose(c).await);
                why.push('\n');
            }
            // (the diagnosis goes last: the report keeps the tail when it must cut)
            let logs = Zeroizing::new(format!(
                "{}\n--- why (engine) ---\n{why}",
                compose
                    .logs(&release, 200)
                    .await
                    .unwrap_or_else(|e| e.to_string())
                    .trim_end()
            ));
            let bad: Vec<String> = cs
                .iter()
                .filter(|c| c.state != "running" || !(c.health.is_empty() || c.health == "healthy"))
                .map(|c| {
                    format!(
                        "{} {}{}",
                        c.service,
                        c.state,
                        if c.health.is_empty() {
                            String::new()
                        } else {
                            format!("/{}", c.health)
                        }
                    )
                })
                .collect();
            let detail = format!(
                "UNHEALTHY: not healthy within {}s: {}",
                self.cfg.healthy_timeout_s,
                if bad.is_empty() {
                    "services missing".to_string()
                } else {
                    bad.join(", ")
                }
            );
            self.report(Some(sha), "failed", &detail, &logs).await;
            Err(Failure::fail(detail))
        }
    }

    /// SIGTERM during an apply: reported, then exit 75 (the next tick converges).
    async fn interrupted_during(&mut self, sha: &str, step: &str) -> Failure {
        let msg = format!("INTERRUPTED: {step} (SIGTERM)");
        warn!("{msg}");
        self.report(Some(sha), "failed", &msg, "").await;
        Failure::new(Exit::TempFail, msg)
    }

    /// The bundle's `allow_privileged`, if the box's own config permits it.
    fn privileged(&self, b: &Bundle) -> bool {
        b.meta.agent.allow_privileged && self.cfg.permit_privileged
    }

    /// A privilege refusal says so when the box's cap, not the bundle, decided it.
    fn why_privileged(&self, b: &Bundle, mut r: Refusal) -> Refusal {
        if b.meta.agent.allow_privileged && !self.cfg.permit_privileged {
            r.detail
                .push_str(" (the bundle's allow_privileged is not permitted by this box: permit_privileged is false)");
        }
        r
    }

    /// Starts the checking socket for one compose call on `release` and points `compose` at it.
    async fn guard(
        &self,
        compose: &mut Compose,
        release: &Path,
        privileged: bool,
    ) -> Result<Option<Guard>, Failure> {
        if !guard_on() {
            return Ok(None);
        }
        let root = self
            .engine
            .docker_root()
            .await
            .map_err(|e| Failure::fail(format!("DOCKER_UNAVAILABLE: {e}")))?;
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| policy::lexical(p));
        let mut agent_files = Vec::new();
        for p in [
            &self.cfg.state_dir,
            &self.cfg.bootstrap_path,
            &self.cfg.path,
        ] {
            if !p.as_os_str().is_empty() {
                agent_files.push(canon(p));
                agent_files.push(policy::lexical(p));
            }
        }
        let sock = self.cfg.docker_socket();
        let boundary = Boundary {
            project: self.cfg.compose_project.clone(),
            release_dir: Some(canon(release)),
            bind_roots: self.cfg.bind_roots.iter().map(|p| canon(p)).collect(),
            agent_files,
            private: vec![
                canon(&root),
                policy::lexical(&root),
                canon(&sock),
                policy::lexical(&sock),
            ],
            privileged,
        };
        let g = Guard::start(&sock, &self.cfg.state_dir.join("guard"), boundary)
            .map_err(|e| Failure::fail(format!("cannot start the engine guard: {e}")))?;
        compose.set_docker_host(g.docker_host());
        Ok(Some(g))
    }

    /// What the engine guard refused during a failed compose call: the report says so by
    /// name, whatever compose made of the 403. A refusal compose shrugged off (v2's optional
    /// `/grpc` session) is only logged.
    async fn engine_refused(
        &mut self,
        sha: &str,
        g: Option<&Guard>,
        failed: bool,
    ) -> Option<Failure> {
        let denied = g.map(|g| g.denied()).unwrap_or_default();
        if denied.is_empty() {
            return None;
        }
        if !failed {
            info!(
                "engine guard refused, compose went on without: {}",
                denied.join("; ")
            );
            return None;
        }
        let r = Refusal::new("ENGINE_REFUSED", denied.join("; "));
        Some(self.refuse(sha, r, "").await)
    }

    async fn compose_failed(&mut self, sha: &str, code: &'static str, e: &RuntimeError) -> Failure {
        if let RuntimeError::Interrupted(step) = e {
            return self.interrupted_during(sha, step).await;
        }
        let diag = match e {
            RuntimeError::Compose { .. } => pull_diagnosis(e.output()),
            other => other.to_string(),
        };
        let r = Refusal::new(code, diag);
        self.refuse(sha, r, e.output()).await
    }

    /// The second privilege pass's view: compose resolved relative paths against `project_dir`;
    /// the agent's own files (state dir, bootstrap grant, config) are never a bind source.
    fn normalised_ctx(&self, project_dir: &Path, privileged: bool) -> compose_check::Normalised {
        let mut private = Vec::new();
        for p in [
            &self.cfg.state_dir,
            &self.cfg.bootstrap_path,
            &self.cfg.path,
        ] {
            if p.as_os_str().is_empty() {
                continue;
            }
            if let Ok(c) = std::fs::canonicalize(p) {
                private.push(c);
            }
            private.push(p.clone());
        }
        compose_check::Normalised {
            project_dir: project_dir.to_path_buf(),
            private,
            bind_roots: (!privileged).then(|| {
                self.cfg
                    .bind_roots
                    .iter()
                    .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| policy::lexical(p)))
                    .collect()
            }),
        }
    }

    /// Everything that can refuse a bundle before a lease or an OpenBao request.
    async fn pre_lease_checks(&self, b: &Bundle) -> Result<Vec<String>, Refusal> {
        b.check_manifest(&self.cfg.bao.kv_mount, &self.cfg.env_id)?;
        b.check_env_template()?;
        let doc = compose_check::parse(b.compose())?;
        let services = match compose_check::check(&doc, self.privileged(b)) {
            Ok(s) => s,
            Err(r) if file_policy_on() => return Err(self.why_privileged(b, r)),
            Err(r) => {
                warn!("test build: file policy off, would refuse {r}");
                compose_check::services(&doc)
            }
        };
        if let Some(applied) = self.state.applied_serial {
            let allowed = b.meta.agent.allow_rollback && self.cfg.permit_rollback;
            if b.meta.serial < applied && !allowed {
                return Err(Refusal::new(
                    "ROLLBACK_REFUSED",
                    format!(
                        "bundle serial {} is older than the applied {applied}{}",
                        b.meta.serial,
                        if b.meta.agent.allow_rollback {
                            " (the bundle's allow_rollback is not permitted by this box: permit_rollback is false)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
        let root = self
            .engine
            .docker_root()
            .await
            .map_err(|e| Refusal::new("DOCKER_UNAVAILABLE", e.to_string()))?;
        let free = runtime::free_bytes(&root).map_err(|e| {
            Refusal::new(
                "DISK_INSUFFICIENT",
                format!("cannot measure {}: {e}", root.display()),
            )
        })?;
        let need = b.meta.need_bytes.saturating_mul(3) / 2 + 2 * GIB;
        if free < need {
            return Err(Refusal::new(
                "DISK_INSUFFICIENT",
                format!(
                    "{} has {} MiB free, needs {} MiB (need_bytes × 1.5 + 2 GiB)",
                    root.display(),
                    free >> 20,
                    need >> 20
                ),
            ));
        }
        Ok(services)
    }

    /// staging/<sha> → releases/<sha>, then `current` → it (atomic symlink swap).
    fn promote(&self, staging: &Path, sha: &str) -> Result<PathBuf, Failure> {
        let rel = self.cfg.releases_dir().join(sha);
        match rel.symlink_metadata() {
            // already there (a retry of the same sha, or a crash after promote): its containers
            // may bind into it and may have written files there (root-owned ones the agent
            // cannot delete), so it is never removed; the bundle's own files are replaced
            Ok(m) if m.file_type().is_dir() => {
                overlay(staging, &rel)
                    .map_err(|e| Failure::fail(format!("cannot refresh {}: {e}", rel.display())))?;
                let _ = std::fs::remove_dir_all(staging);
            }
            other => {
                if other.is_ok() {
                    // a symlink or a file planted where the release goes: never followed
                    std::fs::remove_file(&rel).map_err(|e| {
                        Failure::fail(format!("cannot replace {}: {e}", rel.display()))
                    })?;
                }
                std::fs::rename(staging, &rel).map_err(|e| {
                    Failure::fail(format!("cannot promote to {}: {e}", rel.display()))
                })?;
            }
        }
        state::swap_symlink(&rel, &self.cfg.current_link())?;
        Ok(rel)
    }

    async fn wait_healthy(&self, services: &[String]) -> (bool, Vec<Container>) {
        let started = std::time::Instant::now();
        let r = self.wait_healthy_inner(services).await;
        runtime::add_docker_wait(started);
        r
    }

    async fn wait_healthy_inner(&self, services: &[String]) -> (bool, Vec<Container>) {
        let deadline = (tokio::time::Instant::now()
            + Duration::from_secs(self.cfg.healthy_timeout_s))
        .min(self.deadline);
        let mut bad_streak = 0;
        loop {
            let cs = self.containers().await;
            if runtime::converged(services, &cs) {
                return (true, cs);
            }
            let hopeless = cs
                .iter()
                .any(|c| c.health == "unhealthy" || c.state == "exited" || c.state == "dead");
            bad_streak = if hopeless { bad_streak + 1 } else { 0 };
            if bad_streak >= 3 || tokio::time::Instant::now() >= deadline || self.interrupted() {
                return (false, cs);
            }
            match self.interrupt.clone() {
                Some(mut rx) => {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                        _ = rx.wait_for(|stop| *stop) => return (false, cs),
                    }
                }
                None => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
    }

    async fn prune_releases(&self) {
        let keep = self.cfg.keep_releases;
        let current = std::fs::read_link(self.cfg.current_link()).ok();
        let rels = state::releases(&self.cfg.releases_dir());
        let n = rels.len().saturating_sub(keep);
        for r in rels.into_iter().take(n) {
            if Some(&r) == current.as_ref() {
                continue;
            }
            match std::fs::remove_dir_all(&r) {
                Ok(()) => info!("prune: removed release {}", r.display()),
                Err(e) => warn!("prune: {}: {e}", r.display()),
            }
        }
        match self.engine.prune_images().await {
            Ok(b) => info!("prune: dangling images removed, {} MiB reclaimed", b >> 20),
            Err(e) => warn!("prune: {e}"),
        }
    }
}

/// Moves every file of `from` into the existing directory `to`, replacing what is there. A
/// symlink or file found where a directory goes is removed first (containers may write into a
/// release directory; nothing of theirs is followed).
fn overlay(from: &Path, to: &Path) -> std::io::Result<()> {
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dst = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            match dst.symlink_metadata() {
                Ok(m) if m.file_type().is_dir() => {}
                Ok(_) => {
                    std::fs::remove_file(&dst)?;
                    state::ensure_dir(&dst, 0o700).map_err(std::io::Error::other)?;
                }
                Err(_) => state::ensure_dir(&dst, 0o700).map_err(std::io::Error::other)?,
            }
            overlay(&e.path(), &dst)?;
        } else {
            if let Ok(m) = dst.symlink_metadata() {
                if m.file_type().is_dir() {
                    std::fs::remove_dir_all(&dst)?;
                }
            }
            // rename replaces a file or a symlink itself, never what a symlink points to
            std::fs::rename(e.path(), &dst)?;
        }
    }
    Ok(())
}

/// Registers every value of a rendered `.env` with the redactor (names stay readable).
fn register_env_values(path: &Path) {
    let Ok(text) = std::fs::read_to_string(path).map(Zeroizing::new) else {
        return;
    };
    for line in text.lines() {
        let Some((_, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim();
        redact::register(v);
        for q in ['\'', '"'] {
            if let Some(inner) = v.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
                redact::register(inner);
            }
        }
    }
}

/// Debug builds only, for tests that prove each layer is enough on its own:
/// `MONKY_DEPLOYD_TEST_POLICY=no-file` skips the file analyses, `off` also the engine guard.
/// Release builds ignore the variable.
fn test_policy() -> &'static str {
    #[cfg(debug_assertions)]
    {
        if let Ok(v) = std::env::var("MONKY_DEPLOYD_TEST_POLICY") {
            if v == "no-file" {
                return "no-file";
            }
            if v == "off" {
                return "off";
            }
        }
    }
    "on"
}

fn file_policy_on() -> bool {
    test_policy() == "on"
}

fn guard_on() -> bool {
    test_policy() != "off"
}

/// The first 12 characters (not bytes: a sha from the network may be anything, and slicing
/// inside a multi-byte character would panic, which `panic = "abort"` turns into a dead tick).
pub fn short(s: Option<&str>) -> String {
    match s {
        Some(s) => s.chars().take(12).collect(),
        None => "-".into(),
    }
}

#[cfg(test)]
mod short_tests {
    #[test]
    fn short_never_splits_a_character() {
        assert_eq!(super::short(Some("0123456789abcdef")), "0123456789ab");
        assert_eq!(super::short(Some("ééééééééééééé")), "éééééééééééé");
        assert_eq!(super::short(Some("abc")), "abc");
        assert_eq!(super::short(None), "-");
    }
}

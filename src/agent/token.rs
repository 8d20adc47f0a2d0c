//! The box's OpenBao token: the [`TokenManager`] owns it (bootstrap from the grant, store,
//! lease + login, renew or re-lease near expiry, revoke the old one), one copy of each step.
//! Its decisions are the pure functions of `token_policy`; its I/O goes through the
//! [`Ports`](super::ports::Ports) seams, so `token/tests.rs` drives it against fakes.

use std::path::PathBuf;

use tracing::{debug, info, warn};
use zeroize::Zeroizing;

use super::ports::{Clock, Leaser, Ports, Vault};
use super::token_policy::{self, AfterLookup, ForApply, Upkeep};
use super::{Failure, Kind};
use crate::error::Code;
use monky_base::redact;
use monky_host::config::Config;
use monky_host::state::{self, State, TokenMeta, TokenSource};
use monky_wire::bao::{BaoError, Login};

#[cfg(test)]
mod tests;

/// The bearer this box uses, where it is kept, and the rules for replacing it.
pub(crate) struct TokenManager {
    token_path: PathBuf,
    bootstrap_path: PathBuf,
    state_path: PathBuf,
    env_id: String,
    renew_below: u64,
    current: Option<Zeroizing<String>>,
}

impl TokenManager {
    pub(crate) fn new(cfg: &Config) -> TokenManager {
        TokenManager {
            token_path: cfg.token_path(),
            bootstrap_path: cfg.bootstrap_path.clone(),
            state_path: cfg.state_path(),
            env_id: cfg.env_id.clone(),
            renew_below: cfg.bao.renew_below_s,
            current: None,
        }
    }

    /// The bearer for tenancy calls ("" before a token is loaded).
    pub(crate) fn bearer(&self) -> Zeroizing<String> {
        self.current.clone().unwrap_or_default()
    }

    /// The end of a tick: the token leaves memory (zeroized).
    pub(crate) fn forget(&mut self) {
        self.current = None;
    }

    /// Read `bao.token` (masked in every output from now on); `false` when there is none.
    pub(crate) fn load(&mut self) -> Result<bool, Failure> {
        match state::read_token(&self.token_path)? {
            Some(t) => {
                redact::register(&t);
                self.current = Some(t);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The stored token's env pin must be this box's env (a moved config is not retried).
    pub(crate) fn check_pin(&self, st: &State) -> Result<(), Failure> {
        match &st.token {
            Some(t) if !t.env_id.is_empty() && t.env_id != self.env_id => Err(Failure::coded(
                Kind::EnvMismatch,
                Code::AgentEnvMismatch,
                format!(
                    "the stored token is pinned to {} but config.yaml says {}; \
                         not retried — fix env_id or re-bootstrap this box",
                    t.env_id, self.env_id
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The bearer: `bao.token`, or a login with the kit's bootstrap grant (then the grant file
    /// is deleted). `force` replaces an existing token, which is revoked after the new login.
    pub(crate) async fn load_or_bootstrap(
        &mut self,
        st: &mut State,
        p: &Ports<'_, impl Vault, impl Leaser, impl Clock>,
        force: bool,
    ) -> Result<(), Failure> {
        if self.current.is_none() {
            self.load()?;
        }
        if !force && self.current.is_some() {
            return Ok(());
        }
        let gp = self.bootstrap_path.clone();
        let grant = match std::fs::read_to_string(&gp) {
            Ok(g) => Zeroizing::new(g.trim().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Failure::fail(format!(
                    "no credentials: no token at {} and no bootstrap grant at {} — reveal the install kit and \
                     place its grant there",
                    self.token_path.display(),
                    gp.display()
                )))
            }
            Err(e) => return Err(Failure::fail(format!("cannot read bootstrap grant {}: {e}", gp.display()))),
        };
        redact::register(&grant);
        let login = p.vault.login(&grant).await.map_err(|e| match e {
            BaoError::Unavailable(..) => Failure::from(e),
            other => Failure::fail(format!(
                "bootstrap grant {} refused by OpenBao ({other}); it is single-use and valid for 1 h — reveal the kit again",
                gp.display()
            )),
        })?;
        if let Some(f) = self.foreign(&login, p, "the bootstrap grant is for").await {
            return Err(f);
        }
        let old = self.swap_in(st, p, &login, TokenSource::Bootstrap).await?;
        if let Err(e) = std::fs::remove_file(&gp) {
            warn!(
                "could not delete the used bootstrap grant {}: {e}",
                gp.display()
            );
        }
        monky_base::testhook::pause("after-bootstrap");
        info!(
            "bootstrap: logged in to OpenBao, token stored, grant {} deleted",
            gp.display()
        );
        self.retire(p, old, &login).await;
        Ok(())
    }

    /// A login whose token is pinned to another env: revoked at once, never stored (78).
    async fn foreign(
        &self,
        login: &Login,
        p: &Ports<'_, impl Vault, impl Leaser, impl Clock>,
        what: &str,
    ) -> Option<Failure> {
        if login.env_id.is_empty() || login.env_id == self.env_id {
            return None;
        }
        let _ = p.vault.revoke(&login.token).await;
        Some(Failure::coded(
            Kind::EnvMismatch,
            Code::AgentEnvMismatch,
            format!(
                "{what} {} but config.yaml says {}",
                login.env_id, self.env_id
            ),
        ))
    }

    /// Store the new token and make it the bearer; the one it replaces is returned for
    /// [`TokenManager::retire`]. Not stored (a full state filesystem): the old token stays the
    /// bearer, so the failure can still be reported, and the new one is not left alive unused.
    async fn swap_in(
        &mut self,
        st: &mut State,
        p: &Ports<'_, impl Vault, impl Leaser, impl Clock>,
        login: &Login,
        source: TokenSource,
    ) -> Result<Option<Zeroizing<String>>, Failure> {
        let old = self.current.take();
        if let Err(f) = self.store(st, p.clock, login, source) {
            self.current = old;
            let _ = p.vault.revoke(&login.token).await;
            return Err(f);
        }
        Ok(old)
    }

    /// Revoke a replaced token (once the new one is stored).
    async fn retire(
        &self,
        p: &Ports<'_, impl Vault, impl Leaser, impl Clock>,
        old: Option<Zeroizing<String>>,
        new: &Login,
    ) {
        if let Some(old) = old {
            if old.as_str() != new.token.as_str() {
                if let Err(e) = p.vault.revoke(&old).await {
                    debug!("revoke of the replaced token: {e}");
                }
            }
        }
    }

    fn store(
        &mut self,
        st: &mut State,
        clock: &impl Clock,
        login: &Login,
        source: TokenSource,
    ) -> Result<(), Failure> {
        state::write_private(&self.token_path, login.token.as_bytes(), 0o600)?;
        let now = clock.wall();
        let mut meta = TokenMeta {
            source,
            obtained_at: now,
            expires_at: now.saturating_add(login.lease_duration),
            renewable: login.renewable,
            grant_jti: login.grant_jti.clone(),
            env_id: if login.env_id.is_empty() {
                self.env_id.clone()
            } else {
                login.env_id.clone()
            },
            expires_boot: 0,
            boot_id: String::new(),
        };
        meta.set_ttl_on(login.lease_duration, now, &clock.boot());
        st.token = Some(meta);
        self.current = Some(login.token.clone());
        // a durable step: a kill before the tick's end must not leave bao.token undescribed
        // (no meta = never renewed) or described as the token it replaced. The token is
        // already stored: a failed save here is retried by the tick's own save.
        if let Err(e) = st.save(&self.state_path) {
            warn!("{e}");
        }
        Ok(())
    }

    /// Lease a grant from tenancy, log in with it, store the new token and revoke the old one.
    pub(crate) async fn lease_login(
        &mut self,
        st: &mut State,
        p: &Ports<'_, impl Vault, impl Leaser, impl Clock>,
        reason: &str,
    ) -> Result<(), Failure> {
        let lease = p
            .leaser
            .lease(&self.bearer(), &self.env_id, reason)
            .await
            .map_err(Failure::from)?;
        monky_base::testhook::pause("after-lease");
        let login = p.vault.login(&lease.grant).await.map_err(Failure::from)?;
        if let Some(f) = self.foreign(&login, p, "the leased grant is for").await {
            return Err(f);
        }
        let old = self.swap_in(st, p, &login, TokenSource::Lease).await?;
        st.lease_swap_due = false;
        monky_base::testhook::pause("after-login");
        info!("lease ({reason}): new token from grant {}", lease.jti);
        self.retire(p, old, &login).await;
        Ok(())
    }

    /// The token to read this bundle's secrets with (0.1.6): a lease-derived token that is still
    /// valid is reused; the bootstrap token is swapped for a lease once; a rate-limited lease
    /// while a working token exists lets the apply go on with it and defers the swap.
    pub(crate) async fn for_apply(
        &mut self,
        st: &mut State,
        p: &Ports<'_, impl Vault, impl Leaser, impl Clock>,
    ) -> Result<Zeroizing<String>, Failure> {
        let cur = self.bearer();
        let is_lease = st
            .token
            .as_ref()
            .is_some_and(|t| t.source == TokenSource::Lease);
        let ttl = match p.vault.ttl(&cur).await {
            Ok(ttl) => Some(ttl),
            Err(e @ BaoError::Unavailable(..)) => return Err(Failure::from(e)),
            Err(e) => {
                info!("current token is no longer valid ({e}); leasing");
                None
            }
        };
        let fallback = match token_policy::for_apply(is_lease, ttl, self.renew_below) {
            ForApply::Reuse => {
                debug!(
                    "reusing the lease-derived token (ttl {}s)",
                    ttl.unwrap_or_default()
                );
                return Ok(cur);
            }
            ForApply::Lease { fallback } => fallback,
        };
        match self.lease_login(st, p, "apply").await {
            Ok(()) => Ok(self.bearer()),
            Err(f) if f.kind() == Kind::RateLimited && fallback => {
                warn!(
                    "{}; applying with the current token, swap deferred",
                    f.message()
                );
                st.lease_swap_due = true;
                Ok(cur)
            }
            Err(f) => Err(f),
        }
    }

    /// Renew when the TTL runs low; re-lease when renewal can no longer extend it (max TTL);
    /// finish a deferred swap. The cached expiry on the boot clock decides first, so a normal
    /// tick makes no OpenBao call, and a step of the wall clock cannot strand the token.
    pub(crate) async fn upkeep(
        &mut self,
        st: &mut State,
        p: &Ports<'_, impl Vault, impl Leaser, impl Clock>,
    ) -> Result<(), Failure> {
        let (Some(meta), Some(tok)) = (st.token.clone(), self.current.clone()) else {
            return Ok(());
        };
        let below = self.renew_below;
        match token_policy::upkeep(&meta, &p.clock.boot(), below, st.lease_swap_due) {
            Upkeep::Nothing => return Ok(()),
            Upkeep::Swap => return self.lease_login(st, p, "swap").await,
            Upkeep::Lookup => {}
        }
        let ttl = p.vault.ttl(&tok).await.map_err(Failure::from)?;
        match token_policy::after_lookup(ttl, below, meta.renewable) {
            AfterLookup::Keep => {
                self.record_ttl(st, p.clock, ttl);
                return Ok(());
            }
            AfterLookup::Renew { increment } => {
                let got = p
                    .vault
                    .renew(&tok, increment)
                    .await
                    .map_err(Failure::from)?;
                self.record_ttl(st, p.clock, got);
                if !token_policy::renewal_capped(got, below) {
                    info!("token renewed: ttl {got}s");
                    return Ok(());
                }
                info!("token renewal capped at {got}s (max TTL near); re-leasing");
            }
            AfterLookup::NewLease => {}
        }
        self.lease_login(st, p, "renew").await
    }

    fn record_ttl(&self, st: &mut State, clock: &impl Clock, ttl: u64) {
        if let Some(m) = st.token.as_mut() {
            m.set_ttl_on(ttl, clock.wall(), &clock.boot());
        }
    }
}

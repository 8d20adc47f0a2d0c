//! The box's OpenBao token: bootstrap from the grant, store, lease + login, renew or
//! re-lease near expiry, revoke the old one.

use super::*;

impl Agent {
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
        crate::testhook::pause("after-bootstrap");
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

    pub(super) fn store_token(
        &mut self,
        login: &crate::bao::Login,
        source: TokenSource,
    ) -> Result<(), Failure> {
        state::write_private(&self.cfg.token_path(), login.token.as_bytes(), 0o600)?;
        let now = state::now();
        let mut meta = TokenMeta {
            source,
            obtained_at: now,
            expires_at: now.saturating_add(login.lease_duration),
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
        // a durable step: a kill before the tick's end must not leave bao.token undescribed
        // (no meta = never renewed) or described as the token it replaced. The token is
        // already stored: a failed save here is retried by the tick's own save.
        if let Err(e) = self.state.save(&self.cfg.state_path()) {
            warn!("{e}");
        }
        Ok(())
    }

    /// Lease a grant from tenancy, log in with it, store the new token and revoke the old one.
    pub(super) async fn lease_login(&mut self, reason: &str) -> Result<(), Failure> {
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
        crate::testhook::pause("after-lease");
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
        if let Err(f) = self.store_token(&login, TokenSource::Lease) {
            // not stored (a full state filesystem): the old token stays the bearer, so the
            // failure can still be reported, and the new one is not left alive unused
            self.token = old;
            let _ = self.c.bao.revoke_self(&login.token).await;
            return Err(f);
        }
        self.state.lease_swap_due = false;
        crate::testhook::pause("after-login");
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
    pub(super) async fn token_for_apply(&mut self) -> Result<Zeroizing<String>, Failure> {
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
        let fallback = match token_policy::for_apply(is_lease, cur_ttl, self.cfg.bao.renew_below_s)
        {
            token_policy::ForApply::Reuse => {
                debug!(
                    "reusing the lease-derived token (ttl {}s)",
                    cur_ttl.unwrap_or_default()
                );
                return Ok(cur);
            }
            token_policy::ForApply::Lease { fallback } => fallback,
        };
        match self.lease_login("apply").await {
            Ok(()) => Ok(self.token.clone().unwrap_or_default()),
            Err(f) if f.rate_limited && fallback => {
                warn!("{}; applying with the current token, swap deferred", f.msg);
                self.state.lease_swap_due = true;
                Ok(cur)
            }
            Err(f) => Err(f),
        }
    }

    /// Renew when the TTL runs low; re-lease when renewal can no longer extend it (max TTL);
    /// finish a deferred swap. Uses the cached expiry so a normal tick makes no OpenBao call.
    pub(super) async fn token_upkeep(&mut self) -> Result<(), Failure> {
        let Some(meta) = self.state.token.clone() else {
            return Ok(());
        };
        let Some(tok) = self.token.clone() else {
            return Ok(());
        };
        let below = self.cfg.bao.renew_below_s;
        // the boot clock decides, not the wall clock: a backward step of the wall clock must
        // not let the token run out unrenewed (no boot clock reading → ask OpenBao)
        let clock = state::BootClock::now();
        match token_policy::upkeep(&meta, &clock, below, self.state.lease_swap_due) {
            token_policy::Upkeep::Nothing => return Ok(()),
            token_policy::Upkeep::Swap => return self.lease_login("swap").await,
            token_policy::Upkeep::Lookup => {}
        }
        let ttl = self.c.bao.lookup_self(&tok).await.map_err(from_bao)?.ttl;
        match token_policy::after_lookup(ttl, below, meta.renewable) {
            token_policy::AfterLookup::Keep => {
                if let Some(m) = self.state.token.as_mut() {
                    m.set_ttl(ttl);
                }
                return Ok(());
            }
            token_policy::AfterLookup::Renew { increment } => {
                let got = self
                    .c
                    .bao
                    .renew_self(&tok, increment)
                    .await
                    .map_err(from_bao)?;
                if let Some(m) = self.state.token.as_mut() {
                    m.set_ttl(got);
                }
                if !token_policy::renewal_capped(got, below) {
                    info!("token renewed: ttl {got}s");
                    return Ok(());
                }
                info!("token renewal capped at {got}s (max TTL near); re-leasing");
            }
            token_policy::AfterLookup::NewLease => {}
        }
        self.lease_login("renew").await
    }
}

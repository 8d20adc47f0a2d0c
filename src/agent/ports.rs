//! The seams of the tick: what the token state machine asks of OpenBao, of tenancy and of the
//! clocks, as traits. The real clients implement them here; unit tests give fakes, so every
//! token rule runs in milliseconds without a server (`token/tests.rs`).

use crate::bao::{Bao, BaoError, Login};
use crate::state::{self, BootClock};
use crate::tenancy::{Lease, Tenancy, TenancyError};

/// OpenBao's token calls, with the box's own token.
pub(crate) trait Vault {
    async fn login(&self, grant: &str) -> Result<Login, BaoError>;
    /// Seconds the token has left (lookup-self).
    async fn ttl(&self, token: &str) -> Result<u64, BaoError>;
    /// The TTL after renew-self with this increment.
    async fn renew(&self, token: &str, increment_s: u64) -> Result<u64, BaoError>;
    async fn revoke(&self, token: &str) -> Result<(), BaoError>;
}

/// Tenancy's deploy-grant lease.
pub(crate) trait Leaser {
    async fn lease(&self, bearer: &str, env_id: &str, reason: &str) -> Result<Lease, TenancyError>;
}

/// The wall clock (Unix seconds) and the boot clock.
pub(crate) trait Clock {
    fn wall(&self) -> u64;
    fn boot(&self) -> BootClock;
}

pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn wall(&self) -> u64 {
        state::now()
    }
    fn boot(&self) -> BootClock {
        BootClock::now()
    }
}

impl Vault for Bao {
    async fn login(&self, grant: &str) -> Result<Login, BaoError> {
        Bao::login(self, grant).await
    }
    async fn ttl(&self, token: &str) -> Result<u64, BaoError> {
        Ok(self.lookup_self(token).await?.ttl)
    }
    async fn renew(&self, token: &str, increment_s: u64) -> Result<u64, BaoError> {
        self.renew_self(token, increment_s).await
    }
    async fn revoke(&self, token: &str) -> Result<(), BaoError> {
        self.revoke_self(token).await
    }
}

impl Leaser for Tenancy {
    async fn lease(&self, bearer: &str, env_id: &str, reason: &str) -> Result<Lease, TenancyError> {
        Tenancy::lease(self, bearer, env_id, reason).await
    }
}

/// What one call of the token manager may use.
pub(crate) struct Ports<'a, V, L, C> {
    pub(super) vault: &'a V,
    pub(super) leaser: &'a L,
    pub(super) clock: &'a C,
}

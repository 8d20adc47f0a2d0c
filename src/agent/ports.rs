//! The seams of the tick: what the agent asks of tenancy, of OpenBao, of the Docker engine and
//! of the clocks, as traits. The real clients implement them here; unit tests give fakes, so
//! the token rules (`token/tests.rs`) and the tick's decisions (`tests.rs`) run in milliseconds
//! without a server. The compose CLI stays real: an apply that gets that far is a job for the
//! real-parts suites.
//!
//! The futures are not `Send`: the agent runs on a current-thread runtime and never spawns a
//! tick.

use std::path::PathBuf;

use zeroize::Zeroizing;

use monky_host::runtime::{self, Engine, RuntimeError};
use monky_host::state::{self, BootClock};
use monky_wire::bao::{Bao, BaoError, Login};
use monky_wire::tenancy::{
    BundleWire, Checkin, CheckinResponse, Container, Diagnostics, Lease, Report, Seen, Tenancy,
    TenancyError,
};

/// OpenBao's token calls, with the box's own token.
#[allow(async_fn_in_trait)] // see the module doc: the futures need not be Send
pub trait Vault {
    async fn login(&self, grant: &str) -> Result<Login, BaoError>;
    /// Seconds the token has left (lookup-self).
    async fn ttl(&self, token: &str) -> Result<u64, BaoError>;
    /// The TTL after renew-self with this increment.
    async fn renew(&self, token: &str, increment_s: u64) -> Result<u64, BaoError>;
    async fn revoke(&self, token: &str) -> Result<(), BaoError>;
    /// One KV v2 value, pinned to a version.
    async fn kv_read(
        &self,
        token: &str,
        path: &str,
        key: &str,
        version: Option<u64>,
    ) -> Result<Zeroizing<String>, BaoError>;
}

/// Tenancy's deploy-grant lease.
#[allow(async_fn_in_trait)] // see the module doc: the futures need not be Send
pub trait Leaser {
    async fn lease(&self, bearer: &str, env_id: &str, reason: &str) -> Result<Lease, TenancyError>;
}

/// The rest of tenancy's agent API: check-in, bundle, report.
#[allow(async_fn_in_trait)] // see the module doc: the futures need not be Send
pub trait TenancyApi: Leaser {
    async fn checkin(
        &self,
        bearer: &str,
        req: &Checkin<'_>,
    ) -> Result<CheckinResponse, TenancyError>;
    /// The bundle body and its `X-Bundle-Sha256` header.
    async fn bundle(
        &self,
        bearer: &str,
        env_id: &str,
        sha: &str,
    ) -> Result<(BundleWire, Option<String>), TenancyError>;
    async fn report(&self, bearer: &str, rep: &Report<'_>) -> Result<(), TenancyError>;
    /// The diagnostics upload (PROTOCOL 0.4).
    async fn diagnostics(&self, bearer: &str, d: &Diagnostics<'_>) -> Result<(), TenancyError> {
        let _ = (bearer, d);
        Err(TenancyError::Protocol {
            what: "diagnostics",
            detail: "not supported by this client".into(),
        })
    }
    /// Clock skew and round trip as the answers so far showed them.
    fn seen(&self) -> Seen {
        Seen::default()
    }
    /// An agent package streamed into `out` (PROTOCOL 0.4): bytes written and their sha256.
    async fn agent_package(
        &self,
        bearer: &str,
        version: &str,
        arch: &str,
        out: &mut std::fs::File,
    ) -> Result<(u64, String), TenancyError>;
}

/// What the tick reads from the Docker Engine API (compose does the changing).
#[allow(async_fn_in_trait)] // see the module doc: the futures need not be Send
pub trait EngineApi {
    async fn containers(&self, project: &str) -> Result<Vec<Container>, RuntimeError>;
    /// The same list as the engine gives it (labels, image), for `plan`.
    async fn containers_raw(&self, project: &str) -> Result<Vec<serde_json::Value>, RuntimeError>;
    /// Why a container is not well, in the engine's words.
    async fn diagnose(&self, c: &Container) -> String;
    /// The engine's restart count of a container (inspect).
    async fn restarts(&self, c: &Container) -> Option<u64>;
    /// The exit code of a container's last `die` since `since` (Unix seconds).
    async fn last_exit(&self, c: &Container, since: u64) -> Option<i64>;
    async fn docker_root(&self) -> Result<PathBuf, RuntimeError>;
    /// Bytes reclaimed.
    async fn prune_images(&self) -> Result<u64, RuntimeError>;
    /// Every container on the box, any project, running or not. The default fails, so an
    /// engine that cannot list them makes reclaim remove no image.
    async fn all_containers_raw(&self) -> Result<Vec<serde_json::Value>, RuntimeError> {
        Err(unsupported("all containers"))
    }
    /// An image's id and size (`None`: no such image). Defaults say "unsupported" so a fake
    /// engine need not model images.
    async fn image(&self, reference: &str) -> Result<Option<(String, u64)>, RuntimeError> {
        Err(unsupported(reference))
    }
    /// Remove an image, never forced (`Ok(false)`: the engine keeps it).
    async fn remove_image(&self, id: &str) -> Result<bool, RuntimeError> {
        Err(unsupported(id))
    }
    /// The project's own networks, as the engine lists them. The default lists none, so a fake
    /// engine's project owns no host route.
    async fn networks_raw(&self, project: &str) -> Result<Vec<serde_json::Value>, RuntimeError> {
        let _ = project;
        Ok(Vec::new())
    }
    /// dockerd's own proxy settings (`GET /info`), for diagnostics.
    async fn proxy_settings(&self) -> Result<runtime::EngineProxy, RuntimeError> {
        Err(unsupported("proxy settings"))
    }
    /// A volume's record; `None` when the engine has none.
    async fn volume(&self, name: &str) -> Result<Option<runtime::VolumeInfo>, RuntimeError> {
        Err(unsupported(name))
    }
    /// Creates a volume with labels (one that exists: `Ok`).
    async fn create_volume(
        &self,
        name: &str,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> Result<(), RuntimeError> {
        let _ = labels;
        Err(unsupported(name))
    }
    /// Stops a container (already stopped or gone: `Ok`).
    async fn stop(&self, c: &Container) -> Result<(), RuntimeError> {
        Err(unsupported(&c.id))
    }
    /// Starts a stopped container by id (running or gone: `Ok`).
    async fn start(&self, id: &str) -> Result<(), RuntimeError> {
        Err(unsupported(id))
    }
    /// A container's inspect document.
    async fn inspect(&self, c: &Container) -> Result<serde_json::Value, RuntimeError> {
        Err(unsupported(&c.id))
    }
    /// A container's last `lines` log lines, of those the last `cap` bytes, capped while
    /// reading (see [`Engine::log_tail`]).
    async fn log_tail(
        &self,
        c: &Container,
        lines: u32,
        cap: usize,
    ) -> Result<runtime::LogRead, RuntimeError> {
        let _ = (lines, cap);
        Err(unsupported(&c.id))
    }
}

fn unsupported(what: &str) -> RuntimeError {
    RuntimeError::Engine {
        socket: String::new(),
        msg: format!("{what}: not supported by this engine port"),
    }
}

/// The wall clock (Unix seconds) and the boot clock.
pub trait Clock {
    fn wall(&self) -> u64;
    fn boot(&self) -> BootClock;
}

pub struct SystemClock;

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
    async fn kv_read(
        &self,
        token: &str,
        path: &str,
        key: &str,
        version: Option<u64>,
    ) -> Result<Zeroizing<String>, BaoError> {
        Bao::kv_read(self, token, path, key, version).await
    }
}

impl Leaser for Tenancy {
    async fn lease(&self, bearer: &str, env_id: &str, reason: &str) -> Result<Lease, TenancyError> {
        Tenancy::lease(self, bearer, env_id, reason).await
    }
}

impl TenancyApi for Tenancy {
    async fn checkin(
        &self,
        bearer: &str,
        req: &Checkin<'_>,
    ) -> Result<CheckinResponse, TenancyError> {
        Tenancy::checkin(self, bearer, req).await
    }
    async fn bundle(
        &self,
        bearer: &str,
        env_id: &str,
        sha: &str,
    ) -> Result<(BundleWire, Option<String>), TenancyError> {
        Tenancy::bundle(self, bearer, env_id, sha).await
    }
    async fn report(&self, bearer: &str, rep: &Report<'_>) -> Result<(), TenancyError> {
        Tenancy::report(self, bearer, rep).await
    }
    async fn diagnostics(&self, bearer: &str, d: &Diagnostics<'_>) -> Result<(), TenancyError> {
        Tenancy::diagnostics(self, bearer, d).await
    }
    fn seen(&self) -> Seen {
        Tenancy::seen(self)
    }
    async fn agent_package(
        &self,
        bearer: &str,
        version: &str,
        arch: &str,
        out: &mut std::fs::File,
    ) -> Result<(u64, String), TenancyError> {
        Tenancy::agent_package(self, bearer, version, arch, out).await
    }
}

impl EngineApi for Engine {
    async fn containers(&self, project: &str) -> Result<Vec<Container>, RuntimeError> {
        Engine::containers(self, project).await
    }
    async fn containers_raw(&self, project: &str) -> Result<Vec<serde_json::Value>, RuntimeError> {
        Engine::containers_raw(self, project).await
    }
    async fn diagnose(&self, c: &Container) -> String {
        Engine::diagnose(self, c).await
    }
    async fn restarts(&self, c: &Container) -> Option<u64> {
        Engine::restarts(self, &c.id).await.ok().map(|r| r.0)
    }
    async fn last_exit(&self, c: &Container, since: u64) -> Option<i64> {
        Engine::last_exit(self, &c.id, since).await
    }
    async fn docker_root(&self) -> Result<PathBuf, RuntimeError> {
        Engine::docker_root(self).await
    }
    async fn prune_images(&self) -> Result<u64, RuntimeError> {
        Engine::prune_images(self).await
    }
    async fn proxy_settings(&self) -> Result<runtime::EngineProxy, RuntimeError> {
        Engine::proxy_settings(self).await
    }
    async fn all_containers_raw(&self) -> Result<Vec<serde_json::Value>, RuntimeError> {
        Engine::all_containers_raw(self).await
    }
    async fn networks_raw(&self, project: &str) -> Result<Vec<serde_json::Value>, RuntimeError> {
        Engine::networks_raw(self, project).await
    }
    async fn image(&self, reference: &str) -> Result<Option<(String, u64)>, RuntimeError> {
        Engine::image(self, reference).await
    }
    async fn remove_image(&self, id: &str) -> Result<bool, RuntimeError> {
        Engine::remove_image(self, id).await
    }
    async fn inspect(&self, c: &Container) -> Result<serde_json::Value, RuntimeError> {
        Engine::inspect(self, &c.id).await
    }
    async fn volume(&self, name: &str) -> Result<Option<runtime::VolumeInfo>, RuntimeError> {
        Engine::volume(self, name).await
    }
    async fn stop(&self, c: &Container) -> Result<(), RuntimeError> {
        Engine::stop(self, &c.id).await
    }
    async fn create_volume(
        &self,
        name: &str,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> Result<(), RuntimeError> {
        Engine::create_volume(self, name, labels).await
    }
    async fn start(&self, id: &str) -> Result<(), RuntimeError> {
        Engine::start(self, id).await
    }
    async fn log_tail(
        &self,
        c: &Container,
        lines: u32,
        cap: usize,
    ) -> Result<runtime::LogRead, RuntimeError> {
        Engine::log_tail(self, &c.id, lines, cap, std::time::Duration::from_secs(10)).await
    }
}

/// What one call of the token manager may use.
pub(crate) struct Ports<'a, V, L, C> {
    pub(super) vault: &'a V,
    pub(super) leaser: &'a L,
    pub(super) clock: &'a C,
}

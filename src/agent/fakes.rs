//! Fakes of the agent's ports (`ports.rs`): OpenBao, tenancy, the engine and the clocks. Each
//! records every call it gets, so a test asserts what the agent asked, in order, as well as
//! what it did.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

use zeroize::Zeroizing;

use super::ports::{Clock, EngineApi, Leaser, TenancyApi, Vault};
use monky_host::runtime::RuntimeError;
use monky_host::state::BootClock;
use monky_wire::bao::{BaoError, Login};
use monky_wire::tenancy::{
    BundleWire, Checkin, CheckinResponse, Container, Lease, Report, TenancyError,
};

pub(super) const ENV: &str = "env-a";
pub(super) const HOUR: u64 = 3600;

/// OpenBao: live tokens with their TTL; every grant logs in to a new token.
pub(super) struct FakeBao {
    pub(super) live: RefCell<HashMap<String, u64>>,
    /// the env a login's token is pinned to
    pub(super) login_env: RefCell<String>,
    pub(super) lease_duration: Cell<u64>,
    /// what renew-self can give at most (the role's max TTL, left)
    pub(super) renew_cap: Cell<u64>,
    pub(super) down: Cell<bool>,
    pub(super) calls: RefCell<Vec<String>>,
    pub(super) n: Cell<u32>,
    /// KV values by `path#key`
    pub(super) kv: RefCell<HashMap<String, String>>,
}

impl FakeBao {
    pub(super) fn new() -> FakeBao {
        FakeBao {
            live: RefCell::default(),
            login_env: RefCell::new(ENV.into()),
            lease_duration: Cell::new(4 * HOUR),
            renew_cap: Cell::new(u64::MAX),
            down: Cell::new(false),
            calls: RefCell::default(),
            n: Cell::new(0),
            kv: RefCell::default(),
        }
    }
    pub(super) fn call(&self, c: String) -> Result<(), BaoError> {
        self.calls.borrow_mut().push(c);
        if self.down.get() {
            return Err(BaoError::Unavailable("connection refused".into(), None));
        }
        Ok(())
    }
    pub(super) fn alive(&self, t: &str) -> bool {
        self.live.borrow().contains_key(t)
    }
    pub(super) fn take_calls(&self) -> Vec<String> {
        std::mem::take(&mut self.calls.borrow_mut())
    }
}

impl Vault for FakeBao {
    async fn login(&self, grant: &str) -> Result<Login, BaoError> {
        self.call(format!("login {grant}"))?;
        self.n.set(self.n.get() + 1);
        let token = format!("hvs.token-{}-{}", self.n.get(), "x".repeat(20));
        self.live
            .borrow_mut()
            .insert(token.clone(), self.lease_duration.get());
        Ok(Login {
            token: Zeroizing::new(token),
            lease_duration: self.lease_duration.get(),
            renewable: true,
            env_id: self.login_env.borrow().clone(),
            grant_jti: format!("jti-{grant}"),
        })
    }
    async fn ttl(&self, token: &str) -> Result<u64, BaoError> {
        self.call("lookup".into())?;
        self.live
            .borrow()
            .get(token)
            .copied()
            .ok_or_else(|| BaoError::Denied {
                what: "lookup-self".into(),
                msg: "permission denied".into(),
            })
    }
    async fn renew(&self, token: &str, increment_s: u64) -> Result<u64, BaoError> {
        self.call(format!("renew {increment_s}"))?;
        let got = increment_s.min(self.renew_cap.get());
        self.live.borrow_mut().insert(token.into(), got);
        Ok(got)
    }
    async fn revoke(&self, token: &str) -> Result<(), BaoError> {
        self.call(format!("revoke {token}"))?;
        self.live.borrow_mut().remove(token);
        Ok(())
    }
    async fn kv_read(
        &self,
        token: &str,
        path: &str,
        key: &str,
        _version: Option<u64>,
    ) -> Result<Zeroizing<String>, BaoError> {
        self.call(format!("kv {path}"))?;
        if !self.alive(token) {
            return Err(BaoError::Denied {
                what: "kv read".into(),
                msg: "permission denied".into(),
            });
        }
        match self.kv.borrow().get(&format!("{path}#{key}")) {
            Some(v) => Ok(Zeroizing::new(v.clone())),
            None => Err(BaoError::NotFound {
                what: format!("{path} ({key})"),
            }),
        }
    }
}

/// Tenancy's lease: a new grant each time, or 429 while `limited`.
#[derive(Default)]
pub(super) struct FakeLeases {
    pub(super) limited: Cell<bool>,
    pub(super) calls: RefCell<Vec<String>>,
}

impl Leaser for FakeLeases {
    async fn lease(
        &self,
        _bearer: &str,
        env_id: &str,
        reason: &str,
    ) -> Result<Lease, TenancyError> {
        let n = self.calls.borrow().len() + 1;
        self.calls.borrow_mut().push(format!("lease {reason}"));
        assert_eq!(env_id, ENV);
        if self.limited.get() {
            return Err(TenancyError::RateLimited {
                what: "lease",
                code: "LEASE_RATE_LIMITED".into(),
                retry_after: 30,
            });
        }
        Ok(Lease {
            grant: Zeroizing::new(format!("grant{n}")),
            jti: format!("jti{n}"),
        })
    }
}

pub(super) struct FakeClock {
    pub(super) wall: Cell<u64>,
    pub(super) boot: Cell<u64>,
    pub(super) boot_id: RefCell<String>,
}

impl Clock for FakeClock {
    fn wall(&self) -> u64 {
        self.wall.get()
    }
    fn boot(&self) -> BootClock {
        BootClock {
            secs: self.boot.get(),
            boot_id: self.boot_id.borrow().clone(),
        }
    }
}

impl FakeClock {
    pub(super) fn advance(&self, s: u64) {
        self.wall.set(self.wall.get() + s);
        self.boot.set(self.boot.get() + s);
    }
}

/// The agent's wall clock, moved by hand (shared with the agent, so `Sync`).
#[derive(Clone)]
pub(super) struct HandClock(pub(super) std::sync::Arc<std::sync::atomic::AtomicU64>);

impl HandClock {
    pub(super) fn at(t: u64) -> HandClock {
        HandClock(std::sync::Arc::new(std::sync::atomic::AtomicU64::new(t)))
    }
    pub(super) fn advance(&self, s: u64) {
        self.0.fetch_add(s, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for HandClock {
    fn wall(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn boot(&self) -> BootClock {
        BootClock::now()
    }
}

/// Tenancy: check-in answers from a queue (`none` once it is empty), bundles by sha, every
/// report kept as the JSON it would be sent as, the lease as [`FakeLeases`].
#[derive(Default)]
pub(super) struct FakeTenancy {
    pub(super) leases: FakeLeases,
    pub(super) checkins: RefCell<VecDeque<Result<CheckinResponse, TenancyError>>>,
    /// bundle bodies (JSON) by sha
    pub(super) bundles: RefCell<HashMap<String, String>>,
    pub(super) reports: RefCell<Vec<serde_json::Value>>,
    pub(super) calls: RefCell<Vec<String>>,
    /// agent packages by version
    pub(super) packages: RefCell<HashMap<String, Vec<u8>>>,
}

impl FakeTenancy {
    /// Queue one check-in answer, as tenancy's JSON.
    pub(super) fn answer(&self, json: &str) {
        let r = monky_wire::tenancy::parse_checkin(json.as_bytes()).expect("a valid check-in");
        self.checkins.borrow_mut().push_back(Ok(r));
    }

    pub(super) fn fail_checkin(&self, e: TenancyError) {
        self.checkins.borrow_mut().push_back(Err(e));
    }
}

impl Leaser for FakeTenancy {
    async fn lease(&self, bearer: &str, env_id: &str, reason: &str) -> Result<Lease, TenancyError> {
        self.calls.borrow_mut().push(format!("lease {reason}"));
        self.leases.lease(bearer, env_id, reason).await
    }
}

impl TenancyApi for FakeTenancy {
    async fn checkin(
        &self,
        bearer: &str,
        req: &Checkin<'_>,
    ) -> Result<CheckinResponse, TenancyError> {
        self.calls.borrow_mut().push(format!(
            "checkin {bearer} applied={}",
            req.applied_sha.unwrap_or("-")
        ));
        self.checkins.borrow_mut().pop_front().unwrap_or_else(|| {
            Ok(monky_wire::tenancy::parse_checkin(br#"{"action": "none"}"#).unwrap())
        })
    }
    async fn bundle(
        &self,
        _bearer: &str,
        _env_id: &str,
        sha: &str,
    ) -> Result<(BundleWire, Option<String>), TenancyError> {
        self.calls.borrow_mut().push(format!("bundle {sha}"));
        let body = self.bundles.borrow().get(sha).cloned();
        let body = body.ok_or_else(|| TenancyError::Rejected {
            what: "bundle",
            status: 404,
            code: "BUNDLE_NOT_FOUND".into(),
            message: sha.into(),
        })?;
        Ok((serde_json::from_str(&body).expect("a bundle body"), None))
    }
    async fn report(&self, _bearer: &str, rep: &Report<'_>) -> Result<(), TenancyError> {
        self.calls
            .borrow_mut()
            .push(format!("report {}", rep.result));
        self.reports
            .borrow_mut()
            .push(serde_json::to_value(rep).expect("a report"));
        Ok(())
    }
    async fn agent_package(
        &self,
        _bearer: &str,
        version: &str,
        arch: &str,
        out: &mut std::fs::File,
    ) -> Result<(u64, String), TenancyError> {
        use sha2::Digest;
        use std::io::Write;
        self.calls
            .borrow_mut()
            .push(format!("package {version} {arch}"));
        let body = self.packages.borrow().get(version).cloned();
        let body = body.ok_or_else(|| TenancyError::Rejected {
            what: "agent package",
            status: 404,
            code: "NOT_FOUND".into(),
            message: version.into(),
        })?;
        out.write_all(&body).expect("write package");
        Ok((body.len() as u64, hex::encode(sha2::Sha256::digest(&body))))
    }
}

/// The engine: a container list (or down), a data root.
pub(super) struct FakeEngine {
    pub(super) containers: RefCell<Vec<Container>>,
    pub(super) down: Cell<bool>,
    pub(super) root: PathBuf,
}

impl FakeEngine {
    pub(super) fn new(root: PathBuf) -> FakeEngine {
        FakeEngine {
            containers: RefCell::default(),
            down: Cell::new(false),
            root,
        }
    }

    fn up(&self) -> Result<(), RuntimeError> {
        if self.down.get() {
            return Err(RuntimeError::Engine {
                socket: "/run/docker.sock".into(),
                msg: "connection refused".into(),
            });
        }
        Ok(())
    }
}

impl EngineApi for FakeEngine {
    async fn containers(&self, _project: &str) -> Result<Vec<Container>, RuntimeError> {
        self.up()?;
        Ok(self.containers.borrow().clone())
    }
    async fn containers_raw(&self, _project: &str) -> Result<Vec<serde_json::Value>, RuntimeError> {
        self.up()?;
        Ok(Vec::new())
    }
    async fn diagnose(&self, c: &Container) -> String {
        format!("{}: {}", c.service, c.state)
    }
    async fn restarts(&self, c: &Container) -> Option<u64> {
        c.restarts
    }
    async fn last_exit(&self, c: &Container, _since: u64) -> Option<i64> {
        c.exit_code
    }
    async fn docker_root(&self) -> Result<PathBuf, RuntimeError> {
        self.up()?;
        Ok(self.root.clone())
    }
    async fn prune_images(&self) -> Result<u64, RuntimeError> {
        self.up()?;
        Ok(0)
    }
}

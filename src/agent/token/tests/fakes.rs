//! Fakes for the token manager's ports (OpenBao, tenancy's lease, the clocks) that record
//! every call, and the `World` a test drives them in: a temp state dir and a `TokenManager`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use zeroize::Zeroizing;

use crate::agent::ports::{Clock, Leaser, Ports, Vault};
use crate::agent::token::TokenManager;
use crate::bao::{BaoError, Login};
use crate::config::Config;
use crate::state::{BootClock, State};
use crate::tenancy::{Lease, TenancyError};

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

pub(super) struct World {
    pub(super) dir: tempfile::TempDir,
    pub(super) cfg: Config,
    pub(super) bao: FakeBao,
    pub(super) leases: FakeLeases,
    pub(super) clock: FakeClock,
    pub(super) st: State,
    pub(super) tm: TokenManager,
}

impl World {
    pub(super) fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config {
            env_id: ENV.into(),
            state_dir: dir.path().join("state"),
            bootstrap_path: dir.path().join("bootstrap.jwt"),
            ..Config::default()
        };
        std::fs::create_dir_all(&cfg.state_dir).unwrap();
        let tm = TokenManager::new(&cfg);
        World {
            dir,
            cfg,
            bao: FakeBao::new(),
            leases: FakeLeases::default(),
            clock: FakeClock {
                wall: Cell::new(1_800_000_000),
                boot: Cell::new(1_000),
                boot_id: RefCell::new("boot-1".into()),
            },
            st: State::default(),
            tm,
        }
    }

    pub(super) fn grant(&self) {
        std::fs::write(&self.cfg.bootstrap_path, "boot-grant\n").unwrap();
    }

    pub(super) fn run<T>(
        &mut self,
        f: impl AsyncFnOnce(
            &mut TokenManager,
            &mut State,
            &Ports<'_, FakeBao, FakeLeases, FakeClock>,
        ) -> T,
    ) -> T {
        let p = Ports {
            vault: &self.bao,
            leaser: &self.leases,
            clock: &self.clock,
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(f(&mut self.tm, &mut self.st, &p))
    }

    pub(super) fn bootstrap(&mut self) {
        self.grant();
        self.run(async |tm, st, p| tm.load_or_bootstrap(st, p, false).await)
            .unwrap();
        self.bao.take_calls();
    }

    /// Bootstrapped, then swapped for a lease-derived token (the steady state).
    pub(super) fn leased(&mut self) -> String {
        self.bootstrap();
        self.run(async |tm, st, p| tm.for_apply(st, p).await)
            .unwrap();
        self.bao.take_calls();
        self.leases.calls.borrow_mut().clear();
        self.stored()
    }

    pub(super) fn stored(&self) -> String {
        std::fs::read_to_string(self.cfg.token_path()).unwrap()
    }

    pub(super) fn on_disk(&self) -> State {
        State::load(&self.cfg.state_path()).unwrap()
    }
}

//! The token tests' world: a temporary state directory, a `TokenManager` over it, and the
//! fakes it talks to, with the steps most tests start from (bootstrapped, leased).

use std::cell::{Cell, RefCell};

use crate::fakes::{FakeBao, FakeClock, FakeLeases, ENV};
use crate::ports::Ports;
use crate::token::TokenManager;
use monky_host::config::Config;
use monky_host::state::State;

pub(super) struct World {
    /// keeps the temporary directory alive as long as the world
    _dir: tempfile::TempDir,
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
            _dir: dir,
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

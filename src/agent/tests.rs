//! Whole ticks against fakes of tenancy, OpenBao and the engine (`fakes.rs`), on a real state
//! directory: what each check-in answer leads to, which calls the agent makes, what it reports
//! and what it leaves on disk, in milliseconds. An apply that passes every check reaches the
//! compose CLI, which is not faked: those paths are the real-parts suites' (tests/tick.rs).

use base64::Engine as _;

use super::fakes::{FakeBao, FakeEngine, FakeTenancy, HandClock, ENV};
use super::*;
use crate::error::Kind;
use monky_host::state::{TokenMeta, TokenSource};

const STORED: &str = "hvs.stored-token-aaaaaaaaaaaaaaaaaaaa";

struct TestBox {
    /// keeps the temporary directory alive as long as the box
    _dir: tempfile::TempDir,
    agent: Agent<FakeTenancy, FakeBao, FakeEngine>,
}

impl TestBox {
    /// A box with a stored token and nothing applied.
    fn new() -> TestBox {
        TestBox::with(|_| {})
    }

    fn with(edit: impl FnOnce(&mut Config)) -> TestBox {
        // the tick runs on this thread (a current-thread runtime): what it registers and
        // forgets stays out of the tests beside it
        monky_base::redact::isolate_this_thread();
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = Config {
            env_id: ENV.into(),
            state_dir: dir.path().join("state"),
            bootstrap_path: dir.path().join("bootstrap.jwt"),
            compose_project: "monky-test".into(),
            ..Config::default()
        };
        edit(&mut cfg);
        std::fs::create_dir_all(&cfg.state_dir).unwrap();
        std::fs::write(cfg.token_path(), STORED).unwrap();
        let c = Clients {
            tenancy: FakeTenancy::default(),
            bao: FakeBao::new(),
        };
        let engine = FakeEngine::new(dir.path().to_path_buf());
        let agent = Agent::from_parts(cfg, false, c, engine).unwrap();
        TestBox { _dir: dir, agent }
    }

    fn tick(&mut self) -> Result<Exit, Failure> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(self.agent.tick())
    }

    fn tenancy(&self) -> &FakeTenancy {
        &self.agent.c.tenancy
    }

    fn bao(&self) -> &FakeBao {
        &self.agent.c.bao
    }

    fn calls(&self) -> Vec<String> {
        self.tenancy().calls.borrow().clone()
    }

    fn reports(&self) -> Vec<serde_json::Value> {
        self.tenancy().reports.borrow().clone()
    }

    fn saved(&self) -> State {
        State::load(&self.agent.cfg.state_path()).unwrap()
    }

    /// `sha` applied and current, its compose file naming `services`.
    fn applied(&mut self, sha: &str, services: &[&str]) {
        let cfg = &self.agent.cfg;
        let rel = cfg.releases_dir().join(sha);
        std::fs::create_dir_all(&rel).unwrap();
        let compose: String = std::iter::once("services:\n".to_string())
            .chain(
                services
                    .iter()
                    .map(|s| format!("  {s}:\n    image: busybox\n")),
            )
            .collect();
        std::fs::write(rel.join("compose.yaml"), compose).unwrap();
        std::os::unix::fs::symlink(&rel, cfg.current_link()).unwrap();
        let mut st = State::default();
        st.applied_sha = Some(sha.into());
        st.save(&cfg.state_path()).unwrap();
    }

    fn running(&self, cs: &[(&str, &str, &str)]) {
        *self.agent.engine.containers.borrow_mut() = cs
            .iter()
            .map(|(s, st, h)| test_container(s, st, h))
            .collect();
    }

    /// Offer `files` as a bundle; its sha.
    fn bundle(&self, files: &[(&str, &str)]) -> String {
        let sha = bundle::canonical_sha(files.iter().map(|(p, c)| (*p, c.as_bytes())));
        let body = serde_json::json!({
            "env_id": ENV,
            "sha": sha,
            "files": files.iter().map(|(p, c)| serde_json::json!({
                "path": p,
                "content_b64": base64::engine::general_purpose::STANDARD.encode(c),
            })).collect::<Vec<_>>(),
        });
        self.tenancy()
            .bundles
            .borrow_mut()
            .insert(sha.clone(), body.to_string());
        sha
    }
}

fn sha(c: char) -> String {
    c.to_string().repeat(64)
}

mod checkin;
mod compose;
mod corpus;
mod holds;
mod instances;
mod issue41;
mod refused;

//! Shared harness for the integration tests: a real OpenBao, the test tenancy, a real dockerd
//! (started by `scripts/services.sh`), and the agent binary run as a subprocess like the timer
//! runs it. Nothing here skips: a missing real part fails the test with a message.
#![allow(dead_code)] // each suite uses a different subset

mod engine;
pub mod fault_parts;
pub mod netns;
pub mod proxy;
pub mod ziti;
pub mod ziti_svc;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

#[allow(unused_imports)] // not every binary drives the engine
pub use engine::*;
pub use monky_test_tenancy::{Bao, BaoRoleOpts, Signer, Tenancy, TenancyOpts};
use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_monky-deployd");
pub const IMAGE: &str = "127.0.0.1:5001/monky/busybox:1";
pub const PRIVATE_IMAGE: &str = "127.0.0.1:5000/monky/private:1";

/// One scenario function, two tests: under compose v1 (`docker-compose`) and v2 (`docker compose`).
#[allow(unused_macros)] // not every suite has compose scenarios
macro_rules! both_composes {
    ($name:ident) => {
        mod $name {
            #[test]
            fn compose_v1() {
                super::$name(super::Flavour::V1)
            }
            #[test]
            fn compose_v2() {
                super::$name(super::Flavour::V2)
            }
        }
    };
}

/// One scenario function, three tests: compose v1, v2 (2.22) and the current v5 line.
#[allow(unused_macros)]
macro_rules! all_composes {
    ($name:ident) => {
        mod $name {
            #[test]
            fn compose_v1() {
                super::$name(super::Flavour::V1)
            }
            #[test]
            fn compose_v2() {
                super::$name(super::Flavour::V2)
            }
            #[test]
            fn compose_v5() {
                super::$name(super::Flavour::V5)
            }
        }
    };
}

/// One scenario function whose proof is the agent's own logic (its state, its reading of the
/// Engine API, its lock and kill points), which no compose line changes: compose v5 in the test
/// command, v1 and v2 in the release matrix (`scripts/release-matrix.sh`). What the lines do
/// differently (the calls the guard judges, interpolation, naming, pull, `up` and its jobs,
/// signals, recreation on drift or rollback) stays in `all_composes!`.
#[allow(unused_macros)]
macro_rules! one_compose {
    ($name:ident) => {
        mod $name {
            #[test]
            #[ignore = "release matrix (scripts/release-matrix.sh): the same on every compose line"]
            fn compose_v1() {
                super::$name(super::Flavour::V1)
            }
            #[test]
            #[ignore = "release matrix (scripts/release-matrix.sh): the same on every compose line"]
            fn compose_v2() {
                super::$name(super::Flavour::V2)
            }
            #[test]
            fn compose_v5() {
                super::$name(super::Flavour::V5)
            }
        }
    };
}

static SEQ: AtomicU32 = AtomicU32::new(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    V1,
    V2,
    /// The compose line Docker ships today, built by scripts/provision.sh.
    V5,
}

impl Flavour {
    /// The config lines that select this compose.
    pub fn config_lines(self) -> String {
        match self {
            Flavour::V1 => "compose_cmd: standalone\n".into(),
            Flavour::V2 => "compose_cmd: plugin\n".into(),
            Flavour::V5 => {
                let cache = std::env::var("MONKY_CACHE")
                    .unwrap_or_else(|_| "/var/cache/monky-deployd-dev".into());
                let bin = format!("{cache}/bin/docker-compose-v5");
                assert!(
                    std::path::Path::new(&bin).is_file(),
                    "compose v5 missing at {bin}: run scripts/provision.sh (the README test command does)"
                );
                format!("compose_cmd: standalone\ncompose_bin: {bin}\n")
            }
        }
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

pub fn require_docker() {
    let ok = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "no Docker engine on /var/run/docker.sock: run scripts/services.sh (the README test command does)");
}

pub struct Stack {
    pub bao: Bao,
    pub tenancy: Tenancy,
    pub dir: tempfile::TempDir,
    pub env: String,
    pub flavour: Flavour,
    pub extra: String,
}

impl Stack {
    pub fn new(name: &str, flavour: Flavour) -> Stack {
        Self::with_role(name, flavour, BaoRoleOpts::default())
    }

    pub fn with_role(name: &str, flavour: Flavour, role: BaoRoleOpts) -> Stack {
        let bao = Bao::start();
        let tenancy = Tenancy::start(TenancyOpts {
            bao_addr: bao.addr(),
            bao_root_token: bao.root_token().to_string(),
            signer: Signer::new(),
            lease_limit_per_hour: 5,
        });
        bao.configure(&tenancy.signer().public_key_pem(), role);
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let env = format!(
            "t{}-{}-{}",
            std::process::id() % 100000,
            n,
            name.replace('_', "-")
        );
        let env: String = env.chars().take(50).collect();
        let dir = tempfile::Builder::new()
            .prefix("monky-it-")
            .tempdir()
            .expect("tempdir");
        let s = Stack {
            bao,
            tenancy,
            dir,
            env,
            flavour,
            extra: String::new(),
        };
        s.write_config();
        s
    }

    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }
    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.yaml")
    }
    pub fn bootstrap_path(&self) -> PathBuf {
        self.dir.path().join("bootstrap.jwt")
    }
    pub fn project(&self) -> String {
        format!("monky-{}", self.env)
    }

    pub fn config_text(&self) -> String {
        format!(
            "env_id: {env}\nsite: test\ntransport: system\n\
             tenancy:\n  host: 127.0.0.1\n  port: {tp}\n  scheme: http\n  timeout_s: 5\n\
             bao:\n  host: 127.0.0.1\n  port: {bp}\n  scheme: http\n  ca_file: \"\"\n  timeout_s: 5\n\
             state_dir: {sd}\nbootstrap_path: {bp_path}\n{ht}{st}{bo}{cc}\
             registry_host: 127.0.0.1:5000\nlog_level: debug\n{extra}",
            env = self.env,
            tp = self.tenancy.port(),
            bp = self.bao.port(),
            sd = self.state_dir().display(),
            bp_path = self.bootstrap_path().display(),
            cc = self.flavour.config_lines(),
            ht = if self.extra.contains("healthy_timeout_s") { "" } else { "healthy_timeout_s: 30\n" },
            // suites tick a failed sha again at once; tests/real/settle.rs sets its own backoff and
            // settle window (a shorter window keeps the suites' many applies quick)
            bo = if self.extra.contains("retry_backoff_max_s") { "" } else { "retry_backoff_max_s: 0\n" },
            st = if self.extra.contains("settle_s") { "" } else { "settle_s: 2\n" },
            extra = self.extra,
        )
    }

    pub fn write_config(&self) {
        std::fs::write(self.config_path(), self.config_text()).unwrap();
    }

    pub fn set_extra(&mut self, extra: &str) {
        self.extra = extra.to_string();
        self.write_config();
    }

    /// The install kit's grant at the bootstrap path (0600, as install.sh stages it).
    pub fn give_bootstrap(&self) -> String {
        let g = self.tenancy.bootstrap_grant(&self.env);
        std::fs::write(self.bootstrap_path(), &g.jwt).unwrap();
        std::fs::set_permissions(
            self.bootstrap_path(),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        g.jti
    }

    pub fn cmd(&self, args: &[&str]) -> Run {
        run_bin(&self.config_path(), args)
    }

    /// `cmd` with extra environment and, when given, the agent started with that gid (the
    /// only-route guard of tests/common/proxy.rs).
    pub fn cmd_as(&self, args: &[&str], env: &[(&str, &str)], gid: Option<u32>) -> Run {
        run_bin_opts(&self.config_path(), args, env, gid)
    }

    pub fn tick(&self) -> Run {
        self.cmd(&["run", "--once"])
    }

    pub fn state(&self) -> Value {
        serde_json::from_slice(
            &std::fs::read(self.state_dir().join("state.json")).expect("state.json"),
        )
        .unwrap()
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(self.state_dir().join("bao.token"))
            .expect("bao.token")
            .trim()
            .to_string()
    }

    /// (service, state, health) of the project's containers, straight from docker.
    pub fn containers(&self) -> Vec<(String, String)> {
        let o = Command::new("docker")
            .args([
                "ps",
                "-a",
                "--filter",
                &format!("label=com.docker.compose.project={}", self.project()),
                "--format",
                "{{.Label \"com.docker.compose.service\"}} {{.State}}",
            ])
            .output()
            .unwrap();
        let mut v: Vec<(String, String)> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| {
                l.split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
            })
            .collect();
        v.sort();
        v
    }

    pub fn container_env(&self, service: &str) -> Vec<String> {
        let o = Command::new("docker")
            .args([
                "ps",
                "-q",
                "--filter",
                &format!("label=com.docker.compose.project={}", self.project()),
                "--filter",
                &format!("label=com.docker.compose.service={service}"),
            ])
            .output()
            .unwrap();
        let id = String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        assert!(!id.is_empty(), "no container for {service}");
        let o = Command::new("docker")
            .args(["inspect", "--format", "{{json .Config.Env}}", &id])
            .output()
            .unwrap();
        serde_json::from_slice(&o.stdout).unwrap()
    }

    pub fn volumes(&self) -> Vec<String> {
        let o = Command::new("docker")
            .args([
                "volume",
                "ls",
                "-q",
                "--filter",
                &format!("label=com.docker.compose.project={}", self.project()),
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(String::from)
            .collect()
    }

    pub fn last_report(&self) -> Value {
        self.tenancy.reports().last().cloned().expect("a report")
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let p = format!("label=com.docker.compose.project={}", self.project());
        if let Ok(o) = Command::new("docker")
            .args(["ps", "-aq", "--filter", &p])
            .output()
        {
            let ids: Vec<String> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(String::from)
                .collect();
            if !ids.is_empty() {
                let _ = Command::new("docker")
                    .args(["rm", "-f", "-v"])
                    .args(&ids)
                    .output();
            }
        }
        for v in self.volumes() {
            let _ = Command::new("docker")
                .args(["volume", "rm", "-f", &v])
                .output();
        }
        // every network of the project (a leak exhausts the engine's address pools)
        if let Ok(o) = Command::new("docker")
            .args(["network", "ls", "-q", "--filter", &p])
            .output()
        {
            for id in String::from_utf8_lossy(&o.stdout).lines() {
                let _ = Command::new("docker").args(["network", "rm", id]).output();
            }
        }
        let _ = Command::new("docker")
            .args(["network", "rm", &format!("{}_default", self.project())])
            .output();
    }
}

pub fn run_bin(config: &Path, args: &[&str]) -> Run {
    run_bin_env(config, args, &[])
}

pub fn run_bin_env(config: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    run_bin_opts(config, args, env, None)
}

/// `run_bin_env`, and with `gid` the agent runs with that group id (uid unchanged).
pub fn run_bin_opts(config: &Path, args: &[&str], env: &[(&str, &str)], gid: Option<u32>) -> Run {
    use std::os::unix::process::CommandExt;
    let _box = box_shared();
    let mut full = vec!["--config".to_string(), config.display().to_string()];
    full.extend(args.iter().map(|s| s.to_string()));
    let mut c = Command::new(BIN);
    c.args(&full)
        .envs(env.iter().copied())
        .env_remove("MONKY_LOG");
    if let Some(g) = gid {
        c.gid(g);
    }
    let o = c.output().expect("run monky-deployd");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Several instances on one box (issue 34): `etc` stands for /etc/monky-deployd; the stack's
/// config is linked in as `<etc>/<name>/config.yaml`, where `--instance <name>` finds it.
pub fn link_instance(etc: &Path, name: &str, s: &Stack) {
    std::fs::create_dir_all(etc.join(name)).unwrap();
    std::os::unix::fs::symlink(s.config_path(), etc.join(name).join("config.yaml")).unwrap();
}

/// The binary as instance `name` of the box whose configs are in `etc` (no `--config`: the
/// instance's own path is used), with `env` set.
pub fn run_instance(etc: &Path, name: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let _box = box_shared();
    let o = Command::new(BIN)
        .arg("--etc-dir")
        .arg(etc)
        .args(["--instance", name])
        .args(args)
        .envs(env.iter().copied())
        .env_remove("MONKY_LOG")
        .output()
        .expect("run monky-deployd");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

pub fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

/// A bundle: compose.yaml, env.template, secrets.manifest.json, bundle.json.
pub struct BundleSpec {
    pub serial: u64,
    pub compose: String,
    pub env_template: String,
    pub manifest: Value,
    pub meta_extra: Value,
}

impl BundleSpec {
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut meta = serde_json::json!({"serial": self.serial, "need_bytes": 1048576});
        if let (Some(m), Some(x)) = (meta.as_object_mut(), self.meta_extra.as_object()) {
            for (k, v) in x {
                m.insert(k.clone(), v.clone());
            }
        }
        vec![
            ("compose.yaml".into(), self.compose.clone().into_bytes()),
            (
                "env.template".into(),
                self.env_template.clone().into_bytes(),
            ),
            (
                "secrets.manifest.json".into(),
                serde_json::to_vec(&self.manifest).unwrap(),
            ),
            ("bundle.json".into(), serde_json::to_vec(&meta).unwrap()),
        ]
    }
}

/// A bundle with no secrets and an empty env template.
pub fn plain_bundle(serial: u64, compose: String) -> BundleSpec {
    BundleSpec {
        serial,
        compose,
        env_template: String::new(),
        manifest: serde_json::json!({"entries": []}),
        meta_extra: serde_json::json!({}),
    }
}

/// A healthy one-service web app that gets API_KEY from `.env`; `variant` changes the config
/// hash so a new sha really recreates the container.
pub fn web_compose(variant: &str) -> String {
    format!(
        "services:\n  web:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"touch /tmp/ok; exec httpd -f -p 8080 -h /tmp\"]\n    \
         environment:\n      API_KEY: ${{API_KEY}}\n      VARIANT: \"{variant}\"\n    \
         healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n    \
         volumes:\n      - data:/data\nvolumes:\n  data: {{}}\n"
    )
}

/// Seeds `api_key` for the stack's env and returns a bundle that uses it.
pub fn web_bundle(s: &Stack, serial: u64, variant: &str, value: &str) -> BundleSpec {
    let v = s.bao.put_secret(&s.env, "api_key", &[("value", value)]);
    BundleSpec {
        serial,
        compose: web_compose(variant),
        env_template: "API_KEY=${API_KEY}\n".into(),
        manifest: serde_json::json!({"entries": [
            {"var": "API_KEY", "path": format!("monky/data/{}/see/api_key", s.env), "version": v}
        ]}),
        meta_extra: serde_json::json!({}),
    }
}

pub fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..100 {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}");
}

/// A process's resident set (`VmRSS`, KiB); 0 when it is gone.
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A process's open file descriptors; 0 when it is gone.
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// `date -u +%Y-%m-%dT%H:%MZ`, for generated figures.
pub fn utc_minute() -> String {
    let o = Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%MZ"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Where a soak leaves its figures for its script: `$CARGO_TARGET_DIR/<name>`.
pub fn figures_path(name: &str) -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/target").to_string());
    Path::new(&target).join(name)
}

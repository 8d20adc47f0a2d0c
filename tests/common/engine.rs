//! The engine side of a scenario, shared by the suites: what docker says about a stack's
//! project, and one `run --once` with its report.

use std::cell::Cell;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use super::{plain_bundle, run_bin_env, BundleSpec, Run, Stack, IMAGE};

/// The engine guard judges every create against every bind on the box, so a container one test
/// makes with the policy off to prove an attack (a bind of the host's root: every volume is
/// under it) turns the creates of every other test in this process into refusals while it
/// exists. Such a proof holds [`box_exclusive`] from the tick that makes the container until it
/// is gone; every agent run holds [`box_shared`] (`run_bin_env` takes it), so none overlaps.
static BOX: RwLock<()> = RwLock::new(());

thread_local! {
    /// This thread's hold on [`BOX`]: 0 none, 1 shared, 2 exclusive (no re-entry: a read lock
    /// taken again behind a waiting writer would deadlock).
    static HOLD: Cell<u8> = const { Cell::new(0) };
}

/// See [`BOX`]: held while the box carries a container that changes how others are judged.
pub struct BoxExclusive(#[allow(dead_code)] RwLockWriteGuard<'static, ()>);

impl Drop for BoxExclusive {
    fn drop(&mut self) {
        HOLD.set(0);
    }
}

pub fn box_exclusive() -> BoxExclusive {
    assert_eq!(
        HOLD.get(),
        0,
        "box_exclusive inside a box_shared or box_exclusive hold"
    );
    let g = BOX.write().unwrap_or_else(|e| e.into_inner());
    HOLD.set(2);
    BoxExclusive(g)
}

/// See [`BOX`]: held while agents this thread started may create containers; `None` when this
/// thread already holds the box.
pub struct BoxShared(#[allow(dead_code)] Option<RwLockReadGuard<'static, ()>>);

impl Drop for BoxShared {
    fn drop(&mut self) {
        if self.0.is_some() {
            HOLD.set(0);
        }
    }
}

pub fn box_shared() -> BoxShared {
    if HOLD.get() != 0 {
        return BoxShared(None);
    }
    let g = BOX.read().unwrap_or_else(|e| e.into_inner());
    HOLD.set(1);
    BoxShared(Some(g))
}

/// A stack whose bootstrap grant is already swapped for an OpenBao token.
pub fn bootstrapped(name: &str, f: super::Flavour) -> Stack {
    let s = Stack::new(name, f);
    s.give_bootstrap();
    let r = s.cmd(&["bootstrap"]);
    assert_eq!(r.code, 0, "{r:?}");
    s
}

/// The files of a plain bundle (no secrets) at `serial`.
pub fn bundle(serial: u64, compose: String) -> Vec<(String, Vec<u8>)> {
    plain_bundle(serial, compose).files()
}

/// One tick with the test-only policy switch (`on`, `no-file`, `off`).
pub fn tick_with(s: &Stack, policy: &str) -> Run {
    run_bin_env(
        &s.config_path(),
        &["run", "--once"],
        &[("MONKY_DEPLOYD_TEST_POLICY", policy)],
    )
}

/// What one `run --once` did: its exit and the report it posted.
pub struct Outcome {
    pub run: Run,
    pub result: String,
    pub detail: String,
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "result {} detail {:?}\n{:?}",
            self.result, self.detail, self.run
        )
    }
}

/// Serves `spec` and runs one tick under `policy` (`on`, `no-file`, `off`).
pub fn apply_spec(s: &Stack, spec: BundleSpec, policy: &str) -> Outcome {
    s.tenancy.set_bundle(&s.env, spec.files());
    let before = s.tenancy.reports().len();
    let run = if policy == "on" {
        s.tick()
    } else {
        tick_with(s, policy)
    };
    assert!(
        s.tenancy.reports().len() > before,
        "no report for this apply: {run:?}"
    );
    let rep = s.last_report();
    Outcome {
        result: rep["result"].as_str().unwrap_or("").to_string(),
        detail: rep["detail"].as_str().unwrap_or("").to_string(),
        run,
    }
}

/// A plain bundle (no secrets) at the next serial, applied under `policy`.
pub fn apply_plain(s: &Stack, serial: &mut u64, compose: &str, policy: &str) -> Outcome {
    *serial += 1;
    apply_spec(s, plain_bundle(*serial, compose.to_string()), policy)
}

/// Where the stack's `current` link points.
pub fn current(s: &Stack) -> PathBuf {
    std::fs::read_link(s.state_dir().join("current")).expect("current")
}

/// Container ids of one service of the stack's project (all states).
pub fn service_containers(s: &Stack, svc: &str) -> Vec<String> {
    let o = Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=com.docker.compose.project={}", s.project()),
            "--filter",
            &format!("label=com.docker.compose.service={svc}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect()
}

/// A container's stdout and stderr so far.
pub fn logs_of(id: &str) -> String {
    let o = Command::new("docker").args(["logs", id]).output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `docker inspect --format FORMAT ID`, trimmed ("" when there is no such object).
pub fn inspect_format(id: &str, format: &str) -> String {
    let o = Command::new("docker")
        .args(["inspect", "--format", format, id])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The local image id of `reference`, if the engine has it.
pub fn image_id(reference: &str) -> Option<String> {
    let o = Command::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", reference])
        .output()
        .expect("docker");
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The private registry's password, as `scripts/services.sh` wrote it.
pub fn registry_password() -> String {
    std::fs::read_to_string("/run/monky-deployd-dev/registry.pw")
        .expect("registry.pw (scripts/services.sh)")
        .trim()
        .to_string()
}

/// Polls `f` every 200 ms until it holds; fails the test after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(
            t0.elapsed() < limit,
            "timed out ({limit:?}) waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Another project's volume `foreign` holding `marker`, and its private web service
/// `{foreign}-web` serving `marker` on 127.0.0.1:9999 inside its own network namespace, made the
/// way another app on the box would. The caller removes both.
pub fn make_foreign_app(foreign: &str, marker: &str) {
    let o = Command::new("docker")
        .args(["run", "--rm", "-v", &format!("{foreign}:/x"), super::IMAGE])
        .args(["sh", "-c", &format!("echo {marker} > /x/marker")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let o = Command::new("docker")
        .args([
            "run",
            "-d",
            "--name",
            &format!("{foreign}-web"),
            super::IMAGE,
        ])
        .args([
            "sh",
            "-c",
            &format!("echo {marker} > /tmp/index.html; exec httpd -f -p 127.0.0.1:9999 -h /tmp"),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
}

pub fn docker(args: &[&str]) -> String {
    let o = Command::new("docker").args(args).output().expect("docker");
    assert!(
        o.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Images this test made, removed at the end whatever happened.
pub struct Images(pub Vec<String>);

impl Drop for Images {
    fn drop(&mut self) {
        for r in &self.0 {
            let _ = Command::new("docker").args(["rmi", "-f", r]).output();
        }
    }
}

/// A one-tag image of its own (busybox plus `kib` KiB of noise), built here. `push`: pushed to
/// the open registry and removed locally, so only the agent's pull brings it back (and the
/// guard's ledger records it); otherwise it stays a local image no agent pulled.
pub fn make_image(name: &str, kib: u32, push: bool, made: &mut Images) -> String {
    docker(&["pull", "-q", IMAGE]);
    let reference = if push {
        format!("127.0.0.1:5001/monky/{name}:1")
    } else {
        format!("monky-care/{name}:1")
    };
    made.0.push(reference.clone());
    let dockerfile = format!(
        "FROM {IMAGE}\nRUN head -c {}k /dev/urandom > /noise-{name}\n",
        kib
    );
    let mut child = Command::new("docker")
        .args(["build", "-q", "-t", &reference, "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("docker build");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dockerfile.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "docker build: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    if push {
        docker(&["push", "-q", &reference]);
        docker(&["rmi", &reference]);
        assert!(image_id(&reference).is_none());
    }
    reference
}

/// The ids of the stack's project's containers (`kind` "container") or networks.
pub fn project_objects(s: &Stack, kind: &str) -> Vec<String> {
    let p = format!("label=com.docker.compose.project={}", s.project());
    let args: Vec<&str> = match kind {
        "container" => vec!["ps", "-aq", "--filter", &p],
        _ => vec!["network", "ls", "-q", "--filter", &p],
    };
    let o = Command::new("docker").args(&args).output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect()
}

/// Removes the project's containers (with their anonymous volumes) and networks.
pub fn purge_project(s: &Stack) {
    let c = project_objects(s, "container");
    if !c.is_empty() {
        let _ = Command::new("docker")
            .args(["rm", "-f", "-v"])
            .args(&c)
            .output();
    }
    for n in project_objects(s, "network") {
        let _ = Command::new("docker").args(["network", "rm", &n]).output();
    }
}

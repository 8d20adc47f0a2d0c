//! `monky-deployd reload --pid PID` (the service unit's ExecReload) against the real binary in
//! service mode. Nothing answers on the configured tenancy/OpenBao ports: every tick fails, the
//! loop goes on, which is all a reload needs. No dockerd, no OpenBao.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::BIN;

struct Svc {
    dir: tempfile::TempDir,
    child: Child,
}

fn config(state: &Path, extra: &str) -> String {
    format!(
        "env_id: env-reload\nsite: test\ntransport: system\n\
         tenancy:\n  host: 127.0.0.1\n  port: 9\n  scheme: http\n  timeout_s: 2\n\
         bao:\n  host: 127.0.0.1\n  port: 9\n  scheme: http\n  ca_file: \"\"\n  timeout_s: 2\n\
         state_dir: {}\nbootstrap_path: {}\nlog_level: info\n{extra}",
        state.display(),
        state.join("no-bootstrap.jwt").display()
    )
}

impl Svc {
    fn start() -> Svc {
        let dir = tempfile::tempdir().unwrap();
        let s = Svc::write(&dir, "");
        let log = std::fs::File::create(dir.path().join("service.log")).unwrap();
        let child = Command::new(BIN)
            .arg("--config")
            .arg(&s)
            .arg("run")
            .env("MONKY_DEPLOYD_TEST_INTERVAL_MS", "300")
            .env_remove("MONKY_LOG")
            .env_remove("NOTIFY_SOCKET")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let svc = Svc { dir, child };
        svc.wait_log("the first tick", |l| l.contains("service: a tick every"));
        svc
    }

    fn write(dir: &tempfile::TempDir, extra: &str) -> PathBuf {
        let p = dir.path().join("config.yaml");
        std::fs::write(&p, config(&dir.path().join("state"), extra)).unwrap();
        p
    }

    fn set(&self, extra: &str) {
        Svc::write(&self.dir, extra);
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("service.log")).unwrap_or_default()
    }

    fn wait_log(&self, what: &str, f: impl Fn(&str) -> bool) {
        let t = Instant::now();
        while !f(&self.log()) {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "timed out waiting for {what}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn reload(&self, pid: u32) -> Output {
        Command::new(BIN)
            .arg("--config")
            .arg(self.dir.path().join("config.yaml"))
            .args(["reload", "--pid", &pid.to_string(), "--timeout-s", "20"])
            .env_remove("MONKY_LOG")
            .output()
            .unwrap()
    }

    fn answer(&self) -> Option<serde_json::Value> {
        let b = std::fs::read(self.dir.path().join("state/reload.json")).ok()?;
        Some(serde_json::from_slice(&b).unwrap())
    }
}

impl Drop for Svc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn reload_exits_with_what_the_service_decided() {
    let svc = Svc::start();
    let pid = svc.child.id();

    // a config the service would refuse: exit 1 naming the problem, and no SIGHUP sent
    svc.set("interval_s: 1\n");
    let o = svc.reload(pid);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("interval_s"), "{}", text(&o));
    assert!(text(&o).contains("not signalled"), "{}", text(&o));
    // a config that loads but names a CA file that is not there (Agent::new refuses it)
    let text_ = config(&svc.dir.path().join("state"), "").replace(
        "scheme: http\n  ca_file: \"\"",
        "scheme: https\n  ca_file: /nonexistent/ca.pem",
    );
    assert!(text_.contains("/nonexistent/ca.pem"));
    std::fs::write(svc.dir.path().join("config.yaml"), text_).unwrap();
    let o = svc.reload(pid);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("/nonexistent/ca.pem"), "{}", text(&o));
    std::thread::sleep(Duration::from_millis(500));
    assert!(!svc.log().contains("CONFIG_RELOAD_FAILED"), "{}", svc.log());
    assert!(svc.answer().is_none(), "the service was never signalled");

    // a good, changed config: taken up, exit 0 on the service's answer
    svc.set("settle_s: 3\n");
    let o = svc.reload(pid);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let a = svc.answer().expect("reload.json");
    assert_eq!(a["outcome"], "ok", "{a}");
    assert_eq!(a["pid"], pid, "{a}");
    svc.wait_log("the reload", |l| l.contains("configuration reloaded from"));

    // a change only a new process takes up: the service starts afresh, and says so first
    let debug = config(&svc.dir.path().join("state"), "settle_s: 3\n")
        .replace("log_level: info", "log_level: debug");
    std::fs::write(svc.dir.path().join("config.yaml"), debug).unwrap();
    let o = svc.reload(pid);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(svc.answer().unwrap()["outcome"], "afresh");
    svc.wait_log("the fresh start", |l| {
        l.contains("configuration reloaded: starting afresh")
    });

    // no such process: exit 1
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let o = svc.reload(gone_pid);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn a_refusal_by_the_service_fails_the_reload() {
    // the command and the service disagree when the file changes between the command's check
    // and the service's read: the command checks one file, the service re-reads another
    let svc = Svc::start();
    let pid = svc.child.id();
    // the service re-reads its own file: make it bad behind the command's back
    let other = svc.dir.path().join("other.yaml");
    std::fs::write(
        &other,
        config(&svc.dir.path().join("state"), "settle_s: 4\n"),
    )
    .unwrap();
    svc.set("interval_s: 1\n");
    let o = Command::new(BIN)
        .arg("--config")
        .arg(&other)
        .args(["reload", "--pid", &pid.to_string(), "--timeout-s", "20"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("refused"), "{}", text(&o));
    assert!(text(&o).contains("interval_s"), "{}", text(&o));
    let a = svc.answer().expect("reload.json");
    assert_eq!(a["outcome"], "refused", "{a}");
    svc.wait_log("the refusal", |l| l.contains("CONFIG_RELOAD_FAILED"));
}

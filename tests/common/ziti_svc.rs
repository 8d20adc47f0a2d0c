//! Shared by `tests/mesh/ziti_service.rs` and `tests/mesh/ziti_soak.rs`: a box whose config reaches
//! tenancy and OpenBao only as Ziti services, and `monky-deployd run` with a notify socket of the
//! test's own (the service manager's side of `Type=notify`).
#![allow(dead_code)] // each suite uses a different subset

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::ziti::{unique, Net};
use super::*;

pub const T_HOST: &str = "tenancy.ziti.invalid";
pub const B_HOST: &str = "bao.ziti.invalid";

/// The stack's config over sdk with `identity`, tenancy and OpenBao only as Ziti services.
pub fn sdk_config(net: &Net, s: &Stack, identity: &Path) -> String {
    let (ts, bs) = (unique("svc.tenancy"), unique("svc.openbao"));
    net.service(&ts, s.tenancy.port());
    net.service(&bs, s.bao.port());
    let text = s.config_text();
    let out = text
        .replace(
            "transport: system\n",
            &format!("transport: sdk\nidentity: {}\n", identity.display()),
        )
        .replace(
            &format!(
                "tenancy:\n  host: 127.0.0.1\n  port: {}\n",
                s.tenancy.port()
            ),
            &format!("tenancy:\n  host: {T_HOST}\n  port: 1\n  service: {ts}\n"),
        )
        .replace(
            &format!("bao:\n  host: 127.0.0.1\n  port: {}\n", s.bao.port()),
            &format!("bao:\n  host: {B_HOST}\n  port: 1\n  service: {bs}\n"),
        );
    assert!(
        out.contains(T_HOST) && out.contains(B_HOST) && out.contains("transport: sdk"),
        "harness config changed shape:\n{out}"
    );
    out
}

/// A box on `net`: stack, identity with Dial on its two services, config written, grant given.
pub fn sdk_box(net: &Net, name: &str, flavour: Flavour) -> (Stack, PathBuf) {
    let s = Stack::new(name, flavour);
    // the identity is enrolled after the services exist: its Dial policy names them
    let id = s.dir.path().join("identity.json");
    let text = sdk_config(net, &s, &id);
    let svcs: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("service: ").map(String::from))
        .collect();
    assert_eq!(svcs.len(), 2, "{text}");
    let enrolled = net.identity(
        &unique(&format!("box-{name}")),
        &[svcs[0].as_str(), svcs[1].as_str()],
    );
    std::fs::copy(&enrolled, &id).unwrap();
    std::fs::write(s.config_path(), text).unwrap();
    s.give_bootstrap();
    (s, id)
}

/// What the agent sent to the notify socket, with when it arrived.
pub type Msgs = Arc<Mutex<Vec<(Instant, String)>>>;

/// One tick as the service told the service manager (`STATUS=`).
#[derive(Clone, Copy, Debug)]
pub struct TickStatus {
    /// When the line arrived.
    pub at: Instant,
    pub n: u64,
    pub exit: i32,
    /// The tick's own wall time.
    pub ms: u64,
}

/// The agent's `run` with a notify socket of the test's own.
pub struct Svc {
    child: Child,
    /// The agent's pid: the child's, or its child's under a wrapper (strace).
    pid: i32,
    msgs: Msgs,
    pub log: PathBuf,
    _sock_dir: tempfile::TempDir,
}

impl Svc {
    pub fn start(s: &Stack, interval_ms: u64, watchdog: Duration, env: &[(&str, &str)]) -> Svc {
        Self::start_under(&[], s, interval_ms, watchdog, env)
    }

    /// [`Svc::start`] under `wrapper` (a command that runs its last argument as its only child,
    /// as `strace -f -o FILE` does).
    pub fn start_under(
        wrapper: &[&str],
        s: &Stack,
        interval_ms: u64,
        watchdog: Duration,
        env: &[(&str, &str)],
    ) -> Svc {
        let sock_dir = tempfile::tempdir().unwrap();
        let sock = sock_dir.path().join("notify");
        let rx = UnixDatagram::bind(&sock).unwrap();
        let msgs: Msgs = Default::default();
        let m = msgs.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 4096];
            while let Ok(n) = rx.recv(&mut buf) {
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                for line in text.lines() {
                    m.lock().unwrap().push((Instant::now(), line.to_string()));
                }
            }
        });
        let log = s.dir.path().join(format!("{}.service.log", unique("svc")));
        let f = std::fs::File::create(&log).unwrap();
        let mut cmd = match wrapper.split_first() {
            Some((w, args)) => {
                let mut c = Command::new(w);
                c.args(args).arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
        let child = cmd
            .args(["--config", s.config_path().to_str().unwrap(), "run"])
            .env("NOTIFY_SOCKET", &sock)
            .env("WATCHDOG_USEC", watchdog.as_micros().to_string())
            .env("MONKY_DEPLOYD_TEST_INTERVAL_MS", interval_ms.to_string())
            .envs(env.iter().copied())
            .env_remove("MONKY_LOG")
            .stdin(Stdio::null())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .spawn()
            .expect("spawn monky-deployd run");
        let pid = if wrapper.is_empty() {
            child.id() as i32
        } else {
            wrapped_pid(child.id())
        };
        Svc {
            child,
            pid,
            msgs,
            log,
            _sock_dir: sock_dir,
        }
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn msgs(&self) -> Vec<(Instant, String)> {
        self.msgs.lock().unwrap().clone()
    }

    /// The `STATUS=tick N: exit E …` lines: (N, E).
    pub fn ticks(&self) -> Vec<(u64, i32)> {
        self.statuses().iter().map(|t| (t.n, t.exit)).collect()
    }

    /// Every `STATUS=tick N: exit E in MS ms; …` line, with when it arrived.
    pub fn statuses(&self) -> Vec<TickStatus> {
        self.msgs()
            .iter()
            .filter_map(|(at, m)| {
                let rest = m.strip_prefix("STATUS=tick ")?;
                let (n, rest) = rest.split_once(": exit ")?;
                let mut w = rest.split_whitespace();
                let exit = w.next()?.parse().ok()?;
                let ms = match (w.next(), w.next()) {
                    (Some("in"), Some(ms)) => ms.parse().ok()?,
                    _ => 0,
                };
                Some(TickStatus {
                    at: *at,
                    n: n.parse().ok()?,
                    exit,
                    ms,
                })
            })
            .collect()
    }

    /// How many lines the agent has sent so far (cheap: nothing is copied).
    pub fn msg_count(&self) -> usize {
        self.msgs.lock().unwrap().len()
    }

    /// Whether the process has exited (and with what).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().unwrap()
    }

    pub fn count(&self, msg: &str) -> usize {
        self.msgs().iter().filter(|(_, m)| m == msg).count()
    }

    /// Wait until `f` holds, or fail with what the agent sent and logged.
    pub fn wait(&mut self, what: &str, secs: u64, mut f: impl FnMut(&Svc) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < deadline {
            if f(self) {
                return;
            }
            if let Ok(Some(st)) = self.child.try_wait() {
                panic!("service exited ({st}) waiting for {what}:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "timed out after {secs}s waiting for {what}; sent {:?}\n--- log\n{}",
            self.msgs().iter().map(|(_, m)| m).collect::<Vec<_>>(),
            self.log()
        );
    }

    /// Ticks that ended with `exit` after the `from`th.
    pub fn ok_ticks_after(&self, from: usize, exit: i32) -> usize {
        self.ticks()
            .iter()
            .skip(from)
            .filter(|(_, e)| *e == exit)
            .count()
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.pid(), sig) }, 0);
    }

    /// Wait for the exit; its code.
    pub fn exit_within(&mut self, secs: u64) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st.code().unwrap_or(-1);
            }
            assert!(
                Instant::now() < deadline,
                "service did not exit within {secs}s:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The child of `wrapper` that runs the agent (within 10 s): strace forks test children of
/// its own first.
fn wrapped_pid(wrapper: u32) -> i32 {
    let f = format!("/proc/{wrapper}/task/{wrapper}/children");
    let bin = std::fs::canonicalize(BIN).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for p in text.split_whitespace() {
            if std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == bin) {
                return p.parse().expect("a pid");
            }
        }
        assert!(Instant::now() < deadline, "{f}: no agent child within 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for Svc {
    fn drop(&mut self) {
        if self.pid != self.child.id() as i32 {
            // a killed strace detaches its tracee, which would run on
            // SAFETY: kill(2) on our own child's child.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The longest gap between two `WATCHDOG=1` (or from the last one to `until`) after `from`.
pub fn longest_watchdog_gap(msgs: &[(Instant, String)], from: Instant, until: Instant) -> Duration {
    let mut last = from;
    let mut gap = Duration::ZERO;
    for (t, m) in msgs {
        if *t >= from && m == "WATCHDOG=1" {
            gap = gap.max(t.duration_since(last));
            last = *t;
        }
    }
    gap.max(until.duration_since(last))
}

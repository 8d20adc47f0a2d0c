//! `run` as a long-lived service (systemd `Type=notify`): the pieces the loop in `main.rs` uses.
//!
//! - [`Notify`]: sd_notify over `$NOTIFY_SOCKET` (a unix datagram, a few lines of std; no crate:
//!   the protocol is one `sendto` of `KEY=VALUE` lines, and a crate would add its own env
//!   handling we would have to audit for the re-exec below).
//! - [`watchdog_interval`]: `$WATCHDOG_USEC`, for this process only (`$WATCHDOG_PID`).
//! - [`box_offset`] / [`next_wait`]: the fixed per-box offset inside the interval, as the timer's
//!   `RandomizedDelaySec` + `FixedRandomDelay` give one, so a fleet spreads its check-ins.
//! - [`FileId`]: whether the identity file was replaced (inode, size or mtime changed).
//! - [`Marker`]: `service.json` in the state dir, which `status` reads to say which mode runs.
//! - [`reexec`]: a fresh process image under the same pid (systemd keeps tracking it), for a
//!   replaced identity or a context that keeps failing: zitilib cannot unload a context.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

pub mod reload;
pub mod turn;

/// sd_notify: a no-op when the service manager gave no socket (a shell, the laptop unit).
pub struct Notify {
    sock: Option<(UnixDatagram, SocketAddr)>,
}

impl Notify {
    pub fn from_env() -> Notify {
        let sock = std::env::var_os("NOTIFY_SOCKET").and_then(|p| {
            let addr = notify_addr(p.as_encoded_bytes())?;
            let s = UnixDatagram::unbound().ok()?;
            Some((s, addr))
        });
        Notify { sock }
    }

    pub fn enabled(&self) -> bool {
        self.sock.is_some()
    }

    /// Send `msg` (newline-separated `KEY=VALUE`); a lost message is logged, never fatal.
    pub fn send(&self, msg: &str) {
        if let Some((s, addr)) = &self.sock {
            if let Err(e) = s.send_to_addr(msg.as_bytes(), addr) {
                tracing::debug!("sd_notify: {e}");
            }
        }
    }
}

/// `/run/systemd/notify` or `@abstract`; anything else is not a notify socket.
fn notify_addr(p: &[u8]) -> Option<SocketAddr> {
    match p.first()? {
        b'/' => SocketAddr::from_pathname(Path::new(std::ffi::OsStr::from_bytes(p))).ok(),
        b'@' => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(&p[1..]).ok()
        }
        _ => None,
    }
}

/// How often the service manager wants `WATCHDOG=1`, if it watches this process.
pub fn watchdog_interval() -> Option<Duration> {
    watchdog_from(
        std::env::var("WATCHDOG_USEC").ok().as_deref(),
        std::env::var("WATCHDOG_PID").ok().as_deref(),
        std::process::id(),
    )
}

fn watchdog_from(usec: Option<&str>, pid: Option<&str>, me: u32) -> Option<Duration> {
    if let Some(p) = pid {
        if p.trim().parse::<u32>().ok() != Some(me) {
            return None;
        }
    }
    let us: u64 = usec?.trim().parse().ok()?;
    (us > 0).then(|| Duration::from_micros(us))
}

/// This box's fixed offset inside `interval`: from the machine id and the env id, so it is the
/// same across restarts and differs between boxes (and between envs sharing a host image).
pub fn box_offset(machine_id: &str, env_id: &str, interval: Duration) -> Duration {
    let ms = interval.as_millis().max(1) as u64;
    let h = Sha256::digest(format!("monky-deployd\0{}\0{env_id}", machine_id.trim()));
    let n = u64::from_be_bytes(h[..8].try_into().expect("8 bytes"));
    Duration::from_millis(n % ms)
}

/// The machine id (`/etc/machine-id`), or the host name when there is none (containers).
pub fn machine_id() -> String {
    std::fs::read_to_string("/etc/machine-id")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(monky_agent::hostname)
}

/// How long to wait from `now` (ms since the epoch) until this box's next slot: the instants
/// `k * interval + offset`; a slot less than a second away is skipped (the tick just ran).
pub fn next_wait(now_ms: u64, interval: Duration, offset: Duration) -> Duration {
    let iv = (interval.as_millis() as u64).max(1);
    let off = offset.as_millis() as u64 % iv;
    let since = (now_ms + iv - off) % iv; // ms since the last slot
    let mut wait = iv - since;
    if wait < 1000 {
        wait += iv;
    }
    Duration::from_millis(wait)
}

/// The loop's wait from now until this box's next slot ([`next_wait`]); with the `test-hooks`
/// feature `MONKY_DEPLOYD_TEST_INTERVAL_MS` replaces it (the soak's fast loop).
pub fn wait_from_now(interval: Duration, offset: Duration) -> Duration {
    monky_base::testhook::interval(next_wait(now_ms(), interval, offset))
}

/// Top of each loop turn: with the `test-hooks` feature the watchdog test wedges the loop here.
pub fn loop_turn() {
    monky_base::testhook::wedge("loop");
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What says a file was replaced: `install`/`mv` make a new inode, an editor may keep it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
}

impl FileId {
    pub fn of(path: &Path) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileId {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        })
    }
}

/// `service.json` in the state dir while the service runs: its pid, since when, its ticks.
pub struct Marker {
    path: PathBuf,
    mode: &'static str,
    started: u64,
}

#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
pub struct MarkerData {
    pub mode: String,
    pub pid: u32,
    pub started_at: u64,
    pub ticks: u64,
    pub last_tick_at: u64,
    pub last_exit: i32,
    pub watchdog_s: Option<u64>,
}

impl Marker {
    /// `mode`: `service`, or `laptop` for the laptop unit's loop.
    pub fn new(state_dir: &Path, mode: &'static str) -> Marker {
        Marker {
            path: state_dir.join("service.json"),
            mode,
            started: monky_base::clock::now(),
        }
    }

    pub fn write(&self, ticks: u64, last_exit: i32, watchdog: Option<Duration>) {
        let d = MarkerData {
            mode: self.mode.into(),
            pid: std::process::id(),
            started_at: self.started,
            ticks,
            last_tick_at: monky_base::clock::now(),
            last_exit,
            watchdog_s: watchdog.map(|w| w.as_secs()),
        };
        let tmp = self.path.with_extension("json.tmp");
        let text = serde_json::to_vec(&d).expect("plain struct");
        if let Err(e) = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &self.path)) {
            tracing::debug!("{}: {e}", self.path.display());
        }
    }

    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The running service per `service.json`, if its process is alive.
pub fn running(state_dir: &Path) -> Option<MarkerData> {
    let d: MarkerData =
        serde_json::from_slice(&std::fs::read(state_dir.join("service.json")).ok()?).ok()?;
    let pid = libc::pid_t::try_from(d.pid).ok()?;
    // SAFETY: signal 0 only checks that the pid exists (EPERM: it does, as another user).
    let alive = unsafe { libc::kill(pid, 0) } == 0
        || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    alive.then_some(d)
}

/// Set in the environment of a process re-executed to take up a reload: it owes systemd the
/// reload's `READY=1`.
const RELOADED: &str = "MONKY_DEPLOYD_RELOADED";

/// Replace this process with a fresh copy of itself (same pid, arguments, environment). Only
/// returns on failure. Called between ticks: no lock is held, state is saved.
pub fn reexec(reloading: bool) -> io::Error {
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_else(|| "monky-deployd".into());
    use std::io::Write;
    let _ = io::stderr().flush();
    let mut cmd = std::process::Command::new("/proc/self/exe");
    cmd.arg0(argv0).args(args).env_remove(RELOADED);
    if reloading {
        cmd.env(RELOADED, "1");
    }
    cmd.exec()
}

/// This process was re-executed to take up a reload (see [`reexec`]).
pub fn reloaded() -> bool {
    std::env::var_os(RELOADED).is_some_and(|v| v == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watchdog_only_for_this_pid_and_a_positive_interval() {
        assert_eq!(
            watchdog_from(Some("2000000"), None, 7),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            watchdog_from(Some("2000000"), Some("7"), 7),
            Some(Duration::from_secs(2))
        );
        assert_eq!(watchdog_from(Some("2000000"), Some("8"), 7), None);
        assert_eq!(watchdog_from(Some("0"), None, 7), None);
        assert_eq!(watchdog_from(Some("x"), None, 7), None);
        assert_eq!(watchdog_from(None, Some("7"), 7), None);
    }

    #[test]
    fn offset_is_fixed_per_box_and_spread_across_boxes() {
        let iv = Duration::from_secs(60);
        let a = box_offset("m1", "env-a", iv);
        assert_eq!(a, box_offset("m1\n", "env-a", iv), "stable across calls");
        assert!(a < iv);
        // 600 boxes over 60 one-second buckets: none empty, none with more than 3x its share
        let mut buckets = [0u32; 60];
        for i in 0..600 {
            let o = box_offset(&format!("machine-{i}"), "env", iv);
            buckets[o.as_secs() as usize] += 1;
        }
        assert!(buckets.iter().all(|&n| n > 0 && n <= 30), "{buckets:?}");
    }

    #[test]
    fn next_wait_lands_on_the_box_slot() {
        let iv = Duration::from_secs(60);
        let off = Duration::from_secs(17);
        // at 00:00:10 the next slot is 00:00:17
        assert_eq!(next_wait(10_000, iv, off), Duration::from_secs(7));
        // at 00:00:17.5 (just after the slot) the next is 00:01:17
        assert_eq!(next_wait(17_500, iv, off), Duration::from_millis(59_500));
        // 0.5 s before a slot: that one is skipped
        assert_eq!(next_wait(16_500, iv, off), Duration::from_millis(60_500));
        // on any start, wait + now is a slot
        for now in [0u64, 1, 59_999, 123_456_789] {
            let w = next_wait(now, iv, off).as_millis() as u64;
            assert_eq!((now + w) % 60_000, 17_000, "{now}");
            assert!((1000..=61_000).contains(&w), "{now}: {w}");
        }
    }

    #[test]
    fn notify_reaches_a_bound_datagram_socket() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("notify");
        let rx = UnixDatagram::bind(&p).unwrap();
        let n = Notify {
            sock: Some((
                UnixDatagram::unbound().unwrap(),
                notify_addr(p.as_os_str().as_encoded_bytes()).unwrap(),
            )),
        };
        n.send("READY=1\nSTATUS=tick 1");
        let mut buf = [0u8; 64];
        let k = rx.recv(&mut buf).unwrap();
        assert_eq!(&buf[..k], b"READY=1\nSTATUS=tick 1");
        assert!(notify_addr(b"relative").is_none());
        assert!(notify_addr(b"").is_none());
        assert!(notify_addr(b"@abstract-name").is_some());
    }

    #[test]
    fn file_id_changes_when_the_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("id.json");
        std::fs::write(&p, "a").unwrap();
        let a = FileId::of(&p).unwrap();
        assert_eq!(Some(a.clone()), FileId::of(&p));
        let q = dir.path().join("new.json");
        std::fs::write(&q, "a").unwrap();
        std::fs::rename(&q, &p).unwrap();
        assert_ne!(Some(a), FileId::of(&p), "new inode");
        assert_eq!(FileId::of(&dir.path().join("missing")), None);
    }

    #[test]
    fn marker_says_running_only_while_the_pid_lives() {
        let dir = tempfile::tempdir().unwrap();
        let m = Marker::new(dir.path(), "service");
        assert!(running(dir.path()).is_none());
        m.write(3, 0, Some(Duration::from_secs(1200)));
        let d = running(dir.path()).expect("this process is alive");
        assert_eq!(
            (d.mode.as_str(), d.ticks, d.pid),
            ("service", 3, std::process::id())
        );
        // a dead pid: a marker left by a killed service is not a running one
        let mut dead = d.clone();
        dead.pid = i32::MAX as u32;
        std::fs::write(
            dir.path().join("service.json"),
            serde_json::to_vec(&dead).unwrap(),
        )
        .unwrap();
        assert!(running(dir.path()).is_none());
        m.remove();
        assert!(!dir.path().join("service.json").exists());
    }
}

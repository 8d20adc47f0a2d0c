//! `monky-deployd reload --pid PID` (the service unit's `ExecReload`) and the service's answer.
//!
//! A plain `kill -HUP` made `systemctl reload` succeed whatever the service then decided. Now
//! the command checks the configuration first (as the service will) and does not signal when it
//! is bad; else it sends SIGHUP and waits for `reload.json` in the state dir, which the service
//! writes (atomically) once it has decided: `ok`, `afresh` (taken up by re-executing) or
//! `refused` with why. An answer counts when it names PID and was written after the signal
//! (CLOCK_BOOTTIME, which every process shares and no clock step moves). No secrets in it: the
//! reason is a redacted config or client error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tracing::{error, info};

use monky_agent::Exit;

/// The service's answer to one SIGHUP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub pid: u32,
    /// CLOCK_BOOTTIME in ms when the service decided.
    pub at_ms: u64,
    pub outcome: Outcome,
    #[serde(default)]
    pub why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The new configuration runs.
    Ok,
    /// Good, and taken up by a fresh start in the same pid.
    Afresh,
    /// Refused: the running configuration stays.
    Refused,
}

/// No answer to a SIGHUP (the command's side).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WaitError {
    #[error("process {0} is gone")]
    Gone(u32),
    #[error("no answer from process {pid} in {} within {} s", .path.display(), .limit.as_secs())]
    NoAnswer {
        pid: u32,
        path: PathBuf,
        limit: Duration,
    },
}

/// A SIGHUP that could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum HangupError {
    /// Not a pid the command may signal (0, 1, or beyond `pid_t`).
    #[error("{0} is not a service pid")]
    NotAService(u32),
    #[error("SIGHUP to {pid}: {source}")]
    Signal {
        pid: u32,
        #[source]
        source: std::io::Error,
    },
}

/// `reload --pid PID`: check the configuration as the service will, then signal and wait for
/// the service's answer. `Exit::Fail` when refused, before or after the signal.
pub fn request(path: &Path, pid: u32, timeout_s: u64) -> Exit {
    let refuse = |why: String| {
        error!("reload refused, the service was not signalled: {why}");
        Exit::Fail
    };
    let cfg = match monky_host::config::Config::load(path) {
        Ok(c) => c,
        Err(e) => return refuse(e.to_string()),
    };
    if let Err(f) = monky_agent::check_config(&cfg) {
        return refuse(monky_base::redact::redact(f.message()));
    }
    let limit = Duration::from_secs(if timeout_s == 0 {
        cfg.tick_budget_s + 60
    } else {
        timeout_s
    });
    let since = boot_ms();
    if let Err(e) = hangup(pid) {
        error!("reload: {e}");
        return Exit::Fail;
    }
    match wait_answer(
        &cfg.state_dir,
        pid,
        since,
        limit,
        Duration::from_millis(200),
    ) {
        Ok(a) if a.outcome == Outcome::Ok => {
            info!("reload: process {pid} runs the new configuration");
            Exit::Ok
        }
        Ok(a) if a.outcome == Outcome::Afresh => {
            info!("reload: process {pid} starts afresh with the new configuration");
            Exit::Ok
        }
        Ok(a) => {
            error!(
                "reload: process {pid} refused the configuration and keeps the running one: {}",
                a.why
            );
            Exit::Fail
        }
        Err(e) => {
            error!("reload: {e}");
            Exit::Fail
        }
    }
}

pub fn answer_path(state_dir: &Path) -> PathBuf {
    state_dir.join("reload.json")
}

/// CLOCK_BOOTTIME in milliseconds.
pub fn boot_ms() -> u64 {
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is a properly sized out-parameter.
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// The service's side: the answer in each of `state_dirs` (the running configuration's, and
/// the new one's when it moves the state dir, where the command looks).
pub fn answer(state_dirs: &[&Path], outcome: Outcome, why: &str) {
    let a = Answer {
        pid: std::process::id(),
        at_ms: boot_ms(),
        outcome,
        why: monky_base::redact::redact(why),
    };
    let body = serde_json::to_vec(&a).expect("json");
    for d in state_dirs {
        if let Err(e) = monky_base::files::write_unsynced(&answer_path(d), &body, 0o600) {
            tracing::warn!("reload answer: {e}");
        }
    }
}

/// The command's side: the answer of `pid` given after `since_ms`, polling `state_dir` every
/// `poll` for at most `limit`. `Err` when the process went away or no answer came.
pub fn wait_answer(
    state_dir: &Path,
    pid: u32,
    since_ms: u64,
    limit: Duration,
    poll: Duration,
) -> Result<Answer, WaitError> {
    let path = answer_path(state_dir);
    let start = std::time::Instant::now();
    loop {
        let a = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Answer>(&b).ok());
        if let Some(a) = a.filter(|a| a.pid == pid && a.at_ms >= since_ms) {
            return Ok(a);
        }
        if !alive(pid) {
            return Err(WaitError::Gone(pid));
        }
        if start.elapsed() >= limit {
            return Err(WaitError::NoAnswer { pid, path, limit });
        }
        std::thread::sleep(poll);
    }
}

/// Whether `pid` exists (EPERM: it does, as another user's).
pub fn alive(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence and permission.
    p > 0
        && (unsafe { libc::kill(p, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// Send SIGHUP to `pid`.
pub fn hangup(pid: u32) -> Result<(), HangupError> {
    let p = libc::pid_t::try_from(pid)
        .ok()
        .filter(|p| *p > 1)
        .ok_or(HangupError::NotAService(pid))?;
    // SAFETY: kill takes plain integers.
    if unsafe { libc::kill(p, libc::SIGHUP) } != 0 {
        return Err(HangupError::Signal {
            pid,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_pids_answer_after_the_signal_counts() {
        let d = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let fast = Duration::from_millis(10);
        let short = Duration::from_millis(300);
        // an answer from before the signal (an earlier reload) does not count
        answer(&[d.path()], Outcome::Ok, "");
        let since = boot_ms() + 1;
        std::thread::sleep(Duration::from_millis(5));
        let e = wait_answer(d.path(), me, since, short, fast).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "no answer from process {me} in {} within 0 s",
                answer_path(d.path()).display()
            )
        );
        // the service's refusal, written while the command waits
        let dir = d.path().to_path_buf();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            answer(&[&dir], Outcome::Refused, "interval_s 1 must be 5-3600");
        });
        let a = wait_answer(d.path(), me, since, Duration::from_secs(10), fast).unwrap();
        t.join().unwrap();
        assert_eq!(a.outcome, Outcome::Refused);
        assert_eq!(a.why, "interval_s 1 must be 5-3600");
        // another pid's answer is not ours
        let e = wait_answer(d.path(), me + 1, since, short, fast).unwrap_err();
        assert!(
            matches!(e, WaitError::Gone(_) | WaitError::NoAnswer { .. }),
            "{e}"
        );
        let body = std::fs::read_to_string(answer_path(d.path())).unwrap();
        assert!(body.contains("\"outcome\":\"refused\""), "{body}");
    }

    #[test]
    fn a_gone_process_ends_the_wait_at_once() {
        let d = tempfile::tempdir().unwrap();
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        let t = std::time::Instant::now();
        let e = wait_answer(
            d.path(),
            pid,
            0,
            Duration::from_secs(30),
            Duration::from_millis(10),
        )
        .unwrap_err();
        assert_eq!(e, WaitError::Gone(pid));
        assert_eq!(e.to_string(), format!("process {pid} is gone"));
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(matches!(hangup(pid), Err(HangupError::Signal { .. })));
        assert!(
            matches!(hangup(1), Err(HangupError::NotAService(1))),
            "never init"
        );
        assert!(alive(std::process::id()));
    }
}

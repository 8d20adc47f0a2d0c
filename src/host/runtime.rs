//! The container runtime. The compose CLI (plugin v2 or standalone v1) does what only it can do:
//! pull, up, down, logs, config. Everything read-only — container state and health, the Docker
//! data root, image pruning — goes straight to the Engine API on the unix socket, so a heartbeat
//! tick spawns no process at all.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Request;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use serde::Deserialize;

use monky_wire::http::Cause;
use monky_wire::transport::UnixConnector;

use crate::config::{ComposeCmd, Config};
use monky_wire::tenancy::Container;

mod compose;
mod engine;
mod logtail;

pub use compose::*;
pub use engine::*;
pub use logtail::{LogTail, TailBuf};

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("docker engine at {socket}: {msg}")]
    Engine { socket: String, msg: String },
    #[error("{what} failed (rc={rc}): {output}")]
    Compose {
        what: String,
        rc: i32,
        output: String,
    },
    #[error("{0}")]
    Spawn(String),
    /// SIGTERM arrived during this compose step (`--once`): the child was killed.
    #[error("interrupted during {0}")]
    Interrupted(String),
}

impl RuntimeError {
    pub fn output(&self) -> &str {
        match self {
            RuntimeError::Compose { output, .. } => output,
            _ => "",
        }
    }
}

/// Wall time spent waiting on the compose CLI and on containers to become healthy, so a tick's
/// own cost can be told apart from docker's (logged at the end of each tick). One meter per
/// agent; its compose runs hold clones.
#[derive(Clone, Debug, Default)]
pub struct DockerWait(Arc<AtomicU64>);

impl DockerWait {
    pub fn add(&self, since: Instant) {
        let ms = u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.fetch_add(ms, Ordering::Relaxed);
    }

    pub fn ms(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Free bytes for unprivileged writers on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path; st is a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Converged: every expected service has a running container, none starting or unhealthy.
pub fn converged(expected: &[String], cs: &[Container]) -> bool {
    !cs.is_empty()
        && expected.iter().all(|s| cs.iter().any(|c| &c.service == s))
        && !cs.iter().any(|c| unwell(c) || pending(c))
}

/// As [`converged`], but a job still running is fine: what a heartbeat asks of what runs.
pub fn well(expected: &[String], cs: &[Container]) -> bool {
    !cs.is_empty()
        && expected.iter().all(|s| cs.iter().any(|c| &c.service == s))
        && !cs.iter().any(unwell)
}

/// A long-running service: not running, or running with a health check that is not (yet)
/// healthy. A job: ended with anything but exit 0 (running or waiting to start is not unwell:
/// see [`pending`]).
pub fn unwell(c: &Container) -> bool {
    if c.job {
        return match c.state.as_str() {
            "exited" => c.exit_code != Some(0),
            "dead" | "removing" => true,
            _ => false,
        };
    }
    c.state != "running" || !(c.health.is_empty() || c.health == "healthy")
}

/// A job that has not finished yet (created and waiting for its dependencies, or running).
pub fn pending(c: &Container) -> bool {
    c.job && !matches!(c.state.as_str(), "exited" | "dead" | "removing")
}

/// A job that ended badly: `JOB_FAILED: <service> exited <code>`.
pub fn job_failed(c: &Container) -> Option<String> {
    (c.job && unwell(c)).then(|| {
        format!(
            "JOB_FAILED: {} exited {}",
            c.service,
            c.exit_code
                .map(|e| e.to_string())
                .unwrap_or_else(|| c.state.clone())
        )
    })
}

/// Marks the containers of `jobs` (services compose waits on with
/// `service_completed_successfully`, or labelled `monky.job`) as jobs.
pub fn mark_jobs(cs: &mut [Container], jobs: &std::collections::BTreeSet<String>) {
    for c in cs {
        c.job |= jobs.contains(&c.service);
    }
}

#[cfg(test)]
mod tests;

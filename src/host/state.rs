//! What the agent keeps under `state_dir`: `state.json` (with `state.synced.json`, its last
//! fsynced copy), `bao.token`, the tick `lock`; the private-file writer every other module
//! uses is in `files.rs`.
//!
//! Durability invariant: every field but the heartbeat ones ([`State::clear_heartbeat`]) is on
//! disk behind an fsync before the tick ends. A heartbeat that changed nothing else writes
//! `state.json` without fsync — allowed only while `state.synced.json` already holds every
//! other field as written, so a power cut that tears that write loses timestamps and counters,
//! never a token, a release or a hold.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

pub use monky_base::files::{ensure_dir, swap_symlink, write_private, write_unsynced, StateError};
use monky_base::files::{write_with, Sync};

pub use monky_base::clock::now;

/// Where the current OpenBao token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenSource {
    Bootstrap,
    Lease,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenMeta {
    pub source: TokenSource,
    pub obtained_at: u64,
    /// Unix seconds when the TTL runs out, as last seen (login, lookup or renew).
    pub expires_at: u64,
    pub renewable: bool,
    pub grant_jti: String,
    pub env_id: String,
    /// The same expiry on CLOCK_BOOTTIME (seconds), with the boot it belongs to: immune to
    /// wall-clock steps, and counting suspended time as OpenBao does.
    #[serde(default)]
    pub expires_boot: u64,
    #[serde(default)]
    pub boot_id: String,
}

impl TokenMeta {
    /// Records an expiry `ttl` seconds from now on both clocks.
    pub fn set_ttl(&mut self, ttl: u64) {
        self.set_ttl_on(ttl, now(), &BootClock::now());
    }

    /// [`TokenMeta::set_ttl`] at given readings of the wall and boot clocks (tests inject them).
    pub fn set_ttl_on(&mut self, ttl: u64, wall: u64, boot: &BootClock) {
        self.expires_at = wall.saturating_add(ttl);
        self.expires_boot = boot.secs.saturating_add(ttl);
        self.boot_id = boot.boot_id.clone();
    }

    /// Seconds left by the boot clock; `None` after a reboot or for state written before 0.3
    /// (the caller then asks OpenBao).
    pub fn remaining(&self) -> Option<u64> {
        self.remaining_on(&BootClock::now())
    }

    /// [`TokenMeta::remaining`] on a given boot clock reading (tests inject one).
    pub fn remaining_on(&self, clock: &BootClock) -> Option<u64> {
        if self.expires_boot == 0 || self.boot_id.is_empty() || self.boot_id != clock.boot_id {
            return None;
        }
        Some(self.expires_boot.saturating_sub(clock.secs))
    }
}

/// A reading of the boot clock: seconds on CLOCK_BOOTTIME and the boot they belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootClock {
    pub secs: u64,
    pub boot_id: String,
}

impl BootClock {
    pub fn now() -> BootClock {
        BootClock {
            secs: boottime(),
            boot_id: boot_id(),
        }
    }
}

/// Seconds on CLOCK_BOOTTIME (monotonic across processes of one boot, suspend included).
pub fn boottime() -> u64 {
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: ts is a properly sized out-parameter.
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64
}

/// This boot's id (a reboot resets CLOCK_BOOTTIME). Under the units' `ProcSubset=pid` /proc/sys
/// is hidden: the boot is then named by when it happened (wall clock minus CLOCK_BOOTTIME, to the
/// minute). A clock step of a minute or more makes it look like a new boot, which only drops the
/// boot-clock reading for the wall clock; two boots cannot share a minute.
pub fn boot_id() -> String {
    if let Ok(s) = std::fs::read_to_string("/proc/sys/kernel/random/boot_id") {
        return s.trim().to_string();
    }
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match wall.checked_sub(boottime()) {
        Some(booted) if wall > 0 => format!("booted-at-{}", booted / 60),
        _ => String::new(),
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub env_id: String,
    pub applied_sha: Option<String>,
    pub applied_serial: Option<u64>,
    pub desired_sha: Option<String>,
    pub last_action: Option<String>,
    pub last_checkin: Option<u64>,
    pub last_report: Option<u64>,
    pub last_result: Option<String>,
    pub last_error: Option<String>,
    pub token: Option<TokenMeta>,
    /// A lease was rate-limited while an older token still worked: swap on a later tick (0.1.6).
    pub lease_swap_due: bool,
    /// What the metrics file counts across ticks.
    pub counters: crate::metrics::Counters,
    /// The last sha an automatic rollback replaced (`auto_rollback`): not applied again until
    /// the desired sha changes or `retry_failed_after_s` has passed.
    pub failed_release: Option<FailedRelease>,
    /// Restart counts of the running release's containers (engine id → count) at the last
    /// tick: a rise between ticks is a crash loop.
    pub restarts: std::collections::BTreeMap<String, u64>,
    /// A sha whose apply failed: when it may be tried again (backoff).
    pub retry: Option<RetryHold>,
    /// When the applied sha was applied (unix seconds), and the release that ran healthy
    /// before it: a crash loop within `rollback_window_s` goes back to that one.
    pub applied_at: Option<u64>,
    pub replaced_healthy: Option<String>,
    /// Disk reclaim and diagnostics bookkeeping (issue 22).
    pub care: crate::care::CareState,
    /// Self-update bookkeeping (issue 21).
    pub agent_update: AgentUpdateState,
    /// The services and jobs of the last release whose compose.yaml a tick parsed: a heartbeat
    /// reads the file but parses it again only when its bytes (or the agent build) changed.
    pub shape: Option<ShapeMemo>,
    /// The highest release-statement serial accepted (and its sha); also in `high-water.json`.
    /// Never lowered: loading takes the higher of the two copies.
    pub high_water: Option<monky_boundary::statement::HighWater>,
    /// When the running release's statement expires (unix seconds); past it, heartbeats say
    /// `STATEMENT_EXPIRED` (what runs keeps running).
    pub statement_expires_at: Option<i64>,
    /// The update lock that holds the desired release back (PROTOCOL 0.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_hold: Option<LockHold>,
    /// The durable fields as `state.synced.json` holds them, when they are this state's.
    #[serde(skip)]
    pub(crate) synced: Option<Vec<u8>>,
}

/// What the agent remembers about self-update between ticks (in `state.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentUpdateState {
    /// The version tenancy last asked for (metrics, `status`).
    pub desired: Option<String>,
    /// The last version the update unit reverted (`plan`, `status`).
    pub reverted: Option<String>,
    /// Every package version reverted here (its own control Version; the newest
    /// `selfupdate::REVERTED_KEPT`): refused whatever tenancy labels it, and whenever it is
    /// offered again.
    pub reverted_versions: Vec<String>,
    /// An offer (version, sha256) this box refused: not downloaded again while tenancy keeps
    /// offering exactly it.
    pub refused: Option<(String, String)>,
    /// Notes not yet reported (no running sha to report them about yet).
    pub notes: Vec<String>,
}

impl AgentUpdateState {
    /// Whether this package version was reverted on this box.
    pub fn was_reverted(&self, version: &str) -> bool {
        self.reverted.as_deref() == Some(version)
            || self.reverted_versions.iter().any(|v| v == version)
    }
}

/// A release's shape (services, one-shot jobs) by the sha256 of the compose.yaml it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShapeMemo {
    pub compose_sha256: String,
    /// The agent build that parsed it (a later build may read the same file differently).
    pub build: String,
    pub services: Vec<String>,
    pub jobs: std::collections::BTreeSet<String>,
}

/// Backoff for a failing release: attempt `attempts` failed; the next one not before `next_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryHold {
    pub sha: String,
    pub attempts: u32,
    /// Unix seconds.
    pub next_at: u64,
}

/// An app's update lock holding back a new release (PROTOCOL 0.6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHold {
    /// The sha that waits, or `down`.
    pub what: String,
    pub service: String,
    /// Unix seconds of the first tick that deferred.
    pub since: u64,
}

/// A release that failed and was rolled back (issue 11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedRelease {
    pub sha: String,
    /// Unix seconds of the failure.
    pub at: u64,
    /// The sha brought back.
    pub rolled_back_to: String,
    /// Whether it came back healthy.
    pub rollback_ok: bool,
}

/// The fsynced copy of `state.json` beside it.
pub fn synced_path(path: &Path) -> PathBuf {
    path.with_file_name("state.synced.json")
}

impl State {
    /// `state.json`; its fsynced copy when it does not parse (a power cut tore a heartbeat's
    /// write). A missing `state.json` is a fresh state, whatever the copy holds: moving it
    /// aside is how an operator starts over.
    pub fn load(path: &Path) -> Result<State, StateError> {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(State::default()),
            Err(e) => return Err(StateError::new("cannot read state", path, e)),
        };
        let copy = fs::read(synced_path(path))
            .ok()
            .and_then(|b| serde_json::from_slice::<State>(&b).ok());
        let mut st = match serde_json::from_slice::<State>(&bytes) {
            Ok(st) => st,
            Err(e) => match copy {
                Some(mut c) => {
                    tracing::warn!(
                        "{} does not parse ({e}); using its last fsynced copy {}",
                        path.display(),
                        synced_path(path).display()
                    );
                    c.synced = Some(c.durable_view());
                    return Ok(c);
                }
                None => {
                    return Err(StateError::new(
                        "state file is corrupt (move it aside to start fresh)",
                        path,
                        e,
                    ))
                }
            },
        };
        let view = st.durable_view();
        st.synced = copy.filter(|c| c.durable_view() == view).map(|_| view);
        Ok(st)
    }

    /// Written with fsync, and linked as `state.synced.json`: what a later heartbeat-only
    /// write may rely on.
    pub fn save(&mut self, path: &Path) -> Result<(), StateError> {
        let body = self.encode(path)?;
        self.synced = None;
        if write_with(path, &body, 0o600, Sync::Fsync(Some(&synced_path(path))))? {
            self.synced = Some(self.durable_view());
        }
        Ok(())
    }

    /// The end of a tick: without fsync when only heartbeat fields changed since the fsynced
    /// copy (see the module's invariant), else [`State::save`].
    pub fn save_tick(&mut self, path: &Path) -> Result<(), StateError> {
        if self.synced.as_ref() != Some(&self.durable_view()) {
            return self.save(path);
        }
        write_with(path, &self.encode(path)?, 0o600, Sync::None).map(|_| ())
    }

    fn encode(&self, path: &Path) -> Result<Vec<u8>, StateError> {
        serde_json::to_vec_pretty(self).map_err(|e| StateError::new("encode state", path, e))
    }

    /// Clears what a heartbeat changes on every tick: check-in and report times, counters.
    pub fn clear_heartbeat(&mut self) {
        self.last_checkin = None;
        self.last_report = None;
        self.counters = Default::default();
    }

    /// The high-water mark as every reader judges it: the higher of this state's and the one
    /// in `file` (`high-water.json`), so a restored older state file does not lower it.
    pub fn high_water_mark(&self, file: &Path) -> Option<monky_boundary::statement::HighWater> {
        let kept = fs::read(file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        monky_boundary::statement::HighWater::max(self.high_water.clone(), kept)
    }

    fn durable_view(&self) -> Vec<u8> {
        let mut v = self.clone();
        v.clear_heartbeat();
        v.synced = None;
        serde_json::to_vec(&v).unwrap_or_default()
    }
}

pub fn read_token(path: &Path) -> Result<Option<Zeroizing<String>>, StateError> {
    match fs::read_to_string(path) {
        Ok(s) => {
            let s = Zeroizing::new(s);
            let t = s.trim();
            Ok(if t.is_empty() {
                None
            } else {
                Some(Zeroizing::new(t.to_string()))
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StateError::new("cannot read token", path, e)),
    }
}

/// The tick lock. Held for the life of the value; the kernel drops it if the process dies.
pub struct TickLock {
    _file: File,
}

/// How long a held lock is re-tried before it is believed. The lock is a `flock` on an open
/// file description, and a child this process forks (compose, dpkg-deb, a test's helper on
/// another thread) holds a copy of the descriptor from fork until exec closes it: for that
/// moment the lock looks held although no tick runs. A real tick holds it for seconds.
const HELD_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// `Ok(None)` when another tick holds the lock (still held after [`HELD_GRACE`]).
pub fn try_lock(path: &Path) -> Result<Option<TickLock>, StateError> {
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| StateError::new("cannot open lock", path, e))?;
    let start = std::time::Instant::now();
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(Some(TickLock { _file: f })),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < HELD_GRACE => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(StateError::new("cannot lock", path, e))
            }
        }
    }
}

/// Names of the release directories, oldest first (by mtime).
pub fn releases(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<(std::time::SystemTime, PathBuf)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| {
            (
                e.metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH),
                e.path(),
            )
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests;

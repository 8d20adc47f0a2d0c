//! `monky-deployd update-install`: the root half of self-update, run by
//! `monky-deployd-update.service` when the agent has staged a package (issue 21).
//!
//! Trust nothing in the agent's directory: the package is copied out (no symlinks followed) into
//! root's own `keep_dir` and judged there again with the keys of `/etc/monky-deployd/config.yaml`.
//! Every installed package stays in `keep_dir/packages/` so the one running before can be put
//! back. `probation.json` is written before `dpkg -i`, so an installer killed at any point finds
//! it on its next start and finishes the probation (and, failing that, reverts).

use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{self as su, Staged};
use crate::config::Config;
use crate::state::{self, StateError};
use monky_boundary::signing::{KeyError, Keys};

mod probation;
use probation::{interrupted, probation};

/// Where things are and what runs them (flags of `update-install`; tests point them at a
/// sandbox).
#[derive(Debug, Clone)]
pub struct Opts {
    pub keep_dir: PathBuf,
    pub dpkg: String,
    pub dpkg_query: String,
    /// Reads a package's own control fields.
    pub dpkg_deb: String,
    pub systemctl: String,
    /// The agent's units, try-restarted (those running) after an install or a revert.
    pub units: Vec<String>,
    /// Where the box's instances are configured: every named one's units are restarted too.
    pub etc_dir: PathBuf,
    pub poll: Duration,
    /// How long to wait for a running tick to let go of the lock.
    pub lock_wait: Duration,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            keep_dir: "/var/lib/monky-deployd-update".into(),
            dpkg: "dpkg".into(),
            dpkg_query: "dpkg-query".into(),
            dpkg_deb: "dpkg-deb".into(),
            systemctl: "systemctl".into(),
            units: AGENT_UNITS.iter().map(|u| u.to_string()).collect(),
            etc_dir: crate::instance::ETC_DIR.into(),
            poll: Duration::from_secs(5),
            lock_wait: Duration::from_secs(1200),
        }
    }
}

/// `keep_dir/probation.json`: an install whose new agent has yet to tick.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Probation {
    pub started_at: u64,
    pub new: String,
    pub old: String,
    pub arch: String,
}

const PKG: &str = "monky-deployd";

/// Why `update-install` installed nothing (or could not finish): the journal's line and, for
/// a staged package, the agent's `AGENT_UPDATE_FAILED` note.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(transparent)]
    Keys(#[from] KeyError),
    #[error("agent_signing_keys is empty: self-update is off on this box")]
    Off,
    #[error(transparent)]
    State(#[from] StateError),
    #[error("{}: corrupt ({source}); move it aside", .path.display())]
    CorruptProbation {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("staged.json unreadable: {0}")]
    StagedUnreadable(#[source] serde_json::Error),
    /// The offer or the package itself is refused.
    #[error(transparent)]
    Package(#[from] su::PackageError),
    /// As `Package`, about the package labelled `version`.
    #[error("{version}: {source}")]
    PackageOf {
        version: String,
        #[source]
        source: su::PackageError,
    },
    #[error("{0} was reverted on this box")]
    Reverted(String),
    #[error("staged package name {0:?} is not this box's")]
    NotThisBox(String),
    #[error("{}: {source}", .path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{}: not a package file", .0.display())]
    NotAPackage(PathBuf),
    #[error(
        "no package of the running {running} in {} to revert to (install.sh keeps the \
         ones it installs; otherwise copy its .deb there: OPERATIONS.md, Self-update)",
        .dir.display()
    )]
    NothingToRevertTo { running: String, dir: PathBuf },
    #[error("a tick held {} for {:?}", .path.display(), .waited)]
    Locked { path: PathBuf, waited: Duration },
    /// dpkg or dpkg-query would not run.
    #[error("{tool}: {source}")]
    Tool {
        tool: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read the installed {PKG} version: {0}")]
    NoInstalledVersion(String),
    /// dpkg ran and failed: its status and the last line it wrote to stderr.
    #[error("{status}: {said}")]
    Dpkg {
        status: std::process::ExitStatus,
        said: String,
    },
    #[error("dpkg -i {package}: {source} (still {running})")]
    NotInstalled {
        package: String,
        running: String,
        #[source]
        source: Box<InstallError>,
    },
    #[error("dpkg -i {package}: {source}; putting {running} back failed too: {back}")]
    NotPutBack {
        package: String,
        running: String,
        #[source]
        source: Box<InstallError>,
        back: Box<InstallError>,
    },
    /// Probation ran out and the old package would not go on again (probation.json stays).
    #[error("reverting {new} → {old}: dpkg -i: {source}")]
    NotReverted {
        new: String,
        old: String,
        #[source]
        source: Box<InstallError>,
    },
    #[error("putting {old} back after an interrupted install: {source}")]
    NotRestored {
        old: String,
        #[source]
        source: Box<InstallError>,
    },
}

/// The units that run the agent's binary: the timer's oneshot, the service, the laptop loop.
/// The package's postinst leaves them to the installer (see [`UNDER_INSTALLER`]).
pub const AGENT_UNITS: [&str; 3] = [
    "monky-deployd.service",
    "monky-deployd-run.service",
    "monky-deployd-laptop.service",
];

/// Set for dpkg (which passes it to the maintainer scripts): the postinst then does not
/// restart the agent's units. It runs while the installer holds the tick lock, and a service
/// restarted then would skip its first tick (lock busy) and tick a minute later, eating into
/// the probation.
pub const UNDER_INSTALLER: &str = "MONKY_DEPLOYD_UPDATE_INSTALL";

/// One run: finish a probation left open, else install what is staged. The line for the
/// journal, or why nothing was installed (exit 1).
pub fn run(cfg: &Config, o: &Opts) -> Result<String, InstallError> {
    let keys = Keys::parse_key("agent_signing_keys", &cfg.agent_signing_keys)?;
    if keys.is_empty() {
        return Err(InstallError::Off);
    }
    state::ensure_dir(&o.keep_dir.join("packages"), 0o700)?;
    state::ensure_dir(&o.keep_dir, 0o700)?;
    let prob = o.keep_dir.join("probation.json");
    if let Ok(b) = read_nofollow(&prob) {
        let p: Probation =
            serde_json::from_slice(&b).map_err(|source| InstallError::CorruptProbation {
                path: prob.clone(),
                source,
            })?;
        if installed_version(o).ok().as_deref() != Some(p.new.as_str()) {
            // a run killed before its dpkg finished: put the old package back for sure
            return interrupted(cfg, o, &p);
        }
        return probation(cfg, o, &p);
    }
    let upd = cfg.update_dir();
    let Ok(b) = read_nofollow(&su::staged_json(&upd)) else {
        return Ok("nothing staged".into());
    };
    let staged: Result<Staged, InstallError> =
        serde_json::from_slice(&b).map_err(InstallError::StagedUnreadable);
    let res = staged.and_then(|s| install(cfg, o, &keys, &s).map(|p| (s, p)));
    match res {
        Ok((_, Some(p))) => probation(cfg, o, &p),
        Ok((s, None)) => {
            clean_staged(cfg, Some(&s));
            Ok(format!("{} is installed already", s.version))
        }
        Err(why) => {
            let s = serde_json::from_slice::<Staged>(&b).ok();
            tell(
                cfg,
                &su::Outcome {
                    note: format!("AGENT_UPDATE_FAILED: {why}"),
                    reverted: None,
                    refused: s.as_ref().map(|s| (s.version.clone(), s.sha256.clone())),
                    at: state::now(),
                },
            );
            clean_staged(cfg, s.as_ref());
            Err(why)
        }
    }
}

/// Judge, keep, install. `None` when `staged` is what runs.
fn install(
    cfg: &Config,
    o: &Opts,
    keys: &Keys,
    s: &Staged,
) -> Result<Option<Probation>, InstallError> {
    let running = installed_version(o)?;
    if s.version == running {
        return Ok(None);
    }
    su::judge_version(&s.version, &running, cfg.permit_agent_downgrade)?;
    if reverted_here(o).contains(&s.version) {
        return Err(InstallError::Reverted(s.version.clone()));
    }
    if s.package != su::package_name(&s.version, &s.arch) || s.arch != su::arch() {
        return Err(InstallError::NotThisBox(s.package.clone()));
    }
    let pkgs = o.keep_dir.join("packages");
    let new_pkg = pkgs.join(&s.package);
    copy_out(&cfg.update_dir().join(&s.package), &new_pkg)?;
    let sha = su::file_sha256(&new_pkg).map_err(|source| InstallError::File {
        path: new_pkg.clone(),
        source,
    })?;
    let judged = su::offered_statement(s.statement.as_deref(), cfg.require_statements)
        .map_err(InstallError::from)
        .and_then(|st| {
            let now = monky_base::clock::now();
            // hash, signature and the statement's binding to exactly this copy's bytes, before
            // dpkg-deb (or anything else) parses it
            su::judge_package(keys, &s.sha256, &sha, &s.signatures, st.as_deref())?;
            if let Some(st) = &st {
                su::bind_statement(
                    st,
                    &s.version,
                    su::arch(),
                    &sha,
                    now,
                    &cfg.statement_limits(),
                )?;
            }
            let c = judge_what_it_is(o, &new_pkg, s, &running, cfg.permit_agent_downgrade)?;
            if let Some(st) = &st {
                su::judge_statement(st, &c, &sha, now, &cfg.statement_limits())?;
            }
            Ok(())
        });
    if let Err(e) = judged {
        let _ = std::fs::remove_file(&new_pkg);
        return Err(e);
    }
    let old_pkg = pkgs.join(su::package_name(&running, &s.arch));
    if !old_pkg.exists() {
        // apt's cache still holds the package apt installed, if nobody cleaned it
        let cached = Path::new("/var/cache/apt/archives").join(su::package_name(&running, &s.arch));
        if copy_out(&cached, &old_pkg).is_err() {
            return Err(InstallError::NothingToRevertTo { running, dir: pkgs });
        }
    }
    let lock = wait_lock(cfg, o)?;
    // recorded before dpkg, so a killed run finds it; restarted below
    let mut p = Probation {
        started_at: state::now(),
        new: s.version.clone(),
        old: running.clone(),
        arch: s.arch.clone(),
    };
    write_root(&o.keep_dir.join("probation.json"), &p)?;
    monky_base::testhook::pause("update-before-dpkg");
    if let Err(e) = dpkg_install(o, &new_pkg) {
        let back = dpkg_install(o, &old_pkg);
        let _ = std::fs::remove_file(o.keep_dir.join("probation.json"));
        let (package, source) = (s.package.clone(), Box::new(e));
        return Err(match back {
            Ok(()) => InstallError::NotInstalled {
                package,
                running,
                source,
            },
            Err(b) => InstallError::NotPutBack {
                package,
                running,
                source,
                back: Box::new(b),
            },
        });
    }
    drop(lock);
    // the new agent can tick from here on: probation counts from now, not from before dpkg
    // (a slow dpkg would otherwise eat a short probation). If this write fails the earlier
    // start stands, which only shortens the probation.
    p.started_at = state::now();
    if let Err(e) = write_root(&o.keep_dir.join("probation.json"), &p) {
        tracing::warn!("probation.json: {e}; probation counts from before dpkg");
    }
    restart(o);
    Ok(Some(p))
}

/// The package in root's keep dir judged by its own control fields (read from this copy, not
/// the agent's): the label agrees with it, it is no downgrade, and it was never reverted here.
/// The control fields read.
fn judge_what_it_is(
    o: &Opts,
    pkg: &Path,
    s: &Staged,
    running: &str,
    permit_downgrade: bool,
) -> Result<su::Control, InstallError> {
    let c = su::read_control(&o.dpkg_deb, pkg)?;
    su::judge_control(&c, &s.version, su::arch()).map_err(|source| InstallError::PackageOf {
        version: s.version.clone(),
        source,
    })?;
    su::judge_version(&c.version, running, permit_downgrade)?;
    if reverted_here(o).contains(&c.version) {
        return Err(InstallError::Reverted(c.version));
    }
    Ok(c)
}

/// `keep_dir/reverted.json`: the package versions this unit reverted (root's own memory; the
/// agent's state may be wiped or lie).
fn reverted_here(o: &Opts) -> Vec<String> {
    read_nofollow(&o.keep_dir.join("reverted.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn remember_reverted(o: &Opts, version: &str) {
    let mut list = reverted_here(o);
    su::remember_reverted(&mut list, version);
    if let Err(e) = write_root(&o.keep_dir.join("reverted.json"), &list) {
        tracing::error!("reverted.json: {e}");
    }
}

/// Kept packages beyond `keep` (versions) go: after an update the running one and the one
/// before it stay, so `packages/` never holds more than three (two plus one being installed).
fn prune_kept(o: &Opts, arch: &str, keep: &[&str]) {
    let names: Vec<String> = keep.iter().map(|v| su::package_name(v, arch)).collect();
    let dir = o.keep_dir.join("packages");
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.ends_with(".deb") && !names.contains(&n) {
            match std::fs::remove_file(e.path()) {
                Ok(()) => tracing::info!("kept package {n} removed"),
                Err(e) => tracing::warn!("{}: {e}", dir.join(&n).display()),
            }
        }
    }
}

/// The kept package of `version` goes (it is not the running one).
fn drop_kept(o: &Opts, version: &str, arch: &str) {
    let _ = std::fs::remove_file(
        o.keep_dir
            .join("packages")
            .join(su::package_name(version, arch)),
    );
}

fn installed_version(o: &Opts) -> Result<String, InstallError> {
    let out = Command::new(&o.dpkg_query)
        .args(["-W", "-f=${Version}", PKG])
        .output()
        .map_err(|source| InstallError::Tool {
            tool: o.dpkg_query.clone(),
            source,
        })?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || v.is_empty() {
        return Err(InstallError::NoInstalledVersion(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(v)
}

fn dpkg_install(o: &Opts, deb: &Path) -> Result<(), InstallError> {
    let out = Command::new(&o.dpkg)
        .arg("-i")
        .arg(deb)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .env(UNDER_INSTALLER, "1")
        .output()
        .map_err(|source| InstallError::Tool {
            tool: o.dpkg.clone(),
            source,
        })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(InstallError::Dpkg {
        status: out.status,
        said: err.trim().lines().last().unwrap_or("").to_string(),
    })
}

/// Restart the agent's units that run (a timer-driven oneshot is simply picked up next tick).
/// Called without the tick lock: the restarted service's first tick must be able to take it.
/// systemctl waits for the service's READY=1, which comes after that first tick.
fn restart(o: &Opts) {
    let units = all_units(o);
    match Command::new(&o.systemctl)
        .arg("try-restart")
        .args(&units)
        .status()
    {
        Ok(s) if s.success() => {}
        Ok(s) => tracing::warn!("systemctl try-restart {}: {s}", units.join(" ")),
        Err(e) => tracing::warn!("systemctl: {e}"),
    }
}

/// `o.units` and every named instance's units (the package is the box's, one binary for all).
fn all_units(o: &Opts) -> Vec<String> {
    let mut units = o.units.clone();
    for p in crate::instance::all(&o.etc_dir) {
        if p.instance.name.is_some() {
            units.extend(
                p.instance
                    .units()
                    .into_iter()
                    .filter(|u| !o.units.contains(u)),
            );
        }
    }
    units
}

/// The tick lock, so nothing is installed under a running tick.
fn wait_lock(cfg: &Config, o: &Opts) -> Result<state::TickLock, InstallError> {
    let path = cfg.lock_path();
    let start = std::time::Instant::now();
    loop {
        match state::try_lock(&path) {
            Ok(Some(l)) => {
                give_to_agent(cfg, &path);
                return Ok(l);
            }
            Ok(None) if start.elapsed() < o.lock_wait => {
                std::thread::sleep(o.poll.min(Duration::from_secs(1)))
            }
            Ok(None) => {
                return Err(InstallError::Locked {
                    path,
                    waited: o.lock_wait,
                })
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Read a small file of the agent's state dir without following a symlink planted there (the
/// agent's user owns that directory; this runs as root).
fn read_nofollow(p: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(p)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut b = Vec::new();
    f.by_ref().take(1 << 20).read_to_end(&mut b)?;
    Ok(b)
}

/// Copy `from` (a regular file, not followed if a symlink) to `to` in root's own directory.
fn copy_out(from: &Path, to: &Path) -> Result<(), InstallError> {
    let mut src = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(from)
        .map_err(|source| InstallError::File {
            path: from.to_path_buf(),
            source,
        })?;
    let meta = src.metadata()?;
    if !meta.is_file() || meta.len() > monky_wire::tenancy::PACKAGE_LIMIT as u64 {
        return Err(InstallError::NotAPackage(from.to_path_buf()));
    }
    let tmp = to.with_extension("deb.tmp");
    let _ = std::fs::remove_file(&tmp);
    let res = (|| -> std::io::Result<()> {
        let mut dst = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        std::io::copy(&mut src, &mut dst)?;
        dst.sync_all()?;
        std::fs::rename(&tmp, to)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(InstallError::File {
            path: to.to_path_buf(),
            source: e,
        });
    }
    Ok(())
}

fn write_root<T: Serialize>(path: &Path, v: &T) -> Result<(), StateError> {
    let body = serde_json::to_vec_pretty(v).expect("json");
    state::write_private(path, &body, 0o600)
}

/// `result.json` for the agent, owned by the agent (the owner of its state dir).
fn tell(cfg: &Config, out: &su::Outcome) {
    tracing::info!("{}", out.note);
    let dir = cfg.update_dir();
    let p = su::outcome_json(&dir);
    if let Err(e) = state::ensure_dir(&dir, 0o700).and_then(|_| write_root(&p, out)) {
        tracing::error!("cannot tell the agent: {e}");
        return;
    }
    give_to_agent(cfg, &p);
}

/// chown to the state dir's owner: root writes into the agent's directory, the agent reads.
fn give_to_agent(cfg: &Config, p: &Path) {
    if let Ok(m) = std::fs::metadata(&cfg.state_dir) {
        let _ = std::os::unix::fs::lchown(p, Some(m.uid()), Some(m.gid()));
    }
}

/// `staged.json` (first: the path unit stops firing) and the staged package go.
fn clean_staged(cfg: &Config, s: Option<&Staged>) {
    let dir = cfg.update_dir();
    let _ = std::fs::remove_file(su::staged_json(&dir));
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.ends_with(".deb") && s.is_none_or(|s| s.package == n) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests;

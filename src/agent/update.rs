//! Self-update, the agent's half (issue 21): after the tick's action, stage the agent version
//! tenancy asks for — verified by the box's own keys — for the root update unit; carry what
//! that unit did back to tenancy; mark the ticks that count for its probation. The agent never
//! installs anything itself.

use super::*;
use monky_host::selfupdate::{self as su, Staged};
use monky_wire::tenancy::{AgentOffer, ReportResult};
use report::Outcome;

/// Why an offer was not staged; [`Unstaged::for_good`] says whether the offer itself is
/// refused (a bad package) or the next tick tries again (a bad network, a full disk).
#[derive(Debug, thiserror::Error)]
enum Unstaged {
    #[error(transparent)]
    Package(#[from] su::PackageError),
    #[error("{0} was reverted on this box")]
    Reverted(String),
    #[error("download: {0}")]
    Download(#[source] TenancyError),
    #[error("{}: {source}", .path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("stage {package}: {source}")]
    Rename {
        package: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    State(#[from] state::StateError),
}

impl Unstaged {
    fn for_good(&self) -> bool {
        match self {
            Unstaged::Package(_) | Unstaged::Reverted(_) => true,
            // tenancy has no such package
            Unstaged::Download(e) => matches!(e, TenancyError::Rejected { status: 404, .. }),
            Unstaged::File { .. } | Unstaged::Rename { .. } | Unstaged::State(_) => false,
        }
    }
}

/// What the agent does about tenancy's `agent` this tick.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// No `agent_signing_keys`: self-update is off.
    Off,
    /// Another instance of the box stages the box's agent updates (named).
    Elsewhere(String),
    /// No offer, or the running version.
    Keep,
    /// Reverted on this box; waits for tenancy to name another version.
    Reverted(String),
    /// Refused before (same version and sha); not downloaded again.
    Refused(String),
    /// A package is staged and the update unit has not finished with it.
    Pending(String),
    /// Outside every maintenance window.
    Waits(String),
    /// Download, verify and stage this version.
    Stage(String),
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// What this tick would do about `offer` (the tick and `plan` both ask).
    pub(super) fn update_step(&self, offer: Option<&AgentOffer>, urgent: bool) -> Step {
        if let Some(by) = &self.update_elsewhere {
            return Step::Elsewhere(by.clone());
        }
        if self.agent_keys.is_empty() {
            return Step::Off;
        }
        // the running package's full version (revision included): 0.5.0-2 is news to 0.5.0
        let running = su::PACKAGE_VERSION;
        let Some(o) = offer.filter(|o| su::cmp_versions(&o.version, running) != Ordering::Equal)
        else {
            return Step::Keep;
        };
        let u = &self.state.agent_update;
        if u.was_reverted(&o.version) {
            return Step::Reverted(o.version.clone());
        }
        if u.refused.as_ref() == Some(&(o.version.clone(), o.sha256.to_ascii_lowercase())) {
            return Step::Refused(o.version.clone());
        }
        if let Some(s) = self.staged() {
            return Step::Pending(s.version);
        }
        if !urgent {
            if let Some((window, next)) = self.windows.wait(&self.windows.now()) {
                return Step::Waits(format!(
                    "agent {} waits for {window} (next {})",
                    o.version,
                    next.strftime("%Y-%m-%dT%H:%M:%S%:z")
                ));
            }
        }
        Step::Stage(o.version.clone())
    }

    fn staged(&self) -> Option<Staged> {
        let b = std::fs::read(su::staged_json(&self.cfg.update_dir())).ok()?;
        serde_json::from_slice(&b).ok()
    }

    /// Between ticks' actions: take in what the update unit did, then act on `offer`. The
    /// notes go out as `applied` reports about the running sha (PROTOCOL 0.4).
    pub(super) async fn agent_update(
        &mut self,
        offer: Option<&AgentOffer>,
        urgent: bool,
    ) -> Outcome {
        let quiet = Outcome::quiet(Ok(Exit::Ok));
        if self.agent_keys.is_empty() || self.interrupted() {
            return quiet;
        }
        let dir = self.cfg.update_dir();
        if let Err(e) = state::ensure_dir(&dir, 0o700) {
            warn!("self-update: {e}");
            return quiet;
        }
        self.take_unit_outcome(&dir);
        let u = &mut self.state.agent_update;
        u.desired = offer.map(|o| o.version.clone());
        if let Some(o) = offer {
            if u.reverted.as_deref() != Some(o.version.as_str()) {
                u.reverted = None;
            }
            if u.refused
                .as_ref()
                .is_some_and(|r| r.0 != o.version || r.1 != o.sha256.to_ascii_lowercase())
            {
                u.refused = None;
            }
        }
        match self.update_step(offer, urgent) {
            Step::Stage(v) => {
                let o = offer.expect("an offer to stage").clone();
                match self.stage(&o, &dir).await {
                    Ok(s) => info!(
                        "self-update: {v} staged for the update unit ({})",
                        s.package
                    ),
                    Err(why) => {
                        warn!("self-update: {v}: {why}");
                        if why.for_good() {
                            self.state.agent_update.refused =
                                Some((o.version.clone(), o.sha256.to_ascii_lowercase()));
                        }
                        self.state
                            .agent_update
                            .notes
                            .push(format!("AGENT_UPDATE_FAILED: {v}: {why}"));
                    }
                }
            }
            Step::Off | Step::Keep => {}
            other => debug!("self-update: {other:?}"),
        }
        let Some(sha) = self.state.applied_sha.clone() else {
            return quiet; // kept until there is a running sha to report them about
        };
        let mut out = quiet;
        for n in std::mem::take(&mut self.state.agent_update.notes) {
            out = out.and(Some(&sha), ReportResult::Applied, &n, "");
        }
        out
    }

    /// `result.json` from the update unit → notes (and the reverted version), read once.
    fn take_unit_outcome(&mut self, dir: &Path) {
        let p = su::outcome_json(dir);
        let Ok(b) = std::fs::read(&p) else {
            return;
        };
        match serde_json::from_slice::<su::Outcome>(&b) {
            Ok(o) => {
                info!("self-update: {}", o.note);
                if let Some(v) = o.reverted {
                    let u = &mut self.state.agent_update;
                    su::remember_reverted(&mut u.reverted_versions, &v);
                    u.reverted = Some(v);
                }
                if o.refused.is_some() {
                    self.state.agent_update.refused = o.refused;
                }
                self.state.agent_update.notes.push(o.note);
            }
            Err(e) => warn!("self-update: {} unreadable ({e}); dropped", p.display()),
        }
        let _ = std::fs::remove_file(&p);
    }

    /// Download, verify, stage. The error says why, and whether this offer is refused for good
    /// (a bad package, not a bad network).
    async fn stage(&mut self, o: &AgentOffer, dir: &Path) -> Result<Staged, Unstaged> {
        su::judge_version(
            &o.version,
            su::PACKAGE_VERSION,
            self.cfg.permit_agent_downgrade,
        )?;
        let arch = su::arch();
        let incoming = dir.join(".incoming.deb");
        let _ = std::fs::remove_file(&incoming);
        let res = async {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&incoming)
                .map_err(|source| Unstaged::File {
                    path: incoming.clone(),
                    source,
                })?;
            let token = self.tokens.bearer();
            let (bytes, sha) = self
                .c
                .tenancy
                .agent_package(&token, &o.version, arch, &mut f)
                .await
                .map_err(Unstaged::Download)?;
            let statement =
                su::offered_statement(o.statement.as_deref(), self.cfg.require_statements)?;
            let key = su::judge_package(
                &self.agent_keys,
                &o.sha256,
                &sha,
                &o.signatures,
                statement.as_deref(),
            )?;
            // nothing parses the package before its statement names exactly these bytes
            if let Some(s) = &statement {
                su::bind_statement(
                    s,
                    &o.version,
                    arch,
                    &sha,
                    self.wall(),
                    &self.cfg.statement_limits(),
                )?;
            }
            debug!("self-update: {bytes} bytes, sha256 {sha}, signed by {key}");
            // judged by what it is, not by its label
            let c = su::read_control(&dpkg_deb(), &incoming)?;
            if let Some(s) = &statement {
                su::judge_statement(s, &c, &sha, self.wall(), &self.cfg.statement_limits())?;
            }
            su::judge_control(&c, &o.version, arch)?;
            su::judge_version(
                &c.version,
                su::PACKAGE_VERSION,
                self.cfg.permit_agent_downgrade,
            )?;
            if self.state.agent_update.was_reverted(&c.version) {
                return Err(Unstaged::Reverted(c.version));
            }
            // one staged package at a time: older ones go
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                if e.file_name().to_string_lossy().ends_with(".deb") && e.path() != incoming {
                    let _ = std::fs::remove_file(e.path());
                }
            }
            let package = su::package_name(&o.version, arch);
            std::fs::rename(&incoming, dir.join(&package)).map_err(|source| Unstaged::Rename {
                package: package.clone(),
                source,
            })?;
            let staged = Staged {
                version: o.version.clone(),
                sha256: sha,
                from_version: VERSION.to_string(),
                arch: arch.to_string(),
                package,
                staged_at: self.wall(),
                signatures: o.signatures.clone(),
                statement: o.statement.clone(),
            };
            // last: the path unit starts the installer when this appears
            let body = serde_json::to_vec_pretty(&staged).expect("json");
            state::write_private(&su::staged_json(dir), &body, 0o600)?;
            Ok(staged)
        }
        .await;
        let _ = std::fs::remove_file(&incoming);
        res
    }

    /// A tick that counts for the update unit's probation: tenancy answered the check-in and
    /// the tick ends 0 or 75.
    pub(super) fn mark_ticked(&self, res: &Result<Exit, Failure>, checked_in: bool) {
        if self.agent_keys.is_empty() || !checked_in {
            return;
        }
        let exit = match res {
            Ok(e) => *e,
            Err(f) => f.exit(),
        };
        if !matches!(exit, Exit::Ok | Exit::TempFail) {
            return;
        }
        let dir = self.cfg.update_dir();
        let t = su::Ticked {
            version: VERSION.to_string(),
            at: state::now(),
        };
        let body = serde_json::to_vec(&t).expect("json");
        if let Err(e) = state::ensure_dir(&dir, 0o700)
            .and_then(|_| state::write_unsynced(&su::ticked_json(&dir), &body, 0o600))
        {
            warn!("self-update: {e}");
        }
    }
}

use std::cmp::Ordering;
use std::os::unix::fs::OpenOptionsExt;

/// What reads a package's control fields (dpkg's own reader; see [`su::read_control`]).
const DPKG_DEB: &str = "dpkg-deb";

#[cfg(not(test))]
fn dpkg_deb() -> String {
    DPKG_DEB.to_string()
}

#[cfg(test)]
thread_local! {
    /// A stand-in reader for this test thread (the tick runs on it).
    static DPKG_DEB_FOR_TEST: std::cell::RefCell<Option<String>> =
        const { std::cell::RefCell::new(None) };
}

#[cfg(test)]
fn dpkg_deb() -> String {
    DPKG_DEB_FOR_TEST
        .with(|d| d.borrow().clone())
        .unwrap_or_else(|| DPKG_DEB.to_string())
}

#[cfg(test)]
mod tests;

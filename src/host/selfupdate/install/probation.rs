//! The probation after an install: the new agent's first counted tick concludes it, running
//! out reverts to the package that ran before; an install that never completed puts that
//! package back at once.

use super::*;

/// Unix seconds at which the box booted (`None` if unknown).
fn booted_at() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given
    if unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) } != 0 {
        return None;
    }
    Some(state::now().saturating_sub(u64::try_from(ts.tv_sec).ok()?))
}

/// Wait for the new agent's first counted tick; revert when probation runs out. Probation
/// counts from the install or from the last boot, whichever is later: a box rebooted inside
/// probation gives the new agent its full time to tick again after the boot.
pub(super) fn probation(cfg: &Config, o: &Opts, p: &Probation) -> Result<String, InstallError> {
    let from = p.started_at.max(booted_at().unwrap_or(0));
    let deadline = from.saturating_add(cfg.agent_update_probation_s);
    let ticked = su::ticked_json(&cfg.update_dir());
    loop {
        let t = read_nofollow(&ticked)
            .ok()
            .and_then(|b| serde_json::from_slice::<su::Ticked>(&b).ok());
        if t.is_some_and(|t| su::upstream(&p.new) == t.version && t.at >= p.started_at) {
            prune_kept(o, &p.arch, &[&p.new, &p.old]);
            return Ok(concluded(
                cfg,
                o,
                format!("AGENT_UPDATED: {} → {}", p.old, p.new),
                None,
            ));
        }
        if state::now() >= deadline {
            break;
        }
        std::thread::sleep(o.poll);
    }
    let why = format!("no tick within {}s", cfg.agent_update_probation_s);
    let old_pkg = o
        .keep_dir
        .join("packages")
        .join(su::package_name(&p.old, &p.arch));
    // a revert goes ahead even when the lock cannot be had: the new agent that did not tick
    // may be the one holding it
    let lock = wait_lock(cfg, o);
    let r = dpkg_install(o, &old_pkg);
    drop(lock);
    if let Err(e) = r {
        // probation.json stays: the next start of the unit tries the revert again
        return Err(InstallError::NotReverted {
            new: p.new.clone(),
            old: p.old.clone(),
            source: Box::new(e),
        });
    }
    restart(o);
    remember_reverted(o, &p.new);
    drop_kept(o, &p.new, &p.arch);
    let note = format!("AGENT_REVERTED: {} → {} ({why})", p.new, p.old);
    Ok(concluded(cfg, o, note, Some(p.new.clone())))
}

/// An install that never completed: the old package goes on again (dpkg also finishes a
/// half-configured one this way), and the agent is told; the staged package goes, so the agent
/// stages the offer afresh.
pub(super) fn interrupted(cfg: &Config, o: &Opts, p: &Probation) -> Result<String, InstallError> {
    let old_pkg = o
        .keep_dir
        .join("packages")
        .join(su::package_name(&p.old, &p.arch));
    let lock = wait_lock(cfg, o)?;
    let r = dpkg_install(o, &old_pkg);
    drop(lock);
    r.map_err(|e| InstallError::NotRestored {
        old: p.old.clone(),
        source: Box::new(e),
    })?;
    restart(o);
    // the agent stages it afresh (and it is copied in again)
    drop_kept(o, &p.new, &p.arch);
    let note = format!(
        "AGENT_UPDATE_FAILED: the install of {} was interrupted; {} is back",
        p.new, p.old
    );
    Ok(concluded(cfg, o, note, None))
}

/// The probation is over: the agent is told `note` (and which version was reverted), the
/// probation record and the staged package go. Returns `note`.
fn concluded(cfg: &Config, o: &Opts, note: String, reverted: Option<String>) -> String {
    tell(
        cfg,
        &su::Outcome {
            note: note.clone(),
            reverted,
            refused: None,
            at: state::now(),
        },
    );
    let _ = std::fs::remove_file(o.keep_dir.join("probation.json"));
    clean_staged(cfg, None);
    note
}

//! The process's own hardening at start: the agent holds OpenBao tokens and secret values in
//! memory, so a crash must not write that memory to disk, and no process of the same uid (the
//! docker group's other members included) may read it through ptrace or /proc/PID/mem. The
//! systemd units say the same with `LimitCORE=0`; this covers a manual run too.

use std::io;

/// RLIMIT_CORE to 0, soft and hard (an unprivileged process cannot raise it back), then
/// PR_SET_DUMPABLE 0: no core file, and the kernel hands no core to a `core_pattern` pipe
/// (which ignores RLIMIT_CORE) either. Both are inherited across fork; dumpable is reset by
/// execve, the limit is not.
pub fn forbid_core_dumps() -> io::Result<()> {
    limit_core()?;
    // SAFETY: prctl with PR_SET_DUMPABLE takes plain integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The rlimit half of [`forbid_core_dumps`].
fn limit_core() -> io::Result<()> {
    let zero = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setrlimit reads one properly initialised rlimit.
    if unsafe { libc::setrlimit(libc::RLIMIT_CORE, &zero) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core_limit() -> (libc::rlim_t, libc::rlim_t) {
        let mut r = libc::rlimit {
            rlim_cur: 1,
            rlim_max: 1,
        };
        // SAFETY: getrlimit writes one rlimit into r.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_CORE, &mut r) }, 0);
        (r.rlim_cur, r.rlim_max)
    }

    /// Soft and hard limit end at 0. (Only the rlimit half runs here: dumpable 0 would make
    /// the test process's /proc files root's for the tests that read them.)
    #[test]
    fn the_core_limit_is_zero_soft_and_hard() {
        limit_core().unwrap();
        assert_eq!(core_limit(), (0, 0));
        // a limit already at 0 is no error
        limit_core().unwrap();
        assert_eq!(core_limit(), (0, 0));
    }

    /// Every shipped unit that runs the agent binary keeps core dumps off as well: the unit's
    /// limit holds from exec, before `main` runs.
    #[test]
    fn every_agent_unit_sets_limitcore_0() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../packaging/systemd");
        let mut agent_units = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap();
            if !text
                .lines()
                .any(|l| l.starts_with("ExecStart=/usr/bin/monky-deployd "))
            {
                continue;
            }
            agent_units += 1;
            assert!(
                text.lines().any(|l| l == "LimitCORE=0"),
                "{} runs the agent without LimitCORE=0",
                p.display()
            );
        }
        // the oneshot, the run service, the laptop loop and the root update unit
        assert!(agent_units >= 4, "{agent_units} agent units found");
    }
}

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

/// Drop the executable's relocation tables (`.rela.dyn`, `.rela.plt`) from the resident set.
/// The dynamic loader reads them once, before `main`, to relocate a PIE; nothing reads them
/// again (the binary is linked `BIND_NOW`), yet they stay resident: about 1 MiB of every
/// heartbeat's peak (41,000 relative relocations of 24 bytes, docs/PERFORMANCE.md). The pages
/// are clean, read-only and file-backed, so `MADV_DONTNEED` only unmaps them: a later read
/// would fault them in again from the file. Only whole pages inside a read-only segment are
/// dropped. Returns the bytes dropped; any failure drops nothing (it costs memory, not
/// correctness).
pub fn drop_relocation_tables() -> usize {
    let Some((base, ranges, tables)) = image() else {
        return 0;
    };
    let page = 4096;
    let mut dropped = 0;
    for (start, len) in tables {
        let (s, e) = (
            (start + page - 1) & !(page - 1),
            (start + len) & !(page - 1),
        );
        // never a page that could be written: a dirty private page would be lost
        let inside = ranges.iter().any(|&(ls, le)| ls <= s && e <= le);
        if e <= s || !inside || s < base {
            continue;
        }
        // SAFETY: [s, e) is whole pages of a read-only, file-backed segment of this executable
        // (checked above), which nothing writes; MADV_DONTNEED on it only drops the mappings.
        if unsafe { libc::madvise(s as *mut libc::c_void, e - s, libc::MADV_DONTNEED) } == 0 {
            dropped += e - s;
        }
    }
    dropped
}

/// The main executable's load address, its read-only `PT_LOAD` ranges and its relocation
/// tables `(address, size)`, from the program headers the loader hands `dl_iterate_phdr`.
#[allow(clippy::type_complexity)]
fn image() -> Option<(usize, Vec<(usize, usize)>, Vec<(usize, usize)>)> {
    struct Found(Option<(usize, Vec<(usize, usize)>, Vec<(usize, usize)>)>);
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid info for this call, and `data` is the
        // `Found` handed to it below; the first object listed is the main program.
        let (info, found) = unsafe { (&*info, &mut *(data as *mut Found)) };
        let base = info.dlpi_addr as usize;
        let phdrs = if info.dlpi_phdr.is_null() {
            &[][..]
        } else {
            // SAFETY: dlpi_phdr points at dlpi_phnum program headers.
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
        };
        let mut ro = Vec::new();
        let mut dynamic = None;
        for ph in phdrs {
            let at = base + ph.p_vaddr as usize;
            if ph.p_type == libc::PT_LOAD && ph.p_flags & libc::PF_W == 0 {
                ro.push((at, at + ph.p_memsz as usize));
            }
            if ph.p_type == libc::PT_DYNAMIC {
                dynamic = Some(at);
            }
        }
        let mut tables = Vec::new();
        if let Some(d) = dynamic {
            let (mut rela, mut relasz, mut jmprel, mut pltrelsz) = (0usize, 0usize, 0usize, 0usize);
            let mut p = d as *const [u64; 2];
            // at most a few dozen entries; the bound only guards a malformed table
            for _ in 0..512 {
                // SAFETY: the dynamic section is an array of (tag, value) pairs ended by DT_NULL.
                let [tag, val] = unsafe { *p };
                match tag {
                    0 => break,
                    2 => pltrelsz = val as usize,
                    7 => rela = val as usize,
                    8 => relasz = val as usize,
                    23 => jmprel = val as usize,
                    _ => {}
                }
                // SAFETY: the next entry exists until DT_NULL.
                p = unsafe { p.add(1) };
            }
            // the loader may have rebased these addresses in place, or not
            let abs = |a: usize| if a != 0 && a < base { a + base } else { a };
            for (a, n) in [(abs(rela), relasz), (abs(jmprel), pltrelsz)] {
                if a != 0 && n != 0 {
                    tables.push((a, n));
                }
            }
        }
        found.0 = Some((base, ro, tables));
        1
    }
    let mut found = Found(None);
    // SAFETY: the callback matches dl_iterate_phdr's signature and only reads what it is given.
    unsafe { libc::dl_iterate_phdr(Some(first), &mut found as *mut Found as *mut libc::c_void) };
    found.0
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

    /// The tables are found, dropped, and the process goes on (a dropped page reads back from
    /// the file).
    #[test]
    fn the_relocation_tables_are_dropped_and_read_back() {
        let (base, ro, tables) = image().expect("the main program");
        assert!(!ro.is_empty());
        // a test binary is a PIE with relative relocations
        let (start, len) = tables[0];
        assert!(start >= base && len > 0, "{tables:?}");
        let before = unsafe { std::slice::from_raw_parts(start as *const u8, len) }.to_vec();
        let dropped = drop_relocation_tables();
        assert!(
            dropped > 0 && dropped <= tables.iter().map(|t| t.1).sum(),
            "{dropped}"
        );
        // SAFETY: the table is mapped still; its pages fault in again from the file
        let after = unsafe { std::slice::from_raw_parts(start as *const u8, len) };
        assert_eq!(before, after);
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

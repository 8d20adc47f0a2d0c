//! The guard's own CPU: the guard runs alone on its thread, so its cost is that thread's CPU
//! clock (user + system: routing, judging, engine look-ups, forwarding bodies, its event loop
//! and wake-ups), read once when the guard ends. Nothing is measured per poll: a per-poll clock
//! read is a system call (the thread CPU clock has no vDSO path) and cost as much as what it
//! measured.

/// The CPU clock of one thread, readable from any thread while that thread lives.
#[derive(Clone, Copy, Debug)]
pub(super) struct ThreadClock(Option<libc::clockid_t>);

impl ThreadClock {
    /// The calling thread's clock.
    pub(super) fn current() -> ThreadClock {
        let mut id: libc::clockid_t = 0;
        // SAFETY: pthread_self is always valid; id is a valid out-parameter.
        let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
        ThreadClock((rc == 0).then_some(id))
    }

    /// CPU time of the thread so far, in nanoseconds (0 if it cannot be read).
    pub(super) fn ns(&self) -> u64 {
        let Some(id) = self.0 else { return 0 };
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-parameter; id names a live thread's clock.
        if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
            return 0;
        }
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_s_busy_time_is_read_from_another_thread_and_its_sleep_is_not() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            let clock = ThreadClock::current();
            let t0 = clock.ns();
            // 10 ms of this thread's CPU, then 100 ms asleep
            let mut x = 0u64;
            while clock.ns() - t0 < 10_000_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            tx.send((clock, t0)).unwrap();
            let _ = done_rx.recv();
            x
        });
        let (clock, t0) = rx.recv().unwrap();
        let ns = clock.ns() - t0;
        done_tx.send(()).unwrap();
        t.join().unwrap();
        assert!(ns >= 10_000_000, "charged {ns} ns");
        assert!(ns < 60_000_000, "the sleep was charged: {ns} ns");
        assert!(ThreadClock::current().ns() > 0);
    }
}

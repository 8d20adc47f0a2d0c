//! Only with the cargo feature `test-hooks` (on under `cargo test`, off in every `cargo build`
//! and package: Cargo.toml), for the fault-injection matrix (`tests/faults.rs`): with
//! `MONKY_DEPLOYD_TEST_PAUSE_AT=<step>` the agent stops at that named step, writes the step's
//! name to `MONKY_DEPLOYD_TEST_PAUSE_MARKER` and waits there until the file `<marker>.go`
//! appears (the test SIGKILLs it, or stops a real part and lets it go on). Without the feature
//! every hook compiles to nothing and no variable's name is in the binary, like
//! `MONKY_DEPLOYD_TEST_POLICY`. Crate-private: the binary reaches the loop's hooks through
//! the service loop (`cli::service`).
//!
//! Steps: `after-bootstrap`, `after-bundle`, `after-lease`, `after-login`, `mid-write:<file
//! name>` (a private file's temporary copy is written and synced, not yet renamed),
//! `after-promote`, `data:stopped` (the `stop` services stopped for a snapshot), `data:copied-one`
//! (one volume's snapshot recorded), `data:restoring` (the project stopped for a restore),
//! `wait-healthy`, `before-report`, `before-save` (the action's outcome, before
//! any extra), then the extras after that save: `extra:update`, `extra:reclaim`,
//! `extra:collect` (a bundle gathered, not yet sent), `extra:metrics`.

/// Stops here when the test asked for `step` (`test-hooks`); a no-op otherwise.
#[inline]
pub fn pause(step: &str) {
    #[cfg(feature = "test-hooks")]
    {
        if std::env::var("MONKY_DEPLOYD_TEST_PAUSE_AT").is_ok_and(|v| v == step) {
            let marker = std::env::var("MONKY_DEPLOYD_TEST_PAUSE_MARKER").unwrap_or_default();
            if marker.is_empty() {
                return;
            }
            let _ = std::fs::write(&marker, step);
            let go = std::path::PathBuf::from(format!("{marker}.go"));
            // blocking on purpose: the whole agent stands still at this step
            while !go.exists() {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    }
    #[cfg(not(feature = "test-hooks"))]
    let _ = step;
}

/// The loop's wait between ticks; `MONKY_DEPLOYD_TEST_INTERVAL_MS` replaces it (`test-hooks`;
/// the soak runs 1,000 ticks in loop mode; `interval_s` cannot go below 5 s).
pub fn interval(wait: std::time::Duration) -> std::time::Duration {
    #[cfg(feature = "test-hooks")]
    {
        if let Some(ms) = std::env::var("MONKY_DEPLOYD_TEST_INTERVAL_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            return std::time::Duration::from_millis(ms);
        }
    }
    wait
}

/// `test-hooks`: with `MONKY_DEPLOYD_TEST_WEDGE=<point>`, once the file named by
/// `MONKY_DEPLOYD_TEST_WEDGE_FILE` exists, the calling thread stops here for good, as a wedged
/// loop or a stuck SDK call would (the service's watchdog test). Points: `loop` (the service
/// loop between ticks), `sdk` (the SDK's loop: a dial's call never returns, and no byte moves
/// on a connection already open, see [`wedged`]).
#[inline]
pub fn wedge(point: &str) {
    #[cfg(feature = "test-hooks")]
    if wedged(point) {
        tracing::warn!("test hook: wedged at {point}");
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    #[cfg(not(feature = "test-hooks"))]
    let _ = point;
}

/// Whether the test asked `point` to be wedged by now (`test-hooks`; always false otherwise).
#[inline]
pub fn wedged(point: &str) -> bool {
    #[cfg(feature = "test-hooks")]
    {
        std::env::var("MONKY_DEPLOYD_TEST_WEDGE").is_ok_and(|v| v == point)
            && std::env::var_os("MONKY_DEPLOYD_TEST_WEDGE_FILE")
                .is_some_and(|f| std::path::Path::new(&f).exists())
    }
    #[cfg(not(feature = "test-hooks"))]
    {
        let _ = point;
        false
    }
}

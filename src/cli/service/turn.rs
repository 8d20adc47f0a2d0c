//! The service loop's decisions, apart from its wiring in `src/main/serve.rs` so they are unit
//! tested: how long the watchdog must be, what a reload can take up in this process, when an
//! sdk context that keeps failing is rebuilt, and the wait between two ticks (which feeds the
//! watchdog from the loop's own task, so a wedged loop feeds nothing).

use std::time::{Duration, Instant};

use monky_host::config::{Config, Transport};

/// Margin of the watchdog over the longest tick (`tick_budget_s`; never fed during a tick).
pub const WATCHDOG_MARGIN: Duration = Duration::from_secs(120);

/// Ticks of an sdk transport failing temporarily in a row, over at least
/// [`REBUILD_AFTER_OUTAGE`], after which the service starts afresh with a new SDK context: the
/// SDK re-authenticates by itself after a controller outage, this is for a context it cannot heal.
pub const REBUILD_AFTER_TICKS: u32 = 5;
pub const REBUILD_AFTER_OUTAGE: Duration = Duration::from_secs(15 * 60);

/// The watchdog interval to ask for when the unit's (`every`) is shorter than a tick may take:
/// `None` when it already outlasts `tick_budget_s` plus the margin (or there is no watchdog).
pub fn watchdog_raise(every: Option<Duration>, tick_budget_s: u64) -> Option<Duration> {
    let need = Duration::from_secs(tick_budget_s) + WATCHDOG_MARGIN;
    every.filter(|e| *e < need).map(|_| need)
}

/// What only a new process can take up: zitilib loads each identity once per process (with the
/// refresh period of that moment), and the log filter is set once.
pub fn needs_new_process(old: &Config, new: &Config) -> bool {
    let sdk = |c: &Config| c.transport == Transport::Sdk;
    (sdk(old) || sdk(new))
        && (old.transport != new.transport
            || old.identity != new.identity
            || old.sdk_refresh_s != new.sdk_refresh_s)
        || old.state_dir != new.state_dir
        || old.log_level.as_str() != new.log_level.as_str()
}

/// Temporary failures in a row, and since when: the loop's record for [`Outage::rebuild`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Outage {
    pub streak: u32,
    pub since: Option<Instant>,
}

impl Outage {
    /// One tick's end: a temporary failure (`temporary`) that began at `started` lengthens the
    /// outage; anything else ends it.
    pub fn record(&mut self, temporary: bool, started: Instant) {
        if temporary {
            self.streak += 1;
            self.since.get_or_insert(started);
        } else {
            *self = Outage::default();
        }
    }

    /// Whether the sdk context should be rebuilt (a fresh process) at `now`.
    pub fn rebuild(&self, transport: Transport, now: Instant) -> bool {
        transport == Transport::Sdk
            && self.streak >= REBUILD_AFTER_TICKS
            && self
                .since
                .is_some_and(|t| now.saturating_duration_since(t) >= REBUILD_AFTER_OUTAGE)
    }
}

/// How the wait between two ticks ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Woke {
    Tick,
    Stop,
    Reload,
}

/// A reload request (SIGHUP in the service; a channel in tests).
pub trait Hangup {
    /// Resolves at the next request; `None` once no more can come.
    fn recv(&mut self) -> impl std::future::Future<Output = Option<()>>;
}

impl Hangup for tokio::signal::unix::Signal {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<()>> {
        tokio::signal::unix::Signal::recv(self)
    }
}

/// Wait `wait`, calling `feed` every half watchdog interval (`every`) from this same task; ends
/// early on a stop or a reload request.
pub async fn between_ticks(
    wait: Duration,
    every: Option<Duration>,
    feed: impl Fn(),
    stop: &mut tokio::sync::watch::Receiver<bool>,
    hup: &mut impl Hangup,
) -> Woke {
    let until = tokio::time::Instant::now() + wait;
    loop {
        if *stop.borrow() {
            return Woke::Stop;
        }
        let nap = every.map_or(until, |e| until.min(tokio::time::Instant::now() + e / 2));
        tokio::select! {
            _ = tokio::time::sleep_until(nap) => {
                if tokio::time::Instant::now() >= until {
                    return Woke::Tick;
                }
                feed();
            }
            _ = stop.changed() => return Woke::Stop,
            Some(()) = hup.recv() => return Woke::Reload,
        }
    }
}

#[cfg(test)]
mod tests;

//! The tick's hooks into the box's self-care (issue 22), one call each: the clock skew noted
//! after every tick (and named in a TLS or JWT failure), and after the action the disk
//! reclaim and a diagnostics bundle tenancy asked for.

use super::*;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// Keeps the skew tenancy's last answer showed (for the next check-in and the metrics) and
    /// names it in the tick's failure when it may be the cause.
    pub(super) fn clock_noted(&mut self, res: Result<Exit, Failure>) -> Result<Exit, Failure> {
        if let Some(s) = self.c.tenancy.seen().clock_skew_s {
            if s.abs() > monky_base::clock::SKEW_NAMED_ABOVE_S {
                warn!("{} (from its Date header)", monky_base::clock::describe(s));
            }
            self.state.counters.clock_skew_s = Some(s);
        }
        let skew = self.state.counters.clock_skew_s;
        res.map_err(|f| f.map_message(|m| monky_base::clock::name_in_failure(m, skew)))
    }

    /// After the action, whatever its outcome: reclaim if due, then the diagnostics bundle.
    pub(super) async fn after_action(&mut self, collect: Option<&str>) {
        monky_base::testhook::pause("extra:reclaim");
        self.reclaim_after_action().await;
        self.collect_if_asked(collect).await;
    }
}

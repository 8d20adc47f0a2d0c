use super::*;
use std::cell::Cell;

/// Reload requests from a channel: the fake SIGHUP.
struct Chan(tokio::sync::mpsc::UnboundedReceiver<()>);

impl Hangup for Chan {
    fn recv(&mut self) -> impl std::future::Future<Output = Option<()>> {
        self.0.recv()
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

#[test]
fn the_watchdog_is_raised_above_the_longest_tick_only_when_shorter() {
    let s = Duration::from_secs;
    assert_eq!(watchdog_raise(Some(s(6)), 60), Some(s(180)));
    assert_eq!(watchdog_raise(Some(s(179)), 60), Some(s(180)));
    assert_eq!(watchdog_raise(Some(s(180)), 60), None);
    assert_eq!(watchdog_raise(Some(s(1200)), 600), None);
    assert_eq!(watchdog_raise(Some(s(1200)), 1200), Some(s(1320)));
    assert_eq!(
        watchdog_raise(None, 60),
        None,
        "no watchdog: nothing to raise"
    );
}

#[test]
fn only_what_this_process_cannot_take_up_needs_a_new_one() {
    let base = Config::default();
    let same = base.clone();
    assert!(!needs_new_process(&base, &same));
    let mut c = base.clone();
    c.interval_s += 30;
    assert!(
        !needs_new_process(&base, &c),
        "an interval is taken up in place"
    );
    let mut c = base.clone();
    c.state_dir = "/elsewhere".into();
    assert!(needs_new_process(&base, &c));
    let mut c = base.clone();
    c.log_level = monky_host::config::LogLevel::Debug;
    assert!(needs_new_process(&base, &c), "the log filter is set once");
    // the identity matters only where the SDK loads it
    let mut sys = base.clone();
    sys.transport = Transport::System;
    let mut other = sys.clone();
    other.identity = "/etc/monky-deployd/other.json".into();
    assert!(!needs_new_process(&sys, &other));
    let mut sdk = sys.clone();
    sdk.transport = Transport::Sdk;
    assert!(needs_new_process(&sys, &sdk), "to sdk");
    assert!(needs_new_process(&sdk, &sys), "from sdk");
    let mut sdk2 = sdk.clone();
    sdk2.identity = "/etc/monky-deployd/other.json".into();
    assert!(needs_new_process(&sdk, &sdk2));
    let mut sdk3 = sdk.clone();
    sdk3.sdk_refresh_s += 60;
    assert!(needs_new_process(&sdk, &sdk3));
}

#[test]
fn an_sdk_outage_rebuilds_after_five_ticks_and_fifteen_minutes_only() {
    let t0 = Instant::now();
    let mut o = Outage::default();
    for _ in 0..REBUILD_AFTER_TICKS {
        o.record(true, t0);
    }
    let later = t0 + REBUILD_AFTER_OUTAGE;
    assert!(o.rebuild(Transport::Sdk, later));
    assert!(
        !o.rebuild(Transport::Sdk, later - Duration::from_secs(1)),
        "too soon"
    );
    assert!(
        !o.rebuild(Transport::System, later),
        "only an sdk context is rebuilt"
    );
    let mut short = Outage::default();
    for _ in 0..REBUILD_AFTER_TICKS - 1 {
        short.record(true, t0);
    }
    assert!(!short.rebuild(Transport::Sdk, later), "too few ticks");
    // one good tick ends the outage
    o.record(false, later);
    assert_eq!((o.streak, o.since), (0, None));
    assert!(!o.rebuild(Transport::Sdk, later + REBUILD_AFTER_OUTAGE));
}

#[test]
fn the_wait_ticks_on_time_and_feeds_the_watchdog_every_half_interval() {
    rt().block_on(async {
        let (_stop_tx, mut stop) = tokio::sync::watch::channel(false);
        let (_hup_tx, hup) = tokio::sync::mpsc::unbounded_channel();
        let mut hup = Chan(hup);
        let fed = Cell::new(0);
        let t0 = tokio::time::Instant::now();
        let w = between_ticks(
            Duration::from_secs(60),
            Some(Duration::from_secs(20)),
            || fed.set(fed.get() + 1),
            &mut stop,
            &mut hup,
        )
        .await;
        assert_eq!(w, Woke::Tick);
        assert_eq!(t0.elapsed(), Duration::from_secs(60));
        // at 10, 20, 30, 40, 50 s; the 60th second is the tick itself
        assert_eq!(fed.get(), 5);
        // no watchdog: one sleep, nothing fed
        let fed = Cell::new(0);
        let w = between_ticks(
            Duration::from_secs(60),
            None,
            || fed.set(fed.get() + 1),
            &mut stop,
            &mut hup,
        )
        .await;
        assert_eq!((w, fed.get()), (Woke::Tick, 0));
    });
}

#[test]
fn a_stop_or_a_reload_ends_the_wait_at_once() {
    rt().block_on(async {
        let (stop_tx, mut stop) = tokio::sync::watch::channel(false);
        let (hup_tx, hup) = tokio::sync::mpsc::unbounded_channel();
        let mut hup = Chan(hup);
        let t0 = tokio::time::Instant::now();
        hup_tx.send(()).unwrap();
        let every = Some(Duration::from_secs(20));
        let w = between_ticks(Duration::from_secs(60), every, || {}, &mut stop, &mut hup).await;
        assert_eq!((w, t0.elapsed()), (Woke::Reload, Duration::ZERO));
        // a stop that comes mid-wait
        let waiting = between_ticks(Duration::from_secs(600), every, || {}, &mut stop, &mut hup);
        let stopper = async {
            tokio::time::sleep(Duration::from_secs(25)).await;
            stop_tx.send(true).unwrap();
        };
        let (w, ()) = tokio::join!(waiting, stopper);
        assert_eq!((w, t0.elapsed()), (Woke::Stop, Duration::from_secs(25)));
        // stopped already: the next wait does not start
        let w = between_ticks(Duration::from_secs(600), every, || {}, &mut stop, &mut hup).await;
        assert_eq!((w, t0.elapsed()), (Woke::Stop, Duration::from_secs(25)));
        // a closed reload channel is no reload: the wait runs out
        drop(hup_tx);
        let (_s, mut fresh) = tokio::sync::watch::channel(false);
        let w = between_ticks(Duration::from_secs(5), every, || {}, &mut fresh, &mut hup).await;
        assert_eq!(w, Woke::Tick);
    });
}

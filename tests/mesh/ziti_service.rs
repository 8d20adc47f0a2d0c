//! `monky-deployd run` as the long-lived service (systemd `Type=notify`) over a real OpenZiti
//! network with the embedded SDK: the test plays the service manager's part of the notify
//! protocol — it binds the `NOTIFY_SOCKET` datagram socket and sets `WATCHDOG_USEC` — and reads
//! what the agent sends. Tenancy and OpenBao are reached only as Ziti services (the configured
//! host names resolve nowhere), as in `tests/mesh/ziti_tick.rs`.
//!
//! * ticks over sdk: `READY=1` after the first, `STATUS=` per tick, `WATCHDOG=1`; `status`
//!   says service mode; SIGHUP takes up a changed config and keeps the old one when the new is
//!   bad; a replaced identity file is taken up; SIGTERM between ticks exits 0 at once;
//! * two agents on one host through the same edge router keep their own API sessions there;
//! * a restart of the quickstart (controller and edge router, one process) is survived without
//!   a new process;
//! * a wedged SDK call, or a wedged loop, starves the watchdog (debug-build hook);
//! * SIGTERM mid-apply ends the tick `INTERRUPTED` (reported) and the process exits 0.

use std::time::{Duration, Instant};

use crate::common::ziti::{self, require_sdk, Net};
use crate::common::ziti_svc::*;
use crate::common::*;

#[test]
fn service_ticks_over_sdk_notifies_reloads_and_takes_up_a_new_identity() {
    require_sdk();
    require_docker();
    let net = Net::shared();
    let (s, id) = sdk_box(net, "svc-sdk", Flavour::V2);
    let mut svc = Svc::start(&s, 1000, Duration::from_secs(4), &[]);

    svc.wait("READY=1 and three ticks", 90, |v| {
        v.count("READY=1") >= 1 && v.ok_ticks_after(0, 0) >= 3
    });
    let ticks = svc.ticks();
    assert_eq!(
        ticks.iter().map(|(n, _)| *n).take(3).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert!(ticks.iter().take(3).all(|(_, e)| *e == 0), "{ticks:?}");
    // READY after the first tick's STATUS, not before
    let msgs = svc.msgs();
    let ready_at = msgs.iter().position(|(_, m)| m == "READY=1").unwrap();
    let first_tick = msgs
        .iter()
        .position(|(_, m)| m.starts_with("STATUS=tick 1:"))
        .unwrap();
    assert!(first_tick < ready_at, "{msgs:?}");
    assert!(svc.count("WATCHDOG=1") >= 3, "{msgs:?}");
    // the ticks went through Ziti to tenancy, one check-in each, with one OpenBao login
    // (the bootstrap grant) for the whole run
    assert!(s.tenancy.checkins().len() >= 3);
    assert_eq!(s.bao.login_count(), 1);

    // status says which mode runs
    let r = s.cmd(&["status", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["run_mode"]["mode"], "service", "{v}");
    assert_eq!(v["run_mode"]["pid"], svc.pid(), "{v}");
    // WATCHDOG_USEC 4 s is shorter than a tick may take (tick_budget_s 1080 + 120 s): the
    // service raised it, and says so to the service manager
    assert_eq!(v["run_mode"]["watchdog_s"], 1200, "{v}");
    assert_eq!(svc.count("WATCHDOG_USEC=1200000000"), 1);

    // SIGHUP with a bad config: the running one stays, the error is logged with its code
    let good = std::fs::read_to_string(s.config_path()).unwrap();
    std::fs::write(s.config_path(), format!("{good}interval_s: 1\n")).unwrap();
    let before = svc.ticks().len();
    svc.signal(libc::SIGHUP);
    svc.wait("the bad config refused", 20, |v| {
        v.log().contains("CONFIG_RELOAD_FAILED") && v.log().contains("interval_s")
    });
    svc.wait("ticks going on after the refused reload", 20, |v| {
        v.ok_ticks_after(before, 0) >= 2
    });

    // SIGHUP with a good, changed config: the next tick writes the metrics file it names
    let prom = s.dir.path().join("agent.prom");
    std::fs::write(
        s.config_path(),
        format!("{good}metrics_textfile: {}\n", prom.display()),
    )
    .unwrap();
    assert!(!prom.exists());
    let reloads = svc.count("RELOADING=1");
    svc.signal(libc::SIGHUP);
    svc.wait("the reload and a metrics file", 20, |v| {
        v.count("RELOADING=1") > reloads && prom.exists()
    });
    assert!(svc.log().contains("configuration reloaded"));
    let metrics = std::fs::read_to_string(&prom).unwrap();
    assert!(metrics.contains("transport=\"sdk\""), "{metrics}");

    // the identity file replaced (a new inode, as `install` or a re-enrolment writes it): the
    // service starts afresh in the same pid and ticks on with it
    let tmp = s.dir.path().join("identity.json.new");
    std::fs::copy(&id, &tmp).unwrap();
    std::fs::rename(&tmp, &id).unwrap();
    let before = svc.ticks().len();
    svc.wait("a fresh start for the new identity", 20, |v| {
        v.log()
            .contains("identity file was replaced: starting afresh")
    });
    // the new image counts its ticks from 1 again and becomes ready again
    svc.wait("ticks with the new identity", 60, |v| {
        v.ticks()
            .iter()
            .skip(before)
            .any(|(n, e)| *n == 2 && *e == 0)
    });
    assert!(svc.count("READY=1") >= 2);
    let r = s.cmd(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["run_mode"]["pid"], svc.pid(), "same pid: {v}");

    // SIGTERM between ticks: exit 0 at once, STOPPING=1, no service marker left
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    svc.signal(libc::SIGTERM);
    assert_eq!(svc.exit_within(10), 0, "{}", svc.log());
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    svc.wait("STOPPING=1", 5, |v| v.count("STOPPING=1") == 1);
    assert!(!s.state_dir().join("service.json").exists());
    let r = s.cmd(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["run_mode"]["mode"], "timer", "{v}");
}

/// Two boxes' agents on one host through the same edge router (several instances on one box,
/// or `status`/`enroll` beside the service): each keeps its own API session on the router. The
/// SDK named its channel `ziti-sdk-c[0]@<host>` in every process, the router keys its channel
/// -> API session map by that name, so the process that connected last took the entry and the
/// other's dials failed ("invalid api session id") until it reconnected (vendor patch 0007).
#[test]
fn two_agents_on_one_host_keep_their_own_router_sessions() {
    require_sdk();
    require_docker();
    let net = Net::shared();
    let (a, _) = sdk_box(net, "pair-a", Flavour::V2);
    let (b, _) = sdk_box(net, "pair-b", Flavour::V2);
    let mut sa = Svc::start(&a, 1000, Duration::from_secs(4), &[]);
    sa.wait("a's first two ticks", 90, |v| v.ok_ticks_after(0, 0) >= 2);

    // a keeps its connections to tenancy and OpenBao between ticks; a changed config makes
    // it open new ones, that is, dial again through its channel
    let good = std::fs::read_to_string(a.config_path()).unwrap();
    let redial = |sa: &mut Svc, n: u32| {
        let prom = a.dir.path().join(format!("a{n}.prom"));
        std::fs::write(
            a.config_path(),
            format!("{good}metrics_textfile: {}\n", prom.display()),
        )
        .unwrap();
        let reloads = sa.count("RELOADING=1");
        sa.signal(libc::SIGHUP);
        sa.wait("the reload", 20, |v| v.count("RELOADING=1") > reloads);
        let from = sa.ticks().len();
        sa.wait("three of a's ticks after the reload", 30, |v| {
            v.ticks().len() >= from + 3
        });
    };

    // b connects to the same router while a runs; then both tick side by side, a dialling anew
    let mut sb = Svc::start(&b, 1000, Duration::from_secs(4), &[]);
    sb.wait("b's first three ticks", 90, |v| v.ok_ticks_after(0, 0) >= 3);
    redial(&mut sa, 1);
    let a_ticks = sa.ticks();
    assert!(
        a_ticks.iter().all(|(_, e)| *e == 0),
        "a's ticks after b connected: {a_ticks:?}\n{}",
        sa.log()
    );
    let b_ticks = sb.ticks();
    assert!(b_ticks.iter().all(|(_, e)| *e == 0), "{b_ticks:?}");

    // b leaves (its channel closes on the router): a ticks on unharmed
    sb.signal(libc::SIGTERM);
    assert_eq!(sb.exit_within(10), 0, "{}", sb.log());
    redial(&mut sa, 2);
    let a_ticks = sa.ticks();
    assert!(
        a_ticks.iter().all(|(_, e)| *e == 0),
        "a's ticks after b left: {a_ticks:?}\n{}",
        sa.log()
    );
    // one check-in per tick reached each box's own tenancy
    assert!(a.tenancy.checkins().len() >= a_ticks.len());
    assert!(b.tenancy.checkins().len() >= b_ticks.len());
}

/// The quickstart runs the controller and the edge router in one process: stopping it takes
/// both away, and the ticks after it is back must succeed in the same process.
#[test]
fn service_survives_a_controller_and_edge_router_restart() {
    require_sdk();
    require_docker();
    // a network of its own, so stopping it disturbs no other test
    let dir = ziti::repo().join("target/ziti-net-svc");
    let (c, r) = ziti::ports();
    let net = Net::start_in(&dir, c + 2, r + 2);
    let (s, _id) = sdk_box(&net, "svc-restart", Flavour::V2);
    let watchdog = Duration::from_secs(20);
    let mut svc = Svc::start(&s, 1000, watchdog, &[]);
    svc.wait("three ticks", 90, |v| v.ok_ticks_after(0, 0) >= 3);

    net.stop();
    let before = svc.ticks().len();
    svc.wait("a tick failing while the network is down", 60, |v| {
        v.ok_ticks_after(before, 75) >= 1
    });
    let checkins = s.tenancy.checkins().len();
    net.restart();
    let back = svc.ticks().len();
    svc.wait("three good ticks after the restart", 180, |v| {
        v.ok_ticks_after(back, 0) >= 3
    });
    assert!(s.tenancy.checkins().len() >= checkins + 3);
    let log = svc.log();
    assert!(
        !log.contains("starting afresh"),
        "recovered by a new process, not by the SDK context:\n{log}"
    );
    // the loop fed the watchdog through the outage (after every tick, each bounded by the
    // time-outs): it was alive, only the mesh was not, and systemd would not have killed it
    let msgs = svc.msgs();
    let gap = longest_watchdog_gap(&msgs, msgs[0].0, Instant::now());
    assert!(gap < watchdog, "{gap:?}");
    assert!(svc.ticks().iter().all(|(_, e)| *e == 0 || *e == 75));
}

/// The SDK's loop wedged (the hook: no byte moves on an open connection, a dial's call never
/// returns): the ticks still end (the request, then the dial, time out on our side), but once
/// the call is older than any dial may take the watchdog is no longer fed, so systemd restarts
/// the service.
#[test]
fn a_wedged_sdk_call_starves_the_watchdog() {
    require_sdk();
    require_docker();
    let net = Net::shared();
    let (s, _id) = sdk_box(net, "svc-wedge-sdk", Flavour::V2);
    let wedge = s.dir.path().join("wedge");
    let mut svc = Svc::start(
        &s,
        1000,
        Duration::from_secs(2),
        &[
            ("MONKY_DEPLOYD_TEST_WEDGE", "sdk"),
            ("MONKY_DEPLOYD_TEST_WEDGE_FILE", wedge.to_str().unwrap()),
        ],
    );
    svc.wait("two ticks", 90, |v| v.ok_ticks_after(0, 0) >= 2);
    std::fs::write(&wedge, "").unwrap();
    let t_wedge = Instant::now();
    svc.wait("the stuck call noticed", 60, |v| {
        v.log().contains("its loop is wedged")
    });
    let noticed = Instant::now();
    let ticks_then = svc.ticks().len();
    std::thread::sleep(Duration::from_secs(10));
    let msgs = svc.msgs();
    // the loop still ticks (each ends 75: the dial times out on our side) …
    assert!(svc.ticks().len() > ticks_then, "{msgs:?}");
    assert!(svc.ticks().iter().skip(ticks_then).all(|(_, e)| *e == 75));
    // … but nothing fed the watchdog since the call became stuck: > 5x WatchdogSec
    let gap = longest_watchdog_gap(&msgs, noticed, Instant::now());
    assert!(gap >= Duration::from_secs(10), "{gap:?}: {msgs:?}");
    // and it was fed until the call was old enough (2 x timeout_s 5 + 10 s)
    let fed_after_wedge = msgs
        .iter()
        .filter(|(t, m)| *t > t_wedge && m == "WATCHDOG=1")
        .count();
    assert!(fed_after_wedge >= 1, "{msgs:?}");
}

/// The loop itself wedged: no tick, no STATUS, no WATCHDOG.
#[test]
fn a_wedged_loop_starves_the_watchdog() {
    require_sdk();
    require_docker();
    let net = Net::shared();
    let (s, _id) = sdk_box(net, "svc-wedge-loop", Flavour::V2);
    let wedge = s.dir.path().join("wedge");
    let mut svc = Svc::start(
        &s,
        1000,
        Duration::from_secs(2),
        &[
            ("MONKY_DEPLOYD_TEST_WEDGE", "loop"),
            ("MONKY_DEPLOYD_TEST_WEDGE_FILE", wedge.to_str().unwrap()),
        ],
    );
    svc.wait("two ticks", 90, |v| v.ok_ticks_after(0, 0) >= 2);
    std::fs::write(&wedge, "").unwrap();
    svc.wait("the loop wedged", 10, |v| {
        v.log().contains("test hook: wedged at loop")
    });
    let t0 = Instant::now();
    let ticks = svc.ticks().len();
    std::thread::sleep(Duration::from_secs(8));
    let msgs = svc.msgs();
    assert_eq!(svc.ticks().len(), ticks, "{msgs:?}");
    assert!(
        msgs.iter().all(|(t, m)| *t < t0 || m != "WATCHDOG=1"),
        "fed while wedged: {msgs:?}"
    );
}

/// systemd stopping the service mid-apply: the health wait ends, the tick reports INTERRUPTED
/// and saves state, and the process exits 0 (a stop is not a failure of the service).
#[test]
fn sigterm_mid_tick_ends_it_interrupted_and_exits_0() {
    require_sdk();
    require_docker();
    let net = Net::shared();
    let (s, _id) = sdk_box(net, "svc-sigterm", Flavour::V2);
    let text = std::fs::read_to_string(s.config_path()).unwrap();
    std::fs::write(
        s.config_path(),
        text.replace("healthy_timeout_s: 30\n", "healthy_timeout_s: 120\n"),
    )
    .unwrap();
    let compose = format!(
        "services:\n  slow:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"exec sleep 600\"]\n    \
         healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/never\"]\n      interval: 30s\n      start_period: 60s\n"
    );
    let sha = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, compose).files());
    let mut svc = Svc::start(&s, 1000, Duration::from_secs(4), &[]);
    svc.wait("the container", 90, |_| {
        s.containers().iter().any(|(_, state)| state == "running")
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert!(svc.ticks().is_empty(), "the first tick is still applying");
    let t0 = Instant::now();
    svc.signal(libc::SIGTERM);
    assert_eq!(svc.exit_within(20), 0, "{}", svc.log());
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed");
    assert_eq!(rep["sha"], sha.as_str());
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d.starts_with("INTERRUPTED: ") && d.ends_with("(SIGTERM)"),
        "{d}"
    );
    let log = svc.log();
    assert!(log.contains("INTERRUPTED"), "{log}");
    assert!(log.contains("stopped after tick 1"), "{log}");
    assert_eq!(svc.ticks(), vec![(1, 75)]);
    assert_eq!(svc.count("STOPPING=1"), 1);
    assert!(s.state()["last_error"]
        .as_str()
        .unwrap()
        .contains("INTERRUPTED"));
}

/// `sdk_refresh_s` reaches the SDK (vendored patch 0006): the context refreshes its services on
/// the configured period, and a reload that changes it starts afresh with the new one.
#[test]
fn sdk_refresh_period_reaches_the_sdk_and_a_reload_changes_it() {
    require_sdk();
    require_docker();
    let net = Net::shared();
    let (s, _id) = sdk_box(net, "svc-refresh", Flavour::V2);
    let good = std::fs::read_to_string(s.config_path()).unwrap();
    assert!(!good.contains("sdk_refresh_s"), "{good}");
    std::fs::write(s.config_path(), format!("{good}sdk_refresh_s: 45\n")).unwrap();
    // VERBOSE: the SDK logs each refresh it schedules
    let mut svc = Svc::start(&s, 1000, Duration::from_secs(4), &[("ZITI_LOG", "5")]);
    svc.wait("a first good tick and a refresh scheduled", 90, |v| {
        v.ok_ticks_after(0, 0) >= 1
            && v.log()
                .contains("scheduling service refresh 45 seconds from now")
    });
    assert!(
        !svc.log().contains("scheduling service refresh 60 seconds"),
        "the SDK's fixed 60 s is gone"
    );

    std::fs::write(s.config_path(), format!("{good}sdk_refresh_s: 40\n")).unwrap();
    svc.signal(libc::SIGHUP);
    svc.wait("the new period after a fresh start", 60, |v| {
        v.log()
            .contains("scheduling service refresh 40 seconds from now")
    });
    svc.signal(libc::SIGTERM);
    assert_eq!(svc.exit_within(10), 0, "{}", svc.log());
}

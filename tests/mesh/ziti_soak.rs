//! The soak over sdk (issue 20 item 3): `monky-deployd run` as the service (transport `sdk`, one
//! Ziti context for every tick) for 2,000 heartbeat ticks at a short interval (the debug-build
//! hook `MONKY_DEPLOYD_TEST_INTERVAL_MS`), on a quickstart network run as two processes
//! (`scripts/ziti-net.sh split`) so that each can be restarted alone. Four outages inside it,
//! each part down [`DOWN`]: the controller, the edge router, both (as the one-process
//! quickstart goes down), the controller again.
//!
//! From the agent's own `STATUS=tick N: exit E in MS ms` lines it checks: every tick ends 0 or
//! 75 (never 1), within the watchdog's stuck bound, numbered without a gap (no new process);
//! outside the outage windows (a stop → the first 0 tick after the restart) every tick is 0;
//! each restart is followed by a 0 tick within [`RECOVER`]; the 0 ticks are the check-ins tenancy
//! answered; state.json counts the same exits; RSS and open fds of the last quarter's good ticks
//! stay within a slack of the first quarter's. The agent runs under `strace -f -e trace=connect`
//! (seccomp filter: only connect(2) stops it) with `ZITI_LOG=4`, for its controller connections
//! and requests; three fresh-process `run --once` ticks, counted the same way first, give the
//! timer mode's figures.
//!
//! About 25 minutes, so it is not in the test command: `scripts/soak-ziti.sh` runs it and writes
//! its figures into docs/PERFORMANCE.md. `MONKY_ZITI_SOAK_TICKS` / `_INTERVAL_MS` shorten it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::common::ziti::{self, require_sdk, Net};
use crate::common::ziti_svc::*;
use crate::common::*;

/// How long each outage keeps its part down.
const DOWN: Duration = Duration::from_secs(20);
/// A restarted part's outage must be over (a tick ending 0) within this.
const RECOVER: Duration = Duration::from_secs(90);
/// No tick may take longer: the watchdog's bound for a stuck SDK call (2 × timeout_s 5 + 10 s).
const TICK_MAX_MS: u64 = 20_000;
/// After an outage's first 0 tick, what still counts as that outage's controller traffic.
const SETTLE: Duration = Duration::from_secs(60);
/// Flatness: the last quarter's max over the first quarter's max.
const RSS_SLACK_KIB: u64 = 1024;
const FDS_SLACK: usize = 2;
const TIMER_TICKS: usize = 3;
/// The service's SDK refresh period: the config's default, written out so the report says it.
const SDK_REFRESH_S: u64 = 300;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    Controller,
    Router,
    Both,
}

/// One outage as the driver made it.
#[derive(Clone, Debug)]
struct Outage {
    part: Part,
    /// Before the stop was asked for.
    stop: Instant,
    /// The stop done (the process gone).
    stopped: Instant,
    /// The part started again and answering (`ziti-net.sh split` returned).
    up: Instant,
    /// The service log's length at `stop`.
    log_at_stop: u64,
}

/// One tick, sampled when the driver saw its STATUS line (the agent then waits the interval).
struct Sample {
    t: TickStatus,
    /// The service log's length then.
    log_len: u64,
    rss: Option<u64>,
    fds: Option<usize>,
}

fn env_or(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn epoch(clock: (Instant, f64), t: Instant) -> f64 {
    clock.1 + t.saturating_duration_since(clock.0).as_secs_f64()
        - clock.0.saturating_duration_since(t).as_secs_f64()
}

/// The `(epoch seconds)` of every connect(2) to `port` in an `strace -f -ttt` file.
fn connects(trace: &Path, port: u16) -> Vec<f64> {
    let pat = format!("_port=htons({port})");
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("connect(") && l.contains(&pat))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect()
}

/// Requests the SDK logged at `ZITI_LOG=4` in `log`: (controller API, OIDC). An OIDC login is
/// discovery + authorize + cert login + token (4), a refresh 1.
fn requests(log: &str) -> (usize, usize) {
    let n = |p: &str| log.lines().filter(|l| l.contains(p)).count();
    let ctrl = log
        .lines()
        .filter(|l| {
            l.contains("ctrl[") && l.contains("] starting ") && !l.contains("starting paging")
        })
        .count();
    let oidc = n("oidc[internal] configuring provider")
        + 3 * n("oidc[internal] starting auth flow")
        + n("oidc[internal] refreshing OIDC token");
    (ctrl, oidc)
}

fn strace_wrapper(trace: &Path) -> Vec<String> {
    [
        "strace",
        "-f",
        "-qq",
        "-ttt",
        "--seccomp-bpf",
        "-e",
        "trace=connect",
        "-o",
        trace.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

fn median(mut v: Vec<usize>) -> usize {
    v.sort();
    v[v.len() / 2]
}

#[test]
#[ignore = "the sdk soak: about 25 minutes; scripts/soak-ziti.sh runs it"]
fn sdk_service_soak_through_controller_and_router_restarts() {
    require_sdk();
    require_docker();
    assert!(
        Command::new("strace").arg("-V").output().is_ok(),
        "strace is needed to count connections"
    );
    let ticks_wanted = env_or("MONKY_ZITI_SOAK_TICKS", 2000) as usize;
    let interval_ms = env_or("MONKY_ZITI_SOAK_INTERVAL_MS", 500);
    let t0 = Instant::now();
    let clock = (
        Instant::now(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64(),
    );

    // a network of its own (ports + 4: beside the shared one and tests/mesh/ziti_service.rs's), in
    // two processes
    let dir = ziti::repo().join("target/ziti-net-soak");
    let (c, r) = ziti::ports();
    let net = Net::start_in(&dir, c + 4, r + 4);
    net.split();
    let (cport, rport) = (net.ctrl_port(), net.router_port());
    let (s, _id) = sdk_box(&net, "soak-sdk", Flavour::V2);
    let cfg = std::fs::read_to_string(s.config_path()).unwrap();
    std::fs::write(
        s.config_path(),
        format!("{cfg}sdk_refresh_s: {SDK_REFRESH_S}\n"),
    )
    .unwrap();
    let work = s.dir.path();
    let _keep = KeepLogs(work.to_path_buf());

    // timer mode first, counted the same way: fresh-process ticks
    let mut timer: Vec<(usize, usize, usize, usize)> = Vec::new(); // ctrl conns, router conns, ctrl reqs, oidc reqs
    for i in 0..TIMER_TICKS {
        let trace = work.join(format!("once.{i}.trace"));
        let w = strace_wrapper(&trace);
        let o = Command::new(&w[0])
            .args(&w[1..])
            .arg(BIN)
            .args([
                "--config",
                s.config_path().to_str().unwrap(),
                "run",
                "--once",
            ])
            .env("ZITI_LOG", "4")
            .env_remove("MONKY_LOG")
            .output()
            .unwrap();
        std::fs::write(work.join(format!("once.{i}.log")), &o.stderr).unwrap();
        let log = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "timer tick {i}:\n{log}");
        let (cr, or) = requests(&log);
        timer.push((
            connects(&trace, cport).len(),
            connects(&trace, rport).len(),
            cr,
            or,
        ));
    }
    let checkins_before = s.tenancy.checkins().len();

    // the service
    let trace = work.join("service.trace");
    let w = strace_wrapper(&trace);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    let watchdog = Duration::from_secs(20);
    let mut svc = Svc::start_under(&w, &s, interval_ms, watchdog, &[("ZITI_LOG", "4")]);
    let pid = svc.pid() as u32;
    let schedule: Vec<(usize, Part)> = [
        (0.2, Part::Controller),
        (0.4, Part::Router),
        (0.6, Part::Both),
        (0.8, Part::Controller),
    ]
    .iter()
    .map(|(f, p)| ((ticks_wanted as f64 * f) as usize, *p))
    .collect();

    let mut samples: Vec<Sample> = Vec::new();
    let mut outages: Vec<Outage> = Vec::new();
    let mut running: Option<std::thread::JoinHandle<Outage>> = None;
    let (mut seen_msgs, mut next) = (0usize, 0usize);
    let mut progress = Instant::now();
    // the outage whose restart has not been followed by a 0 tick yet
    let mut awaiting: Option<Instant> = None;
    let log_len = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    while samples.len() < ticks_wanted || running.is_some() || awaiting.is_some() {
        if svc.msg_count() > seen_msgs {
            seen_msgs = svc.msg_count();
            let st = svc.statuses();
            if st.len() > samples.len() {
                let (rss, fds) = (rss_kib(pid), open_fds(pid));
                let len = log_len(&svc.log);
                let last = st.len() - 1;
                for (i, t) in st.iter().enumerate().skip(samples.len()) {
                    if awaiting.is_some_and(|up| t.at > up && t.exit == 0) {
                        awaiting = None;
                    }
                    samples.push(Sample {
                        t: *t,
                        log_len: len,
                        rss: (i == last).then_some(rss),
                        fds: (i == last).then_some(fds),
                    });
                }
                progress = Instant::now();
            }
        }
        if let Some(st) = svc.exited() {
            panic!(
                "the service ended ({st}) after {} ticks:\n{}",
                samples.len(),
                tail(&svc.log())
            );
        }
        assert!(
            progress.elapsed() < Duration::from_millis(TICK_MAX_MS + interval_ms + 30_000),
            "no tick ended for {:?} (after tick {}): a hung tick\n{}",
            progress.elapsed(),
            samples.len(),
            tail(&svc.log())
        );
        if running.as_ref().is_some_and(|h| h.is_finished()) {
            let o = running.take().unwrap().join().expect("the outage thread");
            awaiting = Some(o.up);
            outages.push(o);
        }
        if awaiting.is_some_and(|up| up.elapsed() > RECOVER + Duration::from_secs(30)) {
            break; // never recovered: the checks below say so, with the figures
        }
        if running.is_none()
            && awaiting.is_none()
            && next < schedule.len()
            && samples.len() >= schedule[next].0
        {
            let part = schedule[next].1;
            next += 1;
            let n = Net {
                dir: net.dir.clone(),
                ctrl: net.ctrl.clone(),
            };
            let log_at_stop = log_len(&svc.log);
            running = Some(std::thread::spawn(move || {
                let stop = Instant::now();
                match part {
                    Part::Controller => n.stop_ctrl(),
                    Part::Router => n.stop_router(),
                    Part::Both => n.stop(),
                }
                let stopped = Instant::now();
                std::thread::sleep(DOWN);
                n.split();
                Outage {
                    part,
                    stop,
                    stopped,
                    up: Instant::now(),
                    log_at_stop,
                }
            }));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SIGTERM between ticks ends it with 0
    std::thread::sleep(Duration::from_millis(100));
    if let Some(st) = svc.exited() {
        panic!(
            "the service ended ({st}) before SIGTERM:\n{}",
            tail(&svc.log())
        );
    }
    svc.signal(libc::SIGTERM);
    assert_eq!(svc.exit_within(30), 0, "{}", tail(&svc.log()));
    let log = svc.log();
    let msgs = svc.msgs();
    let statuses = svc.statuses();
    let checkins = s.tenancy.checkins().len() - checkins_before;
    let counters = s.state()["counters"]["ticks"].clone();
    net.stop();

    // each outage's window: its stop → the end of the first 0 tick after the part was back
    let windows: Vec<(Instant, Option<Instant>)> = outages
        .iter()
        .map(|o| {
            let ok = samples
                .iter()
                .find(|x| x.t.at > o.up && x.t.exit == 0)
                .map(|x| x.t.at);
            (o.stop, ok)
        })
        .collect();
    let in_window = |t: Instant| {
        windows
            .iter()
            .any(|(a, b)| t >= *a && b.is_none_or(|b| t <= b))
    };

    // figures
    let mut exits = std::collections::BTreeMap::<i32, usize>::new();
    for x in &samples {
        *exits.entry(x.t.exit).or_default() += 1;
    }
    let n0 = exits.get(&0).copied().unwrap_or(0);
    let q = ticks_wanted / 4;
    let good: Vec<&Sample> = samples
        .iter()
        .filter(|x| x.t.exit == 0 && !in_window(x.t.at) && x.rss.is_some())
        .collect();
    let first_q: Vec<&&Sample> = good.iter().filter(|x| (x.t.n as usize) <= q).collect();
    let last_q: Vec<&&Sample> = good
        .iter()
        .filter(|x| (x.t.n as usize) > ticks_wanted - q)
        .collect();
    let max_rss = |v: &[&&Sample]| v.iter().filter_map(|x| x.rss).max().unwrap_or(0);
    let max_fds = |v: &[&&Sample]| v.iter().filter_map(|x| x.fds).max().unwrap_or(0);
    let (first, last) = (good.first().unwrap(), good.last().unwrap());
    let all_rss = samples.iter().filter_map(|x| x.rss).max().unwrap_or(0);
    let all_fds = samples.iter().filter_map(|x| x.fds).max().unwrap_or(0);
    let mut ms: Vec<u64> = samples.iter().map(|x| x.t.ms).collect();
    ms.sort();
    let p = |f: f64| ms[((ms.len() - 1) as f64 * f) as usize];
    let slowest_75 = samples
        .iter()
        .filter(|x| x.t.exit == 75)
        .map(|x| x.t.ms)
        .max()
        .unwrap_or(0);

    let ctrl_all = connects(&trace, cport);
    let router_all = connects(&trace, rport);
    // the accounting: start-up (to the end of tick 1), each outage from its stop to SETTLE
    // after its first 0 tick (the SDK catches up on its refreshes), and the steady rest
    let (first_at, last_at) = (samples[0].t.at, samples.last().unwrap().t.at);
    let log_at = |t: Instant| {
        samples
            .iter()
            .find(|x| x.t.at >= t)
            .map_or(log.len(), |x| x.log_len as usize)
    };
    let acct: Vec<(Instant, Instant)> = outages
        .iter()
        .zip(&windows)
        .enumerate()
        .map(|(i, (o, (_, ok)))| {
            let next = outages.get(i + 1).map_or(last_at, |n| n.stop);
            let end = ok.map_or(last_at, |b| b + SETTLE).min(next).min(last_at);
            (o.stop, end.max(o.stop))
        })
        .collect();
    let inside = |t: f64| {
        acct.iter()
            .any(|(a, b)| t >= epoch(clock, *a) && t <= epoch(clock, *b))
    };
    let startup = |t: f64| t <= epoch(clock, first_at);
    let split = |v: &[f64]| {
        let st = v.iter().filter(|t| startup(**t)).count();
        let inn = v.iter().filter(|t| !startup(**t) && inside(**t)).count();
        (st, inn, v.len() - st - inn)
    };
    let (ctrl_start, ctrl_in, ctrl_steady) = split(&ctrl_all);
    let (router_start, router_in, router_steady) = split(&router_all);
    let span = last_at - first_at;
    let win_time: Duration = acct.iter().map(|(a, b)| *b - *a).sum();
    let steady_h = (span - win_time).as_secs_f64() / 3600.0;
    let (ctrl_req, oidc_req) = requests(&log);
    let req = |a: usize, b: usize| {
        let (x, y) = requests(&String::from_utf8_lossy(
            log.as_bytes().get(a..b).unwrap_or(&[]),
        ));
        x + y
    };
    let req_start = req(0, samples[0].log_len as usize);
    let req_in: usize = outages
        .iter()
        .zip(&acct)
        .map(|(o, (_, end))| req(o.log_at_stop as usize, log_at(*end)))
        .sum();
    let req_steady = ctrl_req + oidc_req - req_in - req_start;
    let per_h = |n: usize| n as f64 / steady_h;
    let fleet = 10_000.0;
    let timer_conn = median(timer.iter().map(|x| x.0).collect());
    let timer_req = median(timer.iter().map(|x| x.2 + x.3).collect());
    let svc_conn_s = fleet * per_h(ctrl_steady) / 3600.0;
    let timer_conn_s = fleet * timer_conn as f64 / 60.0;
    let svc_req_s = fleet * per_h(req_steady) / 3600.0;
    let timer_req_s = fleet * timer_req as f64 / 60.0;

    let mut outage_rows = String::new();
    for (i, (o, (_, ok))) in outages.iter().zip(&windows).enumerate() {
        let during: Vec<&Sample> = samples
            .iter()
            .filter(|x| x.t.at >= o.stop && ok.is_none_or(|b| x.t.at <= b))
            .collect();
        let c = |e: i32| during.iter().filter(|x| x.t.exit == e).count();
        let first75 = during
            .iter()
            .find(|x| x.t.exit == 75)
            .map_or("—".to_string(), |x| {
                format!("{:.1} s", (x.t.at - o.stop).as_secs_f64())
            });
        let down0 = samples
            .iter()
            .filter(|x| x.t.at > o.stopped && x.t.at < o.up && x.t.exit == 0)
            .count();
        outage_rows += &format!(
            "| {} at tick {} | {:.0} s | {first75} | {} × 75, {} × 0 ({down0} of them while it was down) | {} |\n",
            match o.part {
                Part::Controller => "controller",
                Part::Router => "edge router",
                Part::Both => "controller + edge router",
            },
            schedule[i].0,
            (o.up - o.stop).as_secs_f64(),
            c(75),
            c(0),
            ok.map_or("**none**".to_string(), |b| format!(
                "{:.1} s",
                (b - o.up).as_secs_f64()
            )),
        );
    }
    let exit_list = exits
        .iter()
        .map(|(k, v)| format!("exit {k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let md = format!(
        "<!-- soak-ziti:begin (generated by scripts/soak-ziti.sh; do not edit) -->\n\
         Generated {date} by `scripts/soak-ziti.sh` (`cargo test --test mesh -- --ignored ziti_soak::`, debug \
         build, {cores} cores shared with other builds, load average at the end {load}): `monky-deployd run` as the service over \
         `sdk`, one Ziti context for all ticks (`sdk_refresh_s` {refresh} s), a {interval_ms} ms interval, heartbeat ticks (check-in + \
         report), the quickstart's controller and edge router (`ziti {zv}`) as two processes; \
         {mins:.1} min in all, the service's ticks over {span:.1} min.\n\n\
         | what | figure |\n|---|---|\n\
         | ticks | {n}, numbered 1–{nlast} by the one process (no fresh start) |\n\
         | exit codes (the agent's `STATUS=` per tick; state.json counts the same) | {exit_list} |\n\
         | check-ins tenancy answered | {checkins} for {n0} ticks ending 0 |\n\
         | tick wall (the agent's own) | p50 {p50} ms, p99 {p99} ms, max {pmax} ms (a 75: at most {slowest_75} ms) |\n\
         | RSS of the service | {rss_a} KiB at tick {ta} → {rss_b} KiB at tick {tb}; max {all_rss} KiB; max of the first quarter's good ticks {rq1} KiB, of the last quarter's {rq4} KiB |\n\
         | open fds | {fa} → {fb}; max {all_fds}; first quarter max {fq1}, last quarter max {fq4} |\n\
         | controller TCP connections (connect(2) to :{cport}) | **{ctrl_total} in all**: {ctrl_start} loading the context (to the end of tick 1), {ctrl_in} in the outages (stop → {settle} s after the first 0 tick; refused attempts included), {ctrl_steady} in the {steady_min:.1} min between them ({ctrl_h:.1} an hour) |\n\
         | edge-router connections (to :{rport}) | {router_total} in all: {router_start} loading, {router_in} in the outages, {router_steady} between them |\n\
         | controller requests (SDK log, `ZITI_LOG=4`; an OIDC login counted as its 4 requests) | {ctrl_req} API + {oidc_req} OIDC in all: {req_start} loading, {req_in} in the outages, {req_steady} between them ({req_h:.0} an hour) |\n\
         | timer mode, same network, {TIMER_TICKS} fresh-process `run --once` | controller connections {tc}, requests {treq} per tick (median of {timer:?}: connections, router connections, API, OIDC) |\n\n\
         | outage | down for (stop → back) | first 75 after the stop | ticks from the stop to the first 0 after the restart | back → first 0 tick |\n\
         |---|---|---|---|---|\n{outage_rows}\n\
         Fleet of 10,000 boxes, ticking once a minute: timer mode 10,000 × {tc} / 60 ≈ **{timer_conn_s:.0} controller \
         TLS handshakes a second** and 10,000 × {treq} / 60 ≈ {timer_req_s:.0} requests a second; service mode \
         10,000 × {ctrl_h:.1} / 3600 ≈ **{svc_conn_s:.1} handshakes a second** and ≈ {svc_req_s:.0} requests a second \
         (the service's controller traffic follows the SDK's own clock, not the ticks: this soak's \
         {interval_ms} ms interval does not change it).\n\
         <!-- soak-ziti:end -->\n",
        date = utc_minute(),
        refresh = SDK_REFRESH_S,
        cores = std::thread::available_parallelism().map_or(0, |n| n.get()),
        load = std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .next()
            .unwrap_or("?")
            .to_owned(),
        zv = String::from_utf8_lossy(
            &Command::new(ziti::ziti_bin())
                .arg("version")
                .output()
                .unwrap()
                .stdout
        )
        .trim(),
        mins = t0.elapsed().as_secs_f64() / 60.0,
        span = span.as_secs_f64() / 60.0,
        n = samples.len(),
        nlast = samples.last().unwrap().t.n,
        p50 = p(0.5),
        p99 = p(0.99),
        pmax = p(1.0),
        rss_a = first.rss.unwrap(),
        ta = first.t.n,
        rss_b = last.rss.unwrap(),
        tb = last.t.n,
        rq1 = max_rss(&first_q),
        rq4 = max_rss(&last_q),
        fa = first.fds.unwrap(),
        fb = last.fds.unwrap(),
        fq1 = max_fds(&first_q),
        fq4 = max_fds(&last_q),
        ctrl_total = ctrl_all.len(),
        ctrl_h = per_h(ctrl_steady),
        router_total = router_all.len(),
        req_h = per_h(req_steady),
        settle = SETTLE.as_secs(),
        steady_min = steady_h * 60.0,
        tc = timer_conn,
        treq = timer_req,
    );
    eprintln!("{md}");
    std::fs::write(figures_path("soak-ziti.md"), &md).unwrap();

    // what must hold
    assert!(
        first.rss.unwrap() > 0 && first.fds.unwrap() > 0,
        "the samples are not the agent's (pid {pid})"
    );
    assert_eq!(samples.len(), ticks_wanted.max(samples.len()));
    assert_eq!(outages.len(), schedule.len(), "every outage ran");
    assert!(
        statuses
            .iter()
            .enumerate()
            .all(|(i, t)| t.n == i as u64 + 1),
        "ticks not numbered 1..n: a new process?"
    );
    assert!(!log.contains("starting afresh"), "{}", tail(&log));
    let bad: Vec<&TickStatus> = samples
        .iter()
        .map(|x| &x.t)
        .filter(|t| !(t.exit == 0 || t.exit == 75 && in_window(t.at)))
        .collect();
    assert!(
        bad.is_empty(),
        "ticks with a wrong exit (only 0, or 75 inside an outage window): {bad:?}"
    );
    let slow: Vec<&TickStatus> = samples
        .iter()
        .map(|x| &x.t)
        .filter(|t| t.ms > TICK_MAX_MS)
        .collect();
    assert!(slow.is_empty(), "ticks over {TICK_MAX_MS} ms: {slow:?}");
    for (o, (_, ok)) in outages.iter().zip(&windows) {
        let ok = ok.unwrap_or_else(|| panic!("no 0 tick after {o:?}"));
        assert!(
            ok - o.up <= RECOVER,
            "{o:?}: the first 0 tick came {:?} after",
            ok - o.up
        );
    }
    // a tick whose answer was lost as its part went down is a 75 tenancy saw
    assert!(
        checkins >= n0 && checkins <= n0 + outages.len(),
        "{checkins} check-ins for {n0} ticks ending 0"
    );
    for (k, v) in &exits {
        let timer_extra = if *k == 0 { TIMER_TICKS } else { 0 };
        assert_eq!(
            counters[k.to_string()].as_u64(),
            Some((*v + timer_extra) as u64),
            "state.json counters {counters} against {exits:?}"
        );
    }
    assert!(
        max_rss(&last_q) <= max_rss(&first_q) + RSS_SLACK_KIB,
        "RSS grew: first quarter max {} KiB, last {} KiB",
        max_rss(&first_q),
        max_rss(&last_q)
    );
    assert!(
        max_fds(&last_q) <= max_fds(&first_q) + FDS_SLACK,
        "fds grew: first quarter max {}, last {}",
        max_fds(&first_q),
        max_fds(&last_q)
    );
    let gap = longest_watchdog_gap(&msgs, msgs[0].0, msgs.last().unwrap().0);
    assert!(gap < watchdog, "the watchdog went unfed for {gap:?}");
    assert!(timer.iter().all(|x| x.0 <= 2), "timer ticks: {timer:?}");
    // issue 20's goal, a count (not a time): at most one controller handshake a box-minute
    assert!(
        per_h(ctrl_steady) <= 60.0,
        "{ctrl_steady} controller connections in {:.1} min",
        steady_h * 60.0
    );
}

/// Copies the soak's logs and traces to `$CARGO_TARGET_DIR/soak-ziti/` however the test ends.
struct KeepLogs(std::path::PathBuf);

impl Drop for KeepLogs {
    fn drop(&mut self) {
        let to = figures_path("soak-ziti");
        let _ = std::fs::create_dir_all(&to);
        for e in std::fs::read_dir(&self.0).into_iter().flatten().flatten() {
            let name = e.file_name();
            let n = name.to_string_lossy();
            if n.ends_with(".log") || n.ends_with(".trace") {
                let _ = std::fs::copy(e.path(), to.join(&name));
            }
        }
    }
}

/// The last 60 lines of a log.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(60)..].join("\n")
}

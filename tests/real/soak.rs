//! The soak (issue 10): the real binary in loop mode (`run`, the laptop way) for 1,000 heartbeat
//! ticks plus 50 applies, on real parts (OpenBao, the test tenancy, the real dockerd behind a
//! socket the test can cut, compose v5), with loopback-only faults injected at random from a
//! fixed seed: tenancy 503 / 429 / connection reset / a hang past the time-out on check-in, a
//! 503 on the bundle download or on the report, dockerd gone for one tick.
//!
//! Before each tick the driver arms at most one fault (12 % of heartbeats, 35 % of apply ticks) and says what must happen; after it (the
//! tick's end is its state save: state.json's per-exit counters move by one) it checks the exit
//! code the agent counted and the reports tenancy accepted: every tick's exit code is the
//! expected one, and every tick whose report tenancy could take delivered it. Every 50 ticks it
//! samples the loop process's RSS and open fds and the state dir's size.
//!
//! About 6-10 minutes on two cores with a debug build, so it is not in the test command:
//! `scripts/soak.sh` runs it (`cargo test --test real -- --ignored soak::`) and writes its figures into
//! docs/RELIABILITY.md.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::fault_parts::DockerProxy;
use crate::common::*;
use serde_json::Value;

const HEARTBEATS: usize = 1000;
const APPLIES: usize = 50;
const INTERVAL_MS: u64 = 150;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    Checkin503,
    Checkin429,
    CheckinReset,
    CheckinHang,
    Bundle503,
    Report503,
    DockerGone,
}

fn counters(state_dir: &Path) -> Option<BTreeMap<String, u64>> {
    let b = std::fs::read(state_dir.join("state.json")).ok()?;
    let v: Value = serde_json::from_slice(&b).ok()?;
    let t = v["counters"]["ticks"].as_object()?;
    Some(
        t.iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
            .collect(),
    )
}

fn total(c: &BTreeMap<String, u64>) -> u64 {
    c.values().sum()
}

/// (bytes of the state dir without releases/, number of releases, bytes of releases/)
fn disk(state_dir: &Path) -> (u64, usize, u64) {
    fn walk(p: &Path) -> u64 {
        let mut n = 0;
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                n += walk(&e.path());
            } else if t.is_file() {
                n += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
        n
    }
    let rel = state_dir.join("releases");
    let all = walk(state_dir);
    let r = walk(&rel);
    let count = std::fs::read_dir(&rel).map(|d| d.count()).unwrap_or(0);
    (all - r, count, r)
}

/// (tick, RSS KiB, open fds, disk)
type Sample = (usize, u64, usize, (u64, usize, u64));

#[test]
#[ignore = "the soak: about 10 minutes; scripts/soak.sh runs it"]
fn soak_1000_heartbeats_50_applies_with_random_faults() {
    require_docker();
    let t0 = Instant::now();
    let mut s = Stack::new("soak", Flavour::V5);
    s.tenancy.set_lease_limit(1000);
    let ctl = tempfile::tempdir().unwrap();
    let proxy = DockerProxy::start(&ctl.path().join("docker.sock"));
    s.set_extra(&format!(
        "docker_host: unix://{}\ninterval_s: 5\nhealthy_timeout_s: 30\n",
        proxy.path().display()
    ));
    s.give_bootstrap();
    let mut variant = 0u32;
    let mut new_bundle = |s: &Stack| {
        variant += 1;
        let b = web_bundle(
            s,
            variant as u64,
            &format!("soak{variant}"),
            &format!("soak-secret-{variant}"),
        );
        s.tenancy.set_bundle(&s.env, b.files())
    };
    let mut desired = new_bundle(&s);
    let log_path = ctl.path().join("agent.log");
    let mut child = Command::new(BIN)
        .args(["--config", s.config_path().to_str().unwrap(), "run"])
        .env("MONKY_DEPLOYD_TEST_INTERVAL_MS", INTERVAL_MS.to_string())
        .env_remove("MONKY_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();

    let mut rng = fastrand::Rng::with_seed(0x5eed_0010);
    let mut applied: Option<String> = None;
    let (mut heartbeats, mut applies, mut ticks) = (0usize, 0usize, 0usize);
    let mut since_apply = 0usize;
    let mut hangs = 0;
    let mut faults: BTreeMap<String, usize> = BTreeMap::new();
    let mut exits: BTreeMap<i32, usize> = BTreeMap::new();
    let mut samples: Vec<Sample> = Vec::new();
    let mut tick_ms: Vec<u128> = Vec::new();
    let mut last = counters(&s.state_dir()).unwrap_or_default();
    let mut armed: Option<Fault> = None;
    let mut pending = true; // the first bundle is desired before the loop starts

    while heartbeats < HEARTBEATS || applies < APPLIES {
        // the tick that is about to run (or already running, for the very first one): arm
        // nothing for the first, then at most one fault, chosen from what this tick will do
        let is_apply = pending;
        let reports_before = s.tenancy.reports().len();
        if ticks > 0 && rng.u32(0..100) < if is_apply { 35 } else { 12 } {
            let mut menu = vec![
                Fault::Checkin503,
                Fault::Checkin429,
                Fault::CheckinReset,
                Fault::Report503,
            ];
            if is_apply {
                menu.push(Fault::Bundle503);
            } else {
                menu.push(Fault::DockerGone);
            }
            if hangs < 5 {
                menu.push(Fault::CheckinHang);
            }
            let f = menu[rng.usize(0..menu.len())];
            match f {
                Fault::Checkin503 => s.tenancy.fail_next("/v1/agent/checkin", 503, "UNAVAILABLE"),
                Fault::Checkin429 => s
                    .tenancy
                    .fail_next("/v1/agent/checkin", 429, "RATE_LIMITED"),
                Fault::CheckinReset => s.tenancy.fail_next("/v1/agent/checkin", 0, ""),
                Fault::CheckinHang => {
                    hangs += 1;
                    s.tenancy
                        .delay_next("/v1/agent/checkin", Duration::from_secs(6))
                }
                Fault::Bundle503 => s.tenancy.fail_next("/v1/agent/bundle/", 503, "UNAVAILABLE"),
                Fault::Report503 => s.tenancy.fail_next("/v1/agent/report", 503, "UNAVAILABLE"),
                Fault::DockerGone => proxy.cut(),
            }
            *faults.entry(format!("{f:?}")).or_default() += 1;
            armed = Some(f);
        }
        // wait for this tick's end: its state save moves one counter by one
        let started = Instant::now();
        let now = loop {
            if let Some(c) = counters(&s.state_dir()) {
                if total(&c) > total(&last) {
                    break c;
                }
            }
            if let Ok(Some(st)) = child.try_wait() {
                panic!("the loop ended ({st}) after {ticks} ticks:\n{}", log());
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "no tick ended within 120 s (tick {ticks}):\n{}",
                log()
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        tick_ms.push(started.elapsed().as_millis());
        assert_eq!(
            total(&now),
            total(&last) + 1,
            "the driver missed a tick (tick {ticks})"
        );
        let exit: i32 = now
            .iter()
            .find(|(k, v)| **v > last.get(*k).copied().unwrap_or(0))
            .map(|(k, _)| k.parse().unwrap())
            .unwrap();
        last = now;
        ticks += 1;
        *exits.entry(exit).or_default() += 1;
        let new_reports: Vec<Value> = s.tenancy.reports()[reports_before..].to_vec();

        // what had to happen
        let (want_exit, want_report): (i32, Option<(&str, String)>) = match armed {
            Some(
                Fault::Checkin503 | Fault::Checkin429 | Fault::CheckinReset | Fault::CheckinHang,
            ) => (75, None),
            Some(Fault::Bundle503) => (75, None),
            Some(Fault::Report503) => (0, None),
            Some(Fault::DockerGone) => (1, Some(("failed", applied.clone().unwrap_or_default()))),
            None => (0, Some(("applied", desired.clone()))),
        };
        let ctx = format!(
            "tick {ticks} ({}, fault {armed:?}): exit {exit}, reports {new_reports:?}",
            if is_apply { "apply" } else { "heartbeat" }
        );
        assert_eq!(exit, want_exit, "{ctx}\n{}", log());
        match &want_report {
            Some((result, sha)) => {
                let r = new_reports
                    .last()
                    .unwrap_or_else(|| panic!("a report tenancy could take was lost: {ctx}"));
                assert_eq!(r["result"], *result, "{ctx}");
                assert_eq!(r["sha"], sha.as_str(), "{ctx}");
                if *result == "failed" {
                    assert!(
                        r["detail"]
                            .as_str()
                            .unwrap()
                            .starts_with("DOCKER_UNAVAILABLE"),
                        "{ctx}"
                    );
                }
            }
            None => assert!(new_reports.is_empty(), "{ctx}"),
        }
        if armed == Some(Fault::CheckinHang) {
            // the held request answers late (after the agent gave up): let it go by
            std::thread::sleep(Duration::from_secs(6).saturating_sub(started.elapsed()));
        }
        if armed == Some(Fault::DockerGone) {
            proxy.restore();
        }
        // what this tick did
        let converged_apply = is_apply && exit == 0;
        if converged_apply {
            applied = Some(desired.clone());
            applies += 1;
            pending = false;
            since_apply = 0;
        } else if !is_apply {
            heartbeats += 1;
            since_apply += 1;
        }
        armed = None;
        if ticks % 50 == 0 {
            samples.push((ticks, rss_kib(pid), open_fds(pid), disk(&s.state_dir())));
        }
        // the next apply: every 20 heartbeats; tenancy says so at the next check-in
        if !pending && applies < APPLIES && (since_apply >= 20 || heartbeats >= HEARTBEATS) {
            desired = new_bundle(&s);
            pending = true;
        }
    }
    samples.push((ticks, rss_kib(pid), open_fds(pid), disk(&s.state_dir())));
    // SIGTERM between ticks ends the loop with 0
    unsafe {
        libc::kill(pid as i32, libc::SIGTERM);
    }
    let st = child.wait().unwrap();
    assert!(st.success(), "SIGTERM ends the loop with 0: {st:?}");
    let state = s.state();
    assert_eq!(state["applied_sha"], desired.as_str());

    // flat: from the first sample after the warm-up (the first 100 ticks) to the end
    let warm = *samples.iter().find(|x| x.0 >= 100).unwrap();
    let end = *samples.last().unwrap();
    let rss_max = samples.iter().map(|x| x.1).max().unwrap();
    let fds_max = samples.iter().map(|x| x.2).max().unwrap();
    let state_max = samples.iter().map(|x| (x.3).0).max().unwrap();
    let per_release = (end.3).2 / (end.3).1.max(1) as u64;
    let mut sorted = tick_ms.clone();
    sorted.sort();
    let p50 = sorted[sorted.len() / 2];
    let p99 = sorted[sorted.len() * 99 / 100];
    let fault_list = faults
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let exit_list = exits
        .iter()
        .map(|(k, v)| format!("exit {k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    let md = format!(
        "<!-- soak:begin (generated by scripts/soak.sh; do not edit) -->\n\
         Generated {date} by `scripts/soak.sh` (`cargo test --test real -- --ignored soak::`, debug build, \
         compose v5, loop mode with a {INTERVAL_MS} ms interval, seed 0x5eed0010), {mins:.1} min:\n\n\
         | what | figure |\n|---|---|\n\
         | ticks | {ticks}: {heartbeats} heartbeats, {APPLIES} applies converged, the rest faulted apply attempts |\n\
         | faults injected | {nf} ({fault_list}) |\n\
         | exit codes (each checked against the fault armed for that tick) | {exit_list}; all as expected |\n\
         | reports | every tick tenancy could take a report from delivered one (checked per tick) |\n\
         | RSS of the loop process | {rw} KiB after 100 ticks → {re} KiB at the end (max {rss_max} KiB) |\n\
         | open fds | {fw} after 100 ticks → {fe} at the end (max {fds_max}) |\n\
         | state dir without releases/ | {sw} B after 100 ticks → {se} B at the end (max {state_max} B) |\n\
         | releases/ | {nrel} directories, {per_release} B each (one per sha; `--prune` keeps `keep_releases`) |\n\
         | tick wall time as the driver saw it (incl. the {INTERVAL_MS} ms wait) | p50 {p50} ms, p99 {p99} ms |\n\
         <!-- soak:end -->\n",
        date = utc_minute(),
        mins = t0.elapsed().as_secs_f64() / 60.0,
        nf = faults.values().sum::<usize>(),
        rw = warm.1,
        re = end.1,
        fw = warm.2,
        fe = end.2,
        sw = (warm.3).0,
        se = (end.3).0,
        nrel = (end.3).1,
    );
    eprintln!("{md}");
    std::fs::write(figures_path("soak.md"), &md).unwrap();
    assert!(
        end.1 <= warm.1 + 2048,
        "RSS grew {} → {} KiB",
        warm.1,
        end.1
    );
    assert!(end.2 <= warm.2 + 2, "fds grew {} → {}", warm.2, end.2);
    assert!(
        (end.3).0 <= (warm.3).0 + 16 * 1024,
        "the state dir grew {} → {} B",
        (warm.3).0,
        (end.3).0
    );
    assert_eq!(heartbeats, HEARTBEATS);
    assert_eq!(applies, APPLIES);
    drop(s);
}

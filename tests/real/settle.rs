//! "applied tells the truth" (issue 19) on real parts: a real dockerd under compose v1, v2.22
//! and v5, real OpenBao, the test tenancy, the real binary. One-shot jobs (compose's
//! `service_completed_successfully` and the `monky.job` label), the settle window and crash
//! loops (in the window and later, in a heartbeat), `current` left on what runs when a pull
//! fails, backoff for a failing sha, SIGTERM during `up` reaching compose's whole process
//! group; and a measurement of what the settle window adds to an apply.

use crate::common::*;
use serde_json::{json, Value};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A tag the test registry does not have: `compose pull` fails on it.
const MISSING_IMAGE: &str = "127.0.0.1:5001/monky/busybox:no-such-tag";

/// A healthy long-running web service (httpd, health check on a file it touches first).
fn web_service(variant: &str) -> String {
    format!(
        "  web:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"touch /tmp/ok; exec httpd -f -p 8080 -h /tmp\"]\n    \
         environment:\n      VARIANT: \"{variant}\"\n    \
         healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n"
    )
}

fn healthy_web(variant: &str) -> String {
    format!("services:\n{}", web_service(variant))
}

/// A migration job `migrate` (exits `code` after a second) and `web`, which compose starts only
/// once `migrate` completed successfully.
fn job_and_web(code: i32, job_sleep: u32) -> String {
    format!(
        "services:\n  migrate:\n    image: {IMAGE}\n    \
         command: [\"sh\", \"-c\", \"sleep {job_sleep}; echo migrated; exit {code}\"]\n{}    \
         depends_on:\n      migrate:\n        condition: service_completed_successfully\n",
        web_service("job")
    )
}

/// `web` restarting for ever under `restart: unless-stopped`: it exits `code` `after` seconds
/// after each start. No health check: only the restart count tells.
fn crashing_web(after: u32, code: i32, variant: &str) -> String {
    format!(
        "services:\n  web:\n    image: {IMAGE}\n    init: true\n    restart: unless-stopped\n    \
         command: [\"sh\", \"-c\", \"sleep {after}; echo crashing; exit {code}\"]\n    \
         environment:\n      VARIANT: \"{variant}\"\n"
    )
}

fn release(s: &Stack, sha: &str) -> std::path::PathBuf {
    s.state_dir().join("releases").join(sha)
}

/// The entry of `service` in a report's (or check-in's) `containers`.
fn entry<'a>(rep: &'a Value, service: &str) -> &'a Value {
    rep["containers"]
        .as_array()
        .unwrap_or_else(|| panic!("no containers: {rep:#}"))
        .iter()
        .find(|c| c["service"] == service)
        .unwrap_or_else(|| panic!("no {service} in the containers: {rep:#}"))
}

/// The engine id of the project's container for `service` (`-a`: any state).
fn container_id(s: &Stack, service: &str) -> Option<String> {
    let o = Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--no-trunc",
            "--filter",
            &format!("label=com.docker.compose.project={}", s.project()),
            "--filter",
            &format!("label=com.docker.compose.service={service}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .map(String::from)
}

/// Every container of the project, by id.
fn container_ids(s: &Stack) -> Vec<String> {
    let o = Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--no-trunc",
            "--filter",
            &format!("label=com.docker.compose.project={}", s.project()),
        ])
        .output()
        .unwrap();
    let mut v: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

fn restart_count(s: &Stack, service: &str) -> u64 {
    let id = container_id(s, service).unwrap_or_else(|| panic!("no {service} container"));
    inspect_format(&id, "{{.RestartCount}}")
        .parse()
        .unwrap_or(0)
}

/// Live processes whose command line names `project` (compose is run with `-p <project>`):
/// `pid: argv`.
fn processes_naming(project: &str) -> Vec<String> {
    let mut out = Vec::new();
    let me = std::process::id().to_string();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
            continue;
        }
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let argv = String::from_utf8_lossy(&raw).replace('\0', " ");
        if argv.contains(project) {
            out.push(format!("{name}: {}", argv.trim()));
        }
    }
    out
}

/// A spawned agent, SIGKILLed and reaped if the test ends before it does.
struct Agent(Child);

impl Drop for Agent {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 1. one-shot jobs

/// A migration job that `web` waits on (`service_completed_successfully`): applied once the job
/// exited 0 and `web` settled; the heartbeat after it is applied too; reports and check-ins
/// carry the job as `"job": true, "exit_code": 0`.
fn migration_job_then_web_applies(f: Flavour) {
    require_docker();
    let s = Stack::new("job-ok", f);
    s.give_bootstrap();
    let sha = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, job_and_web(0, 1)).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "applied", "{rep:#}");
    assert_eq!(rep["sha"], sha.as_str());
    assert_eq!(rep["detail"], "", "{rep:#}");
    let job = entry(&rep, "migrate");
    assert_eq!(job["job"], true, "{rep:#}");
    assert_eq!(job["exit_code"], 0, "{rep:#}");
    assert_eq!(job["state"], "exited", "{rep:#}");
    let web = entry(&rep, "web");
    assert_eq!(web["state"], "running", "{rep:#}");
    assert_eq!(web["health"], "healthy", "{rep:#}");
    assert!(web.get("job").is_none(), "web is no job: {rep:#}");
    assert_eq!(web["restarts"], 0, "{rep:#}");
    assert_eq!(s.state()["applied_sha"], sha.as_str());
    assert_eq!(current(&s), release(&s, &sha));

    // the next tick is a heartbeat: the exited job is healthy, not UNHEALTHY
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 0, "the heartbeat: {r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(reps.len(), reports + 1, "{reps:#?}");
    let rep = reps.last().unwrap();
    assert_eq!(rep["result"], "applied", "{rep:#}");
    assert_eq!(rep["sha"], sha.as_str());
    assert_eq!(rep["detail"], "", "{rep:#}");
    assert_eq!(entry(rep, "migrate")["job"], true, "{rep:#}");
    assert_eq!(entry(rep, "migrate")["exit_code"], 0, "{rep:#}");
    let ci = s.tenancy.checkins().last().cloned().unwrap();
    assert_eq!(ci["applied_sha"], sha.as_str());
    assert_eq!(entry(&ci, "migrate")["job"], true, "check-in: {ci:#}");
    assert_eq!(entry(&ci, "migrate")["exit_code"], 0, "check-in: {ci:#}");
}
all_composes!(migration_job_then_web_applies);

/// The migration `web` waits on exits 3: the apply fails with `JOB_FAILED: migrate exited 3`.
/// (Compose itself gives up on `up` when a dependency does not complete successfully; the
/// report must still name the job and its exit code.)
fn failing_migration_job_is_job_failed(f: Flavour) {
    require_docker();
    let s = Stack::new("job-fail", f);
    s.give_bootstrap();
    let sha = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, job_and_web(3, 1)).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed", "{rep:#}");
    assert_eq!(rep["sha"], sha.as_str());
    assert_eq!(
        rep["detail"], "JOB_FAILED: migrate exited 3",
        "report: {rep:#}\n--- agent stderr\n{}",
        r.stderr
    );
    assert!(s.state()["applied_sha"].is_null(), "nothing applied");
}
all_composes!(failing_migration_job_is_job_failed);

/// A job nothing waits on, marked with the label `monky.job: "true"`: the apply waits until it
/// exited 0 (it runs 3 s) and reports it done; the same job exiting 3 is `JOB_FAILED`.
fn labelled_job_nothing_waits_on(f: Flavour) {
    require_docker();
    let s = Stack::new("job-label", f);
    s.give_bootstrap();
    let compose = |code: i32, variant: &str| {
        format!(
            "services:\n  seed:\n    image: {IMAGE}\n    \
             command: [\"sh\", \"-c\", \"sleep 3; echo seeded {variant}; exit {code}\"]\n    \
             labels:\n      monky.job: \"true\"\n{}",
            web_service(variant)
        )
    };
    let sha1 = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, compose(0, "a")).files());
    let t = Instant::now();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "applied", "{rep:#}");
    assert_eq!(rep["sha"], sha1.as_str());
    let seed = entry(&rep, "seed");
    assert_eq!(seed["job"], true, "{rep:#}");
    assert_eq!(
        seed["state"], "exited",
        "applied only once it ended: {rep:#}"
    );
    assert_eq!(seed["exit_code"], 0, "{rep:#}");
    assert!(t.elapsed() >= Duration::from_secs(3), "{:?}", t.elapsed());
    // heartbeat: still applied
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        s.last_report()["result"],
        "applied",
        "{:#}",
        s.last_report()
    );

    // the labelled job failing
    let sha2 = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(2, compose(3, "b")).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed", "{rep:#}");
    assert_eq!(rep["sha"], sha2.as_str());
    assert_eq!(rep["detail"], "JOB_FAILED: seed exited 3", "{rep:#}");
    assert_eq!(s.state()["applied_sha"], sha1.as_str());
}
one_compose!(labelled_job_nothing_waits_on);

// ---------------------------------------------------------------------------------------------
// 2. the settle window and crash loops

/// `web` crashes 2 s after each start under `restart: unless-stopped`; `settle_s: 5`: the apply
/// sees the restart inside the window: `CRASH_LOOP: web restarted <n> times (last exit 7)`.
fn crash_loop_in_the_settle_window_fails(f: Flavour) {
    require_docker();
    let mut s = Stack::new("crash", f);
    s.set_extra("settle_s: 5\n");
    s.give_bootstrap();
    let sha = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, crashing_web(2, 7, "c")).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed", "{rep:#}");
    assert_eq!(rep["sha"], sha.as_str());
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d.starts_with("CRASH_LOOP: web restarted ") && d.ends_with(" times (last exit 7)"),
        "{d}\n--- agent stderr\n{}",
        r.stderr
    );
    assert!(
        rep["log_tail"].as_str().unwrap().contains("crashing"),
        "the service's own log: {rep:#}"
    );
    assert!(s.state()["applied_sha"].is_null());
    assert!(restart_count(&s, "web") >= 1);
}
one_compose!(crash_loop_in_the_settle_window_fails);

/// With `auto_rollback` and a healthy release before it, the crash-looping release is rolled
/// back like an unhealthy one: failed (new sha, "; rolled back to <old>"), then applied (old sha,
/// `ROLLED_BACK_FROM`).
fn crash_loop_rolls_back(f: Flavour) {
    require_docker();
    let mut s = Stack::new("crash-rb", f);
    s.set_extra("settle_s: 5\nauto_rollback: true\n");
    s.give_bootstrap();
    let sha1 = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, healthy_web("v1")).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha1.as_str());
    let sha2 = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(2, crashing_web(2, 7, "v2")).files());
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(reps.len(), reports + 2, "two reports: {reps:#?}");
    let (failed, applied) = (&reps[reports], &reps[reports + 1]);
    assert_eq!(failed["result"], "failed", "{failed:#}");
    assert_eq!(failed["sha"], sha2.as_str());
    let d = failed["detail"].as_str().unwrap();
    assert!(
        d.starts_with("CRASH_LOOP: web restarted ")
            && d.ends_with(&format!(" times (last exit 7); rolled back to {sha1}")),
        "{d}\n--- agent stderr\n{}",
        r.stderr
    );
    assert_eq!(applied["result"], "applied", "{applied:#}");
    assert_eq!(applied["sha"], sha1.as_str());
    assert_eq!(applied["detail"], format!("ROLLED_BACK_FROM: {sha2}"));
    assert_eq!(entry(applied, "web")["health"], "healthy", "{applied:#}");
    let st = s.state();
    assert_eq!(st["applied_sha"], sha1.as_str());
    assert_eq!(st["failed_release"]["sha"], sha2.as_str());
    assert_eq!(current(&s), release(&s, &sha1));
    let id = container_id(&s, "web").unwrap();
    assert!(
        inspect_format(&id, "{{json .Config.Env}}").contains("VARIANT=v1"),
        "v1 runs again"
    );
    assert_eq!(inspect_format(&id, "{{.RestartCount}}"), "0");
}
one_compose!(crash_loop_rolls_back);

/// A crash loop that starts after the apply: `web` runs 8 s (longer than the 2 s window), then
/// exits 9, again and again. The apply is applied; a heartbeat after the restart reports
/// `CRASH_LOOP` and exits 1.
fn crash_loop_after_the_apply_is_a_failed_heartbeat(f: Flavour) {
    require_docker();
    let s = Stack::new("late-crash", f); // the harness's settle_s: 2
    s.give_bootstrap();
    let sha = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, crashing_web(8, 9, "late")).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["result"], "applied", "{rep:#}");
    assert_eq!(rep["sha"], sha.as_str());
    assert_eq!(entry(&rep, "web")["restarts"], 0, "{rep:#}");

    // the first restart after the apply (and web running again, so that only the restart
    // count can tell), then the first heartbeat
    let id = container_id(&s, "web").unwrap();
    let restarted = |more_than: u64| {
        inspect_format(&id, "{{.RestartCount}} {{.State.Status}}")
            .split_once(' ')
            .is_some_and(|(n, st)| n.parse::<u64>().unwrap_or(0) > more_than && st == "running")
    };
    wait_until("web's first restart", Duration::from_secs(30), || {
        restarted(0)
    });
    let first = s.tick();
    let first_rep = s.last_report();
    let n = restart_count(&s, "web");
    // and once more: another restart between two heartbeats
    wait_until("another restart", Duration::from_secs(30), || restarted(n));
    let second = s.tick();
    let second_rep = s.last_report();
    for (which, r, rep) in [
        ("second heartbeat", &second, &second_rep),
        ("first heartbeat after the apply", &first, &first_rep),
    ] {
        assert_eq!(r.code, 1, "{which}: {r:?}\n--- report\n{rep:#}");
        assert_eq!(rep["result"], "failed", "{which}: {rep:#}");
        assert_eq!(rep["sha"], sha.as_str());
        let d = rep["detail"].as_str().unwrap();
        assert!(
            d.starts_with("CRASH_LOOP: web restarted ") && d.ends_with(" times (last exit 9)"),
            "{which}: {d}\n--- agent stderr\n{}",
            r.stderr
        );
        assert!(
            entry(rep, "web")["restarts"].as_u64().unwrap() >= 1,
            "{which}: {rep:#}"
        );
    }
}
one_compose!(crash_loop_after_the_apply_is_a_failed_heartbeat);

/// With `auto_rollback`: v1 healthy, then v2 whose `web` runs 8 s (past the 2 s settle window)
/// and then exits 9 again and again. Inside `rollback_window_s`, the heartbeat that finds the
/// restart rolls back to v1 (failed v2 "; rolled back to v1", then applied v1); with a window
/// that has passed, it only reports the crash loop and v2 stays.
fn crash_loop_after_the_apply_rolls_back_inside_the_window(f: Flavour) {
    require_docker();
    for (window, rolls_back) in [(600, true), (1, false)] {
        let mut s = Stack::new(if rolls_back { "late-rb" } else { "late-norb" }, f);
        s.set_extra(&format!(
            "auto_rollback: true\nrollback_window_s: {window}\n"
        ));
        s.give_bootstrap();
        let sha1 = s
            .tenancy
            .set_bundle(&s.env, plain_bundle(1, healthy_web("v1")).files());
        assert_eq!(s.tick().code, 0);
        let sha2 = s
            .tenancy
            .set_bundle(&s.env, plain_bundle(2, crashing_web(8, 9, "v2")).files());
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
        assert_eq!(s.last_report()["sha"], sha2.as_str());
        assert_eq!(s.last_report()["result"], "applied");
        let id = container_id(&s, "web").unwrap();
        wait_until("v2's first restart", Duration::from_secs(30), || {
            inspect_format(&id, "{{.RestartCount}} {{.State.Status}}")
                .split_once(' ')
                .is_some_and(|(n, st)| n.parse::<u64>().unwrap_or(0) > 0 && st == "running")
        });
        let before = s.tenancy.reports().len();
        let r = s.tick();
        assert_eq!(r.code, 1, "window {window}: {r:?}");
        let reps = s.tenancy.reports();
        let new = &reps[before..];
        let st = s.state();
        if rolls_back {
            assert_eq!(new.len(), 2, "two reports: {new:#?}\n{}", r.stderr);
            assert_eq!(new[0]["result"], "failed");
            assert_eq!(new[0]["sha"], sha2.as_str());
            let d = new[0]["detail"].as_str().unwrap();
            assert!(
                d.starts_with("CRASH_LOOP: web restarted ")
                    && d.ends_with(&format!(" (last exit 9); rolled back to {sha1}")),
                "{d}\n{}",
                r.stderr
            );
            assert_eq!(new[1]["result"], "applied", "{:#}", new[1]);
            assert_eq!(new[1]["sha"], sha1.as_str());
            assert_eq!(new[1]["detail"], format!("ROLLED_BACK_FROM: {sha2}"));
            assert_eq!(st["applied_sha"], sha1.as_str());
            assert_eq!(st["failed_release"]["sha"], sha2.as_str());
            assert_eq!(current(&s), release(&s, &sha1));
            let id = container_id(&s, "web").unwrap();
            assert!(inspect_format(&id, "{{json .Config.Env}}").contains("VARIANT=v1"));
            // the next tick holds v2 and reports v1 as it runs
            let r = s.tick();
            assert_eq!(r.code, 0, "{r:?}");
            let rep = s.last_report();
            assert_eq!(rep["sha"], sha1.as_str());
            assert!(
                rep["detail"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("ROLLED_BACK_FROM: {sha2}; not retried before ")),
                "{rep:#}"
            );
        } else {
            assert_eq!(new.len(), 1, "one report: {new:#?}");
            assert_eq!(new[0]["result"], "failed");
            assert_eq!(new[0]["sha"], sha2.as_str());
            let d = new[0]["detail"].as_str().unwrap();
            assert!(
                d.starts_with("CRASH_LOOP: web restarted ") && d.ends_with(" (last exit 9)"),
                "{d}"
            );
            assert_eq!(st["applied_sha"], sha2.as_str());
            assert!(st["failed_release"].is_null(), "{st:#}");
            assert_eq!(current(&s), release(&s, &sha2));
            assert!(
                r.stderr.contains("rollback_window_s"),
                "says why there is no rollback: {}",
                r.stderr
            );
        }
    }
}
one_compose!(crash_loop_after_the_apply_rolls_back_inside_the_window);

/// `heal_drift`: with it on, a heartbeat that finds `web` stopped (or removed) runs `up -d` for
/// the running release and reports `applied` with `HEALED: web`; a done migration job is not
/// drift. With it off (the default) the same heartbeat reports `UNHEALTHY` and leaves the box.
fn heal_drift_on_and_off(f: Flavour) {
    require_docker();
    for heal in [true, false] {
        let mut s = Stack::new(if heal { "heal" } else { "noheal" }, f);
        if heal {
            s.set_extra("heal_drift: true\n");
        }
        s.give_bootstrap();
        let sha = s
            .tenancy
            .set_bundle(&s.env, plain_bundle(1, job_and_web(0, 1)).files());
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
        // nothing drifted: the done job is not brought back
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
        let rep = s.last_report();
        assert_eq!(
            (rep["result"].as_str(), rep["detail"].as_str()),
            (Some("applied"), Some("")),
            "{rep:#}"
        );
        let job = container_id(&s, "migrate").unwrap();
        assert_eq!(
            inspect_format(&job, "{{.State.Status}}"),
            "exited",
            "the job is left done"
        );
        let job_started = inspect_format(&job, "{{.State.StartedAt}}");
        for (how, args) in [
            ("stopped", ["stop", "-t", "1"]),
            ("removed", ["rm", "-fv", ""]),
        ] {
            let id = container_id(&s, "web").unwrap();
            let args: Vec<&str> = args.iter().copied().filter(|a| !a.is_empty()).collect();
            let o = Command::new("docker")
                .args(&args)
                .arg(&id)
                .output()
                .unwrap();
            assert!(o.status.success(), "docker {args:?}: {o:?}");
            let r = s.tick();
            let rep = s.last_report();
            let web = container_id(&s, "web");
            if heal {
                assert_eq!(r.code, 0, "{how}: {r:?}");
                assert_eq!(rep["result"], "applied", "{how}: {rep:#}");
                assert_eq!(rep["sha"], sha.as_str());
                assert_eq!(rep["detail"], "HEALED: web", "{how}: {rep:#}");
                let web = web.expect("web is back");
                assert_eq!(
                    inspect_format(&web, "{{.State.Status}}"),
                    "running",
                    "{how}"
                );
                assert_eq!(entry(&rep, "web")["state"], "running", "{how}: {rep:#}");
                // the job ran once: the heal did not start it again
                assert_eq!(container_id(&s, "migrate").as_deref(), Some(job.as_str()));
                assert_eq!(inspect_format(&job, "{{.State.Status}}"), "exited");
                let again = inspect_format(&job, "{{.State.StartedAt}}");
                assert_eq!(again, job_started, "{how}: the job ran again");
            } else {
                assert_eq!(r.code, 1, "{how}: {r:?}");
                assert_eq!(rep["result"], "failed", "{how}: {rep:#}");
                assert!(
                    rep["detail"].as_str().unwrap().starts_with("UNHEALTHY: ")
                        && rep["detail"].as_str().unwrap().contains("web"),
                    "{how}: {rep:#}"
                );
                match how {
                    "stopped" => {
                        assert_eq!(inspect_format(&web.unwrap(), "{{.State.Status}}"), "exited")
                    }
                    _ => assert!(web.is_none(), "nothing brought it back"),
                }
                break; // a stopped web stays stopped: the second shape needs a running one
            }
        }
    }
}
all_composes!(heal_drift_on_and_off);

// ---------------------------------------------------------------------------------------------
// 3. `current` names what runs

/// A pull that fails (a tag the registry does not have) leaves `current` and `applied_sha` on
/// the running release; the next release, unhealthy, is rolled back to that one (the target is
/// what runs).
fn failed_pull_leaves_current_on_what_runs(f: Flavour) {
    require_docker();
    let mut s = Stack::new("pull-fail", f);
    s.set_extra("auto_rollback: true\nhealthy_timeout_s: 10\n");
    s.give_bootstrap();
    let sha1 = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, healthy_web("v1")).files());
    assert_eq!(s.tick().code, 0);
    assert_eq!(s.last_report()["sha"], sha1.as_str());
    assert_eq!(current(&s), release(&s, &sha1));
    let web1 = container_id(&s, "web").unwrap();

    let sha2 = s.tenancy.set_bundle(
        &s.env,
        plain_bundle(2, healthy_web("v2").replace(IMAGE, MISSING_IMAGE)).files(),
    );
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(
        reps.len(),
        reports + 1,
        "one report, no rollback: {reps:#?}"
    );
    let rep = reps.last().unwrap();
    assert_eq!(rep["result"], "failed");
    assert_eq!(rep["sha"], sha2.as_str());
    assert!(
        rep["detail"]
            .as_str()
            .unwrap()
            .starts_with("COMPOSE_PULL_FAILED"),
        "{rep:#}"
    );
    assert_eq!(
        current(&s),
        release(&s, &sha1),
        "current still names what runs"
    );
    assert_eq!(s.state()["applied_sha"], sha1.as_str());
    assert_eq!(
        container_id(&s, "web").as_deref(),
        Some(web1.as_str()),
        "v1's container untouched"
    );

    // the next release is unhealthy: rolled back to v1, which still runs
    let broken = healthy_web("v3").replace("/tmp/ok\"]", "/tmp/never\"]");
    assert_ne!(broken, healthy_web("v3"));
    let sha3 = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(3, broken).files());
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(reps.len(), reports + 2, "{reps:#?}");
    let d = reps[reports]["detail"].as_str().unwrap();
    assert!(
        d.starts_with("UNHEALTHY:") && d.ends_with(&format!("; rolled back to {sha1}")),
        "{d}"
    );
    assert_eq!(reps[reports + 1]["sha"], sha1.as_str());
    assert_eq!(
        reps[reports + 1]["detail"],
        format!("ROLLED_BACK_FROM: {sha3}")
    );
    assert_eq!(current(&s), release(&s, &sha1));
    let id = container_id(&s, "web").unwrap();
    assert!(inspect_format(&id, "{{json .Config.Env}}").contains("VARIANT=v1"));
}
all_composes!(failed_pull_leaves_current_on_what_runs);

// ---------------------------------------------------------------------------------------------
// 4. backoff

fn rfc3339_secs(t: &str) -> u64 {
    t.parse::<jiff::Timestamp>()
        .unwrap_or_else(|e| panic!("{t}: {e}"))
        .as_second() as u64
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `retry_backoff_max_s: 3600` with the real binary. A sha whose pull fails is held: the next
/// tick reports the running sha `applied` with `RETRY_HELD: <sha12> until <t> (attempt 2)`,
/// exits 0 and neither fetches, leases nor runs compose; once `next_at` has passed (edited in
/// state.json — nobody waits a minute) it is tried again and held for twice as long; `urgent`
/// lifts the hold; a new desired sha is attempted at once.
fn backoff_holds_a_failing_sha(f: Flavour) {
    require_docker();
    let mut s = Stack::new("backoff", f);
    s.set_extra("retry_backoff_max_s: 3600\n");
    s.give_bootstrap();
    s.tenancy.set_lease_limit(50);
    let b1 = web_bundle(&s, 1, "v1", "bo-one");
    let sha1 = s.tenancy.set_bundle(&s.env, b1.files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha1.as_str());

    // a failing sha: its pull fails, nothing it does touches what runs
    let mut b2 = web_bundle(&s, 2, "v2", "bo-two");
    b2.compose = b2.compose.replace(IMAGE, MISSING_IMAGE);
    let sha2 = s.tenancy.set_bundle(&s.env, b2.files());
    let reads = s.bao.secret_reads().len();
    let t_fail = now_secs();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(s.last_report()["detail"]
        .as_str()
        .unwrap()
        .starts_with("COMPOSE_PULL_FAILED"));
    assert_eq!(
        s.bao.secret_reads().len(),
        reads + 1,
        "the attempt read its secret"
    );
    let retry = s.state()["retry"].clone();
    assert_eq!(retry["sha"], sha2.as_str(), "{retry}");
    assert_eq!(retry["attempts"], 1, "{retry}");
    let next_at = retry["next_at"].as_u64().unwrap();
    assert!(
        next_at >= t_fail + 60 && next_at <= now_secs() + 72,
        "1 min + up to 20 %: {next_at} vs {t_fail}"
    );

    // held: the running sha reported, nothing attempted
    let (leases, reads, fetches, reports) = (
        s.tenancy.leases().len(),
        s.bao.secret_reads().len(),
        s.tenancy.bundle_fetches().len(),
        s.tenancy.reports().len(),
    );
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(reps.len(), reports + 1, "{reps:#?}");
    let rep = reps.last().unwrap();
    assert_eq!(rep["result"], "applied", "{rep:#}");
    assert_eq!(rep["sha"], sha1.as_str(), "the running sha");
    let d = rep["detail"].as_str().unwrap();
    let prefix = format!("RETRY_HELD: {} until ", &sha2[..12]);
    assert!(d.starts_with(&prefix) && d.ends_with(" (attempt 2)"), "{d}");
    let until = &d[prefix.len()..d.len() - " (attempt 2)".len()];
    assert_eq!(rfc3339_secs(until), next_at, "{d}");
    assert_eq!(s.tenancy.leases().len(), leases, "no lease while held");
    assert_eq!(
        s.bao.secret_reads().len(),
        reads,
        "no secret read while held"
    );
    assert_eq!(
        s.tenancy.bundle_fetches().len(),
        fetches,
        "no fetch while held"
    );
    assert!(!r.stderr.contains("compose pull"), "no compose: {r:?}");
    assert_eq!(s.state()["retry"], retry, "the hold unchanged");
    assert_eq!(
        s.tenancy.checkins().last().unwrap()["applied_sha"],
        sha1.as_str()
    );

    // next_at edited into the past (the test's clock: a minute is not waited): tried again,
    // fails again, held twice as long
    let mut st = s.state();
    st["retry"]["next_at"] = json!(now_secs() - 1);
    std::fs::write(
        s.state_dir().join("state.json"),
        serde_json::to_vec_pretty(&st).unwrap(),
    )
    .unwrap();
    let fetches = s.tenancy.bundle_fetches().len();
    let t_fail = now_secs();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("compose pull"), "{r:?}");
    assert_eq!(s.tenancy.bundle_fetches().len(), fetches + 1, "tried again");
    let retry = s.state()["retry"].clone();
    assert_eq!(retry["attempts"], 2, "{retry}");
    let next_at = retry["next_at"].as_u64().unwrap();
    assert!(
        next_at >= t_fail + 120 && next_at <= now_secs() + 144,
        "2 min + up to 20 %: {next_at} vs {t_fail}"
    );
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(d.starts_with(&prefix) && d.ends_with(" (attempt 3)"), "{d}");

    // urgent lifts the hold
    s.tenancy.set_urgent(&s.env, true);
    let fetches = s.tenancy.bundle_fetches().len();
    let r = s.tick();
    s.tenancy.set_urgent(&s.env, false);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        s.tenancy.bundle_fetches().len(),
        fetches + 1,
        "urgent: attempted"
    );
    assert_eq!(s.state()["retry"]["attempts"], 3);

    // a new desired sha: attempted at once, applies, the hold is gone
    let sha3 = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 3, "v3", "bo-three").files());
    let fetches = s.tenancy.bundle_fetches().len();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.bundle_fetches().len(), fetches + 1);
    let rep = s.last_report();
    assert_eq!(rep["result"], "applied");
    assert_eq!(rep["sha"], sha3.as_str());
    assert_eq!(rep["detail"], "");
    assert!(s.state()["retry"].is_null(), "{:#}", s.state());
    assert!(s
        .container_env("web")
        .contains(&"API_KEY=bo-three".to_string()));
}
one_compose!(backoff_holds_a_failing_sha);

// ---------------------------------------------------------------------------------------------
// 5. SIGTERM during `up`

/// `up` is slow because compose waits for an 8 s migration before it creates `web`. SIGTERM to
/// the agent while compose waits: exit 75, `INTERRUPTED: … up … (SIGTERM)`, no process naming
/// the project left, and no container created after the report (`web` is never started, even
/// once the migration has ended).
fn sigterm_during_up_stops_compose(f: Flavour) {
    require_docker();
    // its agent runs outside `run_bin_env`
    let _box = box_shared();
    let s = Stack::new("term-up", f);
    s.give_bootstrap();
    let sha = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, job_and_web(0, 8)).files());
    let log = s.dir.path().join("agent.log");
    let mut agent = Agent(
        Command::new(BIN)
            .args([
                "--config",
                s.config_path().to_str().unwrap(),
                "run",
                "--once",
            ])
            .env_remove("MONKY_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let read_log = || std::fs::read_to_string(&log).unwrap_or_default();
    wait_until("the migration running", Duration::from_secs(60), || {
        container_id(&s, "migrate")
            .is_some_and(|id| inspect_format(&id, "{{.State.Status}}") == "running")
    });
    std::thread::sleep(Duration::from_millis(1000));
    // compose v2/v5 create every container first and start web once the job is done; v1
    // creates web only then
    let never_started = |s: &Stack| {
        container_id(s, "web").is_none_or(|id| {
            inspect_format(&id, "{{.State.Status}} {{.State.StartedAt}}")
                == "created 0001-01-01T00:00:00Z"
        })
    };
    assert!(never_started(&s), "web waits for the migration");
    assert!(
        !processes_naming(&s.project()).is_empty(),
        "compose is running up"
    );
    let t0 = Instant::now();
    let ok = Command::new("kill")
        .args(["-TERM", &agent.0.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let st = loop {
        if let Some(st) = agent.0.try_wait().unwrap() {
            break st;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the agent did not end:\n{}",
            read_log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let stopped_in = t0.elapsed();
    let at_report = container_ids(&s);
    assert_eq!(st.code(), Some(75), "{st:?}\n{}", read_log());
    let rep = s.last_report();
    assert_eq!(rep["result"], "failed");
    assert_eq!(rep["sha"], sha.as_str());
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d.starts_with("INTERRUPTED: ") && d.contains(" up") && d.ends_with("(SIGTERM)"),
        "{d}\n{}",
        read_log()
    );
    // nothing of compose is left (a moment for the kernel to reap the killed group)
    let t1 = Instant::now();
    let mut left = processes_naming(&s.project());
    while !left.is_empty() && t1.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(100));
        left = processes_naming(&s.project());
    }
    assert!(
        left.is_empty(),
        "compose still running after the report: {left:?}"
    );
    // the migration ends; nobody creates web after it
    if let Some(id) = container_id(&s, "migrate") {
        wait_until("the migration's end", Duration::from_secs(30), || {
            inspect_format(&id, "{{.State.Status}}") != "running"
        });
    }
    std::thread::sleep(Duration::from_secs(3));
    assert!(never_started(&s), "web started after the report");
    assert_eq!(
        container_ids(&s),
        at_report,
        "no container created after the report"
    );
    eprintln!("measure: SIGTERM during up → exit 75 in {stopped_in:?} ({f:?})");
}
all_composes!(sigterm_during_up_stops_compose);

// ---------------------------------------------------------------------------------------------
// 6. what the settle window costs (for PERFORMANCE.md; no timed assertion but the window's
//    own lower bound)

/// Apply ticks of a one-service healthy web app on compose v2 with `settle_s: 0` and `settle_s:
/// 5`, two applies each (the image is local; the second apply recreates the container).
#[test]
fn measure_settle_window_cost() {
    require_docker();
    let mut times = Vec::new();
    for settle in [0u64, 5] {
        let mut s = Stack::new(&format!("measure-{settle}"), Flavour::V2);
        s.set_extra(&format!("settle_s: {settle}\n"));
        s.give_bootstrap();
        let mut ticks = Vec::new();
        for (serial, variant) in [(1u64, "m1"), (2, "m2")] {
            let sha = s
                .tenancy
                .set_bundle(&s.env, plain_bundle(serial, healthy_web(variant)).files());
            let t = Instant::now();
            let r = s.tick();
            let el = t.elapsed();
            assert_eq!(r.code, 0, "{r:?}");
            assert_eq!(s.last_report()["sha"], sha.as_str());
            if settle > 0 {
                assert!(
                    el >= Duration::from_secs(settle),
                    "the window is waited: {el:?}"
                );
            }
            ticks.push(el);
        }
        eprintln!("measure: apply tick, settle_s: {settle} (v2): {ticks:?}");
        times.push(ticks);
    }
    let avg = |v: &[Duration]| v.iter().sum::<Duration>() / v.len() as u32;
    let (a, b) = (avg(&times[0]), avg(&times[1]));
    eprintln!(
        "measure: the settle window (5 s) adds {:?} to an apply tick (v2: {a:?} → {b:?})",
        b.saturating_sub(a)
    );
}

//! The box looks after itself (issue 22), on real parts: the test tenancy (whose `Date` can run
//! off by minutes), a real OpenBao, the shared dockerd and each compose line.
//!
//! - clock skew: measured from tenancy's `Date`, sent with the next check-in, exported, and
//!   named in a failure a wrong clock can cause;
//! - disk reclaim: keeps the running release's and the rollback target's images, removes an
//!   old release's, leaves another project's image alone, and turns a `DISK_INSUFFICIENT` into
//!   an apply on a small filesystem: a dockerd of the test's own whose data root is a tmpfs;
//! - diagnostics: sent on `collect`, secret values planted in a container's log and its health
//!   probe never reach tenancy, one bundle per `diagnostics_min_interval_s`, a 429 respected;
//!   `diagnose --json` prints the same locally.

use std::process::Command;

use crate::common::*;
use serde_json::Value;

fn unique(tag: &str) -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("care-{tag}-{}-{}", std::process::id(), n % 1_000_000_000)
}

/// A healthy one-service release of `image` (its own httpd), `variant` making each sha new.
fn release(serial: u64, image: &str, variant: &str, need_bytes: u64) -> BundleSpec {
    let mut b = plain_bundle(
        serial,
        format!(
            "services:\n  web:\n    image: {image}\n    init: true\n    \
             command: [\"sh\", \"-c\", \"touch /tmp/ok; exec httpd -f -p 8080 -h /tmp\"]\n    \
             environment:\n      VARIANT: \"{variant}\"\n    \
             healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n"
        ),
    );
    b.meta_extra = serde_json::json!({"need_bytes": need_bytes});
    b
}

fn ledger_ids(s: &Stack) -> Vec<String> {
    let v: Value =
        serde_json::from_slice(&std::fs::read(s.state_dir().join("images.json")).unwrap()).unwrap();
    v["images"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn releases(s: &Stack) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(s.state_dir().join("releases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn apply(s: &Stack, b: &BundleSpec) -> String {
    let sha = s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.state()["applied_sha"], sha.as_str(), "{r:?}");
    sha
}

/// After every healthy apply: an old release and the image only it used go; the running
/// release's and the rollback target's images stay, and so does an image this project never
/// pulled (no container uses it: only the ledger keeps the agent off it).
fn reclaim_keeps_what_runs_and_what_rollback_needs(f: Flavour) {
    require_docker();
    let mut made = Images(Vec::new());
    let u = unique("keep");
    let a = make_image(&format!("{u}-a"), 3072, true, &mut made);
    let b = make_image(&format!("{u}-b"), 1024, true, &mut made);
    let c = make_image(&format!("{u}-c"), 1024, true, &mut made);
    let other = make_image(&format!("{u}-other"), 512, false, &mut made);
    let other_id = image_id(&other).unwrap();
    let mut s = Stack::new("reclaim", f);
    let prom = s.dir.path().join("m.prom");
    s.set_extra(&format!(
        "keep_releases: 1\nmetrics_textfile: {}\n",
        prom.display()
    ));
    s.give_bootstrap();

    let sha1 = apply(&s, &release(1, &a, "1", 1 << 20));
    let a_id = image_id(&a).expect("the agent pulled a");
    assert!(ledger_ids(&s).contains(&a_id));
    let sha2 = apply(&s, &release(2, &b, "2", 1 << 20));
    // keep_releases is 1, but release 1 is the rollback target: it and its image stay
    assert_eq!(releases(&s), sorted(&[&sha1, &sha2]));
    assert_eq!(image_id(&a).as_deref(), Some(a_id.as_str()));
    assert!(
        !s.tenancy
            .reports()
            .iter()
            .any(|r| r["detail"].as_str().unwrap_or("").starts_with("RECLAIMED")),
        "nothing went, nothing reported: {:?}",
        s.tenancy.reports()
    );

    let before = s.tenancy.reports().len();
    let sha3 = apply(&s, &release(3, &c, "3", 1 << 20));
    // release 1 is neither running, nor the rollback target, nor among the newest 1
    assert_eq!(releases(&s), sorted(&[&sha2, &sha3]));
    assert_eq!(image_id(&a), None, "release 1's image is gone");
    assert!(!ledger_ids(&s).contains(&a_id), "and out of the ledger");
    assert!(image_id(&b).is_some(), "the rollback target's image stays");
    assert!(image_id(&c).is_some(), "the running release's image stays");
    assert_eq!(
        image_id(&other).as_deref(),
        Some(other_id.as_str()),
        "another project's image is not the agent's business"
    );
    let reports = s.tenancy.reports();
    let new: Vec<&Value> = reports[before..].iter().collect();
    assert_eq!(new.len(), 2, "{new:?}");
    assert_eq!(new[0]["result"], "applied");
    assert_eq!(new[0]["detail"], "");
    // the reclaim's report: the running sha, result applied, what went
    assert_eq!(new[1]["result"], "applied");
    assert_eq!(new[1]["sha"], sha3.as_str());
    let detail = new[1]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("RECLAIMED: ") && detail.ends_with(" bytes (1 release, 1 image)"),
        "{detail}"
    );
    let bytes: u64 = detail["RECLAIMED: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(bytes > 3 << 20, "a's 3 MiB of noise at least: {bytes}");
    let st = s.state();
    assert_eq!(st["counters"]["reclaimed_bytes"], bytes);
    assert_eq!(st["care"]["rollback_target"], sha2.as_str());
    let m = std::fs::read_to_string(&prom).unwrap();
    assert!(
        m.contains(&format!("\nmonky_deployd_reclaimed_bytes_total {bytes}\n")),
        "{m}"
    );
    assert!(m.contains("\nmonky_deployd_docker_free_bytes "), "{m}");
}

fn sorted(v: &[&String]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// A dockerd of the test's own whose data root is a tmpfs (resizable with `remount`): a small
/// disk that fills and empties for real. Its containers, its daemon and the mount go with it.
struct SmallDocker {
    dir: std::path::PathBuf,
    daemon: std::process::Child,
    /// The default bridge this daemon gets, made here and removed here. Never `--bridge=none`:
    /// a daemon started with it deletes the host's `docker0`, the shared engine's bridge.
    bridge: String,
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

impl SmallDocker {
    fn start(size_mib: u64) -> SmallDocker {
        // short: the daemon's socket path must fit a sockaddr_un
        let dir = std::path::PathBuf::from(format!("/tmp/{}", unique("dd")));
        std::fs::create_dir_all(dir.join("root")).unwrap();
        std::fs::create_dir_all(dir.join("exec")).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mib}m"), "tmpfs"])
            .arg(dir.join("root"))
            .status()
            .unwrap()
            .success();
        assert!(ok, "cannot mount a tmpfs (the suites run as root)");
        let log = std::fs::File::create(dir.join("dockerd.log")).unwrap();
        // a bridge of its own in a range no engine pool uses; no iptables rules
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let n = (std::process::id() * 7 + k) % 250 + 1;
        let bridge = format!("mcare{n}");
        assert!(
            ip(&["link", "add", "name", &bridge, "type", "bridge"])
                && ip(&["addr", "add", &format!("10.213.{n}.1/24"), "dev", &bridge])
                && ip(&["link", "set", &bridge, "up"]),
            "cannot make bridge {bridge}"
        );
        let daemon = Command::new("dockerd")
            .arg("--data-root")
            .arg(dir.join("root"))
            .arg("--exec-root")
            .arg(dir.join("exec"))
            .arg("--pidfile")
            .arg(dir.join("docker.pid"))
            .arg("-H")
            .arg(format!("unix://{}/docker.sock", dir.display()))
            .arg(format!("--bridge={bridge}"))
            .args(["--iptables=false", "--ip-masq=false"])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("dockerd");
        let d = SmallDocker {
            dir,
            daemon,
            bridge,
        };
        wait_for("the small dockerd", || {
            Command::new("docker")
                .args(["-H", &d.host(), "info"])
                .output()
                .is_ok_and(|o| o.status.success())
        });
        d
    }

    fn host(&self) -> String {
        format!("unix://{}/docker.sock", self.dir.display())
    }

    fn has_image(&self, reference: &str) -> bool {
        Command::new("docker")
            .args(["-H", &self.host(), "image", "inspect", reference])
            .output()
            .unwrap()
            .status
            .success()
    }

    /// (size, free) of the data root, bytes.
    fn df(&self) -> (u64, u64) {
        df(&self.dir.join("root"))
    }

    fn resize(&self, bytes: u64) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={bytes}"), "tmpfs"])
            .arg(self.dir.join("root"))
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount");
    }
}

fn df(p: &std::path::Path) -> (u64, u64) {
    let o = Command::new("df")
        .args(["-B1", "--output=size,avail"])
        .arg(p)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    let mut n = t
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse::<u64>().unwrap());
    (n.next().unwrap(), n.next().unwrap())
}

impl Drop for SmallDocker {
    fn drop(&mut self) {
        let h = self.host();
        if let Ok(o) = Command::new("docker")
            .args(["-H", &h, "ps", "-aq"])
            .output()
        {
            for id in String::from_utf8_lossy(&o.stdout).lines() {
                let _ = Command::new("docker")
                    .args(["-H", &h, "rm", "-f", "-v", id])
                    .output();
            }
        }
        let _ = Command::new("docker")
            .args(["-H", &h, "network", "prune", "-f"])
            .output();
        // SIGTERM to the daemon this test started, then wait; SIGKILL if it hangs
        let pid = self.daemon.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        for _ in 0..100 {
            if self.daemon.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        if self.daemon.try_wait().ok().flatten().is_none() {
            let _ = self.daemon.kill();
            let _ = self.daemon.wait();
        }
        let _ = Command::new("umount").arg(self.dir.join("root")).status();
        let _ = std::fs::remove_dir_all(&self.dir);
        ip(&["link", "del", &self.bridge]);
    }
}

/// A bundle refused for disk reclaims first and is checked once more: with the old release's
/// image gone there is room, and the apply goes on. The disk is a real small filesystem (the
/// test dockerd's tmpfs data root), sized so the refusal is true before and false after.
fn disk_insufficient_reclaims_and_applies(f: Flavour) {
    require_docker();
    let mut made = Images(Vec::new());
    let u = unique("disk");
    let a = make_image(&format!("{u}-a"), 40 * 1024, true, &mut made);
    let b = make_image(&format!("{u}-b"), 256, true, &mut made);
    let c = make_image(&format!("{u}-c"), 256, true, &mut made);
    let small = SmallDocker::start(2300);
    let mut s = Stack::new("disk", f);
    let docker_host = format!("docker_host: {}\n", small.host());
    s.set_extra(&docker_host);
    s.give_bootstrap();
    let sha1 = apply(&s, &release(1, &a, "1", 1 << 20));
    apply(&s, &release(2, &b, "2", 1 << 20));
    let sha3 = apply(&s, &release(3, &c, "3", 1 << 20));
    assert_eq!(
        releases(&s).len(),
        3,
        "keep_releases 5: nothing reclaimed yet"
    );
    assert!(small.has_image(&a));
    s.set_extra(&format!("{docker_host}keep_releases: 1\n"));

    // shrink the disk to 10 MiB short of what a bundle with need_bytes 0 needs (2 GiB); only
    // release 1 (a's 40 MiB layer) can make the difference
    let gib2: u64 = 2 << 30;
    let (size, free) = small.df();
    small.resize(size - free + gib2 - (10 << 20));
    let (_, free) = small.df();
    assert!(free < gib2 && free > gib2 - (20 << 20), "{free}");
    let sha4 = s.tenancy.set_bundle(&s.env, release(4, &c, "4", 0).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("DISK_INSUFFICIENT: reclaiming old releases and images"),
        "{r:?}"
    );
    assert_eq!(s.state()["applied_sha"], sha4.as_str());
    assert!(!releases(&s).contains(&sha1));
    assert!(!small.has_image(&a), "release 1's image went");
    assert!(small.has_image(&c), "what runs stays");
    // then release 4 is healthy: 3 becomes the rollback target, and 2 (with b) goes too
    assert!(!small.has_image(&b));
    assert_eq!(releases(&s), sorted(&[&sha3, &sha4]));
    let (_, after) = small.df();
    assert!(after >= gib2, "{after}");
    let reports = s.tenancy.reports();
    assert!(
        !reports.iter().any(|r| r["detail"]
            .as_str()
            .unwrap_or("")
            .starts_with("DISK_INSUFFICIENT")),
        "{reports:?}"
    );
    assert!(reports
        .iter()
        .any(|r| r["sha"] == sha4.as_str()
            && r["detail"].as_str().unwrap().starts_with("RECLAIMED: ")));
    let free_metric = s.state()["counters"]["docker_free_bytes"].as_u64().unwrap();
    assert!(free_metric >= gib2, "{free_metric}");

    // and when nothing is left to reclaim, the refusal stands (reclaimed once, checked once)
    let sha5 = s
        .tenancy
        .set_bundle(&s.env, release(5, &c, "5", 1 << 30).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let last = s.last_report();
    assert_eq!(last["sha"], sha5.as_str());
    assert!(
        last["detail"]
            .as_str()
            .unwrap()
            .starts_with("DISK_INSUFFICIENT: "),
        "{last}"
    );
    drop(s);
    drop(small);
    assert!(
        ip(&["link", "show", "docker0"]),
        "the shared engine's docker0 is still there"
    );
}

/// A container of the test's own, removed at the end whatever happened.
struct RmContainer(String);

impl Drop for RmContainer {
    fn drop(&mut self) {
        let _ = Command::new("docker").args(["rm", "-f", &self.0]).output();
    }
}

/// Reclaim never removes what another project on the box may still run, whoever pulled it
/// (issue 31.5). Another compose project's stopped container was created from `a` when `a`
/// was an older image; the registry's `a` moved on, and this project pulled (so its ledger
/// holds) the new one. The engine would let the new one go (no container was created from
/// it), but that container names `a`: recreating it runs the new image, so reclaim keeps it.
/// Once that container is gone, the next reclaim takes the image.
#[test]
fn reclaim_keeps_an_image_another_project_may_run() {
    require_docker();
    let mut made = Images(Vec::new());
    let u = unique("other");
    let a = make_image(&format!("{u}-a"), 1024, true, &mut made);
    let b = make_image(&format!("{u}-b"), 512, true, &mut made);
    let c = make_image(&format!("{u}-c"), 512, true, &mut made);
    // the other project's container, created from the `a` of then, and stopped
    docker(&["pull", "-q", &a]);
    let was = image_id(&a).unwrap();
    made.0.push(was.clone());
    let other = RmContainer(format!("{u}-other-web"));
    docker(&[
        "create",
        "--name",
        &other.0,
        "--label",
        &format!("com.docker.compose.project={u}-other"),
        "--label",
        "com.docker.compose.service=web",
        &a,
        "true",
    ]);
    // `a` moves on in the registry (new bytes); the box keeps the old one under the container
    make_image(&format!("{u}-a"), 1024, true, &mut made);
    assert!(image_id(&a).is_none());

    let mut s = Stack::new("reclaim-other", Flavour::V2);
    s.set_extra("keep_releases: 1\n");
    s.give_bootstrap();
    apply(&s, &release(1, &a, "1", 1 << 20));
    let now = image_id(&a).expect("the agent pulled a");
    assert_ne!(now, was);
    assert!(ledger_ids(&s).contains(&now));
    apply(&s, &release(2, &b, "2", 1 << 20));
    apply(&s, &release(3, &c, "3", 1 << 20));
    assert_eq!(releases(&s).len(), 2, "release 1 reclaimed");
    assert_eq!(
        image_id(&a).as_deref(),
        Some(now.as_str()),
        "the image another project's container names stays"
    );
    assert_eq!(image_id(&was).as_deref(), Some(was.as_str()));
    assert!(
        ledger_ids(&s).contains(&now),
        "still this project's to reclaim later"
    );

    // that container gone, nothing on the box may run it: the next reclaim takes it
    drop(other);
    apply(&s, &release(4, &b, "4", 1 << 20));
    assert_eq!(image_id(&a), None, "reclaimed once no container names it");
}

one_compose!(reclaim_keeps_what_runs_and_what_rollback_needs);
one_compose!(disk_insufficient_reclaims_and_applies);

/// Tenancy's clock 4 minutes behind: the box measures +240 s, sends it with the next check-in,
/// exports it, and names it when a failure may come from it; in step again, nothing is named.
#[test]
fn clock_skew_is_measured_sent_exported_and_named() {
    let mut s = Stack::new("skew", Flavour::V2);
    let prom = s.dir.path().join("m.prom");
    s.set_extra(&format!("metrics_textfile: {}\n", prom.display()));
    s.give_bootstrap();
    s.tenancy.set_clock_offset(-240);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let skew = s.state()["counters"]["clock_skew_s"].as_i64().unwrap();
    assert!((239..=242).contains(&skew), "{skew}");
    assert!(
        r.stderr
            .contains("the box's clock is 4 min ahead of tenancy"),
        "{r:?}"
    );
    let m = std::fs::read_to_string(&prom).unwrap();
    assert!(
        m.contains(&format!("\nmonky_deployd_clock_skew_seconds {skew}\n")),
        "{m}"
    );
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let cks = s.tenancy.checkins();
    assert_eq!(
        cks[0]["clock_skew_s"],
        Value::Null,
        "unknown before any answer"
    );
    assert_eq!(cks[1]["clock_skew_s"], skew);

    // a failure a clock can cause (the token refused) names the skew
    s.tenancy.supersede(&s.env);
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let err = s.state()["last_error"].as_str().unwrap().to_string();
    assert!(err.contains("AGENT_UNAUTHENTICATED"), "{err}");
    assert!(
        err.contains("(the box's clock is 4 min ahead of tenancy: check NTP)"),
        "{err}"
    );
    // clocks in step: the same failure, nothing named
    s.tenancy.set_clock_offset(0);
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let err = s.state()["last_error"].as_str().unwrap().to_string();
    assert!(err.contains("AGENT_UNAUTHENTICATED"), "{err}");
    assert!(!err.contains("clock"), "{err}");
    assert!(
        s.state()["counters"]["clock_skew_s"]
            .as_i64()
            .unwrap()
            .abs()
            <= 2
    );
}

/// `collect` → one redacted bundle: the secret the service logs and its health probe prints
/// reach tenancy masked, never in clear, in any request; a second request inside
/// `diagnostics_min_interval_s` waits; a 429 is respected; `diagnose --json` agrees.
fn diagnostics_on_request_are_redacted_and_rate_limited(f: Flavour) {
    require_docker();
    let mut s = Stack::new("diag", f);
    s.give_bootstrap();
    let secret = format!("diag-secret-{}-Zq9", std::process::id());
    let v = s.bao.put_secret(&s.env, "api_key", &[("value", &secret)]);
    let compose = format!(
        "services:\n  web:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"echo starting with key $$API_KEY; touch /tmp/ok; exec httpd -f -p 8080 -h /tmp\"]\n    \
         environment:\n      API_KEY: ${{API_KEY}}\n    \
         healthcheck:\n      test: [\"CMD\", \"sh\", \"-c\", \"echo probe sees $$API_KEY; test -f /tmp/ok\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n"
    );
    let b = BundleSpec {
        serial: 1,
        compose,
        env_template: "API_KEY=${API_KEY}\n".into(),
        manifest: serde_json::json!({"entries": [
            {"var": "API_KEY", "path": format!("monky/data/{}/see/api_key", s.env), "version": v}
        ]}),
        meta_extra: serde_json::json!({}),
    };
    let sha = apply(&s, &b);
    // the planted value really is in the container's log and probe output
    let web = docker(&[
        "ps",
        "-q",
        "--filter",
        &format!("label=com.docker.compose.project={}", s.project()),
        "--filter",
        "label=com.docker.compose.service=web",
    ]);
    let logs = Command::new("docker")
        .args(["logs", &web])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&logs.stdout).contains(&secret));
    wait_for("a health probe", || {
        docker(&["inspect", "--format", "{{json .State.Health.Log}}", &web]).contains(&secret)
    });

    s.tenancy.request_diagnostics(&s.env, "req-1");
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let d = s.tenancy.diagnostics();
    assert_eq!(d.len(), 1, "{r:?}");
    assert_eq!(d[0]["request_id"], "req-1");
    assert_eq!(d[0]["env_id"], s.env.as_str());
    let bundle = &d[0]["bundle"];
    assert_eq!(bundle["status"]["applied_sha"], sha.as_str());
    let web = &bundle["services"][0];
    assert_eq!(web["service"], "web");
    assert_eq!(web["state"], "running");
    assert_eq!(web["restarts"], 0);
    assert!(
        web["log_tail"]
            .as_str()
            .unwrap()
            .contains("starting with key ***"),
        "{web}"
    );
    assert!(
        web["health_probes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["output"].as_str().unwrap().contains("probe sees ***")),
        "{web}"
    );
    assert!(bundle["agent"]["compose"].as_str().unwrap() != "unknown");
    assert!(bundle["links"]["openbao"]["rtt_ms"].is_u64(), "{bundle}");
    assert!(bundle["links"]["tenancy"]["rtt_ms"].is_u64(), "{bundle}");
    assert!(bundle["disk"]["free_bytes"].as_u64().unwrap() > 0);
    assert!(serde_json::to_vec(&d[0]).unwrap().len() <= 1 << 20);
    for (path, body) in s.tenancy.bodies() {
        assert!(
            !String::from_utf8_lossy(&body).contains(&secret),
            "the secret reached tenancy in {path}"
        );
    }

    // a second request inside the interval waits (the default 600 s)
    s.tenancy.request_diagnostics(&s.env, "req-2");
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.diagnostics().len(), 1, "{r:?}");
    assert!(r.stderr.contains("diagnostics_min_interval_s"), "{r:?}");
    // no interval, but tenancy says not now: nothing counted as sent
    s.set_extra("diagnostics_min_interval_s: 0\n");
    s.tenancy.refuse_diagnostics(true);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.diagnostics().len(), 1);
    assert!(r.stderr.contains("tenancy does not want it now"), "{r:?}");
    s.tenancy.refuse_diagnostics(false);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let d = s.tenancy.diagnostics();
    assert_eq!(d.len(), 2, "{r:?}");
    assert_eq!(d[1]["request_id"], "req-2");
    // asked for nothing more: none sent
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.tenancy.diagnostics().len(), 2);

    // the same locally, printed and never sent
    let r = s.cmd(&["diagnose", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains(&secret), "{}", r.stdout);
    let local: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(local["services"][0]["service"], "web");
    assert!(local["services"][0]["log_tail"]
        .as_str()
        .unwrap()
        .contains("starting with key ***"));
    assert_eq!(local["links"]["tenancy"]["state"], "dialable");
    let r = s.cmd(&["diagnose"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains(&secret));
    assert!(r.stdout.contains("== web"), "{}", r.stdout);
    assert_eq!(s.tenancy.diagnostics().len(), 2);
}

one_compose!(diagnostics_on_request_are_redacted_and_rate_limited);

//! Data snapshots and the update lock (PROTOCOL 0.6, issue 42) on real parts: a real dockerd
//! under each compose line, OpenBao, the test tenancy, the real binary. Release N's `db` writes
//! a known tree into its volume; N+1 "migrates" it — changes, adds and deletes files, plants a
//! symlink to a host file where a file was, a symlink to a host directory where a directory was,
//! a hard link, a FIFO and a device node — then fails. After the automatic rollback the volume
//! is N's tree byte for byte (type, owner, mode, mtime, content, link target), the host files
//! the links named are untouched, and `RESTORED: pgdata` is reported. Also: a failing migration
//! job, a release that passed (data kept on a later rollback render), a SIGKILL at each data
//! step, a bundle that reaches for a snapshot, and the update lock.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const SEED: &str =
    "if [ ! -f /data/seeded ]; then mkdir -p /data/dir /data/empty /data/deep/er && \
    echo alpha > /data/dir/a && chown 1000:1000 /data/dir/a && chmod 640 /data/dir/a && \
    echo beta > /data/b && chown 1001:1002 /data/b && chmod 4755 /data/b && \
    echo gamma > /data/deep/er/c && chmod 1777 /data/deep && \
    ln -s dir/a /data/link && touch /data/seeded; fi";

/// What N+1 does to the volume before it fails; `{victim}` and `{victim_dir}` are host paths.
const MIGRATE: &str =
    "echo changed > /data/dir/b2 && echo changed >> /data/deep/er/c && rm -f /data/b && \
    rm -f /data/dir/a && ln -s {victim} /data/dir/a && \
    rm -rf /data/empty && ln -s {victim_dir} /data/empty && \
    echo new > /data/c && ln /data/c /data/hard && mkfifo /data/fifo && mknod /data/dev c 1 3 && \
    chmod 700 /data && chown 1005 /data/dir";

fn db_compose(variant: &str, script: &str, healthy: bool) -> String {
    let probe = if healthy { "/tmp/ok" } else { "/tmp/never" };
    format!(
        "services:\n  db:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", {script:?}]\n    \
         environment:\n      VARIANT: \"{variant}\"\n    \
         healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"{probe}\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n    \
         volumes:\n      - pgdata:/data\nvolumes:\n  pgdata: {{}}\n",
        script = format!("{script}; touch /tmp/ok; exec sleep 3600"),
    )
}

fn data_bundle(serial: u64, compose: String) -> BundleSpec {
    let mut b = plain_bundle(serial, compose);
    b.meta_extra = json!({"data": {"snapshot": ["pgdata"], "stop": ["db"]}});
    b
}

fn volume_dir(s: &Stack, key: &str) -> PathBuf {
    let o = Command::new("docker")
        .args([
            "volume",
            "inspect",
            "-f",
            "{{.Mountpoint}}",
            &format!("{}_{key}", s.project()),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

/// Every entry under `root` (itself included): type, owner, mode with its special bits, mtime,
/// and the content's sha256 / the link's target / the device number.
fn listing(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let p = root.join(&rel);
        let m = std::fs::symlink_metadata(&p).unwrap();
        let t = m.file_type();
        let what = if t.is_symlink() {
            format!("link {}", std::fs::read_link(&p).unwrap().display())
        } else if t.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                todo.push(rel.join(e.unwrap().file_name()));
            }
            "dir".to_string()
        } else if t.is_file() {
            format!(
                "file {}",
                hex::encode(Sha256::digest(std::fs::read(&p).unwrap()))
            )
        } else if t.is_fifo() {
            "fifo".into()
        } else if t.is_char_device() || t.is_block_device() {
            format!("dev {}", m.rdev())
        } else {
            "other".into()
        };
        // a symlink's own mode and mtime are not kept by every copy (lutimes); its target is
        let meta = if t.is_symlink() {
            format!("{}:{}", m.uid(), m.gid())
        } else {
            format!(
                "{}:{} {:o} {}",
                m.uid(),
                m.gid(),
                m.mode() & 0o7777,
                m.mtime()
            )
        };
        out.insert(rel.display().to_string(), format!("{what} {meta}"));
    }
    out
}

fn docker_status(s: &Stack, service: &str) -> String {
    let o = Command::new("docker")
        .args([
            "ps",
            "-a",
            "--filter",
            &format!("label=com.docker.compose.project={}", s.project()),
            "--filter",
            &format!("label=com.docker.compose.service={service}"),
            "--format",
            "{{.ID}} {{.Status}}",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn wait_healthy(s: &Stack, service: &str) {
    let t = Instant::now();
    while !docker_status(s, service).contains("(healthy)") {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{service}: {}",
            docker_status(s, service)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Host files the failing release's links name; unchanged after everything.
struct Victims {
    _dir: tempfile::TempDir,
    file: PathBuf,
    dir: PathBuf,
}

impl Victims {
    fn new() -> Victims {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("victim");
        std::fs::write(&file, "host file\n").unwrap();
        let dir = d.path().join("victim-dir");
        std::fs::create_dir(&dir).unwrap();
        Victims { _dir: d, file, dir }
    }
    fn script(&self) -> String {
        MIGRATE
            .replace("{victim}", &self.file.display().to_string())
            .replace("{victim_dir}", &self.dir.display().to_string())
    }
    fn untouched(&self) {
        assert_eq!(std::fs::read_to_string(&self.file).unwrap(), "host file\n");
        assert_eq!(std::fs::read_dir(&self.dir).unwrap().count(), 0);
    }
}

fn snapshots(s: &Stack) -> Vec<Value> {
    let r = s.cmd(&["snapshots", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    serde_json::from_str(&r.stdout).unwrap()
}

/// N applied with its seeded tree; returns (sha, the tree's listing).
fn seeded(s: &mut Stack, extra: &str) -> (String, BTreeMap<String, String>) {
    let prom = s.dir.path().join("deployd.prom");
    s.set_extra(&format!(
        "auto_rollback: true\nhealthy_timeout_s: 12\nmetrics_textfile: {}\n{extra}",
        prom.display()
    ));
    s.give_bootstrap();
    let n = s
        .tenancy
        .set_bundle(&s.env, data_bundle(1, db_compose("n", SEED, true)).files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], n.as_str());
    assert!(snapshots(s).is_empty(), "no snapshot on a first deploy");
    let before = listing(&volume_dir(s, "pgdata"));
    assert!(
        before.contains_key("dir/a") && before.contains_key("link"),
        "{before:#?}"
    );
    (n, before)
}

fn restores_the_data_before_the_rollback(f: Flavour) {
    require_docker();
    let mut s = Stack::new("datarb", f);
    let v = Victims::new();
    let (n, before) = seeded(&mut s, "");
    let n1 = s.tenancy.set_bundle(
        &s.env,
        data_bundle(
            2,
            db_compose("n1", &format!("{SEED}; {}", v.script()), false),
        )
        .files(),
    );
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let reps = s.tenancy.reports();
    assert_eq!(reps.len(), reports + 2, "{reps:#?}");
    assert_eq!(reps[reports]["sha"], n1.as_str());
    let d = reps[reports]["detail"].as_str().unwrap();
    assert!(
        d.starts_with("UNHEALTHY") && d.ends_with(&format!("; rolled back to {n}")),
        "{d}"
    );
    assert_eq!(reps[reports + 1]["sha"], n.as_str());
    assert_eq!(
        reps[reports + 1]["detail"],
        format!("ROLLED_BACK_FROM: {n1}; RESTORED: pgdata")
    );
    wait_healthy(&s, "db");
    let after = listing(&volume_dir(&s, "pgdata"));
    assert_eq!(after, before, "the volume is N's tree again");
    v.untouched();
    let snaps = snapshots(&s);
    assert_eq!(snaps.len(), 1, "{snaps:#?}");
    assert_eq!(snaps[0]["release"], n.as_str());
    assert_eq!(snaps[0]["taken_for"], n1.as_str());
    assert_eq!(snaps[0]["volume"], "pgdata");
    // root's only: the snapshot dir and the tree's copy of a 0640 file
    let loc = PathBuf::from(snaps[0]["location"].as_str().unwrap());
    assert_eq!(mode(loc.parent().unwrap()), 0o700);
    assert!(loc.starts_with(s.state_dir().join("snapshots")));
    let m = std::fs::read_to_string(s.dir.path().join("deployd.prom")).unwrap();
    assert!(m.contains("monky_deployd_restores_total 1\n"), "{m}");
    assert!(
        !s.state_dir().join("data.json").exists(),
        "the journal is gone"
    );
    let status = s.cmd(&["status"]);
    assert!(status.stdout.contains("snapshots"), "{status:?}");
    let _ = n;
}
all_composes!(restores_the_data_before_the_rollback);

fn a_failed_migration_job_is_undone_too(f: Flavour) {
    require_docker();
    let mut s = Stack::new("datajob", f);
    let (n, before) = seeded(&mut s, "");
    let job = format!(
        "services:\n  migrate:\n    image: {IMAGE}\n    command: [\"sh\", \"-c\", \"echo half > /data/dir/half; rm -f /data/b; exit 3\"]\n    \
         volumes:\n      - pgdata:/data\n  db:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"touch /tmp/ok; exec sleep 3600\"]\n    \
         depends_on:\n      migrate:\n        condition: service_completed_successfully\n    \
         healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n    \
         volumes:\n      - pgdata:/data\nvolumes:\n  pgdata: {{}}\n"
    );
    let n1 = s.tenancy.set_bundle(&s.env, data_bundle(2, job).files());
    let reports = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let reps = s.tenancy.reports();
    let d = reps[reports]["detail"].as_str().unwrap();
    assert!(d.starts_with("JOB_FAILED"), "{d}");
    assert_eq!(
        reps[reports + 1]["detail"],
        format!("ROLLED_BACK_FROM: {n1}; RESTORED: pgdata")
    );
    wait_healthy(&s, "db");
    assert_eq!(listing(&volume_dir(&s, "pgdata")), before);
    let _ = n;
}
one_compose!(a_failed_migration_job_is_undone_too);

fn data_written_by_a_release_that_ran_is_kept(f: Flavour) {
    require_docker();
    let mut s = Stack::new("datakeep", f);
    let (n, before) = seeded(&mut s, "");
    // N+1 migrates and passes: applied, its data is the data from now on
    let n1 = s.tenancy.set_bundle(
        &s.env,
        data_bundle(
            2,
            db_compose("n1", &format!("{SEED}; echo migrated > /data/dir/m"), true),
        )
        .files(),
    );
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], n1.as_str());
    let migrated = listing(&volume_dir(&s, "pgdata"));
    assert_ne!(migrated, before);
    // a later render of N (tenancy rolls back): no restore, N+1's data stays
    let mut old = data_bundle(1, db_compose("n", SEED, true));
    old.meta_extra["agent"] = json!({"allow_rollback": true});
    let back = s.tenancy.set_bundle(&s.env, old.files());
    assert_ne!(back, n, "the render carries allow_rollback: a new sha");
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["sha"], back.as_str());
    assert!(
        !rep["detail"].as_str().unwrap_or("").contains("RESTORED"),
        "{rep}"
    );
    assert_eq!(listing(&volume_dir(&s, "pgdata")), migrated);
}
one_compose!(data_written_by_a_release_that_ran_is_kept);

/// A tick held at `step` by the test hook and SIGKILLed with its process group.
fn killed_at(s: &Stack, step: &str) -> String {
    let ctl = tempfile::tempdir().unwrap();
    let marker = ctl.path().join("paused");
    let log = ctl.path().join("agent.log");
    let mut c = Command::new(BIN);
    c.args([
        "--config",
        s.config_path().to_str().unwrap(),
        "run",
        "--once",
    ])
    .env_remove("MONKY_LOG")
    .env("MONKY_DEPLOYD_TEST_PAUSE_AT", step)
    .env("MONKY_DEPLOYD_TEST_PAUSE_MARKER", &marker)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(std::fs::File::create(&log).unwrap())
    .process_group(0);
    let mut child = c.spawn().unwrap();
    let t = Instant::now();
    while !marker.exists() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!(
                "ended ({st}) before {step}: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "never reached {step}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id() as i32;
    // SAFETY: plain syscall; the child leads its own process group
    unsafe { libc::killpg(pid, libc::SIGKILL) };
    let _ = child.wait();
    std::fs::read_to_string(&log).unwrap_or_default()
}

fn a_kill_at_each_data_step_converges(f: Flavour) {
    require_docker();
    // stopped for the copy, killed: the next tick starts db again and applies with a fresh copy
    let mut s = Stack::new("datakill", f);
    let v = Victims::new();
    let (n, before) = seeded(&mut s, "");
    let n1 = s.tenancy.set_bundle(
        &s.env,
        data_bundle(
            2,
            db_compose("n1", &format!("{SEED}; {}", v.script()), false),
        )
        .files(),
    );
    killed_at(&s, "data:stopped");
    assert!(
        !docker_status(&s, "db").contains("Up"),
        "db is stopped at the kill: {}",
        docker_status(&s, "db")
    );
    assert!(s.state_dir().join("data.json").exists());
    // the copy half-made, killed: discarded, never restored
    killed_at(&s, "data:copied-one");
    // killed after the copy and before up finished, then while restoring: the next tick
    // finishes the restore before N starts
    killed_at(&s, "data:restoring");
    let j: Value =
        serde_json::from_slice(&std::fs::read(s.state_dir().join("data.json")).unwrap()).unwrap();
    assert_eq!(j["phase"], "restoring", "{j}");
    assert_eq!(j["taken_for"], n1.as_str());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    wait_healthy(&s, "db");
    assert_eq!(listing(&volume_dir(&s, "pgdata")), before);
    v.untouched();
    assert!(!s.state_dir().join("data.json").exists());
    assert_eq!(s.state()["applied_sha"], n.as_str());
    assert_eq!(s.state()["failed_release"]["sha"], n1.as_str());
    // no half-made snapshot is left
    for e in std::fs::read_dir(s.state_dir().join("snapshots").join(&n)).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains("partial"), "{name}");
    }
}
one_compose!(a_kill_at_each_data_step_converges);

fn a_bundle_cannot_reach_a_snapshot(f: Flavour) {
    require_docker();
    let mut s = Stack::new("datareach", f);
    s.give_bootstrap();
    s.write_config();
    let snaps = s.state_dir().join("snapshots");
    let compose = format!(
        "services:\n  x:\n    image: {IMAGE}\n    command: [\"sleep\", \"60\"]\n    volumes:\n      - {}:/s\n",
        snaps.display()
    );
    let sha = s
        .tenancy
        .set_bundle(&s.env, plain_bundle(1, compose).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["sha"], sha.as_str());
    assert!(
        rep["detail"]
            .as_str()
            .unwrap()
            .starts_with("BIND_SOURCE_REFUSED"),
        "{rep}"
    );
    // nor ask for a volume that is not its own, nor while the box keeps none
    let mut b = plain_bundle(2, format!("services:\n  x:\n    image: {IMAGE}\n"));
    b.meta_extra = json!({"data": {"snapshot": ["nosuch"]}});
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        s.last_report()["detail"],
        "SNAPSHOT_REFUSED: nosuch (not a top-level volume of compose.yaml)"
    );
    s.set_extra("keep_snapshots: 0\n");
    s.tenancy
        .set_bundle(&s.env, data_bundle(3, db_compose("z", SEED, true)).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        s.last_report()["detail"],
        "SNAPSHOT_REFUSED: pgdata (keep_snapshots is 0)"
    );
}
all_composes!(a_bundle_cannot_reach_a_snapshot);

// ---- the update lock ----------------------------------------------------------------------

fn worker_compose(variant: &str) -> String {
    format!(
        "services:\n  worker:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"touch /tmp/ok; exec sleep 3600\"]\n    \
         environment:\n      VARIANT: \"{variant}\"\n    \
         healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n"
    )
}

fn lock_bundle(serial: u64, variant: &str) -> BundleSpec {
    let mut b = plain_bundle(serial, worker_compose(variant));
    b.meta_extra = json!({"update_lock": ["worker"]});
    b
}

fn exec(s: &Stack, service: &str, sh: &str) {
    let id = docker_status(s, service)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let o = Command::new("docker")
        .args(["exec", "-u", "1000", &id, "sh", "-c", sh])
        .output()
        .unwrap();
    assert!(o.status.success(), "{sh}: {o:?}");
}

fn worker_id(s: &Stack) -> String {
    docker_status(s, "worker")
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

fn an_update_waits_for_the_apps_lock(f: Flavour) {
    require_docker();
    let mut s = Stack::new("lock", f);
    let prom = s.dir.path().join("deployd.prom");
    s.set_extra(&format!("metrics_textfile: {}\n", prom.display()));
    s.give_bootstrap();
    let n = s.tenancy.set_bundle(&s.env, lock_bundle(1, "n").files());
    assert_eq!(s.tick().code, 0);
    // the app (not root) takes its lock
    exec(&s, "worker", "touch /run/monky-lock/updates.lock");
    let id = worker_id(&s);
    let n1 = s.tenancy.set_bundle(&s.env, lock_bundle(2, "n1").files());
    let fetches = s.tenancy.bundle_fetches().len();
    for _ in 0..2 {
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
        let rep = s.last_report();
        assert_eq!(rep["sha"], n.as_str());
        assert_eq!(rep["result"], "applied");
        let d = rep["detail"].as_str().unwrap();
        assert!(
            d.starts_with(&format!(
                "DEFERRED: {} held by worker lock (since ",
                &n1[..12]
            )),
            "{d}"
        );
    }
    assert_eq!(worker_id(&s), id, "the worker was not touched");
    assert_eq!(
        s.tenancy.bundle_fetches().len(),
        fetches,
        "nothing fetched while held"
    );
    assert_eq!(s.state()["lock_hold"]["service"], "worker");
    // released: applied, and the new container's lock directory is empty
    exec(
        &s,
        "worker",
        "rm /run/monky-lock/updates.lock; touch /run/monky-lock/junk",
    );
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], n1.as_str());
    assert_ne!(worker_id(&s), id);
    exec(&s, "worker", "test ! -e /run/monky-lock/junk");

    // a symlink, a directory or a FIFO of that name holds nothing
    for plant in [
        "ln -s /etc/passwd /run/monky-lock/updates.lock",
        "mkdir /run/monky-lock/updates.lock",
        "mkfifo /run/monky-lock/updates.lock",
    ] {
        exec(&s, "worker", plant);
        let next = s.tenancy.set_bundle(
            &s.env,
            lock_bundle(3 + s.tenancy.reports().len() as u64, plant).files(),
        );
        let r = s.tick();
        assert_eq!(r.code, 0, "{plant}: {r:?}");
        assert_eq!(s.last_report()["sha"], next.as_str(), "{plant}");
    }

    // urgent overrides a hold
    exec(&s, "worker", "touch /run/monky-lock/updates.lock");
    let u = s.tenancy.set_bundle(&s.env, lock_bundle(50, "u").files());
    assert_eq!(s.tick().code, 0);
    assert!(s.last_report()["detail"]
        .as_str()
        .unwrap()
        .starts_with("DEFERRED"));
    s.tenancy.set_urgent(&s.env, true);
    let before = s.tenancy.reports().len();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    // the apply's own report (a reclaim may report after it)
    let rep = s.tenancy.reports()[before].clone();
    assert_eq!(rep["sha"], u.as_str());
    assert!(
        rep["detail"]
            .as_str()
            .unwrap()
            .starts_with("LOCK_OVERRIDDEN: worker after "),
        "{rep}"
    );
    s.tenancy.set_urgent(&s.env, false);

    // the longest hold
    s.set_extra(&format!(
        "metrics_textfile: {}\nupdate_lock_max_s: 2\n",
        prom.display()
    ));
    exec(&s, "worker", "touch /run/monky-lock/updates.lock");
    let m = s.tenancy.set_bundle(&s.env, lock_bundle(60, "m").files());
    assert_eq!(s.tick().code, 0);
    assert!(s.last_report()["detail"]
        .as_str()
        .unwrap()
        .starts_with("DEFERRED"));
    std::thread::sleep(Duration::from_secs(3));
    let before = s.tenancy.reports().len();
    assert_eq!(s.tick().code, 0);
    let rep = s.tenancy.reports()[before].clone();
    assert_eq!(rep["sha"], m.as_str());
    assert!(rep["detail"]
        .as_str()
        .unwrap()
        .starts_with("LOCK_OVERRIDDEN: worker after "));

    // a lock in a stopped container holds nothing
    exec(&s, "worker", "touch /run/monky-lock/updates.lock");
    let o = Command::new("docker")
        .args(["stop", &worker_id(&s)])
        .output()
        .unwrap();
    assert!(o.status.success());
    let last = s
        .tenancy
        .set_bundle(&s.env, lock_bundle(70, "last").files());
    assert_eq!(s.tick().code, 0);
    assert_eq!(s.last_report()["sha"], last.as_str());
    let metrics = std::fs::read_to_string(&prom).unwrap();
    assert!(
        metrics.contains("monky_deployd_update_lock_held_seconds_total "),
        "{metrics}"
    );
}
one_compose!(an_update_waits_for_the_apps_lock);

fn a_bundle_cannot_take_the_lock_volume(f: Flavour) {
    require_docker();
    let s = Stack::new("lockname", f);
    s.give_bootstrap();
    s.write_config();
    let compose = format!(
        "services:\n  a:\n    image: {IMAGE}\n    volumes: [\"monky-lock-a:/x\"]\nvolumes:\n  monky-lock-a: {{}}\n"
    );
    s.tenancy
        .set_bundle(&s.env, plain_bundle(1, compose).files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        s.last_report()["detail"],
        "NAME_REFUSED: volume monky-lock-a (reserved for the box's update lock)"
    );
    // the lock service's own volume, mounted by another service through the agent's override
    let mut b = plain_bundle(
        2,
        format!("services:\n  a:\n    image: {IMAGE}\n  b:\n    image: {IMAGE}\n    volumes: [\"monky-lock-a:/x\"]\n"),
    );
    b.meta_extra = json!({"update_lock": ["a"]});
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        s.last_report()["detail"],
        "NAME_REFUSED: b volume monky-lock-a (reserved for the box's update lock)"
    );
}
all_composes!(a_bundle_cannot_take_the_lock_volume);

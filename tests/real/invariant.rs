//! The host-boundary invariant (issue 18, docs/POLICY.md) on real dockerd and compose v1, v2 and
//! v5: no host path the engine resolves again later — at any container (re)start — passes
//! through a directory a container can write, and compose runs only the bytes that were checked.
//!
//! 1. The restart-policy attack and its variants: each proven with the policy off (the engine's
//!    restart policy re-resolves a bind through a planted symlink, unseen by compose or the
//!    guard), refused by the full agent and by the engine guard alone.
//! 2. A same-sha retry after a failed apply: a container made by hand that can write the release
//!    is refused before compose reads a byte; with the policy off it rewrites what compose runs.
//!    A release file changed on the host between attempts is put back to the checked bytes; one
//!    changed after promote is refused (`RELEASE_REFUSED`).
//! 3. The layer-agreement corpus: the full policy and the guard alone reach the same verdict on
//!    every shape (attacks and benign ones); the verdict table is printed.
//! 4. A benign 10-service project applies on all three lines (the guard's cost is printed;
//!    `scripts/bench-guard.sh` measures it on the release binary).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::*;

// ---------------------------------------------------------------------------------------------
// helpers

fn bootstrapped(s: &Stack) {
    s.give_bootstrap();
    let r = s.cmd(&["bootstrap"]);
    assert_eq!(r.code, 0, "{r:?}");
}

/// `["sh", "-c", "<script>"]` as YAML: quotes escaped, `$` doubled (compose interpolates it).
fn sh(script: &str) -> String {
    let s = script
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('$', "$$");
    format!("[\"sh\", \"-c\", \"{s}\"]")
}

fn docker(args: &[&str]) -> std::process::Output {
    Command::new("docker").args(args).output().expect("docker")
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn all_containers(s: &Stack) -> Vec<String> {
    let o = docker(&[
        "ps",
        "-aq",
        "--filter",
        &format!("label=com.docker.compose.project={}", s.project()),
    ]);
    stdout(&o).lines().map(String::from).collect()
}

fn inspect(id: &str, fmt: &str) -> String {
    stdout(&docker(&["inspect", "--format", fmt, id]))
}

/// Every container and volume of the stack's project, gone (between shapes).
fn wipe(s: &Stack) {
    let ids = all_containers(s);
    if !ids.is_empty() {
        let mut a = vec!["rm", "-f", "-v"];
        a.extend(ids.iter().map(|s| s.as_str()));
        docker(&a);
    }
    for v in s.volumes() {
        docker(&["volume", "rm", "-f", &v]);
    }
    // a network left standing keeps its subnet: compose v1/v2 would not create the next shape's
    let label = format!("label=com.docker.compose.project={}", s.project());
    let nets = stdout(&docker(&["network", "ls", "-q", "--filter", &label]));
    for n in nets.split_whitespace() {
        docker(&["network", "rm", n]);
    }
}

/// Containers and volumes made by hand (another app on the box), removed even when a test fails.
#[derive(Default)]
struct HandMade {
    containers: Vec<String>,
    volumes: Vec<String>,
    images: Vec<String>,
}

impl Drop for HandMade {
    fn drop(&mut self) {
        for c in &self.containers {
            let _ = Command::new("docker").args(["rm", "-f", c]).output();
        }
        for v in &self.volumes {
            let _ = Command::new("docker")
                .args(["volume", "rm", "-f", v])
                .output();
        }
        for i in &self.images {
            let _ = Command::new("docker").args(["rmi", "-f", i]).output();
        }
    }
}

/// A host directory outside everything a bundle may reach, holding `marker`.
struct Marker {
    dir: tempfile::TempDir,
    text: String,
}

impl Marker {
    fn new(tag: &str, f: Flavour) -> Marker {
        let dir = tempfile::Builder::new()
            .prefix("monky-inv-marker-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let text = format!("marker-{tag}-{}-{:?}", std::process::id(), f);
        std::fs::write(dir.path().join("marker"), &text).unwrap();
        Marker { dir, text }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The retry attack's timing and the promote race's busy loops do not share the 2 cores.
static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn timing() -> std::sync::MutexGuard<'static, ()> {
    TIMING.lock().unwrap_or_else(|e| e.into_inner())
}

fn bind_root(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("monky-inv-{tag}-"))
        .tempdir_in("/var/tmp")
        .unwrap()
}

/// What one tick came to: `applied`, `refused` (a `…_REFUSED` code) or `failed`, and the
/// report's detail.
#[derive(Debug, Clone)]
struct Verdict {
    class: &'static str,
    detail: String,
}

fn verdict(s: &Stack, r: &Run, reports_before: usize) -> Verdict {
    let reports = s.tenancy.reports();
    let last = if reports.len() > reports_before {
        reports.last().cloned()
    } else {
        None
    };
    let result = last
        .as_ref()
        .and_then(|v| v["result"].as_str().map(String::from))
        .unwrap_or_default();
    let detail = last
        .as_ref()
        .and_then(|v| v["detail"].as_str().map(String::from))
        .unwrap_or_else(|| format!("(no report; exit {})", r.code));
    let code = detail.split(':').next().unwrap_or("");
    let class = if r.code == 0 && result == "applied" {
        "applied"
    } else if code.ends_with("_REFUSED") && !code.contains(' ') {
        "refused"
    } else {
        "failed"
    };
    Verdict { class, detail }
}

fn tick_verdict(s: &Stack, policy: &str) -> (Run, Verdict) {
    let before = s.tenancy.reports().len();
    let r = tick_with(s, policy);
    let v = verdict(s, &r, before);
    (r, v)
}

fn short(d: &str) -> String {
    let d = d.replace('\n', " ");
    if d.chars().count() > 160 {
        format!("{}…", d.chars().take(160).collect::<String>())
    } else {
        d
    }
}

fn wait_until(what: &str, secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let end = std::time::Instant::now() + Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("timed out waiting for {what}");
    false
}

// ---------------------------------------------------------------------------------------------
// 1. the restart-policy attack

/// The writer: waits for the engine to have made `sub` (the other container's bind source),
/// lets that container start once, then swaps `sub` for a symlink to the marker directory.
fn swapper(dir: &str, marker: &Path) -> String {
    sh(&format!(
        "while [ ! -d {dir}/sub ]; do sleep 0.2; done; sleep 3; \
         rm -rf {dir}/sub 2>/dev/null || mv {dir}/sub {dir}/old.$$; \
         ln -s {m} {dir}/sub && echo swapped; exec sleep 600",
        m = marker.display()
    ))
}

/// The victim of its own restart policy: says what it sees, and exits after a while (the
/// engine restarts it, resolving its bind source again). With `plant`, also writes there.
fn restarter(dir: &str, plant: bool) -> String {
    let plant = if plant {
        format!("if [ -f {dir}/marker ]; then echo planted-by-restart > {dir}/planted && echo planted; fi; ")
    } else {
        String::new()
    };
    sh(&format!(
        "echo see:$(cat {dir}/marker 2>/dev/null || echo none); {plant}sleep 6; exit 1"
    ))
}

struct RestartShape {
    what: &'static str,
    compose: String,
    /// The service whose container the guard refuses (it must never exist with the policy on).
    refused: &'static str,
    /// The service the engine restarts; its log shows the marker after a restart.
    restarts: &'static str,
    /// The restarted container writes `planted` into the host's marker directory.
    writes: bool,
}

fn restart_shapes(m: &Marker) -> Vec<RestartShape> {
    vec![
        RestartShape {
            what: "restart: ro child bind inside another service's writable ./data",
            compose: format!(
                "services:\n  a:\n    image: {IMAGE}\n    init: true\n    command: {a}\n    \
                 volumes: [\"./data:/d\"]\n  b:\n    image: {IMAGE}\n    init: true\n    \
                 restart: always\n    depends_on: [a]\n    command: {b}\n    \
                 volumes: [\"./data/sub:/x:ro\"]\n",
                a = swapper("/d", m.path()),
                b = restarter("/x", false)
            ),
            refused: "b",
            restarts: "b",
            writes: false,
        },
        RestartShape {
            what: "restart: one service, ro ./data/sub inside its own writable ./data",
            compose: format!(
                "services:\n  b:\n    image: {IMAGE}\n    init: true\n    restart: always\n    \
                 command: {b}\n    volumes: [\"./data:/d\", \"./data/sub:/x:ro\"]\n",
                b = sh(&format!(
                    "if [ -L /d/sub ]; then echo see:$(cat /x/marker); else echo see:none; sleep 2; \
                     rm -rf /d/sub 2>/dev/null || mv /d/sub /d/old.$$; ln -s {} /d/sub && echo swapped; fi; \
                     sleep 2; exit 1",
                    m.path().display()
                ))
            ),
            refused: "b",
            restarts: "b",
            writes: false,
        },
        RestartShape {
            // the writable bind is the child: created first, then the writable parent (the
            // check that fires is "a new writable bind is an ancestor of an existing one")
            what: "restart: writable child ./data/sub, writable parent ./data created after it",
            compose: format!(
                "services:\n  b:\n    image: {IMAGE}\n    init: true\n    restart: always\n    \
                 command: {b}\n    volumes: [\"./data/sub:/x\"]\n  a:\n    image: {IMAGE}\n    \
                 init: true\n    depends_on: [b]\n    command: {a}\n    volumes: [\"./data:/d\"]\n",
                a = swapper("/d", m.path()),
                b = restarter("/x", true)
            ),
            refused: "a",
            restarts: "b",
            writes: true,
        },
    ]
}

/// Policy off: the restarted container saw nothing at first, then the marker after a restart
/// the engine did on its own. Returns the effect for the table.
fn prove_restart_escape(s: &Stack, svc: &str, m: &Marker, writes: bool) -> String {
    let mut ids = Vec::new();
    let got = wait_until("the restarted container to see the marker", 40, || {
        ids = service_containers(s, svc);
        ids.len() == 1 && logs_of(&ids[0]).contains(&format!("see:{}", m.text))
    });
    let id = ids.first().cloned().unwrap_or_default();
    let logs = if id.is_empty() {
        String::new()
    } else {
        logs_of(&id)
    };
    let restarts: u32 = inspect(&id, "{{.RestartCount}}").parse().unwrap_or(0);
    assert!(
        got,
        "{svc}: the host marker never showed after a restart (logs: {logs}; restarts {restarts})"
    );
    assert!(
        logs.starts_with("see:none"),
        "{svc}: its first run must see its own empty dir, not the marker: {logs}"
    );
    assert!(restarts >= 1, "{svc}: not restarted by the engine: {logs}");
    let mut effect =
        format!("{svc} restarted {restarts}x by the engine, then read the host marker");
    if writes {
        let planted = m.path().join("planted");
        assert!(
            wait_until("the planted file", 10, || planted.exists()),
            "{svc}: no file written into the host's marker dir: {logs}"
        );
        effect.push_str(" and wrote a file into the host dir");
    }
    effect
}

fn assert_refused(v: &Verdict, prefixes: &[&str], what: &str) {
    assert_eq!(v.class, "refused", "{what}: {v:?}");
    assert!(
        prefixes.iter().any(|p| v.detail.starts_with(p)),
        "{what}: expected {prefixes:?}, got {}",
        v.detail
    );
}

fn restart_policy_attack(f: Flavour) {
    require_docker();
    let s = Stack::new("inv-restart", f);
    bootstrapped(&s);
    let m = Marker::new("restart", f);
    let mut serial = 1;
    let mut table = Vec::new();
    for shape in restart_shapes(&m) {
        // full agent: refused before compose, nothing created
        s.tenancy
            .set_bundle(&s.env, bundle(serial, shape.compose.clone()));
        serial += 1;
        let (_, full) = tick_verdict(&s, "on");
        assert_refused(&full, &["BIND_SOURCE_REFUSED:"], shape.what);
        assert!(all_containers(&s).is_empty(), "{}: created", shape.what);
        // the guard alone: the nested bind's container is never created
        s.tenancy
            .set_bundle(&s.env, bundle(serial, shape.compose.clone()));
        serial += 1;
        let (_, guard) = tick_verdict(&s, "no-file");
        assert_refused(&guard, &["BIND_SOURCE_REFUSED:"], shape.what);
        assert!(
            guard.detail.contains("HostConfig.Binds"),
            "{}: {}",
            shape.what,
            guard.detail
        );
        assert!(
            service_containers(&s, shape.refused).is_empty(),
            "{}: the guard let {} be created",
            shape.what,
            shape.refused
        );
        wipe(&s);
        // policy off: the engine's restart policy resolves the bind again, through the symlink
        s.tenancy
            .set_bundle(&s.env, bundle(serial, shape.compose.clone()));
        serial += 1;
        let _ = std::fs::remove_file(m.path().join("planted"));
        let _ = tick_with(&s, "off");
        let effect = prove_restart_escape(&s, shape.restarts, &m, shape.writes);
        wipe(&s);
        table.push(format!(
            "{f:?} | {} | {effect} | {} | {}",
            shape.what,
            short(&full.detail),
            short(&guard.detail)
        ));
    }
    for l in table {
        eprintln!("{l}");
    }
}
all_composes!(restart_policy_attack);

/// Project P1 binds a `bind_roots` directory writable; project P2 (another stack, another
/// tenancy env) binds a subdirectory of it read-only with a restart policy. P2's file passes
/// cannot see P1: the guard refuses it box-wide.
fn restart_attack_across_projects(f: Flavour) {
    require_docker();
    let root = bind_root("xproj");
    let rp = root.path().display().to_string();
    let m = Marker::new("xproj", f);
    let mut p1 = Stack::new("inv-p1", f);
    p1.set_extra(&format!("bind_roots: [{rp}]\n"));
    bootstrapped(&p1);
    let mut p2 = Stack::new("inv-p2", f);
    p2.set_extra(&format!("bind_roots: [{rp}]\n"));
    bootstrapped(&p2);
    let c1 = format!(
        "services:\n  a:\n    image: {IMAGE}\n    init: true\n    command: {a}\n    \
         volumes: [\"{rp}/shared:/d\"]\n",
        a = swapper("/d", m.path())
    );
    p1.tenancy.set_bundle(&p1.env, bundle(1, c1));
    let (r, v) = tick_verdict(&p1, "on");
    assert_eq!(v.class, "applied", "P1 alone is benign: {r:?}");
    let a_id = service_containers(&p1, "a");
    assert_eq!(a_id.len(), 1);
    let c2 = format!(
        "services:\n  b:\n    image: {IMAGE}\n    init: true\n    restart: always\n    \
         command: {b}\n    volumes: [\"{rp}/shared/sub:/x:ro\"]\n",
        b = restarter("/x", false)
    );
    let mut serial = 1;
    let mut run = |policy: &str| {
        p2.tenancy.set_bundle(&p2.env, bundle(serial, c2.clone()));
        serial += 1;
        tick_verdict(&p2, policy).1
    };
    let full = run("on");
    assert_refused(&full, &["BIND_SOURCE_REFUSED:"], "P2 (full agent)");
    assert!(full.detail.contains("HostConfig.Binds"), "{}", full.detail);
    assert!(all_containers(&p2).is_empty(), "P2 created a container");
    let guard = run("no-file");
    assert_refused(&guard, &["BIND_SOURCE_REFUSED:"], "P2 (guard alone)");
    assert!(all_containers(&p2).is_empty(), "P2 created a container");
    assert_eq!(service_containers(&p1, "a"), a_id, "P1 untouched");
    let _ = run("off");
    let effect = prove_restart_escape(&p2, "b", &m, false);
    eprintln!(
        "{f:?} | restart: P2 ro bind inside P1's writable bind_roots dir (two projects) | {effect} | {} | {}",
        short(&full.detail),
        short(&guard.detail)
    );
    drop(p2);
    drop(p1);
}
all_composes!(restart_attack_across_projects);

/// Release 1 leaves a container with a writable bind (under the box's bind_roots); release 2
/// keeps it (unchanged: compose does not recreate it) and adds a service nesting a read-only
/// bind under it. The guard alone must see release 1's container on the box (it is not in this
/// compose call's creates).
fn restart_attack_across_releases(f: Flavour) {
    require_docker();
    let root = bind_root("xrel");
    let rp = root.path().display().to_string();
    let m = Marker::new("xrel", f);
    let mut s = Stack::new("inv-xrel", f);
    s.set_extra(&format!("bind_roots: [{rp}]\n"));
    bootstrapped(&s);
    let a = format!(
        "  a:\n    image: {IMAGE}\n    init: true\n    command: {a}\n    volumes: [\"{rp}/app:/d\"]\n",
        a = swapper("/d", m.path())
    );
    s.tenancy
        .set_bundle(&s.env, bundle(1, format!("services:\n{a}")));
    let (r, v) = tick_verdict(&s, "on");
    assert_eq!(v.class, "applied", "release 1 is benign: {r:?}");
    let a_id = service_containers(&s, "a");
    assert_eq!(a_id.len(), 1);
    let c2 = format!(
        "services:\n{a}  b:\n    image: {IMAGE}\n    init: true\n    restart: always\n    \
         command: {b}\n    volumes: [\"{rp}/app/sub:/x:ro\"]\n",
        b = restarter("/x", false)
    );
    let mut serial = 2;
    let mut run = |policy: &str| {
        s.tenancy.set_bundle(&s.env, bundle(serial, c2.clone()));
        serial += 1;
        tick_verdict(&s, policy).1
    };
    let full = run("on");
    assert_refused(&full, &["BIND_SOURCE_REFUSED:"], "release 2 (full agent)");
    assert!(service_containers(&s, "b").is_empty(), "b created");
    let guard = run("no-file");
    assert_refused(&guard, &["BIND_SOURCE_REFUSED:"], "release 2 (guard alone)");
    assert!(service_containers(&s, "b").is_empty(), "b created");
    assert_eq!(
        service_containers(&s, "a"),
        a_id,
        "release 1's container is kept"
    );
    let _ = run("off");
    let effect = prove_restart_escape(&s, "b", &m, false);
    eprintln!(
        "{f:?} | restart: release 2 nests a ro bind under release 1's writable bind | {effect} | {} | {}",
        short(&full.detail),
        short(&guard.detail)
    );
}
all_composes!(restart_attack_across_releases);

// ---------------------------------------------------------------------------------------------
// 2. same-sha retry after a failed apply

/// One service that never becomes healthy: the apply fails after the release exists.
fn unhealthy_compose(variant: &str, extra: &str) -> String {
    format!(
        "services:\n  app:\n    image: {IMAGE}\n    init: true\n    \
         command: {c}\n    environment:\n      VARIANT: {variant}\n    \
         healthcheck:\n      test: [\"CMD\", \"false\"]\n      interval: 1s\n      timeout: 1s\n      retries: 1\n{extra}",
        c = sh(&format!("echo variant:{variant}; exec sleep 600"))
    )
}

fn release_dir(s: &Stack) -> PathBuf {
    let rels: Vec<PathBuf> = std::fs::read_dir(s.state_dir().join("releases"))
        .expect("releases dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(rels.len(), 1, "one release: {rels:?}");
    std::fs::canonicalize(&rels[0]).unwrap()
}

fn env_of(id: &str) -> String {
    inspect(id, "{{json .Config.Env}}")
}

fn failed_first_attempt(s: &Stack, compose: &str, files: &[(&str, &[u8])]) -> (PathBuf, String) {
    let mut b = bundle(1, compose.to_string());
    for (n, c) in files {
        b.push((n.to_string(), c.to_vec()));
    }
    s.tenancy.set_bundle(&s.env, b);
    let (r, v) = tick_verdict(s, "on");
    assert_eq!(v.class, "failed", "the first attempt must fail: {r:?}");
    assert!(v.detail.starts_with("UNHEALTHY"), "{v:?}");
    assert!(r.stderr.contains("compose pull"), "compose ran: {r:?}");
    let ids = service_containers(s, "app");
    assert_eq!(ids.len(), 1, "attempt 1 left its container");
    (release_dir(s), ids[0].clone())
}

/// The attacker: another app's container that can write the release. It waits for the agent to
/// replace compose.yaml (the retry's promote renames a new file in) and, from 30 ms later, keeps
/// renaming its own file over it every 30 ms for 3 s — after the agent's byte check, before compose's `up`.
fn start_attacker(hand: &mut HandMade, name: &str, rel: &Path, evil: &str) {
    let script = "i=$(stat -c %i /rel/compose.yaml); while :; do \
        j=$(stat -c %i /rel/compose.yaml 2>/dev/null); \
        if [ \"$j\" != \"$i\" ]; then usleep 30000; n=0; while [ $n -lt 100 ]; do usleep 30000; \
        printf '%s' \"$EVIL\" > /rel/.evil && mv /rel/.evil /rel/compose.yaml; n=$((n+1)); done; \
        echo rewrote; i=$(stat -c %i /rel/compose.yaml); fi; usleep 10000; done";
    let o = Command::new("docker")
        .args(["run", "-d", "--name", name, "-e"])
        .arg(format!("EVIL={evil}"))
        .args([
            "-v",
            &format!("{}:/rel", rel.display()),
            IMAGE,
            "sh",
            "-c",
            script,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    hand.containers.push(name.to_string());
}

fn same_sha_retry_after_failed_apply(f: Flavour) {
    require_docker();
    let _t = timing();
    let mut s = Stack::new("inv-retry", f);
    // retry every tick (no backoff for the failed sha)
    s.set_extra("healthy_timeout_s: 15\nretry_backoff_max_s: 0\n");
    bootstrapped(&s);
    let m = Marker::new("retry", f);
    let checked = unhealthy_compose("checked", "");
    let (rel, first) = failed_first_attempt(&s, &checked, &[]);
    // another app on the box, started by hand, with the release bound writable
    let mut hand = HandMade::default();
    let name = format!("monky-inv-attacker-{}-{:?}", std::process::id(), f).to_lowercase();
    let evil = format!(
        "services:\n  app:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"echo variant:rewritten; cat /m/marker; echo; exec sleep 600\"]\n    \
         environment:\n      VARIANT: rewritten\n    volumes: [\"{}:/m:ro\"]\n",
        m.path().display()
    );
    start_attacker(&mut hand, &name, &rel, &evil);
    std::thread::sleep(Duration::from_millis(500));
    let mut table_full = String::new();
    let mut table_guard = String::new();
    for (policy, slot) in [("on", &mut table_full), ("no-file", &mut table_guard)] {
        let (r, v) = tick_verdict(&s, policy);
        assert_refused(&v, &["BIND_SOURCE_REFUSED:"], &format!("retry ({policy})"));
        assert!(
            v.detail.contains(&rel.display().to_string()),
            "the refusal names the release: {}",
            v.detail
        );
        assert!(
            !r.stderr.contains("compose pull") && !r.stderr.contains("compose up"),
            "compose ran ({policy}): {r:?}"
        );
        assert_eq!(service_containers(&s, "app"), vec![first.clone()]);
        assert!(env_of(&first).contains("VARIANT=checked"));
        *slot = v.detail;
        // let the attacker's burst end before the next attempt
        std::thread::sleep(Duration::from_secs(4));
    }
    // policy off: the retry runs what the container wrote, after the agent's byte check. The
    // byte check runs right after promote and the container's first write comes 60 ms later:
    // on a loaded box the check may be late (it refuses) or compose may read the file before
    // the attacker's first write (the checked file runs, unhealthy). Either way the attacker
    // simply waits for the next tick: it only has to win once (a CI run lost the first try)
    let mut attempts = 0;
    let (r, v, ids) = loop {
        attempts += 1;
        let (r, v) = tick_verdict(&s, "off");
        let ids = service_containers(&s, "app");
        let won = ids.len() == 1 && env_of(&ids[0]).contains("VARIANT=rewritten");
        if won || attempts == 4 {
            break (r, v, ids);
        }
        std::thread::sleep(Duration::from_secs(4));
    };
    assert_eq!(ids.len(), 1, "{r:?}");
    assert!(
        env_of(&ids[0]).contains("VARIANT=rewritten"),
        "policy off: compose should have run the rewritten compose.yaml ({v:?}, {attempts} attempt(s)); env {}; attacker: {}",
        env_of(&ids[0]),
        logs_of(&name)
    );
    assert!(
        wait_until("the marker in the rewritten service", 10, || logs_of(
            &ids[0]
        )
        .contains(&m.text)),
        "{}",
        logs_of(&ids[0])
    );
    eprintln!(
        "{f:?} | same-sha retry, release writable by a hand-made container | retry ran the container's compose.yaml (VARIANT=rewritten, host marker read; attempt {attempts}; report: {}) | {} | {}",
        v.class,
        short(&table_full),
        short(&table_guard)
    );
}
one_compose!(same_sha_retry_after_failed_apply);

/// Release files changed on the host between attempts (no container involved): the retry's
/// promote puts the checked bytes back (a planted symlink is replaced, never followed), so
/// compose runs the checked bytes; a change after promote, before compose, is `RELEASE_REFUSED`.
fn same_sha_retry_after_host_change(f: Flavour) {
    require_docker();
    let mut s = Stack::new("inv-hostchg", f);
    // retry every tick (no backoff for the failed sha)
    s.set_extra("healthy_timeout_s: 15\nretry_backoff_max_s: 0\n");
    bootstrapped(&s);
    let m = Marker::new("hostchg", f);
    let extra = "    volumes: [\"./config:/etc/app:ro\"]\n";
    let checked = unhealthy_compose("checked", extra);
    let (rel, first) = failed_first_attempt(&s, &checked, &[("config/app.conf", b"checked\n")]);
    let evil = unhealthy_compose("rewritten", extra);
    // between attempts: compose.yaml and .env rewritten, config/ swapped for a symlink
    std::fs::write(rel.join("compose.yaml"), &evil).unwrap();
    std::fs::write(rel.join(".env"), "VARIANT=rewritten\n").unwrap();
    std::fs::remove_dir_all(rel.join("config")).unwrap();
    std::os::unix::fs::symlink(m.path(), rel.join("config")).unwrap();
    let (r, v) = tick_verdict(&s, "on");
    assert_eq!(v.class, "failed", "{r:?}");
    assert!(
        v.detail.starts_with("UNHEALTHY"),
        "the retry ran the checked bytes again (unhealthy as before): {v:?}"
    );
    assert_eq!(
        std::fs::read_to_string(rel.join("compose.yaml")).unwrap(),
        checked,
        "compose.yaml refreshed to the checked bytes"
    );
    assert!(
        std::fs::symlink_metadata(rel.join("config"))
            .unwrap()
            .is_dir(),
        "the planted symlink was replaced by the bundle's directory"
    );
    assert!(
        !std::fs::read_to_string(rel.join(".env"))
            .unwrap_or_default()
            .contains("rewritten"),
        ".env refreshed to the rendered bytes"
    );
    assert!(
        !m.path().join("app.conf").exists(),
        "the overlay wrote through the planted symlink"
    );
    let ids = service_containers(&s, "app");
    assert_eq!(ids, vec![first.clone()], "same config: not recreated");
    assert!(env_of(&ids[0]).contains("VARIANT=checked"));
    let refreshed = format!(
        "refreshed to the checked bytes, ran them (report {})",
        short(&v.detail)
    );
    // after promote, before compose: the byte check refuses
    let marker = s.dir.path().join("pause");
    // this agent run is started here, not through run_bin_env: hold the box like every run
    let _box = box_shared();
    let child = Command::new(BIN)
        .args([
            "--config",
            &s.config_path().display().to_string(),
            "run",
            "--once",
        ])
        .env("MONKY_DEPLOYD_TEST_PAUSE_AT", "after-promote")
        .env("MONKY_DEPLOYD_TEST_PAUSE_MARKER", &marker)
        .env_remove("MONKY_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let before = s.tenancy.reports().len();
    assert!(
        wait_until("the agent to pause after promote", 60, || marker.exists()),
        "never paused"
    );
    std::fs::write(rel.join("compose.yaml"), &evil).unwrap();
    std::fs::write(format!("{}.go", marker.display()), "").unwrap();
    let out = child.wait_with_output().unwrap();
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let v2 = verdict(&s, &r, before);
    assert_refused(
        &v2,
        &["RELEASE_REFUSED: compose.yaml"],
        "changed after promote",
    );
    assert!(!r.stderr.contains("compose pull"), "compose ran: {r:?}");
    assert_eq!(service_containers(&s, "app"), vec![first.clone()]);
    assert!(env_of(&first).contains("VARIANT=checked"));
    eprintln!(
        "{f:?} | release files changed on the host between attempts | (host change, no policy switch) | {refreshed} | after promote: {}",
        short(&v2.detail)
    );
}
one_compose!(same_sha_retry_after_host_change);

// ---------------------------------------------------------------------------------------------
// 3. the layer-agreement corpus

// The case table is the pure twin's too (src/boundary/agree.rs): one file, both include it.
include!("../../src/boundary/agree/corpus.rs");

fn corpus(
    s: &Stack,
    m: &Marker,
    foreign: &str,
    roots: (&Path, &Path),
    port: u16,
    local_image: &str,
) -> Vec<CorpusCase> {
    corpus_cases(&CorpusBox {
        image: IMAGE.into(),
        command: sh("exec sleep 600"),
        marker: m.path().display().to_string(),
        state: s.state_dir().display().to_string(),
        root_tmp: roots.0.display().to_string(),
        root_lib: roots.1.display().to_string(),
        foreign: foreign.into(),
        port,
        net: corpus_net(s.flavour),
        // compose v1 has no pull_policy: its `pull` would fail on a local-only image by itself
        local_image: (s.flavour != Flavour::V1).then(|| local_image.to_string()),
        // compose v1 speaks an API version the engine refuses `systempaths` on
        systempaths: s.flavour != Flavour::V1,
        // compose 2.22 and v1 do not know the key
        use_api_socket: s.flavour == Flavour::V5,
    })
}

/// The corpus box's `net` ([`corpus_pool`]), one per flavour, away from what other suites use
/// (netpool 221–223, guard 229–230).
fn corpus_net(f: Flavour) -> u16 {
    match f {
        Flavour::V1 => 231,
        Flavour::V2 => 233,
        Flavour::V5 => 235,
    }
}

/// The release's other file, beside compose.yaml, in every shape.
fn corpus_files() -> Vec<(String, Vec<u8>)> {
    vec![("config/app.conf".into(), b"listen 8080\n".to_vec())]
}

/// Another project's volume and private web service, made the way another app would.
fn foreign_objects(hand: &mut HandMade, foreign: &str, marker: &str) {
    hand.volumes.push(foreign.to_string());
    hand.containers.push(format!("{foreign}-web"));
    make_foreign_app(foreign, marker);
}

/// A bind root under /var/lib (an operator's usual choice), removed on drop.
struct VarLibRoot(PathBuf);

impl Drop for VarLibRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn layers_agree_on_the_corpus(f: Flavour) {
    require_docker();
    let rt = bind_root("corpus");
    let rl = VarLibRoot(PathBuf::from(format!(
        "/var/lib/monky-inv-root-{}-{:?}",
        std::process::id(),
        f
    )));
    std::fs::create_dir_all(&rl.0).unwrap();
    let port = 18750
        + match f {
            Flavour::V1 => 0,
            Flavour::V2 => 10,
            Flavour::V5 => 20,
        };
    let mut s = Stack::new("inv-corpus", f);
    s.set_extra(&format!(
        "bind_roots: [{}, {}]\nhealthy_timeout_s: 20\nreserved_ports: [22, {}]\n\
         network_pools: [\"{}\"]\n",
        rt.path().display(),
        rl.0.display(),
        port + 5,
        corpus_pool(corpus_net(f))
    ));
    bootstrapped(&s);
    let m = Marker::new("corpus", f);
    let foreign = format!("monky-inv-foreign-{}-{:?}", std::process::id(), f).to_lowercase();
    let mut hand = HandMade::default();
    foreign_objects(&mut hand, &foreign, &m.text);
    let mut serial = 1;
    let mut table = Vec::new();
    let mut disagree = Vec::new();
    let mut wrong = Vec::new();
    // another app's image: only in the local store, never pulled by this project
    let local_image = format!("monky-inv-local-{}-{:?}:1", std::process::id(), f).to_lowercase();
    let maker = format!("{foreign}-imgmaker");
    hand.containers.push(maker.clone());
    hand.images.push(local_image.clone());
    let o = docker(&[
        "run",
        "--name",
        &maker,
        IMAGE,
        "sh",
        "-c",
        "echo theirs > /theirs",
    ]);
    assert!(o.status.success(), "{o:?}");
    let o = docker(&["commit", &maker, &local_image]);
    assert!(o.status.success(), "{o:?}");
    for shape in corpus(&s, &m, &foreign, (rt.path(), &rl.0), port, &local_image) {
        let mut got = Vec::new();
        for policy in ["on", "no-file"] {
            let mut files = bundle(serial, shape.compose.clone());
            files.extend(corpus_files());
            s.tenancy.set_bundle(&s.env, files);
            serial += 1;
            let (_, v) = tick_verdict(&s, policy);
            wipe(&s);
            got.push(v);
        }
        let agree = got[0].class == got[1].class;
        table.push(format!(
            "{f:?} | {} | expected {} (policy off not run in the corpus) | {}: {} | {}: {}{}",
            shape.what,
            shape.expect,
            got[0].class,
            short(&got[0].detail),
            got[1].class,
            short(&got[1].detail),
            if agree { "" } else { " | DISAGREE" }
        ));
        if !agree {
            disagree.push(format!(
                "{}: full {:?} vs guard alone {:?}",
                shape.what, got[0], got[1]
            ));
        }
        for ((layer, v), code) in ["full", "guard alone"]
            .iter()
            .zip(&got)
            .zip([shape.full, shape.guard])
        {
            // the refusal's code as the corpus names it (the file passes' for the same shape)
            let coded = code.is_empty() || v.detail.starts_with(&format!("{code}:"));
            if v.class != shape.expect || !coded {
                wrong.push(format!(
                    "{} ({layer}): expected {} {code}, got {v:?}",
                    shape.what, shape.expect
                ));
            }
        }
    }
    for l in &table {
        eprintln!("{l}");
    }
    assert!(
        disagree.is_empty(),
        "{f:?}: the layers disagree on {} shape(s):\n{}",
        disagree.len(),
        disagree.join("\n")
    );
    assert!(
        wrong.is_empty(),
        "{f:?}: unexpected verdicts:\n{}",
        wrong.join("\n")
    );
}
all_composes!(layers_agree_on_the_corpus);

// ---------------------------------------------------------------------------------------------
// 4. a benign 10-service project

/// Ten services: healthchecks, depends_on conditions, ports, named volumes, a writable `./data`
/// and a read-only `./config` bind in one service, two services sharing `./shared`, one bind
/// under the box's bind_roots. Also used by scripts/bench-guard.sh (kept in step by hand).
pub fn ten_services(root: &str, port: u16) -> String {
    let hc = "    healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ready\"]\n      \
              interval: 1s\n      timeout: 1s\n      retries: 10\n";
    let ready = sh("touch /tmp/ready; exec sleep 600");
    let web = sh("touch /tmp/ready; echo hi > /tmp/index.html; exec httpd -f -p 8080 -h /tmp");
    let mut c = String::from("services:\n");
    let mut add = |name: &str, cmd: &str, body: &str| {
        c.push_str(&format!(
            "  {name}:\n    image: {IMAGE}\n    init: true\n    command: {cmd}\n{hc}{body}"
        ));
    };
    add(
        "db",
        &ready,
        "    volumes: [\"dbdata:/var/lib/db\", \"./data:/data\", \"./config:/etc/app:ro\"]\n",
    );
    add(
        "cache",
        &ready,
        "    volumes: [\"cache:/cache\"]\n    tmpfs: [/run/cache]\n",
    );
    add(
        "api",
        &web,
        &format!(
            "    ports: [\"127.0.0.1:{port}:8080\"]\n    depends_on:\n      db: {{condition: service_healthy}}\n      \
             cache: {{condition: service_healthy}}\n    cap_drop: [ALL]\n    cap_add: [NET_BIND_SERVICE, SETUID, SETGID]\n"
        ),
    );
    add(
        "web",
        &web,
        &format!(
            "    ports: [\"0.0.0.0:{}:8080\"]\n    depends_on:\n      api: {{condition: service_healthy}}\n    \
             security_opt: [\"no-new-privileges:true\"]\n",
            port + 1
        ),
    );
    add(
        "worker1",
        &ready,
        "    volumes: [\"./shared:/shared\"]\n    depends_on: [db]\n",
    );
    add(
        "worker2",
        &ready,
        "    volumes: [\"./shared:/shared\"]\n    depends_on: [db]\n",
    );
    add(
        "uploads",
        &ready,
        &format!("    volumes: [\"{root}/uploads:/uploads\"]\n"),
    );
    add(
        "cron",
        &ready,
        "    volumes: [\"/etc/localtime:/etc/localtime:ro\"]\n    restart: unless-stopped\n",
    );
    add(
        "metrics",
        &ready,
        "    sysctls:\n      net.core.somaxconn: 1024\n    deploy:\n      resources:\n        limits: {cpus: \"0.2\", memory: 32M}\n",
    );
    add(
        "mail",
        &ready,
        "    environment:\n      MODE: production\n    stop_grace_period: 2s\n",
    );
    c.push_str("volumes:\n  dbdata: {}\n  cache: {}\n");
    c
}

fn benign_ten_services_apply(f: Flavour) {
    require_docker();
    let root = bind_root("ten");
    let mut s = Stack::new("inv-ten", f);
    s.set_extra(&format!(
        "bind_roots: [{}]\nhealthy_timeout_s: 60\n",
        root.path().display()
    ));
    bootstrapped(&s);
    let port = 18700
        + match f {
            Flavour::V1 => 0,
            Flavour::V2 => 10,
            Flavour::V5 => 20,
        };
    let mut files = bundle(1, ten_services(&root.path().display().to_string(), port));
    files.push(("config/app.conf".into(), b"listen 8080\n".to_vec()));
    s.tenancy.set_bundle(&s.env, files);
    let (r, v) = tick_verdict(&s, "on");
    assert_eq!(v.class, "applied", "{v:?}\n{r:?}");
    let cs = s.containers();
    assert_eq!(cs.len(), 10, "{cs:?}");
    assert!(cs.iter().all(|(_, st)| st == "running"), "{cs:?}");
    assert!(root.path().join("uploads").is_dir());
    let o = docker(&[
        "ps",
        "-q",
        "--filter",
        &format!("label=com.docker.compose.project={}", s.project()),
        "--filter",
        "health=healthy",
    ]);
    assert_eq!(stdout(&o).lines().count(), 10, "all ten healthy");
    // the guard's own account of the apply (log_level: debug)
    let guard: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("engine guard:"))
        .collect();
    assert!(!guard.is_empty(), "no guard cost line: {r:?}");
    let (mut req, mut den, mut us) = (0u64, 0u64, 0u64);
    for l in &guard {
        let t = &l[l.find("engine guard:").unwrap()..];
        let n: Vec<u64> = t
            .split(|c: char| !c.is_ascii_digit())
            .filter(|x| !x.is_empty())
            .filter_map(|x| x.parse().ok())
            .collect();
        if n.len() >= 3 {
            req += n[0];
            den += n[1];
            us += n[2];
        }
    }
    assert_eq!(
        den, 0,
        "the guard refused something in a benign apply: {guard:?}"
    );
    let cost = r
        .stderr
        .lines()
        .find(|l| l.contains("tick cost"))
        .unwrap_or("")
        .to_string();
    eprintln!(
        "{f:?} | 10 benign services | - | applied: {} containers healthy; guard {req} requests, {den} refused, {us} µs deciding (debug build) | {}",
        cs.len(),
        cost.split("tick cost").nth(1).unwrap_or("").trim()
    );
}
all_composes!(benign_ten_services_apply);

// ---------------------------------------------------------------------------------------------
// 2b. the retry's promote, with a container that can write the release

/// The retry's promote moves the bundle's files into the existing release before the guard's
/// preflight looks for containers that can write it. A hand-made container with the release
/// bound writable keeps swapping the bundle's `config/` directory for a symlink to a host
/// directory while the agent moves `config/*` in: the agent must never write through it
/// (docs/POLICY.md: the agent itself never follows a symlink inside a release). Compose plays no
/// part (the promote runs before any compose call on the release); it runs on each line anyway.
fn retry_promote_never_follows_a_swapped_directory(f: Flavour) {
    const RETRIES: usize = 15;
    require_docker();
    let _t = timing();
    let mut s = Stack::new("inv-swap", f);
    // retry every tick (no backoff for the failed sha)
    s.set_extra("healthy_timeout_s: 15\nretry_backoff_max_s: 0\n");
    bootstrapped(&s);
    let m = Marker::new("swap", f);
    let extra = "    volumes: [\"./config:/etc/app:ro\"]\n";
    let checked = unhealthy_compose("checked", extra);
    // many files in config/: the agent's moves into it take a while
    let names: Vec<String> = (0..400).map(|i| format!("config/f{i:03}.conf")).collect();
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"x\n"[..])).collect();
    let (rel, _) = failed_first_attempt(&s, &checked, &files);
    let mut hand = HandMade::default();
    let name = format!("monky-inv-swapper-{}-{:?}", std::process::id(), f).to_lowercase();
    // four loops turning config/ back into a symlink whenever it is a directory: the agent
    // removes what it finds at config/, creates the directory (create_dir_all accepts a symlink
    // to a directory) and moves config/* in, by path
    let script = format!(
        "for i in 1 2 3 4; do (while :; do [ -L /rel/config ] || rm -rf /rel/config; \
         ln -s {} /rel/config 2>/dev/null; done) & done; wait",
        m.path().display()
    );
    let o = Command::new("docker")
        .args([
            "run",
            "-d",
            "--name",
            &name,
            "-v",
            &format!("{}:/rel", rel.display()),
            IMAGE,
            "sh",
            "-c",
            &script,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    hand.containers.push(name);
    let mut seen = Vec::new();
    let mut escaped = Vec::new();
    for _ in 0..RETRIES {
        let (_, v) = tick_verdict(&s, "on");
        assert_ne!(v.class, "applied", "{v:?}");
        seen.push(short(&v.detail));
        let written: Vec<String> = std::fs::read_dir(m.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "marker")
            .collect();
        if !written.is_empty() {
            escaped = written;
            break;
        }
    }
    eprintln!(
        "{f:?} | retry: release's config/ swapped for a symlink during promote | {} | {} | (guard alone: same code path)",
        if escaped.is_empty() {
            format!("none in {RETRIES} retries")
        } else {
            format!("the agent wrote {} bundle file(s) into the host dir", escaped.len())
        },
        seen.join(" / ")
    );
    assert!(
        escaped.is_empty(),
        "the agent's promote followed a symlink planted in the release and wrote {} file(s) into {}: {:?} (ticks: {seen:?})",
        escaped.len(),
        m.path().display(),
        &escaped[..escaped.len().min(5)]
    );
}
one_compose!(retry_promote_never_follows_a_swapped_directory);

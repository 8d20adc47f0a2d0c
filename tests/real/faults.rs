//! The fault-injection matrix (issue 10), on real parts: a real OpenBao (persistent where a cell
//! stops it), the test tenancy, the real dockerd behind a socket the test can cut (other tests
//! share that dockerd: it is never stopped), compose v5 behind a wrapper that can hold a compose
//! step, a tmpfs state dir for "disk full", and the real binary SIGKILLed (with its whole process
//! group, as systemd kills a unit's cgroup) at each named step of an apply (debug-build hook
//! `MONKY_DEPLOYD_TEST_PAUSE_AT`, `src/base/testhook.rs`).
//!
//! Each cell: v1 (no secrets, so the box still holds its bootstrap token) is applied and
//! healthy; v2 (one OpenBao secret, so the apply leases) is made desired; the fault is injected
//! during that tick. Then, before anything is repaired: state.json parses, no temporary file
//! outside `staging/`, no secret outside `releases/<sha>/.env` except a 0600 copy in `staging/`,
//! the token on disk is alive and is the one state.json describes, and v1 still runs if v2 never
//! reached `up`. Then the fault is removed and the next tick must exit 0, report `applied` for v2,
//! run v2, and leave nothing behind: `staging/` empty, no temporary file, the secret only in
//! `releases/<v2>/.env`.
//!
//! Every cell writes its row to `$CARGO_TARGET_DIR/reliability-matrix/<nn>.md` and checks that
//! docs/RELIABILITY.md carries exactly that row: the table in the doc is the run's
//! (`scripts/reliability-matrix.sh` runs the matrix and splices the rows in).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::common::fault_parts::DockerProxy;
use crate::common::*;
use serde_json::Value;

// ---- the cells ------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum F {
    /// SIGKILL (the agent's process group) where the agent's hook holds it.
    Kill(&'static str),
    /// SIGKILL while compose `pull`/`up` has done its work but not returned.
    KillInCompose(&'static str),
    /// dockerd gone before the tick starts.
    DockerGone,
    /// dockerd gone while compose `pull`/`up` is about to start.
    DockerGoneAt(&'static str),
    /// OpenBao stopped before the tick.
    BaoGone,
    /// OpenBao stopped while the agent is held at this hook.
    BaoGoneAt(&'static str),
    /// tenancy answers this path with a status (0 = connection reset).
    Tenancy(&'static str, u16),
    /// tenancy holds the answer to this path past the agent's time-out.
    TenancyHang(&'static str),
    /// the state filesystem is full.
    DiskFull,
    /// SIGKILL at an extra after the tick's save (issue 31): tenancy also asks for a
    /// diagnostics bundle and a metrics file is configured, so every extra runs.
    KillExtra(&'static str),
}

struct Cell {
    n: u32,
    step: &'static str,
    fault: &'static str,
    f: F,
    /// The fault lands on the very first tick (bootstrap + v1), not on the v2 apply.
    first: bool,
    /// v2 never reached `compose up`: v1 must still be running.
    before_up: bool,
}

fn persistent_bao(f: F) -> bool {
    matches!(f, F::BaoGone | F::BaoGoneAt(_))
}

static SEQ: AtomicU32 = AtomicU32::new(0);

struct Fx {
    s: Stack,
    ctl: tempfile::TempDir,
    proxy: DockerProxy,
    tmpfs: bool,
    /// The cell's agents run outside `run_bin_env`: the box is shared for the whole cell.
    _box: BoxShared,
}

impl Drop for Fx {
    fn drop(&mut self) {
        if self.tmpfs {
            let _ = Command::new("umount").arg(self.s.state_dir()).status();
        }
    }
}

fn real_compose() -> String {
    let cache =
        std::env::var("MONKY_CACHE").unwrap_or_else(|_| "/var/cache/monky-deployd-dev".into());
    let bin = format!("{cache}/bin/docker-compose-v5");
    assert!(
        Path::new(&bin).is_file(),
        "compose v5 missing at {bin}: run scripts/provision.sh (the README test command does)"
    );
    bin
}

impl Fx {
    fn new(name: &str, persistent: bool, tmpfs: bool) -> Fx {
        require_docker();
        let bao = if persistent {
            Bao::start_persistent()
        } else {
            Bao::start()
        };
        let tenancy = Tenancy::start(TenancyOpts {
            bao_addr: bao.addr(),
            bao_root_token: bao.root_token().to_string(),
            signer: Signer::new(),
            lease_limit_per_hour: 5,
        });
        bao.configure(&tenancy.signer().public_key_pem(), BaoRoleOpts::default());
        let env: String = format!(
            "f{}-{}-{}",
            std::process::id() % 100000,
            SEQ.fetch_add(1, Ordering::SeqCst),
            name.replace('_', "-")
        )
        .chars()
        .take(50)
        .collect();
        let dir = tempfile::Builder::new()
            .prefix("monky-faults-")
            .tempdir()
            .unwrap();
        let ctl = tempfile::Builder::new()
            .prefix("monky-faults-ctl-")
            .tempdir()
            .unwrap();
        let proxy = DockerProxy::start(&ctl.path().join("docker.sock"));
        let mut s = Stack {
            bao,
            tenancy,
            dir,
            env,
            flavour: Flavour::V5,
            extra: String::new(),
        };
        s.extra = format!(
            "docker_host: unix://{}\nhealthy_timeout_s: 30\n",
            proxy.path().display()
        );
        let real = real_compose();
        let wrapper = ctl.path().join("compose");
        std::fs::write(
            &wrapper,
            // a held wrapper outlives a SIGKILLed agent (compose runs in its own process
            // group; systemd would kill the whole cgroup): it gives up once the test is gone
            format!(
                "#!/bin/sh\n\
                 ctl='{ctl}'\n\
                 sub=\n\
                 for a in \"$@\"; do case \"$a\" in pull|up|config|down|logs|version) sub=$a; break;; esac; done\n\
                 if [ -n \"$sub\" ] && [ -e \"$ctl/pause-before-$sub\" ]; then\n\
                 \x20 : > \"$ctl/paused-before-$sub\"\n\
                 \x20 while [ ! -e \"$ctl/go\" ]; do [ -d \"$ctl\" ] || exit 99; sleep 0.05; done\n\
                 fi\n\
                 '{real}' \"$@\"; rc=$?\n\
                 if [ -n \"$sub\" ] && [ -e \"$ctl/pause-after-$sub\" ]; then\n\
                 \x20 : > \"$ctl/paused-after-$sub\"\n\
                 \x20 while [ ! -e \"$ctl/go\" ]; do [ -d \"$ctl\" ] || exit 99; sleep 0.05; done\n\
                 fi\n\
                 exit $rc\n",
                ctl = ctl.path().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        let text = s.config_text().replace(
            &format!("compose_bin: {real}\n"),
            &format!("compose_bin: {}\n", wrapper.display()),
        );
        assert!(text.contains(&wrapper.display().to_string()), "{text}");
        std::fs::write(s.config_path(), text).unwrap();
        if tmpfs {
            std::fs::create_dir_all(s.state_dir()).unwrap();
            let st = Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=4m,mode=0700", "monky-faults"])
                .arg(s.state_dir())
                .status()
                .unwrap();
            assert!(
                st.success(),
                "mount a tmpfs state dir (the matrix runs as root)"
            );
        }
        Fx {
            s,
            ctl,
            proxy,
            tmpfs,
            _box: box_shared(),
        }
    }

    fn ctl(&self, name: &str) -> PathBuf {
        self.ctl.path().join(name)
    }

    /// One `run --once` in its own process group; `pause` arms the agent's hook.
    fn spawn(&self, pause: Option<&str>) -> Child {
        let mut c = Command::new(BIN);
        c.args([
            "--config",
            self.s.config_path().to_str().unwrap(),
            "run",
            "--once",
        ])
        .env_remove("MONKY_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(self.ctl("agent.log")).unwrap())
        .process_group(0);
        if let Some(p) = pause {
            c.env("MONKY_DEPLOYD_TEST_PAUSE_AT", p)
                .env("MONKY_DEPLOYD_TEST_PAUSE_MARKER", self.ctl("paused"));
        }
        c.spawn().expect("spawn monky-deployd")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.ctl("agent.log")).unwrap_or_default()
    }

    fn wait_file(&self, name: &str, child: &mut Child) {
        let p = self.ctl(name);
        let t0 = Instant::now();
        while !p.exists() {
            if let Ok(Some(st)) = child.try_wait() {
                panic!("the agent ended ({st}) before {name}:\n{}", self.log());
            }
            assert!(
                t0.elapsed() < Duration::from_secs(90),
                "timed out waiting for {name}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_exit(&self, child: &mut Child, limit: Duration) -> i32 {
        let t0 = Instant::now();
        loop {
            if let Some(st) = child.try_wait().unwrap() {
                return st.code().unwrap_or(-1);
            }
            if t0.elapsed() > limit {
                kill_group(child);
                panic!("the tick did not end within {limit:?}:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn tick(&self) -> i32 {
        let mut c = self.spawn(None);
        self.wait_exit(&mut c, Duration::from_secs(120))
    }

    /// The running web container's VARIANT ("one"/"two"), if it runs.
    fn running_variant(&self) -> Option<String> {
        let cs = self.s.containers();
        if !cs.iter().any(|(svc, st)| svc == "web" && st == "running") {
            return None;
        }
        self.s
            .container_env("web")
            .iter()
            .find_map(|e| e.strip_prefix("VARIANT=").map(str::to_string))
    }

    fn current(&self) -> Option<String> {
        std::fs::read_link(self.s.state_dir().join("current"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    }
}

fn kill_group(child: &mut Child) {
    // SAFETY: plain syscall; the child leads its own process group (process_group(0))
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    let _ = child.wait();
}

/// v1: the web app with a literal API_KEY and no OpenBao secret (the box keeps its
/// bootstrap token); v2 (`web_bundle`): one secret from OpenBao (the apply leases and logs in).
fn v1() -> BundleSpec {
    BundleSpec {
        serial: 1,
        compose: web_compose("one"),
        env_template: "API_KEY=not-a-secret\n".into(),
        manifest: serde_json::json!({"entries": []}),
        meta_extra: serde_json::json!({}),
    }
}

/// Every regular file under `root` (symlinks not followed; sockets skipped).
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// The box's consistency after a fault (`strict`: after the converging tick). Panics on a
/// violation; returns what a fault may leave behind for the next tick to clear.
fn check_box(fx: &Fx, secret: &str, bao_up: bool, strict: bool) -> Vec<String> {
    let s = &fx.s;
    let sd = s.state_dir();
    let mut left = Vec::new();
    let state: Option<Value> = match std::fs::read(sd.join("state.json")) {
        Ok(b) => Some(
            serde_json::from_slice(&b)
                .unwrap_or_else(|e| panic!("state.json does not parse: {e}: {b:?}")),
        ),
        Err(_) => None,
    };
    if strict {
        assert!(state.is_some(), "state.json after the converging tick");
    }
    let staging = sd.join("staging");
    let mut secret_copies = 0;
    let mut tmps = 0;
    for f in files(s.dir.path()) {
        let rel = f.strip_prefix(&sd).unwrap_or(&f).to_path_buf();
        let in_staging = f.starts_with(&staging);
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains(".tmp.") {
            assert!(
                in_staging && !strict,
                "a temporary file left behind: {}",
                rel.display()
            );
            tmps += 1;
        }
        let body = std::fs::read(&f).unwrap_or_default();
        if !secret.is_empty() && contains(&body, secret) {
            let ok = rel.parent().and_then(|p| p.parent()) == Some(Path::new("releases"))
                && name == ".env";
            if !ok {
                assert!(
                    in_staging && !strict,
                    "the secret outside releases/<sha>/.env: {}",
                    rel.display()
                );
                secret_copies += 1;
            }
            assert_eq!(mode(&f), 0o600, "{} holds the secret", rel.display());
        }
    }
    let staged: Vec<_> = std::fs::read_dir(&staging)
        .map(|rd| rd.flatten().collect())
        .unwrap_or_default();
    if strict {
        assert!(staged.is_empty(), "staging/ emptied by the converging tick");
    } else if !staged.is_empty() {
        let mut w = "staging/<v2> left".to_string();
        if tmps > 0 {
            w.push_str(" with a synced `.env` tmp copy");
        } else if secret_copies > 0 {
            w.push_str(" with its `.env`");
        }
        left.push(format!("{w} (0600, cleared by the next tick)"));
    }
    // the token on disk works, and state.json describes it
    let tok = std::fs::read_to_string(sd.join("bao.token")).unwrap_or_default();
    let tok = tok.trim();
    if bao_up && !tok.is_empty() {
        let info = s
            .bao
            .lookup(tok)
            .unwrap_or_else(|e| panic!("the token in bao.token is dead: {e:?}"));
        let jti = info["meta"]["grant_jti"].as_str().unwrap_or_default();
        let st = state
            .as_ref()
            .expect("bao.token written but no state.json describes it");
        assert_eq!(
            st["token"]["grant_jti"]
                .as_str()
                .unwrap_or("<no token in state.json>"),
            jti,
            "state.json describes another token than bao.token"
        );
    }
    left
}

fn report_words(reports: &[Value]) -> String {
    if reports.is_empty() {
        return "—".into();
    }
    reports
        .iter()
        .map(|r| {
            let res = r["result"].as_str().unwrap_or("?");
            let d = r["detail"].as_str().unwrap_or_default();
            let code: String = d
                .split(':')
                .next()
                .unwrap_or_default()
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                .collect();
            if res == "failed" && !code.is_empty() {
                format!("failed `{code}`")
            } else {
                res.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn label(fx_v1: &str, fx_v2: &str, sha: Option<&str>) -> String {
    match sha {
        Some(x) if x == fx_v1 => "v1".into(),
        Some(x) if x == fx_v2 => "v2".into(),
        Some(_) => "?".into(),
        None => "none".into(),
    }
}

fn run_cell(c: &Cell) {
    let t0 = Instant::now();
    let mut fx = Fx::new(
        &format!("c{}", c.n),
        persistent_bao(c.f),
        matches!(c.f, F::DiskFull),
    );
    let extra = matches!(c.f, F::KillExtra(_));
    if extra {
        let prom = fx.ctl("agent.prom");
        let text = std::fs::read_to_string(fx.s.config_path()).unwrap();
        std::fs::write(
            fx.s.config_path(),
            format!("{text}metrics_textfile: {}\n", prom.display()),
        )
        .unwrap();
    }
    fx.s.give_bootstrap();
    let sha1 = fx.s.tenancy.set_bundle(&fx.s.env, v1().files());
    let value = format!("fault-secret-{}-{}", c.n, std::process::id());
    let v2 = web_bundle(&fx.s, 2, "two", &value);
    let mut sha2 = String::new();
    if !c.first {
        let code = fx.tick();
        assert_eq!(code, 0, "v1 applies:\n{}", fx.log());
        assert_eq!(fx.running_variant().as_deref(), Some("one"));
        sha2 = fx.s.tenancy.set_bundle(&fx.s.env, v2.files());
    }
    let target = if c.first { sha1.clone() } else { sha2.clone() };
    let secret = if c.first {
        String::new()
    } else {
        value.clone()
    };
    let before = fx.s.tenancy.reports().len();
    if extra {
        fx.s.tenancy.request_diagnostics(&fx.s.env, "req-fault");
    }

    // ---- the fault ----
    let mut bao_up = true;
    let exit = match c.f {
        F::Kill(step) | F::KillExtra(step) => {
            let mut ch = fx.spawn(Some(step));
            fx.wait_file("paused", &mut ch);
            kill_group(&mut ch);
            "killed".to_string()
        }
        F::KillInCompose(sub) => {
            std::fs::write(fx.ctl(&format!("pause-after-{sub}")), "").unwrap();
            let mut ch = fx.spawn(None);
            fx.wait_file(&format!("paused-after-{sub}"), &mut ch);
            kill_group(&mut ch);
            "killed".to_string()
        }
        F::DockerGone => {
            fx.proxy.cut();
            fx.tick().to_string()
        }
        F::DockerGoneAt(sub) => {
            std::fs::write(fx.ctl(&format!("pause-before-{sub}")), "").unwrap();
            let mut ch = fx.spawn(None);
            fx.wait_file(&format!("paused-before-{sub}"), &mut ch);
            fx.proxy.cut();
            std::fs::write(fx.ctl("go"), "").unwrap();
            fx.wait_exit(&mut ch, Duration::from_secs(120)).to_string()
        }
        F::BaoGone => {
            fx.s.bao.kill();
            bao_up = false;
            fx.tick().to_string()
        }
        F::BaoGoneAt(step) => {
            let mut ch = fx.spawn(Some(step));
            fx.wait_file("paused", &mut ch);
            fx.s.bao.kill();
            bao_up = false;
            std::fs::write(fx.ctl("paused.go"), "").unwrap();
            fx.wait_exit(&mut ch, Duration::from_secs(120)).to_string()
        }
        F::Tenancy(path, status) => {
            fx.s.tenancy
                .fail_next(path, status, if status == 0 { "" } else { "UNAVAILABLE" });
            fx.tick().to_string()
        }
        F::TenancyHang(path) => {
            fx.s.tenancy.delay_next(path, Duration::from_secs(8));
            let t = Instant::now();
            let code = fx.tick();
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "a hung tenancy is given up on"
            );
            // let the held request finish before anything is counted
            std::thread::sleep(Duration::from_secs(8).saturating_sub(t.elapsed()));
            code.to_string()
        }
        F::DiskFull => {
            let mut f = std::fs::File::create(fx.s.state_dir().join("filler")).unwrap();
            let chunk = vec![0u8; 64 * 1024];
            while f.write_all(&chunk).is_ok() && f.sync_data().is_ok() {}
            drop(f);
            fx.tick().to_string()
        }
    };
    let fault_log = fx.log();
    let reports: Vec<Value> = fx.s.tenancy.reports()[before..].to_vec();
    if exit == "1" {
        // a failure while tenancy is reachable is reported, with the bearer the box holds
        assert_eq!(
            reports.last().map(|r| r["result"].clone()),
            Some(Value::from("failed")),
            "exit 1 without a failed report\n{fault_log}"
        );
    }
    if matches!(c.f, F::DiskFull) {
        // the journal's last word is the apply's own failure, not only the state save's
        let last = fault_log
            .lines()
            .rfind(|l| l.contains("ERROR"))
            .unwrap_or_default();
        assert!(
            last.contains("bao.token") && last.contains("No space left"),
            "{fault_log}"
        );
    }

    // ---- the box, before anything is repaired ----
    let leftovers = check_box(&fx, &secret, bao_up, false);
    let st = std::fs::read(fx.s.state_dir().join("state.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    let applied = st
        .as_ref()
        .and_then(|v| v["applied_sha"].as_str().map(str::to_string));
    let running = fx.running_variant();
    if c.before_up && !c.first {
        assert_eq!(
            running.as_deref(),
            Some("one"),
            "v2 never reached `up`: v1 still runs\n{fault_log}"
        );
    }
    if extra {
        // the action's outcome was saved before the extra the kill hit
        assert_eq!(
            applied.as_deref(),
            Some(sha2.as_str()),
            "state.json names v2\n{fault_log}"
        );
    }
    let mut after = vec![format!(
        "{} runs; state: {}; current → {}",
        match running.as_deref() {
            Some("one") => "v1",
            Some("two") => "v2",
            _ => "nothing",
        },
        label(&sha1, &sha2, applied.as_deref()),
        label(&sha1, &sha2, fx.current().as_deref()),
    )];
    after.extend(leftovers);

    // ---- the fault removed ----
    for e in std::fs::read_dir(fx.ctl.path()).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("pause") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    match c.f {
        F::DockerGone | F::DockerGoneAt(_) => fx.proxy.restore(),
        F::BaoGone | F::BaoGoneAt(_) => fx.s.bao.restart(),
        F::DiskFull => std::fs::remove_file(fx.s.state_dir().join("filler")).unwrap(),
        _ => {}
    }
    let before = fx.s.tenancy.reports().len();
    let code = fx.tick();
    let log = fx.log();
    assert_eq!(
        code, 0,
        "the next tick converges\n--- fault tick\n{fault_log}\n--- next tick\n{log}"
    );
    let next: Vec<Value> = fx.s.tenancy.reports()[before..].to_vec();
    if extra {
        // a heartbeat: tenancy saw v2 applied, nothing is applied again
        assert!(log.contains("checkin: action=none"), "{log}");
        assert!(!log.contains("checkin: action=apply"), "{log}");
        assert!(
            next.iter()
                .all(|r| r["sha"] == target.as_str() && r["result"] == "applied"),
            "{next:?}"
        );
    } else {
        let last = next
            .last()
            .unwrap_or_else(|| panic!("the next tick reports\n{log}"));
        assert_eq!(last["result"], "applied", "{last}\n{log}");
        assert_eq!(last["sha"], target.as_str(), "{last}");
    }
    assert_eq!(
        fx.s.state()["applied_sha"].as_str(),
        Some(target.as_str()),
        "state.json"
    );
    assert_eq!(
        fx.running_variant().as_deref(),
        Some(if c.first { "one" } else { "two" }),
        "the desired release runs"
    );
    assert_eq!(
        fx.current().as_deref(),
        Some(target.as_str()),
        "current → the applied release"
    );
    check_box(&fx, &secret, true, true);

    // ---- the row ----
    let next_words = if extra {
        match report_words(&next).as_str() {
            "—" => "heartbeat, no re-apply".to_string(),
            w => format!("heartbeat, no re-apply ({w})"),
        }
    } else {
        report_words(&next)
    };
    let row = format!(
        "| {} | {} | {} | {} | {} | {} | {} {} |",
        c.n,
        c.step,
        c.fault,
        exit,
        report_words(&reports),
        after.join("; "),
        code,
        next_words,
    );
    eprintln!(
        "cell {} ({:?}) in {:?}\n--- fault tick\n{fault_log}\n--- next tick\n{log}",
        c.n,
        c.f,
        t0.elapsed()
    );
    write_row(c.n, &row);
}

fn write_row(n: u32, row: &str) {
    let target = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/target").to_string());
    let dir = Path::new(&target).join("reliability-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{n:02}.md")), format!("{row}\n")).unwrap();
    if std::env::var_os("MONKY_MATRIX_WRITE").is_some() {
        return; // scripts/reliability-matrix.sh: the doc is rewritten from these rows
    }
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/RELIABILITY.md"))
        .unwrap();
    assert!(
        doc.lines().any(|l| l == row),
        "docs/RELIABILITY.md does not carry this run's row (run scripts/reliability-matrix.sh):\n{row}"
    );
}

macro_rules! cells {
    ($($name:ident: $n:expr, $step:expr, $fault:expr, $f:expr, first=$first:expr, before_up=$bu:expr;)*) => {
        $(
            #[test]
            fn $name() {
                run_cell(&Cell { n: $n, step: $step, fault: $fault, f: $f, first: $first, before_up: $bu });
            }
        )*
    };
}

cells! {
    kill_after_bootstrap_login: 1, "first tick: bootstrap login done, grant deleted", "SIGKILL", F::Kill("after-bootstrap"), first=true, before_up=true;
    kill_after_bundle_download: 2, "bundle downloaded and verified", "SIGKILL", F::Kill("after-bundle"), first=false, before_up=true;
    kill_after_lease: 3, "lease granted, not logged in", "SIGKILL", F::Kill("after-lease"), first=false, before_up=true;
    kill_after_openbao_login: 4, "OpenBao login done, token stored", "SIGKILL", F::Kill("after-login"), first=false, before_up=true;
    kill_mid_env_write: 5, "mid `.env` write (tmp synced, not renamed)", "SIGKILL", F::Kill("mid-write:.env"), first=false, before_up=true;
    kill_after_promote: 6, "promoted, before `pull`", "SIGKILL", F::Kill("after-promote"), first=false, before_up=true;
    kill_mid_pull: 7, "mid `compose pull`", "SIGKILL", F::KillInCompose("pull"), first=false, before_up=true;
    kill_mid_up: 8, "mid `compose up` (containers recreated, compose not returned)", "SIGKILL", F::KillInCompose("up"), first=false, before_up=false;
    kill_during_wait_healthy: 9, "waiting for health", "SIGKILL", F::Kill("wait-healthy"), first=false, before_up=false;
    kill_before_report: 10, "healthy, before the report", "SIGKILL", F::Kill("before-report"), first=false, before_up=false;
    kill_after_report_before_save: 11, "reported, before the state save", "SIGKILL", F::Kill("before-save"), first=false, before_up=false;
    dockerd_gone_at_checkin: 12, "check-in (apply pending)", "dockerd stopped", F::DockerGone, first=false, before_up=true;
    dockerd_gone_before_pull: 13, "promoted, `pull` starting", "dockerd stopped", F::DockerGoneAt("pull"), first=false, before_up=true;
    dockerd_gone_before_up: 14, "pulled, `up` starting", "dockerd stopped", F::DockerGoneAt("up"), first=false, before_up=true;
    openbao_gone_at_checkin: 15, "check-in (apply pending)", "OpenBao stopped", F::BaoGone, first=false, before_up=true;
    openbao_gone_after_lease: 16, "lease granted, login next", "OpenBao stopped", F::BaoGoneAt("after-lease"), first=false, before_up=true;
    tenancy_hangs_on_checkin: 17, "check-in", "tenancy hangs (8 s > 5 s time-out)", F::TenancyHang("/v1/agent/checkin"), first=false, before_up=true;
    tenancy_hangs_on_bundle: 18, "bundle download", "tenancy hangs (8 s > 5 s time-out)", F::TenancyHang("/v1/agent/bundle/"), first=false, before_up=true;
    tenancy_503_on_checkin: 19, "check-in", "tenancy 503", F::Tenancy("/v1/agent/checkin", 503), first=false, before_up=true;
    tenancy_503_on_lease: 20, "lease", "tenancy 503", F::Tenancy("/v1/agent/lease", 503), first=false, before_up=true;
    tenancy_503_on_report: 21, "report (v2 healthy)", "tenancy 503", F::Tenancy("/v1/agent/report", 503), first=false, before_up=false;
    tenancy_reset_on_bundle: 22, "bundle download", "tenancy resets the connection", F::Tenancy("/v1/agent/bundle/", 0), first=false, before_up=true;
    tenancy_reset_on_report: 23, "report (v2 healthy)", "tenancy resets the connection", F::Tenancy("/v1/agent/report", 0), first=false, before_up=false;
    state_disk_full: 24, "the whole apply", "state filesystem full (tmpfs)", F::DiskFull, first=false, before_up=true;
    kill_at_update_staging: 25, "saved, self-update staging next", "SIGKILL", F::KillExtra("extra:update"), first=false, before_up=false;
    kill_at_reclaim: 26, "saved, reclaim next", "SIGKILL", F::KillExtra("extra:reclaim"), first=false, before_up=false;
    kill_mid_collect: 27, "saved, diagnostics gathered, not sent", "SIGKILL", F::KillExtra("extra:collect"), first=false, before_up=false;
    kill_at_metrics: 28, "saved, metrics file next", "SIGKILL", F::KillExtra("extra:metrics"), first=false, before_up=false;
}

//! `monky-deployd update-install` (the root half of self-update, issue 21) with the real dpkg:
//! small packages named `monky-deployd` built with `dpkg-deb` are installed into a private dpkg
//! root (`dpkg --root`), so the box's own package database is never touched. `systemctl` is a
//! stand-in that records its calls (no systemd in this sandbox), and the new agent's first tick
//! is stood in for by writing `ticked.json` the way the agent does (`agent::update` unit tests
//! cover the agent writing it). Needs root (dpkg --root) and dpkg-deb.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use crate::common::wait_until;

use base64::Engine as _;
use ed25519_dalek::{Signer, SigningKey};
use monky_deployd::host::selfupdate::{self as su, Staged};

const KEY: [u8; 32] = [21; 32];
const OTHER: [u8; 32] = [22; 32];
const OLD: &str = "0.3.0";
const NEW: &str = "0.3.1";
/// The installer's restart of every agent unit (the postinst leaves them to it).
const RESTART: &str =
    "try-restart monky-deployd.service monky-deployd-run.service monky-deployd-laptop.service";

struct BoxRoot {
    dir: tempfile::TempDir,
}

fn sh(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn sha256(p: &Path) -> String {
    su::file_sha256(p).unwrap()
}

impl BoxRoot {
    /// A dpkg root with `OLD` installed and its package kept (as install.sh keeps it), an agent
    /// state dir with a token, and a config with self-update on.
    fn new(probation_s: u64) -> BoxRoot {
        assert_eq!(
            unsafe { libc::geteuid() },
            0,
            "these tests need root (dpkg --root)"
        );
        let b = BoxRoot {
            dir: tempfile::tempdir().unwrap(),
        };
        let root = b.root();
        for d in [
            "var/lib/dpkg/info",
            "var/lib/dpkg/updates",
            "var/lib/dpkg/triggers",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
        let bin = b.path("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let script = |name: &str, body: String| {
            let p = bin.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            sh(Command::new("chmod").arg("755").arg(&p));
        };
        script(
            "dpkg",
            format!("exec dpkg --root={} \"$@\"", root.display()),
        );
        script(
            "dpkg-query",
            format!("exec dpkg-query --root={} \"$@\"", root.display()),
        );
        script(
            "systemctl",
            format!("echo \"$*\" >> {}", b.path("systemctl.log").display()),
        );
        let old = b.build(OLD, "0");
        sh(Command::new(bin.join("dpkg")).arg("-i").arg(&old));
        let kept = b.keep().join("packages");
        std::fs::create_dir_all(&kept).unwrap();
        std::fs::copy(&old, kept.join(su::package_name(OLD, su::arch()))).unwrap();
        std::fs::create_dir_all(b.state()).unwrap();
        std::fs::write(b.state().join("bao.token"), "hvs.the-box-token").unwrap();
        std::fs::write(b.state().join("state.json"), "{\"env_id\": \"env-up\"}").unwrap();
        let pubk = base64::engine::general_purpose::STANDARD
            .encode(SigningKey::from_bytes(&KEY).verifying_key().as_bytes());
        std::fs::write(
            b.path("config.yaml"),
            format!(
                "env_id: env-up\nsite: test\ntransport: system\nstate_dir: {}\n\
                 bao:\n  scheme: http\n  ca_file: \"\"\n\
                 agent_signing_keys:\n  agent-2026: \"{pubk}\"\nagent_update_probation_s: {probation_s}\n",
                b.state().display()
            ),
        )
        .unwrap();
        b
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }
    fn root(&self) -> PathBuf {
        self.path("root")
    }
    fn state(&self) -> PathBuf {
        self.path("state")
    }
    fn keep(&self) -> PathBuf {
        self.path("keep")
    }
    fn update(&self) -> PathBuf {
        self.state().join("update")
    }

    /// A `monky-deployd` package of `version` whose file names the version.
    fn build(&self, version: &str, tag: &str) -> PathBuf {
        let p = self.path(&format!("build-{version}-{tag}"));
        std::fs::create_dir_all(p.join("DEBIAN")).unwrap();
        std::fs::create_dir_all(p.join("usr/share/monky-test")).unwrap();
        std::fs::write(
            p.join("DEBIAN/control"),
            format!(
                "Package: monky-deployd\nVersion: {version}\nArchitecture: {}\n\
                 Maintainer: test <t@example.invalid>\nDescription: self-update test package\n",
                su::arch()
            ),
        )
        .unwrap();
        std::fs::write(
            p.join("usr/share/monky-test/VERSION"),
            format!("{version} {tag}\n"),
        )
        .unwrap();
        let deb = self.path(&format!("{version}-{tag}.deb"));
        sh(Command::new("dpkg-deb")
            .args(["--root-owner-group", "--build"])
            .arg(&p)
            .arg(&deb));
        deb
    }

    /// `deb` staged as the agent stages it, signed by `seed` over its sha256 hex.
    fn stage(&self, version: &str, deb: &Path, seed: &[u8; 32]) -> Staged {
        std::fs::create_dir_all(self.update()).unwrap();
        let sha = sha256(deb);
        let package = su::package_name(version, su::arch());
        std::fs::copy(deb, self.update().join(&package)).unwrap();
        let sig = base64::engine::general_purpose::STANDARD
            .encode(SigningKey::from_bytes(seed).sign(sha.as_bytes()).to_bytes());
        let s = Staged {
            version: version.into(),
            sha256: sha,
            from_version: OLD.into(),
            arch: su::arch().into(),
            package,
            staged_at: 1,
            signatures: vec![monky_deployd::wire::tenancy::SignatureWire {
                key_id: "agent-2026".into(),
                alg: "ed25519".into(),
                sig,
            }],
            statement: None,
        };
        std::fs::write(
            su::staged_json(&self.update()),
            serde_json::to_vec(&s).unwrap(),
        )
        .unwrap();
        s
    }

    fn installer(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_monky-deployd"));
        c.arg("--config")
            .arg(self.path("config.yaml"))
            .arg("update-install")
            .arg("--keep-dir")
            .arg(self.keep())
            .arg("--dpkg")
            .arg(self.path("bin/dpkg"))
            .arg("--dpkg-query")
            .arg(self.path("bin/dpkg-query"))
            .arg("--systemctl")
            .arg(self.path("bin/systemctl"))
            .args(["--poll-s", "1"]);
        c
    }

    fn spawn(&self) -> Child {
        self.installer()
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn installed(&self) -> String {
        let out = sh(Command::new(self.path("bin/dpkg-query")).args([
            "-W",
            "-f=${Version}",
            "monky-deployd",
        ]));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn file_version(&self) -> String {
        std::fs::read_to_string(self.root().join("usr/share/monky-test/VERSION")).unwrap()
    }

    fn outcome(&self) -> Option<su::Outcome> {
        let b = std::fs::read(su::outcome_json(&self.update())).ok()?;
        Some(serde_json::from_slice(&b).unwrap())
    }

    /// The new agent's first counted tick, as the agent writes it.
    fn tick_as(&self, version: &str) {
        let t = su::Ticked {
            version: version.into(),
            at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs(),
        };
        std::fs::write(
            su::ticked_json(&self.update()),
            serde_json::to_vec(&t).unwrap(),
        )
        .unwrap();
    }

    fn nothing_staged(&self) -> bool {
        !su::staged_json(&self.update()).exists()
            && std::fs::read_dir(self.update())
                .unwrap()
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().ends_with(".deb"))
    }

    fn agent_files_intact(&self) {
        assert_eq!(
            std::fs::read_to_string(self.state().join("bao.token")).unwrap(),
            "hvs.the-box-token"
        );
        assert!(std::fs::read_to_string(self.state().join("state.json"))
            .unwrap()
            .contains("env-up"));
    }
}

fn finish(c: Child) -> Output {
    let out = c.wait_with_output().unwrap();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn an_update_that_ticks_is_kept_and_reported() {
    let b = BoxRoot::new(60);
    let new = b.build(NEW, "good");
    b.stage(NEW, &new, &KEY);
    let c = b.spawn();
    wait_until("the new package", Duration::from_secs(30), || {
        b.installed() == NEW
    });
    assert!(
        b.keep().join("probation.json").exists(),
        "probation recorded"
    );
    b.tick_as(NEW);
    let out = finish(c);
    assert!(out.status.success());
    assert_eq!(b.installed(), NEW);
    assert_eq!(b.file_version(), format!("{NEW} good\n"));
    let o = b.outcome().expect("result.json");
    assert_eq!(o.note, format!("AGENT_UPDATED: {OLD} → {NEW}"));
    assert_eq!(o.reverted, None);
    assert!(!b.keep().join("probation.json").exists());
    assert!(b.nothing_staged());
    // both packages kept: the next update can revert to this one
    for v in [OLD, NEW] {
        assert!(
            b.keep()
                .join("packages")
                .join(su::package_name(v, su::arch()))
                .exists(),
            "{v}"
        );
    }
    let log = std::fs::read_to_string(b.path("systemctl.log")).unwrap();
    assert_eq!(log, format!("{RESTART}\n"));
    b.agent_files_intact();
}

#[test]
fn an_update_that_never_ticks_is_reverted_within_probation() {
    let b = BoxRoot::new(10);
    let new = b.build(NEW, "bad");
    b.stage(NEW, &new, &KEY);
    let started = Instant::now();
    let c = b.spawn();
    wait_until("the new package", Duration::from_secs(30), || {
        b.installed() == NEW
    });
    // the old agent's ticks do not count for the new one
    b.tick_as(OLD);
    let out = finish(c);
    assert!(out.status.success());
    let took = started.elapsed();
    // probation is counted in whole unix seconds from the install, so the revert may come up to
    // a second before 10 s of this clock (seen once in CI: 9.1 s)
    assert!(
        took >= Duration::from_secs(9),
        "reverted before probation ended: {took:?}"
    );
    assert_eq!(b.installed(), OLD);
    assert_eq!(b.file_version(), format!("{OLD} 0\n"));
    let o = b.outcome().expect("result.json");
    assert_eq!(
        o.note,
        format!("AGENT_REVERTED: {NEW} → {OLD} (no tick within 10s)")
    );
    assert_eq!(o.reverted.as_deref(), Some(NEW));
    assert!(b.nothing_staged());
    let log = std::fs::read_to_string(b.path("systemctl.log")).unwrap();
    assert_eq!(
        log,
        format!("{RESTART}\n{RESTART}\n"),
        "restarted after install and after revert"
    );
    b.agent_files_intact();
}

#[test]
fn a_package_signed_by_another_key_or_swapped_is_not_installed() {
    let b = BoxRoot::new(60);
    let new = b.build(NEW, "x");
    b.stage(NEW, &new, &OTHER);
    let out = finish(b.spawn());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(b.installed(), OLD);
    let o = b.outcome().expect("result.json");
    assert!(
        o.note.starts_with("AGENT_UPDATE_FAILED: signature: "),
        "{}",
        o.note
    );
    let s = sha256(&new);
    assert_eq!(o.refused, Some((NEW.to_string(), s)));
    assert!(b.nothing_staged());
    assert!(!b.keep().join("probation.json").exists());
    std::fs::remove_file(su::outcome_json(&b.update())).unwrap();
    // signed right, then the staged bytes swapped after the agent checked them
    b.stage(NEW, &new, &KEY);
    let evil = b.build(NEW, "evil");
    std::fs::copy(&evil, b.update().join(su::package_name(NEW, su::arch()))).unwrap();
    let out = finish(b.spawn());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(b.installed(), OLD);
    let note = b.outcome().unwrap().note;
    assert!(
        note.starts_with("AGENT_UPDATE_FAILED: sha256 mismatch"),
        "{note}"
    );
    assert!(
        !std::path::Path::new(&b.path("systemctl.log")).exists(),
        "nothing restarted"
    );
    b.agent_files_intact();
}

#[test]
fn without_a_kept_package_to_revert_to_nothing_is_installed() {
    let b = BoxRoot::new(60);
    std::fs::remove_file(
        b.keep()
            .join("packages")
            .join(su::package_name(OLD, su::arch())),
    )
    .unwrap();
    let new = b.build(NEW, "y");
    b.stage(NEW, &new, &KEY);
    let out = finish(b.spawn());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(b.installed(), OLD);
    let note = b.outcome().unwrap().note;
    assert!(
        note.contains(&format!("no package of the running {OLD}")),
        "{note}"
    );
}

#[test]
fn an_installer_killed_before_dpkg_leaves_the_old_agent_and_says_so() {
    let b = BoxRoot::new(60);
    let new = b.build(NEW, "z");
    b.stage(NEW, &new, &KEY);
    let marker = b.path("pause");
    let mut c = b
        .installer()
        .env("MONKY_DEPLOYD_TEST_PAUSE_AT", "update-before-dpkg")
        .env("MONKY_DEPLOYD_TEST_PAUSE_MARKER", &marker)
        .spawn()
        .unwrap();
    wait_until("the pause", Duration::from_secs(30), || marker.exists());
    c.kill().unwrap(); // SIGKILL
    c.wait().unwrap();
    assert!(b.keep().join("probation.json").exists());
    assert!(
        su::staged_json(&b.update()).exists(),
        "the path unit would start it again"
    );
    // what the path unit starts next: finishes the interrupted run
    let out = finish(b.spawn());
    assert!(out.status.success());
    assert_eq!(b.installed(), OLD);
    let note = b.outcome().unwrap().note;
    assert_eq!(
        note,
        format!("AGENT_UPDATE_FAILED: the install of {NEW} was interrupted; {OLD} is back")
    );
    assert!(b.nothing_staged());
    assert!(!b.keep().join("probation.json").exists());
    b.agent_files_intact();
}

#[test]
fn an_installer_killed_during_probation_resumes_it() {
    let b = BoxRoot::new(60);
    let new = b.build(NEW, "w");
    b.stage(NEW, &new, &KEY);
    let mut c = b.spawn();
    wait_until("the new package", Duration::from_secs(30), || {
        b.installed() == NEW
    });
    c.kill().unwrap();
    c.wait().unwrap();
    let c = b.spawn();
    std::thread::sleep(Duration::from_secs(1));
    b.tick_as(NEW);
    let out = finish(c);
    assert!(out.status.success());
    assert_eq!(b.installed(), NEW);
    assert_eq!(
        b.outcome().unwrap().note,
        format!("AGENT_UPDATED: {OLD} → {NEW}")
    );
}

fn kept(b: &BoxRoot) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(b.keep().join("packages"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn names(versions: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = versions
        .iter()
        .map(|v| su::package_name(v, su::arch()))
        .collect();
    v.sort();
    v
}

/// The root unit reads the package's own control file from its copy: a signed old package
/// staged under a newer label is never installed, and nothing is kept of it (issue 31.3).
#[test]
fn a_package_whose_label_disagrees_with_it_is_not_installed() {
    let b = BoxRoot::new(60);
    let old = b.build("0.2.0", "relabelled");
    b.stage(NEW, &old, &KEY);
    let out = finish(b.spawn());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(b.installed(), OLD);
    let o = b.outcome().expect("result.json");
    assert_eq!(
        o.note,
        format!(
            "AGENT_UPDATE_FAILED: {NEW}: the label disagrees with the package: its own Version \
             is \"0.2.0\""
        )
    );
    assert_eq!(o.refused, Some((NEW.to_string(), sha256(&old))));
    assert!(b.nothing_staged());
    assert_eq!(kept(&b), names(&[OLD]), "nothing of it kept");
    assert!(!std::path::Path::new(&b.path("systemctl.log")).exists());
}

/// Round after round the keep dir holds the running package and the one before it; a reverted
/// version is refused by the unit itself when staged again (the agent's memory aside).
#[test]
fn the_keep_dir_stays_bounded_and_a_reverted_version_stays_out() {
    let b = BoxRoot::new(10);
    let mut prev = OLD;
    for v in ["0.3.1", "0.3.2", "0.3.3"] {
        let deb = b.build(v, "good");
        b.stage(v, &deb, &KEY);
        let c = b.spawn();
        wait_until(&format!("{v} installed"), Duration::from_secs(30), || {
            b.installed() == v || b.outcome().is_some_and(|o| o.note.contains("FAILED"))
        });
        b.tick_as(v);
        assert!(finish(c).status.success());
        assert_eq!(
            b.outcome().unwrap().note,
            format!("AGENT_UPDATED: {prev} → {v}")
        );
        assert_eq!(kept(&b), names(&[prev, v]), "after {v}");
        prev = v;
    }
    // 0.3.4 never ticks: reverted, and its package not kept
    let bad = b.build("0.3.4", "bad");
    b.stage("0.3.4", &bad, &KEY);
    let c = b.spawn();
    assert!(finish(c).status.success());
    assert_eq!(b.installed(), "0.3.3");
    assert_eq!(b.outcome().unwrap().reverted.as_deref(), Some("0.3.4"));
    assert_eq!(kept(&b), names(&["0.3.2", "0.3.3"]));
    // staged again as if the agent had forgotten: the unit refuses it itself
    b.stage("0.3.4", &bad, &KEY);
    let out = finish(b.spawn());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(b.installed(), "0.3.3");
    assert_eq!(
        b.outcome().unwrap().note,
        "AGENT_UPDATE_FAILED: 0.3.4 was reverted on this box"
    );
    assert_eq!(kept(&b), names(&["0.3.2", "0.3.3"]));
}

//! The agent's half of self-update against fakes on a real state directory: what is staged,
//! what is refused (with nothing staged), what is reported and what is not fetched again.

use base64::Engine as _;
use ed25519_dalek::{Signer, SigningKey};

use super::super::fakes::{FakeBao, FakeEngine, FakeTenancy, ENV};
use super::*;

const KEY: [u8; 32] = [11; 32];
const OTHER: [u8; 32] = [12; 32];
const NEW: &str = "9.9.9";

struct UpBox {
    _dir: tempfile::TempDir,
    agent: Agent<FakeTenancy, FakeBao, FakeEngine>,
}

fn sign(seed: &[u8; 32], hex: &str) -> String {
    base64::engine::general_purpose::STANDARD
        .encode(SigningKey::from_bytes(seed).sign(hex.as_bytes()).to_bytes())
}

fn pubkey(seed: &[u8; 32]) -> String {
    base64::engine::general_purpose::STANDARD
        .encode(SigningKey::from_bytes(seed).verifying_key().as_bytes())
}

fn sha256(b: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(b))
}

impl UpBox {
    /// A box running release `aaaa…`, with self-update on (key `agent-2026`) unless `edit`
    /// says otherwise.
    fn with(edit: impl FnOnce(&mut Config)) -> UpBox {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = Config {
            env_id: ENV.into(),
            state_dir: dir.path().join("state"),
            bootstrap_path: dir.path().join("bootstrap.jwt"),
            compose_project: "monky-test".into(),
            agent_signing_keys: [("agent-2026".to_string(), pubkey(&KEY))].into(),
            ..Config::default()
        };
        edit(&mut cfg);
        std::fs::create_dir_all(&cfg.state_dir).unwrap();
        std::fs::write(cfg.token_path(), "hvs.stored-token-aaaaaaaaaaaaaaaaaaaa").unwrap();
        let sha = "a".repeat(64);
        let rel = cfg.releases_dir().join(&sha);
        std::fs::create_dir_all(&rel).unwrap();
        std::fs::write(
            rel.join("compose.yaml"),
            "services:\n  web:\n    image: busybox\n",
        )
        .unwrap();
        std::os::unix::fs::symlink(&rel, cfg.current_link()).unwrap();
        let mut st = {
            let mut s = State::default();
            s.applied_sha = Some(sha);
            s
        };
        st.save(&cfg.state_path()).unwrap();
        let c = Clients {
            tenancy: FakeTenancy::default(),
            bao: FakeBao::new(),
        };
        let engine = FakeEngine::new(dir.path().to_path_buf());
        *engine.containers.borrow_mut() = vec![test_container("web", "running", "")];
        let agent = Agent::from_parts(cfg, false, c, engine).unwrap();
        UpBox { _dir: dir, agent }
    }

    fn new() -> UpBox {
        UpBox::with(|_| {})
    }

    fn tick(&mut self) -> Exit {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(self.agent.tick()).expect("the tick")
    }

    /// Tenancy serves `body` as `version` and answers the next check-in with an offer of it
    /// (`sha`, `sigs` as given).
    fn offer(&self, version: &str, body: &[u8], sha: &str, sigs: serde_json::Value, urgent: bool) {
        let t = &self.agent.c.tenancy;
        t.packages
            .borrow_mut()
            .insert(version.into(), body.to_vec());
        t.answer(
            &serde_json::json!({
                "action": "none", "desired_sha": "a".repeat(64), "urgent": urgent,
                "agent": {"version": version, "sha256": sha, "signatures": sigs},
            })
            .to_string(),
        );
    }

    fn signed_offer(&self, version: &str, body: &[u8]) -> String {
        let sha = sha256(body);
        let sigs = serde_json::json!([{"key_id": "agent-2026", "alg": "ed25519", "sig": sign(&KEY, &sha)}]);
        self.offer(version, body, &sha, sigs, false);
        sha
    }

    fn dir(&self) -> PathBuf {
        self.agent.cfg.update_dir()
    }

    /// A real package (`dpkg-deb --build`) whose control file says `package` `version` `arch`.
    fn deb(&self, package: &str, version: &str, arch: &str) -> Vec<u8> {
        let tree = self
            ._dir
            .path()
            .join(format!("build-{package}-{version}-{arch}"));
        std::fs::create_dir_all(tree.join("DEBIAN")).unwrap();
        std::fs::write(
            tree.join("DEBIAN/control"),
            format!(
                "Package: {package}\nVersion: {version}\nArchitecture: {arch}\n\
                 Maintainer: t <t@example.invalid>\nDescription: test package\n"
            ),
        )
        .unwrap();
        let out = tree.with_extension("deb");
        let st = std::process::Command::new("dpkg-deb")
            .args(["--root-owner-group", "--build"])
            .arg(&tree)
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("dpkg-deb");
        assert!(st.success());
        std::fs::read(out).unwrap()
    }

    /// The agent package of `version` for this box.
    fn pkg(&self, version: &str) -> Vec<u8> {
        self.deb(su::PACKAGE, version, su::arch())
    }

    fn staged(&self) -> Option<Staged> {
        self.agent.staged()
    }

    fn debs(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.dir())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".deb"))
            .collect();
        v.sort();
        v
    }

    fn downloads(&self) -> usize {
        let calls = self.agent.c.tenancy.calls.borrow();
        calls.iter().filter(|c| c.starts_with("package ")).count()
    }

    fn details(&self) -> Vec<String> {
        self.agent
            .c
            .tenancy
            .reports
            .borrow()
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    r["result"].as_str().unwrap(),
                    r["detail"].as_str().unwrap()
                )
            })
            .collect()
    }
}

#[test]
fn a_signed_package_is_staged_for_the_unit_and_never_installed() {
    let mut b = UpBox::new();
    let body = b.pkg(NEW);
    let sha = b.signed_offer(NEW, &body);
    assert_eq!(b.tick(), Exit::Ok);
    let s = b.staged().expect("staged.json");
    assert_eq!((s.version.as_str(), s.sha256.as_str()), (NEW, sha.as_str()));
    assert_eq!(s.from_version, VERSION);
    assert_eq!(s.package, su::package_name(NEW, su::arch()));
    assert_eq!(std::fs::read(b.dir().join(&s.package)).unwrap(), body);
    assert_eq!(
        b.debs(),
        vec![s.package.clone()],
        "only the package, no temp file"
    );
    assert!(
        b.details().iter().all(|d| !d.contains("AGENT_")),
        "{:?}",
        b.details()
    );
    let saved = State::load(&b.agent.cfg.state_path()).unwrap();
    assert_eq!(saved.agent_update.desired.as_deref(), Some(NEW));
    // staged and not yet taken by the unit: not downloaded again
    b.signed_offer(NEW, &body);
    b.tick();
    assert_eq!(b.downloads(), 1);
    // the tick that counts for probation is marked by the running version
    let t: su::Ticked =
        serde_json::from_slice(&std::fs::read(su::ticked_json(&b.dir())).unwrap()).unwrap();
    assert_eq!(t.version, VERSION);
}

#[test]
fn unsigned_wrong_key_wrong_sha_and_downgrade_are_refused_with_nothing_staged() {
    let body = b"package bytes".to_vec();
    let good = sha256(&body);
    let by = |seed: &[u8; 32], id: &str, hex: &str| serde_json::json!([{"key_id": id, "alg": "ed25519", "sig": sign(seed, hex)}]);
    let other_sha = sha256(b"another package");
    let cases: Vec<(&str, String, serde_json::Value, &str)> = vec![
        (NEW, good.clone(), serde_json::json!([]), "no signature"),
        (
            NEW,
            good.clone(),
            by(&OTHER, "agent-2026", &good),
            "seen: agent-2026",
        ),
        (
            NEW,
            good.clone(),
            by(&OTHER, "agent-2030", &good),
            "agent-2030 (not trusted here)",
        ),
        // offered and signed for other bytes than those served
        (
            NEW,
            other_sha.clone(),
            by(&KEY, "agent-2026", &other_sha),
            "sha256 mismatch",
        ),
        (
            "0.0.1",
            good.clone(),
            by(&KEY, "agent-2026", &good),
            "older than the running",
        ),
        (
            "../../x",
            good.clone(),
            by(&KEY, "agent-2026", &good),
            "not a package version",
        ),
    ];
    for (version, sha, sigs, want) in cases {
        let mut b = UpBox::new();
        b.offer(version, &body, &sha, sigs.clone(), false);
        assert_eq!(
            b.tick(),
            Exit::Ok,
            "a refused update does not fail the tick"
        );
        assert!(b.staged().is_none(), "{want}: staged");
        assert!(b.debs().is_empty(), "{want}: {:?}", b.debs());
        let d = b.details();
        let n = d
            .iter()
            .filter(|d| d.starts_with("applied AGENT_UPDATE_FAILED: "))
            .count();
        assert_eq!(n, 1, "{want}: {d:?}");
        assert!(d.iter().any(|d| d.contains(want)), "{want}: {d:?}");
        // the same offer again: not fetched again, not reported again
        let before = b.downloads();
        b.offer(version, &body, &sha, sigs, false);
        b.tick();
        assert_eq!(b.downloads(), before, "{want}: fetched again");
        assert_eq!(
            b.details()
                .iter()
                .filter(|d| d.contains("AGENT_UPDATE_FAILED"))
                .count(),
            1,
            "{want}"
        );
    }
}

#[test]
fn a_reverted_version_waits_for_another_and_the_units_words_are_reported() {
    let mut b = UpBox::new();
    std::fs::create_dir_all(b.dir()).unwrap();
    let out = su::Outcome {
        note: format!("AGENT_REVERTED: {NEW} → {VERSION} (no tick within 600s)"),
        reverted: Some(NEW.into()),
        refused: None,
        at: 1,
    };
    std::fs::write(
        su::outcome_json(&b.dir()),
        serde_json::to_vec(&out).unwrap(),
    )
    .unwrap();
    b.signed_offer(NEW, b"bad agent");
    b.tick();
    assert_eq!(b.downloads(), 0, "a reverted version is not retried");
    assert!(b.staged().is_none());
    assert!(
        b.details().contains(&format!("applied {}", out.note)),
        "{:?}",
        b.details()
    );
    assert!(!su::outcome_json(&b.dir()).exists(), "read once");
    b.signed_offer(NEW, b"bad agent");
    b.tick();
    assert_eq!(b.downloads(), 0, "still the reverted one");
    // tenancy names another version: that one goes ahead
    let fixed = b.pkg("9.9.10");
    b.signed_offer("9.9.10", &fixed);
    b.tick();
    assert_eq!(b.staged().map(|s| s.version).as_deref(), Some("9.9.10"));
}

#[test]
fn a_closed_window_holds_the_update_unless_urgent() {
    let later = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .checked_add(jiff::SignedDuration::from_hours(12))
        .unwrap();
    let w = format!(
        "daily {}-{}",
        later.strftime("%H:00"),
        later.strftime("%H:30")
    );
    let mut b = UpBox::with(|c| {
        c.apply_windows = vec![w.clone()];
        c.apply_windows_tz = "UTC".into();
    });
    let body = &b.pkg(NEW);
    b.signed_offer(NEW, body);
    b.tick();
    assert_eq!(b.downloads(), 0, "outside {w}");
    let sha = sha256(body);
    let sigs =
        serde_json::json!([{"key_id": "agent-2026", "alg": "ed25519", "sig": sign(&KEY, &sha)}]);
    b.offer(NEW, body, &sha, sigs, true);
    b.tick();
    assert!(b.staged().is_some(), "urgent goes ahead");
}

#[test]
fn without_agent_signing_keys_an_offer_is_ignored() {
    let mut b = UpBox::with(|c| c.agent_signing_keys.clear());
    b.signed_offer(NEW, b"pkg");
    b.tick();
    assert_eq!(b.downloads(), 0);
    assert!(!b.dir().exists(), "nothing written for self-update");
    assert!(b.details().iter().all(|d| !d.contains("AGENT_")));
}

/// The red team's round (issue 31.3): a signed old package offered under a higher label. It is
/// judged by its own control file and never staged; so is a package for another architecture
/// or of another name.
#[test]
fn a_package_whose_label_disagrees_with_it_is_never_staged() {
    let cases = [
        (
            su::PACKAGE,
            "0.0.1",
            su::arch(),
            "its own Version is \"0.0.1\"",
        ),
        (
            su::PACKAGE,
            "9.9.8",
            su::arch(),
            "its own Version is \"9.9.8\"",
        ),
        (su::PACKAGE, NEW, "s390x", "its Architecture is \"s390x\""),
        (
            "monky-other",
            NEW,
            su::arch(),
            "it is package \"monky-other\"",
        ),
    ];
    for (package, version, arch, want) in cases {
        let mut b = UpBox::new();
        let body = b.deb(package, version, arch);
        b.signed_offer(NEW, &body);
        assert_eq!(b.tick(), Exit::Ok);
        assert!(b.staged().is_none(), "{want}: staged");
        assert!(b.debs().is_empty(), "{want}: {:?}", b.debs());
        let d = b.details();
        let failed: Vec<&String> = d
            .iter()
            .filter(|d| {
                d.starts_with(&format!(
                    "applied AGENT_UPDATE_FAILED: {NEW}: the label disagrees with the package: "
                ))
            })
            .collect();
        assert_eq!(failed.len(), 1, "{want}: {d:?}");
        assert!(failed[0].contains(want), "{want}: {d:?}");
        // not fetched again while tenancy offers exactly it
        b.signed_offer(NEW, &body);
        b.tick();
        assert_eq!(b.downloads(), 1, "{want}");
    }
}

/// Bytes that are no package at all are refused the same way (dpkg-deb cannot read them).
#[test]
fn signed_bytes_that_are_no_package_are_not_staged() {
    let mut b = UpBox::new();
    b.signed_offer(NEW, b"!<arch>\nsigned, but no package");
    b.tick();
    assert!(b.staged().is_none());
    let d = b.details();
    assert!(
        d.iter()
            .any(|d| d.contains("AGENT_UPDATE_FAILED") && d.contains("not a readable package")),
        "{d:?}"
    );
}

/// A reverted version stays refused: offered again after tenancy named another, or under a
/// new label (the old code forgot it as soon as another version was offered).
#[test]
fn a_reverted_version_stays_refused_whatever_its_label() {
    let mut b = UpBox::new();
    std::fs::create_dir_all(b.dir()).unwrap();
    let out = su::Outcome {
        note: format!("AGENT_REVERTED: {NEW} → {VERSION} (no tick within 600s)"),
        reverted: Some(NEW.into()),
        refused: None,
        at: 1,
    };
    std::fs::write(
        su::outcome_json(&b.dir()),
        serde_json::to_vec(&out).unwrap(),
    )
    .unwrap();
    let bad = b.pkg(NEW);
    b.signed_offer(NEW, &bad);
    b.tick();
    assert_eq!(b.downloads(), 0);
    // the same package under the next label: its own version decides
    b.signed_offer("9.9.11", &bad);
    b.tick();
    assert!(b.staged().is_none());
    assert!(
        b.details()
            .iter()
            .any(|d| d.contains("AGENT_UPDATE_FAILED: 9.9.11: the label disagrees")),
        "{:?}",
        b.details()
    );
    // another version goes ahead and is taken by the unit ...
    let fixed = b.pkg("9.9.10");
    b.signed_offer("9.9.10", &fixed);
    b.tick();
    assert_eq!(b.staged().map(|s| s.version).as_deref(), Some("9.9.10"));
    std::fs::remove_file(su::staged_json(&b.dir())).unwrap();
    // ... and the reverted one, labelled truly once more, is still not fetched
    let before = b.downloads();
    b.signed_offer(NEW, &bad);
    b.tick();
    assert_eq!(
        b.downloads(),
        before,
        "the reverted version was fetched again"
    );
    assert!(b.staged().is_none());
    let saved = State::load(&b.agent.cfg.state_path()).unwrap();
    assert_eq!(saved.agent_update.reverted_versions, vec![NEW.to_string()]);
}

#[test]
fn only_a_bad_package_or_a_missing_one_is_refused_for_good() {
    let rejected = |status| TenancyError::Rejected {
        what: "agent package",
        status,
        code: "X".into(),
        message: "x".into(),
    };
    assert!(Unstaged::Package(su::PackageError::BadSha).for_good());
    assert!(Unstaged::Reverted(NEW.into()).for_good());
    assert!(Unstaged::Download(rejected(404)).for_good());
    assert!(!Unstaged::Download(rejected(503)).for_good());
    let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
    let e = Unstaged::Rename {
        package: "p.deb".into(),
        source: full,
    };
    assert!(!e.for_good());
    assert_eq!(
        e.to_string(),
        format!(
            "stage p.deb: {}",
            std::io::Error::from(std::io::ErrorKind::StorageFull)
        )
    );
    // the words the note carries, as before the error was typed
    assert_eq!(
        Unstaged::Download(rejected(404)).to_string(),
        format!("download: {}", rejected(404))
    );
}

/// A stand-in `dpkg-deb` for this test thread: it leaves `marker` when run and answers as a
/// good package of `version` would.
fn fake_reader(dir: &Path, version: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let marker = dir.join("dpkg-deb.ran");
    let script = dir.join("dpkg-deb");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch {}\nprintf 'Package: {}\\nVersion: {version}\\nArchitecture: {}\\n'\n",
            marker.display(),
            su::PACKAGE,
            su::arch()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    DPKG_DEB_FOR_TEST.with(|d| *d.borrow_mut() = Some(script.display().to_string()));
    marker
}

/// An agent statement for `version` naming `sha256`, alive for an hour; (base64, signature).
fn stated(version: &str, sha256: &str) -> (String, serde_json::Value) {
    let now = i64::try_from(state::now()).unwrap();
    let bytes = serde_json::to_vec(&serde_json::json!({
        "kind": monky_boundary::statement::AGENT_KIND, "version": version, "arch": su::arch(),
        "sha256": sha256,
        "issued_at": monky_boundary::statement::rfc3339(now - 60),
        "expires_at": monky_boundary::statement::rfc3339(now + 3600),
    }))
    .unwrap();
    let sig = base64::engine::general_purpose::STANDARD
        .encode(SigningKey::from_bytes(&KEY).sign(&bytes).to_bytes());
    (
        base64::engine::general_purpose::STANDARD.encode(&bytes),
        serde_json::json!([{"key_id": "agent-2026", "alg": "ed25519", "sig": sig}]),
    )
}

/// Issue 40.3: nothing parses the package before the verified statement names exactly its
/// bytes. A statement the key really signed, but for another package's sha256, is refused
/// with the reader never run; the same offer with the right sha256 runs it and is staged.
#[test]
fn no_reader_runs_before_the_statement_names_these_bytes() {
    for right in [false, true] {
        let mut b = UpBox::new();
        let marker = fake_reader(b._dir.path(), NEW);
        let body = b"signed bytes, no package at all".to_vec();
        let sha = sha256(&body);
        let named = if right {
            sha.clone()
        } else {
            sha256(b"another package")
        };
        let (statement, sigs) = stated(NEW, &named);
        let t = &b.agent.c.tenancy;
        t.packages.borrow_mut().insert(NEW.into(), body.clone());
        t.answer(
            &serde_json::json!({
                "action": "none", "desired_sha": "a".repeat(64),
                "agent": {"version": NEW, "sha256": sha, "signatures": sigs,
                          "statement": statement},
            })
            .to_string(),
        );
        assert_eq!(b.tick(), Exit::Ok);
        assert_eq!(b.downloads(), 1);
        let d = b.details();
        if right {
            assert!(
                marker.exists(),
                "the reader runs for a bound package: {d:?}"
            );
            let s = b.staged().expect("staged");
            assert_eq!(s.sha256, sha);
            assert!(s.statement.is_some());
        } else {
            assert!(!marker.exists(), "dpkg-deb ran over unbound bytes: {d:?}");
            assert!(b.staged().is_none());
            assert!(
                d.iter().any(|d| d.starts_with(&format!(
                    "applied AGENT_UPDATE_FAILED: {NEW}: STATEMENT_REFUSED: sha256 ("
                ))),
                "{d:?}"
            );
        }
    }
}

/// Issue 40.5: the running package's full version decides what is news (the build's
/// `MONKY_PACKAGE_VERSION`): a new Debian revision of the running version is staged, the
/// running version itself (or the same version spelt with a `-0` revision) is kept.
#[test]
fn a_new_debian_revision_is_news_and_the_running_version_is_not() {
    let b = UpBox::new();
    let offer = |v: &str| AgentOffer {
        version: v.into(),
        sha256: "a".repeat(64),
        ..AgentOffer::default()
    };
    let running = su::PACKAGE_VERSION;
    assert_eq!(b.agent.update_step(Some(&offer(running)), true), Step::Keep);
    if !running.contains('-') {
        assert_eq!(
            b.agent
                .update_step(Some(&offer(&format!("{running}-0"))), true),
            Step::Keep
        );
    }
    let next = format!("{}-9", su::upstream(running));
    assert!(
        su::cmp_versions(&next, running).is_gt(),
        "{next} vs {running}"
    );
    assert_eq!(
        b.agent.update_step(Some(&offer(&next)), true),
        Step::Stage(next.clone())
    );
}

//! The agent's half of self-update end to end (issue 21): the real agent binary, a real
//! OpenBao, the test tenancy publishing and signing agent packages like a release pipeline, and
//! a release applied with real compose. The agent stages only a package whose sha256 it computed
//! matches the offer and whose signature verifies by a key in its own config; everything else is
//! refused with nothing staged and reported as `AGENT_UPDATE_FAILED` on the running sha.

use crate::common::*;
use monky_deployd::host::selfupdate as su;
use monky_test_tenancy::{agent_statement, release_public_key, unix_now};

const KEY: [u8; 32] = [31; 32];
const OTHER: [u8; 32] = [32; 32];

fn staged(s: &Stack) -> Option<su::Staged> {
    let b = std::fs::read(su::staged_json(&s.state_dir().join("update"))).ok()?;
    Some(serde_json::from_slice(&b).unwrap())
}

fn debs(s: &Stack) -> usize {
    std::fs::read_dir(s.state_dir().join("update"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".deb"))
                .count()
        })
        .unwrap_or(0)
}

/// A real agent package of `version` for this box (`dpkg-deb --build`).
fn deb(s: &Stack, version: &str) -> Vec<u8> {
    deb_salted(s, version, 0)
}

/// [`deb`] with a file of its own, so that packages of one version differ in their bytes.
fn deb_salted(s: &Stack, version: &str, salt: usize) -> Vec<u8> {
    let tree = s.dir.path().join(format!("pkg-{version}-{salt}"));
    std::fs::create_dir_all(tree.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(tree.join("usr/share/doc/monky-deployd")).unwrap();
    std::fs::write(
        tree.join("usr/share/doc/monky-deployd/salt"),
        salt.to_string(),
    )
    .unwrap();
    std::fs::write(
        tree.join("DEBIAN/control"),
        format!(
            "Package: monky-deployd\nVersion: {version}\nArchitecture: {}\n\
             Maintainer: t <t@example.invalid>\nDescription: test package\n",
            su::arch()
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
        .unwrap();
    assert!(st.success());
    std::fs::read(out).unwrap()
}

fn package_fetches(s: &Stack) -> usize {
    s.tenancy
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/v1/agent/package/"))
        .count()
}

#[test]
fn the_agent_stages_only_what_its_own_keys_signed() {
    require_docker();
    let mut s = Stack::new("selfup", Flavour::V2);
    s.set_extra(&format!(
        "agent_signing_keys:\n  agent-2026: \"{}\"\n",
        release_public_key(&KEY)
    ));
    s.give_bootstrap();
    let b = web_bundle(&s, 1, "v1", "self-update-secret");
    let sha = s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha.as_str());
    let arch = su::arch();

    // signed by a key the box does not list: downloaded, refused, nothing staged, reported
    let offer = s.tenancy.publish_agent(
        "9.0.0",
        arch,
        b"package 9.0.0".to_vec(),
        &[("agent-2026", OTHER)],
    );
    s.tenancy.offer_agent(&s.env, Some(offer));
    let r = s.tick();
    assert_eq!(
        r.code, 0,
        "a refused agent update does not fail the tick: {r:?}"
    );
    assert!(staged(&s).is_none());
    assert_eq!(debs(&s), 0);
    let rep = s.last_report();
    assert_eq!(rep["result"], "applied");
    assert_eq!(rep["sha"], sha.as_str());
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d.starts_with("AGENT_UPDATE_FAILED: 9.0.0: signature: no valid signature by a configured key; seen: agent-2026"),
        "{d}"
    );
    // the same offer is not fetched again
    let fetched = package_fetches(&s);
    assert_eq!(fetched, 1);
    s.tick();
    assert_eq!(package_fetches(&s), fetched);

    // tenancy's sha does not match the bytes it serves
    let mut offer = s.tenancy.publish_agent(
        "9.0.1",
        arch,
        b"package 9.0.1".to_vec(),
        &[("agent-2026", KEY)],
    );
    let other = s.tenancy.publish_agent(
        "9.0.1-other",
        arch,
        b"other bytes".to_vec(),
        &[("agent-2026", KEY)],
    );
    offer["sha256"] = other["sha256"].clone();
    offer["signatures"] = other["signatures"].clone();
    s.tenancy.offer_agent(&s.env, Some(offer));
    s.tick();
    assert!(staged(&s).is_none());
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(
        d.starts_with("AGENT_UPDATE_FAILED: 9.0.1: sha256 mismatch"),
        "{d}"
    );

    // an older version without permit_agent_downgrade: refused before any download
    let before = package_fetches(&s);
    let offer = s
        .tenancy
        .publish_agent("0.0.1", arch, b"old".to_vec(), &[("agent-2026", KEY)]);
    s.tenancy.offer_agent(&s.env, Some(offer));
    s.tick();
    assert_eq!(
        package_fetches(&s),
        before,
        "a downgrade is not even fetched"
    );
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(d.contains("older than the running"), "{d}");

    // a signed old package under a newer label: judged by its own control file, not staged
    let offer = s
        .tenancy
        .publish_agent("9.0.2", arch, deb(&s, "0.0.9"), &[("agent-2026", KEY)]);
    s.tenancy.offer_agent(&s.env, Some(offer));
    s.tick();
    assert!(staged(&s).is_none());
    assert_eq!(debs(&s), 0);
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert_eq!(
        d,
        "AGENT_UPDATE_FAILED: 9.0.2: the label disagrees with the package: its own Version is \"0.0.9\""
    );

    // signed by the box's key: staged for the update unit, nothing installed by the agent
    let body = deb(&s, "9.1.0");
    let offer = s
        .tenancy
        .publish_agent("9.1.0", arch, body.clone(), &[("agent-2026", KEY)]);
    s.tenancy.offer_agent(&s.env, Some(offer.clone()));
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let st = staged(&s).expect("staged.json");
    assert_eq!(st.version, "9.1.0");
    assert_eq!(st.sha256, offer["sha256"].as_str().unwrap());
    assert_eq!(
        std::fs::read(s.state_dir().join("update").join(&st.package)).unwrap(),
        body
    );
    assert_eq!(mode(&su::staged_json(&s.state_dir().join("update"))), 0o600);
    assert_eq!(s.state()["agent_update"]["desired"], "9.1.0");
    // the release was not touched by any of it
    assert_eq!(s.state()["applied_sha"], sha.as_str());
    let plan = s.cmd(&["plan", "--json"]);
    let p: serde_json::Value = serde_json::from_str(&plan.stdout).unwrap();
    assert_eq!(p["agent_update"]["would"], "pending", "{}", plan.stdout);
}

/// Release statements on agent packages (PROTOCOL 0.5): with `permit_agent_downgrade`, an old
/// signed package under a truthful label is staged when statements are off (the replay works);
/// with `require_statements` it needs a statement bound to its version, architecture and
/// hash, still within its life: an expired one, one for another architecture or another
/// version, or none, is refused with nothing staged; a valid one is staged with its statement.
#[test]
fn agent_packages_need_a_live_statement_when_required() {
    require_docker();
    for on in [false, true] {
        let mut s = Stack::new(
            if on { "selfup-st-on" } else { "selfup-st-off" },
            Flavour::V2,
        );
        let bundle_key = release_public_key(&[44; 32]);
        s.set_extra(&format!(
            "agent_signing_keys:\n  agent-2026: \"{}\"\npermit_agent_downgrade: true\n\
             bundle_signing_keys:\n  release-2026: \"{bundle_key}\"\nrequire_statements: {on}\n",
            release_public_key(&KEY)
        ));
        s.give_bootstrap();
        s.tenancy.sign_bundles_with(&[("release-2026", [44; 32])]);
        s.tenancy
            .auto_statements(Some(std::time::Duration::from_secs(3600)));
        let b = web_bundle(&s, 1, "v1", "self-update-statement");
        s.tenancy.set_bundle(&s.env, b.files());
        assert_eq!(s.tick().code, 0);
        let arch = su::arch();
        let now = unix_now();
        let old = deb(&s, "0.0.9");
        if !on {
            let offer = s
                .tenancy
                .publish_agent("0.0.9", arch, old, &[("agent-2026", KEY)]);
            s.tenancy.offer_agent(&s.env, Some(offer));
            s.tick();
            assert_eq!(
                staged(&s).map(|st| st.version).as_deref(),
                Some("0.0.9"),
                "statements off: an old signed package is staged"
            );
            continue;
        }
        // (offer label, statement: version, arch, issued, expires), the refusal
        type Case<'a> = (&'a str, Option<(&'a str, &'a str, i64, i64)>, &'a str);
        let cases: [Case; 4] = [
            (
                "0.0.9",
                None,
                "AGENT_UPDATE_FAILED: 0.0.9: STATEMENT_REFUSED: missing",
            ),
            (
                "0.0.9",
                Some(("0.0.9", arch, now - 7200, now - 3600)),
                "AGENT_UPDATE_FAILED: 0.0.9: BUNDLE_EXPIRED_REFUSED: agent 0.0.9 expired",
            ),
            (
                "0.0.9",
                Some(("0.0.9", "riscv64", now, now + 3600)),
                "AGENT_UPDATE_FAILED: 0.0.9: STATEMENT_REFUSED: arch (\"riscv64\"",
            ),
            (
                "0.0.9",
                Some(("0.0.8", arch, now, now + 3600)),
                "AGENT_UPDATE_FAILED: 0.0.9: STATEMENT_REFUSED: version (\"0.0.8\"",
            ),
        ];
        for (i, (label, stmt, want)) in cases.into_iter().enumerate() {
            // each case its own bytes: a refused offer is remembered by version and sha256
            let body = deb_salted(&s, "0.0.9", i);
            let offer =
                s.tenancy
                    .publish_agent_stated(label, arch, body, &[("agent-2026", KEY)], |sha| {
                        stmt.map(|(v, a, iss, exp)| agent_statement(v, a, sha, iss, exp))
                    });
            s.tenancy.offer_agent(&s.env, Some(offer));
            s.tick();
            assert!(staged(&s).is_none(), "{want}");
            let d = s.last_report()["detail"].as_str().unwrap().to_string();
            assert!(d.starts_with(want), "{d} / {want}");
        }
        let new = deb(&s, "9.2.0");
        let offer =
            s.tenancy
                .publish_agent_stated("9.2.0", arch, new, &[("agent-2026", KEY)], |sha| {
                    Some(agent_statement("9.2.0", arch, sha, now, now + 3600))
                });
        s.tenancy.offer_agent(&s.env, Some(offer));
        let r = s.tick();
        assert_eq!(r.code, 0, "{r:?}");
        let st = staged(&s).expect("a package with a live statement is staged");
        assert_eq!(st.version, "9.2.0");
        assert!(
            st.statement.is_some(),
            "staged with its statement for the root unit"
        );
    }
}

/// Verify before parse (issue 40, TRUST.md): a `dpkg-deb` logger first on the agent's PATH
/// records every run and the sha256 of the file it was handed, then runs the real one. Real
/// packages offered with a wrong signature, under another package's sha256, and as a downgrade
/// are refused without the reader ever running; the verified one is read exactly once, and over
/// exactly the bytes that were verified (the logger's sha256 is the offer's). The positive case
/// proves the logger is on the path the agent uses, so its silence before is evidence.
#[test]
fn dpkg_deb_never_runs_on_bytes_not_yet_verified() {
    require_docker();
    let mut s = Stack::new("selfupparse", Flavour::V5);
    s.set_extra(&format!(
        "agent_signing_keys:\n  agent-2026: \"{}\"\n",
        release_public_key(&KEY)
    ));
    s.give_bootstrap();
    let b = web_bundle(&s, 1, "v1", "parse-secret");
    s.tenancy.set_bundle(&s.env, b.files());
    let bin = s.dir.path().join("logger-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = s.dir.path().join("dpkg-deb.log");
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v dpkg-deb"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let script = format!(
        "#!/bin/sh\nfor a in \"$@\"; do [ -f \"$a\" ] && echo \"ran $(sha256sum \"$a\" | cut -d' ' -f1)\" >> {log}; done\n\
         echo \"args $*\" >> {log}\nexec {} \"$@\"\n",
        real.trim(),
        log = log.display()
    );
    std::fs::write(bin.join("dpkg-deb"), script).unwrap();
    std::fs::set_permissions(
        bin.join("dpkg-deb"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tick = |s: &Stack| s.cmd_as(&["run", "--once"], &[("PATH", path.as_str())], None);
    assert_eq!(tick(&s).code, 0);
    let ran = || std::fs::read_to_string(&log).unwrap_or_default();
    let arch = su::arch();

    // a real package, signed by a key the box does not list
    let offer = s.tenancy.publish_agent(
        "9.0.0",
        arch,
        deb_salted(&s, "9.0.0", 1),
        &[("agent-2026", OTHER)],
    );
    s.tenancy.offer_agent(&s.env, Some(offer));
    assert_eq!(tick(&s).code, 0);
    assert!(staged(&s).is_none());
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(d.contains("signature"), "{d}");
    assert_eq!(
        ran(),
        "",
        "dpkg-deb ran over a package no key of the box signed"
    );

    // real package bytes served under another package's sha256 and signature
    let mut offer = s.tenancy.publish_agent(
        "9.0.1",
        arch,
        deb_salted(&s, "9.0.1", 2),
        &[("agent-2026", KEY)],
    );
    let other = s.tenancy.publish_agent(
        "9.0.1-o",
        arch,
        deb_salted(&s, "9.0.1", 3),
        &[("agent-2026", KEY)],
    );
    offer["sha256"] = other["sha256"].clone();
    offer["signatures"] = other["signatures"].clone();
    s.tenancy.offer_agent(&s.env, Some(offer));
    assert_eq!(tick(&s).code, 0);
    assert!(staged(&s).is_none());
    let d = s.last_report()["detail"].as_str().unwrap().to_string();
    assert!(d.contains("sha256 mismatch"), "{d}");
    assert_eq!(
        ran(),
        "",
        "dpkg-deb ran over bytes whose hash did not match"
    );

    // the verified package: read once, over exactly the verified bytes
    let offer = s.tenancy.publish_agent(
        "9.1.0",
        arch,
        deb_salted(&s, "9.1.0", 4),
        &[("agent-2026", KEY)],
    );
    s.tenancy.offer_agent(&s.env, Some(offer.clone()));
    assert_eq!(tick(&s).code, 0);
    assert_eq!(staged(&s).expect("staged").version, "9.1.0");
    let lines = ran();
    let runs: Vec<&str> = lines.lines().filter(|l| l.starts_with("ran ")).collect();
    assert_eq!(
        runs,
        [format!("ran {}", offer["sha256"].as_str().unwrap())],
        "{lines}"
    );
}

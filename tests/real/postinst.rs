//! packaging/debian/postinst's restarts on an upgrade, run with stand-ins on PATH for the
//! account tools and systemctl (which records its calls). The script's "systemd runs" test
//! (`[ -d /run/systemd/system ]`) points at a directory of the test's own.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const RUN_SYSTEMD: &str = "/run/systemd/system";

fn standin(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The systemctl calls of `postinst configure <old-version>` with `env`.
fn systemctl_calls(env: &[(&str, &str)]) -> String {
    let d = tempfile::tempdir().unwrap();
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/debian/postinst"),
    )
    .unwrap();
    assert_eq!(script.matches(RUN_SYSTEMD).count(), 1, "{script}");
    let systemd = d.path().join("run-systemd-system");
    std::fs::create_dir(&systemd).unwrap();
    let script = script.replace(RUN_SYSTEMD, systemd.to_str().unwrap());
    std::fs::write(d.path().join("postinst"), script).unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = d.path().join("systemctl.log");
    standin(
        &bin,
        "systemctl",
        &format!("echo \"$*\" >> {}", log.display()),
    );
    // the account and the directories exist already (an upgrade)
    for ok in ["getent", "install", "groupadd", "useradd", "usermod"] {
        standin(&bin, ok, "exit 0");
    }
    standin(&bin, "id", "echo monky-deployd docker");
    let out = Command::new("/bin/sh")
        .arg(d.path().join("postinst"))
        .args(["configure", "0.4.0"])
        .env_clear()
        .env("PATH", &bin)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&log).unwrap_or_default()
}

#[test]
fn an_upgrade_by_dpkg_restarts_the_running_agent_units() {
    assert_eq!(
        systemctl_calls(&[]),
        "daemon-reload\n\
         try-restart monky-deployd-run.service monky-deployd-laptop.service monky-deployd-proxy.service \
         monky-deployd-run@*.service monky-deployd-laptop@*.service monky-deployd-proxy@*.service\n"
    );
}

#[test]
fn under_update_install_the_agent_units_are_left_to_the_installer() {
    // update-install holds the tick lock while dpkg runs: a service restarted here would find
    // it busy and skip its first tick
    let calls = systemctl_calls(&[("MONKY_DEPLOYD_UPDATE_INSTALL", "1")]);
    assert_eq!(
        calls,
        // every instance's proxy too: the installer restarts the agents, not their tunnels
        "daemon-reload\ntry-restart monky-deployd-proxy.service monky-deployd-proxy@*.service\n"
    );
    assert!(!calls.contains("monky-deployd-run"), "{calls}");
    assert!(!calls.contains("monky-deployd-laptop"), "{calls}");
}

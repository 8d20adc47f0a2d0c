// Build metadata for the crates that report it (host, agent, and the root binary through
// build.rs): the git revision for `version`, and the Debian package version the self-update
// compares. The packaging sets MONKY_DEB_VERSION; a plain cargo build is the crate version.
use std::process::Command;

#[allow(dead_code)] // the root build script calls `emit`, a layer crate's build runs `main`
fn main() {
    emit();
}

pub fn emit() {
    let rev = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MONKY_GIT_REV={rev}");
    let deb = std::env::var("MONKY_DEB_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| std::env::var("CARGO_PKG_VERSION").unwrap_or_default());
    println!("cargo:rustc-env=MONKY_PACKAGE_VERSION={deb}");
    println!("cargo:rerun-if-env-changed=MONKY_DEB_VERSION");
    // the repository's .git from any member's directory
    let git = Command::new("git")
        .args(["rev-parse", "--absolute-git-dir"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(git) = git {
        println!("cargo:rerun-if-changed={git}/HEAD");
        println!("cargo:rerun-if-changed={git}/refs");
    }
}

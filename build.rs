// Build metadata only: the git revision for `version`. The C SDK is ziti-sys's business.
use std::process::Command;

fn main() {
    let rev = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MONKY_GIT_REV={rev}");
    // ziti-sys links a prebuilt shared libziti: find it at run time from the build location
    // and from the packaged location (/usr/lib/monky-deployd, next to /usr/bin).
    if let Ok(dir) = std::env::var("DEP_ZITI_LIBDIR") {
        // packaged location first; the build host's copy only in debug builds (tests, demo),
        // so a release binary never looks in a build-host path
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/../lib/monky-deployd");
        if std::env::var("PROFILE").as_deref() == Ok("debug") {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
    println!("cargo:rerun-if-env-changed=DEP_ZITI_LIBDIR");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs");
}

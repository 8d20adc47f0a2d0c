// Build metadata: the git revision for `version`, and a run-time search path when ziti-sys links
// a prebuilt shared libziti (ZITI_SDK_DIR). The vendored SDK is ziti-sys's business and is linked
// statically: then DEP_ZITI_LIBDIR is unset and the binary gets no search path.
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
    // the Debian package version (with its revision) the self-update compares; the packaging
    // sets MONKY_DEB_VERSION, a plain cargo build is its crate version
    let deb = std::env::var("MONKY_DEB_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| std::env::var("CARGO_PKG_VERSION").unwrap_or_default());
    println!("cargo:rustc-env=MONKY_PACKAGE_VERSION={deb}");
    println!("cargo:rerun-if-env-changed=MONKY_DEB_VERSION");
    // a prebuilt shared libziti (ZITI_SDK_DIR with lib/libziti.so): found next to the binary's
    // package layout, or at the build location in debug builds
    if let Ok(dir) = std::env::var("DEP_ZITI_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/../lib/monky-deployd");
        if std::env::var("PROFILE").as_deref() == Ok("debug") {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
    println!("cargo:rerun-if-env-changed=DEP_ZITI_LIBDIR");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs");
}

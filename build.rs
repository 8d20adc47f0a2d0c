// Build metadata (crates/meta.rs: the git revision, the package version), and a run-time search
// path when ziti-sys links a prebuilt shared libziti (ZITI_SDK_DIR). The vendored SDK is
// ziti-sys's business and is linked statically: then DEP_ZITI_LIBDIR is unset and the binary gets
// no search path.
#[path = "crates/meta.rs"]
mod meta;

fn main() {
    meta::emit();
    // a prebuilt shared libziti (ZITI_SDK_DIR with lib/libziti.so): found next to the binary's
    // package layout, or at the build location in debug builds
    if let Ok(dir) = std::env::var("DEP_ZITI_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/../lib/monky-deployd");
        if std::env::var("PROFILE").as_deref() == Ok("debug") {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
    println!("cargo:rerun-if-env-changed=DEP_ZITI_LIBDIR");
}

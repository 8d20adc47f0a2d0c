fn main() {
    // Placeholder: no SDK linked yet.
    println!("cargo:rustc-check-cfg=cfg(ziti_sdk)");
}

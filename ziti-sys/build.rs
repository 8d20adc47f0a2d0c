//! Which OpenZiti C SDK this build links, decided explicitly (first that applies wins):
//!
//! 1. `ZITI_SDK_DIR=<prefix>` (distribution packagers; `ZITI_NO_VENDOR=1` insists on it): a
//!    prebuilt 1.x SDK, `<prefix>/include/ziti/zitilib.h` and `<prefix>/lib/libziti.a` (linked
//!    statically, with `ZITI_LINK_LIBS` after it) or `<prefix>/lib/libziti.so`.
//! 2. feature `vendored` (default): the pinned trees under `../vendor/` (libuv, llhttp, STC, tlsuv,
//!    ziti-sdk-c; see `vendor/README.md`) are built into `OUT_DIR` with CMake (`cc` for STC) and
//!    linked statically together with the static archives of Debian's libsodium, json-c,
//!    protobuf-c, OpenSSL and zlib, so the binary needs nothing but the C library at run time.
//! 3. feature off and no `ZITI_SDK_DIR`: no SDK (the `sdk` transport refuses to start); a
//!    `cargo:warning` says so.
//!
//! bindgen always runs over the `zitilib.h` of the SDK that is linked. Emits `cfg(ziti_sdk)` and
//! the generated `sdk_info.rs` (`SOURCE`).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian packages whose static archives the vendored build links, by pkg-config module.
const SYSTEM_DEPS: &[(&str, &str, &str)] = &[
    // (pkg-config module, archive name, Debian package)
    ("libsodium", "sodium", "libsodium-dev"),
    ("json-c", "json-c", "libjson-c-dev"),
    ("libprotobuf-c", "protobuf-c", "libprotobuf-c-dev"),
    ("libssl", "ssl", "libssl-dev"),
    ("libcrypto", "crypto", "libssl-dev"),
    ("zlib", "z", "zlib1g-dev"),
];

/// The vendored trees, in build order.
const TREES: &[&str] = &["libuv", "llhttp", "stc", "tlsuv", "ziti-sdk-c"];

fn main() {
    println!("cargo:rustc-check-cfg=cfg(ziti_sdk)");
    println!("cargo:rustc-check-cfg=cfg(ziti_refresh_knob)");
    println!("cargo:rustc-check-cfg=cfg(ziti_openssl)");
    for v in [
        "ZITI_SDK_DIR",
        "ZITI_NO_VENDOR",
        "ZITI_LINK_LIBS",
        "ZITI_CMAKE_ARGS",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let sdk_dir = env::var_os("ZITI_SDK_DIR").filter(|d| !d.is_empty());
    let no_vendor = env::var("ZITI_NO_VENDOR").is_ok_and(|v| v == "1");

    if let Some(dir) = sdk_dir {
        prebuilt(&manifest, Path::new(&dir), &out);
    } else if no_vendor {
        fail(
            "ZITI_NO_VENDOR=1 but ZITI_SDK_DIR is not set: point ZITI_SDK_DIR at a prebuilt \
              OpenZiti C SDK 1.x (include/ziti/zitilib.h and lib/libziti.a or lib/libziti.so)",
        );
    } else if env::var_os("CARGO_FEATURE_VENDORED").is_some() {
        vendored(&manifest, &out);
    } else {
        println!(
            "cargo:warning=ziti-sys: building WITHOUT an OpenZiti SDK (feature `vendored` off, \
             no ZITI_SDK_DIR): `transport: sdk` and `enroll` will refuse to run"
        );
        write_info(&out, "none", "");
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("error: ziti-sys: {msg}");
    panic!("ziti-sys: {msg}");
}

fn write_info(out: &Path, source: &str, version: &str) {
    let text = format!(
        "/// Where the linked SDK came from: `vendored`, `prebuilt` or `none`.\n\
         pub const SOURCE: &str = {source:?};\n\
         /// The SDK version the build system saw (empty without an SDK).\n\
         pub const BUILT_VERSION: &str = {version:?};\n"
    );
    fs::write(out.join("sdk_info.rs"), text).expect("write sdk_info.rs");
}

fn bindgen_run(manifest: &Path, include_dirs: &[PathBuf], out: &Path) {
    let header = manifest.join("include/wrapper_sdk.h");
    let mut b = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .allowlist_function("Ziti_.*")
        // both read the SDK's socket map off its loop thread (see `pub use raw` in lib.rs)
        .blocklist_function("Ziti_close|Ziti_check_socket")
        .allowlist_function("ziti_errorstr")
        .allowlist_function("ziti_get_version")
        .allowlist_type("ziti_handle_t|ziti_socket_t|monky_ziti_version")
        .allowlist_var("ZITI_.*")
        .layout_tests(false)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for d in include_dirs {
        b = b.clang_arg(format!("-I{}", d.display()));
    }
    let bindings = b.generate().unwrap_or_else(|e| {
        fail(&format!(
            "bindgen over {} failed: {e} (bindgen loads libclang: apt-get install libclang-dev)",
            header.display()
        ))
    });
    let text = bindings.to_string();
    // vendor/patches/ziti-sdk-c-0006: a prebuilt upstream SDK keeps its fixed 60 s refresh
    if text.contains("Ziti_set_refresh_interval") {
        println!("cargo:rustc-cfg=ziti_refresh_knob");
    }
    fs::write(out.join("bindings.rs"), text).expect("write bindings.rs");
}

/// A prebuilt 1.x SDK under `dir`.
fn prebuilt(manifest: &Path, dir: &Path, out: &Path) {
    let dir = dir.canonicalize().unwrap_or_else(|e| {
        fail(&format!("ZITI_SDK_DIR={}: {e}", dir.display()));
    });
    let header = dir.join("include/ziti/zitilib.h");
    let text = fs::read_to_string(&header).unwrap_or_else(|e| {
        fail(&format!(
            "ZITI_SDK_DIR={}: cannot read {} ({e}); a prebuilt SDK must ship its headers",
            dir.display(),
            header.display()
        ))
    });
    if !text.contains("Ziti_load_context_with_timeout") {
        fail(&format!(
            "{}: no Ziti_load_context_with_timeout: this is not a 1.9+ OpenZiti C SDK \
             (monky-deployd needs 1.17 or newer; 1.18.2 is the vendored pin)",
            header.display()
        ));
    }
    let libdir = dir.join("lib");
    let (lib, kind) = if libdir.join("libziti.a").is_file() {
        (libdir.join("libziti.a"), "static")
    } else if libdir.join("libziti.so").is_file() {
        (libdir.join("libziti.so"), "dylib")
    } else {
        fail(&format!(
            "ZITI_SDK_DIR={}: neither lib/libziti.a nor lib/libziti.so",
            dir.display()
        ));
    };
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rerun-if-changed={}", header.display());
    bindgen_run(manifest, &[dir.join("include")], out);
    println!("cargo:rustc-cfg=ziti_sdk");
    println!("cargo:rustc-link-search=native={}", libdir.display());
    if kind == "static" {
        println!("cargo:rustc-link-lib=static:-bundle=ziti");
        let libs = env::var("ZITI_LINK_LIBS").unwrap_or_else(|_| {
            "tlsuv llhttp stc uv sodium json-c protobuf-c ssl crypto z m dl pthread rt".into()
        });
        if libs.split_whitespace().any(|l| l == "ssl") {
            // OpenSSL is in the binary: ziti_sys::init_tls_library can call it
            println!("cargo:rustc-cfg=ziti_openssl");
        }
        for l in libs.split_whitespace() {
            if ["m", "dl", "pthread", "rt"].contains(&l) {
                println!("cargo:rustc-link-lib=dylib={l}");
            } else {
                println!("cargo:rustc-link-lib={l}");
            }
        }
    } else {
        println!("cargo:rustc-link-lib=dylib=ziti");
        println!("cargo:libdir={}", libdir.display());
    }
    println!("cargo:source=prebuilt");
    write_info(out, "prebuilt", "");
}

fn have_cmd(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn pkg_config(args: &[&str]) -> Option<String> {
    let o = Command::new("pkg-config").args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Check every input of the vendored build up front, naming what is missing and how to get it.
fn preflight(vendor: &Path) -> Vec<(String, &'static str)> {
    let mut missing = Vec::new();
    for t in TREES {
        let marker = if *t == "stc" {
            "src/cstr_core.c"
        } else {
            "CMakeLists.txt"
        };
        if !vendor.join(t).join(marker).is_file() {
            missing.push(format!(
                "vendor tree {} (no {marker}; a clean checkout has it: see vendor/README.md)",
                vendor.join(t).display()
            ));
        }
    }
    if !have_cmd("cmake", "--version") {
        missing.push("cmake (apt-get install cmake)".into());
    }
    if !have_cmd("pkg-config", "--version") {
        missing.push("pkg-config (apt-get install pkgconf)".into());
    }
    let mut dirs = Vec::new();
    for (module, archive, deb) in SYSTEM_DEPS {
        match pkg_config(&["--variable=libdir", module]) {
            Some(libdir) if Path::new(&libdir).join(format!("lib{archive}.a")).is_file() => {
                dirs.push((libdir, *archive));
            }
            Some(libdir) => missing.push(format!(
                "{libdir}/lib{archive}.a (static archive of {module}: apt-get install {deb})"
            )),
            None => missing.push(format!(
                "pkg-config module {module} (apt-get install {deb})"
            )),
        }
    }
    if !missing.is_empty() {
        fail(&format!(
            "cannot build the vendored OpenZiti C SDK; missing: {}. Or link a prebuilt SDK with \
             ZITI_SDK_DIR, or build without one (--no-default-features)",
            missing.join("; ")
        ));
    }
    dirs
}

fn cmake_cfg(src: &Path, out: &Path, name: &str) -> cmake::Config {
    let mut c = cmake::Config::new(src);
    c.out_dir(out.join(name))
        // the SDK is built optimised whatever the Rust profile: one C build serves every test
        .profile("Release")
        .define("CMAKE_POSITION_INDEPENDENT_CODE", "ON")
        .define("BUILD_SHARED_LIBS", "OFF")
        .define("CMAKE_INSTALL_LIBDIR", "lib")
        // cmake/version.cmake runs `git describe`: never let it find this project's repository
        .env("GIT_CEILING_DIRECTORIES", src.parent().expect("vendor dir"));
    if have_cmd("ninja", "--version") {
        c.generator("Ninja");
    }
    c
}

fn vendored(manifest: &Path, out: &Path) {
    let vendor = manifest.join("../vendor");
    let vendor = vendor.canonicalize().unwrap_or(vendor);
    for t in TREES {
        println!("cargo:rerun-if-changed={}", vendor.join(t).display());
    }
    let system = preflight(&vendor);

    let uv = cmake_cfg(&vendor.join("libuv"), out, "libuv")
        .define("LIBUV_BUILD_SHARED", "OFF")
        .define("LIBUV_BUILD_TESTS", "OFF")
        .define("LIBUV_BUILD_BENCH", "OFF")
        .build();
    let llhttp = cmake_cfg(&vendor.join("llhttp"), out, "llhttp")
        .define("LLHTTP_BUILD_SHARED_LIBS", "OFF")
        .define("LLHTTP_BUILD_STATIC_LIBS", "ON")
        .build();

    // STC: upstream builds with meson >= 1.1 (Debian 12 has 1.0.1); its nine sources need no
    // configuration, so cc compiles them, and a small stc.pc lets ziti's pkg_check_modules find it.
    let stc = out.join("stc");
    let stc_src = vendor.join("stc");
    let mut files: Vec<PathBuf> = fs::read_dir(stc_src.join("src"))
        .expect("vendor/stc/src")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    cc::Build::new()
        .files(&files)
        .include(stc_src.join("include"))
        .std("c11")
        .pic(true)
        .opt_level(2)
        .warnings(false)
        .cargo_metadata(false)
        .out_dir(stc.join("lib"))
        .compile("stc");
    fs::create_dir_all(stc.join("lib/pkgconfig")).expect("stc pkgconfig dir");
    fs::write(
        stc.join("lib/pkgconfig/stc.pc"),
        format!(
            "prefix={p}\nlibdir=${{prefix}}/lib\nincludedir={inc}\n\nName: stc\n\
             Description: Smart Template Containers for C\nVersion: 5.0\n\
             Libs: -L${{libdir}} -lstc\nCflags: -I${{includedir}}\n",
            p = stc.display(),
            inc = stc_src.join("include").display()
        ),
    )
    .expect("write stc.pc");

    let pkg_path = match env::var("PKG_CONFIG_PATH") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", stc.join("lib/pkgconfig").display()),
        _ => stc.join("lib/pkgconfig").display().to_string(),
    };
    let mut ziti = cmake_cfg(&vendor.join("ziti-sdk-c"), out, "ziti");
    ziti.define("ziti_DEVELOPER_MODE", "OFF")
        .define("BUILD_EXAMPLES", "OFF")
        .define("TLSUV_TLSLIB", "openssl")
        .define("TLSUV_HTTP", "ON")
        .define("tlsuv_DIR", vendor.join("tlsuv"))
        .define("FETCHCONTENT_FULLY_DISCONNECTED", "ON")
        .define(
            "CMAKE_PREFIX_PATH",
            format!("{};{}", uv.display(), llhttp.display()),
        )
        .env("PKG_CONFIG_PATH", pkg_path)
        .build_target("ziti");
    if let Ok(extra) = env::var("ZITI_CMAKE_ARGS") {
        for a in extra.split_whitespace() {
            ziti.configure_arg(a);
        }
    }
    let ziti_out = ziti.build();
    let build = ziti_out.join("build");

    let find = |name: &str| -> PathBuf {
        let mut hits = Vec::new();
        collect(&build, name, &mut hits);
        hits.into_iter().next().unwrap_or_else(|| {
            fail(&format!(
                "the CMake build of vendor/ziti-sdk-c produced no {name} under {}",
                build.display()
            ))
        })
    };
    // Order matters for static archives: each one before the archives it needs.
    let mut archives = vec![find("libziti.a"), find("libtlsuv.a")];
    let mut uv_link = Vec::new();
    collect(&build, "libuv_link.a", &mut uv_link);
    archives.extend(uv_link);
    archives.push(llhttp.join("lib/libllhttp.a"));
    archives.push(stc.join("lib/libstc.a"));
    for a in &archives {
        link_archive(a);
    }
    for (libdir, archive) in &system {
        println!("cargo:rustc-link-search=native={libdir}");
        println!("cargo:rustc-link-lib=static:-bundle={archive}");
        if archive == &"protobuf-c" {
            // libuv after ziti's own deps, before OpenSSL: the order that links
            link_archive(&uv.join("lib/libuv.a"));
        }
    }
    for l in ["m", "dl", "pthread", "rt"] {
        println!("cargo:rustc-link-lib=dylib={l}");
    }

    let src = vendor.join("ziti-sdk-c");
    bindgen_run(manifest, &[src.join("includes")], out);
    println!("cargo:rustc-cfg=ziti_sdk");
    // TLSUV_TLSLIB=openssl above, linked from Debian's static archives
    println!("cargo:rustc-cfg=ziti_openssl");
    println!("cargo:source=vendored");
    let version = fs::read_to_string(src.join("version.txt"))
        .ok()
        .and_then(|t| t.lines().next().map(str::to_string))
        .unwrap_or_default();
    write_info(out, "vendored", &version);
}

fn link_archive(a: &Path) {
    if !a.is_file() {
        fail(&format!(
            "expected static archive {} is missing",
            a.display()
        ));
    }
    let dir = a.parent().expect("archive dir");
    let name = a
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("lib"))
        .and_then(|n| n.strip_suffix(".a"))
        .expect("archive name");
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static:-bundle={name}");
}

fn collect(dir: &Path, name: &str, acc: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, name, acc);
        } else if p.file_name().is_some_and(|n| n == name) {
            acc.push(p);
        }
    }
}

//! Decides which OpenZiti C SDK (if any) this build links, and generates the FFI for it.
//!
//! Order (first that applies wins):
//! 1. `vendor/ziti-sdk-c` (next to this crate) holds a source tree → CMake builds the static
//!    `ziti` target; bindgen runs over its `includes/ziti/zitilib.h`.
//! 2. `ZITI_SDK_DIR` points at a prebuilt SDK (`lib/libziti.so` or `lib/libziti.a`, optional
//!    `include/ziti/zitilib.h`) → link it; bindgen over its header, or over this crate's own
//!    header declaring exactly the subset used (`include/zitilib_0_29.h` / `include/zitilib_1x.h`).
//!    A shared library is found at run time through the rpath that dependents add from
//!    `DEP_ZITI_LIBDIR` (cargo does not pass link args of a dependency on), or `LD_LIBRARY_PATH`.
//! 3. Neither → no SDK: the crate builds, `LINKED` is false and the `sdk` transport refuses to
//!    start with a message saying how to get one.
//!
//! The zitilib API differs by SDK line; the line is detected from the header text or, without a
//! header, from the library's symbol names, and can be forced with `ZITI_SDK_API=pointer|handle`:
//! * `pointer` (0.29 … 1.7): `ziti_context Ziti_load_context(const char *)`, NULL on failure.
//! * `handle` (1.8+): `int Ziti_load_context(ziti_handle_t *, const char *)`.
//! * `Ziti_load_context_with_timeout` (1.9+) and `Ziti_close` (0.30.7+) are used when present.
//!
//! Emitted: `cfg(ziti_sdk)`, `cfg(ziti_api_handle)`, `cfg(ziti_has_load_timeout)`,
//! `cfg(ziti_has_close)`; metadata `DEP_ZITI_SOURCE`, `DEP_ZITI_API`, `DEP_ZITI_LIBDIR`.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Api {
    Pointer,
    Handle,
}

struct Features {
    api: Api,
    load_timeout: bool,
    close: bool,
}

fn main() {
    for cfg in [
        "ziti_sdk",
        "ziti_api_handle",
        "ziti_has_load_timeout",
        "ziti_has_close",
    ] {
        println!("cargo:rustc-check-cfg=cfg({cfg})");
    }
    println!("cargo:rerun-if-env-changed=ZITI_SDK_DIR");
    println!("cargo:rerun-if-env-changed=ZITI_SDK_API");
    println!("cargo:rerun-if-env-changed=ZITI_CMAKE_ARGS");
    println!("cargo:rerun-if-env-changed=ZITI_LINK_LIBS");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let vendor = manifest.join("../vendor/ziti-sdk-c");
    // The parent always exists (vendor/README.md); watching a missing path would rerun every build.
    println!(
        "cargo:rerun-if-changed={}",
        manifest.join("../vendor").display()
    );

    if vendor.join("CMakeLists.txt").is_file() {
        vendored(&manifest, &vendor, &out);
    } else if let Some(dir) = env::var_os("ZITI_SDK_DIR").filter(|d| !d.is_empty()) {
        prebuilt(&manifest, Path::new(&dir), &out);
    } else {
        println!("cargo:source=none");
        println!("cargo:api=none");
        fs::write(out.join("sdk_info.rs"), info_rs("none", "none", "")).expect("write sdk_info.rs");
    }
}

fn info_rs(source: &str, api: &str, libdir: &str) -> String {
    format!(
        "/// Where the linked SDK came from: `vendored`, `prebuilt` or `none`.\n\
         pub const SOURCE: &str = {source:?};\n\
         /// zitilib API flavour: `pointer` (0.29–1.7), `handle` (1.8+) or `none`.\n\
         pub const API: &str = {api:?};\n\
         /// Directory of a prebuilt shared libziti (empty otherwise).\n\
         pub const LIBDIR: &str = {libdir:?};\n"
    )
}

fn env_api() -> Option<Api> {
    match env::var("ZITI_SDK_API").ok().as_deref() {
        Some("pointer") => Some(Api::Pointer),
        Some("handle") => Some(Api::Handle),
        Some("") | None => None,
        Some(other) => panic!("ZITI_SDK_API={other}: expected `pointer` or `handle`"),
    }
}

fn features_from_header(text: &str) -> Features {
    Features {
        api: env_api().unwrap_or(if text.contains("ziti_handle_t") {
            Api::Handle
        } else {
            Api::Pointer
        }),
        load_timeout: text.contains("Ziti_load_context_with_timeout"),
        close: text.contains("Ziti_close"),
    }
}

/// Without a header: look for symbol names in the library's string tables.
fn features_from_lib(lib: &Path) -> Features {
    let bytes = fs::read(lib).unwrap_or_else(|e| panic!("read {}: {e}", lib.display()));
    let has = |sym: &str| {
        let mut needle = sym.as_bytes().to_vec();
        needle.push(0);
        bytes.windows(needle.len()).any(|w| w == needle.as_slice())
    };
    let load_timeout = has("Ziti_load_context_with_timeout");
    let close = has("Ziti_close");
    let api = env_api().unwrap_or_else(|| {
        if load_timeout {
            Api::Handle
        } else {
            if close {
                println!(
                    "cargo:warning=libziti has Ziti_close but no Ziti_load_context_with_timeout \
                     (0.30.7..1.8): assuming the pointer API; set ZITI_SDK_API=handle for 1.8"
                );
            }
            Api::Pointer
        }
    });
    Features {
        api,
        load_timeout,
        close,
    }
}

fn emit_cfgs(f: &Features) {
    println!("cargo:rustc-cfg=ziti_sdk");
    if f.api == Api::Handle {
        println!("cargo:rustc-cfg=ziti_api_handle");
    }
    if f.load_timeout {
        println!("cargo:rustc-cfg=ziti_has_load_timeout");
    }
    if f.close {
        println!("cargo:rustc-cfg=ziti_has_close");
    }
    let api = if f.api == Api::Handle {
        "handle"
    } else {
        "pointer"
    };
    println!("cargo:api={api}");
}

fn bindgen_run(header: &Path, include_dirs: &[PathBuf], defines: &[&str], out: &Path) {
    let mut b = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .allowlist_function("Ziti_.*")
        .allowlist_function("ziti_errorstr")
        .allowlist_function("ziti_get_version")
        .allowlist_type("ziti_.*")
        .allowlist_var("ZITI_.*")
        .layout_tests(false)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for d in include_dirs {
        b = b.clang_arg(format!("-I{}", d.display()));
    }
    for d in defines {
        b = b.clang_arg(format!("-D{d}"));
    }
    let bindings = b.generate().unwrap_or_else(|e| {
        panic!(
            "bindgen over {} failed: {e} (bindgen needs libclang: apt-get install libclang-dev)",
            header.display()
        )
    });
    bindings
        .write_to_file(out.join("bindings.rs"))
        .expect("write bindings.rs");
}

fn prebuilt(manifest: &Path, dir: &Path, out: &Path) {
    let dir = dir
        .canonicalize()
        .unwrap_or_else(|e| panic!("ZITI_SDK_DIR={}: {e}", dir.display()));
    let libdir = dir.join("lib");
    let (lib, kind) = if libdir.join("libziti.so").is_file() {
        (libdir.join("libziti.so"), "dylib")
    } else if libdir.join("libziti.a").is_file() {
        (libdir.join("libziti.a"), "static")
    } else {
        panic!(
            "ZITI_SDK_DIR={} has neither lib/libziti.so nor lib/libziti.a \
             (scripts/provision.sh puts libziti 0.29.3 in /var/cache/monky-deployd-dev/libziti)",
            dir.display()
        );
    };
    println!("cargo:rerun-if-changed={}", lib.display());
    let sdk_header = dir.join("include/ziti/zitilib.h");
    let f = if sdk_header.is_file() {
        let text = fs::read_to_string(&sdk_header).expect("read zitilib.h");
        let f = features_from_header(&text);
        bindgen_run(
            &manifest.join("include/wrapper_sdk.h"),
            &[dir.join("include")],
            &[],
            out,
        );
        f
    } else {
        let f = features_from_lib(&lib);
        let (own, defines): (_, &[&str]) = match (f.api, f.load_timeout) {
            (Api::Pointer, _) => ("include/zitilib_0_29.h", &[]),
            (Api::Handle, true) => ("include/zitilib_1x.h", &["MONKY_ZITI_HAS_LOAD_TIMEOUT"]),
            (Api::Handle, false) => ("include/zitilib_1x.h", &[]),
        };
        bindgen_run(&manifest.join(own), &[], defines, out);
        f
    };
    emit_cfgs(&f);
    println!("cargo:rustc-link-search=native={}", libdir.display());
    println!("cargo:rustc-link-lib={kind}=ziti");
    if kind == "dylib" {
        // Own tests/examples; dependents read DEP_ZITI_LIBDIR and add the same rpath.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", libdir.display());
        println!("cargo:libdir={}", libdir.display());
    } else {
        system_libs(&["uv", "ssl", "crypto", "z"]);
    }
    println!("cargo:source=prebuilt");
    let api = if f.api == Api::Handle {
        "handle"
    } else {
        "pointer"
    };
    let libdir_s = if kind == "dylib" {
        libdir.display().to_string()
    } else {
        String::new()
    };
    fs::write(out.join("sdk_info.rs"), info_rs("prebuilt", api, &libdir_s))
        .expect("write sdk_info.rs");
}

fn system_libs(default: &[&str]) {
    let libs = env::var("ZITI_LINK_LIBS").unwrap_or_else(|_| default.join(" "));
    for l in libs.split_whitespace() {
        println!("cargo:rustc-link-lib={l}");
    }
}

/// Build host path: the pinned ziti-sdk-c source tree (see vendor/README.md) → static libziti.
fn vendored(manifest: &Path, src: &Path, out: &Path) {
    let build = out.join("ziti-sdk-build");
    fs::create_dir_all(&build).expect("create cmake build dir");
    let mut configure = Command::new("cmake");
    configure
        .arg("-S")
        .arg(src)
        .arg("-B")
        .arg(&build)
        .arg("-DCMAKE_BUILD_TYPE=Release")
        .arg("-DCMAKE_POSITION_INDEPENDENT_CODE=ON")
        .arg("-DBUILD_SHARED_LIBS=OFF")
        .arg("-DZITI_BUILD_TESTS=OFF")
        .arg("-DZITI_BUILD_PROGRAMS=OFF");
    if let Ok(extra) = env::var("ZITI_CMAKE_ARGS") {
        configure.args(extra.split_whitespace());
    }
    run(&mut configure, "cmake configure of vendor/ziti-sdk-c");
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "2".into());
    run(
        Command::new("cmake").arg("--build").arg(&build).args([
            "--target",
            "ziti",
            "--parallel",
            &jobs,
        ]),
        "cmake build of vendor/ziti-sdk-c (target ziti)",
    );
    // libziti.a first, then every static archive the build produced (FetchContent deps such as
    // tlsuv, llhttp), then system libraries.
    let mut archives = Vec::new();
    collect_archives(&build, &mut archives);
    let ziti = archives
        .iter()
        .position(|p| p.file_name().is_some_and(|n| n == "libziti.a"))
        .map(|i| archives.remove(i))
        .unwrap_or_else(|| panic!("cmake built no libziti.a under {}", build.display()));
    let link = |p: &Path| {
        let dir = p.parent().expect("archive dir");
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .expect("archive name");
        let name = name.trim_start_matches("lib").trim_end_matches(".a");
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static={name}");
    };
    link(&ziti);
    for a in &archives {
        link(a);
    }
    system_libs(&[
        "uv",
        "ssl",
        "crypto",
        "z",
        "sodium",
        "protobuf-c",
        "m",
        "pthread",
        "dl",
    ]);
    let header = src.join("includes/ziti/zitilib.h");
    let text = fs::read_to_string(&header).unwrap_or_else(|e| panic!("{}: {e}", header.display()));
    let f = features_from_header(&text);
    let mut incs = vec![src.join("includes")];
    incs.push(build.join("includes"));
    bindgen_run(&manifest.join("include/wrapper_sdk.h"), &incs, &[], out);
    emit_cfgs(&f);
    println!("cargo:source=vendored");
    let api = if f.api == Api::Handle {
        "handle"
    } else {
        "pointer"
    };
    fs::write(out.join("sdk_info.rs"), info_rs("vendored", api, "")).expect("write sdk_info.rs");
}

fn collect_archives(dir: &Path, acc: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_archives(&p, acc);
        } else if p.extension().is_some_and(|x| x == "a") {
            acc.push(p);
        }
    }
}

fn run(cmd: &mut Command, what: &str) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("{what}: cannot run cmake: {e}"));
    if !status.success() {
        panic!(
            "{what} failed ({status}); see vendor/README.md for the pinned tag and its build deps"
        );
    }
}

// The real-compose corpus's loader (issue 41): a corpus directory
// (tests/data/compose-corpus/<slug>/) → the files of the bundle an operator would publish for it.
// Plain Rust over std only, no imports: the fast tier (src/agent/tests/corpus.rs) and a
// real-parts suite (tests/real/*, `monky-deployd plan --json`) can both `include!` it, as
// src/boundary/agree/corpus.rs is shared.

/// The env id the corpus's `secrets.manifest.json` paths are written for
/// (`monky/data/env-corpus/see/<slug>/<var>`); [`corpus_bundle_files`] moves them to the box's.
pub const CORPUS_ENV: &str = "env-corpus";

/// Files of the corpus that describe it and are no corpus entry.
pub const CORPUS_META: &[&str] = &["CORPUS.md", "NOTICE", "expected.json", "sources.json"];

/// The corpus root in this source tree: beside the workspace's root manifest, which is the
/// including crate's own directory or one above it (`crates/agent`).
pub fn corpus_root() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    dir.ancestors()
        .map(|d| d.join("tests/data/compose-corpus"))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| dir.join("tests/data/compose-corpus"))
}

/// Every corpus entry (a directory with a `compose.yaml`), by slug, sorted.
pub fn corpus_slugs(root: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .filter(|e| e.path().join("compose.yaml").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    v.sort();
    v
}

/// The bundle files of one corpus entry, as the agent receives them (relative `/`-separated
/// paths, sorted, bytes as stored): `compose.yaml` verbatim, `env.template`, the
/// `secrets.manifest.json` when the entry has secrets, and any small file the compose file
/// names. The manifest's paths are moved from [`CORPUS_ENV`] to `env_id` (a box refuses a path
/// outside its own env: MANIFEST_PATH_FOREIGN). No `bundle.json` is added: a caller that needs
/// a serial adds its own.
pub fn corpus_bundle_files(dir: &std::path::Path, env_id: &str) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &std::path::Path, dir: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let ty = e
                .file_type()
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            if ty.is_dir() {
                walk(base, &p, out);
            } else if ty.is_file() {
                let rel = p
                    .strip_prefix(base)
                    .expect("under the entry")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                out.push((rel, bytes));
            } else {
                panic!(
                    "{}: a corpus entry holds only files and directories",
                    p.display()
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    let from = format!("/data/{CORPUS_ENV}/see/");
    let to = format!("/data/{env_id}/see/");
    for (path, bytes) in &mut out {
        if path == "secrets.manifest.json" {
            let text = String::from_utf8(std::mem::take(bytes)).expect("the manifest is UTF-8");
            *bytes = text.replace(&from, &to).into_bytes();
        }
    }
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out
}

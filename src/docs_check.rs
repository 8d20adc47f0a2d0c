//! What README.md, docs/ARCHITECTURE.md, docs/POLICY.md and docs/OPERATIONS.md say about the
//! code that a test can check, checked in the fast tier so it cannot drift (issue 43, item 5):
//!
//! - every repository path they write in backticks (`src/…`, `tests/…`, `scripts/…`,
//!   `packaging/…`, `docs/…`, …) exists; `path::item` is checked by its path, and a module's
//!   `src/x.rs` and `src/x/` stand for each other;
//! - every `….rs` they name relative to a module (`agent/ports.rs`, `keys.rs`) is a file of the
//!   repository;
//! - ARCHITECTURE.md's layer table (`## Layers`) names exactly the layer crates `src/lib.rs`
//!   re-exports, each with its `crates/` and `src/` paths, every module of each layer (the
//!   agent's in the "Where the tick lives" table), and in "uses" exactly the layers its
//!   `Cargo.toml` depends on, all below it (the compiler then refuses an import that points up);
//! - every `layer::module::Item` path (in backticks or a fenced block) names a module of
//!   `src/` and an item declared in it;
//! - POLICY.md's bind rule names every tree and file of `policy::PRIVATE_TREES`,
//!   `READ_ONLY_FILES` and `READ_ONLY_DEEP`; OPERATIONS.md's metrics table is exactly the
//!   families `host::metrics` writes, with their types;
//! - no doc states a test count (counts drift; the tests are the count);
//! - every key of `host::config::Config` is in `config.example.yaml` (README: "every key in
//!   `config.example.yaml`").
//!
//! Each failure names the doc, the line and what is missing.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The docs whose sentences about the code are checked, read at test time.
fn docs() -> Vec<(&'static str, String)> {
    macro_rules! doc {
        ($p:literal) => {
            (
                $p,
                std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/", $p)).expect($p),
            )
        };
    }
    vec![
        doc!("README.md"),
        doc!("docs/ARCHITECTURE.md"),
        doc!("docs/POLICY.md"),
        doc!("docs/OPERATIONS.md"),
    ]
}

/// The top-level directories of the repository whose paths a doc may name.
const TREES: &[&str] = &[
    "src/",
    "tests/",
    "scripts/",
    "packaging/",
    "docs/",
    "examples/",
    "ansible/",
    "vendor/",
    "ziti-sys/",
    "bench/",
    "crates/",
];

/// The words of every backticked span of `line`.
fn code_words(line: &str) -> Vec<&str> {
    line.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(str::split_whitespace)
        .collect()
}

/// A word as a path: quotes and punctuation around it dropped, `./` and `::item` dropped.
fn path_of(word: &str) -> &str {
    let w = word.trim_matches(|c: char| "()[],;:\"'".contains(c));
    let w = w.strip_prefix("./").unwrap_or(w);
    let w = w.split("::").next().unwrap_or(w);
    w.trim_end_matches(['.', ',', ';', ':'])
}

/// A placeholder or pattern, not a path (`<sha>`, `bench-*.sh`, `{mod,sdk}`, `$DIR`).
fn is_pattern(p: &str) -> bool {
    p.contains(['<', '*', '{', '$', '…', '['])
}

/// `p` exists, or names a module the other way (`src/x.rs` for `src/x/`, and back).
fn exists(p: &str) -> bool {
    let root = Path::new(ROOT);
    if root.join(p).exists() {
        return true;
    }
    if !p.starts_with("src/") {
        return false;
    }
    match (p.strip_suffix('/'), p.strip_suffix(".rs")) {
        (Some(dir), _) => root.join(format!("{dir}.rs")).is_file(),
        (_, Some(file)) => root.join(file).is_dir(),
        _ => root.join(format!("{p}.rs")).is_file(),
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Every `.rs` file of the repository, as a path from its root (`src/agent/ports.rs`).
fn rust_files() -> Vec<String> {
    let root = Path::new(ROOT);
    let mut v = Vec::new();
    for top in ["src", "tests", "ziti-sys"] {
        walk(&root.join(top), &mut v);
    }
    let mut v: Vec<String> = v
        .iter()
        .filter_map(|p| p.strip_prefix(root).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".rs"))
        .collect();
    v.push("build.rs".into());
    v
}

/// Problems with the paths of one doc: (a) and (b) of the issue, and the relative `.rs` names.
fn path_problems(doc: &str, text: &str, rs: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for w in code_words(line) {
            let p = path_of(w);
            if p.is_empty() || is_pattern(p) {
                continue;
            }
            if TREES.iter().any(|t| p.starts_with(t)) {
                if !exists(p) {
                    out.push(format!("{doc}:{}: `{p}` does not exist", n + 1));
                }
            } else if p.ends_with(".rs")
                && !rs.iter().any(|f| f == p || f.ends_with(&format!("/{p}")))
            {
                out.push(format!(
                    "{doc}:{}: `{p}` is no file of the repository",
                    n + 1
                ));
            }
        }
    }
    out
}

/// The modules a Rust file declares, `(name, test only)`, in order.
fn modules_of(source: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut test = false;
    for line in source.lines() {
        if line.starts_with("#[cfg(test)]") {
            test = true;
            continue;
        }
        let decl = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("pub(crate) mod "))
            .or_else(|| line.strip_prefix("mod "));
        if let Some(name) = decl.and_then(|d| d.strip_suffix(';')) {
            out.push((name.to_string(), test));
        }
        if !line.starts_with("#[") && !line.starts_with("//") {
            test = false;
        }
    }
    out
}

/// A markdown section: from the line `heading` to the next heading of its level or above.
/// `(first line number, lines)`.
fn section<'a>(text: &'a str, heading: &str) -> (usize, Vec<&'a str>) {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_end() == heading)
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md: no section `{heading}`"));
    let level = heading.split(' ').next().unwrap_or("##");
    let end = lines[start + 1..]
        .iter()
        .position(|l| {
            let h = l.split(' ').next().unwrap_or("");
            !h.is_empty() && h.chars().all(|c| c == '#') && h.len() <= level.len()
        })
        .map_or(lines.len(), |e| start + 1 + e);
    (start + 1, lines[start..end].to_vec())
}

/// A table's body rows in a section: `(line number, cells)`.
fn table_rows(first: usize, lines: &[&str]) -> Vec<(usize, Vec<String>)> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1)
        .map(|(i, l)| {
            let cells = l.trim().trim_matches('|').split('|');
            (first + i, cells.map(|c| c.trim().to_string()).collect())
        })
        .collect()
}

/// The words in backticks of a cell, each trimmed of punctuation.
fn names_in(cell: &str) -> Vec<String> {
    code_words(cell)
        .into_iter()
        .map(|w| path_of(w).to_string())
        .collect()
}

fn read(p: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
}

const ARCH: &str = "docs/ARCHITECTURE.md";

/// The layer table: `(line, layer, where cell, modules cell, uses cell)`, top layer first.
fn layers(arch: &str) -> Vec<(usize, String, String, String, String)> {
    let (first, lines) = section(arch, "## Layers");
    table_rows(first, &lines)
        .into_iter()
        .map(|(n, c)| {
            let cell = |i: usize| c.get(i).cloned().unwrap_or_default();
            (n, cell(0), cell(1), cell(2), cell(3))
        })
        .collect()
}

/// The layers `src/lib.rs` re-exports (`pub use monky_agent as agent;`), in its order.
fn lib_layers() -> Vec<String> {
    let re = regex::Regex::new(r"(?m)^pub use monky_(\w+) as (\w+);").unwrap();
    let lib = read("src/lib.rs");
    let out: Vec<String> = re
        .captures_iter(&lib)
        .map(|c| {
            assert_eq!(
                &c[1], &c[2],
                "src/lib.rs: monky_{} under another name",
                &c[1]
            );
            c[2].to_string()
        })
        .collect();
    assert!(
        out.len() > 3,
        "src/lib.rs: the layer re-exports were not found"
    );
    out
}

/// The layer crates a layer's `crates/<layer>/Cargo.toml` depends on (`monky-x`, normal
/// dependencies of any target; dev- and build-dependencies are not imports of the layer).
fn manifest_uses(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut normal = false;
    for line in manifest.lines().map(str::trim) {
        if let Some(h) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let table = h.rsplit('.').next().unwrap_or(h);
            let dep_table = h.split('.').any(|p| p == "dependencies");
            normal = h == "dependencies" || h.ends_with(".dependencies");
            // `[dependencies.monky-x]`
            if dep_table && !h.contains("dev-dependencies") && !h.contains("build-dependencies") {
                if let Some(name) = table.strip_prefix("monky-") {
                    out.push(name.to_string());
                }
            }
            continue;
        }
        if normal {
            if let Some(rest) = line.strip_prefix("monky-") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                    .collect();
                out.push(name);
            }
        }
    }
    out
}

fn layer_problems(arch: &str) -> Vec<String> {
    let mut out = Vec::new();
    let rows = layers(arch);
    let lib = lib_layers();
    for m in &lib {
        if !rows.iter().any(|r| &r.1 == m) {
            out.push(format!(
                "{ARCH}: the layer table (## Layers) has no row for `{m}` (a layer of src/lib.rs)"
            ));
        }
    }
    for (n, layer, place, modules, _) in &rows {
        if !lib.contains(layer) {
            out.push(format!(
                "{ARCH}:{n}: the layer `{layer}` is no layer crate of src/lib.rs"
            ));
            continue;
        }
        let places = names_in(place);
        for want in [format!("crates/{layer}/"), format!("src/{layer}/")] {
            if !places.contains(&want) {
                out.push(format!(
                    "{ARCH}:{n}: the layer `{layer}` does not say where it is (`{want}`)"
                ));
            }
        }
        let named = names_in(modules);
        let tick_files = (layer == "agent").then(|| {
            let (first, lines) = section(arch, "## Where the tick lives (`src/agent/`)");
            table_rows(first, &lines)
                .into_iter()
                .flat_map(|(_, c)| names_in(c.first().map_or("", |s| s.as_str())))
                .collect::<Vec<_>>()
        });
        for (m, test) in modules_of(&read(&format!("src/{layer}/lib.rs"))) {
            if test {
                continue;
            }
            let found = match &tick_files {
                Some(files) => files.contains(&format!("{layer}/{m}.rs")),
                None => named.contains(&m),
            };
            if !found {
                let table = if tick_files.is_some() {
                    "the table \"Where the tick lives\" has no row for `agent/".to_string()
                        + &m
                        + ".rs`"
                } else {
                    format!("the layer `{layer}` does not name its module `{m}`")
                };
                out.push(format!(
                    "{ARCH}:{n}: {table} (declared in src/{layer}/lib.rs)"
                ));
            }
        }
    }
    out
}

/// "every import points down": each layer's manifest depends only on layers below it in the
/// table, and the table's "uses" cell says exactly which. The compiler holds the rest: a crate
/// can name only what its manifest depends on, and cargo refuses a dependency cycle.
fn import_problems(arch: &str) -> Vec<String> {
    let rows = layers(arch);
    let mut out = Vec::new();
    for (i, (n, layer, _, _, uses)) in rows.iter().enumerate() {
        let manifest = read(&format!("crates/{layer}/Cargo.toml"));
        let deps = manifest_uses(&manifest);
        for d in &deps {
            if !rows[i + 1..].iter().any(|r| &r.1 == d) {
                out.push(format!(
                    "{ARCH}:{n}: `{layer}` depends on `{d}` (crates/{layer}/Cargo.toml), which is \
                     not a layer below it"
                ));
            }
        }
        let mut said = names_in(uses);
        let mut deps = deps.clone();
        said.sort();
        deps.sort();
        if said != deps {
            out.push(format!(
                "{ARCH}:{n}: the layer `{layer}` says it uses {said:?}; \
                 crates/{layer}/Cargo.toml depends on {deps:?}"
            ));
        }
    }
    out
}

/// A number followed by "tests" or "cases", maybe with a word between ("13 unit tests").
fn count_problems(doc: &str, text: &str) -> Vec<String> {
    let count = regex::Regex::new(r"(?i)\b\d+\s+(?:[a-z-]+\s+)?(?:tests?|cases)\b").unwrap();
    text.lines()
        .enumerate()
        .filter_map(|(n, line)| {
            let m = count.find(line)?;
            Some(format!(
                "{doc}:{}: a test count (`{}`): counts drift, say what the tests check",
                n + 1,
                m.as_str()
            ))
        })
        .collect()
}

/// Every key `Config` reads (its fields but the `#[serde(skip)]` ones) is in the example.
fn config_key_problems() -> Vec<String> {
    let src = read("src/host/config.rs");
    let example = read("config.example.yaml");
    let body = src
        .split_once("pub struct Config {")
        .and_then(|(_, rest)| rest.split_once("\n}"))
        .map(|(b, _)| b)
        .expect("src/host/config.rs: pub struct Config");
    let mut out = Vec::new();
    let mut skip = false;
    for line in body.lines().map(str::trim) {
        if line.starts_with("#[serde(skip") {
            skip = true;
            continue;
        }
        if let Some(field) = line.strip_prefix("pub ").and_then(|l| l.split_once(':')) {
            let key = field.0;
            let listed = example.lines().any(|l| {
                let l = l.trim_start_matches(['#', ' ']);
                l.strip_prefix(key).is_some_and(|r| r.starts_with(':'))
            });
            if !skip && !listed {
                out.push(format!(
                    "README.md: \"every key in `config.example.yaml`\", but config.example.yaml \
                     has no `{key}` (a field of host::config::Config)"
                ));
            }
            skip = false;
        }
    }
    out
}

/// Every `layer::module::Item` path in backticks or a fenced block names what is there: its module segments are
/// files of `src/` (`host::state` is `src/host/state.rs`), and each segment after them is
/// declared in that module or beneath it (an item, a method, a field, a variant, a re-export).
fn item_problems(doc: &str, text: &str) -> Vec<String> {
    let path = regex::Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+").unwrap();
    let layers = lib_layers();
    let root = Path::new(ROOT);
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        // a fenced block (the tick diagram) is code throughout
        let spans: Vec<&str> = match fenced {
            true => vec![line],
            false => line.split('`').skip(1).step_by(2).collect(),
        };
        for span in spans {
            for m in path.find_iter(span) {
                let w = m.as_str();
                let segs: Vec<&str> = w.split("::").skip_while(|s| *s == "crate").collect();
                if !segs.first().is_some_and(|s| layers.iter().any(|l| l == s)) {
                    continue;
                }
                let (mut dir, mut file) = (PathBuf::from("src"), PathBuf::new());
                let mut i = 0;
                while let Some(seg) = segs.get(i) {
                    let (f, m) = (dir.join(format!("{seg}.rs")), dir.join(seg).join("mod.rs"));
                    let lib = dir.join(seg).join("lib.rs");
                    if i == 0 && root.join(&lib).is_file() {
                        file = lib;
                    } else if root.join(&f).is_file() {
                        file = f;
                    } else if root.join(&m).is_file() {
                        file = m;
                    } else {
                        break;
                    }
                    dir = dir.join(seg);
                    i += 1;
                }
                let mut files = vec![root.join(&file)];
                walk(&root.join(&dir), &mut files);
                let module: String = files
                    .iter()
                    .filter_map(|f| std::fs::read_to_string(f).ok())
                    .collect::<Vec<_>>()
                    .join("\n");
                for seg in &segs[i..] {
                    if !declared(seg, &module) {
                        out.push(format!(
                            "{doc}:{}: `{w}`: no `{seg}` in {} or beneath it",
                            n + 1,
                            file.display()
                        ));
                        break;
                    }
                }
            }
        }
    }
    out
}

/// `name` is declared in `source`: an item, a field or variant, or a re-export.
fn declared(name: &str, source: &str) -> bool {
    let n = regex::escape(name);
    let item = format!(
        r"(?m)\b(?:fn|struct|enum|const|static|type|trait|mod|macro_rules!)\s+{n}\b|^\s*(?:pub(?:\([a-z]+\))?\s+)?{n}\s*[:,({{=]|\buse\s[^;]*\b{n}\b"
    );
    regex::Regex::new(&item).unwrap().is_match(source)
}

/// POLICY.md's bind rule (`## 3. The bind rule`) names every tree and file of the rule's
/// tables (`policy::PRIVATE_TREES`, `READ_ONLY_FILES`, `READ_ONLY_DEEP`; `/lib*` for the lot).
fn bind_tree_problems(policy: &str) -> Vec<String> {
    use crate::boundary::policy::{PRIVATE_TREES, READ_ONLY_DEEP, READ_ONLY_FILES};
    let (first, lines) = section(policy, "## 3. The bind rule");
    let words: Vec<String> = lines.iter().flat_map(|l| names_in(l)).collect();
    let named = |t: &str| {
        words.iter().any(|w| {
            w == t
                || w.strip_suffix('*')
                    .is_some_and(|prefix| !prefix.is_empty() && t.starts_with(prefix))
        })
    };
    let tables = [
        ("PRIVATE_TREES", PRIVATE_TREES),
        ("READ_ONLY_FILES", READ_ONLY_FILES),
        ("READ_ONLY_DEEP", READ_ONLY_DEEP),
    ];
    let mut out = Vec::new();
    for (table, entries) in tables {
        for t in entries.iter().filter(|t| !named(t)) {
            out.push(format!(
                "docs/POLICY.md:{first}: \"## 3. The bind rule\" does not name `{t}` \
                 (policy::{table})"
            ));
        }
    }
    out
}

/// OPERATIONS.md's metrics table (`## Metrics (Prometheus)`) has a row per family the
/// textfile writes (`host::metrics`, each `head(…, name, kind, …)`), with its type, and no other.
fn metrics_problems(ops: &str) -> Vec<String> {
    let src = read("src/host/metrics.rs");
    let head =
        regex::Regex::new(r#"head\(\s*&?(?:mut\s+)?\w+,\s*"(monky_deployd_\w+)",\s*"(\w+)""#)
            .unwrap();
    let code: Vec<(String, String)> = head
        .captures_iter(&src)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    let (first, lines) = section(ops, "## Metrics (Prometheus)");
    let rows: Vec<(usize, String, String)> = table_rows(first, &lines)
        .into_iter()
        .filter_map(|(n, c)| {
            let name = names_in(c.first()?).into_iter().next()?;
            let name = name.split('{').next()?.to_string();
            Some((n, name, c.get(1)?.clone()))
        })
        .collect();
    let mut out = Vec::new();
    for (name, kind) in &code {
        match rows.iter().find(|r| &r.1 == name) {
            None => out.push(format!(
                "docs/OPERATIONS.md:{first}: the metrics table has no row for `{name}` (src/host/metrics.rs)"
            )),
            Some((n, _, k)) if k != kind => out.push(format!(
                "docs/OPERATIONS.md:{n}: `{name}` is a {kind} in src/host/metrics.rs, not a {k}"
            )),
            Some(_) => {}
        }
    }
    for (n, name, _) in &rows {
        if !code.iter().any(|(c, _)| c == name) {
            out.push(format!(
                "docs/OPERATIONS.md:{n}: `{name}` is written by no `head(…)` of src/host/metrics.rs"
            ));
        }
    }
    assert!(
        code.len() > 10,
        "src/host/metrics.rs: the families were not found"
    );
    out
}

fn assert_none(what: &str, problems: Vec<String>) {
    assert!(problems.is_empty(), "{what}:\n  {}", problems.join("\n  "));
}

#[test]
fn every_path_the_docs_name_exists() {
    let rs = rust_files();
    let problems = docs()
        .iter()
        .flat_map(|(doc, text)| path_problems(doc, text, &rs))
        .collect();
    assert_none("paths in the docs that are not in the repository", problems);
}

#[test]
fn the_layer_table_names_every_module() {
    assert_none(
        "docs/ARCHITECTURE.md's layer table and the crate disagree",
        layer_problems(&read(ARCH)),
    );
}

#[test]
fn every_import_points_down() {
    assert_none(
        "an import points up the layers of docs/ARCHITECTURE.md",
        import_problems(&read(ARCH)),
    );
}

#[test]
fn the_docs_state_no_test_count() {
    let problems = docs()
        .iter()
        .flat_map(|(doc, text)| count_problems(doc, text))
        .collect();
    assert_none("test counts in the docs", problems);
}

#[test]
fn every_item_path_the_docs_name_is_declared() {
    let problems = docs()
        .iter()
        .flat_map(|(doc, text)| item_problems(doc, text))
        .collect();
    assert_none(
        "item paths in the docs that the code does not declare",
        problems,
    );
}

#[test]
fn the_bind_rule_section_names_every_tree() {
    assert_none(
        "docs/POLICY.md and the bind rule's tables disagree",
        bind_tree_problems(&read("docs/POLICY.md")),
    );
}

#[test]
fn the_metrics_table_is_what_the_textfile_writes() {
    assert_none(
        "docs/OPERATIONS.md's metrics table and src/host/metrics.rs disagree",
        metrics_problems(&read("docs/OPERATIONS.md")),
    );
}

#[test]
fn the_example_config_has_every_key() {
    assert_none("config.example.yaml", config_key_problems());
}

/// The checks can fail: each is fed a doc that says something untrue.
#[test]
fn the_checks_catch_what_is_untrue() {
    let rs = rust_files();
    let bad = "one\nthe transport (`src/transport`, `src/wire/http.rs`), `agent/nope.rs`\n";
    let p = path_problems("X.md", bad, &rs);
    assert_eq!(
        p,
        [
            "X.md:2: `src/transport` does not exist",
            "X.md:2: `agent/nope.rs` is no file of the repository"
        ],
        "{p:?}"
    );
    assert!(path_problems(
        "X.md",
        "`src/host/` `src/host/lib.rs` `src/wire/transport.rs` `crates/host/`",
        &rs
    )
    .is_empty());
    let i = item_problems(
        "X.md",
        "`host::state::save_tick`, `agent::Agent::tick`, `crate::boundary::policy::bind_rule`\n\
         `host::state::save_ticks`, `wire::nope::X`, `keys::anything`\n```\nmain ─► host::x::Y\n```\n",
    );
    assert_eq!(
        i,
        [
            "X.md:2: `host::state::save_ticks`: no `save_ticks` in src/host/state.rs or beneath it",
            "X.md:2: `wire::nope::X`: no `nope` in src/wire/lib.rs or beneath it",
            "X.md:4: `host::x::Y`: no `x` in src/host/lib.rs or beneath it"
        ],
        "{i:?}"
    );
    let policy = read("docs/POLICY.md");
    let b = bind_tree_problems(&policy.replace("`/etc/ssh`, ", ""));
    assert!(b.iter().any(|p| p.contains("`/etc/ssh`")), "{b:?}");
    assert_eq!(
        bind_tree_problems(&policy.replace("`/lib*`", "`/lib`")).len(),
        3
    );
    let ops = read("docs/OPERATIONS.md");
    let m = metrics_problems(&ops.replace(
        "| `monky_deployd_in_sync` | gauge |",
        "| `monky_deployd_in_sink` | counter |",
    ));
    assert!(
        m.iter()
            .any(|p| p.contains("no row for `monky_deployd_in_sync`")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|p| p.contains("`monky_deployd_in_sink` is written by no")),
        "{m:?}"
    );
    let m = metrics_problems(&ops.replace(
        "| `monky_deployd_in_sync` | gauge |",
        "| `monky_deployd_in_sync` | counter |",
    ));
    assert!(
        m.iter()
            .any(|p| p.contains("is a gauge in src/host/metrics.rs, not a counter")),
        "{m:?}"
    );
    let c = count_problems("X.md", "a\nwhole ticks (13 tests, ≈ 20 ms)\n");
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(c[0].starts_with("X.md:2: a test count"), "{c:?}");
    assert!(count_problems("X.md", "exit 75, 60 s, 0600; patch 0007); a test runs").is_empty());
    let arch = read(ARCH);
    let row = arch
        .lines()
        .find(|l| l.starts_with("| wire |"))
        .expect("the wire row");
    let no_wire = arch.replace(row, "");
    let l = layer_problems(&no_wire);
    assert!(l.iter().any(|p| p.contains("no row for `wire`")), "{l:?}");
    let no_registry = arch.replace(row, &row.replace("`registry`", "registry"));
    let l = layer_problems(&no_registry);
    assert!(
        l.iter()
            .any(|p| p.contains("does not name its module `registry`")),
        "{l:?}"
    );
    let no_lock = arch.replace("| `agent/lock.rs`", "| `agent/lock`");
    let l = layer_problems(&no_lock);
    assert!(
        l.iter().any(|p| p.contains("no row for `agent/lock.rs`")),
        "{l:?}"
    );
    let wire_on_top = arch
        .replace(row, "")
        .replacen("| cli |", &format!("{row}\n| cli |"), 1);
    let i = import_problems(&wire_on_top);
    assert!(
        i.iter()
            .any(|p| p.contains("`cli` depends on `wire` (crates/cli/Cargo.toml), which is not")),
        "{i:?}"
    );
    let wire_says_host = arch.replace(row, &row.replace("| `base` |", "| `base`, `host` |"));
    let i = import_problems(&wire_says_host);
    assert!(
        i.iter()
            .any(|p| p.contains("the layer `wire` says it uses [\"base\", \"host\"]")),
        "{i:?}"
    );
    assert_eq!(
        manifest_uses(
            "[dependencies]\nmonky-base.workspace = true\nserde = \"1\"\n\
             [dependencies.monky-wire]\nworkspace = true\n\
             [target.'cfg(unix)'.dependencies]\nmonky-host = { workspace = true }\n\
             [dev-dependencies]\nmonky-agent.workspace = true\n\
             [dev-dependencies.monky-cli]\nworkspace = true\n"
        ),
        ["base", "wire", "host"]
    );
}

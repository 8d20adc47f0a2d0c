//! Issue 41: real compose files from public projects (tests/data/compose-corpus, pinned by
//! repository, path and commit in `sources.json` and CORPUS.md), each bundled the way an
//! operator would, run through everything the apply checks before a lease
//! ([`Agent::pre_lease_checks`], `plan`'s first list) on a box with the default config, and
//! compared with `expected.json`. Both file passes list every refusal, as `plan` does.
//! `MONKY_CORPUS_BLESS=1` writes `expected.json` from what the
//! checks say now instead of comparing; `corpus_table` prints the per-file table
//! (`-- --nocapture`). tests/data/compose-corpus/CORPUS.md says how the corpus was made.

use std::collections::BTreeMap;

use base64::Engine as _;

use super::*;

include!("corpus_files.rs");

/// Refusals that judge the box the test runs on, not the bundle (the fake engine's data root
/// is a temporary directory of this machine): left out of the verdict.
const BOX_STATE: &[RefusalCode] = &[
    RefusalCode::DiskInsufficient,
    RefusalCode::DockerUnavailable,
];

/// What the checks say of one corpus entry.
struct Verdict {
    /// Every refusal, in the order the checks give them.
    refusals: Vec<Refusal>,
    /// Box-state refusals left out ([`BOX_STATE`]).
    box_state: Vec<Refusal>,
}

impl Verdict {
    fn verdict(&self) -> &'static str {
        if self.refusals.is_empty() {
            "ship"
        } else {
            "refuse"
        }
    }

    /// The codes, each once, in the order first met.
    fn codes(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in &self.refusals {
            let c = r.code.as_str().to_string();
            if !v.contains(&c) {
                v.push(c);
            }
        }
        v
    }

    fn expected(&self) -> serde_json::Value {
        serde_json::json!({"verdict": self.verdict(), "codes": self.codes()})
    }
}

/// A box with the default config (its env, project and state directory aside) and a bundle
/// the way the agent sees it: the wire body decoded, every path checked, the sha verified.
fn judge(b: &TestBox, rt: &tokio::runtime::Runtime, slug: &str) -> Verdict {
    let files = corpus_bundle_files(&corpus_root().join(slug), ENV);
    let sha = bundle::canonical_sha(files.iter().map(|(p, c)| (p.as_str(), c.as_slice())));
    let wire: monky_wire::tenancy::BundleWire = serde_json::from_value(serde_json::json!({
        "env_id": ENV,
        "sha": sha,
        "files": files.iter().map(|(p, c)| serde_json::json!({
            "path": p,
            "content_b64": base64::engine::general_purpose::STANDARD.encode(c),
        })).collect::<Vec<_>>(),
    }))
    .unwrap();
    let (mut refusals, mut box_state) = (Vec::new(), Vec::new());
    let bundle = match Bundle::decode(wire, ENV, &sha) {
        Ok(b) => b,
        Err(r) => {
            return Verdict {
                refusals: vec![r],
                box_state,
            }
        }
    };
    let agent = &b.agent;
    for r in rt.block_on(agent.pre_lease_checks(&bundle)).refusals {
        // the host's routes are this machine's (a test's bridge network, say)
        let host_route =
            r.code == RefusalCode::NetworkRefused && r.detail.contains("a route of the host");
        if BOX_STATE.contains(&r.code) || host_route {
            box_state.push(r);
        } else {
            refusals.push(r);
        }
    }
    Verdict {
        refusals,
        box_state,
    }
}

fn corpus_box() -> TestBox {
    TestBox::with(|c| {
        c.compose_project = format!("monky-{ENV}");
        c.registry_host = "192.0.2.1".into();
    })
}

fn all_verdicts() -> BTreeMap<String, Verdict> {
    let b = corpus_box();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let v = corpus_slugs(&corpus_root())
        .into_iter()
        .map(|s| {
            let v = judge(&b, &rt, &s);
            (s, v)
        })
        .collect();
    // a name lookup the address space gave up on (an egress proxy named in this machine's
    // HTTPS_PROXY) is not waited for
    rt.shutdown_background();
    v
}

fn sources() -> serde_json::Map<String, serde_json::Value> {
    let p = corpus_root().join("sources.json");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn one_line(s: &str, max: usize) -> String {
    let s = s.replace('\n', " ");
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// The corpus's verdicts are the recorded ones (`expected.json`); with `MONKY_CORPUS_BLESS=1`
/// they are recorded instead.
#[test]
fn corpus_verdicts_match_expected_json() {
    let verdicts = all_verdicts();
    let path = corpus_root().join("expected.json");
    let now: serde_json::Map<String, serde_json::Value> = verdicts
        .iter()
        .map(|(s, v)| (s.clone(), v.expected()))
        .collect();
    if std::env::var("MONKY_CORPUS_BLESS").as_deref() == Ok("1") {
        let mut text = serde_json::to_string_pretty(&now).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        eprintln!("wrote {} ({} entries)", path.display(), now.len());
        return;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (MONKY_CORPUS_BLESS=1 writes it)", path.display()));
    let want: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
    let mut diffs = Vec::new();
    for slug in want
        .keys()
        .chain(now.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (w, n) = (want.get(slug), now.get(slug));
        if w == n {
            continue;
        }
        let show = |v: Option<&serde_json::Value>| match v {
            None => "(absent)".to_string(),
            Some(v) => format!(
                "{} {}",
                v["verdict"].as_str().unwrap_or("?"),
                v["codes"]
                    .as_array()
                    .map(|c| c
                        .iter()
                        .filter_map(|x| x.as_str())
                        .collect::<Vec<_>>()
                        .join(","))
                    .unwrap_or_default()
            ),
        };
        let first = verdicts
            .get(slug)
            .and_then(|v| v.refusals.first())
            .map(|r| one_line(&r.to_string(), 110))
            .unwrap_or_default();
        diffs.push(format!(
            "{slug:<28} | expected {:<44} | now {:<44} | {first}",
            show(w),
            show(n)
        ));
    }
    assert!(
        diffs.is_empty(),
        "{} corpus entries differ from {} (MONKY_CORPUS_BLESS=1 records the current verdicts):\n{}",
        diffs.len(),
        path.display(),
        diffs.join("\n")
    );
}

/// The per-file table: slug, source, verdict, every code, the first refusal in full
/// (`cargo test … -- corpus_table --nocapture`).
#[test]
fn corpus_table() {
    let verdicts = all_verdicts();
    let src = sources();
    let mut out = String::new();
    out.push_str(&format!(
        "{:<28} | {:<40} | {:<6} | {:<50} | first refusal\n",
        "slug", "source", "before", "codes"
    ));
    let mut ship = 0;
    for (slug, v) in &verdicts {
        let source = src
            .get(slug)
            .and_then(|s| s["repo"].as_str())
            .unwrap_or("?");
        if v.verdict() == "ship" {
            ship += 1;
        }
        out.push_str(&format!(
            "{slug:<28} | {source:<40} | {:<6} | {:<50} | {}\n",
            v.verdict(),
            v.codes().join(","),
            v.refusals
                .first()
                .map(|r| one_line(&r.to_string(), 160))
                .unwrap_or_default()
        ));
        for r in v.refusals.iter().skip(1) {
            out.push_str(&format!(
                "{:<28} |   also: {}\n",
                "",
                one_line(&r.to_string(), 200)
            ));
        }
        for r in &v.box_state {
            out.push_str(&format!("{:<28} |   (box state, left out): {r}\n", ""));
        }
    }
    out.push_str(&format!(
        "{} files: {ship} ship as published, {} refused\n",
        verdicts.len(),
        verdicts.len() - ship
    ));
    println!("{out}");
    assert!(!verdicts.is_empty());
}

/// Every entry is pinned (repository, path, 40-hex commit) and listed in CORPUS.md; nothing is
/// pinned that is not in the corpus; the corpus directory holds nothing else.
#[test]
fn corpus_is_pinned_and_listed() {
    let root = corpus_root();
    let slugs = corpus_slugs(&root);
    let src = sources();
    let md = std::fs::read_to_string(root.join("CORPUS.md")).unwrap();
    let notice = std::fs::read_to_string(root.join("NOTICE")).unwrap();
    for slug in &slugs {
        let s = src
            .get(slug)
            .unwrap_or_else(|| panic!("{slug}: not in sources.json"));
        let commit = s["commit"].as_str().unwrap_or_default();
        assert!(
            commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "{slug}: commit {commit:?}"
        );
        let repo = s["repo"].as_str().unwrap_or_default();
        assert!(
            !s["path"].as_str().unwrap_or_default().is_empty(),
            "{slug}: path"
        );
        assert!(
            md.contains(&format!("| {slug} |")),
            "{slug}: no CORPUS.md row"
        );
        assert!(md.contains(commit), "{slug}: CORPUS.md lacks its commit");
        assert!(notice.contains(repo), "{slug}: NOTICE lacks {repo}");
        // the placeholders it lists are the only files beside the bundle's own
        let files: Vec<String> = corpus_bundle_files(&root.join(slug), ENV)
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| {
                !["compose.yaml", "env.template", "secrets.manifest.json"].contains(&p.as_str())
            })
            .collect();
        let listed: Vec<String> = s["placeholders"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(files, listed, "{slug}: files beside the bundle's own");
    }
    for k in src.keys() {
        assert!(
            slugs.contains(k),
            "sources.json names {k}, which is not in the corpus"
        );
    }
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            slugs.contains(&name) || CORPUS_META.contains(&name.as_str()),
            "{name}: neither a corpus entry nor one of {CORPUS_META:?}"
        );
    }
}

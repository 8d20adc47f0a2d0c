//! The canonical sha and path safety: `Bundle::decode` accepts exactly the sha an independent
//! implementation computes and never a path that leaves the release directory.

use std::collections::BTreeSet;
use std::path::{Component, Path};

use super::{any_path, config, safe_path, wire, ENV};
use crate::boundary::bundle::{self, Bundle};
use proptest::prelude::*;

/// Lexically: does `base.join(p)` stay inside `base`, through plain components only?
fn stays_inside(p: &str) -> bool {
    let joined = Path::new("/base").join(p);
    let rel = match joined.strip_prefix("/base") {
        Ok(r) => r.to_path_buf(),
        Err(_) => return false,
    };
    !rel.as_os_str().is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)))
}

fn minimal_files() -> Vec<(String, Vec<u8>)> {
    vec![(
        "compose.yaml".into(),
        b"services:\n  web:\n    image: example/web:1\n".to_vec(),
    )]
}

proptest! {
    #![proptest_config(config())]

    /// The agent's sha equals the test tenancy's independent implementation, decoding accepts
    /// exactly that sha, and any change of content, path or the asked-for sha is refused.
    #[test]
    fn canonical_sha_matches_an_independent_implementation(
        extra in prop::collection::btree_map(safe_path(), prop::collection::vec(any::<u8>(), 0..64), 0..6)
            .prop_filter("a path is not also a directory", |m| {
                !m.keys().any(|a| m.keys().any(|b| b.starts_with(&format!("{a}/"))))
            }),
        flip in any::<prop::sample::Index>(),
    ) {
        let mut files = minimal_files();
        files.extend(extra);
        let want = monky_test_tenancy::bundle_sha(&files);
        let ours = bundle::canonical_sha(files.iter().map(|(p, c)| (p.as_str(), c.as_slice())));
        prop_assert_eq!(&ours, &want);
        // order of the wire files does not matter
        let mut rev = files.clone();
        rev.reverse();
        let b = Bundle::decode(wire(&rev, &want), ENV, &want).map_err(|r| TestCaseError::fail(r.to_string()))?;
        prop_assert_eq!(&b.sha, &want);
        prop_assert_eq!(b.files.len(), files.len());
        // one byte more in one file: refused
        let mut t = files.clone();
        let i = flip.index(t.len());
        t[i].1.push(0);
        let r = Bundle::decode(wire(&t, &want), ENV, &want).err().expect("tampered content accepted");
        prop_assert_eq!(r.code, "BUNDLE_SHA_MISMATCH");
        // the body claiming another sha than the URL: refused
        let other = "0".repeat(64);
        let r = Bundle::decode(wire(&files, &other), ENV, &want).err().expect("body sha ignored");
        prop_assert_eq!(r.code, "BUNDLE_SHA_MISMATCH");
    }

    /// Whatever the paths, a bundle either decodes with every path inside the release, or is
    /// refused before anything is written — and staging it writes only below the staging dir.
    #[test]
    fn any_path_set_decodes_safely_or_is_refused(
        paths in prop::collection::vec(any_path(), 0..6),
    ) {
        let mut files = minimal_files();
        files.extend(paths.iter().map(|p| (p.clone(), b"x".to_vec())));
        let sha = monky_test_tenancy::bundle_sha(&files);
        match Bundle::decode(wire(&files, &sha), ENV, &sha) {
            Ok(b) => {
                for p in b.files.keys() {
                    prop_assert!(stays_inside(p), "{:?} escapes", p);
                    prop_assert!(bundle::check_path(p).is_ok());
                }
                let uniq: BTreeSet<&String> = files.iter().map(|(p, _)| p).collect();
                prop_assert_eq!(uniq.len(), files.len(), "duplicates accepted");
                let d = tempfile::tempdir().unwrap();
                let stage = d.path().join("staging").join("sha");
                bundle::stage(&stage, &b, "").map_err(|e| TestCaseError::fail(e.to_string()))?;
                let outside: Vec<_> = std::fs::read_dir(d.path()).unwrap().flatten().map(|e| e.file_name()).collect();
                prop_assert_eq!(outside.len(), 1, "written outside staging: {:?}", outside);
                for p in b.files.keys() {
                    prop_assert!(stage.join(p).is_file());
                }
            }
            Err(r) => prop_assert!(
                ["BUNDLE_PATH_UNSAFE", "BUNDLE_INVALID"].contains(&r.code.as_str()),
                "unexpected refusal {}", r
            ),
        }
    }

    /// `check_path` accepts only relative, `/`-separated paths of plain components.
    #[test]
    fn check_path_accepts_only_plain_relative_paths(p in any_path()) {
        match bundle::check_path(&p) {
            Ok(()) => {
                prop_assert!(stays_inside(&p), "{:?}", p);
                prop_assert!(!p.contains('\0') && !p.contains('\\') && !p.starts_with('/'));
                prop_assert!(p.len() <= bundle::MAX_PATH);
                prop_assert!(p.split('/').all(|c| !c.is_empty() && c != "." && c != ".."));
            }
            Err(e) => prop_assert!(!e.to_string().contains('\0'), "the message carries a raw NUL: {:?}", e),
        }
    }
}

//! Property tests of the parsers and checks that stand between tenancy, OpenBao and the box:
//! check-in, lease, error and bundle answers of any shape, OpenBao's login, lookup-self,
//! renew-self and KV answers, bundle decoding and the canonical sha, path safety, the compose
//! privilege analysis, `.env` rendering and the redactor. No panic, no escape, no value surviving.

mod bao;
mod bundle;
mod bundle_body;
mod compose;
mod dotenv;
mod json;
mod redactor;
mod tenancy;

use crate::wire::tenancy::{BundleFileWire, BundleWire};
use base64::Engine;
use proptest::prelude::*;

const ENV: &str = "env-prop-01";

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn wire(files: &[(String, Vec<u8>)], sha: &str) -> BundleWire {
    BundleWire {
        env_id: ENV.into(),
        sha: sha.into(),
        files: files
            .iter()
            .map(|(p, c)| BundleFileWire {
                path: p.clone(),
                content_b64: b64(c),
            })
            .collect(),
        signatures: Vec::new(),
        statement: None,
    }
}

/// A safe relative path: 1–3 components of `[a-z0-9._-]`, none `.` or `..`, never one of the
/// bundle's own well-known names.
fn safe_path() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-z0-9_-][a-z0-9._-]{0,7}", 1..4)
        .prop_map(|c| format!("d/{}", c.join("/")))
        .prop_filter("no dot components", |p| {
            !p.split('/').any(|c| c == "." || c == "..")
        })
}

/// Any path at all, biased towards the shapes that escape.
fn any_path() -> impl Strategy<Value = String> {
    prop_oneof![
        safe_path(),
        "[a-z./\\\\\u{0}~]{0,12}",
        prop::collection::vec(
            prop_oneof![
                Just("..".to_string()),
                Just(".".to_string()),
                Just(String::new()),
                "[a-z]{1,3}"
            ],
            1..5
        )
        .prop_map(|c| c.join("/")),
        "/[a-z/.]{0,10}",
        ".{0,20}",
    ]
}

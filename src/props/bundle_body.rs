//! Everything tenancy sends in a bundle body: decoded whole or refused with the code
//! PROTOCOL.md's order of checks predicts, never half filled.

use std::collections::{BTreeMap, BTreeSet};

use super::json::{any_flag, any_json, any_number, any_sha, any_stringish, object_of, scalar_doc};
use super::{any_path, b64, config, safe_path, ENV};
use crate::boundary::bundle::{self, Bundle};
use crate::wire::tenancy::BundleWire;
use base64::Engine;
use proptest::prelude::*;

/// Mostly a plain count, sometimes any of [`any_number`]'s odd cases.
fn mostly_u64() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![8 => (0u64..1_000_000).prop_map(|n| serde_json::json!(n)), 1 => any_number()]
}

/// A file's bytes: a JSON document of the given shape, another shape, or not JSON at all.
fn json_file(doc: impl Strategy<Value = serde_json::Value> + 'static) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        32 => doc.prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => scalar_doc().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => prop::collection::vec(any::<u8>(), 0..40),
    ]
    .boxed()
}

fn meta_doc() -> impl Strategy<Value = serde_json::Value> {
    let agent = prop_oneof![
        24 => object_of(vec![("allow_privileged", any_flag().boxed()), ("allow_rollback", any_flag().boxed())], 0.8),
        1 => scalar_doc(),
    ];
    object_of(
        vec![
            ("serial", mostly_u64().boxed()),
            ("need_bytes", mostly_u64().boxed()),
            ("agent", agent.boxed()),
        ],
        0.8,
    )
}

fn manifest_doc() -> impl Strategy<Value = serde_json::Value> {
    let path = prop_oneof![
        4 => "[a-z_]{1,8}".prop_map(|n| format!("monky/data/{ENV}/see/{n}")),
        1 => "monky/data/[a-z-]{1,10}/see/[a-z]{1,4}",
        1 => ".{0,30}",
    ];
    let entry = prop_oneof![
        48 => object_of(vec![
            ("var", any_stringish("[A-Z_][A-Z0-9_]{0,6}|.{0,6}")),
            ("path", any_stringish(path)),
            ("key", any_stringish("[a-z]{0,6}")),
            ("version", mostly_u64().boxed()),
            ("use", any_stringish(prop_oneof![Just("registry-auth".to_string()), "[a-z-]{0,10}".prop_map(|s| s)])),
        ], 0.95),
        1 => scalar_doc(),
    ];
    let entries = prop_oneof![
        24 => prop::collection::vec(entry, 0..5).prop_map(serde_json::Value::Array),
        1 => scalar_doc(),
    ];
    object_of(vec![("entries", entries.boxed())], 0.8)
}

/// What serde accepts for a field that is a `u64` / `bool` / `String` / `Option<…>`.
fn is_u64(v: Option<&serde_json::Value>) -> bool {
    v.is_none_or(|v| v.is_u64())
}
fn is_bool(v: Option<&serde_json::Value>) -> bool {
    v.is_none_or(|v| v.is_boolean())
}
fn is_opt_str(v: Option<&serde_json::Value>) -> bool {
    v.is_none_or(|v| v.is_null() || v.is_string())
}
fn is_opt_u64(v: Option<&serde_json::Value>) -> bool {
    v.is_none_or(|v| v.is_null() || v.is_u64())
}

/// Independently of serde's derive: is this `bundle.json` a well-typed `Meta`?
fn meta_well_typed(bytes: &[u8]) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let o = v.as_object()?;
    let agent_ok = o.get("agent").is_none_or(|a| {
        a.as_object()
            .is_some_and(|a| is_bool(a.get("allow_privileged")) && is_bool(a.get("allow_rollback")))
    });
    (is_u64(o.get("serial")) && is_u64(o.get("need_bytes")) && agent_ok).then_some(v)
}

/// … and this `secrets.manifest.json` a well-typed `Manifest`?
fn manifest_well_typed(bytes: &[u8]) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let o = v.as_object()?;
    let entries_ok = o.get("entries").is_none_or(|e| {
        e.as_array().is_some_and(|es| {
            es.iter().all(|e| {
                e.as_object().is_some_and(|e| {
                    is_opt_str(e.get("var"))
                        && e.get("path").is_some_and(|p| p.is_string())
                        && e.get("key").is_none_or(|k| k.is_string())
                        && is_opt_u64(e.get("version"))
                        && is_opt_str(e.get("use"))
                })
            })
        })
    });
    entries_ok.then_some(v)
}

/// One entry of the body's `files`: well formed, or with a field of the wrong type or missing,
/// or content that is not base64.
#[derive(Debug, Clone)]
enum FileEntry {
    Good(String, Vec<u8>),
    BadBase64(String),
    Wrong(serde_json::Value),
}

fn bad_file_entry() -> impl Strategy<Value = FileEntry> {
    use serde_json::json;
    prop_oneof![
        safe_path().prop_map(FileEntry::BadBase64),
        any_json().prop_map(|p| FileEntry::Wrong(json!({"path": p, "content_b64": "eA=="}))),
        any_json().prop_map(|c| FileEntry::Wrong(json!({"path": "d/x", "content_b64": c}))),
        Just(FileEntry::Wrong(json!({"path": "d/x"}))),
        scalar_doc().prop_map(FileEntry::Wrong),
    ]
}

#[derive(Debug, Clone)]
struct BodyCase {
    body: serde_json::Value,
    /// The sha the URL asked for (always well formed: `parse_checkin` guarantees it).
    want: String,
}

fn bundle_body() -> impl Strategy<Value = BodyCase> {
    use serde_json::{json, Value};
    let files = (
        prop::option::weighted(0.9, Just(())),
        prop::option::weighted(0.8, json_file(meta_doc())),
        prop::option::weighted(0.8, json_file(manifest_doc())),
        prop::option::of("(A=\\$\\{[A-Z_]{1,4}\\}\n|B=x\n|#c\n){0,3}"),
        prop::collection::vec(prop_oneof![4 => safe_path(), 1 => any_path()], 0..3),
        prop::option::weighted(0.08, bad_file_entry()),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(compose, meta, man, tmpl, others, bad, at)| {
            let mut f: Vec<FileEntry> = Vec::new();
            if compose.is_some() {
                f.push(FileEntry::Good(
                    "compose.yaml".into(),
                    b"services:\n  web:\n    image: example/web:1\n".to_vec(),
                ));
            }
            if let Some(m) = meta {
                f.push(FileEntry::Good("bundle.json".into(), m));
            }
            if let Some(m) = man {
                f.push(FileEntry::Good("secrets.manifest.json".into(), m));
            }
            if let Some(t) = tmpl {
                f.push(FileEntry::Good("env.template".into(), t.into_bytes()));
            }
            f.extend(
                others
                    .into_iter()
                    .map(|p| FileEntry::Good(p, b"x".to_vec())),
            );
            if let Some(b) = bad {
                let i = at.index(f.len() + 1);
                f.insert(i, b);
            }
            f
        });
    let signatures = prop_oneof![
        4 => Just(None),
        8 => prop::collection::vec(
            prop_oneof![
                48 => object_of(vec![
                    ("key_id", any_stringish(prop_oneof![Just("release-test".to_string()), ".{0,70}".prop_map(|s| s)])),
                    ("alg", any_stringish(prop_oneof![Just("ed25519".to_string()), "[a-z0-9]{0,8}".prop_map(|s| s)])),
                    ("sig", any_stringish(prop_oneof![
                        prop::collection::vec(any::<u8>(), 64).prop_map(|b| b64(&b)),
                        ".{0,90}".prop_map(|s| s),
                    ])),
                ], 0.8),
                1 => scalar_doc(),
            ],
            0..3,
        ).prop_map(|v| Some(Value::Array(v))),
        1 => scalar_doc().prop_map(Some),
    ];
    (
        files,
        prop_oneof![24 => Just(Value::String(ENV.into())), 1 => any_stringish("[a-z0-9-]{0,12}"), 1 => Just(Value::Null)],
        prop_oneof![
            24 => Just("right"),
            2 => Just("upper"),
            1 => Just("missing"),
            3 => Just("other"),
        ],
        any_sha(),
        signatures,
        prop::option::weighted(0.1, "[a-f0-9]{64}"),
        prop::collection::btree_map("[a-z_]{1,10}", any_json(), 0..3),
        prop::option::weighted(0.03, scalar_doc()),
    )
        .prop_map(|(files, env, sha_kind, odd_sha, sigs, other_want, extra, whole)| {
            let good: Vec<(String, Vec<u8>)> = files
                .iter()
                .filter_map(|f| match f {
                    FileEntry::Good(p, c) => Some((p.clone(), c.clone())),
                    _ => None,
                })
                .collect();
            let real = monky_test_tenancy::bundle_sha(&good);
            let want = other_want.unwrap_or_else(|| real.clone());
            if let Some(w) = whole {
                return BodyCase { body: w, want };
            }
            let mut m: serde_json::Map<String, Value> = extra.into_iter().collect();
            m.insert("env_id".into(), env);
            match sha_kind {
                "right" => {
                    m.insert("sha".into(), json!(real));
                }
                "upper" => {
                    m.insert("sha".into(), json!(real.to_ascii_uppercase()));
                }
                "missing" => {
                    m.remove("sha");
                }
                _ => {
                    m.insert("sha".into(), odd_sha);
                }
            }
            let files: Vec<Value> = files
                .into_iter()
                .map(|f| match f {
                    FileEntry::Good(p, c) => json!({"path": p, "content_b64": b64(&c)}),
                    FileEntry::BadBase64(p) => json!({"path": p, "content_b64": "eA=!"}),
                    FileEntry::Wrong(v) => v,
                })
                .collect();
            m.insert("files".into(), Value::Array(files));
            match sigs {
                Some(s) => {
                    m.insert("signatures".into(), s);
                }
                None => {
                    m.remove("signatures");
                }
            }
            BodyCase { body: Value::Object(m), want }
        })
}

/// Independently of serde's derive: does this body deserialise as a `BundleWire`?
fn wire_well_typed(v: &serde_json::Value) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    let str_field = |x: Option<&serde_json::Value>| x.is_some_and(|s| s.is_string());
    let files_ok = o.get("files").and_then(|f| f.as_array()).is_some_and(|fs| {
        fs.iter().all(|f| {
            f.as_object()
                .is_some_and(|f| str_field(f.get("path")) && str_field(f.get("content_b64")))
        })
    });
    let sigs_ok = o.get("signatures").is_none_or(|s| {
        s.as_array().is_some_and(|ss| {
            ss.iter().all(|s| {
                s.as_object().is_some_and(|s| {
                    ["key_id", "alg", "sig"]
                        .iter()
                        .all(|k| s.get(*k).is_none_or(|x| x.is_string()))
                })
            })
        })
    });
    str_field(o.get("env_id")) && str_field(o.get("sha")) && files_ok && sigs_ok
}

/// The refusal `Bundle::decode` must give for a well-typed body, worked out step by step from
/// PROTOCOL.md's order of checks (env, paths, content, sha, compose.yaml, the two JSON files).
fn expected_refusal(w: &BundleWire, want: &str) -> Option<(&'static str, &'static str)> {
    if w.env_id != ENV {
        return Some(("BUNDLE_ENV_MISMATCH", ""));
    }
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for f in &w.files {
        if bundle::check_path(&f.path).is_err() {
            return Some(("BUNDLE_PATH_UNSAFE", ""));
        }
        let Ok(c) = base64::engine::general_purpose::STANDARD.decode(&f.content_b64) else {
            return Some(("BUNDLE_INVALID", ""));
        };
        if files.iter().any(|(p, _)| *p == f.path) {
            return Some(("BUNDLE_PATH_UNSAFE", ""));
        }
        files.push((f.path.clone(), c));
    }
    if files
        .iter()
        .any(|(a, _)| files.iter().any(|(b, _)| b.starts_with(&format!("{a}/"))))
    {
        return Some(("BUNDLE_PATH_UNSAFE", ""));
    }
    if monky_test_tenancy::bundle_sha(&files) != want || w.sha.to_ascii_lowercase() != want {
        return Some(("BUNDLE_SHA_MISMATCH", ""));
    }
    let get = |p: &str| {
        files
            .iter()
            .find(|(q, _)| q == p)
            .map(|(_, c)| c.as_slice())
    };
    if get("compose.yaml").is_none() {
        return Some(("BUNDLE_INVALID", "no compose.yaml"));
    }
    if get("bundle.json").is_some_and(|b| meta_well_typed(b).is_none()) {
        return Some(("BUNDLE_INVALID", "bundle.json: "));
    }
    if get("secrets.manifest.json").is_some_and(|b| manifest_well_typed(b).is_none()) {
        return Some(("BUNDLE_INVALID", "secrets.manifest.json: "));
    }
    None
}

fn signing_key() -> (ed25519_dalek::SigningKey, crate::boundary::signing::Keys) {
    let k = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let cfg = BTreeMap::from([(
        "release-test".to_string(),
        b64(k.verifying_key().as_bytes()),
    )]);
    (k, crate::boundary::signing::Keys::parse(&cfg).unwrap())
}

proptest! {
    #![proptest_config(config())]

    /// Any bundle body through what the apply does with it (`Tenancy::bundle`'s
    /// `serde_json::from_slice::<BundleWire>`, then `Bundle::decode`, the manifest and template
    /// checks, the signature check): a body with a field of the wrong type is a protocol error
    /// (exit 1) exactly when an independent reading says so; a well-typed one is refused with the
    /// code PROTOCOL.md's order of checks predicts, or decoded with its metadata and manifest
    /// exactly as sent — never half filled; nothing panics.
    #[test]
    fn any_bundle_body_is_decoded_whole_or_refused_with_its_code(case in bundle_body()) {
        use crate::wire::tenancy::TenancyError;
        let body = serde_json::to_vec(&case.body).unwrap();
        let w: BundleWire = match serde_json::from_slice(&body) {
            Ok(w) => {
                prop_assert!(wire_well_typed(&case.body), "ill-typed body accepted: {}", case.body);
                w
            }
            Err(e) => {
                prop_assert!(!wire_well_typed(&case.body), "well-typed body refused ({e}): {}", case.body);
                let f = crate::agent::Failure::from(TenancyError::Protocol { what: "bundle", detail: e.to_string() });
                prop_assert_eq!(f.exit() as u8, 1);
                prop_assert!(f.message().contains("bundle"), "{}", f.message());
                return Ok(());
            }
        };
        let mut w = w;
        let sigs = std::mem::take(&mut w.signatures);
        let expected = expected_refusal(&w, &case.want);
        let sent_files = w.files.len();
        match Bundle::decode(w, ENV, &case.want) {
            Err(r) => {
                let (code, prefix) = expected.ok_or_else(|| TestCaseError::fail(format!("refused {r}, expected success")))?;
                prop_assert_eq!(r.code, code, "{}", r);
                prop_assert!(r.detail.starts_with(prefix), "{}", r);
                prop_assert!(!r.detail.is_empty());
            }
            Ok(b) => {
                prop_assert!(expected.is_none(), "decoded, expected {:?}", expected);
                prop_assert_eq!(&b.sha, &case.want);
                prop_assert_eq!(b.files.len(), sent_files);
                prop_assert!(!b.compose().is_empty());
                // the metadata is what bundle.json said, field by field (or all defaults)
                let meta = b.files.get("bundle.json").map(|m| meta_well_typed(m).unwrap()).unwrap_or_default();
                let u = |k: &str| meta.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
                let flag = |k: &str| meta.pointer(&format!("/agent/{k}")).and_then(|x| x.as_bool()).unwrap_or(false);
                prop_assert_eq!(b.meta.serial, u("serial"));
                prop_assert_eq!(b.meta.need_bytes, u("need_bytes"));
                prop_assert_eq!(b.meta.agent.allow_privileged, flag("allow_privileged"));
                prop_assert_eq!(b.meta.agent.allow_rollback, flag("allow_rollback"));
                // and the manifest entry by entry
                let man = b.files.get("secrets.manifest.json").map(|m| manifest_well_typed(m).unwrap()).unwrap_or_default();
                let sent: Vec<serde_json::Value> = man.get("entries").and_then(|e| e.as_array()).cloned().unwrap_or_default();
                prop_assert_eq!(b.manifest.entries.len(), sent.len());
                for (e, s) in b.manifest.entries.iter().zip(&sent) {
                    prop_assert_eq!(Some(e.path.as_str()), s["path"].as_str());
                    prop_assert_eq!(e.key.as_str(), s.get("key").and_then(|k| k.as_str()).unwrap_or("value"));
                    prop_assert_eq!(e.var.as_deref(), s.get("var").and_then(|k| k.as_str()));
                    prop_assert_eq!(e.version, s.get("version").and_then(|k| k.as_u64()));
                    prop_assert_eq!(e.use_.as_deref(), s.get("use").and_then(|k| k.as_str()));
                }
                // the checks after decoding: a pass means every entry is usable, else a named code
                let prefix = format!("monky/data/{ENV}/see/");
                match b.check_manifest("monky", ENV) {
                    Ok(()) => {
                        let mut vars = BTreeSet::new();
                        for e in &b.manifest.entries {
                            prop_assert!(e.path.starts_with(&prefix) && e.path.len() > prefix.len(), "{}", e.path);
                            if !e.is_registry_auth() {
                                let v = e.var.as_deref().unwrap_or_default();
                                prop_assert!(bundle::valid_var(v) && vars.insert(v.to_string()), "{:?}", v);
                            }
                        }
                    }
                    Err(r) => prop_assert!(["MANIFEST_PATH_FOREIGN", "BUNDLE_INVALID"].contains(&r.code.as_str()), "{}", r),
                }
                if let Err(r) = b.check_env_template() {
                    prop_assert!(["ENV_INCOMPLETE", "ENV_VALUE_UNSAFE"].contains(&r.code.as_str()), "{}", r);
                }
                // signatures of any shape: no configured key → not judged; a configured key →
                // refused by name (never carrying signature bytes) unless one really verifies
                prop_assert!(crate::boundary::signing::Keys::default().verify(&b.sha, &sigs).unwrap().is_none());
                let (sk, keys) = signing_key();
                let r = keys.verify(&b.sha, &sigs).expect_err("an arbitrary signature verified");
                prop_assert_eq!(r.code, "BUNDLE_SIGNATURE_INVALID");
                for s in sigs.iter().filter(|s| s.sig.len() >= 8) {
                    prop_assert!(!r.detail.contains(&s.sig), "{}", r.detail);
                }
                let mut good = sigs.clone();
                good.push(crate::wire::tenancy::SignatureWire {
                    key_id: "release-test".into(),
                    alg: "ed25519".into(),
                    sig: b64(&ed25519_dalek::Signer::sign(&sk, b.sha.as_bytes()).to_bytes()),
                });
                let by = keys.verify(&b.sha, &good).unwrap();
                prop_assert_eq!(by.as_deref(), Some("release-test"));
            }
        }
    }

    /// Raw bytes as a bundle body: never a panic, and never a `BundleWire` unless they are JSON.
    #[test]
    fn bundle_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let w = serde_json::from_slice::<BundleWire>(&bytes);
        if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
            prop_assert!(w.is_err());
        }
        if let Ok(w) = w {
            let _ = Bundle::decode(w, ENV, &"0".repeat(64));
        }
    }
}

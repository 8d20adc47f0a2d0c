//! `.env` rendering: no panic, every value read back exactly by compose or refused by name,
//! unresolved names reported.

use std::collections::{BTreeMap, BTreeSet};

use super::config;
use crate::boundary::bundle;
use proptest::prelude::*;
use zeroize::Zeroizing;

/// What compose v1 and v2 both read back from one rendered value (the forms render_env uses).
fn dotenv_read(v: &str) -> String {
    if let Some(inner) = v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
        return inner.to_string();
    }
    if let Some(inner) = v.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        let mut o = String::new();
        let mut it = inner.chars();
        while let Some(c) = it.next() {
            if c == '\\' {
                o.push(it.next().expect("dangling escape"));
            } else {
                o.push(c);
            }
        }
        return o;
    }
    v.to_string()
}

fn secret_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9_.-]{0,16}",
        "[ -~]{0,24}",
        "[a-z$#'\"\\\\ {}]{0,12}",
        ".{0,12}",
    ]
}

proptest! {
    #![proptest_config(config())]

    /// No panic on any template and values.
    #[test]
    fn render_env_never_panics(
        template in ".{0,200}",
        values in prop::collection::btree_map("[A-Z_][A-Z0-9_]{0,5}", ".{0,20}", 0..5),
    ) {
        let v: BTreeMap<String, Zeroizing<String>> = values.into_iter().map(|(k, x)| (k, Zeroizing::new(x))).collect();
        let _ = bundle::render_env(&template, &v);
    }

    /// `NAME=${VAR}` lines: either every value reads back exactly as compose will see it, or
    /// the refusal names exactly the variables whose values cannot be carried — and nothing of
    /// any value. A value is never expanded by the agent.
    #[test]
    fn render_env_is_exact_or_refuses_by_name(values in prop::collection::btree_map("V[A-Z0-9_]{0,5}", secret_value(), 1..6)) {
        let template: String = values.keys().map(|k| format!("{k}=${{{k}}}\n")).collect();
        let v: BTreeMap<String, Zeroizing<String>> = values.iter().map(|(k, x)| (k.clone(), Zeroizing::new(x.clone()))).collect();
        let broken: BTreeSet<&String> = values.iter().filter(|(_, x)| x.contains(['\n', '\r', '\0'])).map(|(k, _)| k).collect();
        let inexact: BTreeSet<&String> = values
            .iter()
            .filter(|(_, x)| x.contains("${") || (x.contains('$') && x.contains(['\'', '\\'])))
            .map(|(k, _)| k)
            .collect();
        match bundle::render_env(&template, &v) {
            Ok(out) => {
                prop_assert!(broken.is_empty() && inexact.is_empty());
                let lines: Vec<&str> = out.lines().collect();
                prop_assert_eq!(lines.len(), values.len(), "one line per assignment: {:?}", out.as_str());
                for ((k, x), line) in values.iter().zip(lines) {
                    let (name, enc) = line.split_once('=').unwrap();
                    prop_assert_eq!(name, k.as_str());
                    prop_assert_eq!(&dotenv_read(enc), x, "{} rendered as {:?}", k, enc);
                }
            }
            Err(r) => {
                prop_assert_eq!(r.code, "ENV_VALUE_UNSAFE");
                let names = |s: &BTreeSet<&String>| s.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", ");
                if !broken.is_empty() {
                    prop_assert_eq!(r.detail, format!("secret value contains a line break: {}", names(&broken)));
                } else {
                    prop_assert!(r.detail.ends_with(&format!(": {}", names(&inexact))), "{}", r.detail);
                    prop_assert!(r.detail.starts_with("secret value cannot be written to .env"));
                }
            }
        }
    }

    /// Placeholders without a value are reported by name, all of them, and nothing else.
    #[test]
    fn unresolved_names_are_reported(
        have in prop::collection::btree_set("A[A-Z]{0,3}", 0..4),
        missing in prop::collection::btree_set("M[A-Z]{0,3}", 1..4),
        value in "[a-z0-9]{0,8}",
    ) {
        let template: String = have.iter().chain(missing.iter()).map(|k| format!("{k}=x${{{k}}}y\n")).collect();
        let v: BTreeMap<String, Zeroizing<String>> = have.iter().map(|k| (k.clone(), Zeroizing::new(value.clone()))).collect();
        let r = match bundle::render_env(&template, &v) {
            Ok(_) => return Err(TestCaseError::fail("incomplete template accepted")),
            Err(r) => r,
        };
        prop_assert_eq!(r.code, "ENV_INCOMPLETE");
        let want: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        prop_assert_eq!(r.detail, format!("unresolved: {}", want.join(", ")));
    }
}

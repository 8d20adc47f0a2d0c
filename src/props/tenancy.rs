//! Everything tenancy sends besides the bundle: check-in, lease and error answers of any shape.

use super::config;
use super::json::{any_json, any_sha};
use proptest::prelude::*;

fn checkin_body() -> impl Strategy<Value = serde_json::Value> {
    (
        prop_oneof![
            Just("apply".to_string()),
            Just("none".to_string()),
            Just("down".to_string()),
            ".{0,20}".prop_map(|s| s),
        ],
        prop::option::of(any_sha()),
        prop::option::of(any_json()),
        prop::option::of(any_json()),
        prop::collection::btree_map("[a-z_]{1,10}", any_json(), 0..3),
    )
        .prop_map(|(action, sha, prod, urgent, extra)| {
            let mut m: serde_json::Map<String, serde_json::Value> = extra.into_iter().collect();
            m.insert("action".into(), serde_json::Value::String(action));
            if let Some(s) = sha {
                m.insert("desired_sha".into(), s);
            }
            if let Some(p) = prod {
                m.insert("prod".into(), p);
            }
            if let Some(u) = urgent {
                m.insert("urgent".into(), u);
            }
            serde_json::Value::Object(m)
        })
}

proptest! {
    #![proptest_config(config())]

    /// Whatever tenancy answers to a check-in: no panic; accepted only with a known action and,
    /// for apply, a well-formed sha; a malformed sha never survives into what the tick uses;
    /// every refusal is a protocol error, which ends the tick with exit 1.
    #[test]
    fn any_checkin_answer_is_accepted_only_when_well_formed(v in checkin_body()) {
        use crate::wire::tenancy::{is_sha, parse_checkin, TenancyError};
        let body = serde_json::to_vec(&v).unwrap();
        match parse_checkin(&body) {
            Ok(r) => {
                prop_assert!(["apply", "none", "down"].contains(&r.action.as_str()));
                prop_assert!(r.desired_sha.as_deref().is_none_or(is_sha), "{:?}", r.desired_sha);
                if r.action == crate::wire::tenancy::Action::Apply {
                    prop_assert!(r.desired_sha.is_some());
                }
                // the log line's short form never splits a character
                let s = crate::wire::tenancy::short(r.desired_sha.as_deref());
                prop_assert!(s.chars().count() <= 12);
            }
            Err(e) => {
                prop_assert!(matches!(e, TenancyError::Protocol { what: "checkin", .. }), "{e}");
                let f = crate::agent::Failure::from(e);
                prop_assert_eq!(f.exit() as u8, 1);
                prop_assert!(f.message().contains("checkin"), "{}", f.message());
            }
        }
    }

    /// Raw bytes as a check-in answer: never a panic, never accepted unless it is JSON.
    #[test]
    fn checkin_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let r = crate::wire::tenancy::parse_checkin(&bytes);
        if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
            prop_assert!(r.is_err());
        }
    }

    /// Any lease answer: accepted only with a non-empty string grant; the AppRole shape is
    /// refused by name; nothing panics.
    #[test]
    fn any_lease_answer_yields_a_grant_or_a_clear_error(v in any_json(), grant in prop::option::of(any_json()), approle in any::<bool>()) {
        use crate::wire::tenancy::{parse_lease, TenancyError};
        let mut v = v;
        if let (Some(g), Some(m)) = (grant, v.as_object_mut()) {
            m.insert("grant".into(), g);
        }
        if approle {
            if let Some(m) = v.as_object_mut() {
                m.insert("secret_id".into(), serde_json::json!("x"));
            }
        }
        let body = serde_json::to_vec(&v).unwrap();
        match parse_lease(&body) {
            Ok(l) => {
                prop_assert!(!l.grant.is_empty());
                prop_assert_eq!(Some(l.grant.as_str()), v.get("grant").and_then(|g| g.as_str()));
            }
            Err(TenancyError::LegacyLease) => prop_assert!(v.get("secret_id").is_some() || v.get("role_id").is_some() || v.get("wrap_token").is_some()),
            Err(e) => {
                prop_assert!(matches!(e, TenancyError::Protocol { what: "lease", .. }), "{e}");
                prop_assert_eq!(crate::agent::Failure::from(e).exit() as u8, 1);
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// Any non-2xx answer from tenancy: no panic; the class (and so the exit code) follows the
    /// status as PROTOCOL.md says; code and message are bounded whatever the body holds.
    #[test]
    fn any_error_answer_maps_to_its_exit_code(
        status in 300u16..600,
        code in prop_oneof![Just("AGENT_ENV_MISMATCH".to_string()), ".{0,100}".prop_map(|s| s)],
        message in ".{0,400}",
        json_body in any::<bool>(),
        raw in prop::collection::vec(any::<u8>(), 0..400),
        retry_after in prop::option::of(prop_oneof![".{0,12}".prop_map(|s| s), any::<u64>().prop_map(|n| n.to_string())]),
    ) {
        use crate::wire::tenancy::{rejection, TenancyError};
        let st = hyper::StatusCode::from_u16(status).unwrap();
        let body = if json_body {
            serde_json::to_vec(&serde_json::json!({"error": {"code": code, "message": message}})).unwrap()
        } else {
            raw
        };
        let e = rejection("checkin", st, retry_after.as_deref(), &body);
        let text = e.to_string();
        prop_assert!(text.chars().count() < 400, "{} chars", text.chars().count());
        let want = match status {
            401 => 1,
            409 if json_body && code == "AGENT_ENV_MISMATCH" => 78,
            429 => 75,
            500..=599 => 75,
            _ => 1,
        };
        match &e {
            TenancyError::Rejected { message, .. } | TenancyError::Unauthenticated { message, .. } => {
                prop_assert!(message.chars().count() <= 200)
            }
            _ => {}
        }
        prop_assert_eq!(crate::agent::Failure::from(e).exit() as u8, want);
    }
}

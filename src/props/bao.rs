//! Everything OpenBao sends: login, lookup-self, renew-self and KV answers of any shape.

use super::json::{any_flag, any_json, any_number, any_stringish, object_of, scalar_doc};
use super::{config, ENV};
use proptest::prelude::*;

/// What `bao::duration` must make of a JSON duration, worked out in floating point: absent or
/// null → 0; a negative number or a non-number → an error; otherwise the whole seconds, capped.
fn expected_duration(v: Option<&serde_json::Value>) -> Option<u64> {
    use crate::wire::bao::MAX_DURATION_S;
    match v {
        None | Some(serde_json::Value::Null) => Some(0),
        Some(serde_json::Value::Number(n)) => {
            if let Some(u) = n.as_u64() {
                return Some(u.min(MAX_DURATION_S));
            }
            let f = n.as_f64()?;
            if f < 0.0 {
                None
            } else if f >= MAX_DURATION_S as f64 {
                Some(MAX_DURATION_S)
            } else {
                Some(f.floor() as u64)
            }
        }
        Some(_) => None,
    }
}

/// An OpenBao body: the given shape as JSON, another JSON value, raw bytes, or nothing.
fn bao_body(doc: impl Strategy<Value = serde_json::Value> + 'static) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        12 => doc.prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => any_json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        1 => prop::collection::vec(any::<u8>(), 0..60),
        1 => Just(Vec::new()),
        2 => prop::collection::vec(".{0,300}", 0..4)
            .prop_map(|e| serde_json::to_vec(&serde_json::json!({"errors": e})).unwrap()),
    ]
    .boxed()
}

fn login_doc() -> impl Strategy<Value = serde_json::Value> {
    let auth = prop_oneof![
        12 => object_of(vec![
            ("client_token", any_stringish("s\\.[A-Za-z0-9]{24}|.{0,4}")),
            ("lease_duration", any_number().boxed()),
            ("renewable", any_flag().boxed()),
            ("metadata", object_of(vec![
                ("env_id", any_stringish("[a-z0-9-]{1,12}")),
                ("grant_jti", any_stringish("[a-f0-9]{8}")),
            ], 0.9).boxed()),
        ], 0.9),
        1 => scalar_doc(),
    ];
    object_of(vec![("auth", auth.boxed())], 0.9)
}

fn lookup_doc() -> impl Strategy<Value = serde_json::Value> {
    let data = prop_oneof![
        12 => object_of(vec![("ttl", any_number().boxed()), ("renewable", any_flag().boxed())], 0.9),
        1 => scalar_doc(),
    ];
    object_of(vec![("data", data.boxed())], 0.9)
}

fn renew_doc() -> impl Strategy<Value = serde_json::Value> {
    let auth = prop_oneof![
        12 => object_of(vec![("lease_duration", any_number().boxed())], 0.9),
        1 => scalar_doc(),
    ];
    object_of(vec![("auth", auth.boxed())], 0.9)
}

fn kv_doc() -> impl Strategy<Value = serde_json::Value> {
    let value = prop_oneof![
        8 => "[ -~]{0,30}".prop_map(serde_json::Value::String),
        2 => any_json(),
    ];
    let inner = object_of(
        vec![("value", value.boxed()), ("other", any_json().boxed())],
        0.8,
    );
    let data = object_of(
        vec![("data", inner.boxed()), ("metadata", any_json().boxed())],
        0.9,
    );
    object_of(vec![("data", data.boxed())], 0.9)
}

fn status() -> impl Strategy<Value = hyper::StatusCode> {
    prop_oneof![
        12 => Just(200u16),
        1 => Just(204u16),
        2 => 100u16..600,
        1 => prop::sample::select(vec![400u16, 403, 404, 429, 500, 503]),
    ]
    .prop_map(|s| hyper::StatusCode::from_u16(s).unwrap())
}

/// The error class a status means (403 denied, 404 not found, 5xx unavailable, other non-2xx
/// refused with its status; a 2xx that does not parse is a protocol error), each naming the
/// call, OpenBao's message cut to 200 characters.
fn check_status_class(
    e: &crate::wire::bao::BaoError,
    what: &str,
    st: hyper::StatusCode,
) -> Result<(), TestCaseError> {
    use crate::wire::bao::BaoError;
    let text = e.to_string();
    prop_assert!(text.contains(what), "{text}");
    match (st.as_u16(), e) {
        (200..=299, BaoError::Protocol { .. }) => {}
        (403, BaoError::Denied { msg, .. }) | (_, BaoError::Refused { msg, .. }) => {
            prop_assert!(
                st != hyper::StatusCode::NOT_FOUND && !st.is_success() && !st.is_server_error()
            );
            prop_assert!(msg.chars().count() <= 200, "{} chars", msg.chars().count());
            if let BaoError::Refused { status, .. } = e {
                prop_assert_eq!(*status, st.as_u16());
                prop_assert!(st != hyper::StatusCode::FORBIDDEN);
            }
        }
        (404, BaoError::NotFound { .. }) => {}
        (500..=599, BaoError::Unavailable(m, _)) => {
            // "<what>: <status> <message cut to 200>"
            let most = what.chars().count() + st.to_string().chars().count() + 3 + 200;
            prop_assert!(m.chars().count() <= most, "{} chars", m.chars().count());
        }
        (s, e) => prop_assert!(false, "status {s} gave {e:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Any duration OpenBao could send: the documented reading (absent = 0, whole seconds,
    /// capped at 100 years, negative or non-numeric refused naming the field and not the value),
    /// and `now + ttl` in the signed seconds the metrics use never overflows.
    #[test]
    fn durations_saturate_and_never_overflow(v in prop::option::of(any_number())) {
        use crate::wire::bao::{duration, BaoError, MAX_DURATION_S};
        let got = duration("lookup-self", "data.ttl", v.as_ref());
        match (got, expected_duration(v.as_ref())) {
            (Ok(d), Some(want)) => {
                prop_assert_eq!(d, want);
                prop_assert!(d <= MAX_DURATION_S);
                let now = crate::base::clock::now();
                let until = now.checked_add(d).expect("now + ttl overflows u64");
                prop_assert!(i64::try_from(until).is_ok(), "now + ttl overflows i64");
            }
            (Err(BaoError::Protocol { what, msg }), None) => {
                prop_assert_eq!(what, "lookup-self");
                prop_assert!(msg.starts_with("data.ttl "), "{}", msg);
                if let Some(serde_json::Value::String(s)) = &v {
                    prop_assert!(s.len() < 3 || !msg.contains(s.as_str()), "{}", msg);
                }
            }
            (got, want) => prop_assert!(false, "{:?} for {:?}, expected {:?}", got, v, want),
        }
    }

    /// Any login answer: a token exactly when `auth.client_token` is a non-empty string, with
    /// the lease duration read as `durations_saturate_and_never_overflow` says and the
    /// metadata as sent; otherwise an error naming what was missing or wrong; the error class
    /// follows the status; the token never appears in an error.
    #[test]
    fn any_login_answer_yields_a_token_or_a_clear_error(st in status(), body in bao_body(login_doc())) {
        use crate::wire::bao::{parse_login, BaoError};
        let v: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
        let auth = v.as_ref().and_then(|v| v.get("auth")).filter(|a| a.is_object());
        let token = auth.and_then(|a| a.get("client_token")).and_then(|t| t.as_str()).filter(|t| !t.is_empty());
        match parse_login(st, &body) {
            Ok(l) => {
                prop_assert!(st.is_success());
                prop_assert_eq!(Some(l.token.as_str()), token);
                let want = expected_duration(auth.and_then(|a| a.get("lease_duration")));
                prop_assert_eq!(Some(l.lease_duration), want);
                prop_assert_eq!(l.renewable, auth.and_then(|a| a.get("renewable")) == Some(&serde_json::Value::Bool(true)));
                let meta = |k: &str| auth.and_then(|a| a.pointer(&format!("/metadata/{k}"))).and_then(|x| x.as_str()).unwrap_or_default().to_string();
                prop_assert_eq!(l.env_id, meta("env_id"));
                prop_assert_eq!(l.grant_jti, meta("grant_jti"));
            }
            Err(e) => {
                check_status_class(&e, "login", st)?;
                if let (true, BaoError::Protocol { msg, .. }) = (st.is_success() && v.is_some(), &e) {
                    let why = if auth.is_none() {
                        "no auth block"
                    } else if token.is_none() {
                        "no client_token"
                    } else {
                        "auth.lease_duration "
                    };
                    prop_assert!(msg.starts_with(why), "{} (expected {:?})", msg, why);
                }
                if let Some(t) = token.filter(|t| t.len() >= 8) {
                    prop_assert!(!e.to_string().contains(t), "{e}");
                }
            }
        }
    }

    /// Any lookup-self or renew-self answer: the ttl / lease duration as documented, or an
    /// error naming the block or the field; the class follows the status.
    #[test]
    fn any_lookup_or_renew_answer_yields_a_ttl_or_a_clear_error(
        st in status(),
        lookup in bao_body(lookup_doc()),
        renew in bao_body(renew_doc()),
    ) {
        use crate::wire::bao::{parse_lookup_self, parse_renew_self, BaoError};
        let v: Option<serde_json::Value> = serde_json::from_slice(&lookup).ok();
        let data = v.as_ref().and_then(|v| v.get("data")).filter(|d| d.is_object());
        match parse_lookup_self(st, &lookup) {
            Ok(info) => {
                prop_assert!(st.is_success() && data.is_some());
                prop_assert_eq!(Some(info.ttl), expected_duration(data.and_then(|d| d.get("ttl"))));
            }
            Err(e) => {
                check_status_class(&e, "lookup-self", st)?;
                if let (true, BaoError::Protocol { msg, .. }) = (st.is_success() && v.is_some(), &e) {
                    let why = if data.is_none() { "no data block" } else { "data.ttl " };
                    prop_assert!(msg.starts_with(why), "{}", msg);
                }
            }
        }
        let v: Option<serde_json::Value> = serde_json::from_slice(&renew).ok();
        let ld = v.as_ref().and_then(|v| v.get("auth")).and_then(|a| a.get("lease_duration"));
        match parse_renew_self(st, &renew) {
            Ok(d) => {
                prop_assert!(st.is_success());
                prop_assert_eq!(Some(d), expected_duration(ld));
            }
            Err(e) => {
                check_status_class(&e, "renew-self", st)?;
                if let (true, BaoError::Protocol { msg, .. }) = (st.is_success() && v.is_some(), &e) {
                    prop_assert!(msg.starts_with("auth.lease_duration "), "{}", msg);
                }
            }
        }
    }

    /// Any KV read answer: the string at `data.data.<key>` exactly (another JSON value as its
    /// JSON text), a not-found naming the key and the path, or the status's error class; a
    /// value never appears in an error.
    #[test]
    fn any_kv_answer_yields_the_value_or_names_the_key(st in status(), body in bao_body(kv_doc())) {
        use crate::wire::bao::{parse_kv_read, BaoError};
        let path = format!("monky/data/{ENV}/see/api");
        let v: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
        let val = v.as_ref().and_then(|v| v.pointer("/data/data/value")).filter(|x| !x.is_null());
        match parse_kv_read(st, &body, &path, "value") {
            Ok(s) => {
                prop_assert!(st.is_success());
                let want = match val {
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => return Err(TestCaseError::fail("a value out of nothing")),
                };
                prop_assert_eq!(s.as_str(), want.as_str());
            }
            Err(BaoError::NotFound { what }) if st.is_success() => {
                prop_assert!(val.is_none());
                prop_assert!(what.contains("\"value\"") && what.contains(&path), "{}", what);
            }
            Err(e) => {
                check_status_class(&e, &format!("read {path}"), st)?;
                if let Some(serde_json::Value::String(s)) = val.filter(|s| s.as_str().is_some_and(|s| s.len() >= 8)) {
                    prop_assert!(!e.to_string().contains(s.as_str()), "{e}");
                }
            }
        }
    }
}

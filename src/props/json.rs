//! JSON strategies shared by the tenancy, bundle and OpenBao properties: any shape, odd numbers,
//! flags and strings of the wrong type, objects with missing and unknown fields.

use proptest::prelude::*;

/// A JSON value of any shape, with the odd cases tenancy might send: huge and negative
/// numbers, floats, non-ASCII and empty strings, nesting.
pub(super) fn any_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        Just(json!(u64::MAX)),
        Just(json!(-1)),
        Just(json!(1e308)),
        ".{0,80}".prop_map(Value::String),
        "[a-f0-9]{63,65}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// `desired_sha` as tenancy might get it wrong: valid, upper case, odd length, multi-byte
/// characters straddling byte 12, a number.
pub(super) fn any_sha() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    prop_oneof![
        "[a-f0-9]{64}".prop_map(Value::String),
        "[A-F0-9]{64}".prop_map(Value::String),
        "[a-f0-9]{0,70}".prop_map(Value::String),
        "[a-fé€😀]{1,40}".prop_map(Value::String),
        any::<u64>().prop_map(|n| json!(n)),
        Just(Value::Null),
        any_json(),
    ]
}

/// A number as tenancy or OpenBao might get it wrong: fine, huge, negative, fractional, or not
/// a number at all.
pub(super) fn any_number() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    prop_oneof![
        24 => (0u64..1_000_000).prop_map(|n| json!(n)),
        6 => any::<u64>().prop_map(|n| json!(n)),
        2 => any::<i64>().prop_map(|n| json!(n)),
        2 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        1 => Just(json!(u64::MAX)),
        1 => Just(json!(i64::MAX)),
        1 => Just(json!((1u64 << 63) - 1)),
        1 => Just(json!(1e300)),
        1 => Just(json!(-1)),
        1 => Just(json!(-0.5)),
        1 => Just(json!(3600.7)),
        1 => "[0-9]{1,25}".prop_map(Value::String),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
        1 => any_json(),
    ]
}

/// A flag: a boolean, or something that only looks like one.
pub(super) fn any_flag() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    prop_oneof![
        48 => any::<bool>().prop_map(Value::Bool),
        1 => Just(json!("true")),
        1 => Just(json!(1)),
        1 => Just(Value::Null),
        1 => any_json(),
    ]
}

/// A string field, or another type in its place.
pub(super) fn any_stringish(
    s: impl Strategy<Value = String> + 'static,
) -> BoxedStrategy<serde_json::Value> {
    use serde_json::Value;
    prop_oneof![24 => s.prop_map(Value::String), 1 => Just(Value::Null), 1 => any_json()].boxed()
}

/// An object with some of `fields` (each maybe absent) and unknown extra keys.
pub(super) fn object_of(
    fields: Vec<(&'static str, BoxedStrategy<serde_json::Value>)>,
    presence: f64,
) -> impl Strategy<Value = serde_json::Value> {
    let n = fields.len();
    let (names, strats): (Vec<_>, Vec<_>) = fields.into_iter().unzip();
    (
        strats
            .into_iter()
            .map(|s| prop::option::weighted(presence, s))
            .collect::<Vec<_>>(),
        prop::collection::btree_map("x_[a-z]{1,6}", any_json(), 0..2),
    )
        .prop_map(move |(vals, extra)| {
            let mut m: serde_json::Map<_, _> = extra.into_iter().collect();
            for (k, v) in names.iter().zip(vals).take(n) {
                if let Some(v) = v {
                    m.insert(k.to_string(), v);
                }
            }
            serde_json::Value::Object(m)
        })
}

/// A JSON document that is not an object: serde would read an array positionally into a
/// struct, so only scalars stand for "the wrong shape".
pub(super) fn scalar_doc() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,20}".prop_map(Value::String),
    ]
}

//! The redactor: a registered value never survives, token shapes are masked unregistered.

use super::{b64, config};
use crate::base::redact;
use proptest::prelude::*;

proptest! {
    #![proptest_config(config())]

    /// A registered value never survives redaction: alone, inside random text, repeated, JSON-
    /// escaped or base64-encoded.
    #[test]
    fn registered_values_never_survive(
        value in "[ -~]{4,24}",
        pre in ".{0,16}",
        post in ".{0,16}",
        times in 1usize..3,
    ) {
        redact::register(&value);
        let json = serde_json::to_string(&value).unwrap();
        let json = json.trim_matches('"');
        let b = b64(value.as_bytes());
        for text in [
            value.clone(),
            format!("{pre}{}{post}", value.repeat(times)),
            format!("{pre}{json}{post}"),
            format!("{pre}{b}{post}"),
            format!("{pre}{value}{post}{value}"),
        ] {
            let out = redact::redact(&text);
            prop_assert!(!out.contains(&value), "{:?} survives in {:?}", value, out);
            prop_assert!(!out.contains(&b), "base64 survives in {:?}", out);
        }
    }

    /// Token shapes are masked without being registered.
    #[test]
    fn token_shapes_are_masked(
        body in "[A-Za-z0-9]{24,40}",
        prefix in prop_oneof![Just("s."), Just("hvs."), Just("hvb."), Just("b.")],
        pre in "([a-z]{0,6}[ :=])?",
    ) {
        for text in [
            format!("{pre}{prefix}{body} tail"),
            format!("{pre}Authorization: Bearer {body}"),
            format!("{pre}eyJhbGciOiJFUzI1NiJ9.eyJ{body}.{body}"),
            format!("{pre}https://robot:{body}@harbor.example/v2/"),
            format!("{{\"auths\": {{\"r\": {{\"auth\": \"{body}\"}}}}}}"),
        ] {
            let out = redact::redact(&text);
            prop_assert!(!out.contains(&body), "{:?} → {:?}", text, out);
        }
    }
}

//! The wall clock every module reads ([`now`]), and clock skew between the box and tenancy
//! (PROTOCOL 0.4 `clock_skew_s`): read from the `Date` header of tenancy's answers, kept in
//! `state.json`, sent with the next check-in, exported as a metric, and named in a TLS or JWT
//! failure when it is large enough to be the cause — a box whose clock is off fails
//! certificate and token checks in ways that look like auth bugs.

/// The wall clock in Unix seconds (0 before 1970).
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Above this (seconds, either way) the skew is named in a TLS or JWT failure.
pub const SKEW_NAMED_ABOVE_S: i64 = 30;

/// An HTTP `Date` as Unix seconds: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two
/// obsolete forms RFC 9110 §5.6.7 has a recipient accept. `None` for anything else: an
/// unreadable header is no measurement.
pub fn parse_http_date(s: &str) -> Option<i64> {
    let t = httpdate::parse_http_date(s.trim()).ok()?;
    let secs = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    i64::try_from(secs).ok()
}

/// The box's clock minus tenancy's, from a `Date` header read when the answer arrived (`now`,
/// Unix seconds). `Date` has one-second resolution and is stamped before the body is sent, so
/// a skew of ±1 s is noise; the check-in reports it as measured.
pub fn skew_from_date(date: &str, now: u64) -> Option<i64> {
    let t = parse_http_date(date)?;
    i64::try_from(now).ok().map(|n| n - t)
}

/// `4 min ahead of`, `2 h behind`: a skew in the unit an operator reads at a glance.
pub fn describe(skew_s: i64) -> String {
    let a = skew_s.unsigned_abs();
    let amount = if a < 120 {
        format!("{a} s")
    } else if a < 2 * 3600 {
        format!("{} min", (a + 30) / 60)
    } else if a < 2 * 86_400 {
        format!("{} h", (a + 1800) / 3600)
    } else {
        format!("{} days", (a + 43_200) / 86_400)
    };
    let way = if skew_s >= 0 { "ahead of" } else { "behind" };
    format!("the box's clock is {amount} {way} tenancy")
}

/// Whether a failure message is one a wrong clock can cause: certificate validity (TLS), a
/// JWT's `nbf`/`exp`, a token's expiry.
fn clock_sensitive(msg: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    [
        "tls",
        "certificate",
        "jwt",
        "claim",
        "not yet valid",
        "notvalidyet",
        "expired",
        "grant",
        "login",
        "agent_unauthenticated",
    ]
    .iter()
    .any(|k| m.contains(k))
}

/// A failure message with the skew named when it may be the cause: over
/// [`SKEW_NAMED_ABOVE_S`] and a TLS/JWT-looking failure. Otherwise the message as it was.
pub fn name_in_failure(msg: String, skew_s: Option<i64>) -> String {
    match skew_s {
        Some(s) if s.abs() > SKEW_NAMED_ABOVE_S && clock_sensitive(&msg) => {
            format!("{msg} ({}: check NTP)", describe(s))
        }
        _ => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_parse_to_unix_seconds() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        // a leap day
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(1_835_438_400)
        );
        // the obsolete forms a recipient must accept (RFC 9110 §5.6.7)
        for old in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            assert_eq!(parse_http_date(old), Some(784_111_777), "{old:?}");
        }
        for bad in [
            "",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_skew_is_the_box_minus_tenancy() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT";
        assert_eq!(skew_from_date(date, 784_111_777 + 240), Some(240));
        assert_eq!(skew_from_date(date, 784_111_777 - 90), Some(-90));
        assert_eq!(skew_from_date("garbage", 784_111_777), None);
    }

    #[test]
    fn the_wording_says_how_far_and_which_way() {
        assert_eq!(describe(240), "the box's clock is 4 min ahead of tenancy");
        assert_eq!(describe(-45), "the box's clock is 45 s behind tenancy");
        assert_eq!(describe(-3 * 3600), "the box's clock is 3 h behind tenancy");
        assert_eq!(
            describe(3 * 86_400),
            "the box's clock is 3 days ahead of tenancy"
        );
        assert_eq!(describe(119), "the box's clock is 119 s ahead of tenancy");
        assert_eq!(describe(150), "the box's clock is 3 min ahead of tenancy");
    }

    #[test]
    fn the_skew_is_named_only_in_clock_sensitive_failures_over_30_s() {
        let tls = "tenancy unavailable: tenancy: TLS handshake failed: invalid peer certificate: NotValidYet".to_string();
        assert_eq!(
            name_in_failure(tls.clone(), Some(240)),
            format!("{tls} (the box's clock is 4 min ahead of tenancy: check NTP)")
        );
        // 30 s is within the margin; unknown says nothing
        assert_eq!(name_in_failure(tls.clone(), Some(30)), tls);
        assert_eq!(name_in_failure(tls.clone(), Some(-30)), tls);
        assert_eq!(name_in_failure(tls.clone(), None), tls);
        let jwt =
            "OpenBao refused login (400): error validating claims: token is expired".to_string();
        assert!(name_in_failure(jwt, Some(-600))
            .ends_with("(the box's clock is 10 min behind tenancy: check NTP)"));
        // a failure a clock cannot cause stays as it was
        let unhealthy = "UNHEALTHY: web is unhealthy".to_string();
        assert_eq!(name_in_failure(unhealthy.clone(), Some(600)), unhealthy);
    }
}

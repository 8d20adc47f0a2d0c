//! Maintenance windows end to end: outside every window an apply is deferred (the running
//! release reported with `DEFERRED: …`, nothing fetched), an urgent check-in bypasses them,
//! and inside a window the apply runs.

use crate::common::*;

/// "HH:MM" `h` hours from now (UTC).
fn hhmm_in(h: i64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let t = (now + h * 3600).rem_euclid(86400);
    format!("{:02}:{:02}", t / 3600, (t % 3600) / 60)
}

#[test]
fn outside_a_window_the_apply_waits_unless_urgent() {
    require_docker();
    let mut s = Stack::new("windows", Flavour::V2);
    s.give_bootstrap();
    let sha1 = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 1, "w1", "window-secret").files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    // closed now: a window six hours away
    let closed = format!("daily {}-{}", hhmm_in(6), hhmm_in(7));
    s.set_extra(&format!(
        "apply_windows: [\"{closed}\"]\napply_windows_tz: UTC\n"
    ));
    let sha2 = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 2, "w2", "window-secret").files());
    let fetches = s.tenancy.bundle_fetches().len();
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let rep = s.last_report();
    assert_eq!(rep["sha"], sha1.as_str(), "the running release is reported");
    assert_eq!(rep["result"], "applied");
    let d = rep["detail"].as_str().unwrap();
    assert!(
        d.starts_with(&format!(
            "DEFERRED: {} waits for {closed} (next ",
            &sha2[..12]
        )),
        "{d}"
    );
    assert_eq!(s.tenancy.bundle_fetches().len(), fetches, "nothing fetched");
    let st = s.cmd(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&st.stdout).unwrap();
    assert_eq!(v["apply_windows"]["open_now"], false, "{st:?}");
    assert!(v["apply_windows"]["next"]
        .as_str()
        .unwrap()
        .starts_with(&closed));
    // urgent: applies now
    s.tenancy.set_urgent(&s.env, true);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha2.as_str());
    assert_eq!(s.last_report()["detail"], "");
    s.tenancy.set_urgent(&s.env, false);
    // open now: a window around the current time
    s.set_extra(&format!(
        "apply_windows: [\"daily {}-{}\"]\napply_windows_tz: UTC\n",
        hhmm_in(-1),
        hhmm_in(1)
    ));
    let sha3 = s
        .tenancy
        .set_bundle(&s.env, web_bundle(&s, 3, "w3", "window-secret").files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["sha"], sha3.as_str());
    assert_eq!(s.last_report()["result"], "applied");
    // bad syntax is a config error naming the entry
    s.set_extra("apply_windows: [\"Funday 01:00-02:00\"]\n");
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("Funday 01:00-02:00"), "{r:?}");
}

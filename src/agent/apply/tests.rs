use super::*;
use crate::test_container as c;

#[test]
fn an_unreadable_secret_is_retried_only_when_openbao_is_down() {
    let e = bundle::Entry {
        var: Some("DB_PASSWORD".into()),
        path: "monky/data/env-a/see/db".into(),
        key: "value".into(),
        version: Some(3),
        use_: None,
    };
    match unreadable(&e, BaoError::Unavailable("connection refused".into(), None)) {
        Unreadable::Retry(f) => assert_eq!(f.exit(), Exit::TempFail),
        Unreadable::Refuse(r) => panic!("refused: {r}"),
    }
    let denied = BaoError::Denied {
        what: "kv read".into(),
        msg: "permission denied".into(),
    };
    match unreadable(&e, denied) {
        Unreadable::Refuse(r) => {
            assert_eq!(r.code, "SECRET_UNREADABLE");
            assert!(r.detail.starts_with("DB_PASSWORD: "), "{}", r.detail);
        }
        Unreadable::Retry(f) => panic!("retried: {f}"),
    }
    // no variable (the registry credential): the path names it
    let e = bundle::Entry { var: None, ..e };
    let missing = BaoError::NotFound {
        what: "kv read".into(),
    };
    match unreadable(&e, missing) {
        Unreadable::Refuse(r) => assert!(r.detail.starts_with("monky/data/env-a/see/db: ")),
        Unreadable::Retry(f) => panic!("retried: {f}"),
    }
}

#[test]
fn a_container_is_unwell_unless_running_and_healthy_or_unchecked() {
    assert!(!unwell(&c("a", "running", "")));
    assert!(!unwell(&c("a", "running", "healthy")));
    assert!(unwell(&c("a", "running", "starting")));
    assert!(unwell(&c("a", "running", "unhealthy")));
    assert!(unwell(&c("a", "exited", "")));
    assert!(unwell(&c("a", "restarting", "healthy")));
    assert_eq!(
        condition(&c("db", "running", "unhealthy")),
        "db running/unhealthy"
    );
    assert_eq!(condition(&c("web", "exited", "")), "web exited");
}

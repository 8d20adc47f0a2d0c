//! The canonical bundle sha (PROTOCOL's test vector) and path safety.

use super::*;

#[test]
fn protocol_test_vector() {
    let files: Vec<(&str, &[u8])> = vec![
        (
            "compose.yaml",
            b"services:\n  web:\n    image: example/web:1\n",
        ),
        ("bundle.json", b"{\"serial\": 1}\n"),
        ("env.template", b"API_KEY=${API_KEY}\n"),
    ];
    assert_eq!(
        canonical_sha(files),
        "e9de4379648ca6cfeb8d76cf28574b371c9c10dd5a5656deda6cfc4f82beb0a2"
    );
}

#[test]
fn paths() {
    for bad in [
        "",
        "/etc/passwd",
        "../x",
        "a/../b",
        "a//b",
        "a/./b",
        "a\0b",
        "a\\b",
        "x/",
    ] {
        assert!(check_path(bad).is_err(), "{bad:?}");
    }
    for good in ["compose.yaml", "conf/nginx.conf", ".hidden", "a..b"] {
        assert!(check_path(good).is_ok(), "{good:?}");
    }
    // the operator's words, as before the error was typed
    let says = |p: &str| check_path(p).unwrap_err().to_string();
    assert_eq!(says("a/../b"), r#""a/../b" has a ".." component"#);
    assert_eq!(says("/etc/passwd"), r#""/etc/passwd" is absolute"#);
    assert_eq!(says(""), "empty path");
}

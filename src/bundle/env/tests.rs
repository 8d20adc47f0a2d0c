//! `.env` rendering: substitution, quoting, and the refusals of a template.

use super::*;

#[test]
fn env_rendering() {
    let mut v = BTreeMap::new();
    v.insert("A".to_string(), Zeroizing::new("x${B}y".to_string()));
    // a value that looks like a placeholder is never expanded by the agent; compose v1
    // would expand it whatever the quoting, so it is refused rather than mangled
    let e = render_env("K=${A}\nL=${A}\n", &v).unwrap_err();
    assert_eq!(e.code, "ENV_VALUE_UNSAFE");
    assert!(e.detail.ends_with(": A") && !e.detail.contains("x$"), "{e}");
    v.insert("S".to_string(), Zeroizing::new("pa$s w#rd".to_string()));
    v.insert("Q".to_string(), Zeroizing::new("it's \\ \"q\"".to_string()));
    v.insert("P".to_string(), Zeroizing::new("plain-1.2".to_string()));
    let out = render_env(
        "# c ${P}\nS=${S}\nexport Q = ${Q}  # note\nD=\"u:${P}@h\"\nP=${P}\nX=literal $HOME\n",
        &v,
    )
    .unwrap();
    assert_eq!(
        out.as_str(),
        "# c plain-1.2\nS='pa$s w#rd'\nexport Q =\"it's \\\\ \\\"q\\\"\"\nD=u:plain-1.2@h\nP=plain-1.2\nX=literal $HOME\n"
    );
    let e = render_env("K=${A}\nM=${MISSING}\nN=${OTHER:-d}\n", &v).unwrap_err();
    assert_eq!(e.code, "ENV_INCOMPLETE");
    assert!(
        e.detail.contains("MISSING") && !e.detail.contains("x$"),
        "{e}"
    );
    v.insert("NL".to_string(), Zeroizing::new("a\nEVIL=1".to_string()));
    let e = render_env("K=${NL}\n", &v).unwrap_err();
    assert_eq!(e.code, "ENV_VALUE_UNSAFE");
    assert!(!e.detail.contains("EVIL"));
}

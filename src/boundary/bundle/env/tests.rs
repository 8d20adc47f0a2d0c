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

#[test]
fn a_rendered_env_reads_back_into_its_values() {
    let mut v = BTreeMap::new();
    v.insert(
        "PW".to_string(),
        Zeroizing::new("it's \\ \"q\"".to_string()),
    );
    v.insert("U".to_string(), Zeroizing::new("robot".to_string()));
    let tmpl = "# ${U}\nDB=postgres://${U}:${PW}@h/db\nLEVEL=info\nexport Q = ${PW}  # note\n";
    let out = render_env(tmpl, &v).unwrap();
    let got: Vec<String> = values_from_rendered(Some(tmpl), &out)
        .iter()
        .map(|s| s.to_string())
        .collect();
    for want in [
        "robot",
        "it's \\ \"q\"",
        "postgres://robot:it's \\ \"q\"@h/db",
    ] {
        assert!(got.iter().any(|g| g == want), "{want:?} not in {got:?}");
    }
    // a literal line is no value; without a template every value is, whole and decoded
    assert!(!got.iter().any(|g| g == "info"), "{got:?}");
    let bare: Vec<String> = values_from_rendered(None, &out)
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(
        bare.iter().any(|g| g == "info") && bare.iter().any(|g| g == "it's \\ \"q\""),
        "{bare:?}"
    );
}

proptest::proptest! {
    /// Whatever the value (that `.env` can carry), reading the rendered file back yields it.
    #[test]
    fn every_rendered_value_reads_back(pw in "[ -~é€]{1,40}", user in "[a-z]{1,8}") {
        let mut v = BTreeMap::new();
        v.insert("PW".to_string(), Zeroizing::new(pw.clone()));
        v.insert("U".to_string(), Zeroizing::new(user));
        let tmpl = "A=${PW}\nDB=postgres://${U}:${PW}@h/db\n";
        if let Ok(out) = render_env(tmpl, &v) {
            let got = values_from_rendered(Some(tmpl), &out);
            proptest::prop_assert!(got.iter().any(|g| g.as_str() == pw), "{:?}", pw);
        }
    }
}

/// The first pass's variables (issue 41): a literal line is known exactly when compose's `.env`
/// parser reads it back as written; a placeholder line, an expansion, an escape, and whatever a
/// quote left open are not; compose's own environment is over them all.
#[test]
fn the_first_pass_knows_exactly_the_plain_values_of_the_template() {
    let t = "# c\nA=./library\nB='/etc $x'\nexport C = \"quoted\"  # note\nD=${SECRET}\nE=pre-${S}-post\nF=$HOME/x\nG=\"a\\\\b\"\nH=plain # c\nI=x y\nJ\nHOME=/srv\nK=\nA2='it''s'\nL=\"open\nM=after\n";
    let v = dotenv_variables(t);
    let plain = |s: &str| Some(Var::Plain(s.to_string()));
    assert_eq!(v.get("A").cloned(), plain("./library"));
    assert_eq!(
        v.get("B").cloned(),
        plain("/etc $x"),
        "single quotes expand nothing"
    );
    assert_eq!(v.get("C").cloned(), plain("quoted"));
    assert_eq!(v.get("H").cloned(), plain("plain"));
    assert_eq!(v.get("I").cloned(), plain("x y"));
    assert_eq!(v.get("K").cloned(), plain(""));
    for opaque in ["D", "E", "F", "G", "J", "HOME", "PATH", "A2", "L", "M"] {
        assert_eq!(v.get(opaque), Some(&Var::Opaque), "{opaque}");
    }
    assert_eq!(v.get("UNSET"), None);
    // the last definition wins, as in compose
    let v = dotenv_variables("X=/etc\nX=./d\n");
    assert_eq!(v.get("X").cloned(), plain("./d"));
}

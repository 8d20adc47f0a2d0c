//! Compose's interpolation, as the first pass needs it (issue 41): the bundle's YAML is judged
//! the way compose will read it, with the variables compose will have — `env.template`'s plain
//! values — before any secret is read. Compose's rules (compose-go `template`, and compose v1's
//! `interpolation.py`, which agree on these): `${V}`, `$V`, `${V:-d}` (unset or empty → `d`),
//! `${V-d}` (unset → `d`), `${V:?e}` / `${V?e}` (an error), `${V:+a}` (set and not empty → `a`),
//! `${V+a}` (set → `a`), `$$` → `$`; a default or alternative is interpolated in turn
//! (`${A:-${B:-x}}`).
//!
//! A value the first pass cannot know — it depends on a secret, on a variable of compose's own
//! environment, on an unset variable compose would warn about, or on a shape compose would
//! reject — is **unknown** ([`interpolate`] returns `None`): the document keeps the string as
//! written (it still holds `$`), and the rule that needs it waits for the second pass, which
//! judges compose's real output. Pure: no I/O.

use std::collections::BTreeMap;

use serde_yaml_ng::Value;

/// What compose will know a variable as, seen from before the lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Var {
    /// A value the first pass knows exactly: a literal line of `env.template`, which the agent
    /// writes to `.env` unchanged and compose reads back as this value.
    Plain(String),
    /// Set, but its value is not known before the lease: a line that holds a secret, a value
    /// compose's `.env` parser would change (`$` expansions, escapes, quotes across lines), or
    /// a variable of compose's own environment.
    Opaque,
}

/// The variables compose interpolates the bundle's `compose.yaml` with. A name not in it is
/// unset for compose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables(BTreeMap<String, Var>);

/// The names compose's process environment holds when the agent runs it
/// (`host::runtime::compose`: `PATH`, `HOME`, `LANG`, `DOCKER_CONFIG`, `DOCKER_HOST`,
/// `COMPOSE_INTERACTIVE_NO_CLI`; `COMPOSE_PROJECT_NAME` compose sets itself). Compose gives the
/// environment precedence over `.env`, so they are opaque whatever `env.template` says.
pub const COMPOSE_ENVIRONMENT: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    "DOCKER_CONFIG",
    "DOCKER_HOST",
    "COMPOSE_INTERACTIVE_NO_CLI",
    "COMPOSE_PROJECT_NAME",
];

impl Variables {
    /// `.env`'s variables as the first pass knows them, with compose's own environment over
    /// them.
    pub fn new(dotenv: BTreeMap<String, Var>) -> Variables {
        let mut m = dotenv;
        for n in COMPOSE_ENVIRONMENT {
            m.insert(n.to_string(), Var::Opaque);
        }
        Variables(m)
    }

    /// No `.env` at all: only compose's own environment (every other name is unset).
    pub fn none() -> Variables {
        Variables::new(BTreeMap::new())
    }

    pub fn get(&self, name: &str) -> Option<&Var> {
        self.0.get(name)
    }
}

/// Nested interpolations followed at most (a default inside a default …).
const MAX_DEPTH: usize = 16;

/// `s` as compose interpolates it, or `None` when the first pass cannot know it (see the
/// module's documentation).
pub fn interpolate(s: &str, vars: &Variables) -> Option<String> {
    expand(s, vars, 0)
}

/// Every string scalar of `doc` interpolated (mapping keys are not: compose does not
/// interpolate them). An unknown value stays as written, so it still holds the `$` a rule
/// reads as "left to the second pass".
pub fn interpolate_doc(doc: &Value, vars: &Variables) -> Value {
    match doc {
        Value::String(s) if s.contains('$') => match interpolate(s, vars) {
            Some(v) => Value::String(v),
            None => Value::String(s.clone()),
        },
        Value::Sequence(items) => {
            Value::Sequence(items.iter().map(|v| interpolate_doc(v, vars)).collect())
        }
        Value::Mapping(m) => Value::Mapping(
            m.iter()
                .map(|(k, v)| (k.clone(), interpolate_doc(v, vars)))
                .collect(),
        ),
        Value::Tagged(t) => {
            let mut t = t.clone();
            t.value = interpolate_doc(&t.value, vars);
            Value::Tagged(t)
        }
        other => other.clone(),
    }
}

fn name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn expand(s: &str, vars: &Variables, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let (mut i, mut lit) = (0, 0);
    while i < b.len() {
        if b[i] != b'$' {
            i += 1;
            continue;
        }
        out.push_str(&s[lit..i]);
        match b.get(i + 1).copied() {
            Some(b'$') => {
                out.push('$');
                i += 2;
            }
            Some(b'{') => {
                let end = closing(b, i + 2)?;
                out.push_str(&braced(&s[i + 2..end], vars, depth)?);
                i = end + 1;
            }
            Some(c) if name_start(c) => {
                let mut j = i + 1;
                while j < b.len() && name_char(b[j]) {
                    j += 1;
                }
                match vars.get(&s[i + 1..j]) {
                    Some(Var::Plain(v)) => out.push_str(v),
                    // unset: compose warns and substitutes "" (the second pass refuses it as
                    // ENV_INCOMPLETE); opaque: not known here
                    _ => return None,
                }
                i = j;
            }
            // `$` before anything else is a literal `$`
            _ => {
                out.push('$');
                i += 1;
            }
        }
        lit = i;
    }
    out.push_str(&s[lit..]);
    Some(out)
}

/// The index of the `}` closing a `${` whose content starts at `from`; `None` when there is
/// none, or when a bare `{` inside makes compose's own brace counting differ from the reading
/// of nested `${…}`.
fn closing(b: &[u8], from: usize) -> Option<usize> {
    let mut depth = 1;
    let mut i = from;
    while i < b.len() {
        match (b[i], b.get(i + 1).copied()) {
            (b'$', Some(b'{')) => {
                depth += 1;
                i += 2;
            }
            (b'$', Some(b'$')) => i += 2,
            (b'{', _) => return None,
            (b'}', _) => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// The content of `${…}`: a name, then nothing or one operator and its argument.
fn braced(content: &str, vars: &Variables, depth: usize) -> Option<String> {
    let b = content.as_bytes();
    if b.is_empty() || !name_start(b[0]) {
        return None;
    }
    let n = b.iter().take_while(|c| name_char(**c)).count();
    let (name, rest) = content.split_at(n);
    let var = vars.get(name);
    let arg = |skip: usize| expand(&rest[skip..], vars, depth + 1);
    let (colon, op) = match rest.as_bytes() {
        [] => {
            return match var {
                Some(Var::Plain(v)) => Some(v.clone()),
                _ => None,
            }
        }
        [b':', op, ..] => (true, *op),
        [op, ..] => (false, *op),
    };
    let skip = if colon { 2 } else { 1 };
    // set and (with `:`) not empty
    let set = |v: &str| !colon || !v.is_empty();
    match (op, var) {
        (b'-', Some(Var::Plain(v))) if set(v) => Some(v.clone()),
        (b'-', Some(Var::Plain(_)) | None) => arg(skip),
        (b'?', Some(Var::Plain(v))) if set(v) => Some(v.clone()),
        (b'+', Some(Var::Plain(v))) if set(v) => arg(skip),
        (b'+', Some(Var::Plain(_)) | None) => Some(String::new()),
        // `${V+a}`: an opaque variable is set, whatever its value
        (b'+', Some(Var::Opaque)) if !colon => arg(skip),
        // an error (`?` unset), an opaque value, or no operator compose knows
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Variables {
        let mut m = BTreeMap::new();
        for (k, v) in [
            ("DIR", "./library"),
            ("EMPTY", ""),
            ("NAME", "monky-a-web"),
            ("B", "bee"),
        ] {
            m.insert(k.to_string(), Var::Plain(v.to_string()));
        }
        m.insert("SECRET".into(), Var::Opaque);
        Variables::new(m)
    }

    #[test]
    fn composes_rules_with_known_values() {
        let v = vars();
        let i = |s: &str| interpolate(s, &v);
        for (s, want) in [
            ("${DIR}:/data", "./library:/data"),
            ("$DIR:/data", "./library:/data"),
            ("${UNSET:-./data}:/data", "./data:/data"),
            ("${EMPTY:-./data}", "./data"),
            ("${EMPTY-./data}", ""),
            ("${UNSET-./data}", "./data"),
            ("${DIR:-/etc}", "./library"),
            ("${DIR:?set it}", "./library"),
            ("${DIR?set it}", "./library"),
            ("${DIR:+on}", "on"),
            ("${EMPTY:+on}", ""),
            ("${EMPTY+on}", "on"),
            ("${UNSET+on}", ""),
            ("${UNSET:+on}", ""),
            ("${SECRET+on}", "on"),
            ("$$HOME and $$", "$HOME and $"),
            ("${A:-${B:-x}}", "bee"),
            ("${A:-${C:-x}}/y", "x/y"),
            ("${A:-${C:-${NAME}}}", "monky-a-web"),
            ("cost: 5$", "cost: 5$"),
            ("$1 ${DIR}", "$1 ./library"),
            ("no dollar", "no dollar"),
            ("${DIR}${B}", "./librarybee"),
        ] {
            assert_eq!(i(s).as_deref(), Some(want), "{s}");
        }
    }

    #[test]
    fn what_depends_on_a_secret_or_an_unset_variable_is_unknown() {
        let v = vars();
        for s in [
            "${SECRET}:/data",
            "$SECRET",
            "${SECRET:-./data}",
            "${SECRET-./data}",
            "${SECRET:+x}",
            "${UNSET}",
            "$UNSET/x",
            "${UNSET:?needed}",
            "${UNSET?needed}",
            "${EMPTY:?needed}",
            "${HOME}/x",
            "${DOCKER_HOST}",
            "${UNSET:-${SECRET}}",
            "${DIR",
            "${}",
            "${1X}",
            "${DIR/x}",
            "${UNSET:-{x}}",
        ] {
            assert_eq!(interpolate(s, &v), None, "{s}");
        }
    }

    #[test]
    fn a_document_keeps_what_it_cannot_know_as_written() {
        let doc: Value = serde_yaml_ng::from_str(
            "services:\n  web:\n    image: \"app:${TAG:-1}\"\n    container_name: ${NAME}\n    \
             volumes: [\"${DIR:-./data}:/data\", \"${SECRET}:/s\"]\n    labels: {\"${DIR}\": x}\n",
        )
        .unwrap();
        let out = interpolate_doc(&doc, &vars());
        let want: Value = serde_yaml_ng::from_str(
            "services:\n  web:\n    image: \"app:1\"\n    container_name: monky-a-web\n    \
             volumes: [\"./library:/data\", \"${SECRET}:/s\"]\n    labels: {\"${DIR}\": x}\n",
        )
        .unwrap();
        assert_eq!(out, want);
    }
}

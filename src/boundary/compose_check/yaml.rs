//! Reading compose YAML: the parse (aliases and merge keys resolved, what two parsers could read
//! differently refused) and the lenient accessors the rules read values with.

use serde_yaml_ng::{Mapping, Value};

use crate::{Refusal, RefusalCode};

/// Parse compose YAML into a value with aliases and merge keys resolved.
pub fn parse(text: &[u8]) -> Result<Value, Refusal> {
    let mut v: Value = serde_yaml_ng::from_slice(text)
        .map_err(|e| Refusal::new(RefusalCode::BundleInvalid, format!("compose.yaml: {e}")))?;
    v.apply_merge().map_err(|e| {
        Refusal::new(
            RefusalCode::BundleInvalid,
            format!("compose.yaml merge keys: {e}"),
        )
    })?;
    // merge keys may sit at any depth (service level, under deploy, …)
    fn deep_merge(v: &mut Value) -> Result<(), serde_yaml_ng::Error> {
        match v {
            Value::Mapping(m) => {
                for (_, x) in m.iter_mut() {
                    x.apply_merge()?;
                    deep_merge(x)?;
                }
            }
            Value::Sequence(s) => {
                for x in s.iter_mut() {
                    deep_merge(x)?;
                }
            }
            Value::Tagged(t) => deep_merge(&mut t.value)?,
            _ => {}
        }
        Ok(())
    }
    deep_merge(&mut v).map_err(|e| {
        Refusal::new(
            RefusalCode::BundleInvalid,
            format!("compose.yaml merge keys: {e}"),
        )
    })?;
    // what our parser and compose's could read differently is refused, not interpreted:
    // tags (`!reset`, `!!binary`, …) and non-string keys; and the expanded size is bounded
    let mut nodes = 0usize;
    shape(&v, &mut nodes)?;
    Ok(v)
}

/// Nodes a parsed compose file may expand to (anchors and aliases included).
pub const MAX_NODES: usize = 100_000;

fn shape(v: &Value, nodes: &mut usize) -> Result<(), Refusal> {
    *nodes += 1;
    if *nodes > MAX_NODES {
        return Err(Refusal::new(
            RefusalCode::BundleInvalid,
            format!("compose.yaml expands to more than {MAX_NODES} nodes"),
        ));
    }
    match v {
        Value::Tagged(t) => Err(Refusal::new(
            RefusalCode::BundleInvalid,
            format!(
                "compose.yaml uses the YAML tag {} (tags are not accepted)",
                t.tag
            ),
        )),
        Value::Mapping(m) => {
            for (k, x) in m {
                if !matches!(k, Value::String(_)) {
                    return Err(Refusal::new(
                        RefusalCode::BundleInvalid,
                        "compose.yaml has a non-string key",
                    ));
                }
                shape(x, nodes)?;
            }
            Ok(())
        }
        Value::Sequence(s) => s.iter().try_for_each(|x| shape(x, nodes)),
        _ => Ok(()),
    }
}

pub fn untag(v: &Value) -> &Value {
    match v {
        Value::Tagged(t) => untag(&t.value),
        other => other,
    }
}

pub fn get<'a>(m: &'a Mapping, k: &str) -> Option<&'a Value> {
    m.get(Value::String(k.into())).map(untag)
}

pub fn as_str(v: &Value) -> Option<String> {
    match untag(v) {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Conservative: anything that is not clearly false counts as set (`"${X}"` included).
pub(crate) fn truthy(v: &Value) -> bool {
    match untag(v) {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "" | "false" | "no" | "0" | "off" | "n"
        ),
        _ => true,
    }
}

/// A value that sets nothing: not [`truthy`], or an empty list or mapping.
pub(crate) fn sets_nothing(v: &Value) -> bool {
    match untag(v) {
        Value::Sequence(x) => x.is_empty(),
        Value::Mapping(m) => m.is_empty(),
        other => !truthy(other),
    }
}

pub(crate) fn seq_strings(v: &Value) -> Vec<String> {
    match untag(v) {
        Value::Sequence(s) => s.iter().filter_map(as_str).collect(),
        other => as_str(other).into_iter().collect(),
    }
}

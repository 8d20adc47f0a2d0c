//! One reading of a mount, for every rule that reads one (issue 41): a compose service's
//! `volumes` entry in short or long syntax, read as compose reads it ([`service_volumes`], after
//! interpolation), and an Engine API `HostConfig.Binds` entry ([`engine_bind`]). Short and long
//! syntax mean the same to every rule: both become one [`Mount`]. Pure: no I/O.
//!
//! The short syntax is compose-go's `loader.ParseVolume` and compose v1's `VolumeSpec.parse`
//! (where they differ, the stricter reading is judged: compose-go keeps a single letter before a
//! `:` as a Windows drive, v1 reads a volume): `SOURCE:TARGET[:OPTIONS]` split at every `:`, one
//! part alone is the target of an **anonymous volume** (`- /var/www/html/modules` binds nothing), a source starting with `.`,
//! `/` or `~` is a host path (a bind), any other source names a volume. Compose interpolates the
//! string first and splits it after, so the first pass splits only what it could interpolate: a
//! string still holding `$` is [`Entry::Unknown`], left to the second pass (`${DIR:-./data}:/d`
//! is `./data:/d` once interpolated, never split at the `:` inside the braces).

use serde_yaml_ng::{Mapping, Value};

use crate::compose_check::yaml::{as_str, get, untag};

/// What a mount is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A host path.
    Bind,
    /// A named volume (`source` its key), or an anonymous one (`source` empty).
    Volume,
    Tmpfs,
    /// Anything else compose knows (`npipe`, `image`, `cluster`), as written.
    Other(String),
}

/// One mount of a service, whichever syntax wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub kind: Kind,
    /// The host path of a bind (as written: relative to the project directory in the bundle's
    /// own file, absolute in compose's normalised output), the volume's key, or "".
    pub source: String,
    pub target: String,
    /// Read-only only when plainly so: `ro` (and no `rw`) in the short syntax's options,
    /// `read_only: true` in the long syntax (`${RO}` is not).
    pub read_only: bool,
}

impl Mount {
    /// A bind whose source is an absolute host path.
    pub fn absolute_bind(&self) -> bool {
        self.kind == Kind::Bind && self.source.trim().starts_with('/')
    }
}

/// A `volumes` entry: read, or left to the second pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Known(Mount),
    /// The first pass could not interpolate it (a secret, an unset variable): the entry as
    /// written. The second pass judges what compose makes of it.
    Unknown(String),
}

/// A source compose reads as a host path (compose-go `isFilePath`).
pub fn is_host_path(source: &str) -> bool {
    let s = source.as_bytes();
    match s.first() {
        None => false,
        Some(b'.' | b'/' | b'~') => true,
        _ => source.starts_with("\\\\"),
    }
}

/// The entries of a service's `volumes` (a sequence; anything else holds none). `first_pass`:
/// the bundle's own file after the first pass's interpolation, where a `$` left in a value marks
/// it unknown; compose's normalised output has none to leave.
pub fn service_volumes(v: &Value, first_pass: bool) -> Vec<Entry> {
    let Value::Sequence(items) = untag(v) else {
        return Vec::new();
    };
    let unknown = |s: &str| first_pass && s.contains('$');
    items
        .iter()
        .filter_map(|item| match untag(item) {
            Value::String(s) if unknown(s) => Some(Entry::Unknown(s.clone())),
            Value::String(s) => Some(Entry::Known(short(s))),
            Value::Mapping(m) => {
                let text = |k: &str| get(m, k).and_then(as_str).unwrap_or_default();
                if unknown(&text("type")) || unknown(&text("source")) {
                    return Some(Entry::Unknown(text("source")));
                }
                let mut mount = long(m);
                // a mode it could not read is judged at its most permissive (read-only): what
                // that refuses is refused either way, and the second pass judges the value
                if unknown(&text("read_only")) {
                    mount.read_only = true;
                }
                Some(Entry::Known(mount))
            }
            _ => None,
        })
        .collect()
}

/// The short syntax, as compose-go's `ParseVolume` splits it.
pub fn short(spec: &str) -> Mount {
    let anonymous = |target: &str| Mount {
        kind: Kind::Volume,
        source: String::new(),
        target: target.to_string(),
        read_only: false,
    };
    if spec.chars().count() <= 2 {
        return anonymous(spec);
    }
    let mut parts: Vec<String> = Vec::new();
    let mut buf = String::new();
    for c in spec.chars() {
        if c == ':' {
            parts.push(std::mem::take(&mut buf));
        } else {
            buf.push(c);
        }
    }
    parts.push(buf);
    match parts.as_slice() {
        [target] => anonymous(target),
        [source, target, rest @ ..] => {
            let opts: Vec<&str> = rest.iter().flat_map(|o| o.split(',')).collect();
            Mount {
                kind: if is_host_path(source) {
                    Kind::Bind
                } else {
                    Kind::Volume
                },
                source: source.clone(),
                target: target.clone(),
                read_only: opts.iter().any(|o| o.trim() == "ro")
                    && !opts.iter().any(|o| o.trim() == "rw"),
            }
        }
        [] => anonymous(""),
    }
}

/// The long syntax: `type` (absent: a bind when the source is a host path, else a volume),
/// `source`, `target`, `read_only`.
pub fn long(m: &Mapping) -> Mount {
    let source = get(m, "source").and_then(as_str).unwrap_or_default();
    let kind = match get(m, "type").and_then(as_str).as_deref() {
        Some("bind") => Kind::Bind,
        Some("volume") => Kind::Volume,
        Some("tmpfs") => Kind::Tmpfs,
        Some(other) => Kind::Other(other.to_string()),
        None if is_host_path(&source) => Kind::Bind,
        None => Kind::Volume,
    };
    let ro = get(m, "read_only");
    Mount {
        kind,
        source,
        target: get(m, "target").and_then(as_str).unwrap_or_default(),
        read_only: matches!(ro, Some(Value::Bool(true)))
            || ro.and_then(as_str).as_deref() == Some("true"),
    }
}

/// An Engine API `HostConfig.Binds` entry, in the engine's own grammar: `SOURCE:TARGET[:OPTS]`
/// (the engine splits at the first two `:`; a source that is not absolute names a volume).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineBind<'a> {
    pub source: &'a str,
    pub target: &'a str,
    /// The options, as written (`ro`, `rw`, `z`, propagation …).
    pub options: Vec<&'a str>,
}

impl EngineBind<'_> {
    pub fn read_only(&self) -> bool {
        self.options.contains(&"ro") && !self.options.contains(&"rw")
    }

    /// The same entry mounted read-only: `rw` dropped, `ro` added.
    pub fn as_read_only(&self) -> String {
        let mut opts: Vec<&str> = self
            .options
            .iter()
            .copied()
            .filter(|o| *o != "rw" && *o != "ro")
            .collect();
        opts.push("ro");
        format!("{}:{}:{}", self.source, self.target, opts.join(","))
    }
}

pub fn engine_bind(s: &str) -> EngineBind<'_> {
    let mut parts = s.splitn(3, ':');
    let source = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("");
    let options = parts
        .next()
        .map(|o| o.split(',').filter(|x| !x.is_empty()).collect())
        .unwrap_or_default();
    EngineBind {
        source,
        target,
        options,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(kind: Kind, source: &str, target: &str, read_only: bool) -> Mount {
        Mount {
            kind,
            source: source.into(),
            target: target.into(),
            read_only,
        }
    }

    #[test]
    fn the_short_syntax_as_compose_splits_it() {
        for (spec, want) in [
            // one part: an anonymous volume, not a host bind
            (
                "/var/www/html/modules",
                m(Kind::Volume, "", "/var/www/html/modules", false),
            ),
            ("/d", m(Kind::Volume, "", "/d", false)),
            ("./data:/data", m(Kind::Bind, "./data", "/data", false)),
            ("../up:/x:ro", m(Kind::Bind, "../up", "/x", true)),
            (
                "/etc/localtime:/etc/localtime:ro,z",
                m(Kind::Bind, "/etc/localtime", "/etc/localtime", true),
            ),
            ("~/.ssh:/k", m(Kind::Bind, "~/.ssh", "/k", false)),
            (
                "data:/var/lib/app",
                m(Kind::Volume, "data", "/var/lib/app", false),
            ),
            (
                "data:/var/lib/app:ro,rw",
                m(Kind::Volume, "data", "/var/lib/app", false),
            ),
            ("./c:/c:rw", m(Kind::Bind, "./c", "/c", false)),
            // compose-go reads a single letter before `:` as a Windows drive (`h:/h` becomes an
            // anonymous volume); compose v1 reads a volume `h`: the stricter reading is judged
            ("h:/h", m(Kind::Volume, "h", "/h", false)),
        ] {
            assert_eq!(short(spec), want, "{spec}");
        }
    }

    #[test]
    fn short_and_long_syntax_mean_the_same() {
        let long_of = |y: &str| {
            let v: Value = serde_yaml_ng::from_str(y).unwrap();
            long(v.as_mapping().unwrap())
        };
        assert_eq!(
            long_of("{type: bind, source: ./data, target: /data}"),
            short("./data:/data")
        );
        assert_eq!(
            long_of("{type: bind, source: ./c, target: /c, read_only: true}"),
            short("./c:/c:ro")
        );
        assert_eq!(
            long_of("{type: volume, source: data, target: /d}"),
            short("data:/d")
        );
        assert_eq!(long_of("{source: /srv, target: /s}").kind, Kind::Bind);
        assert!(!long_of("{type: bind, source: /x, target: /x, read_only: \"${RO}\"}").read_only);
    }

    #[test]
    fn the_first_pass_splits_only_what_it_interpolated() {
        let v: Value = serde_yaml_ng::from_str(
            "[\"${DIR:-./data}:/data\", \"./a:/a\", {type: bind, source: \"${S}\", target: /s}, {type: \"${T}\", source: /x, target: /x}, \"/anon\"]",
        )
        .unwrap();
        let got = service_volumes(&v, true);
        assert_eq!(got[0], Entry::Unknown("${DIR:-./data}:/data".into()));
        assert_eq!(got[1], Entry::Known(short("./a:/a")));
        assert_eq!(got[2], Entry::Unknown("${S}".into()));
        assert_eq!(got[3], Entry::Unknown("/x".into()));
        // only the mode unknown: read at its most permissive
        let v: Value = serde_yaml_ng::from_str(
            "[{type: bind, source: /etc/cron.d, target: /c, read_only: \"${RO}\"}]",
        )
        .unwrap();
        assert_eq!(
            service_volumes(&v, true),
            vec![Entry::Known(m(Kind::Bind, "/etc/cron.d", "/c", true))]
        );
        assert_eq!(got[4], Entry::Known(m(Kind::Volume, "", "/anon", false)));
        // compose's normalised output is read as it stands
        let second = service_volumes(&v, false);
        assert!(second.iter().all(|e| matches!(e, Entry::Known(_))));
    }

    #[test]
    fn engine_binds_keep_their_options() {
        let b = engine_bind("/rel/prometheus:/etc/prometheus:rw,z");
        assert_eq!((b.source, b.target), ("/rel/prometheus", "/etc/prometheus"));
        assert!(!b.read_only());
        assert_eq!(b.as_read_only(), "/rel/prometheus:/etc/prometheus:z,ro");
        assert_eq!(engine_bind("/rel/c:/c").as_read_only(), "/rel/c:/c:ro");
        assert!(engine_bind("/x:/y:ro").read_only());
        assert_eq!(engine_bind("vol:/y").source, "vol");
    }
}

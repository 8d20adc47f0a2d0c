//! The registry pull credential (0.1.7): a manifest entry marked `use: registry-auth` is written
//! to the agent's own `DOCKER_CONFIG/config.json` (dir 0700, file 0600), never to `.env`, where it
//! would land in every container's environment.

use std::path::Path;

use base64::Engine;
use zeroize::Zeroizing;

use monky_base::files::{ensure_dir, write_private, StateError};

#[derive(Debug, thiserror::Error)]
#[error("registry credential unusable: {0}")]
pub struct RegistryAuthError(pub String);

pub struct RegistryAuth {
    pub registry: String,
    pub username: String,
    pub password: Zeroizing<String>,
}

/// Both seeded shapes: a JSON object `{registry?, username, password}` or `username:password`
/// (registry from `registry_host`). Error messages never include the value.
pub fn parse(value: &str, default_registry: &str) -> Result<RegistryAuth, RegistryAuthError> {
    let t = value.trim();
    if t.is_empty() {
        return Err(RegistryAuthError("empty".into()));
    }
    if t.starts_with('{') {
        let v: serde_json::Value =
            serde_json::from_str(t).map_err(|_| RegistryAuthError("not valid JSON".into()))?;
        let f = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let (u, p) = (f("username"), Zeroizing::new(f("password")));
        if u.is_empty() || p.is_empty() {
            return Err(RegistryAuthError("JSON needs username and password".into()));
        }
        let reg = f("registry");
        let registry = if reg.is_empty() {
            default_registry.to_string()
        } else {
            reg
        };
        if registry.is_empty() {
            return Err(RegistryAuthError(
                "no registry named and registry_host is empty".into(),
            ));
        }
        return Ok(RegistryAuth {
            registry,
            username: u,
            password: p,
        });
    }
    let Some((u, p)) = t.split_once(':') else {
        return Err(RegistryAuthError(
            "neither JSON nor username:password".into(),
        ));
    };
    if u.is_empty() || p.is_empty() {
        return Err(RegistryAuthError(
            "username:password with an empty part".into(),
        ));
    }
    if default_registry.is_empty() {
        return Err(RegistryAuthError(
            "username:password needs registry_host in config".into(),
        ));
    }
    Ok(RegistryAuth {
        registry: default_registry.into(),
        username: u.into(),
        password: Zeroizing::new(p.into()),
    })
}

pub fn write_docker_config(dir: &Path, a: &RegistryAuth) -> Result<(), StateError> {
    ensure_dir(dir, 0o700)?;
    let raw = Zeroizing::new(format!("{}:{}", a.username, a.password.as_str()));
    let token = Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(raw.as_bytes()));
    monky_base::redact::register_basic(&a.username, &a.password);
    // written by hand, not through a serde_json::Value: a Value would hold a copy of the token
    // that is freed without being wiped (base64 needs no JSON escaping; the name gets serde's)
    let name = serde_json::to_string(&a.registry).expect("a string serialises");
    let body = Zeroizing::new(format!(
        "{{\n  \"auths\": {{\n    {name}: {{\n      \"auth\": \"{}\"\n    }}\n  }}\n}}",
        token.as_str()
    ));
    write_private(&dir.join("config.json"), body.as_bytes(), 0o600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let a = parse(
            r#"{"registry":"r:5000","username":"robot$x","password":"p:w"}"#,
            "d",
        )
        .unwrap();
        assert_eq!(
            (
                a.registry.as_str(),
                a.username.as_str(),
                a.password.as_str()
            ),
            ("r:5000", "robot$x", "p:w")
        );
        let b = parse("robot$x:p:w", "harbor").unwrap();
        assert_eq!(
            (b.registry.as_str(), b.password.as_str()),
            ("harbor", "p:w")
        );
        for bad in ["", "nocolon", "{bad", r#"{"username":"u"}"#, ":p", "u:"] {
            let e = parse(bad, "h").err().expect(bad).to_string();
            assert!(bad.len() < 3 || !e.contains(bad), "{e}");
        }
    }

    #[test]
    fn written_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("docker");
        write_docker_config(&dir, &parse("u:pw", "reg:5000").unwrap()).unwrap();
        let m = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(m(&dir), 0o700);
        assert_eq!(m(&dir.join("config.json")), 0o600);
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
        assert_eq!(v["auths"]["reg:5000"]["auth"], "dTpwdw==");
    }
}

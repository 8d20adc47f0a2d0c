//! The OpenBao calls the agent makes with its own token: JWT login, pinned KV v2 reads, and
//! token upkeep (lookup-self, renew-self with an explicit increment, revoke-self); and the pure
//! reading of their answers ([`answer`], the `parse_*` functions, [`duration`]), which the
//! calls use as is and the property tests reach directly.

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde::Deserialize;
use zeroize::Zeroizing;

use crate::http::{HttpClient, HttpError};

const LIMIT: usize = 1 << 20;

/// The longest duration taken from OpenBao: 100 years (its own maximum TTL is far shorter).
pub const MAX_DURATION_S: u64 = 100 * 365 * 86400;

#[derive(Debug, thiserror::Error)]
pub enum BaoError {
    #[error("OpenBao unavailable: {0}")]
    Unavailable(String, #[source] Option<HttpError>),
    #[error("OpenBao denied {what} (403): {msg}")]
    Denied { what: String, msg: String },
    #[error("OpenBao: {what} not found (404)")]
    NotFound { what: String },
    #[error("OpenBao refused {what} ({status}): {msg}")]
    Refused {
        what: String,
        status: u16,
        msg: String,
    },
    #[error("OpenBao {what}: unexpected response: {msg}")]
    Protocol { what: String, msg: String },
}

pub struct Login {
    pub token: Zeroizing<String>,
    pub lease_duration: u64,
    pub renewable: bool,
    pub env_id: String,
    pub grant_jti: String,
}

#[derive(Debug)]
pub struct TokenInfo {
    pub ttl: u64,
}

pub struct Bao {
    http: HttpClient,
    auth_mount: String,
    role: String,
}

#[derive(Deserialize)]
struct Errors {
    #[serde(default)]
    errors: Vec<String>,
}

impl Bao {
    /// The client for one OpenBao: its HTTP stack, the JWT auth mount and role the box logs in with.
    pub fn new(http: HttpClient, auth_mount: &str, role: &str) -> Bao {
        Bao {
            http,
            auth_mount: auth_mount.to_string(),
            role: role.to_string(),
        }
    }

    pub fn http(&self) -> &HttpClient {
        &self.http
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> Result<(StatusCode, Bytes), BaoError> {
        let body = body.map(|b| serde_json::to_vec(&b).expect("json"));
        let r = self
            .http
            .request(method, path, token, body, LIMIT)
            .await
            .map_err(|e| BaoError::Unavailable(e.to_string(), Some(e)))?;
        Ok((r.status, r.body))
    }

    pub async fn login(&self, grant: &str) -> Result<Login, BaoError> {
        let path = format!("/v1/auth/{}/login", self.auth_mount);
        let (status, body) = self
            .call(
                Method::POST,
                &path,
                None,
                Some(serde_json::json!({"role": self.role, "jwt": grant})),
            )
            .await?;
        let login = parse_login(status, &body);
        wipe(body);
        let login = login?;
        monky_base::redact::register(&login.token);
        Ok(login)
    }

    /// `GET /v1/<mount>/data/<rest>?version=<n>` → `data.data.<key>`. `path` is the manifest's
    /// `monky/data/<env>/see/<name>`, already checked against the env prefix by the caller.
    pub async fn kv_read(
        &self,
        token: &str,
        path: &str,
        key: &str,
        version: Option<u64>,
    ) -> Result<Zeroizing<String>, BaoError> {
        let mut url = format!("/v1/{path}");
        if let Some(v) = version {
            url.push_str(&format!("?version={v}"));
        }
        let (status, body) = self.call(Method::GET, &url, Some(token), None).await?;
        let s = parse_kv_read(status, &body, path, key);
        wipe(body);
        let s = s?;
        monky_base::redact::register(&s);
        Ok(s)
    }

    pub async fn lookup_self(&self, token: &str) -> Result<TokenInfo, BaoError> {
        let (status, body) = self
            .call(Method::GET, "/v1/auth/token/lookup-self", Some(token), None)
            .await?;
        parse_lookup_self(status, &body)
    }

    /// Renew with an explicit increment: an empty body would reset the TTL to the role default.
    pub async fn renew_self(&self, token: &str, increment_s: u64) -> Result<u64, BaoError> {
        let (status, body) = self
            .call(
                Method::POST,
                "/v1/auth/token/renew-self",
                Some(token),
                Some(serde_json::json!({"increment": format!("{increment_s}s")})),
            )
            .await?;
        parse_renew_self(status, &body)
    }

    pub async fn revoke_self(&self, token: &str) -> Result<(), BaoError> {
        let (status, body) = self
            .call(
                Method::POST,
                "/v1/auth/token/revoke-self",
                Some(token),
                None,
            )
            .await?;
        answer("revoke-self", status, &body).map(|_| ())
    }
}

/// Zeroes an answer that held a token or a secret once it is parsed. `Bytes` can only be
/// written when this is its last handle (the usual case: hyper hands the collected body over);
/// the chunks hyper read it in and serde's parse tree are freed unwiped (docs/ARCHITECTURE.md,
/// "Secrets in memory").
fn wipe(body: Bytes) {
    use zeroize::Zeroize;
    if let Ok(mut m) = body.try_into_mut() {
        m.as_mut().zeroize();
    }
}

// ---- the answers, parsed (pure: property-tested over arbitrary bodies) ------------------------

/// Any OpenBao answer: a 2xx body as JSON (empty = `null`), or the error its status means, with
/// OpenBao's `errors` (or the raw body) redacted, then cut to 200 bytes.
pub fn answer(what: &str, status: StatusCode, body: &[u8]) -> Result<serde_json::Value, BaoError> {
    let msg = || {
        let m = serde_json::from_slice::<Errors>(body)
            .map(|e| e.errors.join("; "))
            .unwrap_or_else(|_| String::from_utf8_lossy(body).into_owned());
        monky_base::redact::redact_cut(m.trim(), 200, monky_base::redact::Keep::Head)
    };
    match status {
        s if s.is_success() => {
            if body.is_empty() {
                return Ok(serde_json::Value::Null);
            }
            serde_json::from_slice(body).map_err(|e| BaoError::Protocol {
                what: what.into(),
                msg: e.to_string(),
            })
        }
        StatusCode::FORBIDDEN => Err(BaoError::Denied {
            what: what.into(),
            msg: msg(),
        }),
        StatusCode::NOT_FOUND => Err(BaoError::NotFound { what: what.into() }),
        s if s.is_server_error() => Err(BaoError::Unavailable(
            format!("{what}: {s} {}", msg()),
            None,
        )),
        s => Err(BaoError::Refused {
            what: what.into(),
            status: s.as_u16(),
            msg: msg(),
        }),
    }
}

/// A duration in seconds from OpenBao (`lease_duration`, `ttl`): absent or `null` is 0 (the
/// token is treated as expiring: renewed or re-leased); a whole number is taken as is, capped at
/// [`MAX_DURATION_S`] so that every later `now + ttl` stays far from any integer bound; a
/// fraction is cut to whole seconds; a negative number, or anything that is not a number, is a
/// protocol error naming the field (never its value).
pub fn duration(what: &str, field: &str, v: Option<&serde_json::Value>) -> Result<u64, BaoError> {
    let bad = |why: &str| BaoError::Protocol {
        what: what.into(),
        msg: format!("{field} {why}"),
    };
    let secs = match v {
        None | Some(serde_json::Value::Null) => return Ok(0),
        Some(serde_json::Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => u,
            (None, Some(f)) if f.is_finite() && f >= 0.0 => f as u64, // `as` saturates
            (None, _) => return Err(bad("is negative")),
        },
        Some(_) => return Err(bad("is not a number of seconds")),
    };
    Ok(secs.min(MAX_DURATION_S))
}

/// `auth/<mount>/login`: `auth.client_token` (required, a non-empty string), its
/// `lease_duration`, `renewable` and the `metadata` tenancy pins.
pub fn parse_login(status: StatusCode, body: &[u8]) -> Result<Login, BaoError> {
    let v = answer("login", status, body)?;
    let protocol = |msg: &str| BaoError::Protocol {
        what: "login".into(),
        msg: msg.into(),
    };
    let auth = v
        .get("auth")
        .filter(|a| a.is_object())
        .ok_or_else(|| protocol("no auth block"))?;
    let token = auth
        .get("client_token")
        .and_then(|t| t.as_str())
        .unwrap_or_default();
    if token.is_empty() {
        return Err(protocol("no client_token"));
    }
    let meta = |k: &str| {
        auth.get("metadata")
            .and_then(|m| m.get(k))
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string()
    };
    Ok(Login {
        token: Zeroizing::new(token.to_string()),
        lease_duration: duration("login", "auth.lease_duration", auth.get("lease_duration"))?,
        renewable: auth
            .get("renewable")
            .and_then(|x| x.as_bool())
            .unwrap_or(false),
        env_id: meta("env_id"),
        grant_jti: meta("grant_jti"),
    })
}

/// `auth/token/lookup-self`: `data.ttl`.
pub fn parse_lookup_self(status: StatusCode, body: &[u8]) -> Result<TokenInfo, BaoError> {
    let v = answer("lookup-self", status, body)?;
    let data = v
        .get("data")
        .filter(|d| d.is_object())
        .ok_or_else(|| BaoError::Protocol {
            what: "lookup-self".into(),
            msg: "no data block".into(),
        })?;
    Ok(TokenInfo {
        ttl: duration("lookup-self", "data.ttl", data.get("ttl"))?,
    })
}

/// `auth/token/renew-self`: the new `auth.lease_duration`.
pub fn parse_renew_self(status: StatusCode, body: &[u8]) -> Result<u64, BaoError> {
    let v = answer("renew-self", status, body)?;
    duration(
        "renew-self",
        "auth.lease_duration",
        v.get("auth").and_then(|a| a.get("lease_duration")),
    )
}

/// A KV v2 read of `path`: `data.data.<key>`; a string as is, another JSON value as its JSON
/// text, absent or `null` → not found (naming the key and the path, never a value).
pub fn parse_kv_read(
    status: StatusCode,
    body: &[u8],
    path: &str,
    key: &str,
) -> Result<Zeroizing<String>, BaoError> {
    let v = answer(&format!("read {path}"), status, body)?;
    let val = v
        .get("data")
        .and_then(|d| d.get("data"))
        .and_then(|d| d.get(key));
    match val {
        Some(serde_json::Value::String(s)) => Ok(Zeroizing::new(s.clone())),
        Some(serde_json::Value::Null) | None => Err(BaoError::NotFound {
            what: format!("key {key:?} in {path}"),
        }),
        Some(other) => Ok(Zeroizing::new(other.to_string())),
    }
}

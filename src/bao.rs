//! The OpenBao calls the agent makes with its own token: JWT login, pinned KV v2 reads, and
//! token upkeep (lookup-self, renew-self with an explicit increment, revoke-self).

use hyper::{Method, StatusCode};
use serde::Deserialize;
use zeroize::Zeroizing;

use crate::http::HttpClient;

const LIMIT: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum BaoError {
    #[error("OpenBao unavailable: {0}")]
    Unavailable(String),
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

#[derive(Debug, Deserialize)]
pub struct TokenInfo {
    #[serde(default)]
    pub ttl: u64,
}

pub struct Bao {
    pub http: HttpClient,
    pub auth_mount: String,
    pub role: String,
}

#[derive(Deserialize)]
struct Errors {
    #[serde(default)]
    errors: Vec<String>,
}

impl Bao {
    async fn call(
        &self,
        what: &str,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, BaoError> {
        let body = body.map(|b| serde_json::to_vec(&b).expect("json"));
        let r = self
            .http
            .request(method, path, token, body, LIMIT)
            .await
            .map_err(|e| BaoError::Unavailable(e.to_string()))?;
        let msg = || {
            let m = serde_json::from_slice::<Errors>(&r.body)
                .map(|e| e.errors.join("; "))
                .unwrap_or_else(|_| {
                    // redacted whole, then cut: a cut secret no longer matches
                    crate::redact::redact(&String::from_utf8_lossy(&r.body))
                        .chars()
                        .take(200)
                        .collect()
                });
            crate::redact::redact(m.trim())
        };
        match r.status {
            s if s.is_success() => {
                if r.body.is_empty() {
                    return Ok(serde_json::Value::Null);
                }
                serde_json::from_slice(&r.body).map_err(|e| BaoError::Protocol {
                    what: what.into(),
                    msg: e.to_string(),
                })
            }
            StatusCode::FORBIDDEN => Err(BaoError::Denied {
                what: what.into(),
                msg: msg(),
            }),
            StatusCode::NOT_FOUND => Err(BaoError::NotFound { what: what.into() }),
            s if s.is_server_error() => {
                Err(BaoError::Unavailable(format!("{what}: {s} {}", msg())))
            }
            s => Err(BaoError::Refused {
                what: what.into(),
                status: s.as_u16(),
                msg: msg(),
            }),
        }
    }

    pub async fn login(&self, grant: &str) -> Result<Login, BaoError> {
        let path = format!("/v1/auth/{}/login", self.auth_mount);
        let v = self
            .call(
                "login",
                Method::POST,
                &path,
                None,
                Some(serde_json::json!({"role": self.role, "jwt": grant})),
            )
            .await?;
        let auth = v.get("auth").ok_or_else(|| BaoError::Protocol {
            what: "login".into(),
            msg: "no auth block".into(),
        })?;
        let token = auth
            .get("client_token")
            .and_then(|t| t.as_str())
            .unwrap_or_default();
        if token.is_empty() {
            return Err(BaoError::Protocol {
                what: "login".into(),
                msg: "no client_token".into(),
            });
        }
        crate::redact::register(token);
        let meta = |k: &str| {
            auth.get("metadata")
                .and_then(|m| m.get(k))
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_string()
        };
        Ok(Login {
            token: Zeroizing::new(token.to_string()),
            lease_duration: auth
                .get("lease_duration")
                .and_then(|x| x.as_u64())
                .unwrap_or(0),
            renewable: auth
                .get("renewable")
                .and_then(|x| x.as_bool())
                .unwrap_or(false),
            env_id: meta("env_id"),
            grant_jti: meta("grant_jti"),
        })
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
        let what = format!("read {path}");
        let v = self
            .call(&what, Method::GET, &url, Some(token), None)
            .await?;
        let val = v
            .get("data")
            .and_then(|d| d.get("data"))
            .and_then(|d| d.get(key));
        let s = match val {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Null) | None => {
                return Err(BaoError::NotFound {
                    what: format!("key {key:?} in {path}"),
                })
            }
            Some(other) => other.to_string(),
        };
        crate::redact::register(&s);
        Ok(Zeroizing::new(s))
    }

    pub async fn lookup_self(&self, token: &str) -> Result<TokenInfo, BaoError> {
        let v = self
            .call(
                "lookup-self",
                Method::GET,
                "/v1/auth/token/lookup-self",
                Some(token),
                None,
            )
            .await?;
        serde_json::from_value(v.get("data").cloned().unwrap_or_default()).map_err(|e| {
            BaoError::Protocol {
                what: "lookup-self".into(),
                msg: e.to_string(),
            }
        })
    }

    /// Renew with an explicit increment: an empty body would reset the TTL to the role default.
    pub async fn renew_self(&self, token: &str, increment_s: u64) -> Result<u64, BaoError> {
        let v = self
            .call(
                "renew-self",
                Method::POST,
                "/v1/auth/token/renew-self",
                Some(token),
                Some(serde_json::json!({"increment": format!("{increment_s}s")})),
            )
            .await?;
        Ok(v.get("auth")
            .and_then(|a| a.get("lease_duration"))
            .and_then(|x| x.as_u64())
            .unwrap_or(0))
    }

    pub async fn revoke_self(&self, token: &str) -> Result<(), BaoError> {
        self.call(
            "revoke-self",
            Method::POST,
            "/v1/auth/token/revoke-self",
            Some(token),
            None,
        )
        .await
        .map(|_| ())
    }
}

//! The four tenancy calls (docs/PROTOCOL.md): checkin, bundle, lease, report.

use hyper::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::http::{HttpClient, HttpError};

pub const BODY_LIMIT: usize = 1 << 20;
pub const BUNDLE_LIMIT: usize = 16 << 20;
/// An agent package (PROTOCOL 0.4).
pub const PACKAGE_LIMIT: usize = 64 << 20;

#[derive(Debug, thiserror::Error)]
pub enum TenancyError {
    #[error("tenancy refused the agent's token (401 {code}): {message}")]
    Unauthenticated { code: String, message: String },
    #[error("tenancy: AGENT_ENV_MISMATCH: {0}")]
    EnvMismatch(String),
    #[error("tenancy rate-limited {what} ({code}), retry after {retry_after}s")]
    RateLimited {
        what: &'static str,
        code: String,
        retry_after: u64,
    },
    #[error("tenancy unavailable: {0}")]
    Unavailable(String, #[source] Option<HttpError>),
    #[error("tenancy: BUNDLE_TOO_LARGE: bundle over {0} bytes")]
    BundleTooLarge(usize),
    #[error("tenancy answered {status} to {what}: {code}: {message}")]
    Rejected {
        what: &'static str,
        status: u16,
        code: String,
        message: String,
    },
    #[error("tenancy {what}: unexpected response: {detail}")]
    Protocol { what: &'static str, detail: String },
    #[error(
        "tenancy: the lease answered with AppRole material (the retired flow); refusing to use it"
    )]
    LegacyLease,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Container {
    pub service: String,
    pub state: String,
    pub health: String,
    /// The engine's restart count (PROTOCOL 0.4), where inspected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
    /// How an exited container ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// A one-shot service: done when it exited 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub job: bool,
    /// The running container's image as `name@sha256:…` (PROTOCOL 0.5), when it was created
    /// by a digest; omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The engine's id, for diagnosis; not part of the check-in.
    #[serde(skip)]
    pub id: String,
}

#[derive(Debug, Serialize)]
pub struct Checkin<'a> {
    pub env_id: &'a str,
    pub agent_version: &'a str,
    pub applied_sha: Option<&'a str>,
    pub host: &'a str,
    pub containers: &'a [Container],
    /// The box's clock minus tenancy's at the last answer (PROTOCOL 0.4); `null` when unknown.
    pub clock_skew_s: Option<i64>,
}

/// What tenancy tells the box to do (PROTOCOL: `action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Apply,
    None,
    Down,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Apply => "apply",
            Action::None => "none",
            Action::Down => "down",
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct CheckinResponse {
    pub action: Action,
    #[serde(default)]
    pub desired_sha: Option<String>,
    #[serde(default)]
    pub prod: bool,
    #[serde(default)]
    pub purge_volumes: bool,
    /// Apply now, whatever the box's maintenance windows say (PROTOCOL 0.3).
    #[serde(default)]
    pub urgent: bool,
    /// Tenancy asks for a diagnostics bundle under this request id (PROTOCOL 0.4).
    #[serde(default)]
    pub collect: Option<String>,
    /// The agent version tenancy wants on this box (PROTOCOL 0.4); judged by `selfupdate`.
    #[serde(default)]
    pub agent: Option<AgentOffer>,
}

/// `agent: {version, sha256, signatures}` of a check-in answer.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct AgentOffer {
    pub version: String,
    pub sha256: String,
    pub signatures: Vec<SignatureWire>,
    /// A release statement (PROTOCOL 0.5), base64; the signatures then cover its bytes.
    pub statement: Option<String>,
}

#[derive(Deserialize)]
pub struct BundleFileWire {
    pub path: String,
    pub content_b64: String,
}

#[derive(Deserialize)]
pub struct BundleWire {
    pub env_id: String,
    pub sha: String,
    pub files: Vec<BundleFileWire>,
    /// Release-pipeline signatures over the bundle sha (PROTOCOL 0.3); judged by `signing`.
    #[serde(default)]
    pub signatures: Vec<SignatureWire>,
    /// The release statement the signatures cover instead of the bare sha (PROTOCOL 0.5).
    #[serde(default)]
    pub statement: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct SignatureWire {
    pub key_id: String,
    pub alg: String,
    pub sig: String,
}

pub struct Lease {
    pub grant: Zeroizing<String>,
    pub jti: String,
}

/// What a report says happened (PROTOCOL: `result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportResult {
    Applied,
    Failed,
    Down,
}

impl ReportResult {
    pub fn as_str(self) -> &'static str {
        match self {
            ReportResult::Applied => "applied",
            ReportResult::Failed => "failed",
            ReportResult::Down => "down",
        }
    }
}

impl std::fmt::Display for ReportResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Serialize)]
pub struct Report<'a> {
    pub env_id: &'a str,
    pub sha: Option<&'a str>,
    pub result: ReportResult,
    pub detail: String,
    pub log_tail: String,
    pub agent_version: &'a str,
    pub containers: &'a [Container],
}

pub struct Tenancy {
    http: HttpClient,
    /// What the last answers said about the link: clock skew, check-in round trip.
    seen: std::sync::Mutex<Seen>,
}

/// Read off tenancy's answers as they come (any call, any status).
#[derive(Debug, Clone, Copy, Default)]
pub struct Seen {
    /// The box's clock minus tenancy's `Date`, seconds.
    pub clock_skew_s: Option<i64>,
    /// How long the last check-in took, request to full answer.
    pub checkin_rtt_ms: Option<u64>,
}

/// The diagnostics upload (PROTOCOL 0.4), at most [`BODY_LIMIT`] serialised.
#[derive(Debug, Serialize)]
pub struct Diagnostics<'a> {
    pub env_id: &'a str,
    pub request_id: &'a str,
    pub agent_version: &'a str,
    /// RFC 3339.
    pub collected_at: String,
    pub bundle: &'a serde_json::Value,
}

#[derive(Deserialize)]
struct ErrBody {
    error: ErrInner,
}
#[derive(Deserialize)]
struct ErrInner {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
}

fn map_http(e: HttpError, what: &'static str, limit: usize) -> TenancyError {
    match e {
        HttpError::TooLarge(_, _) if limit == BUNDLE_LIMIT => TenancyError::BundleTooLarge(limit),
        HttpError::TooLarge(_, n) => TenancyError::Protocol {
            what,
            detail: format!("body over {n} bytes"),
        },
        other => TenancyError::Unavailable(other.to_string(), Some(other)),
    }
}

impl Tenancy {
    pub fn new(http: HttpClient) -> Tenancy {
        Tenancy {
            http,
            seen: Default::default(),
        }
    }

    /// What the answers so far said about the clock and the round trip.
    pub fn seen(&self) -> Seen {
        *self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn http(&self) -> &HttpClient {
        &self.http
    }

    async fn call(
        &self,
        what: &'static str,
        method: Method,
        path: &str,
        bearer: &str,
        body: Option<Vec<u8>>,
        limit: usize,
    ) -> Result<crate::http::Response, TenancyError> {
        let started = std::time::Instant::now();
        let r = self
            .http
            .request(method, path, Some(bearer), body, limit)
            .await
            .map_err(|e| map_http(e, what, limit))?;
        {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            let date = r.headers.get(hyper::header::DATE);
            if let Some(s) = date
                .and_then(|d| d.to_str().ok())
                .and_then(|d| monky_base::clock::skew_from_date(d, monky_base::clock::now()))
            {
                seen.clock_skew_s = Some(s);
            }
            if what == "checkin" {
                seen.checkin_rtt_ms = u64::try_from(started.elapsed().as_millis()).ok();
            }
        }
        if r.status.is_success() {
            return Ok(r);
        }
        let retry_after = r
            .headers
            .get(hyper::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok());
        Err(rejection(what, r.status, retry_after, &r.body))
    }

    fn json<T: serde::de::DeserializeOwned>(
        what: &'static str,
        body: &[u8],
    ) -> Result<T, TenancyError> {
        serde_json::from_slice(body).map_err(|e| TenancyError::Protocol {
            what,
            detail: e.to_string(),
        })
    }

    pub async fn checkin(
        &self,
        bearer: &str,
        req: &Checkin<'_>,
    ) -> Result<CheckinResponse, TenancyError> {
        let body = serde_json::to_vec(req).expect("serialisable");
        let r = self
            .call(
                "checkin",
                Method::POST,
                "/v1/agent/checkin",
                bearer,
                Some(body),
                BODY_LIMIT,
            )
            .await?;
        parse_checkin(&r.body)
    }

    /// Returns the wire bundle and the `X-Bundle-Sha256` header.
    pub async fn bundle(
        &self,
        bearer: &str,
        env_id: &str,
        sha: &str,
    ) -> Result<(BundleWire, Option<String>), TenancyError> {
        let path = format!("/v1/agent/bundle/{env_id}/{sha}");
        let r = self
            .call("bundle", Method::GET, &path, bearer, None, BUNDLE_LIMIT)
            .await?;
        let hdr = r
            .headers
            .get("x-bundle-sha256")
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_ascii_lowercase());
        Ok((Self::json("bundle", &r.body)?, hdr))
    }

    pub async fn lease(
        &self,
        bearer: &str,
        env_id: &str,
        reason: &str,
    ) -> Result<Lease, TenancyError> {
        let body = serde_json::to_vec(&serde_json::json!({"env_id": env_id, "reason": reason}))
            .expect("json");
        let r = self
            .call(
                "lease",
                Method::POST,
                "/v1/agent/lease",
                bearer,
                Some(body),
                BODY_LIMIT,
            )
            .await?;
        let lease = parse_lease(&r.body)?;
        monky_base::redact::register(&lease.grant);
        Ok(lease)
    }

    /// `POST /v1/agent/diagnostics`; a body over [`BODY_LIMIT`] is never sent.
    pub async fn diagnostics(&self, bearer: &str, d: &Diagnostics<'_>) -> Result<(), TenancyError> {
        let body = serde_json::to_vec(d).expect("serialisable");
        if body.len() > BODY_LIMIT {
            return Err(TenancyError::Protocol {
                what: "diagnostics",
                detail: format!("bundle of {} bytes is over {BODY_LIMIT}", body.len()),
            });
        }
        self.call(
            "diagnostics",
            Method::POST,
            "/v1/agent/diagnostics",
            bearer,
            Some(body),
            BODY_LIMIT,
        )
        .await?;
        Ok(())
    }

    /// `GET /v1/agent/package/{version}/{arch}` streamed into `out`: (bytes, sha256 hex).
    /// The caller has checked `version` and `arch` are path-safe.
    pub async fn agent_package(
        &self,
        bearer: &str,
        version: &str,
        arch: &str,
        out: &mut std::fs::File,
    ) -> Result<(u64, String), TenancyError> {
        const WHAT: &str = "agent package";
        let path = format!("/v1/agent/package/{version}/{arch}");
        // 64 MiB over a slow mesh link: far longer than one API call's timeout
        let total = std::time::Duration::from_secs(600);
        match self
            .http
            .download(&path, Some(bearer), out, PACKAGE_LIMIT, total)
            .await
        {
            Ok(crate::http::Download::Done { bytes, sha256 }) => Ok((bytes, sha256)),
            Ok(crate::http::Download::Refused(r)) => {
                let retry_after = r
                    .headers
                    .get(hyper::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok());
                Err(rejection(WHAT, r.status, retry_after, &r.body))
            }
            Err(HttpError::TooLarge(_, n)) => Err(TenancyError::Protocol {
                what: WHAT,
                detail: format!("package over {n} bytes"),
            }),
            Err(e) => Err(map_http(e, WHAT, PACKAGE_LIMIT)),
        }
    }

    pub async fn report(&self, bearer: &str, rep: &Report<'_>) -> Result<(), TenancyError> {
        let body = serde_json::to_vec(rep).expect("serialisable");
        self.call(
            "report",
            Method::POST,
            "/v1/agent/report",
            bearer,
            Some(body),
            BODY_LIMIT,
        )
        .await?;
        Ok(())
    }
}

/// What a non-2xx answer means, from its status, `Retry-After` and body (pure: property-tested
/// over arbitrary answers). Code and message are redacted, then cut, whatever shape the body has.
pub fn rejection(
    what: &'static str,
    status: StatusCode,
    retry_after: Option<&str>,
    body: &[u8],
) -> TenancyError {
    let (code, message) = match serde_json::from_slice::<ErrBody>(body) {
        Ok(b) => (b.error.code, b.error.message),
        Err(_) => (String::new(), String::from_utf8_lossy(body).into_owned()),
    };
    let cut = |t: &str, n| monky_base::redact::redact_cut(t, n, monky_base::redact::Keep::Head);
    let (code, message) = (cut(&code, 64), cut(&message, 200));
    match status {
        StatusCode::UNAUTHORIZED => TenancyError::Unauthenticated { code, message },
        StatusCode::CONFLICT if code == "AGENT_ENV_MISMATCH" => TenancyError::EnvMismatch(message),
        StatusCode::TOO_MANY_REQUESTS => TenancyError::RateLimited {
            what,
            code: if code.is_empty() {
                "RATE_LIMITED".into()
            } else {
                code
            },
            retry_after: retry_after
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(60),
        },
        s if s.is_server_error() => {
            TenancyError::Unavailable(format!("{what}: {s} {code} {message}"), None)
        }
        s => TenancyError::Rejected {
            what,
            status: s.as_u16(),
            code,
            message,
        },
    }
}

/// A check-in answer, validated: a known action, and a well-formed `desired_sha` when it says
/// `apply`. Any other `desired_sha` (odd length, non-ASCII…) is dropped, never trusted.
pub fn parse_checkin(body: &[u8]) -> Result<CheckinResponse, TenancyError> {
    // an unknown action is a serde error naming the variants it expects
    let mut resp: CheckinResponse = Tenancy::json("checkin", body)?;
    if !resp.desired_sha.as_deref().is_some_and(is_sha) {
        if resp.action == Action::Apply {
            return Err(TenancyError::Protocol {
                what: "checkin",
                detail: "action apply without a valid desired_sha".into(),
            });
        }
        resp.desired_sha = None;
    }
    Ok(resp)
}

/// A lease answer: the grant (and its jti), or the retired AppRole shape refused.
pub fn parse_lease(body: &[u8]) -> Result<Lease, TenancyError> {
    let v: serde_json::Value = Tenancy::json("lease", body)?;
    if ["role_id", "secret_id", "wrap_token"]
        .iter()
        .any(|k| v.get(k).is_some())
    {
        return Err(TenancyError::LegacyLease);
    }
    let grant = v.get("grant").and_then(|g| g.as_str()).unwrap_or_default();
    if grant.is_empty() {
        return Err(TenancyError::Protocol {
            what: "lease",
            detail: "no grant in the response".into(),
        });
    }
    Ok(Lease {
        grant: Zeroizing::new(grant.to_string()),
        jti: v
            .get("jti")
            .and_then(|j| j.as_str())
            .unwrap_or_default()
            .to_string(),
    })
}

pub fn is_sha(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The first 12 characters (not bytes: a sha from the network may be anything, and slicing
/// inside a multi-byte character would panic, which `panic = "abort"` turns into a dead tick).
pub fn short(s: Option<&str>) -> String {
    match s {
        Some(s) => s.chars().take(12).collect(),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_never_splits_a_character() {
        assert_eq!(super::short(Some("0123456789abcdef")), "0123456789ab");
        assert_eq!(super::short(Some("ééééééééééééé")), "éééééééééééé");
        assert_eq!(super::short(Some("abc")), "abc");
        assert_eq!(super::short(None), "-");
    }
}

//! HTTP/1.1 to one endpoint: hyper-util's pooled `Client` over TLS (hyper-rustls's
//! `HttpsConnector`) over the configured transport's [`Connector`]. The TLS server name is
//! always the configured real host, whichever transport carried the bytes; roots are the
//! system's plus the endpoint's `ca_file`.
//!
//! The pool keeps the connection open between requests (over Ziti a dial costs a round trip to
//! the router), and the client retries a request that was cancelled on a pooled connection the
//! peer had already closed, so a keep-alive race is not a failed tick. Timeouts and the
//! response-size limit stay per endpoint and per call.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::http::uri::{Authority, Scheme as UriScheme};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls::pki_types::{InvalidDnsNameError, ServerName};
use serde::Deserialize;
use tower_service::Service;

use crate::transport::{Connector, Endpoint, TransportError};

pub mod roots;
pub use roots::Roots;

pub const USER_AGENT: &str = concat!("monky-deployd/", env!("CARGO_PKG_VERSION"));

/// An idle pooled connection is closed after this long (well inside a tick; shorter than the
/// peers' own keep-alive, so they rarely close one under us — and then the client retries).
const POOL_IDLE: Duration = Duration::from_secs(30);

/// How an endpoint is spoken to (`scheme:` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Http,
    Https,
}

pub type BoxError = Box<dyn StdError + Send + Sync>;

/// The full stack under the HTTP client: TLS over the configured transport.
pub type Stack = HttpsConnector<Connector>;

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("{}: TLS handshake failed: {}", .0, Cause(&**.1))]
    Tls(&'static str, #[source] BoxError),
    #[error("{0}: request timed out after {1}s")]
    Timeout(&'static str, u64),
    #[error("{0}: response body over the {1}-byte limit")]
    TooLarge(&'static str, usize),
    #[error("{}: {}", .0, Cause(&**.1))]
    Io(&'static str, #[source] BoxError),
}

/// A client that cannot be made from the configuration (its CA file, its host).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The endpoint's `ca_file` is unreadable or holds a certificate rustls refuses.
    #[error("ca_file {file}: {source}")]
    CaFile {
        file: String,
        #[source]
        source: BoxError,
    },
    #[error("ca_file {0}: no certificate in it")]
    NoCertificate(String),
    #[error(transparent)]
    Tls(#[from] rustls::Error),
    #[error("{label}: host {host:?} is not a valid host name: {source}")]
    Host {
        label: &'static str,
        host: String,
        #[source]
        source: hyper::http::uri::InvalidUri,
    },
}

/// The configured host is not a name TLS can check.
#[derive(Debug, thiserror::Error)]
#[error("server name {host:?}: {source}")]
pub struct ServerNameError {
    host: String,
    #[source]
    source: InvalidDnsNameError,
}

/// Displays an error without hyper-util's `client error (Kind)` wrappers: the first cause that
/// says something (a transport, TLS or hyper error).
pub struct Cause<'a>(pub &'a (dyn StdError + 'static));

impl fmt::Display for Cause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut e = self.0;
        while e.is::<hyper_util::client::legacy::Error>() {
            match e.source() {
                Some(s) => e = s,
                None => break,
            }
        }
        fmt::Display::fmt(e, f)
    }
}

/// The first error of type `T` in `e`'s source chain (`e` included).
fn find<'a, T: StdError + 'static>(e: &'a (dyn StdError + 'static)) -> Option<&'a T> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(t) = c.downcast_ref::<T>() {
            return Some(t);
        }
        cur = c.source();
    }
    None
}

pub struct Response {
    pub status: StatusCode,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

/// Build the rustls config: the system roots plus an optional extra CA bundle.
pub fn tls_config(ca_file: &str, system: &Roots) -> Result<Arc<rustls::ClientConfig>, SetupError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(system.get().iter().cloned());
    if !ca_file.is_empty() {
        use rustls::pki_types::pem::PemObject;
        let bad = |e: BoxError| SetupError::CaFile {
            file: ca_file.to_string(),
            source: e,
        };
        let certs: Vec<_> = rustls::pki_types::CertificateDer::pem_file_iter(ca_file)
            .map_err(|e| bad(e.into()))?
            .collect::<Result<_, _>>()
            .map_err(|e| bad(e.into()))?;
        if certs.is_empty() {
            return Err(SetupError::NoCertificate(ca_file.to_string()));
        }
        for c in certs {
            roots.add(c).map_err(|e| bad(e.into()))?;
        }
    }
    client_config(roots)
}

fn client_config(roots: rustls::RootCertStore) -> Result<Arc<rustls::ClientConfig>, SetupError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

/// TLS over `inner`, checking the server's certificate against `host` (not the dialled
/// address: over `sdk` and `proxy` that is a service name or 127.0.0.1).
pub fn tls_layer(
    inner: Connector,
    cfg: Arc<rustls::ClientConfig>,
    host: &str,
) -> HttpsConnector<Connector> {
    let host = host.to_string();
    let resolve = move |_: &Uri| {
        ServerName::try_from(host.clone()).map_err(|source| ServerNameError {
            host: host.clone(),
            source,
        })
    };
    HttpsConnector::new(inner, cfg, false, Arc::new(resolve))
}

/// `host:port` as a Uri authority (IPv6 literals bracketed).
fn authority(host: &str, port: u16) -> Result<Authority, hyper::http::uri::InvalidUri> {
    crate::egress::authority(host, port).parse()
}

pub struct HttpClient {
    endpoint: Endpoint,
    scheme: Scheme,
    authority: Authority,
    stack: Stack,
    client: Client<Stack, Full<Bytes>>,
}

impl HttpClient {
    /// "tenancy" or "openbao".
    pub fn label(&self) -> &'static str {
        self.endpoint.label
    }

    /// `system`: the system's trust anchors, read when the first https client needs them.
    pub fn new(
        connector: Connector,
        endpoint: Endpoint,
        scheme: Scheme,
        ca_file: &str,
        system: &Roots,
    ) -> Result<Self, SetupError> {
        let tls = match scheme {
            Scheme::Https => tls_config(ca_file, system)?,
            // never used: the https layer passes `http` Uris straight through
            Scheme::Http => client_config(rustls::RootCertStore::empty())?,
        };
        let authority =
            authority(&endpoint.host, endpoint.port).map_err(|source| SetupError::Host {
                label: endpoint.label,
                host: endpoint.host.clone(),
                source,
            })?;
        let stack = tls_layer(connector, tls, &endpoint.host);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(POOL_IDLE)
            .build(stack.clone());
        Ok(HttpClient {
            endpoint,
            scheme,
            authority,
            stack,
            client,
        })
    }

    fn uri(&self, path: &str) -> Result<Uri, HttpError> {
        let scheme = match self.scheme {
            Scheme::Https => UriScheme::HTTPS,
            Scheme::Http => UriScheme::HTTP,
        };
        Uri::builder()
            .scheme(scheme)
            .authority(self.authority.clone())
            .path_and_query(path)
            .build()
            .map_err(|e| HttpError::Io(self.endpoint.label, e.into()))
    }

    /// A failure of the client, classed as today: the transport's own error as it is, a
    /// failure to set up an https connection as TLS, everything else as I/O.
    fn classify(&self, e: hyper_util::client::legacy::Error) -> HttpError {
        let label = self.endpoint.label;
        if e.is_connect() {
            if let Some(t) = find::<TransportError>(&e) {
                return HttpError::Transport(t.clone());
            }
            if matches!(self.scheme, Scheme::Https) {
                return HttpError::Tls(label, e.into());
            }
        }
        HttpError::Io(label, e.into())
    }

    /// Prove the endpoint through the full stack without a request: dial over the transport
    /// and, for https, complete the TLS handshake (certificate checked against the host).
    pub async fn probe(&self) -> Result<(), HttpError> {
        let label = self.endpoint.label;
        let timeout = self.endpoint.timeout;
        let uri = self.uri("/")?;
        let mut stack = self.stack.clone();
        match tokio::time::timeout(timeout + Duration::from_secs(1), stack.call(uri)).await {
            Err(_) => Err(HttpError::Timeout(label, timeout.as_secs())),
            Ok(Ok(_conn)) => Ok(()),
            Ok(Err(e)) => Err(match e.downcast::<TransportError>() {
                Ok(t) => HttpError::Transport(*t),
                Err(e) if matches!(self.scheme, Scheme::Https) => HttpError::Tls(label, e),
                Err(e) => HttpError::Io(label, e),
            }),
        }
    }

    /// One request; `limit` bounds the response body. The pool reuses an open connection.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        bearer: Option<&str>,
        body: Option<Vec<u8>>,
        limit: usize,
    ) -> Result<Response, HttpError> {
        let label = self.endpoint.label;
        let timeout = self.endpoint.timeout;
        let fut = async {
            let mut b = Request::builder()
                .method(method)
                .uri(self.uri(path)?)
                .header(hyper::header::HOST, self.endpoint.host.as_str())
                .header(hyper::header::USER_AGENT, USER_AGENT)
                .header(hyper::header::ACCEPT, "application/json");
            if let Some(t) = bearer {
                b = b.header(hyper::header::AUTHORIZATION, format!("Bearer {t}"));
                // OpenBao reads its own header; tenancy reads Authorization. Both are sent to
                // their own peer only (see callers).
            }
            let req = if let Some(body) = body {
                b.header(hyper::header::CONTENT_TYPE, "application/json")
                    .body(Full::new(Bytes::from(body)))
            } else {
                b.body(Full::new(Bytes::new()))
            }
            .map_err(|e| HttpError::Io(label, e.into()))?;
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| self.classify(e))?;
            let (parts, body) = resp.into_parts();
            if let Some(len) = parts
                .headers
                .get(hyper::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<usize>().ok())
            {
                if len > limit {
                    return Err(HttpError::TooLarge(label, limit));
                }
            }
            let body = Limited::new(body, limit).collect().await.map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    HttpError::TooLarge(label, limit)
                } else {
                    HttpError::Io(label, e)
                }
            })?;
            Ok(Response {
                status: parts.status,
                headers: parts.headers,
                body: body.to_bytes(),
            })
        };
        match tokio::time::timeout(timeout + Duration::from_secs(1), fut).await {
            Ok(r) => r,
            Err(_) => Err(HttpError::Timeout(label, timeout.as_secs())),
        }
    }

    /// A GET whose 2xx body is streamed into `out` (at most `limit` bytes, never whole in
    /// memory) and hashed on the way: the status, the bytes written and their sha256 hex. A
    /// non-2xx answer is returned with its (small) body for the caller's error mapping. The whole
    /// transfer must finish within `total`.
    pub async fn download(
        &self,
        path: &str,
        bearer: Option<&str>,
        out: &mut std::fs::File,
        limit: usize,
        total: Duration,
    ) -> Result<Download, HttpError> {
        use sha2::Digest;
        use std::io::Write;
        let label = self.endpoint.label;
        let fut = async {
            let mut b = Request::builder()
                .method(Method::GET)
                .uri(self.uri(path)?)
                .header(hyper::header::HOST, self.endpoint.host.as_str())
                .header(hyper::header::USER_AGENT, USER_AGENT);
            if let Some(t) = bearer {
                b = b.header(hyper::header::AUTHORIZATION, format!("Bearer {t}"));
            }
            let req = b
                .body(Full::new(Bytes::new()))
                .map_err(|e| HttpError::Io(label, e.into()))?;
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| self.classify(e))?;
            let (parts, mut body) = resp.into_parts();
            if !parts.status.is_success() {
                let body = Limited::new(body, 64 * 1024)
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                return Ok(Download::Refused(Response {
                    status: parts.status,
                    headers: parts.headers,
                    body,
                }));
            }
            let too_large = parts
                .headers
                .get(hyper::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<usize>().ok())
                .is_some_and(|n| n > limit);
            if too_large {
                return Err(HttpError::TooLarge(label, limit));
            }
            let (mut n, mut h) = (0usize, sha2::Sha256::new());
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| HttpError::Io(label, e.into()))?;
                let Ok(data) = frame.into_data() else {
                    continue; // trailers
                };
                n += data.len();
                if n > limit {
                    return Err(HttpError::TooLarge(label, limit));
                }
                h.update(&data);
                out.write_all(&data)
                    .map_err(|e| HttpError::Io(label, e.into()))?;
            }
            out.sync_all().map_err(|e| HttpError::Io(label, e.into()))?;
            Ok(Download::Done {
                bytes: n as u64,
                sha256: hex::encode(h.finalize()),
            })
        };
        match tokio::time::timeout(total, fut).await {
            Ok(r) => r,
            Err(_) => Err(HttpError::Timeout(label, total.as_secs())),
        }
    }
}

/// What [`HttpClient::download`] got.
pub enum Download {
    Done { bytes: u64, sha256: String },
    Refused(Response),
}

/// Percent-encodes everything but RFC 3986's unreserved characters (a query value, a path
/// segment).
pub fn urlencode(s: &str) -> String {
    let mut o = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

#[cfg(test)]
mod tests;

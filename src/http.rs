//! HTTP/1.1 (hyper) over any [`Connector`], with TLS (rustls) when the scheme is https. The TLS
//! server name is always the configured real host, whichever transport carried the bytes.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::sync::Mutex;

use crate::config::Scheme;
use crate::transport::{BoxIo, Connector, Endpoint, TransportError};

pub const USER_AGENT: &str = concat!("monky-deployd/", env!("CARGO_PKG_VERSION"));

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("{0}: TLS handshake failed: {1}")]
    Tls(&'static str, String),
    #[error("{0}: request timed out after {1}s")]
    Timeout(&'static str, u64),
    #[error("{0}: response body over the {1}-byte limit")]
    TooLarge(&'static str, usize),
    #[error("{0}: {1}")]
    Io(&'static str, String),
}

pub struct Response {
    pub status: StatusCode,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

/// Build the rustls config: the system roots plus an optional extra CA bundle.
pub fn tls_config(ca_file: &str) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for c in native.certs {
        let _ = roots.add(c);
    }
    if !ca_file.is_empty() {
        use rustls::pki_types::pem::PemObject;
        let certs: Vec<_> = rustls::pki_types::CertificateDer::pem_file_iter(ca_file)
            .map_err(|e| format!("ca_file {ca_file}: {e}"))?
            .collect::<Result<_, _>>()
            .map_err(|e| format!("ca_file {ca_file}: {e}"))?;
        if certs.is_empty() {
            return Err(format!("ca_file {ca_file}: no certificate in it"));
        }
        for c in certs {
            roots
                .add(c)
                .map_err(|e| format!("ca_file {ca_file}: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

pub struct HttpClient {
    connector: Arc<dyn Connector>,
    pub endpoint: Endpoint,
    tls: Option<Arc<rustls::ClientConfig>>,
    sender: Mutex<Option<SendRequest<Full<Bytes>>>>,
}

impl HttpClient {
    pub fn new(
        connector: Arc<dyn Connector>,
        endpoint: Endpoint,
        scheme: Scheme,
        ca_file: &str,
    ) -> Result<Self, String> {
        let tls = match scheme {
            Scheme::Https => Some(tls_config(ca_file)?),
            Scheme::Http => None,
        };
        Ok(HttpClient {
            connector,
            endpoint,
            tls,
            sender: Mutex::new(None),
        })
    }

    async fn open(&self) -> Result<SendRequest<Full<Bytes>>, HttpError> {
        let label = self.endpoint.label;
        let io: BoxIo = self.connector.connect(&self.endpoint).await?;
        let io: BoxIo = match &self.tls {
            None => io,
            Some(cfg) => {
                let name = ServerName::try_from(self.endpoint.host.clone()).map_err(|e| {
                    HttpError::Tls(label, format!("server name {:?}: {e}", self.endpoint.host))
                })?;
                let tls = tokio_rustls::TlsConnector::from(cfg.clone());
                let s = tokio::time::timeout(self.endpoint.timeout, tls.connect(name, io))
                    .await
                    .map_err(|_| HttpError::Timeout(label, self.endpoint.timeout.as_secs()))?
                    .map_err(|e| HttpError::Tls(label, e.to_string()))?;
                Box::new(s)
            }
        };
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(|e| HttpError::Io(label, e.to_string()))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    /// One request; `limit` bounds the response body. Reuses the open connection when it is
    /// still usable, which matters over Ziti where a dial costs a round trip to the router.
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
            let mut guard = self.sender.lock().await;
            let reused = match guard.take() {
                Some(mut s) => s.ready().await.is_ok().then_some(s),
                None => None,
            };
            let mut sender = match reused {
                Some(s) => s,
                None => self.open().await?,
            };
            let mut b = Request::builder()
                .method(method)
                .uri(path)
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
            .map_err(|e| HttpError::Io(label, e.to_string()))?;
            let resp = sender
                .send_request(req)
                .await
                .map_err(|e| HttpError::Io(label, e.to_string()))?;
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
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    HttpError::TooLarge(label, limit)
                } else {
                    HttpError::Io(label, e.to_string())
                }
            })?;
            *guard = Some(sender);
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
}

//! Transports: how the agent reaches tenancy and OpenBao. One [`Connector`] turns a logical
//! [`Endpoint`] into a byte stream; TLS and HTTP (see [`crate::http`]) sit above it unchanged for
//! `sdk` (Ziti service name), `proxy` (`127.0.0.1:<proxy_port>`) and `system` (DNS + TCP).

pub mod sdk;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// Any bidirectional byte stream a connector can hand to TLS/HTTP.
pub trait IoStream: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> IoStream for T {}
pub type BoxIo = Box<dyn IoStream>;

pub type ConnectFuture<'a> =
    Pin<Box<dyn Future<Output = Result<BoxIo, TransportError>> + Send + 'a>>;

/// One remote the agent talks to (tenancy or OpenBao), as every transport needs to see it.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// "tenancy" or "openbao": for messages only.
    pub label: &'static str,
    /// Ziti service name (`sdk`).
    pub service: String,
    /// Real host name: DNS name for `system`, TLS server name for all.
    pub host: String,
    pub port: u16,
    /// `proxy`: the local port `ziti tunnel proxy` listens on.
    pub proxy_port: u16,
    pub timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// Temporary: the mesh, the peer or the network is down. The next tick retries (exit 75).
    #[error("{0}")]
    Unreachable(String),
    /// Permanent until an operator acts: no SDK linked, unreadable identity… (exit 1).
    #[error("{0}")]
    Setup(String),
}

pub trait Connector: Send + Sync {
    fn connect<'a>(&'a self, ep: &'a Endpoint) -> ConnectFuture<'a>;
    /// e.g. `system`, `proxy (127.0.0.1)`, `sdk (libziti 1.18.2, identity …)`.
    fn describe(&self) -> String;
}

async fn tcp(addr: (&str, u16), ep: &Endpoint) -> Result<BoxIo, TransportError> {
    let (h, p) = addr;
    match tokio::time::timeout(ep.timeout, TcpStream::connect((h, p))).await {
        Ok(Ok(s)) => {
            let _ = s.set_nodelay(true);
            Ok(Box::new(s))
        }
        Ok(Err(e)) => Err(TransportError::Unreachable(format!(
            "{} at {h}:{p}: {e}",
            ep.label
        ))),
        Err(_) => Err(TransportError::Unreachable(format!(
            "{} at {h}:{p}: connect timed out after {}s",
            ep.label,
            ep.timeout.as_secs()
        ))),
    }
}

/// Plain DNS + TCP to `host:port` (laptops whose tunneler runs with tun + DNS, tests).
pub struct SystemConnector;

impl Connector for SystemConnector {
    fn connect<'a>(&'a self, ep: &'a Endpoint) -> ConnectFuture<'a> {
        Box::pin(async move { tcp((ep.host.as_str(), ep.port), ep).await })
    }
    fn describe(&self) -> String {
        "system".into()
    }
}

/// TCP to `127.0.0.1:<proxy_port>`, where `ziti tunnel proxy` forwards into the service.
pub struct ProxyConnector;

impl Connector for ProxyConnector {
    fn connect<'a>(&'a self, ep: &'a Endpoint) -> ConnectFuture<'a> {
        Box::pin(async move { tcp(("127.0.0.1", ep.proxy_port), ep).await })
    }
    fn describe(&self) -> String {
        "proxy".into()
    }
}

//! Transports: how the agent reaches tenancy and OpenBao, as hyper connectors.
//!
//! Each transport is a connector built for one [`Endpoint`]: a `tower_service::Service<Uri>`
//! (hyper-util's `Connect`, through its blanket impl) yielding a stream with hyper's IO traits
//! and hyper-util's [`Connection`]:
//!
//! - [`SystemConnector`]: DNS + TCP to `host:port` (laptops whose tunneler does tun + DNS, tests),
//!   or through the egress proxy with `CONNECT` when the route says so (`connect`);
//! - [`ProxyConnector`]: TCP to `127.0.0.1:<proxy_port>`, where `ziti tunnel proxy` forwards
//!   (loopback: never through the egress proxy);
//! - [`ZitiConnector`]: the Ziti service by name through the linked C SDK ([`sdk::SdkConnector`]).
//!
//! [`Connector`] is whichever one the configuration chose (one type for the HTTP client); the
//! [`Dialer`] makes it for each endpoint. TLS (hyper-rustls, server name fixed to the endpoint's
//! real host) and HTTP (hyper-util's pooled `Client`) are layered over it in `http`.
//! The Uri a connector is called with carries the configured real host as its authority; the
//! connector dials what its endpoint says, so the same Uri works over every transport.
//!
//! [`UnixConnector`] is the same shape for the Docker Engine API socket.

mod connect;
mod error;
pub mod sdk;

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpStream, UnixStream};
use tower_service::Service;

use crate::egress::Egress;

pub use error::TransportError;
pub use sdk::ZitiStream;

/// What a connector's `call` returns.
pub type ConnectFuture<T, E = TransportError> =
    Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'static>>;

/// One remote the agent talks to (tenancy or OpenBao), as every transport needs to see it.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// "tenancy" or "openbao": for messages only.
    pub label: &'static str,
    /// Ziti service name (`sdk`).
    pub service: String,
    /// Real host name: DNS name for `system`, TLS server name and `Host` for all.
    pub host: String,
    pub port: u16,
    /// `proxy`: the local port `ziti tunnel proxy` listens on.
    pub proxy_port: u16,
    pub timeout: Duration,
}

async fn tcp(addr: (&str, u16), ep: &Endpoint) -> Result<TcpStream, TransportError> {
    let (h, p) = addr;
    match tokio::time::timeout(ep.timeout, TcpStream::connect((h, p))).await {
        Ok(Ok(s)) => {
            let _ = s.set_nodelay(true);
            Ok(s)
        }
        Ok(Err(e)) => {
            Err(TransportError::unreachable(format!("{} at {h}:{p}: {e}", ep.label)).because(e))
        }
        Err(_) => Err(TransportError::unreachable(format!(
            "{} at {h}:{p}: connect timed out after {}s",
            ep.label,
            ep.timeout.as_secs()
        ))),
    }
}

/// `system`: plain DNS + TCP to the endpoint's `host:port`, or a `CONNECT` tunnel to it when
/// the egress routes its host through a proxy.
#[derive(Clone, Debug)]
pub struct SystemConnector {
    ep: Arc<Endpoint>,
    egress: Egress,
}

impl SystemConnector {
    pub fn new(ep: Endpoint, egress: Egress) -> Self {
        SystemConnector {
            ep: Arc::new(ep),
            egress,
        }
    }
}

impl Service<Uri> for SystemConnector {
    type Response = TokioIo<TcpStream>;
    type Error = TransportError;
    type Future = ConnectFuture<Self::Response>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _dst: Uri) -> Self::Future {
        let ep = self.ep.clone();
        let route = self.egress.route(&ep.host).cloned();
        Box::pin(async move {
            match route {
                Some(r) => connect::tunnel(&ep, &r).await,
                None => tcp((ep.host.as_str(), ep.port), &ep).await,
            }
            .map(TokioIo::new)
        })
    }
}

/// `proxy`: TCP to `127.0.0.1:<proxy_port>`, where `ziti tunnel proxy` forwards into the service.
#[derive(Clone, Debug)]
pub struct ProxyConnector {
    ep: Arc<Endpoint>,
}

impl ProxyConnector {
    pub fn new(ep: Endpoint) -> Self {
        ProxyConnector { ep: Arc::new(ep) }
    }
}

impl Service<Uri> for ProxyConnector {
    type Response = TokioIo<TcpStream>;
    type Error = TransportError;
    type Future = ConnectFuture<Self::Response>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _dst: Uri) -> Self::Future {
        let ep = self.ep.clone();
        Box::pin(async move {
            tcp(("127.0.0.1", ep.proxy_port), &ep)
                .await
                .map(TokioIo::new)
        })
    }
}

/// `sdk`: the endpoint's Ziti service, dialled by name with the identity loaded in `sdk`.
#[derive(Clone)]
pub struct ZitiConnector {
    sdk: Arc<sdk::SdkConnector>,
    ep: Arc<Endpoint>,
}

impl ZitiConnector {
    pub fn new(sdk: Arc<sdk::SdkConnector>, ep: Endpoint) -> Self {
        ZitiConnector {
            sdk,
            ep: Arc::new(ep),
        }
    }
}

impl Service<Uri> for ZitiConnector {
    type Response = TokioIo<ZitiStream>;
    type Error = TransportError;
    type Future = ConnectFuture<Self::Response>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _dst: Uri) -> Self::Future {
        let (sdk, ep) = (self.sdk.clone(), self.ep.clone());
        Box::pin(async move { sdk.connect(&ep).await.map(TokioIo::new) })
    }
}

impl Connection for ZitiStream {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

/// The configured transport's connector for one endpoint.
#[derive(Clone)]
pub enum Connector {
    System(SystemConnector),
    Proxy(ProxyConnector),
    Sdk(ZitiConnector),
}

impl Service<Uri> for Connector {
    type Response = Io;
    type Error = TransportError;
    type Future = ConnectFuture<Io>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        match self {
            Connector::System(c) => {
                let f = c.call(dst);
                Box::pin(async move { f.await.map(Io::Tcp) })
            }
            Connector::Proxy(c) => {
                let f = c.call(dst);
                Box::pin(async move { f.await.map(Io::Tcp) })
            }
            Connector::Sdk(c) => {
                let f = c.call(dst);
                Box::pin(async move { f.await.map(Io::Ziti) })
            }
        }
    }
}

/// Makes the configured transport's [`Connector`] for each endpoint; the `sdk` one shares one
/// loaded identity between them. `system` keeps the box's egress (built once, with its
/// credentials) for every connector it makes.
#[derive(Clone)]
pub enum Dialer {
    System(Egress),
    Proxy,
    Sdk(Arc<sdk::SdkConnector>),
}

impl Dialer {
    /// `system` with no egress proxy: everything direct.
    pub fn system() -> Dialer {
        Dialer::System(Egress::direct())
    }

    /// The egress this transport's connections follow; `None` where none applies (`proxy`
    /// dials loopback only). The tick registers its password; status and diagnose show it.
    pub fn egress(&self) -> Option<&Egress> {
        match self {
            Dialer::System(e) => Some(e),
            Dialer::Sdk(s) => Some(s.egress()),
            Dialer::Proxy => None,
        }
    }

    pub fn connector(&self, ep: &Endpoint) -> Connector {
        match self {
            Dialer::System(e) => Connector::System(SystemConnector::new(ep.clone(), e.clone())),
            Dialer::Proxy => Connector::Proxy(ProxyConnector::new(ep.clone())),
            Dialer::Sdk(s) => Connector::Sdk(ZitiConnector::new(s.clone(), ep.clone())),
        }
    }

    /// e.g. `system`, `proxy`, `sdk (libziti 1.18.2, identity …)`.
    pub fn describe(&self) -> String {
        match self {
            Dialer::System(e) => match e.proxy() {
                Some(p) => format!("system (egress proxy {})", p.shown()),
                None => "system".into(),
            },
            Dialer::Proxy => "proxy".into(),
            Dialer::Sdk(s) => s.describe(),
        }
    }
}

/// A stream any [`Connector`] yields: TCP (system, proxy) or the SDK's loopback socket.
pub enum Io {
    Tcp(TokioIo<TcpStream>),
    Ziti(TokioIo<ZitiStream>),
}

impl Connection for Io {
    fn connected(&self) -> Connected {
        match self {
            Io::Tcp(s) => s.connected(),
            Io::Ziti(s) => s.connected(),
        }
    }
}

impl Read for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Io::Ziti(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl Write for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Io::Ziti(s) => Pin::new(s).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_flush(cx),
            Io::Ziti(s) => Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Io::Ziti(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Io::Tcp(s) => s.is_write_vectored(),
            Io::Ziti(s) => s.is_write_vectored(),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Io::Ziti(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }
}

/// The Docker Engine API's unix socket, as a connector (the Uri's authority is ignored).
#[derive(Clone, Debug)]
pub struct UnixConnector {
    path: Arc<PathBuf>,
}

impl UnixConnector {
    pub fn new(path: &Path) -> Self {
        UnixConnector {
            path: Arc::new(path.to_path_buf()),
        }
    }
}

impl Service<Uri> for UnixConnector {
    type Response = TokioIo<UnixStream>;
    type Error = io::Error;
    type Future = ConnectFuture<Self::Response, io::Error>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _dst: Uri) -> Self::Future {
        let path = self.path.clone();
        Box::pin(async move { UnixStream::connect(&*path).await.map(TokioIo::new) })
    }
}

#[cfg(test)]
mod tests;

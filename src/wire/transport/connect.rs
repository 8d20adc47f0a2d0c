//! The `system` transport through the egress proxy: TCP to the proxy, then an HTTP/1.1
//! `CONNECT host:port` (with `Proxy-Authorization: Basic …` when the route has credentials),
//! then the tunnel is the stream, as a direct TCP connection would be. TLS stays a layer above
//! (`http`), with the real host name, so the certificate check is unchanged.
//!
//! hyper speaks the CONNECT (its http1 client connection and `hyper::upgrade::on`): it parses
//! the proxy's answer and we keep its status code for the message (hyper-util's `Tunnel` folds
//! every refusal into one error kind and loses 403/407/502).

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Empty;
use hyper::{header, Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::{Endpoint, TransportError};
use crate::egress::{authority, ProxyRoute};

/// A tunnel to the endpoint's `host:port` through `route`, within the endpoint's timeout.
/// Every failure is temporary (exit 75) and names the proxy (never its credentials), and for a
/// refusal the status it answered.
pub(super) async fn tunnel(
    ep: &Endpoint,
    route: &Arc<ProxyRoute>,
) -> Result<TcpStream, TransportError> {
    let target = authority(&ep.host, ep.port);
    let what = format!("{} via proxy {}", ep.label, route.shown());
    match tokio::time::timeout(ep.timeout, tunnel_untimed(&target, route, &what)).await {
        Ok(r) => r,
        Err(_) => Err(TransportError::unreachable(format!(
            "{what}: CONNECT {target} timed out after {}s",
            ep.timeout.as_secs()
        ))),
    }
}

async fn tunnel_untimed(
    target: &str,
    route: &ProxyRoute,
    what: &str,
) -> Result<TcpStream, TransportError> {
    let tcp = TcpStream::connect((route.host.as_str(), route.port))
        .await
        .map_err(|e| TransportError::unreachable(format!("{what}: {e}")).because(e))?;
    let _ = tcp.set_nodelay(true);
    let proto =
        |e: hyper::Error| TransportError::unreachable(format!("{what}: CONNECT {target}: {e}"));
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(proto)?;
    // drives the connection until the tunnel is handed over (or the proxy closes)
    let driver = tokio::spawn(conn.with_upgrades());
    let mut req = Request::builder()
        .method(Method::CONNECT)
        .uri(target)
        .header(header::HOST, target);
    let auth = route.credentials.as_ref().map(|c| c.basic_header());
    if let Some(a) = &auth {
        let mut v = header::HeaderValue::from_str(a)
            .map_err(|_| TransportError::setup(format!("{what}: bad credentials")))?;
        v.set_sensitive(true);
        req = req.header(header::PROXY_AUTHORIZATION, v);
    }
    let req = req
        .body(Empty::<Bytes>::new())
        .map_err(|e| TransportError::setup(format!("{what}: CONNECT {target}: {e}")))?;
    let res = send.send_request(req).await.map_err(|e| {
        driver.abort();
        proto(e)
    })?;
    let status = res.status();
    if !status.is_success() {
        driver.abort();
        return Err(TransportError::unreachable(
            format!(
                "{what}: CONNECT {target} answered {} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or("")
            )
            .trim_end()
            .to_string(),
        ));
    }
    let up = hyper::upgrade::on(res).await.map_err(proto)?;
    let _ = driver.await;
    // the tunnel is the proxy's TCP connection again; nothing may have arrived yet (the client
    // speaks first in TLS and HTTP), else those bytes would be lost
    let parts = up.downcast::<TokioIo<TcpStream>>().map_err(|_| {
        TransportError::unreachable(format!("{what}: CONNECT {target}: not a TCP tunnel"))
    })?;
    if !parts.read_buf.is_empty() {
        return Err(TransportError::unreachable(format!(
            "{what}: CONNECT {target}: the proxy sent data before the tunnel was used"
        )));
    }
    Ok(parts.io.into_inner())
}

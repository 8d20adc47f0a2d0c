//! A minimal HTTP/1 JSON client over plain TCP (OpenBao dev and the fake tenancy are plain HTTP).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::future::Future;
use std::time::Duration;

pub(crate) struct Resp {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Resp {
    /// The body as JSON; `Value::Null` when empty or not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// `http://host:port[/]` → `host:port`.
pub(crate) fn host_port(addr: &str) -> String {
    addr.strip_prefix("http://")
        .unwrap_or(addr)
        .trim_end_matches('/')
        .to_string()
}

/// One OpenBao request: `token` goes in `X-Vault-Token`.
pub(crate) async fn request(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<Resp, String> {
    let h: Vec<(&str, String)> = token
        .map(|t| vec![("X-Vault-Token", t.to_string())])
        .unwrap_or_default();
    request_with(addr, method, path, &h, body).await
}

/// One request on a fresh connection with extra headers.
pub(crate) async fn request_with(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: Option<&Value>,
) -> Result<Resp, String> {
    let hp = host_port(addr);
    let fut = async {
        let stream = tokio::net::TcpStream::connect(&hp)
            .await
            .map_err(|e| format!("connect {hp}: {e}"))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake {hp}: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut b = Request::builder()
            .method(method)
            .uri(path)
            .header("host", &hp);
        for (k, v) in headers {
            b = b.header(*k, v);
        }
        let bytes = match body {
            Some(v) => {
                b = b.header("content-type", "application/json");
                serde_json::to_vec(v).expect("json")
            }
            None => Vec::new(),
        };
        let req = b
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| format!("build request: {e}"))?;
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| format!("{method} {hp}{path}: {e}"))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{method} {hp}{path} body: {e}"))?
            .to_bytes();
        Ok(Resp {
            status,
            headers,
            body,
        })
    };
    tokio::time::timeout(Duration::from_secs(30), fut)
        .await
        .map_err(|_| format!("{method} {hp}{path}: timeout"))?
}

/// Runs a future to completion on a fresh current-thread runtime on a scoped thread, so it works
/// from plain `#[test]` fns and from inside another runtime alike.
pub(crate) fn block_on<F>(f: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime")
                .block_on(f)
        })
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

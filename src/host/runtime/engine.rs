//! The Engine API over the Unix socket: container state and health, the Docker root, image
//! pruning — one pooled client, no subprocess.

use super::*;
use monky_boundary::bundle::JOB_LABEL;
use monky_wire::http::urlencode;

/// The Engine API over its unix socket: hyper-util's pooled client over a [`UnixConnector`],
/// so a tick's few calls share one connection.
pub struct Engine {
    socket: PathBuf,
    client: Client<UnixConnector, Full<Bytes>>,
}

/// dockerd's proxy settings as `/info` gives them ("" = not set; dockerd masks credentials).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineProxy {
    pub http_proxy: String,
    pub https_proxy: String,
    pub no_proxy: String,
}

impl EngineProxy {
    /// Whether dockerd has any proxy for its pulls.
    pub fn any(&self) -> bool {
        !self.http_proxy.is_empty() || !self.https_proxy.is_empty()
    }
}

#[derive(Deserialize)]
pub(super) struct ApiContainer {
    #[serde(rename = "Id", default)]
    id: String,
    #[serde(rename = "Labels", default)]
    labels: std::collections::HashMap<String, String>,
    #[serde(rename = "State", default)]
    state: String,
    #[serde(rename = "Status", default)]
    status: String,
    #[serde(rename = "Image", default)]
    image: String,
}

/// What the agent needs of a volume: where its data is and whether the engine keeps it as a
/// plain directory (the `local` driver without options) the agent can copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeInfo {
    pub name: String,
    pub driver: String,
    pub mountpoint: PathBuf,
    /// `Options` is set (`driver_opts`: a bind, tmpfs or NFS mount, not a directory of its own).
    pub has_options: bool,
}

impl VolumeInfo {
    pub fn from_engine(v: &serde_json::Value) -> VolumeInfo {
        VolumeInfo {
            name: v["Name"].as_str().unwrap_or_default().to_string(),
            driver: v["Driver"].as_str().unwrap_or_default().to_string(),
            mountpoint: PathBuf::from(v["Mountpoint"].as_str().unwrap_or_default()),
            has_options: v["Options"].as_object().is_some_and(|o| !o.is_empty()),
        }
    }
}

impl Engine {
    pub fn new(socket: PathBuf) -> Self {
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(UnixConnector::new(&socket));
        Engine { socket, client }
    }

    fn err(&self, msg: impl ToString) -> RuntimeError {
        RuntimeError::Engine {
            socket: self.socket.display().to_string(),
            msg: msg.to_string(),
        }
    }

    async fn call(&self, method: hyper::Method, path: &str) -> Result<Bytes, RuntimeError> {
        let (status, body) = self.call_status(method, path).await?;
        if !status.is_success() {
            return Err(self.err(format!(
                "{path}: {status}: {}",
                String::from_utf8_lossy(&body).trim()
            )));
        }
        Ok(body)
    }

    /// One request; the status is the caller's to judge (a 404 or 409 can be an answer).
    async fn call_status(
        &self,
        method: hyper::Method,
        path: &str,
    ) -> Result<(hyper::StatusCode, Bytes), RuntimeError> {
        self.call_body(method, path, Bytes::new()).await
    }

    /// As [`Engine::call_status`], with a JSON body.
    async fn call_body(
        &self,
        method: hyper::Method,
        path: &str,
        body: Bytes,
    ) -> Result<(hyper::StatusCode, Bytes), RuntimeError> {
        let fut = async {
            let req = Request::builder()
                .method(method)
                .uri(format!("http://docker{path}"))
                .header(hyper::header::HOST, "docker")
                .header(hyper::header::CONTENT_TYPE, "application/json")
                .body(Full::new(body.clone()))
                .map_err(|e| self.err(e))?;
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| self.err(Cause(&e)))?;
            let status = resp.status();
            let body = Limited::new(resp.into_body(), 8 << 20)
                .collect()
                .await
                .map_err(|e| self.err(e))?
                .to_bytes();
            Ok((status, body))
        };
        tokio::time::timeout(Duration::from_secs(30), fut)
            .await
            .map_err(|_| self.err(format!("{path}: timed out")))?
    }

    /// The project's containers (one-off `run` containers excluded), with health parsed from
    /// the list's status text — one request, no per-container inspect.
    pub async fn containers(&self, project: &str) -> Result<Vec<Container>, RuntimeError> {
        let filt = serde_json::json!({"label": [format!("com.docker.compose.project={project}")]})
            .to_string();
        let path = format!("/containers/json?all=1&filters={}", urlencode(&filt));
        let body = self.call(hyper::Method::GET, &path).await?;
        let list: Vec<ApiContainer> = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        let mut out: Vec<Container> = list
            .into_iter()
            .filter(|c| {
                c.labels
                    .get("com.docker.compose.oneoff")
                    .map(|v| v != "True")
                    .unwrap_or(true)
            })
            .map(|c| Container {
                service: c
                    .labels
                    .get("com.docker.compose.service")
                    .cloned()
                    .unwrap_or_default(),
                health: health_of(&c.status).into(),
                exit_code: (c.state == "exited").then(|| exit_of(&c.status)).flatten(),
                job: c.labels.get(JOB_LABEL).is_some_and(|v| truthy(v)),
                // the name it was created by, when that names its bytes: the list shows it
                // with no further call (PROTOCOL 0.5 `image`)
                image: monky_boundary::policy::rules::image_pinned(&c.image).then_some(c.image),
                state: c.state,
                id: c.id,
                restarts: None,
            })
            .collect();
        out.sort_by(|a, b| a.service.cmp(&b.service));
        Ok(out)
    }

    /// The engine's restart count of one container, and its last exit code when it is not
    /// running (inspect; the list has neither).
    pub async fn restarts(&self, id: &str) -> Result<(u64, Option<i64>), RuntimeError> {
        let body = self
            .call(hyper::Method::GET, &format!("/containers/{id}/json"))
            .await?;
        let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        let running = v["State"]["Status"] == "running";
        Ok((
            v["RestartCount"].as_u64().unwrap_or(0),
            (!running)
                .then(|| v["State"]["ExitCode"].as_i64())
                .flatten(),
        ))
    }

    /// The exit code of a container's last `die` event since `since` (Unix seconds): what a
    /// crash-looping container ended with, even when it is running again by now.
    pub async fn last_exit(&self, id: &str, since: u64) -> Option<i64> {
        let filt = serde_json::json!({"container": [id], "event": ["die"]}).to_string();
        let now = monky_base::clock::now() + 1;
        let path = format!(
            "/events?since={since}&until={now}&filters={}",
            urlencode(&filt)
        );
        let body = self.call(hyper::Method::GET, &path).await.ok()?;
        // one JSON object per line, oldest first
        String::from_utf8_lossy(&body)
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|e| {
                e.pointer("/Actor/Attributes/exitCode")
                    .and_then(|c| c.as_str())
                    .and_then(|c| c.parse().ok())
            })
    }

    /// Why a container is not healthy, in the engine's own words: its exit code and OOM flag
    /// when it stopped, and its last health probes (exit code and output) — a quiet server
    /// whose health check fails prints nothing to its log, so this is often the only clue.
    pub async fn diagnose(&self, c: &Container) -> String {
        let body = match self
            .call(hyper::Method::GET, &format!("/containers/{}/json", c.id))
            .await
        {
            Ok(b) => b,
            Err(e) => return format!("{}: cannot inspect: {e}", c.service),
        };
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let st = &v["State"];
        let mut out = format!("{}: {}", c.service, st["Status"].as_str().unwrap_or("?"));
        if st["Status"] != "running" {
            out.push_str(&format!(
                ", exit code {}{}",
                st["ExitCode"].as_i64().unwrap_or(-1),
                if st["OOMKilled"] == true {
                    ", OOM killed"
                } else {
                    ""
                }
            ));
            if let Some(e) = st["Error"].as_str().filter(|e| !e.is_empty()) {
                out.push_str(&format!(", error: {e}"));
            }
        }
        if let Some(h) = st["Health"].as_object() {
            out.push_str(&format!(
                "; health {} ({} failing in a row)",
                h.get("Status").and_then(|s| s.as_str()).unwrap_or("?"),
                h.get("FailingStreak").and_then(|s| s.as_i64()).unwrap_or(0)
            ));
            let log = h
                .get("Log")
                .and_then(|l| l.as_array())
                .cloned()
                .unwrap_or_default();
            for p in log.iter().rev().take(3).rev() {
                // redacted before the cut, edges masked: Docker has cut it already
                let output = monky_base::redact::redact_cut(
                    p["Output"].as_str().unwrap_or("").trim(),
                    400,
                    monky_base::redact::Keep::Head,
                );
                out.push_str(&format!(
                    "\n  probe exit {}: {}",
                    p["ExitCode"].as_i64().unwrap_or(-1),
                    if output.is_empty() {
                        "(no output)"
                    } else {
                        &output
                    }
                ));
            }
        }
        out
    }

    /// The project's containers as the engine lists them (labels, image), for `plan`.
    pub async fn containers_raw(
        &self,
        project: &str,
    ) -> Result<Vec<serde_json::Value>, RuntimeError> {
        let filt = serde_json::json!({"label": [format!("com.docker.compose.project={project}")]})
            .to_string();
        let path = format!("/containers/json?all=1&filters={}", urlencode(&filt));
        let body = self.call(hyper::Method::GET, &path).await?;
        serde_json::from_slice(&body).map_err(|e| self.err(e))
    }

    /// The networks labelled with `project` (list form: `Id`, `Options`, `IPAM`).
    pub async fn networks_raw(
        &self,
        project: &str,
    ) -> Result<Vec<serde_json::Value>, RuntimeError> {
        let filt = serde_json::json!({"label": [format!("com.docker.compose.project={project}")]})
            .to_string();
        let path = format!("/networks?filters={}", urlencode(&filt));
        let body = self.call(hyper::Method::GET, &path).await?;
        serde_json::from_slice(&body).map_err(|e| self.err(e))
    }

    pub async fn docker_root(&self) -> Result<PathBuf, RuntimeError> {
        let body = self.call(hyper::Method::GET, "/info").await?;
        let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        v.get("DockerRootDir")
            .and_then(|d| d.as_str())
            .map(PathBuf::from)
            .ok_or_else(|| self.err("/info has no DockerRootDir"))
    }

    /// dockerd's own proxy settings (`GET /info` → `HttpProxy`, `HttpsProxy`, `NoProxy`):
    /// registry pulls are the engine's, so they follow these, not the agent's egress proxy.
    pub async fn proxy_settings(&self) -> Result<EngineProxy, RuntimeError> {
        let body = self.call(hyper::Method::GET, "/info").await?;
        let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        let f = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .map(str::trim)
                .unwrap_or_default()
                .to_string()
        };
        Ok(EngineProxy {
            http_proxy: f("HttpProxy"),
            https_proxy: f("HttpsProxy"),
            no_proxy: f("NoProxy"),
        })
    }

    /// Every container on the box, of any project or none, running or not (`all=1`), with
    /// `Image` the name each was created by: the list shows an image id instead once that name
    /// points at another image, so those are inspected (`Config.Image`).
    pub async fn all_containers_raw(&self) -> Result<Vec<serde_json::Value>, RuntimeError> {
        let body = self
            .call(hyper::Method::GET, "/containers/json?all=1")
            .await?;
        let mut cs: Vec<serde_json::Value> =
            serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        for c in &mut cs {
            let by_id = c["Image"]
                .as_str()
                .is_some_and(|i| i.starts_with("sha256:"));
            let Some(id) = c["Id"].as_str().filter(|_| by_id).map(String::from) else {
                continue;
            };
            // a container removed since the list pins nothing: it is dropped, not an error
            // (an error here makes reclaim keep every image, seen in CI)
            let (status, body) = self
                .call_status(hyper::Method::GET, &format!("/containers/{id}/json"))
                .await?;
            if status == hyper::StatusCode::NOT_FOUND {
                c["Image"] = serde_json::Value::Null;
                c["Id"] = serde_json::Value::Null;
                continue;
            }
            if !status.is_success() {
                return Err(self.err(format!("/containers/{id}/json: {status}")));
            }
            let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
            if let Some(name) = v["Config"]["Image"].as_str() {
                c["Image"] = name.into();
            }
        }
        cs.retain(|c| !c["Id"].is_null());
        Ok(cs)
    }

    /// An image's id and size by reference or id; `None` when the engine has no such image.
    pub async fn image(&self, reference: &str) -> Result<Option<(String, u64)>, RuntimeError> {
        let path = format!("/images/{}/json", urlencode(reference));
        let (status, body) = self.call_status(hyper::Method::GET, &path).await?;
        if status == hyper::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(self.err(format!("{path}: {status}")));
        }
        let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        Ok(v["Id"]
            .as_str()
            .map(|id| (id.to_string(), v["Size"].as_u64().unwrap_or(0))))
    }

    /// Removes an image by id, never forced: `Ok(false)` when the engine keeps it (a container
    /// uses it, or it has other names) or it is already gone.
    pub async fn remove_image(&self, id: &str) -> Result<bool, RuntimeError> {
        let path = format!("/images/{}", urlencode(id));
        let (status, body) = self.call_status(hyper::Method::DELETE, &path).await?;
        match status {
            s if s.is_success() => Ok(true),
            hyper::StatusCode::CONFLICT | hyper::StatusCode::NOT_FOUND => Ok(false),
            s => Err(self.err(format!(
                "{path}: {s}: {}",
                String::from_utf8_lossy(&body).trim()
            ))),
        }
    }

    /// A volume's engine record (`GET /volumes/<name>`); `None` when there is none.
    pub async fn volume(&self, name: &str) -> Result<Option<VolumeInfo>, RuntimeError> {
        let path = format!("/volumes/{}", urlencode(name));
        let (status, body) = self.call_status(hyper::Method::GET, &path).await?;
        if status == hyper::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(self.err(format!("{path}: {status}")));
        }
        let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        Ok(Some(VolumeInfo::from_engine(&v)))
    }

    /// Creates a volume with these labels; one that exists is left as it is (`POST
    /// /volumes/create` answers with the existing one).
    pub async fn create_volume(
        &self,
        name: &str,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> Result<(), RuntimeError> {
        let body = serde_json::json!({"Name": name, "Labels": labels}).to_string();
        let (status, out) = self
            .call_body(hyper::Method::POST, "/volumes/create", Bytes::from(body))
            .await?;
        if status.is_success() {
            return Ok(());
        }
        Err(self.err(format!(
            "/volumes/create {name}: {status}: {}",
            String::from_utf8_lossy(&out).trim()
        )))
    }

    /// Stops a container (the engine's own grace, then SIGKILL); one already stopped or gone
    /// is not an error.
    pub async fn stop(&self, id: &str) -> Result<(), RuntimeError> {
        self.start_stop(id, "stop?t=20").await
    }

    /// Starts a stopped container; one running or gone is not an error.
    pub async fn start(&self, id: &str) -> Result<(), RuntimeError> {
        self.start_stop(id, "start").await
    }

    async fn start_stop(&self, id: &str, verb: &str) -> Result<(), RuntimeError> {
        let path = format!("/containers/{}/{verb}", urlencode(id));
        let (status, body) = self.call_status(hyper::Method::POST, &path).await?;
        match status {
            s if s.is_success() => Ok(()),
            hyper::StatusCode::NOT_MODIFIED | hyper::StatusCode::NOT_FOUND => Ok(()),
            s => Err(self.err(format!(
                "{path}: {s}: {}",
                String::from_utf8_lossy(&body).trim()
            ))),
        }
    }

    /// A container's inspect document.
    pub async fn inspect(&self, id: &str) -> Result<serde_json::Value, RuntimeError> {
        let body = self
            .call(hyper::Method::GET, &format!("/containers/{id}/json"))
            .await?;
        serde_json::from_slice(&body).map_err(|e| self.err(e))
    }

    /// The last `lines` lines of a container's stdout and stderr, interleaved as written, and
    /// of those only the last `cap` bytes: the response is demultiplexed as it streams in and
    /// never held whole (issue 31). Also the bytes dropped, and whether `limit` ran out first
    /// (then the tail is of what had arrived).
    pub async fn log_tail(
        &self,
        id: &str,
        lines: u32,
        cap: usize,
        limit: Duration,
    ) -> Result<LogRead, RuntimeError> {
        let path = format!("/containers/{id}/logs?stdout=1&stderr=1&tail={lines}");
        let req = Request::builder()
            .method(hyper::Method::GET)
            .uri(format!("http://docker{path}"))
            .header(hyper::header::HOST, "docker")
            .body(Full::new(Bytes::new()))
            .map_err(|e| self.err(e))?;
        let deadline = tokio::time::Instant::now() + limit;
        let resp = tokio::time::timeout_at(deadline, self.client.request(req))
            .await
            .map_err(|_| self.err(format!("{path}: timed out")))?
            .map_err(|e| self.err(Cause(&e)))?;
        let status = resp.status();
        let mut body = resp.into_body();
        if !status.is_success() {
            let mut t = LogTail::new(512);
            while let Ok(Some(Ok(f))) = tokio::time::timeout_at(deadline, body.frame()).await {
                if let Some(d) = f.data_ref() {
                    t.feed(d);
                }
            }
            return Err(self.err(format!("{path}: {status}: {}", t.finish().0.trim())));
        }
        let mut t = LogTail::new(cap);
        let mut timed_out = false;
        loop {
            match tokio::time::timeout_at(deadline, body.frame()).await {
                Err(_) => {
                    timed_out = true;
                    break;
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(self.err(format!("{path}: {e}"))),
                Ok(Some(Ok(f))) => {
                    if let Some(d) = f.data_ref() {
                        t.feed(d);
                    }
                }
            }
        }
        let (text, dropped) = t.finish();
        Ok(LogRead {
            text,
            dropped,
            timed_out,
        })
    }

    /// Remove dangling images; returns bytes reclaimed.
    pub async fn prune_images(&self) -> Result<u64, RuntimeError> {
        let filt = urlencode(r#"{"dangling":["true"]}"#);
        let body = self
            .call(
                hyper::Method::POST,
                &format!("/images/prune?filters={filt}"),
            )
            .await?;
        let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        Ok(v.get("SpaceReclaimed")
            .and_then(|x| x.as_u64())
            .unwrap_or(0))
    }
}

/// The Engine API's log stream: without a TTY each frame is an 8-byte header (stream, 3
/// zero bytes, big-endian length) and its payload; with a TTY it is the raw text.
pub fn demux_logs(b: &[u8]) -> String {
    let mut t = LogTail::new(b.len());
    t.feed(b);
    t.finish().0
}

/// What [`Engine::log_tail`] read: the kept text (not yet redacted), the bytes dropped before
/// it, and whether its time ran out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogRead {
    pub text: String,
    pub dropped: u64,
    pub timed_out: bool,
}

fn truthy(v: &str) -> bool {
    matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes")
}

/// `Exited (137) 5 seconds ago` → 137.
pub(super) fn exit_of(status: &str) -> Option<i64> {
    let rest = status.strip_prefix("Exited (")?;
    rest.split(')').next()?.trim().parse().ok()
}

pub(super) fn health_of(status: &str) -> &'static str {
    if status.contains("(healthy)") {
        "healthy"
    } else if status.contains("(unhealthy)") {
        "unhealthy"
    } else if status.contains("(health: starting)") {
        "starting"
    } else {
        ""
    }
}

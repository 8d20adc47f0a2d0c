//! The container runtime. The compose CLI (plugin v2 or standalone v1) does what only it can do:
//! pull, up, down, logs, config. Everything read-only — container state and health, the Docker
//! data root, image pruning — goes straight to the Engine API on the unix socket, so a heartbeat
//! tick spawns no process at all.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::Request;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use serde::Deserialize;

use crate::http::Cause;
use crate::transport::UnixConnector;

use crate::config::{ComposeCmd, Config};
use crate::tenancy::Container;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("docker engine at {socket}: {msg}")]
    Engine { socket: String, msg: String },
    #[error("{what} failed (rc={rc}): {output}")]
    Compose {
        what: String,
        rc: i32,
        output: String,
    },
    #[error("{0}")]
    Spawn(String),
    /// SIGTERM arrived during this compose step (`--once`): the child was killed.
    #[error("interrupted during {0}")]
    Interrupted(String),
}

impl RuntimeError {
    pub fn output(&self) -> &str {
        match self {
            RuntimeError::Compose { output, .. } => output,
            _ => "",
        }
    }
}

/// Wall time this process spent waiting on the compose CLI and on containers to become healthy,
/// so a tick's own cost can be told apart from docker's (logged at the end of each tick).
static DOCKER_WAIT_MS: AtomicU64 = AtomicU64::new(0);

pub fn docker_wait_ms() -> u64 {
    DOCKER_WAIT_MS.load(Ordering::Relaxed)
}

pub fn add_docker_wait(since: Instant) {
    DOCKER_WAIT_MS.fetch_add(since.elapsed().as_millis() as u64, Ordering::Relaxed);
}

// ---- Engine API -------------------------------------------------------------------------

/// The Engine API over its unix socket: hyper-util's pooled client over a [`UnixConnector`],
/// so a tick's few calls share one connection.
pub struct Engine {
    socket: PathBuf,
    client: Client<UnixConnector, Empty<Bytes>>,
}

#[derive(Deserialize)]
struct ApiContainer {
    #[serde(rename = "Id", default)]
    id: String,
    #[serde(rename = "Labels", default)]
    labels: std::collections::HashMap<String, String>,
    #[serde(rename = "State", default)]
    state: String,
    #[serde(rename = "Status", default)]
    status: String,
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
        let fut = async {
            let req = Request::builder()
                .method(method)
                .uri(format!("http://docker{path}"))
                .header(hyper::header::HOST, "docker")
                .body(Empty::<Bytes>::new())
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
            if !status.is_success() {
                return Err(self.err(format!(
                    "{path}: {status}: {}",
                    String::from_utf8_lossy(&body).trim()
                )));
            }
            Ok(body)
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
                state: c.state,
                id: c.id,
            })
            .collect();
        out.sort_by(|a, b| a.service.cmp(&b.service));
        Ok(out)
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
                let output: String = p["Output"]
                    .as_str()
                    .unwrap_or("")
                    .trim()
                    .chars()
                    .take(400)
                    .collect();
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

    pub async fn docker_root(&self) -> Result<PathBuf, RuntimeError> {
        let body = self.call(hyper::Method::GET, "/info").await?;
        let v: serde_json::Value = serde_json::from_slice(&body).map_err(|e| self.err(e))?;
        v.get("DockerRootDir")
            .and_then(|d| d.as_str())
            .map(PathBuf::from)
            .ok_or_else(|| self.err("/info has no DockerRootDir"))
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

fn health_of(status: &str) -> &'static str {
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

fn urlencode(s: &str) -> String {
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

/// Free bytes for unprivileged writers on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path; st is a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Converged: every expected service has a running container, none starting or unhealthy.
pub fn converged(expected: &[String], cs: &[Container]) -> bool {
    !cs.is_empty()
        && expected.iter().all(|s| cs.iter().any(|c| &c.service == s))
        && cs
            .iter()
            .all(|c| c.state == "running" && (c.health.is_empty() || c.health == "healthy"))
}

// ---- compose CLI ------------------------------------------------------------------------

/// Which compose implementation a [`Compose`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComposeFlavour {
    /// `docker compose` (the CLI plugin: v2, v5).
    Plugin,
    /// a standalone `docker-compose` binary (v1, or any `compose_bin`).
    Standalone,
}

impl std::fmt::Display for ComposeFlavour {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ComposeFlavour::Plugin => "plugin",
            ComposeFlavour::Standalone => "standalone",
        })
    }
}

pub struct Compose {
    argv: Vec<String>,
    flavour: ComposeFlavour,
    project: String,
    docker_config: PathBuf,
    docker_host: String,
    home: PathBuf,
    /// Becomes true when the agent must stop (SIGTERM in `--once`): a running step is killed.
    interrupt: Option<tokio::sync::watch::Receiver<bool>>,
    /// The tick's budget: no step may run past it (the unit's TimeoutStartSec must never be
    /// what stops a tick, or nothing is reported and nothing saved).
    deadline: Option<tokio::time::Instant>,
}

impl Compose {
    pub fn flavour(&self) -> ComposeFlavour {
        self.flavour
    }

    /// `auto`: the `docker compose` plugin when it answers, else standalone `docker-compose`.
    pub async fn detect(cfg: &Config) -> Result<Compose, RuntimeError> {
        let plugin = vec![cfg.docker_bin.clone(), "compose".into()];
        let standalone = vec![cfg.compose_bin.clone()];
        let argv = match cfg.compose_cmd {
            ComposeCmd::Plugin => plugin,
            ComposeCmd::Standalone => standalone,
            ComposeCmd::Auto => {
                let probe = tokio::process::Command::new(&cfg.docker_bin)
                    .args(["compose", "version"])
                    .env_clear()
                    .env("PATH", path_env())
                    .env("DOCKER_CONFIG", cfg.docker_config_dir())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .kill_on_drop(true)
                    .status();
                // a hung CLI must not hold the tick: 15 s, then the standalone binary
                let ok = matches!(
                    tokio::time::timeout(Duration::from_secs(15), probe).await,
                    Ok(Ok(s)) if s.success()
                );
                if ok {
                    plugin
                } else {
                    standalone
                }
            }
        };
        let flavour = if argv.len() == 2 {
            ComposeFlavour::Plugin
        } else {
            ComposeFlavour::Standalone
        };
        Ok(Compose {
            argv,
            flavour,
            project: cfg.compose_project.clone(),
            docker_config: cfg.docker_config_dir(),
            docker_host: cfg.docker_host.clone(),
            home: cfg.state_dir.clone(),
            interrupt: None,
            deadline: None,
        })
    }

    /// Every later compose call talks to the engine through `host` (the agent's checking
    /// socket, see `guard`).
    pub fn set_docker_host(&mut self, host: String) {
        self.docker_host = host;
    }

    pub fn set_interrupt(&mut self, rx: Option<tokio::sync::watch::Receiver<bool>>) {
        self.interrupt = rx;
    }

    pub fn set_deadline(&mut self, deadline: Option<tokio::time::Instant>) {
        self.deadline = deadline;
    }

    /// Runs `compose -p <project> [-f dir/compose.yaml --project-directory dir] args…` with a
    /// clean environment: the agent's own variables must not override `.env` (compose gives the
    /// shell environment precedence), and `DOCKER_CONFIG` is always the agent's own.
    async fn run(
        &self,
        dir: Option<&Path>,
        args: &[&str],
        timeout: Duration,
    ) -> Result<String, RuntimeError> {
        let (mut text, err) = self.run_split(dir, args, timeout).await?;
        if !err.trim().is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&err);
        }
        Ok(text)
    }

    /// As [`Compose::run`], with stdout and stderr apart on success (a failure merges them).
    async fn run_split(
        &self,
        dir: Option<&Path>,
        args: &[&str],
        timeout: Duration,
    ) -> Result<(String, String), RuntimeError> {
        let mut cmd = tokio::process::Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]).args(["-p", &self.project]);
        if let Some(d) = dir {
            cmd.arg("-f")
                .arg(d.join("compose.yaml"))
                .arg("--project-directory")
                .arg(d)
                .current_dir(d);
        }
        cmd.args(args)
            .env_clear()
            .env("PATH", path_env())
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .env("DOCKER_CONFIG", &self.docker_config)
            .env("DOCKER_HOST", &self.docker_host)
            .env("COMPOSE_INTERACTIVE_NO_CLI", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let what = format!(
            "{} {}",
            self.argv.join(" "),
            args.first().copied().unwrap_or("")
        );
        let child = cmd
            .spawn()
            .map_err(|e| RuntimeError::Spawn(format!("{what}: cannot start: {e}")))?;
        let started = Instant::now();
        let timeout = match self.deadline {
            Some(d) => timeout.min(d.saturating_duration_since(tokio::time::Instant::now())),
            None => timeout,
        };
        let wait = tokio::time::timeout(timeout, child.wait_with_output());
        let waited = match self.interrupt.clone() {
            Some(mut rx) => tokio::select! {
                w = wait => w,
                // dropping the wait kills the child (kill_on_drop)
                _ = rx.wait_for(|stop| *stop) => {
                    add_docker_wait(started);
                    return Err(RuntimeError::Interrupted(what));
                }
            },
            None => wait.await,
        };
        add_docker_wait(started);
        let out = match waited {
            Ok(Ok(o)) => o,
            Ok(Err(e)) => return Err(RuntimeError::Spawn(format!("{what}: {e}"))),
            Err(_) => {
                return Err(RuntimeError::Compose {
                    what,
                    rc: -1,
                    output: format!("timed out after {}s", timeout.as_secs()),
                })
            }
        };
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            let mut all = text;
            if !err.trim().is_empty() {
                if !all.is_empty() && !all.ends_with('\n') {
                    all.push('\n');
                }
                all.push_str(&err);
            }
            return Err(RuntimeError::Compose {
                what,
                rc: out.status.code().unwrap_or(-1),
                output: all.trim().to_string(),
            });
        }
        Ok((text, err))
    }

    /// The normalised config (stdout) and compose's warnings (stderr) apart: a warning line
    /// in the YAML would make the second privilege pass misread it.
    pub async fn config(&self, dir: &Path) -> Result<(String, String), RuntimeError> {
        self.run_split(Some(dir), &["config"], Duration::from_secs(60))
            .await
    }
    /// `config` with variables from `env_file` instead of the project's `.env` (`plan`).
    pub async fn config_env(
        &self,
        dir: &Path,
        env_file: &Path,
    ) -> Result<(String, String), RuntimeError> {
        let f = env_file.display().to_string();
        self.run_split(
            Some(dir),
            &["--env-file", &f, "config"],
            Duration::from_secs(60),
        )
        .await
    }
    /// Compose's own per-service config hashes (what it stores in the
    /// `com.docker.compose.config-hash` label), variables from `env_file`.
    pub async fn config_hashes(
        &self,
        dir: &Path,
        env_file: &Path,
    ) -> Result<std::collections::BTreeMap<String, String>, RuntimeError> {
        let f = env_file.display().to_string();
        let (out, _) = self
            .run_split(
                Some(dir),
                &["--env-file", &f, "config", "--hash=*"],
                Duration::from_secs(60),
            )
            .await?;
        Ok(out
            .lines()
            .filter_map(|l| l.trim().split_once(' '))
            .map(|(s, h)| (s.to_string(), h.trim().to_string()))
            .collect())
    }
    pub async fn pull(&self, dir: &Path) -> Result<String, RuntimeError> {
        self.run(Some(dir), &["pull"], Duration::from_secs(1800))
            .await
    }
    pub async fn up(&self, dir: &Path) -> Result<String, RuntimeError> {
        self.run(
            Some(dir),
            &["up", "-d", "--remove-orphans"],
            Duration::from_secs(900),
        )
        .await
    }
    pub async fn down(&self, dir: Option<&Path>, volumes: bool) -> Result<String, RuntimeError> {
        let mut args = vec!["down", "--remove-orphans"];
        if volumes {
            args.push("-v");
        }
        self.run(dir, &args, Duration::from_secs(600)).await
    }
    pub async fn logs(&self, dir: &Path, tail: u32) -> Result<String, RuntimeError> {
        let t = tail.to_string();
        self.run(
            Some(dir),
            &["logs", "--no-color", "--tail", &t],
            Duration::from_secs(60),
        )
        .await
    }
}

/// Variables compose warned it found unset ("The \"X\" variable is not set" in v2, "The X
/// variable is not set" in v1): they would reach the containers as blank strings.
pub fn unset_variables(warnings: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in warnings.lines() {
        let Some(i) = line.find("The ") else { continue };
        let rest = &line[i + 4..];
        let Some(j) = rest.find(" variable is not set") else {
            continue;
        };
        let name = rest[..j].trim_matches(|c| c == '"' || c == '\\');
        if crate::bundle::valid_var(name) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out.sort();
    out
}

fn path_env() -> String {
    std::env::var("PATH")
        .unwrap_or_else(|_| "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake Engine API on a unix socket: `/info` over keep-alive connections, counted.
    #[tokio::test]
    async fn engine_calls_share_one_pooled_unix_connection() {
        use std::sync::atomic::AtomicUsize;
        use std::sync::Arc;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("docker.sock");
        let l = tokio::net::UnixListener::bind(&sock).unwrap();
        let conns = Arc::new(AtomicUsize::new(0));
        let n = conns.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                n.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    loop {
                        let mut head = Vec::new();
                        let mut b = [0u8; 512];
                        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                            match s.read(&mut b).await {
                                Ok(0) | Err(_) => return,
                                Ok(k) => head.extend_from_slice(&b[..k]),
                            }
                        }
                        assert!(head.starts_with(b"GET /info HTTP/1.1\r\n"));
                        let body = r#"{"DockerRootDir":"/var/lib/docker"}"#;
                        let r = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if s.write_all(r.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let e = Engine::new(sock.clone());
        for _ in 0..3 {
            assert_eq!(e.docker_root().await.unwrap(), Path::new("/var/lib/docker"));
        }
        assert_eq!(conns.load(Ordering::SeqCst), 1);
        // no engine: the socket and the connect failure in the message
        let gone = Engine::new(dir.path().join("nothing.sock"));
        let m = gone.docker_root().await.unwrap_err().to_string();
        assert!(
            m.contains("nothing.sock") && m.contains("No such file"),
            "{m}"
        );
    }

    #[test]
    fn health_from_status() {
        assert_eq!(health_of("Up 3 seconds (healthy)"), "healthy");
        assert_eq!(health_of("Up 3 seconds (health: starting)"), "starting");
        assert_eq!(health_of("Up 1 minute (unhealthy)"), "unhealthy");
        assert_eq!(health_of("Up 1 minute"), "");
    }

    #[test]
    fn convergence() {
        let c = |s: &str, st: &str, h: &str| Container {
            service: s.into(),
            state: st.into(),
            health: h.into(),
            id: String::new(),
        };
        let exp = vec!["web".to_string(), "api".to_string()];
        assert!(converged(
            &exp,
            &[c("api", "running", ""), c("web", "running", "healthy")]
        ));
        assert!(!converged(&exp, &[c("web", "running", "healthy")]));
        assert!(!converged(
            &exp,
            &[
                c("api", "running", "starting"),
                c("web", "running", "healthy")
            ]
        ));
        assert!(!converged(
            &exp,
            &[c("api", "exited", ""), c("web", "running", "healthy")]
        ));
    }

    #[test]
    fn unset_variable_warnings() {
        let v2 = "time=\"2026-12-02T10:20:55Z\" level=warning msg=\"The \\\"UNSET_X\\\" variable is not set. Defaulting to a blank string.\"\n";
        let v1 = "The UNSET_Y variable is not set. Defaulting to a blank string.\nWARNING: something else\n";
        assert_eq!(unset_variables(v2), vec!["UNSET_X".to_string()]);
        assert_eq!(
            unset_variables(&format!("{v1}{v1}")),
            vec!["UNSET_Y".to_string()]
        );
        assert!(unset_variables("level=warning msg=\"version is obsolete\"").is_empty());
    }
}

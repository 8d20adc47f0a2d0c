//! The compose CLI (`docker compose` plugin or a standalone binary): pull, up, down, logs,
//! config, always with a clean environment and within the tick's budget.

use super::*;
use tokio::io::{AsyncRead, AsyncReadExt};
use zeroize::Zeroizing;

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

/// What bounds every step of a compose run: the tick's budget (no step may run past it: the
/// unit's TimeoutStartSec must never be what stops a tick, or nothing is reported and nothing
/// saved) and its interrupt (SIGTERM in `--once`: a running step is killed).
#[derive(Debug, Clone)]
pub struct Bounds {
    pub deadline: tokio::time::Instant,
    pub interrupt: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Bounds {
    /// No tick around it (`plan`, the CLI's probes): `limit` from now, no interrupt.
    pub fn within(limit: Duration) -> Bounds {
        Bounds {
            deadline: tokio::time::Instant::now() + limit,
            interrupt: None,
        }
    }
}

pub struct Compose {
    argv: Vec<String>,
    flavour: ComposeFlavour,
    project: String,
    docker_config: PathBuf,
    docker_host: String,
    home: PathBuf,
    bounds: Bounds,
    wait: DockerWait,
    /// The agent's own compose files, one per release (`<sha>.yaml`), given after the
    /// release's `compose.yaml` (PROTOCOL 0.6: the update lock's mount).
    overrides: PathBuf,
}

impl Compose {
    pub fn flavour(&self) -> ComposeFlavour {
        self.flavour
    }

    /// The one constructor: every step of this run within `bounds`. `auto`: the `docker
    /// compose` plugin when it answers, else standalone `docker-compose`.
    pub async fn detect(
        cfg: &Config,
        wait: &DockerWait,
        bounds: Bounds,
    ) -> Result<Compose, RuntimeError> {
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
            bounds,
            wait: wait.clone(),
            overrides: cfg.overrides_dir(),
        })
    }

    /// The agent's override for the release at `dir` (staged, promoted or `current`, all named
    /// by the sha), when it wrote one.
    pub fn override_of(&self, dir: &Path) -> Option<PathBuf> {
        let named = match std::fs::read_link(dir) {
            Ok(t) => t,
            Err(_) => dir.to_path_buf(),
        };
        let sha = named.file_name()?.to_str()?;
        let p = self.overrides.join(format!("{sha}.yaml"));
        p.symlink_metadata().is_ok_and(|m| m.is_file()).then_some(p)
    }

    /// Every later compose call talks to the engine through `host` (the agent's checking
    /// socket, see `guard`).
    pub fn set_docker_host(&mut self, host: String) {
        self.docker_host = host;
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
        let (text, err) = self.run_split(dir, args, timeout).await?;
        Ok(merged(&text, &err))
    }

    /// As [`Compose::run`], with stdout and stderr apart on success (a failure merges them).
    /// Both are read into buffers wiped on drop (see [`read_wiped`]): `config`'s stdout holds
    /// every value interpolated from `.env`.
    async fn run_split(
        &self,
        dir: Option<&Path>,
        args: &[&str],
        timeout: Duration,
    ) -> Result<(Zeroizing<String>, Zeroizing<String>), RuntimeError> {
        let mut cmd = tokio::process::Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]).args(["-p", &self.project]);
        if let Some(d) = dir {
            cmd.arg("-f").arg(d.join("compose.yaml"));
            if let Some(o) = self.override_of(d) {
                cmd.arg("-f").arg(o);
            }
            cmd.arg("--project-directory").arg(d).current_dir(d);
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
        // compose in a process group of its own: an interrupt reaches the plugin it runs too
        cmd.process_group(0);
        let child = cmd
            .spawn()
            .map_err(|e| RuntimeError::Spawn(format!("{what}: cannot start: {e}")))?;
        let pgid = child.id().map(|p| p as i32);
        let started = Instant::now();
        let timeout = timeout.min(
            self.bounds
                .deadline
                .saturating_duration_since(tokio::time::Instant::now()),
        );
        let wait = tokio::time::timeout(timeout, collect(child));
        tokio::pin!(wait);
        let waited = match self.bounds.interrupt.clone() {
            Some(mut rx) => tokio::select! {
                w = &mut wait => w,
                _ = rx.wait_for(|stop| *stop) => {
                    stop_group(pgid, &mut wait).await;
                    self.wait.add(started);
                    return Err(RuntimeError::Interrupted(what));
                }
            },
            None => wait.await,
        };
        if waited.is_err() {
            // timed out: nothing of it may keep running
            signal_group(pgid, libc::SIGKILL);
        }
        self.wait.add(started);
        let (status, stdout, stderr) = match waited {
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
        let text = wiped_text(stdout);
        let err = wiped_text(stderr);
        if !status.success() {
            // the error's text is a plain String (it is redacted wherever it is shown)
            let all = Zeroizing::new(merged(&text, &err));
            return Err(RuntimeError::Compose {
                what,
                rc: status.code().unwrap_or(-1),
                output: all.trim().to_string(),
            });
        }
        Ok((text, err))
    }

    /// The normalised config (stdout) and compose's warnings (stderr) apart: a warning line
    /// in the YAML would make the second privilege pass misread it. The config holds every
    /// interpolated value: it is wiped when dropped.
    pub async fn config(
        &self,
        dir: &Path,
    ) -> Result<(Zeroizing<String>, Zeroizing<String>), RuntimeError> {
        self.run_split(Some(dir), &["config"], Duration::from_secs(60))
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
    /// `up -d --no-deps` of these services alone: what drifted comes back, and a done job
    /// that nothing asked for is not run again. Names that could read as options are refused.
    pub async fn up_only(&self, dir: &Path, services: &[String]) -> Result<String, RuntimeError> {
        let mut args = vec!["up", "-d", "--no-deps"];
        for s in services {
            let ok = s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
            if !ok {
                return Err(RuntimeError::Compose {
                    what: "up".into(),
                    rc: 2,
                    output: format!("not a compose service name: {s:?}"),
                });
            }
            args.push(s);
        }
        self.run(Some(dir), &args, Duration::from_secs(900)).await
    }
    pub async fn down(&self, dir: Option<&Path>, volumes: bool) -> Result<String, RuntimeError> {
        let mut args = vec!["down", "--remove-orphans"];
        if volumes {
            args.push("-v");
        }
        self.run(dir, &args, Duration::from_secs(600)).await
    }
    /// `compose version --short` (every line answers it), for diagnostics; `unknown` if not.
    pub async fn version(&self) -> String {
        match self
            .run_split(None, &["version", "--short"], Duration::from_secs(15))
            .await
        {
            Ok((out, _)) if !out.trim().is_empty() => out.trim().to_string(),
            _ => "unknown".into(),
        }
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

/// stdout, then stderr on a line of its own when it says anything.
fn merged(text: &str, err: &str) -> String {
    let mut all = String::with_capacity(text.len() + err.len() + 1);
    all.push_str(text);
    if !err.trim().is_empty() {
        if !all.is_empty() && !all.ends_with('\n') {
            all.push('\n');
        }
        all.push_str(err);
    }
    all
}

/// What `Child::wait_with_output` does, with both pipes read by [`read_wiped`]. The child is
/// owned here: a caller that drops this future (timeout, interrupt) kills it (`kill_on_drop`).
async fn collect(
    mut child: tokio::process::Child,
) -> std::io::Result<(
    std::process::ExitStatus,
    Zeroizing<Vec<u8>>,
    Zeroizing<Vec<u8>>,
)> {
    let (out, err) = (child.stdout.take(), child.stderr.take());
    tokio::try_join!(child.wait(), read_wiped(out), read_wiped(err))
}

/// All of `r` in a buffer wiped on drop. It never grows in place: a larger buffer is taken,
/// the bytes copied over and the old one wiped, so no freed allocation keeps a copy (as
/// `read_to_end`'s reallocations would).
async fn read_wiped<R: AsyncRead + Unpin>(r: Option<R>) -> std::io::Result<Zeroizing<Vec<u8>>> {
    let mut out = Zeroizing::new(Vec::new());
    let Some(mut r) = r else { return Ok(out) };
    let mut chunk = Zeroizing::new(vec![0u8; 8192]);
    loop {
        let n = r.read(&mut chunk).await?;
        if n == 0 {
            return Ok(out);
        }
        if out.len() + n > out.capacity() {
            let mut bigger =
                Zeroizing::new(Vec::with_capacity((out.len() + n).max(2 * out.capacity())));
            bigger.extend_from_slice(&out);
            out = bigger;
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Bytes as text (invalid UTF-8 as U+FFFD, as `from_utf8_lossy`), without an unwiped copy:
/// valid UTF-8 is taken over in place, otherwise the text is built at its exact final size.
fn wiped_text(mut bytes: Zeroizing<Vec<u8>>) -> Zeroizing<String> {
    match String::from_utf8(std::mem::take(&mut *bytes)) {
        Ok(s) => Zeroizing::new(s),
        Err(e) => {
            let bytes = Zeroizing::new(e.into_bytes());
            let len = bytes
                .utf8_chunks()
                .map(|c| c.valid().len() + if c.invalid().is_empty() { 0 } else { 3 })
                .sum();
            let mut s = Zeroizing::new(String::with_capacity(len));
            for c in bytes.utf8_chunks() {
                s.push_str(c.valid());
                if !c.invalid().is_empty() {
                    s.push(char::REPLACEMENT_CHARACTER);
                }
            }
            s
        }
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
        if monky_boundary::bundle::valid_var(name) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out.sort();
    out
}

pub(super) fn path_env() -> String {
    std::env::var("PATH")
        .unwrap_or_else(|_| "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into())
}

/// How long compose has to stop on SIGTERM before its whole group is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

fn signal_group(pgid: Option<i32>, sig: i32) {
    if let Some(p) = pgid.filter(|p| *p > 1) {
        // SAFETY: kill(2) on the process group this child leads (process_group(0) above).
        unsafe {
            libc::kill(-p, sig);
        }
    }
}

/// SIGTERM to compose's process group, then SIGKILL to it after [`STOP_GRACE`]: the compose
/// plugin (a child of the `docker` CLI) must not keep running `up` after the tick reported.
async fn stop_group<F: std::future::Future>(pgid: Option<i32>, wait: &mut std::pin::Pin<&mut F>) {
    signal_group(pgid, libc::SIGTERM);
    if tokio::time::timeout(STOP_GRACE, wait.as_mut())
        .await
        .is_err()
    {
        signal_group(pgid, libc::SIGKILL);
        let _ = tokio::time::timeout(Duration::from_secs(2), wait.as_mut()).await;
    }
    // the leader is gone; what it started may linger in the group
    signal_group(pgid, libc::SIGKILL);
}

#[cfg(test)]
mod tests;

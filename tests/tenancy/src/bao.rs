//! A real OpenBao dev server, configured as ENVIRONMENT.md lists (the production shape).

use crate::http::{block_on, request};
use serde_json::{json, Value};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Default binary location (installed by `scripts/provision.sh`); `MONKY_BAO_BIN` overrides it.
pub const DEFAULT_BAO_BIN: &str = "/var/cache/monky-deployd-dev/bin/bao";
const ROOT_TOKEN: &str = "root";
/// `sh -c SUPERVISOR monky-bao BIN ARGS…`: runs BIN, kills it when stdin reaches EOF, exits
/// with BIN's status.
const SUPERVISOR: &str = r#"exec 3<&0; bin="$1"; shift; "$bin" "$@" </dev/null 3<&- & p=$!; ( read _ <&3; kill $p 2>/dev/null ) & exec 3<&-; wait $p"#;

/// TTLs of the `see-env` role (`token_ttl`, `token_max_ttl`). Default 1 h / 4 h as in production;
/// token-lifecycle tests shorten them.
#[derive(Clone, Copy, Debug)]
pub struct BaoRoleOpts {
    pub token_ttl: Duration,
    pub token_max_ttl: Duration,
}

impl Default for BaoRoleOpts {
    fn default() -> Self {
        BaoRoleOpts {
            token_ttl: Duration::from_secs(3600),
            token_max_ttl: Duration::from_secs(4 * 3600),
        }
    }
}

/// A non-2xx answer from OpenBao (or a transport failure, status 0).
#[derive(Clone, Debug)]
pub struct BaoError {
    pub status: u16,
    pub body: String,
}

impl fmt::Display for BaoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "openbao {}: {}", self.status, self.body)
    }
}

impl std::error::Error for BaoError {}

/// A running `bao server -dev` on `127.0.0.1:<free port>`, root token `root`. Killed on drop.
pub struct Bao {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    accessor: Mutex<Option<String>>,
    /// `Some((bin, args))` for a persistent server ([`Bao::restart`]).
    respawn: Option<(PathBuf, Vec<String>)>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// Polls `/v1/sys/health` until 200 (`need_200`) or any answer (a server awaiting init: 501).
fn wait_healthy(child: &mut Child, port: u16, log: &Path, need_200: bool) -> Result<(), String> {
    let within = Duration::from_secs(20);
    let deadline = Instant::now() + within;
    let addr = format!("http://127.0.0.1:{port}");
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!("bao exited ({st}); log:\n{log}"));
        }
        let r = block_on(request(&addr, "GET", "/v1/sys/health", None, None));
        if matches!(r, Ok(ref r) if r.status == 200 || !need_200) {
            // the answer may come from another test's server that took this port first: ours
            // then fails to bind and exits. Only a child still alive is ours. (The log is no
            // guide: a healthy dev server logs "address already in use" for its cluster port
            // when other dev servers run.)
            std::thread::sleep(Duration::from_millis(100));
            if let Ok(Some(st)) = child.try_wait() {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                return Err(format!(
                    "bao exited ({st}) while {addr} answered (address already in use); log:\n{text}"
                ));
            }
            return Ok(());
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            return Err(format!("no healthy answer in {within:?}; log:\n{log}"));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn bao_bin() -> PathBuf {
    let bin = std::env::var_os("MONKY_BAO_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_BAO_BIN));
    if !bin.is_file() {
        panic!(
            "OpenBao binary not found at {} (set MONKY_BAO_BIN or run scripts/provision.sh)",
            bin.display()
        );
    }
    bin
}

/// Spawns `bao ARGS` under the sh supervisor, output appended to `dir/bao.log`.
///
/// The supervisor: bao runs as its child, and a reader on the supervisor's stdin (a pipe only
/// this process holds) kills bao at EOF — so bao dies with the test process even on SIGKILL or
/// when a `Bao` lives in a never-dropped static.
fn spawn(bin: &Path, args: &[String], dir: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("bao.log"))
        .expect("bao.log");
    Command::new("/bin/sh")
        .arg("-c")
        .arg(SUPERVISOR)
        .arg("monky-bao")
        .arg(bin)
        .args(args)
        .env("HOME", dir)
        .env_remove("BAO_ADDR")
        .env_remove("BAO_TOKEN")
        .env_remove("VAULT_ADDR")
        .env_remove("VAULT_TOKEN")
        .stdin(Stdio::piped())
        .stdout(log.try_clone().expect("dup log"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display()))
}

fn stop_child(child: &mut Child) {
    drop(child.stdin.take()); // EOF: the supervisor kills bao, then exits
    let _ = child.wait();
}

/// `sys/init` with one recovery share (the static seal unseals by itself), then a root token
/// whose id is `root`.
fn init(child: &mut Child, port: u16, log: &Path) -> Result<(), String> {
    let addr = format!("http://127.0.0.1:{port}");
    let r = block_on(request(
        &addr,
        "POST",
        "/v1/sys/init",
        None,
        Some(&json!({"recovery_shares": 1, "recovery_threshold": 1})),
    ))?;
    if r.status != 200 {
        return Err(format!("sys/init: {} {}", r.status, r.json()));
    }
    let initial = r.json()["root_token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    wait_healthy(child, port, log, true)?;
    let r = block_on(request(
        &addr,
        "POST",
        "/v1/auth/token/create",
        Some(&initial),
        Some(&json!({"id": ROOT_TOKEN, "policies": ["root"], "no_parent": true})),
    ))?;
    if r.status != 200 {
        return Err(format!("create root token: {} {}", r.status, r.json()));
    }
    Ok(())
}

impl Bao {
    /// Starts the dev server (in-memory, root token `root`) and waits for `/v1/sys/health` to
    /// answer 200. Panics (never skips) when the binary is missing: run `scripts/provision.sh`.
    pub fn start() -> Bao {
        Bao::launch(false)
    }

    /// Starts a *persistent* server (raft storage + static seal in its temp dir, as
    /// ENVIRONMENT.md describes) that survives [`Bao::restart`] with its data, tokens and port.
    /// Initialised once (≈1.5 s); a root token with id `root` is created so
    /// [`Bao::root_token`] is the same as in dev mode.
    pub fn start_persistent() -> Bao {
        Bao::launch(true)
    }

    fn launch(persistent: bool) -> Bao {
        let bin = bao_bin();
        let dir = tempfile::Builder::new()
            .prefix("monky-bao-")
            .tempdir()
            .expect("tempdir");
        let mut last_err = String::new();
        for _attempt in 0..5 {
            let port = free_port();
            let args = if persistent {
                let data = dir.path().join("raft");
                std::fs::create_dir_all(&data).expect("raft dir");
                let key = dir.path().join("unseal.key");
                std::fs::write(&key, crate::signer::random_hex(16)).expect("unseal.key");
                let hcl = format!(
                    "storage \"raft\" {{\n  path = \"{data}\"\n  node_id = \"n1\"\n  performance_multiplier = 1\n}}\n\
                     listener \"tcp\" {{\n  address = \"127.0.0.1:{port}\"\n  tls_disable = true\n}}\n\
                     seal \"static\" {{\n  current_key_id = \"t1\"\n  current_key = \"file://{key}\"\n}}\n\
                     api_addr = \"http://127.0.0.1:{port}\"\n\
                     cluster_addr = \"http://127.0.0.1:{cport}\"\n\
                     disable_mlock = true\n\
                     unsafe_allow_api_audit_creation = true\n",
                    data = data.display(),
                    key = key.display(),
                    cport = free_port(),
                );
                let path = dir.path().join("server.hcl");
                std::fs::write(&path, hcl).expect("server.hcl");
                vec!["server".into(), format!("-config={}", path.display())]
            } else {
                // dev mode plus a config file: OpenBao 2.x only allows enabling audit devices
                // over the API when the server config says so (the audit log counts reads).
                let hcl = dir.path().join("dev.hcl");
                std::fs::write(&hcl, "unsafe_allow_api_audit_creation = true\n").expect("dev.hcl");
                vec![
                    "server".into(),
                    "-dev".into(),
                    "-dev-no-store-token".into(),
                    format!("-dev-root-token-id={ROOT_TOKEN}"),
                    format!("-dev-listen-address=127.0.0.1:{port}"),
                    format!("-config={}", hcl.display()),
                ]
            };
            let mut child = spawn(&bin, &args, dir.path());
            let log = dir.path().join("bao.log");
            let up = wait_healthy(&mut child, port, &log, !persistent).and_then(|()| {
                if persistent {
                    init(&mut child, port, &log)
                } else {
                    Ok(())
                }
            });
            match up {
                Ok(()) => {
                    return Bao {
                        child: Some(child),
                        port,
                        dir,
                        accessor: Mutex::new(None),
                        respawn: persistent.then_some((bin, args)),
                    }
                }
                Err(e) => {
                    stop_child(&mut child);
                    last_err = e;
                    if !last_err.contains("address already in use") {
                        break;
                    }
                }
            }
        }
        panic!("OpenBao server did not come up: {last_err}");
    }

    /// Stops (if running) and starts again a [`Bao::start_persistent`] server on the same port
    /// with the same data; returns once it is unsealed and healthy. Panics for a dev server.
    pub fn restart(&mut self) {
        let Some((bin, args)) = self.respawn.clone() else {
            panic!("Bao::restart needs Bao::start_persistent (a dev server keeps nothing)");
        };
        self.kill();
        let mut child = spawn(&bin, &args, self.dir.path());
        if let Err(e) = wait_healthy(&mut child, self.port, &self.log_path(), true) {
            stop_child(&mut child);
            panic!("OpenBao restart: {e}");
        }
        self.child = Some(child);
    }

    /// The server's combined stdout/stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("bao.log")
    }

    /// `http://127.0.0.1:PORT`
    pub fn addr(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn root_token(&self) -> &str {
        ROOT_TOKEN
    }

    /// Kills the server now (tests of "OpenBao unreachable"). Idempotent; also done on drop.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            stop_child(&mut c);
        }
    }

    /// Any request; returns status and JSON body (`Null` when empty). Transport errors panic.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let r = block_on(request(&self.addr(), method, path, token, body))
            .unwrap_or_else(|e| panic!("openbao: {e}"));
        (r.status, r.json())
    }

    /// A root request that must succeed (2xx).
    fn root(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let (st, v) = self.request(method, path, Some(ROOT_TOKEN), body);
        if !(200..300).contains(&st) {
            panic!("openbao {method} {path}: {st} {v}");
        }
        v
    }

    /// Sets up exactly the production shape (ENVIRONMENT.md):
    /// - a file audit device (test-only, see [`Bao::audit_requests`]);
    /// - KV v2 mount `monky`;
    /// - JWT auth mount `jwt-tenancy` with `jwt_validation_pubkeys = [signer_pubkey_pem]`,
    ///   `bound_issuer = monky-tenancy`;
    /// - policy `see-env`: `read` on
    ///   `monky/data/{{identity.entity.aliases.<jwt-tenancy accessor>.metadata.env_id}}/see/*`;
    /// - role `see-env`: `role_type=jwt`, `bound_audiences=[openbao-see-env]`, `user_claim=env_id`,
    ///   `bound_claims={kind: deploy-grant}`, `claim_mappings={env_id: env_id, jti: grant_jti}`,
    ///   `token_policies=[see-env]`, `token_ttl`/`token_max_ttl` from `opts`.
    pub fn configure(&self, signer_pubkey_pem: &str, opts: BaoRoleOpts) {
        self.root(
            "PUT",
            "/v1/sys/audit/file",
            Some(&json!({
                "type": "file",
                "options": {"file_path": self.audit_path().display().to_string()},
            })),
        );
        self.root(
            "POST",
            "/v1/sys/mounts/monky",
            Some(&json!({"type": "kv", "options": {"version": "2"}})),
        );
        self.root(
            "POST",
            "/v1/sys/auth/jwt-tenancy",
            Some(&json!({"type": "jwt"})),
        );
        self.root(
            "POST",
            "/v1/auth/jwt-tenancy/config",
            Some(&json!({
                "jwt_validation_pubkeys": [signer_pubkey_pem],
                "bound_issuer": crate::GRANT_ISSUER,
            })),
        );
        let auths = self.root("GET", "/v1/sys/auth", None);
        let accessor = auths["data"]["jwt-tenancy/"]["accessor"]
            .as_str()
            .or_else(|| auths["jwt-tenancy/"]["accessor"].as_str())
            .unwrap_or_else(|| panic!("no jwt-tenancy accessor in {auths}"))
            .to_string();
        let policy = format!(
            "path \"monky/data/{{{{identity.entity.aliases.{accessor}.metadata.env_id}}}}/see/*\" {{\n  capabilities = [\"read\"]\n}}\n"
        );
        self.root(
            "PUT",
            "/v1/sys/policies/acl/see-env",
            Some(&json!({ "policy": policy })),
        );
        self.root(
            "POST",
            "/v1/auth/jwt-tenancy/role/see-env",
            Some(&json!({
                "role_type": "jwt",
                "bound_audiences": [crate::GRANT_AUDIENCE],
                "user_claim": "env_id",
                "bound_claims": {"kind": crate::GRANT_KIND},
                "claim_mappings": {"env_id": "env_id", "jti": "grant_jti"},
                "token_policies": ["see-env"],
                "token_ttl": format!("{}s", opts.token_ttl.as_secs()),
                "token_max_ttl": format!("{}s", opts.token_max_ttl.as_secs()),
            })),
        );
        *self.accessor.lock().unwrap_or_else(|e| e.into_inner()) = Some(accessor);
    }

    /// The audit log file (JSON lines; secret values and tokens are HMAC'd by OpenBao).
    pub fn audit_path(&self) -> PathBuf {
        self.dir.path().join("audit.log")
    }

    /// Every request OpenBao audited since [`Bao::configure`], in order, as
    /// `(operation, path)` — e.g. `("read", "monky/data/env-a/see/api")`,
    /// `("update", "auth/jwt-tenancy/login")`. Paths carry no leading `/v1/` and no query.
    pub fn audit_requests(&self) -> Vec<(String, String)> {
        self.audit_entries(false)
    }

    fn audit_entries(&self, skip_root: bool) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(self.audit_path()).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["type"] == "request")
            .filter(|v| {
                !skip_root
                    || !v["auth"]["policies"]
                        .as_array()
                        .is_some_and(|p| p.iter().any(|p| p == "root"))
            })
            .map(|v| {
                (
                    v["request"]["operation"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    v["request"]["path"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect()
    }

    /// Every request made with a non-root token (the agent's; tenancy's own token lookups and
    /// the harness's seeding run as root): "the agent talked to OpenBao" is a non-empty delta.
    pub fn agent_requests(&self) -> Vec<(String, String)> {
        self.audit_entries(true)
    }

    /// Paths of every KV v2 data read (`monky/data/…`) made with a non-root token, in order:
    /// "the agent made no OpenBao read" is `secret_reads().is_empty()` (the harness's own
    /// seeding runs as root and is not counted).
    pub fn secret_reads(&self) -> Vec<String> {
        self.audit_entries(true)
            .into_iter()
            .filter(|(op, p)| op == "read" && p.starts_with("monky/data/"))
            .map(|(_, p)| p)
            .collect()
    }

    /// How many `auth/jwt-tenancy/login` calls OpenBao saw.
    pub fn login_count(&self) -> usize {
        self.audit_requests()
            .iter()
            .filter(|(_, p)| p == "auth/jwt-tenancy/login")
            .count()
    }

    /// The `jwt-tenancy` mount accessor (after [`Bao::configure`]).
    pub fn jwt_accessor(&self) -> Option<String> {
        self.accessor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// KV v2 write of `monky/data/<env>/see/<name>` with `data = kv`; returns the new version.
    /// Retries briefly while a fresh KV v2 mount is still upgrading.
    pub fn put_secret(&self, env: &str, name: &str, kv: &[(&str, &str)]) -> u64 {
        let data: serde_json::Map<String, Value> = kv
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect();
        let path = format!("/v1/monky/data/{env}/see/{name}");
        let body = json!({ "data": data });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (st, v) = self.request("POST", &path, Some(ROOT_TOKEN), Some(&body));
            if st == 200 {
                return v["data"]["version"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("no version in {v}"));
            }
            if Instant::now() > deadline {
                panic!("openbao POST {path}: {st} {v}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Reads a secret with `token`: `GET /v1/monky/data/<env>/see/<name>[?version=n]`.
    pub fn read_secret(
        &self,
        token: &str,
        env: &str,
        name: &str,
        version: Option<u64>,
    ) -> (u16, Value) {
        let q = version.map(|v| format!("?version={v}")).unwrap_or_default();
        self.request(
            "GET",
            &format!("/v1/monky/data/{env}/see/{name}{q}"),
            Some(token),
            None,
        )
    }

    /// `POST /v1/auth/jwt-tenancy/login {"role":"see-env","jwt":…}` → the whole response
    /// (`auth.client_token`, `auth.metadata`, …) or the error.
    pub fn login_full(&self, grant_jwt: &str) -> Result<Value, BaoError> {
        let (st, v) = self.request(
            "POST",
            "/v1/auth/jwt-tenancy/login",
            None,
            Some(&json!({"role": "see-env", "jwt": grant_jwt})),
        );
        if st == 200 {
            Ok(v)
        } else {
            Err(BaoError {
                status: st,
                body: v.to_string(),
            })
        }
    }

    /// Logs in with a grant and returns `auth.client_token`.
    pub fn login(&self, grant_jwt: &str) -> Result<String, BaoError> {
        let v = self.login_full(grant_jwt)?;
        Ok(v["auth"]["client_token"]
            .as_str()
            .expect("auth.client_token")
            .to_string())
    }

    /// Privileged `auth/token/lookup` (what tenancy does); returns the `data` object
    /// (`meta.env_id`, `meta.grant_jti`, `ttl`, `policies`, …).
    pub fn lookup(&self, token: &str) -> Result<Value, BaoError> {
        let (st, v) = self.request(
            "POST",
            "/v1/auth/token/lookup",
            Some(ROOT_TOKEN),
            Some(&json!({ "token": token })),
        );
        if st == 200 {
            Ok(v["data"].clone())
        } else {
            Err(BaoError {
                status: st,
                body: v.to_string(),
            })
        }
    }

    /// Revokes a token (privileged `auth/token/revoke`).
    pub fn revoke(&self, token: &str) {
        self.root(
            "POST",
            "/v1/auth/token/revoke",
            Some(&json!({ "token": token })),
        );
    }
}

impl Drop for Bao {
    fn drop(&mut self) {
        self.kill();
    }
}

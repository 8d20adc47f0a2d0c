//! Shared by the Ziti suites (`tests/mesh/`, `tests/ziti_stress.rs`): a real OpenZiti quickstart network (controller + edge
//! router from `scripts/ziti-net.sh`), services hosted by its router, enrolled identities, a tiny
//! recording HTTP server, and `ziti tunnel proxy` processes. Nothing here imitates Ziti: when a
//! real part is missing (ziti CLI, libziti linked into this build) the tests fail, loudly.
#![allow(dead_code)] // each suite uses a different subset

use std::io::{BufRead, BufReader};
use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const ZITI_BIN_DEFAULT: &str = "/var/cache/monky-deployd-dev/bin/ziti";

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn ziti_bin() -> PathBuf {
    std::env::var_os("ZITI_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(ZITI_BIN_DEFAULT))
}

/// Fail (not skip) when this build has no SDK: the sdk transport is what these tests prove.
#[allow(clippy::assertions_on_constants)] // constant per build: that is the point
pub fn require_sdk() {
    assert!(
        ziti_sys::LINKED,
        "this test build has no OpenZiti SDK linked: build with ZITI_SDK_DIR=/var/cache/monky-deployd-dev/libziti \
         (scripts/provision.sh installs it) — the sdk transport cannot be tested without it"
    );
}

/// Stop the network kept in `dir` (if it runs) and remove it, so the next start is a fresh one.
pub fn remove_net(dir: &Path) {
    if dir.exists() {
        script(dir, &["stop"], &[]);
        std::fs::remove_dir_all(dir).expect("remove an old Ziti network");
    }
}

/// `$ZITI_CTRL_PORT` and `$ZITI_ROUTER_PORT`, else 1280 and 3022.
pub fn ports() -> (u16, u16) {
    let port = |k: &str, d: u16| {
        std::env::var(k)
            .ok()
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{k}={v} is not a port"))
            })
            .unwrap_or(d)
    };
    (port("ZITI_CTRL_PORT", 1280), port("ZITI_ROUTER_PORT", 3022))
}

/// A quickstart network living under one directory.
pub struct Net {
    pub dir: PathBuf,
    pub ctrl: String,
}

impl Net {
    /// Start (or reuse) the network in `dir` with the given ports.
    pub fn start_in(dir: &Path, ctrl_port: u16, router_port: u16) -> Net {
        let bin = ziti_bin();
        assert!(
            bin.is_file(),
            "no ziti CLI at {} (run scripts/provision.sh, or set ZITI_BIN)",
            bin.display()
        );
        let out = script(
            dir,
            &["start"],
            &[
                ("ZITI_CTRL_PORT", ctrl_port),
                ("ZITI_ROUTER_PORT", router_port),
            ],
        );
        let ctrl = out
            .lines()
            .find_map(|l| l.strip_prefix("ZITI_CTRL="))
            .unwrap_or_else(|| panic!("ziti-net.sh start printed no ZITI_CTRL: {out}"))
            .to_string();
        Net {
            dir: dir.to_path_buf(),
            ctrl,
        }
    }

    /// The network shared by every suite: `$MONKY_ZITI_DIR` or `target/ziti-net`, ports
    /// [`ports`].
    pub fn shared() -> &'static Net {
        static NET: OnceLock<Net> = OnceLock::new();
        NET.get_or_init(|| {
            let dir = std::env::var_os("MONKY_ZITI_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| repo().join("target/ziti-net"));
            let (ctrl, router) = ports();
            Net::start_in(&dir, ctrl, router)
        })
    }

    /// The edge router's port, as `scripts/ziti-net.sh` fixed it at the first start of `dir`.
    pub fn router_port(&self) -> u16 {
        let f = self.dir.join("ports");
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        text.split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{}: no router port in {text:?}", f.display()))
    }

    /// The controller's port, from `ctrl` (`https://localhost:PORT`).
    pub fn ctrl_port(&self) -> u16 {
        self.ctrl
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {}", self.ctrl))
    }

    pub fn stop(&self) {
        script(&self.dir, &["stop"], &[]);
    }

    pub fn restart(&self) {
        script(&self.dir, &["start"], &[]);
    }

    /// Run the controller and the edge router as two processes (from then on `restart` starts
    /// whichever is down); also what brings a stopped one back.
    pub fn split(&self) {
        script(&self.dir, &["split"], &[]);
    }

    /// Stop the controller of a [`Net::split`] network; the edge router keeps running.
    pub fn stop_ctrl(&self) {
        script(&self.dir, &["stop-ctrl"], &[]);
    }

    /// Stop the edge router of a [`Net::split`] network; the controller keeps running.
    pub fn stop_router(&self) {
        script(&self.dir, &["stop-router"], &[]);
    }

    /// (Re)create `name` as a `host.v1` service the router hosts, pointing at 127.0.0.1:`port`.
    pub fn service(&self, name: &str, port: u16) {
        script(
            &self.dir,
            &["service", name, "127.0.0.1", &port.to_string()],
            &[],
        );
    }

    /// (Re)create identity `name` with Dial on `services`, enrolled by the ziti CLI into a file.
    pub fn identity(&self, name: &str, services: &[&str]) -> PathBuf {
        let out = self.dir.join(format!("{name}.json"));
        let mut args = vec!["identity", name, out.to_str().expect("utf-8 path")];
        args.extend_from_slice(services);
        script(&self.dir, &args, &[]);
        out
    }

    /// (Re)create identity `name` with Dial on `services`; only its one-time enrolment JWT.
    pub fn jwt(&self, name: &str, services: &[&str]) -> PathBuf {
        let out = self.dir.join(format!("{name}.ott.jwt"));
        let mut args = vec!["jwt", name, out.to_str().expect("utf-8 path")];
        args.extend_from_slice(services);
        script(&self.dir, &args, &[]);
        out
    }

    /// Run the ziti CLI logged in to this network; returns stdout.
    pub fn ziti(&self, args: &[&str]) -> String {
        let mut a = vec!["ziti"];
        a.extend_from_slice(args);
        script(&self.dir, &a, &[])
    }
}

fn script(dir: &Path, args: &[&str], ports: &[(&str, u16)]) -> String {
    let mut cmd = Command::new(repo().join("scripts/ziti-net.sh"));
    cmd.arg(args[0])
        .arg(dir)
        .args(&args[1..])
        .env("ZITI_BIN", ziti_bin());
    for (k, v) in ports {
        cmd.env(k, v.to_string());
    }
    let out = cmd.output().expect("run scripts/ziti-net.sh");
    assert!(
        out.status.success(),
        "scripts/ziti-net.sh {} {} failed ({}):\n{}{}",
        args[0],
        args[1..].join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A unique name per test process, so reruns and parallel tests never share Ziti entities.
pub fn unique(base: &str) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    // pid + start time: pids recycle across runs, and the network keeps old entities
    static T0: OnceLock<u128> = OnceLock::new();
    let t0 = T0.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() % 100_000)
            .unwrap_or(0)
    });
    format!("{base}-{}-{t0}-{n}", std::process::id())
}

/// A plain HTTP/1.1 server on 127.0.0.1 that answers every request with `body` and records the
/// request lines it saw (what the far side of the Ziti service observed).
pub struct HttpServer {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    pub fn start(body: &'static str) -> HttpServer {
        let l = StdListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = l.local_addr().expect("local addr").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut s) = conn else { continue };
                let seen = seen2.clone();
                std::thread::spawn(move || {
                    use std::io::Write;
                    let mut r = BufReader::new(s.try_clone().expect("clone"));
                    let mut first = String::new();
                    if r.read_line(&mut first).is_err() || first.is_empty() {
                        return; // a bare connect (readiness probe)
                    }
                    loop {
                        let mut h = String::new();
                        match r.read_line(&mut h) {
                            Ok(0) | Err(_) => break,
                            Ok(_) if h == "\r\n" || h == "\n" => break,
                            Ok(_) => {}
                        }
                    }
                    seen.lock().unwrap().push(first.trim_end().to_string());
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = s.write_all(resp.as_bytes());
                });
            }
        });
        HttpServer { port, seen }
    }
}

/// Send one HTTP/1.1 GET over any stream and return the whole response.
pub async fn http_get<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    s: &mut S,
    path: &str,
) -> String {
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write request");
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut buf))
        .await
        .expect("response within 20s")
        .expect("read response");
    String::from_utf8_lossy(&buf).into_owned()
}

/// `ziti tunnel proxy -i IDENTITY service:port …`, killed on drop.
pub struct TunnelProxy {
    child: Child,
    pub log: PathBuf,
}

impl TunnelProxy {
    pub fn start(net: &Net, identity: &Path, binds: &[(&str, u16)]) -> TunnelProxy {
        let log = net.dir.join(format!("{}.proxy.log", unique("tunnel")));
        let f = std::fs::File::create(&log).expect("proxy log");
        let mut cmd = Command::new(ziti_bin());
        cmd.args(["tunnel", "proxy", "--cli-agent=false", "-i"])
            .arg(identity);
        for (svc, port) in binds {
            cmd.arg(format!("{svc}:{port}"));
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(f.try_clone().expect("dup"))
            .stderr(f)
            .spawn()
            .expect("spawn ziti tunnel proxy");
        let p = TunnelProxy { child, log };
        let deadline = Instant::now() + Duration::from_secs(30);
        for (_, port) in binds {
            while std::net::TcpStream::connect(("127.0.0.1", *port)).is_err() {
                assert!(
                    Instant::now() < deadline,
                    "ziti tunnel proxy did not listen on 127.0.0.1:{port} within 30s:\n{}",
                    std::fs::read_to_string(&p.log).unwrap_or_default()
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        p
    }
}

impl Drop for TunnelProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free 127.0.0.1 port (bound then released).
pub fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

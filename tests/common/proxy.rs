//! The egress proxy rig: a real tinyproxy (Debian's tinyproxy-bin, installed by
//! scripts/provision.sh) on its own loopback port with Basic auth and its own log, and an
//! "only route" guard that makes chosen (addr, port) targets unreachable from the agent except
//! through the proxy: the agent runs with a distinct gid and an iptables OUTPUT rule rejects
//! that gid's TCP to each target; tinyproxy runs as `nobody:nogroup`, so the rule spares it.
//! Tests run as root (iptables, the gid). Both halves clean up on drop.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const TINYPROXY: &str = "/usr/bin/tinyproxy";
pub const IPTABLES: &str = "/usr/sbin/iptables";
/// tinyproxy's own user: not the agent's gid, so the only-route rule never matches it.
const NOBODY: u32 = 65534;

#[derive(Clone, Debug)]
pub struct ProxyOpts {
    /// `BasicAuth user pass`; None: no auth asked.
    pub auth: Option<(String, String)>,
    /// `ConnectPort` lines; empty: every port may be CONNECTed to (tinyproxy answers 403 to a
    /// CONNECT to a port not listed).
    pub connect_ports: Vec<u16>,
}

impl Default for ProxyOpts {
    fn default() -> Self {
        ProxyOpts {
            auth: Some(("monkyproxy".into(), "pr0xy-s3cret-pw".into())),
            connect_ports: Vec::new(),
        }
    }
}

/// A running tinyproxy. Killed (and its files removed) on drop.
pub struct Tinyproxy {
    child: Option<Child>,
    dir: tempfile::TempDir,
    port: u16,
    pub opts: ProxyOpts,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

impl Tinyproxy {
    pub fn start() -> Tinyproxy {
        Self::with(ProxyOpts::default())
    }

    pub fn with(opts: ProxyOpts) -> Tinyproxy {
        assert!(
            Path::new(TINYPROXY).is_file(),
            "tinyproxy missing at {TINYPROXY}: run scripts/provision.sh (the README test command does)"
        );
        let dir = tempfile::Builder::new()
            .prefix("monky-proxy-")
            .tempdir()
            .expect("tempdir");
        // tinyproxy drops to nobody before it opens its log
        std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).expect("chown");
        let mut p = Tinyproxy {
            child: None,
            dir,
            port: 0,
            opts,
        };
        p.spawn();
        p
    }

    fn spawn(&mut self) {
        // a port freed by the kernel may be taken again before tinyproxy binds it: retry
        for _ in 0..5 {
            self.port = free_port();
            let mut conf = format!(
                "User nobody\nGroup nogroup\nPort {port}\nListen 127.0.0.1\nTimeout 60\n\
                 LogFile \"{log}\"\nLogLevel Connect\nMaxClients 100\nDisableViaHeader Yes\n",
                port = self.port,
                log = self.log_path().display(),
            );
            if let Some((u, p)) = &self.opts.auth {
                conf.push_str(&format!("BasicAuth {u} {p}\n"));
            }
            for cp in &self.opts.connect_ports {
                conf.push_str(&format!("ConnectPort {cp}\n"));
            }
            let cpath = self.dir.path().join("tinyproxy.conf");
            std::fs::write(&cpath, conf).unwrap();
            let mut child = Command::new(TINYPROXY)
                .arg("-d")
                .arg("-c")
                .arg(&cpath)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start tinyproxy");
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // exited: port taken or bad config; try another port
                }
                if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                    self.child = Some(child);
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!(
            "tinyproxy did not listen; its log:\n{}",
            std::fs::read_to_string(self.log_path()).unwrap_or_default()
        );
    }

    pub fn port(&self) -> u16 {
        self.port
    }
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
    /// `http://127.0.0.1:<port>` (no credentials).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr())
    }
    /// `http://user:pass@127.0.0.1:<port>` as HTTPS_PROXY carries it.
    pub fn url_with_auth(&self) -> String {
        match &self.opts.auth {
            Some((u, p)) => format!("http://{u}:{p}@{}", self.addr()),
            None => self.url(),
        }
    }
    pub fn password(&self) -> Option<&str> {
        self.opts.auth.as_ref().map(|(_, p)| p.as_str())
    }

    /// A 0600 `user:password` file for `egress_proxy.credentials_file`, in `dir`.
    pub fn credentials_file(&self, dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let (u, p) = self.opts.auth.as_ref().expect("a proxy with auth");
        let f = dir.join("proxy.cred");
        std::fs::write(&f, format!("{u}:{p}\n")).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        f
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("tinyproxy.log")
    }
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Every `CONNECT host:port` tinyproxy logged, oldest first (whatever it answered).
    pub fn connects(&self) -> Vec<String> {
        self.log()
            .lines()
            .filter_map(|l| l.split_once("): CONNECT "))
            .filter_map(|(_, rest)| rest.split_whitespace().next())
            .map(String::from)
            .collect()
    }

    /// How many CONNECTs to `addr:port` it logged.
    pub fn connects_to(&self, addr: &str, port: u16) -> usize {
        let t = format!("{addr}:{port}");
        self.connects().iter().filter(|c| **c == t).count()
    }

    /// Stops it: a proxy that is down (its port then refuses connections).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        self.stop();
    }
}

static GIDS: AtomicU32 = AtomicU32::new(0);

/// The only-route guard: a gid for the agent subprocess and one iptables REJECT rule per target
/// for that gid. Rules are removed on drop.
pub struct OnlyRoute {
    gid: u32,
    rules: Vec<Vec<String>>,
}

impl OnlyRoute {
    /// A fresh gid (distinct per process and guard), no rules yet.
    pub fn new() -> OnlyRoute {
        let n = GIDS.fetch_add(1, Ordering::SeqCst);
        let gid = 40000 + (std::process::id() % 2000) * 10 + (n % 10);
        OnlyRoute {
            gid,
            rules: Vec::new(),
        }
    }

    /// A guard for these targets: the agent's TCP to each is refused.
    pub fn block(targets: &[(&str, u16)]) -> OnlyRoute {
        let mut g = Self::new();
        for (a, p) in targets {
            g.add(a, *p);
        }
        g
    }

    pub fn gid(&self) -> u32 {
        self.gid
    }

    pub fn add(&mut self, addr: &str, port: u16) {
        let rule: Vec<String> = [
            "OUTPUT",
            "-m",
            "owner",
            "--gid-owner",
            &self.gid.to_string(),
            "-p",
            "tcp",
            "-d",
            addr,
            "--dport",
            &port.to_string(),
            "-j",
            "REJECT",
            "--reject-with",
            "tcp-reset",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = Command::new(IPTABLES)
            .arg("-w")
            .arg("-I")
            .args(&rule)
            .output()
            .expect("run iptables");
        assert!(
            o.status.success(),
            "iptables -I {}: {}",
            rule.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
        self.rules.push(rule);
    }

    /// Is `addr:port` reachable over TCP from a process with this guard's gid? (A `sh` probe
    /// started with the gid, so it proves what the agent will see.)
    pub fn reachable(&self, addr: &str, port: u16) -> bool {
        use std::os::unix::process::CommandExt;
        Command::new("bash")
            .arg("-c")
            .arg(format!("exec 3<>/dev/tcp/{addr}/{port}"))
            .gid(self.gid)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }
}

impl Default for OnlyRoute {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for OnlyRoute {
    fn drop(&mut self) {
        for r in self.rules.drain(..) {
            let _ = Command::new(IPTABLES).arg("-w").arg("-D").args(&r).output();
        }
    }
}

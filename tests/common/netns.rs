//! A remote reached by a route (issue 40's rig): a network namespace joined to the host by a
//! veth pair, the host side `<prefix>.1/24`, the namespace side `<prefix>.130/24`, and TCP
//! relays listening in the namespace that carry each connection to a port on the host's
//! loopback (a real tinyproxy, a test tenancy, an OpenBao). The agent dials `<prefix>.130`
//! through the kernel's route over the veth, as it would a proxy or a tenancy on another host;
//! a bundle network whose subnet covers it (`<prefix>.128/25`, more specific than the /24) takes
//! that route over. An address on `lo` cannot show this: the local table always wins.
//!
//! Tests run as root (`ip netns`, `setns`). Everything is removed on drop.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

static SEQ: AtomicU32 = AtomicU32::new(0);

fn ip(args: &[&str]) {
    let o = Command::new("ip").args(args).output().expect("ip");
    assert!(
        o.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub struct NsRemote {
    ns: String,
    host_if: String,
    /// The namespace side's address: what the agent is configured to dial.
    pub addr: String,
    /// The host side's /24, the route the host reaches `addr` by.
    pub route: String,
    stop: Arc<AtomicBool>,
}

impl NsRemote {
    /// `prefix` is three octets, e.g. `"10.231.0"`; each test uses its own.
    pub fn new(prefix: &str) -> NsRemote {
        let n = SEQ.fetch_add(1, Ordering::SeqCst);
        let tag = format!("{}{n}", std::process::id() % 100000);
        let ns = format!("monky-dep-{tag}");
        let host_if = format!("mkh{tag}");
        let ns_if = format!("mkn{tag}");
        let _ = Command::new("ip").args(["netns", "del", &ns]).output();
        let _ = Command::new("ip").args(["link", "del", &host_if]).output();
        let r = NsRemote {
            ns: ns.clone(),
            host_if: host_if.clone(),
            addr: format!("{prefix}.130"),
            route: format!("{prefix}.0/24"),
            stop: Arc::new(AtomicBool::new(false)),
        };
        ip(&["netns", "add", &ns]);
        ip(&[
            "link", "add", &host_if, "type", "veth", "peer", "name", &ns_if,
        ]);
        ip(&["link", "set", &ns_if, "netns", &ns]);
        ip(&["addr", "add", &format!("{prefix}.1/24"), "dev", &host_if]);
        ip(&["link", "set", &host_if, "up"]);
        let inside = |a: &[&str]| {
            let mut v = vec!["netns", "exec", &ns, "ip"];
            v.extend_from_slice(a);
            ip(&v);
        };
        inside(&["addr", "add", &format!("{}/24", r.addr), "dev", &ns_if]);
        inside(&["link", "set", &ns_if, "up"]);
        inside(&["link", "set", "lo", "up"]);
        r
    }

    /// Relays `addr:port` (in the namespace) to `127.0.0.1:to` on the host, until drop.
    pub fn relay(&self, port: u16, to: u16) {
        let l = self.listen_inside(port);
        l.set_nonblocking(true).unwrap();
        let stop = self.stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match l.accept() {
                    Ok((c, _)) => {
                        c.set_nonblocking(false).unwrap();
                        if let Ok(up) = TcpStream::connect(("127.0.0.1", to)) {
                            pipe(c, up);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
    }

    /// A listener bound in the namespace: the thread enters it, binds, and comes back (a
    /// socket stays in the namespace it was made in).
    fn listen_inside(&self, port: u16) -> TcpListener {
        let ns = std::fs::File::open(format!("/run/netns/{}", self.ns)).unwrap();
        let addr = self.addr.clone();
        std::thread::spawn(move || {
            let home = std::fs::File::open("/proc/thread-self/ns/net").unwrap();
            // SAFETY: setns on this thread only, with fds open for the call's length
            assert_eq!(
                unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) },
                0,
                "setns into the namespace: {}",
                std::io::Error::last_os_error()
            );
            let l = TcpListener::bind((addr.as_str(), port));
            // SAFETY: as above
            assert_eq!(
                unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) },
                0
            );
            l.expect("bind in the namespace")
        })
        .join()
        .unwrap()
    }

    /// The device the host routes `addr` through now.
    pub fn route_dev(&self) -> String {
        route_dev(&self.addr)
    }

    pub fn host_if(&self) -> &str {
        &self.host_if
    }
}

/// The device the host routes `addr` through (`ip route get`; no packet is sent).
pub fn route_dev(addr: &str) -> String {
    let o = Command::new("ip")
        .args(["route", "get", addr])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut w = t.split_whitespace();
    while let Some(x) = w.next() {
        if x == "dev" {
            return w.next().unwrap_or_default().to_string();
        }
    }
    panic!("no device in `ip route get {addr}`: {t}")
}

fn pipe(a: TcpStream, b: TcpStream) {
    let copy = |mut from: TcpStream, mut to: TcpStream| {
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            loop {
                match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if to.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        });
    };
    copy(a.try_clone().unwrap(), b.try_clone().unwrap());
    copy(b, a);
}

impl Drop for NsRemote {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).output();
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_if])
            .output();
    }
}

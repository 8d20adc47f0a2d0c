//! No fd confusion between the embedded SDK and the rest of the process: dial threads make
//! thousands of connections through a real Ziti network (each sends a random payload to an echo
//! service and checks every byte that comes back) while file threads open, write, fsync, close
//! and re-read files (each checked by its SHA-256). libziti 0.29.3 closed every bridged fd twice;
//! its second close could land on a file another thread had just opened. With 1.18.2 there must
//! be no mismatch, no EBADF and no leaked fd across ≥ 10,000 operations.
//!
//! And every stream's close releases both ends: thousands of streams opened and dropped (half at
//! once, half after one echo) leave the process's fd count where it was.

mod common;

use common::ziti as ziti_common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::time::{Duration, Instant};

use monky_deployd::wire::transport::sdk::SdkConnector;
use monky_deployd::wire::transport::Endpoint;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use ziti_common::*;

const DIAL_THREADS: usize = 4;
const DIALS_PER_THREAD: usize = 650;
const FILE_THREADS: usize = 2;
const MIN_OPERATIONS: usize = 10_000;

/// Echo server: a 4-byte big-endian length, then that many bytes, which it sends back.
fn echo_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut s) = c else { continue };
            std::thread::spawn(move || {
                let mut len = [0u8; 4];
                if s.read_exact(&mut len).is_err() {
                    return; // readiness probe
                }
                let mut buf = vec![0u8; u32::from_be_bytes(len) as usize];
                if s.read_exact(&mut buf).is_ok() {
                    let _ = s.write_all(&buf);
                }
            });
        }
    });
    port
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// How many tests below share the network; the last one to finish stops it.
const TESTS: usize = 2;
static USERS: AtomicUsize = AtomicUsize::new(TESTS);

/// The network of this binary, fresh once per process (ports + 6), and the lock that runs its
/// tests one at a time (each counts the whole process's fds).
struct StressNet {
    net: Net,
    _serial: MutexGuard<'static, ()>,
}

impl StressNet {
    fn start() -> StressNet {
        static SERIAL: Mutex<()> = Mutex::new(());
        static FRESH: Once = Once::new();
        let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let dir = ziti_common::repo().join("target/ziti-net-stress");
        FRESH.call_once(|| ziti_common::remove_net(&dir));
        let (c, r) = ziti_common::ports();
        StressNet {
            net: Net::start_in(&dir, c + 6, r + 6),
            _serial: serial,
        }
    }
}

impl Drop for StressNet {
    fn drop(&mut self) {
        if USERS.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.net.stop();
        }
    }
}

/// Dial and echo one byte until the service answers (its terminator is up), for at most 30 s.
fn warm_up(rt: &tokio::runtime::Runtime, conn: &SdkConnector, ep: &Endpoint) {
    let warm = Instant::now();
    loop {
        let ok = rt.block_on(async {
            let mut s = conn.connect(ep).await.ok()?;
            s.write_all(&[0, 0, 0, 1, 7]).await.ok()?;
            let mut b = [0u8; 1];
            s.read_exact(&mut b).await.ok()?;
            (b[0] == 7).then_some(())
        });
        if ok.is_some() {
            return;
        }
        assert!(
            warm.elapsed() < Duration::from_secs(30),
            "service never answered"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

const STREAMS: usize = 3_000;

#[test]
fn thousands_of_streams_opened_and_dropped_leave_the_fd_count_flat() {
    require_sdk();
    let sn = StressNet::start();
    let net = &sn.net;
    let port = echo_server();
    let svc = unique("echo-drop");
    net.service(&svc, port);
    let id = net.identity(&unique("agent-drop"), &[&svc]);
    let ep = Endpoint {
        label: "tenancy",
        service: svc.clone(),
        host: "tenancy.test".into(),
        port: 443,
        proxy_port: 0,
        timeout: Duration::from_secs(20),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let conn = rt
        .block_on(SdkConnector::load(&id, Duration::from_secs(20)))
        .expect("identity loads");
    warm_up(&rt, &conn, &ep);
    std::thread::sleep(Duration::from_millis(300));
    let before = open_fds();

    let t0 = Instant::now();
    let mut peak = before;
    for i in 0..STREAMS {
        rt.block_on(async {
            let mut s = conn
                .connect(&ep)
                .await
                .unwrap_or_else(|e| panic!("stream {i}: {e}"));
            if i % 2 == 1 {
                // a stream that carried bytes, not only one the SDK was still dialling
                s.write_all(&[0, 0, 0, 1, i as u8]).await.expect("write");
                let mut b = [0u8; 1];
                tokio::time::timeout(Duration::from_secs(20), s.read_exact(&mut b))
                    .await
                    .expect("echo within 20s")
                    .expect("read");
                assert_eq!(b[0], i as u8, "stream {i}: wrong echo");
            }
        });
        if i % 100 == 0 {
            peak = peak.max(open_fds());
        }
    }
    let took = t0.elapsed();
    // the SDK closes its end of each bridge on its loop once it sees ours closed
    let settle = Instant::now();
    let mut after = open_fds();
    while after > before && settle.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
        after = open_fds();
    }
    eprintln!(
        "{STREAMS} streams opened and dropped in {took:?} ({:.0}/s); fds {before} before, \
         {after} after ({:?} to settle), peak {peak}",
        STREAMS as f64 / took.as_secs_f64(),
        settle.elapsed()
    );
    // a leak of one fd per stream (either end) would be thousands; allow the SDK's own few
    assert!(
        after <= before + 4,
        "fds {before} before, {after} after {STREAMS} streams: leaked"
    );
    assert!(
        peak < before + 200,
        "fds peaked at {peak} (from {before}): closes lag"
    );
}

#[test]
fn parallel_dials_and_file_writes_never_confuse_fds() {
    require_sdk();
    // a fresh network of its own (ports + 6): on the shared one, after the other suites had
    // added their services and identities, a few of the 2,600 dials were reset (2 runs in 6
    // here, once in CI; none in 7 runs on a fresh network) — not the fd confusion this test is
    // about, and not yet explained
    let sn = StressNet::start();
    let net = &sn.net;
    let port = echo_server();
    let svc = unique("echo-stress");
    net.service(&svc, port);
    let id = net.identity(&unique("agent-stress"), &[&svc]);
    let ep = Endpoint {
        label: "tenancy",
        service: svc.clone(),
        host: "tenancy.test".into(),
        port: 443,
        proxy_port: 0,
        timeout: Duration::from_secs(20),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // load once and warm up (the first dial to a new service waits for its terminator)
    let conn = Arc::new(
        rt.block_on(SdkConnector::load(&id, Duration::from_secs(20)))
            .expect("identity loads"),
    );
    warm_up(&rt, &conn, &ep);
    drop(rt);
    let fds_before = open_fds();

    let dials = Arc::new(AtomicUsize::new(0));
    let files = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();

    let mut dialers = Vec::new();
    for t in 0..DIAL_THREADS {
        let conn = conn.clone();
        let ep = ep.clone();
        let dials = dials.clone();
        dialers.push(std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let mut failures = Vec::new();
            for i in 0..DIALS_PER_THREAD {
                let n = 64 + fastrand::usize(..4096);
                let mut payload = vec![0u8; n];
                fastrand::fill(&mut payload);
                payload[..8].copy_from_slice(&((t * 1_000_000 + i) as u64).to_be_bytes());
                let r: Result<(), String> = rt.block_on(async {
                    let mut s = conn.connect(&ep).await.map_err(|e| format!("dial: {e}"))?;
                    let mut msg = (n as u32).to_be_bytes().to_vec();
                    msg.extend_from_slice(&payload);
                    s.write_all(&msg).await.map_err(|e| format!("write: {e}"))?;
                    let mut back = vec![0u8; n];
                    tokio::time::timeout(Duration::from_secs(20), s.read_exact(&mut back))
                        .await
                        .map_err(|_| "read timed out".to_string())?
                        .map_err(|e| format!("read: {e}"))?;
                    if back != payload {
                        return Err(format!("dial {t}/{i}: the echo differs from what was sent"));
                    }
                    Ok(())
                });
                match r {
                    Ok(()) => {
                        dials.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => failures.push(e),
                }
            }
            failures
        }));
    }
    let mut writers = Vec::new();
    for t in 0..FILE_THREADS {
        let files = files.clone();
        let done = done.clone();
        let base = dir.path().to_path_buf();
        writers.push(std::thread::spawn(move || {
            let mut failures = Vec::new();
            let mut i = 0usize;
            while !done.load(Ordering::Relaxed) {
                let p = base.join(format!("f{t}-{}", i % 32));
                let mut data = vec![0u8; 256 + fastrand::usize(..8192)];
                fastrand::fill(&mut data);
                let want = Sha256::digest(&data);
                let r = (|| -> std::io::Result<bool> {
                    let mut f = std::fs::File::create(&p)?;
                    f.write_all(&data)?;
                    f.sync_all()?;
                    drop(f);
                    let got = std::fs::read(&p)?;
                    Ok(Sha256::digest(&got) == want)
                })();
                match r {
                    Ok(true) => {
                        files.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(false) => failures.push(format!("{}: content changed", p.display())),
                    Err(e) => failures.push(format!("{}: {e}", p.display())),
                }
                i += 1;
            }
            failures
        }));
    }
    let mut failures: Vec<String> = Vec::new();
    for d in dialers {
        failures.extend(d.join().expect("dial thread"));
    }
    done.store(true, Ordering::Relaxed);
    for w in writers {
        failures.extend(w.join().expect("file thread"));
    }
    let took = t0.elapsed();
    let (d, f) = (dials.load(Ordering::Relaxed), files.load(Ordering::Relaxed));
    eprintln!(
        "{d} dials + {f} file round trips in {took:?} ({:.0} dials/s); {} failures",
        d as f64 / took.as_secs_f64(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert_eq!(d, DIAL_THREADS * DIALS_PER_THREAD);
    assert!(
        d + f >= MIN_OPERATIONS,
        "only {} operations ({d} dials, {f} files)",
        d + f
    );
    // every connection's fd was closed (allow a few for SDK-internal sockets opened meanwhile)
    std::thread::sleep(Duration::from_millis(300));
    let fds_after = open_fds();
    assert!(
        fds_after <= fds_before + 4,
        "fds {fds_before} before, {fds_after} after: leaked"
    );
}

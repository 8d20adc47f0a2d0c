//! Parts the fault tests share (tests/real/faults.rs, tests/real/soak.rs): the real dockerd behind a
//! socket the test can cut.
#![allow(dead_code)]

use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

const DOCKER_SOCK: &str = "/var/run/docker.sock";
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

// ---- the engine behind a socket the test can cut ------------------------------------------

/// A byte-for-byte Unix socket proxy to the real dockerd. `cut` is what the agent sees when
/// dockerd stops: the socket file is gone and every open connection is shut down.
pub struct DockerProxy {
    path: PathBuf,
    cut: Arc<AtomicBool>,
    conns: Arc<Mutex<std::collections::HashMap<u64, (UnixStream, UnixStream)>>>,
}

impl DockerProxy {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn start(path: &Path) -> DockerProxy {
        let p = DockerProxy {
            path: path.to_path_buf(),
            cut: Arc::new(AtomicBool::new(false)),
            conns: Arc::new(Mutex::new(std::collections::HashMap::new())),
        };
        p.listen();
        p
    }

    fn listen(&self) {
        let _ = std::fs::remove_file(&self.path);
        let l = UnixListener::bind(&self.path).expect("bind the docker proxy");
        let (cut, conns) = (self.cut.clone(), self.conns.clone());
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(c) = c else { continue };
                if cut.load(Ordering::SeqCst) {
                    // a listener from before the last cut: never serves again
                    return;
                }
                let Ok(u) = UnixStream::connect(DOCKER_SOCK) else {
                    continue;
                };
                let id = NEXT.fetch_add(1, Ordering::SeqCst);
                conns
                    .lock()
                    .unwrap()
                    .insert(id, (c.try_clone().unwrap(), u.try_clone().unwrap()));
                let conns2 = conns.clone();
                let (mut c2, mut u2) = (c.try_clone().unwrap(), u.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c2, &mut u2);
                    let _ = u2.shutdown(std::net::Shutdown::Write);
                });
                let (mut c3, mut u3) = (c, u);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut u3, &mut c3);
                    let _ = c3.shutdown(std::net::Shutdown::Write);
                    // both directions are done (the engine answers last): no fd kept
                    conns2.lock().unwrap().remove(&id);
                });
            }
        });
    }

    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        let _ = std::fs::remove_file(&self.path);
        for (_, (c, u)) in self.conns.lock().unwrap().drain() {
            let _ = c.shutdown(std::net::Shutdown::Both);
            let _ = u.shutdown(std::net::Shutdown::Both);
        }
    }

    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
        self.listen();
    }
}

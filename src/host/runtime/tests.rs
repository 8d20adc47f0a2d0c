//! The runtime's unit tests: the Engine API client's pooling over a fake Unix socket, health
//! from the engine's status, convergence, compose's unset-variable warnings.

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
        ..Default::default()
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
    let v1 =
        "The UNSET_Y variable is not set. Defaulting to a blank string.\nWARNING: something else\n";
    assert_eq!(unset_variables(v2), vec!["UNSET_X".to_string()]);
    assert_eq!(
        unset_variables(&format!("{v1}{v1}")),
        vec!["UNSET_Y".to_string()]
    );
    assert!(unset_variables("level=warning msg=\"version is obsolete\"").is_empty());
}

#[test]
fn jobs_are_done_at_exit_zero_and_pending_while_they_run() {
    let job = |state: &str, code: Option<i64>| Container {
        service: "migrate".into(),
        state: state.into(),
        job: true,
        exit_code: code,
        ..Default::default()
    };
    let web = Container {
        service: "web".into(),
        state: "running".into(),
        ..Default::default()
    };
    let exp = vec!["migrate".to_string(), "web".to_string()];
    assert!(converged(&exp, &[job("exited", Some(0)), web.clone()]));
    assert!(!converged(&exp, &[job("running", None), web.clone()]));
    assert!(!converged(&exp, &[job("created", None), web.clone()]));
    // a heartbeat does not mind a job still at work
    assert!(well(&exp, &[job("running", None), web.clone()]));
    assert!(!well(&exp, &[job("exited", Some(3)), web.clone()]));
    assert_eq!(
        job_failed(&job("exited", Some(3))).as_deref(),
        Some("JOB_FAILED: migrate exited 3")
    );
    assert_eq!(job_failed(&job("exited", Some(0))), None);
    assert_eq!(job_failed(&web), None);
    assert_eq!(exit_of("Exited (137) 5 seconds ago"), Some(137));
    assert_eq!(exit_of("Up 3 seconds"), None);
}

/// The Engine API's log stream: framed (no TTY) frames joined in order, a frame cut short
/// kept as far as it goes; raw text (a TTY) as it is.
#[test]
fn log_frames_are_joined_and_raw_text_kept() {
    let frame = |stream: u8, text: &str| {
        let mut f = vec![stream, 0, 0, 0];
        f.extend_from_slice(&(text.len() as u32).to_be_bytes());
        f.extend_from_slice(text.as_bytes());
        f
    };
    let mut b = frame(1, "out line\n");
    b.extend(frame(2, "err line\n"));
    b.extend(&frame(1, "cut short\n")[..12]);
    assert_eq!(demux_logs(&b), "out line\nerr line\ncut ");
    assert_eq!(demux_logs(b"plain tty text\n"), "plain tty text\n");
    assert_eq!(demux_logs(b""), "");
}

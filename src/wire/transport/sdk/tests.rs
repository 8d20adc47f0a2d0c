use super::*;

#[test]
fn corrupt_identity_is_a_setup_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("id.json");
    fs::write(
        &p,
        b"{\"ztAPI\": \"https://x:1280\", \"id\": {\"cert\": \"\"",
    )
    .unwrap();
    match check_identity(&p) {
        Err(TransportError::Setup { msg: m, .. }) => assert!(
            m.contains(&p.display().to_string()) && m.contains("JSON"),
            "{m}"
        ),
        Err(other) => panic!("wrong class: {other}"),
        Ok(_) => panic!("corrupt identity accepted"),
    }
    fs::write(
        &p,
        b"{\"ztAPI\": \"https://x:1280\", \"id\": {\"cert\": \"c\"}}",
    )
    .unwrap();
    match check_identity(&p) {
        Err(TransportError::Setup { msg: m, .. }) => {
            assert!(m.contains("id.key") && m.contains("id.ca"), "{m}")
        }
        _ => panic!("identity without key accepted"),
    }
}

#[test]
fn sockets_are_non_blocking_and_close_on_exec_from_creation() {
    if !ziti_sys::LINKED {
        assert!(dial::new_socket().is_err(), "no SDK, no socket");
        return;
    }
    start_sdk(&Egress::direct()).unwrap();
    let fd = dial::new_socket().expect("Ziti_socket");
    // SAFETY: fcntl on an fd we own, no third argument.
    let fd_flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
    // SAFETY: as above.
    let fl_flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    assert!(
        fd_flags >= 0 && fd_flags & libc::FD_CLOEXEC != 0,
        "{fd_flags:#x}"
    );
    assert!(
        fl_flags >= 0 && fl_flags & libc::O_NONBLOCK != 0,
        "{fl_flags:#x}"
    );
}

/// Context start alone installs the exit hook: a child process that registered an `atexit`
/// handler, then started the SDK, exits with its status without running that handler (nor,
/// so, OpenSSL's clean-up registered before the hook); without the start, it runs.
#[test]
fn context_start_installs_the_exit_hook_before_any_load() {
    const MODE: &str = "MONKY_SDK_EXIT_HOOK_MODE";
    const MARKER: &str = "MONKY_SDK_EXIT_HOOK_MARKER";
    extern "C" fn mark() {
        if let Some(p) = std::env::var_os(MARKER) {
            let _ = fs::write(p, b"ran");
        }
    }
    if let Some(mode) = std::env::var_os(MODE) {
        // SAFETY: registers a plain `extern "C"` function.
        assert_eq!(unsafe { libc::atexit(mark) }, 0);
        if mode == "start" {
            start_sdk(&Egress::direct()).unwrap();
        }
        std::process::exit(7);
    }
    let dir = tempfile::tempdir().unwrap();
    for (mode, runs) in [("control", true), ("start", false)] {
        let marker = dir.path().join(mode);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                // this test's own name as the harness knows it: the module
                // path without its crate segment
                &format!(
                    "{}::context_start_installs_the_exit_hook_before_any_load",
                    module_path!().split_once("::").map_or("", |(_, rest)| rest)
                ),
            ])
            .env(MODE, mode)
            .env(MARKER, &marker)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(7), "{mode}: {out:?}");
        assert_eq!(marker.exists(), runs, "{mode}: atexit handler ran?");
    }
}

#[test]
fn sdk_version_matches_link_state() {
    assert_eq!(sdk_version().is_some(), ziti_sys::LINKED);
    if ziti_sys::SOURCE == "vendored" {
        assert_eq!(sdk_version().as_deref(), Some("1.18.2"));
    }
    if !ziti_sys::LINKED {
        match SdkConnector::new(Path::new("/nonexistent"), Duration::from_secs(1)) {
            Err(TransportError::Setup { msg: m, .. }) => assert!(m.contains("proxy"), "{m}"),
            _ => panic!("sdk transport must refuse to start without an SDK"),
        }
    }
}

#[test]
fn load_errors_are_classed_for_the_exit_code() {
    let info = IdentityInfo {
        controller: "https://c:1280".into(),
    };
    let p = Path::new("/etc/monky/id.json");
    let t = Duration::from_secs(7);
    for code in [
        ZITI_TIMEOUT,
        ZITI_CONTROLLER_UNAVAILABLE,
        ZITI_INVALID_STATE,
    ] {
        assert!(matches!(
            load_error(p, &info, t, code),
            TransportError::Unreachable { .. }
        ));
    }
    match load_error(p, &info, t, ZITI_TIMEOUT) {
        TransportError::Unreachable { msg: m, .. } => assert!(m.contains("within 7s"), "{m}"),
        _ => unreachable!(),
    }
    for code in [
        ZITI_NOT_AUTHORIZED,
        ZITI_INVALID_CONFIG,
        ZITI_KEY_LOAD_FAILED,
    ] {
        match load_error(p, &info, t, code) {
            TransportError::Setup { msg: m, .. } => {
                assert!(m.contains("/etc/monky/id.json"), "{m}")
            }
            other => panic!("{code}: {other}"),
        }
    }
}

use super::*;

/// An engine whose containers each log `bytes` of long lines, streamed to the reader in
/// 64 KiB chunks as the real one is; it records the largest tail it was asked to keep.
struct Busy {
    n: usize,
    bytes: usize,
    secret: String,
    max_cap: std::cell::Cell<usize>,
}

impl EngineApi for Busy {
    async fn containers(&self, _p: &str) -> Result<Vec<Container>, RuntimeError> {
        Ok((0..self.n)
            .map(|i| Container {
                service: format!("svc{i}"),
                id: format!("{i:064}"),
                state: "running".into(),
                ..Default::default()
            })
            .collect())
    }
    async fn containers_raw(&self, _p: &str) -> Result<Vec<Value>, RuntimeError> {
        Ok(Vec::new())
    }
    async fn diagnose(&self, _c: &Container) -> String {
        String::new()
    }
    async fn restarts(&self, _c: &Container) -> Option<u64> {
        None
    }
    async fn last_exit(&self, _c: &Container, _s: u64) -> Option<i64> {
        None
    }
    async fn docker_root(&self) -> Result<PathBuf, RuntimeError> {
        Ok("/nonexistent".into())
    }
    async fn prune_images(&self) -> Result<u64, RuntimeError> {
        Ok(0)
    }
    async fn log_tail(
        &self,
        c: &Container,
        _lines: u32,
        cap: usize,
    ) -> Result<runtime::LogRead, RuntimeError> {
        self.max_cap.set(self.max_cap.get().max(cap));
        let mut t = runtime::LogTail::new(cap);
        // one long line per 256 KiB frame, the secret at each line's end (so at the cut)
        let line = format!("{}{} {}\n", "y".repeat(256 << 10), self.secret, c.service);
        let mut frame = vec![1u8, 0, 0, 0];
        frame.extend_from_slice(&(line.len() as u32).to_be_bytes());
        frame.extend_from_slice(line.as_bytes());
        let mut sent = 0;
        while sent < self.bytes {
            for chunk in frame.chunks(64 << 10) {
                t.feed(chunk);
            }
            sent += frame.len();
        }
        let (text, dropped) = t.finish();
        Ok(runtime::LogRead {
            text,
            dropped,
            timed_out: false,
        })
    }
}

fn gather_busy(n: usize, bytes: usize) -> (Value, usize) {
    let secret = "Kp4-busy-secret-value9";
    redact::isolate_this_thread();
    redact::register(secret);
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        state_dir: dir.path().join("state"),
        ..Config::default()
    };
    let e = Busy {
        n,
        bytes,
        secret: secret.into(),
        max_cap: Default::default(),
    };
    let links = Links {
        tenancy_rtt_ms: None,
        tenancy_state: String::new(),
        bao_rtt_ms: None,
        bao_state: String::new(),
        token_ttl_s: None,
        egress: Default::default(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let v = rt.block_on(gather(&cfg, &State::default(), &e, &links, "test"));
    let t = v.to_string();
    assert!(
        !t.contains(&secret[..10]),
        "the secret, whole or cut, stays masked"
    );
    redact::forget_all();
    (v, e.max_cap.get())
}

#[test]
fn a_busy_box_s_logs_are_capped_per_container_and_in_total() {
    redact::isolate_this_thread();
    // 30 containers × 8 MiB of 256 KiB lines: 240 MiB offered, the bundle under 1 MiB
    let (v, cap) = gather_busy(30, 8 << 20);
    assert_eq!(cap, LOG_BUDGET / 30);
    assert!(size(&v) <= BUNDLE_MAX - ENVELOPE, "{}", size(&v));
    let services = v["services"].as_array().unwrap();
    assert_eq!(services.len(), 30, "every container is in, its tail cut");
    for s in services {
        let t = s["log_tail"].as_str().unwrap();
        assert!(
            t.starts_with("(… ") && t.contains("earlier bytes cut)"),
            "{}",
            &t[..40]
        );
        assert!(t.len() <= cap + 40, "{}", t.len());
        assert!(t.ends_with(&format!("{}\n", s["service"].as_str().unwrap())));
        assert!(s["log_cut_bytes"].as_u64().unwrap() > 7 << 20);
    }
    assert_eq!(v["truncated"], true);
    assert_eq!(v["limits"]["logs_cut"], 30);

    // a few containers: each gets the per-source cap, not more
    let (v, cap) = gather_busy(2, 1 << 20);
    assert_eq!(cap, LOG_SOURCE_MAX);
    assert!(size(&v) <= BUNDLE_MAX - ENVELOPE);

    // thousands: the share is too small to say anything, logs are left out and it says so
    let (v, cap) = gather_busy(4000, 1 << 20);
    assert_eq!(cap, 0);
    assert!(size(&v) <= BUNDLE_MAX - ENVELOPE);
    assert_eq!(v["truncated"], true);
}

#[test]
fn the_log_budget_fits_the_bundle_at_any_count() {
    redact::isolate_this_thread();
    for n in [0, 1, 9, 10, 11, 100, 2560, 2561, 100_000] {
        let cap = log_cap(n);
        assert!(cap <= LOG_SOURCE_MAX);
        assert!(cap * n.max(1) <= LOG_BUDGET, "{n}");
    }
    const { assert!(LOG_BUDGET + ENVELOPE < BUNDLE_MAX) };
}

#[test]
fn every_string_is_redacted_and_names_stay() {
    redact::isolate_this_thread();
    redact::register("hunter2-diag-secret");
    let mut v = json!({
        "services": [{"service": "web", "log_tail": "pw=hunter2-diag-secret ok",
                      "health_probes": [{"output": "token s.abcdefghijklmnopqrstuvwx"}]}],
        "n": 3,
    });
    redact_strings(&mut v);
    let t = v.to_string();
    assert!(!t.contains("hunter2-diag-secret"), "{t}");
    assert!(!t.contains("s.abcdefghijklmnopqrstuvwx"), "{t}");
    assert_eq!(v["services"][0]["service"], "web");
    assert_eq!(v["n"], 3);
    redact::forget_all();
}

#[test]
fn probe_output_is_redacted_before_its_cut_and_at_docker_s_cut() {
    redact::isolate_this_thread();
    let secret = "Zq9-probe-secret-v4lue";
    redact::isolate_this_thread();
    redact::register(secret);
    // straddling the cut: cut first (0.4.0), its head survived unmasked
    let straddle = format!("{}{secret} tail", "x".repeat(PROBE_OUTPUT_MAX - 8));
    // Docker's own cap ended the output inside the secret
    let docker_cut = format!("{}{}", "y".repeat(100), &secret[..9]);
    let insp = json!({"State": {"Health": {"Log": [
        {"ExitCode": 1, "Output": straddle}, {"ExitCode": 1, "Output": docker_cut}]}}});
    let got = Value::Array(probe_entries(&insp)).to_string();
    assert!(
        !got.contains(&secret[..8]) && !got.contains(&secret[..4]),
        "{got}"
    );
    assert!(got.contains("xxx***") && got.contains("yyy***"), "{got}");
}

#[test]
fn the_text_form_leads_with_the_figures_then_each_service() {
    redact::isolate_this_thread();
    let v = json!({
        "agent": {"version": "0.3.0", "compose": "2.22.0", "transport": "system", "host": "h"},
        "status": {"env_id": "env-a", "applied_sha": "abc", "desired_sha": "abc", "last_error": null},
        "links": {"tenancy": {"state": "answered the check-in", "rtt_ms": 12},
                  "openbao": {"state": "answered lookup-self", "rtt_ms": 3}},
        "clock": {"skew_s": 240, "says": "the box's clock is 4 min ahead of tenancy"},
        "disk": {"free_bytes": 1000, "docker_root": "/var/lib/docker", "keep_releases": 5,
                 "reclaimed_bytes_total": 0, "releases": [{"sha": "abc", "bytes": 10}]},
        "services": [{"service": "web", "container": "0123456789ab", "state": "running",
                      "health": "unhealthy", "restarts": 2, "exit_code": 0, "oom_killed": false,
                      "health_probes": [{"exit_code": 1, "at": "t", "output": "no\n"}],
                      "log_tail": "one\ntwo\n"}],
        "truncated": true,
    });
    let t = text(&v);
    assert!(
        t.starts_with("agent          0.3.0 (compose 2.22.0, transport system, host h)\n"),
        "{t}"
    );
    assert!(
        t.contains("tenancy        answered the check-in (12 ms)\n"),
        "{t}"
    );
    assert!(
        t.contains("clock          the box's clock is 4 min ahead of tenancy\n"),
        "{t}"
    );
    assert!(t.contains("  release abc 10 bytes\n"), "{t}");
    assert!(
        t.contains("== web (0123456789ab) running unhealthy restarts=2 exit=0 oom=false\n"),
        "{t}"
    );
    assert!(t.contains("  probe exit 1 at t: no\n"), "{t}");
    assert!(t.contains("  --- log tail\n  one\n  two\n"), "{t}");
    assert!(
        t.ends_with("(cut to fit 1 MiB: log tails shortened)\n"),
        "{t}"
    );
    let unknown = text(&json!({"clock": {"says": null}}));
    assert!(unknown.contains("skew unknown"), "{unknown}");
}

#[test]
fn a_bundle_over_the_limit_loses_log_text_first_and_says_so() {
    redact::isolate_this_thread();
    let big = "x".repeat(300_000);
    let mut v = json!({
        "status": {"env_id": "e"},
        "services": [
            {"service": "a", "log_tail": format!("{big}END-A"), "health_probes": []},
            {"service": "b", "log_tail": format!("{big}END-B"), "health_probes": []},
        ],
        "truncated": false,
    });
    fit(&mut v, 200_000);
    assert!(size(&v) <= 200_000, "{}", size(&v));
    assert_eq!(v["truncated"], true);
    // the newest lines are the ones kept
    assert!(v["services"][0]["log_tail"]
        .as_str()
        .unwrap()
        .ends_with("END-A"));
    assert_eq!(v["status"]["env_id"], "e");

    let mut small = json!({"services": [{"log_tail": "short"}], "truncated": false});
    fit(&mut small, 10_000);
    assert_eq!(small["truncated"], false);
    assert_eq!(small["services"][0]["log_tail"], "short");
}

/// An engine with no containers and the given proxy settings.
struct Proxied(runtime::EngineProxy);

impl EngineApi for Proxied {
    async fn containers(&self, _p: &str) -> Result<Vec<Container>, RuntimeError> {
        Ok(Vec::new())
    }
    async fn containers_raw(&self, _p: &str) -> Result<Vec<Value>, RuntimeError> {
        Ok(Vec::new())
    }
    async fn diagnose(&self, _c: &Container) -> String {
        String::new()
    }
    async fn restarts(&self, _c: &Container) -> Option<u64> {
        None
    }
    async fn last_exit(&self, _c: &Container, _s: u64) -> Option<i64> {
        None
    }
    async fn docker_root(&self) -> Result<PathBuf, RuntimeError> {
        Ok("/nonexistent".into())
    }
    async fn prune_images(&self) -> Result<u64, RuntimeError> {
        Ok(0)
    }
    async fn proxy_settings(&self) -> Result<runtime::EngineProxy, RuntimeError> {
        Ok(self.0.clone())
    }
}

#[test]
fn the_bundle_says_each_route_and_warns_when_dockerd_has_no_proxy() {
    redact::isolate_this_thread();
    use monky_wire::egress::{Credentials, Egress, NoProxy, ProxyRoute};
    let pw = "Egress-pw-in-no-bundle7";
    let egress = Egress::new(
        Some(ProxyRoute {
            host: "proxy.corp".into(),
            port: 3128,
            credentials: Some(Credentials::parse(&format!("bob:{pw}")).unwrap()),
        }),
        NoProxy::parse(["bao.internal"]).unwrap(),
    );
    egress.register_secrets();
    let mut cfg = Config {
        transport: Transport::System,
        ..Config::default()
    };
    cfg.tenancy.host = "tenancy.example".into();
    cfg.bao.host = "bao.internal".into();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let none = Proxied(Default::default());
    let e = rt.block_on(egress_section(&cfg, &egress, &none));
    assert_eq!(e["proxy"], "http://proxy.corp:3128");
    assert_eq!(e["basic_auth"], true);
    assert_eq!(e["targets"][0]["target"], "tenancy");
    assert_eq!(
        e["targets"][0]["route"],
        "via http://proxy.corp:3128 (Basic auth)"
    );
    assert_eq!(e["targets"][1]["route"], "direct (no_proxy)");
    assert!(e["warning"].as_str().unwrap().contains("dockerd has none"));

    let with = Proxied(runtime::EngineProxy {
        https_proxy: "http://xxxxx:xxxxx@proxy.corp:3128".into(),
        ..Default::default()
    });
    let e = rt.block_on(egress_section(&cfg, &egress, &with));
    assert!(e["warning"].is_null(), "{e}");
    assert_eq!(
        e["dockerd"]["https_proxy"],
        "http://xxxxx:xxxxx@proxy.corp:3128"
    );

    // the whole bundle, JSON and text: routes shown, the password nowhere
    let links = Links {
        tenancy_rtt_ms: None,
        tenancy_state: format!("unreachable: a message echoing {pw}"),
        bao_rtt_ms: None,
        bao_state: String::new(),
        token_ttl_s: None,
        egress: egress.clone(),
    };
    let v = rt.block_on(gather(&cfg, &State::default(), &none, &links, "test"));
    let t = text(&v);
    assert!(
        t.contains("egress proxy   http://proxy.corp:3128 (Basic auth)"),
        "{t}"
    );
    assert!(
        t.contains("  tenancy      via http://proxy.corp:3128"),
        "{t}"
    );
    assert!(t.contains("WARNING"), "{t}");
    assert!(!t.contains(pw) && !v.to_string().contains(pw), "{t}");

    // the proxy transport dials loopback only: never proxied, no warning
    cfg.transport = Transport::Proxy;
    let e = rt.block_on(egress_section(&cfg, &egress, &none));
    assert!(e["proxy"].is_null() && e["warning"].is_null(), "{e}");
    assert!(e["targets"][0]["route"]
        .as_str()
        .unwrap()
        .contains("never proxied"));
    redact::forget_all();
}

#[test]
fn the_bundle_says_how_the_sdk_reaches_its_controller_and_routers() {
    redact::isolate_this_thread();
    use monky_wire::egress::{Egress, NoProxy, ProxyRoute};
    let dir = tempfile::tempdir().unwrap();
    let id = dir.path().join("id.json");
    std::fs::write(
        &id,
        r#"{"ztAPI": "https://ctrl.example:1280", "id": {"cert": "pem:-----BEGIN C", "key": "pem:-----BEGIN K", "ca": "pem:-----BEGIN A"}}"#,
    )
    .unwrap();
    let cfg = Config {
        transport: Transport::Sdk,
        identity: id.display().to_string(),
        ..Config::default()
    };
    let proxy = |no_proxy: &[&str]| {
        Egress::new(
            Some(ProxyRoute {
                host: "proxy.corp".into(),
                port: 3128,
                credentials: None,
            }),
            NoProxy::parse(no_proxy.iter().copied()).unwrap(),
        )
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let none = Proxied(Default::default());
    let e = rt.block_on(egress_section(&cfg, &proxy(&[]), &none));
    let t = &e["targets"];
    assert_eq!(t[0]["route"], "over the Ziti mesh", "{e}");
    assert_eq!(t[2]["target"], "controller", "{e}");
    assert_eq!(
        (&t[2]["host"], &t[2]["port"]),
        (&json!("ctrl.example"), &json!(1280))
    );
    assert_eq!(t[2]["route"], "via http://proxy.corp:3128", "{e}");
    assert_eq!(t[3]["target"], "edge routers", "{e}");
    let e = rt.block_on(egress_section(&cfg, &proxy(&["ctrl.example"]), &none));
    assert_eq!(e["targets"][2]["route"], "direct (no_proxy)", "{e}");
    let e = rt.block_on(egress_section(&cfg, &Egress::direct(), &none));
    assert_eq!(e["targets"][2]["route"], "direct", "{e}");
    assert_eq!(
        e["targets"].as_array().unwrap().len(),
        3,
        "no routers line without a proxy"
    );
}

/// Issue 40 (6): what the bundle copies from the engine (`/info`'s HttpProxy, HttpsProxy,
/// NoProxy) is redacted whoever wrote it: a credential nobody registered, in any URL shape,
/// is masked in the JSON and the text; the hosts stay.
#[test]
fn dockerd_s_proxy_credentials_are_masked_in_the_bundle_unregistered() {
    redact::isolate_this_thread();
    let engine = Proxied(runtime::EngineProxy {
        http_proxy: "bob:dockerd-pw@ss1@proxy.corp:3128".into(),
        https_proxy: "http://bob:dockerd-p%3Ass2@[fd00::1]:3128,http://a:dockerd-pw3@p2".into(),
        no_proxy: "localhost,ops@example.com".into(),
    });
    let cfg = Config {
        transport: Transport::System,
        ..Config::default()
    };
    let links = Links {
        tenancy_rtt_ms: None,
        tenancy_state: String::new(),
        bao_rtt_ms: None,
        bao_state: String::new(),
        token_ttl_s: None,
        egress: Default::default(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let v = rt.block_on(gather(&cfg, &State::default(), &engine, &links, "test"));
    for out in [v.to_string(), text(&v)] {
        assert!(!out.contains("dockerd-p") && !out.contains("ss1"), "{out}");
        assert!(out.contains("***@proxy.corp:3128"), "{out}");
        assert!(
            out.contains("http://***@[fd00::1]:3128,http://***@p2"),
            "{out}"
        );
        assert!(out.contains("localhost,ops@example.com"), "{out}");
    }
}

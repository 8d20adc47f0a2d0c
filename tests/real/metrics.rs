//! The node_exporter textfile: written after every tick (heartbeat, apply, refusal, failure),
//! valid for `promtool check metrics`, counters kept across the one-process-per-tick runs, and
//! never seen half-written by a reader.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::common::*;

fn promtool() -> String {
    let cache =
        std::env::var("MONKY_CACHE").unwrap_or_else(|_| "/var/cache/monky-deployd-dev".into());
    let p = format!("{cache}/bin/promtool");
    assert!(
        std::path::Path::new(&p).is_file(),
        "promtool missing at {p}: run scripts/provision.sh (the README test command does)"
    );
    p
}

fn check(text: &str) {
    let mut c = Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "promtool: {}{}\n{text}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn textfile_after_every_kind_of_tick() {
    require_docker();
    let mut s = Stack::new("metrics", Flavour::V2);
    let prom = s.dir.path().join("textfile/monky-deployd.prom");
    std::fs::create_dir_all(prom.parent().unwrap()).unwrap();
    s.set_extra(&format!("metrics_textfile: {}\n", prom.display()));
    s.give_bootstrap();
    // heartbeat (nothing desired yet)
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let t = std::fs::read_to_string(&prom).unwrap();
    check(&t);
    assert_eq!(
        value(&t, "monky_deployd_ticks_total{exit_code=\"0\"}"),
        Some(1.0)
    );
    assert_eq!(value(&t, "monky_deployd_last_exit_code"), Some(0.0));
    assert!(t.contains("monky_deployd_info{version=\""), "{t}");
    assert_eq!(
        std::fs::metadata(&prom)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap(),
        0o644
    );
    // an apply
    let b = web_bundle(&s, 3, "m", "metrics-secret-value");
    s.tenancy.set_bundle(&s.env, b.files());
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    let t = std::fs::read_to_string(&prom).unwrap();
    check(&t);
    assert_eq!(
        value(&t, "monky_deployd_ticks_total{exit_code=\"0\"}"),
        Some(2.0)
    );
    assert_eq!(value(&t, "monky_deployd_applies_total"), Some(1.0));
    assert_eq!(value(&t, "monky_deployd_applied_serial"), Some(3.0));
    assert_eq!(value(&t, "monky_deployd_in_sync"), Some(1.0));
    assert_eq!(
        value(
            &t,
            "monky_deployd_containers{state=\"running\",health=\"healthy\"}"
        ),
        Some(1.0)
    );
    assert!(value(&t, "monky_deployd_token_ttl_seconds").unwrap() > 0.0);
    assert!(!t.contains("metrics-secret-value"));
    // a refusal
    let mut bad = web_bundle(&s, 4, "m2", "metrics-secret-value");
    bad.compose = bad
        .compose
        .replace("    init: true\n", "    init: true\n    privileged: true\n");
    s.tenancy.set_bundle(&s.env, bad.files());
    let r = s.tick();
    assert_eq!(r.code, 1, "{r:?}");
    let t = std::fs::read_to_string(&prom).unwrap();
    check(&t);
    assert_eq!(
        value(
            &t,
            "monky_deployd_apply_failures_total{code=\"PRIVILEGED_REFUSED\"}"
        ),
        Some(1.0)
    );
    assert_eq!(value(&t, "monky_deployd_last_exit_code"), Some(1.0));
    assert_eq!(value(&t, "monky_deployd_in_sync"), Some(0.0));
    // a temporary failure, with a reader hammering the file: never a partial file
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (stop, prom) = (stop.clone(), prom.clone());
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let t = std::fs::read_to_string(&prom).unwrap();
                assert!(
                    t.starts_with("# HELP monky_deployd_info"),
                    "partial file: {t}"
                );
                assert!(
                    t.contains("# TYPE monky_deployd_containers gauge"),
                    "partial file: {t}"
                );
                reads += 1;
            }
            reads
        })
    };
    s.tenancy.fail_next("/v1/agent/checkin", 503, "UNAVAILABLE");
    let r = s.tick();
    assert_eq!(r.code, 75, "{r:?}");
    for _ in 0..3 {
        let r = s.tick();
        assert_eq!(r.code, 1, "{r:?}");
    }
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().unwrap();
    assert!(reads > 10, "the reader barely ran ({reads})");
    let t = std::fs::read_to_string(&prom).unwrap();
    check(&t);
    assert_eq!(
        value(&t, "monky_deployd_ticks_total{exit_code=\"75\"}"),
        Some(1.0)
    );
    assert_eq!(
        value(&t, "monky_deployd_ticks_total{exit_code=\"1\"}"),
        Some(4.0)
    );
    assert_eq!(
        value(
            &t,
            "monky_deployd_apply_failures_total{code=\"PRIVILEGED_REFUSED\"}"
        ),
        Some(4.0)
    );
    // status --json carries the same facts
    let st = s.cmd(&["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&st.stdout).unwrap();
    assert_eq!(v["counters"]["ticks"]["1"], 4, "{st:?}");
    assert_eq!(v["counters"]["applies"], 1);
    assert_eq!(v["applied_serial"], 3);
    assert!(v["last_success"].as_u64().unwrap() > 0);
    let leftovers: Vec<_> = std::fs::read_dir(prom.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "temporary files left: {leftovers:?}");
    // the units run with UMask=0077, and node_exporter is another user: still 0644
    std::fs::remove_file(&prom).unwrap();
    let cfg = s.config_path();
    let o = Command::new("sh")
        .args(["-c", "umask 077; exec \"$0\" \"$@\"", BIN, "--config"])
        .arg(&cfg)
        .args(["run", "--once"])
        .output()
        .unwrap();
    // (whatever the tick's exit: every tick writes the file)
    assert!(prom.exists(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(mode(&prom), 0o644, "textfile under umask 077");
}

use std::os::unix::fs::PermissionsExt;

use super::*;

#[test]
fn codes_and_render() {
    let mut c = Counters::default();
    c.ticks.insert("0".into(), 3);
    c.failures.insert("UNHEALTHY".into(), 1);
    let cs = vec![Container {
        service: "web".into(),
        state: "running".into(),
        health: "healthy".into(),
        id: String::new(),
        ..Default::default()
    }];
    let t = render(&Snapshot {
        version: "0.3.0",
        transport: "system",
        ziti_sdk: "none",
        duration_s: 0.5,
        end_time: 1,
        exit_code: 0,
        counters: &c,
        applied_serial: Some(4),
        in_sync: true,
        agent_desired: Some("0.4.0"),
        token_ttl_s: Some(100),
        containers: &cs,
        statement_expires_at: Some(1_796_500_000),
        instance: "",
    });
    assert!(
        t.contains("monky_deployd_ticks_total{exit_code=\"0\"} 3\n"),
        "{t}"
    );
    assert!(t.contains("monky_deployd_apply_failures_total{code=\"UNHEALTHY\"} 1\n"));
    assert!(t.contains("monky_deployd_containers{state=\"running\",health=\"healthy\"} 1\n"));
    assert!(t.contains("monky_deployd_applied_serial 4\n"));
    assert!(
        t.contains("monky_deployd_agent_version{running=\"0.3.0\",desired=\"0.4.0\"} 1\n"),
        "{t}"
    );
    // unmeasured gauges are absent, the counter starts at 0
    assert!(!t.contains("\nmonky_deployd_clock_skew_seconds "), "{t}");
    assert!(!t.contains("\nmonky_deployd_docker_free_bytes "), "{t}");
    assert!(t.contains("monky_deployd_reclaimed_bytes_total 0\n"));
    assert!(t.contains("monky_deployd_statement_expires_timestamp_seconds 1796500000\n"));
}

/// A named instance labels every sample; the default instance's file is unchanged.
#[test]
fn every_series_of_a_named_instance_carries_its_name() {
    let mut c = Counters::default();
    c.ticks.insert("0".into(), 2);
    c.clock_skew_s = Some(3);
    let cs = vec![Container {
        service: "web".into(),
        state: "running".into(),
        health: "healthy".into(),
        ..Default::default()
    }];
    let snap = |instance| Snapshot {
        version: "0.5.0",
        transport: "system",
        ziti_sdk: "none",
        duration_s: 0.5,
        end_time: 1,
        exit_code: 0,
        counters: &c,
        applied_serial: None,
        in_sync: false,
        agent_desired: None,
        token_ttl_s: None,
        containers: &cs,
        statement_expires_at: None,
        instance,
    };
    let plain = render(&snap(""));
    let qa = render(&snap("qa"));
    let samples = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(String::from)
            .collect()
    };
    assert!(!plain.contains("instance="), "{plain}");
    assert_eq!(samples(&plain).len(), samples(&qa).len());
    for (p, q) in samples(&plain).iter().zip(samples(&qa)) {
        assert!(q.contains("instance=\"qa\""), "{q}");
        // the same series with the label added, the same value
        let (name, rest) = p.split_once(['{', ' ']).unwrap();
        assert!(
            q.starts_with(&format!("{name}{{instance=\"qa\"")),
            "{q} vs {p}"
        );
        assert_eq!(p.rsplit(' ').next(), q.rsplit(' ').next());
        let _ = rest;
    }
    assert!(qa.contains("monky_deployd_ticks_total{instance=\"qa\",exit_code=\"0\"} 2\n"));
    assert!(qa.contains("monky_deployd_last_exit_code{instance=\"qa\"} 0\n"));
    assert!(qa.contains("monky_deployd_clock_skew_seconds{instance=\"qa\"} 3\n"));
    // comments are untouched
    assert_eq!(
        plain
            .lines()
            .filter(|l| l.starts_with('#'))
            .collect::<Vec<_>>(),
        qa.lines()
            .filter(|l| l.starts_with('#'))
            .collect::<Vec<_>>()
    );
}

#[test]
fn skew_free_and_reclaimed_render_when_measured() {
    let c = Counters {
        clock_skew_s: Some(-240),
        docker_free_bytes: Some(5 << 30),
        reclaimed_bytes: 1234,
        ..Default::default()
    };
    let mut o = String::new();
    render_care(&mut o, &c);
    assert!(o.contains("monky_deployd_clock_skew_seconds -240\n"), "{o}");
    assert!(
        o.contains("monky_deployd_docker_free_bytes 5368709120\n"),
        "{o}"
    );
    assert!(
        o.contains("monky_deployd_reclaimed_bytes_total 1234\n"),
        "{o}"
    );
}

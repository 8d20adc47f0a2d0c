//! What each check-in answer leads to: converged, unwell, engine down, refused tokens,
//! tenancy's refusals.

use super::*;

#[test]
fn a_converged_box_reports_applied_and_asks_openbao_nothing() {
    let mut b = TestBox::new();
    let s = sha('a');
    b.applied(&s, &["web", "db"]);
    b.running(&[("web", "running", "healthy"), ("db", "running", "")]);
    b.tenancy()
        .answer(&format!(r#"{{"action": "none", "desired_sha": "{s}"}}"#));
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(
        b.calls(),
        [
            format!("checkin {STORED} applied={s}"),
            "report applied".into()
        ]
    );
    assert_eq!(b.reports()[0]["sha"], s.as_str());
    assert_eq!(b.reports()[0]["containers"].as_array().unwrap().len(), 2);
    assert!(b.bao().calls.borrow().is_empty());
    let st = b.saved();
    assert!(st.last_checkin.is_some());
    assert_eq!(st.last_result.as_deref(), Some("applied"));
    assert_eq!(st.counters.ticks.get("0"), Some(&1));
}

#[test]
fn an_unwell_service_is_reported_and_the_tick_fails() {
    let mut b = TestBox::new();
    let s = sha('a');
    b.applied(&s, &["web", "db"]);
    b.running(&[("web", "running", "healthy"), ("db", "exited", "")]);
    let f = b.tick().unwrap_err();
    assert_eq!(f.exit(), Exit::Fail);
    assert_eq!(f.message(), "UNHEALTHY: db");
    let r = &b.reports()[0];
    assert_eq!(
        (r["result"].as_str(), r["detail"].as_str()),
        (Some("failed"), Some("UNHEALTHY: db"))
    );
    let st = b.saved();
    assert_eq!(st.last_error.as_deref(), Some("UNHEALTHY: db"));
    assert_eq!(st.counters.failures.get("UNHEALTHY"), Some(&1));
}

#[test]
fn an_engine_that_is_down_is_named_in_the_report() {
    let mut b = TestBox::new();
    b.applied(&sha('a'), &["web"]);
    b.agent.engine.down.set(true);
    let f = b.tick().unwrap_err();
    assert_eq!(f.code(), Some(crate::error::Code::DOCKER_UNAVAILABLE));
    assert!(
        f.message().contains("connection refused"),
        "{}",
        f.message()
    );
    assert_eq!(b.reports()[0]["result"], "failed");
}

#[test]
fn a_box_with_nothing_applied_checks_in_and_reports_nothing() {
    let mut b = TestBox::new();
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    assert_eq!(b.calls(), [format!("checkin {STORED} applied=-")]);
}

#[test]
fn a_refused_token_with_a_waiting_grant_bootstraps_and_checks_in_again() {
    let mut b = TestBox::new();
    b.bao().live.borrow_mut().insert(STORED.into(), 600);
    std::fs::write(&b.agent.cfg.bootstrap_path, "kit-grant").unwrap();
    b.tenancy().fail_checkin(TenancyError::Unauthenticated {
        code: "AGENT_TOKEN_INVALID".into(),
        message: "superseded".into(),
    });
    assert_eq!(b.tick().unwrap(), Exit::Ok);
    let calls = b.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[1].starts_with("checkin hvs.token-1-"), "{calls:?}");
    assert_eq!(
        *b.bao().calls.borrow(),
        ["login kit-grant".to_string(), format!("revoke {STORED}")]
    );
    assert!(!b.agent.cfg.bootstrap_path.exists());
    let st = b.saved();
    assert_eq!(st.token.unwrap().source, TokenSource::Bootstrap);
}

#[test]
fn a_refused_token_without_a_grant_is_exit_1_with_the_advice() {
    let mut b = TestBox::new();
    b.tenancy().fail_checkin(TenancyError::Unauthenticated {
        code: "AGENT_TOKEN_INVALID".into(),
        message: "unknown".into(),
    });
    let f = b.tick().unwrap_err();
    assert_eq!(f.exit(), Exit::Fail);
    assert_eq!(f.code(), Some(crate::error::Code::AgentUnauthenticated));
    assert!(f.message().contains("bootstrap --force"));
    assert!(b.bao().calls.borrow().is_empty());
}

#[test]
fn tenancy_409_is_78_and_429_is_75_and_nothing_follows() {
    let mut b = TestBox::new();
    b.tenancy()
        .fail_checkin(TenancyError::EnvMismatch("box moved".into()));
    assert_eq!(b.tick().unwrap_err().exit(), Exit::EnvMismatch);
    b.tenancy().fail_checkin(TenancyError::RateLimited {
        what: "checkin",
        code: "RATE_LIMITED".into(),
        retry_after: 5,
    });
    let f = b.tick().unwrap_err();
    assert_eq!((f.kind(), f.exit()), (Kind::RateLimited, Exit::TempFail));
    assert!(b.reports().is_empty());
    assert_eq!(b.saved().counters.ticks.get("78"), Some(&1));
    assert_eq!(b.saved().counters.ticks.get("75"), Some(&1));
}

#[test]
fn laptop_mode_turns_an_unreachable_tenancy_into_exit_0() {
    for (laptop, want) in [(true, Ok(Exit::Ok)), (false, Err(Exit::TempFail))] {
        let mut b = TestBox::with(|c| c.laptop_mode = laptop);
        b.tenancy()
            .fail_checkin(TenancyError::Unavailable("no route".into(), None));
        assert_eq!(b.tick().map_err(|f| f.exit()), want, "laptop_mode {laptop}");
    }
}

#[test]
fn a_stored_token_pinned_elsewhere_stops_before_the_check_in() {
    let mut b = TestBox::new();
    let mut st = {
        let mut s = State::default();
        s.token = Some(TokenMeta {
            source: TokenSource::Lease,
            obtained_at: 0,
            expires_at: 0,
            renewable: true,
            grant_jti: String::new(),
            env_id: "env-b".into(),
            expires_boot: 0,
            boot_id: String::new(),
        });
        s
    };
    st.save(&b.agent.cfg.state_path()).unwrap();
    assert_eq!(b.tick().unwrap_err().exit(), Exit::EnvMismatch);
    assert!(b.calls().is_empty());
}

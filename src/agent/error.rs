//! Why a tick (or a command) did not converge, typed. The exit code is derived here, in one
//! place, from the failure's [`Kind`]; the error that caused it (tenancy's, OpenBao's, the
//! transport's, the state files', a refusal) is kept as its [`source`](std::error::Error::source),
//! so callers can tell failures apart by type instead of by their text.

use monky_base::files::StateError;
use monky_boundary::{Refusal, RefusalCode};
use monky_host::runtime::RuntimeError;
use monky_wire::bao::BaoError;
use monky_wire::tenancy::TenancyError;
use monky_wire::transport::TransportError;

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The process exit codes (the seed's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    Fail = 1,
    TempFail = 75,
    EnvMismatch = 78,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Needs an operator or another bundle: a refusal, a bad config, a dead credential (1).
    Fail,
    /// The mesh, tenancy, OpenBao or the engine is down or busy; the next tick retries (75).
    Temporary,
    /// Tenancy answered 429 (75). An apply may go on with a token that still works (0.1.6).
    RateLimited,
    /// The box's env and its credentials' env differ; not retried (78).
    EnvMismatch,
}

/// The code a failure is reported and counted with: the agent's own outcomes by name, a
/// refusal by its bundle or policy code. Decisions (rollback, backoff) match on it; nothing
/// parses it back out of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Unhealthy,
    CrashLoop,
    JobFailed,
    ComposeUpFailed,
    ComposeDownFailed,
    Interrupted,
    ApplyFailed,
    RollbackFailed,
    StateWriteFailed,
    AgentUnauthenticated,
    LeaseLegacyRefused,
    AgentEnvMismatch,
    /// A snapshot could not be taken (disk, I/O, content it will not copy); nothing changed.
    SnapshotFailed,
    /// A restore before a rollback failed: the old release is not started on that data.
    RestoreFailed,
    /// A code whose one home is the boundary's table ([`RefusalCode`]): every refusal, and the
    /// three the engine guard reports too (`DOCKER_UNAVAILABLE`, `ENGINE_REFUSED`,
    /// `COMPOSE_PULL_FAILED`).
    Boundary(RefusalCode),
}

impl Code {
    pub const DOCKER_UNAVAILABLE: Code = Code::Boundary(RefusalCode::DockerUnavailable);
    pub const ENGINE_REFUSED: Code = Code::Boundary(RefusalCode::EngineRefused);
    pub const COMPOSE_PULL_FAILED: Code = Code::Boundary(RefusalCode::ComposePullFailed);

    /// The agent's own codes (every variant but `Boundary`): their names are distinct.
    #[cfg(test)]
    const OWN: [Code; 14] = [
        Code::Unhealthy,
        Code::CrashLoop,
        Code::JobFailed,
        Code::ComposeUpFailed,
        Code::ComposeDownFailed,
        Code::Interrupted,
        Code::ApplyFailed,
        Code::RollbackFailed,
        Code::StateWriteFailed,
        Code::AgentUnauthenticated,
        Code::LeaseLegacyRefused,
        Code::AgentEnvMismatch,
        Code::SnapshotFailed,
        Code::RestoreFailed,
    ];

    /// The code's name; a variant without one does not compile.
    pub fn as_str(&self) -> &'static str {
        match self {
            Code::Unhealthy => "UNHEALTHY",
            Code::CrashLoop => "CRASH_LOOP",
            Code::JobFailed => "JOB_FAILED",
            Code::ComposeUpFailed => "COMPOSE_UP_FAILED",
            Code::ComposeDownFailed => "COMPOSE_DOWN_FAILED",
            Code::Interrupted => "INTERRUPTED",
            Code::ApplyFailed => "APPLY_FAILED",
            Code::RollbackFailed => "ROLLBACK_FAILED",
            Code::StateWriteFailed => "STATE_WRITE_FAILED",
            Code::AgentUnauthenticated => "AGENT_UNAUTHENTICATED",
            Code::LeaseLegacyRefused => "LEASE_LEGACY_REFUSED",
            Code::AgentEnvMismatch => "AGENT_ENV_MISMATCH",
            Code::SnapshotFailed => "SNAPSHOT_FAILED",
            Code::RestoreFailed => "RESTORE_FAILED",
            Code::Boundary(c) => c.as_str(),
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tick that did not converge: the operator's message, its kind, its code and its cause,
/// and the log tail its report carries.
#[derive(Debug, thiserror::Error)]
#[error("{msg}")]
pub struct Failure {
    kind: Kind,
    msg: String,
    code: Option<Code>,
    /// Container or compose output for the report (scrubbed on drop; redacted when sent).
    log_tail: Option<zeroize::Zeroizing<String>>,
    #[source]
    source: Option<BoxError>,
}

impl Failure {
    pub fn new(kind: Kind, msg: impl Into<String>) -> Self {
        Failure {
            kind,
            msg: msg.into(),
            code: None,
            log_tail: None,
            source: None,
        }
    }

    /// `CODE: detail`, with the code kept typed.
    pub fn coded(kind: Kind, code: Code, detail: impl std::fmt::Display) -> Self {
        let mut f = Failure::new(kind, format!("{code}: {detail}"));
        f.code = Some(code);
        f
    }

    /// The code of a message that already starts with it (`JOB_FAILED: …` as the runtime
    /// words it), kept typed.
    pub fn tagged(mut self, code: Code) -> Self {
        debug_assert!(self.msg.starts_with(code.as_str()), "{}", self.msg);
        self.code = Some(code);
        self
    }

    /// An uncoded failure given a code: `CODE: <message>`, kind and cause kept.
    pub fn with_code(mut self, code: Code) -> Self {
        // a code in the text but not in the type is a construction bug: make it at the source
        debug_assert!(
            !self.msg.split_once(": ").is_some_and(
                |(c, _)| c.len() > 3 && c.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
            ),
            "uncoded failure that reads coded: {}",
            self.msg
        );
        self.msg = format!("{code}: {}", self.msg);
        self.code = Some(code);
        self
    }

    /// The same failure of another kind (a SIGTERM turns a failure temporary).
    pub fn with_kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self
    }

    /// The same failure with a log tail for its report.
    pub fn with_log_tail(mut self, tail: impl Into<String>) -> Self {
        let tail = tail.into();
        if !tail.is_empty() {
            self.log_tail = Some(zeroize::Zeroizing::new(tail));
        }
        self
    }

    pub fn log_tail(&self) -> &str {
        self.log_tail.as_deref().map_or("", String::as_str)
    }

    pub fn fail(msg: impl Into<String>) -> Self {
        Failure::new(Kind::Fail, msg)
    }

    pub fn temporary(msg: impl Into<String>) -> Self {
        Failure::new(Kind::Temporary, msg)
    }

    pub fn env_mismatch(msg: impl Into<String>) -> Self {
        Failure::new(Kind::EnvMismatch, msg)
    }

    /// Keeps `e` as the cause (the message already says what the operator needs).
    pub fn caused_by(mut self, e: impl Into<BoxError>) -> Self {
        self.source = Some(e.into());
        self
    }

    /// The one mapping from kinds to exit codes.
    pub fn exit(&self) -> Exit {
        match self.kind {
            Kind::Fail => Exit::Fail,
            Kind::Temporary | Kind::RateLimited => Exit::TempFail,
            Kind::EnvMismatch => Exit::EnvMismatch,
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.msg
    }

    /// The failure's code, if it has one (set where it was made, never read from the text).
    pub fn code(&self) -> Option<Code> {
        self.code
    }

    /// The same failure with its message rewritten (redaction, added context).
    pub fn map_message(mut self, f: impl FnOnce(String) -> String) -> Self {
        self.msg = f(std::mem::take(&mut self.msg));
        self
    }
}

impl From<StateError> for Failure {
    fn from(e: StateError) -> Self {
        if e.op == monky_base::files::FileOp::Write {
            // a full or read-only state filesystem: reported with a code like any failure
            return Failure::coded(Kind::Fail, Code::StateWriteFailed, &e).caused_by(e);
        }
        Failure::fail(e.to_string()).caused_by(e)
    }
}

impl From<TransportError> for Failure {
    fn from(e: TransportError) -> Self {
        let kind = match e {
            TransportError::Unreachable { .. } => Kind::Temporary,
            TransportError::Setup { .. } => Kind::Fail,
        };
        Failure::new(kind, e.to_string()).caused_by(e)
    }
}

impl From<TenancyError> for Failure {
    fn from(e: TenancyError) -> Self {
        let msg = e.to_string();
        let f = match e {
            TenancyError::Unauthenticated { .. } => Failure::coded(
                Kind::Fail,
                Code::AgentUnauthenticated,
                format!(
                    "{msg}. The box's token is unknown, expired, or its grant was superseded \
                     (kit re-revealed or environment retired): reveal the install kit again, put the new grant at the \
                     bootstrap path and run `monky-deployd bootstrap --force`"
                ),
            ),
            TenancyError::EnvMismatch(_) => Failure::new(Kind::EnvMismatch, msg),
            TenancyError::RateLimited { .. } => Failure::new(Kind::RateLimited, msg),
            TenancyError::Unavailable(..) => Failure::new(Kind::Temporary, msg),
            TenancyError::LegacyLease => Failure::coded(Kind::Fail, Code::LeaseLegacyRefused, msg),
            _ => Failure::new(Kind::Fail, msg),
        };
        f.caused_by(e)
    }
}

impl From<BaoError> for Failure {
    fn from(e: BaoError) -> Self {
        let kind = match e {
            BaoError::Unavailable(..) => Kind::Temporary,
            _ => Kind::Fail,
        };
        // BaoError::Unavailable already says "OpenBao unavailable: …"
        Failure::new(kind, e.to_string()).caused_by(e)
    }
}

impl From<RuntimeError> for Failure {
    fn from(e: RuntimeError) -> Self {
        Failure::fail(e.to_string()).caused_by(e)
    }
}

impl From<Refusal> for Failure {
    fn from(r: Refusal) -> Self {
        let mut f = Failure::fail(r.to_string());
        f.code = Some(Code::Boundary(r.code));
        f.caused_by(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn the_exit_code_follows_the_kind() {
        assert_eq!(Failure::fail("x").exit(), Exit::Fail);
        assert_eq!(Failure::temporary("x").exit(), Exit::TempFail);
        assert_eq!(Failure::env_mismatch("x").exit(), Exit::EnvMismatch);
        let rl = Failure::from(TenancyError::RateLimited {
            what: "lease",
            code: "LEASE_RATE_LIMITED".into(),
            retry_after: 30,
        });
        assert_eq!((rl.kind(), rl.exit()), (Kind::RateLimited, Exit::TempFail));
    }

    #[test]
    fn the_cause_survives_as_the_source() {
        let f = Failure::from(BaoError::Unavailable("connection refused".into(), None));
        assert_eq!(f.exit(), Exit::TempFail);
        assert_eq!(f.message(), "OpenBao unavailable: connection refused");
        let src = f.source().expect("a source");
        assert!(matches!(
            src.downcast_ref::<BaoError>(),
            Some(BaoError::Unavailable(..))
        ));
        let f = Failure::from(TenancyError::EnvMismatch("env-b".into()));
        assert_eq!(f.exit(), Exit::EnvMismatch);
        assert!(f.source().unwrap().downcast_ref::<TenancyError>().is_some());
        let f = Failure::from(Refusal::new(
            RefusalCode::PrivilegedRefused,
            "service a: privileged",
        ));
        assert_eq!(
            f.code(),
            Some(Code::Boundary(RefusalCode::PrivilegedRefused))
        );
        // a code the guard reports too has one home, the boundary's
        let f = Failure::from(Refusal::new(RefusalCode::ComposePullFailed, "denied"));
        assert_eq!(f.code(), Some(Code::COMPOSE_PULL_FAILED));
        // a message that merely looks coded has no code
        assert_eq!(Failure::fail("UNHEALTHY: typed by hand").code(), None);
        let names: std::collections::BTreeSet<&str> = Code::OWN.iter().map(Code::as_str).collect();
        assert_eq!(names.len(), Code::OWN.len());
        assert_eq!(
            Code::Boundary(RefusalCode::BindSourceRefused).as_str(),
            "BIND_SOURCE_REFUSED"
        );
        assert!(f.source().unwrap().downcast_ref::<Refusal>().is_some());
    }

    #[test]
    fn the_whole_chain_down_to_the_os_error_survives() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let t = TransportError::unreachable("openbao at 127.0.0.1:8200: refused").because(refused);
        let h = monky_wire::http::HttpError::Transport(t);
        let f = Failure::from(BaoError::Unavailable(h.to_string(), Some(h)));
        assert_eq!(f.exit(), Exit::TempFail);
        let mut kinds = Vec::new();
        let mut cur: Option<&(dyn std::error::Error + 'static)> = f.source();
        while let Some(e) = cur {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                kinds.push(io.kind());
            }
            cur = e.source();
        }
        assert_eq!(kinds, [std::io::ErrorKind::ConnectionRefused]);
    }

    #[test]
    fn tenancy_401_carries_the_operator_advice_and_exit_1() {
        let f = Failure::from(TenancyError::Unauthenticated {
            code: "AGENT_TOKEN_INVALID".into(),
            message: "unknown token".into(),
        });
        assert_eq!(f.exit(), Exit::Fail);
        assert_eq!(f.code(), Some(Code::AgentUnauthenticated));
        assert!(f.message().starts_with("AGENT_UNAUTHENTICATED: "));
        assert!(f.message().contains("bootstrap --force"));
    }

    #[test]
    fn a_rewritten_message_keeps_kind_and_cause() {
        let f = Failure::from(TransportError::unreachable("tenancy at x: refused"))
            .map_message(|m| format!("{m}; and more"));
        assert_eq!(f.exit(), Exit::TempFail);
        assert_eq!(f.message(), "tenancy at x: refused; and more");
        assert!(f.source().is_some());
    }
}

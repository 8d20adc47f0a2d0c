//! Why a tick (or a command) did not converge, typed. The exit code is derived here, in one
//! place, from the failure's [`Kind`]; the error that caused it (tenancy's, OpenBao's, the
//! transport's, the state files', a refusal) is kept as its [`source`](std::error::Error::source),
//! so callers can tell failures apart by type instead of by their text.

use crate::bao::BaoError;
use crate::bundle::Refusal;
use crate::runtime::RuntimeError;
use crate::state::StateError;
use crate::tenancy::TenancyError;
use crate::transport::TransportError;

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

/// A tick that did not converge: the operator's message, its kind, and its cause.
#[derive(Debug, thiserror::Error)]
#[error("{msg}")]
pub struct Failure {
    kind: Kind,
    msg: String,
    #[source]
    source: Option<BoxError>,
}

impl Failure {
    pub fn new(kind: Kind, msg: impl Into<String>) -> Self {
        Failure {
            kind,
            msg: msg.into(),
            source: None,
        }
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

    /// The message's leading code (`UNHEALTHY`, `PRIVILEGED_REFUSED`, …), if it has one.
    pub fn code(&self) -> Option<&str> {
        crate::metrics::failure_code(&self.msg)
    }

    /// The same failure with its message rewritten (redaction, added context).
    pub fn map_message(mut self, f: impl FnOnce(String) -> String) -> Self {
        self.msg = f(std::mem::take(&mut self.msg));
        self
    }
}

impl From<StateError> for Failure {
    fn from(e: StateError) -> Self {
        let msg = if e.what == "cannot write" {
            // a full or read-only state filesystem: reported with a code like any failure
            format!("STATE_WRITE_FAILED: {e}")
        } else {
            e.to_string()
        };
        Failure::fail(msg).caused_by(e)
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
        let (kind, msg) = match e {
            TenancyError::Unauthenticated { .. } => (
                Kind::Fail,
                format!(
                    "AGENT_UNAUTHENTICATED: {msg}. The box's token is unknown, expired, or its grant was superseded \
                     (kit re-revealed or environment retired): reveal the install kit again, put the new grant at the \
                     bootstrap path and run `monky-deployd bootstrap --force`"
                ),
            ),
            TenancyError::EnvMismatch(_) => (Kind::EnvMismatch, msg),
            TenancyError::RateLimited { .. } => (Kind::RateLimited, msg),
            TenancyError::Unavailable(..) => (Kind::Temporary, msg),
            TenancyError::LegacyLease => (Kind::Fail, format!("LEASE_LEGACY_REFUSED: {msg}")),
            _ => (Kind::Fail, msg),
        };
        Failure::new(kind, msg).caused_by(e)
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
        Failure::fail(r.to_string()).caused_by(r)
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
        let f = Failure::from(Refusal::new("PRIVILEGED_REFUSED", "service a: privileged"));
        assert_eq!(f.code(), Some("PRIVILEGED_REFUSED"));
        assert!(f.source().unwrap().downcast_ref::<Refusal>().is_some());
    }

    #[test]
    fn the_whole_chain_down_to_the_os_error_survives() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let t = TransportError::unreachable("openbao at 127.0.0.1:8200: refused").because(refused);
        let h = crate::http::HttpError::Transport(t);
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
        assert_eq!(f.code(), Some("AGENT_UNAUTHENTICATED"));
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

//! The transports' one error type: its class decides the exit code (75 or 1), its message is
//! what the operator reads, and the OS error behind it, if any, is its `source()`.

use std::io;
use std::sync::Arc;

/// A dial that failed, in one of two classes (the exit code follows the class). `msg` is what
/// the operator reads; an OS error behind it stays reachable as `source()` (the SDK's failures
/// are C error codes, already named in `msg`). Clone: one identity load answers every waiter,
/// so the OS error is shared (`source()` still yields the `io::Error` itself).
#[derive(Clone, Debug)]
pub enum TransportError {
    /// Temporary: the mesh, the peer or the network is down. The next tick retries (exit 75).
    Unreachable {
        msg: String,
        source: Option<Arc<io::Error>>,
    },
    /// Permanent until an operator acts: no SDK linked, unreadable identity… (exit 1).
    Setup {
        msg: String,
        source: Option<Arc<io::Error>>,
    },
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Unreachable { msg, .. } | TransportError::Setup { msg, .. } => {
                f.write_str(msg)
            }
        }
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TransportError::Unreachable { source, .. } | TransportError::Setup { source, .. } => {
                source.as_deref().map(|e| e as _)
            }
        }
    }
}

impl TransportError {
    pub fn unreachable(msg: impl Into<String>) -> Self {
        TransportError::Unreachable {
            msg: msg.into(),
            source: None,
        }
    }

    pub fn setup(msg: impl Into<String>) -> Self {
        TransportError::Setup {
            msg: msg.into(),
            source: None,
        }
    }

    /// Keeps the OS error this failure came from.
    pub fn because(mut self, e: io::Error) -> Self {
        match &mut self {
            TransportError::Unreachable { source, .. } | TransportError::Setup { source, .. } => {
                *source = Some(Arc::new(e))
            }
        }
        self
    }
}

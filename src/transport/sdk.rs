//! `sdk` transport: dial Ziti services from inside the process (placeholder until ziti-sys lands).
use std::path::Path;
use std::time::Duration;

use super::{ConnectFuture, Connector, Endpoint, TransportError};

pub struct SdkConnector;

impl SdkConnector {
    pub fn new(_identity: &Path, _load_timeout: Duration) -> Result<Self, TransportError> {
        Err(TransportError::Setup(
            "transport sdk: this build has no OpenZiti SDK linked".into(),
        ))
    }
}

impl Connector for SdkConnector {
    fn connect<'a>(&'a self, ep: &'a Endpoint) -> ConnectFuture<'a> {
        Box::pin(async move { Err(TransportError::Setup(format!("{}: no SDK", ep.label))) })
    }
    fn describe(&self) -> String {
        "sdk".into()
    }
}

/// Version of the linked C SDK, if any.
pub fn sdk_version() -> Option<String> {
    None
}

/// Enrol an identity from a one-time JWT; writes the identity JSON 0600 to `out`.
pub fn enroll(_jwt: &Path, _out: &Path) -> Result<(), TransportError> {
    Err(TransportError::Setup("enroll: this build has no OpenZiti SDK linked".into()))
}

//! A refusal: a code from the protocol's list (docs/PROTOCOL.md) and a detail that names
//! things, never values. The code is an enum, so nothing reads it back out of text.

use std::fmt;

/// Every refusal code the agent reports. [`RefusalCode::as_str`] is the wire spelling; its
/// match is exhaustive, so a new code cannot be added without its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RefusalCode {
    BundleInvalid,
    BundlePathUnsafe,
    BundleEnvMismatch,
    BundleShaMismatch,
    BundleTooLarge,
    BundleSignatureInvalid,
    ManifestPathForeign,
    EnvIncomplete,
    EnvValueUnsafe,
    SecretUnreadable,
    RollbackRefused,
    DiskInsufficient,
    DockerUnavailable,
    ComposeConfigInvalid,
    ComposePullFailed,
    RegistryCredentialMissing,
    PlanScratch,
    ReleaseRefused,
    /// The engine guard refused a request that no rule below names.
    EngineRefused,
    PrivilegedRefused,
    BindSourceRefused,
    ComposeKeyRefused,
    NameRefused,
    PortRefused,
    ImageRefused,
    LimitRefused,
    NetworkRefused,
    /// A release statement's field is wrong, or one is required and absent (PROTOCOL 0.5).
    StatementRefused,
    /// A release statement past its life on the box's clock (PROTOCOL 0.5).
    BundleExpiredRefused,
    /// A release statement's serial further above the high-water mark than the box allows
    /// (`statement_serial_max_jump`), or above 2^53 with no mark yet (issue 40).
    StatementSerialJump,
    /// A release statement issued later than the box's clock plus `statement_clock_skew_s`
    /// (issue 40).
    StatementFromFuture,
    /// A `data` entry the box will not snapshot: an external or unknown volume, a volume with
    /// driver options, `keep_snapshots: 0` (PROTOCOL 0.6).
    SnapshotRefused,
}

impl RefusalCode {
    pub const fn as_str(self) -> &'static str {
        use RefusalCode::*;
        match self {
            BundleInvalid => "BUNDLE_INVALID",
            BundlePathUnsafe => "BUNDLE_PATH_UNSAFE",
            BundleEnvMismatch => "BUNDLE_ENV_MISMATCH",
            BundleShaMismatch => "BUNDLE_SHA_MISMATCH",
            BundleTooLarge => "BUNDLE_TOO_LARGE",
            BundleSignatureInvalid => "BUNDLE_SIGNATURE_INVALID",
            ManifestPathForeign => "MANIFEST_PATH_FOREIGN",
            EnvIncomplete => "ENV_INCOMPLETE",
            EnvValueUnsafe => "ENV_VALUE_UNSAFE",
            SecretUnreadable => "SECRET_UNREADABLE",
            RollbackRefused => "ROLLBACK_REFUSED",
            DiskInsufficient => "DISK_INSUFFICIENT",
            DockerUnavailable => "DOCKER_UNAVAILABLE",
            ComposeConfigInvalid => "COMPOSE_CONFIG_INVALID",
            ComposePullFailed => "COMPOSE_PULL_FAILED",
            RegistryCredentialMissing => "REGISTRY_CREDENTIAL_MISSING",
            PlanScratch => "PLAN_SCRATCH",
            ReleaseRefused => "RELEASE_REFUSED",
            EngineRefused => "ENGINE_REFUSED",
            PrivilegedRefused => "PRIVILEGED_REFUSED",
            BindSourceRefused => "BIND_SOURCE_REFUSED",
            ComposeKeyRefused => "COMPOSE_KEY_REFUSED",
            NameRefused => "NAME_REFUSED",
            PortRefused => "PORT_REFUSED",
            ImageRefused => "IMAGE_REFUSED",
            LimitRefused => "LIMIT_REFUSED",
            NetworkRefused => "NETWORK_REFUSED",
            StatementRefused => "STATEMENT_REFUSED",
            BundleExpiredRefused => "BUNDLE_EXPIRED_REFUSED",
            StatementSerialJump => "STATEMENT_SERIAL_JUMP",
            StatementFromFuture => "STATEMENT_FROM_FUTURE",
            SnapshotRefused => "SNAPSHOT_REFUSED",
        }
    }

    /// A code whose detail starts with what it names (`<service> <ip:port>`, `volume <name>`):
    /// the guard reports it without saying which request it refused.
    pub const fn names_its_object(self) -> bool {
        use RefusalCode::*;
        matches!(
            self,
            PortRefused | NameRefused | ImageRefused | LimitRefused | NetworkRefused
        )
    }
}

impl fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the wire spelling (tests and the report's JSON speak it).
impl PartialEq<&str> for RefusalCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<RefusalCode> for &str {
    fn eq(&self, other: &RefusalCode) -> bool {
        *self == other.as_str()
    }
}

/// A refusal: its code and a detail that names things, never values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct Refusal {
    pub code: RefusalCode,
    pub detail: String,
}

impl Refusal {
    pub fn new(code: RefusalCode, detail: impl Into<String>) -> Self {
        Refusal {
            code,
            detail: detail.into(),
        }
    }

    /// An engine-guard refusal no named rule covers (`ENGINE_REFUSED`).
    pub fn engine(detail: impl Into<String>) -> Self {
        Refusal::new(RefusalCode::EngineRefused, detail)
    }

    /// The same refusal with `what: ` before its detail (the guard says which request).
    pub fn within(mut self, what: impl fmt::Display) -> Self {
        self.detail = format!("{what}: {}", self.detail);
        self
    }

    /// A refusal of the request `what` (`container for service web`, `volume create`): a
    /// code whose detail names its object reads alone, any other says which request.
    pub fn for_request(self, what: impl fmt::Display) -> Self {
        if self.code.names_its_object() {
            self
        } else {
            self.within(what)
        }
    }

    /// How the engine guard words it to compose and in its log: an `ENGINE_REFUSED` by its
    /// detail alone, any other with its code.
    pub fn guard_text(&self) -> String {
        if self.code == RefusalCode::EngineRefused {
            self.detail.clone()
        } else {
            self.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_read_as_the_protocol_spells_them() {
        let r = Refusal::new(RefusalCode::BindSourceRefused, "web /etc (x)");
        assert_eq!(r.to_string(), "BIND_SOURCE_REFUSED: web /etc (x)");
        assert_eq!(r.code, "BIND_SOURCE_REFUSED");
        assert_eq!(Refusal::engine("HostConfig.X").guard_text(), "HostConfig.X");
        assert_eq!(
            Refusal::new(RefusalCode::PortRefused, "web 0.0.0.0:22").guard_text(),
            "PORT_REFUSED: web 0.0.0.0:22"
        );
    }
}

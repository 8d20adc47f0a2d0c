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
    /// A service that only builds its image here (`build:` without `image:`): the box never
    /// builds (issue 41).
    BuildRefused,
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
            BuildRefused => "BUILD_REFUSED",
        }
    }

    /// The rule that refuses with this code, as docs/POLICY.md names it (for `plan`).
    pub const fn rule(self) -> &'static str {
        use RefusalCode::*;
        match self {
            PrivilegedRefused => "privilege (POLICY.md §2, §4)",
            BindSourceRefused => {
                "the bind rule and the bind invariant (POLICY.md §3, invariant 1, 2)"
            }
            ComposeKeyRefused => "the key allow-list (POLICY.md §1)",
            EngineRefused => "the engine guard (POLICY.md §2)",
            ReleaseRefused => "the release holds the checked bytes (POLICY.md invariant 2)",
            PortRefused => "host ports (POLICY.md §6)",
            NameRefused => "object names (POLICY.md §6)",
            ImageRefused => "images (POLICY.md §6)",
            LimitRefused => "ceilings (POLICY.md §6)",
            NetworkRefused => "the address space (POLICY.md §6)",
            BuildRefused => "the box never builds (POLICY.md §4)",
            SnapshotRefused => "the box's data (POLICY.md, The box's data)",
            RollbackRefused => "serials (PROTOCOL.md, bundle.json)",
            DiskInsufficient => "the disk check (OPERATIONS.md)",
            EnvIncomplete | EnvValueUnsafe => "rendering .env (PROTOCOL.md, env.template)",
            ManifestPathForeign => "the manifest's paths (PROTOCOL.md)",
            StatementRefused
            | BundleExpiredRefused
            | StatementSerialJump
            | StatementFromFuture
            | BundleSignatureInvalid => "release statements and signatures (PROTOCOL.md 0.5)",
            _ => "the bundle's shape (PROTOCOL.md)",
        }
    }

    /// What usually lifts a refusal of this code: the edit to the bundle, or the box's own
    /// permission (`plan` shows it; a rule that knows better says so, [`Refusal::lifted_by`]).
    pub const fn lift(self) -> &'static str {
        use RefusalCode::*;
        match self {
            PrivilegedRefused => {
                "drop the setting; a box that must run it sets permit_privileged: true and the \
                 bundle carries allow_privileged"
            }
            BindSourceRefused => {
                "bind a path of the release (./…) or a named volume; a host data directory needs \
                 the box's bind_roots; never nest a bind in a writable one"
            }
            ComposeKeyRefused => {
                "drop the key, or have it reviewed and added to the allow-list (POLICY.md, \
                 Adding a key)"
            }
            EngineRefused => "the detail names the engine rule; change what compose asks for",
            ReleaseRefused => "something outside the policy wrote the release: find who; the next tick rewrites it",
            PortRefused => "publish another host port (the box keeps this one: reserved_ports, the agent's proxy ports)",
            NameRefused => {
                "drop the fixed name, or pick one in no other project's namespace (not \
                 monky-…, not another project's prefix on the box)"
            }
            ImageRefused => "pin the image by digest (name@sha256:…), or let this project pull it",
            LimitRefused => "set mem_limit / pids_limit (or deploy.resources.limits) under the box's container_limits",
            NetworkRefused => "take the subnet from the box's network_pools, clear of its routes and endpoints, or set none",
            BuildRefused => "build the image in CI, push it to a registry and name it in image:",
            SnapshotRefused => {
                "snapshot only the project's own local volumes without driver_opts, and keep \
                 keep_snapshots above 0 on the box"
            }
            RollbackRefused => "render the old release again (a new serial), or carry allow_rollback on a box that permits it",
            DiskInsufficient => "free space under the Docker data root, or lower need_bytes",
            EnvIncomplete => "define the variable in env.template or the manifest",
            _ => "re-render the bundle",
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

/// A refusal: its code and a detail that names things, never values; where it was found (the
/// service and the key, when a rule over a compose file knows them) and what lifts it, for
/// `plan` (issue 41). The wire carries `code: detail` only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {detail}")]
pub struct Refusal {
    pub code: RefusalCode,
    pub detail: String,
    /// Where it was found and what lifts it, when the rule says (boxed: a refusal travels in
    /// many error types).
    found: Option<Box<Found>>,
}

/// Where a refusal was found, and what lifts it (`plan`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Found {
    /// The compose service (or top-level object, `secret s`) the refused key belongs to.
    service: Option<String>,
    /// The key as the layer wrote it (`volumes`, `cap_add`, `HostConfig.Binds`).
    key: Option<String>,
    /// What lifts it, when the rule knows better than its code's [`RefusalCode::lift`].
    lift: Option<String>,
}

impl Refusal {
    pub fn new(code: RefusalCode, detail: impl Into<String>) -> Self {
        Refusal {
            code,
            detail: detail.into(),
            found: None,
        }
    }

    fn found(&mut self) -> &mut Found {
        self.found.get_or_insert_with(Default::default)
    }

    /// The compose service (or top-level object, `secret s`) the refused key belongs to.
    pub fn service(&self) -> Option<&str> {
        self.found.as_ref()?.service.as_deref()
    }

    /// The key as the layer wrote it (`volumes`, `cap_add`, `HostConfig.Binds`).
    pub fn key(&self) -> Option<&str> {
        self.found.as_ref()?.key.as_deref()
    }

    /// Found at `service`'s `key` (kept when a rule already said).
    pub fn at(mut self, service: &str, key: &str) -> Self {
        let f = self.found();
        f.service.get_or_insert_with(|| service.to_string());
        f.key.get_or_insert_with(|| key.to_string());
        self
    }

    /// Found at `key`, of no one service (kept when a rule already said).
    pub fn at_key(mut self, key: &str) -> Self {
        self.found().key.get_or_insert_with(|| key.to_string());
        self
    }

    /// Lifted by `how` (an edit, or the box's own permission).
    pub fn lifted_by(mut self, how: impl Into<String>) -> Self {
        self.found().lift = Some(how.into());
        self
    }

    /// What lifts it: the rule's own word, else its code's.
    pub fn how_to_lift(&self) -> &str {
        self.found
            .as_ref()
            .and_then(|f| f.lift.as_deref())
            .unwrap_or(self.code.lift())
    }

    /// The same refusal with every mention of the directory `root` (a release, the plan's
    /// scratch copy) said relative to it: `./…` before a path in it, `the release directory
    /// (./)` where it stands alone. Operators read paths of their bundle, not of the box.
    pub fn relative_to(mut self, root: &str) -> Self {
        let root = root.trim_end_matches('/');
        if !root.is_empty() && root != "." {
            self.detail = relative(&self.detail, root);
        }
        self
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

/// `msg` with `root` said relative ([`Refusal::relative_to`]): only where `root` is a whole
/// path (at a token's start, and ending at a `/` or a token's end).
pub fn relative(msg: &str, root: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(root) {
        let (before, at) = rest.split_at(i);
        out.push_str(before);
        let token_start = out.is_empty() || out.ends_with([' ', '(', ',', '"', '\'', '=']);
        let after = &at[root.len()..];
        if token_start && after.starts_with('/') {
            out.push_str("./");
            rest = &after[1..];
        } else if token_start
            && (after.is_empty() || after.starts_with([' ', ',', ')', ':', '"', '\'', ';']))
        {
            out.push_str("the release directory (./)");
            rest = after;
        } else {
            out.push_str(root);
            rest = after;
        }
    }
    out.push_str(rest);
    out
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

    #[test]
    fn paths_of_the_release_are_said_relative_to_it() {
        let r = Refusal::new(
            RefusalCode::BindSourceRefused,
            "/st/staging/plan-9/data: writable, and holds /st/staging/plan-9, which; \
             /st/staging/plan-90/x \"/st/staging/plan-9/.env\"",
        )
        .relative_to("/st/staging/plan-9/");
        assert_eq!(
            r.detail,
            "./data: writable, and holds the release directory (./), which; \
             /st/staging/plan-90/x \"./.env\""
        );
        let r = Refusal::new(RefusalCode::BuildRefused, "web").at("web", "build");
        assert_eq!((r.service(), r.key()), (Some("web"), Some("build")));
        assert_eq!(r.how_to_lift(), RefusalCode::BuildRefused.lift());
        assert_eq!(r.clone().lifted_by("x").how_to_lift(), "x");
        assert_eq!(
            r.to_string(),
            "BUILD_REFUSED: web",
            "the wire says code: detail only"
        );
    }
}

//! `/etc/monky-deployd/config.yaml`: the schema, its defaults, loading and parsing, and the
//! paths derived from it. Unknown keys and invalid values are errors that name the key (and, for
//! YAML errors, the line), so a typo never silently becomes a default; the checks of the values
//! are in `config/validate.rs`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

mod validate;
pub use monky_wire::http::Scheme;
pub use validate::valid_env_id;

pub const DEFAULT_CONFIG_PATH: &str = "/etc/monky-deployd/config.yaml";

/// 18 min: the timer unit's TimeoutStartSec (20 min) less 2 min for the report and the save.
pub const DEFAULT_TICK_BUDGET_S: u64 = 1080;
/// What a tick needs after its budget ran out: report, token upkeep, state save.
pub const TICK_MARGIN_S: u64 = 120;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config {path}: cannot read: {err}")]
    Read { path: String, err: std::io::Error },
    #[error("config {path}: {msg}")]
    Invalid { path: String, msg: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Sdk,
    Proxy,
    System,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Sdk => "sdk",
            Transport::Proxy => "proxy",
            Transport::System => "system",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "lowercase")]
pub enum VolumesOnAbsent {
    Keep,
    Purge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "lowercase")]
pub enum ComposeCmd {
    Auto,
    Plugin,
    Standalone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// `egress_proxy`: the HTTP CONNECT proxy between the box and the mesh, tenancy and OpenBao.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(deny_unknown_fields, default)]
pub struct EgressCfg {
    /// `http://host:port`; "" = `HTTPS_PROXY`/`https_proxy` from the environment, else none.
    /// Never credentials here (they go in `credentials_file`).
    pub url: String,
    /// Targets reached directly (merged with `NO_PROXY`/`no_proxy`); nothing is implicit.
    pub no_proxy: Vec<String>,
    /// A 0600 file holding `user:password` for Basic auth.
    pub credentials_file: String,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(deny_unknown_fields, default)]
pub struct TenancyCfg {
    pub service: String,
    pub host: String,
    pub port: u16,
    pub scheme: Scheme,
    pub proxy_port: u16,
    pub timeout_s: u64,
    pub ca_file: String,
}

impl Default for TenancyCfg {
    fn default() -> Self {
        TenancyCfg {
            service: "monky.tenancy.deploy".into(),
            host: "tenancy.cbs.tikali.net".into(),
            port: 443,
            scheme: Scheme::Https,
            proxy_port: 18443,
            timeout_s: 30,
            ca_file: String::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(deny_unknown_fields, default)]
pub struct BaoCfg {
    pub service: String,
    pub host: String,
    pub port: u16,
    pub scheme: Scheme,
    pub proxy_port: u16,
    pub timeout_s: u64,
    pub ca_file: String,
    pub auth_mount: String,
    pub role: String,
    pub kv_mount: String,
    pub renew_below_s: u64,
}

impl Default for BaoCfg {
    fn default() -> Self {
        BaoCfg {
            service: "openbao".into(),
            host: "bao.cbs.tikali.net".into(),
            port: 443,
            scheme: Scheme::Https,
            proxy_port: 18200,
            timeout_s: 30,
            ca_file: "/etc/monky-deployd/openbao-ca.pem".into(),
            auth_mount: "jwt-tenancy".into(),
            role: "see-env".into(),
            kv_mount: "monky".into(),
            renew_below_s: 900,
        }
    }
}

/// `container_limits: {memory: 512m, pids: 200}`: a byte size as compose writes it, a count.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(deny_unknown_fields, default)]
pub struct ContainerLimits {
    pub memory: Option<serde_yaml_ng::Value>,
    pub pids: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub env_id: String,
    pub site: String,
    pub transport: Transport,
    pub identity: String,
    /// `sdk`: seconds between the SDK's service refreshes, the only controller traffic of a
    /// long-lived context (one TLS handshake each); dials of a service it does not know yet
    /// fetch it at once whatever this is. Also how long a running context may still dial a
    /// service whose Dial policy was removed (measured: OPERATIONS.md).
    pub sdk_refresh_s: u64,
    pub tenancy: TenancyCfg,
    pub bao: BaoCfg,
    pub state_dir: PathBuf,
    pub bootstrap_path: PathBuf,
    pub laptop_mode: bool,
    pub interval_s: u64,
    pub prod: Option<bool>,
    pub volumes_on_absent: VolumesOnAbsent,
    pub healthy_timeout_s: u64,
    /// Wall-time budget of one tick: every compose step and the health wait stop within it, so
    /// the tick reports and saves state before the unit's TimeoutStartSec (20 min) strikes.
    pub tick_budget_s: u64,
    pub compose_project: String,
    pub docker_bin: String,
    pub compose_cmd: ComposeCmd,
    /// The standalone compose executable (`compose_cmd: standalone`); any compose line.
    pub compose_bin: String,
    pub docker_host: String,
    /// Host directories containers may bind writable besides their release directory.
    pub bind_roots: Vec<PathBuf>,
    /// Host ports no container may publish, besides the agent's own `tenancy.proxy_port` and
    /// `bao.proxy_port` (always reserved, whatever the transport).
    pub reserved_ports: Vec<u16>,
    /// Ceilings every container must declare and stay under (`memory`, `pids`); unset = none.
    pub container_limits: ContainerLimits,
    /// Address prefixes a bundle's networks may take subnets from (IPv4 and IPv6); default: the
    /// engine's own default pools. An IPv6 subnet needs an IPv6 pool here.
    pub network_pools: Vec<String>,
    /// The HTTP egress proxy of the `system` and `sdk` transports (PROTOCOL 0.5).
    pub egress_proxy: EgressCfg,
    /// Whether a bundle's `allow_privileged` takes effect on this box.
    pub permit_privileged: bool,
    /// Whether a bundle's `allow_rollback` takes effect on this box.
    pub permit_rollback: bool,
    /// Release keys (id → base64 Ed25519 public key); non-empty = signed bundles only.
    pub bundle_signing_keys: std::collections::BTreeMap<String, String>,
    /// Release keys the agent's own packages must be signed by (id → base64 Ed25519 public
    /// key); empty = self-update off (the default).
    pub agent_signing_keys: std::collections::BTreeMap<String, String>,
    /// Whether a bundle (and an agent package) must carry a signed release statement
    /// (PROTOCOL 0.5); false accepts 0.3/0.4 bare-sha signatures too.
    pub require_statements: bool,
    /// Whether every service image must be pinned by digest (`name[:tag]@sha256:<hex>`), in
    /// the file passes and for every create and pull the engine guard sees (PROTOCOL 0.5).
    pub require_image_digests: bool,
    /// Whether tenancy may move this box to an older agent version.
    pub permit_agent_downgrade: bool,
    /// How long a newly installed agent has to complete a tick before it is reverted.
    pub agent_update_probation_s: u64,
    /// node_exporter textfile to write after every tick ("" = off).
    pub metrics_textfile: String,
    /// When an apply may run (`Sat 02:00-05:00`, `daily 03:00-03:30`); empty = always.
    pub apply_windows: Vec<String>,
    /// Their time zone (IANA name); "" = the box's local zone.
    pub apply_windows_tz: String,
    /// Bring the last healthy release back when an apply ends UNHEALTHY or COMPOSE_UP_FAILED.
    pub auto_rollback: bool,
    /// How long a sha that failed and was rolled back is not applied again (unless the desired
    /// sha changes).
    pub retry_failed_after_s: u64,
    /// With `auto_rollback`: a crash loop a heartbeat finds within this many seconds of the
    /// apply rolls back to the release that ran before it (0 = only inside the apply).
    pub rollback_window_s: u64,
    /// How long every long-running service must stay up (healthy where it has a check) with an
    /// unchanged restart count before a release counts as applied (0 = no window).
    pub settle_s: u64,
    /// A heartbeat that finds a service of the running release missing or stopped runs `up -d`
    /// for that release (no lease, no secret read) and reports `HEALED: <services>`.
    pub heal_drift: bool,
    /// The longest wait between two attempts of a failing release (1, 2, 4, … minutes); 0 =
    /// no backoff (every tick retries, as before 0.3).
    pub retry_backoff_max_s: u64,
    pub registry_host: String,
    pub keep_releases: usize,
    /// Reclaim (old releases and their images) when the Docker data root has less free than
    /// this byte size; unset = the running bundle's `need_bytes` × 1.5 + 2 GiB.
    pub disk_reclaim_below: Option<serde_yaml_ng::Value>,
    /// At most one diagnostics bundle per this many seconds, whatever tenancy asks.
    pub diagnostics_min_interval_s: u64,
    pub log_level: LogLevel,
    /// How far above the high-water mark a release statement's serial may jump (issue 40;
    /// `boundary::statement::DEFAULT_SERIAL_MAX_JUMP`): a signed serial of 2^64-1 cannot lock
    /// the box out of every later release.
    pub statement_serial_max_jump: u64,
    /// How far a statement's `issued_at` may be ahead of the box's clock (issue 40).
    pub statement_clock_skew_s: u64,
    /// Data snapshots kept, in releases (PROTOCOL 0.6); 0 = a bundle with `data` is
    /// SNAPSHOT_REFUSED.
    pub keep_snapshots: usize,
    /// The longest an app's update lock holds a new release back (PROTOCOL 0.6); 0 = no limit.
    pub update_lock_max_s: u64,
    #[serde(skip)]
    pub path: PathBuf,
    /// Which instance of the box this is (`--instance`); the default one unless named.
    #[serde(skip)]
    pub instance: crate::instance::Instance,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            env_id: String::new(),
            site: String::new(),
            transport: Transport::Sdk,
            identity: String::new(),
            sdk_refresh_s: 300,
            tenancy: TenancyCfg::default(),
            bao: BaoCfg::default(),
            state_dir: "/var/lib/monky-deployd".into(),
            bootstrap_path: "/etc/monky-deployd/bootstrap.jwt".into(),
            laptop_mode: false,
            interval_s: 60,
            prod: None,
            volumes_on_absent: VolumesOnAbsent::Keep,
            healthy_timeout_s: 300,
            tick_budget_s: DEFAULT_TICK_BUDGET_S,
            compose_project: String::new(),
            docker_bin: "docker".into(),
            compose_cmd: ComposeCmd::Auto,
            compose_bin: "docker-compose".into(),
            docker_host: "unix:///var/run/docker.sock".into(),
            bind_roots: Vec::new(),
            reserved_ports: Vec::new(),
            container_limits: ContainerLimits::default(),
            network_pools: monky_boundary::policy::netpool::engine_default_pools(),
            egress_proxy: EgressCfg::default(),
            permit_privileged: false,
            permit_rollback: true,
            bundle_signing_keys: Default::default(),
            agent_signing_keys: Default::default(),
            require_statements: false,
            require_image_digests: false,
            permit_agent_downgrade: false,
            agent_update_probation_s: 600,
            metrics_textfile: String::new(),
            apply_windows: Vec::new(),
            apply_windows_tz: String::new(),
            auto_rollback: false,
            retry_failed_after_s: 3600,
            rollback_window_s: 600,
            settle_s: 5,
            heal_drift: false,
            retry_backoff_max_s: 3600,
            registry_host: "harbor.tikali.net".into(),
            keep_releases: 5,
            disk_reclaim_below: None,
            diagnostics_min_interval_s: 600,
            log_level: LogLevel::Info,
            statement_serial_max_jump: monky_boundary::statement::DEFAULT_SERIAL_MAX_JUMP,
            statement_clock_skew_s: monky_boundary::statement::DEFAULT_CLOCK_SKEW_S,
            keep_snapshots: 2,
            update_lock_max_s: 3600,
            path: PathBuf::new(),
            instance: Default::default(),
        }
    }
}

impl Config {
    /// The config of this process's instance ([`crate::instance::current`]).
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::load_for(path, crate::instance::current())
    }

    /// The config of `instance`: a named one's `state_dir` and `bootstrap_path` default to its
    /// own (`/var/lib/monky-deployd/<name>`, `/etc/monky-deployd/<name>/bootstrap.jwt`); a key
    /// the file sets wins.
    pub fn load_for(
        path: &Path,
        instance: &crate::instance::Instance,
    ) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|err| ConfigError::Read {
            path: path.display().to_string(),
            err,
        })?;
        Config::parse_for(&text, path, instance)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        Config::parse_for(text, path, &Default::default())
    }

    pub fn parse_for(
        text: &str,
        path: &Path,
        instance: &crate::instance::Instance,
    ) -> Result<Config, ConfigError> {
        let invalid = |msg: String| ConfigError::Invalid {
            path: path.display().to_string(),
            msg,
        };
        // An empty document deserialises as unit; treat it as an empty map so the missing
        // required keys are what gets reported.
        let mut cfg: Config = if text.trim().is_empty() {
            Config::default()
        } else {
            serde_yaml_ng::from_str(text).map_err(|e| invalid(e.to_string()))?
        };
        cfg.path = path.to_path_buf();
        if instance.name.is_some() {
            // which keys the file sets itself (it parsed above, so this does too)
            let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).unwrap_or_default();
            let set = |k: &str| doc.get(k).is_some();
            if !set("state_dir") {
                cfg.state_dir = instance.default_state_dir();
            }
            if !set("bootstrap_path") {
                cfg.bootstrap_path = instance.default_bootstrap_path();
            }
        }
        cfg.instance = instance.clone();
        cfg.validate().map_err(|e| invalid(e.to_string()))?;
        Ok(cfg)
    }

    pub fn state_path(&self) -> PathBuf {
        self.state_dir.join("state.json")
    }
    pub fn token_path(&self) -> PathBuf {
        self.state_dir.join("bao.token")
    }
    /// The highest release-statement serial this box accepted, kept apart from `state.json`
    /// so that restoring an older state file does not lower it.
    pub fn high_water_path(&self) -> PathBuf {
        self.state_dir.join("high-water.json")
    }
    pub fn lock_path(&self) -> PathBuf {
        self.state_dir.join("lock")
    }
    pub fn releases_dir(&self) -> PathBuf {
        self.state_dir.join("releases")
    }
    pub fn current_link(&self) -> PathBuf {
        self.state_dir.join("current")
    }
    pub fn staging_dir(&self) -> PathBuf {
        self.state_dir.join("staging")
    }
    /// The data snapshots (PROTOCOL 0.6, [`crate::data`]).
    pub fn snapshots_dir(&self) -> PathBuf {
        self.state_dir.join("snapshots")
    }
    /// What an apply that touches data has done so far, for the next tick.
    pub fn data_journal_path(&self) -> PathBuf {
        self.state_dir.join("data.json")
    }
    /// The agent's own compose files beside a release's (PROTOCOL 0.6, the update lock).
    pub fn overrides_dir(&self) -> PathBuf {
        self.state_dir.join("overrides")
    }
    /// Where the agent stages a verified package of itself for the root update unit.
    pub fn update_dir(&self) -> PathBuf {
        self.state_dir.join("update")
    }
    /// The agent's own `DOCKER_CONFIG`: never `$HOME`, so a human's `docker login` is not what
    /// the agent depends on (0.1.7).
    pub fn docker_config_dir(&self) -> PathBuf {
        self.state_dir.join("docker")
    }
    /// What this instance depends on ([`crate::depends`]): the endpoints its dialer
    /// dials (with this process's environment and the SDK's own connects), the ports it
    /// listens on or dials on loopback, its paths and its data roots.
    pub fn depends(&self) -> crate::depends::Depends {
        crate::depends::of_config(
            self,
            &|k| std::env::var(k).ok(),
            &monky_wire::transport::sdk::dialled_targets(),
        )
    }

    /// The files no container of any instance may reach by a bind, privileged or not: every
    /// path the derivation finds (state dir, grant, this config, the Ziti identity, the proxy
    /// credentials, the CA files, the metrics file, executables named by path).
    pub fn own_files(&self) -> Vec<PathBuf> {
        self.depends().path_values()
    }

    /// Host ports the policy keeps for the box: the derivation's (the tunneller's ports, a
    /// local egress proxy's) and `reserved_ports`.
    pub fn reserved_ports(&self) -> Vec<u16> {
        self.depends().port_values()
    }

    /// The box's bounds on release statements (`statement_serial_max_jump`,
    /// `statement_clock_skew_s`), for bundles and agent packages alike.
    pub fn statement_limits(&self) -> monky_boundary::statement::Limits {
        monky_boundary::statement::Limits {
            serial_max_jump: self.statement_serial_max_jump,
            clock_skew_s: self.statement_clock_skew_s,
        }
    }

    /// `container_limits` as the policy reads it (validated at load).
    pub fn limits(&self) -> monky_boundary::policy::Limits {
        monky_boundary::policy::Limits {
            memory: self
                .container_limits
                .memory
                .as_ref()
                .and_then(validate::byte_size),
            pids: self.container_limits.pids,
        }
    }

    /// `disk_reclaim_below` in bytes (validated at load); `None` = derived from the bundle.
    pub fn disk_reclaim_below(&self) -> Option<u64> {
        self.disk_reclaim_below
            .as_ref()
            .and_then(validate::byte_size)
    }

    pub fn docker_socket(&self) -> PathBuf {
        PathBuf::from(self.docker_host.trim_start_matches("unix://"))
    }
}

#[cfg(test)]
mod tests;

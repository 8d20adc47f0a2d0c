//! Validation of a parsed configuration: required keys, ranges, the endpoints, bind roots,
//! signing keys and windows, and last the files it names; and the defaults that depend on
//! other keys (identity path, compose project); the env_id rule. Every message names the key.

use std::path::Path;

use super::{Config, Scheme};

pub fn valid_env_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// Why a configuration is refused; every message names the key.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    #[error("{0}")]
    Value(String),
    #[error(transparent)]
    SigningKey(#[from] monky_boundary::signing::KeyError),
    #[error(transparent)]
    Window(#[from] monky_base::windows::WindowError),
}

impl Config {
    pub(super) fn validate(&mut self) -> Result<(), Invalid> {
        if self.env_id.is_empty() {
            return Err(Invalid::Value("env_id is required (e.g. env-qa-02)".into()));
        }
        if !valid_env_id(&self.env_id) {
            return Err(Invalid::Value(format!(
                "env_id {:?} is invalid: lowercase letters, digits and '-', 1-63 chars, not starting with '-'",
                self.env_id
            )));
        }
        if self.site.is_empty() {
            return Err(Invalid::Value("site is required (e.g. cbs)".into()));
        }
        if self.identity.is_empty() {
            self.identity = format!(
                "/opt/openziti/etc/identities/monky-host.{}.json",
                self.env_id
            );
        }
        for (name, host, port, proxy_port, timeout) in [
            (
                "tenancy",
                &self.tenancy.host,
                self.tenancy.port,
                self.tenancy.proxy_port,
                self.tenancy.timeout_s,
            ),
            (
                "bao",
                &self.bao.host,
                self.bao.port,
                self.bao.proxy_port,
                self.bao.timeout_s,
            ),
        ] {
            if host.is_empty() {
                return Err(Invalid::Value(format!("{name}.host must not be empty")));
            }
            if port == 0 {
                return Err(Invalid::Value(format!("{name}.port must be 1-65535")));
            }
            if proxy_port == 0 {
                return Err(Invalid::Value(format!("{name}.proxy_port must be 1-65535")));
            }
            if timeout == 0 || timeout > 600 {
                return Err(Invalid::Value(format!("{name}.timeout_s must be 1-600")));
            }
        }
        if self.bao.kv_mount.is_empty()
            || self.bao.auth_mount.is_empty()
            || self.bao.role.is_empty()
        {
            return Err(Invalid::Value(
                "bao.kv_mount, bao.auth_mount and bao.role must not be empty".into(),
            ));
        }
        if !self.state_dir.is_absolute() {
            return Err(Invalid::Value(format!(
                "state_dir {:?} must be an absolute path",
                self.state_dir
            )));
        }
        if !(30..=3600).contains(&self.sdk_refresh_s) {
            return Err(Invalid::Value("sdk_refresh_s must be 30-3600".into()));
        }
        if !(5..=86400).contains(&self.interval_s) {
            return Err(Invalid::Value("interval_s must be 5-86400".into()));
        }
        if self.healthy_timeout_s == 0 || self.healthy_timeout_s > 3600 {
            return Err(Invalid::Value("healthy_timeout_s must be 1-3600".into()));
        }
        if !(60..=86400).contains(&self.tick_budget_s) {
            return Err(Invalid::Value(
                "tick_budget_s must be 60-86400 (and fit the unit's TimeoutStartSec)".into(),
            ));
        }
        if !(1..=30 * 86400).contains(&self.retry_failed_after_s) {
            return Err(Invalid::Value(
                "retry_failed_after_s must be 1-2592000 (30 days)".into(),
            ));
        }
        if self.keep_releases == 0 {
            return Err(Invalid::Value("keep_releases must be at least 1".into()));
        }
        if !self.docker_host.starts_with("unix://") {
            return Err(Invalid::Value(format!(
                "docker_host {:?} is not supported: only unix:///path/to/docker.sock",
                self.docker_host
            )));
        }
        if self.compose_project.is_empty() {
            self.compose_project = format!("monky-{}", self.env_id);
        }
        if self.docker_bin.is_empty() || self.compose_bin.is_empty() {
            return Err(Invalid::Value(
                "docker_bin and compose_bin must not be empty".into(),
            ));
        }
        monky_boundary::signing::Keys::parse(&self.bundle_signing_keys)?;
        monky_boundary::signing::Keys::parse_key("agent_signing_keys", &self.agent_signing_keys)?;
        if self.require_statements && self.bundle_signing_keys.is_empty() {
            // a statement nobody can verify binds nothing
            return Err(Invalid::Value(
                "require_statements needs bundle_signing_keys (the keys that sign them)".into(),
            ));
        }
        if !(1..=monky_boundary::statement::FIRST_SERIAL_CAP)
            .contains(&self.statement_serial_max_jump)
        {
            return Err(Invalid::Value(format!(
                "statement_serial_max_jump {} must be 1-2^53 (0 would refuse every new release)",
                self.statement_serial_max_jump
            )));
        }
        if self.statement_clock_skew_s > 86_400 {
            return Err(Invalid::Value(format!(
                "statement_clock_skew_s {} must be 0-86400 (a day is more than any clock should drift)",
                self.statement_clock_skew_s
            )));
        }
        if !(10..=86_400).contains(&self.agent_update_probation_s) {
            return Err(Invalid::Value(format!(
                "agent_update_probation_s {} must be 10-86400 (a new agent needs time for one tick)",
                self.agent_update_probation_s
            )));
        }
        monky_base::windows::Windows::parse(&self.apply_windows, &self.apply_windows_tz)?;
        if !self.metrics_textfile.is_empty()
            && (!Path::new(&self.metrics_textfile).is_absolute()
                || !self.metrics_textfile.ends_with(".prom"))
        {
            return Err(Invalid::Value(format!(
                "metrics_textfile {:?} must be an absolute path ending in .prom (node_exporter reads only those)",
                self.metrics_textfile
            )));
        }
        for r in &self.bind_roots {
            let bad = !r.is_absolute()
                || r.components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
                || monky_boundary::policy::PRIVATE_TREES
                    .iter()
                    .any(|p| r.starts_with(p) || Path::new(p).starts_with(r));
            if bad || r == Path::new("/") {
                return Err(Invalid::Value(format!(
                    "bind_roots entry {r:?} must be an absolute directory outside the system and \
                     private trees (see docs/POLICY.md)"
                )));
            }
        }
        if let Some(m) = &self.container_limits.memory {
            if byte_size(m).is_none_or(|b| b == 0) {
                return Err(Invalid::Value(format!(
                    "container_limits.memory {} is not a byte size (e.g. 512m, 2g, 1073741824)",
                    serde_yaml_ng::to_string(m).unwrap_or_default().trim()
                )));
            }
        }
        if let Some(m) = &self.disk_reclaim_below {
            if byte_size(m).is_none() {
                return Err(Invalid::Value(format!(
                    "disk_reclaim_below {} is not a byte size (e.g. 10g, 512m, 10737418240)",
                    serde_yaml_ng::to_string(m).unwrap_or_default().trim()
                )));
            }
        }
        if self.container_limits.pids == Some(0) {
            return Err(Invalid::Value(
                "container_limits.pids must be at least 1 (leave it out for no ceiling)".into(),
            ));
        }
        if self.reserved_ports.contains(&0) {
            return Err(Invalid::Value("reserved_ports: 0 is not a port".into()));
        }
        for p in &self.network_pools {
            if monky_base::cidr::Cidr::parse(p).is_none() {
                return Err(Invalid::Value(format!(
                    "network_pools: {p:?} is not an address prefix (e.g. 172.20.0.0/16, fd00:10::/48)"
                )));
            }
        }
        let ep = &self.egress_proxy;
        if !ep.url.is_empty() {
            let u = monky_wire::egress::ProxyUrl::parse(&ep.url)
                .map_err(|e| Invalid::Value(format!("{e} (url)")))?;
            if u.credentials.is_some() {
                return Err(Invalid::Value(
                    "egress_proxy.url carries credentials: put `user:password` in egress_proxy.credentials_file (0600) instead".into(),
                ));
            }
        }
        monky_wire::egress::NoProxy::parse(ep.no_proxy.iter().map(String::as_str))
            .map_err(|e| Invalid::Value(e.to_string()))?;
        if !ep.credentials_file.is_empty() && !Path::new(&ep.credentials_file).is_absolute() {
            return Err(Invalid::Value(
                "egress_proxy.credentials_file must be an absolute path".into(),
            ));
        }
        // last: a file on disk, after every check of the text itself
        for (name, scheme, ca) in [
            ("tenancy", self.tenancy.scheme, &self.tenancy.ca_file),
            ("bao", self.bao.scheme, &self.bao.ca_file),
        ] {
            if scheme == Scheme::Https && !ca.is_empty() && !Path::new(ca).is_file() {
                return Err(Invalid::Value(format!(
                    "{name}.ca_file {ca:?} does not exist (needed for https)"
                )));
            }
        }
        Ok(())
    }
}

/// A byte size from the config: a number of bytes or compose's `512m` form.
pub(super) fn byte_size(v: &serde_yaml_ng::Value) -> Option<u64> {
    match v {
        serde_yaml_ng::Value::Number(n) => n.as_u64(),
        serde_yaml_ng::Value::String(s) => monky_boundary::policy::rules::parse_bytes(s),
        _ => None,
    }
}

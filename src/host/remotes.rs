//! The two remotes, tenancy and OpenBao, built from the config: the transport's connector, each
//! endpoint, and an HTTP client per endpoint. The tick (`agent`) and the CLI's `status` and
//! `diagnose` build their clients here.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, Transport};
use zeroize::Zeroizing;

use monky_wire::bao::Bao;
use monky_wire::egress::{Credentials, Egress, EgressError, NoProxy, ProxyRoute, ProxyUrl};
use monky_wire::http::HttpClient;
use monky_wire::tenancy::Tenancy;
use monky_wire::transport::{self, Dialer, Endpoint, TransportError};

/// The configured transport, which makes each endpoint's connector. `system` gets the box's
/// egress route here, once (an unusable credentials file is a setup failure, exit 1).
pub fn connector(cfg: &Config) -> Result<Dialer, TransportError> {
    Ok(match cfg.transport {
        Transport::System => {
            Dialer::System(egress(cfg).map_err(|e| TransportError::setup(e.to_string()))?)
        }
        Transport::Proxy => Dialer::Proxy,
        Transport::Sdk => Dialer::Sdk(Arc::new({
            // process-wide, for contexts loaded from now on (a reload that changes it re-executes)
            ziti_sys::set_refresh_interval(cfg.sdk_refresh_s.min(u64::from(u32::MAX)) as u32);
            let egress = egress(cfg).map_err(|e| TransportError::setup(e.to_string()))?;
            egress.register_secrets();
            transport::sdk::SdkConnector::with_egress(
                Path::new(&cfg.identity),
                Duration::from_secs(cfg.tenancy.timeout_s.max(cfg.bao.timeout_s)),
                &egress,
            )?
        })),
    })
}

pub fn endpoints(cfg: &Config) -> (Endpoint, Endpoint) {
    (
        Endpoint {
            label: "tenancy",
            service: cfg.tenancy.service.clone(),
            host: cfg.tenancy.host.clone(),
            port: cfg.tenancy.port,
            proxy_port: cfg.tenancy.proxy_port,
            timeout: Duration::from_secs(cfg.tenancy.timeout_s),
        },
        Endpoint {
            label: "openbao",
            service: cfg.bao.service.clone(),
            host: cfg.bao.host.clone(),
            port: cfg.bao.port,
            proxy_port: cfg.bao.proxy_port,
            timeout: Duration::from_secs(cfg.bao.timeout_s),
        },
    )
}

/// The two remotes: the real ones by default, fakes in the agent's unit tests.
pub struct Clients<T = Tenancy, V = Bao> {
    pub tenancy: T,
    pub bao: V,
}

impl Clients {
    pub fn tenancy(&self) -> &Tenancy {
        &self.tenancy
    }

    pub fn bao(&self) -> &Bao {
        &self.bao
    }
}

/// The HTTP clients of both remotes over `dialer`; `Err` names what is unusable (a CA file).
pub fn clients(cfg: &Config, dialer: &Dialer) -> Result<Clients, monky_wire::http::SetupError> {
    let (t, b) = endpoints(cfg);
    let system = monky_wire::http::Roots::default();
    let th = HttpClient::new(
        dialer.connector(&t),
        t,
        cfg.tenancy.scheme,
        &cfg.tenancy.ca_file,
        &system,
    )?;
    let bh = HttpClient::new(
        dialer.connector(&b),
        b,
        cfg.bao.scheme,
        &cfg.bao.ca_file,
        &system,
    )?;
    Ok(Clients {
        tenancy: Tenancy::new(th),
        bao: Bao::new(bh, &cfg.bao.auth_mount, &cfg.bao.role),
    })
}

/// The box's egress proxy route: `egress_proxy`, else `HTTPS_PROXY`/`https_proxy` (as curl
/// and Go read them); `no_proxy` merged with `NO_PROXY`/`no_proxy`. Credentials come only from
/// `credentials_file` (which wins) or the environment URL.
pub fn egress(cfg: &Config) -> Result<Egress, EgressError> {
    egress_from(cfg, |k| std::env::var(k).ok())
}

pub fn egress_from(
    cfg: &Config,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Egress, EgressError> {
    let first = |keys: &[&str]| {
        keys.iter()
            .filter_map(|k| env(k))
            .find(|v| !v.trim().is_empty())
    };
    let ep = &cfg.egress_proxy;
    let from_env;
    let url = if ep.url.is_empty() {
        from_env = first(&["HTTPS_PROXY", "https_proxy"]).map(Zeroizing::new);
        from_env.as_ref().map(|u| u.trim().to_string())
    } else {
        Some(ep.url.clone())
    };
    let env_no_proxy: Vec<String> = ["NO_PROXY", "no_proxy"]
        .iter()
        .filter_map(|k| env(k))
        .collect();
    let no_proxy = NoProxy::parse(
        ep.no_proxy
            .iter()
            .chain(env_no_proxy.iter())
            .map(String::as_str),
    )?;
    let Some(url) = url.map(Zeroizing::new) else {
        return Ok(Egress::new(None, no_proxy));
    };
    let parsed = ProxyUrl::parse(&url)?;
    let credentials = if ep.credentials_file.is_empty() {
        parsed.credentials
    } else {
        Some(read_credentials(Path::new(&ep.credentials_file))?)
    };
    Ok(Egress::new(
        Some(ProxyRoute {
            host: parsed.host,
            port: parsed.port,
            credentials,
        }),
        no_proxy,
    ))
}

/// `credentials_file`: a regular file (not a link) only its owner can read, one `user:password`.
fn read_credentials(path: &Path) -> Result<Credentials, EgressError> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let bad = |why: String| EgressError(format!("credentials_file {}: {why}", path.display()));
    let meta = std::fs::symlink_metadata(path).map_err(|e| bad(e.to_string()))?;
    let ft = meta.file_type();
    if ft.is_symlink() || ft.is_fifo() || ft.is_socket() || !ft.is_file() {
        return Err(bad("not a regular file".into()));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(bad(format!(
            "mode {mode:o}: it must be readable by its owner only (chmod 600)"
        )));
    }
    let text = Zeroizing::new(std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?);
    Credentials::parse(&text).map_err(|e| bad(e.0))
}

#[cfg(test)]
mod egress_tests {
    use super::*;

    fn cfg(url: &str, no_proxy: &[&str], creds: &str) -> Config {
        let mut c = Config::default();
        c.egress_proxy.url = url.into();
        c.egress_proxy.no_proxy = no_proxy.iter().map(|s| s.to_string()).collect();
        c.egress_proxy.credentials_file = creds.into();
        c
    }

    #[test]
    fn config_wins_then_the_environment_and_no_proxy_merges() {
        let env = |k: &str| match k {
            "HTTPS_PROXY" => Some("http://envuser:envpw@envproxy:8080".to_string()),
            "https_proxy" => Some("http://lower:3128".to_string()),
            "NO_PROXY" => Some("a.example,10.0.0.0/8".to_string()),
            "no_proxy" => Some(".b.example".to_string()),
            _ => None,
        };
        let e = egress_from(&cfg("http://cfgproxy:3128", &["c.example"], ""), env).unwrap();
        let p = e.proxy().unwrap();
        assert_eq!(
            (p.host.as_str(), p.port, p.credentials.is_none()),
            ("cfgproxy", 3128, true)
        );
        for h in ["a.example", "x.b.example", "c.example", "10.1.2.3"] {
            assert!(e.route(h).is_none(), "{h} direct");
        }
        assert!(e.route("tenancy.example").is_some());

        let e = egress_from(&cfg("", &[], ""), env).unwrap();
        let p = e.proxy().unwrap();
        assert_eq!((p.host.as_str(), p.port), ("envproxy", 8080));
        assert_eq!(p.credentials.as_ref().unwrap().password.as_str(), "envpw");

        let lower_only = |k: &str| (k == "https_proxy").then(|| "http://lower:3128".to_string());
        assert_eq!(
            egress_from(&cfg("", &[], ""), lower_only)
                .unwrap()
                .proxy()
                .unwrap()
                .host,
            "lower"
        );
        assert!(egress_from(&cfg("", &[], ""), |_| None)
            .unwrap()
            .proxy()
            .is_none());
    }

    #[test]
    fn the_credentials_file_is_owner_only_and_wins_over_the_env_url() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("proxy.cred");
        std::fs::write(&f, "filebob:filepw\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        let c = cfg("", &[], f.to_str().unwrap());
        let env = |k: &str| (k == "HTTPS_PROXY").then(|| "http://u:envpw@p:1".to_string());
        let e = egress_from(&c, env).unwrap_err().to_string();
        assert!(e.contains("mode 640") && e.contains("proxy.cred"), "{e}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = egress_from(&c, env).unwrap();
        let cr = e.proxy().unwrap().credentials.as_ref().unwrap();
        assert_eq!(
            (cr.user.as_str(), cr.password.as_str()),
            ("filebob", "filepw")
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let e = egress_from(&cfg("", &[], link.to_str().unwrap()), env).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let missing = egress_from(&cfg("", &[], "/nonexistent/cred"), env).unwrap_err();
        assert!(
            missing.to_string().contains("/nonexistent/cred"),
            "{missing}"
        );
    }
}

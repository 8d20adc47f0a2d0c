//! The two remotes, tenancy and OpenBao, built from the config: the transport's connector, each
//! endpoint, and an HTTP client per endpoint. The tick (`agent`) and the CLI's `status` and
//! `diagnose` build their clients here.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::host::config::{Config, Transport};
use crate::wire::bao::Bao;
use crate::wire::http::HttpClient;
use crate::wire::tenancy::Tenancy;
use crate::wire::transport::{self, Dialer, Endpoint, TransportError};

/// The configured transport, which makes each endpoint's connector.
pub fn connector(cfg: &Config) -> Result<Dialer, TransportError> {
    Ok(match cfg.transport {
        Transport::System => Dialer::System,
        Transport::Proxy => Dialer::Proxy,
        Transport::Sdk => Dialer::Sdk(Arc::new({
            // process-wide, for contexts loaded from now on (a reload that changes it re-executes)
            ziti_sys::set_refresh_interval(cfg.sdk_refresh_s.min(u64::from(u32::MAX)) as u32);
            transport::sdk::SdkConnector::new(
                Path::new(&cfg.identity),
                Duration::from_secs(cfg.tenancy.timeout_s.max(cfg.bao.timeout_s)),
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
    pub(crate) tenancy: T,
    pub(crate) bao: V,
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
pub fn clients(cfg: &Config, dialer: &Dialer) -> Result<Clients, crate::wire::http::SetupError> {
    let (t, b) = endpoints(cfg);
    let system = crate::wire::http::Roots::default();
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

//! The diagnostics' `egress` section: which way each transport target goes, and dockerd's own
//! proxy (issue 34).

use serde_json::{json, Value};

use crate::ports::EngineApi;
use monky_host::config::{Config, Transport};

/// The `egress` part of the bundle: which way each transport target goes, and whether dockerd
/// has a proxy of its own (registry pulls are dockerd's), with a warning when the agent uses a
/// proxy and dockerd has none.
pub async fn egress_section<E: EngineApi>(
    cfg: &Config,
    egress: &monky_wire::egress::Egress,
    engine: &E,
) -> Value {
    let route = |host: &str, proxy_port: u16| match cfg.transport {
        Transport::System => egress.describe_for(host),
        Transport::Proxy => format!("direct (loopback 127.0.0.1:{proxy_port}: never proxied)"),
        // the services are dialled through the mesh; the controller's line is the sdk's
        Transport::Sdk => "over the Ziti mesh".to_string(),
    };
    let mut targets = vec![
        json!({"target": "tenancy", "host": cfg.tenancy.host, "port": cfg.tenancy.port,
            "route": route(&cfg.tenancy.host, cfg.tenancy.proxy_port)}),
        json!({"target": "openbao", "host": cfg.bao.host, "port": cfg.bao.port,
            "route": route(&cfg.bao.host, cfg.bao.proxy_port)}),
    ];
    // hook (issue 34, sdk): the controller (and edge routers) through the SDK's connector
    sdk_egress_targets(cfg, egress, &mut targets);
    let agent_proxy = egress.proxy().filter(|_| cfg.transport != Transport::Proxy);
    let dockerd = match engine.proxy_settings().await {
        Ok(p) => json!({"http_proxy": p.http_proxy, "https_proxy": p.https_proxy,
            "no_proxy": p.no_proxy, "any": p.any()}),
        Err(e) => json!({"error": e.to_string()}),
    };
    let warning = (agent_proxy.is_some() && dockerd["any"] == false).then(|| {
        "the agent uses an egress proxy but dockerd has none: image pulls are dockerd's and \
         will not reach a registry outside; give dockerd a proxy \
         (/etc/systemd/system/docker.service.d/http-proxy.conf, docs/OPERATIONS.md)"
            .to_string()
    });
    json!({
        "proxy": agent_proxy.map(|p| p.shown()),
        "basic_auth": agent_proxy.map(|p| p.credentials.is_some()),
        "targets": targets,
        "dockerd": dockerd,
        "warning": warning,
    })
}

/// The `sdk` transport's own targets: the controller its identity names and, behind a proxy,
/// the edge routers (which the controller names at run time, so no address here).
fn sdk_egress_targets(cfg: &Config, egress: &monky_wire::egress::Egress, targets: &mut Vec<Value>) {
    if cfg.transport != Transport::Sdk {
        return;
    }
    match monky_wire::transport::sdk::controller_address(std::path::Path::new(&cfg.identity)) {
        Ok((host, port)) => targets.push(json!({"target": "controller", "host": host,
            "port": port, "route": egress.describe_for(&host)})),
        Err(e) => targets.push(json!({"target": "controller", "route": format!("unknown ({e})")})),
    }
    if egress.proxy().is_some() {
        targets.push(json!({"target": "edge routers",
            "route": "through the proxy, unless no_proxy lists a router's host"}));
    }
}

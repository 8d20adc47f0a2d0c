//! The engine guard on its own, against the real Docker engine: what compose needs is
//! forwarded (with real answers), what it does not need is refused with a 403 naming the rule,
//! and a refused create leaves nothing behind.

use std::path::Path;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use monky_deployd::boundary::BoxFacts;
use monky_deployd::guard::Guard;

use crate::common::*;

async fn call(sock: &Path, method: Method, path: &str, body: &str) -> (u16, String) {
    let s = tokio::net::UnixStream::connect(sock).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(s))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "docker")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let r = send.send_request(req).await.unwrap();
    let status = r.status().as_u16();
    let b = r.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&b).into_owned())
}

#[test]
fn forwards_what_compose_needs_and_refuses_the_rest() {
    require_docker();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let d = tempfile::tempdir().unwrap();
        let project = format!("guard-it-{}", std::process::id());
        let g = Guard::start(
            Path::new("/var/run/docker.sock"),
            &d.path().join("guard"),
            BoxFacts {
                project: project.clone(),
                release_dir: Some(d.path().to_path_buf()),
                ..Default::default()
            },
        )
        .unwrap();
        let sock = d.path().join("guard/engine.sock");
        let host = g.docker_host();
        assert_eq!(host, format!("unix://{}", sock.display()));
        // forwarded, with the engine's own answer
        let (st, body) = call(&sock, Method::GET, "/v1.41/_ping", "").await;
        assert_eq!((st, body.as_str()), (200, "OK"));
        let (st, body) = call(&sock, Method::GET, "/v1.41/info", "").await;
        assert_eq!(st, 200);
        assert!(body.contains("DockerRootDir"), "{body}");
        // refused endpoints
        for (m, p) in [
            (Method::POST, "/v1.41/build"),
            (Method::POST, "/v1.41/plugins/pull?remote=x"),
            (Method::POST, "/v1.41/swarm/init"),
            (Method::POST, "/v1.41/images/create?fromSrc=-"),
            (Method::POST, "/v1.41/containers/prune"),
        ] {
            let (st, body) = call(&sock, m.clone(), p, "{}").await;
            assert_eq!(st, 403, "{m} {p}: {body}");
            assert!(body.contains("refused by monky-deployd"), "{body}");
        }
        // a privileged create is refused and creates nothing
        let labels = format!(r#"{{"com.docker.compose.project":"{project}","com.docker.compose.service":"x"}}"#);
        let bad = format!(
            r#"{{"Image":"{IMAGE}","Cmd":["true"],"Labels":{labels},"HostConfig":{{"Binds":["/var/run/docker.sock:/s"]}}}}"#
        );
        let (st, body) = call(&sock, Method::POST, "/v1.41/containers/create?name=guard-bad", &bad).await;
        assert_eq!(st, 403, "{body}");
        assert!(body.contains("/var/run/docker.sock"), "{body}");
        let (st, _) = call(&sock, Method::GET, "/v1.41/containers/guard-bad/json", "").await;
        assert_eq!(st, 403, "inspecting a container that does not exist is refused too");
        let o = std::process::Command::new("docker")
            .args(["inspect", "guard-bad"])
            .output()
            .unwrap();
        assert!(!o.status.success(), "the refused container exists");
        // a container without the project's label is refused; one with it is created
        let foreign = format!(r#"{{"Image":"{IMAGE}","Cmd":["true"]}}"#);
        let (st, _) = call(&sock, Method::POST, "/v1.41/containers/create", &foreign).await;
        assert_eq!(st, 403);
        let good = format!(r#"{{"Image":"{IMAGE}","Cmd":["true"],"Labels":{labels},"HostConfig":{{"Memory":67108864}}}}"#);
        let name = format!("{project}-x-1");
        let (st, body) = call(&sock, Method::POST, &format!("/v1.41/containers/create?name={name}"), &good).await;
        assert_eq!(st, 201, "{body}");
        // what a passed create made is the project's without a look-up (by its full id); by
        // name, the guard asks the engine
        let id = serde_json::from_str::<serde_json::Value>(&body).unwrap()["Id"]
            .as_str()
            .unwrap()
            .to_string();
        let n0 = g.lookups();
        let (st, _) = call(&sock, Method::GET, &format!("/v1.41/containers/{id}/json"), "").await;
        assert_eq!((st, g.lookups()), (200, n0));
        let (st, _) = call(&sock, Method::GET, &format!("/v1.41/containers/{name}/json"), "").await;
        assert_eq!((st, g.lookups()), (200, n0 + 1));
        // a network it made: removed without a look-up; once removed, its name is forgotten
        let net = format!("{project}_net");
        let nb = format!(r#"{{"Name":"{net}","Driver":"bridge","Labels":{{"com.docker.compose.project":"{project}"}}}}"#);
        let (st, body) = call(&sock, Method::POST, "/v1.41/networks/create", &nb).await;
        assert_eq!(st, 201, "{body}");
        let n1 = g.lookups();
        let (st, body) = call(&sock, Method::DELETE, &format!("/v1.41/networks/{net}"), "").await;
        assert_eq!((st, g.lookups()), (204, n1), "{body}");
        let (st, body) = call(&sock, Method::DELETE, &format!("/v1.41/networks/{net}"), "").await;
        assert_eq!((st, g.lookups()), (403, n1 + 1), "{body}");
        assert!(body.contains("does not exist"), "{body}");
        let (st, _) = call(&sock, Method::POST, &format!("/v1.41/containers/{name}/exec"), "{}").await;
        assert_eq!(st, 403, "exec is never forwarded");
        let (st, _) = call(&sock, Method::DELETE, &format!("/v1.41/containers/{name}"), "").await;
        assert_eq!(st, 204);
        let denied = g.denied();
        assert!(denied.iter().any(|d| d.guard_text().contains("/v1.41/build") || d.guard_text().contains("/build")), "{denied:?}");
        assert!(denied.iter().any(|d| d.guard_text().contains("container for service x")), "{denied:?}");
        drop(g);
        assert!(!sock.exists(), "socket left behind");
    });
}

/// The box's address space at the guard, without compose: a network create whose subnet is
/// outside the pool or over a host route is refused; a connect or create asking for an address
/// outside the network's own subnet is refused; inside it passes.
#[test]
fn network_subnets_and_addresses_are_judged_at_the_guard() {
    use monky_deployd::base::cidr::Cidr;
    use monky_deployd::boundary::policy::netpool::AddressSpace;
    require_docker();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let d = tempfile::tempdir().unwrap();
        let project = format!("guard-net-{}", std::process::id());
        let mut net = AddressSpace::new(&["10.229.0.0/16".into()]);
        net.take(Cidr::parse("10.229.5.0/24").unwrap(), "a route of the host via lo");
        let g = Guard::start(
            Path::new("/var/run/docker.sock"),
            &d.path().join("guard"),
            BoxFacts {
                project: project.clone(),
                release_dir: Some(d.path().to_path_buf()),
                net: Some(net),
                ..Default::default()
            },
        )
        .unwrap();
        let sock = d.path().join("guard/engine.sock");
        let labels = format!(r#"{{"com.docker.compose.project":"{project}","com.docker.compose.service":"x"}}"#);
        let name = format!("{project}_n");
        let create = |subnet: &str| {
            format!(
                r#"{{"Name":"{name}","Driver":"bridge","Labels":{labels},"IPAM":{{"Config":[{{"Subnet":"{subnet}"}}]}}}}"#
            )
        };
        for (subnet, why) in [
            ("10.229.5.0/25", "overlaps 10.229.5.0/24, a route of the host via lo"),
            ("10.230.0.0/24", "outside the box's network_pools"),
            ("169.254.169.0/24", "outside the box's network_pools"),
        ] {
            let (st, body) = call(&sock, Method::POST, "/v1.41/networks/create", &create(subnet)).await;
            assert_eq!(st, 403, "{subnet}: {body}");
            assert!(body.contains("refused by monky-deployd"), "{body}");
            let denied = g.denied();
            assert!(
                denied.iter().any(|d| d.to_string() == format!("NETWORK_REFUSED: {name} {subnet} ({why})")),
                "{denied:?}"
            );
        }
        let (st, body) = call(&sock, Method::POST, "/v1.41/networks/create", &create("10.229.1.0/24")).await;
        assert_eq!(st, 201, "{body}");
        let _cleanup = NetGone(name.clone());
        let c = format!("{project}-x-1");
        let ep = |a: &str| format!(r#"{{"IPAMConfig":{{"IPv4Address":"{a}"}}}}"#);
        let body = |a: &str| {
            format!(
                r#"{{"Image":"{IMAGE}","Cmd":["true"],"Labels":{labels},"HostConfig":{{"NetworkMode":"{name}"}},"NetworkingConfig":{{"EndpointsConfig":{{"{name}":{}}}}}}}"#,
                ep(a)
            )
        };
        let (st, b) = call(&sock, Method::POST, &format!("/v1.41/containers/create?name={c}"), &body("10.229.2.9")).await;
        assert_eq!(st, 403, "{b}");
        assert!(g.denied().iter().any(|d| d.guard_text().contains(&format!("{name} 10.229.2.9 (outside the network's own subnet)"))));
        let (st, b) = call(&sock, Method::POST, &format!("/v1.41/containers/create?name={c}"), &body("10.229.1.9")).await;
        assert_eq!(st, 201, "{b}");
        // connect: the address asked for is judged as at create
        let o = std::process::Command::new("docker")
            .args(["network", "disconnect", &name, &c])
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        let conn = |a: &str| format!(r#"{{"Container":"{c}","EndpointConfig":{}}}"#, ep(a));
        let (st, b) = call(&sock, Method::POST, &format!("/v1.41/networks/{name}/connect"), &conn("169.254.169.254")).await;
        assert_eq!(st, 403, "{b}");
        assert!(g.denied().iter().any(|d| d.guard_text().contains("169.254.169.254 (outside the network's own subnet)")));
        let (st, b) = call(&sock, Method::POST, &format!("/v1.41/networks/{name}/connect"), &conn("10.229.1.10")).await;
        assert_eq!(st, 200, "{b}");
        let (st, _) = call(&sock, Method::DELETE, &format!("/v1.41/containers/{c}?force=1"), "").await;
        assert_eq!(st, 204);
    });
}

/// Removes a network by name on drop.
struct NetGone(String);

impl Drop for NetGone {
    fn drop(&mut self) {
        let _ = std::process::Command::new("docker")
            .args(["network", "rm", &self.0])
            .output();
    }
}

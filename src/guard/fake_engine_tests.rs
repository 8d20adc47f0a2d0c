//! The engine guard against a fake Engine API on a Unix socket (fast tier, no dockerd), for
//! what needs the engine's state (issue 41): who holds a container name, which projects are on
//! the box, and what the guard forwards for a bind of a verified file — read-only, so no
//! container can change a file the agent verifies and compose reads.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};

use super::{Guard, Preflight};
use monky_boundary::{BoxFacts, RefusalCode};

const PROJECT: &str = "monky-t";

/// What the fake engine holds: the containers it lists, and the create bodies it received.
#[derive(Default)]
struct Engine {
    containers: Vec<Value>,
    created: Vec<(String, Value)>,
}

/// A container as `GET /containers/json?all=1` lists it.
fn listed(id: char, name: &str, labels: Value, mounts: Value) -> Value {
    json!({"Id": id.to_string().repeat(64), "Names": [format!("/{name}")], "Labels": labels, "Mounts": mounts})
}

fn labels(project: &str, service: &str) -> Value {
    json!({"com.docker.compose.project": project, "com.docker.compose.service": service})
}

/// The mounts a create body makes, as the engine lists them (it honours `ro`).
fn mounts_of(body: &Value) -> Value {
    let mut out = Vec::new();
    for b in body["HostConfig"]["Binds"].as_array().into_iter().flatten() {
        let b = monky_boundary::volume::engine_bind(b.as_str().unwrap_or(""));
        out.push(json!({"Type": "bind", "Source": b.source, "RW": !b.read_only()}));
    }
    for m in body["HostConfig"]["Mounts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        out.push(
            json!({"Type": m["Type"], "Source": m["Source"], "RW": m["ReadOnly"] != json!(true)}),
        );
    }
    Value::Array(out)
}

fn answer(status: StatusCode, v: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap()
}

async fn serve(
    e: Arc<Mutex<Engine>>,
    req: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let method = req.method().clone();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let mut seg: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // the API version prefix compose sends (`/v1.43/…`)
    if seg
        .first()
        .is_some_and(|s| s.starts_with('v') && s[1..].starts_with(|c: char| c.is_ascii_digit()))
    {
        seg.remove(0);
    }
    let mut e = e.lock().unwrap();
    match (method, seg.as_slice()) {
        (Method::GET, ["containers", "json"]) => {
            answer(StatusCode::OK, Value::Array(e.containers.clone()))
        }
        (Method::GET, ["volumes"]) => answer(StatusCode::OK, json!({"Volumes": []})),
        (Method::GET, ["networks"]) => answer(StatusCode::OK, json!([])),
        (Method::GET, ["containers", id, "json"]) => {
            let slash = format!("/{id}");
            match e.containers.iter().find(|c| {
                c["Id"] == json!(id)
                    || c["Names"]
                        .as_array()
                        .is_some_and(|n| n.contains(&json!(slash)))
            }) {
                Some(c) => answer(
                    StatusCode::OK,
                    json!({"Id": c["Id"], "Name": slash, "Config": {"Labels": c["Labels"]}}),
                ),
                None => answer(
                    StatusCode::NOT_FOUND,
                    json!({"message": "No such container"}),
                ),
            }
        }
        (Method::POST, ["containers", "create"]) => {
            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let name = query.strip_prefix("name=").unwrap_or("").to_string();
            let id = char::from(b'0' + (e.created.len() % 10) as u8);
            let c = listed(id, &name, v["Labels"].clone(), mounts_of(&v));
            e.containers.push(c);
            e.created.push((name, v));
            answer(
                StatusCode::CREATED,
                json!({"Id": id.to_string().repeat(64), "Warnings": []}),
            )
        }
        _ => answer(StatusCode::NOT_FOUND, json!({"message": "not faked"})),
    }
}

/// The fake engine on `sock`, on a thread of its own.
fn fake_engine(sock: &Path, e: Arc<Mutex<Engine>>) {
    let l = std::os::unix::net::UnixListener::bind(sock).unwrap();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::UnixListener::from_std(l).unwrap();
            loop {
                let Ok((s, _)) = l.accept().await else {
                    continue;
                };
                let e = e.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| {
                        let e = e.clone();
                        async move { Ok::<_, std::convert::Infallible>(serve(e, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(s), svc)
                        .await;
                });
            }
        });
    });
}

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

struct Rig {
    _dir: tempfile::TempDir,
    release: PathBuf,
    guard: Guard,
    sock: PathBuf,
    engine: Arc<Mutex<Engine>>,
}

/// A release with the bundle's files (`prometheus/prometheus.yml`, `config.yml`) as staging
/// writes them, the fake engine holding `containers`, and a guard in front of it.
fn rig(containers: Vec<Value>) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let rel = state.join("releases/abc");
    std::fs::create_dir_all(rel.join("prometheus")).unwrap();
    for (f, c) in [
        ("compose.yaml", "services: {}\n"),
        (".env", "A=1\n"),
        (
            "prometheus/prometheus.yml",
            "global: {scrape_interval: 15s}\n",
        ),
        ("config.yml", "checked: true\n"),
        (
            ".monky-files",
            "compose.yaml\nconfig.yml\nprometheus/prometheus.yml\n",
        ),
    ] {
        std::fs::write(rel.join(f), c).unwrap();
    }
    let rel = std::fs::canonicalize(&rel).unwrap();
    let release_files = [
        "",
        ".env",
        "compose.yaml",
        ".monky-files",
        "prometheus/prometheus.yml",
        "config.yml",
    ]
    .iter()
    .map(|f| {
        if f.is_empty() {
            rel.clone()
        } else {
            rel.join(f)
        }
    })
    .collect();
    let facts = BoxFacts {
        project: PROJECT.into(),
        release_dir: Some(rel.clone()),
        bundle_files: vec![
            "compose.yaml".into(),
            "config.yml".into(),
            "prometheus/prometheus.yml".into(),
        ],
        release_files,
        agent_files: vec![std::fs::canonicalize(&state).unwrap()],
        ..BoxFacts::default()
    };
    let engine = Arc::new(Mutex::new(Engine {
        containers,
        ..Engine::default()
    }));
    let upstream = dir.path().join("docker.sock");
    fake_engine(&upstream, engine.clone());
    let guard = Guard::start(&upstream, &dir.path().join("guard"), facts).unwrap();
    let sock = dir.path().join("guard/engine.sock");
    Rig {
        _dir: dir,
        release: rel,
        guard,
        sock,
        engine,
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Whether a container made from `body` can write the host path `p`: only through a mount the
/// engine made writable (the kernel enforces a read-only bind; nesting a writable one inside it
/// is the invariant's refusal).
fn container_can_write(body: &Value, p: &Path) -> bool {
    mounts_of(body).as_array().unwrap().iter().any(|m| {
        m["RW"] == json!(true) && p.starts_with(m["Source"].as_str().unwrap_or("/nowhere"))
    })
}

/// What a hostile container does with every verified file it can write.
fn attack(body: &Value, release: &Path, files: &[&str]) {
    for f in files {
        if container_can_write(body, &release.join(f)) {
            std::fs::write(release.join(f), b"hacked\n").unwrap();
        }
    }
}

#[test]
fn a_bind_of_verified_files_is_forwarded_read_only_and_no_container_changes_them() {
    let r = rig(Vec::new());
    let rel = r.release.display().to_string();
    let body = json!({
        "Image": "prom/prometheus",
        "Labels": labels(PROJECT, "prom"),
        "HostConfig": {
            "Binds": [format!("{rel}/prometheus:/etc/prometheus:rw"), format!("{rel}/data:/prometheus")],
            "Mounts": [{"Type": "bind", "Source": format!("{rel}/config.yml"), "Target": "/app/config.yml", "ReadOnly": false}],
        },
    });
    let (st, out) = rt().block_on(call(
        &r.sock,
        Method::POST,
        "/v1.43/containers/create?name=monky-t-prom-1",
        &body.to_string(),
    ));
    assert_eq!(st, 201, "{out}");
    let forwarded = r.engine.lock().unwrap().created[0].1.clone();
    assert_eq!(
        forwarded["HostConfig"]["Binds"],
        json!([
            format!("{rel}/prometheus:/etc/prometheus:ro"),
            format!("{rel}/data:/prometheus")
        ]),
        "the verified files' directory read-only, the data directory as written"
    );
    assert_eq!(
        forwarded["HostConfig"]["Mounts"][0]["ReadOnly"],
        json!(true)
    );
    // the rest of the body is what compose sent
    assert_eq!(forwarded["Image"], body["Image"]);
    assert_eq!(forwarded["Labels"], body["Labels"]);
    // the container made from what the guard forwarded writes what it can: its data, never a
    // file the agent verified
    let verified = ["prometheus/prometheus.yml", "config.yml"];
    let before: Vec<Vec<u8>> = verified
        .iter()
        .map(|f| monky_boundary::beneath::read(&r.release, Path::new(f), 1 << 20).unwrap())
        .collect();
    attack(&forwarded, &r.release, &verified);
    assert!(container_can_write(&forwarded, &r.release.join("data/x")));
    for (f, b) in verified.iter().zip(&before) {
        let now = monky_boundary::beneath::read(&r.release, Path::new(f), 1 << 20).unwrap();
        assert_eq!(&now, b, "{f} changed");
    }
    // and before the next compose call reads the release, the preflight finds nothing on the
    // box that can write it
    rt().block_on(r.guard.preflight()).unwrap();
    // the control: the body as compose sent it would have let the container change both files,
    // and the preflight refuses a box where such a container exists
    attack(&body, &r.release, &verified);
    for f in verified {
        let now = monky_boundary::beneath::read(&r.release, Path::new(f), 1 << 20).unwrap();
        assert_eq!(now, b"hacked\n", "{f}");
    }
    r.engine.lock().unwrap().containers.push(listed(
        'e',
        "old",
        labels(PROJECT, "prom"),
        mounts_of(&body),
    ));
    match rt().block_on(r.guard.preflight()) {
        Err(Preflight::Refused(x)) => assert_eq!(x.code, RefusalCode::BindSourceRefused, "{x}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_free_standing_container_name_is_the_boxs_to_hand_out_never_another_projects() {
    let r = rig(vec![
        listed('a', "nextcloud", labels("other", "app"), json!([])),
        listed(
            'b',
            "traefik-proxy-1",
            labels("traefik", "proxy"),
            json!([]),
        ),
        listed('c', "wiki", labels(PROJECT, "web"), json!([])),
        listed('d', "handmade", json!({}), json!([])),
    ]);
    let create = |name: &str, service: &str| {
        let body = json!({"Image": "x", "Labels": labels(PROJECT, service)});
        rt().block_on(call(
            &r.sock,
            Method::POST,
            &format!("/v1.43/containers/create?name={name}"),
            &body.to_string(),
        ))
    };
    for (name, service, why) in [
        ("nextcloud", "web", "held by a container of project other"),
        (
            "handmade",
            "web",
            "held by a container of no compose project",
        ),
        ("traefik-web-1", "web", "project traefik owns that prefix"),
        ("wiki", "db", "held by its service web"),
    ] {
        let (st, out) = create(name, service);
        assert_eq!(st, 403, "{name}: {out}");
        let want = format!("NAME_REFUSED: container {name} (outside project {PROJECT}: {why})");
        assert!(
            r.guard.denied().iter().any(|d| d.to_string() == want),
            "{want} not in {:?}",
            r.guard.denied()
        );
    }
    // the pure rule, the file passes' own: the box's namespace
    let (st, _) = create("monky-other-web-1", "web");
    assert_eq!(st, 403);
    // free names, and one this service already holds (compose recreating it), pass
    for (name, service) in [
        ("gitea", "web"),
        ("0123456789ab_gitea", "web"),
        ("wiki", "web"),
    ] {
        let (st, out) = create(name, service);
        assert_eq!(st, 201, "{name}: {out}");
    }
    // a rename to a name another project's container holds is refused too
    let id = r.engine.lock().unwrap().containers.last().unwrap()["Id"]
        .as_str()
        .unwrap()
        .to_string();
    let (st, out) = rt().block_on(call(
        &r.sock,
        Method::POST,
        &format!("/v1.43/containers/{id}/rename?name=nextcloud"),
        "",
    ));
    assert_eq!(st, 403, "{out}");
}

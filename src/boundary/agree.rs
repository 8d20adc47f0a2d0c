//! The pure twin of tests/invariant.rs `layers_agree_on_the_corpus`: for every corpus shape
//! that needs no engine state, the file passes and the engine guard's rules — fed the create
//! bodies compose sends for the file — reach the same verdict, and the one the corpus expects.
//! "full" is the file passes then the guard; "guard alone" is what a test build with the file
//! policy off gets. The engine's answers the guard asks for (whose is this object, which subnet
//! has that network) come from what this compose call creates: anything else is another's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as J};
use serde_yaml_ng::Value as Y;

use super::{BoxFacts, Refusal, RefusalCode};
use crate::compose_check;
use crate::policy::{self, netpool};

const PROJECT: &str = "monky-agree";
const FOREIGN: &str = "monky-agree-foreign";
/// The box's `network_pools` is `corpus_pool(NET)` (tests/real/invariant.rs: one per flavour).
const NET: u16 = 233;

struct Box_ {
    tmp: PathBuf,
    release: PathBuf,
    state: PathBuf,
    marker: PathBuf,
    rt: PathBuf,
    rl: PathBuf,
    port: u16,
}

fn the_box() -> Box_ {
    let tmp = std::env::temp_dir().join(format!("monky-agree-{}", std::process::id()));
    let state = tmp.join("state");
    Box_ {
        release: state.join("releases/abc"),
        marker: tmp.join("marker"),
        rt: tmp.join("rt"),
        rl: PathBuf::from(format!("/var/lib/monky-agree-root-{}", std::process::id())),
        port: 18760,
        state,
        tmp,
    }
}

fn facts(b: &Box_, release: &Path) -> BoxFacts {
    let mut net = netpool::AddressSpace::new(&[corpus_pool(NET)]);
    net.take(
        monky_base::cidr::Cidr::parse("169.254.169.254/32").unwrap(),
        "the metadata address",
    );
    let files = ["compose.yaml", "config/app.conf"];
    let mut release_files = vec![release.to_path_buf(), release.join(".env")];
    release_files.extend(files.iter().map(|f| release.join(f)));
    BoxFacts {
        project: PROJECT.into(),
        release_dir: Some(release.to_path_buf()),
        bundle_files: files.iter().map(|f| f.to_string()).collect(),
        release_files,
        bind_roots: vec![b.rt.clone(), b.rl.clone()],
        agent_files: vec![b.state.clone()],
        engine_paths: vec!["/var/lib/docker".into(), "/var/run/docker.sock".into()],
        reserved_ports: vec![22, 18200, 18443, b.port + 5],
        net: Some(net),
        ..BoxFacts::default()
    }
}

include!("agree/corpus.rs");

/// The corpus on this box: every case but the one only an engine's state can judge (another
/// app's image in the local store).
fn corpus(b: &Box_) -> Vec<CorpusCase> {
    corpus_cases(&CorpusBox {
        image: "busybox".into(),
        command: "[sleep, \"600\"]".into(),
        marker: b.marker.display().to_string(),
        state: b.state.display().to_string(),
        root_tmp: b.rt.display().to_string(),
        root_lib: b.rl.display().to_string(),
        foreign: FOREIGN.into(),
        port: b.port,
        net: NET,
        local_image: None,
        systempaths: true,
        use_api_socket: true,
    })
}

fn s(v: &Y) -> String {
    match v {
        Y::String(s) => s.clone(),
        Y::Number(n) => n.to_string(),
        Y::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

fn get<'a>(m: &'a Y, k: &str) -> Option<&'a Y> {
    m.as_mapping().and_then(|m| m.get(k))
}

fn list(v: Option<&Y>) -> Vec<String> {
    v.and_then(|v| v.as_sequence())
        .map(|l| l.iter().map(s).collect())
        .unwrap_or_default()
}

/// What compose asks the engine to create for a file: `(kind, body, query name)` in order
/// (networks, volumes, then each service's container).
fn creates(doc: &Y, release: &Path) -> Vec<(&'static str, J, String)> {
    let labels = |svc: Option<&str>| {
        let mut l = json!({"com.docker.compose.project": PROJECT});
        if let Some(svc) = svc {
            l["com.docker.compose.service"] = json!(svc);
        }
        l
    };
    let mut out = Vec::new();
    let named = |kind: &str, key: &str| {
        get(doc, kind)
            .and_then(|t| get(t, key))
            .and_then(|o| get(o, "name"))
            .map(s)
            .unwrap_or_else(|| format!("{PROJECT}_{key}"))
    };
    let external = |kind: &str, key: &str| {
        get(doc, kind)
            .and_then(|t| get(t, key))
            .and_then(|o| get(o, "external"))
            .is_some_and(|e| e.as_bool() == Some(true))
    };
    let services = get(doc, "services").and_then(|v| v.as_mapping()).unwrap();
    let needs_default = services
        .values()
        .any(|sv| get(sv, "networks").is_none() && get(sv, "network_mode").is_none());
    if needs_default {
        let n = format!("{PROJECT}_default");
        out.push((
            "network",
            json!({"Name": n, "Labels": labels(None), "Driver": "bridge"}),
            n,
        ));
    }
    for (k, v) in get(doc, "networks")
        .and_then(|n| n.as_mapping())
        .into_iter()
        .flatten()
    {
        let k = s(k);
        if external("networks", &k) {
            continue;
        }
        let name = named("networks", &k);
        let mut body = json!({"Name": name, "Labels": labels(None), "Driver": "bridge"});
        if let Some(ipam) = get(v, "ipam") {
            let config: Vec<J> = get(ipam, "config")
                .and_then(|c| c.as_sequence())
                .into_iter()
                .flatten()
                .map(|c| json!({"Subnet": get(c, "subnet").map(s).unwrap_or_default()}))
                .collect();
            body["IPAM"] = json!({"Driver": "default", "Config": config});
        }
        out.push(("network", body, name));
    }
    for (k, v) in get(doc, "volumes")
        .and_then(|n| n.as_mapping())
        .into_iter()
        .flatten()
    {
        let k = s(k);
        if external("volumes", &k) {
            continue;
        }
        let name = named("volumes", &k);
        let mut body = json!({"Name": name, "Labels": labels(None), "Driver": "local"});
        if let Some(o) = get(v, "driver_opts").and_then(|o| o.as_mapping()) {
            let opts: Map<String, J> = o.iter().map(|(k, v)| (s(k), json!(s(v)))).collect();
            body["DriverOpts"] = J::Object(opts);
        }
        out.push(("volume", body, name));
    }
    for (k, sv) in services {
        let svc = s(k);
        let mut hc = Map::new();
        let mut binds = Vec::new();
        let mut mounts = Vec::new();
        let abs = |p: &str| {
            if p.starts_with('/') {
                policy::lexical(Path::new(p))
            } else {
                policy::lexical(&release.join(p))
            }
        };
        for v in get(sv, "volumes")
            .and_then(|v| v.as_sequence())
            .into_iter()
            .flatten()
        {
            // compose's reading of the entry: the boundary's one parser
            let m = match v {
                Y::String(short) => crate::volume::short(short),
                Y::Mapping(long) => crate::volume::long(long),
                _ => continue,
            };
            match m.kind {
                crate::volume::Kind::Bind if matches!(v, Y::String(_)) => {
                    let src = abs(&m.source).display().to_string();
                    let ro = if m.read_only { ":ro" } else { "" };
                    binds.push(format!("{src}:{}{ro}", m.target));
                }
                crate::volume::Kind::Volume if matches!(v, Y::String(_)) => {
                    if !m.source.is_empty() {
                        binds.push(format!("{}:{}", named("volumes", &m.source), m.target));
                    }
                }
                _ => mounts.push(json!({
                    "Type": get(v, "type").map(s).unwrap_or_default(),
                    "Source": abs(&get(v, "source").map(s).unwrap_or_default()).display().to_string(),
                    "Target": get(v, "target").map(s).unwrap_or_default(),
                    "ReadOnly": get(v, "read_only").and_then(|r| r.as_bool()).unwrap_or(false),
                })),
            }
        }
        if get(sv, "use_api_socket").and_then(|u| u.as_bool()) == Some(true) {
            binds.push("/var/run/docker.sock:/var/run/docker.sock".into());
        }
        hc.insert("Binds".into(), json!(binds));
        hc.insert("Mounts".into(), json!(mounts));
        let mut ports: BTreeMap<String, Vec<J>> = BTreeMap::new();
        for p in list(get(sv, "ports")) {
            let parts: Vec<&str> = p.split(':').collect();
            let (ip, host, cont) = match parts.as_slice() {
                [ip, h, c] => (*ip, *h, *c),
                [h, c] => ("", *h, *c),
                _ => continue,
            };
            ports
                .entry(format!("{cont}/tcp"))
                .or_default()
                .push(json!({"HostIp": ip, "HostPort": host}));
        }
        hc.insert("PortBindings".into(), json!(ports));
        hc.insert("CapAdd".into(), json!(list(get(sv, "cap_add"))));
        hc.insert("CapDrop".into(), json!(list(get(sv, "cap_drop"))));
        hc.insert("SecurityOpt".into(), json!(list(get(sv, "security_opt"))));
        hc.insert(
            "Tmpfs".into(),
            json!(list(get(sv, "tmpfs"))
                .iter()
                .map(|t| (t.clone(), ""))
                .collect::<BTreeMap<_, _>>()),
        );
        if let Some(m) = get(sv, "sysctls").and_then(|m| m.as_mapping()) {
            let m: Map<String, J> = m.iter().map(|(k, v)| (s(k), json!(s(v)))).collect();
            hc.insert("Sysctls".into(), J::Object(m));
        }
        if let Some(o) = get(sv, "oom_score_adj").and_then(|o| o.as_i64()) {
            hc.insert("OomScoreAdj".into(), json!(o));
        }
        if let Some(u) = get(sv, "ulimits").and_then(|m| m.as_mapping()) {
            let u: Vec<J> = u
                .iter()
                .map(|(k, v)| json!({"Name": s(k), "Soft": v.as_i64(), "Hard": v.as_i64()}))
                .collect();
            hc.insert("Ulimits".into(), json!(u));
        }
        if let Some(p) = get(sv, "pid") {
            hc.insert("PidMode".into(), json!(s(p)));
        }
        if get(sv, "restart").is_some() {
            hc.insert("RestartPolicy".into(), json!({"Name": "always"}));
        }
        hc.insert("Init".into(), json!(true));
        let mut eps = Map::new();
        match get(sv, "network_mode") {
            Some(m) => {
                hc.insert("NetworkMode".into(), json!(s(m)));
            }
            None => match get(sv, "networks") {
                Some(Y::Mapping(nets)) => {
                    for (k, n) in nets {
                        let name = named("networks", &s(k));
                        let mut ep = json!({});
                        if let Some(a) = get(n, "ipv4_address") {
                            ep["IPAMConfig"] = json!({"IPv4Address": s(a)});
                        }
                        hc.insert("NetworkMode".into(), json!(name));
                        eps.insert(name, ep);
                    }
                }
                Some(l) => {
                    for k in list(Some(l)) {
                        let name = named("networks", &k);
                        hc.insert("NetworkMode".into(), json!(name));
                        eps.insert(name, json!({}));
                    }
                }
                None => {
                    let name = format!("{PROJECT}_default");
                    hc.insert("NetworkMode".into(), json!(name));
                    eps.insert(name, json!({}));
                }
            },
        }
        let mut body = json!({
            "Image": get(sv, "image").map(s).unwrap_or_default(),
            "Cmd": list(get(sv, "command")),
            "Labels": labels(Some(&svc)),
            "HostConfig": hc,
            "NetworkingConfig": {"EndpointsConfig": eps},
        });
        if let Some(h) = get(sv, "healthcheck") {
            body["Healthcheck"] = json!({"Test": list(get(h, "test"))});
        }
        let name = get(sv, "container_name")
            .map(s)
            .unwrap_or_else(|| format!("{PROJECT}-{svc}-1"));
        out.push(("container", body, name));
    }
    out
}

/// The engine guard over one compose call's creates, with the engine's answers modelled: an
/// object is the project's when this call created it.
fn guard(doc: &Y, f: &BoxFacts) -> Result<(), Refusal> {
    let release = f.release_dir.clone().unwrap();
    let mut own: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut seen: Vec<policy::HostBind> = Vec::new();
    let owned = |own: &BTreeMap<String, Vec<String>>, kind: &str, n: &str| {
        if own.get(kind).is_some_and(|l| l.iter().any(|x| x == n)) {
            Ok(())
        } else {
            Err(Refusal::engine(format!(
                "{kind} {n} belongs to something else on this box"
            )))
        }
    };
    for (kind, mut body, name) in creates(doc, &release) {
        match kind {
            "network" => {
                policy::network_create(&body, f).map_err(|r| r.for_request("network create"))?;
                let subnets: Vec<String> = body
                    .pointer("/IPAM/Config")
                    .and_then(|c| c.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["Subnet"].as_str().map(String::from))
                    .collect();
                own.entry("network".into()).or_default().push(name.clone());
                own.entry(format!("subnets:{name}"))
                    .or_default()
                    .extend(subnets);
            }
            "volume" => {
                policy::volume_create(&body, f).map_err(|r| r.for_request("volume create"))?;
                own.entry("volume".into()).or_default().push(name);
            }
            _ => {
                // as the guard does: a bind of a verified file is mounted read-only
                policy::read_only_release_binds(&mut body, f);
                let what = format!("container for service {}", refs_service(&body));
                let refs = policy::container_create(&body, f).map_err(|r| r.for_request(&what))?;
                policy::container_name(&name, &refs.service, f)?;
                for v in &refs.volumes {
                    owned(&own, "volume", v)?;
                }
                for n in &refs.networks {
                    owned(&own, "network", n)?;
                }
                for c in &refs.containers {
                    owned(&own, "container", c)?;
                }
                for (n, a) in &refs.addresses {
                    let subnets = own
                        .get(&format!("subnets:{n}"))
                        .cloned()
                        .unwrap_or_default();
                    netpool::address_refusal(n, a, &subnets)?;
                }
                policy::binds_invariant(&refs.binds, &seen, &f.release_files)
                    .map_err(|d| d.within("HostConfig.Binds").for_request(&what))?;
                seen.extend(refs.binds);
                own.entry("container".into()).or_default().push(name);
            }
        }
    }
    Ok(())
}

fn refs_service(body: &J) -> &str {
    body.pointer("/Labels/com.docker.compose.service")
        .and_then(|s| s.as_str())
        .unwrap_or("?")
}

/// The file passes: the bundle's YAML under the first pass's placeholder, then (as compose
/// would hand it back, paths relative to the release) under the release directory.
fn file_passes(doc: &Y, b: &Box_, f: &BoxFacts) -> Result<(), Refusal> {
    let first = facts(b, Path::new(compose_check::FIRST_PASS_ROOT));
    compose_check::check_bundle(doc, false, &first, &compose_check::Variables::none())?;
    compose_check::check_normalised(&interpolated(doc), false, f)?;
    Ok(())
}

/// What compose hands back and creates from: the file interpolated (the corpus sets no
/// variable: every default applies).
fn interpolated(doc: &Y) -> Y {
    compose_check::interp::interpolate_doc(doc, &compose_check::Variables::none())
}

fn class(r: &Result<(), Refusal>) -> &'static str {
    match r {
        Ok(()) => "applied",
        Err(_) => "refused",
    }
}

fn code(r: &Result<(), Refusal>) -> &'static str {
    match r {
        Ok(()) => "",
        Err(r) => r.code.as_str(),
    }
}

#[test]
fn layers_agree_on_the_corpus_pure() {
    let b = the_box();
    let f = facts(&b, &b.release);
    let mut wrong = Vec::new();
    let cases = corpus(&b);
    for c in &cases {
        let doc = compose_check::parse(c.compose.as_bytes()).unwrap();
        let alone = guard(&interpolated(&doc), &f);
        let full = file_passes(&doc, &b, &f).and_then(|()| guard(&interpolated(&doc), &f));
        if class(&full) != class(&alone)
            || class(&full) != c.expect
            || code(&full) != c.full
            || code(&alone) != c.guard
        {
            wrong.push(format!(
                "{}: expected {} ({} / {}), full {full:?}, guard alone {alone:?}",
                c.what, c.expect, c.full, c.guard
            ));
        }
        // the guard alone gives the file passes' code wherever a rule names one
        let own = code(&alone);
        if own != RefusalCode::EngineRefused.as_str()
            && own != code(&full)
            && c.what != USE_API_SOCKET
        {
            wrong.push(format!("{}: full {full:?}, guard alone {alone:?}", c.what));
        }
    }
    assert!(cases.len() >= 40, "the corpus shrank: {}", cases.len());
    assert!(
        wrong.is_empty(),
        "the layers disagree:\n{}",
        wrong.join("\n")
    );
    let _ = std::fs::remove_dir_all(&b.tmp);
}

/// The one shape the layers see differently: the file names the compose key, the guard the bind
/// of the engine's socket it becomes.
const USE_API_SOCKET: &str = "use_api_socket (compose 2.35+)";

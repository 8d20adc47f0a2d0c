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
use crate::boundary::compose_check;
use crate::boundary::policy::{self, netpool};

const PROJECT: &str = "monky-agree";
const FOREIGN: &str = "monky-agree-foreign";

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
    let mut net = netpool::AddressSpace::new(&netpool::engine_default_pools());
    net.take(
        netpool::Cidr::parse("169.254.169.254/32").unwrap(),
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

fn svc(name: &str, body: &str) -> String {
    format!("  {name}:\n    image: busybox\n    init: true\n    command: [sleep, \"600\"]\n{body}")
}

fn one(name: &str, body: &str, top: &str) -> String {
    format!("services:\n{}{top}", svc(name, body))
}

/// The corpus of tests/invariant.rs, less the shapes only an engine's state can judge (another
/// app's image in the local store).
fn corpus(b: &Box_) -> Vec<(String, String, &'static str)> {
    let (md, rt, rl, st) = (
        b.marker.display(),
        b.rt.display(),
        b.rl.display(),
        b.state.display(),
    );
    let (port, net, foreign) = (b.port, 233, FOREIGN);
    vec![
        ("engine socket bind".into(), one("c", "    volumes: [\"/var/run/docker.sock:/s\"]\n", ""), "refused"),
        ("host root, long syntax, read-only".into(), one("c", "    volumes:\n      - type: bind\n        source: /\n        target: /host\n        read_only: true\n", ""), "refused"),
        ("the agent's own token".into(), one("c", &format!("    volumes: [\"{st}/bao.token:/t:ro\"]\n"), ""), "refused"),
        ("volume driver_opts bind of a host dir".into(), one("c", "    volumes: [\"hostdir:/h\"]\n", &format!("volumes:\n  hostdir:\n    driver_opts: {{type: none, o: bind, device: {md}}}\n")), "refused"),
        ("another project's volume (external)".into(), one("c", "    volumes: [\"theirs:/x\"]\n", &format!("volumes:\n  theirs:\n    external: true\n    name: {foreign}\n")), "refused"),
        ("another app's network namespace".into(), one("c", &format!("    network_mode: \"container:{foreign}-web\"\n"), ""), "refused"),
        ("writable bind outside the release".into(), one("c", &format!("    volumes: [\"{md}:/m\"]\n"), ""), "refused"),
        ("the host's PID namespace".into(), one("c", "    pid: host\n", ""), "refused"),
        ("ro ./data/sub inside writable ./data (two services)".into(),
         format!("services:\n{}{}", svc("a", "    volumes: [\"./data:/d\"]\n"), svc("b", "    restart: always\n    depends_on: [a]\n    volumes: [\"./data/sub:/x:ro\"]\n")), "refused"),
        ("ro ./data/sub inside writable ./data (one service)".into(),
         one("b", "    restart: always\n    volumes: [\"./data:/d\", \"./data/sub:/x:ro\"]\n", ""), "refused"),
        ("writable ./data/sub, writable ./data created after".into(),
         format!("services:\n{}{}", svc("b", "    restart: always\n    volumes: [\"./data/sub:/x\"]\n"), svc("a", "    depends_on: [b]\n    volumes: [\"./data:/d\"]\n")), "refused"),
        ("writable ./data/sub under read-only ./data".into(),
         format!("services:\n{}{}", svc("p", "    volumes: [\"./data:/x:ro\"]\n"), svc("c", "    depends_on: [p]\n    volumes: [\"./data/sub:/d\"]\n")), "refused"),
        ("bind_roots: ro sub inside writable dir".into(),
         format!("services:\n{}{}", svc("a", &format!("    volumes: [\"{rt}/w:/d\"]\n")), svc("b", &format!("    depends_on: [a]\n    volumes: [\"{rt}/w/sub:/x:ro\"]\n"))), "refused"),
        ("writable bind of the release root".into(), one("c", "    volumes: [\".:/rel\"]\n", ""), "refused"),
        ("ports on 127.0.0.1 and 0.0.0.0".into(),
         one("web", &format!("    ports: [\"127.0.0.1:{}:8080\", \"0.0.0.0:{}:8080\"]\n", port, port + 1), ""), "applied"),
        ("named volume".into(), one("c", "    volumes: [\"data:/data\"]\n", "volumes:\n  data: {}\n"), "applied"),
        ("writable ./data + ./config:ro in one service".into(),
         one("c", "    volumes: [\"./data:/data\", \"./config:/etc/app:ro\"]\n", ""), "applied"),
        ("two services sharing ./shared".into(),
         format!("services:\n{}{}", svc("a", "    volumes: [\"./shared:/s\"]\n"), svc("b", "    volumes: [\"./shared:/s\"]\n")), "applied"),
        ("tmpfs".into(), one("c", "    tmpfs: [/run/app]\n", ""), "applied"),
        ("healthcheck".into(), one("c", "    healthcheck:\n      test: [\"CMD\", \"true\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n", ""), "applied"),
        ("cap_drop ALL + cap_add NET_BIND_SERVICE".into(), one("c", "    cap_drop: [ALL]\n    cap_add: [NET_BIND_SERVICE]\n", ""), "applied"),
        ("security_opt no-new-privileges:true".into(), one("c", "    security_opt: [\"no-new-privileges:true\"]\n", ""), "applied"),
        ("sysctls net.core.somaxconn".into(), one("c", "    sysctls:\n      net.core.somaxconn: 1024\n", ""), "applied"),
        ("bind_roots writable bind (root under /tmp)".into(), one("c", &format!("    volumes: [\"{rt}/uploads:/u\"]\n"), ""), "applied"),
        ("bind_roots writable bind (root under /var/lib)".into(), one("c", &format!("    volumes: [\"{rl}/uploads:/u\"]\n"), ""), "applied"),
        ("read-only bind of /etc/localtime".into(), one("c", "    volumes: [\"/etc/localtime:/etc/localtime:ro\"]\n", ""), "applied"),
        ("port in the box's reserved_ports".into(), one("web", &format!("    ports: [\"0.0.0.0:{}:8080\"]\n", port + 5), ""), "refused"),
        ("port = bao.proxy_port".into(), one("web", "    ports: [\"127.0.0.1:18200:8080\"]\n", ""), "refused"),
        ("port = tenancy.proxy_port".into(), one("web", "    ports: [\"18443:8080\"]\n", ""), "refused"),
        ("container_name outside the project's namespace".into(), one("c", &format!("    container_name: {foreign}-squat\n"), ""), "refused"),
        ("volume name: another project's".into(), one("c", "    volumes: [\"data:/data\"]\n", &format!("volumes:\n  data:\n    name: {foreign}-data\n")), "refused"),
        ("network name: another project's".into(), one("c", "    networks: [n]\n", &format!("networks:\n  n:\n    name: {foreign}-net\n")), "refused"),
        ("oom_score_adj -500".into(), one("c", "    oom_score_adj: -500\n", ""), "refused"),
        ("cap_add SYS_NICE".into(), one("c", "    cap_add: [SYS_NICE]\n", ""), "refused"),
        ("ulimits rtprio 99".into(), one("c", "    ulimits:\n      rtprio: 99\n", ""), "refused"),
        ("oom_score_adj 100".into(), one("c", "    oom_score_adj: 100\n", ""), "applied"),
        ("subnet from the box's pool, static address inside it".into(),
         one("c", &format!("    networks:\n      n:\n        ipv4_address: 192.168.{net}.9\n"),
             &format!("networks:\n  n:\n    ipam:\n      config:\n        - subnet: 192.168.{net}.0/24\n")), "applied"),
        ("subnet over the metadata address 169.254.169.254".into(),
         one("c", "    networks: [n]\n", "networks:\n  n:\n    ipam:\n      config:\n        - subnet: 169.254.169.0/24\n"), "refused"),
        ("static address outside its network's subnet".into(),
         one("c", &format!("    networks:\n      n:\n        ipv4_address: 192.168.{}.9\n", net + 1),
             &format!("networks:\n  n:\n    ipam:\n      config:\n        - subnet: 192.168.{net}.0/24\n")), "refused"),
        ("/proc unmasked".into(), one("c", "    security_opt: [\"systempaths=unconfined\"]\n", ""), "refused"),
        ("use_api_socket".into(), one("c", "    use_api_socket: true\n", ""), "refused"),
    ]
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
            match v {
                Y::String(short) => {
                    let parts: Vec<&str> = short.split(':').collect();
                    let (src, dst) = (parts[0], parts.get(1).copied().unwrap_or(""));
                    let ro = parts.get(2).is_some_and(|m| m.split(',').any(|o| o == "ro"));
                    let src = if src.starts_with('/') || src.starts_with('.') {
                        abs(src).display().to_string()
                    } else {
                        named("volumes", src)
                    };
                    binds.push(format!("{src}:{dst}{}", if ro { ":ro" } else { "" }));
                }
                long => mounts.push(json!({
                    "Type": get(long, "type").map(s).unwrap_or_default(),
                    "Source": abs(&get(long, "source").map(s).unwrap_or_default()).display().to_string(),
                    "Target": get(long, "target").map(s).unwrap_or_default(),
                    "ReadOnly": get(long, "read_only").and_then(|r| r.as_bool()).unwrap_or(false),
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
    for (kind, body, name) in creates(doc, &release) {
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
                    if let Some(why) = netpool::address_refusal(n, a, &subnets) {
                        return Err(Refusal::new(RefusalCode::NetworkRefused, why));
                    }
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
    compose_check::check_bundle(doc, false, &first)?;
    compose_check::check_normalised(doc, false, f)?;
    Ok(())
}

fn class(r: &Result<(), Refusal>) -> &'static str {
    match r {
        Ok(()) => "applied",
        Err(_) => "refused",
    }
}

#[test]
fn layers_agree_on_the_corpus_pure() {
    let b = the_box();
    let f = facts(&b, &b.release);
    let mut wrong = Vec::new();
    let cases = corpus(&b);
    for (what, yaml, expect) in &cases {
        let doc = compose_check::parse(yaml.as_bytes()).unwrap();
        let alone = guard(&doc, &f);
        let full = file_passes(&doc, &b, &f).and_then(|()| guard(&doc, &f));
        // a code the guard names itself is the file pass's too
        let own = |r: &Result<(), Refusal>| {
            r.as_ref()
                .err()
                .map(|r| r.code)
                .filter(|c| c.is_own_guard_code())
        };
        let codes_differ = own(&alone).is_some() && own(&alone) != own(&full);
        if class(&full) != class(&alone) || class(&full) != *expect || codes_differ {
            wrong.push(format!(
                "{what}: expected {expect}, full {full:?}, guard alone {alone:?}"
            ));
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

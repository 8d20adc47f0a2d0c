// The layer-agreement corpus: the one case table both twins run, the pure one in the fast tier
// (src/boundary/agree.rs) and the real-dockerd one (tests/real/invariant.rs). Both `include!`
// this file, so a case is written once. Plain Rust, no imports: it compiles in either crate.

/// The box a corpus runs against: what its cases name.
pub struct CorpusBox {
    /// The image every service runs, and its command (a YAML flow list).
    pub image: String,
    pub command: String,
    /// A host directory outside everything a bundle may reach.
    pub marker: String,
    /// The agent's state directory.
    pub state: String,
    /// The box's `bind_roots`: one under /var/tmp, one under /var/lib.
    pub root_tmp: String,
    pub root_lib: String,
    /// Another project's name on the box (its volume, its `<foreign>-web` container).
    pub foreign: String,
    /// A free host port; `port + 5` is in the box's `reserved_ports`.
    pub port: u16,
    /// The box's one `network_pools` entry is [`corpus_pool`]`(net)`.
    pub net: u16,
    /// Another app's image, only in the local store (a shape only an engine's state can judge).
    pub local_image: Option<String>,
    /// The compose line speaks an API version the engine takes `systempaths` on.
    pub systempaths: bool,
    /// The compose line knows `use_api_socket` (2.35+).
    pub use_api_socket: bool,
}

/// The box's one `network_pools` entry, `10.<net>.0.0/16`: the corpus's network shapes lie in
/// and just outside it. Outside the engine's default pools: the engine hands those out in turn
/// to every project's default network, so a fixed subnet there collides with whichever network
/// got its /20 last ("Pool overlaps").
pub fn corpus_pool(net: u16) -> String {
    format!("10.{net}.0.0/16")
}

/// One shape: its compose file, what both layers conclude (`applied` or `refused`), and the
/// refusal code of the full policy (file passes, then the guard) and of the guard alone ("" for
/// an applied shape). The guard alone gives the file passes' code wherever it judges the same
/// shape; it differs only where it sees another one (`use_api_socket` is a bind of the socket).
pub struct CorpusCase {
    pub what: String,
    pub compose: String,
    pub expect: &'static str,
    pub full: &'static str,
    pub guard: &'static str,
}

pub fn corpus_cases(b: &CorpusBox) -> Vec<CorpusCase> {
    let svc = |name: &str, body: &str| {
        format!(
            "  {name}:\n    image: {}\n    init: true\n    command: {}\n{body}",
            b.image, b.command
        )
    };
    let one = |name: &str, body: &str, top: &str| format!("services:\n{}{top}", svc(name, body));
    let (md, st, rt, rl, foreign) = (&b.marker, &b.state, &b.root_tmp, &b.root_lib, &b.foreign);
    let (port, net) = (b.port, b.net);
    const BIND: &str = "BIND_SOURCE_REFUSED";
    const PRIV: &str = "PRIVILEGED_REFUSED";
    const ENGINE: &str = "ENGINE_REFUSED";
    const PORT: &str = "PORT_REFUSED";
    const NAME: &str = "NAME_REFUSED";
    const NET: &str = "NETWORK_REFUSED";
    let refused = |what: &str, compose: String, full: &'static str, guard: &'static str| {
        CorpusCase {
            what: what.into(),
            compose,
            expect: "refused",
            full,
            guard,
        }
    };
    let applied = |what: &str, compose: String| CorpusCase {
        what: what.into(),
        compose,
        expect: "applied",
        full: "",
        guard: "",
    };
    let mut v = vec![
        // the attacks of tests/real/boundary.rs
        refused("engine socket bind", one("c", "    volumes: [\"/var/run/docker.sock:/s\"]\n", ""), BIND, BIND),
        refused("host root, long syntax, read-only", one("c", "    volumes:\n      - type: bind\n        source: /\n        target: /host\n        read_only: true\n", ""), BIND, BIND),
        refused("the agent's own token", one("c", &format!("    volumes: [\"{st}/bao.token:/t:ro\"]\n"), ""), BIND, BIND),
        refused("volume driver_opts bind of a host dir", one("c", "    volumes: [\"hostdir:/h\"]\n", &format!("volumes:\n  hostdir:\n    driver_opts: {{type: none, o: bind, device: {md}}}\n")), BIND, ENGINE),
        refused("another project's volume (external)", one("c", "    volumes: [\"theirs:/x\"]\n", &format!("volumes:\n  theirs:\n    external: true\n    name: {foreign}\n")), NAME, ENGINE),
        refused("another app's network namespace", one("c", &format!("    network_mode: \"container:{foreign}-web\"\n"), ""), PRIV, ENGINE),
        refused("writable bind outside the release", one("c", &format!("    volumes: [\"{md}:/m\"]\n"), ""), BIND, BIND),
        refused("the host's PID namespace", one("c", "    pid: host\n", ""), PRIV, PRIV),
        // the attacks of tests/real/invariant.rs
        refused("ro ./data/sub inside writable ./data (two services)",
         format!("services:\n{}{}", svc("a", "    volumes: [\"./data:/d\"]\n"), svc("b", "    restart: always\n    depends_on: [a]\n    volumes: [\"./data/sub:/x:ro\"]\n")), BIND, BIND),
        refused("ro ./data/sub inside writable ./data (one service)",
         one("b", "    restart: always\n    volumes: [\"./data:/d\", \"./data/sub:/x:ro\"]\n", ""), BIND, BIND),
        refused("writable ./data/sub, writable ./data created after",
         format!("services:\n{}{}", svc("b", "    restart: always\n    volumes: [\"./data/sub:/x\"]\n"), svc("a", "    depends_on: [b]\n    volumes: [\"./data:/d\"]\n")), BIND, BIND),
        refused("writable ./data/sub under read-only ./data",
         format!("services:\n{}{}", svc("p", "    volumes: [\"./data:/x:ro\"]\n"), svc("c", "    depends_on: [p]\n    volumes: [\"./data/sub:/d\"]\n")), BIND, BIND),
        refused("bind_roots: ro sub inside writable dir",
         format!("services:\n{}{}", svc("a", &format!("    volumes: [\"{rt}/w:/d\"]\n")), svc("b", &format!("    depends_on: [a]\n    volumes: [\"{rt}/w/sub:/x:ro\"]\n"))), BIND, BIND),
        refused("writable bind of the release root", one("c", "    volumes: [\".:/rel\"]\n", ""), BIND, BIND),
        // benign shapes
        applied("ports on 127.0.0.1 and 0.0.0.0",
         one("web", &format!("    ports: [\"127.0.0.1:{}:8080\", \"0.0.0.0:{}:8080\"]\n", port, port + 1), "")),
        applied("named volume", one("c", "    volumes: [\"data:/data\"]\n", "volumes:\n  data: {}\n")),
        applied("writable ./data + ./config:ro in one service",
         one("c", "    volumes: [\"./data:/data\", \"./config:/etc/app:ro\"]\n", "")),
        applied("two services sharing ./shared",
         format!("services:\n{}{}", svc("a", "    volumes: [\"./shared:/s\"]\n"), svc("b", "    volumes: [\"./shared:/s\"]\n"))),
        applied("tmpfs", one("c", "    tmpfs: [/run/app]\n", "")),
        applied("healthcheck", one("c", "    healthcheck:\n      test: [\"CMD\", \"true\"]\n      interval: 1s\n      timeout: 10s\n      retries: 3\n", "")),
        applied("cap_drop ALL + cap_add NET_BIND_SERVICE", one("c", "    cap_drop: [ALL]\n    cap_add: [NET_BIND_SERVICE]\n", "")),
        applied("security_opt no-new-privileges:true", one("c", "    security_opt: [\"no-new-privileges:true\"]\n", "")),
        applied("sysctls net.core.somaxconn", one("c", "    sysctls:\n      net.core.somaxconn: 1024\n", "")),
        applied("bind_roots writable bind (root under /var/tmp)", one("c", &format!("    volumes: [\"{rt}/uploads:/u\"]\n"), "")),
        applied("bind_roots writable bind (root under /var/lib)", one("c", &format!("    volumes: [\"{rl}/uploads:/u\"]\n"), "")),
        applied("read-only bind of /etc/localtime", one("c", "    volumes: [\"/etc/localtime:/etc/localtime:ro\"]\n", "")),
        // the host's shared resources (issue 18, Build 3)
        refused("port in the box's reserved_ports",
         one("web", &format!("    ports: [\"0.0.0.0:{}:8080\"]\n", port + 5), ""), PORT, PORT),
        refused("port = bao.proxy_port (18200, reserved whatever the transport)",
         one("web", "    ports: [\"127.0.0.1:18200:8080\"]\n", ""), PORT, PORT),
        refused("port = tenancy.proxy_port (18443)",
         one("web", "    ports: [\"18443:8080\"]\n", ""), PORT, PORT),
        refused("container_name outside the project's namespace",
         one("c", &format!("    container_name: {foreign}-squat\n"), ""), NAME, NAME),
        refused("volume name: another project's",
         one("c", "    volumes: [\"data:/data\"]\n", &format!("volumes:\n  data:\n    name: {foreign}-data\n")), NAME, NAME),
        refused("network name: another project's",
         one("c", "    networks: [n]\n", &format!("networks:\n  n:\n    name: {foreign}-net\n")), NAME, NAME),
        refused("oom_score_adj -500", one("c", "    oom_score_adj: -500\n", ""), PRIV, PRIV),
        refused("cap_add SYS_NICE", one("c", "    cap_add: [SYS_NICE]\n", ""), PRIV, PRIV),
        refused("ulimits rtprio 99", one("c", "    ulimits:\n      rtprio: 99\n", ""), PRIV, PRIV),
        applied("oom_score_adj 100 (positive: own container only)", one("c", "    oom_score_adj: 100\n", "")),
        // the box's address space (issue 31.2)
        applied("subnet from the box's pool, static address inside it",
         one("c", &format!("    networks:\n      n:\n        ipv4_address: 10.{net}.9.9\n"),
             &format!("networks:\n  n:\n    ipam:\n      config:\n        - subnet: 10.{net}.9.0/24\n"))),
        refused("subnet over the metadata address 169.254.169.254",
         one("c", "    networks: [n]\n", "networks:\n  n:\n    ipam:\n      config:\n        - subnet: 169.254.169.0/24\n"), NET, NET),
        // compose as compose reads it; benign patterns that ship (issue 41)
        applied("a free-standing container_name (no project's namespace)",
         one("c", &format!("    container_name: corpus-free-{port}\n"), "")),
        applied("a directory of the bundle's files bound writable (mounted read-only)",
         one("c", "    volumes: [\"./config:/etc/app\", \"./data:/data\"]\n", "")),
        applied("a bare path: an anonymous volume, no host bind",
         one("c", "    volumes: [/var/cache/app]\n", "")),
        applied("a bind source from an interpolated default",
         one("c", "    volumes: [\"${CORPUS_DIR:-./data}:/data\"]\n", "")),
        refused("an interpolated default outside the release",
         one("c", &format!("    volumes: [\"${{CORPUS_DIR:-{md}}}:/m\"]\n"), ""), BIND, BIND),
        refused("static address outside its network's subnet",
         one("c", &format!("    networks:\n      n:\n        ipv4_address: 10.{net}.10.9\n"),
             &format!("networks:\n  n:\n    ipam:\n      config:\n        - subnet: 10.{net}.9.0/24\n")), NET, NET),
    ];
    if let Some(img) = &b.local_image {
        v.push(refused(
            "another app's image already in the local store, pull_policy: never",
            format!(
                "services:\n  c:\n    image: {img}\n    pull_policy: never\n    init: true\n    command: {}\n",
                b.command
            ),
            "IMAGE_REFUSED",
            "IMAGE_REFUSED",
        ));
    }
    if b.systempaths {
        v.push(refused(
            "/proc unmasked",
            one("c", "    security_opt: [\"systempaths=unconfined\"]\n", ""),
            PRIV,
            PRIV,
        ));
    }
    if b.use_api_socket {
        v.push(refused(
            "use_api_socket (compose 2.35+)",
            one("c", "    use_api_socket: true\n", ""),
            "COMPOSE_KEY_REFUSED",
            BIND,
        ));
    }
    v
}

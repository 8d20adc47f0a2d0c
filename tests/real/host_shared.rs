//! The host's shared resources belong to the box (issue 18 §3), on real dockerd and compose v1,
//! v2 and v5. Each shape is shown by its effect with the policy off (debug switch
//! `MONKY_DEPLOYD_TEST_POLICY=off`), refused by the engine guard alone (`no-file`) and refused
//! by the full agent, with no container created for it:
//! ports the box reserves, object names outside the project's namespace (and the victim
//! project's next deploy), another app's private image already in the local store, scheduling /
//! OOM / rlimit privileges, and the box's container ceilings. The legitimate neighbours of each
//! shape still apply.
//!
//! Each test prints a table line per shape: flavour | shape | policy off | full agent | guard.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;
use serde_json::{json, Value};

// ---- helpers --------------------------------------------------------------------------------

/// Applies under `policy` and asserts a refusal: exit 1, result failed, no container for `svc`.
fn refused(
    s: &Stack,
    serial: &mut u64,
    compose: &str,
    policy: &str,
    svc: &str,
    what: &str,
) -> String {
    let o = apply_plain(s, serial, compose, policy);
    assert_eq!(o.run.code, 1, "{what} ({policy}): not refused: {o:?}");
    assert_eq!(o.result, "failed", "{what} ({policy}): {o:?}");
    assert!(
        service_containers(s, svc).is_empty(),
        "{what} ({policy}): a container was created: {o:?}"
    );
    o.detail
}

fn applied(o: &Outcome, what: &str) {
    assert_eq!(o.run.code, 0, "{what}: not applied: {o:?}");
    assert_eq!(o.result, "applied", "{what}: {o:?}");
}

/// The one container of `svc`, asserted.
fn one_container(s: &Stack, svc: &str, what: &str, o: &Outcome) -> String {
    let ids = service_containers(s, svc);
    assert_eq!(ids.len(), 1, "{what}: policy off should run it: {o:?}");
    ids[0].clone()
}

/// Waits up to 5 s for the container's output to satisfy `ok`.
fn logs_show(id: &str, ok: impl Fn(&str) -> bool) -> bool {
    for _ in 0..50 {
        if ok(&logs_of(id)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// `docker inspect` of one object (container, or `volume`/`network` with `kind`).
fn inspect_kind(kind: &str, id: &str) -> Option<Value> {
    let mut c = Command::new("docker");
    if kind != "container" {
        c.arg(kind);
    }
    let o = c.args(["inspect", id]).output().unwrap();
    if !o.status.success() {
        return None;
    }
    let v: Value = serde_json::from_slice(&o.stdout).ok()?;
    v.get(0).cloned()
}

fn inspect(id: &str) -> Value {
    inspect_kind("container", id).unwrap_or_else(|| panic!("no container {id}"))
}

fn rm_containers(ids: &[String]) {
    if !ids.is_empty() {
        let _ = Command::new("docker")
            .args(["rm", "-f", "-v"])
            .args(ids)
            .output();
    }
}

/// Removes every container, volume and network labelled with `project` (between shapes; the
/// Stack's own Drop does the same at the end).
fn purge(project: &str) {
    let p = format!("label=com.docker.compose.project={project}");
    for (kind, list) in [
        ("container", vec!["ps", "-aq", "--filter", &p]),
        ("volume", vec!["volume", "ls", "-q", "--filter", &p]),
        ("network", vec!["network", "ls", "-q", "--filter", &p]),
    ] {
        let o = Command::new("docker").args(&list).output().unwrap();
        let ids: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(String::from)
            .collect();
        for id in ids {
            let args: Vec<&str> = match kind {
                "container" => vec!["rm", "-f", "-v", &id],
                "volume" => vec!["volume", "rm", "-f", &id],
                _ => vec!["network", "rm", &id],
            };
            let _ = Command::new("docker").args(&args).output();
        }
    }
}

/// Objects named by hand in a test (squatted names): removed by name even when the test fails.
struct Named(Vec<(&'static str, String)>);

impl Drop for Named {
    fn drop(&mut self) {
        for (kind, name) in &self.0 {
            remove_named(kind, name);
        }
    }
}

fn remove_named(kind: &str, name: &str) {
    let args: Vec<&str> = match kind {
        "container" => vec!["rm", "-f", "-v", name],
        "volume" => vec!["volume", "rm", "-f", name],
        _ => vec!["network", "rm", name],
    };
    let _ = Command::new("docker").args(&args).output();
}

/// A report detail on one table line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn table_out(table: &[String]) {
    for l in table {
        eprintln!("{l}");
    }
}

// ---- 1. ports -------------------------------------------------------------------------------

/// 20 ports per flavour, away from the other suites of this binary (they run at the same
/// time: boundary.rs 18600–18621, invariant.rs 18700–18775) and the agent's defaults (18200,
/// 18443): 18800–18819 v1, 18820–18839 v2, 18840–18859 v5.
fn port_base(f: Flavour) -> u16 {
    18800
        + match f {
            Flavour::V1 => 0,
            Flavour::V2 => 20,
            Flavour::V5 => 40,
        }
}

/// The Stack writes no proxy ports: put them in its `tenancy:` and `bao:` blocks.
fn set_proxy_ports(s: &Stack, tenancy: u16, bao: u16) {
    let t = s.config_text();
    let n = t
        .replacen(
            "tenancy:\n",
            &format!("tenancy:\n  proxy_port: {tenancy}\n"),
            1,
        )
        .replacen("bao:\n", &format!("bao:\n  proxy_port: {bao}\n"), 1);
    assert_eq!(
        n.matches("proxy_port").count(),
        2,
        "config layout changed:\n{t}"
    );
    std::fs::write(s.config_path(), n).unwrap();
}

/// An HTTP GET to 127.0.0.1:port returns a body with `marker` (within 5 s).
fn answers(port: u16, marker: &str) -> bool {
    for _ in 0..50 {
        if let Ok(mut c) =
            TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1))
        {
            let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
            let _ = c.write_all(b"GET / HTTP/1.0\r\n\r\n");
            let mut b = String::new();
            let _ = c.read_to_string(&mut b);
            if b.contains(marker) {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

fn bind_result(port: u16) -> Result<(), std::io::ErrorKind> {
    TcpListener::bind(("127.0.0.1", port))
        .map(drop)
        .map_err(|e| e.kind())
}

/// One service serving `marker` on container ports 8080–8085.
fn port_compose(svc: &str, marker: &str, ports: &str) -> String {
    format!(
        "services:\n  {svc}:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"echo {marker} > /tmp/index.html; \
         for p in 8080 8081 8082 8083 8084 8085; do httpd -p $$p -h /tmp; done; exec sleep 600\"]\n    \
         ports:\n{ports}"
    )
}

struct PortShape {
    what: &'static str,
    yaml: String,
    ip: &'static str,
    port: u16,
}

fn reserved_ports_are_the_boxs(f: Flavour) {
    require_docker();
    let b = port_base(f);
    let (tp, bp) = (b + 2, b + 8);
    let mut s = bootstrapped("ports", f);
    s.set_extra(&format!("reserved_ports: [22, {b}, {}]\n", b + 1));
    set_proxy_ports(&s, tp, bp);
    let long = if f == Flavour::V1 {
        // compose v1's schema has no `host_ip` in the long syntax ("unsupported option"):
        // the same shape without it, on 0.0.0.0
        format!("      - target: 8080\n        published: {tp}\n")
    } else {
        format!("      - target: 8080\n        published: {tp}\n        host_ip: 127.0.0.1\n")
    };
    let shapes = [
        PortShape {
            what: "reserved_ports, short syntax on 127.0.0.1",
            yaml: format!("      - \"127.0.0.1:{b}:8080\"\n"),
            ip: "127.0.0.1",
            port: b,
        },
        PortShape {
            what: "reserved_ports, short syntax, no ip",
            yaml: format!("      - \"{}:8080\"\n", b + 1),
            ip: "0.0.0.0",
            port: b + 1,
        },
        PortShape {
            what: "tenancy.proxy_port, long syntax",
            yaml: long,
            ip: if f == Flavour::V1 {
                "0.0.0.0"
            } else {
                "127.0.0.1"
            },
            port: tp,
        },
        PortShape {
            what: "bao.proxy_port inside a host port range",
            yaml: format!("      - \"{}-{}:8080-8085\"\n", b + 5, b + 10),
            ip: "0.0.0.0",
            port: bp,
        },
    ];
    let mut serial = 0;
    let mut table = Vec::new();
    for (i, sh) in shapes.iter().enumerate() {
        let svc = format!("p{i}");
        let marker = format!("port-{:?}-{i}-{}", f, std::process::id());
        let compose = port_compose(&svc, &marker, &sh.yaml);
        // 1. the full agent
        let full = refused(&s, &mut serial, &compose, "on", &svc, sh.what);
        let want = format!(
            "PORT_REFUSED: {svc} {}:{} (reserved by the box)",
            sh.ip, sh.port
        );
        assert!(
            full.starts_with(&want),
            "{}: {full:?}, want {want:?}",
            sh.what
        );
        // 2. the engine guard alone
        let guard = refused(&s, &mut serial, &compose, "no-file", &svc, sh.what);
        assert!(
            guard.starts_with("PORT_REFUSED:") && guard.contains(&sh.port.to_string()),
            "{}: the guard did not refuse: {guard:?}",
            sh.what
        );
        // 3. no policy: the port is taken from the box
        assert_eq!(
            bind_result(sh.port),
            Ok(()),
            "{}: port {} busy before the container",
            sh.what,
            sh.port
        );
        let o = apply_plain(&s, &mut serial, &compose, "off");
        let id = one_container(&s, &svc, sh.what, &o);
        assert!(
            answers(sh.port, &marker),
            "{}: the container does not answer on {}: {o:?}",
            sh.what,
            sh.port
        );
        assert_eq!(
            bind_result(sh.port),
            Err(std::io::ErrorKind::AddrInUse),
            "{}: the host can still bind {}",
            sh.what,
            sh.port
        );
        table.push(format!(
            "{f:?} | ports: {} | off: the container answers on {}:{} and the host's bind gets AddrInUse | full: {full} | guard alone: {guard}",
            sh.what, sh.ip, sh.port
        ));
        rm_containers(&[id]);
    }
    // a port the box does not reserve still applies
    let free = b + 12;
    let marker = format!("port-{:?}-free-{}", f, std::process::id());
    let compose = port_compose(
        "pfree",
        &marker,
        &format!("      - \"127.0.0.1:{free}:8080\"\n"),
    );
    let o = apply_plain(&s, &mut serial, &compose, "on");
    applied(&o, "an unreserved port");
    assert!(answers(free, &marker), "{o:?}");
    table.push(format!(
        "{f:?} | ports: unreserved 127.0.0.1:{free} | applied, answers | - | -"
    ));
    table_out(&table);
}
all_composes!(reserved_ports_are_the_boxs);

// ---- 2. names -------------------------------------------------------------------------------

/// The victim's own app: its volume `data`, network `net` and a fixed container name, all in
/// its namespace.
fn victim_compose(vp: &str, variant: &str) -> String {
    format!(
        "services:\n  web:\n    image: {IMAGE}\n    init: true\n    container_name: {vp}-web\n    \
         command: [\"sh\", \"-c\", \"exec sleep 600\"]\n    environment:\n      VARIANT: \"{variant}\"\n    \
         volumes: [\"data:/data\"]\n    networks: [net]\nvolumes:\n  data: {{}}\nnetworks:\n  net: {{}}\n"
    )
}

struct NameShape {
    what: &'static str,
    kind: &'static str,
    name: String,
    service: String,
    top: String,
}

fn name_shapes(owner: &str) -> Vec<NameShape> {
    vec![
        NameShape {
            what: "volume name:",
            kind: "volume",
            name: format!("{owner}_data"),
            service: "    volumes: [\"squat:/x\"]\n".into(),
            top: format!("volumes:\n  squat:\n    name: {owner}_data\n"),
        },
        NameShape {
            what: "network name:",
            kind: "network",
            name: format!("{owner}_net"),
            service: "    networks: [squat]\n".into(),
            top: format!("networks:\n  squat:\n    name: {owner}_net\n"),
        },
        NameShape {
            what: "container_name:",
            kind: "container",
            name: format!("{owner}-web"),
            service: format!("    container_name: {owner}-web\n"),
            top: String::new(),
        },
    ]
}

fn name_compose(svc: &str, sh: &NameShape) -> String {
    format!(
        "services:\n  {svc}:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"exec sleep 600\"]\n{}{}",
        sh.service, sh.top
    )
}

fn project_label(kind: &str, v: &Value) -> String {
    let labels = if kind == "container" {
        &v["Config"]["Labels"]
    } else {
        &v["Labels"]
    };
    labels["com.docker.compose.project"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn names_belong_to_their_project(f: Flavour) {
    require_docker();
    let victim = bootstrapped("victim", f);
    let atk = bootstrapped("squatter", f);
    let (vp, ap) = (victim.project(), atk.project());
    assert!(!vp.starts_with(&ap) && !ap.starts_with(&vp), "{vp} {ap}");
    let shapes = name_shapes(&vp);
    let _named = Named(shapes.iter().map(|s| (s.kind, s.name.clone())).collect());
    let (mut aserial, mut vserial) = (0, 0);
    let mut table = Vec::new();
    for (i, sh) in shapes.iter().enumerate() {
        let svc = format!("n{i}");
        let compose = name_compose(&svc, sh);
        // 1. the full agent, 2. the guard alone: refused, nothing made under that name
        let full = refused(&atk, &mut aserial, &compose, "on", &svc, sh.what);
        assert!(
            full.starts_with("NAME_REFUSED:") && full.contains(&sh.name),
            "{}: {full:?}",
            sh.what
        );
        assert!(
            inspect_kind(sh.kind, &sh.name).is_none(),
            "{}: made",
            sh.what
        );
        let guard = refused(&atk, &mut aserial, &compose, "no-file", &svc, sh.what);
        assert!(
            guard.starts_with("NAME_REFUSED:") && guard.contains(&sh.name),
            "{}: the guard did not refuse: {guard:?}",
            sh.what
        );
        assert!(
            inspect_kind(sh.kind, &sh.name).is_none(),
            "{}: made",
            sh.what
        );
        // ... so the victim deploys
        let v = apply_plain(
            &victim,
            &mut vserial,
            &victim_compose(&vp, &format!("on{i}")),
            "on",
        );
        applied(&v, &format!("{}: the victim, attack refused", sh.what));
        purge(&vp);
        // 3. no policy: the name is squatted, and the victim's next deploy fails
        let o = apply_plain(&atk, &mut aserial, &compose, "off");
        let obj = inspect_kind(sh.kind, &sh.name)
            .unwrap_or_else(|| panic!("{}: policy off made no {}: {o:?}", sh.what, sh.name));
        assert_eq!(project_label(sh.kind, &obj), ap, "{}: {obj}", sh.what);
        let v = apply_plain(
            &victim,
            &mut vserial,
            &victim_compose(&vp, &format!("off{i}")),
            "on",
        );
        assert_eq!(
            v.run.code, 1,
            "{}: the victim still deploys over the squat: {v:?}",
            sh.what
        );
        assert_eq!(v.result, "failed", "{}: {v:?}", sh.what);
        table.push(format!(
            "{f:?} | names: {} {} | off: made for the squatter, victim's next deploy fails: {} | full: {full} | guard alone: {guard}",
            sh.what,
            sh.name,
            one_line(&v.detail)
        ));
        purge(&ap);
        purge(&vp);
        remove_named(sh.kind, &sh.name);
    }
    // the same keys inside the project's own namespace apply (a container's name is compose's
    // own for its service: `<project>-own` for service `own`)
    let mut own = name_shapes(&ap);
    own[2].name = format!("{ap}-own");
    own[2].service = format!("    container_name: {ap}-own\n");
    let compose = |variant: &str| {
        format!(
            "services:\n  own:\n    image: {IMAGE}\n    init: true\n    \
             command: [\"sh\", \"-c\", \"exec sleep 600\"]\n    environment: {{V: \"{variant}\"}}\n{}{}{}  \
             plain:\n    image: {IMAGE}\n    init: true\n    \
             command: [\"sh\", \"-c\", \"exec sleep 600\"]\n    environment: {{V: \"{variant}\"}}\n{}{}",
            own[0].service, own[1].service, own[2].service, own[0].top, own[1].top
        )
    };
    let o = apply_plain(&atk, &mut aserial, &compose("1"), "on");
    applied(&o, "names in the project's namespace");
    for sh in &own {
        let obj = inspect_kind(sh.kind, &sh.name)
            .unwrap_or_else(|| panic!("{}: no {} {}", sh.what, sh.kind, sh.name));
        assert_eq!(project_label(sh.kind, &obj), ap, "{obj}");
    }
    // ... and a changed service is recreated under its names (compose v2+ creates the new
    // container as `<old id[..12]>_<name>` and renames it; v1 parks the old one so)
    let before = [
        one_container(&atk, "own", "own", &o),
        one_container(&atk, "plain", "plain", &o),
    ];
    let o = apply_plain(&atk, &mut aserial, &compose("2"), "on");
    applied(&o, "a recreate of the project's own containers");
    let after = [
        one_container(&atk, "own", "own", &o),
        one_container(&atk, "plain", "plain", &o),
    ];
    assert!(
        before[0] != after[0] && before[1] != after[1],
        "not recreated: {before:?} {after:?}"
    );
    assert_eq!(
        inspect(&after[0])["Name"].as_str().unwrap_or(""),
        format!("/{}", own[2].name)
    );
    table.push(format!(
        "{f:?} | names: {}, {}, {} (own namespace), then a recreate of both services | applied | - | -",
        own[0].name, own[1].name, own[2].name
    ));
    table_out(&table);
}
all_composes!(names_belong_to_their_project);

/// Project names are not prefix-free: env ids `shop` and `shop-eu` give projects `monky-shop`
/// and `monky-shop-eu`, and `monky-shop-eu_data` begins with `monky-shop-`. The squatter's
/// `name:` for the victim's objects must still be refused; if it is not, the victim's next
/// deploy is shown to fail (the evidence goes in the assertion).
fn names_of_a_project_that_extends_another(f: Flavour) {
    require_docker();
    let atk = bootstrapped("sq", f);
    let mut victim = Stack::new("victim", f);
    victim.env = format!("{}-eu", atk.env);
    victim.write_config();
    victim.give_bootstrap();
    let r = victim.cmd(&["bootstrap"]);
    assert_eq!(r.code, 0, "{r:?}");
    let (vp, ap) = (victim.project(), atk.project());
    assert!(vp.starts_with(&format!("{ap}-")), "{vp} {ap}");
    let shapes = name_shapes(&vp);
    let _named = Named(shapes.iter().map(|s| (s.kind, s.name.clone())).collect());
    let (mut aserial, mut vserial) = (0, 0);
    let mut table = Vec::new();
    let mut taken = Vec::new();
    for (i, sh) in shapes.iter().enumerate() {
        let svc = format!("x{i}");
        let compose = name_compose(&svc, sh);
        let full = apply_plain(&atk, &mut aserial, &compose, "on");
        if full.run.code == 0 {
            let v = apply_plain(
                &victim,
                &mut vserial,
                &victim_compose(&vp, &format!("x{i}")),
                "on",
            );
            taken.push(format!(
                "{}: the squatter's apply with the policy on: {}; {} {} now belongs to {:?}; the victim's next deploy: exit {} {}",
                sh.what,
                full.result,
                sh.kind,
                sh.name,
                inspect_kind(sh.kind, &sh.name)
                    .map(|o| project_label(sh.kind, &o))
                    .unwrap_or_default(),
                v.run.code,
                one_line(&v.detail)
            ));
        } else {
            assert!(
                full.detail.starts_with("NAME_REFUSED:") && full.detail.contains(&sh.name),
                "{}: {full:?}",
                sh.what
            );
            assert!(
                inspect_kind(sh.kind, &sh.name).is_none(),
                "{}: made",
                sh.what
            );
            table.push(format!(
                "{f:?} | names: {} {} (the victim's project extends the squatter's) | - | full: {} | -",
                sh.what, sh.name, full.detail
            ));
        }
        purge(&ap);
        purge(&vp);
        remove_named(sh.kind, &sh.name);
    }
    table_out(&table);
    assert!(
        taken.is_empty(),
        "{f:?}: {ap} takes names of {vp} with the policy on:\n{}",
        taken.join("\n")
    );
}
all_composes!(names_of_a_project_that_extends_another);

// ---- 3. images ------------------------------------------------------------------------------

/// The test, as root with the registry's credential (like another app on the box), pulls the
/// private image into the local store; returns its image id. The image stays: it is the shared
/// fixture scripts/services.sh pushes and other suites use.
fn root_pulls_private_image() -> String {
    let cfg = tempfile::tempdir().unwrap();
    let mut login = Command::new("docker")
        .env("DOCKER_CONFIG", cfg.path())
        .args(["login", "127.0.0.1:5000", "-u", "monky", "--password-stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    login
        .stdin
        .take()
        .unwrap()
        .write_all(registry_password().as_bytes())
        .unwrap();
    let l = login.wait_with_output().unwrap();
    assert!(l.status.success(), "{l:?}");
    let p = Command::new("docker")
        .env("DOCKER_CONFIG", cfg.path())
        .args(["pull", "-q", PRIVATE_IMAGE])
        .output()
        .unwrap();
    assert!(p.status.success(), "{p:?}");
    image_id(PRIVATE_IMAGE).expect("pulled")
}

fn private_compose(svc: &str, pull_policy: Option<&str>, variant: &str) -> String {
    let pp = pull_policy
        .map(|p| format!("    pull_policy: {p}\n"))
        .unwrap_or_default();
    format!(
        "services:\n  {svc}:\n    image: {PRIVATE_IMAGE}\n{pp}    init: true\n    \
         command: [\"sh\", \"-c\", \"echo PROOF-private-{variant}; exec sleep 600\"]\n"
    )
}

fn private_images_stay_private(f: Flavour) {
    require_docker();
    let private_id = root_pulls_private_image();
    // (the guard judges by image id, and scripts/services.sh pushes the same busybox as IMAGE
    // and PRIVATE_IMAGE: this project must never pull IMAGE, or the private name would be
    // content it already has)
    let atk = bootstrapped("imgthief", f);
    let mut serial = 0;
    let mut table = Vec::new();
    // compose v1 knows `never` and `if_not_present`, not `missing` (its schema refuses it)
    let policies: &[&str] = if f == Flavour::V1 {
        &["never", "if_not_present"]
    } else {
        &["never", "missing", "if_not_present"]
    };
    for (i, pp) in policies.iter().enumerate() {
        let svc = format!("i{i}");
        let what = format!("another app's cached private image, pull_policy: {pp}");
        let compose = private_compose(&svc, Some(pp), &svc);
        let full = refused(&atk, &mut serial, &compose, "on", &svc, &what);
        let want = format!("IMAGE_REFUSED: {svc} {PRIVATE_IMAGE} (not pulled by this project)");
        // compose v1's `pull` ignores pull_policy and pulls every image before anything is
        // created: without a credential the apply stops there, before the guard's image check
        let v1_pull = |d: &str| {
            f == Flavour::V1
                && d.starts_with("COMPOSE_PULL_FAILED:")
                && d.contains("no basic auth credentials")
        };
        assert!(
            full == want || v1_pull(&full),
            "{what}: {full:?}, want {want:?}"
        );
        let guard = refused(&atk, &mut serial, &compose, "no-file", &svc, &what);
        let off = apply_plain(&atk, &mut serial, &compose, "off");
        let effect;
        if f == Flavour::V1 {
            // compose v1's `pull` ignores pull_policy and pulls every image, so without a
            // credential the apply stops at the pull: this line cannot run the cached image
            // through the agent, and the guard never sees a create to judge
            assert!(guard == want || v1_pull(&guard), "{what}: {guard:?}");
            assert_eq!(off.run.code, 1, "{what}: {off:?}");
            assert!(v1_pull(&off.detail), "{what}: {off:?}");
            assert!(service_containers(&atk, &svc).is_empty(), "{what}: {off:?}");
            effect = "none on v1: its pull ignores pull_policy and fails without a credential"
                .to_string();
        } else {
            assert_eq!(guard, want, "{what}: the guard did not refuse");
            // no policy: the container runs the private image nobody gave this project
            let id = one_container(&atk, &svc, &what, &off);
            let c = inspect(&id);
            assert_eq!(c["Config"]["Image"], PRIVATE_IMAGE, "{what}");
            assert_eq!(c["Image"], private_id.as_str(), "{what}");
            assert!(
                logs_show(&id, |l| l.contains(&format!("PROOF-private-{svc}"))),
                "{what}: {} {off:?}",
                logs_of(&id)
            );
            effect = format!(
                "the container runs {PRIVATE_IMAGE} ({})",
                &private_id[..19.min(private_id.len())]
            );
            rm_containers(&[id]);
        }
        table.push(format!(
            "{f:?} | images: {what} | off: {effect} | full: {full} | guard alone: {guard}"
        ));
    }

    // the legitimate case: a project that pulled the image itself, with its own credential,
    // applies it again with pull_policy never / missing (a re-apply, a rollback)
    let owner = bootstrapped("imgowner", f);
    let v = owner.bao.put_secret(
        &owner.env,
        "registry",
        &[("value", &format!("monky:{}", registry_password()))],
    );
    let cred = json!({"use": "registry-auth", "path": format!("monky/data/{}/see/registry", owner.env), "version": v});
    let missing = if f == Flavour::V1 {
        "if_not_present"
    } else {
        "missing"
    };
    for (serial, pp) in [(1, None), (2, Some("never")), (3, Some(missing))] {
        let spec = BundleSpec {
            serial,
            compose: private_compose("app", pp, &format!("owner{serial}")),
            env_template: String::new(),
            manifest: json!({"entries": [cred.clone()]}),
            meta_extra: json!({}),
        };
        let what = format!("the owner, pull_policy {pp:?}");
        let o = apply_spec(&owner, spec, "on");
        applied(&o, &what);
        let id = one_container(&owner, "app", &what, &o);
        assert!(
            logs_show(&id, |l| l.contains(&format!("PROOF-private-owner{serial}"))),
            "{what}: {}",
            logs_of(&id)
        );
    }
    table.push(format!(
        "{f:?} | images: the project that pulled it, again with pull_policy never, {missing} | applied | - | -"
    ));
    table_out(&table);
}
all_composes!(private_images_stay_private);

// ---- 4. scheduling, OOM, rlimits ------------------------------------------------------------

/// Does the engine hold CAP_SYS_RESOURCE? Without it (this sandbox's VMs) runc cannot lower
/// `oom_score_adj`, add SYS_RESOURCE or raise a hard rlimit, whoever asks: the effect is then
/// shown as far as the engine goes (the create accepted with the value; the start refused by
/// the kernel for the engine's own lack), and in full inside the container where it has it.
fn engine_has_sys_resource() -> bool {
    let pid = std::fs::read_to_string("/var/run/docker.pid").unwrap_or_else(|_| "self".into());
    let st = std::fs::read_to_string(format!("/proc/{}/status", pid.trim()))
        .or_else(|_| std::fs::read_to_string("/proc/self/status"))
        .unwrap();
    let eff = st
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .map(|h| u64::from_str_radix(h.trim(), 16).unwrap())
        .unwrap();
    eff & (1 << 24) != 0
}

fn cap_eff_has(logs: &str, bit: u32) -> bool {
    logs.lines()
        .filter_map(|l| l.trim().strip_prefix("CapEff:"))
        .filter_map(|h| u64::from_str_radix(h.trim(), 16).ok())
        .any(|c| c & (1 << bit) != 0)
}

struct PrivShape {
    what: &'static str,
    service: &'static str,
    /// What the guard's refusal names.
    guard_key: &'static str,
    probe: &'static str,
    proof: fn(&str) -> bool,
    /// The proof, for the table.
    shows: &'static str,
    /// Only an engine with CAP_SYS_RESOURCE can start it.
    needs_sys_resource: bool,
    /// The create body the engine accepted carries it.
    accepted: fn(&Value) -> bool,
}

fn ulimit_of(c: &Value, name: &str) -> Option<i64> {
    c["HostConfig"]["Ulimits"]
        .as_array()?
        .iter()
        .find(|u| u["Name"] == name)
        .and_then(|u| u["Hard"].as_i64())
}

fn cap_added(c: &Value, cap: &str) -> bool {
    c["HostConfig"]["CapAdd"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|v| v.as_str().unwrap_or("").trim_start_matches("CAP_") == cap)
}

fn priv_shapes() -> Vec<PrivShape> {
    vec![
        PrivShape {
            what: "oom_score_adj: -500",
            service: "    oom_score_adj: -500\n",
            guard_key: "HostConfig.OomScoreAdj",
            probe: "echo OOM=$$(cat /proc/self/oom_score_adj)",
            shows: "/proc/self/oom_score_adj is -500",
            proof: |l| l.contains("OOM=-500"),
            needs_sys_resource: true,
            accepted: |c| c["HostConfig"]["OomScoreAdj"] == -500,
        },
        PrivShape {
            what: "cap_add: [SYS_NICE]",
            service: "    cap_add: [SYS_NICE]\n",
            guard_key: "HostConfig.CapAdd SYS_NICE",
            probe: "renice -n -5 -p 1 && echo PROOF-renice",
            shows: "renice -n -5 of PID 1 succeeds",
            proof: |l| l.contains("PROOF-renice"),
            needs_sys_resource: false,
            accepted: |c| cap_added(c, "SYS_NICE"),
        },
        PrivShape {
            what: "cap_add: [IPC_LOCK]",
            service: "    cap_add: [IPC_LOCK]\n",
            guard_key: "HostConfig.CapAdd IPC_LOCK",
            probe: "grep CapEff /proc/self/status",
            shows: "CapEff has IPC_LOCK (bit 14)",
            proof: |l| cap_eff_has(l, 14),
            needs_sys_resource: false,
            accepted: |c| cap_added(c, "IPC_LOCK"),
        },
        PrivShape {
            what: "cap_add: [SYS_RESOURCE]",
            service: "    cap_add: [SYS_RESOURCE]\n",
            guard_key: "HostConfig.CapAdd SYS_RESOURCE",
            probe: "ulimit -H -l unlimited && echo PROOF-sysresource",
            shows: "raises its hard memlock to unlimited",
            proof: |l| l.contains("PROOF-sysresource"),
            needs_sys_resource: true,
            accepted: |c| cap_added(c, "SYS_RESOURCE"),
        },
        PrivShape {
            what: "ulimits: {rtprio: 99}",
            service: "    ulimits:\n      rtprio: 99\n",
            guard_key: "HostConfig.Ulimits rtprio",
            probe: "echo RTPRIO=$$(ulimit -r)",
            shows: "ulimit -r is 99",
            proof: |l| l.contains("RTPRIO=99"),
            needs_sys_resource: true,
            accepted: |c| ulimit_of(c, "rtprio") == Some(99),
        },
        PrivShape {
            what: "ulimits: {nice: 40}",
            service: "    ulimits:\n      nice: 40\n",
            guard_key: "HostConfig.Ulimits nice",
            probe: "echo NICE=$$(ulimit -e)",
            shows: "ulimit -e is 40",
            proof: |l| l.contains("NICE=40"),
            needs_sys_resource: true,
            accepted: |c| ulimit_of(c, "nice") == Some(40),
        },
        PrivShape {
            what: "ulimits: {memlock: -1}",
            service: "    ulimits:\n      memlock: -1\n",
            guard_key: "HostConfig.Ulimits memlock",
            probe: "echo MEMLOCK=$$(ulimit -l)",
            shows: "ulimit -l is unlimited",
            proof: |l| l.contains("MEMLOCK=unlimited"),
            needs_sys_resource: true,
            accepted: |c| ulimit_of(c, "memlock") == Some(-1),
        },
        PrivShape {
            what: "ulimits: {memlock: 32 MiB}",
            service: "    ulimits:\n      memlock: 33554432\n",
            guard_key: "HostConfig.Ulimits memlock",
            probe: "echo MEMLOCK=$$(ulimit -l)",
            shows: "ulimit -l is 32768 kB",
            proof: |l| l.contains("MEMLOCK=32768"),
            needs_sys_resource: true,
            accepted: |c| ulimit_of(c, "memlock") == Some(33554432),
        },
    ]
}

fn priv_compose(svc: &str, probe: &str, service: &str) -> String {
    format!(
        "services:\n  {svc}:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"{probe}; echo; exec sleep 600\"]\n{service}"
    )
}

fn scheduling_and_oom_are_privilege(f: Flavour) {
    require_docker();
    let s = bootstrapped("sched", f);
    let full_effect = engine_has_sys_resource();
    let mut serial = 0;
    let mut table = Vec::new();
    for (i, sh) in priv_shapes().iter().enumerate() {
        let svc = format!("s{i}");
        let compose = priv_compose(&svc, sh.probe, sh.service);
        let full = refused(&s, &mut serial, &compose, "on", &svc, sh.what);
        assert!(
            full.starts_with("PRIVILEGED_REFUSED:"),
            "{}: {full:?}",
            sh.what
        );
        let guard = refused(&s, &mut serial, &compose, "no-file", &svc, sh.what);
        assert!(
            guard.starts_with("PRIVILEGED_REFUSED:") && guard.contains(sh.guard_key),
            "{}: the guard did not refuse by {}: {guard:?}",
            sh.what,
            sh.guard_key
        );
        let o = apply_plain(&s, &mut serial, &compose, "off");
        let id = one_container(&s, &svc, sh.what, &o);
        let c = inspect(&id);
        assert!(
            (sh.accepted)(&c),
            "{}: the engine's create does not carry it: {}",
            sh.what,
            c["HostConfig"]
        );
        let effect = if full_effect || !sh.needs_sys_resource {
            assert!(
                logs_show(&id, sh.proof),
                "{}: no proof inside the container: {} {o:?}",
                sh.what,
                logs_of(&id)
            );
            format!("inside the container: {}", sh.shows)
        } else {
            // this engine itself lacks CAP_SYS_RESOURCE: runc's attempt is refused by the
            // kernel, which is the engine's limit, not the policy's
            let err = c["State"]["Error"].as_str().unwrap_or("").to_string();
            assert!(
                err.contains("operation not permitted") || err.contains("final child's PID"),
                "{}: the start did not fail on the engine's own missing CAP_SYS_RESOURCE: {err:?} {o:?}",
                sh.what
            );
            "the engine accepts the create with it (inspect); start EPERM here only because this sandbox's dockerd lacks CAP_SYS_RESOURCE".to_string()
        };
        table.push(format!(
            "{f:?} | scheduling: {} | off: {effect} | full: {full} | guard alone: {guard}",
            sh.what
        ));
        rm_containers(&[id]);
    }
    // their harmless neighbours apply: a positive oom_score_adj, nofile, the default memlock
    let compose = priv_compose(
        "calm",
        "echo OOM=$$(cat /proc/self/oom_score_adj) NOFILE=$$(ulimit -n)",
        "    oom_score_adj: 500\n    ulimits:\n      nofile: {soft: 1024, hard: 2048}\n",
    );
    let o = apply_plain(&s, &mut serial, &compose, "on");
    applied(&o, "oom_score_adj 500, nofile");
    let id = one_container(&s, "calm", "oom_score_adj 500", &o);
    assert!(
        logs_show(&id, |l| l.contains("OOM=500 NOFILE=1024")),
        "{}",
        logs_of(&id)
    );
    table.push(format!(
        "{f:?} | scheduling: oom_score_adj 500, ulimits nofile 1024/2048 | applied, seen inside | - | -"
    ));
    table_out(&table);
}
all_composes!(scheduling_and_oom_are_privilege);

// ---- 5. the box's container ceilings ----------------------------------------------------------

const MIB: i64 = 1 << 20;

struct LimitShape {
    what: &'static str,
    service: &'static str,
    /// The engine's record of it with the policy off: what makes it over the box's ceiling.
    effect: fn(&Value) -> bool,
    effect_text: &'static str,
}

fn pids_of(c: &Value) -> i64 {
    c["HostConfig"]["PidsLimit"].as_i64().unwrap_or(0)
}

fn memory_of(c: &Value) -> i64 {
    c["HostConfig"]["Memory"].as_i64().unwrap_or(-1)
}

fn limit_shapes() -> Vec<LimitShape> {
    vec![
        LimitShape {
            what: "no limits at all",
            service: "",
            effect: |c| memory_of(c) == 0 && pids_of(c) <= 0,
            effect_text: "runs with HostConfig.Memory 0 and no PidsLimit",
        },
        LimitShape {
            what: "mem_limit 512m above the 256m ceiling",
            service: "    mem_limit: 512m\n    pids_limit: 50\n",
            effect: |c| memory_of(c) == 512 * MIB,
            effect_text: "runs with HostConfig.Memory 512 MiB",
        },
        LimitShape {
            what: "pids_limit 500 above the 100 ceiling",
            service: "    mem_limit: 128m\n    pids_limit: 500\n",
            effect: |c| pids_of(c) == 500,
            effect_text: "runs with HostConfig.PidsLimit 500",
        },
        LimitShape {
            what: "no pids limit",
            service: "    mem_limit: 128m\n",
            effect: |c| memory_of(c) == 128 * MIB && pids_of(c) <= 0,
            effect_text: "runs with no PidsLimit",
        },
    ]
}

fn limit_compose(svc: &str, service: &str) -> String {
    format!(
        "services:\n  {svc}:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"exec sleep 600\"]\n{service}"
    )
}

fn box_ceilings_bind_every_container(f: Flavour) {
    require_docker();
    let mut s = bootstrapped("limits", f);
    s.set_extra("container_limits: {memory: 256m, pids: 100}\n");
    let mut serial = 0;
    let mut table = Vec::new();
    for (i, sh) in limit_shapes().iter().enumerate() {
        let svc = format!("l{i}");
        let compose = limit_compose(&svc, sh.service);
        let full = refused(&s, &mut serial, &compose, "on", &svc, sh.what);
        assert!(
            full.starts_with(&format!("LIMIT_REFUSED: {svc} ")),
            "{}: {full:?}",
            sh.what
        );
        let guard = refused(&s, &mut serial, &compose, "no-file", &svc, sh.what);
        assert!(
            guard.starts_with("LIMIT_REFUSED:") && guard.contains(&svc),
            "{}: the guard did not refuse: {guard:?}",
            sh.what
        );
        let o = apply_plain(&s, &mut serial, &compose, "off");
        let id = one_container(&s, &svc, sh.what, &o);
        let c = inspect(&id);
        assert!(
            (sh.effect)(&c),
            "{}: {}: Memory {} PidsLimit {}",
            sh.what,
            sh.effect_text,
            c["HostConfig"]["Memory"],
            c["HostConfig"]["PidsLimit"]
        );
        assert_eq!(c["State"]["Status"], "running", "{}", sh.what);
        table.push(format!(
            "{f:?} | limits: {} | off: {} | full: {full} | guard alone: {guard}",
            sh.what, sh.effect_text
        ));
        rm_containers(&[id]);
    }
    // under the ceilings: mem_limit/pids_limit, and deploy.resources.limits
    let o = apply_plain(
        &s,
        &mut serial,
        &limit_compose("under", "    mem_limit: 128m\n    pids_limit: 50\n"),
        "on",
    );
    applied(&o, "mem_limit 128m, pids_limit 50");
    let c = inspect(&one_container(&s, "under", "under", &o));
    assert_eq!((memory_of(&c), pids_of(&c)), (128 * MIB, 50));
    table.push(format!(
        "{f:?} | limits: mem_limit 128m, pids_limit 50 | applied (Memory 128 MiB, PidsLimit 50) | - | -"
    ));
    if f == Flavour::V1 {
        // compose v1's schema has no deploy.resources.limits.pids, and without --compatibility
        // it ignores deploy.resources: the container would run with no memory limit. The only
        // wrong outcome is to apply it so.
        let compose = limit_compose(
            "deployed",
            "    deploy:\n      resources:\n        limits:\n          memory: 128M\n    pids_limit: 50\n",
        );
        let o = apply_plain(&s, &mut serial, &compose, "on");
        let ids = service_containers(&s, "deployed");
        let line = if o.run.code == 0 {
            let c = inspect(&ids[0]);
            assert_eq!(
                memory_of(&c),
                128 * MIB,
                "v1 applied deploy.resources.limits.memory without the limit: {o:?}"
            );
            "applied with Memory 128 MiB".to_string()
        } else {
            assert!(o.detail.starts_with("LIMIT_REFUSED: deployed "), "{o:?}");
            assert!(ids.is_empty(), "{o:?}");
            format!("refused (v1 ignores deploy.resources): {}", o.detail)
        };
        table.push(format!(
            "{f:?} | limits: deploy.resources.limits.memory 128M + pids_limit 50 | {line} | - | -"
        ));
    } else {
        let compose = limit_compose(
            "deployed",
            "    deploy:\n      resources:\n        limits:\n          memory: 128M\n          pids: 50\n",
        );
        let o = apply_plain(&s, &mut serial, &compose, "on");
        applied(&o, "deploy.resources.limits memory 128M, pids 50");
        let c = inspect(&one_container(&s, "deployed", "deployed", &o));
        assert_eq!((memory_of(&c), pids_of(&c)), (128 * MIB, 50));
        table.push(format!(
            "{f:?} | limits: deploy.resources.limits memory 128M, pids 50 | applied (Memory 128 MiB, PidsLimit 50) | - | -"
        ));
    }
    table_out(&table);
}
all_composes!(box_ceilings_bind_every_container);

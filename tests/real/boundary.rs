//! The host boundary on real dockerd and compose v1, v2 and v5: each attack is shown to work
//! with the policy off (a debug-build switch), then refused by the engine guard alone (file
//! analysis off), then refused by the full agent — with no container created for it. A benign
//! multi-service corpus still applies on all three lines.

use std::process::Command;

use crate::common::*;

/// Another app's container and volume, removed even when the test fails.
struct Foreign(String);

impl Drop for Foreign {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", &format!("{}-web", self.0)])
            .output();
        let _ = Command::new("docker")
            .args(["volume", "rm", "-f", &self.0])
            .output();
    }
}

struct Attack {
    what: &'static str,
    /// The service block after `image:` / `command:` (indented four spaces), plus top-level
    /// keys after the services.
    service: String,
    top: String,
    /// Shell run inside the container; its output must contain `proof` when nothing stops it
    /// (an `echo` follows: the engine logs only whole lines of a running container).
    probe: String,
    proof: String,
}

fn attacks(s: &Stack, marker_dir: &std::path::Path, marker: &str, foreign: &str) -> Vec<Attack> {
    let md = marker_dir.display();
    let mut v = vec![
        Attack {
            what: "engine socket bind",
            service: "    volumes: [\"/var/run/docker.sock:/s\"]\n".into(),
            top: String::new(),
            probe: "test -S /s && echo PROOF-socket".into(),
            proof: "PROOF-socket".into(),
        },
        Attack {
            what: "host root, long syntax, read-only",
            service: "    volumes:\n      - type: bind\n        source: /\n        target: /host\n        read_only: true\n".into(),
            top: String::new(),
            probe: format!("cat /host{md}/marker"),
            proof: marker.into(),
        },
        Attack {
            what: "the agent's own token",
            service: format!(
                "    volumes: [\"{}/bao.token:/t:ro\"]\n",
                s.state_dir().display()
            ),
            top: String::new(),
            probe: "cat /t".into(),
            proof: s.token(),
        },
        Attack {
            what: "volume driver_opts bind of a host dir",
            // (a one-letter volume name reads as a Windows drive to compose v2)
            service: "    volumes:\n      - hostdir:/h\n".into(),
            top: format!("volumes:\n  hostdir:\n    driver_opts: {{type: none, o: bind, device: {md}}}\n"),
            probe: "cat /h/marker".into(),
            proof: marker.into(),
        },
        Attack {
            what: "another project's volume (external)",
            service: "    volumes:\n      - theirs:/x\n".into(),
            top: format!("volumes:\n  theirs:\n    external: true\n    name: {foreign}\n"),
            probe: "cat /x/marker".into(),
            proof: marker.into(),
        },
        Attack {
            what: "another app's network namespace",
            service: format!("    network_mode: \"container:{foreign}-web\"\n"),
            top: String::new(),
            probe: "wget -qO- http://127.0.0.1:9999/".into(),
            proof: marker.into(),
        },
        Attack {
            what: "writable bind outside the release",
            service: format!("    volumes: [\"{md}:/m\"]\n"),
            top: String::new(),
            probe: "echo planted > /m/planted && echo PROOF-write".into(),
            proof: "PROOF-write".into(),
        },
        // (`privileged: true` cannot start at all on these sandboxed VMs — runc "unable to
        // apply caps" — so the host's PID namespace stands in for "more than a container")
        Attack {
            what: "the host's PID namespace",
            service: "    pid: host\n".into(),
            top: String::new(),
            probe: "echo PID1=$$(cat /proc/1/comm)".into(),
            proof: format!(
                "PID1={}",
                std::fs::read_to_string("/proc/1/comm").unwrap_or_default().trim()
            ),
        },
        Attack {
            what: "/proc unmasked",
            service: "    security_opt: [\"systempaths=unconfined\"]\n".into(),
            top: String::new(),
            probe: "grep -q \" /proc/kcore \" /proc/mounts || echo PROOF-unmasked".into(),
            proof: "PROOF-unmasked".into(),
        },
    ];
    if s.flavour == Flavour::V1 {
        // compose v1 speaks an API version the engine refuses `systempaths` on
        v.retain(|a| a.what != "/proc unmasked");
    }
    if s.flavour == Flavour::V5 {
        // a key compose 2.22 does not know: the engine socket under another name
        v.push(Attack {
            what: "use_api_socket (compose 2.35+)",
            service: "    use_api_socket: true\n".into(),
            top: String::new(),
            probe: "test -S /var/run/docker.sock && echo PROOF-api".into(),
            proof: "PROOF-api".into(),
        });
    }
    v
}

fn compose_for(svc: &str, a: &Attack) -> String {
    format!(
        "services:\n  {svc}:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sh\", \"-c\", \"{}; echo; exec sleep 600\"]\n{}{}",
        a.probe.replace('"', "\\\""),
        a.service,
        a.top
    )
}

fn each_attack_proven_then_refused_by_each_layer(f: Flavour) {
    require_docker();
    let s = bootstrapped("attack", f);
    let marker_dir = tempfile::Builder::new()
        .prefix("monky-marker-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let marker = format!("marker-{}-{:?}", std::process::id(), f);
    std::fs::write(marker_dir.path().join("marker"), &marker).unwrap();
    // another project's data, made the way another app on the box would have made it
    let foreign = format!("monky-foreign-{}-{:?}", std::process::id(), f).to_lowercase();
    let _cleanup = Foreign(foreign.clone());
    // and another app's private web service, reachable only inside its network namespace
    make_foreign_app(&foreign, &marker);
    let mut serial = 1;
    let mut table = Vec::new();
    for (i, a) in attacks(&s, marker_dir.path(), &marker, &foreign)
        .iter()
        .enumerate()
    {
        let svc = format!("c{i}");
        let compose = compose_for(&svc, a);
        // 1. the full agent: refused, nothing created for it
        s.tenancy
            .set_bundle(&s.env, bundle(serial, compose.clone()));
        serial += 1;
        let r = s.tick();
        assert_eq!(r.code, 1, "{}: {r:?}", a.what);
        let full = s.last_report()["detail"].as_str().unwrap_or("").to_string();
        assert_eq!(s.last_report()["result"], "failed", "{}", a.what);
        assert!(
            service_containers(&s, &svc).is_empty(),
            "{}: created",
            a.what
        );
        // every policy refusal's code ends in _REFUSED (PROTOCOL.md lists them)
        assert!(
            full.split_once(": ")
                .is_some_and(|(code, _)| code.ends_with("_REFUSED")
                    && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')),
            "{}: {full}",
            a.what
        );
        if a.what.starts_with("use_api_socket") {
            assert_eq!(full, format!("COMPOSE_KEY_REFUSED: {svc}.use_api_socket"));
        }
        // 2. the engine guard alone (file analysis off in this debug build)
        s.tenancy
            .set_bundle(&s.env, bundle(serial, compose.clone()));
        serial += 1;
        let r = tick_with(&s, "no-file");
        assert_eq!(r.code, 1, "{}: {r:?}", a.what);
        let rep = s.last_report();
        let detail = rep["detail"].as_str().unwrap_or("").to_string();
        assert_eq!(rep["result"], "failed", "{}", a.what);
        // the guard names the file passes' code for a shape it judges by the same rule (a bind,
        // a privilege), ENGINE_REFUSED for what only it judges (whose object this is);
        // use_api_socket reaches it as a bind of the engine's socket
        let code = detail.split_once(": ").map(|(c, _)| c).unwrap_or("");
        let full_code = full.split_once(": ").map(|(c, _)| c).unwrap_or("");
        let expected = if a.what.starts_with("use_api_socket") {
            "BIND_SOURCE_REFUSED"
        } else {
            full_code
        };
        assert!(
            code == "ENGINE_REFUSED" || code == expected,
            "{}: the guard did not refuse with {expected}: {detail}",
            a.what
        );
        assert!(
            service_containers(&s, &svc).is_empty(),
            "{}: created",
            a.what
        );
        assert!(!detail.contains(&s.token()), "token in the report");
        // 3. no policy at all: the attack really works on this engine and compose (no other
        // test's agent runs while its container is on the box)
        let alone = box_exclusive();
        s.tenancy.set_bundle(&s.env, bundle(serial, compose));
        serial += 1;
        let r = tick_with(&s, "off");
        let ids = service_containers(&s, &svc);
        assert_eq!(ids.len(), 1, "{}: policy off should run it: {r:?}", a.what);
        let mut seen = false;
        for _ in 0..50 {
            if logs_of(&ids[0]).contains(&a.proof) {
                seen = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let insp = Command::new("docker")
            .args(["inspect", &ids[0]])
            .output()
            .unwrap();
        assert!(
            seen,
            "{}: no proof in the container's output: {} {}",
            a.what,
            logs_of(&ids[0]),
            String::from_utf8_lossy(&insp.stdout)
        );
        table.push(format!(
            "{:?} | {} | full: {full} | guard alone: {detail}",
            f, a.what
        ));
        let _ = Command::new("docker").args(["rm", "-f", &ids[0]]).output();
        drop(alone);
    }

    for l in table {
        eprintln!("{l}");
    }
}
all_composes!(each_attack_proven_then_refused_by_each_layer);

/// Realistic services: healthchecks, named volumes, ports on 127.0.0.1 and 0.0.0.0, env_file
/// `.env`, resource limits, logging options, depends_on conditions, a read-only config bind,
/// a writable bind under an operator's bind root, a directory two services share, and a
/// sidecar in another service's network namespace with its volumes.
fn benign_corpus_applies(f: Flavour) {
    require_docker();
    let mut s = Stack::new("benign", f);
    let root = tempfile::Builder::new()
        .prefix("monky-bindroot-")
        .tempdir_in("/var/tmp")
        .unwrap();
    s.set_extra(&format!("bind_roots: [{}]\n", root.path().display()));
    s.give_bootstrap();
    let port = 18600
        + match f {
            Flavour::V1 => 0,
            Flavour::V2 => 10,
            Flavour::V5 => 20,
        };
    let compose = format!(
        r#"services:
  db:
    image: {IMAGE}
    init: true
    command: ["sh", "-c", "touch /tmp/ready; exec sleep 600"]
    healthcheck:
      test: ["CMD", "test", "-f", "/tmp/ready"]
      interval: 1s
      timeout: 1s
      retries: 5
    volumes:
      - dbdata:/var/lib/db
      - {root}/uploads:/uploads
      - ./shared:/shared
    deploy:
      resources:
        limits:
          cpus: "0.5"
          memory: 64M
    ulimits:
      nofile: {{soft: 1024, hard: 2048}}
    restart: unless-stopped
    networks: [back]
  web:
    image: {IMAGE}
    init: true
    command: ["sh", "-c", "echo hi > /tmp/index.html; exec httpd -f -p 8080 -h /tmp"]
    env_file: [.env]
    environment:
      MODE: production
    ports:
      - "127.0.0.1:{p1}:8080"
      - "0.0.0.0:{p2}:8080"
    depends_on:
      db:
        condition: service_healthy
    volumes:
      - ./config:/etc/app:ro
      - cache:/cache
    tmpfs: [/run/app]
    read_only: false
    cap_drop: [ALL]
    cap_add: [NET_BIND_SERVICE, SETUID, SETGID]
    security_opt: ["no-new-privileges:true"]
    logging:
      driver: json-file
      options: {{max-size: "1m", max-file: "2"}}
    labels:
      app.tier: front
    stop_grace_period: 5s
    mem_limit: 128m
    networks: [front, back]
  sidecar:
    image: {IMAGE}
    init: true
    command: ["sh", "-c", "exec sleep 600"]
    network_mode: service:web
    volumes_from: ["web:ro"]
    volumes:
      - ./shared:/shared
volumes:
  dbdata: {{}}
  cache: {{}}
networks:
  front: {{}}
  back:
    internal: true
"#,
        root = root.path().display(),
        p1 = port,
        p2 = port + 1,
    );
    let mut files = bundle(1, compose);
    files.push(("config/app.conf".into(), b"listen 8080\n".to_vec()));
    files.retain(|(n, _)| n != "env.template");
    files.push(("env.template".into(), b"GREETING=hello\n".to_vec()));
    s.tenancy.set_bundle(&s.env, files);
    let r = s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(s.last_report()["result"], "applied", "{r:?}");
    let mut cs = s.containers();
    cs.sort();
    assert_eq!(
        cs,
        vec![
            ("db".to_string(), "running".to_string()),
            ("sidecar".to_string(), "running".to_string()),
            ("web".to_string(), "running".to_string())
        ]
    );
    assert!(
        root.path().join("uploads").is_dir(),
        "bind root dir made by the engine"
    );
}
all_composes!(benign_corpus_applies);

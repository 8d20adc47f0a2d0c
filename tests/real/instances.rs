//! Several environments on one box (issue 34), on real parts: three instances of the agent
//! (`--instance`, their configs under a stand-in for /etc/monky-deployd), each with its own test
//! tenancy and OpenBao, on the one shared dockerd, with compose v2 and v5.
//!
//! - they converge with their ticks overlapping, and each reports only its own containers;
//! - a bundle of one that names another's volume, network or container, or another's proxy
//!   port, is refused by the full agent and by the engine guard alone, and nothing is created;
//! - one's reclaim keeps an image another may roll back to; one's `down -v` leaves the others'
//!   containers and volumes where they were;
//! - `instances` shows the three from their state files, and each metrics file carries its
//!   instance's name.

use std::path::Path;
use std::time::Instant;

use crate::common::*;
use serde_json::Value;

/// One instance: its name on the box, its stack, its one service's name.
struct Inst {
    name: &'static str,
    s: Stack,
    svc: String,
}

impl Inst {
    fn new(etc: &Path, name: &'static str, f: Flavour, extra: &str) -> Inst {
        let mut s = Stack::new(&format!("inst-{name}"), f);
        let prom = s.dir.path().join("metrics.prom");
        s.set_extra(&format!("metrics_textfile: {}\n{extra}", prom.display()));
        s.give_bootstrap();
        link_instance(etc, name, &s);
        Inst {
            name,
            s,
            svc: format!("web-{name}"),
        }
    }

    fn tick(&self, etc: &Path) -> Run {
        run_instance(etc, self.name, &["run", "--once"], &[])
    }

    /// Publishes `compose` as render `serial` and ticks once with the test build's `policy`.
    fn tick_bundle(&self, etc: &Path, serial: u64, compose: &str, policy: &str) -> Run {
        self.s
            .tenancy
            .set_bundle(&self.s.env, bundle(serial, compose.to_string()));
        run_instance(
            etc,
            self.name,
            &["run", "--once"],
            &[("MONKY_DEPLOYD_TEST_POLICY", policy)],
        )
    }

    /// `web_bundle` with the service named after the instance.
    fn web(&self, serial: u64, variant: &str) -> String {
        let mut b = web_bundle(&self.s, serial, variant, &format!("key-{}", self.name));
        b.compose = b
            .compose
            .replace("\n  web:\n", &format!("\n  {}:\n", self.svc));
        self.s.tenancy.set_bundle(&self.s.env, b.files())
    }

    fn report_services(&self) -> Vec<String> {
        self.s.last_report()["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["service"].as_str().unwrap().to_string())
            .collect()
    }

    /// The one container's (id, name, state).
    fn container(&self) -> (String, String, String) {
        let out = docker(&[
            "ps",
            "-a",
            "--filter",
            &format!("label=com.docker.compose.project={}", self.s.project()),
            "--format",
            "{{.ID}} {{.Names}} {{.State}}",
        ]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1, "{}: {out}", self.name);
        let v: Vec<&str> = lines[0].split(' ').collect();
        (v[0].into(), v[1].into(), v[2].into())
    }

    fn metrics(&self) -> String {
        std::fs::read_to_string(self.s.dir.path().join("metrics.prom")).unwrap()
    }
}

/// One service `probe` (busybox, sleeping) with `body` under it and `top` after it.
fn probe(body: &str, top: &str) -> String {
    format!(
        "services:\n  probe:\n    image: {IMAGE}\n    init: true\n    \
         command: [\"sleep\", \"600\"]\n{body}{top}"
    )
}

/// A free local port (nothing listens on it; the instance keeps it for its proxy transport).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn three_instances_converge_and_keep_apart(f: Flavour) {
    require_docker();
    let etc = tempfile::Builder::new()
        .prefix("monky-etc-")
        .tempdir()
        .unwrap();
    let etc = etc.path();
    let port = free_port();
    let mut qa = Inst::new(etc, "qa", f, "");
    let st = Inst::new(etc, "stage", f, "");
    // the third keeps a port for its proxy transport (kept whatever its transport)
    let tc = Inst::new(etc, "tenant-c", f, "");
    let text = tc.s.config_text().replacen(
        "tenancy:\n",
        &format!("tenancy:\n  proxy_port: {port}\n"),
        1,
    );
    std::fs::write(tc.s.config_path(), text).unwrap();
    let all = [&qa, &st, &tc];
    let shas: Vec<String> = all.iter().map(|i| i.web(1, "one")).collect();

    // 1. all three tick at once: their ticks overlap, each converges
    let spans: Vec<(Instant, Instant, Run)> = std::thread::scope(|sc| {
        let hs: Vec<_> = all
            .iter()
            .map(|i| {
                sc.spawn(|| {
                    let t0 = Instant::now();
                    let r = i.tick(etc);
                    (t0, Instant::now(), r)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for ((i, (_, _, r)), sha) in all.iter().zip(&spans).zip(&shas) {
        assert_eq!(r.code, 0, "{}: {r:?}", i.name);
        assert_eq!(i.s.state()["applied_sha"], sha.as_str(), "{}", i.name);
        assert_eq!(i.s.last_report()["result"], "applied", "{}", i.name);
    }
    let last_start = spans.iter().map(|s| s.0).max().unwrap();
    let first_end = spans.iter().map(|s| s.1).min().unwrap();
    assert!(last_start < first_end, "the three ticks overlapped");
    // named instances' log lines say which they are
    assert!(
        spans[0].2.stderr.contains("instance{name=qa}"),
        "{:?}",
        spans[0].2
    );

    // 2. each reports only its own containers; each metrics file names its instance
    for i in all {
        assert_eq!(i.report_services(), vec![i.svc.as_str()], "{}", i.name);
        assert_eq!(i.container().2, "running");
        let m = i.metrics();
        assert!(
            m.contains(&format!(
                "monky_deployd_containers{{instance=\"{}\",state=\"running\",health=\"healthy\"}} 1\n",
                i.name
            )),
            "{m}"
        );
        for line in m.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.contains(&format!("instance=\"{}\"", i.name)), "{line}");
        }
    }
    // a heartbeat each, in turn: still only their own
    for i in all {
        let r = i.tick(etc);
        assert_eq!(r.code, 0, "{r:?}");
        assert_eq!(i.report_services(), vec![i.svc.as_str()], "{}", i.name);
    }

    // 3. `instances`: the three, from their state files
    let r = run_instance(etc, "qa", &["instances", "--json"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let rows = v["instances"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["instance"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["qa", "stage", "tenant-c"]);
    for (row, (i, sha)) in rows.iter().zip(all.iter().zip(&shas)) {
        assert_eq!(row["env_id"], i.s.env.as_str());
        assert_eq!(row["applied_sha"], sha.as_str());
        assert_eq!(row["state"], "applied");
        assert!(row["last_tick"].as_u64().is_some());
    }
    let r = run_instance(etc, "stage", &["status", "--all"], &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with("INSTANCE "), "{}", r.stdout);
    assert_eq!(r.stdout.lines().count(), 4, "{}", r.stdout);

    // 4. qa's bundles naming stage's volume, network, container, or tenant-c's port
    let (st_id, st_name, _) = st.container();
    let st_volume = st.s.volumes().pop().expect("stage's data volume");
    let st_network = format!("{}_default", st.s.project());
    let attacks = [
        (
            "volume",
            "    volumes:\n      - theirs:/x\n".to_string(),
            format!("volumes:\n  theirs:\n    external: true\n    name: {st_volume}\n"),
        ),
        (
            "network",
            "    networks: [theirs]\n".to_string(),
            format!("networks:\n  theirs:\n    external: true\n    name: {st_network}\n"),
        ),
        (
            "container",
            format!("    network_mode: \"container:{st_name}\"\n"),
            String::new(),
        ),
        (
            "proxy port",
            format!("    ports: [\"127.0.0.1:{port}:8080\"]\n"),
            String::new(),
        ),
    ];
    let mut serial = 10;
    for (what, service, top) in &attacks {
        let compose = probe(service, top);
        for policy in ["on", "no-file"] {
            serial += 1;
            let r = qa.tick_bundle(etc, serial, &compose, policy);
            assert_eq!(r.code, 1, "{what} ({policy}): {r:?}");
            let rep = qa.s.last_report();
            assert_eq!(rep["result"], "failed", "{what}");
            let detail = rep["detail"].as_str().unwrap_or("");
            let code = detail.split(':').next().unwrap();
            // the file pass's code, and the guard's alone (file analysis off): it names the
            // other instance's project, or the reserved port
            let want = match (*what, policy) {
                ("volume" | "network", "on") => "NAME_REFUSED",
                ("container", "on") => "PRIVILEGED_REFUSED",
                ("proxy port", _) => "PORT_REFUSED",
                _ => "ENGINE_REFUSED",
            };
            assert_eq!(code, want, "{what} ({policy}): {detail}");
            if *what == "proxy port" {
                assert!(
                    detail.contains(&format!("127.0.0.1:{port} (reserved")),
                    "{detail}"
                );
            } else if policy == "no-file" {
                assert!(
                    detail.ends_with(&format!("belongs to project {}", st.s.project())),
                    "{detail}"
                );
            }
            println!("{what} ({policy}): {detail}");
            assert!(
                service_containers(&qa.s, "probe").is_empty(),
                "{what}: created"
            );
            // stage's container is the same one, still running (qa's own may have stopped:
            // a release the guard refuses mid-`up` is a failed apply of qa's)
            assert_eq!(
                st.container(),
                (st_id.clone(), st_name.clone(), "running".into())
            );
        }
    }

    // 4b. stage's own files (its state dir: token, releases) are out of qa's reach even where
    // qa's bind_roots take in the tree they sit in; another directory of that tree is not
    let shared = st.s.dir.path().join("shared-data");
    std::fs::create_dir_all(&shared).unwrap();
    let qa_prom = qa.s.dir.path().join("metrics.prom");
    qa.s.set_extra(&format!(
        "metrics_textfile: {}\nbind_roots: [{}]\n",
        qa_prom.display(),
        st.s.dir.path().display()
    ));
    for (what, src, ok) in [
        ("stage's state dir", st.s.state_dir(), false),
        ("a data dir beside it", shared.clone(), true),
    ] {
        let compose = probe(&format!("    volumes: [\"{}:/x:ro\"]\n", src.display()), "");
        for policy in ["on", "no-file"] {
            serial += 1;
            let r = qa.tick_bundle(etc, serial, &compose, policy);
            let rep = qa.s.last_report();
            let detail = rep["detail"].as_str().unwrap_or("");
            println!("{what} ({policy}): {r:?} {detail}");
            if ok {
                assert_eq!(r.code, 0, "{what} ({policy}): {r:?}");
                assert_eq!(service_containers(&qa.s, "probe").len(), 1, "{what}");
            } else {
                assert_eq!(r.code, 1, "{what} ({policy}): {r:?}");
                assert_eq!(
                    detail.split(':').next().unwrap(),
                    "BIND_SOURCE_REFUSED",
                    "{what} ({policy}): {detail}"
                );
                assert!(service_containers(&qa.s, "probe").is_empty(), "{what}");
            }
        }
    }
    qa.s.set_extra(&format!("metrics_textfile: {}\n", qa_prom.display()));

    // the control: qa alone on the box (no other instance configured) may publish that port
    serial += 1;
    let compose = probe(
        &format!("{}    volumes: [\"data:/data\"]\n", attacks[3].1),
        "volumes:\n  data: {}\n",
    );
    qa.s.tenancy.set_bundle(&qa.s.env, bundle(serial, compose));
    let r = qa.s.tick();
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(service_containers(&qa.s, "probe").len(), 1);

    // 5. `down -v` in qa: its container and volume go, the others' stay
    qa.s.tenancy.set_down(&qa.s.env, true);
    let r = qa.tick(etc);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(qa.s.containers().is_empty(), "qa is down");
    assert!(qa.s.volumes().is_empty(), "qa's volume purged");
    for i in [&st, &tc] {
        assert_eq!(i.container().2, "running", "{}", i.name);
        assert_eq!(i.s.volumes().len(), 1, "{}'s volume", i.name);
        let r = i.tick(etc);
        assert_eq!(r.code, 0, "{r:?}");
        assert_eq!(i.s.last_report()["result"], "applied");
    }
}

/// One instance's reclaim never removes an image another may roll back to. `a` was pulled by
/// qa (its ledger holds it) and then used by stage's first release; both moved on, so no
/// container runs `a`. qa's reclaim drops its release of `a`, and without the other instance
/// would remove `a` too (tests/real/care.rs shows it does); stage's kept release names it, so
/// it stays. Once stage has no release naming it, qa's next reclaim takes it.
fn reclaim_keeps_what_another_instance_may_roll_back_to(f: Flavour) {
    require_docker();
    let etc = tempfile::Builder::new()
        .prefix("monky-etc-")
        .tempdir()
        .unwrap();
    let etc = etc.path();
    let mut made = Images(Vec::new());
    let u = format!("inst-{}-{:?}", std::process::id(), f).to_lowercase();
    let [a, b, c] = ["a", "b", "c"].map(|t| make_image(&format!("{u}-{t}"), 512, true, &mut made));
    let qa = Inst::new(etc, "qa", f, "keep_releases: 1\n");
    let st = Inst::new(etc, "stage", f, "keep_releases: 1\n");
    let apply = |i: &Inst, serial: u64, image: &str| {
        let compose = format!(
            "services:\n  {}:\n    image: {image}\n    init: true\n    \
             command: [\"sh\", \"-c\", \"touch /tmp/ok; exec httpd -f -p 8080 -h /tmp\"]\n    \
             environment:\n      SERIAL: \"{serial}\"\n    \
             healthcheck:\n      test: [\"CMD\", \"test\", \"-f\", \"/tmp/ok\"]\n      interval: 1s\n      timeout: 1s\n      retries: 3\n",
            i.svc
        );
        let sha = i.s.tenancy.set_bundle(&i.s.env, bundle(serial, compose));
        let r = i.tick(etc);
        assert_eq!(r.code, 0, "{}: {r:?}", i.name);
        assert_eq!(i.s.state()["applied_sha"], sha.as_str());
        sha
    };
    let releases = |i: &Inst| {
        std::fs::read_dir(i.s.state_dir().join("releases"))
            .unwrap()
            .count()
    };
    apply(&qa, 1, &a);
    let a_id = image_id(&a).expect("qa pulled a");
    apply(&st, 1, &a);
    apply(&st, 2, &b);
    apply(&qa, 2, &b);
    apply(&qa, 3, &c);
    assert_eq!(releases(&qa), 2, "qa's release of a was reclaimed");
    assert_eq!(
        image_id(&a).as_deref(),
        Some(a_id.as_str()),
        "stage's rollback target's image stays"
    );
    // stage moves on twice: its release of a goes, and nothing on the box names a any more
    apply(&st, 3, &c);
    apply(&st, 4, &b);
    assert_eq!(releases(&st), 2);
    apply(&qa, 4, &b);
    assert_eq!(
        image_id(&a),
        None,
        "no instance may use a: qa's reclaim takes it"
    );
}

mod three_instances_converge_and_keep_apart {
    #[test]
    fn compose_v2() {
        super::three_instances_converge_and_keep_apart(super::Flavour::V2)
    }
    #[test]
    fn compose_v5() {
        super::three_instances_converge_and_keep_apart(super::Flavour::V5)
    }
}

mod reclaim_keeps_what_another_instance_may_roll_back_to {
    #[test]
    fn compose_v2() {
        super::reclaim_keeps_what_another_instance_may_roll_back_to(super::Flavour::V2)
    }
    #[test]
    fn compose_v5() {
        super::reclaim_keeps_what_another_instance_may_roll_back_to(super::Flavour::V5)
    }
}

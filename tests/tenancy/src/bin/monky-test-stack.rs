//! `monky-test-stack`: a local stack for the README demo — a real OpenBao dev server configured
//! like production, and the fake tenancy serving a bundle directory — plus everything the agent
//! needs to tick against it over the `system` transport.
//!
//! ```text
//! monky-test-stack --dir DIR --bundle BUNDLE_DIR --env ENV
//! ```
//! Writes `DIR/config.yaml` (transport system, http to 127.0.0.1 for both services, state under
//! `DIR/state`), `DIR/bootstrap.jwt` (0600, the kit's one-time grant), `DIR/stack.env` (addresses,
//! pid, desired sha), `DIR/secrets.json` (0600, every seeded secret value — for leak searches),
//! appends every report tenancy accepts to `DIR/reports.jsonl` and every request it saw to
//! `DIR/requests.log` (`METHOD path status code user-agent`). Prints one line starting with
//! `monky-test-stack ready` and runs until SIGTERM/SIGINT. SIGHUP re-reads the bundle directory
//! (a new render) and seeds any newly pinned secret versions. SIGUSR1 makes the next check-in
//! answers ask for a diagnostics bundle (`collect: usr1-<n>`); each bundle received is appended
//! to `DIR/diagnostics.jsonl`.

use clap::Parser;
use monky_test_tenancy::{write_private, SeededSecret, Stack};
use serde_json::json;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "Local OpenBao + fake monky-tenancy for monky-deployd demos")]
struct Args {
    /// Working directory for config.yaml, bootstrap.jwt, stack.env, state/.
    #[arg(long)]
    dir: PathBuf,
    /// The bundle directory to serve (compose.yaml, env.template, secrets.manifest.json, bundle.json).
    #[arg(long)]
    bundle: PathBuf,
    /// The env_id.
    #[arg(long)]
    env: String,
    /// `site` written to config.yaml.
    #[arg(long, default_value = "local")]
    site: String,
    /// `compose_cmd` written to config.yaml (auto | plugin | standalone).
    #[arg(long, default_value = "auto")]
    compose_cmd: String,
    /// Value seeded for `use: registry-auth` entries (`user:password` or a JSON object);
    /// without it those entries are not seeded.
    #[arg(long)]
    registry_cred: Option<String>,
    /// Extra YAML appended verbatim to config.yaml (top-level keys, e.g. "healthy_timeout_s: 60").
    #[arg(long)]
    config_extra: Option<String>,
}

fn main() {
    let args = Args::parse();
    std::fs::create_dir_all(&args.dir).expect("create --dir");
    let dir = std::fs::canonicalize(&args.dir).expect("canonicalize --dir");
    let bundle_dir = std::fs::canonicalize(&args.bundle).expect("--bundle directory");

    let stack = Stack::start();
    let (bao, tenancy) = (&stack.bao, &stack.tenancy);
    let mut seeded: Vec<SeededSecret> = Vec::new();
    let write_secrets = |seeded: &[SeededSecret]| {
        let v: Vec<_> = seeded
            .iter()
            .map(|s| json!({"path": s.path, "key": s.key, "version": s.version, "value": s.value}))
            .collect();
        write_private(
            &dir.join("secrets.json"),
            serde_json::to_string_pretty(&v).unwrap().as_bytes(),
        );
    };
    let (mut sha, s) = stack.publish_dir(&args.env, &bundle_dir, args.registry_cred.as_deref());
    seeded.extend(s);
    write_secrets(&seeded);

    let mut extra = format!("compose_cmd: {}\n", args.compose_cmd);
    if let Some(e) = &args.config_extra {
        extra.push_str(e);
    }
    let mut config = String::from(
        "# written by monky-test-stack: a local demo stack, plain HTTP on 127.0.0.1\n",
    );
    config.push_str(&stack.agent_config(
        &args.env,
        &dir.join("state"),
        &dir.join("bootstrap.jwt"),
        &extra,
    ));
    config = config.replace("site: local", &format!("site: {}", args.site));
    let grant = tenancy.bootstrap_grant(&args.env);
    write_private(&dir.join("bootstrap.jwt"), grant.jwt.as_bytes());
    write_private(&dir.join("config.yaml"), config.as_bytes());

    let write_env = |sha: &str| {
        let env = format!(
            "MONKY_STACK_PID={pid}\nMONKY_TENANCY_ADDR={t}\nMONKY_BAO_ADDR={b}\nMONKY_BAO_ROOT_TOKEN={root}\n\
             MONKY_ENV_ID={env}\nMONKY_DESIRED_SHA={sha}\nMONKY_CONFIG={cfg}\nMONKY_STATE_DIR={state}\n",
            pid = std::process::id(),
            t = tenancy.addr(),
            b = bao.addr(),
            root = bao.root_token(),
            env = args.env,
            cfg = dir.join("config.yaml").display(),
            state = dir.join("state").display(),
        );
        write_private(&dir.join("stack.env"), env.as_bytes());
    };
    write_env(&sha);
    println!(
        "monky-test-stack ready tenancy={} bao={} env={} sha={} config={}",
        tenancy.addr(),
        bao.addr(),
        args.env,
        sha,
        dir.join("config.yaml").display()
    );
    let _ = std::io::stdout().flush();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM");
        let mut int = signal(SignalKind::interrupt()).expect("SIGINT");
        let mut hup = signal(SignalKind::hangup()).expect("SIGHUP");
        let mut usr1 = signal(SignalKind::user_defined1()).expect("SIGUSR1");
        let mut asked = 0usize;
        let mut collected = 0usize;
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
        let mut reported = 0usize;
        let mut logged = 0usize;
        loop {
            tokio::select! {
                _ = term.recv() => break,
                _ = int.recv() => break,
                _ = hup.recv() => {
                    let (new_sha, s) =
                        stack.publish_dir(&args.env, &bundle_dir, args.registry_cred.as_deref());
                    sha = new_sha;
                    seeded.extend(s);
                    write_secrets(&seeded);
                    write_env(&sha);
                    println!("monky-test-stack reloaded sha={sha}");
                    let _ = std::io::stdout().flush();
                }
                _ = usr1.recv() => {
                    asked += 1;
                    tenancy.request_diagnostics(&args.env, &format!("usr1-{asked}"));
                }
                _ = tick.tick() => {
                    let d = tenancy.diagnostics();
                    if d.len() > collected {
                        let mut f = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .mode(0o600)
                            .open(dir.join("diagnostics.jsonl"))
                            .expect("diagnostics.jsonl");
                        for b in &d[collected..] {
                            let _ = writeln!(f, "{b}");
                        }
                        collected = d.len();
                    }
                    let reports = tenancy.reports();
                    if reports.len() > reported {
                        let mut f = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .mode(0o600)
                            .open(dir.join("reports.jsonl"))
                            .expect("reports.jsonl");
                        for r in &reports[reported..] {
                            let _ = writeln!(f, "{r}");
                        }
                        reported = reports.len();
                    }
                    let reqs = tenancy.requests();
                    if reqs.len() > logged {
                        let mut f = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .mode(0o600)
                            .open(dir.join("requests.log"))
                            .expect("requests.log");
                        for r in &reqs[logged..] {
                            let _ = writeln!(
                                f,
                                "{} {} {} {} {}",
                                r.method,
                                r.path,
                                r.status,
                                r.code.as_deref().unwrap_or("-"),
                                r.user_agent.as_deref().unwrap_or("-")
                            );
                        }
                        logged = reqs.len();
                    }
                }
            }
        }
    });
    println!("monky-test-stack stopped");
    drop(stack);
}

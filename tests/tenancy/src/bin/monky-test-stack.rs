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
//! (a new render) and seeds any newly pinned secret versions.

use clap::Parser;
use monky_test_tenancy::{read_bundle_dir, Bao, BaoRoleOpts, Signer, Tenancy, TenancyOpts};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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

/// What has been written per KV path: current version and the keys every version carries.
#[derive(Default)]
struct Seeded {
    paths: BTreeMap<String, u64>,
    values: Vec<Value>,
}

fn write_private(path: &Path, content: &[u8]) {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .unwrap_or_else(|e| panic!("create {}: {e}", tmp.display()));
    f.write_all(content).expect("write");
    f.sync_all().ok();
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("rename {}: {e}", path.display()));
}

fn random_value() -> String {
    let mut b = [0u8; 12];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b))
        .expect("urandom");
    format!("sv-{}", hex::encode(b))
}

/// Seeds every manifest entry so its pinned version exists and carries its key.
fn seed(bao: &Bao, files: &[(String, Vec<u8>)], args: &Args, seeded: &mut Seeded) {
    let Some((_, manifest)) = files.iter().find(|f| f.0 == "secrets.manifest.json") else {
        eprintln!("monky-test-stack: no secrets.manifest.json in the bundle, nothing seeded");
        return;
    };
    let m: Value = serde_json::from_slice(manifest).expect("secrets.manifest.json is JSON");
    // path -> (max version, keys)
    let mut want: BTreeMap<String, (u64, Vec<String>)> = BTreeMap::new();
    for e in m["entries"].as_array().cloned().unwrap_or_default() {
        let path = e["path"].as_str().unwrap_or_default().to_string();
        if !path.starts_with("monky/data/") {
            eprintln!("monky-test-stack: skip {path:?} (not under monky/data/)");
            continue;
        }
        let is_registry = e["use"] == "registry-auth";
        if is_registry && args.registry_cred.is_none() {
            eprintln!("monky-test-stack: skip registry-auth {path} (no --registry-cred)");
            continue;
        }
        let key = e["key"].as_str().unwrap_or("value").to_string();
        let version = e["version"].as_u64().unwrap_or(1);
        let w = want.entry(path).or_default();
        w.0 = w.0.max(version);
        if !w.1.contains(&key) {
            w.1.push(key);
        }
        if is_registry {
            w.1.retain(|k| k != "\u{0}registry");
            w.1.push("\u{0}registry".into());
        }
    }
    for (path, (version, keys)) in want {
        let have = seeded.paths.get(&path).copied().unwrap_or(0);
        for v in have + 1..=version {
            let mut data = serde_json::Map::new();
            let registry = keys.iter().any(|k| k == "\u{0}registry");
            for k in keys.iter().filter(|k| !k.starts_with('\u{0}')) {
                let val = if registry {
                    args.registry_cred.clone().unwrap_or_default()
                } else {
                    random_value()
                };
                seeded
                    .values
                    .push(json!({"path": path, "key": k, "version": v, "value": val}));
                data.insert(k.clone(), Value::String(val));
            }
            let (st, body) = bao.request(
                "POST",
                &format!("/v1/{path}"),
                Some(bao.root_token()),
                Some(&json!({ "data": data })),
            );
            if st != 200 {
                panic!("seed {path} v{v}: {st} {body}");
            }
            let got = body["data"]["version"].as_u64().unwrap_or(0);
            assert_eq!(
                got, v,
                "seed {path}: OpenBao wrote version {got}, wanted {v}"
            );
        }
        seeded.paths.insert(path, version.max(have));
    }
}

fn main() {
    let args = Args::parse();
    std::fs::create_dir_all(&args.dir).expect("create --dir");
    let dir = std::fs::canonicalize(&args.dir).expect("canonicalize --dir");
    let bundle_dir = std::fs::canonicalize(&args.bundle).expect("--bundle directory");

    let bao = Bao::start();
    let signer = Signer::new();
    bao.configure(&signer.public_key_pem(), BaoRoleOpts::default());
    let tenancy = Tenancy::start(TenancyOpts {
        bao_addr: bao.addr(),
        bao_root_token: bao.root_token().to_string(),
        signer,
        lease_limit_per_hour: 5,
    });

    let mut seeded = Seeded::default();
    let files = read_bundle_dir(&bundle_dir);
    seed(&bao, &files, &args, &mut seeded);
    let mut sha = tenancy.set_bundle(&args.env, files);
    write_private(
        &dir.join("secrets.json"),
        serde_json::to_string_pretty(&seeded.values)
            .unwrap()
            .as_bytes(),
    );

    let grant = tenancy.bootstrap_grant(&args.env);
    write_private(&dir.join("bootstrap.jwt"), grant.jwt.as_bytes());

    let mut config = format!(
        "# written by monky-test-stack: a local demo stack, plain HTTP on 127.0.0.1\n\
         env_id: {env}\n\
         site: {site}\n\
         transport: system\n\
         tenancy:\n  host: 127.0.0.1\n  port: {tport}\n  scheme: http\n\
         bao:\n  host: 127.0.0.1\n  port: {bport}\n  scheme: http\n  ca_file: \"\"\n\
         state_dir: {state}\n\
         bootstrap_path: {boot}\n\
         compose_cmd: {compose}\n",
        env = args.env,
        site = args.site,
        tport = tenancy.port(),
        bport = bao.port(),
        state = dir.join("state").display(),
        boot = dir.join("bootstrap.jwt").display(),
        compose = args.compose_cmd,
    );
    if let Some(extra) = &args.config_extra {
        config.push_str(extra);
        if !extra.ends_with('\n') {
            config.push('\n');
        }
    }
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
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
        let mut reported = 0usize;
        let mut logged = 0usize;
        loop {
            tokio::select! {
                _ = term.recv() => break,
                _ = int.recv() => break,
                _ = hup.recv() => {
                    let files = read_bundle_dir(&bundle_dir);
                    seed(&bao, &files, &args, &mut seeded);
                    write_private(
                        &dir.join("secrets.json"),
                        serde_json::to_string_pretty(&seeded.values).unwrap().as_bytes(),
                    );
                    sha = tenancy.set_bundle(&args.env, files);
                    write_env(&sha);
                    println!("monky-test-stack reloaded sha={sha}");
                    let _ = std::io::stdout().flush();
                }
                _ = tick.tick() => {
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
    drop(tenancy);
    drop(bao);
}

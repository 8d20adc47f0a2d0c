//! Bao + tenancy wired together, secrets seeded from a bundle's manifest, and the agent's
//! `config.yaml` for the `system` transport over plain HTTP.

use crate::bao::{Bao, BaoRoleOpts};
use crate::signer::Signer;
use crate::tenancy::{Tenancy, TenancyOpts};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// One secret value written to OpenBao.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeededSecret {
    /// The manifest path, e.g. `monky/data/env-a/see/api_key`.
    pub path: String,
    pub key: String,
    pub version: u64,
    pub value: String,
}

/// A real OpenBao (configured for the signer) and a tenancy verifying against it.
pub struct Stack {
    pub bao: Bao,
    pub tenancy: Tenancy,
}

/// What [`Stack::write_agent_files`] wrote.
#[derive(Clone, Debug)]
pub struct AgentFiles {
    pub config: PathBuf,
    pub state_dir: PathBuf,
    pub bootstrap: PathBuf,
    /// The kit grant written to `bootstrap`.
    pub grant: crate::Grant,
}

fn random_value() -> String {
    format!("sv-{}", crate::signer::random_hex(12))
}

/// Writes `content` to `path` atomically with mode 0600.
pub fn write_private(path: &Path, content: &[u8]) {
    let tmp = path.with_extension("tmp~");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .unwrap_or_else(|e| panic!("create {}: {e}", tmp.display()));
    f.write_all(content).expect("write");
    std::fs::rename(&tmp, path).unwrap_or_else(|e| panic!("rename {}: {e}", path.display()));
}

impl Bao {
    /// Seeds every entry of a `secrets.manifest.json` so that its pinned `version` exists and
    /// carries its `key` (default `value`) with a random value (`sv-<hex>`); versions already
    /// present are left alone, so calling it again after a new render only adds what is new.
    /// Entries with `use: registry-auth` get `registry_cred` verbatim (skipped when `None`).
    /// Paths not under `monky/data/` are skipped. Returns what was written, in order.
    pub fn seed_manifest(&self, manifest: &[u8], registry_cred: Option<&str>) -> Vec<SeededSecret> {
        let m: Value = serde_json::from_slice(manifest).expect("secrets.manifest.json is JSON");
        // path -> (max version, keys, is registry)
        let mut want: BTreeMap<String, (u64, Vec<String>, bool)> = BTreeMap::new();
        for e in m["entries"].as_array().cloned().unwrap_or_default() {
            let path = e["path"].as_str().unwrap_or_default().to_string();
            if !path.starts_with("monky/data/") {
                continue;
            }
            let registry = e["use"] == "registry-auth";
            if registry && registry_cred.is_none() {
                continue;
            }
            let key = e["key"].as_str().unwrap_or("value").to_string();
            let w = want.entry(path).or_default();
            w.0 = w.0.max(e["version"].as_u64().unwrap_or(1));
            if !w.1.contains(&key) {
                w.1.push(key);
            }
            w.2 |= registry;
        }
        let mut out = Vec::new();
        for (path, (version, keys, registry)) in want {
            let rest = &path["monky/data/".len()..];
            let (st, meta) = self.request(
                "GET",
                &format!("/v1/monky/metadata/{rest}"),
                Some(self.root_token()),
                None,
            );
            let have = if st == 200 {
                meta["data"]["current_version"].as_u64().unwrap_or(0)
            } else {
                0
            };
            for v in have + 1..=version {
                let mut data = serde_json::Map::new();
                for k in &keys {
                    let val = match (registry, registry_cred) {
                        (true, Some(c)) => c.to_string(),
                        _ => random_value(),
                    };
                    out.push(SeededSecret {
                        path: path.clone(),
                        key: k.clone(),
                        version: v,
                        value: val.clone(),
                    });
                    data.insert(k.clone(), Value::String(val));
                }
                let (st, body) = self.request(
                    "POST",
                    &format!("/v1/{path}"),
                    Some(self.root_token()),
                    Some(&json!({ "data": data })),
                );
                assert_eq!(st, 200, "seed {path} v{v}: {body}");
                let got = body["data"]["version"].as_u64().unwrap_or(0);
                assert_eq!(
                    got, v,
                    "seed {path}: OpenBao wrote version {got}, wanted {v}"
                );
            }
        }
        out
    }
}

impl Stack {
    /// Bao (production role TTLs 1 h / 4 h) + tenancy (5 leases per env per hour).
    pub fn start() -> Stack {
        Stack::start_with(BaoRoleOpts::default())
    }

    /// As [`Stack::start`] with other role TTLs (token-lifecycle tests).
    pub fn start_with(opts: BaoRoleOpts) -> Stack {
        let bao = Bao::start();
        let signer = Signer::new();
        bao.configure(&signer.public_key_pem(), opts);
        let tenancy = Tenancy::start(TenancyOpts {
            bao_addr: bao.addr(),
            bao_root_token: bao.root_token().to_string(),
            signer,
            lease_limit_per_hour: 5,
        });
        Stack { bao, tenancy }
    }

    /// Renders the bundle directory for `env` (sets it desired) and seeds its manifest's secrets.
    /// Returns the sha and the seeded secrets.
    pub fn publish_dir(
        &self,
        env: &str,
        dir: impl AsRef<Path>,
        registry_cred: Option<&str>,
    ) -> (String, Vec<SeededSecret>) {
        let files = crate::read_bundle_dir(dir.as_ref());
        let seeded = files
            .iter()
            .find(|f| f.0 == "secrets.manifest.json")
            .map(|f| self.bao.seed_manifest(&f.1, registry_cred))
            .unwrap_or_default();
        (self.tenancy.set_bundle(env, files), seeded)
    }

    /// The agent's `config.yaml` text: `env_id`, `site: local`, `transport: system`,
    /// `tenancy`/`bao` as `scheme: http`, `host: 127.0.0.1`, their ports (`bao.ca_file: ""`),
    /// `state_dir`, `bootstrap_path`, then `extra` verbatim (top-level keys not listed here, e.g.
    /// `"healthy_timeout_s: 30\ncompose_cmd: standalone\n"`).
    pub fn agent_config(
        &self,
        env: &str,
        state_dir: &Path,
        bootstrap: &Path,
        extra: &str,
    ) -> String {
        let mut c = format!(
            "env_id: {env}\nsite: local\ntransport: system\n\
             tenancy:\n  host: 127.0.0.1\n  port: {tport}\n  scheme: http\n\
             bao:\n  host: 127.0.0.1\n  port: {bport}\n  scheme: http\n  ca_file: \"\"\n\
             state_dir: {state}\nbootstrap_path: {boot}\n",
            tport = self.tenancy.port(),
            bport = self.bao.port(),
            state = state_dir.display(),
            boot = bootstrap.display(),
        );
        c.push_str(extra);
        if !c.ends_with('\n') {
            c.push('\n');
        }
        c
    }

    /// Writes `dir/config.yaml` ([`Stack::agent_config`], `state_dir = dir/state`) and
    /// `dir/bootstrap.jwt` (0600, a fresh kit grant from [`Tenancy::bootstrap_grant`]).
    pub fn write_agent_files(&self, env: &str, dir: &Path, extra: &str) -> AgentFiles {
        std::fs::create_dir_all(dir).expect("create agent dir");
        let state_dir = dir.join("state");
        let bootstrap = dir.join("bootstrap.jwt");
        let config = dir.join("config.yaml");
        let grant = self.tenancy.bootstrap_grant(env);
        write_private(&bootstrap, grant.jwt.as_bytes());
        write_private(
            &config,
            self.agent_config(env, &state_dir, &bootstrap, extra)
                .as_bytes(),
        );
        AgentFiles {
            config,
            state_dir,
            bootstrap,
            grant,
        }
    }
}

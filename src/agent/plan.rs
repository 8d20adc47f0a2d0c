//! `monky-deployd plan [--json]` (issue 11): what the next apply would do, without doing any of
//! it. One check-in with the stored token, the desired bundle fetched and its sha (and signature)
//! verified, then every check the apply runs — the static policy, the compose normalised pass
//! with placeholder values for the secrets, disk, serial/rollback, registry credential presence
//! — and a per-service diff against the running containers (compose's own config hashes against
//! their `com.docker.compose.config-hash` labels). Never: a lease, an OpenBao request, a `.env`,
//! a container change, a report. Exit 0 if the apply would proceed, 1 if a refusal would fire,
//! 75 on transport trouble. The JSON (`--json`) is documented in docs/OPERATIONS.md.

use std::collections::BTreeMap;

use serde::Serialize;

use super::*;
use crate::tenancy::Action;

/// Version of the `--json` document: bumped only when a field changes meaning or goes away.
pub const PLAN_SCHEMA: u32 = 1;

/// What every secret is replaced with in the normalised pass.
const PLACEHOLDER: &str = "monky-plan-placeholder";

#[derive(Debug, Default, Serialize)]
pub struct Plan {
    pub schema: u32,
    pub env_id: String,
    /// Tenancy's action: `apply` | `none` | `down`.
    pub action: String,
    /// What a tick would do now: `apply` | `refuse` | `defer` | `hold` | `down` | `nothing`.
    pub would: String,
    pub urgent: bool,
    pub applied: Release,
    pub desired: Release,
    /// Release key id that signed the bundle (`null`: unsigned, no keys configured).
    pub signed_by: Option<String>,
    pub services: Vec<ServiceChange>,
    /// Secret names the apply would read (never values).
    pub secrets: Vec<SecretRef>,
    /// Whether env.template or the secret references differ from the running release
    /// (`null`: nothing applied yet).
    pub secrets_changed: Option<bool>,
    pub registry_credential: RegistryCred,
    pub disk: Option<Disk>,
    pub window: WindowInfo,
    pub rollback: RollbackInfo,
    /// `down` only: whether volumes would be removed.
    pub down_volumes: Option<bool>,
    pub refusals: Vec<PlanRefusal>,
    pub exit_code: i32,
}

#[derive(Debug, Default, Serialize)]
pub struct Release {
    pub sha: Option<String>,
    pub serial: Option<u64>,
}

#[derive(Debug, Default, Serialize)]
pub struct ServiceChange {
    pub service: String,
    /// `added` | `removed` | `changed` | `unchanged`.
    pub change: String,
    pub image_changed: bool,
    pub config_changed: bool,
    pub image_running: Option<String>,
    pub image_desired: Option<String>,
    pub config_hash_running: Option<String>,
    pub config_hash_desired: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct SecretRef {
    pub var: Option<String>,
    pub path: String,
    pub key: String,
    pub version: Option<u64>,
    pub registry_auth: bool,
}

#[derive(Debug, Default, Serialize)]
pub struct RegistryCred {
    /// Some image comes from `registry_host`.
    pub needed: bool,
    pub registry: String,
    /// The bundle's manifest carries a `use: registry-auth` entry.
    pub in_manifest: bool,
    /// `<state_dir>/docker/config.json` already holds a credential for it.
    pub on_box: bool,
}

#[derive(Debug, Default, Serialize)]
pub struct Disk {
    pub path: String,
    pub free_bytes: u64,
    pub need_bytes: u64,
}

#[derive(Debug, Default, Serialize)]
pub struct WindowInfo {
    pub entries: Vec<String>,
    pub open_now: bool,
    /// The window that opens next and when (RFC 3339), when closed now.
    pub next_window: Option<String>,
    pub next_at: Option<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct RollbackInfo {
    pub auto_rollback: bool,
    /// The release an automatic rollback would bring back if this apply failed.
    pub target: Option<String>,
    /// The desired sha failed and was rolled back: not retried before this time (RFC 3339).
    pub held_until: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct PlanRefusal {
    pub code: String,
    pub detail: String,
}

/// Runs the plan and prints it; the process exit code.
pub async fn plan(cfg: Config, json: bool) -> Exit {
    let env_id = cfg.env_id.clone();
    let res = async {
        let mut agent = Agent::new(cfg, false)?;
        agent.plan_locked().await
    }
    .await;
    match res {
        Ok(p) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&p).unwrap_or_default());
            } else {
                print_text(&p);
            }
            if p.exit_code == 0 {
                Exit::Ok
            } else {
                Exit::Fail
            }
        }
        Err(f) => {
            let msg = redact::redact(&f.msg);
            if json {
                let v = serde_json::json!({
                    "schema": PLAN_SCHEMA, "env_id": env_id,
                    "error": msg, "exit_code": f.exit as i32,
                });
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            }
            eprintln!("monky-deployd plan: {msg}");
            f.exit
        }
    }
}

fn rfc3339(z: &jiff::Zoned) -> String {
    z.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// The registry host of an image reference (`None`: Docker Hub).
fn image_registry(image: &str) -> Option<&str> {
    let (first, _) = image.split_once('/')?;
    (first.contains('.') || first.contains(':') || first == "localhost").then_some(first)
}

/// `service → image` from a compose document.
fn images(doc: &serde_yaml_ng::Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(m) = doc.get("services").and_then(|s| s.as_mapping()) {
        for (k, v) in m {
            if let Some(name) = k.as_str() {
                let img = v
                    .get("image")
                    .and_then(|i| i.as_str())
                    .unwrap_or_default()
                    .to_string();
                out.insert(name.to_string(), img);
            }
        }
    }
    out
}

/// One secret reference: var, path, key, version, registry-auth.
type SecretKey = (Option<String>, String, String, Option<u64>, bool);

/// The secret references of a manifest, comparable across releases.
fn refs(m: &bundle::Manifest) -> Vec<SecretKey> {
    let mut v: Vec<_> = m
        .entries
        .iter()
        .map(|e| {
            (
                e.var.clone(),
                e.path.clone(),
                e.key.clone(),
                e.version,
                e.is_registry_auth(),
            )
        })
        .collect();
    v.sort();
    v
}

/// A scratch directory or file of the plan, removed when the plan ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::fs::remove_file(&self.0).is_err() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl Agent {
    async fn plan_locked(&mut self) -> Result<Plan, Failure> {
        if !self.cfg.state_dir.is_dir() {
            return Err(Failure::fail(format!(
                "no state directory {}: this box has not been bootstrapped (plan never logs in)",
                self.cfg.state_dir.display()
            )));
        }
        let Some(_lock) = state::try_lock(&self.cfg.lock_path())? else {
            return Err(Failure::new(
                Exit::TempFail,
                "a tick is running (the lock is held); try again in a moment",
            ));
        };
        self.state = State::load(&self.cfg.state_path())?;
        match state::read_token(&self.cfg.token_path())? {
            Some(t) => {
                redact::register(&t);
                self.token = Some(t);
            }
            None => {
                return Err(Failure::fail(format!(
                    "no token at {}: run `monky-deployd bootstrap` or a tick first (plan never logs in)",
                    self.cfg.token_path().display()
                )))
            }
        }
        if let Some(t) = &self.state.token {
            if !t.env_id.is_empty() && t.env_id != self.cfg.env_id {
                return Err(Failure::new(
                    Exit::EnvMismatch,
                    format!(
                        "AGENT_ENV_MISMATCH: the stored token is pinned to {} but config.yaml says {}",
                        t.env_id, self.cfg.env_id
                    ),
                ));
            }
        }
        let containers = self.containers().await;
        let resp = self.checkin(&containers).await.map_err(from_tenancy)?;
        let mut p = Plan {
            schema: PLAN_SCHEMA,
            env_id: self.cfg.env_id.clone(),
            action: resp.action.to_string(),
            urgent: resp.urgent,
            applied: Release {
                sha: self.state.applied_sha.clone(),
                serial: self.state.applied_serial,
            },
            desired: Release {
                sha: resp.desired_sha.clone(),
                serial: None,
            },
            registry_credential: RegistryCred {
                registry: self.cfg.registry_host.clone(),
                ..Default::default()
            },
            ..Default::default()
        };
        p.window.entries = self.cfg.apply_windows.clone();
        let wait = self.windows.wait(&self.windows.now());
        p.window.open_now = wait.is_none();
        if let Some((w, at)) = &wait {
            p.window.next_window = Some(w.clone());
            p.window.next_at = Some(rfc3339(at));
        }
        p.rollback.auto_rollback = self.cfg.auto_rollback;
        let running = self.running_services().await;
        match resp.action {
            Action::Apply => {
                let sha = resp.desired_sha.clone().unwrap_or_default();
                p.rollback.target = self.rollback_candidate(&sha, &containers);
                if let Some(f) = self
                    .state
                    .failed_release
                    .as_ref()
                    .filter(|_| self.cfg.auto_rollback)
                {
                    let until = f.at.saturating_add(self.cfg.retry_failed_after_s);
                    if f.sha == sha && state::now() < until {
                        p.rollback.held_until = Some(
                            humantime::format_rfc3339_seconds(
                                std::time::UNIX_EPOCH + Duration::from_secs(until),
                            )
                            .to_string(),
                        );
                    }
                }
                let mut refusals = Vec::new();
                let token = self.token.clone().unwrap_or_default();
                match self.c.tenancy.bundle(&token, &self.cfg.env_id, &sha).await {
                    Ok((wire, _)) => {
                        if let Err(r) = self
                            .plan_apply(&sha, wire, &running, &mut p, &mut refusals)
                            .await
                        {
                            refusals.push(r);
                        }
                    }
                    Err(TenancyError::BundleTooLarge(n)) => {
                        refusals.push(Refusal::new("BUNDLE_TOO_LARGE", format!("over {n} bytes")))
                    }
                    // transport trouble (75) or tenancy's refusal to hand it out
                    Err(e) => return Err(from_tenancy(e)),
                }
                for r in refusals {
                    let r = PlanRefusal {
                        code: r.code.to_string(),
                        detail: redact::redact(&r.detail),
                    };
                    if !p
                        .refusals
                        .iter()
                        .any(|x| x.code == r.code && x.detail == r.detail)
                    {
                        p.refusals.push(r);
                    }
                }
                p.would = if !p.refusals.is_empty() {
                    "refuse"
                } else if p.rollback.held_until.is_some() {
                    "hold"
                } else if wait.is_some() && !resp.urgent {
                    "defer"
                } else {
                    "apply"
                }
                .into();
            }
            Action::Down => {
                let prod = resp.prod || self.cfg.prod == Some(true);
                let purge =
                    resp.purge_volumes || self.cfg.volumes_on_absent == VolumesOnAbsent::Purge;
                p.down_volumes = Some(purge && !prod);
                p.would = "down".into();
                p.services = running
                    .iter()
                    .map(|(s, (img, hash))| ServiceChange {
                        service: s.clone(),
                        change: "removed".into(),
                        image_running: Some(img.clone()),
                        config_hash_running: hash.clone(),
                        ..Default::default()
                    })
                    .collect();
            }
            _ => {
                p.would = "nothing".into();
                p.services = running
                    .iter()
                    .map(|(s, (img, hash))| ServiceChange {
                        service: s.clone(),
                        change: "unchanged".into(),
                        image_running: Some(img.clone()),
                        image_desired: Some(img.clone()),
                        config_hash_running: hash.clone(),
                        config_hash_desired: hash.clone(),
                        ..Default::default()
                    })
                    .collect();
            }
        }
        p.exit_code = if p.refusals.is_empty() { 0 } else { 1 };
        Ok(p)
    }

    /// `service → (image, config hash label)` of the running project.
    async fn running_services(&self) -> BTreeMap<String, (String, Option<String>)> {
        let raw = self
            .engine
            .containers_raw(&self.cfg.compose_project)
            .await
            .unwrap_or_default();
        let mut out = BTreeMap::new();
        for c in raw {
            let l = &c["Labels"];
            if l["com.docker.compose.oneoff"] == "True" {
                continue;
            }
            let Some(s) = l["com.docker.compose.service"].as_str() else {
                continue;
            };
            out.insert(
                s.to_string(),
                (
                    c["Image"].as_str().unwrap_or_default().to_string(),
                    l["com.docker.compose.config-hash"]
                        .as_str()
                        .map(String::from),
                ),
            );
        }
        out
    }

    /// The bundle side of the plan: every refusal found goes to `refusals`; `Err` is a refusal
    /// that stops the rest (the bundle cannot be read or rendered).
    async fn plan_apply(
        &mut self,
        sha: &str,
        mut wire: crate::tenancy::BundleWire,
        running: &BTreeMap<String, (String, Option<String>)>,
        p: &mut Plan,
        refusals: &mut Vec<Refusal>,
    ) -> Result<(), Refusal> {
        let signatures = std::mem::take(&mut wire.signatures);
        let b = Bundle::decode(wire, &self.cfg.env_id, sha)?;
        p.signed_by = self.keys.verify(&b.sha, &signatures)?;
        p.desired.serial = Some(b.meta.serial);
        p.secrets = b
            .manifest
            .entries
            .iter()
            .map(|e| SecretRef {
                var: e.var.clone(),
                path: e.path.clone(),
                key: e.key.clone(),
                version: e.version,
                registry_auth: e.is_registry_auth(),
            })
            .collect();
        // the checks before a lease, each on its own so every refusal is listed
        if let Err(r) = b.check_manifest(&self.cfg.bao.kv_mount, &self.cfg.env_id) {
            refusals.push(r);
        }
        if let Err(r) = b.check_env_template() {
            refusals.push(r);
        }
        let privileged = self.privileged(&b);
        match compose_check::parse(b.compose()) {
            Ok(doc) => {
                if let Err(r) = compose_check::check(&doc, privileged) {
                    refusals.push(self.why_privileged(&b, r));
                }
            }
            Err(r) => refusals.push(r),
        }
        if let Some(r) = self.rollback_refusal(&b) {
            refusals.push(r);
        }
        match self.engine.docker_root().await {
            Ok(root) => match runtime::free_bytes(&root) {
                Ok(free) => {
                    let need = super::checks::disk_need(&b);
                    p.disk = Some(Disk {
                        path: root.display().to_string(),
                        free_bytes: free,
                        need_bytes: need,
                    });
                    refusals.extend(super::checks::disk_refusal(&root, free, need));
                }
                Err(e) => refusals.push(Refusal::new(
                    "DISK_INSUFFICIENT",
                    format!("cannot measure {}: {e}", root.display()),
                )),
            },
            Err(e) => refusals.push(Refusal::new("DOCKER_UNAVAILABLE", e.to_string())),
        }
        // the normalised pass, with a placeholder for every secret: the bundle's files in a
        // scratch directory without any `.env`, the placeholders in a file of their own
        let placeholders: BTreeMap<String, Zeroizing<String>> = b
            .manifest
            .entries
            .iter()
            .filter(|e| !e.is_registry_auth())
            .filter_map(|e| e.var.clone())
            .map(|v| (v, Zeroizing::new(PLACEHOLDER.to_string())))
            .collect();
        let env = bundle::render_env(&b.env_template(), &placeholders)?;
        state::ensure_dir(&self.cfg.staging_dir(), 0o700)
            .map_err(|e| Refusal::new("PLAN_SCRATCH", e.to_string()))?;
        let scratch = Scratch(
            self.cfg
                .staging_dir()
                .join(format!("plan-{}", std::process::id())),
        );
        bundle::stage(&scratch.0, &b, "")
            .map_err(|e| Refusal::new("PLAN_SCRATCH", e.to_string()))?;
        let _ = std::fs::remove_file(scratch.0.join(".env"));
        let env_file = self
            .cfg
            .staging_dir()
            .join(format!("plan-{}.placeholders", std::process::id()));
        state::write_private(&env_file, env.as_bytes(), 0o600)
            .map_err(|e| Refusal::new("PLAN_SCRATCH", e.to_string()))?;
        let _env_file_gone = Scratch(env_file.clone());
        let mut compose = Compose::detect(&self.cfg)
            .await
            .map_err(|e| Refusal::new("COMPOSE_CONFIG_INVALID", e.to_string()))?;
        compose.set_deadline(Some(
            tokio::time::Instant::now() + Duration::from_secs(self.cfg.tick_budget_s),
        ));
        let guard = self
            .guard(&mut compose, &scratch.0, privileged)
            .await
            .map_err(|f| Refusal::new("ENGINE_REFUSED", f.msg))?;
        let config = compose.config_env(&scratch.0, &env_file).await;
        let mut desired_images = BTreeMap::new();
        match config {
            Ok((normalised, warnings)) => {
                let unset = runtime::unset_variables(&warnings);
                if !unset.is_empty() {
                    refusals.push(Refusal::new(
                        "ENV_INCOMPLETE",
                        format!(
                            "compose.yaml uses variables nothing defines: {}",
                            unset.join(", ")
                        ),
                    ));
                }
                let ctx = self.normalised_ctx(&scratch.0, privileged);
                match compose_check::parse(normalised.as_bytes()) {
                    Ok(doc) => {
                        desired_images = images(&doc);
                        if let Err(r) = compose_check::check_normalised(&doc, privileged, &ctx) {
                            refusals.push(self.why_privileged(&b, r));
                        }
                    }
                    Err(r) => refusals.push(r),
                }
            }
            Err(e) => refusals.push(Refusal::new(
                "COMPOSE_CONFIG_INVALID",
                pull_diagnosis(e.output()),
            )),
        }
        // registry credential presence (its value is never read here)
        let reg = self.cfg.registry_host.clone();
        p.registry_credential.needed = desired_images
            .values()
            .any(|i| image_registry(i) == Some(reg.as_str()));
        p.registry_credential.in_manifest = b.manifest.entries.iter().any(|e| e.is_registry_auth());
        p.registry_credential.on_box =
            std::fs::read(self.cfg.docker_config_dir().join("config.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|v| v["auths"].get(&reg).is_some());
        if p.registry_credential.needed
            && !p.registry_credential.in_manifest
            && !p.registry_credential.on_box
        {
            let who: Vec<String> = desired_images
                .iter()
                .filter(|(_, i)| image_registry(i) == Some(reg.as_str()))
                .map(|(s, i)| format!("{s} ({i})"))
                .collect();
            refusals.push(Refusal::new(
                "REGISTRY_CREDENTIAL_MISSING",
                format!(
                    "{} pull from {reg} but the manifest has no `use: registry-auth` entry and the box \
                     holds no credential for it: the pull would fail (COMPOSE_PULL_FAILED)",
                    who.join(", ")
                ),
            ));
        }
        // compose's own config hashes. Secrets unchanged since the running release: its `.env`
        // is handed to compose as it is (compose reads it, the agent does not), so the hashes
        // are exact; otherwise the placeholders, and every service that interpolates shows as
        // changed — which it is.
        let cur = self
            .state
            .applied_sha
            .as_ref()
            .map(|s| self.cfg.releases_dir().join(s))
            .filter(|d| d.join(".env").is_file());
        let same_env = cur.as_ref().is_some_and(|d| {
            let tmpl = std::fs::read(d.join("env.template")).unwrap_or_default();
            let man: bundle::Manifest = std::fs::read(d.join("secrets.manifest.json"))
                .ok()
                .and_then(|m| serde_json::from_slice(&m).ok())
                .unwrap_or_default();
            tmpl == b.env_template().as_bytes() && refs(&man) == refs(&b.manifest)
        });
        p.secrets_changed = self.state.applied_sha.as_ref().map(|_| !same_env);
        let hash_env = match (&cur, same_env) {
            (Some(d), true) => d.join(".env"),
            _ => env_file.clone(),
        };
        let hashes = compose
            .config_hashes(&scratch.0, &hash_env)
            .await
            .unwrap_or_else(|e| {
                warn!("compose config --hash: {e}");
                BTreeMap::new()
            });
        drop(guard);
        let mut names: Vec<&String> = desired_images.keys().chain(running.keys()).collect();
        names.sort();
        names.dedup();
        for s in names {
            let run = running.get(s);
            let want = desired_images.get(s);
            let mut c = ServiceChange {
                service: s.clone(),
                image_running: run.map(|r| r.0.clone()),
                image_desired: want.cloned(),
                config_hash_running: run.and_then(|r| r.1.clone()),
                config_hash_desired: want.and_then(|_| hashes.get(s).cloned()),
                ..Default::default()
            };
            c.change = match (run, want) {
                (None, _) => "added".into(),
                (_, None) => "removed".into(),
                (Some(_), Some(_)) => {
                    c.image_changed = c.image_running != c.image_desired;
                    c.config_changed = c.config_hash_running.is_none()
                        || c.config_hash_desired.is_none()
                        || c.config_hash_running != c.config_hash_desired;
                    if c.image_changed || c.config_changed {
                        "changed".into()
                    } else {
                        "unchanged".into()
                    }
                }
            };
            p.services.push(c);
        }
        Ok(())
    }
}

fn print_text(p: &Plan) {
    let sha = |r: &Release| {
        format!(
            "{}{}",
            r.sha.as_deref().unwrap_or("-"),
            r.serial
                .map(|s| format!(" (serial {s})"))
                .unwrap_or_default()
        )
    };
    println!("env            {}", p.env_id);
    println!(
        "action         {} (tenancy){}",
        p.action,
        if p.urgent { ", urgent" } else { "" }
    );
    println!(
        "would          {}",
        match p.would.as_str() {
            "refuse" => "REFUSE (see refusals)".to_string(),
            "defer" => format!(
                "defer: outside every window; next {} at {}",
                p.window.next_window.as_deref().unwrap_or("?"),
                p.window.next_at.as_deref().unwrap_or("?")
            ),
            "hold" => format!(
                "hold: this sha failed and was rolled back; not retried before {}",
                p.rollback.held_until.as_deref().unwrap_or("?")
            ),
            "down" => format!(
                "down ({})",
                if p.down_volumes == Some(true) {
                    "volumes removed"
                } else {
                    "volumes kept"
                }
            ),
            w => w.to_string(),
        }
    );
    println!("applied        {}", sha(&p.applied));
    println!(
        "desired        {}{}",
        sha(&p.desired),
        p.signed_by
            .as_ref()
            .map(|k| format!(", signed by {k}"))
            .unwrap_or_default()
    );
    if !p.window.entries.is_empty() {
        println!(
            "apply windows  {} ({})",
            p.window.entries.join(", "),
            match (&p.window.next_window, &p.window.next_at) {
                (Some(w), Some(at)) => format!("closed; next {w} at {at}"),
                _ => "open now".into(),
            }
        );
    }
    if p.services.is_empty() {
        println!("services       none");
    } else {
        println!("services");
        for s in &p.services {
            let (mark, what) = match s.change.as_str() {
                "added" => (
                    "+",
                    format!("added, image {}", s.image_desired.as_deref().unwrap_or("?")),
                ),
                "removed" => ("-", "removed".to_string()),
                "changed" => {
                    let mut w = Vec::new();
                    if s.image_changed {
                        w.push(format!(
                            "image {} -> {}",
                            s.image_running.as_deref().unwrap_or("?"),
                            s.image_desired.as_deref().unwrap_or("?")
                        ));
                    }
                    if s.config_changed {
                        w.push("config changed".to_string());
                    }
                    ("~", w.join("; "))
                }
                _ => ("=", "unchanged".to_string()),
            };
            println!("  {mark} {:<18} {what}", s.service);
        }
    }
    if p.action == "apply" {
        let names: Vec<String> = p
            .secrets
            .iter()
            .filter(|s| !s.registry_auth)
            .map(|s| {
                format!(
                    "{} ({}{})",
                    s.var.as_deref().unwrap_or("-"),
                    s.path,
                    s.version.map(|v| format!(" v{v}")).unwrap_or_default()
                )
            })
            .collect();
        println!(
            "secrets        {}{}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            },
            match p.secrets_changed {
                Some(true) => "  [changed since the running release]",
                Some(false) => "  [as the running release]",
                None => "",
            }
        );
        let r = &p.registry_credential;
        println!(
            "registry       {}",
            if !r.needed {
                format!("no image from {}", r.registry)
            } else if r.in_manifest {
                format!("credential for {} from the manifest", r.registry)
            } else if r.on_box {
                format!("credential for {} already on the box", r.registry)
            } else {
                format!("credential for {} MISSING", r.registry)
            }
        );
        if let Some(d) = &p.disk {
            println!(
                "disk           {}: {} MiB free, needs {} MiB",
                d.path,
                d.free_bytes >> 20,
                d.need_bytes >> 20
            );
        }
        println!(
            "rollback       {}",
            match (p.rollback.auto_rollback, &p.rollback.target) {
                (false, _) => "auto_rollback off".to_string(),
                (true, Some(t)) => format!("auto_rollback on: a failure would bring {t} back"),
                (true, None) => "auto_rollback on: no healthy release to go back to".to_string(),
            }
        );
    }
    if p.refusals.is_empty() {
        println!("refusals       none");
    } else {
        println!("refusals");
        for r in &p.refusals {
            println!("  {}: {}", r.code, r.detail);
        }
    }
}

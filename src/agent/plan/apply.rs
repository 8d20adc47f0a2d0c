//! The apply's checks as `plan` runs them: each refusal collected, the normalised pass with
//! placeholder secrets in a scratch copy, the registry credential and the per-service diff.

use super::*;
use crate::checks::GuardStart;

/// The registry host of an image reference (`None`: Docker Hub).
pub(super) fn image_registry(image: &str) -> Option<&str> {
    let (first, _) = image.split_once('/')?;
    (first.contains('.') || first.contains(':') || first == "localhost").then_some(first)
}

/// `service → image` from a compose document.
pub(super) fn images(doc: &serde_yaml_ng::Value) -> BTreeMap<String, String> {
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
pub(super) type SecretKey = (Option<String>, String, String, Option<u64>, bool);

/// The secret references of a manifest, comparable across releases.
pub(super) fn refs(m: &bundle::Manifest) -> Vec<SecretKey> {
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

/// The plan's scratch copy as refusals may spell it: as written and canonical (a state dir
/// behind a symlink), the longer first.
pub(super) fn scratch_roots(scratch: &Path) -> Vec<String> {
    let mut v = vec![scratch.display().to_string()];
    if let Ok(c) = std::fs::canonicalize(scratch) {
        v.push(c.display().to_string());
    }
    v.push(policy::lexical(scratch).display().to_string());
    v.sort_by_key(|s| std::cmp::Reverse(s.len()));
    v.dedup();
    v
}

/// A scratch directory or file of the plan, removed when the plan ends.
pub(super) struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::fs::remove_file(&self.0).is_err() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// The bundle side of the plan: every refusal found goes to `refusals`; `Err` is a refusal
    /// that stops the rest (the bundle cannot be read or rendered). No refusal quotes the
    /// plan's scratch copy: its paths are said relative to the release (`./data`).
    pub(super) async fn plan_apply(
        &mut self,
        sha: &str,
        wire: monky_wire::tenancy::BundleWire,
        running: &BTreeMap<String, (String, Option<String>)>,
        p: &mut Plan,
        refusals: &mut Vec<Refusal>,
    ) -> Result<(), Refusal> {
        let scratch = self
            .cfg
            .staging_dir()
            .join(format!("plan-{}", std::process::id()));
        let mut found = Vec::new();
        let res = self
            .plan_apply_in(sha, wire, running, p, &mut found, &scratch)
            .await;
        let roots = scratch_roots(&scratch);
        let relative = |r: Refusal| roots.iter().fold(r, |r, root| r.relative_to(root));
        refusals.extend(found.into_iter().map(relative));
        res.map_err(relative)
    }

    async fn plan_apply_in(
        &mut self,
        sha: &str,
        wire: monky_wire::tenancy::BundleWire,
        running: &BTreeMap<String, (String, Option<String>)>,
        p: &mut Plan,
        refusals: &mut Vec<Refusal>,
        scratch_dir: &Path,
    ) -> Result<(), Refusal> {
        // the apply's own verification (signature, statement, sha, then parse); the mark an
        // accepted statement would raise is not written by a plan
        let v = self.verify_bundle(wire, sha)?;
        let b = v.bundle;
        p.signed_by = v.signed_by;
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
        // the apply's own checks before a lease, every refusal listed
        let privileged = self.privileged(&b);
        let checks = self.pre_lease_checks(&b).await;
        refusals.extend(checks.refusals);
        if let Some((root, free, need)) = checks.disk {
            p.disk = Some(Disk {
                path: root.display().to_string(),
                free_bytes: free,
                need_bytes: need,
            });
        }
        // the normalised pass, with a placeholder for every secret: the bundle's files in a
        // scratch directory with the real `.env` shape (every value a placeholder), so a
        // service's `env_file: .env` reads as in the apply
        let env = b.render_env_with_every_var_as(PLACEHOLDER)?;
        state::ensure_dir(&self.cfg.staging_dir(), 0o700)
            .map_err(|e| Refusal::new(RefusalCode::PlanScratch, e.to_string()))?;
        let scratch = Scratch(scratch_dir.to_path_buf());
        bundle::stage(&scratch.0, &b, &env)
            .map_err(|e| Refusal::new(RefusalCode::PlanScratch, e.to_string()))?;
        let env_file = self
            .cfg
            .staging_dir()
            .join(format!("plan-{}.placeholders", std::process::id()));
        state::write_private(&env_file, env.as_bytes(), 0o600)
            .map_err(|e| Refusal::new(RefusalCode::PlanScratch, e.to_string()))?;
        let _env_file_gone = Scratch(env_file.clone());
        let bounds = runtime::Bounds::within(Duration::from_secs(self.cfg.tick_budget_s));
        let mut compose = Compose::detect(&self.cfg, &self.docker_wait, bounds)
            .await
            .map_err(|e| Refusal::new(RefusalCode::ComposeConfigInvalid, e.to_string()))?;
        // the preflight's refusal keeps its own code; a guard that could not start is the
        // engine's refusal
        let guard = self
            .guard_checked(&mut compose, &scratch.0, privileged)
            .await
            .map_err(|g| match g {
                GuardStart::Refused(r) => r,
                GuardStart::Failed(f) => Refusal::engine(f.message()),
            })?;
        let config = compose.config(&scratch.0).await;
        let mut desired_images = BTreeMap::new();
        match config {
            Ok((normalised, warnings)) => {
                if let Ok(doc) = compose_check::parse(normalised.as_bytes()) {
                    desired_images = images(&doc);
                }
                refusals.extend(
                    self.normalised_checks(&b, &normalised, &warnings, &scratch.0, privileged)
                        .await,
                );
            }
            Err(e) => refusals.push(Refusal::new(
                RefusalCode::ComposeConfigInvalid,
                config_diagnosis(e.output(), &scratch.0),
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
                RefusalCode::RegistryCredentialMissing,
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

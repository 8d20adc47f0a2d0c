//! The checks an apply (and `plan`) runs before anything changes: static and normalised
//! compose policy, privilege, serial, disk; and the engine guard's wiring.

use super::*;
use crate::error::Code;
use monky_boundary::BoxFacts;

impl<T: TenancyApi, V: Vault, E: EngineApi> Agent<T, V, E> {
    /// The bundle's `allow_privileged`, if the box's own config permits it.
    pub(super) fn privileged(&self, b: &Bundle) -> bool {
        b.meta.agent.allow_privileged && self.cfg.permit_privileged
    }

    /// A privilege refusal says so when the box's cap, not the bundle, decided it.
    pub(super) fn why_privileged(&self, b: &Bundle, mut r: Refusal) -> Refusal {
        if b.meta.agent.allow_privileged && !self.cfg.permit_privileged {
            r.detail
                .push_str(" (the bundle's allow_privileged is not permitted by this box: permit_privileged is false)");
        }
        r
    }

    /// Starts the checking socket for one compose call on `release` and points `compose` at it.
    pub(super) async fn guard(
        &self,
        compose: &mut Compose,
        release: &Path,
        privileged: bool,
    ) -> Result<Option<Guard>, Failure> {
        self.guard_checked(compose, release, privileged)
            .await
            .map_err(Failure::from)
    }

    /// As [`Self::guard`], with the preflight's refusal kept apart (`plan` lists it).
    pub(super) async fn guard_checked(
        &self,
        compose: &mut Compose,
        release: &Path,
        privileged: bool,
    ) -> Result<Option<Guard>, GuardStart> {
        if !guard_on() {
            return Ok(None);
        }
        let root =
            self.engine.docker_root().await.map_err(|e| {
                Failure::coded(Kind::Fail, Code::DOCKER_UNAVAILABLE, &e).caused_by(e)
            })?;
        let sock = self.cfg.docker_socket();
        let boundary = self.box_facts(
            release,
            privileged,
            Vec::new(),
            &[&root, &sock],
            self.address_space().await,
        );
        let g = Guard::start(&sock, &self.cfg.state_dir.join("guard"), boundary).map_err(|e| {
            Failure::fail(format!("cannot start the engine guard: {e}")).caused_by(e)
        })?;
        // no container on the box may write what compose is about to read
        g.preflight().await.map_err(|p| match p {
            monky_guard::Preflight::Refused(r) => GuardStart::Refused(r),
            e @ monky_guard::Preflight::Engine(_) => GuardStart::Failed(Failure::coded(
                Kind::Temporary,
                Code::DOCKER_UNAVAILABLE,
                &e,
            )),
        })?;
        compose.set_docker_host(g.docker_host());
        Ok(Some(g))
    }

    /// The box's facts for one pass or compose call on `release`, the one place they are
    /// built: every path canonicalised once, the same way (a path that does not exist yet is
    /// taken lexically), and the agent's own files and the engine's paths kept both canonical
    /// and as written. `engine` are the Docker data root and socket (the guard's; the file
    /// passes judge the engine's trees by name).
    pub(super) fn box_facts(
        &self,
        release: &Path,
        privileged: bool,
        bundle_files: Vec<String>,
        engine: &[&Path],
        net: policy::netpool::AddressSpace,
    ) -> BoxFacts {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| policy::lexical(p));
        let both = |paths: &[&Path]| -> Vec<PathBuf> {
            paths
                .iter()
                .filter(|p| !p.as_os_str().is_empty())
                .flat_map(|p| [canon(p), policy::lexical(p)])
                .collect()
        };
        let release_dir = canon(release);
        BoxFacts {
            project: self.cfg.compose_project.clone(),
            release_files: release_files(&release_dir),
            release_dir: Some(release_dir),
            bundle_files,
            bind_roots: self.cfg.bind_roots.iter().map(|p| canon(p)).collect(),
            // every instance's files, not only this one's: a bundle never reaches a neighbour's
            agent_files: both(
                &self
                    .cfg
                    .own_files()
                    .iter()
                    .chain(&self.peers().files)
                    .map(PathBuf::as_path)
                    .collect::<Vec<_>>(),
            ),
            engine_paths: both(engine),
            privileged,
            reserved_ports: self.reserved_ports(),
            limits: self.cfg.limits(),
            image_ledger: Some(self.cfg.state_dir.join(monky_guard::IMAGE_LEDGER)),
            net: Some(net),
            foreign_projects: self.peers().projects.clone(),
            require_image_digests: self.cfg.require_image_digests,
        }
    }

    /// This instance's reserved ports and every other instance's on the box (their transport
    /// ports and `reserved_ports`): one instance's bundle never publishes another's.
    pub(super) fn reserved_ports(&self) -> Vec<u16> {
        let mut v = self.cfg.reserved_ports();
        v.extend(&self.peers().ports);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The other instances' ports, files and endpoints, read once a tick.
    pub(super) fn peers(&self) -> &monky_host::instance::PeerFacts {
        self.now.peers.get_or_init(|| {
            monky_host::instance::peer_facts(&monky_host::instance::others(&self.cfg.instance))
        })
    }

    /// The second privilege pass's view: compose resolved relative paths against `project_dir`.
    pub(super) fn normalised_ctx(
        &self,
        project_dir: &Path,
        privileged: bool,
        b: &Bundle,
        net: policy::netpool::AddressSpace,
    ) -> BoxFacts {
        let files = b.files.keys().cloned().collect();
        self.box_facts(project_dir, privileged, files, &[], net)
    }

    /// The first pass's view: as the second's, with the release not yet anywhere on the host.
    pub(super) async fn first_pass_ctx(&self, b: &Bundle) -> BoxFacts {
        let root = Path::new(compose_check::FIRST_PASS_ROOT);
        let net = self.address_space().await;
        self.normalised_ctx(root, self.privileged(b), b, net)
    }

    /// Everything that can refuse a bundle before a lease or an OpenBao request.
    /// `ROLLBACK_REFUSED` when the bundle's serial is older than the applied one and the box does
    /// not permit going back.
    pub(super) fn rollback_refusal(&self, b: &Bundle) -> Option<Refusal> {
        let applied = self.state.applied_serial?;
        let allowed = b.meta.agent.allow_rollback && self.cfg.permit_rollback;
        (b.meta.serial < applied && !allowed).then(|| {
            Refusal::new(
                RefusalCode::RollbackRefused,
                format!(
                    "bundle serial {} is older than the applied {applied}{}",
                    b.meta.serial,
                    if b.meta.agent.allow_rollback {
                        " (the bundle's allow_rollback is not permitted by this box: permit_rollback is false)"
                    } else {
                        ""
                    }
                ),
            )
        })
    }

    /// The checks before a lease, in order — the one list the apply and `plan` share: the apply
    /// stops at the first refusal, `plan` lists them all. Nothing is leased, read or written.
    pub(super) async fn pre_lease_checks(&self, b: &Bundle) -> PreLease {
        let mut out = PreLease::default();
        let r = &mut out.refusals;
        r.extend(
            b.check_manifest(&self.cfg.bao.kv_mount, &self.cfg.env_id)
                .err(),
        );
        r.extend(b.check_env_template().err());
        match compose_check::parse(b.compose()) {
            Ok(doc) => {
                let ctx = self.first_pass_ctx(b).await;
                let vars = b.first_pass_variables();
                let judged = compose_check::judge_bundle(&doc, self.privileged(b), &ctx, &vars);
                out.services = if judged.services.is_empty() {
                    compose_check::services(&doc)
                } else {
                    judged.services
                };
                if file_policy_on() {
                    r.extend(
                        judged
                            .refusals
                            .into_iter()
                            .map(|e| self.why_privileged(b, e)),
                    );
                } else if let Some(e) = judged.refusals.first() {
                    warn!("test build: file policy off, would refuse {e}");
                }
                out.jobs = compose_check::jobs(&doc);
            }
            Err(e) => r.push(e),
        }
        r.extend(self.rollback_refusal(b));
        r.extend(data::refusals(
            b,
            &self.cfg.compose_project,
            self.cfg.keep_snapshots,
        ));
        match self.engine.docker_root().await {
            Ok(root) => match runtime::free_bytes(&root) {
                Ok(free) => {
                    let need = disk_need(b);
                    r.extend(disk_refusal(&root, free, need));
                    out.disk = Some((root, free, need));
                }
                Err(e) => r.push(Refusal::new(
                    RefusalCode::DiskInsufficient,
                    format!("cannot measure {}: {e}", root.display()),
                )),
            },
            Err(e) => r.push(Refusal::new(RefusalCode::DockerUnavailable, e.to_string())),
        }
        out
    }

    /// The checks on compose's own normalised `config` (after `.env` is rendered), in order —
    /// shared by the apply and `plan` as [`Self::pre_lease_checks`] is.
    pub(super) async fn normalised_checks(
        &self,
        b: &Bundle,
        normalised: &str,
        warnings: &str,
        project_dir: &Path,
        privileged: bool,
    ) -> Vec<Refusal> {
        let mut out = Vec::new();
        let unset = runtime::unset_variables(warnings);
        if !unset.is_empty() {
            out.push(Refusal::new(
                RefusalCode::EnvIncomplete,
                format!(
                    "compose.yaml uses variables nothing defines: {}",
                    unset.join(", ")
                ),
            ));
        }
        let net = self.address_space().await;
        let ctx = self.normalised_ctx(project_dir, privileged, b, net);
        let parsed = compose_check::parse(normalised.as_bytes());
        if let Ok(doc) = &parsed {
            out.extend(lock::normalised_refusals(doc, &b.meta.update_lock));
        }
        let judged = parsed
            .map(|v| compose_check::judge_normalised(&v, privileged, &ctx).refusals)
            .unwrap_or_else(|r| vec![r]);
        let judged: Vec<Refusal> = judged
            .into_iter()
            .map(|r| self.why_privileged(b, r))
            .collect();
        if file_policy_on() {
            out.extend(judged);
        } else if let Some(r) = judged.first() {
            warn!("test build: file policy off, would refuse {r}");
        }
        out
    }
}

/// Why the engine guard did not start: its preflight refused the box as it is, or it failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum GuardStart {
    #[error(transparent)]
    Refused(Refusal),
    #[error(transparent)]
    Failed(#[from] Failure),
}

impl From<GuardStart> for Failure {
    fn from(g: GuardStart) -> Failure {
        match g {
            GuardStart::Refused(r) => Failure::from(r),
            GuardStart::Failed(f) => f,
        }
    }
}

/// What the checks before a lease found: every refusal in order, and what the apply needs.
#[derive(Debug, Default)]
pub(super) struct PreLease {
    pub(super) refusals: Vec<Refusal>,
    pub(super) services: Vec<String>,
    pub(super) jobs: std::collections::BTreeSet<String>,
    /// The Docker data root, its free bytes and what the bundle needs.
    pub(super) disk: Option<(PathBuf, u64, u64)>,
}

/// The release root and the files of its bundle (listed at staging in `.monky-files`, read
/// without following a symlink), which compose and the agent read on the host.
pub(super) fn release_files(release: &Path) -> Vec<PathBuf> {
    let mut v = vec![release.to_path_buf()];
    let list = monky_boundary::beneath::read(release, Path::new(bundle::FILE_LIST), 1 << 20)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    for name in [".env", "compose.yaml", bundle::FILE_LIST]
        .into_iter()
        .chain(list.lines())
    {
        if bundle::check_path(name).is_ok() {
            v.push(release.join(name));
        }
    }
    v.sort();
    v.dedup();
    v
}

/// Free space an apply needs under the Docker root: the bundle's own estimate × 1.5 + 2 GiB.
pub(super) fn disk_need(b: &Bundle) -> u64 {
    b.meta.need_bytes.saturating_mul(3) / 2 + 2 * GIB
}

/// `DISK_INSUFFICIENT` when `free` is below `need`.
pub(super) fn disk_refusal(root: &Path, free: u64, need: u64) -> Option<Refusal> {
    (free < need).then(|| {
        Refusal::new(
            RefusalCode::DiskInsufficient,
            format!(
                "{} has {} MiB free, needs {} MiB (need_bytes × 1.5 + 2 GiB)",
                root.display(),
                free >> 20,
                need >> 20
            ),
        )
    })
}

/// Only with the `test-hooks` feature (`cargo test`), for tests that prove each layer is enough
/// on its own: `MONKY_DEPLOYD_TEST_POLICY=no-file` skips the file analyses, `off` also the
/// engine guard. Without it the variable's name is not in the binary: always "on".
pub(super) fn test_policy() -> &'static str {
    #[cfg(feature = "test-hooks")]
    {
        if let Ok(v) = std::env::var("MONKY_DEPLOYD_TEST_POLICY") {
            if v == "no-file" {
                return "no-file";
            }
            if v == "off" {
                return "off";
            }
        }
    }
    "on"
}

pub(super) fn file_policy_on() -> bool {
    test_policy() == "on"
}

pub(super) fn guard_on() -> bool {
    test_policy() != "off"
}

/// What the engine guard refused during a failed compose call: the report says so by name,
/// whatever compose made of the 403. A refusal compose shrugged off (v2's optional `/grpc`
/// session) is only logged.
pub(super) fn engine_refused(g: Option<&Guard>, failed: bool) -> Option<Failure> {
    let denied = g.map(|g| g.denied()).unwrap_or_default();
    if denied.is_empty() {
        return None;
    }
    if !failed {
        info!(
            "engine guard refused, compose went on without: {}",
            denied.join("; ")
        );
        return None;
    }
    // a refusal with its own code (a reserved port, a name, an image) keeps it
    denied.reported().map(Failure::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disk_check_refuses_below_the_need_and_names_both_numbers() {
        let root = Path::new("/var/lib/docker");
        assert!(disk_refusal(root, 3 * GIB, 3 * GIB).is_none());
        let r = disk_refusal(root, GIB, 3 * GIB).unwrap();
        assert_eq!(r.code, "DISK_INSUFFICIENT");
        assert_eq!(
            r.detail,
            "/var/lib/docker has 1024 MiB free, needs 3072 MiB (need_bytes × 1.5 + 2 GiB)"
        );
    }
}

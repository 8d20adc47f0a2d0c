//! The box's facts for one apply: what every layer of the boundary judges against. Built once
//! per compose call by one function (`agent::checks`, one path canonicalisation) and handed to
//! both the file passes and the engine guard.

use std::path::PathBuf;

use crate::policy::netpool::AddressSpace;
use crate::policy::rules::Limits;

/// What a compose file or an Engine API create body may touch on this box.
#[derive(Debug, Clone, Default)]
pub struct BoxFacts {
    /// `com.docker.compose.project`: names must be in its namespace and created objects carry
    /// it ("" = names not judged, a pass that does not know the box).
    pub project: String,
    /// The release directory compose runs from (canonical; the first pass's placeholder
    /// [`crate::compose_check::FIRST_PASS_ROOT`] before the release exists): binds inside it
    /// are allowed.
    pub release_dir: Option<PathBuf>,
    /// The bundle's files, relative to the release: the only files compose may read there.
    pub bundle_files: Vec<String>,
    /// The release root and every file of the bundle in it (absolute): compose and the agent
    /// read them on the host, so never inside a writable bind.
    pub release_files: Vec<PathBuf>,
    /// Operator-listed data roots (box config `bind_roots`, canonical): outside the release, a
    /// bind may reach only these (unless `privileged`).
    pub bind_roots: Vec<PathBuf>,
    /// The agent's own files (state dir, config, bootstrap grant; canonical and as written):
    /// never reachable by a bind, nor any ancestor of them, whatever the box permits.
    pub agent_files: Vec<PathBuf>,
    /// The Docker data root and the engine socket (canonical and as written): never reachable
    /// unless privileged.
    pub engine_paths: Vec<PathBuf>,
    /// The bundle asked for `allow_privileged` and the box's `permit_privileged` agreed.
    pub privileged: bool,
    /// Host ports no container may publish: the agent's own transport ports and the box's
    /// `reserved_ports`.
    pub reserved_ports: Vec<u16>,
    /// The box's `container_limits`.
    pub limits: Limits,
    /// Where the images this project pulled are recorded (`None`: images not judged).
    pub image_ledger: Option<PathBuf>,
    /// The box's address space: the pools and what no subnet may overlap (`None`: subnets and
    /// addresses not judged; the agent always sets it).
    pub net: Option<AddressSpace>,
    /// The compose projects of the box's other instances (their configs): no container name of
    /// this project's may be inside their namespaces, even while they have nothing on the box.
    pub foreign_projects: Vec<String>,
    /// The box's `require_image_digests`: every service image, and every pull, must name its
    /// bytes (`name[:tag]@sha256:<hex>`), so a tag moved in the registry changes nothing.
    pub require_image_digests: bool,
}

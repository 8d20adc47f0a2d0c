//! Test support for monky-deployd, faithful to `docs/PROTOCOL.md` (the wire contract).
//!
//! - [`bundle_sha`] pins the canonical bundle hash.
//! - [`Signer`] pins the deploy grant: an ES256 JWT with the claims OpenBao's `jwt-tenancy` role binds.
//! - [`Bao`] runs a *real* OpenBao dev server and configures exactly the mounts, role and templated
//!   policy production uses, so env isolation is OpenBao's, not ours.
//! - [`Stack`] wires both, seeds a bundle's secrets and writes the agent's `config.yaml`.
//! - [`Tenancy`] is the fake monky-tenancy: the four agent calls, bearer verification through
//!   OpenBao `auth/token/lookup`, the 5-leases-per-env-per-hour limit, strict request validation,
//!   fault injection and records of everything the agent sent.
//!
//! Everything here is synchronous at the surface (plain `#[test]` functions can use it); each
//! blocking call runs its own short-lived tokio runtime on a scoped thread, so it is also safe to
//! call from inside an async context.

mod bao;
mod http;
mod sha;
mod signer;
mod stack;
mod tenancy;

pub use bao::{Bao, BaoError, BaoRoleOpts};
pub use sha::{bundle_sha, read_bundle_dir};
pub use signer::{Grant, Signer, GRANT_AUDIENCE, GRANT_ISSUER, GRANT_KIND};
pub use stack::{write_private, AgentFiles, SeededSecret, Stack};
pub use tenancy::{
    agent_call, agent_statement, bundle_statement, release_public_key, release_sign,
    release_sign_bytes, unix_now, AgentResponse, BundleFetch, RequestRecord, Tenancy, TenancyOpts,
};

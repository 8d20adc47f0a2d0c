//! monky-deployd as a library: the binary (`src/main.rs`) is a thin CLI over these modules.

pub mod agent;
pub mod bao;
pub mod beneath;
pub mod boundary;
pub mod bundle;
pub mod care;
pub mod clock;
pub mod commands;
pub mod compose_check;
pub mod compose_keys;
pub mod config;
pub mod error;
pub mod files;
pub mod guard;
pub mod http;
pub mod journal;
pub mod metrics;
pub mod pipeline;
pub mod policy;
pub mod redact;
pub mod registry;
pub mod remotes;
pub mod runtime;
pub mod selfupdate;
pub mod service;
pub mod signing;
pub mod state;
pub mod statement;
pub mod tenancy;
pub mod transport;
pub mod windows;

/// Test hooks, compiled only with the `test-hooks` feature (Cargo.toml); not public.
mod testhook;

/// The property tests of the parsers and checks: unit tests, so the fast tier runs them
/// (`scripts/fast.sh`).
#[cfg(test)]
mod props;

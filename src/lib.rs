//! monky-deployd as a library: one path for each layer crate, for the binary (`src/main.rs`, a
//! thin CLI over them) and the integration tests. The layers are crates of their own
//! (crates/*/Cargo.toml), each depending only on those below it.

pub use monky_agent as agent;
pub use monky_base as base;
pub use monky_boundary as boundary;
pub use monky_cli as cli;
pub use monky_guard as guard;
pub use monky_host as host;
pub use monky_wire as wire;

#[cfg(test)]
mod docs_check;
/// The property tests of the parsers and checks: unit tests, so the fast tier runs them
/// (`scripts/fast.sh`).
#[cfg(test)]
mod props;

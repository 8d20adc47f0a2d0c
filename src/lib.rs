//! monky-deployd as a library: the binary (`src/main.rs`) is a thin CLI over these modules.

pub mod agent;
pub mod base;
pub mod boundary;
pub mod cli;
pub mod host;
pub mod wire;

#[cfg(test)]
mod docs_check;
/// The property tests of the parsers and checks: unit tests, so the fast tier runs them
/// (`scripts/fast.sh`).
#[cfg(test)]
mod props;

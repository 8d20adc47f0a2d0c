//! The suites on a real OpenZiti network (`scripts/ziti-net.sh`), as modules of one test binary
//! sharing `tests/common`: the shared network (`common::ziti::Net::shared`) is started once per
//! run; a suite that stops a network starts one of its own on other ports. Run one suite with
//! `cargo test --test mesh -- <suite>::` (e.g. `ziti_tick::`).
//!
//! `tests/ziti_stress.rs` stays a binary of its own: it counts the open fds of its process.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod egress;
mod ziti_dial;
mod ziti_https;
mod ziti_service;
mod ziti_soak;
mod ziti_tick;

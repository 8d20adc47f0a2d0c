//! The real-parts suites that need a real dockerd, OpenBao and the test tenancy (or the host's
//! own tools: dpkg, systemd stand-ins), as modules of one test binary sharing `tests/common`.
//! Run one suite with `cargo test --test real -- <suite>::` (e.g. `care::`), one compose
//! flavour with `-- compose_v2`.
//!
//! Tests of one binary share one process: a test must not change the process's environment or
//! working directory, and anything box-wide it makes (names, ports, routes) is unique to it.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod boundary;
mod care;
mod data;
mod depends;
mod egress;
mod faults;
mod guard;
mod host_shared;
mod instances;
mod invariant;
mod journal;
mod metrics;
mod netpool;
mod plan;
mod postinst;
mod reload;
mod rollback;
mod security;
mod self_update;
mod self_update_agent;
mod settle;
mod signing;
mod soak;
mod tick;
mod windows;

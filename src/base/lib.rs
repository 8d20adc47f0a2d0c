//! The base: what every layer may use and which uses no other layer — the wall clock, IP
//! prefixes, the
//! private-file writer, the core-dump guard, the redactor, the test hooks, the maintenance
//! windows.

pub mod cidr;
pub mod clock;
pub mod files;
pub mod process;
pub mod redact;
/// Test hooks, compiled only with the `test-hooks` feature (Cargo.toml); not public.
pub mod testhook;
pub mod windows;

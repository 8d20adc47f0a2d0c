//! monky-deployd as a library: the binary (`src/main.rs`) is a thin CLI over these modules, and
//! the property tests reach the parsers and checks directly.

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
pub mod guard;
pub mod http;
pub mod journal;
pub mod metrics;
pub mod policy;
pub mod redact;
pub mod registry;
pub mod runtime;
pub mod selfupdate;
pub mod service;
pub mod signing;
pub mod state;
pub mod tenancy;
pub mod testhook;
pub mod transport;
pub mod windows;

//! The CLI's library half: the operator commands (`bootstrap`, `status`, `diagnose`) and the
//! `run` service; `src/main.rs` parses the command line.

pub mod commands;
pub mod data;
pub mod pipeline;
pub mod service;

//! The host: the configuration, the box's state, the container engine and compose, self-update,
//! metrics, the journal, disk care, and the two remotes built from the configuration.

pub mod care;
pub mod config;
pub mod data;
pub mod depends;
pub mod instance;
pub mod journal;
pub mod metrics;
pub mod remotes;
pub mod runtime;
pub mod selfupdate;
pub mod snapshot;
pub mod state;

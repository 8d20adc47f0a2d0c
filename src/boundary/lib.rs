//! The box's boundary: its facts for one apply ([`BoxFacts`], one value both layers judge
//! against), the refusal every layer reports ([`Refusal`], a typed [`RefusalCode`]), and the
//! rules both layers call. Those two are pure values, and the rules (`keys`, `compose_keys`,
//! `compose_check`, `container`, `volume`, `signing`, `statement`, `policy`) are functions of
//! what they are handed — but for the bind source. The engine guard, the socket server that
//! calls these rules, is a crate of its own (`monky-guard`): this one has no async runtime, no
//! socket and no HTTP. What here touches the host is named: [`beneath`] (the `O_NOFOLLOW` walk
//! that reads a release's files), [`bundle::stage`] (writes a release under `staging/`) and
//! [`policy::paths`] (traces a bind source's symlinks on the host; the bind rule
//! [`policy::bind_rule`], which the container rules call in both layers, reads the host through
//! it).

pub mod beneath;
pub mod bundle;
pub mod compose_check;
pub mod compose_keys;
pub mod container;
mod facts;
pub mod keys;
pub mod policy;
mod refusal;
pub mod signing;
pub mod statement;
pub mod volume;

pub use facts::BoxFacts;
pub use refusal::{Refusal, RefusalCode};

#[cfg(test)]
mod agree;

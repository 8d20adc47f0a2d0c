//! The box's boundary: its facts for one apply ([`BoxFacts`], one value both layers judge
//! against) and the refusal every layer reports ([`Refusal`], a typed [`RefusalCode`]).
//! Pure values, no I/O.

pub mod beneath;
pub mod bundle;
pub mod compose_check;
pub mod compose_keys;
pub mod container;
mod facts;
pub mod guard;
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

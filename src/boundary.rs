//! The box's boundary: its facts for one apply ([`BoxFacts`], one value both layers judge
//! against) and the refusal every layer reports ([`Refusal`], a typed [`RefusalCode`]).
//! Pure values, no I/O.

mod facts;
mod refusal;

pub use facts::BoxFacts;
pub use refusal::{Refusal, RefusalCode};

#[cfg(test)]
mod agree;

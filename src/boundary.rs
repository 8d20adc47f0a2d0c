//! The box's boundary: the refusal every layer reports ([`Refusal`], a typed [`RefusalCode`]).
//! Pure rules, no I/O.

mod refusal;

pub use refusal::{Refusal, RefusalCode};

//! sliq: an embedded SQL continuous query engine for sliding-window
//! aggregation with worst-case constant time per event.
//!
//! This facade re-exports the crates users need:
//! - [`swag`]: the FIFO window aggregators every per-key window runs on
//!   (DABA Lite by default);
//! - [`aggregates`]: the SQL aggregate functions as lift/combine/lower
//!   monoids, and the registry that resolves calls by name and types.

pub use sliq_aggregates as aggregates;
pub use sliq_swag as swag;

/// The README's examples, compiled and run as doctests so they cannot drift.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

//! sliq: an embedded SQL continuous query engine for sliding-window
//! aggregation with worst-case constant time per event.
//!
//! This facade re-exports the crates users need. Today that is the window
//! layer, [`swag`]: the FIFO aggregators every per-key window runs on.

pub use sliq_swag as swag;

/// The README's examples, compiled and run as doctests so they cannot drift.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

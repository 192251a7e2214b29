//! sliq: an embedded SQL continuous query engine for sliding-window
//! aggregation with worst-case constant time per event.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
//! use arrow_schema::{DataType, Field, Schema};
//! use sliq::{Engine, StreamOptions};
//!
//! let engine = Engine::new();
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("ts", DataType::Int64, false),
//!     Field::new("key", DataType::Utf8, true),
//!     Field::new("v", DataType::Float64, true),
//! ]));
//! let s = engine.register_stream("s", schema.clone(), StreamOptions::default().event_time("ts"))?;
//! let q = engine.query("SELECT key, max(v) OVER (RANGE '10s') AS m FROM s GROUP BY key")?;
//! s.push(RecordBatch::try_new(schema, vec![
//!     Arc::new(Int64Array::from(vec![0, 4_000, 12_000])),
//!     Arc::new(StringArray::from(vec!["a", "a", "a"])),
//!     Arc::new(Float64Array::from(vec![9.0, 1.0, 2.0])),
//! ])?)?;
//! let out = q.recv()?;
//! let m = out.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
//! assert_eq!(m.values().to_vec(), vec![9.0, 9.0, 2.0]); // at 12 s, the 9.0 from 0 s has left
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The crates behind it, re-exported:
//! - [`swag`]: the FIFO window aggregators every per-key window runs on
//!   (DABA Lite by default);
//! - [`aggregates`]: the SQL aggregate functions as lift/combine/lower
//!   monoids, and the registry that resolves calls;
//! - [`sql`]: parsing and planning;
//! - [`engine`]: the runtime, whose main types are also at the root.

pub use sliq_aggregates as aggregates;
pub use sliq_engine as engine;
pub use sliq_engine::{
    Engine, EngineBuilder, EngineError, EngineStats, Executed, OnLate, Query, QueryInfo,
    QueryStats, RowFailure, Stream, StreamInfo, StreamOptions, StreamStats, WindowAlgorithm,
};
pub use sliq_sql as sql;
pub use sliq_swag as swag;

/// The README's examples, compiled and run as doctests so they cannot drift.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

//! sliq's runtime: continuous window queries over Arrow record batches.
//!
//! An [`Engine`] holds streams and queries. [`Engine::register_stream`]
//! (or `CREATE STREAM`) declares a stream's schema; [`Engine::query`]
//! plans a `SELECT` with `sliq-sql` and compiles it: WHERE, keys and
//! aggregate arguments become DataFusion physical expressions evaluated
//! once per batch, and each aggregate becomes a window operator
//! monomorphized for its function, argument type and window algorithm.
//! [`Stream::push`] runs a batch through every query of the stream and
//! sends one result batch per query down a bounded channel.
//!
//! Per batch and window group, keys are hashed once ([`keys`]) and the
//! frame pass ([`frame`]) decides per row how many old rows leave each
//! key's window. A group with one aggregate runs a tight loop of insert,
//! evict and query over its per-key DABA Lite windows; the built-in
//! aggregates of a group with several share one window per key (one deque,
//! one set of pointers, records holding every aggregate's partial
//! aggregate), whose value operations each aggregate replays in a loop of
//! its own (`group`).

mod columns;
mod distinct;
mod engine;
mod error;
mod expr;
pub mod frame;
mod group;
pub mod keys;
mod operator;
mod options;
pub mod partition;
mod query;
mod stats;
mod stream;
mod subscription;
mod udaf;

pub use engine::{Engine, EngineBuilder, Executed};
pub use error::EngineError;
pub use operator::WindowAlgorithm;
pub use options::{OnLate, StreamOptions};
pub use partition::Partitioner;
pub use sliq_sql::FunctionInfo;
pub use sliq_sql::panics::{panic_is_caught, panic_message};
pub use stats::{EngineStats, QueryInfo, QueryStats, RowFailure, StreamInfo, StreamStats};
pub use stream::Stream;
pub use subscription::Query;

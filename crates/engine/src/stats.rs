//! What the engine tells about its streams and queries: counters
//! ([`Engine::stats`](crate::Engine::stats)) and descriptions (`SHOW`,
//! `DESCRIBE`).

use std::fmt;
use std::ops::RangeInclusive;

use arrow_schema::SchemaRef;

use crate::options::StreamOptions;

/// Counters of one stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// The stream.
    pub name: String,
    /// Rows accepted.
    pub rows: u64,
    /// Batches accepted.
    pub batches: u64,
    /// Rows that were late for some query's RANGE window (counted once per
    /// row, whichever query saw it late).
    pub late_rows: u64,
    /// Batches rejected (schema mismatch, late rows under `on_late = 'error'`).
    pub rejected_batches: u64,
}

/// Counters of one query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// The query's id.
    pub id: u64,
    /// Its stream.
    pub stream: String,
    /// Its text.
    pub sql: String,
    /// Batches processed.
    pub batches: u64,
    /// Rows emitted.
    pub rows_out: u64,
    /// Rows late for one of its RANGE windows, or without an event time.
    pub late_rows: u64,
    /// How many of the late rows have no event time (NULL): they enter no
    /// RANGE window either.
    pub untimed_rows: u64,
    /// Values that could not be computed from a row's data (integer division
    /// by zero, overflow, a failing CAST) and were emitted as NULL.
    pub failed_results: u64,
    /// Batches whose evaluation failed (an error was delivered instead).
    pub failed_batches: u64,
    /// The latest failure, if any: a value that could not be computed (as
    /// [`Self::last_failed_row`] tells it) or a batch that failed.
    pub last_error: Option<String>,
    /// The latest row whose value could not be computed, if any.
    pub last_failed_row: Option<RowFailure>,
    /// Keys held, per window group: seen and not forgotten.
    pub keys: Vec<usize>,
    /// Keys forgotten for being idle longer than the stream's `key_ttl`.
    pub forgotten_keys: u64,
}

/// A row of a stream whose value could not be computed (it became NULL),
/// and why. Shown as `row 2 of stream 'd': evaluating x / y where x = 1,
/// y = 0: Divide by zero`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowFailure {
    /// The stream.
    pub stream: String,
    /// The row, numbered from 1 in the order the stream accepted its rows;
    /// several rows when an expression's kernel failed on them together
    /// (an internal error), which then all became NULL.
    pub rows: RangeInclusive<u64>,
    /// What failed: the expression with the values it read there, or the
    /// aggregate, and the error.
    pub message: String,
}

impl fmt::Display for RowFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (first, last) = (self.rows.start(), self.rows.end());
        match first == last {
            true => write!(f, "row {first}")?,
            false => write!(f, "rows {first} to {last}")?,
        }
        write!(f, " of stream '{}': {}", self.stream, self.message)
    }
}

/// A snapshot of the engine's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// One entry per stream, by name.
    pub streams: Vec<StreamStats>,
    /// One entry per live query, by id.
    pub queries: Vec<QueryStats>,
}

/// What `DESCRIBE` and `SHOW STREAMS` tell about a stream.
#[derive(Clone, Debug)]
pub struct StreamInfo {
    /// The stream's name.
    pub name: String,
    /// Its columns.
    pub schema: SchemaRef,
    /// Its options.
    pub options: StreamOptions,
    /// Queries reading it.
    pub queries: usize,
}

/// What `SHOW QUERIES` tells about a query.
#[derive(Clone, Debug)]
pub struct QueryInfo {
    /// The query's id.
    pub id: u64,
    /// Its stream.
    pub stream: String,
    /// Its text.
    pub sql: String,
    /// Its result columns.
    pub schema: SchemaRef,
}

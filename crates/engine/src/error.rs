//! The engine's errors.

use sliq_sql::SqlError;

/// Everything that can go wrong when embedding sliq. Every variant is a
/// full sentence naming what and where; none of them leaves the engine in a
/// state where other streams or queries stop working.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// A statement failed to parse or plan.
    #[error("{0}")]
    Sql(#[from] SqlError),
    /// No stream has this name.
    #[error("unknown stream '{name}'{}", sliq_sql::did_you_mean(suggestion))]
    UnknownStream {
        /// The name asked for.
        name: String,
        /// The closest stream name.
        suggestion: Option<String>,
    },
    /// `CREATE STREAM` or `register_stream` with a name in use.
    #[error("stream '{0}' already exists")]
    StreamExists(String),
    /// `DROP STREAM … RESTRICT` while queries run over the stream.
    #[error(
        "stream '{stream}' has {queries} running quer{}: DROP STREAM … RESTRICT leaves it \
         (without RESTRICT, the drop ends them)",
        if *queries == 1 { "y" } else { "ies" }
    )]
    StreamInUse {
        /// The stream.
        stream: String,
        /// How many queries run over it.
        queries: usize,
    },
    /// A pushed batch does not have the stream's schema; nothing was pushed.
    #[error("batch rejected by stream '{stream}': {details}")]
    SchemaMismatch {
        /// The stream.
        stream: String,
        /// Each difference, spelled out.
        details: String,
    },
    /// Rows arrived with an event time below their key's newest, or with
    /// none (NULL), on a stream declared `on_late = 'error'`; nothing was
    /// pushed.
    #[error(
        "batch rejected by stream '{stream}': {count} late row(s), the first at index {first_row} of the batch ({})",
        why_late(*event_time, *newest)
    )]
    LateRows {
        /// The stream.
        stream: String,
        /// How many rows were late.
        count: usize,
        /// The first late row's index in the batch.
        first_row: usize,
        /// Its event time (ms); `None` when it is NULL.
        event_time: Option<i64>,
        /// The newest event time of its key (ms), if it has any.
        newest: Option<i64>,
    },
    /// Evaluating an expression on a batch failed.
    #[error("query {query}: {message}")]
    Evaluation {
        /// The query's id.
        query: u64,
        /// What failed.
        message: String,
    },
    /// A planned statement that cannot run: an expression in it fails
    /// whatever the rows, or does not compile. (The planner refuses the
    /// failures it can point at in the query, such as `1 / 0`; this is the
    /// net for the rest.)
    #[error("cannot run the statement: {0}")]
    Compile(String),
    /// A setting or option with a bad value.
    #[error("{0}")]
    InvalidSetting(String),
    /// The query's stream was dropped, or the engine shut down.
    #[error("the query's stream was dropped")]
    Closed,
    /// `recv_timeout` waited in vain.
    #[error("no result within the timeout")]
    Timeout,
    /// A statement that `query` cannot run (for example, not a SELECT).
    #[error("{0}")]
    NotAQuery(String),
}

impl EngineError {
    /// Attaches the statement text to an SQL error, which then shows the
    /// line it points at under a caret.
    pub(crate) fn with_source(self, sql: &str) -> Self {
        match self {
            EngineError::Sql(e) => EngineError::Sql(e.with_source(sql)),
            other => other,
        }
    }
}

/// Why a row is late, for [`EngineError::LateRows`].
fn why_late(event_time: Option<i64>, newest: Option<i64>) -> String {
    match (event_time, newest) {
        (None, _) => "its event time is NULL".to_string(),
        (Some(t), Some(newest)) => format!("event time {t} < {newest} already seen for its key"),
        (Some(t), None) => format!("event time {t}"),
    }
}

//! How a stream behaves: its event-time column, what happens to late rows,
//! how long an idle key is kept, and the options a source reads (`path`,
//! `format`, …).

use std::fmt;
use std::sync::Arc;

use sliq_sql::{SqlError, StreamDefinition};

use crate::error::EngineError;

/// What happens to a row whose event time is below its key's newest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnLate {
    /// The row still emits a result, with NULL for its RANGE aggregates,
    /// and is counted in the statistics.
    #[default]
    Null,
    /// The whole push fails with [`EngineError::LateRows`]; nothing changes.
    Error,
}

/// How a stream behaves.
#[derive(Clone, Debug, Default)]
pub struct StreamOptions {
    event_time: Option<String>,
    on_late: OnLate,
    key_ttl_ms: Option<i64>,
    extra: Vec<(String, String)>,
}

impl StreamOptions {
    /// Names the event-time column used by `RANGE` frames (TIMESTAMP, or
    /// BIGINT as epoch milliseconds).
    pub fn event_time(mut self, column: &str) -> Self {
        self.event_time = Some(column.to_string());
        self
    }

    /// Sets the late-row policy.
    pub fn on_late(mut self, policy: OnLate) -> Self {
        self.on_late = policy;
        self
    }

    /// Forgets keys that go idle (`key_ttl = '1h'` in SQL). The stream's
    /// clock at a row is the newest event time of its rows so far, that
    /// row's included. A row whose key's previous row came more than `ttl`
    /// earlier by that clock starts its key afresh in every query over the
    /// stream: its windows, running totals, `lag` and `row_number` begin
    /// again, as a new key's do. Keys idle that long are also freed, a few
    /// key ids per row, which changes no result: memory follows the keys
    /// active within the TTL, however many come and go. Needs an event-time
    /// column. Zero is taken as one millisecond.
    pub fn key_ttl(mut self, ttl: std::time::Duration) -> Self {
        let ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        self.key_ttl_ms = Some(ms.max(1));
        self
    }

    /// Keeps another option (such as a source's `path`), for tools built
    /// on the engine; the engine itself only reports it in `DESCRIBE`.
    pub fn option(mut self, key: &str, value: &str) -> Self {
        self.extra
            .push((key.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// The event-time column, if any.
    pub fn event_time_column(&self) -> Option<&str> {
        self.event_time.as_deref()
    }

    /// The late-row policy.
    pub fn late_policy(&self) -> OnLate {
        self.on_late
    }

    /// How long an idle key is kept, in milliseconds of event time (see
    /// [`StreamOptions::key_ttl`]).
    pub fn key_ttl_ms(&self) -> Option<i64> {
        self.key_ttl_ms
    }

    /// The other options, in the order given.
    pub fn options(&self) -> &[(String, String)] {
        &self.extra
    }

    /// The options of a `CREATE STREAM`; an error points at the option's
    /// value in the statement.
    pub(crate) fn from_definition(def: &StreamDefinition) -> Result<Self, EngineError> {
        let mut options = StreamOptions::default();
        for option in &def.options {
            let value = &option.value;
            match option.key.as_str() {
                "event_time" => options.event_time = Some(value.clone()),
                "on_late" => {
                    options.on_late = match value.to_ascii_lowercase().as_str() {
                        "null" | "emit" => OnLate::Null,
                        "error" => OnLate::Error,
                        other => {
                            return Err(def
                                .value_error(
                                    "on_late",
                                    format!("on_late = '{other}': expected 'null' or 'error'"),
                                )
                                .into());
                        }
                    }
                }
                "key_ttl" => {
                    let ms = sliq_sql::duration_ms(value).map_err(|_| {
                        def.value_error(
                            "key_ttl",
                            format!(
                                "key_ttl = '{value}': expected a duration such as '10m', '1h' or '1d12h'"
                            ),
                        )
                    })?;
                    options.key_ttl_ms = Some(ms.max(1));
                }
                key => options.extra.push((key.to_string(), value.clone())),
            }
        }
        if options.key_ttl_ms.is_some() && options.event_time.is_none() {
            return Err(def
                .value_error("key_ttl", key_ttl_without_event_time(&def.name))
                .into());
        }
        Ok(options)
    }
}

/// Why a stream without an event-time column cannot forget idle keys.
pub(crate) fn key_ttl_without_event_time(stream: &str) -> String {
    format!(
        "stream '{stream}': key_ttl needs an event_time column, since a key is \
         forgotten once the stream's event time has moved past its last row"
    )
}

/// What [`crate::EngineBuilder::stream_check`] takes.
type CheckFn = dyn Fn(&StreamDefinition, &StreamOptions) -> Result<(), SqlError> + Send + Sync;

/// A check that a program reading stream options of its own (a source's
/// `path`, say) runs on every `CREATE STREAM` before the stream is created
/// (see [`crate::EngineBuilder::stream_check`]).
#[derive(Clone)]
pub(crate) struct StreamCheck(pub(crate) Arc<CheckFn>);

impl fmt::Debug for StreamCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StreamCheck(..)")
    }
}

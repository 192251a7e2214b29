//! Names a replay's values that could not be computed by where their rows
//! are in the source: the engine numbers a row among all its stream's rows
//! (which other replays in the session may have fed), the user knows the
//! file's lines.

use sliq_engine::{Query, RowFailure};

use crate::source::RowLines;

/// The latest failed value of one replay into one stream, as its message:
/// `nulls.csv, line 3: evaluating x / y where x = 1, y = 0: Divide by zero
/// error`.
pub(crate) struct ReplayFailures {
    /// The source, as messages name it.
    source: String,
    /// The stream's rows before the replay.
    rows_before: u64,
    /// The rows the replay pushed so far.
    rows_pushed: u64,
    /// The engine's latest failure already named here.
    seen: Option<RowFailure>,
    latest: Option<String>,
}

impl ReplayFailures {
    /// For a replay of `source` into a stream that held `rows_before` rows.
    pub(crate) fn new(source: String, rows_before: u64) -> Self {
        ReplayFailures {
            source,
            rows_before,
            rows_pushed: 0,
            seen: None,
            latest: None,
        }
    }

    /// After the replay pushed a batch of `rows` rows, read from `lines`:
    /// names `query`'s latest failure if it is new. (Checked batch by
    /// batch: only this batch's lines are known.)
    pub(crate) fn after_batch(&mut self, query: &Query, rows: usize, lines: &RowLines) {
        let batch_after = self.rows_before + self.rows_pushed;
        self.rows_pushed += rows as u64;
        let Some(failure) = query.last_failed_row() else {
            return;
        };
        if self.seen.as_ref() == Some(&failure) {
            return;
        }
        let line = |row: u64| {
            let in_batch = row.checked_sub(batch_after + 1)?;
            lines.line(usize::try_from(in_batch).ok()?)
        };
        let (first, last) = (*failure.rows.start(), *failure.rows.end());
        let place = match (line(first), line(last)) {
            (Some(a), Some(b)) if a == b => format!("{}, line {a}", self.source),
            (Some(a), Some(b)) => format!("{}, lines {a} to {b}", self.source),
            _ => {
                let row = first.saturating_sub(self.rows_before);
                format!("row {row} of {}", self.source)
            }
        };
        self.latest = Some(format!("{place}: {}", failure.message));
        self.seen = Some(failure);
    }

    /// The latest failure's message, if the replay had one.
    pub(crate) fn latest(&self) -> Option<&str> {
        self.latest.as_deref()
    }
}

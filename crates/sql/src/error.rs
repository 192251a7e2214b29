//! Errors of parsing and planning, with the location in the query text.

use std::fmt;

use sliq_aggregates::AggregateError;

/// A position in the query text (1-based line and column); positions
/// order as the text does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// Line, from 1.
    pub line: u64,
    /// Column, from 1.
    pub column: u64,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// What went wrong, without the query text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SqlErrorKind {
    /// The text is not valid SQL.
    #[error("syntax error: {0}")]
    Syntax(String),
    /// No stream has this name.
    #[error("unknown stream '{name}'{}", did_you_mean(.suggestion))]
    UnknownStream {
        /// The name as written.
        name: String,
        /// The closest stream name.
        suggestion: Option<String>,
    },
    /// The stream (or subquery) read has no such column.
    #[error("unknown column '{name}' in {relation}{}", column_hint(.suggestion, .columns))]
    UnknownColumn {
        /// The column as written.
        name: String,
        /// What was searched: `stream 's'`, `subquery 'd'` or `the subquery`.
        relation: String,
        /// The closest column name.
        suggestion: Option<String>,
        /// The relation's columns, listed when none is close.
        columns: Vec<String>,
    },
    /// A scalar function sliq does not know.
    #[error("unknown function '{name}'{}", did_you_mean(.suggestion))]
    UnknownFunction {
        /// The name as written.
        name: String,
        /// The closest function name.
        suggestion: Option<String>,
    },
    /// An aggregate call that does not resolve.
    #[error("{0}")]
    Aggregate(#[from] AggregateError),
    /// Valid SQL that a continuous query cannot run.
    #[error("not supported in continuous queries: {0}")]
    Unsupported(String),
    /// Types that do not fit together, or another planning error.
    #[error("{0}")]
    Plan(String),
}

/// The closest column, or else the columns there are (when a few).
fn column_hint(suggestion: &Option<String>, columns: &[String]) -> String {
    const LISTED: usize = 16;
    match suggestion {
        Some(_) => did_you_mean(suggestion),
        None if !columns.is_empty() && columns.len() <= LISTED => {
            format!("; its columns are {}", columns.join(", "))
        }
        None => String::new(),
    }
}

/// "; did you mean 'x'?" for a suggestion, nothing without one.
pub fn did_you_mean(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|s| format!("; did you mean '{s}'?"))
        .unwrap_or_default()
}

/// An error in a SQL statement, with where it happened and the offending
/// line of the query under a caret when the location is known. Boxed, so
/// that `Result<_, SqlError>` stays one word wide on the planner's paths.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlError(Box<Inner>);

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    kind: SqlErrorKind,
    location: Option<Location>,
    /// The query line the location points into.
    source_line: Option<String>,
}

impl SqlError {
    /// An error without a location (yet).
    pub fn new(kind: impl Into<SqlErrorKind>) -> Self {
        Self::at(kind, None)
    }

    /// An error at `location`.
    pub fn at(kind: impl Into<SqlErrorKind>, location: Option<Location>) -> Self {
        SqlError(Box::new(Inner {
            kind: kind.into(),
            location,
            source_line: None,
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &SqlErrorKind {
        &self.0.kind
    }

    /// Where, when known.
    pub fn location(&self) -> Option<Location> {
        self.0.location
    }

    /// Shorthand for [`SqlErrorKind::Unsupported`].
    pub fn unsupported(what: impl Into<String>) -> Self {
        SqlError::new(SqlErrorKind::Unsupported(what.into()))
    }

    /// Shorthand for [`SqlErrorKind::Plan`].
    pub fn plan(message: impl Into<String>) -> Self {
        SqlError::new(SqlErrorKind::Plan(message.into()))
    }

    /// Attaches the query text so that the error can show the line with a caret.
    pub fn with_source(mut self, sql: &str) -> Self {
        if let Some(loc) = self.0.location {
            self.0.source_line = sql
                .lines()
                .nth(loc.line.saturating_sub(1) as usize)
                .map(str::to_string);
        }
        self
    }

    /// Sets the location if none is known yet.
    pub fn or_at(mut self, location: Option<Location>) -> Self {
        if self.0.location.is_none() {
            self.0.location = location;
        }
        self
    }
}

impl From<SqlErrorKind> for SqlError {
    fn from(kind: SqlErrorKind) -> Self {
        SqlError::new(kind)
    }
}

impl From<AggregateError> for SqlError {
    fn from(e: AggregateError) -> Self {
        SqlError::new(SqlErrorKind::Aggregate(e))
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.kind)?;
        if let Some(loc) = self.0.location {
            write!(f, " at {loc}")?;
            if let Some(line) = &self.0.source_line {
                let caret_at = (loc.column as usize)
                    .saturating_sub(1)
                    .min(line.chars().count());
                let pad: String = line
                    .chars()
                    .take(caret_at)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                write!(f, "\n  {line}\n  {pad}^")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for SqlError {}

/// The closest of `candidates` to `name`, if it is close enough to suggest.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_points_at_the_column() {
        let e = SqlError::at(
            SqlErrorKind::Syntax("Expected: an expression, found: FROM".into()),
            Some(Location { line: 1, column: 8 }),
        )
        .with_source("SELECT FROM s");
        assert_eq!(
            e.to_string(),
            "syntax error: Expected: an expression, found: FROM at line 1, column 8\n  SELECT FROM s\n         ^"
        );
    }

    #[test]
    fn suggestions_need_to_be_close() {
        assert_eq!(closest("sensr", ["sensor", "value"]), Some("sensor".into()));
        assert_eq!(closest("zzz", ["sensor", "value"]), None);
    }
}

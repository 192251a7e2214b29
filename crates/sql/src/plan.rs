//! What the planner produces: statements and continuous query plans.

use std::fmt;
use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use datafusion_expr::Expr;
use sliq_aggregates::{OutputType, ResolvedAggregate, ValueType};

use crate::error::{Location, SqlError, SqlErrorKind};
use crate::expr::sql_text;
use crate::parser::single_line;

/// How far back a window reaches from the current row, and where it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    /// `ROWS n PRECEDING`: the current row and the `n` before it in its key.
    Rows(u64),
    /// `RANGE d PRECEDING`: the key's rows with event time in `[t − d, t]`,
    /// `d` in milliseconds.
    Range(i64),
    /// `UNBOUNDED PRECEDING`: every row of the key so far.
    Unbounded,
    /// `ROWS BETWEEN start PRECEDING AND end PRECEDING`, `1 ≤ end ≤ start`:
    /// the key's rows `start` to `end` before the current one.
    RowsBefore {
        /// Rows back to the frame's oldest row.
        start: u64,
        /// Rows back to its youngest.
        end: u64,
    },
    /// `RANGE BETWEEN start PRECEDING AND end PRECEDING`, `0 < end ≤ start`
    /// milliseconds: the key's rows with event time in `[t − start, t − end]`.
    RangeBefore {
        /// How far back the frame starts.
        start: i64,
        /// How far back it ends.
        end: i64,
    },
    /// `ROWS BETWEEN UNBOUNDED PRECEDING AND end PRECEDING`, `end ≥ 1`:
    /// every row of the key but the `end` latest.
    UnboundedBefore(u64),
    /// `RANGE BETWEEN UNBOUNDED PRECEDING AND end PRECEDING`, `end > 0`
    /// milliseconds: the key's rows with event time up to `t − end`.
    UnboundedBeforeTime(i64),
}

impl Frame {
    /// Whether no row ever leaves the frame by age (`UNBOUNDED PRECEDING`),
    /// so its aggregates keep a running total per key instead of a window.
    pub fn is_unbounded(&self) -> bool {
        matches!(
            self,
            Frame::Unbounded | Frame::UnboundedBefore(_) | Frame::UnboundedBeforeTime(_)
        )
    }

    /// Whether the frame ends before the current row: a key's latest rows
    /// wait (in order) before they enter its window.
    pub fn ends_before_current_row(&self) -> bool {
        matches!(
            self,
            Frame::RowsBefore { .. }
                | Frame::RangeBefore { .. }
                | Frame::UnboundedBefore(_)
                | Frame::UnboundedBeforeTime(_)
        )
    }

    /// Whether the frame reaches back by event time (`RANGE`).
    pub fn is_range(&self) -> bool {
        matches!(
            self,
            Frame::Range(_) | Frame::RangeBefore { .. } | Frame::UnboundedBeforeTime(_)
        )
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Frame::Rows(n) => write!(f, "ROWS {n} PRECEDING"),
            Frame::Range(ms) => write!(f, "RANGE {} PRECEDING", format_duration(*ms)),
            Frame::Unbounded => write!(f, "ROWS UNBOUNDED PRECEDING"),
            Frame::RowsBefore { start, end } => {
                write!(f, "ROWS BETWEEN {start} PRECEDING AND {end} PRECEDING")
            }
            Frame::RangeBefore { start, end } => write!(
                f,
                "RANGE BETWEEN {} PRECEDING AND {} PRECEDING",
                format_duration(*start),
                format_duration(*end)
            ),
            Frame::UnboundedBefore(end) => {
                write!(f, "ROWS BETWEEN UNBOUNDED PRECEDING AND {end} PRECEDING")
            }
            Frame::UnboundedBeforeTime(end) => write!(
                f,
                "RANGE BETWEEN UNBOUNDED PRECEDING AND {} PRECEDING",
                format_duration(*end)
            ),
        }
    }
}

/// `90000` → `'1m30s'`.
pub fn format_duration(ms: i64) -> String {
    let mut rest = ms;
    let mut out = String::new();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
        ("ms", 1),
    ] {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    if out.is_empty() {
        out.push_str("0s");
    }
    format!("'{out}'")
}

/// A set of per-key windows shared by the aggregates with the same keys,
/// frame and event time: the rows that enter and leave are computed once.
#[derive(Clone, Debug)]
pub struct WindowGroup {
    /// Partition keys (GROUP BY / PARTITION BY), over the input row.
    pub keys: Vec<Expr>,
    /// The keys as written, for EXPLAIN.
    pub key_names: Vec<String>,
    /// The frame.
    pub frame: Frame,
    /// The event-time column for `RANGE` frames (TIMESTAMP or BIGINT ms).
    pub event_time: Option<String>,
}

/// The function behind an aggregate call.
#[derive(Clone)]
pub enum AggregateFunction {
    /// A built-in function from `sliq-aggregates`.
    Builtin(ResolvedAggregate),
    /// A function registered by the embedding program.
    User(Arc<dyn UserAggregate>),
    /// `count(DISTINCT x)`: not a monoid of constant size, so the engine
    /// keeps each window's values with their number of occurrences.
    DistinctCount(DistinctCount),
}

/// `count(DISTINCT x)` for an `x` of one value type.
#[derive(Clone, Debug)]
pub struct DistinctCount {
    input: [ValueType; 1],
    output: OutputType,
}

impl DistinctCount {
    /// `count(DISTINCT x)` of an `x` of type `input`: a BIGINT.
    pub fn new(input: ValueType) -> Self {
        DistinctCount {
            input: [input],
            output: OutputType::Scalar(ValueType::Int64),
        }
    }

    /// The type of `x`.
    pub fn input(&self) -> ValueType {
        self.input[0]
    }
}

impl AggregateFunction {
    /// The value types the engine must feed, in argument order.
    pub fn inputs(&self) -> &[ValueType] {
        match self {
            AggregateFunction::Builtin(r) => r.inputs(),
            AggregateFunction::User(u) => u.inputs(),
            AggregateFunction::DistinctCount(d) => &d.input,
        }
    }

    /// The result type.
    pub fn output_type(&self) -> &OutputType {
        match self {
            AggregateFunction::Builtin(r) => r.output_type(),
            AggregateFunction::User(u) => u.output_type(),
            AggregateFunction::DistinctCount(d) => &d.output,
        }
    }

    /// The function's name.
    pub fn name(&self) -> &str {
        match self {
            AggregateFunction::Builtin(r) => r.name(),
            AggregateFunction::User(u) => u.name(),
            AggregateFunction::DistinctCount(_) => "count",
        }
    }
}

impl fmt::Debug for AggregateFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())
    }
}

/// A user-defined aggregate as the planner sees it: its signature. The
/// engine that registered it knows how to run it (`as_any` downcasts).
pub trait UserAggregate: Send + Sync + 'static {
    /// The function's name (lower case).
    fn name(&self) -> &str;
    /// The value types it takes.
    fn inputs(&self) -> &[ValueType];
    /// Its result type.
    fn output_type(&self) -> &OutputType;
    /// The engine-side object.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// One aggregate of a query.
#[derive(Clone, Debug)]
pub struct AggregateCall {
    /// The function.
    pub function: AggregateFunction,
    /// Value arguments, already cast to the function's input types.
    pub args: Vec<Expr>,
    /// `FILTER (WHERE p)`: a BOOLEAN over the input row. Rows where it is
    /// not true still take their place in the frame but add nothing (their
    /// partial aggregate is the identity).
    pub filter: Option<Expr>,
    /// Index of its [`WindowGroup`].
    pub window: usize,
    /// The call as written, for EXPLAIN and column names.
    pub display: String,
}

/// The condition a result row must meet to be emitted, after its row entered
/// the windows: a query's `HAVING` and `QUALIFY` together.
#[derive(Clone, Debug)]
pub struct ResultFilter {
    /// The clauses it was written as, for `EXPLAIN`: `Having`, `Qualify`
    /// or `Having and Qualify`.
    pub clauses: &'static str,
    /// A BOOLEAN over the intermediate schema; with both clauses, their AND.
    pub condition: Expr,
}

/// A planned continuous query.
#[derive(Clone, Debug)]
pub struct QueryPlan {
    /// The query text as written (see [`single_line`] to show it on one
    /// line).
    pub sql: String,
    /// The stream the rows come from (through `input`, when there is one).
    pub stream: String,
    /// A subquery (`FROM (SELECT …)` or a `WITH` query) whose results are
    /// this query's rows: it runs first on each batch of the stream, and its
    /// `output_schema` is this plan's `input_schema`. Subqueries have no
    /// `limit`.
    pub input: Option<Box<QueryPlan>>,
    /// The schema of the rows this query reads: the stream's, or `input`'s
    /// results.
    pub input_schema: SchemaRef,
    /// The result column that carries the input's event-time column
    /// unchanged (the event time of a query that reads these results).
    pub output_event_time: Option<String>,
    /// `WHERE`, over the input row.
    pub filter: Option<Expr>,
    /// The distinct windows.
    pub windows: Vec<WindowGroup>,
    /// The aggregates; result `i` is the column `__agg{i}` of the
    /// intermediate schema.
    pub aggregates: Vec<AggregateCall>,
    /// Input columns followed by one column per aggregate.
    pub intermediate_schema: SchemaRef,
    /// `HAVING` and `QUALIFY`, one BOOLEAN over the intermediate schema
    /// (input columns and aggregate results): rows for which it is not true
    /// emit nothing.
    pub result_filter: Option<ResultFilter>,
    /// The output columns: name and expression over the intermediate schema.
    pub outputs: Vec<(String, Expr)>,
    /// The result schema.
    pub output_schema: SchemaRef,
    /// `LIMIT n`: the query stops after emitting `n` rows.
    pub limit: Option<u64>,
    /// WHERE and the select items as the query wrote them.
    pub written: WrittenParts,
}

/// Parts of a query as it wrote them, for messages: a row that fails is
/// named with the expression the user wrote (`gap * 2`), not with the
/// planner's rewrite of it (its casts).
#[derive(Clone, Debug, Default)]
pub struct WrittenParts {
    /// `WHERE`'s condition.
    pub filter: Option<String>,
    /// Each output's expression, in output order; `None` for a column that
    /// `*` brought.
    pub outputs: Vec<Option<String>>,
}

/// Marks in `read` (one flag per column of `schema`) the columns named
/// `name` without regard to case; whether there was one.
pub fn mark_column(schema: &Schema, name: &str, read: &mut [bool]) -> bool {
    let mut found = false;
    for (read, field) in read.iter_mut().zip(schema.fields()) {
        if field.name().eq_ignore_ascii_case(name) {
            *read = true;
            found = true;
        }
    }
    found
}

/// Name of the intermediate column holding aggregate `i`.
pub fn aggregate_column(i: usize) -> String {
    format!("__agg{i}")
}

impl QueryPlan {
    /// Which of the stream's columns the query reads, by position in the
    /// stream's schema (through its subqueries): the columns its
    /// expressions name and its `RANGE` windows' event time. Names are
    /// matched without regard to case, so the set never misses a column; a
    /// name that is neither a stream column nor an aggregate's result
    /// marks every column as read.
    pub fn stream_columns_read(&self) -> Vec<bool> {
        if let Some(input) = &self.input {
            return input.stream_columns_read();
        }
        let fields = self.input_schema.fields();
        let mut read = vec![false; fields.len()];
        let expressions = self
            .filter
            .iter()
            .chain(self.windows.iter().flat_map(|w| &w.keys))
            .chain(
                self.aggregates
                    .iter()
                    .flat_map(|a| a.args.iter().chain(&a.filter)),
            )
            .chain(self.result_filter.as_ref().map(|f| &f.condition))
            .chain(self.outputs.iter().map(|(_, e)| e));
        let names = expressions
            .flat_map(|e| e.column_refs().into_iter().map(|c| c.name.as_str()))
            .chain(self.windows.iter().filter_map(|w| w.event_time.as_deref()));
        for name in names {
            let known = mark_column(&self.input_schema, name, &mut read);
            let aggregate = (0..self.aggregates.len()).any(|i| aggregate_column(i) == name);
            if !known && !aggregate {
                return vec![true; fields.len()];
            }
        }
        read
    }

    /// The plan as text, as `EXPLAIN` prints it. `algorithm` names the
    /// window algorithm the engine will run.
    pub fn explain(&self, algorithm: &str) -> String {
        let mut out = String::new();
        out.push_str(&format!("ContinuousQuery: {}\n", single_line(&self.sql)));
        match &self.input {
            None => out.push_str(&format!(
                "  Source: stream {} ({})\n",
                self.stream,
                schema_text(&self.input_schema)
            )),
            Some(input) => {
                out.push_str("  Source: the results of\n");
                for line in input.explain(algorithm).lines() {
                    out.push_str(&format!("    {line}\n"));
                }
            }
        }
        if let Some(filter) = &self.filter {
            out.push_str(&format!("  Filter: {}\n", sql_text(filter)));
        }
        for (i, w) in self.windows.iter().enumerate() {
            let keys = if w.key_names.is_empty() {
                "(global)".to_string()
            } else {
                w.key_names.join(", ")
            };
            let time = w
                .event_time
                .as_ref()
                .map(|t| format!(", event time {t}"))
                .unwrap_or_default();
            out.push_str(&format!("  Window {i}: keys {keys}, {}{time}\n", w.frame));
            // Nothing leaves an unbounded frame: its aggregates keep one
            // running total per key instead of a window.
            let runs_on = match w.frame.is_unbounded() {
                true => "a running total per key".to_string(),
                false => format!("algorithm {algorithm}"),
            };
            for (j, a) in self
                .aggregates
                .iter()
                .enumerate()
                .filter(|(_, a)| a.window == i)
            {
                let inputs: Vec<String> = a
                    .function
                    .inputs()
                    .iter()
                    .map(ToString::to_string)
                    .collect();
                let (signature, runs_on) = match &a.function {
                    AggregateFunction::DistinctCount(_) => (
                        format!("count(DISTINCT {})", inputs.join(", ")),
                        "each value's rows counted per key",
                    ),
                    f => (
                        format!("monoid {}({})", f.name(), inputs.join(", ")),
                        runs_on.as_str(),
                    ),
                };
                out.push_str(&format!(
                    "    {} = {}: {signature} -> {}, {runs_on}\n",
                    aggregate_column(j),
                    a.display,
                    a.function.output_type(),
                ));
            }
        }
        if let Some(f) = &self.result_filter {
            out.push_str(&format!("  {}: {}\n", f.clauses, sql_text(&f.condition)));
        }
        out.push_str(&format!("  Output: {}\n", schema_text(&self.output_schema)));
        if let Some(n) = self.limit {
            out.push_str(&format!("  Limit: stops after {n} rows\n"));
        }
        out
    }
}

fn schema_text(schema: &Schema) -> String {
    let fields: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f.name(),
                crate::types::sql_type_name(f.data_type())
            )
        })
        .collect();
    fields.join(", ")
}

/// One `key = value` of `CREATE STREAM … WITH (…)`, with where it was
/// written, so that whoever reads the option can point at a bad one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamOption {
    /// The key, lower-cased.
    pub key: String,
    /// The value as written (a string constant without its quotes).
    pub value: String,
    /// Where the key stands in the statement's text.
    pub key_at: Option<Location>,
    /// Where the value stands.
    pub value_at: Option<Location>,
}

/// A stream's definition from `CREATE STREAM`.
#[derive(Clone, Debug)]
pub struct StreamDefinition {
    /// Its name.
    pub name: String,
    /// Its columns.
    pub schema: SchemaRef,
    /// `WITH (key = value, …)`, in the order written.
    pub options: Vec<StreamOption>,
    /// `IF NOT EXISTS`: a stream of this name that exists already is kept
    /// as it is, whatever its columns and options, and this one is dropped.
    pub if_not_exists: bool,
}

impl StreamDefinition {
    /// The value of option `key`, if given.
    pub fn option(&self, key: &str) -> Option<&str> {
        self.find(key).map(|o| o.value.as_str())
    }

    /// An error about the value of option `key`, pointing at that value.
    pub fn value_error(&self, key: &str, message: impl Into<String>) -> SqlError {
        SqlError::at(
            SqlErrorKind::Plan(message.into()),
            self.find(key).and_then(|o| o.value_at),
        )
    }

    /// An error about option `key` itself (one nobody reads), pointing at
    /// its name.
    pub fn key_error(&self, key: &str, message: impl Into<String>) -> SqlError {
        SqlError::at(
            SqlErrorKind::Plan(message.into()),
            self.find(key).and_then(|o| o.key_at),
        )
    }

    fn find(&self, key: &str) -> Option<&StreamOption> {
        self.options.iter().find(|o| o.key == key)
    }
}

/// A statement, planned.
#[derive(Clone, Debug)]
pub enum Statement {
    /// `CREATE STREAM`
    CreateStream(StreamDefinition),
    /// `DROP STREAM [IF EXISTS] name [RESTRICT]`
    DropStream {
        /// The stream.
        name: String,
        /// `IF EXISTS`
        if_exists: bool,
        /// `RESTRICT`: refused while queries run over the stream (a plain
        /// drop, or `CASCADE`, ends them).
        restrict: bool,
    },
    /// `SHOW STREAMS`
    ShowStreams,
    /// `SHOW QUERIES`
    ShowQueries,
    /// `SHOW FUNCTIONS [LIKE 'pattern']`
    ShowFunctions {
        /// A `LIKE` pattern (`%`, `_`) the names must match, ignoring case.
        like: Option<String>,
    },
    /// `DESCRIBE name`
    Describe(String),
    /// `EXPLAIN SELECT …`
    Explain(Box<QueryPlan>),
    /// `SET name = value`
    Set {
        /// The setting, lower-cased.
        name: String,
        /// Its value.
        value: String,
    },
    /// `SHOW name`, or `SHOW ALL` (`None`): settings and their values.
    Show {
        /// The setting, lower-cased.
        name: Option<String>,
    },
    /// `RESET name`, or `RESET ALL` (`None`): settings back to their
    /// defaults.
    Reset {
        /// The setting, lower-cased.
        name: Option<String>,
    },
    /// `INSERT INTO stream VALUES (…), …`
    Insert {
        /// The stream.
        stream: String,
        /// The rows, as literal expressions (cast to the column types).
        rows: Vec<Vec<Expr>>,
    },
    /// A continuous `SELECT`.
    Query(Box<QueryPlan>),
}

/// The position of the column `name` among `fields`: the one spelt exactly
/// so, else the first whose name differs only in case (SQL folds unquoted
/// names; a stream declared with `"Wert"` is read as `wert` too).
pub(crate) fn column_position(fields: &arrow_schema::Fields, name: &str) -> Option<usize> {
    fields.iter().position(|f| f.name() == name).or_else(|| {
        fields
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(name))
    })
}

/// What the planner needs to know about streams and user functions.
pub trait Catalog {
    /// The schema and event-time column of a stream.
    fn stream(&self, name: &str) -> Option<(SchemaRef, Option<String>)>;
    /// All stream names (for suggestions).
    fn stream_names(&self) -> Vec<String>;
    /// A user-defined aggregate by (lower-case) name.
    fn user_aggregate(&self, name: &str) -> Option<Arc<dyn UserAggregate>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_compactly() {
        assert_eq!(format_duration(90_000), "'1m30s'");
        assert_eq!(format_duration(10_000), "'10s'");
        assert_eq!(format_duration(1_500), "'1s500ms'");
        assert_eq!(format_duration(0), "'0s'");
    }
}

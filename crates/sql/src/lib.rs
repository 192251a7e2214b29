//! sliq's SQL front end: parse continuous queries with sqlparser, bind them
//! to stream schemas, and plan them as window operators.
//!
//! [`plan_sql`] turns text into [`Statement`]s. A `SELECT` becomes a
//! [`QueryPlan`]: the input stream, an optional filter, the distinct
//! [`WindowGroup`]s (keys, frame, event time), the aggregate calls with
//! their arguments as type-checked `datafusion_expr::Expr`s, and the output
//! columns as expressions over the input row plus the aggregate results. A
//! query over a subquery (`FROM (SELECT …)` or a `WITH` query) carries the
//! subquery's plan as its `input`, whose results are its rows.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_schema::{DataType, Field, Schema, SchemaRef};
//! use sliq_sql::{plan_sql, Catalog, Frame, Statement, UserAggregate};
//!
//! struct OneStream(SchemaRef);
//! impl Catalog for OneStream {
//!     fn stream(&self, name: &str) -> Option<(SchemaRef, Option<String>)> {
//!         (name == "s").then(|| (self.0.clone(), Some("ts".into())))
//!     }
//!     fn stream_names(&self) -> Vec<String> { vec!["s".into()] }
//!     fn user_aggregate(&self, _: &str) -> Option<Arc<dyn UserAggregate>> { None }
//! }
//!
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("ts", DataType::Int64, false),
//!     Field::new("key", DataType::Utf8, true),
//!     Field::new("v", DataType::Float64, true),
//! ]));
//! let stmts = plan_sql("SELECT key, max(v) OVER (RANGE '10s') AS m FROM s GROUP BY key", &OneStream(schema))?;
//! let Statement::Query(plan) = &stmts[0] else { unreachable!() };
//! assert_eq!(plan.windows[0].frame, Frame::Range(10_000));
//! assert_eq!(plan.output_schema.field(1).name(), "m");
//! # Ok::<(), sliq_sql::SqlError>(())
//! ```

mod error;
mod expr;
pub mod panics;
mod parser;
mod plan;
mod planner;
mod types;

pub use error::{Location, SqlError, SqlErrorKind, closest, did_you_mean};
pub use expr::{FunctionInfo, builtin_functions, like, literal_text, sql_text};
pub use parser::{
    DurationError, SliqDialect, duration_ms, parse_duration_ms, parse_statements, single_line,
};
pub use plan::{
    AggregateCall, AggregateFunction, Catalog, DistinctCount, Frame, QueryPlan, ResultFilter,
    Statement, StreamDefinition, StreamOption, UserAggregate, WindowGroup, WrittenParts,
    aggregate_column, format_duration, mark_column,
};
pub use planner::{output_arrow_type, plan_parsed, plan_sql};
pub use types::{arrow_type, canonical_arrow_type, sql_type_name, value_type};

//! sliq's SQL aggregate functions, each a monoid with `lift` and `lower`.
//!
//! An aggregate function is three steps (see `sliq_swag`'s crate docs):
//! [`Aggregate::lift`] turns one input row into a partial aggregate,
//! [`Monoid::combine`] merges two partial
//! aggregates (older first), and [`Aggregate::lower`] turns the aggregate of
//! a whole window into the SQL result. Because windows only ever combine,
//! nothing is subtracted on eviction: float results do not drift with stream
//! length, and non-invertible functions (`max`, `argmax`, sketches) cost the
//! same as `sum`.
//!
//! The [`registry`] resolves a call such as `approx_percentile(v, 0.9)` by
//! name and argument types into a [`ResolvedAggregate`], which hands the
//! concrete aggregate type to an [`AggregateVisitor`]: the engine writes one
//! generic window operator and gets a monomorphized copy per function and
//! type, so no `combine` goes through a dynamic call.
//!
//! ```
//! use sliq_aggregates::{registry, ArgType, ValueType, Value, Rows, CollectOutput};
//!
//! let max = registry::resolve("max", &[ArgType::column(ValueType::Float64)], Default::default())?;
//! let rows = Rows::new(vec![vec![Value::Float64(3.0)], vec![Value::Null], vec![Value::Float64(7.5)]]);
//! let out = max.visit(CollectOutput::sliding(&rows, 2));
//! assert_eq!(out?, vec![Value::Float64(3.0), Value::Float64(3.0), Value::Float64(7.5)]);
//! # Ok::<(), sliq_aggregates::AggregateError>(())
//! ```

mod decimal;
mod error;
mod exact;
pub mod functions;
mod io;
pub mod registry;
pub mod sketch;
mod types;
mod value;

pub use decimal::{decimal_from_f64, parse_decimal, write_decimal};
pub use error::AggregateError;
pub use exact::DoubleDouble;
pub use io::{Columns, OutputSink, OutputValue, Scalar};
pub use registry::{AggregateVisitor, CallOptions, FixedFrame, ResolvedAggregate};
pub use types::{ArgType, Literal, OutputType, ValueType};
pub use value::{CollectOutput, Rows, Value, ValueSink};

use sliq_swag::{LiftInput, Monoid};

/// A SQL aggregate function as a monoid over its partial aggregates.
///
/// Laws (property-tested for every registered function): `combine` is
/// associative and `identity` is its identity; `lift` of a NULL input that
/// the function skips is the identity.
pub trait Aggregate: Monoid<Agg: Send + Sync + 'static> + Clone + Send + Sync + 'static {
    /// What `lower` produces for one window.
    type Output: OutputValue;

    /// The partial aggregate of input row `row` (its arguments read from
    /// `columns`, NULLs included).
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Self::Agg;

    /// The SQL result for a window whose aggregate is `agg`.
    fn lower(&self, agg: &Self::Agg) -> Result<Self::Output, AggregateError>;
}

/// An aggregate whose partial aggregates are large beside the inputs they
/// lift (the sketches, kilobytes for one number): its windows keep the
/// inputs and partial aggregates only per pane (see
/// [`sliq_swag::PanedWindow`]), instead of one per row.
///
/// Laws: `lift(columns, row)` equals `lift_input(&input(columns, row))`,
/// `lift_input(&nothing())` is the identity, and `insert_input(acc, x)`
/// equals `acc ⊗ lift_input(x)`.
pub trait PanedAggregate: Aggregate + LiftInput<Input: Send + Sync + 'static> {
    /// Row `row`'s input, read from `columns` (NULLs included).
    fn input<C: Columns>(&self, columns: &C, row: usize) -> Self::Input;

    /// An input that lifts to the identity: for rows a `FILTER` leaves out.
    fn nothing(&self) -> Self::Input;
}

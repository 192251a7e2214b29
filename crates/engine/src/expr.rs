//! Compiled scalar expressions and what happens when a row's value cannot be
//! computed.
//!
//! Expressions run vectorized over a whole batch. Some fail on a single
//! row's data: `x / y` with `y = 0` on integers, an overflowing CAST, a
//! string that does not parse. Failing the batch would lose every other row
//! of it, so [`CompiledExpr::evaluate_rows`] then narrows the failure down
//! to its rows and gives each of them NULL, as SQLite and MySQL do for
//! division by zero. The failures are counted ([`RowFailures`]) and reach
//! the query's statistics with the first message, which names the row and
//! the values the expression read there; nothing is dropped silently.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::temporal_conversions::as_datetime;
use arrow_array::types::{
    ArrowTimestampType, TimestampMicrosecondType, TimestampMillisecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, new_null_array};
use arrow_schema::{DataType, TimeUnit};
use datafusion_common::tree_node::{Transformed, TreeNode};
use datafusion_common::{Column, DFSchema, DataFusionError, ScalarValue};
use datafusion_expr::Expr;
use datafusion_expr::Operator;
use datafusion_expr::execution_props::ExecutionProps;
use datafusion_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion_physical_expr::expressions::BinaryExpr;
use datafusion_physical_expr::utils::collect_columns;
use datafusion_physical_expr::{PhysicalExpr, create_physical_expr};
use sliq_sql::{literal_text, sql_text};

/// Failing slices of at most this many rows are evaluated row by row
/// rather than halved again.
const ROW_BY_ROW: usize = 16;

/// A physical expression with the SQL text it came from, which names it in
/// error messages (the physical form shows column indices, `x@2`, and
/// DataFusion's display types its constants, `Decimal128(0.5,1,1)`).
#[derive(Debug, Clone)]
pub(crate) struct CompiledExpr {
    physical: Arc<dyn PhysicalExpr>,
    text: String,
    data_type: DataType,
    /// The columns it reads, by index in its rows' schema and name, in
    /// schema order: a failing row's message shows their values.
    columns: Vec<(usize, String)>,
}

/// Rows whose values could not be computed and became NULL.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RowFailures {
    /// How many values became NULL.
    pub count: usize,
    /// The first of them.
    pub first: Option<FailedRows>,
}

/// Rows of a batch whose value could not be computed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedRows {
    /// Their positions (from 0) in the batch the failures are counted
    /// against: one row, or a run of them that a kernel panicked on.
    pub rows: Range<usize>,
    /// What failed, with the values it read: `evaluating x / y where
    /// x = 1, y = 0: Divide by zero`.
    pub message: String,
}

impl RowFailures {
    /// Records `count` failures, keeping the first: `rows` and its message.
    pub(crate) fn add(
        &mut self,
        count: usize,
        rows: Range<usize>,
        message: impl FnOnce() -> String,
    ) {
        if count == 0 {
            return;
        }
        self.count += count;
        if self.first.is_none() {
            self.first = Some(FailedRows {
                rows,
                message: message(),
            });
        }
    }

    /// Adds another set of failures to these.
    pub(crate) fn merge(&mut self, other: RowFailures) {
        self.count += other.count;
        if self.first.is_none() {
            self.first = other.first;
        }
    }

    /// These failures, counted against the rows that `kept` selected from
    /// a batch, counted against that batch instead (without a mask, every
    /// row was kept). O(rows) when there is a failure, nothing otherwise.
    pub(crate) fn through(mut self, kept: Option<&BooleanArray>) -> Self {
        if let (Some(first), Some(kept)) = (&mut self.first, kept) {
            let position = |row: usize| kept.values().set_indices().nth(row);
            let start = position(first.rows.start);
            let last = first.rows.end.checked_sub(1).and_then(position);
            debug_assert!(start.is_some() && last.is_some(), "failed rows not kept");
            if let (Some(start), Some(last)) = (start, last) {
                first.rows = start..last + 1;
            }
        }
        self
    }
}

/// The longest text of a value in a failing row's message: a longer one
/// is cut, and ends in `…`.
const VALUE_TEXT_CHARS: usize = 60;

/// `e` as a physical expression over rows of `schema`, its integer `+`,
/// `-` and `*` checked: DataFusion's wrap around on overflow by default,
/// which would give a wrong number where SQL engines (PostgreSQL, DuckDB)
/// fail, and sliq gives NULL for that row (see the module docs). A panic
/// in DataFusion's planning (an `IN` list is evaluated over no rows there,
/// and some kernels panic on that) is this expression's error, not the
/// process's end.
pub(crate) fn physical_expr(e: &Expr, schema: &DFSchema) -> Result<Arc<dyn PhysicalExpr>, String> {
    let physical = sliq_sql::panics::catching(|| {
        create_physical_expr(
            e,
            schema,
            &ExecutionProps::new(),
            &PhysicalPlanningContext::default(),
        )
    })
    .map_err(|panic| format!("cannot compile {}: internal error ({panic})", sql_text(e)))?
    .map_err(|err| format!("cannot compile {}: {err}", sql_text(e)))?;
    physical
        .transform_up(|node| {
            Ok(match node.downcast_ref::<BinaryExpr>() {
                Some(b)
                    if matches!(
                        b.op(),
                        Operator::Plus | Operator::Minus | Operator::Multiply
                    ) =>
                {
                    let checked =
                        BinaryExpr::new(Arc::clone(b.left()), *b.op(), Arc::clone(b.right()))
                            .with_fail_on_overflow(true);
                    Transformed::yes(Arc::new(checked) as Arc<dyn PhysicalExpr>)
                }
                _ => Transformed::no(node),
            })
        })
        .map(|t| t.data)
        .map_err(|err| format!("cannot compile {}: {err}", sql_text(e)))
}

impl CompiledExpr {
    /// Compiles `e` over rows of `schema`. It is evaluated once over no
    /// rows: an expression that fails whatever the rows is an error now,
    /// not a NULL on every row (the planner catches such constants as
    /// `1 / 0` first, and points at them). (A kernel's panic there is no
    /// verdict: the rows will tell.)
    pub(crate) fn new(e: &Expr, schema: &DFSchema) -> Result<Self, String> {
        let physical = physical_expr(e, schema)?;
        let data_type = physical
            .data_type(schema.as_arrow())
            .map_err(|err| format!("cannot type {}: {err}", sql_text(e)))?;
        let mut columns: Vec<(usize, String)> = collect_columns(&physical)
            .into_iter()
            .map(|c| (c.index(), c.name().to_string()))
            .collect();
        columns.sort_unstable();
        let compiled = CompiledExpr {
            physical,
            text: sql_text(e),
            data_type,
            columns,
        };
        let no_rows = RecordBatch::new_empty(Arc::new(schema.as_arrow().clone()));
        match compiled.try_evaluate(&no_rows) {
            Err(failed) if !failed.panicked => Err(compiled.message(&failed)),
            _ => Ok(compiled),
        }
    }

    /// [`Self::new`], its messages naming the columns in `shown` by their
    /// text there: an aggregate's result column (`__agg0`) by its call
    /// (`lag(ts)`).
    pub(crate) fn new_showing(
        e: &Expr,
        schema: &DFSchema,
        shown: &HashMap<String, String>,
    ) -> Result<Self, String> {
        let mut compiled = Self::new(e, schema)?;
        let written = e
            .clone()
            .transform(|node| {
                let text = match &node {
                    Expr::Column(c) => shown.get(&c.name),
                    _ => None,
                };
                Ok(match text {
                    Some(text) => Transformed::yes(Expr::Column(Column::new_unqualified(text))),
                    None => Transformed::no(node),
                })
            })
            .map(|t| t.data);
        if let Ok(written) = written {
            compiled.text = sql_text(&written);
        }
        for (_, name) in &mut compiled.columns {
            if let Some(text) = shown.get(name) {
                name.clone_from(text);
            }
        }
        Ok(compiled)
    }

    /// Itself, named in messages by `written`, the expression as the query
    /// wrote it (the planner may have rewritten it: a length of time times
    /// a number is casts), when there is one.
    pub(crate) fn written_as(mut self, written: Option<&str>) -> Self {
        if let Some(written) = written {
            self.text = written.to_string();
        }
        self
    }

    /// The type of its values.
    pub(crate) fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Its value for every row of `batch`, or the first error.
    pub(crate) fn evaluate(&self, batch: &RecordBatch) -> Result<ArrayRef, String> {
        self.try_evaluate(batch)
            .map_err(|failed| self.message(&failed))
    }

    /// What failed, over a batch: `evaluating x / y: Divide by zero`.
    fn message(&self, failed: &Failed) -> String {
        format!("evaluating {}: {}", self.text, failed.cause)
    }

    /// What failed on `row`, a batch of one row: `evaluating x / y where
    /// x = 1, y = 0: Divide by zero`.
    fn row_message(&self, row: &RecordBatch, failed: &Failed) -> String {
        let values: Vec<String> = self
            .columns
            .iter()
            .filter(|(index, _)| *index < row.num_columns())
            .map(|(index, name)| {
                let value = ScalarValue::try_from_array(row.column(*index), 0)
                    .map(|v| literal_text(&v))
                    .unwrap_or_else(|_| "?".to_string());
                format!("{name} = {}", shortened(value))
            })
            .collect();
        match values.is_empty() {
            true => self.message(failed),
            false => format!(
                "evaluating {} where {}: {}",
                self.text,
                values.join(", "),
                failed.cause
            ),
        }
    }

    /// [`Self::evaluate`], telling a kernel's panic apart from an error: a
    /// panic (a bug in a kernel, or a kernel's refusal of a size, such as a
    /// `repeat` past 2 GiB of text) is caught here, so that it costs the
    /// batch's values and not the query.
    fn try_evaluate(&self, batch: &RecordBatch) -> Result<ArrayRef, Failed> {
        let evaluated = sliq_sql::panics::catching(|| {
            self.physical
                .evaluate(batch)
                .and_then(|v| v.into_array(batch.num_rows()))
        })
        .map_err(|panic| Failed {
            cause: format!("internal error ({panic})"),
            panicked: true,
        })?;
        let array = evaluated.map_err(|err| Failed::error(cause(&err)))?;
        if let Some(v) = timestamp_out_of_range(&array) {
            return Err(Failed::error(format!(
                "{v} is out of range for {} (years -262143 to 262142)",
                array.data_type()
            )));
        }
        Ok(array)
    }

    /// Its value for every row of `batch`, NULL for the rows where it fails
    /// (each counted in `failures`). Costs nothing extra unless some row
    /// fails; then halves of the batch are evaluated, and halves of the
    /// halves that fail, down to the failing rows: O(k log n) evaluations
    /// for k failing rows of n, and about n when most rows fail. Rows whose
    /// evaluation panicked are not split further: they all become NULL (a
    /// kernel that panics on a size would otherwise be run again on ever
    /// smaller pieces that each build most of that size).
    pub(crate) fn evaluate_rows(
        &self,
        batch: &RecordBatch,
        failures: &mut RowFailures,
    ) -> Result<ArrayRef, String> {
        let failed = match self.try_evaluate(batch) {
            Ok(array) => return Ok(array),
            // No rows, yet it failed: not a data problem.
            Err(failed) if batch.num_rows() == 0 => return Err(self.message(&failed)),
            Err(failed) => failed,
        };
        let mut parts = Vec::new();
        self.bisect(batch, 0, failed, &mut parts, failures);
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        arrow_select::concat::concat(&refs).map_err(|e| format!("evaluating {}: {e}", self.text))
    }

    /// Appends to `parts` the values of `rows` (rows `offset..` of the
    /// batch), which failed as a whole.
    fn bisect(
        &self,
        rows: &RecordBatch,
        offset: usize,
        failed: Failed,
        parts: &mut Vec<ArrayRef>,
        failures: &mut RowFailures,
    ) {
        let n = rows.num_rows();
        debug_assert!(n > 0);
        if n == 1 || failed.panicked {
            failures.add(n, offset..offset + n, || match n {
                1 => self.row_message(rows, &failed),
                _ => self.message(&failed),
            });
            parts.push(new_null_array(&self.data_type, n));
            return;
        }
        if n <= ROW_BY_ROW {
            // Halving further costs more evaluations than it saves when
            // failures are dense.
            for row in 0..n {
                let one = rows.slice(row, 1);
                match self.try_evaluate(&one) {
                    Ok(value) => parts.push(value),
                    Err(failed) => self.bisect(&one, offset + row, failed, parts, failures),
                }
            }
            return;
        }
        let half = n / 2;
        for (start, len) in [(0, half), (half, n - half)] {
            let slice = rows.slice(start, len);
            match self.try_evaluate(&slice) {
                Ok(values) => parts.push(values),
                Err(failed) => self.bisect(&slice, offset + start, failed, parts, failures),
            }
        }
    }
}

/// Why an evaluation failed, and whether a kernel panicked.
struct Failed {
    cause: String,
    panicked: bool,
}

impl Failed {
    fn error(cause: String) -> Self {
        Failed {
            cause,
            panicked: false,
        }
    }
}

/// Why DataFusion failed, without the layers it wraps the cause in
/// (`Arrow error: Divide by zero error` is arrow's `Divide by zero error`).
fn cause(err: &DataFusionError) -> String {
    match err.find_root() {
        DataFusionError::ArrowError(why, _) => why.to_string(),
        root => root.strip_backtrace(),
    }
}

/// `text`, cut to [`VALUE_TEXT_CHARS`] characters.
fn shortened(text: String) -> String {
    match text.char_indices().nth(VALUE_TEXT_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// A value of a TIMESTAMP array that names no date and time (a CAST of a
/// large integer, say), if any. Arrow keeps such values but cannot show
/// them; SQL engines refuse them (DuckDB, PostgreSQL). Only the least and
/// the greatest value need converting.
fn timestamp_out_of_range(array: &ArrayRef) -> Option<i64> {
    fn check<T: ArrowTimestampType>(array: &ArrayRef) -> Option<i64> {
        let values = array.as_primitive::<T>();
        let (least, greatest) = values
            .iter()
            .flatten()
            .fold((i64::MAX, i64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if least > greatest {
            return None;
        }
        [least, greatest]
            .into_iter()
            .find(|&v| as_datetime::<T>(v).is_none())
    }
    match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => check::<TimestampSecondType>(array),
        DataType::Timestamp(TimeUnit::Millisecond, _) => check::<TimestampMillisecondType>(array),
        DataType::Timestamp(TimeUnit::Microsecond, _) => check::<TimestampMicrosecondType>(array),
        // Any i64 of nanoseconds is within chrono's years.
        _ => None,
    }
}

impl std::fmt::Display for CompiledExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_schema::{Field, Schema};
    use datafusion_expr::{col, lit};

    fn batch(x: &[i64], y: &[i64]) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("x", DataType::Int64, false),
            Field::new("y", DataType::Int64, false),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(x.to_vec())),
                Arc::new(Int64Array::from(y.to_vec())),
            ],
        )
        .expect("valid batch")
    }

    fn divide(b: &RecordBatch) -> CompiledExpr {
        let schema = DFSchema::try_from(b.schema()).expect("schema");
        CompiledExpr::new(&(col("x") / col("y")), &schema).expect("compiles")
    }

    #[test]
    fn failing_rows_become_null_and_are_counted() {
        let b = batch(&[6, 1, 8, 2], &[3, 0, 2, 0]);
        let e = divide(&b);
        assert!(e.evaluate(&b).is_err());
        let mut failures = RowFailures::default();
        let values = e.evaluate_rows(&b, &mut failures).expect("rows evaluate");
        let values = values.as_primitive::<Int64Type>();
        assert_eq!(
            values.iter().collect::<Vec<_>>(),
            vec![Some(2), None, Some(4), None]
        );
        assert_eq!(failures.count, 2);
        let first = failures.first.expect("a failure");
        assert_eq!(first.rows, 1..2);
        assert_eq!(
            first.message,
            "evaluating x / y where x = 1, y = 0: Divide by zero error"
        );
    }

    #[test]
    fn messages_name_the_expression_as_sql() {
        let b = batch(&[1, 1000], &[0, 0]);
        let schema = DFSchema::try_from(b.schema()).expect("schema");
        let widest = datafusion_common::ScalarValue::Decimal128(Some(10i128.pow(37) - 1), 38, 1);
        let e = datafusion_expr::cast(col("x"), DataType::Decimal128(20, 0)) * lit(widest);
        let e = CompiledExpr::new(&e, &schema).expect("compiles");
        let mut failures = RowFailures::default();
        e.evaluate_rows(&b, &mut failures).expect("rows evaluate");
        let first = failures.first.expect("a failure");
        assert_eq!(first.rows, 1..2);
        assert!(
            first.message.starts_with(
                "evaluating CAST(x AS DECIMAL(20, 0)) * 999999999999999999999999999999999999.9 where x = 1000:"
            ),
            "{first:?}"
        );
    }

    /// `explode(x)`: x, but a kernel that panics on a negative x, in a
    /// batch or as a constant (as some of DataFusion's do on sizes they
    /// refuse, or on a constant over no rows).
    #[derive(Debug, PartialEq, Eq, Hash)]
    struct Explode(datafusion_expr::Signature);

    impl datafusion_expr::ScalarUDFImpl for Explode {
        fn name(&self) -> &str {
            "explode"
        }
        fn signature(&self) -> &datafusion_expr::Signature {
            &self.0
        }
        fn return_type(&self, _: &[DataType]) -> datafusion_common::Result<DataType> {
            Ok(DataType::Int64)
        }
        fn invoke_with_args(
            &self,
            args: datafusion_expr::ScalarFunctionArgs,
        ) -> datafusion_common::Result<datafusion_expr::ColumnarValue> {
            if let datafusion_expr::ColumnarValue::Scalar(datafusion_common::ScalarValue::Int64(
                Some(v),
            )) = &args.args[0]
            {
                assert!(*v >= 0, "explode: a negative value");
            }
            let x = args.args[0].to_array(args.number_rows)?;
            let negative = x
                .as_primitive::<Int64Type>()
                .iter()
                .flatten()
                .any(|v| v < 0);
            assert!(!negative, "explode: a negative value");
            Ok(datafusion_expr::ColumnarValue::Array(x))
        }
    }

    #[test]
    fn a_kernel_that_panics_while_compiling_is_the_expressions_error() {
        // DataFusion evaluates an IN list over no rows while it compiles it.
        let b = batch(&[1], &[0]);
        let schema = DFSchema::try_from(b.schema()).expect("schema");
        let explode =
            datafusion_expr::ScalarUDF::new_from_impl(Explode(datafusion_expr::Signature::exact(
                vec![DataType::Int64],
                datafusion_expr::Volatility::Immutable,
            )));
        let e = col("x").in_list(vec![lit(1i64), explode.call(vec![lit(-1i64)])], false);
        let err = CompiledExpr::new(&e, &schema).expect_err("refused");
        assert!(
            err.starts_with(
                "cannot compile x IN (1, explode(-1)): internal error (explode: a negative value)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_kernel_that_panics_costs_its_batch_values_not_the_query() {
        let b = batch(&[1, -2, 3], &[0, 0, 0]);
        let schema = DFSchema::try_from(b.schema()).expect("schema");
        let explode =
            datafusion_expr::ScalarUDF::new_from_impl(Explode(datafusion_expr::Signature::exact(
                vec![DataType::Int64],
                datafusion_expr::Volatility::Immutable,
            )));
        let e = CompiledExpr::new(&explode.call(vec![col("x")]), &schema).expect("compiles");
        let mut failures = RowFailures::default();
        let values = e.evaluate_rows(&b, &mut failures).expect("rows evaluate");
        // Not split into halves: every row of the batch is NULL.
        assert_eq!(values.null_count(), 3);
        assert_eq!(failures.count, 3);
        let first = failures.first.take().expect("a failure");
        assert_eq!(first.rows, 0..3);
        assert!(
            first
                .message
                .starts_with("evaluating explode(x): internal error (explode: a negative value)"),
            "{first:?}"
        );
        // The next batch evaluates as usual.
        let fine = batch(&[4, 5], &[0, 0]);
        let values = e
            .evaluate_rows(&fine, &mut failures)
            .expect("rows evaluate");
        assert_eq!(values.as_primitive::<Int64Type>().values(), &[4, 5]);
    }

    proptest::proptest! {
        #[test]
        fn exactly_the_failing_rows_are_null(
            ys in proptest::collection::vec(proptest::prop_oneof![1 => proptest::strategy::Just(0i64), 3 => 1i64..5], 1..300),
        ) {
            let xs: Vec<i64> = (0..ys.len() as i64).collect();
            let b = batch(&xs, &ys);
            let mut failures = RowFailures::default();
            let values = divide(&b).evaluate_rows(&b, &mut failures).expect("rows evaluate");
            let got: Vec<Option<i64>> = values.as_primitive::<Int64Type>().iter().collect();
            let want: Vec<Option<i64>> = xs.iter().zip(&ys).map(|(x, y)| x.checked_div(*y)).collect();
            proptest::prop_assert_eq!(&got, &want);
            let zeros = ys.iter().filter(|y| **y == 0).count();
            proptest::prop_assert_eq!(failures.count, zeros);
            if let Some(first) = ys.iter().position(|y| *y == 0) {
                let failed = failures.first.map(|f| f.rows);
                proptest::prop_assert_eq!(failed, Some(first..first + 1));
            }
        }
    }

    #[test]
    fn a_batch_that_evaluates_counts_nothing() {
        let b = batch(&[6, 8], &[3, 2]);
        let mut failures = RowFailures::default();
        let values = divide(&b)
            .evaluate_rows(&b, &mut failures)
            .expect("evaluates");
        assert_eq!(values.len(), 2);
        assert_eq!(failures, RowFailures::default());
    }

    #[test]
    fn an_empty_batch_never_fails_row_by_row() {
        let b = batch(&[], &[]);
        let schema = DFSchema::try_from(b.schema()).expect("schema");
        let e = CompiledExpr::new(&(col("x") + lit(1i64)), &schema).expect("compiles");
        let mut failures = RowFailures::default();
        assert_eq!(e.evaluate_rows(&b, &mut failures).map(|a| a.len()), Ok(0));
    }
}

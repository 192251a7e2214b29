//! Plain row values: a reference implementation of [`Columns`] and
//! [`OutputSink`] for tests, examples and cross-checks.

use std::sync::Arc;

use sliq_swag::{DabaLite, FifoAggregator, PanedWindow, pane_for_window};

use crate::{
    Aggregate, AggregateError, AggregateVisitor, Columns, OutputSink, OutputValue, PanedAggregate,
};

/// One SQL value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// NULL
    Null,
    /// BOOLEAN
    Boolean(bool),
    /// BIGINT, TIMESTAMP or DATE
    Int64(i64),
    /// DOUBLE
    Float64(f64),
    /// VARCHAR
    Utf8(Arc<str>),
    /// DECIMAL: the unscaled value (the scale is the type's).
    Decimal(i128),
    /// A struct's fields, in declared order.
    Struct(Vec<Value>),
}

impl Value {
    /// A VARCHAR value.
    pub fn str(s: &str) -> Value {
        Value::Utf8(Arc::from(s))
    }
}

/// Rows of argument values: `rows[row][arg]`. A missing or mistyped value
/// reads as NULL.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    rows: Vec<Vec<Value>>,
}

impl Rows {
    /// Wraps rows of argument values.
    pub fn new(rows: Vec<Vec<Value>>) -> Self {
        Rows { rows }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn value(&self, arg: usize, row: usize) -> &Value {
        self.rows
            .get(row)
            .and_then(|r| r.get(arg))
            .unwrap_or(&Value::Null)
    }
}

impl Columns for Rows {
    fn is_valid(&self, arg: usize, row: usize) -> bool {
        !matches!(self.value(arg, row), Value::Null)
    }
    fn i64(&self, arg: usize, row: usize) -> Option<i64> {
        match self.value(arg, row) {
            Value::Int64(v) => Some(*v),
            _ => None,
        }
    }
    fn f64(&self, arg: usize, row: usize) -> Option<f64> {
        match self.value(arg, row) {
            Value::Float64(v) => Some(*v),
            _ => None,
        }
    }
    fn bool(&self, arg: usize, row: usize) -> Option<bool> {
        match self.value(arg, row) {
            Value::Boolean(v) => Some(*v),
            _ => None,
        }
    }
    fn str(&self, arg: usize, row: usize) -> Option<&str> {
        match self.value(arg, row) {
            Value::Utf8(v) => Some(v),
            _ => None,
        }
    }
    fn decimal(&self, arg: usize, row: usize) -> Option<i128> {
        match self.value(arg, row) {
            Value::Decimal(v) => Some(*v),
            _ => None,
        }
    }
}

/// Collects results as [`Value`]s.
#[derive(Debug, Default)]
pub struct ValueSink {
    values: Vec<Value>,
    /// An open struct: its fields so far and how many are still due.
    open: Option<(Vec<Value>, usize)>,
}

impl ValueSink {
    fn push(&mut self, v: Value) {
        match &mut self.open {
            Some((fields, due)) => {
                fields.push(v);
                *due -= 1;
                if *due == 0
                    && let Some((fields, _)) = self.open.take()
                {
                    self.values.push(Value::Struct(fields));
                }
            }
            None => self.values.push(v),
        }
    }

    /// The values collected.
    pub fn into_values(self) -> Vec<Value> {
        debug_assert!(self.open.is_none(), "struct left incomplete");
        self.values
    }
}

impl OutputSink for ValueSink {
    fn push_null(&mut self) {
        self.push(Value::Null)
    }
    fn push_i64(&mut self, v: i64) {
        self.push(Value::Int64(v))
    }
    fn push_f64(&mut self, v: f64) {
        self.push(Value::Float64(v))
    }
    fn push_bool(&mut self, v: bool) {
        self.push(Value::Boolean(v))
    }
    fn push_str(&mut self, v: &str) {
        self.push(Value::str(v))
    }
    fn push_decimal(&mut self, v: i128) {
        self.push(Value::Decimal(v))
    }
    fn push_struct(&mut self, fields: usize, valid: bool) {
        if valid && fields > 0 {
            self.open = Some((Vec::with_capacity(fields), fields));
        } else {
            self.push(Value::Null)
        }
    }
}

/// A visitor that runs an aggregate over [`Rows`] and returns one result
/// per row: over the last `window` rows (`ROWS window − 1 PRECEDING`) in a
/// [`DabaLite`], or over all rows so far.
#[derive(Clone, Copy, Debug)]
pub struct CollectOutput<'r> {
    rows: &'r Rows,
    window: Option<usize>,
}

impl<'r> CollectOutput<'r> {
    /// Results over sliding windows of `window` rows (at least 1).
    pub fn sliding(rows: &'r Rows, window: usize) -> Self {
        CollectOutput {
            rows,
            window: Some(window.max(1)),
        }
    }

    /// Results over all rows so far (`ROWS UNBOUNDED PRECEDING`).
    pub fn running(rows: &'r Rows) -> Self {
        CollectOutput { rows, window: None }
    }
}

impl AggregateVisitor for CollectOutput<'_> {
    type Output = Result<Vec<Value>, AggregateError>;

    fn visit<A: Aggregate>(self, aggregate: A) -> Self::Output {
        let mut window = DabaLite::new(aggregate.clone());
        let mut sink = ValueSink::default();
        for row in 0..self.rows.len() {
            window.insert(aggregate.lift(self.rows, row));
            if self.window.is_some_and(|w| window.len() > w) {
                window.evict();
            }
            aggregate.lower(&window.query())?.write(&mut sink);
        }
        Ok(sink.into_values())
    }

    /// Sliding windows of a paned aggregate keep its inputs, as the engine's do.
    fn visit_paned<A: PanedAggregate>(self, aggregate: A) -> Self::Output {
        let Some(size) = self.window else {
            return self.visit(aggregate);
        };
        let mut window = PanedWindow::new(aggregate.clone(), pane_for_window(size));
        let mut sink = ValueSink::default();
        for row in 0..self.rows.len() {
            window.insert(aggregate.input(self.rows, row));
            if window.len() > size {
                window.evict();
            }
            aggregate.lower(&window.query())?.write(&mut sink);
        }
        Ok(sink.into_values())
    }
}

//! A user-defined aggregate: `longest_run(x)`, the longest run of equal,
//! consecutive values in the window — a non-commutative monoid that sliq
//! runs in worst-case O(1) per event like any built-in.
//!
//! `cargo run --release -p sliq --example custom_aggregate` (the workspace runs
//! the `sliq` binary by default, so the package must be named)

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use sliq::aggregates::{Aggregate, AggregateError, Columns, OutputType, ValueType};
use sliq::swag::Monoid;
use sliq::{Engine, StreamOptions};

/// Summary of a sequence for "longest run of equal values": its first and
/// last value, the runs touching either end, and the best run inside.
#[derive(Clone, Debug, PartialEq)]
struct Runs {
    len: i64,
    first: i64,
    last: i64,
    prefix: i64,
    suffix: i64,
    best: i64,
}

#[derive(Clone, Copy, Debug, Default)]
struct LongestRun;

impl Monoid for LongestRun {
    type Agg = Option<Runs>;

    fn identity(&self) -> Option<Runs> {
        None
    }

    fn combine(&self, a: &Option<Runs>, b: &Option<Runs>) -> Option<Runs> {
        let (a, b) = match (a, b) {
            (Some(a), Some(b)) => (a, b),
            (x, None) | (None, x) => return x.clone(),
        };
        let joined = a.last == b.first;
        let middle = if joined { a.suffix + b.prefix } else { 0 };
        Some(Runs {
            len: a.len + b.len,
            first: a.first,
            last: b.last,
            prefix: if joined && a.prefix == a.len {
                a.len + b.prefix
            } else {
                a.prefix
            },
            suffix: if joined && b.suffix == b.len {
                b.len + a.suffix
            } else {
                b.suffix
            },
            best: a.best.max(b.best).max(middle),
        })
    }
}

impl Aggregate for LongestRun {
    type Output = Option<i64>;

    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Option<Runs> {
        columns.i64(0, row).map(|x| Runs {
            len: 1,
            first: x,
            last: x,
            prefix: 1,
            suffix: 1,
            best: 1,
        })
    }

    fn lower(&self, agg: &Option<Runs>) -> Result<Option<i64>, AggregateError> {
        Ok(agg.as_ref().map(|r| r.best))
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let engine = Engine::new();
    engine.register_aggregate(
        "longest_run",
        vec![ValueType::Int64],
        OutputType::Scalar(ValueType::Int64),
        LongestRun,
    )?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("machine", DataType::Utf8, false),
        Field::new("state", DataType::Int64, true),
    ]));
    let stream = engine.register_stream("states", schema.clone(), StreamOptions::default())?;
    let query = engine.query(
        "SELECT machine, state, longest_run(state) OVER (ROWS 5 PRECEDING) AS run FROM states GROUP BY machine",
    )?;
    let states = [1, 1, 2, 2, 2, 3, 2, 2, 2, 2];
    stream.push(RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec!["m1"; states.len()])),
            Arc::new(Int64Array::from(states.to_vec())),
        ],
    )?)?;
    let out = query.recv()?;
    let runs: Vec<i64> = out.column(2).as_primitive::<Int64Type>().values().to_vec();
    println!("state: {states:?}");
    println!("run:   {runs:?}");
    assert_eq!(runs, vec![1, 2, 2, 2, 3, 3, 3, 3, 3, 4]);
    Ok(())
}

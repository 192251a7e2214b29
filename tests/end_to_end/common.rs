//! Helpers for the end-to-end tests: building batches and reading results.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sliq::{Engine, Stream, StreamOptions};

/// `(ts BIGINT NOT NULL, key VARCHAR, v DOUBLE)`
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("ts", DataType::Int64, false),
        Field::new("key", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
    ]))
}

/// An engine with the stream `s` of [`schema`], event time `ts`.
pub fn engine_with_s() -> (Engine, Stream) {
    engine_with_s_and(StreamOptions::default().event_time("ts"))
}

/// An engine with the stream `s` of [`schema`] and these options.
pub fn engine_with_s_and(options: StreamOptions) -> (Engine, Stream) {
    let engine = Engine::new();
    let s = engine
        .register_stream("s", schema(), options)
        .expect("stream s");
    (engine, s)
}

/// An engine with one stream `name` of these columns (no event time), and
/// the stream's schema, for building its batches.
pub fn engine_with_stream(name: &str, fields: Vec<Field>) -> (Engine, Stream, SchemaRef) {
    let engine = Engine::new();
    let schema = Arc::new(Schema::new(fields));
    let s = engine
        .register_stream(name, schema.clone(), StreamOptions::default())
        .unwrap_or_else(|e| panic!("stream {name}: {e}"));
    (engine, s, schema)
}

/// A batch of `(ts, key, v)` rows.
pub fn batch(rows: &[(i64, Option<&str>, Option<f64>)]) -> RecordBatch {
    let ts: ArrayRef = Arc::new(Int64Array::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let key: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.1).collect::<Vec<_>>(),
    ));
    let v: ArrayRef = Arc::new(Float64Array::from(
        rows.iter().map(|r| r.2).collect::<Vec<_>>(),
    ));
    RecordBatch::try_new(schema(), vec![ts, key, v]).expect("valid batch")
}

/// Column `name` as floats (NULL → None).
pub fn floats(b: &RecordBatch, name: &str) -> Vec<Option<f64>> {
    let col = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", b.schema()));
    let col = arrow_cast::cast(col, &DataType::Float64).expect("numeric column");
    col.as_primitive::<Float64Type>().iter().collect()
}

/// Column `name` as integers (NULL → None).
pub fn ints(b: &RecordBatch, name: &str) -> Vec<Option<i64>> {
    let col = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", b.schema()));
    let col = arrow_cast::cast(col, &DataType::Int64).expect("integer column");
    col.as_primitive::<Int64Type>().iter().collect()
}

/// Column `name` as strings (NULL → None).
pub fn strings(b: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let col = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", b.schema()));
    let col = arrow_cast::cast(col, &DataType::Utf8).expect("castable to text");
    col.as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_string))
        .collect()
}

/// Column names of a batch.
pub fn names(b: &RecordBatch) -> Vec<String> {
    b.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

pub fn some(xs: &[f64]) -> Vec<Option<f64>> {
    xs.iter().map(|x| Some(*x)).collect()
}

pub fn null_count(b: &RecordBatch, name: &str) -> usize {
    b.column_by_name(name).map(|c| c.null_count()).unwrap_or(0)
}

//! sliq against DuckDB: the same window queries on the same data give the
//! same per-row results. The expected files were computed by DuckDB 2.0 with
//! `shared/peers/duckdb_window.py` (standard-SQL window queries over the
//! whole table, ordered by `seq`); see `tests/data/README.md`.

use std::fs::File;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float64Type};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sliq::{Engine, StreamOptions};

fn read_csv(path: &str, schema: SchemaRef, batch_size: usize) -> Vec<RecordBatch> {
    let file = File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    arrow_csv::ReaderBuilder::new(schema)
        .with_header(true)
        .with_batch_size(batch_size)
        .build(file)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn input_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("seq", DataType::Int64, false),
        Field::new("ts", DataType::Int64, false),
        Field::new("key", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
    ]))
}

/// `sql`'s results over the input, pushed in batches of 97 rows.
fn sliq_results(sql: &str) -> Vec<RecordBatch> {
    let engine = Engine::builder().channel_capacity(1024).build();
    let stream = engine
        .register_stream(
            "s",
            input_schema(),
            StreamOptions::default().event_time("ts"),
        )
        .unwrap();
    let query = engine.query(sql).unwrap();
    let mut results = Vec::new();
    for batch in read_csv("tests/data/duck_input.csv", input_schema(), 97) {
        stream.push(batch).unwrap();
        results.push(query.recv().unwrap());
    }
    results
}

/// Runs `sql` over the input in batches of 97 rows and compares every
/// column named in `columns` with DuckDB's `expected` file.
fn crosscheck(sql: &str, expected: &str, columns: &[&str]) {
    compare(sql, expected, columns, false);
}

/// [`crosscheck`], reading DuckDB's NaN as NULL when `nan_as_null`: DuckDB
/// gives NaN for `corr` and `regr_slope` where x does not vary (one pair),
/// PostgreSQL and sliq NULL.
fn compare(sql: &str, expected: &str, columns: &[&str], nan_as_null: bool) {
    let results = sliq_results(sql);
    let mut fields = vec![Field::new("seq", DataType::Int64, false)];
    fields.extend(
        columns
            .iter()
            .map(|c| Field::new(*c, DataType::Float64, true)),
    );
    let expected = read_csv(expected, Arc::new(Schema::new(fields)), 1 << 20);
    let column = |batches: &[RecordBatch], name: &str| -> Vec<Option<f64>> {
        batches
            .iter()
            .flat_map(|b| {
                let c =
                    arrow_cast::cast(b.column_by_name(name).unwrap(), &DataType::Float64).unwrap();
                c.as_primitive::<Float64Type>().iter().collect::<Vec<_>>()
            })
            .collect()
    };
    for name in columns {
        let got = column(&results, name);
        let want: Vec<Option<f64>> = column(&expected, name)
            .into_iter()
            .map(|w| w.filter(|w| !(nan_as_null && w.is_nan())))
            .collect();
        assert_eq!(got.len(), want.len(), "{name}");
        for (row, (g, w)) in got.iter().zip(&want).enumerate() {
            let same = match (g, w) {
                (Some(g), Some(w)) => (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                (None, None) => true,
                _ => false,
            };
            assert!(
                same,
                "{sql}\ncolumn {name}, row {row}: sliq {g:?}, duckdb {w:?}"
            );
        }
    }
}

#[test]
fn rows_frames_per_key_match_duckdb() {
    crosscheck(
        "SELECT seq, max(v) OVER w AS m, min(v) OVER w AS mn, sum(v) OVER w AS s, avg(v) OVER w AS a, \
         count(v) OVER w AS c, count(*) OVER w AS n, stddev_samp(v) OVER w AS sd \
         FROM s GROUP BY key WINDOW w AS (ROWS 49 PRECEDING)",
        "tests/data/duck_rows.csv",
        &["m", "mn", "s", "a", "c", "n", "sd"],
    );
}

#[test]
fn range_frames_per_key_match_duckdb() {
    crosscheck(
        "SELECT seq, max(v) OVER w AS m, sum(v) OVER w AS s, count(*) OVER w AS n, var_pop(v) OVER w AS vp \
         FROM s WINDOW w AS (PARTITION BY key ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW)",
        "tests/data/duck_range.csv",
        &["m", "s", "n", "vp"],
    );
}

#[test]
fn correlation_and_regression_match_duckdb() {
    compare(
        "SELECT seq, corr(v, seq) OVER w AS c, covar_pop(v, seq) OVER w AS cp, \
         covar_samp(v, seq) OVER w AS cs, regr_slope(v, seq) OVER w AS sl, \
         regr_intercept(v, seq) OVER w AS ic, regr_r2(v, seq) OVER w AS r2, \
         regr_sxy(v, seq) OVER w AS sxy \
         FROM s GROUP BY key WINDOW w AS (ROWS 49 PRECEDING)",
        "tests/data/duck_bivariate.csv",
        &["c", "cp", "cs", "sl", "ic", "r2", "sxy"],
        true,
    );
}

#[test]
fn one_global_window_matches_duckdb() {
    crosscheck(
        "SELECT seq, max(v) OVER (ROWS 99 PRECEDING) AS m, avg(v) OVER (ROWS 99 PRECEDING) AS a FROM s",
        "tests/data/duck_global.csv",
        &["m", "a"],
    );
}

#[test]
fn a_query_over_a_subquery_matches_duckdb() {
    // Per key, each value's change since the key's previous one; rows
    // without a change (the first of a key, NULLs) are dropped between the
    // stages; then windows per key by event time and by rows, and one
    // global window.
    crosscheck(
        "SELECT seq, \
         max(dv) OVER (PARTITION BY key ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) AS m, \
         avg(dv) OVER (PARTITION BY key ROWS BETWEEN 9 PRECEDING AND CURRENT ROW) AS a, \
         sum(dv) OVER (ROWS 19 PRECEDING) AS g \
         FROM (SELECT seq, ts, key, v - lag(v) OVER (ROWS 1 PRECEDING) AS dv FROM s GROUP BY key \
               QUALIFY dv IS NOT NULL) AS d",
        "tests/data/duck_chain.csv",
        &["m", "a", "g"],
    );
}

#[test]
fn decimal_sums_match_duckdb_digit_for_digit() {
    // Sums of DECIMAL(10, 3) are exact DECIMAL(38, 3) in both engines, so
    // every digit must agree; a sum kept in doubles would drift from them.
    let sql = "SELECT seq, sum(CAST(v AS DECIMAL(10, 3))) OVER w AS s, \
               avg(CAST(v AS DECIMAL(10, 3))) OVER w AS a, max(CAST(v AS DECIMAL(10, 3))) OVER w AS m \
               FROM s GROUP BY key WINDOW w AS (ROWS 49 PRECEDING)";
    let results = sliq_results(sql);
    let exact = DataType::Decimal128(38, 3);
    let expected = read_csv(
        "tests/data/duck_decimal.csv",
        Arc::new(Schema::new(vec![
            Field::new("seq", DataType::Int64, false),
            Field::new("s", exact.clone(), true),
            Field::new("a", DataType::Float64, true),
            Field::new("m", exact.clone(), true),
        ])),
        1 << 20,
    );
    let unscaled = |batches: &[RecordBatch], name: &str| -> Vec<Option<i128>> {
        batches
            .iter()
            .flat_map(|b| {
                let c = arrow_cast::cast(b.column_by_name(name).unwrap(), &exact).unwrap();
                c.as_primitive::<Decimal128Type>()
                    .iter()
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    for name in ["s", "m"] {
        let (got, want) = (unscaled(&results, name), unscaled(&expected, name));
        assert_eq!(got.len(), 3000, "{name}");
        if let Some(row) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "column {name}, row {row}: sliq {:?}, duckdb {:?}",
                got[row], want[row]
            );
        }
    }
    let means = |batches: &[RecordBatch]| -> Vec<Option<f64>> {
        batches
            .iter()
            .flat_map(|b| {
                let c = b.column_by_name("a").unwrap();
                c.as_primitive::<Float64Type>().iter().collect::<Vec<_>>()
            })
            .collect()
    };
    for (row, (g, w)) in means(&results).iter().zip(means(&expected)).enumerate() {
        let same = match (g, w) {
            (Some(g), Some(w)) => (g - w).abs() <= 1e-15 * w.abs().max(1.0),
            (None, None) => true,
            _ => false,
        };
        assert!(same, "column a, row {row}: sliq {g:?}, duckdb {w:?}");
    }
}

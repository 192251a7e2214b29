//! Every SQL form through the public `Engine` API.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{
    batch, engine_with_s, engine_with_s_and, engine_with_stream, floats, ints, names, null_count,
    schema, some, strings,
};
use arrow_array::cast::AsArray;
use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Schema};
use sliq::{Engine, EngineError, Executed, OnLate, StreamOptions, WindowAlgorithm};

const ROWS: &[(i64, Option<&str>, Option<f64>)] = &[
    (1_000, Some("a"), Some(5.0)),
    (2_000, Some("b"), Some(1.0)),
    (3_000, Some("a"), Some(3.0)),
    (4_000, Some("a"), Some(4.0)),
    (15_000, Some("a"), Some(2.0)),
    (16_000, Some("b"), Some(7.0)),
];

fn run(sql: &str) -> RecordBatch {
    let (engine, s) = engine_with_s();
    let q = engine.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    s.push(batch(ROWS)).unwrap();
    q.recv().unwrap()
}

#[test]
fn rows_shorthand_and_between_agree_and_hold_n_plus_one_rows() {
    let short = run("SELECT key, max(v) OVER (ROWS 1 PRECEDING) AS m FROM s GROUP BY key");
    let long = run(
        "SELECT key, max(v) OVER (PARTITION BY key ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS m FROM s",
    );
    // a: 5 | 5,3 | 3,4 | 4,2 ; b: 1 | 1,7
    assert_eq!(floats(&short, "m"), some(&[5.0, 1.0, 5.0, 4.0, 4.0, 7.0]));
    assert_eq!(floats(&long, "m"), floats(&short, "m"));
    assert_eq!(names(&short), vec!["key", "m"]);
}

#[test]
fn range_forms_cover_event_time_t_minus_d_to_t() {
    for sql in [
        "SELECT key, count(*) OVER (RANGE '10s') AS c, sum(v) OVER (RANGE '10s') AS total FROM s GROUP BY key",
        "SELECT key, count(*) OVER (RANGE '10s' PRECEDING) AS c, sum(v) OVER (RANGE '10s' PRECEDING) AS total FROM s GROUP BY key",
        "SELECT key, count(*) OVER w AS c, sum(v) OVER w AS total FROM s \
         WINDOW w AS (PARTITION BY key ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW)",
    ] {
        let out = run(sql);
        // a at 15 s: [5 s, 15 s] holds only itself; so does b at 16 s.
        assert_eq!(
            ints(&out, "c"),
            vec![Some(1), Some(1), Some(2), Some(3), Some(1), Some(1)],
            "{sql}"
        );
        assert_eq!(
            floats(&out, "total"),
            some(&[5.0, 1.0, 8.0, 12.0, 2.0, 7.0]),
            "{sql}"
        );
    }
}

#[test]
fn range_boundary_is_inclusive_and_durations_combine() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query("SELECT count(*) OVER (RANGE '1m30s') AS c FROM s")
        .unwrap();
    s.push(batch(&[
        (0, None, None),
        (90_000, None, None),
        (90_001, None, None),
    ]))
    .unwrap();
    assert_eq!(
        ints(&q.recv().unwrap(), "c"),
        vec![Some(1), Some(2), Some(2)]
    );
}

#[test]
fn unbounded_and_missing_over_run_over_all_rows_so_far() {
    let out = run(
        "SELECT key, count(*) OVER (ROWS UNBOUNDED PRECEDING) AS c, min(v) AS lo FROM s GROUP BY key",
    );
    assert_eq!(
        ints(&out, "c"),
        vec![Some(1), Some(1), Some(2), Some(3), Some(4), Some(2)]
    );
    assert_eq!(floats(&out, "lo"), some(&[5.0, 1.0, 3.0, 3.0, 2.0, 1.0]));
}

#[test]
fn global_window_without_keys() {
    let out = run("SELECT max(v) OVER (ROWS 2 PRECEDING) AS m FROM s");
    assert_eq!(floats(&out, "m"), some(&[5.0, 5.0, 5.0, 4.0, 4.0, 7.0]));
}

#[test]
fn where_filters_before_windows_and_rows_keep_input_order() {
    let out =
        run("SELECT ts, count(*) OVER (ROWS 10 PRECEDING) AS c FROM s WHERE v > 2 AND key = 'a'");
    assert_eq!(
        ints(&out, "ts"),
        vec![Some(1_000), Some(3_000), Some(4_000)]
    );
    assert_eq!(ints(&out, "c"), vec![Some(1), Some(2), Some(3)]);
}

#[test]
fn expressions_in_arguments_and_over_results() {
    let out = run("SELECT key, max(v * 2) OVER (ROWS 1 PRECEDING) AS m2, \
                max(v) OVER (ROWS 1 PRECEDING) - min(v) OVER (ROWS 1 PRECEDING) AS spread, \
                CASE WHEN v > 3 THEN 'hi' ELSE 'lo' END AS level, CAST(v AS BIGINT) AS iv, v + ts AS mix \
         FROM s GROUP BY key");
    assert_eq!(floats(&out, "m2"), some(&[10.0, 2.0, 10.0, 8.0, 8.0, 14.0]));
    assert_eq!(
        floats(&out, "spread"),
        some(&[0.0, 0.0, 2.0, 1.0, 2.0, 6.0])
    );
    assert_eq!(strings(&out, "level")[0].as_deref(), Some("hi"));
    assert_eq!(strings(&out, "level")[1].as_deref(), Some("lo"));
    assert_eq!(
        ints(&out, "iv"),
        vec![Some(5), Some(1), Some(3), Some(4), Some(2), Some(7)]
    );
    assert_eq!(floats(&out, "mix")[0], Some(1_005.0));
}

#[test]
fn multiple_key_columns_and_null_keys() {
    let (engine, s, schema) = engine_with_stream(
        "t",
        vec![
            Field::new("k1", DataType::Utf8, true),
            Field::new("k2", DataType::Int64, true),
            Field::new("flag", DataType::Boolean, true),
            Field::new("v", DataType::Float64, true),
        ],
    );
    let q = engine
        .query("SELECT count(*) OVER (ROWS 100 PRECEDING) AS c, sum(v) OVER (ROWS 100 PRECEDING) AS total FROM t GROUP BY k1, k2, flag")
        .unwrap();
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec![
                Some("x"),
                Some("x"),
                None,
                None,
                Some("x"),
            ])),
            Arc::new(Int64Array::from(vec![
                Some(1),
                Some(2),
                None,
                None,
                Some(1),
            ])),
            Arc::new(arrow_array::BooleanArray::from(vec![
                Some(true),
                Some(true),
                None,
                None,
                Some(true),
            ])),
            Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0, 4.0, 5.0])),
        ],
    )
    .unwrap();
    s.push(b).unwrap();
    let out = q.recv().unwrap();
    assert_eq!(
        ints(&out, "c"),
        vec![Some(1), Some(1), Some(1), Some(2), Some(2)]
    );
    assert_eq!(floats(&out, "total"), some(&[1.0, 2.0, 3.0, 7.0, 6.0]));
}

#[test]
fn float_keys_group_as_sql_compares_them() {
    // -0.0 = 0.0 and every NaN is one key, alone and beside another column,
    // and the partitioner that splits rows between workers agrees.
    let (engine, s, schema) = engine_with_stream(
        "t",
        vec![
            Field::new("f", DataType::Float64, true),
            Field::new("g", DataType::Float32, true),
        ],
    );
    let by_f = engine
        .query("SELECT count(*) OVER (ROWS 9 PRECEDING) AS c FROM t GROUP BY f")
        .unwrap();
    let by_both = engine
        .query("SELECT count(*) OVER (ROWS 9 PRECEDING) AS c FROM t GROUP BY f, g")
        .unwrap();
    let other_nan = f64::from_bits(f64::NAN.to_bits() ^ 1);
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Float64Array::from(vec![
                0.0,
                -0.0,
                f64::NAN,
                other_nan,
                1.0,
            ])),
            Arc::new(arrow_array::Float32Array::from(vec![
                -0.0,
                0.0,
                f32::NAN,
                -f32::NAN,
                1.0,
            ])),
        ],
    )
    .unwrap();
    let mut partitioner = engine
        .partitioner("SELECT count(*) OVER (ROWS 9 PRECEDING) FROM t GROUP BY f, g")
        .unwrap();
    let parts = partitioner.split(&b, 64).unwrap();
    for (_, part) in &parts {
        let f = part
            .column(0)
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap();
        let zeros = f.values().iter().filter(|v| **v == 0.0).count();
        let nans = f.values().iter().filter(|v| v.is_nan()).count();
        assert!(zeros == 0 || zeros == 2, "zeros split between workers");
        assert!(nans == 0 || nans == 2, "NaNs split between workers");
    }
    s.push(b).unwrap();
    let expected = vec![Some(1), Some(2), Some(1), Some(2), Some(1)];
    assert_eq!(ints(&by_f.recv().unwrap(), "c"), expected);
    assert_eq!(ints(&by_both.recv().unwrap(), "c"), expected);
}

#[test]
fn a_negative_zero_equals_zero_in_in_lists_case_and_nullif() {
    // As `=` has it, and as PostgreSQL and DuckDB give them; DataFusion
    // alone compares these three by bits.
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM z (a DOUBLE, b DOUBLE, r REAL)")
        .unwrap();
    let q = engine
        .query(
            "SELECT CAST(a IN (b, 5) AS INT) AS in_column, CAST(a IN (0.0, 5) AS INT) AS in_constant, \
                    CAST(r NOT IN (0) AS INT) AS not_in, CAST(round(a - 0.2) IN (0) AS INT) AS rounded, \
                    CASE a WHEN b THEN 1 ELSE 0 END AS simple_case, \
                    nullif(a, b) AS nullif_column, nullif(r, 0) AS nullif_real, nullif(a, 7) AS kept \
             FROM z",
        )
        .unwrap();
    engine
        .execute("INSERT INTO z VALUES (-0e0, 0e0, -0e0), (1, 2, 1), (NULL, 0, NULL)")
        .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(ints(&out, "in_column"), vec![Some(1), Some(0), None]);
    assert_eq!(ints(&out, "in_constant"), vec![Some(1), Some(0), None]);
    assert_eq!(ints(&out, "not_in"), vec![Some(0), Some(1), None]);
    assert_eq!(ints(&out, "rounded"), vec![Some(1), Some(0), None]);
    assert_eq!(ints(&out, "simple_case"), vec![Some(1), Some(0), Some(0)]);
    assert_eq!(floats(&out, "nullif_column"), vec![None, Some(1.0), None]);
    assert_eq!(floats(&out, "nullif_real"), vec![None, Some(1.0), None]);
    // nullif keeps its first argument as it was, sign of zero included.
    let kept = floats(&out, "kept");
    assert!(kept[0].is_some_and(|x| x == 0.0 && x.is_sign_negative()));
    assert_eq!(kept[1..], [Some(1.0), None]);
}

#[test]
fn every_nan_is_one_value_above_every_number_as_in_postgresql() {
    // power(-1, 0.5) gives a NaN with its sign bit set on x86-64, which
    // IEEE's total order (arrow's) puts below -inf; CAST('NaN' AS DOUBLE)
    // gives a positive one.
    let engine = Engine::new();
    engine.execute("CREATE STREAM n (v DOUBLE)").unwrap();
    let q = engine
        .query(
            "SELECT CAST(x > 0 AS INT) AS above, CAST(x = CAST('NaN' AS DOUBLE) AS INT) AS equal, \
                    CAST(x IN (CAST('NaN' AS DOUBLE)) AS INT) AS listed, \
                    CAST(x BETWEEN 0 AND CAST('NaN' AS DOUBLE) AS INT) AS between, \
                    CASE x WHEN CAST('NaN' AS DOUBLE) THEN 1 ELSE 0 END AS simple_case, \
                    CAST(x IS DISTINCT FROM CAST('NaN' AS DOUBLE) AS INT) AS distinct, \
                    greatest(x, 1e308) AS greatest, least(x, 1) AS least, \
                    nullif(x, CAST('NaN' AS DOUBLE)) AS nullif \
             FROM (SELECT power(v, 0.5) AS x FROM n)",
        )
        .unwrap();
    engine.execute("INSERT INTO n VALUES (-1), (4)").unwrap();
    let out = q.recv().unwrap();
    for (column, expected) in [
        ("above", [1, 1]),
        ("equal", [1, 0]),
        ("listed", [1, 0]),
        ("between", [1, 1]),
        ("simple_case", [1, 0]),
        ("distinct", [0, 1]),
    ] {
        assert_eq!(ints(&out, column), expected.map(Some).to_vec(), "{column}");
    }
    assert!(floats(&out, "greatest")[0].is_some_and(f64::is_nan));
    assert_eq!(floats(&out, "greatest")[1], Some(1e308));
    assert_eq!(floats(&out, "least"), vec![Some(1.0), Some(1.0)]);
    assert_eq!(floats(&out, "nullif"), vec![None, Some(2.0)]);
}

#[test]
fn functions_take_the_names_postgresql_and_duckdb_give_them() {
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM p (v DOUBLE, i BIGINT, t TIMESTAMP)")
        .unwrap();
    let q = engine
        .query(
            "SELECT mod(i, 3) AS m, mod(v, 2) AS fm, sign(v) AS s, ceiling(v) AS c, \
                    strftime(t, '%Y/%m/%d') AS st FROM p",
        )
        .unwrap();
    engine
        .execute(
            "INSERT INTO p VALUES (-2.5, -7, TIMESTAMP '2024-02-29 12:00:00'), (0, 8, NULL), \
             (1.25, NULL, NULL)",
        )
        .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(ints(&out, "m"), vec![Some(-1), Some(2), None]);
    assert_eq!(floats(&out, "fm"), vec![Some(-0.5), Some(0.0), Some(1.25)]);
    assert_eq!(floats(&out, "s"), vec![Some(-1.0), Some(0.0), Some(1.0)]);
    assert_eq!(floats(&out, "c"), vec![Some(-2.0), Some(0.0), Some(2.0)]);
    assert_eq!(
        strings(&out, "st"),
        vec![Some("2024/02/29".to_string()), None, None]
    );
    // mod is the operator: its errors are the operator's, at the call.
    for (sql, message) in [
        (
            "SELECT mod(7, 0) AS z FROM p",
            "7 % 0 cannot be computed: division by zero at line 1, column 8",
        ),
        (
            "SELECT mod(i) FROM p",
            "mod takes two arguments at line 1, column 8",
        ),
        (
            "SELECT mod(i, 2) OVER (ROWS 2 PRECEDING) FROM p",
            "mod is a scalar function, not an aggregate",
        ),
        // A signature is shown under the name the query used.
        (
            "SELECT sign(t) FROM p",
            "sign(TIMESTAMP) does not match any signature of sign: expected sign(numeric_expression)",
        ),
    ] {
        let err = engine.query(sql).unwrap_err().to_string();
        assert!(err.contains(message), "{sql}: {err}");
    }
}

#[test]
fn ignore_nulls_stands_after_the_call_or_inside_it() {
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM n (s VARCHAR, v DOUBLE)")
        .unwrap();
    let q = engine
        .query(
            "SELECT first_value(v) IGNORE NULLS OVER w AS after, first_value(v IGNORE NULLS) OVER w AS inside, \
                    last_value(upper(s) IGNORE NULLS) OVER w AS around_a_function, \
                    last_value(upper(s)) OVER w AS respected, first_value(v RESPECT NULLS) OVER w AS first \
             FROM n WINDOW w AS (ROWS 2 PRECEDING)",
        )
        .unwrap();
    engine
        .execute("INSERT INTO n VALUES (NULL, NULL), ('x', 1), (NULL, 2), (NULL, NULL)")
        .unwrap();
    let out = q.recv().unwrap();
    for column in ["after", "inside"] {
        assert_eq!(
            floats(&out, column),
            vec![None, Some(1.0), Some(1.0), Some(1.0)],
            "{column}"
        );
    }
    let x = Some("X".to_string());
    assert_eq!(
        strings(&out, "around_a_function"),
        vec![None, x.clone(), x.clone(), x.clone()]
    );
    assert_eq!(strings(&out, "respected"), vec![None, x, None, None]);
    assert_eq!(floats(&out, "first"), vec![None, None, None, Some(1.0)]);
    let err = engine
        .query("SELECT max(v IGNORE NULLS) OVER (ROWS 2 PRECEDING) FROM n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("max: IGNORE NULLS applies only to first_value and last_value"),
        "{err}"
    );
}

#[test]
fn unsigned_and_dictionary_arguments_aggregate_without_failing() {
    // UInt64 values beyond i64 are aggregated as floats (like decimals), and
    // dictionary-encoded strings as their values.
    let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
    let (engine, s, schema) = engine_with_stream(
        "t",
        vec![
            Field::new("u", DataType::UInt64, true),
            Field::new("d", dict, true),
        ],
    );
    let q = engine
        .query(
            "SELECT max(u) OVER (ROWS 1 PRECEDING) AS mu, max(d) OVER (ROWS 1 PRECEDING) AS md, \
             count(*) OVER (ROWS 9 PRECEDING) AS c FROM t GROUP BY d",
        )
        .unwrap();
    let d: arrow_array::DictionaryArray<arrow_array::types::Int32Type> =
        vec!["b", "a", "b"].into_iter().collect();
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(arrow_array::UInt64Array::from(vec![u64::MAX, 1, 2])),
            Arc::new(d),
        ],
    )
    .unwrap();
    s.push(b).unwrap();
    let out = q.recv().unwrap();
    assert_eq!(
        floats(&out, "mu"),
        some(&[u64::MAX as f64, 1.0, u64::MAX as f64])
    );
    assert_eq!(
        strings(&out, "md"),
        vec![Some("b".into()), Some("a".into()), Some("b".into())]
    );
    assert_eq!(ints(&out, "c"), vec![Some(1), Some(1), Some(2)]);
}

#[test]
fn several_frames_share_or_split_windows() {
    let (engine, _s) = engine_with_s();
    let plan = engine
        .explain(
            "SELECT key, max(v) OVER (ROWS 999 PRECEDING) AS m, avg(v) OVER (ROWS 999 PRECEDING) AS a, \
             count(*) OVER (RANGE '10s') AS c FROM s GROUP BY key",
        )
        .unwrap();
    assert!(
        plan.contains("Window 0: keys key, ROWS 999 PRECEDING"),
        "{plan}"
    );
    assert!(
        plan.contains("Window 1: keys key, RANGE '10s' PRECEDING, event time ts"),
        "{plan}"
    );
    assert!(
        plan.contains("__agg0 = max(v): monoid max(DOUBLE) -> DOUBLE, algorithm daba_lite"),
        "{plan}"
    );
    assert!(
        plan.contains("__agg1 = avg(v): monoid avg(DOUBLE) -> DOUBLE"),
        "{plan}"
    );
    assert!(
        plan.contains("Output: key VARCHAR, m DOUBLE, a DOUBLE, c BIGINT"),
        "{plan}"
    );
    assert_eq!(plan.matches("Window ").count(), 2, "{plan}");
    // max and avg over the same frame keep one DABA Lite per key.
    assert!(
        plan.contains("Shared: window 0's __agg0, __agg1 keep one DABA Lite per key ("),
        "{plan}"
    );
    assert_eq!(plan.matches("Shared:").count(), 1, "{plan}");
    // The cross-check algorithms keep a window per aggregate.
    engine
        .execute("SET window_algorithm = 'two_stacks'")
        .unwrap();
    let plan = engine
        .explain("SELECT max(v) OVER w, avg(v) OVER w FROM s WINDOW w AS (ROWS 9 PRECEDING)")
        .unwrap();
    assert!(!plan.contains("Shared:"), "{plan}");
}

#[test]
fn filter_leaves_rows_out_of_an_aggregate_but_not_out_of_the_frame() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT count(*) FILTER (WHERE v > 1) OVER w AS big, \
             sum(v) FILTER (WHERE v > 1) OVER w AS total, \
             first_value(v) FILTER (WHERE v IS NULL OR v > 4) OVER w AS first, \
             max(v) FILTER (WHERE key = 'b') OVER (ROWS 2 PRECEDING) AS alone \
             FROM s WINDOW w AS (ROWS 2 PRECEDING)",
        )
        .unwrap();
    s.push(batch(&[
        (1_000, Some("a"), Some(1.0)),
        (2_000, Some("a"), Some(5.0)),
        (3_000, Some("b"), None),
        (4_000, Some("a"), Some(7.0)),
        (5_000, Some("b"), Some(0.0)),
    ]))
    .unwrap();
    let out = q.recv().unwrap();
    // Frames of three rows: [1], [1,5], [1,5,∅], [5,∅,7], [∅,7,0].
    assert_eq!(
        ints(&out, "big"),
        vec![Some(0), Some(1), Some(1), Some(2), Some(1)]
    );
    assert_eq!(
        floats(&out, "total"),
        vec![None, Some(5.0), Some(5.0), Some(12.0), Some(7.0)]
    );
    // RESPECT NULLS: the NULL row passes the filter, and comes first in
    // the last frame.
    assert_eq!(
        floats(&out, "first"),
        vec![None, Some(5.0), Some(5.0), Some(5.0), None]
    );
    assert_eq!(
        floats(&out, "alone"),
        vec![None, None, None, None, Some(0.0)]
    );
    assert!(
        engine
            .explain("SELECT count(*) FILTER (WHERE v > 1) OVER (ROWS 2 PRECEDING) FROM s")
            .unwrap()
            .contains("count(*) FILTER (WHERE v > 1): monoid count()")
    );
    let err = engine
        .query("SELECT count(*) FILTER (WHERE vv > 1) OVER (ROWS 2 PRECEDING) FROM s")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("unknown column 'vv'"), "{err}");
}

#[test]
fn lag_and_row_number_ignore_the_frame_as_in_sql() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT v - lag(v) OVER (PARTITION BY key ORDER BY ts) AS delta, \
             lag(v, 2, -1) OVER (PARTITION BY key RANGE '1h') AS two_back, \
             lag(key, 0) OVER () AS same, \
             sum(v) OVER (PARTITION BY key ROWS 1 PRECEDING) AS pair, \
             row_number() OVER (PARTITION BY key ORDER BY ts ROWS 1 PRECEDING) AS n \
             FROM s",
        )
        .unwrap();
    s.push(batch(&[
        (1_000, Some("a"), Some(1.0)),
        (2_000, Some("a"), Some(5.0)),
        (3_000, Some("b"), Some(2.0)),
        (4_000, Some("a"), None),
        (5_000, Some("a"), Some(7.0)),
    ]))
    .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(
        floats(&out, "delta"),
        vec![None, Some(4.0), None, None, None]
    );
    assert_eq!(
        floats(&out, "two_back"),
        vec![Some(-1.0), Some(-1.0), Some(-1.0), Some(1.0), Some(5.0)]
    );
    assert_eq!(
        strings(&out, "same"),
        ["a", "a", "b", "a", "a"].map(|k| Some(k.to_string()))
    );
    // row_number counts every row of its key so far, whatever the frame.
    assert_eq!(
        ints(&out, "n"),
        vec![Some(1), Some(2), Some(1), Some(3), Some(4)]
    );
    // lag(v) needs ROWS 1 PRECEDING per key, as `pair` does: they share it.
    let plan = engine
        .explain(
            "SELECT lag(v) OVER (PARTITION BY key) AS l, \
             sum(v) OVER (PARTITION BY key ROWS 1 PRECEDING) AS p FROM s",
        )
        .unwrap();
    assert!(
        plan.contains("Window 0: keys key, ROWS 1 PRECEDING"),
        "{plan}"
    );
    assert!(!plan.contains("Window 1"), "{plan}");
    // Row counts come from the frame, without a window of their own.
    let plan = engine
        .explain(
            "SELECT row_number() OVER (PARTITION BY key) AS n, \
             count(*) OVER (PARTITION BY key RANGE '1s') AS c, \
             count(*) FILTER (WHERE v > 0) OVER (PARTITION BY key RANGE '1s') AS p FROM s",
        )
        .unwrap();
    assert!(
        plan.contains("Counted: __agg0 = row_number() is window 0's row count")
            && plan.contains("Counted: __agg1 = count(*) is window 1's row count")
            && !plan.contains("__agg2 = count(*) FILTER (WHERE v > 0) is"),
        "{plan}"
    );
    let err = engine
        .query("SELECT lag(v, -1) OVER () FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("lag: offset must be an integer of at least 0, got -1"),
        "{err}"
    );
    let err = engine
        .query("SELECT lag(v) FILTER (WHERE v > 0) OVER () FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("not supported in continuous queries: FILTER on the window function lag"),
        "{err}"
    );
    let err = engine
        .query("SELECT lead(v) OVER () FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("not supported in continuous queries: lead (a stream cannot wait"),
        "{err}"
    );
}

#[test]
fn approximate_percentiles_take_the_names_and_forms_of_other_engines() {
    let out = run("SELECT key, \
            approx_percentile(v, 0.9) OVER w AS p, approx_quantile(v, 0.9) OVER w AS duckdb, \
            approx_percentile_cont(v, 0.9) OVER w AS datafusion, \
            approx_percentile_cont(0.9) WITHIN GROUP (ORDER BY v) OVER w AS ordered_set, \
            approx_percentile(0.9, 0.05) WITHIN GROUP (ORDER BY v ASC) OVER w AS accuracy, \
            percentile_approx(v, 0.9) OVER w AS spark \
         FROM s GROUP BY key WINDOW w AS (ROWS 2 PRECEDING)");
    let p = floats(&out, "p");
    // Key a's third row (4 s) sees 5, 3, 4; DDSketch answers the value of
    // rank q·(n − 1) = 1.8 rounded down, the middle one, 4, within 1 %.
    assert!((p[3].unwrap() - 4.0).abs() <= 0.04, "{p:?}");
    for name in ["duckdb", "datafusion", "ordered_set", "spark"] {
        assert_eq!(floats(&out, name), p, "{name}");
    }
    assert!((floats(&out, "accuracy")[3].unwrap() - 4.0).abs() <= 0.2);
    // The aliases keep approx_percentile's checks, and take no third
    // argument (DataFusion's is a number of centroids, Spark's a rank
    // accuracy: neither is DDSketch's relative accuracy).
    let (engine, _s) = engine_with_s();
    let err = |sql: &str| engine.query(sql).err().map(|e| e.to_string());
    let message = err("SELECT approx_quantile(v, 1.5) OVER (ROWS 3 PRECEDING) FROM s");
    assert!(
        message.as_deref().is_some_and(|m| m.contains("q must be")),
        "{message:?}"
    );
    let message = err("SELECT approx_percentile_cont(v, 0.9, 100) OVER (ROWS 3 PRECEDING) FROM s");
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("approx_percentile_cont(x numeric, q in [0, 1])")),
        "{message:?}"
    );
}

#[test]
fn distinct_is_taken_where_duplicates_change_nothing() {
    let out = run("SELECT key, \
            max(DISTINCT v) OVER w AS max_distinct, max(v) OVER w AS max, \
            min(DISTINCT v) OVER w AS min_distinct, min(v) OVER w AS min, \
            bool_or(DISTINCT v > 3) OVER w AS above_distinct, bool_or(v > 3) OVER w AS above, \
            approx_count_distinct(DISTINCT key) OVER w AS keys_distinct, \
            approx_count_distinct(key) OVER w AS keys \
         FROM s WINDOW w AS (ROWS 2 PRECEDING)");
    for (distinct, plain) in [
        ("max_distinct", "max"),
        ("min_distinct", "min"),
        ("above_distinct", "above"),
        ("keys_distinct", "keys"),
    ] {
        let (distinct, plain) = (out.column_by_name(distinct), out.column_by_name(plain));
        assert!(distinct.is_some() && distinct == plain);
    }
    assert_eq!(floats(&out, "max"), some(&[5.0, 5.0, 5.0, 4.0, 4.0, 7.0]));
}

#[test]
fn every_kind_of_aggregate_runs_in_sql() {
    let out = run("SELECT key, \
            count(v) OVER w AS n, sum(v) OVER w AS total, mean(v) OVER w AS mean, geomean(v) OVER w AS g, \
            stddev(v) OVER w AS sd, var_pop(v) OVER w AS vp, argmax(v, ts) OVER w AS at_max, \
            maxcount(v) OVER w AS mc, first_value(v) OVER w AS f, last_value(v) OVER w AS l, \
            m4(v) OVER w AS m4, relvar(v) OVER w AS rv, approx_count_distinct(v) OVER w AS d, \
            bloom_contains(v, 3.0) OVER w AS has3, countmin(v, 3.0) OVER w AS n3, \
            approx_median(v) OVER w AS med, approx_percentile(v, 0.9) OVER w AS p90 \
         FROM s GROUP BY key WINDOW w AS (ROWS 2 PRECEDING)");
    // Key a's fourth row (15 s) sees 3, 4, 2.
    let row = 4;
    assert_eq!(ints(&out, "n")[row], Some(3));
    assert_eq!(floats(&out, "total")[row], Some(9.0));
    assert_eq!(floats(&out, "mean")[row], Some(3.0));
    assert!((floats(&out, "g")[row].unwrap() - 24f64.powf(1.0 / 3.0)).abs() < 1e-12);
    assert_eq!(floats(&out, "sd")[row], Some(1.0));
    assert!((floats(&out, "vp")[row].unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(ints(&out, "at_max")[row], Some(4_000));
    assert_eq!(ints(&out, "mc")[row], Some(1));
    assert_eq!(floats(&out, "f")[row], Some(3.0));
    assert_eq!(floats(&out, "l")[row], Some(2.0));
    assert_eq!(floats(&out, "rv")[row], Some(0.5));
    assert_eq!(ints(&out, "d")[row], Some(3));
    assert_eq!(strings(&out, "has3")[row].as_deref(), Some("true"));
    assert_eq!(ints(&out, "n3")[row], Some(1));
    assert!((floats(&out, "med")[row].unwrap() - 3.0).abs() <= 0.03);
    assert!((floats(&out, "p90")[row].unwrap() - 3.0).abs() <= 0.03);
    let m4 = out
        .column_by_name("m4")
        .unwrap()
        .as_any()
        .downcast_ref::<StructArray>()
        .unwrap();
    let min = m4
        .column_by_name("min")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    let last = m4
        .column_by_name("last")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert_eq!((min.value(row), last.value(row)), (2.0, 2.0));
}

#[test]
fn column_types_take_the_names_other_engines_give_them() {
    let engine = Engine::new();
    let created = engine
        .execute(
            "CREATE STREAM aliases (a INT2, b INT4, c INT8, d FLOAT4, e FLOAT8, f DEC(6, 2), \
             g CHARACTER VARYING(10), h UTINYINT, i USMALLINT, j UINTEGER, k INT UNSIGNED, \
             l DATETIME, m TEXT, n DOUBLE PRECISION)",
        )
        .unwrap();
    assert!(matches!(&created[0], Executed::StreamCreated(_, true)));
    let info = engine.stream("aliases").unwrap().info();
    let types: Vec<&DataType> = info.schema.fields().iter().map(|f| f.data_type()).collect();
    use DataType::*;
    assert_eq!(
        types,
        [
            &Int16,
            &Int32,
            &Int64,
            &Float32,
            &Float64,
            &Decimal128(6, 2),
            &Utf8,
            &UInt8,
            &UInt16,
            &UInt32,
            &UInt32,
            &Timestamp(arrow_schema::TimeUnit::Millisecond, None),
            &Utf8,
            &Float64,
        ]
    );
    // Unsigned 64-bit integers would not all be BIGINTs to the aggregates.
    let err = engine
        .execute("CREATE STREAM u (x UBIGINT)")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("column type UBIGINT (use BOOLEAN, INT, BIGINT, REAL, DOUBLE, DECIMAL(p, s)"),
        "{err}"
    );
    // An event-time column that is missing or of the wrong type is pointed
    // at, with its type as SQL names it.
    for (sql, message) in [
        (
            "CREATE STREAM e (ts BIGINT) WITH (event_time = 'tz')",
            "event_time names 'tz', which is not a column of the stream; did you mean 'ts'? \
             at line 1, column 48",
        ),
        (
            "CREATE STREAM e (ts VARCHAR) WITH (event_time = 'ts')",
            "event_time column 'ts' is VARCHAR; it must be TIMESTAMP or BIGINT (epoch \
             milliseconds) at line 1, column 49",
        ),
    ] {
        let err = engine.execute(sql).unwrap_err().to_string();
        assert!(err.starts_with(message), "{sql}: {err}");
    }
}

#[test]
fn create_stream_if_not_exists_keeps_the_stream_that_exists() {
    let engine = Engine::new();
    let results = engine
        .execute(
            "CREATE STREAM IF NOT EXISTS t (ts BIGINT, x DOUBLE) WITH (event_time = 'ts'); \
             CREATE STREAM IF NOT EXISTS t (y VARCHAR)",
        )
        .unwrap();
    assert!(matches!(&results[0], Executed::StreamCreated(s, true) if s.name() == "t"));
    let Executed::StreamCreated(kept, false) = &results[1] else {
        panic!("{:?}", results[1]);
    };
    let info = kept.info();
    assert_eq!(info.schema.fields().len(), 2);
    assert_eq!(info.options.event_time_column(), Some("ts"));
    // Without IF NOT EXISTS, the name in use is an error.
    let err = engine.execute("CREATE STREAM t (y VARCHAR)").unwrap_err();
    assert_eq!(err.to_string(), "stream 't' already exists");
}

#[test]
fn clauses_a_stream_cannot_honour_are_refused_not_dropped() {
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM s (ts BIGINT, v DOUBLE)")
        .unwrap();
    for (sql, what, column) in [
        (
            "CREATE STREAM t (ts BIGINT DEFAULT 5)",
            "the column option DEFAULT 5 (a stream checks its columns' types and NOT NULL only)",
            18,
        ),
        (
            "CREATE STREAM t (v DOUBLE CHECK (v > 0))",
            "the column option CHECK (v > 0)",
            18,
        ),
        (
            "CREATE STREAM t (ts BIGINT PRIMARY KEY)",
            "the column option PRIMARY KEY",
            18,
        ),
        (
            "CREATE STREAM t (ts BIGINT, UNIQUE (ts))",
            "constraints",
            37,
        ),
        (
            "CREATE STREAM t AS SELECT ts FROM s",
            "CREATE STREAM … AS SELECT",
            15,
        ),
        (
            "CREATE STREAM t LIKE s",
            "CREATE STREAM … LIKE and CLONE",
            15,
        ),
        (
            "CREATE OR REPLACE TABLE s (ts BIGINT)",
            "CREATE OR REPLACE",
            25,
        ),
        (
            "INSERT INTO s VALUES (1, 2.0) ON CONFLICT DO NOTHING",
            "ON CONFLICT and ON DUPLICATE KEY UPDATE",
            1,
        ),
        (
            "INSERT INTO s VALUES (1, 2.0) RETURNING ts",
            "RETURNING and OUTPUT",
            1,
        ),
        (
            "INSERT OR REPLACE INTO s VALUES (1, 2.0)",
            "INSERT OR REPLACE",
            1,
        ),
    ] {
        let message = engine.execute(sql).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("not supported in continuous queries: {what}")),
            "{sql}: {message}"
        );
        assert!(
            message.contains(&format!("at line 1, column {column}\n")),
            "{sql}: {message}"
        );
    }
    // Nothing was created, and nothing inserted.
    assert_eq!(engine.streams().len(), 1);
    // NULL, NOT NULL and a comment are what a stream's columns take.
    engine
        .execute("CREATE STREAM u (ts BIGINT NOT NULL, v DOUBLE NULL COMMENT 'volts')")
        .unwrap();
    let info = engine.stream("u").unwrap().info();
    assert!(!info.schema.field(0).is_nullable() && info.schema.field(1).is_nullable());
}

#[test]
fn explain_and_show_take_the_forms_that_mean_what_they_show() {
    let (engine, _s) = engine_with_s();
    for sql in [
        "EXPLAIN VERBOSE SELECT v FROM s",
        "EXPLAIN QUERY PLAN SELECT v FROM s",
    ] {
        let executed = engine.execute(sql).unwrap().pop();
        assert!(
            matches!(&executed, Some(Executed::Explained(plan)) if plan.starts_with("ContinuousQuery: SELECT v FROM s")),
            "{sql}: {executed:?}"
        );
    }
    let executed = engine.execute("SHOW COLUMNS FROM s").unwrap().pop();
    assert!(
        matches!(&executed, Some(Executed::Described(info)) if info.schema.fields().len() == 3),
        "{executed:?}"
    );
    for (sql, what) in [
        ("EXPLAIN ANALYZE SELECT v FROM s", "EXPLAIN ANALYZE"),
        (
            "EXPLAIN FORMAT JSON SELECT v FROM s",
            "EXPLAIN ESTIMATE and EXPLAIN FORMAT",
        ),
        (
            "SHOW TABLES LIKE 'x%'",
            "SHOW TABLES LIKE 'x%' (SHOW STREAMS lists every stream)",
        ),
        (
            "SHOW COLUMNS FROM s LIKE 'k%'",
            "SHOW COLUMNS FROM s LIKE 'k%'",
        ),
    ] {
        let message = engine.execute(sql).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("not supported in continuous queries: {what}")),
            "{sql}: {message}"
        );
    }
}

#[test]
fn drop_stream_restrict_leaves_a_stream_that_queries_read() {
    let (engine, s) = engine_with_s();
    let q = engine.query("SELECT v FROM s").unwrap();
    let err = engine.execute("DROP STREAM s RESTRICT").unwrap_err();
    assert_eq!(
        err.to_string(),
        "stream 's' has 1 running query: DROP STREAM … RESTRICT leaves it (without RESTRICT, \
         the drop ends them)"
    );
    s.push(batch(&[(1, Some("a"), Some(2.0))])).unwrap();
    assert_eq!(floats(&q.recv().unwrap(), "v"), some(&[2.0]));
    // Once the query is gone, RESTRICT drops it; CASCADE ends the queries.
    drop(q);
    engine.execute("DROP STREAM s RESTRICT").unwrap();
    let (engine, _s) = engine_with_s();
    let q = engine.query("SELECT v FROM s").unwrap();
    engine.execute("DROP STREAM s CASCADE").unwrap();
    assert!(matches!(q.recv(), Err(EngineError::Closed)));
}

#[test]
fn statements_create_describe_show_insert_set_drop() {
    let engine = Engine::new();
    let results = engine
        .execute(
            "CREATE STREAM t (ts TIMESTAMP, k VARCHAR, x DOUBLE) WITH (event_time = 'ts'); \
             SHOW STREAMS; DESCRIBE t; SET window_algorithm = 'recalc'",
        )
        .unwrap();
    assert!(matches!(&results[0], Executed::StreamCreated(s, true) if s.name() == "t"));
    assert!(matches!(&results[1], Executed::Streams(v) if v.len() == 1 && v[0].name == "t"));
    match &results[2] {
        Executed::Described(info) => {
            assert_eq!(
                info.schema.field(0).data_type(),
                &DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None)
            );
            assert_eq!(info.options.event_time_column(), Some("ts"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(engine.window_algorithm(), WindowAlgorithm::Recalc);
    let q = match engine
        .execute("SELECT k, sum(x) OVER (RANGE '1s') AS s FROM t GROUP BY k")
        .unwrap()
        .pop()
    {
        Some(Executed::Query(q)) => q,
        other => panic!("{other:?}"),
    };
    assert!(
        matches!(engine.execute("SHOW QUERIES").unwrap().pop(), Some(Executed::Queries(v)) if v.len() == 1)
    );
    let inserted = engine
        .execute("INSERT INTO t VALUES (0, 'a', 1.5), (500, 'a', 2.0); INSERT INTO t (ts, x) VALUES (2000, 4)")
        .unwrap();
    assert!(matches!(&inserted[0], Executed::Inserted(_, 2)));
    assert_eq!(floats(&q.recv().unwrap(), "s"), some(&[1.5, 3.5]));
    let third = q.recv().unwrap();
    assert_eq!(strings(&third, "k"), vec![None]);
    assert_eq!(floats(&third, "s"), some(&[4.0]));
    // Columns are named as in a SELECT: quoted or not, in any case; each once.
    engine
        .execute("INSERT INTO t (X, \"ts\") VALUES (1, 3000)")
        .unwrap();
    assert_eq!(floats(&q.recv().unwrap(), "s"), some(&[5.0]));
    let err = engine
        .execute("INSERT INTO t (x, ts, X) VALUES (1, 2, 3)")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err.lines().next(),
        Some("column 'x' is given twice in the INSERT at line 1, column 23")
    );
    engine
        .execute("DROP STREAM t; DROP STREAM IF EXISTS t")
        .unwrap();
    assert!(matches!(q.recv(), Err(EngineError::Closed)));
    assert!(engine.streams().is_empty());
}

#[test]
fn show_queries_and_explain_give_the_query_as_written() {
    let (engine, _s) = engine_with_s();
    let written = "select key,  MAX(v) over (range '10s') AS m\n  FROM s GROUP BY key";
    let executed = engine
        .execute(&format!("SHOW STREAMS;\n{written} ;"))
        .expect("query");
    let Some(Executed::Query(_q)) = executed.last() else {
        panic!("{executed:?}");
    };
    let queries = engine.queries();
    assert_eq!(queries.len(), 1);
    assert_eq!(queries[0].sql, written);

    // EXPLAIN's header puts it on one line (one space between tokens); a
    // subquery keeps its own text.
    let plan = engine
        .explain(&format!(
            "SELECT key, count(*) OVER (ROWS 2 PRECEDING) FROM ({written}) GROUP BY key"
        ))
        .expect("explain");
    assert!(
        plan.starts_with(
            "ContinuousQuery: SELECT key, count(*) OVER (ROWS 2 PRECEDING) FROM (select key, \
             MAX(v) over (range '10s') AS m FROM s GROUP BY key) GROUP BY key\n"
        ),
        "{plan}"
    );
    assert!(
        plan.contains(
            "\n    ContinuousQuery: select key, MAX(v) over (range '10s') AS m FROM s GROUP BY key\n"
        ),
        "{plan}"
    );
}

#[test]
fn execute_each_hands_over_each_result_before_the_next_statement_runs() {
    let engine = Engine::new();
    let mut seen = Vec::new();
    let result = engine.execute_each(
        "CREATE STREAM t (ts BIGINT, x DOUBLE); SELECT sum(x) OVER (ROWS 1 PRECEDING) AS s FROM t; \
         SHOW QUERIES; SELECT nope FROM t; SHOW STREAMS",
        |executed| {
            // Each statement's effect is visible when its result arrives.
            let queries = engine.queries().len();
            let label = match executed {
                Executed::StreamCreated(s, _) => {
                    format!("created {} ({queries} queries)", s.name())
                }
                Executed::Query(q) => {
                    drop(q); // dropping the handle unregisters it at once
                    format!("query ({queries} queries)")
                }
                Executed::Queries(v) => format!("{} queries listed", v.len()),
                other => format!("{other:?}"),
            };
            seen.push(label);
            Ok::<_, EngineError>(())
        },
    );
    assert!(
        matches!(&result, Err(EngineError::Sql(e)) if e.to_string().contains("unknown column 'nope'")),
        "{result:?}"
    );
    assert_eq!(
        seen,
        [
            "created t (0 queries)",
            "query (1 queries)",
            "0 queries listed"
        ]
    );
    // A syntax error anywhere runs nothing.
    let mut ran = 0;
    let result = engine.execute_each("DROP STREAM t; SELEKT", |_| {
        ran += 1;
        Ok::<_, EngineError>(())
    });
    assert!(result.is_err() && ran == 0);
    assert_eq!(engine.streams().len(), 1);
}

fn some_ints(xs: &[i64]) -> Vec<Option<i64>> {
    xs.iter().copied().map(Some).collect()
}

#[test]
fn group_by_a_position_or_an_alias_keys_by_that_select_item() {
    // As in PostgreSQL and DuckDB: GROUP BY 2 is the second item's
    // expression, not the constant 2 (which would make one global window).
    let out = run(
        "SELECT ts, upper(key) AS k, count(*) OVER (ROWS UNBOUNDED PRECEDING) AS c FROM s GROUP BY 2",
    );
    assert_eq!(
        ints(&out, "c"),
        vec![Some(1), Some(1), Some(2), Some(3), Some(4), Some(2)]
    );
    // So is the alias of a select item, unless a column has that name.
    let out = run(
        "SELECT ts, v > 2 AS big, count(*) OVER (ROWS UNBOUNDED PRECEDING) AS c FROM s GROUP BY big",
    );
    assert_eq!(
        ints(&out, "c"),
        vec![Some(1), Some(1), Some(2), Some(3), Some(2), Some(4)]
    );
    let out = run(
        "SELECT ts, upper(key) AS v, count(*) OVER (ROWS UNBOUNDED PRECEDING) AS c FROM s GROUP BY v",
    );
    assert_eq!(
        ints(&out, "c"),
        some_ints(&[1; 6]),
        "v is the stream's column"
    );
    let (engine, _s) = engine_with_s();
    let err = |sql: &str| engine.query(sql).unwrap_err().to_string();
    assert!(
        err("SELECT key, count(*) OVER (ROWS 1 PRECEDING) AS c FROM s GROUP BY 3")
            .starts_with("GROUP BY 3: the select list has 2 items at line 1, column 67"),
    );
    assert!(
        err("SELECT key, count(*) OVER (ROWS 1 PRECEDING) AS c FROM s GROUP BY 1.5")
            .starts_with("GROUP BY 1.5: a position in the select list is a whole number from 1"),
    );
    assert!(
        err("SELECT *, count(*) OVER (ROWS 1 PRECEDING) AS c FROM s GROUP BY 1")
            .contains("GROUP BY 1: the item at that position is a wildcard"),
    );
}

#[test]
fn late_rows_emit_null_and_are_counted_or_rejected() {
    let (engine, s) = engine_with_s();
    let q = engine.query("SELECT key, count(*) OVER (RANGE '10s') AS c, count(*) OVER (ROWS 5 PRECEDING) AS r FROM s GROUP BY key").unwrap();
    s.push(batch(&[
        (5_000, Some("a"), None),
        (3_000, Some("a"), None),
        (4_000, Some("b"), None),
    ]))
    .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(
        ints(&out, "c"),
        vec![Some(1), None, Some(1)],
        "the late row enters no RANGE window"
    );
    assert_eq!(
        ints(&out, "r"),
        vec![Some(1), Some(2), Some(1)],
        "ROWS windows take it"
    );
    let stats = engine.stats();
    assert_eq!(stats.streams[0].late_rows, 1);
    assert_eq!(stats.queries[0].late_rows, 1);

    let (strict, s) = engine_with_s_and(
        StreamOptions::default()
            .event_time("ts")
            .on_late(OnLate::Error),
    );
    let q = strict
        .query("SELECT count(*) OVER (RANGE '10s') AS c FROM s GROUP BY key")
        .unwrap();
    s.push(batch(&[(5_000, Some("a"), None)])).unwrap();
    let err = s
        .push(batch(&[(6_000, Some("a"), None), (1_000, Some("a"), None)]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch rejected by stream 's': 1 late row(s), the first at index 1 of the batch (event time 1000 < 6000 already seen for its key)"
    );
    s.push(batch(&[(7_000, Some("a"), None)])).unwrap();
    assert_eq!(ints(&q.recv().unwrap(), "c"), vec![Some(1)]);
    assert_eq!(
        ints(&q.recv().unwrap(), "c"),
        vec![Some(2)],
        "the rejected batch changed nothing"
    );
}

#[test]
fn rows_without_an_event_time_are_counted_apart_from_late_ones() {
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM n (ts BIGINT, key VARCHAR) WITH (event_time = 'ts')")
        .unwrap();
    let q = engine
        .query("SELECT count(*) OVER (RANGE '10s') AS c FROM n GROUP BY key")
        .unwrap();
    engine
        .execute(
            "INSERT INTO n VALUES (5000, 'a'), (NULL, 'a'), (1000, 'a'), (NULL, 'b'), (6000, 'a')",
        )
        .unwrap();
    assert_eq!(
        ints(&q.recv().unwrap(), "c"),
        vec![Some(1), None, None, None, Some(2)]
    );
    let stats = q.stats();
    // Three rows enter no RANGE window: one late, two without a time.
    assert_eq!((stats.late_rows, stats.untimed_rows), (3, 2), "{stats:?}");
}

/// A frame ending before the current row knows its key's newest event time
/// while that row still waits outside the window.
#[test]
fn a_late_row_is_found_behind_rows_still_waiting_to_enter_the_window() {
    let (strict, s) = engine_with_s_and(
        StreamOptions::default()
            .event_time("ts")
            .on_late(OnLate::Error),
    );
    let q = strict
        .query(
            "SELECT count(*) OVER (RANGE BETWEEN '10s' PRECEDING AND '5s' PRECEDING) AS c \
             FROM s GROUP BY key",
        )
        .unwrap();
    s.push(batch(&[(5_000, Some("a"), None)])).unwrap();
    let err = s.push(batch(&[(4_000, Some("a"), None)])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch rejected by stream 's': 1 late row(s), the first at index 0 of the batch (event time 4000 < 5000 already seen for its key)"
    );
    s.push(batch(&[
        (9_000, Some("a"), None),
        (10_000, Some("a"), None),
    ]))
    .unwrap();
    assert_eq!(ints(&q.recv().unwrap(), "c"), vec![Some(0)]);
    // At 10 s, the row of 5 s has entered the window; the one of 9 s waits.
    assert_eq!(ints(&q.recv().unwrap(), "c"), vec![Some(0), Some(1)]);
}

/// A NULL event time places a row in no RANGE window: it is late, and under
/// `on_late = 'error'` the message says it is NULL.
#[test]
fn a_null_event_time_is_late_and_named_as_null() {
    let nullable_ts = Arc::new(Schema::new(vec![
        Field::new("ts", DataType::Int64, true),
        Field::new("v", DataType::Float64, true),
    ]));
    let rows = |ts: Vec<Option<i64>>| {
        let v = Float64Array::from(vec![1.0; ts.len()]);
        RecordBatch::try_new(
            Arc::clone(&nullable_ts),
            vec![Arc::new(Int64Array::from(ts)), Arc::new(v)],
        )
        .unwrap()
    };
    let engine = Engine::new();
    let s = engine
        .register_stream(
            "s",
            Arc::clone(&nullable_ts),
            StreamOptions::default().event_time("ts"),
        )
        .unwrap();
    let q = engine
        .query("SELECT count(*) OVER (RANGE '10s') AS c FROM s")
        .unwrap();
    s.push(rows(vec![Some(1_000), None, Some(2_000)])).unwrap();
    assert_eq!(ints(&q.recv().unwrap(), "c"), vec![Some(1), None, Some(2)]);
    assert_eq!(engine.stats().streams[0].late_rows, 1);

    let strict = Engine::new();
    let s = strict
        .register_stream(
            "s",
            Arc::clone(&nullable_ts),
            StreamOptions::default()
                .event_time("ts")
                .on_late(OnLate::Error),
        )
        .unwrap();
    let _q = strict
        .query("SELECT count(*) OVER (RANGE '10s') AS c FROM s")
        .unwrap();
    let err = s.push(rows(vec![Some(1_000), None])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch rejected by stream 's': 1 late row(s), the first at index 1 of the batch (its event time is NULL)"
    );
}

#[test]
fn mismatched_batches_are_rejected_whole_and_the_stream_keeps_working() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query("SELECT count(*) OVER (ROWS 9 PRECEDING) AS c FROM s")
        .unwrap();
    let wrong = Arc::new(Schema::new(vec![
        Field::new("ts", DataType::Int64, false),
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
    ]));
    let bad = RecordBatch::try_new(
        wrong,
        vec![
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(StringArray::from(vec!["a"])),
            Arc::new(Int64Array::from(vec![1])),
        ],
    )
    .unwrap();
    let err = s.push(bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch rejected by stream 's': column 2 is named 'k', expected 'key'; column 'v' is Int64, expected Float64"
    );
    s.push(batch(&[(1, None, None)])).unwrap();
    assert_eq!(ints(&q.recv().unwrap(), "c"), vec![Some(1)]);
    assert_eq!(engine.stats().streams[0].rejected_batches, 1);
}

#[test]
fn planning_errors_say_what_and_where() {
    let (engine, _s) = engine_with_s();
    let err = |sql: &str| engine.query(sql).unwrap_err().to_string();
    assert_eq!(
        err("SELECT max(v) OVER (ROWS 3 PRECEDING) FROM sx"),
        "unknown stream 'sx'; did you mean 's'? at line 1, column 44\n  SELECT max(v) OVER (ROWS 3 PRECEDING) FROM sx\n                                             ^"
    );
    assert!(
        err("SELECT max(vv) OVER (ROWS 3 PRECEDING) FROM s").starts_with(
            "unknown column 'vv' in stream 's'; did you mean 'v'? at line 1, column 12"
        )
    );
    // With no name close, the stream's columns are listed.
    assert!(
        err("SELECT max(temperature) OVER (ROWS 3 PRECEDING) FROM s").starts_with(
            "unknown column 'temperature' in stream 's'; its columns are ts, key, v at line 1, column 12"
        )
    );
    assert!(
        err("SELECT maxx(v) OVER (ROWS 3 PRECEDING) FROM s")
            .starts_with("unknown function 'maxx'; did you mean 'max'?")
    );
    assert!(
        err("SELECT sum(key) OVER (ROWS 3 PRECEDING) FROM s")
            .contains("expected sum(x BIGINT) -> BIGINT, sum(x DOUBLE) -> DOUBLE")
    );
    // Types are named as SQL names them, constants as the query wrote them.
    assert!(
        err("SELECT key FROM s WHERE (v > 1) + 1.5 > 0").starts_with(
            "the operator + does not apply to BOOLEAN (v > 1) and DECIMAL(2, 1) (1.5)"
        ),
        "{}",
        err("SELECT key FROM s WHERE (v > 1) + 1.5 > 0")
    );
    assert!(
        err("SELECT max(v) OVER (ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING) FROM s")
            .starts_with("not supported in continuous queries: FOLLOWING")
    );
    // A frame that ends before it starts is pointed at where it ends.
    for (sql, message) in [
        (
            "SELECT sum(v) OVER (ROWS BETWEEN 1 PRECEDING AND 3 PRECEDING) FROM s",
            "the frame ends 3 PRECEDING, before it starts (1 PRECEDING): it would never hold a \
             row at line 1, column 50",
        ),
        (
            "SELECT sum(v) OVER (ROWS BETWEEN CURRENT ROW AND 2 PRECEDING) FROM s",
            "the frame ends 2 PRECEDING, before it starts (CURRENT ROW): it would never hold a \
             row at line 1, column 50",
        ),
        (
            "SELECT sum(v) OVER (RANGE BETWEEN '1s' PRECEDING AND '1m' PRECEDING) FROM s",
            "the frame ends '1m' PRECEDING, before it starts ('1s' PRECEDING): it would never \
             hold a row at line 1, column 54",
        ),
        (
            "SELECT sum(v) OVER (ROWS BETWEEN 3 PRECEDING AND UNBOUNDED PRECEDING) FROM s",
            "a frame cannot end at UNBOUNDED PRECEDING: it would hold no row at line 1, column 8",
        ),
    ] {
        assert_eq!(err(sql).lines().next(), Some(message), "{sql}");
    }
    // Unsupported clauses are named and pointed at.
    for (sql, what, column) in [
        ("SELECT v FROM s ORDER BY v", "ORDER BY outside OVER", 26),
        ("SELECT s.v FROM s JOIN s AS t ON s.ts = t.ts", "joins", 24),
        ("SELECT v FROM s, s AS t", "joins", 18),
        (
            "SELECT v FROM s WHERE v IN (SELECT v FROM s)",
            "subqueries in expressions",
            23,
        ),
        ("SELECT DISTINCT key FROM s", "SELECT DISTINCT", 1),
        (
            "SELECT percentile_cont(v, 0.5) OVER (ROWS 3 PRECEDING) FROM s",
            "exact order statistics, which no window keeps in constant time per row \
             (try approx_median or approx_percentile)",
            8,
        ),
        (
            "SELECT quantile_cont(v, 0.5) OVER (ROWS 3 PRECEDING) FROM s",
            "exact order statistics",
            8,
        ),
        (
            "SELECT key, string_agg(key, ',') OVER (ROWS 3 PRECEDING) FROM s",
            "aggregates whose result grows with the window",
            13,
        ),
        (
            "SELECT key, dense_rank() OVER (ORDER BY v) FROM s",
            "the window function dense_rank (row_number, lag, first_value, last_value and the \
             aggregates are supported)",
            13,
        ),
        (
            "SELECT lead(v) OVER (ROWS 3 PRECEDING) FROM s",
            "lead (a stream cannot wait for later rows; lag reads earlier ones)",
            8,
        ),
        (
            "SELECT sum(DISTINCT v) OVER (ROWS 3 PRECEDING) FROM s",
            "sum(DISTINCT …) (count(DISTINCT x) is supported, and DISTINCT where it changes \
             nothing, as in min and max) at",
            8,
        ),
        (
            "SELECT TOP 3 v FROM s",
            "TOP (use LIMIT n to stop after n rows)",
            1,
        ),
        (
            "SELECT max(v) OVER (ORDER BY ts NULLS FIRST ROWS 2 PRECEDING) FROM s",
            "ORDER BY … NULLS FIRST in a window",
            8,
        ),
        (
            "SELECT CAST(v AS VARCHAR FORMAT 'x') FROM s",
            "CAST … FORMAT 'x' (cast, then format with to_char)",
            13,
        ),
        ("SELECT v INTO t FROM s", "SELECT … INTO", 1),
        ("SELECT v FROM s FOR UPDATE", "FOR UPDATE and FOR SHARE", 1),
        (
            "SELECT v FROM s CLUSTER BY v",
            "CLUSTER BY, DISTRIBUTE BY and SORT BY",
            1,
        ),
        (
            "SELECT v FROM s LIMIT 2 OFFSET 1",
            "LIMIT 2 OFFSET 1 (only LIMIT n)",
            23,
        ),
        (
            "SELECT v FROM s TABLESAMPLE (10 PERCENT)",
            "TABLESAMPLE",
            15,
        ),
        (
            "SELECT v FROM (SELECT v FROM s) TABLESAMPLE (10 PERCENT)",
            "TABLESAMPLE",
            16,
        ),
        (
            "SELECT v FROM s(1, 2)",
            "table functions (FROM name(…))",
            15,
        ),
        ("SELECT v FROM s WITH (NOLOCK)", "table hints", 15),
        (
            "SELECT abs(DISTINCT v) FROM s",
            "DISTINCT in the scalar function abs (only aggregates take it)",
            8,
        ),
        (
            "SELECT round(v) FILTER (WHERE v > 0) FROM s",
            "FILTER in the scalar function round",
            8,
        ),
        (
            "SELECT key, abs(v) WITHIN GROUP (ORDER BY ts) FROM s",
            "WITHIN GROUP in the scalar function abs",
            13,
        ),
        (
            "SELECT max(v) WITHIN GROUP (ORDER BY ts) OVER (ROWS 3 PRECEDING) FROM s",
            "WITHIN GROUP in max (approx_percentile_cont(q) WITHIN GROUP (ORDER BY x) takes it)",
            38,
        ),
        (
            "SELECT approx_percentile_cont(0.9) WITHIN GROUP (ORDER BY v DESC) \
             OVER (ROWS 3 PRECEDING) FROM s",
            "WITHIN GROUP (ORDER BY … DESC) (the percentile 1 − q ascending is the same)",
            59,
        ),
        (
            "SELECT approx_percentile_cont(0.9) WITHIN GROUP (ORDER BY v, ts) \
             OVER (ROWS 3 PRECEDING) FROM s",
            "WITHIN GROUP ordering by more than one expression",
            62,
        ),
        (
            "WITH RECURSIVE x AS (SELECT v FROM s) SELECT v FROM x",
            "WITH RECURSIVE",
            1,
        ),
        ("SELECT v FROM s UNION SELECT v FROM s", "set operations", 1),
        (
            "WITH d AS (SELECT v FROM s) INSERT INTO s VALUES (1, 'a', 1.0)",
            "WITH before a statement other than SELECT",
            1,
        ),
    ] {
        let message = err(sql);
        assert!(
            message.starts_with(&format!("not supported in continuous queries: {what}")),
            "{message}"
        );
        assert!(
            message.contains(&format!("at line 1, column {column}\n")),
            "{message}"
        );
    }
    let message = err("SELECT count(DISTINCT v, key) OVER (ROWS 3 PRECEDING) FROM s");
    assert!(
        message.starts_with("count(DISTINCT …) takes one argument, got 2 at line 1, column 8\n"),
        "{message}"
    );
    // A constant that cannot take the type it is compared with or cast to
    // is the query's error, not a NULL for every row (PostgreSQL, DuckDB);
    // the caret points at the expression that needs the cast.
    for (sql, constant, column) in [
        (
            "SELECT v FROM s WHERE v > 'a'",
            "'a' cannot be read as DOUBLE",
            23,
        ),
        (
            "SELECT v FROM s WHERE ts IN (1, 'b')",
            "'b' cannot be read as BIGINT",
            23,
        ),
        (
            "SELECT CAST('x' AS BIGINT) AS i FROM s",
            "'x' cannot be read as BIGINT",
            13,
        ),
    ] {
        let message = err(sql);
        assert!(
            message.starts_with(&format!(
                "the constant {constant} at line 1, column {column}\n"
            )),
            "{message}"
        );
    }
    let q = engine
        .query("SELECT v > '2.5' AS above, TRY_CAST('x' AS BIGINT) AS t, CAST('7' AS BIGINT) AS seven FROM s")
        .unwrap();
    assert_eq!(
        q.schema().field(2).data_type(),
        &DataType::Int64,
        "constants cast as declared"
    );
    // Statements naming a stream point at the name too.
    for (sql, column) in [
        ("DROP STREAM sx", 13),
        ("INSERT INTO sx VALUES (1, 'a', 2.0)", 13),
    ] {
        let message = engine.execute(sql).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!(
                "unknown stream 'sx'; did you mean 's'? at line 1, column {column}\n"
            )),
            "{message}"
        );
    }
    assert!(engine.execute("DROP STREAM IF EXISTS sx").is_ok());
    // A bad row of an INSERT is pointed at: its first value, or the value.
    for (sql, what, column) in [
        (
            "INSERT INTO s VALUES (1, 'a', 2.0), (2, 'b')",
            "INSERT row has 2 values for 3 columns",
            38,
        ),
        (
            "INSERT INTO s VALUES (1, 'a', 2.0), (2, 'b', 'x')",
            "the constant 'x' cannot be read as DOUBLE",
            46,
        ),
        (
            "INSERT INTO s (key, v) VALUES ('a', 2.0)",
            "INSERT gives no value for column 'ts', which is NOT NULL",
            16,
        ),
    ] {
        let message = engine.execute(sql).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("{what} at line 1, column {column}\n")),
            "{message}"
        );
    }
    // A NULL bound for a NOT NULL column is named by its row; no row goes in.
    let q = engine.query("SELECT ts FROM s").unwrap();
    let message = engine
        .execute("INSERT INTO s VALUES (1, 'a', 2.0), (NULL, 'b', 1.0)")
        .unwrap_err()
        .to_string();
    assert!(
        message.ends_with("INSERT row 2: column 'ts' is NOT NULL, but its value is NULL"),
        "{message}"
    );
    engine
        .execute("INSERT INTO s VALUES (3, 'c', 1.0)")
        .unwrap();
    assert_eq!(ints(&q.recv().unwrap(), "ts"), vec![Some(3)]);
    assert!(err("SELECT max(v) OVER (ROWS 3 PRECEDING FROM s").starts_with("syntax error"));
    // A syntax error after EXPLAIN points into the statement explained.
    let explained = engine
        .execute("EXPLAIN SELECT max(v) OVER (ROWS 3 PRECEDING garbage) FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        explained.starts_with("syntax error: Expected: ), found: garbage at line 1, column 46"),
        "{explained}"
    );
    assert!(
        err("SELECT max(v) OVER (RANGE 'ten seconds') FROM s").contains(
            "RANGE needs a duration such as '10s', '1m30s' or INTERVAL '10' SECOND, got 'ten seconds'"
        )
    );
    assert!(
        err("SELECT max(v) OVER (RANGE '106751991167d') FROM s")
            .contains("RANGE: the duration is longer than a window can span")
    );
    // Rows are windowed in arrival order: OVER may only order by the column
    // that order follows, as in Flink SQL.
    assert!(
        err("SELECT max(v) OVER (PARTITION BY key ORDER BY v ROWS 3 PRECEDING) FROM s")
            .starts_with(
                "not supported in continuous queries: ORDER BY v in a window: rows are windowed in \
             arrival order, which follows the stream's event-time column 'ts'; write ORDER BY ts"
            )
    );
    engine
        .execute("CREATE STREAM u (seq BIGINT, x DOUBLE)")
        .unwrap();
    assert!(
        err("SELECT max(x) OVER (ORDER BY x ROWS 3 PRECEDING) FROM u")
            .contains("ORDER BY x (DOUBLE) in a window: rows are windowed in arrival order")
    );
    assert!(
        engine
            .query("SELECT max(x) OVER (ORDER BY seq ROWS 3 PRECEDING) FROM u")
            .is_ok()
    );
}

#[test]
fn a_stream_alias_qualifies_columns_and_hides_the_name() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT x.key, max(x.v) OVER (PARTITION BY x.key ROWS 1 PRECEDING) AS m \
             FROM s AS x WHERE x.v > 0",
        )
        .unwrap();
    s.push(batch(ROWS)).unwrap();
    assert_eq!(
        floats(&q.recv().unwrap(), "m"),
        some(&[5.0, 1.0, 5.0, 4.0, 4.0, 7.0])
    );
    let err = engine
        .query("SELECT s.v FROM s AS x")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("unknown stream 's'; did you mean 'x'?"),
        "{err}"
    );
    // `x.*` is every column, like `*`.
    let names_of = |sql: &str| -> Vec<String> {
        let schema = engine.query(sql).unwrap().schema();
        schema.fields().iter().map(|f| f.name().clone()).collect()
    };
    assert_eq!(
        names_of("SELECT x.*, max(v) OVER (ROWS 1 PRECEDING) AS m FROM s AS x"),
        ["ts", "key", "v", "m"]
    );
    assert_eq!(names_of("SELECT S.* FROM s"), ["ts", "key", "v"]);
    let err = engine
        .query("SELECT s.* FROM s AS x")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("s.* names no stream here; write x.* at line 1, column 8"),
        "{err}"
    );
}

#[test]
fn duckdb_time_functions_are_planned_as_datafusion_ones() {
    // ts (BIGINT milliseconds): 1000, 2000, 3000, 4000, 15000, 16000;
    // the values match DuckDB 2.0's.
    let out = run(
        "SELECT epoch(CAST(ts AS TIMESTAMP)) AS e, epoch_ms(CAST(ts AS TIMESTAMP)) AS ms, \
                epoch_ms(epoch_ms(ts + 500)) AS back, \
                epoch_ms(time_bucket(INTERVAL '10' SECOND, CAST(ts AS TIMESTAMP))) AS tens, \
                epoch_ms(time_bucket(INTERVAL '7' DAY, CAST(ts AS TIMESTAMP))) AS week, \
                epoch_ms(time_bucket(INTERVAL '10' SECOND, CAST(ts AS TIMESTAMP), \
                                     TIMESTAMP '1970-01-01 00:00:03')) AS shifted \
         FROM s",
    );
    assert_eq!(floats(&out, "e"), some(&[1.0, 2.0, 3.0, 4.0, 15.0, 16.0]));
    assert_eq!(
        ints(&out, "ms"),
        [1000, 2000, 3000, 4000, 15000, 16000].map(Some)
    );
    assert_eq!(
        ints(&out, "back"),
        [1500, 2500, 3500, 4500, 15500, 16500].map(Some)
    );
    assert_eq!(ints(&out, "tens"), [0, 0, 0, 0, 10_000, 10_000].map(Some));
    // DuckDB counts weeks from Monday 2000-01-03: 1970-01-01 was a Thursday.
    assert_eq!(ints(&out, "week"), [Some(-259_200_000); 6]);
    assert_eq!(
        ints(&out, "shifted"),
        [-7000, -7000, 3000, 3000, 13_000, 13_000].map(Some)
    );
    let (engine, _s) = engine_with_s();
    let err = engine
        .query("SELECT time_bucket(ts) FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("time_bucket(BIGINT) does not match any signature of time_bucket"),
        "{err}"
    );
    // date_diff, checked against DuckDB 2.0 on the same times.
    let q = engine
        .query(
            "SELECT date_diff('week', TIMESTAMP '2024-01-07 23:00:00', TIMESTAMP '2024-01-08 01:00:00') AS w1, \
                    date_diff('WEEK', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-10 01:00:00') AS w2, \
                    date_diff('second', TIMESTAMP '1969-12-31 23:59:59.900', TIMESTAMP '1970-01-01 00:00:00.100') AS s, \
                    date_diff('month', TIMESTAMP '2024-01-31 00:00:00', TIMESTAMP '2024-02-01 00:00:00') AS m, \
                    date_diff('day', TIMESTAMP '2024-01-31 23:59:00', TIMESTAMP '2024-02-01 00:01:00') AS d, \
                    date_diff('hour', TIMESTAMP '2024-01-31 23:59:00', TIMESTAMP '2024-01-31 22:01:00') AS h, \
                    datediff('quarter', TIMESTAMP '2024-03-31 00:00:00', TIMESTAMP '2024-04-01 00:00:00') AS q, \
                    date_diff('millisecond', TIMESTAMP '2024-03-31 00:00:00', TIMESTAMP '2024-04-01 00:00:00') AS ms, \
                    date_diff('year', TIMESTAMP '2024-12-31 00:00:00', TIMESTAMP '2023-01-01 00:00:00') AS y \
             FROM s",
        )
        .unwrap();
    let s = engine.stream("s").unwrap();
    s.push(batch(&ROWS[..1])).unwrap();
    let out = q.recv().unwrap();
    for (name, expected) in [
        ("w1", 0),
        ("w2", 1),
        ("s", 1),
        ("m", 1),
        ("d", 1),
        ("h", -1),
        ("q", 1),
        ("ms", 86_400_000),
        ("y", -1),
    ] {
        assert_eq!(ints(&out, name), [Some(expected)], "{name}");
    }
    let err = engine
        .query("SELECT date_diff('fortnight', CAST(ts AS TIMESTAMP), CAST(ts AS TIMESTAMP)) FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("date_diff: unknown part 'fortnight'"),
        "{err}"
    );
    let functions = engine.execute("SHOW FUNCTIONS LIKE 'epoch%'").unwrap();
    assert!(
        format!("{functions:?}").contains("epoch_ms"),
        "{functions:?}"
    );
}

#[test]
fn a_window_may_refine_a_named_window_as_in_sql() {
    // `OVER (w ROWS 1 PRECEDING)`: w's PARTITION BY and ORDER BY with this
    // frame; a named window may also start from another one.
    let refined = run(
        "SELECT max(v) OVER (w ROWS 1 PRECEDING) AS m, count(*) OVER (w2) AS c FROM s \
         WINDOW w AS (PARTITION BY key), w2 AS (w ORDER BY ts RANGE '10s')",
    );
    let written = run(
        "SELECT max(v) OVER (PARTITION BY key ROWS 1 PRECEDING) AS m, \
                count(*) OVER (PARTITION BY key ORDER BY ts RANGE '10s') AS c FROM s",
    );
    assert_eq!(floats(&refined, "m"), floats(&written, "m"));
    assert_eq!(ints(&refined, "c"), ints(&written, "c"));
    assert_eq!(floats(&refined, "m"), some(&[5.0, 1.0, 5.0, 4.0, 4.0, 7.0]));
    let (engine, _s) = engine_with_s();
    let err = |sql: &str| engine.query(sql).unwrap_err().to_string();
    for (sql, expected) in [
        (
            "SELECT max(v) OVER (w PARTITION BY key) FROM s WINDOW w AS (ORDER BY ts)",
            "a window that refines w takes its PARTITION BY and may not write one at line 1, \
             column 21",
        ),
        (
            "SELECT max(v) OVER (w ORDER BY ts) FROM s WINDOW w AS (ORDER BY ts)",
            "w has an ORDER BY, which a window that refines it may not replace at line 1, column 21",
        ),
        (
            "SELECT max(v) OVER (w ROWS 2 PRECEDING) FROM s WINDOW w AS (ROWS 1 PRECEDING)",
            "w has a frame, so no window may refine it",
        ),
        (
            "SELECT max(v) OVER (nope ROWS 2 PRECEDING) FROM s",
            "unknown window 'nope': define it with WINDOW nope AS (…) at line 1, column 21",
        ),
        (
            "SELECT max(v) OVER a FROM s WINDOW a AS (b), b AS (a ROWS 1 PRECEDING)",
            "the window b is defined through itself at line 1, column 42",
        ),
    ] {
        assert!(err(sql).starts_with(expected), "{sql}: {}", err(sql));
    }
}

#[test]
fn group_by_all_groups_by_the_items_without_aggregates() {
    // As in DuckDB: the keys are the select items that call no aggregate.
    let all = run("SELECT key, max(v) OVER (ROWS 1 PRECEDING) AS m FROM s GROUP BY ALL");
    let named = run("SELECT key, max(v) OVER (ROWS 1 PRECEDING) AS m FROM s GROUP BY key");
    assert_eq!(floats(&all, "m"), floats(&named, "m"));
    let out = run("SELECT upper(key) AS k, 2 * count(*) AS n FROM s GROUP BY ALL");
    assert_eq!(ints(&out, "n"), [2, 2, 4, 6, 8, 4].map(Some));
    // No item without an aggregate: the stream is one group.
    let out = run("SELECT count(*) AS n FROM s GROUP BY ALL");
    assert_eq!(ints(&out, "n"), [1, 2, 3, 4, 5, 6].map(Some));
    let (engine, _s) = engine_with_s();
    let plan = engine
        .explain("SELECT key, ts % 2 AS odd, lag(v) AS before FROM s GROUP BY ALL")
        .unwrap();
    assert!(plan.contains("keys key, ts % 2,"), "{plan}");
    let err = engine
        .query("SELECT *, count(*) AS n FROM s GROUP BY ALL")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "not supported in continuous queries: GROUP BY ALL with * (name the keys) at line 1, \
             column 8"
        ),
        "{err}"
    );
}

#[test]
fn a_wildcard_excludes_and_replaces_columns_as_in_duckdb() {
    let out = run("SELECT * EXCLUDE (ts, key) FROM s");
    assert_eq!(names(&out), ["v"]);
    let out = run("SELECT x.* EXCLUDE KEY, key AS k FROM s AS x");
    assert_eq!(names(&out), ["ts", "v", "k"]);
    // A replacement keeps the column's place and name, and may be an
    // aggregate over a window.
    let out = run(
        "SELECT * REPLACE (v * 2 AS v, max(v) OVER (ROWS 1 PRECEDING) AS ts) FROM s GROUP BY key",
    );
    assert_eq!(names(&out), ["ts", "key", "v"]);
    assert_eq!(floats(&out, "v"), some(&[10.0, 2.0, 6.0, 8.0, 4.0, 14.0]));
    assert_eq!(floats(&out, "ts"), some(&[5.0, 1.0, 5.0, 4.0, 4.0, 7.0]));
    let out = run("SELECT * EXCLUDE (key) REPLACE (-v AS v) FROM s");
    assert_eq!(names(&out), ["ts", "v"]);
    assert_eq!(floats(&out, "v")[0], Some(-5.0));
    let (engine, _s) = engine_with_s();
    let err = |sql: &str| engine.query(sql).unwrap_err().to_string();
    assert!(
        err("SELECT * EXCLUDE (ts, nope) FROM s")
            .starts_with("unknown column 'nope' in stream 's'"),
        "{}",
        err("SELECT * EXCLUDE (ts, nope) FROM s")
    );
    assert!(
        err("SELECT * EXCLUDE (v) REPLACE (1 AS V) FROM s")
            .starts_with("the column V is named twice after * at line 1, column 36"),
        "{}",
        err("SELECT * EXCLUDE (v) REPLACE (1 AS V) FROM s")
    );
}

#[test]
fn streams_need_a_name_and_distinct_column_names() {
    let engine = Engine::new();
    let column = |name: &str| Field::new(name, DataType::Int64, true);
    let err = engine
        .register_stream(
            "d",
            Arc::new(Schema::new(vec![column("a"), column("b"), column("A")])),
            StreamOptions::default(),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("column 'A' appears twice"), "{err}");
    let err = engine
        .register_stream(
            " ",
            Arc::new(Schema::new(vec![column("a")])),
            StreamOptions::default(),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs a name"), "{err}");
    assert!(engine.streams().is_empty());
}

#[test]
fn errors_in_a_script_point_into_the_script_as_written() {
    let engine = Engine::new();
    let script = "CREATE STREAM t (ts BIGINT, v DOUBLE)\n  WITH (event_time = 'ts');\n\
                  SELECT max(nope) OVER (RANGE '10s') FROM t;";
    let err = engine.execute(script).unwrap_err().to_string();
    assert!(err.contains("unknown column 'nope'"), "{err}");
    assert!(err.contains("line 3, column 12"), "{err}");
    assert!(
        err.contains("SELECT max(nope) OVER (RANGE '10s') FROM t;"),
        "the line as written: {err}"
    );
    // The stream of the first statement exists: statements run in order.
    assert!(engine.stream("t").is_ok());

    let err = engine
        .execute("CREATE STREAM u (v DOUBLE, v DOUBLE)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 1, column 28"), "{err}");
    assert!(
        err.contains("CREATE STREAM u"),
        "not the TABLE form sqlparser reads: {err}"
    );
}

#[test]
fn range_needs_an_event_time_column() {
    let engine = Engine::new();
    engine
        .register_stream("s", schema(), StreamOptions::default())
        .unwrap();
    let err = engine
        .query("SELECT max(v) OVER (RANGE '10s') FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("RANGE frames need an event-time column"),
        "{err}"
    );
    engine
        .query("SELECT max(v) OVER (ORDER BY ts RANGE '10s') FROM s")
        .expect("ORDER BY names it");
}

#[test]
fn queries_see_only_rows_pushed_after_they_start_and_dropping_unregisters() {
    let (engine, s) = engine_with_s();
    let first = engine
        .query("SELECT count(*) OVER (ROWS UNBOUNDED PRECEDING) AS c FROM s")
        .unwrap();
    s.push(batch(&[(1, None, None)])).unwrap();
    let second = engine
        .query("SELECT count(*) OVER (ROWS UNBOUNDED PRECEDING) AS c FROM s")
        .unwrap();
    s.push(batch(&[(2, None, None)])).unwrap();
    assert_eq!(ints(&first.recv().unwrap(), "c"), vec![Some(1)]);
    assert_eq!(ints(&first.recv().unwrap(), "c"), vec![Some(2)]);
    assert_eq!(ints(&second.recv().unwrap(), "c"), vec![Some(1)]);
    assert_eq!(engine.queries().len(), 2);
    drop(second);
    assert_eq!(engine.queries().len(), 1);
    assert!(matches!(first.try_recv(), Ok(None)));
    assert!(matches!(
        first.recv_timeout(Duration::from_millis(1)),
        Err(EngineError::Timeout)
    ));
}

#[test]
fn backpressure_blocks_the_producer_and_drops_nothing() {
    let engine = Engine::builder().channel_capacity(2).build();
    let s = engine
        .register_stream("s", schema(), StreamOptions::default())
        .unwrap();
    let q = engine
        .query("SELECT count(*) OVER (ROWS UNBOUNDED PRECEDING) AS c FROM s")
        .unwrap();
    let producer = std::thread::spawn(move || {
        for i in 0..50 {
            s.push(batch(&[(i, None, None)])).unwrap();
        }
    });
    let mut seen = Vec::new();
    for result in q.iter().take(50) {
        seen.extend(ints(&result.unwrap(), "c"));
    }
    producer.join().unwrap();
    assert_eq!(seen, (1..=50).map(Some).collect::<Vec<_>>());
}

#[test]
fn streams_can_be_pushed_from_several_threads() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query("SELECT count(*) OVER (ROWS UNBOUNDED PRECEDING) AS c FROM s")
        .unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    s.push(batch(&[(t * 100 + i, Some("k"), Some(1.0))]))
                        .unwrap();
                }
            })
        })
        .collect();
    let mut last = 0;
    for _ in 0..100 {
        last = ints(&q.recv().unwrap(), "c")[0].unwrap();
    }
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(last, 100);
}

#[test]
fn integer_overflow_yields_null_counted_in_stats() {
    let (engine, s, schema) = engine_with_stream("n", vec![Field::new("x", DataType::Int64, true)]);
    let q = engine
        .query("SELECT sum(x) OVER (ROWS 1 PRECEDING) AS total FROM n")
        .unwrap();
    let b = RecordBatch::try_new(
        schema,
        vec![Arc::new(Int64Array::from(vec![i64::MAX, 1, 1]))],
    )
    .unwrap();
    s.push(b).unwrap();
    let out = q.recv().unwrap();
    assert_eq!(ints(&out, "total"), vec![Some(i64::MAX), None, Some(2)]);
    assert_eq!(null_count(&out, "total"), 1);
    let stats = &engine.stats().queries[0];
    assert_eq!(stats.failed_results, 1);
    assert!(
        stats
            .last_error
            .as_deref()
            .unwrap_or("")
            .contains("sum overflowed BIGINT"),
        "{stats:?}"
    );
}

#[test]
fn integer_overflow_and_timestamps_past_the_calendar_are_null_not_wrong() {
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM n (x BIGINT NOT NULL)")
        .unwrap();
    // Wrapping would give 2 × 9e18 = -446744073709551616 and a TIMESTAMP
    // that prints as an error message.
    let q = engine
        .query(
            "SELECT x * 9000000000000000000 AS m, x + 9223372036854775806 AS p, \
             -9223372036854775807 - x AS d, CAST(x * 4000000000000000000 AS TIMESTAMP) AS t, \
             x * 0.5e308 * 4 AS f FROM n",
        )
        .unwrap();
    engine
        .execute("INSERT INTO n VALUES (0), (1), (2)")
        .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(
        ints(&out, "m"),
        vec![Some(0), Some(9_000_000_000_000_000_000), None]
    );
    assert_eq!(
        ints(&out, "p"),
        vec![Some(i64::MAX - 1), Some(i64::MAX), None]
    );
    assert_eq!(ints(&out, "d"), vec![Some(-i64::MAX), Some(i64::MIN), None]);
    assert_eq!(null_count(&out, "t"), 2);
    // Doubles overflow to infinity, as IEEE arithmetic does.
    assert_eq!(floats(&out, "f")[2], Some(f64::INFINITY));
    let stats = q.stats();
    assert_eq!(stats.failed_results, 5, "{stats:?}");
}

#[test]
fn a_row_whose_expression_fails_gets_null_and_the_batch_goes_on() {
    let (engine, s, schema) = engine_with_stream(
        "d",
        vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("x", DataType::Int64, true),
            Field::new("y", DataType::Int64, true),
        ],
    );
    // x / y fails where y = 0: in an output, an aggregate's argument, a key
    // and WHERE.
    let q = engine
        .query(
            "SELECT k, x / y AS q, sum(x / y) OVER (ROWS 9 PRECEDING) AS s, \
             count(*) OVER (ROWS 9 PRECEDING) AS c FROM d GROUP BY k",
        )
        .unwrap();
    let keyed = engine
        .query("SELECT count(*) OVER (ROWS 9 PRECEDING) AS c FROM d GROUP BY x / y")
        .unwrap();
    let filtered = engine.query("SELECT x FROM d WHERE x / y > 1").unwrap();
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec!["a", "a", "a", "b"])),
            Arc::new(Int64Array::from(vec![6, 1, 8, 9])),
            Arc::new(Int64Array::from(vec![3, 0, 2, 0])),
        ],
    )
    .unwrap();
    s.push(b).unwrap();

    let out = q.recv().unwrap();
    assert_eq!(ints(&out, "q"), vec![Some(2), None, Some(4), None]);
    assert_eq!(ints(&out, "s"), vec![Some(2), Some(2), Some(6), None]);
    assert_eq!(ints(&out, "c"), vec![Some(1), Some(2), Some(3), Some(1)]);
    // The rows that failed share the NULL key.
    let out = keyed.recv().unwrap();
    assert_eq!(ints(&out, "c"), vec![Some(1), Some(1), Some(1), Some(2)]);
    let out = filtered.recv().unwrap();
    assert_eq!(ints(&out, "x"), vec![Some(6), Some(8)]);

    let stats = engine.stats();
    for query in &stats.queries {
        assert_eq!(query.failed_batches, 0, "{query:?}");
        let error = query.last_error.as_deref().unwrap_or("");
        assert!(
            error.starts_with("row 2 of stream 'd': evaluating x / y")
                && error.contains(" where x = 1, y = 0: "),
            "{error}"
        );
        assert!(error.contains("Divide by zero"), "{error}");
    }
    // The output and the argument fail on rows 1 and 3 each.
    let failed: Vec<u64> = stats.queries.iter().map(|q| q.failed_results).collect();
    assert_eq!(failed, vec![4, 2, 2]);

    // Over NOT NULL columns too: a computed output is nullable, whatever
    // DataFusion infers, since a row can fail.
    engine
        .execute("CREATE STREAM strict (x BIGINT NOT NULL, y BIGINT NOT NULL)")
        .unwrap();
    let q = engine.query("SELECT x, x / y AS q FROM strict").unwrap();
    assert!(!q.schema().field(0).is_nullable());
    assert!(q.schema().field(1).is_nullable());
    engine
        .execute("INSERT INTO strict VALUES (6, 3), (1, 0)")
        .unwrap();
    assert_eq!(ints(&q.recv().unwrap(), "q"), vec![Some(2), None]);
}

/// A failed value names its row by its number in the stream, wherever the
/// expression runs: WHERE, a subquery and QUALIFY drop rows before it, and
/// the batch is not the stream's first.
#[test]
fn a_failed_value_names_its_row_in_the_stream() {
    let (engine, s, schema) = engine_with_stream(
        "d",
        vec![
            Field::new("x", DataType::Int64, true),
            Field::new("y", DataType::Int64, true),
        ],
    );
    let queries = [
        "SELECT x / y AS q FROM d WHERE x > 5",
        "SELECT x / y AS q FROM (SELECT x, y FROM d WHERE x > 5) WHERE x < 100",
        "SELECT x / y AS q, count(*) OVER (ROWS 2 PRECEDING) AS c FROM d WHERE x > 5 QUALIFY c > 1",
    ]
    .map(|sql| engine.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")));
    let push = |x: Vec<i64>, y: Vec<i64>| {
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(x)), Arc::new(Int64Array::from(y))],
        )
        .unwrap();
        s.push(b).unwrap();
    };
    push(vec![1, 2, 3], vec![1, 1, 1]);
    // Row 4 divides by zero but WHERE drops it; rows 6 and 7 fail.
    push(vec![1, 6, 7, 9], vec![0, 1, 0, 0]);
    for q in &queries {
        let stats = q.stats();
        assert_eq!(stats.failed_results, 2, "{stats:?}");
        let failure = stats.last_failed_row.expect("a failed row");
        assert_eq!(failure.rows, 6..=6, "{}", stats.sql);
        assert_eq!(
            failure.to_string(),
            "row 6 of stream 'd': evaluating x / y where x = 7, y = 0: Divide by zero error"
        );
        assert_eq!(stats.last_error, Some(failure.to_string()));
    }
}

#[test]
fn a_late_row_is_named_by_its_place_in_the_batch_whatever_where_drops() {
    let (strict, s) = engine_with_s_and(
        StreamOptions::default()
            .event_time("ts")
            .on_late(OnLate::Error),
    );
    let _q = strict
        .query("SELECT count(*) OVER (RANGE '10s') AS c FROM s WHERE key = 'a' GROUP BY key")
        .unwrap();
    s.push(batch(&[(5_000, Some("a"), None)])).unwrap();
    let err = s
        .push(batch(&[
            (6_000, Some("b"), None),
            (7_000, Some("a"), None),
            (1_000, Some("a"), None),
        ]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch rejected by stream 's': 1 late row(s), the first at index 2 of the batch (event time 1000 < 7000 already seen for its key)"
    );
}

/// `count(DISTINCT x)` over every value type, with SQL's equality: NULL
/// is no value, `-0.0` is `0.0`, and NaN equals NaN (as comparisons and
/// GROUP BY take them).
#[test]
fn count_distinct_counts_each_value_once_per_window_whatever_its_type() {
    let engine = Engine::new();
    engine
        .execute(
            "CREATE STREAM t (k VARCHAR, i BIGINT, d DOUBLE, b BOOLEAN, m DECIMAL(6, 2), \
             t TIMESTAMP, dt DATE)",
        )
        .unwrap();
    let q = engine
        .query(
            "SELECT count(DISTINCT i) OVER w AS i, count(DISTINCT d) OVER w AS d, \
             count(DISTINCT b) OVER w AS b, count(DISTINCT m) OVER w AS m, \
             count(DISTINCT t) OVER w AS t, count(DISTINCT dt) OVER w AS dt, \
             count(DISTINCT k) FILTER (WHERE i > 1) OVER w AS f \
             FROM t WINDOW w AS (PARTITION BY k ROWS 3 PRECEDING)",
        )
        .unwrap();
    let gaps = engine
        .query(
            "SELECT count(DISTINCT gap) OVER (ROWS 9 PRECEDING) AS g \
             FROM (SELECT t - lag(t) OVER (ROWS 1 PRECEDING) AS gap FROM t)",
        )
        .unwrap();
    engine
        .execute(
            "INSERT INTO t VALUES \
             ('a', 1, 0.0, true, 1.50, TIMESTAMP '2024-01-01 00:00:00', DATE '2024-01-01'), \
             ('a', 1, CAST('-0.0' AS DOUBLE), false, 1.5, TIMESTAMP '2024-01-01 00:00:01', \
              DATE '2024-01-01'), \
             ('a', 2, CAST('NaN' AS DOUBLE), true, 2.25, TIMESTAMP '2024-01-01 00:00:02', \
              DATE '2024-01-02'), \
             ('a', NULL, CAST('-NaN' AS DOUBLE), NULL, 1.50, TIMESTAMP '2024-01-01 00:00:04', \
              DATE '2024-01-02'), \
             ('a', 3, 1.0, false, NULL, TIMESTAMP '2024-01-01 00:00:05', NULL)",
        )
        .unwrap();
    let out = q.recv().unwrap();
    for (column, want) in [
        ("i", [1, 1, 2, 2, 3]),
        ("d", [1, 1, 2, 2, 3]),
        ("b", [1, 2, 2, 2, 2]),
        ("m", [1, 1, 2, 2, 2]),
        ("t", [1, 2, 3, 4, 4]),
        ("dt", [1, 1, 2, 2, 2]),
        ("f", [0, 0, 1, 1, 1]),
    ] {
        assert_eq!(ints(&out, column), some_ints(&want), "{column}");
    }
    // Lengths of time: 1 s, 1 s, 2 s, 1 s between the rows.
    assert_eq!(
        ints(&gaps.recv().unwrap(), "g"),
        some_ints(&[0, 1, 1, 2, 2])
    );
}

#[test]
fn clock_functions_are_refused_with_the_reason() {
    let (engine, _s) = engine_with_s();
    for call in ["now()", "current_date", "CURRENT_TIMESTAMP"] {
        let err = engine
            .query(&format!("SELECT {call} AS t FROM s"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a continuous query has no single 'now'") && err.contains("column 8"),
            "{err}"
        );
    }
}

/// Flink's group windows emit a row per window; the refusal says how sliq
/// writes each window, with the call's own time and lengths.
#[test]
fn group_window_functions_are_refused_with_sliqs_spelling() {
    let (engine, _s) = engine_with_s();
    for (call, instead) in [
        (
            "TUMBLE(ts, INTERVAL '10' SECOND)",
            "GROUP BY key, time_bucket(INTERVAL '10' SECOND, ts)",
        ),
        (
            "hop(ts, INTERVAL '1' SECOND, INTERVAL '1' MINUTE)",
            "OVER (RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW)",
        ),
        (
            "SESSION(ts, INTERVAL '5' MINUTE)",
            "without a gap longer than INTERVAL '5' MINUTE",
        ),
    ] {
        let sql = format!("SELECT key, count(*) AS c FROM s GROUP BY key, {call}");
        let err = engine.query(&sql).unwrap_err().to_string();
        assert!(
            err.contains("sliq emits a row for every event, not one per window")
                && err.contains(instead)
                && err.contains("at line 1, column 48"),
            "{call}: {err}"
        );
    }
    let err = engine
        .query("SELECT TUMBLE_START(ts, INTERVAL '10' SECOND) AS w FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("time_bucket(INTERVAL '10' SECOND, ts)"),
        "{err}"
    );
}

#[test]
fn every_window_algorithm_gives_the_same_results() {
    let sql = "SELECT key, max(v) OVER (ROWS 2 PRECEDING) AS m, sum(v) OVER (RANGE '3s') AS r FROM s GROUP BY key";
    let mut outputs = Vec::new();
    for (name, _) in WindowAlgorithm::ALL {
        let (engine, s) = engine_with_s();
        engine
            .execute(&format!("SET window_algorithm = '{name}'"))
            .unwrap();
        assert!(
            engine
                .explain(sql)
                .unwrap()
                .contains(&format!("algorithm {name}"))
        );
        let q = engine.query(sql).unwrap();
        s.push(batch(ROWS)).unwrap();
        let out = q.recv().unwrap();
        outputs.push((floats(&out, "m"), floats(&out, "r")));
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{outputs:?}");
    let err = Engine::new()
        .execute("SET window_algorithm = 'fast'")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("expected one of daba_lite, daba, two_stacks, two_stacks_lite, recalc"),
        "{err}"
    );
}

#[test]
fn settings_are_shown_and_reset_to_the_engine_s_own_default() {
    let engine = Engine::builder()
        .window_algorithm(WindowAlgorithm::TwoStacksLite)
        .build();
    let shown = |sql: &str| match engine.execute(sql).unwrap().pop() {
        Some(Executed::Settings(settings) | Executed::Reset(settings)) => settings,
        other => panic!("{sql}: {other:?}"),
    };
    let setting = |value: &str| vec![("window_algorithm".to_string(), value.to_string())];
    assert_eq!(shown("SHOW window_algorithm"), setting("two_stacks_lite"));
    engine.execute("SET window_algorithm TO daba").unwrap();
    assert_eq!(shown("SHOW ALL"), setting("daba"));
    assert_eq!(shown("SHOW Window_Algorithm"), setting("daba"));
    // RESET restores what the engine was built with, not sliq's default.
    assert_eq!(shown("RESET window_algorithm"), setting("two_stacks_lite"));
    assert_eq!(engine.window_algorithm(), WindowAlgorithm::TwoStacksLite);
    engine.execute("SET window_algorithm = 'recalc'").unwrap();
    assert_eq!(shown("RESET ALL"), setting("two_stacks_lite"));
    for sql in ["SHOW nope", "RESET nope", "SET nope = 1"] {
        let err = engine.execute(sql).unwrap_err().to_string();
        assert!(
            err.starts_with("unknown setting 'nope' (known: window_algorithm;"),
            "{sql}: {err}"
        );
    }
}

/// `concat_keys(key)`: the window's keys joined, oldest first (not commutative).
#[derive(Clone, Copy, Debug, Default)]
struct ConcatKeys;

impl sliq::swag::Monoid for ConcatKeys {
    type Agg = String;
    fn identity(&self) -> String {
        String::new()
    }
    fn combine(&self, a: &String, b: &String) -> String {
        format!("{a}{b}")
    }
}

impl sliq::aggregates::Aggregate for ConcatKeys {
    type Output = Option<Arc<str>>;
    fn lift<C: sliq::aggregates::Columns>(&self, columns: &C, row: usize) -> String {
        columns.str(0, row).unwrap_or("").to_string()
    }
    fn lower(&self, agg: &String) -> Result<Option<Arc<str>>, sliq::aggregates::AggregateError> {
        Ok(Some(Arc::from(agg.as_str())))
    }
}

/// Partial aggregates of [`LiveSum`] alive right now.
static LIVE_SUMS: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

/// A BIGINT sum whose partial aggregates count themselves in [`LIVE_SUMS`].
#[derive(Clone)]
struct LiveSum;

struct Counted(i64);

impl Counted {
    fn new(x: i64) -> Self {
        LIVE_SUMS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Counted(x)
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted::new(self.0)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE_SUMS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl sliq::swag::Monoid for LiveSum {
    type Agg = Counted;
    fn identity(&self) -> Counted {
        Counted::new(0)
    }
    fn combine(&self, a: &Counted, b: &Counted) -> Counted {
        Counted::new(a.0 + b.0)
    }
}

impl sliq::aggregates::Aggregate for LiveSum {
    type Output = Option<i64>;
    fn lift<C: sliq::aggregates::Columns>(&self, columns: &C, row: usize) -> Counted {
        Counted::new(columns.i64(0, row).unwrap_or(0))
    }
    fn lower(&self, agg: &Counted) -> Result<Option<i64>, sliq::aggregates::AggregateError> {
        Ok(Some(agg.0))
    }
}

#[test]
fn an_unbounded_frame_keeps_one_partial_aggregate_per_key_not_every_row() {
    use sliq::aggregates::{OutputType, ValueType};
    use std::sync::atomic::Ordering;
    // The same sums over every row so far, from an unbounded frame and from
    // a ROWS frame wider than the stream; live aggregates after each.
    let mut results = Vec::new();
    for frame in ["ROWS UNBOUNDED PRECEDING", "ROWS 100000 PRECEDING"] {
        let (engine, s) = engine_with_s();
        engine
            .register_aggregate(
                "live_sum",
                vec![ValueType::Int64],
                OutputType::Scalar(ValueType::Int64),
                LiveSum,
            )
            .unwrap();
        let before = LIVE_SUMS.load(Ordering::SeqCst);
        let q = engine
            .query(&format!(
                "SELECT key, live_sum(ts) OVER ({frame}) AS total FROM s GROUP BY key"
            ))
            .unwrap();
        let mut totals = Vec::new();
        for _ in 0..50 {
            s.push(batch(ROWS)).unwrap();
            totals.extend(ints(&q.recv().unwrap(), "total"));
        }
        results.push((totals, LIVE_SUMS.load(Ordering::SeqCst) - before));
    }
    let (unbounded, windowed) = (&results[0], &results[1]);
    assert_eq!(unbounded.0, windowed.0);
    // Two keys: one running total each; the window holds all 300 rows.
    assert_eq!(unbounded.1, 2);
    assert!(windowed.1 >= 300, "{}", windowed.1);
    let (engine, _s) = engine_with_s();
    let plan = engine
        .explain("SELECT key, max(v) AS m, min(v) OVER (ROWS 3 PRECEDING) FROM s GROUP BY key")
        .unwrap();
    assert!(
        plan.contains("max(v): monoid max(DOUBLE) -> DOUBLE, a running total per key"),
        "{plan}"
    );
    assert!(
        plan.contains("min(v): monoid min(DOUBLE) -> DOUBLE, algorithm daba_lite"),
        "{plan}"
    );
}

#[test]
fn calls_where_no_aggregate_may_stand_are_named_with_their_place() {
    let (engine, _s) = engine_with_s();
    let err = |sql: &str| engine.query(sql).unwrap_err().to_string();
    for (sql, message, column) in [
        (
            "SELECT key FROM s WHERE max(v) > 1",
            "max is an aggregate, not allowed in WHERE (QUALIFY filters on aggregates)",
            25,
        ),
        (
            "SELECT key FROM s WHERE lag(v) > 1",
            "lag is a window function, not allowed in WHERE",
            25,
        ),
        (
            "SELECT count(*) OVER (ROWS 2 PRECEDING) FROM s GROUP BY max(v)",
            "max is an aggregate, not allowed in GROUP BY",
            57,
        ),
        (
            "SELECT count(*) OVER (PARTITION BY min(v) ROWS 2 PRECEDING) FROM s",
            "min is an aggregate, not allowed in PARTITION BY",
            36,
        ),
        (
            "SELECT sum(max(v) OVER (ROWS 2 PRECEDING)) OVER (ROWS 3 PRECEDING) FROM s",
            "max is an aggregate, not allowed in the arguments of another aggregate \
             (aggregates do not nest",
            12,
        ),
        (
            "SELECT sum(v) FILTER (WHERE avg(v) > 1) OVER (ROWS 3 PRECEDING) FROM s",
            "avg is an aggregate, not allowed in an aggregate's FILTER",
            29,
        ),
        // A name that is no function is unknown wherever it stands.
        (
            "SELECT key FROM s WHERE maxx(v) > 1",
            "unknown function 'maxx'; did you mean 'max'?",
            25,
        ),
        (
            "SELECT sum(roundd(v)) OVER (ROWS 3 PRECEDING) FROM s",
            "unknown function 'roundd'; did you mean 'round'?",
            12,
        ),
        // A scalar function given OVER is named as one, not as unknown.
        (
            "SELECT round(v) OVER (ROWS 2 PRECEDING) FROM s",
            "round is a scalar function, not an aggregate: it takes no OVER",
            8,
        ),
        (
            "SELECT key FROM s WHERE abs(v) OVER (ROWS 2 PRECEDING) > 1",
            "abs is a scalar function, not an aggregate: it takes no OVER",
            25,
        ),
    ] {
        let got = err(sql);
        assert!(got.starts_with(message), "{sql}: {got}");
        assert!(
            got.contains(&format!(" at line 1, column {column}\n")),
            "{sql}: {got}"
        );
    }
    let err = engine
        .execute("INSERT INTO s VALUES (1, 'a', max(2))")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("max is an aggregate, not allowed in VALUES at line 1, column 31"),
        "{err}"
    );
}

#[test]
fn user_defined_aggregates_run_like_builtins() {
    use sliq::aggregates::{OutputType, ValueType};
    let (engine, s) = engine_with_s();
    engine
        .register_aggregate(
            "concat_keys",
            vec![ValueType::Utf8],
            OutputType::Scalar(ValueType::Utf8),
            ConcatKeys,
        )
        .unwrap();
    let q = engine
        .query("SELECT concat_keys(key) OVER (ROWS 2 PRECEDING) AS ks FROM s")
        .unwrap();
    s.push(batch(ROWS)).unwrap();
    let out = q.recv().unwrap();
    let got: Vec<String> = strings(&out, "ks")
        .into_iter()
        .map(|s| s.unwrap_or_default())
        .collect();
    assert_eq!(got, vec!["a", "ab", "aba", "baa", "aaa", "aab"]);
    // Over frames ending before the current row, in order.
    let q = engine
        .query(
            "SELECT concat_keys(key) OVER (ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING) AS before, \
             concat_keys(key) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) AS early \
             FROM s",
        )
        .unwrap();
    s.push(batch(ROWS)).unwrap();
    let out = q.recv().unwrap();
    let column = |name: &str| -> Vec<String> {
        strings(&out, name)
            .into_iter()
            .map(|s| s.unwrap_or_default())
            .collect()
    };
    assert_eq!(column("before"), ["", "a", "ab", "aba", "baa", "aaa"]);
    assert_eq!(column("early"), ["", "", "a", "ab", "aba", "abaa"]);
    assert!(
        engine
            .explain("SELECT concat_keys(key) OVER (ROWS 2 PRECEDING) FROM s")
            .unwrap()
            .contains("monoid concat_keys(VARCHAR) -> VARCHAR")
    );
    let err = engine
        .query("SELECT concat_keys(key, v) OVER (ROWS 2 PRECEDING) FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("concat_keys takes (VARCHAR), got 2 arguments"),
        "{err}"
    );
    // SHOW FUNCTIONS lists it among the aggregates.
    let mut executed = engine.execute("SHOW FUNCTIONS LIKE 'CONCAT%'").unwrap();
    let Some(Executed::Functions(found)) = executed.pop() else {
        panic!("SHOW FUNCTIONS returns functions")
    };
    let listed: Vec<(&str, &str, &str)> = found
        .iter()
        .map(|f| (f.name.as_str(), f.kind, f.signature.as_str()))
        .collect();
    assert_eq!(
        listed[0],
        (
            "concat_keys",
            "user aggregate",
            "concat_keys(VARCHAR) -> VARCHAR"
        )
    );
    assert!(
        listed[1..].iter().all(|(_, kind, _)| *kind == "scalar"),
        "{listed:?}"
    );
    assert!(
        listed.iter().any(|(name, _, _)| *name == "concat"),
        "{listed:?}"
    );
    let err = engine
        .register_aggregate(
            "max",
            vec![ValueType::Utf8],
            OutputType::Scalar(ValueType::Utf8),
            ConcatKeys,
        )
        .unwrap_err();
    assert_eq!(err.to_string(), "'max' is a built-in aggregate");
    // Where no aggregate may stand, a user's is named as an aggregate too.
    let err = engine
        .query("SELECT key FROM s WHERE concat_keys(key) = 'a'")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("concat_keys is an aggregate, not allowed in WHERE"),
        "{err}"
    );
}

#[test]
fn scalar_functions_work_in_items_arguments_and_filters() {
    let out = run(
        "SELECT upper(key) AS k, abs(v - 4) AS dist, round(avg(v) OVER (ROWS 1 PRECEDING), 1) AS a, \
                max(abs(v - 4)) OVER (ROWS 1 PRECEDING) AS md, concat(key, '-', CAST(ts AS VARCHAR)) AS tag \
         FROM s WHERE length(key) = 1 GROUP BY key",
    );
    assert_eq!(strings(&out, "k")[0].as_deref(), Some("A"));
    assert_eq!(floats(&out, "dist"), some(&[1.0, 3.0, 1.0, 0.0, 2.0, 3.0]));
    assert_eq!(floats(&out, "a"), some(&[5.0, 1.0, 4.0, 3.5, 3.0, 4.0]));
    assert_eq!(floats(&out, "md"), some(&[1.0, 3.0, 1.0, 1.0, 2.0, 3.0]));
    assert_eq!(strings(&out, "tag")[0].as_deref(), Some("a-1000"));
    let (engine, _s) = engine_with_s();
    let err = engine
        .query("SELECT roundd(v) FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("unknown function 'roundd'; did you mean 'round'?"),
        "{err}"
    );
    // A wrong call names the function's form, not a bug in DataFusion.
    let err = engine
        .query("SELECT btrim(v) FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "btrim(DOUBLE) does not match any signature of btrim: expected btrim(str[, trim_str]) at line 1, column 8"
        ),
        "{err}"
    );
}

#[test]
fn a_float_cast_to_an_integer_rounds_halves_to_even() {
    // As PostgreSQL and DuckDB cast (arrow alone would truncate).
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM f (v DOUBLE, r REAL)")
        .unwrap();
    let q = engine
        .query(
            "SELECT CAST(v AS BIGINT) AS big, CAST(r AS INT) AS int, v::SMALLINT AS small, \
                    TRY_CAST(v AS INT) AS try, CAST(2.5e0 AS INT) AS constant, \
                    CAST(2.5 AS INT) AS decimal_constant FROM f",
        )
        .unwrap();
    engine
        .execute(
            "INSERT INTO f VALUES (1.7, 1.7), (-1.7, -1.5), (2.5, 2.5), (-0.5, -0.4), \
             (3.5, 0.5), (NULL, NULL)",
        )
        .unwrap();
    let out = q.recv().unwrap();
    let expected = vec![Some(2), Some(-2), Some(2), Some(0), Some(4), None];
    for column in ["big", "small", "try"] {
        assert_eq!(ints(&out, column), expected, "{column}");
    }
    assert_eq!(
        ints(&out, "int"),
        vec![Some(2), Some(-2), Some(2), Some(0), Some(0), None]
    );
    assert_eq!(ints(&out, "constant"), vec![Some(2); 6]);
    // 2.5 is an exact DECIMAL, whose halves round away from zero.
    assert_eq!(ints(&out, "decimal_constant"), vec![Some(3); 6]);
    // A constant inserted into an integer column is cast the same way: a
    // float's halves to even, a decimal's away from zero.
    engine.execute("CREATE STREAM i (n INT)").unwrap();
    let q = engine.query("SELECT n FROM i").unwrap();
    engine
        .execute("INSERT INTO i VALUES (1.7), (-2.5e0), (-2.5)")
        .unwrap();
    assert_eq!(
        ints(&q.recv().unwrap(), "n"),
        vec![Some(2), Some(-2), Some(-3)]
    );
}

mod cast_rounding {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any double within BIGINT's range, halves and near-halves included.
        #[test]
        fn a_cast_to_bigint_rounds_every_double_halves_to_even(
            values in prop::collection::vec(
                prop_oneof![
                    any::<i32>().prop_map(|i| f64::from(i) / 2.0),
                    -9.0e18..9.0e18f64,
                    -4.0..4.0f64,
                ],
                1..200,
            )
        ) {
            let engine = Engine::new();
            let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Float64, true)]));
            let s = engine
                .register_stream("f", schema.clone(), StreamOptions::default())
                .unwrap();
            let q = engine.query("SELECT CAST(v AS BIGINT) AS c FROM f").unwrap();
            let batch =
                RecordBatch::try_new(schema, vec![Arc::new(Float64Array::from(values.clone()))])
                    .unwrap();
            s.push(batch).unwrap();
            let expected: Vec<Option<i64>> =
                values.iter().map(|v| Some(v.round_ties_even() as i64)).collect();
            prop_assert_eq!(ints(&q.recv().unwrap(), "c"), expected);
        }
    }
}

#[test]
fn like_takes_any_escape_character() {
    let engine = Engine::new();
    engine.execute("CREATE STREAM t (k VARCHAR)").unwrap();
    let q = engine
        .query(
            "SELECT CAST(k LIKE '5!%%' ESCAPE '!' AS BIGINT) AS pct, \
                    CAST(k ILIKE 'A!_%' ESCAPE '!' AS BIGINT) AS under, \
                    CAST(k LIKE '%\\%' ESCAPE '!' AS BIGINT) AS backslash, \
                    CAST(k NOT LIKE 'x##' ESCAPE '#' AS BIGINT) AS not_hash, \
                    CAST(k LIKE '5\\%%' AS BIGINT) AS default_escape \
             FROM t",
        )
        .unwrap();
    engine
        .execute(r"INSERT INTO t VALUES ('5%'), ('50'), ('a_b'), ('ab'), ('c\'), ('x#')")
        .unwrap();
    let out = q.recv().unwrap();
    let n = |xs: &[i64]| xs.iter().map(|&x| Some(x)).collect::<Vec<_>>();
    assert_eq!(ints(&out, "pct"), n(&[1, 0, 0, 0, 0, 0]));
    assert_eq!(ints(&out, "under"), n(&[0, 0, 1, 0, 0, 0]));
    assert_eq!(ints(&out, "backslash"), n(&[0, 0, 0, 0, 1, 0]));
    assert_eq!(ints(&out, "not_hash"), n(&[1, 1, 1, 1, 1, 0]));
    assert_eq!(ints(&out, "default_escape"), n(&[1, 0, 0, 0, 0, 0]));
    // Another escape character needs a constant pattern; a pattern may not
    // end with it.
    let (engine, _s) = engine_with_s();
    for (sql, message) in [
        (
            "SELECT key LIKE key ESCAPE '!' FROM s",
            "not supported in continuous queries: ESCAPE '!' with a pattern that is not a \
             text constant (ESCAPE '\\' takes any pattern) at line 1, column 17",
        ),
        (
            "SELECT key LIKE 'a!' ESCAPE '!' FROM s",
            "the LIKE pattern 'a!' ends with its escape character '!' at line 1, column 17",
        ),
    ] {
        let err = engine.query(sql).unwrap_err().to_string();
        assert!(err.starts_with(message), "{sql}: {err}");
    }
}

#[test]
fn null_safe_comparison_bitwise_and_regex_operators() {
    let out = run(
        "SELECT CAST(v IS DISTINCT FROM 3 AS BIGINT) AS d, CAST(v IS NOT DISTINCT FROM 3 AS BIGINT) AS nd, \
                CAST((v > 4) IS UNKNOWN AS BIGINT) AS u, \
                ts & 1023 AS band, ts | 1 AS bor, ts << 1 AS shl, ts >> 10 AS shr, \
                CAST(key ~ '^a' AS BIGINT) AS m, CAST(key ~* '^A' AS BIGINT) AS mi, \
                CAST(key !~ 'a' AS BIGINT) AS nm, CAST(key !~* 'A' AS BIGINT) AS nmi, \
                sum(CAST(v IS DISTINCT FROM 3 AS BIGINT)) OVER (ROWS 9 PRECEDING) AS seen \
         FROM s GROUP BY key",
    );
    let n = |xs: &[i64]| xs.iter().map(|&x| Some(x)).collect::<Vec<_>>();
    assert_eq!(ints(&out, "d"), n(&[1, 1, 0, 1, 1, 1]));
    assert_eq!(ints(&out, "nd"), n(&[0, 0, 1, 0, 0, 0]));
    assert_eq!(ints(&out, "u"), n(&[0, 0, 0, 0, 0, 0]));
    assert_eq!(ints(&out, "band"), n(&[1000, 976, 952, 928, 664, 640]));
    assert_eq!(
        ints(&out, "bor"),
        n(&[1001, 2001, 3001, 4001, 15001, 16001])
    );
    assert_eq!(
        ints(&out, "shl"),
        n(&[2000, 4000, 6000, 8000, 30000, 32000])
    );
    assert_eq!(ints(&out, "shr"), n(&[0, 1, 2, 3, 14, 15]));
    let a_rows = n(&[1, 0, 1, 1, 1, 0]);
    let b_rows = n(&[0, 1, 0, 0, 0, 1]);
    assert_eq!(ints(&out, "m"), a_rows);
    assert_eq!(ints(&out, "mi"), a_rows);
    assert_eq!(ints(&out, "nm"), b_rows);
    assert_eq!(ints(&out, "nmi"), b_rows);
    // Per key, the rows whose v is not 3: a 1, 1, 2, 3; b 1, 2.
    assert_eq!(ints(&out, "seen"), n(&[1, 1, 1, 2, 3, 2]));
    // `^` is a power in PostgreSQL and DuckDB, XOR in MySQL: refused.
    let (engine, _s) = engine_with_s();
    let err = engine.query("SELECT v ^ 2 FROM s").unwrap_err().to_string();
    assert!(
        err.starts_with("not supported in continuous queries: the operator ^"),
        "{err}"
    );
}

#[test]
fn functions_sql_writes_with_keywords() {
    // Keys a, b; v 5, 1, 3, 4, 2, 7.
    let out = run(
        "SELECT CEIL(v / 2) AS c, FLOOR(v / 2) AS f, POSITION('b' IN key || 'b') AS p, \
                SUBSTRING(key || 'xyz' FROM 2 FOR 2) AS sb, SUBSTRING(key || 'xyz' FROM 3) AS s3, \
                TRIM(BOTH 'x' FROM 'x' || key || 'x') AS t, TRIM(LEADING 'x' FROM 'x' || key) AS l, \
                TRIM(TRAILING ' ' FROM key || '  ') AS r, \
                CAST(DATE '2024-01-02' AS VARCHAR) AS d, TIMESTAMP '2024-01-02 03:04:05' AS ts5, \
                max(CEIL(v / 2)) OVER (ROWS 1 PRECEDING) AS mc \
         FROM s WHERE POSITION('a' IN key) = 1 OR FLOOR(v) = 7 GROUP BY key",
    );
    assert_eq!(floats(&out, "c"), some(&[3.0, 2.0, 2.0, 1.0, 4.0]));
    assert_eq!(floats(&out, "f"), some(&[2.0, 1.0, 2.0, 1.0, 3.0]));
    assert_eq!(
        ints(&out, "p"),
        vec![Some(2), Some(2), Some(2), Some(2), Some(1)]
    );
    let text = |name: &str| {
        strings(&out, name)
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect::<Vec<_>>()
    };
    assert_eq!(text("sb"), ["xy", "xy", "xy", "xy", "xy"]);
    assert_eq!(text("s3"), ["yz", "yz", "yz", "yz", "yz"]);
    assert_eq!(text("t"), ["a", "a", "a", "a", "b"]);
    assert_eq!(text("l"), ["a", "a", "a", "a", "b"]);
    assert_eq!(text("r"), ["a", "a", "a", "a", "b"]);
    assert_eq!(text("d")[0], "2024-01-02");
    assert_eq!(
        ints(&out, "mc"),
        vec![Some(3), Some(3), Some(2), Some(2), Some(4)]
    );
    let out = run(
        "SELECT regexp_replace(key, '[ab]', 'k') AS rr, CAST(regexp_like(key, '^a') AS BIGINT) AS rl, \
                regexp_count(key || key, 'a') AS rc FROM s",
    );
    let text = |name: &str| {
        strings(&out, name)
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect::<Vec<_>>()
    };
    assert_eq!(text("rr"), ["k", "k", "k", "k", "k", "k"]);
    assert_eq!(
        ints(&out, "rc"),
        vec![Some(2), Some(0), Some(2), Some(2), Some(2), Some(0)]
    );
    assert_eq!(
        ints(&out, "rl"),
        vec![Some(1), Some(0), Some(1), Some(1), Some(1), Some(0)]
    );
    let (engine, _s) = engine_with_s();
    for (sql, what) in [
        ("SELECT CEIL(v TO DAY) FROM s", "CEIL(v TO DAY)"),
        ("SELECT key SIMILAR TO 'a%' FROM s", "SIMILAR TO"),
        (
            "SELECT DATE 'soon' FROM s",
            "the constant 'soon' cannot be read as DATE",
        ),
        (
            "SELECT key ~ 'a(' FROM s",
            "invalid regular expression 'a(': unclosed group",
        ),
        (
            "SELECT regexp_replace(key, '[', 'x') FROM s",
            "invalid regular expression '[': unclosed character class",
        ),
        // Text used as a number would fail on every row that is not one.
        (
            "SELECT key FROM s WHERE key > 5",
            "the text key is used as a BIGINT: write CAST(key AS BIGINT) to read it as one",
        ),
        (
            "SELECT coalesce(key, 5) FROM s",
            "the text key is used as a BIGINT",
        ),
        (
            "SELECT v FROM s WHERE key IN (1, 2)",
            "the text key is used as a BIGINT",
        ),
        (
            "SELECT date_trunc('minute', key) FROM s",
            "the text key is used as a TIMESTAMP",
        ),
        // A constant the function refuses whatever the rows.
        (
            "SELECT digest(key, 'sha999') FROM s",
            "digest: There is no built-in digest algorithm named 'sha999'",
        ),
        (
            "SELECT date_trunc('fortnight', CAST(ts AS TIMESTAMP)) FROM s",
            "date_trunc: Unsupported date_trunc granularity: 'fortnight'",
        ),
        (
            "SELECT date_bin(INTERVAL '0 seconds', CAST(ts AS TIMESTAMP)) FROM s",
            "date_bin: DATE_BIN stride must be non-zero",
        ),
        (
            "SELECT make_date(2026, 13, 1) FROM s",
            "make_date: Month value '13' is out of range",
        ),
    ] {
        let err = engine.query(sql).unwrap_err().to_string();
        assert!(err.contains(what), "{sql}: {err}");
        assert!(err.contains("at line 1, column "), "{sql}: {err}");
    }
}

#[test]
fn a_cast_to_decimal_keeps_its_scale() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT CAST(v / 3 AS DECIMAL(10, 2)) AS cents, v::NUMERIC(5) AS whole, \
                    CAST(v / 3 AS DECIMAL) AS plain, CAST(v * 100 AS DECIMAL(3, 1)) AS narrow, \
                    max(CAST(v / 3 AS DECIMAL(10, 1))) OVER (ROWS 1 PRECEDING) AS m, \
                    DECIMAL(5, 1) '2.25' AS typed FROM s",
        )
        .unwrap();
    s.push(batch(&[
        (1, Some("a"), Some(5.0)),
        (2, Some("a"), Some(2.5)),
    ]))
    .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(
        out.schema().field(0).data_type(),
        &DataType::Decimal128(10, 2)
    );
    assert_eq!(floats(&out, "cents"), some(&[1.67, 0.83]));
    assert_eq!(floats(&out, "whole"), some(&[5.0, 3.0]));
    // A typed constant is a CAST of its text.
    assert_eq!(
        out.schema().field(5).data_type(),
        &DataType::Decimal128(5, 1)
    );
    // DECIMAL without a precision is DOUBLE, as in a stream's columns.
    assert_eq!(floats(&out, "plain"), some(&[5.0 / 3.0, 2.5 / 3.0]));
    // 500.0 and 250.0 do not fit three digits with one after the point.
    assert_eq!(null_count(&out, "narrow"), 2);
    // min and max keep the argument's decimal type.
    assert_eq!(
        out.schema().field(4).data_type(),
        &DataType::Decimal128(10, 1)
    );
    assert_eq!(floats(&out, "m"), some(&[1.7, 1.7]));
    let err = engine
        .query("SELECT CAST(v AS DECIMAL(50, 2)) FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("DECIMAL(50,2): a DECIMAL's precision is 1 to 38"),
        "{err}"
    );
}

#[test]
fn an_expression_that_fails_whatever_the_rows_is_refused() {
    let (engine, s) = engine_with_s();
    for (sql, expected) in [
        (
            "SELECT ts, 1 / 0 AS x FROM s",
            "1 / 0 cannot be computed: division by zero at line 1, column 12",
        ),
        (
            "SELECT 9223372036854775807 + 1 FROM s",
            "9223372036854775807 + 1 cannot be computed: the result is out of range for BIGINT \
             at line 1, column 8",
        ),
        // (sqlparser places a negation at its operand.)
        (
            "SELECT -(-9223372036854775807 - 1) - 1 FROM s",
            "-(-9223372036854775807 - 1) cannot be computed: the result is out of range for \
             BIGINT at line 1, column 11",
        ),
        (
            "SELECT - -9223372036854775808 FROM s",
            "-(-9223372036854775808) cannot be computed: the result is out of range for \
             BIGINT at line 1, column 11",
        ),
        // Constant operands are computed first, so the failure is found
        // wherever it sits.
        (
            "SELECT ts FROM s WHERE v > 2 * (5 % (3 - 3))",
            "5 % (3 - 3) cannot be computed: division by zero at line 1, column 33",
        ),
        // (sqlparser places a CAST at its operand.)
        (
            "SELECT CAST(1 AS DECIMAL(10, 2)) % 0 FROM s",
            "CAST(1 AS DECIMAL(10,2)) % 0 cannot be computed: division by zero at line 1, column 13",
        ),
    ] {
        let err = engine.query(sql).unwrap_err();
        assert!(matches!(err, EngineError::Sql(_)), "{sql}: {err:?}");
        assert_eq!(err.to_string().lines().next(), Some(expected), "{sql}");
    }
    // Constant arithmetic that succeeds is folded into one constant.
    let plan = engine
        .explain("SELECT ts FROM s WHERE v > 1 + 2 * 3")
        .unwrap();
    assert!(plan.contains("Filter: v > 7\n"), "{plan}");
    // Floats follow IEEE 754, as on the rows; so does a division with a
    // DECIMAL, which is computed in DOUBLE as in DuckDB.
    let q = engine.query("SELECT 1.0 / 0 AS inf FROM s").unwrap();
    s.push(batch(&[(1, Some("a"), Some(1.0))])).unwrap();
    assert_eq!(floats(&q.recv().unwrap(), "inf"), some(&[f64::INFINITY]));
    // One that fails on some rows only is NULL on those rows.
    let q = engine
        .query("SELECT 10 / CAST(v AS BIGINT) AS x FROM s")
        .unwrap();
    s.push(batch(&[
        (1, Some("a"), Some(0.0)),
        (2, Some("a"), Some(5.0)),
    ]))
    .unwrap();
    assert_eq!(ints(&q.recv().unwrap(), "x"), [None, Some(2)]);
}

#[test]
fn whole_numbers_past_bigint_stay_exact() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT -9223372036854775808 AS least, -9223372036854775809 AS below, \
                    99999999999999999999999999999999999999 AS widest, \
                    1000000000000000000000000000000000000000 AS past, \
                    sum(9223372036854775808) OVER (ROWS 1 PRECEDING) AS twice, \
                    lag(ts, 1, -9223372036854775808) OVER (ROWS 1 PRECEDING) AS before FROM s",
        )
        .unwrap();
    s.push(batch(&[
        (1, Some("a"), Some(1.0)),
        (2, Some("a"), Some(2.0)),
    ]))
    .unwrap();
    let out = q.recv().unwrap();
    let types: Vec<DataType> = out
        .schema()
        .fields()
        .iter()
        .map(|f| f.data_type().clone())
        .collect();
    assert_eq!(
        types,
        [
            DataType::Int64,
            DataType::Decimal128(19, 0),
            DataType::Decimal128(38, 0),
            DataType::Float64,
            DataType::Decimal128(38, 0),
            DataType::Int64,
        ]
    );
    assert_eq!(ints(&out, "least"), [Some(i64::MIN); 2]);
    assert_eq!(decimals(&out, "below"), [Some(i64::MIN as i128 - 1); 2]);
    assert_eq!(decimals(&out, "widest"), [Some(10_i128.pow(38) - 1); 2]);
    assert_eq!(floats(&out, "past"), [Some(1e39); 2]);
    assert_eq!(decimals(&out, "twice"), [Some(1 << 63), Some(1 << 64)]);
    assert_eq!(ints(&out, "before"), [Some(i64::MIN), Some(1)]);
    for (sql, what) in [
        (
            "SELECT 1e400 FROM s",
            "the number 1e400 is out of range for DOUBLE",
        ),
        (
            "SELECT -1e400 FROM s",
            "the number -1e400 is out of range for DOUBLE",
        ),
        ("SELECT -key FROM s", "cannot negate key, a VARCHAR"),
    ] {
        let err = engine.query(sql).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{what} at line 1, column ")),
            "{err}"
        );
    }
}

#[test]
fn numbers_written_with_a_point_are_exact_decimals() {
    // As in PostgreSQL, DuckDB, Flink and Spark: `0.1` is DECIMAL(1, 1),
    // not the double nearest to it, so constant arithmetic is exact.
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT 0.1 + 0.2 = 0.3 AS exact, 0.1 AS tenth, -2.50 AS kept_scale, .5 AS half, \
                    1e-1 AS exponent, ts * 1.5 AS scaled, v * 0.1 AS float_times, \
                    sum(0.1) OVER (ROWS 9 PRECEDING) AS tenths, \
                    lag(v, 1, 0.5) OVER (ROWS 1 PRECEDING) AS before, 1 / 3.0 AS third, \
                    greatest(v, 1.5) AS at_least FROM s",
        )
        .unwrap();
    s.push(batch(&[
        (1, Some("a"), Some(1.0)),
        (2, Some("a"), Some(2.0)),
        (3, Some("a"), Some(3.0)),
    ]))
    .unwrap();
    let out = q.recv().unwrap();
    let type_of = |name: &str| {
        out.schema()
            .field_with_name(name)
            .unwrap()
            .data_type()
            .clone()
    };
    assert_eq!(type_of("tenth"), DataType::Decimal128(1, 1));
    assert_eq!(type_of("kept_scale"), DataType::Decimal128(3, 2));
    assert_eq!(type_of("half"), DataType::Decimal128(1, 1));
    assert_eq!(type_of("exponent"), DataType::Float64);
    assert_eq!(type_of("float_times"), DataType::Float64);
    assert_eq!(ints(&out, "exact"), [Some(1); 3]);
    assert_eq!(decimals(&out, "tenth"), [Some(1); 3]);
    assert_eq!(decimals(&out, "kept_scale"), [Some(-250); 3]);
    assert_eq!(decimals(&out, "scaled"), [Some(15), Some(30), Some(45)]);
    assert_eq!(decimals(&out, "tenths"), [Some(1), Some(2), Some(3)]);
    assert_eq!(floats(&out, "before"), some(&[0.5, 1.0, 2.0]));
    // A division with a DECIMAL is a DOUBLE, as in DuckDB (an exact
    // quotient would keep only four more digits than the dividend), and a
    // DECIMAL beside a DOUBLE in a call is read as a DOUBLE.
    assert_eq!(floats(&out, "third"), some(&[1.0 / 3.0; 3]));
    assert_eq!(type_of("at_least"), DataType::Float64);
    assert_eq!(floats(&out, "at_least"), some(&[1.5, 2.0, 3.0]));
    // A decimal constant beside a DOUBLE is read as a DOUBLE once, when the
    // query is planned, not on every row.
    let plan = engine.explain("SELECT ts FROM s WHERE v > 0.5").unwrap();
    assert!(plan.contains("Filter: v > 0.5\n"), "{plan}");
    // A call of constants is computed once, at plan time: DataFusion's ceil
    // of a constant DECIMAL panics when an IN list is compiled over no rows.
    let plan = engine
        .explain("SELECT ts FROM s WHERE v > ceil(4.62) AND key = upper('a')")
        .unwrap();
    assert!(plan.contains("Filter: v > 5 AND key = 'A'\n"), "{plan}");
    // (And DataFusion's own rewrite of concat('', '') is a concat() it
    // then refuses.)
    let q = engine
        .query(
            "SELECT 5e0 IN (1, CASE WHEN ts > 0 THEN ceil(4.62) ELSE ts END) AS listed, \
                    concat('', '') AS empty FROM s",
        )
        .unwrap();
    s.push(batch(&[(1, Some("a"), Some(1.0))])).unwrap();
    let out = q.recv().unwrap();
    assert_eq!(ints(&out, "listed"), [Some(1)]);
    assert_eq!(strings(&out, "empty"), [Some(String::new())]);
    // A DECIMAL column meets a DOUBLE as a DOUBLE too, whatever its size.
    engine
        .execute("CREATE STREAM p (price DECIMAL(10, 2), x DOUBLE)")
        .unwrap();
    let q = engine
        .query(
            "SELECT price < x AS below, price = 2.5e0 AS equal, price IN (x, 1.0) AS listed, \
                    x BETWEEN price AND 1e30 AS between FROM p",
        )
        .unwrap();
    engine
        .execute("INSERT INTO p VALUES (2.50, 1e20), (1.00, -1e300)")
        .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(ints(&out, "below"), [Some(1), Some(0)]);
    assert_eq!(ints(&out, "equal"), [Some(1), Some(0)]);
    assert_eq!(ints(&out, "listed"), [Some(0), Some(1)]);
    assert_eq!(ints(&out, "between"), [Some(1), Some(0)]);
}

#[test]
fn an_integer_meets_a_decimal_constant_as_an_integer() {
    // `ts > 2500.5` is `ts >= 2501`, which says the same for every integer,
    // rather than a DECIMAL cast of `ts` on every row.
    let (engine, _s) = engine_with_s();
    let plan = engine
        .explain("SELECT ts FROM s WHERE ts > 2.5 AND -0.5 < ts")
        .unwrap();
    assert!(plan.contains("Filter: ts >= 3 AND ts >= 0\n"), "{plan}");
    let plan = engine
        .explain("SELECT ts FROM s WHERE ts BETWEEN 1.5 AND 9")
        .unwrap();
    assert!(plan.contains("Filter: ts BETWEEN 2 AND 9\n"), "{plan}");
    // ts: 1000, 2000, 3000, 4000, 15000, 16000.
    let out = run(
        "SELECT ts > 2500.5 AS gt, ts >= 2500.5 AS ge, ts < 3000.5 AS lt, ts <= 3000.5 AS le, \
                ts = 3000.0 AS eq, ts = 3000.5 AS never, ts <> 3000.5 AS always, \
                15000.5 < ts AS flipped, ts > -1.5 AS negative, \
                CAST(ts AS INT) < 99999999999.5 AS past_int, \
                ts BETWEEN 999.5 AND 3000.5 AS inside, \
                ts NOT BETWEEN 1000.5 AND 15000 AS outside FROM s",
    );
    for (name, expected) in [
        ("gt", [0, 0, 1, 1, 1, 1]),
        ("ge", [0, 0, 1, 1, 1, 1]),
        ("lt", [1, 1, 1, 0, 0, 0]),
        ("le", [1, 1, 1, 0, 0, 0]),
        ("eq", [0, 0, 1, 0, 0, 0]),
        ("never", [0; 6]),
        ("always", [1; 6]),
        ("flipped", [0, 0, 0, 0, 0, 1]),
        ("negative", [1; 6]),
        ("past_int", [1; 6]),
        ("inside", [1, 1, 1, 0, 0, 0]),
        ("outside", [1, 0, 0, 0, 0, 1]),
    ] {
        assert_eq!(ints(&out, name), expected.map(Some), "{name}");
    }
}

/// The unscaled values of decimal column `name`.
fn decimals(batch: &RecordBatch, name: &str) -> Vec<Option<i128>> {
    let column = batch.column_by_name(name).expect("column");
    column
        .as_primitive::<arrow_array::types::Decimal128Type>()
        .iter()
        .collect()
}

#[test]
fn decimal_columns_aggregate_exactly() {
    let engine = Engine::new();
    let created = engine
        .execute("CREATE STREAM p (k VARCHAR, price DECIMAL(10, 2), big NUMERIC(38))")
        .unwrap();
    let Some(Executed::StreamCreated(s, true)) = created.into_iter().next() else {
        panic!("no stream")
    };
    let q = engine
        .query(
            "SELECT price, sum(price) OVER w AS total, avg(price) OVER w AS mean, \
                    min(price) OVER w AS low, max(price) OVER w AS high, \
                    last_value(price) OVER w AS last, count(price) OVER w AS n, \
                    lag(price) OVER (ROWS 1 PRECEDING) AS before, \
                    sum(big) OVER w AS big_total, sum(price * 3) OVER w AS tripled \
             FROM p WINDOW w AS (ROWS 2 PRECEDING)",
        )
        .unwrap();
    let cents = |v: &[Option<i128>]| {
        arrow_array::Decimal128Array::from(v.to_vec())
            .with_precision_and_scale(10, 2)
            .unwrap()
    };
    let near_limit = 10i128.pow(38) - 1;
    let b = RecordBatch::try_new(
        s.schema(),
        vec![
            Arc::new(StringArray::from(vec!["a"; 5])),
            Arc::new(cents(&[Some(110), Some(220), None, Some(330), Some(-1)])),
            Arc::new(
                arrow_array::Decimal128Array::from(vec![
                    Some(near_limit),
                    Some(1),
                    Some(-near_limit),
                    Some(5),
                    Some(6),
                ])
                .with_precision_and_scale(38, 0)
                .unwrap(),
            ),
        ],
    )
    .unwrap();
    s.push(b).unwrap();
    let out = q.recv().unwrap();
    let types: Vec<DataType> = [
        "price",
        "total",
        "mean",
        "low",
        "last",
        "before",
        "big_total",
    ]
    .iter()
    .map(|c| out.schema().field_with_name(c).unwrap().data_type().clone())
    .collect();
    assert_eq!(
        types,
        [
            DataType::Decimal128(10, 2),
            DataType::Decimal128(38, 2),
            DataType::Float64,
            DataType::Decimal128(10, 2),
            DataType::Decimal128(10, 2),
            DataType::Decimal128(10, 2),
            DataType::Decimal128(38, 0),
        ]
    );
    // 1.10 + 2.20 is 3.30, not the 3.3000000000000003 of their doubles.
    assert_eq!(
        decimals(&out, "total"),
        [Some(110), Some(330), Some(330), Some(550), Some(329)]
    );
    assert_eq!(floats(&out, "mean"), some(&[1.1, 1.65, 1.65, 2.75, 1.645]));
    assert_eq!(
        decimals(&out, "low"),
        [Some(110), Some(110), Some(110), Some(220), Some(-1)]
    );
    assert_eq!(
        decimals(&out, "high"),
        [Some(110), Some(220), Some(220), Some(330), Some(330)]
    );
    assert_eq!(
        decimals(&out, "last"),
        [Some(110), Some(220), None, Some(330), Some(-1)]
    );
    assert_eq!(
        ints(&out, "n"),
        vec![Some(1), Some(2), Some(2), Some(2), Some(2)]
    );
    assert_eq!(decimals(&out, "before")[1], Some(110));
    assert_eq!(
        decimals(&out, "tripled"),
        [Some(330), Some(990), Some(990), Some(1650), Some(987)]
    );
    // 10^38 - 1 plus 1 leaves DECIMAL(38): NULL, counted; the window then
    // sums back into range.
    assert_eq!(
        decimals(&out, "big_total"),
        [
            Some(near_limit),
            None,
            Some(1),
            Some(-near_limit + 6),
            Some(-near_limit + 11)
        ]
    );
    let stats = q.stats();
    assert_eq!(stats.failed_results, 1, "{stats:?}");
    assert!(
        stats
            .last_error
            .as_deref()
            .unwrap_or("")
            .contains("sum overflowed DECIMAL(38)"),
        "{stats:?}"
    );
}

#[test]
fn ceil_floor_and_trunc_of_a_decimal_keep_the_digits_they_have() {
    // As in PostgreSQL and DuckDB: a DECIMAL(3, 2) rounds to a DECIMAL(3, 0)
    // (or DECIMAL(3, n) for trunc(x, n)), and 9.99 rounds up to 10 although
    // 10.00 does not fit its type.
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM p (price DECIMAL(3, 2))")
        .unwrap();
    let q = engine
        .query(
            "SELECT ceil(price) AS up, ceiling(price) AS also_up, floor(price) AS down, \
                    trunc(price) AS whole, trunc(price, 1) AS tenths, trunc(price, -1) AS tens, \
                    ceil(4.62) AS constant \
             FROM p",
        )
        .unwrap();
    engine
        .execute("INSERT INTO p VALUES (4.62), (-4.62), (9.99), (-9.99), (NULL)")
        .unwrap();
    let out = q.recv().unwrap();
    for (name, scale) in [
        ("up", 0),
        ("down", 0),
        ("whole", 0),
        ("tenths", 1),
        ("tens", 0),
        ("constant", 0),
    ] {
        let field = out.schema().field_with_name(name).unwrap().clone();
        assert_eq!(field.data_type(), &DataType::Decimal128(3, scale), "{name}");
    }
    assert_eq!(
        decimals(&out, "up"),
        [Some(5), Some(-4), Some(10), Some(-9), None]
    );
    assert_eq!(decimals(&out, "also_up"), decimals(&out, "up"));
    assert_eq!(
        decimals(&out, "down"),
        [Some(4), Some(-5), Some(9), Some(-10), None]
    );
    assert_eq!(
        decimals(&out, "whole"),
        [Some(4), Some(-4), Some(9), Some(-9), None]
    );
    assert_eq!(
        decimals(&out, "tenths"),
        [Some(46), Some(-46), Some(99), Some(-99), None]
    );
    assert_eq!(
        decimals(&out, "tens"),
        [Some(0), Some(0), Some(0), Some(0), None]
    );
    assert_eq!(decimals(&out, "constant"), [Some(5); 5]);
}

#[test]
fn decimals_reach_every_function_and_insert_rounds_to_scale() {
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM p (k VARCHAR, price DECIMAL(10, 2))")
        .unwrap();
    let q = engine
        .query(
            "SELECT price, var_pop(price) OVER w AS var, approx_median(price) OVER w AS med, \
                    m4(price) OVER w AS m4, argmax(price, k) OVER w AS arg, \
                    approx_count_distinct(price) OVER w AS distinct_prices, \
                    price - lag(price, 1, 1.005) OVER (ROWS 1 PRECEDING) AS change, \
                    bloom_contains(price, 2.26) OVER w AS seen \
             FROM p WINDOW w AS (ROWS 9 PRECEDING)",
        )
        .unwrap();
    engine
        .execute("INSERT INTO p VALUES ('a', 1.5), ('b', 2.255), ('c', 1.50)")
        .unwrap();
    let out = q.recv().unwrap();
    // 2.255 rounds half away from zero to the column's two digits.
    assert_eq!(decimals(&out, "price"), [Some(150), Some(226), Some(150)]);
    let var = floats(&out, "var")[1].unwrap();
    assert!((var - 0.1444).abs() < 1e-12, "{var}");
    // A sketch's answer, within its 1 % accuracy.
    let med = floats(&out, "med")[0].unwrap();
    assert!((med - 1.5).abs() < 0.015, "{med}");
    assert_eq!(
        strings(&out, "arg"),
        [Some("a".to_string()), Some("b".into()), Some("b".into())]
    );
    assert_eq!(ints(&out, "distinct_prices"), [Some(1), Some(2), Some(2)]);
    // Decimal arithmetic on lag: 2.26 - 1.50 is 0.76 exactly; the default
    // 1.005 takes the column's scale as it was written (1.01).
    assert_eq!(decimals(&out, "change"), [Some(49), Some(76), Some(-76)]);
    let seen: Vec<Option<bool>> = out
        .column_by_name("seen")
        .unwrap()
        .as_boolean()
        .iter()
        .collect();
    assert_eq!(seen, [Some(false), Some(true), Some(true)]);
    let m4 = out
        .column_by_name("m4")
        .unwrap()
        .as_any()
        .downcast_ref::<StructArray>()
        .unwrap();
    assert_eq!(m4.column(1).data_type(), &DataType::Decimal128(10, 2));
    let max = m4
        .column(1)
        .as_primitive::<arrow_array::types::Decimal128Type>();
    assert_eq!(max.value(2), 226);
}

#[test]
fn max_by_and_min_by_are_argmax_and_argmin_with_the_arguments_swapped() {
    let out = run(
        "SELECT max_by(ts, v) OVER w AS mb, argmax(v, ts) OVER w AS am, \
                min_by(key, v) OVER w AS nb, argmin(v, key) OVER w AS an, \
                arg_max(ts, v) OVER w AS duck_am, arg_min(key, v) OVER w AS duck_an \
         FROM s WINDOW w AS (ROWS 2 PRECEDING)",
    );
    // v: 5, 1, 3, 4, 2, 7 at ts 1 s, 2 s, 3 s, 4 s, 15 s, 16 s.
    assert_eq!(
        ints(&out, "mb"),
        vec![
            Some(1_000),
            Some(1_000),
            Some(1_000),
            Some(4_000),
            Some(4_000),
            Some(16_000)
        ]
    );
    assert_eq!(ints(&out, "mb"), ints(&out, "am"));
    assert_eq!(strings(&out, "nb"), strings(&out, "an"));
    // DuckDB's and ClickHouse's arg_max and arg_min take max_by's order.
    assert_eq!(ints(&out, "mb"), ints(&out, "duck_am"));
    assert_eq!(strings(&out, "nb"), strings(&out, "duck_an"));
    assert_eq!(
        out.schema().field_with_name("mb").unwrap().data_type(),
        &DataType::Int64
    );
}

#[test]
fn arg_max_skips_null_values_where_max_by_returns_them() {
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM a (name VARCHAR, score BIGINT)")
        .unwrap();
    let q = engine
        .query(
            "SELECT max_by(name, score) OVER w AS max_by, arg_max(name, score) OVER w AS arg_max, \
                    arg_max_null(name, score) OVER w AS arg_max_null, \
                    arg_min(name, score) OVER w AS arg_min, min_by(name, score) OVER w AS min_by \
             FROM a WINDOW w AS (ROWS 2 PRECEDING)",
        )
        .unwrap();
    engine
        .execute("INSERT INTO a VALUES ('ann', 3), (NULL, 9), ('cy', NULL), (NULL, 1)")
        .unwrap();
    let out = q.recv().unwrap();
    let some = |s: &str| Some(s.to_string());
    assert_eq!(strings(&out, "max_by"), vec![some("ann"), None, None, None]);
    assert_eq!(strings(&out, "arg_max_null"), strings(&out, "max_by"));
    assert_eq!(
        strings(&out, "arg_max"),
        vec![some("ann"), some("ann"), some("ann"), None]
    );
    assert_eq!(
        strings(&out, "arg_min"),
        vec![some("ann"), some("ann"), some("ann"), None]
    );
    assert_eq!(
        strings(&out, "min_by"),
        vec![some("ann"), some("ann"), some("ann"), None]
    );
}

#[test]
fn bool_and_bool_or_and_count_if_skip_nulls() {
    let out = run(
        "SELECT v > 2 AS big, bool_and(v > 2) OVER (ROWS 1 PRECEDING) AS every_big, \
                every(v > 2) OVER (ROWS 1 PRECEDING) AS also, \
                bool_or(v > 4) OVER (ROWS 1 PRECEDING) AS some_huge, \
                count_if(v > 2) OVER (ROWS 1 PRECEDING) AS big_ones FROM s GROUP BY key",
    );
    let column = |name: &str| -> Vec<Option<bool>> {
        out.column_by_name(name)
            .unwrap()
            .as_boolean()
            .iter()
            .collect()
    };
    // a: 5 | 5, 3 | 3, 4 | 4, 2 ; b: 1 | 1, 7
    assert_eq!(
        column("every_big"),
        [
            Some(true),
            Some(false),
            Some(true),
            Some(true),
            Some(false),
            Some(false)
        ]
    );
    assert_eq!(column("also"), column("every_big"));
    assert_eq!(
        column("some_huge"),
        [
            Some(true),
            Some(false),
            Some(true),
            Some(false),
            Some(false),
            Some(true)
        ]
    );
    let (engine, _s) = engine_with_s();
    assert_eq!(
        ints(&out, "big_ones"),
        vec![Some(1), Some(0), Some(2), Some(2), Some(1), Some(1)]
    );
    let err = engine
        .query("SELECT bool_or(v) OVER (ROWS 1 PRECEDING) FROM s")
        .unwrap_err()
        .to_string();
    assert!(err.contains("bool_or(DOUBLE) does not match"), "{err}");
}

#[test]
fn hash_functions_digest_each_row() {
    let out = run("SELECT md5(key) AS m, sha256(key) AS s, digest(key, 'blake3') AS b FROM s");
    assert_eq!(
        strings(&out, "m")[0].as_deref(),
        Some("0cc175b9c0f1b6a831c399e269772661")
    );
    let sha = out.column_by_name("s").unwrap();
    assert_eq!(sha.data_type(), &DataType::Binary);
    let first = sha.as_binary::<i32>().value(0);
    assert_eq!(
        first.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
    );
    assert_eq!(out.column_by_name("b").unwrap().null_count(), 0);
}

#[test]
fn functions_that_only_run_rewritten_are_rewritten() {
    // coalesce and nvl2 become CASE, arrow_cast a CAST, as DataFusion's
    // optimizer would rewrite them; called as they are, they fail.
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT coalesce(v, -1) AS c, nvl2(v, 'y', 'n') AS n, arrow_cast(ts, 'Int32') AS t, \
                    sum(coalesce(v, 100)) OVER (ROWS 1 PRECEDING) AS s FROM s",
        )
        .unwrap();
    s.push(batch(&[
        (1_000, Some("a"), Some(1.5)),
        (2_000, Some("a"), None),
    ]))
    .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(floats(&out, "c"), some(&[1.5, -1.0]));
    assert_eq!(
        strings(&out, "n"),
        vec![Some("y".to_string()), Some("n".to_string())]
    );
    assert_eq!(
        out.column_by_name("t").unwrap().data_type(),
        &DataType::Int32
    );
    assert_eq!(floats(&out, "s"), some(&[1.5, 101.5]));
    assert_eq!(q.stats().failed_results, 0);
    // A rewrite that fails is the query's error, pointing at the function.
    let err = engine
        .query("SELECT arrow_cast(ts, 'Nope') AS t FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("arrow_cast: ") && err.contains("at line 1, column 8"),
        "{err}"
    );
}

#[test]
fn date_functions_bucket_event_time() {
    use arrow_array::TimestampMillisecondArray;
    let engine = Engine::new();
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
            false,
        ),
        Field::new("v", DataType::Float64, true),
    ]));
    let s = engine
        .register_stream(
            "t",
            schema.clone(),
            StreamOptions::default().event_time("ts"),
        )
        .unwrap();
    // Per-minute buckets as a partition key: a tumbling count.
    let q = engine
        .query(
            "SELECT date_part('second', ts) AS sec, EXTRACT(SECOND FROM ts) AS sec2, \
             count(*) OVER (PARTITION BY date_trunc('minute', ts)) AS in_minute, \
             sum(v) OVER (PARTITION BY date_bin(INTERVAL '30' SECOND, ts)) AS half \
             FROM t",
        )
        .unwrap();
    let minute = 60_000;
    let ts = [
        5_000,
        45_000,
        minute + 10_000,
        minute + 20_000,
        minute + 40_000,
    ];
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(TimestampMillisecondArray::from(ts.to_vec())),
            Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0, 4.0, 5.0])),
        ],
    )
    .unwrap();
    s.push(b).unwrap();
    let out = q.recv().unwrap();
    assert_eq!(floats(&out, "sec"), some(&[5.0, 45.0, 10.0, 20.0, 40.0]));
    assert_eq!(floats(&out, "sec2"), floats(&out, "sec"));
    assert_eq!(
        ints(&out, "in_minute"),
        vec![Some(1), Some(2), Some(1), Some(2), Some(3)]
    );
    assert_eq!(floats(&out, "half"), some(&[1.0, 2.0, 3.0, 7.0, 5.0]));
    // Fixed intervals in arithmetic; calendar ones are refused.
    assert!(
        engine
            .query("SELECT ts - INTERVAL '1' HOUR AS earlier FROM t")
            .is_ok()
    );
    let err = engine
        .query("SELECT ts - INTERVAL '1' MONTH FROM t")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("an interval here is a fixed length of time") && err.contains("column 22"),
        "{err}"
    );
    // A fixed one too long for an interval's nanoseconds says so.
    let err = engine
        .query("SELECT ts - INTERVAL '1000000' DAY FROM t")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("longer than an interval of time can be (about 292 years)"),
        "{err}"
    );
}

/// An engine with the stream `t (ts TIMESTAMP, k VARCHAR)` under `options`.
fn engine_with_timestamps(options: StreamOptions) -> (Engine, sliq::Stream) {
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
            true,
        ),
        Field::new("k", DataType::Utf8, true),
    ]));
    let engine = Engine::new();
    let s = engine.register_stream("t", schema, options).unwrap();
    (engine, s)
}

/// A batch of [`engine_with_timestamps`]'s stream: epoch milliseconds and keys.
fn timestamps_and_keys(ts: Vec<Option<i64>>, k: Vec<&str>) -> RecordBatch {
    let (ts, k) = (
        arrow_array::TimestampMillisecondArray::from(ts),
        StringArray::from(k),
    );
    RecordBatch::try_from_iter([
        ("ts", Arc::new(ts) as arrow_array::ArrayRef),
        ("k", Arc::new(k) as arrow_array::ArrayRef),
    ])
    .unwrap()
}

#[test]
fn a_timestamp_as_text_is_written_as_postgresql_and_duckdb_write_it() {
    let (engine, s) = engine_with_timestamps(StreamOptions::default());
    // Every way a TIMESTAMP becomes text: a CAST, `::`, TRY_CAST, `||`, a
    // function's text argument, a grouping key and a filter.
    let q = engine
        .query(
            "SELECT CAST(ts AS VARCHAR) AS c, ts::TEXT AS colon, TRY_CAST(ts AS VARCHAR) AS try, \
                    k || ts AS joined, concat(ts, '!') AS f, md5(k) || ts AS view, \
                    CAST(TIMESTAMP '2024-02-29 12:34:56.120' AS VARCHAR) AS constant, \
                    count(*) OVER (PARTITION BY CAST(ts AS VARCHAR)) AS n \
             FROM t WHERE CAST(ts AS VARCHAR) LIKE '2024-%'",
        )
        .unwrap();
    s.push(timestamps_and_keys(
        vec![
            Some(1_704_103_200_000),
            Some(1_704_103_204_500),
            None,
            Some(1_704_103_200_000),
            Some(-1),
        ],
        vec!["at ", "at ", "x", "again ", "y"],
    ))
    .unwrap();
    let out = q.recv().unwrap();
    let text = |name: &str| {
        strings(&out, name)
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
    };
    let written = [
        "2024-01-01 10:00:00",
        "2024-01-01 10:00:04.5",
        "2024-01-01 10:00:00",
    ];
    assert_eq!(text("c"), written);
    assert_eq!(text("colon"), written);
    assert_eq!(text("try"), written);
    assert_eq!(
        text("joined"),
        [
            "at 2024-01-01 10:00:00",
            "at 2024-01-01 10:00:04.5",
            "again 2024-01-01 10:00:00"
        ]
    );
    assert_eq!(text("f")[1], "2024-01-01 10:00:04.5!");
    // md5 gives a string view, and the timestamp is cast to one.
    assert!(
        text("view")[1].ends_with("2024-01-01 10:00:04.5"),
        "{:?}",
        text("view")
    );
    assert_eq!(text("constant"), ["2024-02-29 12:34:56.12"; 3]);
    assert_eq!(ints(&out, "n"), vec![Some(1), Some(1), Some(2)]);
    // EXPLAIN and messages write the call as the CAST it is.
    let plan = engine
        .explain("SELECT k FROM t WHERE CAST(ts AS VARCHAR) > '2024'")
        .unwrap();
    assert!(
        plan.contains("Filter: CAST(ts AS VARCHAR) > '2024'"),
        "{plan}"
    );
}

#[test]
fn the_longest_gap_between_events_is_a_window_aggregate() {
    // A stall detector: each key's gaps between events, and the longest and
    // shortest of them over the last minute of event time.
    let (engine, s) = engine_with_timestamps(StreamOptions::default().event_time("ts"));
    let q = engine
        .query(
            "SELECT k, max(gap) OVER (RANGE '1m') AS worst, min(gap) OVER (ROWS 9 PRECEDING) AS best, \
                    CAST(max(gap) OVER (RANGE '1m') AS VARCHAR) AS worst_text, \
                    lag(gap) OVER (ROWS 1 PRECEDING) AS previous, \
                    arg_max(ts, gap) OVER (ROWS 9 PRECEDING) AS after, \
                    sum(gap) OVER (ROWS 9 PRECEDING) AS total \
             FROM (SELECT ts, k, ts - lag(ts) OVER (ROWS 1 PRECEDING) AS gap FROM t GROUP BY k) \
             WHERE gap IS NOT NULL GROUP BY k",
        )
        .unwrap();
    assert!(
        engine
            .explain("SELECT max(ts - ts) OVER (ROWS 2 PRECEDING) AS m FROM t")
            .unwrap()
            .contains("monoid max(INTERVAL) -> INTERVAL"),
    );
    s.push(timestamps_and_keys(
        vec![
            Some(0),
            Some(1_000),
            Some(31_500),
            Some(33_000),
            Some(120_000),
        ],
        vec!["a", "a", "a", "a", "a"],
    ))
    .unwrap();
    let out = q.recv().unwrap();
    let millis = |name: &str| {
        let column = out.column_by_name(name).unwrap();
        assert_eq!(
            column.data_type(),
            &DataType::Duration(arrow_schema::TimeUnit::Millisecond),
            "{name}"
        );
        column
            .as_primitive::<arrow_array::types::DurationMillisecondType>()
            .iter()
            .collect::<Vec<_>>()
    };
    // Gaps of 1 s, 30.5 s, 1.5 s and 87 s; the minute before 120 s holds
    // only the last.
    assert_eq!(
        millis("worst"),
        [Some(1_000), Some(30_500), Some(30_500), Some(87_000)]
    );
    assert_eq!(
        millis("best"),
        [Some(1_000), Some(1_000), Some(1_000), Some(1_000)]
    );
    assert_eq!(
        millis("previous"),
        [None, Some(1_000), Some(30_500), Some(1_500)]
    );
    assert_eq!(
        millis("total"),
        [Some(1_000), Some(31_500), Some(33_000), Some(120_000)]
    );
    let text = strings(&out, "worst_text")
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    assert_eq!(text, ["00:00:01", "00:00:30.5", "00:00:30.5", "00:01:27"]);
    // The event that ended the longest of the last ten gaps.
    let after = out
        .column_by_name("after")
        .unwrap()
        .as_primitive::<arrow_array::types::TimestampMillisecondType>()
        .iter()
        .collect::<Vec<_>>();
    assert_eq!(
        after,
        [Some(1_000), Some(31_500), Some(31_500), Some(120_000)]
    );
}

#[test]
fn a_date_plus_or_minus_a_number_of_days_is_a_date() {
    // As in PostgreSQL and DuckDB: DATE ± n, n + DATE, and DATE - DATE in days.
    let out = run(
        "SELECT DATE '2024-02-28' + ts / 1000 AS later, ts / 1000 + DATE '2024-02-28' AS also, \
                    DATE '2024-03-01' - ts / 1000 AS earlier, \
                    DATE '2024-03-01' - DATE '2024-02-28' AS days, \
                    DATE '2024-01-01' + ts * 1000000000 AS past_the_calendar FROM s",
    );
    let dates = |name: &str| {
        let column = out.column_by_name(name).unwrap();
        let text = arrow_cast::cast(column, &DataType::Utf8).unwrap();
        text.as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .iter()
            .map(|d| d.map(str::to_string))
            .collect::<Vec<_>>()
    };
    // ts / 1000 is 1, 2, 3, …: a leap year's February.
    assert_eq!(
        dates("later")[..3],
        [
            Some("2024-02-29".into()),
            Some("2024-03-01".into()),
            Some("2024-03-02".into())
        ]
    );
    assert_eq!(dates("also"), dates("later"));
    assert_eq!(dates("earlier")[0], Some("2024-02-29".into()));
    assert_eq!(ints(&out, "days")[0], Some(2));
    assert!(dates("past_the_calendar").iter().all(Option::is_none));
    // Other types name themselves as SQL does.
    let (engine, _s) = engine_with_s();
    let err = engine
        .query("SELECT 1 - DATE '2024-01-01' FROM s")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("the operator - does not apply to BIGINT (1) and DATE"),
        "{err}"
    );
    // A constant past a DATE's range is the query's error.
    let err = engine
        .query("SELECT DATE '2024-01-01' + 9223372036854775807 FROM s")
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot be computed"), "{err}");
}

/// A length of time times or over a number is a length of time, as in
/// PostgreSQL and DuckDB (rounded to sliq's millisecond); an INTERVAL
/// constant beside one is one too, and a NULL length has NULL parts.
#[test]
fn a_length_of_time_scales_and_adds_as_a_length_of_time() {
    let (engine, s) = engine_with_timestamps(StreamOptions::default().event_time("ts"));
    let q = engine
        .query(
            "SELECT epoch(gap * 2) AS twice, epoch(-3 * gap) AS back3, epoch(gap / 4) AS quarter, \
                    epoch(gap * 1.5) AS half_again, epoch(gap * 0.0001) AS rounded, \
                    CAST(gap + INTERVAL '1' SECOND AS VARCHAR) AS plus, \
                    epoch(INTERVAL '2' SECOND * 3) AS six, \
                    ts + INTERVAL '1' MILLISECOND * 250 AS later, \
                    date_part('quarter', gap) AS q, date_part('year', gap) AS y \
             FROM (SELECT ts, ts - lag(ts) OVER (ROWS 1 PRECEDING) AS gap FROM t)",
        )
        .unwrap();
    // The same gap type: an aggregate takes it, and avg gives one.
    let peak = engine
        .query(
            "SELECT max(gap * 2) OVER (ROWS 9 PRECEDING) AS m, \
                    epoch(avg(gap) OVER (ROWS 9 PRECEDING)) AS a, \
                    avg(gap) FILTER (WHERE gap > INTERVAL '2' SECOND) OVER (ROWS 9 PRECEDING) AS f \
             FROM (SELECT ts - lag(ts) OVER (ROWS 1 PRECEDING) AS gap FROM t)",
        )
        .unwrap();
    s.push(timestamps_and_keys(
        vec![Some(1_000), Some(3_500)],
        vec!["a", "a"],
    ))
    .unwrap();
    let out = q.recv().unwrap();
    for (column, value) in [
        ("twice", 5.0),
        ("back3", -7.5),
        ("quarter", 0.625),
        ("half_again", 3.75),
        // 0.25 ms rounds to 0.
        ("rounded", 0.0),
        ("six", 6.0),
    ] {
        assert_eq!(floats(&out, column)[1], Some(value), "{column}");
    }
    assert_eq!(floats(&out, "six")[0], Some(6.0));
    assert_eq!(
        strings(&out, "plus"),
        [None, Some("00:00:03.5".to_string())]
    );
    let later = out
        .column_by_name("later")
        .unwrap()
        .as_primitive::<arrow_array::types::TimestampMillisecondType>();
    assert_eq!(later.values(), &[1_250, 3_750]);
    // The first row has no gap: NULL, for the calendar's parts too.
    assert_eq!(ints(&out, "q"), [None, Some(1)]);
    assert_eq!(ints(&out, "y"), [None, Some(0)]);
    let m = peak.recv().unwrap();
    for column in ["m", "f"] {
        assert_eq!(
            m.column_by_name(column).unwrap().data_type(),
            &DataType::Duration(arrow_schema::TimeUnit::Millisecond)
        );
    }
    // One more gap of 0.5 s: the average of 2.5 s and 0.5 s.
    s.push(timestamps_and_keys(vec![Some(4_000)], vec!["a"]))
        .unwrap();
    let m = peak.recv().unwrap();
    assert_eq!(floats(&m, "a"), [Some(1.5)]);
    let f = m
        .column_by_name("f")
        .unwrap()
        .as_primitive::<arrow_array::types::DurationMillisecondType>();
    assert_eq!(f.values(), &[2_500]);
    // A failure names the expression as written, not the planner's casts.
    let over_zero = engine
        .query(
            "SELECT gap / 0 AS z FROM (SELECT ts - lag(ts) OVER (ROWS 1 PRECEDING) AS gap FROM t)",
        )
        .unwrap();
    s.push(timestamps_and_keys(
        vec![Some(5_000), Some(6_000)],
        vec!["a", "a"],
    ))
    .unwrap();
    assert_eq!(null_count(&over_zero.recv().unwrap(), "z"), 2);
    let failure = over_zero.stats().last_failed_row.expect("a failure");
    assert!(
        failure
            .message
            .starts_with("evaluating gap / 0 where gap = INTERVAL '00:00:01': "),
        "{failure}"
    );
    // A length of time is no number: it scales by one, not by a time.
    for sql in [
        "SELECT (ts - ts) * ts FROM t",
        "SELECT (ts - ts) / (ts - ts) FROM t",
    ] {
        let err = engine.query(sql).unwrap_err().to_string();
        assert!(err.contains("does not apply to"), "{sql}: {err}");
    }
}

#[test]
fn parts_of_a_gap_between_events_are_read_as_duckdb_reads_them() {
    let (engine, s) = engine_with_timestamps(StreamOptions::default().event_time("ts"));
    // The gap to the key's previous event, and minus it: DuckDB's values
    // for a gap of 2 days 2 h 1 min 4.5 s.
    let q = engine
        .query(
            "SELECT EXTRACT(EPOCH FROM gap) AS e, epoch(gap) AS e2, date_part('day', gap) AS d, \
                    date_part('hour', gap) AS h, date_part('minute', gap) AS mi, \
                    EXTRACT(SECOND FROM gap) AS sec, date_part('millisecond', gap) AS ms, \
                    date_part('microseconds', gap) AS us, date_part('year', gap) AS y, \
                    date_part('quarter', gap) AS q, epoch(back) AS back_e, \
                    date_part('hour', back) AS back_h, date_part('ms', back) AS back_ms, \
                    CAST(gap AS VARCHAR) AS text, back || '' AS back_text, \
                    CAST(-gap AS VARCHAR) AS negated \
             FROM (SELECT ts - lag(ts) OVER w AS gap, lag(ts) OVER w - ts AS back \
                   FROM t GROUP BY k WINDOW w AS (ROWS 1 PRECEDING)) \
             WHERE gap IS NOT NULL",
        )
        .unwrap();
    let start = 1_703_923_140_000i64;
    let later = start + 180_064_500;
    s.push(timestamps_and_keys(
        vec![Some(start), Some(start), Some(later), Some(later)],
        vec!["a", "b", "a", "b"],
    ))
    .unwrap();
    let out = q.recv().unwrap();
    assert_eq!(floats(&out, "e"), some(&[180_064.5, 180_064.5]));
    assert_eq!(floats(&out, "e2"), floats(&out, "e"));
    assert_eq!(floats(&out, "back_e"), some(&[-180_064.5, -180_064.5]));
    for (part, value) in [
        ("d", 2),
        ("h", 2),
        ("mi", 1),
        ("sec", 4),
        ("ms", 4_500),
        ("us", 4_500_000),
        ("y", 0),
        ("q", 1),
        ("back_h", -2),
        ("back_ms", -4_500),
    ] {
        assert_eq!(ints(&out, part), vec![Some(value); 2], "{part}");
    }
    // As text, as DuckDB writes it.
    let text = |name: &str| {
        strings(&out, name)
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
    };
    assert_eq!(text("text"), ["2 days 02:01:04.5"; 2]);
    assert_eq!(text("back_text"), ["-2 days -02:01:04.5"; 2]);
    assert_eq!(text("negated"), text("back_text"));
    // An INTERVAL constant's parts are read the same way.
    let constants = engine
        .query(
            "SELECT date_part('millisecond', INTERVAL '62.5' SECOND) AS ms, \
                    EXTRACT(MICROSECOND FROM INTERVAL '62.5' SECOND) AS us, \
                    date_part('hour', INTERVAL '1 day 3 hours') AS h, \
                    date_part('day', INTERVAL '1 day 3 hours') AS d FROM t",
        )
        .unwrap();
    s.push(timestamps_and_keys(vec![Some(later)], vec!["a"]))
        .unwrap();
    let out = constants.recv().unwrap();
    for (part, value) in [("ms", 2_500), ("us", 2_500_000), ("h", 3), ("d", 1)] {
        assert_eq!(ints(&out, part), [Some(value)], "{part}");
    }
    // A length of time has no week or day of the week.
    for sql in [
        "SELECT date_part('dow', ts - ts) FROM t",
        "SELECT date_part('dow', INTERVAL '1' DAY) FROM t",
    ] {
        let err = engine.query(sql).unwrap_err().to_string();
        assert!(
            err.starts_with("date_part('dow', …) does not apply to a length of time (an INTERVAL)")
                && err.contains("at line 1, column 8"),
            "{sql}: {err}"
        );
    }
}

#[test]
fn qualify_emits_only_the_rows_whose_windows_pass() {
    let (engine, s) = engine_with_s();
    // An alarm: rows whose two-row average exceeds 3. Dropped rows still
    // entered their windows.
    let q = engine
        .query(
            "SELECT ts, avg(v) OVER w AS a FROM s GROUP BY key \
             WINDOW w AS (ROWS 1 PRECEDING) QUALIFY avg(v) OVER w > 3",
        )
        .unwrap();
    assert!(
        engine
            .explain("SELECT ts FROM s QUALIFY max(v) OVER (ROWS 1 PRECEDING) > 3")
            .unwrap()
            .contains("Qualify: __agg0 > ")
    );
    // The call in QUALIFY is the select item's: computed once.
    let plan = engine
        .explain(
            "SELECT ts, avg(v) OVER w AS a FROM s GROUP BY key \
             WINDOW w AS (ROWS 1 PRECEDING) QUALIFY avg(v) OVER w > 3",
        )
        .unwrap();
    assert!(
        plan.contains("__agg0 = avg(v)") && !plan.contains("__agg1"),
        "{plan}"
    );
    s.push(batch(ROWS)).unwrap();
    let out = q.recv().unwrap();
    let all = run("SELECT ts, avg(v) OVER (ROWS 1 PRECEDING) AS a FROM s GROUP BY key");
    let want: Vec<(Option<i64>, Option<f64>)> = ints(&all, "ts")
        .into_iter()
        .zip(floats(&all, "a"))
        .filter(|(_, a)| a.is_some_and(|a| a > 3.0))
        .collect();
    let got: Vec<(Option<i64>, Option<f64>)> = ints(&out, "ts")
        .into_iter()
        .zip(floats(&out, "a"))
        .collect();
    assert!(!want.is_empty() && want.len() < ROWS.len(), "{want:?}");
    assert_eq!(got, want);
    // QUALIFY may name a select item by its alias (as in DuckDB); a stream
    // column of the same name wins over an alias.
    let by_alias = run(
        "SELECT ts, avg(v) OVER (ROWS 1 PRECEDING) AS a, upper(key) AS v FROM s GROUP BY key QUALIFY a > 3 AND v > 0",
    );
    let got: Vec<(Option<i64>, Option<f64>)> = ints(&by_alias, "ts")
        .into_iter()
        .zip(floats(&by_alias, "a"))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn having_keeps_the_rows_whose_group_meets_the_condition() {
    // Each row emits its key's running count and sum; HAVING keeps the rows
    // after which the key's count reached 2, as Flink and ksqlDB filter a
    // group's updates. With QUALIFY too, a row must pass both.
    let out =
        run("SELECT key, count(*) AS n, sum(v) AS total FROM s GROUP BY key HAVING count(*) >= 2");
    assert_eq!(
        strings(&out, "key"),
        ["a", "a", "a", "b"].map(|k| Some(k.to_string()))
    );
    assert_eq!(ints(&out, "n"), [Some(2), Some(3), Some(4), Some(2)]);
    assert_eq!(floats(&out, "total"), some(&[8.0, 12.0, 14.0, 8.0]));
    let both = run(
        "SELECT ts, count(*) AS n FROM s GROUP BY key HAVING n >= 2 \
         QUALIFY max(v) OVER (ROWS 1 PRECEDING) > 4",
    );
    assert_eq!(ints(&both, "ts"), [Some(3_000), Some(16_000)]);
    // HAVING without GROUP BY: the stream is one group.
    let all = run("SELECT ts FROM s HAVING sum(v) > 12");
    assert_eq!(ints(&all, "ts"), [Some(4_000), Some(15_000), Some(16_000)]);
    // EXPLAIN names the clauses the condition was written as.
    let (engine, _s) = engine_with_s();
    let explained = |sql: &str| engine.explain(sql).unwrap();
    assert!(explained("SELECT ts FROM s HAVING sum(v) > 12").contains("\n  Having: __agg0 > 12"));
    assert!(
        explained("SELECT ts FROM s HAVING count(*) > 1 QUALIFY sum(v) > 12")
            .contains("\n  Having and Qualify: __agg0 > 1 AND __agg1 > 12")
    );
}

#[test]
fn products_bitwise_folds_any_value_and_regr_count_slide() {
    let out = run(
        "SELECT product(v) OVER w AS p, bit_and(ts) OVER w AS a, bit_or(ts) OVER w AS o, \
                bit_xor(ts) OVER w AS x, any_value(v) OVER w AS any, \
                regr_count(v, ts) OVER w AS pairs, first(v) OVER w AS f, \
                last(v IGNORE NULLS) OVER w AS l FROM s GROUP BY key \
         WINDOW w AS (ROWS 1 PRECEDING)",
    );
    assert_eq!(floats(&out, "p"), some(&[5.0, 1.0, 15.0, 12.0, 8.0, 7.0]));
    let ints_of = |name| ints(&out, name).into_iter().flatten().collect::<Vec<_>>();
    assert_eq!(ints_of("a"), [1000, 2000, 936, 2976, 2688, 1664]);
    assert_eq!(ints_of("o"), [1000, 2000, 3064, 4024, 16312, 16336]);
    assert_eq!(ints_of("x"), [1000, 2000, 2128, 1048, 13624, 14672]);
    assert_eq!(floats(&out, "any"), some(&[5.0, 1.0, 5.0, 3.0, 4.0, 1.0]));
    assert_eq!(ints_of("pairs"), [1, 1, 2, 2, 2, 2]);
    // DuckDB's names for first_value and last_value.
    assert_eq!(floats(&out, "f"), some(&[5.0, 1.0, 5.0, 3.0, 4.0, 1.0]));
    assert_eq!(floats(&out, "l"), some(&[5.0, 1.0, 3.0, 4.0, 2.0, 7.0]));
}

#[test]
fn skewness_and_kurtosis_slide_as_duckdb_computes_them() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT skewness(v) OVER w AS s, kurtosis(v) OVER w AS k, kurtosis_pop(v) OVER w AS kp \
             FROM s WINDOW w AS (ROWS 3 PRECEDING)",
        )
        .unwrap();
    let rows: Vec<(i64, Option<&str>, Option<f64>)> = [7.0, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0, 8.0]
        .iter()
        .enumerate()
        .map(|(i, v)| (i as i64, Some("a"), Some(1e9 + v)))
        .collect();
    s.push(batch(&rows)).unwrap();
    let out = q.recv().unwrap();
    // DuckDB 2.0's figures for 1, 2, 4, 8 (the window of the fifth row);
    // NULL below 3 (4) values and where the values do not vary.
    let at = |name: &str, i: usize| floats(&out, name)[i];
    let close = |x: Option<f64>, want: f64| x.is_some_and(|x| (x - want).abs() < 1e-9);
    assert!(close(at("s", 4), 1.1376243669576882), "{:?}", at("s", 4));
    assert!(close(at("k", 4), 0.7576559546313791), "{:?}", at("k", 4));
    assert!(close(at("kp", 4), -1.0989792060491494), "{:?}", at("kp", 4));
    assert_eq!((at("s", 1), at("k", 2)), (None, None));
    assert!(at("s", 2).is_some() && at("k", 3).is_some());
    assert_eq!((at("s", 7), at("k", 7), at("kp", 7)), (None, None, None));
}

#[test]
fn an_in_list_may_read_the_row() {
    // DataFusion's IN takes a CASE over columns, which gives one value over
    // no rows, for a constant, and its answers were wrong.
    let out = run(
        "SELECT ts IN (1, CASE WHEN v > 3 THEN 0 ELSE ts END) AS listed, \
                ts NOT IN (1, CASE WHEN v > 3 THEN 0 ELSE ts END) AS unlisted, \
                v IN (1, NULL, CASE WHEN key = 'b' THEN v END) AS with_null FROM s",
    );
    // v: 5, 1, 3, 4, 2, 7 for keys a, b, a, a, a, b.
    assert_eq!(ints(&out, "listed"), [0, 1, 1, 0, 1, 0].map(Some).to_vec());
    assert_eq!(
        ints(&out, "unlisted"),
        [1, 0, 0, 1, 0, 1].map(Some).to_vec()
    );
    assert_eq!(
        ints(&out, "with_null"),
        [None, Some(1), None, None, None, Some(1)]
    );
}

#[test]
fn limit_stops_a_query_after_n_rows() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query("SELECT ts, count(*) OVER (ROWS 9 PRECEDING) AS c FROM s LIMIT 4")
        .unwrap();
    assert!(
        engine
            .explain("SELECT ts FROM s LIMIT 4")
            .unwrap()
            .contains("Limit: stops after 4 rows")
    );
    s.push(batch(&ROWS[..3])).unwrap();
    s.push(batch(&ROWS[3..])).unwrap();
    s.push(batch(&ROWS[..1])).unwrap();
    assert_eq!(
        ints(&q.recv().unwrap(), "ts"),
        vec![Some(1_000), Some(2_000), Some(3_000)]
    );
    assert_eq!(ints(&q.recv().unwrap(), "ts"), vec![Some(4_000)]);
    assert!(
        matches!(q.recv(), Err(EngineError::Closed)),
        "the query ended"
    );
    assert!(engine.queries().is_empty());
    // Its handle still has its counters.
    let stats = q.stats();
    assert_eq!((stats.id, stats.rows_out, stats.batches), (q.id(), 4, 2));
    let err = engine
        .query("SELECT ts FROM s LIMIT 2 OFFSET 1")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("not supported in continuous queries"),
        "{err}"
    );
    // A limit that is no whole number is pointed at.
    for (sql, message) in [
        (
            "SELECT ts FROM s LIMIT 2.5",
            "LIMIT needs a whole number, got 2.5 at line 1, column 24",
        ),
        (
            "SELECT ts FROM s LIMIT 'x'",
            "LIMIT needs a whole number, got 'x' at line 1, column 24",
        ),
        // sqlparser places a negation at its operand.
        (
            "SELECT ts FROM s LIMIT -1",
            "LIMIT needs a constant number of rows, got -1 at line 1, column 25",
        ),
    ] {
        let err = engine.query(sql).unwrap_err().to_string();
        assert!(err.starts_with(message), "{sql}: {err}");
    }
}

/// An aggregate with a bug: it panics on negative input.
#[derive(Clone, Copy, Debug, Default)]
struct Fragile;

impl sliq::swag::Monoid for Fragile {
    type Agg = f64;
    fn identity(&self) -> f64 {
        0.0
    }
    fn combine(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
}

impl sliq::aggregates::Aggregate for Fragile {
    type Output = Option<f64>;
    fn lift<C: sliq::aggregates::Columns>(&self, columns: &C, row: usize) -> f64 {
        let v = columns.f64(0, row).unwrap_or(0.0);
        assert!(v >= 0.0, "negative input");
        v
    }
    fn lower(&self, agg: &f64) -> Result<Option<f64>, sliq::aggregates::AggregateError> {
        Ok(Some(*agg))
    }
}

#[test]
fn a_panicking_aggregate_stops_its_query_and_spares_the_others() {
    use sliq::aggregates::{OutputType, ValueType};
    let (engine, s) = engine_with_s();
    engine
        .register_aggregate(
            "fragile",
            vec![ValueType::Float64],
            OutputType::Scalar(ValueType::Float64),
            Fragile,
        )
        .unwrap();
    let fragile = engine
        .query("SELECT fragile(v) OVER (ROWS 3 PRECEDING) AS f FROM s")
        .unwrap();
    let sturdy = engine
        .query("SELECT count(*) OVER (ROWS 3 PRECEDING) AS c FROM s")
        .unwrap();
    s.push(batch(&[(1, None, Some(1.0))])).unwrap();
    s.push(batch(&[(2, None, Some(-1.0))])).unwrap();
    s.push(batch(&[(3, None, Some(2.0))])).unwrap();
    assert_eq!(floats(&fragile.recv().unwrap(), "f"), some(&[1.0]));
    let err = fragile.recv().unwrap_err().to_string();
    assert!(
        err.contains("internal error (negative input); the query is stopped"),
        "{err}"
    );
    assert!(matches!(fragile.recv(), Err(EngineError::Closed)));
    for expected in 1..=3 {
        assert_eq!(ints(&sturdy.recv().unwrap(), "c"), vec![Some(expected)]);
    }
}

/// A batch with a few rows per key, under two windowed aggregates, is
/// visited key by key; results and failures still name rows in batch order.
#[test]
fn rows_visited_by_key_keep_batch_order_in_results_and_failures() {
    let engine = Engine::new();
    engine
        .execute("CREATE STREAM g (ts BIGINT, k VARCHAR, x BIGINT)")
        .unwrap();
    let q = engine
        .query(
            "SELECT ts, sum(x) OVER w AS s, max(x) OVER w AS m FROM g GROUP BY k \
             WINDOW w AS (ROWS 999 PRECEDING)",
        )
        .unwrap();
    let rows = 512i64;
    let x: Vec<i64> = (0..rows)
        .map(|r| if r == 300 { i64::MAX } else { 1 })
        .collect();
    let b = RecordBatch::try_new(
        q_schema(),
        vec![
            Arc::new(Int64Array::from((0..rows).collect::<Vec<_>>())),
            Arc::new(StringArray::from(
                (0..rows)
                    .map(|r| format!("k{}", r % 32))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(x)),
        ],
    )
    .unwrap();
    engine.stream("g").unwrap().push(b).unwrap();
    let out = q.recv().unwrap();
    assert_eq!(ints(&out, "ts"), (0..rows).map(Some).collect::<Vec<_>>());
    // Key r % 32 has seen r / 32 + 1 rows of 1; key 12 overflows from row 300.
    let want: Vec<Option<i64>> = (0..rows)
        .map(|r| (r % 32 != 12 || r < 300).then_some(r / 32 + 1))
        .collect();
    assert_eq!(ints(&out, "s"), want);
    let want_max: Vec<Option<i64>> = (0..rows)
        .map(|r| {
            Some(if r % 32 == 12 && r >= 300 {
                i64::MAX
            } else {
                1
            })
        })
        .collect();
    assert_eq!(ints(&out, "m"), want_max);
    let stats = engine.stats();
    let query = &stats.queries[0];
    assert_eq!(query.failed_results, 7, "{query:?}");
    let error = query.last_error.as_deref().unwrap_or("");
    assert!(
        error.starts_with("row 301 of stream 'g': sum overflowed BIGINT"),
        "{error}"
    );

    fn q_schema() -> Arc<Schema> {
        Arc::new(Schema::new(vec![
            Field::new("ts", DataType::Int64, true),
            Field::new("k", DataType::Utf8, true),
            Field::new("x", DataType::Int64, true),
        ]))
    }
}

#[test]
fn a_stream_knows_which_columns_its_running_queries_read() {
    let (engine, s) = engine_with_s();
    assert_eq!(s.columns_read(), [false, false, false], "no query yet");
    let rows = engine
        .query("SELECT max(v) OVER (ROWS 9 PRECEDING) AS m FROM s GROUP BY key")
        .expect("rows query");
    assert_eq!(
        s.columns_read(),
        [false, true, true],
        "ts: neither read nor a RANGE"
    );
    let range = engine
        .query("SELECT count(*) OVER (RANGE '10s') AS c FROM s")
        .expect("range query");
    assert_eq!(
        s.columns_read(),
        [true, true, true],
        "a RANGE frame reads the event time"
    );
    drop(range);
    assert_eq!(
        s.columns_read(),
        [false, true, true],
        "a stopped query reads nothing"
    );
    drop(rows);
    let nested = engine
        .query(
            "SELECT w, sum(w) OVER (ROWS 2 PRECEDING) AS t \
             FROM (SELECT V * 2 AS w FROM s WHERE Key <> 'x')",
        )
        .expect("subquery");
    assert_eq!(
        s.columns_read(),
        [false, true, true],
        "through the subquery, whatever the case of the names"
    );
    drop(nested);

    let (engine, s) = engine_with_s_and(
        StreamOptions::default()
            .event_time("ts")
            .key_ttl(Duration::from_secs(60)),
    );
    let _q = engine
        .query("SELECT count(*) OVER (ROWS 9 PRECEDING) AS c FROM s GROUP BY key")
        .expect("query");
    assert_eq!(
        s.columns_read(),
        [true, true, false],
        "idle keys are forgotten by the event time"
    );
}

#[test]
fn create_stream_errors_point_at_the_option_at_fault() {
    // A program that reads options of its own checks them before the
    // stream is created, and points at the one at fault as the engine does.
    let engine = Engine::builder()
        .stream_check(|definition, options| {
            match options.options().iter().find(|(key, _)| key == "path") {
                Some((_, path)) if !path.ends_with(".csv") => Err(definition
                    .value_error("path", format!("path = '{path}': expected a .csv file"))),
                _ => Ok(()),
            }
        })
        .build();
    for (options, message, column) in [
        (
            "WITH (on_late = 'maybe', path = 'data.txt')",
            "on_late = 'maybe': expected 'null' or 'error'",
            19,
        ),
        (
            "WITH (on_late = 'error', path = 'data.txt')",
            "path = 'data.txt': expected a .csv file",
            35,
        ),
        (
            "WITH (path = 'a.csv', PATH = 'b.csv')",
            "the option 'PATH' is given twice",
            25,
        ),
    ] {
        let err = engine
            .execute(&format!("CREATE STREAM s (v DOUBLE)\n  {options}"))
            .unwrap_err()
            .to_string();
        let shown: Vec<&str> = err.lines().collect();
        assert_eq!(
            shown,
            [
                format!("{message} at line 2, column {column}"),
                format!("    {options}"),
                format!("  {}^", " ".repeat(column - 1)),
            ]
        );
        assert!(engine.streams().is_empty(), "the stream is not created");
    }
    engine
        .execute("CREATE STREAM s (v DOUBLE) WITH (path = 'data.csv')")
        .expect("passes the check");
}

#[test]
fn a_frame_may_end_some_rows_or_some_time_before_the_current_row() {
    let (engine, s) = engine_with_s();
    let q = engine
        .query(
            "SELECT key, sum(v) OVER (PARTITION BY key ROWS BETWEEN 3 PRECEDING AND 2 PRECEDING) \
             AS before, count(*) OVER (PARTITION BY key ROWS BETWEEN 3 PRECEDING AND 2 PRECEDING) \
             AS n, sum(v) OVER (PARTITION BY key ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) \
             AS so_far, max(v) OVER (PARTITION BY key ORDER BY ts RANGE BETWEEN INTERVAL '10' \
             SECOND PRECEDING AND INTERVAL '2' SECOND PRECEDING) AS peak, count(v) OVER \
             (PARTITION BY key ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND '3s' PRECEDING) \
             AS old FROM s",
        )
        .unwrap();
    // Key a: a row a second, v = 1..=6; one row of key b in the middle.
    let mut rows: Vec<_> = (1..=6)
        .map(|i| (i * 1_000, Some("a"), Some(i as f64)))
        .collect();
    rows.insert(3, (3_500, Some("b"), Some(100.0)));
    s.push(batch(&rows[..4])).unwrap();
    s.push(batch(&rows[4..])).unwrap();
    let out = [q.recv().unwrap(), q.recv().unwrap()];
    let column = |name: &str| out.iter().flat_map(|b| floats(b, name)).collect::<Vec<_>>();
    let counts: Vec<_> = out.iter().flat_map(|b| ints(b, "n")).collect();
    // Rows 1, 2, 3, b, 4, 5, 6.
    assert_eq!(
        column("before"),
        [None, None, Some(1.0), None, Some(3.0), Some(5.0), Some(7.0)]
    );
    assert_eq!(counts, [0, 0, 1, 0, 2, 2, 2].map(Some));
    assert_eq!(
        column("so_far"),
        [
            None,
            Some(1.0),
            Some(3.0),
            None,
            Some(6.0),
            Some(10.0),
            Some(15.0)
        ]
    );
    // The rows from 10 s to 2 s before: up to the row two seconds back.
    assert_eq!(
        column("peak"),
        [None, None, Some(1.0), None, Some(2.0), Some(3.0), Some(4.0)]
    );
    let old: Vec<_> = out.iter().flat_map(|b| ints(b, "old")).collect();
    assert_eq!(old, [0, 0, 0, 0, 1, 2, 3].map(Some));
    let plan = engine
        .explain(
            "SELECT sum(v) OVER (ROWS BETWEEN 3 PRECEDING AND 2 PRECEDING), \
             avg(v) OVER (ROWS BETWEEN 3 PRECEDING AND 2 PRECEDING), \
             min(v) OVER (ORDER BY ts RANGE BETWEEN '1m' PRECEDING AND '10s' PRECEDING), \
             count(v) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND 5 PRECEDING), \
             sum(v) OVER (ORDER BY ts RANGE BETWEEN UNBOUNDED PRECEDING AND '1h' PRECEDING) FROM s",
        )
        .unwrap();
    for line in [
        "Window 3: keys (global), RANGE BETWEEN UNBOUNDED PRECEDING AND '1h' PRECEDING, event time ts",
        "__agg4 = sum(v): monoid sum(DOUBLE) -> DOUBLE, a running total per key",
        "Window 0: keys (global), ROWS BETWEEN 3 PRECEDING AND 2 PRECEDING",
        "Window 1: keys (global), RANGE BETWEEN '1m' PRECEDING AND '10s' PRECEDING, event time ts",
        "Window 2: keys (global), ROWS BETWEEN UNBOUNDED PRECEDING AND 5 PRECEDING",
        "__agg3 = count(v): monoid count(DOUBLE) -> BIGINT, a running total per key",
    ] {
        assert!(plan.contains(line), "{line}\n{plan}");
    }
    // Aggregates over one such frame share a window per key, their rows
    // waiting as records; the running totals keep none.
    assert!(
        plan.contains("Shared: window 0's __agg0, __agg1 keep one DABA Lite per key"),
        "{plan}"
    );
    assert_eq!(plan.matches("Shared:").count(), 1, "{plan}");
    // `0 PRECEDING` and `0 FOLLOWING` are the current row.
    let plan = engine
        .explain(
            "SELECT sum(v) OVER (ROWS BETWEEN 3 PRECEDING AND 0 PRECEDING), \
             max(v) OVER (ROWS BETWEEN 3 PRECEDING AND 0 FOLLOWING), \
             min(v) OVER (ORDER BY ts RANGE BETWEEN '5s' PRECEDING AND '0s' FOLLOWING) FROM s",
        )
        .unwrap();
    assert!(
        plan.contains("Window 0: keys (global), ROWS 3 PRECEDING\n"),
        "{plan}"
    );
    assert!(
        plan.contains("Window 1: keys (global), RANGE '5s' PRECEDING,"),
        "{plan}"
    );
    assert_eq!(plan.matches("Window ").count(), 2, "{plan}");
}

#[test]
fn a_frame_ending_before_the_current_row_equals_a_window_over_lag() {
    // ROWS BETWEEN n PRECEDING AND k PRECEDING is a window of n − k + 1
    // rows over lag(v, k): the same results, NULLs and all. Short and long
    // delays (their waiting rows are kept differently), and unbounded.
    for (frame, k, over_lag) in [
        ("3 PRECEDING AND 2 PRECEDING", 2, "ROWS 1 PRECEDING"),
        ("100 PRECEDING AND 70 PRECEDING", 70, "ROWS 30 PRECEDING"),
        (
            "UNBOUNDED PRECEDING AND 1 PRECEDING",
            1,
            "ROWS UNBOUNDED PRECEDING",
        ),
        (
            "UNBOUNDED PRECEDING AND 90 PRECEDING",
            90,
            "ROWS UNBOUNDED PRECEDING",
        ),
    ] {
        let (engine, s) = engine_with_s();
        let direct = engine
            .query(&format!(
                "SELECT sum(v) OVER (ROWS BETWEEN {frame}) AS r FROM s GROUP BY key"
            ))
            .unwrap();
        let over_lag = engine
            .query(&format!(
                "WITH d AS (SELECT *, lag(v, {k}) AS prev FROM s GROUP BY key) \
                 SELECT sum(prev) OVER ({over_lag}) AS r FROM d GROUP BY key"
            ))
            .unwrap();
        let rows: Vec<_> = (1..=600)
            .map(|i: i64| {
                let key = ["a", "b", "c"][(i * 7 % 3) as usize];
                let v = (i % 5 != 0).then_some((i * 13 % 11) as f64);
                (i, Some(key), v)
            })
            .collect();
        let mut non_null = 0;
        for chunk in rows.chunks(37) {
            s.push(batch(chunk)).unwrap();
            let got = floats(&direct.recv().unwrap(), "r");
            non_null += got.iter().flatten().count();
            assert_eq!(got, floats(&over_lag.recv().unwrap(), "r"), "{frame}");
        }
        assert!(non_null > 300, "{frame}: {non_null} results");
    }
}

#[test]
fn the_first_mistake_in_the_text_is_the_one_named() {
    // WHERE and GROUP BY are planned before the SELECT list; an unknown
    // column written before them is still the error the query gets.
    let (engine, _s) = engine_with_s();
    for (sql, message) in [
        (
            "SELECT nope, max(v) OVER (ROWS 2 PRECEDING) FROM s GROUP BY nope",
            "unknown column 'nope' in stream 's'; its columns are ts, key, v at line 1, column 8",
        ),
        (
            "SELECT key, vv FROM s WHERE v > 'x'",
            "unknown column 'vv' in stream 's'; did you mean 'v'? at line 1, column 13",
        ),
        // Two unknown columns: the first in the text.
        (
            "SELECT key, vv FROM s WHERE nope > 1",
            "unknown column 'vv' in stream 's'; did you mean 'v'? at line 1, column 13",
        ),
        (
            "SELECT key FROM s WHERE nope > 1",
            "unknown column 'nope' in stream 's'; its columns are ts, key, v at line 1, column 25",
        ),
    ] {
        let err = engine.query(sql).unwrap_err().to_string();
        assert_eq!(err.lines().next(), Some(message), "{sql}");
    }
}

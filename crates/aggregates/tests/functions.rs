//! Each function's documented semantics on small, hand-checked inputs, and
//! the planning-time errors a user sees.

use sliq_aggregates::registry::{self, CallOptions};
use sliq_aggregates::{
    AggregateError, ArgType, CollectOutput, Literal, OutputType, Rows, Value, ValueType,
};
use sliq_swag::Monoid;

use Value::{Float64 as F, Int64 as I, Null};

fn col(ty: ValueType) -> ArgType {
    ArgType::column(ty)
}

/// Runs `name(args)` over all rows so far and returns the last result.
fn run(name: &str, args: &[ArgType], rows: Vec<Vec<Value>>) -> Result<Value, AggregateError> {
    run_with(name, args, CallOptions::default(), rows)
}

fn run_with(
    name: &str,
    args: &[ArgType],
    options: CallOptions,
    rows: Vec<Vec<Value>>,
) -> Result<Value, AggregateError> {
    let resolved = registry::resolve(name, args, options)?;
    let out = resolved.visit(CollectOutput::running(&Rows::new(rows)))?;
    Ok(out.last().cloned().unwrap_or(Null))
}

fn floats(xs: &[Option<f64>]) -> Vec<Vec<Value>> {
    xs.iter().map(|x| vec![x.map_or(Null, F)]).collect()
}

#[test]
fn count_counts_rows_or_non_null_values() {
    let rows = vec![vec![I(1)], vec![Null], vec![I(3)]];
    assert_eq!(run("count", &[], rows.clone()).unwrap(), I(3));
    assert_eq!(run("COUNT", &[col(ValueType::Int64)], rows).unwrap(), I(2));
    assert_eq!(
        run("count", &[col(ValueType::Int64)], vec![]).unwrap(),
        Null,
        "no row, no result"
    );
}

#[test]
fn integer_sum_is_exact_and_reports_overflow() {
    let big = vec![vec![I(i64::MAX)], vec![I(i64::MAX)], vec![I(-i64::MAX)]];
    // The running sum overflows on the second row.
    let err = run("sum", &[col(ValueType::Int64)], big).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "sum overflowed BIGINT (the exact result is {})",
            2 * i64::MAX as i128
        )
    );
    let resolved =
        registry::resolve("sum", &[col(ValueType::Int64)], CallOptions::default()).unwrap();
    assert_eq!(
        resolved.output_type(),
        &OutputType::Scalar(ValueType::Int64)
    );
    assert_eq!(
        run("sum", &[col(ValueType::Int64)], vec![vec![Null]]).unwrap(),
        Null
    );
}

#[test]
fn float_sum_and_avg_do_not_lose_small_terms() {
    let xs = floats(&[Some(1e17), Some(1.0), Some(-1e17), None]);
    assert_eq!(
        run("sum", &[col(ValueType::Float64)], xs.clone()).unwrap(),
        F(1.0)
    );
    assert_eq!(
        run("avg", &[col(ValueType::Float64)], xs).unwrap(),
        F(1.0 / 3.0)
    );
    let ints = vec![vec![I(1)], vec![I(2)]];
    assert_eq!(run("mean", &[col(ValueType::Int64)], ints).unwrap(), F(1.5));
}

#[test]
fn max_treats_nan_as_largest_and_min_ignores_nulls() {
    let xs = floats(&[Some(1.0), Some(f64::NAN), Some(f64::INFINITY), None]);
    match run("max", &[col(ValueType::Float64)], xs.clone()).unwrap() {
        F(x) => assert!(x.is_nan()),
        other => panic!("{other:?}"),
    }
    assert_eq!(run("min", &[col(ValueType::Float64)], xs).unwrap(), F(1.0));
    let words = vec![
        vec![Value::str("pear")],
        vec![Null],
        vec![Value::str("apple")],
    ];
    assert_eq!(
        run("min", &[col(ValueType::Utf8)], words.clone()).unwrap(),
        Value::str("apple")
    );
    assert_eq!(
        run("max", &[col(ValueType::Utf8)], words).unwrap(),
        Value::str("pear")
    );
}

#[test]
fn argmax_returns_the_oldest_rows_y_on_ties() {
    let rows = vec![
        vec![I(5), Value::str("first five")],
        vec![I(2), Value::str("two")],
        vec![I(5), Value::str("second five")],
        vec![Null, Value::str("null x is skipped")],
    ];
    let args = [col(ValueType::Int64), col(ValueType::Utf8)];
    assert_eq!(
        run("argmax", &args, rows.clone()).unwrap(),
        Value::str("first five")
    );
    assert_eq!(
        run("argmin", &args, rows.clone()).unwrap(),
        Value::str("two")
    );
    assert_eq!(
        run(
            "maxcount",
            &args[..1],
            rows.iter().map(|r| vec![r[0].clone()]).collect()
        )
        .unwrap(),
        I(2)
    );
    assert_eq!(run("mincount", &args[..1], vec![]).unwrap(), Null);
    assert_eq!(run("mincount", &args[..1], vec![vec![Null]]).unwrap(), I(0));
}

#[test]
fn first_and_last_value_respect_nulls_unless_told_otherwise() {
    let rows = vec![vec![Null], vec![I(1)], vec![I(2)], vec![Null]];
    let args = [col(ValueType::Int64)];
    assert_eq!(run("first_value", &args, rows.clone()).unwrap(), Null);
    assert_eq!(run("last_value", &args, rows.clone()).unwrap(), Null);
    let ignore = CallOptions { ignore_nulls: true };
    assert_eq!(
        run_with("first_value", &args, ignore, rows.clone()).unwrap(),
        I(1)
    );
    assert_eq!(run_with("last_value", &args, ignore, rows).unwrap(), I(2));
}

#[test]
fn m4_returns_a_struct_of_min_max_first_last() {
    let xs = floats(&[Some(3.0), Some(-1.0), None, Some(7.0), Some(2.0)]);
    let resolved =
        registry::resolve("m4", &[col(ValueType::Float64)], CallOptions::default()).unwrap();
    assert_eq!(
        resolved.output_type().to_string(),
        "STRUCT(min DOUBLE, max DOUBLE, first DOUBLE, last DOUBLE)"
    );
    assert_eq!(
        run("m4", &[col(ValueType::Float64)], xs).unwrap(),
        Value::Struct(vec![F(-1.0), F(7.0), F(3.0), F(2.0)])
    );
    assert_eq!(
        run("m4", &[col(ValueType::Float64)], floats(&[None])).unwrap(),
        Null
    );
}

#[test]
fn relvar_is_the_papers_relative_variation_with_a_lawful_identity() {
    let xs = floats(&[Some(80.0), Some(100.0), Some(90.0)]);
    assert_eq!(
        run("relvar", &[col(ValueType::Float64)], xs).unwrap(),
        F(0.2)
    );
    assert_eq!(
        run("relvar", &[col(ValueType::Float64)], floats(&[Some(0.0)])).unwrap(),
        Null
    );
    let relvar = sliq_aggregates::functions::RelVar;
    let id = relvar.identity();
    assert_eq!(id, (f64::INFINITY, f64::NEG_INFINITY));
    assert_eq!(relvar.combine(&id, &(3.0, 5.0)), (3.0, 5.0));
    assert_eq!(relvar.combine(&(3.0, 5.0), &id), (3.0, 5.0));
}

#[test]
fn statistics_match_textbook_values() {
    let xs = floats(&[
        Some(2.0),
        Some(4.0),
        Some(4.0),
        Some(4.0),
        Some(5.0),
        Some(5.0),
        Some(7.0),
        Some(9.0),
    ]);
    let x = [col(ValueType::Float64)];
    assert_eq!(run("var_pop", &x, xs.clone()).unwrap(), F(4.0));
    assert_eq!(run("stddev_pop", &x, xs.clone()).unwrap(), F(2.0));
    assert_eq!(run("var_samp", &x, xs.clone()).unwrap(), F(32.0 / 7.0));
    assert_eq!(
        run("stddev", &x, floats(&[Some(1.0)])).unwrap(),
        Null,
        "sample statistics need two values"
    );
    match run("geomean", &x, floats(&[Some(1.0), Some(4.0), Some(16.0)])).unwrap() {
        F(g) => assert!((g - 4.0).abs() < 1e-12),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sketches_answer_their_questions() {
    let ints: Vec<Vec<Value>> = (0..1000).map(|i| vec![I(i % 100)]).collect();
    let x = col(ValueType::Int64);
    match run(
        "approx_count_distinct",
        std::slice::from_ref(&x),
        ints.clone(),
    )
    .unwrap()
    {
        I(n) => assert!((95..=105).contains(&n), "estimate {n} of 100 distinct"),
        other => panic!("{other:?}"),
    }
    let contains = |v| {
        run(
            "bloom_contains",
            &[x.clone(), ArgType::literal(Literal::Int64(v))],
            ints.clone(),
        )
    };
    assert_eq!(contains(42).unwrap(), Value::Boolean(true));
    assert_eq!(contains(-7).unwrap(), Value::Boolean(false));
    match run(
        "countmin",
        &[x.clone(), ArgType::literal(Literal::Int64(7))],
        ints.clone(),
    )
    .unwrap()
    {
        I(n) => assert!((10..=40).contains(&n), "estimate {n} of 10"),
        other => panic!("{other:?}"),
    }
    let values: Vec<Vec<Value>> = (1..=1000).map(|i| vec![F(i as f64)]).collect();
    let median = run("approx_median", &[col(ValueType::Float64)], values.clone()).unwrap();
    let p90 = run(
        "approx_percentile",
        &[
            col(ValueType::Float64),
            ArgType::literal(Literal::Float64(0.9)),
        ],
        values,
    );
    match (median, p90.unwrap()) {
        (F(m), F(p)) => {
            assert!((m - 500.0).abs() <= 5.0, "median {m}");
            assert!((p - 900.0).abs() <= 9.0, "p90 {p}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn planning_errors_name_the_function_and_what_it_accepts() {
    let err =
        registry::resolve("maxx", &[col(ValueType::Int64)], CallOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown aggregate function 'maxx'; did you mean 'max'?"
    );
    let err = registry::resolve("frobnicate", &[], CallOptions::default()).unwrap_err();
    assert_eq!(err.to_string(), "unknown aggregate function 'frobnicate'");

    let err =
        registry::resolve("sum", &[col(ValueType::Utf8)], CallOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "sum(VARCHAR) does not match any signature of sum: expected sum(x BIGINT) -> BIGINT, sum(x DOUBLE) -> DOUBLE, sum(x DECIMAL(p, s)) -> DECIMAL(38, s), sum(x INTERVAL) -> INTERVAL"
    );
    let err =
        registry::resolve("argmax", &[col(ValueType::Int64)], CallOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("expected argmax(x any, y any)"),
        "{err}"
    );

    let x = col(ValueType::Float64);
    let q = |l| ArgType::literal(l);
    let err = registry::resolve(
        "approx_percentile",
        &[x.clone(), q(Literal::Float64(1.5))],
        CallOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "approx_percentile: q must be a number in [0, 1], got 1.5"
    );
    let err = registry::resolve(
        "approx_percentile",
        &[x.clone(), x.clone()],
        CallOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "approx_percentile: q (argument 2) must be a constant"
    );
    let err = registry::resolve(
        "bloom_contains",
        &[x.clone(), q(Literal::Utf8("a".into()))],
        CallOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "bloom_contains: cannot compare DOUBLE values with the constant 'a'"
    );
    let err = registry::resolve("max", &[x], CallOptions { ignore_nulls: true }).unwrap_err();
    assert_eq!(
        err.to_string(),
        "max: IGNORE NULLS applies only to first_value and last_value"
    );
}

#[test]
fn registry_lists_every_function_with_its_signatures() {
    assert!(registry::is_aggregate("APPROX_PERCENTILE"));
    assert!(!registry::is_aggregate("abs"));
    for name in registry::function_names() {
        assert!(
            registry::signatures(name).is_some_and(|s| s.contains(name)),
            "{name}"
        );
    }
    let resolved = registry::resolve("geomean", &[col(ValueType::Int64)], CallOptions::default())
        .expect("integers widen to DOUBLE");
    assert_eq!(resolved.inputs(), &[ValueType::Float64]);
}

#[test]
fn regr_slope_fits_a_line() {
    let rows: Vec<Vec<Value>> = (0..10)
        .map(|x| vec![F(2.0 * x as f64 + 1.0), F(x as f64)])
        .collect();
    let args = [col(ValueType::Float64), col(ValueType::Float64)];
    match run("regr_slope", &args, rows).unwrap() {
        F(slope) => assert!((slope - 2.0).abs() < 1e-12, "{slope}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        run("regr_slope", &args, vec![vec![F(1.0), F(3.0)]]).unwrap(),
        Null,
        "one pair has no slope"
    );
    assert_eq!(
        run(
            "regr_slope",
            &args,
            vec![vec![F(1.0), F(3.0)], vec![F(2.0), F(3.0)]]
        )
        .unwrap(),
        Null,
        "vertical"
    );
}

#[test]
fn correlation_and_regression_match_textbook_values() {
    // x = 1..5, y = 2, 4, 5, 4, 5: x̄ = 3, ȳ = 4, Sxx = 10, Syy = 6, Sxy = 6.
    let rows: Vec<Vec<Value>> = [2.0, 4.0, 5.0, 4.0, 5.0]
        .iter()
        .enumerate()
        .map(|(i, y)| vec![F(*y), F(i as f64 + 1.0)])
        .collect();
    let args = [col(ValueType::Float64), col(ValueType::Float64)];
    for (name, want) in [
        ("regr_slope", 0.6),
        ("regr_intercept", 2.2),
        ("regr_r2", 0.6),
        ("corr", 6.0 / 60f64.sqrt()),
        ("covar_pop", 1.2),
        ("covar_samp", 1.5),
        ("regr_avgx", 3.0),
        ("regr_avgy", 4.0),
        ("regr_sxx", 10.0),
        ("regr_syy", 6.0),
        ("regr_sxy", 6.0),
    ] {
        match run(name, &args, rows.clone()).unwrap() {
            F(got) => assert!((got - want).abs() < 1e-12, "{name}: {got} against {want}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    // Every y equal: a perfect fit, but no correlation.
    let flat: Vec<Vec<Value>> = (0..3).map(|x| vec![F(7.0), F(x as f64)]).collect();
    assert_eq!(run("regr_r2", &args, flat.clone()).unwrap(), F(1.0));
    assert_eq!(run("corr", &args, flat.clone()).unwrap(), Null);
    // One pair: a population covariance, no sample one.
    let one = vec![vec![F(1.0), F(2.0)]];
    assert_eq!(run("covar_pop", &args, one.clone()).unwrap(), F(0.0));
    assert_eq!(run("covar_samp", &args, one).unwrap(), Null);
}

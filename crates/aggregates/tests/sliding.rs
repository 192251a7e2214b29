//! Every function over sliding windows in a `DabaLite` equals a from-scratch
//! computation over the window's contents: a naive SQL oracle for the exact
//! functions, and the sketch rebuilt from the window for the sketches.

mod common;

use std::cmp::Ordering;

use common::{TestCall, all_approx_eq, all_calls, rows};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sliq_aggregates::{
    Aggregate, AggregateVisitor, CollectOutput, Literal, OutputValue, Rows, Value, ValueSink,
};
use sliq_swag::{FifoAggregator, Recalc};

/// SQL order of non-NULL values: NaN above all numbers, -0.0 = 0.0.
fn sql_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int64(x), Value::Int64(y)) => x.cmp(y),
        (Value::Decimal(x), Value::Decimal(y)) => x.cmp(y),
        (Value::Boolean(x), Value::Boolean(y)) => x.cmp(y),
        (Value::Utf8(x), Value::Utf8(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Float64(x), Value::Float64(y)) => match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        },
        _ => panic!("incomparable {a:?} {b:?}"),
    }
}

fn float(v: &Value) -> Option<f64> {
    match v {
        Value::Float64(x) => Some(*x),
        Value::Int64(x) => Some(*x as f64),
        _ => None,
    }
}

/// The oldest row whose `x` (argument 0) is strictly the best.
fn best(window: &[Vec<Value>], want: Ordering) -> Option<&Vec<Value>> {
    let mut best: Option<&Vec<Value>> = None;
    for row in window.iter().filter(|r| r[0] != Value::Null) {
        if best.is_none_or(|b| sql_cmp(&row[0], &b[0]) == want) {
            best = Some(row);
        }
    }
    best
}

fn moments(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.iter().any(|x| !x.is_finite()) {
        return (mean, f64::NAN);
    }
    (mean, xs.iter().map(|x| (x - mean) * (x - mean)).sum())
}

/// 10^19: decimals sum as their high and low 19 digits apart.
const DECIMAL_HALF: i128 = 10i128.pow(19);

/// The exact sum of decimals (unscaled), as `high × 10^19 + low` with
/// `0 ≤ low < 10^19`: no partial sum overflows however large the values.
fn decimal_sum(values: &[&Value]) -> (i128, i128) {
    let (mut high, mut low) = (0i128, 0i128);
    for v in values {
        let Value::Decimal(d) = v else {
            panic!("not a decimal: {v:?}")
        };
        high += d.div_euclid(DECIMAL_HALF);
        low += d.rem_euclid(DECIMAL_HALF);
    }
    (
        high + low.div_euclid(DECIMAL_HALF),
        low.rem_euclid(DECIMAL_HALF),
    )
}

/// The SQL result of `call` over `window`, computed directly.
fn naive<'w>(call: &TestCall, window: &'w [Vec<Value>]) -> Result<Value, String> {
    let first = |r: &'w Vec<Value>| r.first().unwrap_or(&Value::Null);
    let present: Vec<&Value> = window
        .iter()
        .map(first)
        .filter(|v| **v != Value::Null)
        .collect();
    let floats: Vec<f64> = present.iter().filter_map(|v| float(v)).collect();
    let or_null = |cond: bool, v: f64| if cond { Value::Float64(v) } else { Value::Null };
    Ok(match call.name {
        "count" | "row_number" if call.args.is_empty() => Value::Int64(window.len() as i64),
        "count" => Value::Int64(present.len() as i64),
        "sum" => match present.first() {
            None => Value::Null,
            Some(Value::Int64(_)) => {
                let s: i128 = present.iter().map(|v| float_or_int(v) as i128).sum();
                Value::Int64(
                    i64::try_from(s)
                        .map_err(|_| format!("sum overflowed BIGINT (the exact result is {s})"))?,
                )
            }
            Some(Value::Decimal(_)) => {
                let (high, low) = decimal_sum(&present);
                let exact = high
                    .checked_mul(DECIMAL_HALF)
                    .and_then(|h| h.checked_add(low))
                    .filter(|s| s.unsigned_abs() < 10u128.pow(38));
                Value::Decimal(exact.ok_or("sum overflowed DECIMAL(38), the widest decimal")?)
            }
            Some(_) => Value::Float64(floats.iter().sum()),
        },
        "avg" | "mean" => match present.first() {
            None => Value::Null,
            Some(Value::Decimal(_)) => {
                let (high, low) = decimal_sum(&present);
                let sum = match high
                    .checked_mul(DECIMAL_HALF)
                    .and_then(|h| h.checked_add(low))
                {
                    Some(exact) => exact as f64,
                    None => high as f64 * DECIMAL_HALF as f64 + low as f64,
                };
                Value::Float64(sum / (present.len() as f64 * 100.0))
            }
            Some(Value::Int64(_)) => {
                let s: i128 = present.iter().map(|v| float_or_int(v) as i128).sum();
                Value::Float64(s as f64 / present.len() as f64)
            }
            Some(_) => Value::Float64(floats.iter().sum::<f64>() / floats.len() as f64),
        },
        "bool_and" | "every" => match present.is_empty() {
            true => Value::Null,
            false => Value::Boolean(present.iter().all(|v| **v == Value::Boolean(true))),
        },
        "count_if" => Value::Int64(
            present
                .iter()
                .filter(|v| ***v == Value::Boolean(true))
                .count() as i64,
        ),
        "bool_or" => match present.is_empty() {
            true => Value::Null,
            false => Value::Boolean(present.iter().any(|v| **v == Value::Boolean(true))),
        },
        "min" => best(window, Ordering::Less).map_or(Value::Null, |r| r[0].clone()),
        "max" => best(window, Ordering::Greater).map_or(Value::Null, |r| r[0].clone()),
        // Rows come in the order the aggregate is fed: max_by's arguments
        // arrive swapped, as argmax's.
        "argmin" | "min_by" | "arg_min_null" => {
            best(window, Ordering::Less).map_or(Value::Null, |r| r[1].clone())
        }
        "argmax" | "max_by" | "arg_max_null" => {
            best(window, Ordering::Greater).map_or(Value::Null, |r| r[1].clone())
        }
        // DuckDB's arg_min and arg_max also skip the rows whose value is NULL.
        "arg_min" | "arg_max" => {
            let valued: Vec<Vec<Value>> = window
                .iter()
                .filter(|r| r[1] != Value::Null)
                .cloned()
                .collect();
            let want = if call.name == "arg_max" {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            best(&valued, want).map_or(Value::Null, |r| r[1].clone())
        }
        "mincount" | "maxcount" => {
            let want = if call.name == "maxcount" {
                Ordering::Greater
            } else {
                Ordering::Less
            };
            Value::Int64(best(window, want).map_or(0, |b| {
                present
                    .iter()
                    .filter(|v| sql_cmp(v, &b[0]) == Ordering::Equal)
                    .count() as i64
            }))
        }
        "first_value" | "last_value" | "first" | "last" => {
            let candidates: Vec<&Value> = if call.options.ignore_nulls {
                present.clone()
            } else {
                window.iter().map(first).collect()
            };
            let pick = if call.name.starts_with("first") {
                candidates.first()
            } else {
                candidates.last()
            };
            pick.map_or(Value::Null, |v| (*v).clone())
        }
        "lag" => {
            // The engine gives lag a frame of offset + 1 rows, whose oldest
            // row is the one wanted once it is full; over any window: the
            // oldest row when there are more than `offset`, else the default.
            let param = |i: usize| call.args.get(i).and_then(|a| a.literal.clone());
            let offset = match param(1) {
                Some(Literal::Int64(n)) => n as usize,
                _ => 1,
            };
            match window.first() {
                Some(oldest) if window.len() > offset => first(oldest).clone(),
                _ => match param(2) {
                    Some(Literal::Int64(d)) => Value::Int64(d),
                    // DECIMAL(38, 2) arguments: the default at scale 2.
                    Some(Literal::Float64(d)) => Value::Decimal((d * 100.0).round() as i128),
                    Some(Literal::Utf8(d)) => Value::Utf8(d.into()),
                    _ => Value::Null,
                },
            }
        }
        "m4" => match (
            best(window, Ordering::Less),
            best(window, Ordering::Greater),
        ) {
            (Some(min), Some(max)) => Value::Struct(vec![
                min[0].clone(),
                max[0].clone(),
                present[0].clone(),
                present[present.len() - 1].clone(),
            ]),
            _ => Value::Null,
        },
        "product" => or_null(!floats.is_empty(), floats.iter().product()),
        "bit_and" | "bit_or" | "bit_xor" => {
            let ints = present.iter().map(|v| float_or_int(v));
            match call.name {
                "bit_and" => ints.reduce(|a, b| a & b),
                "bit_or" => ints.reduce(|a, b| a | b),
                _ => ints.reduce(|a, b| a ^ b),
            }
            .map_or(Value::Null, Value::Int64)
        }
        "any_value" => present.first().map_or(Value::Null, |v| (*v).clone()),
        "geomean" => or_null(
            !floats.is_empty(),
            (floats.iter().map(|x| x.ln()).sum::<f64>() / floats.len() as f64).exp(),
        ),
        "var_pop" | "stddev_pop" | "var_samp" | "variance" | "stddev_samp" | "stddev" => {
            let sample = !call.name.ends_with("pop");
            let n = floats.len() as f64;
            if floats.is_empty() || (sample && floats.len() == 1) {
                Value::Null
            } else {
                let (_, m2) = moments(&floats);
                let var = m2 / if sample { n - 1.0 } else { n };
                Value::Float64(if call.name.starts_with("stddev") {
                    var.sqrt()
                } else {
                    var
                })
            }
        }
        "skewness" | "kurtosis" | "kurtosis_pop" => {
            let least = match call.name {
                "skewness" => 3,
                "kurtosis" => 4,
                _ => 1,
            };
            if floats.len() < least {
                return Ok(Value::Null);
            }
            if floats.iter().any(|x| !x.is_finite()) {
                return Ok(Value::Float64(f64::NAN));
            }
            let n = floats.len() as f64;
            let mean = floats.iter().sum::<f64>() / n;
            let central = |k: i32| floats.iter().map(|x| (x - mean).powi(k)).sum::<f64>();
            let (m2, m3, m4) = (central(2), central(3), central(4));
            // Exactly zero only when every value is equal, in both.
            if floats.iter().all(|x| *x == floats[0]) {
                return Ok(Value::Null);
            }
            let g2 = n * m4 / (m2 * m2);
            Value::Float64(match call.name {
                "skewness" => (n * (n - 1.0)).sqrt() / (n - 2.0) * n.sqrt() * m3 / m2.powf(1.5),
                "kurtosis" => {
                    (n - 1.0) * ((n + 1.0) * g2 - 3.0 * (n - 1.0)) / ((n - 2.0) * (n - 3.0))
                }
                _ => g2 - 3.0,
            })
        }
        "relvar" => {
            let finite: Vec<f64> = floats.iter().copied().filter(|x| !x.is_nan()).collect();
            let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
            let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            or_null(!finite.is_empty() && max != 0.0, (max - min) / max)
        }
        "regr_slope" | "regr_intercept" | "regr_r2" | "corr" | "covar_pop" | "covar_samp"
        | "regr_avgx" | "regr_avgy" | "regr_sxx" | "regr_syy" | "regr_sxy" | "regr_count" => {
            let pairs: Vec<(f64, f64)> = window
                .iter()
                .filter_map(|r| Some((float(&r[0])?, float(&r[1])?)))
                .filter(|(y, x)| y.is_finite() && x.is_finite())
                .collect();
            if call.name == "regr_count" {
                return Ok(Value::Int64(pairs.len() as i64));
            }
            if pairs.is_empty() {
                return Ok(Value::Null);
            }
            let n = pairs.len() as f64;
            let (mx, my) = (
                pairs.iter().map(|p| p.1).sum::<f64>() / n,
                pairs.iter().map(|p| p.0).sum::<f64>() / n,
            );
            let sxx: f64 = pairs.iter().map(|p| (p.1 - mx) * (p.1 - mx)).sum();
            let syy: f64 = pairs.iter().map(|p| (p.0 - my) * (p.0 - my)).sum();
            let sxy: f64 = pairs.iter().map(|p| (p.1 - mx) * (p.0 - my)).sum();
            // Exactly zero only when every x (or y) is equal, in both.
            let (x_varies, y_varies) = (
                pairs.iter().any(|p| p.1 != pairs[0].1),
                pairs.iter().any(|p| p.0 != pairs[0].0),
            );
            match call.name {
                "regr_slope" => or_null(x_varies, sxy / sxx),
                "regr_intercept" => or_null(x_varies, my - sxy / sxx * mx),
                "regr_r2" if x_varies && !y_varies => Value::Float64(1.0),
                "regr_r2" => or_null(x_varies, sxy * sxy / (sxx * syy)),
                "corr" => or_null(x_varies && y_varies, sxy / (sxx * syy).sqrt()),
                "covar_pop" => Value::Float64(sxy / n),
                "covar_samp" => or_null(pairs.len() >= 2, sxy / (n - 1.0)),
                "regr_avgx" => Value::Float64(mx),
                "regr_avgy" => Value::Float64(my),
                "regr_sxx" => Value::Float64(sxx),
                "regr_syy" => Value::Float64(syy),
                _ => Value::Float64(sxy),
            }
        }
        other => panic!("no naive oracle for {other}"),
    })
}

fn float_or_int(v: &Value) -> i64 {
    match v {
        Value::Int64(x) => *x,
        other => panic!("not an integer: {other:?}"),
    }
}

/// Results over sliding windows computed from scratch for each window: the
/// window's lifts folded by a `Recalc` (for sketches: the sketch of exactly
/// the window's contents).
struct FromScratch<'r> {
    rows: &'r Rows,
    window: usize,
}

impl AggregateVisitor for FromScratch<'_> {
    type Output = Vec<Result<Value, String>>;
    fn visit<A: Aggregate>(self, a: A) -> Self::Output {
        (0..self.rows.len())
            .map(|end| {
                let mut w = Recalc::new(a.clone());
                for row in end.saturating_sub(self.window - 1)..=end {
                    w.insert(a.lift(self.rows, row));
                }
                let mut sink = ValueSink::default();
                a.lower(&w.query())
                    .map_err(|e| e.to_string())?
                    .write(&mut sink);
                sink.into_values()
                    .pop()
                    .ok_or_else(|| "no value".to_string())
            })
            .collect()
    }
}

fn is_sketch(name: &str) -> bool {
    matches!(
        name,
        "approx_count_distinct"
            | "bloom_contains"
            | "countmin"
            | "approx_percentile"
            | "approx_median"
    )
}

fn check(call: &TestCall) {
    let resolved = call.resolve();
    let strategy = (rows(resolved.inputs(), 60), 1usize..9);
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    let result = runner.run(&strategy, |(rows, window)| {
        let data = Rows::new(rows.clone());
        let expected: Vec<Result<Value, String>> = if is_sketch(call.name) {
            resolved.visit(FromScratch {
                rows: &data,
                window,
            })
        } else {
            (0..rows.len())
                .map(|end| naive(call, &rows[end.saturating_sub(window - 1)..=end]))
                .collect()
        };
        // The DabaLite run stops at the first error; compare up to there.
        let first_error = expected.iter().position(Result::is_err);
        let got = resolved.visit(CollectOutput::sliding(&data, window));
        match (got, first_error) {
            (Ok(values), None) => {
                let expected: Vec<Value> = expected.into_iter().map(Result::unwrap).collect();
                prop_assert!(
                    all_approx_eq(&values, &expected, 1e-9),
                    "window {window}\n got      {values:?}\n expected {expected:?}"
                );
            }
            (Err(e), Some(i)) => prop_assert_eq!(Err(e.to_string()), expected[i].clone()),
            (got, _) => prop_assert!(false, "got {got:?}, expected {expected:?}"),
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{}: {e}", call.describe());
    }
}

#[test]
fn sliding_windows_match_a_from_scratch_computation() {
    for call in &all_calls() {
        check(call);
    }
}

#[test]
fn literal_parameters_reach_the_sketches() {
    let calls = all_calls();
    let bloom = calls.iter().find(|c| c.name == "bloom_contains").unwrap();
    assert_eq!(bloom.literal(1), Some(&Literal::Int64(3)));
    let rows = Rows::new(vec![
        vec![Value::Int64(1)],
        vec![Value::Int64(3)],
        vec![Value::Int64(5)],
    ]);
    let out = bloom
        .resolve()
        .visit(CollectOutput::sliding(&rows, 2))
        .unwrap();
    assert_eq!(
        out,
        vec![
            Value::Boolean(false),
            Value::Boolean(true),
            Value::Boolean(true)
        ]
    );
}

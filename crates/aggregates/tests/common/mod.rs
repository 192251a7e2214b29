//! Shared test helpers: every registered call, random rows for its inputs,
//! and approximate comparison of results.

#![allow(dead_code)]

use proptest::prelude::*;
use sliq_aggregates::registry::{self, CallOptions};
use sliq_aggregates::{ArgType, Literal, ResolvedAggregate, Value, ValueType};

/// A call to test: name, arguments, options.
pub struct TestCall {
    pub name: &'static str,
    pub args: Vec<ArgType>,
    pub options: CallOptions,
}

impl TestCall {
    pub fn resolve(&self) -> ResolvedAggregate {
        registry::resolve(self.name, &self.args, self.options)
            .unwrap_or_else(|e| panic!("{}: {e}", self.describe()))
    }

    pub fn describe(&self) -> String {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let nulls = if self.options.ignore_nulls {
            " IGNORE NULLS"
        } else {
            ""
        };
        format!("{}({}){nulls}", self.name, args.join(", "))
    }

    /// The constant parameters, if any (after the value arguments).
    pub fn literal(&self, i: usize) -> Option<&Literal> {
        self.args.get(i).and_then(|a| a.literal.as_ref())
    }
}

fn call(name: &'static str, args: Vec<ArgType>) -> TestCall {
    TestCall {
        name,
        args,
        options: CallOptions::default(),
    }
}

fn col(ty: ValueType) -> ArgType {
    ArgType::column(ty)
}

fn lit(l: Literal) -> ArgType {
    ArgType::literal(l)
}

use ValueType::*;

/// A decimal type for the tests: its values reach 10^38 - 1, so that sums
/// overflow the DECIMAL(38) result now and then.
pub const DECIMAL: ValueType = Decimal {
    precision: 38,
    scale: 2,
};

/// Every registered function, with each family of argument types.
pub fn all_calls() -> Vec<TestCall> {
    let mut calls = vec![call("count", vec![])];
    for ty in [
        Boolean, Int64, Float64, Utf8, Timestamp, Date, Interval, DECIMAL,
    ] {
        calls.push(call("count", vec![col(ty)]));
        calls.push(call("min", vec![col(ty)]));
        calls.push(call("max", vec![col(ty)]));
    }
    for ty in [Int64, Float64] {
        for name in [
            "sum",
            "avg",
            "mean",
            "geomean",
            "product",
            "var_pop",
            "var_samp",
            "variance",
            "stddev_pop",
            "stddev_samp",
            "stddev",
            "skewness",
            "kurtosis",
            "kurtosis_pop",
            "relvar",
            "approx_median",
        ] {
            calls.push(call(name, vec![col(ty)]));
        }
        calls.push(call(
            "approx_percentile",
            vec![col(ty), lit(Literal::Float64(0.9))],
        ));
    }
    for name in [
        "regr_slope",
        "regr_intercept",
        "regr_r2",
        "corr",
        "covar_pop",
        "covar_samp",
        "regr_avgx",
        "regr_avgy",
        "regr_sxx",
        "regr_syy",
        "regr_sxy",
        "regr_count",
    ] {
        calls.push(call(name, vec![col(Float64), col(Int64)]));
    }
    calls.push(call(
        "approx_percentile",
        vec![
            col(Float64),
            lit(Literal::Float64(0.25)),
            lit(Literal::Float64(0.05)),
        ],
    ));
    for name in ["bool_and", "every", "bool_or", "count_if"] {
        calls.push(call(name, vec![col(Boolean)]));
    }
    for name in ["bit_and", "bit_or", "bit_xor"] {
        calls.push(call(name, vec![col(Int64)]));
    }
    calls.push(call("sum", vec![col(DECIMAL)]));
    calls.push(call("avg", vec![col(DECIMAL)]));
    for x in [Int64, Float64, Utf8, Boolean, DECIMAL] {
        for y in [Int64, Utf8, Float64, DECIMAL] {
            calls.push(call("argmax", vec![col(x), col(y)]));
            calls.push(call("argmin", vec![col(x), col(y)]));
            calls.push(call("max_by", vec![col(y), col(x)]));
            calls.push(call("arg_min", vec![col(y), col(x)]));
            calls.push(call("arg_max", vec![col(y), col(x)]));
            calls.push(call("arg_min_null", vec![col(y), col(x)]));
        }
    }
    for ty in [Int64, Float64, Utf8, Boolean, DECIMAL] {
        calls.push(call("maxcount", vec![col(ty)]));
        calls.push(call("mincount", vec![col(ty)]));
        calls.push(call("approx_count_distinct", vec![col(ty)]));
    }
    for ty in [Int64, Utf8, Float64, DECIMAL] {
        calls.push(call("any_value", vec![col(ty)]));
        for name in ["first_value", "last_value", "first", "last"] {
            calls.push(call(name, vec![col(ty)]));
            calls.push(TestCall {
                name,
                args: vec![col(ty)],
                options: CallOptions { ignore_nulls: true },
            });
        }
    }
    calls.push(call("row_number", vec![]));
    for ty in [Int64, Float64, Utf8, Boolean] {
        calls.push(call("lag", vec![col(ty)]));
        calls.push(call("lag", vec![col(ty), lit(Literal::Int64(0))]));
        calls.push(call("lag", vec![col(ty), lit(Literal::Int64(3))]));
    }
    calls.push(call(
        "lag",
        vec![col(Int64), lit(Literal::Int64(2)), lit(Literal::Int64(-7))],
    ));
    calls.push(call(
        "lag",
        vec![
            col(Utf8),
            lit(Literal::Int64(1)),
            lit(Literal::Utf8("none".into())),
        ],
    ));
    calls.push(call("sum", vec![col(Interval)]));
    for ty in [Int64, Float64, Timestamp, Interval, DECIMAL] {
        calls.push(call("m4", vec![col(ty)]));
    }
    calls.push(call(
        "bloom_contains",
        vec![col(Int64), lit(Literal::Int64(3))],
    ));
    calls.push(call(
        "bloom_contains",
        vec![
            col(Utf8),
            lit(Literal::Utf8("a".into())),
            lit(Literal::Int64(2)),
        ],
    ));
    calls.push(call("countmin", vec![col(Int64), lit(Literal::Int64(2))]));
    // Decimal constants take the argument's scale: 0.03 is 3, -7.5 is -750.
    calls.push(call("lag", vec![col(DECIMAL)]));
    calls.push(call(
        "lag",
        vec![
            col(DECIMAL),
            lit(Literal::Int64(2)),
            lit(Literal::Float64(-7.5)),
        ],
    ));
    calls.push(call(
        "bloom_contains",
        vec![col(DECIMAL), lit(Literal::Float64(0.03))],
    ));
    calls.push(call("countmin", vec![col(DECIMAL), lit(Literal::Int64(0))]));
    calls.push(call(
        "countmin",
        vec![col(Utf8), lit(Literal::Utf8("b".into()))],
    ));
    calls
}

/// Values of `ty`, with NULLs, ties and (for floats) NaN, ±∞ and -0.0.
pub fn value(ty: ValueType, wide_ints: bool) -> BoxedStrategy<Value> {
    match ty {
        Boolean => {
            prop_oneof![1 => Just(Value::Null), 4 => any::<bool>().prop_map(Value::Boolean)].boxed()
        }
        Int64 | Timestamp | Date | Interval if wide_ints => prop_oneof![
            1 => Just(Value::Null),
            4 => (-6i64..6).prop_map(Value::Int64),
            2 => any::<i64>().prop_map(Value::Int64),
        ]
        .boxed(),
        Int64 | Timestamp | Date | Interval => {
            prop_oneof![1 => Just(Value::Null), 6 => (-6i64..6).prop_map(Value::Int64)].boxed()
        }
        Float64 => prop_oneof![
            1 => Just(Value::Null),
            8 => (-160i32..160).prop_map(|q| Value::Float64(q as f64 * 0.25)),
            1 => prop_oneof![
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(-0.0),
            ]
            .prop_map(Value::Float64),
        ]
        .boxed(),
        Utf8 => prop_oneof![1 => Just(Value::Null), 5 => "[a-c]{0,2}".prop_map(|s| Value::str(&s))]
            .boxed(),
        Decimal { precision, .. } => {
            let max = 10i128.pow(u32::from(precision)) - 1;
            prop_oneof![
                1 => Just(Value::Null),
                6 => (-6i128..6).prop_map(Value::Decimal),
                1 => prop_oneof![Just(max), Just(-max), -max..=max].prop_map(Value::Decimal),
            ]
            .boxed()
        }
    }
}

/// Rows of values for a call's input types.
pub fn rows(inputs: &[ValueType], max_rows: usize) -> BoxedStrategy<Vec<Vec<Value>>> {
    let row: Vec<BoxedStrategy<Value>> = inputs.iter().map(|ty| value(*ty, true)).collect();
    prop::collection::vec(row, 0..max_rows).boxed()
}

/// Equal, or both NaN, or floats within `rel` relative error.
pub fn approx_eq(a: &Value, b: &Value, rel: f64) -> bool {
    match (a, b) {
        (Value::Float64(x), Value::Float64(y)) => {
            (x.is_nan() && y.is_nan())
                || x == y
                || (x - y).abs() <= rel * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Struct(xs), Value::Struct(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| approx_eq(x, y, rel))
        }
        _ => a == b,
    }
}

pub fn all_approx_eq(a: &[Value], b: &[Value], rel: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| approx_eq(x, y, rel))
}

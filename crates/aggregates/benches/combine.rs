//! Cost of one ⊗ per aggregate function: `combine_into` (what the windows
//! call, in place) and `combine` (a fresh result, as `query` builds).
//!
//! `cargo bench -p sliq-aggregates --bench combine`

use divan::{Bencher, black_box};
use sliq_aggregates::registry::{self, CallOptions};
use sliq_aggregates::{Aggregate, AggregateVisitor, ArgType, Literal, Rows, Value, ValueType};

fn main() {
    divan::main();
}

const CALLS: &[&str] = &[
    "count(*)",
    "sum(BIGINT)",
    "sum(DOUBLE)",
    "avg(DOUBLE)",
    "max(DOUBLE)",
    "max(VARCHAR)",
    "argmax(DOUBLE, BIGINT)",
    "maxcount(DOUBLE)",
    "first_value(DOUBLE)",
    "m4(DOUBLE)",
    "geomean(DOUBLE)",
    "stddev(DOUBLE)",
    "relvar(DOUBLE)",
    "approx_count_distinct(BIGINT)",
    "bloom_contains(BIGINT, 3)",
    "countmin(BIGINT, 3)",
    "approx_percentile(DOUBLE, 0.9)",
];

/// The call, and two rows of arguments for it.
fn setup(label: &str) -> (sliq_aggregates::ResolvedAggregate, Rows) {
    let (name, rest) = label.split_once('(').unwrap_or((label, ")"));
    let mut args = Vec::new();
    let mut rows = vec![Vec::new(), Vec::new()];
    for arg in rest
        .trim_end_matches(')')
        .split(", ")
        .filter(|a| !a.is_empty() && *a != "*")
    {
        match arg {
            "BIGINT" => {
                args.push(ArgType::column(ValueType::Int64));
                rows[0].push(Value::Int64(17));
                rows[1].push(Value::Int64(42));
            }
            "DOUBLE" => {
                args.push(ArgType::column(ValueType::Float64));
                rows[0].push(Value::Float64(17.5));
                rows[1].push(Value::Float64(42.25));
            }
            "VARCHAR" => {
                args.push(ArgType::column(ValueType::Utf8));
                rows[0].push(Value::str("sensor-17"));
                rows[1].push(Value::str("sensor-42"));
            }
            constant => {
                let literal = match constant.parse::<i64>() {
                    Ok(i) => Literal::Int64(i),
                    Err(_) => Literal::Float64(constant.parse().unwrap_or(0.5)),
                };
                args.push(ArgType::literal(literal));
            }
        }
    }
    let resolved =
        registry::resolve(name, &args, CallOptions::default()).expect("benchmark call resolves");
    (resolved, Rows::new(rows))
}

struct Bench<'a, 'b> {
    bencher: Bencher<'a, 'b>,
    rows: Rows,
    in_place: bool,
}

impl AggregateVisitor for Bench<'_, '_> {
    type Output = ();
    fn visit<A: Aggregate>(self, a: A) {
        let older = a.lift(&self.rows, 0);
        let younger = a.lift(&self.rows, 1);
        if self.in_place {
            let mut acc = older;
            self.bencher
                .bench_local(|| a.combine_into(black_box(&mut acc), black_box(&younger)));
        } else {
            self.bencher
                .bench_local(|| a.combine(black_box(&older), black_box(&younger)));
        }
    }
}

#[divan::bench(args = CALLS)]
fn combine_into(bencher: Bencher, call: &str) {
    let (resolved, rows) = setup(call);
    resolved.visit(Bench {
        bencher,
        rows,
        in_place: true,
    });
}

#[divan::bench(args = CALLS)]
fn combine(bencher: Bencher, call: &str) {
    let (resolved, rows) = setup(call);
    resolved.visit(Bench {
        bencher,
        rows,
        in_place: false,
    });
}

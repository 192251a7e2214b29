//! Monoid laws for every registered function: identity, associativity, and
//! "any association order gives the left fold's result" — compared on the
//! lowered SQL results (exactly, or within 1e-9 relative for floats).

mod common;

use common::{TestCall, all_approx_eq, all_calls, approx_eq, rows};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sliq_aggregates::{
    Aggregate, AggregateVisitor, OutputValue, PanedAggregate, Rows, Value, ValueSink,
};

const TOLERANCE: f64 = 1e-9;

fn lower<A: Aggregate>(a: &A, agg: &A::Agg) -> Result<Value, String> {
    let mut sink = ValueSink::default();
    a.lower(agg).map_err(|e| e.to_string())?.write(&mut sink);
    sink.into_values()
        .pop()
        .ok_or_else(|| "no value written".to_string())
}

/// Folds `values` as a random binary tree: `cuts` picks the split points.
fn fold_tree<A: Aggregate>(
    a: &A,
    values: &[A::Agg],
    cuts: &mut impl Iterator<Item = usize>,
) -> A::Agg {
    match values {
        [] => a.identity(),
        [one] => one.clone(),
        _ => {
            let mid = 1 + cuts.next().unwrap_or(0) % (values.len() - 1);
            let left = fold_tree(a, &values[..mid], cuts);
            let right = fold_tree(a, &values[mid..], cuts);
            a.combine(&left, &right)
        }
    }
}

struct Laws<'r> {
    rows: &'r Rows,
    cuts: &'r [usize],
}

impl AggregateVisitor for Laws<'_> {
    type Output = Result<(), String>;

    /// A paned aggregate's inputs lift to what its rows lift to, and
    /// `nothing` to the identity; then the monoid laws.
    fn visit_paned<A: PanedAggregate>(self, a: A) -> Self::Output {
        for r in 0..self.rows.len() {
            let (row, input) = (a.lift(self.rows, r), a.lift_input(&a.input(self.rows, r)));
            if lower(&a, &row) != lower(&a, &input) {
                return Err(format!("row {r} and its input lift differently"));
            }
        }
        if lower(&a, &a.lift_input(&a.nothing())) != lower(&a, &a.identity()) {
            return Err("`nothing` does not lift to the identity".into());
        }
        // Inputs added in place, at either end, give what merging their
        // lifts gives.
        let mut folded = a.identity();
        let mut merged = a.identity();
        let mut prepended = a.identity();
        let mut merged_before = a.identity();
        for r in 0..self.rows.len() {
            let input = a.input(self.rows, r);
            a.insert_input(&mut folded, &input);
            merged = a.combine(&merged, &a.lift_input(&input));
            if lower(&a, &folded) != lower(&a, &merged) {
                return Err(format!(
                    "inserting row {r}'s input in place differs from merging it"
                ));
            }
            a.prepend_input(&mut prepended, &input);
            merged_before = a.combine(&a.lift_input(&input), &merged_before);
            if lower(&a, &prepended) != lower(&a, &merged_before) {
                return Err(format!(
                    "prepending row {r}'s input in place differs from merging it first"
                ));
            }
        }
        self.visit(a)
    }

    fn visit<A: Aggregate>(self, a: A) -> Self::Output {
        let lifted: Vec<A::Agg> = (0..self.rows.len()).map(|r| a.lift(self.rows, r)).collect();
        let same = |x: &Result<Value, String>, y: &Result<Value, String>| match (x, y) {
            (Ok(x), Ok(y)) => approx_eq(x, y, TOLERANCE),
            (Err(x), Err(y)) => x == y,
            _ => false,
        };
        let id = a.identity();
        for (i, x) in lifted.iter().enumerate() {
            let plain = lower(&a, x);
            let left_id = lower(&a, &a.combine(&id, x));
            let right_id = lower(&a, &a.combine(x, &id));
            if !same(&plain, &left_id) || !same(&plain, &right_id) {
                return Err(format!(
                    "identity law fails at row {i}: {plain:?} {left_id:?} {right_id:?}"
                ));
            }
        }
        for (i, w) in lifted.windows(3).enumerate() {
            let l = lower(&a, &a.combine(&a.combine(&w[0], &w[1]), &w[2]));
            let r = lower(&a, &a.combine(&w[0], &a.combine(&w[1], &w[2])));
            if !same(&l, &r) {
                return Err(format!(
                    "associativity fails at rows {i}..{}: {l:?} vs {r:?}",
                    i + 3
                ));
            }
        }
        let left_fold = lifted
            .iter()
            .fold(a.identity(), |acc, x| a.combine(&acc, x));
        let in_place = lifted.iter().fold(a.identity(), |mut acc, x| {
            a.combine_into(&mut acc, x);
            acc
        });
        let tree = fold_tree(&a, &lifted, &mut self.cuts.iter().copied());
        let (left, in_place, tree) = (
            lower(&a, &left_fold),
            lower(&a, &in_place),
            lower(&a, &tree),
        );
        if !same(&left, &tree) || !same(&left, &in_place) {
            return Err(format!(
                "fold orders disagree: left {left:?}, in place {in_place:?}, tree {tree:?}"
            ));
        }
        Ok(())
    }
}

fn check(call: &TestCall) {
    let resolved = call.resolve();
    let strategy = (
        rows(resolved.inputs(), 40),
        prop::collection::vec(any::<usize>(), 40),
    );
    let mut runner = TestRunner::new(Config {
        cases: 96,
        ..Config::default()
    });
    let result = runner.run(&strategy, |(rows, cuts)| {
        let rows = Rows::new(rows);
        resolved
            .visit(Laws {
                rows: &rows,
                cuts: &cuts,
            })
            .map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{}: {e}", call.describe());
    }
}

#[test]
fn every_registered_function_is_a_lawful_monoid() {
    let calls = all_calls();
    assert!(
        calls.len() > 90,
        "the call list covers every function and type family"
    );
    for call in &calls {
        check(call);
    }
}

#[test]
fn tolerance_helper_is_strict_enough_to_matter() {
    assert!(!all_approx_eq(
        &[Value::Float64(1.0)],
        &[Value::Float64(1.0 + 1e-6)],
        TOLERANCE
    ));
    assert!(all_approx_eq(
        &[Value::Float64(f64::NAN)],
        &[Value::Float64(f64::NAN)],
        TOLERANCE
    ));
}

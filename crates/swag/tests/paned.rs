//! `PanedWindow` against a from-scratch fold on a non-commutative monoid,
//! with its ⊗ and lift counts per operation (the aggregates it keeps are
//! counted in `bounds.rs`).

use std::cell::Cell;
use std::rc::Rc;

use proptest::prelude::*;
use sliq_swag::monoids::Concat;
use sliq_swag::{LiftInput, Monoid, PanedWindow};

/// String concatenation over letters, counting ⊗ calls, lifts and the
/// partial aggregates alive.
#[derive(Clone, Default)]
struct Letters {
    combines: Rc<Cell<u64>>,
    lifts: Rc<Cell<u64>>,
}

impl Monoid for Letters {
    type Agg = String;
    fn identity(&self) -> String {
        String::new()
    }
    fn combine(&self, a: &String, b: &String) -> String {
        self.combines.set(self.combines.get() + 1);
        Concat.combine(a, b)
    }
    fn combine_into(&self, acc: &mut String, younger: &String) {
        self.combines.set(self.combines.get() + 1);
        Concat.combine_into(acc, younger)
    }
}

impl LiftInput for Letters {
    type Input = char;
    fn lift_input(&self, input: &char) -> String {
        self.lifts.set(self.lifts.get() + 1);
        input.to_string()
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(char),
    Evict,
    Query,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        4 => proptest::char::range('a', 'z').prop_map(Op::Insert),
        3 => Just(Op::Evict),
        2 => Just(Op::Query),
    ];
    // Bursts grow and drain the window through every arrangement of panes.
    let burst = (op, 1usize..40).prop_map(|(op, n)| vec![op; n]);
    prop::collection::vec(burst, 0..60).prop_map(|bursts| bursts.into_iter().flatten().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn matches_a_fold_of_the_window_within_its_bounds(pane in 1usize..9, ops in ops()) {
        let monoid = Letters::default();
        let (combines, lifts) = (monoid.combines.clone(), monoid.lifts.clone());
        let mut window = PanedWindow::new(monoid, pane);
        let mut oracle = std::collections::VecDeque::new();
        let counted = |f: &mut dyn FnMut()| {
            let before = (combines.get(), lifts.get());
            f();
            (combines.get() - before.0, lifts.get() - before.1)
        };
        for op in &ops {
            match op {
                Op::Insert(c) => {
                    let (combined, lifted) = counted(&mut || window.insert(*c));
                    prop_assert!(combined <= 10 && lifted <= 2, "insert: {combined} ⊗, {lifted} lifts");
                    oracle.push_back(*c);
                }
                Op::Evict => {
                    let mut evicted = false;
                    let (combined, lifted) = counted(&mut || evicted = window.evict());
                    prop_assert!(combined <= 7 && lifted <= 1, "evict: {combined} ⊗, {lifted} lifts");
                    prop_assert_eq!(evicted, oracle.pop_front().is_some());
                }
                Op::Query => {
                    let mut result = String::new();
                    let (combined, _) = counted(&mut || result = window.query());
                    prop_assert!(combined <= 5, "query: {combined} ⊗");
                    prop_assert_eq!(result, oracle.iter().collect::<String>());
                }
            }
            prop_assert_eq!(window.len(), oracle.len());
        }
        while oracle.pop_front().is_some() {
            prop_assert!(window.evict());
            prop_assert_eq!(window.query(), oracle.iter().collect::<String>());
        }
        prop_assert!(!window.evict());
        prop_assert_eq!(window.query(), "");
    }
}

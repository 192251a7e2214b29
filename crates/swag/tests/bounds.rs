//! The paper's exact bounds: ⊗ calls per operation (worst case and average on
//! a steady sliding window) and aggregates stored; and the aggregates a
//! `PanedWindow` stores.

use std::cell::Cell;
use std::rc::Rc;

use sliq_swag::monoids::{Affine, AffineMap};
use sliq_swag::{
    Daba, DabaLite, FifoAggregator, LiftInput, Monoid, PanedWindow, Recalc, TwoStacks,
    TwoStacksLite,
};

/// Wraps a monoid and counts its ⊗ calls.
#[derive(Clone)]
struct Counting<M> {
    inner: M,
    calls: Rc<Cell<u64>>,
}

impl<M: Monoid> Monoid for Counting<M> {
    type Agg = M::Agg;
    fn identity(&self) -> M::Agg {
        self.inner.identity()
    }
    fn combine(&self, a: &M::Agg, b: &M::Agg) -> M::Agg {
        self.calls.set(self.calls.get() + 1);
        self.inner.combine(a, b)
    }
    fn combine_into(&self, acc: &mut M::Agg, younger: &M::Agg) {
        self.calls.set(self.calls.get() + 1);
        self.inner.combine_into(acc, younger)
    }
}

#[derive(Default, Debug)]
struct OpStats {
    max_insert: u64,
    max_evict: u64,
    max_query: u64,
    steady_insert: u64,
    steady_evict: u64,
    steady_rounds: u64,
}

fn value(i: u64) -> AffineMap {
    AffineMap { a: i | 1, b: i }
}

/// Grows and drains windows of many sizes, then slides at a steady size,
/// recording the ⊗ calls of every operation.
fn measure<W: FifoAggregator<Counting<Affine>>>() -> OpStats {
    let calls = Rc::new(Cell::new(0));
    let monoid = Counting {
        inner: Affine,
        calls: calls.clone(),
    };
    let mut w = W::new(monoid);
    let mut stats = OpStats::default();
    let counted = |f: &mut dyn FnMut()| {
        let before = calls.get();
        f();
        calls.get() - before
    };
    let mut i = 0;
    // Irregular phases: dynamic sizes reach every fixup case.
    for (grow, shrink) in [
        (1, 1),
        (5, 3),
        (17, 10),
        (100, 99),
        (64, 64),
        (1000, 400),
        (3, 600),
    ] {
        for _ in 0..grow {
            i += 1;
            stats.max_insert = stats.max_insert.max(counted(&mut || w.insert(value(i))));
            stats.max_query = stats.max_query.max(counted(&mut || {
                std::hint::black_box(w.query());
            }));
        }
        for _ in 0..shrink {
            stats.max_evict = stats.max_evict.max(counted(&mut || assert!(w.evict())));
            stats.max_query = stats.max_query.max(counted(&mut || {
                std::hint::black_box(w.query());
            }));
        }
    }
    // Steady slide at size 1000.
    while w.len() < 1000 {
        i += 1;
        w.insert(value(i));
    }
    for _ in 0..100_000 {
        i += 1;
        let e = counted(&mut || assert!(w.evict()));
        let n = counted(&mut || w.insert(value(i)));
        stats.max_insert = stats.max_insert.max(n);
        stats.max_evict = stats.max_evict.max(e);
        stats.steady_insert += n;
        stats.steady_evict += e;
        stats.steady_rounds += 1;
    }
    stats
}

fn average(total: u64, rounds: u64) -> f64 {
    total as f64 / rounds as f64
}

#[test]
fn daba_lite_combine_counts() {
    let s = measure::<DabaLite<_>>();
    assert!(s.max_insert <= 3, "{s:?}");
    assert!(s.max_evict <= 2, "{s:?}");
    assert!(s.max_query <= 1, "{s:?}");
    // The identity ⊗ is skipped when a sublist is empty, so the averages are
    // at most the paper's 2 and 1, and only slightly below them.
    let (ins, ev) = (
        average(s.steady_insert, s.steady_rounds),
        average(s.steady_evict, s.steady_rounds),
    );
    assert!((1.99..=2.0).contains(&ins), "insert average {ins}");
    assert!((0.99..=1.0).contains(&ev), "evict average {ev}");
}

#[test]
fn daba_combine_counts() {
    let s = measure::<Daba<_>>();
    assert!(s.max_insert <= 4, "{s:?}");
    assert!(s.max_evict <= 3, "{s:?}");
    assert!(s.max_query <= 1, "{s:?}");
    let (ins, ev) = (
        average(s.steady_insert, s.steady_rounds),
        average(s.steady_evict, s.steady_rounds),
    );
    assert!((2.49..=2.5).contains(&ins), "insert average {ins}");
    assert!((1.49..=1.5).contains(&ev), "evict average {ev}");
}

#[test]
fn two_stacks_family_combine_counts() {
    // Amortized: constant insert and query, evict averages ≤ 1 (Lite) or ≤ 2
    // but one evict per flip costs O(n).
    let s = measure::<TwoStacksLite<_>>();
    assert!(s.max_insert <= 1 && s.max_query <= 1, "{s:?}");
    assert!(average(s.steady_evict, s.steady_rounds) <= 1.0);
    assert!(s.max_evict >= 999, "the flip is O(n): {s:?}");
    let s = measure::<TwoStacks<_>>();
    assert!(s.max_insert <= 1 && s.max_query <= 1, "{s:?}");
    assert!(average(s.steady_evict, s.steady_rounds) <= 1.0);
    assert!(s.max_evict >= 999, "the flip is O(n): {s:?}");
}

/// A monoid whose aggregates count how many of them are alive.
#[derive(Clone)]
struct Live {
    alive: Rc<Cell<i64>>,
}

struct Counted {
    map: AffineMap,
    alive: Rc<Cell<i64>>,
}

impl Counted {
    fn new(map: AffineMap, alive: &Rc<Cell<i64>>) -> Self {
        alive.set(alive.get() + 1);
        Counted {
            map,
            alive: alive.clone(),
        }
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted::new(self.map, &self.alive)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.alive.set(self.alive.get() - 1);
    }
}

impl Monoid for Live {
    type Agg = Counted;
    fn identity(&self) -> Counted {
        Counted::new(Affine.identity(), &self.alive)
    }
    fn combine(&self, a: &Counted, b: &Counted) -> Counted {
        Counted::new(Affine.combine(&a.map, &b.map), &self.alive)
    }
    fn combine_into(&self, acc: &mut Counted, younger: &Counted) {
        acc.map = Affine.combine(&acc.map, &younger.map);
    }
}

/// Runs a dynamic workload and checks `alive == stored(n)` between operations.
fn check_space<W: FifoAggregator<Live>>(stored: impl Fn(usize) -> i64) {
    let alive = Rc::new(Cell::new(0));
    let mut w = W::new(Live {
        alive: alive.clone(),
    });
    let mut i = 0u64;
    for (grow, shrink) in [(1, 1), (7, 2), (40, 30), (300, 200), (50, 165), (500, 10)] {
        for _ in 0..grow {
            i += 1;
            w.insert(Counted::new(value(i), &alive));
            assert_eq!(
                alive.get(),
                stored(w.len()),
                "after insert at n = {}",
                w.len()
            );
            {
                std::hint::black_box(w.query());
            };
        }
        for _ in 0..shrink {
            w.evict();
            assert_eq!(
                alive.get(),
                stored(w.len()),
                "after evict at n = {}",
                w.len()
            );
        }
    }
    drop(w);
    assert_eq!(alive.get(), 0, "aggregates leaked");
}

#[test]
fn stored_aggregates_match_the_paper() {
    check_space::<DabaLite<Live>>(|n| n as i64 + 2);
    check_space::<TwoStacksLite<Live>>(|n| n as i64 + 1);
    check_space::<Daba<Live>>(|n| 2 * n as i64);
    check_space::<TwoStacks<Live>>(|n| 2 * n as i64);
    check_space::<Recalc<Live>>(|n| n as i64);
}

impl LiftInput for Live {
    type Input = u64;
    fn lift_input(&self, i: &u64) -> Counted {
        Counted::new(value(*i), &self.alive)
    }
}

#[test]
fn keeps_about_n_over_c_plus_3c_aggregates() {
    for pane in [1, 4, 16, 32] {
        let alive = Rc::new(Cell::new(0));
        let mut window = PanedWindow::new(
            Live {
                alive: alive.clone(),
            },
            pane,
        );
        let bound = |n: usize| (n / pane + 3 * pane + 9) as i64;
        let mut i = 0;
        for (grow, shrink) in [(1, 1), (7, 2), (40, 30), (1000, 200), (50, 165), (2000, 10)] {
            for _ in 0..grow {
                i += 1;
                window.insert(i);
                assert!(
                    alive.get() <= bound(window.len()),
                    "C = {pane}, n = {}: {} aggregates",
                    window.len(),
                    alive.get()
                );
            }
            for _ in 0..shrink {
                window.evict();
                assert!(
                    alive.get() <= bound(window.len()),
                    "C = {pane}, n = {}: {} aggregates",
                    window.len(),
                    alive.get()
                );
            }
        }
        drop(window);
        assert_eq!(alive.get(), 0, "aggregates leaked");
    }
}

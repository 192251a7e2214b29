//! Every aggregator against the `Recalc` oracle, on non-commutative monoids,
//! over random interleavings of insert, evict and query (dynamic sizes).

use proptest::prelude::*;
use sliq_swag::monoids::{Affine, AffineMap, Concat};
use sliq_swag::{
    Daba, DabaLite, FifoAggregator, Monoid, Recalc, TimedWindow, TwoStacks, TwoStacksLite,
};

#[derive(Clone, Debug)]
enum Op<V> {
    Insert(V),
    Evict,
    Query,
}

fn ops<V: std::fmt::Debug + Clone>(
    value: impl Strategy<Value = V>,
) -> impl Strategy<Value = Vec<Op<V>>> {
    // Bursts of inserts and of evicts make the window grow and drain, so every
    // phase of the incremental reversal (flip, shrink, shift) is reached at
    // many sizes, not only near a fixed size.
    let op = prop_oneof![
        4 => value.prop_map(Op::Insert),
        3 => Just(Op::Evict),
        2 => Just(Op::Query),
    ];
    let burst = (op, 1usize..40).prop_map(|(op, n)| vec![op; n]);
    prop::collection::vec(burst, 0..60).prop_map(|bursts| bursts.into_iter().flatten().collect())
}

/// Applies `ops` to `W` and to the oracle, comparing after every step.
fn check_against_oracle<M, W>(monoid: M, ops: &[Op<M::Agg>]) -> Result<(), TestCaseError>
where
    M: Monoid + Clone,
    M::Agg: PartialEq + std::fmt::Debug,
    W: FifoAggregator<M>,
{
    let mut window = W::new(monoid.clone());
    let mut oracle = Recalc::new(monoid);
    for op in ops {
        match op {
            Op::Insert(v) => {
                window.insert(v.clone());
                oracle.insert(v.clone());
            }
            Op::Evict => prop_assert_eq!(window.evict(), oracle.evict()),
            Op::Query => prop_assert_eq!(window.query(), oracle.query()),
        }
        prop_assert_eq!(window.len(), oracle.len());
        prop_assert_eq!(window.is_empty(), oracle.is_empty());
    }
    prop_assert_eq!(window.query(), oracle.query());
    // Drain completely: every element must come out in order.
    while oracle.evict() {
        prop_assert!(window.evict());
        prop_assert_eq!(window.query(), oracle.query());
    }
    prop_assert!(!window.evict());
    prop_assert_eq!(window.query(), oracle.query());
    Ok(())
}

fn letter() -> impl Strategy<Value = String> {
    "[a-z]"
}

fn affine() -> impl Strategy<Value = AffineMap> {
    (any::<u64>(), any::<u64>()).prop_map(|(a, b)| AffineMap { a, b })
}

/// Affine maps in [`WIDE_LANES`] lanes: a non-commutative monoid whose
/// aggregate is large enough (256 bytes) for the deque's prefetching of large
/// elements to run.
#[derive(Clone, Copy)]
struct WideAffine;

const WIDE_LANES: usize = 16;

impl Monoid for WideAffine {
    type Agg = [AffineMap; WIDE_LANES];
    fn identity(&self) -> Self::Agg {
        [Affine.identity(); WIDE_LANES]
    }
    fn combine(&self, f: &Self::Agg, g: &Self::Agg) -> Self::Agg {
        std::array::from_fn(|lane| Affine.combine(&f[lane], &g[lane]))
    }
}

fn wide_affine() -> impl Strategy<Value = [AffineMap; WIDE_LANES]> {
    affine().prop_map(|m| {
        std::array::from_fn(|lane| AffineMap {
            a: m.a.rotate_left(lane as u32) | 1,
            b: m.b ^ lane as u64,
        })
    })
}

/// The monoid of one element, whose aggregate takes no space.
#[derive(Clone, Copy, Debug)]
struct Unit;

impl Monoid for Unit {
    type Agg = ();
    fn identity(&self) {}
    fn combine(&self, _: &(), _: &()) {}
}

macro_rules! oracle_tests {
    ($($name:ident: $algo:ident),* $(,)?) => {$(
        mod $name {
            use super::*;

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(200))]

                #[test]
                fn concat_matches_oracle(ops in ops(letter())) {
                    check_against_oracle::<Concat, $algo<Concat>>(Concat, &ops)?;
                }

                #[test]
                fn affine_matches_oracle(ops in ops(affine())) {
                    check_against_oracle::<Affine, $algo<Affine>>(Affine, &ops)?;
                }

                #[test]
                fn wide_affine_matches_oracle(ops in ops(wide_affine())) {
                    check_against_oracle::<WideAffine, $algo<WideAffine>>(WideAffine, &ops)?;
                }

                /// Zero-sized aggregates: cursors cannot tell their slots
                /// apart by address alone.
                #[test]
                fn zero_sized_aggregates_match_oracle(ops in ops(Just(()))) {
                    check_against_oracle::<Unit, $algo<Unit>>(Unit, &ops)?;
                }
            }

            #[test]
            fn long_steady_slide_crosses_many_blocks() {
                // A fixed-size window sliding far: every block boundary and
                // many flips, on a non-commutative monoid.
                for size in [1usize, 2, 3, 7, 64, 1000] {
                    let mut window = $algo::new(Affine);
                    let mut oracle = Recalc::new(Affine);
                    for i in 0..(size as u64 * 3 + 5000) {
                        let v = AffineMap { a: i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1, b: i };
                        window.insert(v);
                        oracle.insert(v);
                        if window.len() > size {
                            assert!(window.evict());
                            oracle.evict();
                        }
                        if i % 97 == 0 || size < 10 {
                            assert_eq!(window.query(), oracle.query(), "size {size}, step {i}");
                        }
                    }
                }
            }

            #[test]
            fn window_large_enough_to_stream_then_small_again() {
                // 16-byte aggregates: above 65,536 of them (1 MiB) the deque
                // streams (page blocks, prefetching cursors); shrunk, it stops.
                let mut window = $algo::new(Affine);
                let mut oracle = Recalc::new(Affine);
                let mut i = 0u64;
                for (size, steps) in [(70_000usize, 150_000u64), (100, 20_000), (40_000, 60_000)] {
                    for _ in 0..steps {
                        let v = AffineMap { a: i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1, b: i };
                        window.insert(v);
                        oracle.insert(v);
                        while window.len() > size {
                            assert!(window.evict());
                            oracle.evict();
                        }
                        if i % 2_003 == 0 {
                            assert_eq!(window.query(), oracle.query(), "size {size}, step {i}");
                        }
                        i += 1;
                    }
                    assert_eq!(window.len(), size);
                    assert_eq!(window.query(), oracle.query(), "size {size}, end");
                }
            }

            #[test]
            fn empty_window_is_harmless() {
                let mut window = $algo::new(Concat);
                assert!(window.is_empty());
                assert_eq!(window.query(), "");
                for _ in 0..3 {
                    assert!(!window.evict());
                }
                window.insert("x".into());
                assert_eq!(window.query(), "x");
                assert!(window.evict());
                assert!(!window.evict());
                assert_eq!(window.query(), "");
            }

            #[test]
            fn clone_is_independent() {
                let mut window = $algo::new(Concat);
                for s in ["a", "b", "c", "d", "e"] {
                    window.insert(s.into());
                }
                window.evict();
                let mut copy = window.clone();
                copy.insert("f".into());
                window.evict();
                assert_eq!(copy.query(), "bcdef");
                assert_eq!(window.query(), "cde");
                assert_eq!(format!("{:?}", window).is_empty(), false);
            }

            #[test]
            fn with_capacity_behaves_like_new() {
                let mut window = $algo::with_capacity(Concat, 100);
                for s in ["p", "q", "r"] {
                    window.insert(s.into());
                }
                window.evict();
                assert_eq!(window.query(), "qr");
            }
        }
    )*};
}

oracle_tests! {
    daba_lite: DabaLite,
    daba: Daba,
    two_stacks: TwoStacks,
    two_stacks_lite: TwoStacksLite,
    recalc: Recalc,
}

proptest! {
    #[test]
    fn timed_window_matches_a_model_queue(
        steps in prop::collection::vec((0i64..5, "[a-z]", 0i64..30), 0..300),
    ) {
        // Each step: advance time by a small gap, insert, then evict
        // everything older than `now - range` (ranges vary, like a RANGE
        // frame's bound moving with the data).
        let mut window: TimedWindow<Concat> = TimedWindow::new(Concat);
        let mut model: std::collections::VecDeque<(i64, String)> = Default::default();
        let mut now = 0i64;
        for (gap, s, range) in steps {
            now += gap;
            window.insert(now, s.clone()).unwrap();
            model.push_back((now, s));
            let mut expected_evictions = 0;
            while model.front().is_some_and(|(t, _)| *t < now - range) {
                model.pop_front();
                expected_evictions += 1;
            }
            prop_assert_eq!(window.evict_older_than(now - range), expected_evictions);
            let expected: String = model.iter().map(|(_, s)| s.as_str()).collect();
            prop_assert_eq!(window.query(), expected);
            prop_assert_eq!(window.oldest(), model.front().map(|(t, _)| *t));
            prop_assert_eq!(window.youngest(), Some(now));
            prop_assert_eq!(window.len(), model.len());
        }
    }
}

#[test]
fn timed_window_rejects_out_of_order_and_keeps_state() {
    let mut window: TimedWindow<Concat> = TimedWindow::new(Concat);
    window.insert(10, "a".into()).unwrap();
    window.insert(10, "b".into()).unwrap();
    let err = window.insert(9, "c".into()).unwrap_err();
    assert_eq!((err.ts, err.youngest), (9, 10));
    assert!(err.to_string().contains("older than"));
    assert_eq!(window.query(), "ab");
    assert_eq!(window.len(), 2);
    assert_eq!(window.evict_older_than(11), 2);
    assert!(window.is_empty());
    assert_eq!(window.oldest(), None);
}

#[test]
fn windows_can_move_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<DabaLite<Affine>>();
    assert_send_sync::<Daba<Affine>>();
    assert_send_sync::<TwoStacks<Affine>>();
    assert_send_sync::<TwoStacksLite<Affine>>();
    assert_send_sync::<Recalc<Affine>>();
    let mut w = DabaLite::new(Affine);
    w.insert(AffineMap { a: 3, b: 1 });
    let w = std::thread::spawn(move || {
        w.insert(AffineMap { a: 2, b: 0 });
        w
    })
    .join()
    .unwrap();
    assert_eq!(w.query(), AffineMap { a: 6, b: 2 });
}

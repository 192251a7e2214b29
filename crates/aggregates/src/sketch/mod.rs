//! Mergeable sketches with fixed-size state, so that `combine` costs O(1)
//! whatever the window size, and the aggregate functions built on them.
//!
//! | function | sketch | state | error |
//! |---|---|---|---|
//! | `approx_count_distinct(x)` | HyperLogLog, 2^10 registers | 1 KiB | ≈ 3.3 % standard error |
//! | `bloom_contains(x, v [, hashes])` | Bloom filter, 4096 bits, 4 hashes | 512 B | false positives only |
//! | `countmin(x, v)` | Count-Min, 4 × 128 counters | 2 KiB | over-counts by ≤ 2.2 % of the window's rows (98 %) |
//! | `approx_percentile(x, q [, accuracy])`, `approx_median(x)` | DDSketch, 2 × 512 buckets | 4 KiB | relative error ≤ `accuracy` (1 %) |
//!
//! The crates that offer these sketches either cannot merge, or merge
//! through an allocating union object; a window combines partial aggregates
//! millions of times per second, so these are fixed-size arrays merged in
//! place by [`combine_into`](sliq_swag::Monoid::combine_into).
//!
//! Each is a [`PanedAggregate`](crate::PanedAggregate): its input is the
//! value (or its hash), so that a long window keeps its rows' inputs and a
//! sketch per pane of rows rather than a sketch per row.

/// The [`Monoid`](sliq_swag::Monoid), [`LiftInput`](sliq_swag::LiftInput)
/// and [`PanedAggregate`](crate::PanedAggregate) impls of a function whose
/// sketch is fed value hashes: the identity is the empty sketch, ⊗ is the
/// sketch's in-place `$merge`, and an input is the value's hash (`None` for
/// NULL, which adds nothing), added by `$insert` with the function as
/// `$function` and the sketch as `$sketch`.
macro_rules! hashed_sketch_function {
    (
        $function_type:ident, $sketch_type:ty, $merge:ident,
        |$function:ident, $sketch:ident, $hash:ident| $insert:expr
    ) => {
        impl<T: $crate::Scalar> sliq_swag::Monoid for $function_type<T> {
            type Agg = $sketch_type;
            fn identity(&self) -> $sketch_type {
                <$sketch_type>::default()
            }
            fn combine(&self, a: &$sketch_type, b: &$sketch_type) -> $sketch_type {
                let mut out = a.clone();
                out.$merge(b);
                out
            }
            #[inline]
            fn combine_into(&self, acc: &mut $sketch_type, younger: &$sketch_type) {
                acc.$merge(younger);
            }
        }

        impl<T: $crate::Scalar> sliq_swag::LiftInput for $function_type<T> {
            /// The value's hash; `None` for NULL.
            type Input = Option<u64>;
            #[inline]
            fn lift_input(&self, hash: &Option<u64>) -> $sketch_type {
                let mut sketch = <$sketch_type>::default();
                <Self as sliq_swag::LiftInput>::insert_input(self, &mut sketch, hash);
                sketch
            }
            #[inline]
            fn insert_input(&self, $sketch: &mut $sketch_type, hash: &Option<u64>) {
                if let Some($hash) = *hash {
                    let $function = self;
                    $insert
                }
            }
            /// The sketch is commutative: an insert.
            #[inline]
            fn prepend_input(&self, sketch: &mut $sketch_type, hash: &Option<u64>) {
                <Self as sliq_swag::LiftInput>::insert_input(self, sketch, hash);
            }
        }

        impl<T: $crate::Scalar> $crate::PanedAggregate for $function_type<T> {
            #[inline]
            fn input<C: $crate::Columns>(&self, columns: &C, row: usize) -> Option<u64> {
                T::read_hash(columns, 0, row)
            }
            fn nothing(&self) -> Option<u64> {
                None
            }
        }
    };
}

mod bloom;
mod countmin;
mod ddsketch;
mod hll;

pub use bloom::{BloomContains, BloomFilter};
pub use countmin::{CountMin, CountMinSketch};
pub use ddsketch::{ApproxPercentile, DdSketch};
pub use hll::{ApproxCountDistinct, HyperLogLog};

/// SplitMix64's finalizer: derives independent-looking hashes from one.
#[inline]
pub(crate) fn remix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

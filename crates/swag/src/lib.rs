//! Sliding-window aggregation (SWAG) in worst-case constant time.
//!
//! **Monoids.** An aggregation is a [`Monoid`]: a type of partial aggregates
//! `Agg`, an associative `combine` (⊗) and its `identity`. Nothing assumes
//! that ⊗ is commutative or invertible, so `max`, `argmax`, string
//! concatenation, sketches and matrix products all work, and no value is ever
//! "subtracted" out of a window: every result is an exact fold of the current
//! window, in order. Callers lift raw values into `Agg` before inserting them
//! and lower the aggregate after a query; this crate only sees `Agg`.
//!
//! **FIFO windows.** A [`FifoAggregator`] holds a window `v0 … v(n-1)`, oldest
//! first: `insert` appends the youngest value, `evict` drops the oldest, and
//! `query` returns `v0 ⊗ v1 ⊗ … ⊗ v(n-1)`. Inserts and evicts interleave
//! freely, so one structure serves count-based windows (evict to keep `n`),
//! time-based windows ([`TimedWindow`] evicts by timestamp) and anything else.
//!
//! **Algorithms.** Five implementations, from the paper "In-Order
//! Sliding-Window Aggregation in Worst-Case Constant Time" (Tangwongsan,
//! Hirzel, Schneider). ⊗ counts are per operation, `n` is the window size:
//!
//! | algorithm          | insert ⊗      | evict ⊗          | query ⊗ | aggregates stored |
//! |--------------------|---------------|------------------|---------|-------------------|
//! | [`DabaLite`]       | ≤ 3 (avg 2)   | ≤ 2 (avg 1)      | ≤ 1     | n + 2             |
//! | [`Daba`]           | ≤ 4 (avg 2.5) | ≤ 3 (avg 1.5)    | ≤ 1     | 2n                |
//! | [`TwoStacksLite`]  | 1             | ≤ n (amortized 1)| ≤ 1     | n + 1             |
//! | [`TwoStacks`]      | 1             | ≤ 2n (amortized 2)| ≤ 1    | 2n                |
//! | [`Recalc`]         | 0             | 0                | n − 1   | n                 |
//!
//! `DabaLite` is the default: worst-case O(1) and the least memory. All of them
//! store their window in a [`ChunkedDeque`], which never copies elements, so
//! the worst-case bounds hold for the whole operation, not only for ⊗.
//!
//! **Large aggregates.** Where a partial aggregate is much larger than the
//! value it lifts (a quantile sketch of one number), a [`PanedWindow`] keeps
//! the window's inputs and partial aggregates only per pane of `C` inputs:
//! about `n/C + 3C` of them instead of `n + 2`, still worst-case O(1) per
//! operation (at most 10 ⊗ per insert, 7 per evict, 5 per query).
//!
//! ```
//! use sliq_swag::{DabaLite, FifoAggregator, monoids::Max};
//!
//! let mut window = DabaLite::new(Max::<i64>::default());
//! for v in [3, 1, 4, 1, 5, 9, 2, 6] {
//!     window.insert(v);
//!     if window.len() > 3 {
//!         window.evict();
//!     }
//! }
//! assert_eq!(window.query(), 9); // max of [9, 2, 6]
//! ```

/// `Debug` for an aggregator: its length and current aggregate.
macro_rules! debug_by_length_and_query {
    ($name:ident) => {
        impl<M: $crate::Monoid> std::fmt::Debug for $name<M>
        where
            M::Agg: std::fmt::Debug,
        {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("len", &$crate::FifoAggregator::len(self))
                    .field("query", &$crate::FifoAggregator::query(self))
                    .finish_non_exhaustive()
            }
        }
    };
}
pub(crate) use debug_by_length_and_query;

mod daba;
mod daba_lite;
mod deque;
pub mod monoids;
mod paned;
mod pointers;
mod recalc;
mod shape;
mod split;
mod timed;
mod two_stacks;
mod two_stacks_lite;

pub use daba::Daba;
pub use daba_lite::DabaLite;
pub use deque::{ChunkedDeque, Iter, MIN_BLOCK, RetiredBlocks};
pub use monoids::FnMonoid;
pub use paned::{LiftInput, PanedWindow, pane_for_window};
pub use recalc::Recalc;
pub use shape::{DabaLiteShape, ValueOps};
pub use split::SplitDeque;
pub use timed::{OutOfOrder, TimedWindow};
pub use two_stacks::TwoStacks;
pub use two_stacks_lite::TwoStacksLite;

/// An associative operation with an identity: the algebra every window
/// aggregates with.
///
/// Laws (checked by this crate's property tests for every ready monoid):
/// `combine(identity, a) == a == combine(a, identity)` and
/// `combine(combine(a, b), c) == combine(a, combine(b, c))`.
/// Commutativity is **not** required: the first argument is always the older
/// part of the window.
pub trait Monoid {
    /// A partial aggregate.
    type Agg: Clone;

    /// The identity element: the aggregate of an empty window.
    fn identity(&self) -> Self::Agg;

    /// `a ⊗ b`, where `a` aggregates older values than `b`.
    fn combine(&self, a: &Self::Agg, b: &Self::Agg) -> Self::Agg;

    /// `acc ← acc ⊗ younger`, in place. Counts as one ⊗.
    ///
    /// Override it for large aggregates (sketches, Bloom filters) so the
    /// window updates them without a copy; the default calls [`combine`](Monoid::combine).
    fn combine_into(&self, acc: &mut Self::Agg, younger: &Self::Agg) {
        *acc = self.combine(acc, younger);
    }
}

impl<M: Monoid + ?Sized> Monoid for &M {
    type Agg = M::Agg;
    fn identity(&self) -> M::Agg {
        (**self).identity()
    }
    fn combine(&self, a: &M::Agg, b: &M::Agg) -> M::Agg {
        (**self).combine(a, b)
    }
    fn combine_into(&self, acc: &mut M::Agg, younger: &M::Agg) {
        (**self).combine_into(acc, younger)
    }
}

/// A first-in first-out sliding window that aggregates its contents with a
/// [`Monoid`].
///
/// No method panics, whatever the sequence of calls; `query` never mutates.
pub trait FifoAggregator<M: Monoid> {
    /// An empty window aggregating with `monoid`.
    fn new(monoid: M) -> Self
    where
        Self: Sized;

    /// Appends `v` (an already lifted partial aggregate) as the youngest value.
    fn insert(&mut self, v: M::Agg);

    /// Drops the oldest value. Returns `false`, changing nothing, when empty.
    fn evict(&mut self) -> bool;

    /// `v0 ⊗ … ⊗ v(n-1)`, oldest first; the identity when empty.
    fn query(&self) -> M::Agg;

    /// Number of values in the window.
    fn len(&self) -> usize;

    /// Whether the window holds no value.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A hint: start fetching the slots the next insert, evict and query
    /// will read or write. Callers that process many windows in turn (the
    /// engine's per-key loop) call it a few windows ahead, once the
    /// window's own struct had time to arrive, to overlap cache misses.
    /// Changes nothing; the default does nothing.
    fn prefetch_slots(&self) {}
}

/// Asks the CPU to bring every cache line of the value at `p` closer: all
/// the lines it spans where it lies, which for a value not aligned to a line
/// is one more than its size alone needs. Never faults, like [`prefetch`].
#[inline(always)]
pub fn prefetch_value<T>(p: *const T) {
    const LINE: usize = 64;
    let start = p.cast::<u8>();
    let skew = start.addr() % LINE;
    let first_line = start.wrapping_sub(skew);
    let mut offset = 0;
    while offset < skew + std::mem::size_of::<T>().max(1) {
        prefetch(first_line.wrapping_add(offset));
        offset += LINE;
    }
}

/// Asks the CPU to bring the cache line at `p` closer. Never faults, whatever
/// `p` points to; a no-op on targets without a prefetch instruction.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching only hints the cache; it never dereferences.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch(p.cast::<i8>(), core::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

//! DABA Lite: worst-case O(1) with n + 2 stored aggregates.

use std::mem;

use crate::deque::{ChunkedDeque, LARGE_ELEMENT_BYTES};
use crate::pointers::Pointers;
use crate::{FifoAggregator, Monoid};

/// De-Amortized Banker's Aggregator, Lite: the engine's default window.
///
/// **Worst-case O(1)** per operation: at most 3 ⊗ per insert, 2 per evict,
/// 1 per query (on a steady sliding window, on average 2 per insert and 1
/// per evict), and n + 2 aggregates for a window of n values.
///
/// One deque of aggregates with pointers `F ≤ L ≤ R ≤ A ≤ B ≤ E`
/// (`F` and `E` are the deque's front and end) and two extra aggregates:
/// - `[F, L)`: `*i = v_i ⊗ … ⊗ v_{B-1}`
/// - `[L, R)`: `*i = v_i ⊗ … ⊗ v_{R-1}`
/// - `[R, A)`: raw values; when `L ≠ R`, `agg_ra = v_R ⊗ … ⊗ v_{B-1}`
/// - `[A, B)`: `*i = v_i ⊗ … ⊗ v_{B-1}`
/// - `[B, E)`: raw values; `agg_b = v_B ⊗ … ⊗ v_{E-1}`
///
/// Size invariant: the window is empty, or `|[L,B)| + 1 = |[F,B)| − |[B,E)|`
/// and `|[L,R)| = |[R,A)|` (so `R`, the midpoint of `L` and `A`, is not
/// stored). Each operation does one step of an incremental reversal
/// (`fixup`), so the front never runs out the way Two-Stacks' does.
///
/// ```
/// use sliq_swag::{DabaLite, FifoAggregator, monoids::Concat};
///
/// let mut w = DabaLite::new(Concat);
/// for s in ["a", "b", "c", "d"] {
///     w.insert(s.to_string());
/// }
/// w.evict();
/// assert_eq!(w.query(), "bcd");
/// ```
pub struct DabaLite<M: Monoid> {
    monoid: M,
    deque: ChunkedDeque<M::Agg>,
    p: Pointers<M::Agg>,
    agg_ra: M::Agg,
    agg_b: M::Agg,
}

impl<M: Monoid> DabaLite<M> {
    /// An empty window whose storage starts sized for about `capacity` values.
    pub fn with_capacity(monoid: M, capacity: usize) -> Self {
        Self::from_deque(monoid, ChunkedDeque::with_capacity(capacity))
    }

    fn from_deque(monoid: M, deque: ChunkedDeque<M::Agg>) -> Self {
        DabaLite {
            agg_ra: monoid.identity(),
            agg_b: monoid.identity(),
            monoid,
            p: Pointers::at_end(&deque),
            deque,
        }
    }

    /// The monoid this window aggregates with.
    pub fn monoid(&self) -> &M {
        &self.monoid
    }

    /// Heap bytes held by the window's storage.
    pub fn heap_bytes(&self) -> usize {
        self.deque.heap_bytes()
    }

    /// Puts every pointer at the end after the window got its first value:
    /// that value is its own front aggregate `[F, B)`.
    ///
    /// `agg_b` is already the identity because `B = E` held before (the back
    /// list is empty in an empty window). `agg_ra`
    /// may keep a stale value: it is read only while `L ≠ R`, which only a
    /// flip establishes, and a flip overwrites it first.
    #[inline]
    fn reset_pointers(&mut self) {
        self.p = Pointers::at_end(&self.deque);
        self.p.debug_check(&self.deque);
    }

    /// The body of [`FifoAggregator::insert`].
    #[inline(always)]
    fn insert_inline(&mut self, v: M::Agg) {
        if self.deque.is_empty() {
            self.deque.push_back(v);
            self.reset_pointers();
        } else {
            self.monoid.combine_into(&mut self.agg_b, &v);
            self.deque.push_back_nonempty(v);
            self.fixup();
        }
    }

    /// `insert` for aggregates of [`LARGE_ELEMENT_BYTES`] or more: the value
    /// goes straight from the caller into its slot (one copy), and the rest
    /// of the insert is a call ([`Self::settle_large_insert`]). Inlined
    /// whole, the insert of a 512-byte Bloom filter ran about 10 % slower
    /// (the caller's loop grows and the value is copied around its frame);
    /// passed by value to a call, the value is first copied into the call's
    /// argument.
    #[inline(always)]
    fn insert_large(&mut self, v: M::Agg) {
        let first = self.deque.is_empty();
        self.deque.push_back_inline(v);
        self.settle_large_insert(first);
    }

    /// The rest of [`Self::insert_large`] once the value is in the deque:
    /// what `insert_inline` does, reading the value from its slot.
    #[inline(never)]
    fn settle_large_insert(&mut self, first: bool) {
        if first {
            self.reset_pointers();
            return;
        }
        if let Some(v) = self.deque.back() {
            self.monoid.combine_into(&mut self.agg_b, v);
        }
        self.fixup();
    }

    /// One step of the incremental reversal, after an insert into a
    /// non-empty window or an evict that left it non-empty. **At most 2 ⊗.**
    ///
    /// `[F, B)` is never empty here: the size invariant gives
    /// `|[F,B)| = |[L,B)| + 1 + |[B,E)|` before the operation, an insert does
    /// not move `F` or `B`, and an evict that empties `[F, B)` empties the window.
    #[inline(always)]
    fn fixup(&mut self) {
        debug_assert!(!self.p.front_list_is_empty(&self.deque));
        if self.p.flip_due() {
            self.p.flip(&self.deque);
            self.agg_ra = std::mem::replace(&mut self.agg_b, self.monoid.identity());
        }
        if self.p.shift_due() {
            self.p.shift(&self.deque);
        } else {
            // Shrink: *L = ΠL ⊗ aggRA; L += 1; *(A-1) = *(A-1) ⊗ ΠA; A -= 1.
            self.monoid
                .combine_into(self.deque.get_mut(&self.p.l), &self.agg_ra);
            if let Some(top_of_a) = self.p.shrink(&self.deque) {
                let (target, source) = self.deque.get_pair_mut(&self.p.a, &top_of_a);
                self.monoid.combine_into(target, source);
            }
        }
        self.p.debug_check(&self.deque);
    }

    /// `acc ← acc ⊗ query()`, in place: no temporary aggregate. **Worst-case
    /// O(1)**, at most 2 ⊗.
    pub fn combine_query_into(&self, acc: &mut M::Agg) {
        if !self.p.front_list_is_empty(&self.deque) {
            self.monoid
                .combine_into(acc, self.deque.get(&self.deque.cursor_front()));
        }
        self.monoid.combine_into(acc, &self.agg_b);
    }
}

impl<M: Monoid> FifoAggregator<M> for DabaLite<M> {
    fn new(monoid: M) -> Self {
        Self::from_deque(monoid, ChunkedDeque::new())
    }

    /// **Worst-case O(1)**, at most 3 ⊗.
    #[inline(always)]
    fn insert(&mut self, v: M::Agg) {
        if mem::size_of::<M::Agg>() >= LARGE_ELEMENT_BYTES {
            self.insert_large(v);
        } else {
            self.insert_inline(v);
        }
    }

    /// **Worst-case O(1)**, at most 2 ⊗.
    #[inline(always)]
    fn evict(&mut self) -> bool {
        if !self.deque.drop_front() {
            return false;
        }
        if self.deque.is_empty() {
            self.p.debug_check_emptied(&self.deque);
        } else {
            self.fixup();
        }
        true
    }

    /// **Worst-case O(1)**, at most 1 ⊗.
    #[inline]
    fn query(&self) -> M::Agg {
        if self.p.front_list_is_empty(&self.deque) {
            return self.agg_b.clone();
        }
        let front = self.deque.get(&self.deque.cursor_front());
        self.monoid.combine(front, &self.agg_b)
    }

    #[inline]
    fn len(&self) -> usize {
        self.deque.len()
    }

    /// An insert writes `E`, `L` and `A-1`; on a full window the evict that
    /// follows writes `L+1` and `A-2`, and the query reads `F+1` (`F` on a
    /// window still growing). The slots at `L` and `A-1` were touched by
    /// this window's previous operations; the ones each pointer reaches next
    /// may lie in a line not read for a whole window.
    fn prefetch_slots(&self) {
        let (front, end) = (self.deque.cursor_front(), self.deque.cursor_end());
        for (c, offset) in [
            (&end, 0),
            (&front, 0),
            (&front, 1),
            (&self.p.l, 1),
            (&self.p.a, -2),
        ] {
            self.deque.prefetch_slot(c, offset);
        }
    }
}

impl<M: Monoid + Clone> Clone for DabaLite<M> {
    /// Copies the window in O(n).
    fn clone(&self) -> Self {
        let deque = self.deque.clone();
        DabaLite {
            monoid: self.monoid.clone(),
            p: self.p.rebuilt_for(&deque),
            deque,
            agg_ra: self.agg_ra.clone(),
            agg_b: self.agg_b.clone(),
        }
    }
}

crate::debug_by_length_and_query!(DabaLite);

//! Two-Stacks Lite: amortized O(1) with n + 1 stored aggregates.

use crate::deque::{ChunkedDeque, Cursor};
use crate::{FifoAggregator, Monoid};

/// Two-Stacks in one deque: a front part of suffix aggregates and a back
/// part of raw values summarized by one running aggregate.
///
/// **Amortized O(1)**: 1 ⊗ per insert and per query; an evict that finds the
/// front part empty first rewrites the whole window in place (n − 1 ⊗, the
/// *flip*), so its worst case is **O(n)**. Stores n + 1 aggregates.
///
/// Pointers `F ≤ B ≤ E`: `[F, B)` holds `*i = v_i ⊗ … ⊗ v_{B-1}`; `[B, E)` holds
/// raw values and `agg_b = v_B ⊗ … ⊗ v_{E-1}`.
pub struct TwoStacksLite<M: Monoid> {
    monoid: M,
    deque: ChunkedDeque<M::Agg>,
    b: Cursor<M::Agg>,
    agg_b: M::Agg,
}

impl<M: Monoid> TwoStacksLite<M> {
    /// An empty window whose storage starts sized for about `capacity` values.
    pub fn with_capacity(monoid: M, capacity: usize) -> Self {
        Self::from_deque(monoid, ChunkedDeque::with_capacity(capacity))
    }

    fn from_deque(monoid: M, deque: ChunkedDeque<M::Agg>) -> Self {
        TwoStacksLite {
            b: deque.cursor_end(),
            agg_b: monoid.identity(),
            monoid,
            deque,
        }
    }

    /// Heap bytes held by the window's storage.
    pub fn heap_bytes(&self) -> usize {
        self.deque.heap_bytes()
    }

    /// Turns the back part into suffix aggregates, youngest first. Out of
    /// line: it runs once per n evicts, and inlined its loop would sit in
    /// the middle of every caller's.
    #[inline(never)]
    fn flip(&mut self) {
        let front = self.deque.cursor_front();
        let end = self.deque.cursor_end();
        let mut younger = end;
        self.deque.step_back(&mut younger);
        while younger != front {
            let mut older = younger;
            self.deque.step_back(&mut older);
            let (target, source) = self.deque.get_pair_mut(&older, &younger);
            self.monoid.combine_into(target, source);
            younger = older;
        }
        self.b = end;
        self.agg_b = self.monoid.identity();
    }
}

impl<M: Monoid> FifoAggregator<M> for TwoStacksLite<M> {
    fn new(monoid: M) -> Self {
        Self::from_deque(monoid, ChunkedDeque::new())
    }

    /// **Worst-case O(1)**, 1 ⊗.
    #[inline]
    fn insert(&mut self, v: M::Agg) {
        self.monoid.combine_into(&mut self.agg_b, &v);
        self.deque.push_back(v);
        if self.deque.len() == 1 {
            // Keep B a valid cursor once the deque has blocks.
            self.b = self.deque.cursor_front();
        }
    }

    /// **Amortized O(1)**, worst case O(n) when it flips.
    #[inline]
    fn evict(&mut self) -> bool {
        if self.deque.is_empty() {
            return false;
        }
        if self.deque.cursor_front() == self.b {
            self.flip();
        }
        self.deque.drop_front();
        true
    }

    /// **Worst-case O(1)**, at most 1 ⊗.
    #[inline]
    fn query(&self) -> M::Agg {
        let front = self.deque.cursor_front();
        if front == self.b {
            return self.agg_b.clone();
        }
        self.monoid.combine(self.deque.get(&front), &self.agg_b)
    }

    #[inline]
    fn len(&self) -> usize {
        self.deque.len()
    }
}

impl<M: Monoid + Clone> Clone for TwoStacksLite<M> {
    /// Copies the window in O(n).
    fn clone(&self) -> Self {
        let deque = self.deque.clone();
        TwoStacksLite {
            monoid: self.monoid.clone(),
            b: deque.cursor_at(self.b.pos()),
            deque,
            agg_b: self.agg_b.clone(),
        }
    }
}

crate::debug_by_length_and_query!(TwoStacksLite);

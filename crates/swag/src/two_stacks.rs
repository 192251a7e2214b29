//! Two-Stacks: the classic amortized O(1) sliding-window aggregator.

use crate::daba::Entry;
use crate::deque::ChunkedDeque;
use crate::{FifoAggregator, Monoid};

/// A queue made of two stacks, each entry carrying its value and the
/// aggregate of the entries below it.
///
/// **Amortized O(1)**: 1 ⊗ per insert and per query; an evict that finds the
/// front stack empty first moves the whole back stack onto it (n ⊗, the
/// *flip*), so its worst case is **O(n)**. Stores 2n aggregates.
///
/// Front stack (top = oldest): `agg = v_i ⊗ … ⊗ v_{last of front}`.
/// Back stack (top = youngest): `agg = v_{first of back} ⊗ … ⊗ v_i`.
pub struct TwoStacks<M: Monoid> {
    monoid: M,
    front: ChunkedDeque<Entry<M::Agg>>,
    back: ChunkedDeque<Entry<M::Agg>>,
}

impl<M: Monoid> TwoStacks<M> {
    /// An empty window whose stacks start sized for about `capacity` values.
    pub fn with_capacity(monoid: M, capacity: usize) -> Self {
        TwoStacks {
            monoid,
            front: ChunkedDeque::with_capacity(capacity),
            back: ChunkedDeque::with_capacity(capacity),
        }
    }

    /// Heap bytes held by the window's storage.
    pub fn heap_bytes(&self) -> usize {
        self.front.heap_bytes() + self.back.heap_bytes()
    }

    fn flip(&mut self) {
        while let Some(Entry { val, .. }) = self.back.pop_back() {
            let agg = match self.front.back() {
                Some(top) => self.monoid.combine(&val, &top.agg),
                None => val.clone(),
            };
            self.front.push_back(Entry { val, agg });
        }
    }
}

impl<M: Monoid> FifoAggregator<M> for TwoStacks<M> {
    fn new(monoid: M) -> Self {
        TwoStacks {
            monoid,
            front: ChunkedDeque::new(),
            back: ChunkedDeque::new(),
        }
    }

    /// **Worst-case O(1)**, 1 ⊗.
    #[inline]
    fn insert(&mut self, v: M::Agg) {
        let agg = match self.back.back() {
            Some(top) => self.monoid.combine(&top.agg, &v),
            None => v.clone(),
        };
        self.back.push_back(Entry { val: v, agg });
    }

    /// **Amortized O(1)**, worst case O(n) when it flips.
    #[inline]
    fn evict(&mut self) -> bool {
        if self.front.is_empty() {
            self.flip();
        }
        self.front.pop_back().is_some()
    }

    /// **Worst-case O(1)**, at most 1 ⊗.
    #[inline]
    fn query(&self) -> M::Agg {
        match (self.front.back(), self.back.back()) {
            (Some(f), Some(b)) => self.monoid.combine(&f.agg, &b.agg),
            (Some(x), None) | (None, Some(x)) => x.agg.clone(),
            (None, None) => self.monoid.identity(),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.front.len() + self.back.len()
    }
}

impl<M: Monoid + Clone> Clone for TwoStacks<M> {
    fn clone(&self) -> Self {
        TwoStacks {
            monoid: self.monoid.clone(),
            front: self.front.clone(),
            back: self.back.clone(),
        }
    }
}

crate::debug_by_length_and_query!(TwoStacks);

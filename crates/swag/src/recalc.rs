//! Recalc: the from-scratch oracle.

use std::fmt;

use crate::deque::ChunkedDeque;
use crate::{FifoAggregator, Monoid};

/// Stores the window's values and folds them at every query.
///
/// **O(1)** insert and evict with no ⊗, **O(n)** query (n − 1 ⊗). Too slow
/// for production windows; it is the oracle every other aggregator is tested
/// against, and the engine's `recalc` algorithm for cross-checking.
pub struct Recalc<M: Monoid> {
    monoid: M,
    values: ChunkedDeque<M::Agg>,
}

impl<M: Monoid> Recalc<M> {
    /// An empty window whose storage starts sized for about `capacity` values.
    pub fn with_capacity(monoid: M, capacity: usize) -> Self {
        Recalc {
            monoid,
            values: ChunkedDeque::with_capacity(capacity),
        }
    }

    /// The window's values, oldest first.
    pub fn values(&self) -> impl Iterator<Item = &M::Agg> {
        self.values.iter()
    }
}

impl<M: Monoid> FifoAggregator<M> for Recalc<M> {
    fn new(monoid: M) -> Self {
        Recalc {
            monoid,
            values: ChunkedDeque::new(),
        }
    }

    fn insert(&mut self, v: M::Agg) {
        self.values.push_back(v);
    }

    fn evict(&mut self) -> bool {
        self.values.drop_front()
    }

    /// **O(n)**: a left fold of the window.
    fn query(&self) -> M::Agg {
        let mut values = self.values.iter();
        let Some(first) = values.next() else {
            return self.monoid.identity();
        };
        let mut acc = first.clone();
        for v in values {
            self.monoid.combine_into(&mut acc, v);
        }
        acc
    }

    fn len(&self) -> usize {
        self.values.len()
    }
}

impl<M: Monoid + Clone> Clone for Recalc<M> {
    fn clone(&self) -> Self {
        Recalc {
            monoid: self.monoid.clone(),
            values: self.values.clone(),
        }
    }
}

impl<M: Monoid> fmt::Debug for Recalc<M>
where
    M::Agg: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recalc")
            .field("values", &self.values)
            .finish_non_exhaustive()
    }
}

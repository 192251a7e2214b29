//! DABA: worst-case O(1) with 2n stored aggregates.

use crate::deque::ChunkedDeque;
use crate::pointers::Pointers;
use crate::{FifoAggregator, Monoid};

/// One window element: its value and a partial aggregate whose extent
/// depends on the sublist the element is in.
#[derive(Clone)]
pub(crate) struct Entry<A> {
    pub(crate) val: A,
    pub(crate) agg: A,
}

/// De-Amortized Banker's Aggregator: Two-Stacks with the flip spread over
/// the following operations.
///
/// **Worst-case O(1)** per operation: at most 4 ⊗ per insert, 3 per evict,
/// 1 per query (on average 2.5 and 1.5 on a steady sliding window), and 2n
/// aggregates (a value and a partial aggregate per element). Prefer
/// [`DabaLite`](crate::DabaLite), which does less work in less memory; DABA
/// is kept as the published baseline.
///
/// Pointers `F ≤ L ≤ R ≤ A ≤ B ≤ E`; each entry's `agg` covers:
/// `[F,L)`: `v_i … v_{B-1}`; `[L,R)`: `v_i … v_{R-1}`; `[R,A)`: `v_R … v_i`;
/// `[A,B)`: `v_i … v_{B-1}`; `[B,E)`: `v_B … v_i`. Size invariants as for
/// DABA Lite.
pub struct Daba<M: Monoid> {
    monoid: M,
    deque: ChunkedDeque<Entry<M::Agg>>,
    p: Pointers<Entry<M::Agg>>,
}

impl<M: Monoid> Daba<M> {
    /// An empty window whose storage starts sized for about `capacity` values.
    pub fn with_capacity(monoid: M, capacity: usize) -> Self {
        Self::from_deque(monoid, ChunkedDeque::with_capacity(capacity))
    }

    fn from_deque(monoid: M, deque: ChunkedDeque<Entry<M::Agg>>) -> Self {
        Daba {
            monoid,
            p: Pointers::at_end(&deque),
            deque,
        }
    }

    /// Heap bytes held by the window's storage.
    pub fn heap_bytes(&self) -> usize {
        self.deque.heap_bytes()
    }

    /// `ΠB`: aggregate of `[B, E)`, stored in its youngest entry.
    #[inline]
    fn pi_b(&self) -> Option<&M::Agg> {
        let end = self.deque.cursor_end();
        (self.p.b != end).then(|| {
            let mut youngest = end;
            self.deque.step_back(&mut youngest);
            &self.deque.get(&youngest).agg
        })
    }

    /// `ΠF`: aggregate of `[F, B)`, stored in its oldest entry.
    #[inline]
    fn pi_f(&self) -> Option<&M::Agg> {
        let front = self.deque.cursor_front();
        (front != self.p.b).then(|| &self.deque.get(&front).agg)
    }

    #[inline]
    fn fixup(&mut self) {
        if self.p.front_list_is_empty(&self.deque) {
            self.p = Pointers::at_end(&self.deque);
        } else {
            if self.p.flip_due() {
                self.p.flip(&self.deque);
            }
            if self.p.shift_due() {
                self.p.shift(&self.deque);
            } else {
                self.shrink();
            }
        }
        self.p.debug_check(&self.deque);
    }

    /// `*L.agg = ΠL ⊗ ΠR ⊗ ΠA; L += 1; *(A-1).agg = *(A-1).val ⊗ ΠA; A -= 1`.
    fn shrink(&mut self) {
        let m = &self.monoid;
        let pi_a = (self.p.a != self.p.b).then_some(self.p.a);
        let mut top_of_r = self.p.a;
        self.deque.step_back(&mut top_of_r);
        // [R, A) is not empty here: |[L,R)| = |[R,A)| and L ≠ R.
        let mut new_l = m.combine(
            &self.deque.get(&self.p.l).agg,
            &self.deque.get(&top_of_r).agg,
        );
        if let Some(pa) = pi_a {
            m.combine_into(&mut new_l, &self.deque.get(&pa).agg);
        }
        self.deque.get_mut(&self.p.l).agg = new_l;
        self.deque.step(&mut self.p.l);

        let new_top = match pi_a {
            Some(pa) => m.combine(&self.deque.get(&top_of_r).val, &self.deque.get(&pa).agg),
            None => self.deque.get(&top_of_r).val.clone(),
        };
        self.deque.get_mut(&top_of_r).agg = new_top;
        self.p.a = top_of_r;
    }
}

impl<M: Monoid> FifoAggregator<M> for Daba<M> {
    fn new(monoid: M) -> Self {
        Self::from_deque(monoid, ChunkedDeque::new())
    }

    /// **Worst-case O(1)**, at most 4 ⊗.
    #[inline]
    fn insert(&mut self, v: M::Agg) {
        let agg = match self.pi_b() {
            Some(pi_b) => self.monoid.combine(pi_b, &v),
            None => v.clone(),
        };
        let first = self.deque.is_empty();
        self.deque.push_back(Entry { val: v, agg });
        if first {
            // The value is its own front aggregate; the pointers taken before
            // the deque had a block are not cursors into it yet.
            self.p = Pointers::at_end(&self.deque);
            self.p.debug_check(&self.deque);
        } else {
            self.fixup();
        }
    }

    /// **Worst-case O(1)**, at most 3 ⊗.
    #[inline]
    fn evict(&mut self) -> bool {
        if !self.deque.drop_front() {
            return false;
        }
        self.fixup();
        true
    }

    /// **Worst-case O(1)**, at most 1 ⊗.
    #[inline]
    fn query(&self) -> M::Agg {
        match (self.pi_f(), self.pi_b()) {
            (Some(f), Some(b)) => self.monoid.combine(f, b),
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (None, None) => self.monoid.identity(),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.deque.len()
    }
}

impl<M: Monoid + Clone> Clone for Daba<M> {
    /// Copies the window in O(n).
    fn clone(&self) -> Self {
        let deque = self.deque.clone();
        Daba {
            monoid: self.monoid.clone(),
            p: self.p.rebuilt_for(&deque),
            deque,
        }
    }
}

crate::debug_by_length_and_query!(Daba);

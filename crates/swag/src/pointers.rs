//! The four inner pointers that DABA and DABA Lite keep into their deque.

use crate::deque::{ChunkedDeque, Cursor};

/// `L`, `A` and `B` of DABA and DABA Lite; `F` and `E` are the deque's
/// front and end. The aggregators differ in what the sublists between them
/// hold and in the values they combine, not in how the pointers move, so the
/// moves live here: `flip`, `shift`, and the pointer half of `shrink`.
///
/// The papers' fourth pointer `R` is not kept: `|[L,R)| = |[R,A)|` makes it
/// the midpoint of `L` and `A`, and the algorithms only ask whether `L = R`,
/// which is whether `L = A`. A window keeps two cursors fewer.
///
/// Invariants (checked by [`debug_check`](Self::debug_check)): the order
/// `F ≤ L ≤ A ≤ B ≤ E` with `A − L` even (`R` between them), and the window
/// is empty or `|[L,B)| + 1 = |[F,B)| − |[B,E)|`.
pub(crate) struct Pointers<E> {
    pub(crate) l: Cursor<E>,
    pub(crate) a: Cursor<E>,
    pub(crate) b: Cursor<E>,
}

impl<E> Clone for Pointers<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Pointers<E> {}

impl<E> Pointers<E> {
    /// All four at the deque's end: the pointers of an empty window, and of
    /// a one-value window whose value is its own front aggregate `[F, B)`.
    #[inline]
    pub(crate) fn at_end(deque: &ChunkedDeque<E>) -> Self {
        let end = deque.cursor_end();
        Pointers {
            l: end,
            a: end,
            b: end,
        }
    }

    /// The same positions in `deque`, a copy of the deque these pointers
    /// point into. **O(blocks)**: for `Clone` impls.
    pub(crate) fn rebuilt_for(&self, deque: &ChunkedDeque<E>) -> Self {
        Pointers {
            l: deque.cursor_at(self.l.pos()),
            a: deque.cursor_at(self.a.pos()),
            b: deque.cursor_at(self.b.pos()),
        }
    }

    /// Whether the front list `[F, B)` is empty, so the window is empty or
    /// all back list.
    #[inline]
    pub(crate) fn front_list_is_empty(&self, deque: &ChunkedDeque<E>) -> bool {
        deque.cursor_front() == self.b
    }

    /// Whether the reversal is done (`L = B`) and the next step must flip.
    #[inline]
    pub(crate) fn flip_due(&self) -> bool {
        self.l == self.b
    }

    /// Flip: the old front and back lists become the inner sublists
    /// (`L = F`, `A = B = E`). The caller moves `aggB` into `aggRA`.
    #[inline]
    pub(crate) fn flip(&mut self, deque: &ChunkedDeque<E>) {
        let end = deque.cursor_end();
        self.l = deque.cursor_front();
        self.a = end;
        self.b = end;
    }

    /// Whether this step shifts (`L = R`, hence `L = R = A`) rather than
    /// shrinks.
    #[inline]
    pub(crate) fn shift_due(&self) -> bool {
        self.l == self.a
    }

    /// Shift: `[F, L)` and `[A, B)` hold the same kind of aggregate, so one
    /// element moves from one to the other by moving `L = R = A` one step.
    #[inline]
    pub(crate) fn shift(&mut self, deque: &ChunkedDeque<E>) {
        debug_assert!(self.l == self.a);
        deque.step(&mut self.a);
        self.l = self.a;
    }

    /// The pointer half of DABA Lite's shrink, after `*L` was updated:
    /// `L += 1; A -= 1`. Returns the old `A` when `[A, B)` was not empty
    /// (the caller then folds `ΠA = *A_old` into the new `*A`).
    #[inline]
    pub(crate) fn shrink(&mut self, deque: &ChunkedDeque<E>) -> Option<Cursor<E>> {
        deque.step(&mut self.l);
        let top_of_a = self.a;
        deque.step_back(&mut self.a);
        (top_of_a != self.b).then_some(top_of_a)
    }

    /// After an evict emptied the window: the pointers are at the end
    /// already, because the one-value window it left had `L = A = B = E`
    /// (the size invariant gives `|[L,B)| = 0` and `B = E`), so no store is
    /// needed. Checks that (debug builds only).
    #[inline]
    pub(crate) fn debug_check_emptied(&self, deque: &ChunkedDeque<E>) {
        debug_assert!(deque.is_empty());
        let end = deque.cursor_end();
        debug_assert!(
            self.l == end && self.a == end && self.b == end,
            "pointers of an emptied window not at its end"
        );
    }

    /// Checks the order and size invariants (debug builds only).
    #[inline]
    pub(crate) fn debug_check(&self, deque: &ChunkedDeque<E>) {
        if !cfg!(debug_assertions) {
            return;
        }
        let (f, e) = (deque.cursor_front().pos(), deque.cursor_end().pos());
        let [l, a, b] = [self.l, self.a, self.b].map(|c| c.pos());
        debug_assert!(
            f <= l && l <= a && a <= b && b <= e && (a - l) % 2 == 0,
            "pointer order F ≤ L ≤ R ≤ A ≤ B ≤ E broken: {f} {l} (R) {a} {b} {e}"
        );
        let empty = f == b && b == e;
        debug_assert!(
            empty || (b - l) + 1 == (b - f) - (e - b),
            "size invariant broken: F={f} L={l} A={a} B={b} E={e}"
        );
    }
}

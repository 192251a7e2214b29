//! [`SplitDeque`]: a FIFO queue in two parts, whose boundary only moves
//! towards the back.

use std::fmt;

use crate::deque::{ChunkedDeque, Cursor};

/// A FIFO queue of two parts: the *older* part, then the *younger* one.
/// Elements join the younger part at the back; [`admit`](Self::admit) moves
/// the younger part's oldest element into the older part, and
/// [`pop_front`](Self::pop_front) removes the oldest element of all (of the
/// older part, or of the younger one when the older part is empty).
///
/// Every operation is worst-case O(1): the elements lie in one
/// [`ChunkedDeque`], in order, and a cursor marks the boundary, so moving an
/// element across it copies nothing. A frame that ends some time before the
/// current row keeps its rows' times in one: the older part is the window,
/// the younger part the rows waiting to enter it.
///
/// ```
/// use sliq_swag::SplitDeque;
///
/// let mut times = SplitDeque::new();
/// for t in [10, 20, 30] {
///     times.push_back(t);
/// }
/// assert!(times.admit()); // 10 enters the older part
/// assert_eq!((times.older_len(), times.younger_len()), (1, 2));
/// assert_eq!(times.younger_front(), Some(&20));
/// assert_eq!(times.pop_front(), Some(10));
/// assert_eq!(times.pop_front(), Some(20)); // the older part is empty
/// assert_eq!(times.younger_front(), Some(&30));
/// ```
pub struct SplitDeque<T> {
    /// Both parts, oldest first: the older part is the first
    /// `len - younger` elements.
    deque: ChunkedDeque<T>,
    /// The younger part's oldest element. Meaningful only while `younger >
    /// 0`; it is then in `[front, end)`, because elements leave only at the
    /// front and the older part, at least empty, lies before it.
    boundary: Cursor<T>,
    /// Elements in the younger part.
    younger: usize,
}

impl<T> SplitDeque<T> {
    /// An empty queue. Allocates nothing until the first push.
    pub fn new() -> Self {
        let deque = ChunkedDeque::new();
        let boundary = deque.cursor_front();
        SplitDeque {
            deque,
            boundary,
            younger: 0,
        }
    }

    /// Elements in both parts.
    pub fn len(&self) -> usize {
        self.deque.len()
    }

    /// Whether both parts are empty.
    pub fn is_empty(&self) -> bool {
        self.deque.is_empty()
    }

    /// Elements in the older part.
    pub fn older_len(&self) -> usize {
        self.deque.len() - self.younger
    }

    /// Elements in the younger part.
    pub fn younger_len(&self) -> usize {
        self.younger
    }

    /// The older part's oldest element, if it has one.
    pub fn older_front(&self) -> Option<&T> {
        match self.older_len() {
            0 => None,
            _ => self.deque.front(),
        }
    }

    /// The younger part's oldest element, if it has one.
    pub fn younger_front(&self) -> Option<&T> {
        match self.younger {
            0 => None,
            _ => Some(self.deque.get(&self.boundary)),
        }
    }

    /// Appends `value` at the back, in the younger part.
    pub fn push_back(&mut self, value: T) {
        self.deque.push_back(value);
        if self.younger == 0 {
            // The first push may have allocated the first block: the
            // cursor is taken after it.
            self.boundary = self.deque.cursor_back();
        }
        self.younger += 1;
        self.debug_check();
    }

    /// Moves the younger part's oldest element into the older part; `false`
    /// (and no change) when the younger part is empty.
    pub fn admit(&mut self) -> bool {
        match self.younger {
            0 => false,
            1 => {
                self.younger = 0;
                true
            }
            _ => {
                self.deque.step(&mut self.boundary);
                self.younger -= 1;
                self.debug_check();
                true
            }
        }
    }

    /// Removes and returns the oldest element of all: the older part's, or,
    /// when that part is empty, the younger part's.
    pub fn pop_front(&mut self) -> Option<T> {
        if self.older_len() == 0 && self.younger > 0 {
            // The boundary is the front, which leaves: it moves first, while
            // the element after it is certainly there.
            if self.younger > 1 {
                self.deque.step(&mut self.boundary);
            }
            self.younger -= 1;
        }
        let popped = self.deque.pop_front();
        self.debug_check();
        popped
    }

    /// Bytes on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.deque.heap_bytes()
    }

    /// Checks the boundary invariant (debug builds only).
    fn debug_check(&self) {
        if cfg!(debug_assertions) && self.younger > 0 {
            debug_assert!(self.younger <= self.deque.len());
            debug_assert_eq!(
                self.boundary.pos(),
                self.deque.cursor_front().pos() + self.older_len(),
                "the boundary is not after the older part"
            );
        }
    }
}

impl<T> Default for SplitDeque<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for SplitDeque<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let older = self.older_len();
        f.debug_struct("SplitDeque")
            .field("older", &self.deque.iter().take(older).collect::<Vec<_>>())
            .field(
                "younger",
                &self.deque.iter().skip(older).collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use proptest::prelude::*;

    use super::*;

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Push,
        Admit,
        Pop,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![3 => Just(Op::Push), 2 => Just(Op::Admit), 2 => Just(Op::Pop)]
    }

    proptest! {
        /// Against a model: a `VecDeque` and the length of its older part.
        /// Long runs cross many block boundaries with the boundary cursor.
        #[test]
        fn parts_match_a_model(ops in prop::collection::vec(op(), 0..2_000)) {
            let mut split = SplitDeque::new();
            let mut model = VecDeque::new();
            let mut older = 0;
            for (next, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Push => {
                        split.push_back(next.to_string());
                        model.push_back(next.to_string());
                    }
                    Op::Admit => {
                        let admitted = older < model.len();
                        prop_assert_eq!(split.admit(), admitted);
                        older += usize::from(admitted);
                    }
                    Op::Pop => {
                        prop_assert_eq!(split.pop_front(), model.pop_front());
                        older = older.saturating_sub(1);
                    }
                }
                prop_assert_eq!(split.len(), model.len());
                prop_assert_eq!(split.older_len(), older);
                prop_assert_eq!(split.younger_len(), model.len() - older);
                prop_assert_eq!(split.older_front(), model.front().filter(|_| older > 0));
                prop_assert_eq!(split.younger_front(), model.get(older));
            }
        }
    }

    #[test]
    fn an_empty_queue_admits_and_pops_nothing() {
        let mut split = SplitDeque::<u64>::default();
        assert!(!split.admit());
        assert_eq!(split.pop_front(), None);
        assert_eq!((split.older_front(), split.younger_front()), (None, None));
        split.push_back(1);
        assert_eq!(
            format!("{split:?}"),
            "SplitDeque { older: [], younger: [1] }"
        );
        assert!(split.admit() && !split.admit());
        assert_eq!(
            format!("{split:?}"),
            "SplitDeque { older: [1], younger: [] }"
        );
    }
}

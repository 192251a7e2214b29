//! DABA Lite's pointer machine over caller-managed values.
//!
//! [`DabaLite`](crate::DabaLite) keeps its values itself and combines them
//! with its monoid. A [`DabaLiteShape`] runs the same algorithm — the same
//! deque, the same pointers `F ≤ L ≤ R ≤ A ≤ B ≤ E`, the same two extra
//! aggregates — but stores uninterpreted slots of type `T` and asks a
//! [`ValueOps`] to do every value operation on them. Several aggregates can
//! then share one window: each keeps its partial aggregate at an offset of
//! every slot, and one set of pointers serves them all. Operations come in
//! the order DABA Lite performs them, so replaying them later (before the
//! slots are reused or freed) gives each aggregate exactly what a
//! `DabaLite` of its own would hold.

use std::mem::MaybeUninit;

use crate::deque::{ChunkedDeque, Cursor, RetiredBlocks};
use crate::pointers::Pointers;

/// The value operations of a [`DabaLiteShape`]. Every pointer is to a slot
/// of the shape (or one of its two extra aggregates); the shape never reads
/// or writes the slots' contents itself.
pub trait ValueOps<T> {
    /// Writes the identity into the uninitialized slot `dst`.
    fn init(&mut self, dst: *mut T);
    /// Writes the youngest value (lifted from the current input) into the
    /// uninitialized slot `dst`.
    fn lift(&mut self, dst: *mut T);
    /// `*acc = *acc ⊗ *src`: `acc` holds the older values.
    fn combine(&mut self, acc: *mut T, src: *const T);
    /// Replaces the value at `dst` with the identity.
    fn reset(&mut self, dst: *mut T);
    /// Moves the value at `src` to `dst` (replacing what was there) and
    /// leaves the identity at `src`.
    fn take(&mut self, dst: *mut T, src: *mut T);
    /// Drops the value at `slot`, leaving it uninitialized.
    fn drop_value(&mut self, slot: *mut T);
    /// The window's aggregate is `*front ⊗ *back`, or `*back` alone.
    fn query(&mut self, front: Option<*const T>, back: *const T);
}

/// DABA Lite's pointers and storage without its values; see the module docs.
///
/// Worst-case O(1) per operation, and at most 3 `combine`s per insert, 2 per
/// evict and 1 per query, as in [`DabaLite`](crate::DabaLite). Slots are
/// `T` (plain storage, typically an array of words): the caller decides what
/// lives in them and must drop it (see [`DabaLiteShape::drain`]).
pub struct DabaLiteShape<T: Copy> {
    deque: ChunkedDeque<MaybeUninit<T>>,
    p: Pointers<MaybeUninit<T>>,
    /// `agg_ra` and `agg_b`.
    extra: [MaybeUninit<T>; 2],
}

const AGG_RA: usize = 0;
const AGG_B: usize = 1;

impl<T: Copy> Default for DabaLiteShape<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> std::fmt::Debug for DabaLiteShape<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DabaLiteShape")
            .field("len", &self.deque.len())
            .finish_non_exhaustive()
    }
}

impl<T: Copy> DabaLiteShape<T> {
    /// An empty window. Before any other operation, [`init`](Self::init)
    /// must have its two extra aggregates initialized.
    pub fn new() -> Self {
        let deque = ChunkedDeque::new();
        DabaLiteShape {
            p: Pointers::at_end(&deque),
            deque,
            extra: [MaybeUninit::uninit(); 2],
        }
    }

    /// Asks `ops` to write the identity into the two extra aggregates.
    pub fn init(&mut self, ops: &mut impl ValueOps<T>) {
        ops.init(self.extra_ptr(AGG_RA));
        ops.init(self.extra_ptr(AGG_B));
    }

    /// Number of values in the window.
    pub fn len(&self) -> usize {
        self.deque.len()
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.deque.is_empty()
    }

    fn extra_ptr(&mut self, which: usize) -> *mut T {
        self.extra[which].as_mut_ptr()
    }

    fn slot(&mut self, c: &Cursor<MaybeUninit<T>>) -> *mut T {
        self.deque.get_mut(c).as_mut_ptr()
    }

    /// Appends the youngest value: `ops.lift` writes it. **Worst-case O(1)**.
    #[inline]
    pub fn insert(&mut self, ops: &mut impl ValueOps<T>) {
        // Not `push_back(uninit)`: that would copy indeterminate bytes over
        // a reused slot whose old value a recorded operation may still read.
        self.deque.push_back_unwritten();
        let mut back = self.deque.cursor_end();
        self.deque.step_back(&mut back);
        let slot = self.slot(&back);
        ops.lift(slot);
        if self.deque.len() == 1 {
            self.reset_pointers();
        } else {
            ops.combine(self.extra_ptr(AGG_B), slot);
            self.fixup(ops);
        }
    }

    /// Drops the oldest value; `false` (and no operation) when empty. A
    /// block this drains goes to `retired`, so that pointers handed to `ops`
    /// stay valid until the caller clears it. **Worst-case O(1)**.
    #[inline]
    pub fn evict(
        &mut self,
        ops: &mut impl ValueOps<T>,
        retired: &mut RetiredBlocks<MaybeUninit<T>>,
    ) -> bool {
        if self.deque.is_empty() {
            return false;
        }
        let front = self.deque.cursor_front();
        ops.drop_value(self.slot(&front));
        self.deque.drop_front_deferred(retired);
        if self.deque.is_empty() {
            self.p.debug_check_emptied(&self.deque);
        } else {
            self.fixup(ops);
        }
        true
    }

    /// Asks `ops` for the window's aggregate. **Worst-case O(1)**.
    #[inline]
    pub fn query(&mut self, ops: &mut impl ValueOps<T>) {
        let back = self.extra_ptr(AGG_B);
        if self.p.front_list_is_empty(&self.deque) {
            ops.query(None, back);
        } else {
            let front = self.deque.cursor_front();
            ops.query(Some(self.slot(&front)), back);
        }
    }

    /// Hands every live value (the extra aggregates, then the window's
    /// slots, oldest first) to `drop_value` and empties the window; call it
    /// before dropping a shape whose slots hold values that need dropping.
    pub fn drain(&mut self, mut drop_value: impl FnMut(*mut T)) {
        drop_value(self.extra_ptr(AGG_RA));
        drop_value(self.extra_ptr(AGG_B));
        self.drop_slots(drop_value);
    }

    /// Empties the window for reuse, as if it were new and initialized:
    /// `drop_slot` gets every slot's value, oldest first, and `reset_extra`
    /// each of the two extra aggregates, which it must set to the identity.
    /// O(n) for n values, each dropped once, as evictions would.
    pub fn clear(&mut self, drop_slot: impl FnMut(*mut T), mut reset_extra: impl FnMut(*mut T)) {
        reset_extra(self.extra_ptr(AGG_RA));
        reset_extra(self.extra_ptr(AGG_B));
        self.drop_slots(drop_slot);
    }

    /// Hands every slot's value to `drop_slot`, oldest first, and empties
    /// the window.
    fn drop_slots(&mut self, mut drop_slot: impl FnMut(*mut T)) {
        while !self.deque.is_empty() {
            let front = self.deque.cursor_front();
            drop_slot(self.slot(&front));
            self.deque.drop_front();
        }
        self.p = Pointers::at_end(&self.deque);
    }

    /// After the window got its first value, as in `DabaLite`: no value
    /// operation (`agg_b` is the identity already, and
    /// a stale `agg_ra` is replaced by the next flip before it is read).
    #[inline]
    fn reset_pointers(&mut self) {
        self.p = Pointers::at_end(&self.deque);
    }

    /// One step of DABA Lite's incremental reversal, as in `DabaLite`.
    #[inline]
    fn fixup(&mut self, ops: &mut impl ValueOps<T>) {
        debug_assert!(!self.p.front_list_is_empty(&self.deque));
        if self.p.flip_due() {
            self.p.flip(&self.deque);
            let (ra, b) = (self.extra_ptr(AGG_RA), self.extra_ptr(AGG_B));
            ops.take(ra, b);
        }
        if self.p.shift_due() {
            self.p.shift(&self.deque);
        } else {
            let l = self.p.l;
            let target = self.slot(&l);
            ops.combine(target, self.extra_ptr(AGG_RA));
            if let Some(top_of_a) = self.p.shrink(&self.deque) {
                let a = self.p.a;
                let target = self.slot(&a);
                ops.combine(target, self.slot(&top_of_a));
            }
        }
        self.p.debug_check(&self.deque);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monoids::Concat;
    use crate::{DabaLite, FifoAggregator, Monoid};

    /// Values kept beside the shape, keyed by slot address: the shape's
    /// operations applied to strings must give what `DabaLite<Concat>` gives.
    #[derive(Default)]
    struct Strings {
        values: std::collections::HashMap<usize, String>,
        next: String,
        answer: Option<String>,
        combines: usize,
    }

    impl ValueOps<u64> for Strings {
        fn init(&mut self, dst: *mut u64) {
            assert!(self.values.insert(dst as usize, String::new()).is_none());
        }
        fn lift(&mut self, dst: *mut u64) {
            let v = std::mem::take(&mut self.next);
            assert!(self.values.insert(dst as usize, v).is_none(), "slot in use");
        }
        fn combine(&mut self, acc: *mut u64, src: *const u64) {
            self.combines += 1;
            let src = self.values[&(src as usize)].clone();
            self.values.get_mut(&(acc as usize)).unwrap().push_str(&src);
        }
        fn reset(&mut self, dst: *mut u64) {
            *self.values.get_mut(&(dst as usize)).unwrap() = String::new();
        }
        fn take(&mut self, dst: *mut u64, src: *mut u64) {
            let v = std::mem::take(self.values.get_mut(&(src as usize)).unwrap());
            *self.values.get_mut(&(dst as usize)).unwrap() = v;
        }
        fn drop_value(&mut self, slot: *mut u64) {
            assert!(
                self.values.remove(&(slot as usize)).is_some(),
                "dropping an empty slot"
            );
        }
        fn query(&mut self, front: Option<*const u64>, back: *const u64) {
            let back = &self.values[&(back as usize)];
            self.answer = Some(match front {
                Some(f) => Concat.combine(&self.values[&(f as usize)], back),
                None => back.clone(),
            });
        }
    }

    #[test]
    fn the_shape_replays_daba_lite_exactly() {
        let mut shape = DabaLiteShape::<u64>::new();
        let mut ops = Strings::default();
        let mut retired = RetiredBlocks::default();
        shape.init(&mut ops);
        let mut reference = DabaLite::new(Concat);
        let mut state = 7u64;
        for step in 0..5000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let before = ops.combines;
            if !(state >> 33).is_multiple_of(3) || reference.is_empty() {
                let v = format!("{},", step % 97);
                ops.next = v.clone();
                shape.insert(&mut ops);
                reference.insert(v);
                assert!(ops.combines - before <= 3);
            } else {
                assert!(shape.evict(&mut ops, &mut retired));
                assert!(reference.evict());
                assert!(ops.combines - before <= 2);
            }
            if step % 64 == 0 {
                retired.clear();
            }
            shape.query(&mut ops);
            assert_eq!(ops.answer.take().unwrap(), reference.query());
            assert_eq!(shape.len(), reference.len());
            // Live values: the window's and the two extra aggregates.
            assert_eq!(ops.values.len(), shape.len() + 2);
        }
        shape.drain(|p| assert!(ops.values.remove(&(p as usize)).is_some()));
        assert!(
            ops.values.is_empty(),
            "every live value was handed out once"
        );
        assert!(shape.is_empty());
    }

    #[test]
    fn a_cleared_shape_drops_every_value_and_starts_afresh() {
        let mut shape = DabaLiteShape::<u64>::new();
        let mut ops = Strings::default();
        let mut retired = RetiredBlocks::default();
        shape.init(&mut ops);
        for round in 0..3 {
            let mut reference = DabaLite::new(Concat);
            for step in 0..(700 + 300 * round) {
                let v = format!("{step},");
                ops.next = v.clone();
                shape.insert(&mut ops);
                reference.insert(v);
                if step % 3 == 0 {
                    assert!(shape.evict(&mut ops, &mut retired));
                    assert!(reference.evict());
                }
                shape.query(&mut ops);
                assert_eq!(ops.answer.take().unwrap(), reference.query());
            }
            retired.clear();
            let (mut dropped, mut reset) = (Vec::new(), Vec::new());
            shape.clear(|p| dropped.push(p as usize), |p| reset.push(p as usize));
            assert_eq!(reset.len(), 2);
            for p in dropped {
                assert!(ops.values.remove(&p).is_some(), "a slot dropped twice");
            }
            for p in reset {
                *ops.values.get_mut(&p).unwrap() = String::new();
            }
            assert!(shape.is_empty());
            assert_eq!(ops.values.len(), 2, "only the extra aggregates live on");
        }
    }
}

#[cfg(test)]
mod streaming_tests {
    use super::*;
    use std::collections::VecDeque;

    /// Affine maps `x ↦ a·x + b` over wrapping `u32`, packed `a << 32 | b`
    /// into the slot itself: exact and not commutative.
    fn compose(f: u64, g: u64) -> u64 {
        let (fa, fb) = ((f >> 32) as u32, f as u32);
        let (ga, gb) = ((g >> 32) as u32, g as u32);
        let a = ga.wrapping_mul(fa);
        let b = ga.wrapping_mul(fb).wrapping_add(gb);
        (u64::from(a) << 32) | u64::from(b)
    }

    const IDENTITY: u64 = 1 << 32;

    #[derive(Default)]
    struct Packed {
        next: u64,
        answer: u64,
    }

    // SAFETY (of the raw accesses below): the shape hands out pointers to
    // its own initialized slots.
    impl ValueOps<u64> for Packed {
        fn init(&mut self, dst: *mut u64) {
            unsafe { dst.write(IDENTITY) }
        }
        fn lift(&mut self, dst: *mut u64) {
            unsafe { dst.write(self.next) }
        }
        fn combine(&mut self, acc: *mut u64, src: *const u64) {
            unsafe { *acc = compose(*acc, *src) }
        }
        fn reset(&mut self, dst: *mut u64) {
            unsafe { *dst = IDENTITY }
        }
        fn take(&mut self, dst: *mut u64, src: *mut u64) {
            unsafe { *dst = std::mem::replace(&mut *src, IDENTITY) }
        }
        fn drop_value(&mut self, _slot: *mut u64) {}
        fn query(&mut self, front: Option<*const u64>, back: *const u64) {
            self.answer = unsafe {
                match front {
                    Some(f) => compose(*f, *back),
                    None => *back,
                }
            };
        }
    }

    #[test]
    fn a_window_large_enough_to_stream_matches_a_fold() {
        // Over 1 MiB of u64 slots the deque streams; then it shrinks.
        let mut shape = DabaLiteShape::<u64>::new();
        let mut ops = Packed::default();
        let mut retired = RetiredBlocks::default();
        shape.init(&mut ops);
        let mut model = VecDeque::new();
        let mut i = 0u64;
        for (size, steps) in [(150_000usize, 300_000u64), (50, 10_000), (20_000, 30_000)] {
            for _ in 0..steps {
                let v = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | (1 << 32)) ^ i;
                ops.next = v;
                shape.insert(&mut ops);
                model.push_back(v);
                while model.len() > size {
                    assert!(shape.evict(&mut ops, &mut retired));
                    model.pop_front();
                }
                if i.is_multiple_of(64) {
                    retired.clear();
                }
                if i.is_multiple_of(4_001) {
                    shape.query(&mut ops);
                    let fold = model.iter().fold(IDENTITY, |acc, &v| compose(acc, v));
                    assert_eq!(ops.answer, fold, "size {size}, step {i}");
                }
                i += 1;
            }
            shape.query(&mut ops);
            assert_eq!(
                ops.answer,
                model.iter().fold(IDENTITY, |acc, &v| compose(acc, v))
            );
        }
        shape.drain(|_| {});
    }
}

#[cfg(test)]
mod replay_tests {
    use super::*;

    /// Records operations as values and applies them later, on the slots'
    /// real memory (u64 sums), as the engine's tape does.
    #[derive(Default)]
    struct Tape(Vec<(u8, *mut u64, *const u64)>);

    impl ValueOps<u64> for Tape {
        fn init(&mut self, dst: *mut u64) {
            self.0.push((0, dst, std::ptr::null()))
        }
        fn lift(&mut self, dst: *mut u64) {
            self.0.push((1, dst, std::ptr::null()))
        }
        fn combine(&mut self, acc: *mut u64, src: *const u64) {
            self.0.push((2, acc, src))
        }
        fn reset(&mut self, dst: *mut u64) {
            self.0.push((3, dst, std::ptr::null()))
        }
        fn take(&mut self, dst: *mut u64, src: *mut u64) {
            self.0.push((4, dst, src))
        }
        fn drop_value(&mut self, slot: *mut u64) {
            self.0.push((5, slot, std::ptr::null()))
        }
        fn query(&mut self, front: Option<*const u64>, back: *const u64) {
            self.0.push((
                6,
                front.map_or(std::ptr::null_mut(), |f| f.cast_mut()),
                back,
            ))
        }
    }

    #[test]
    fn deferred_replay_on_real_memory() {
        let mut shape = DabaLiteShape::<u64>::new();
        let mut tape = Tape::default();
        let mut retired = RetiredBlocks::default();
        shape.init(&mut tape);
        let mut answers = Vec::new();
        let apply = |tape: &mut Tape, answers: &mut Vec<u64>| {
            for &(op, a, b) in &tape.0 {
                unsafe {
                    match op {
                        0 => *a = 0,
                        1 => *a = 1,
                        2 => *a += *b,
                        3 => *a = 0,
                        4 => {
                            *a = *b.cast_mut();
                            *b.cast_mut() = 0
                        }
                        5 => *a = 0xdead,
                        _ => answers.push(if a.is_null() { *b } else { *a + *b }),
                    }
                }
            }
            tape.0.clear();
        };
        // Random inserts, bulk evictions and replay points: every query
        // must see the window's length (a sum of ones) although the slots'
        // memory is reused between recording and replay.
        let mut len = 0u64;
        let mut want = Vec::new();
        let mut state = 11u64;
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            shape.insert(&mut tape);
            len += 1;
            let evictions = match (state >> 40) % 8 {
                0 => len,
                1..=3 => 1,
                4 => 2,
                _ => 0,
            }
            .min(len);
            for _ in 0..evictions {
                assert!(shape.evict(&mut tape, &mut retired));
            }
            len -= evictions;
            shape.query(&mut tape);
            want.push(len);
            if (state >> 20).is_multiple_of(13) {
                apply(&mut tape, &mut answers);
                retired.clear();
            }
        }
        apply(&mut tape, &mut answers);
        assert_eq!(answers, want);
    }
}

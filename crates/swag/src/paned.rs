//! [`PanedWindow`]: a FIFO window for large partial aggregates (sketches)
//! that keeps its inputs and only about `3C + n/C` partial aggregates.

use std::fmt;

use crate::deque::{ChunkedDeque, Cursor};
use crate::{DabaLite, FifoAggregator, Monoid};

/// The pane size that keeps the fewest partial aggregates in a
/// [`PanedWindow`] of about `n` inputs: `√(n/3)`, from 1 to 256.
pub fn pane_for_window(n: usize) -> usize {
    ((n / 3) as f64).sqrt().round().clamp(1.0, 256.0) as usize
}

/// A monoid whose window values arrive as small inputs and are lifted into
/// partial aggregates only where a window needs one.
pub trait LiftInput: Monoid {
    /// One value as it arrives (a number, a hash), before it is lifted.
    type Input: Clone;

    /// The partial aggregate of one input.
    fn lift_input(&self, input: &Self::Input) -> Self::Agg;

    /// `acc ← acc ⊗ lift_input(input)`, in place. Counts as one ⊗. Override
    /// it where adding one input costs less than a lift and a merge (a
    /// sketch's insert).
    fn insert_input(&self, acc: &mut Self::Agg, input: &Self::Input) {
        self.combine_into(acc, &self.lift_input(input));
    }

    /// `acc ← lift_input(input) ⊗ acc`, in place: `input` joins as the
    /// oldest value. Counts as one ⊗. Override it where the monoid is
    /// commutative and [`insert_input`](Self::insert_input) is cheap.
    fn prepend_input(&self, acc: &mut Self::Agg, input: &Self::Input) {
        let mut joined = self.lift_input(input);
        self.combine_into(&mut joined, acc);
        *acc = joined;
    }
}

/// The lifted inputs of a pane that only loses inputs from its front, as
/// their suffix aggregates: the last of `sums` is the aggregate of the
/// inputs left, and an eviction drops it. Built from the pane's last input
/// back to its first, one input a step: each step copies the last aggregate
/// and prepends one input (for a sketch, an insert in place, with no ⊗ of
/// two sketches).
struct Suffixes<A> {
    /// `sums[k] = v(C-1-k) ⊗ … ⊗ v(C-1)` over the pane's inputs `v`.
    sums: Vec<A>,
}

/// The lifted inputs of the head pane or of the next one.
enum Pane<M: Monoid> {
    /// A `DabaLite`: a pane built from its first input on (a tail that
    /// became a pane, or the only pane, still taking inputs).
    Lifted(Box<DabaLite<M>>),
    /// A whole pane built from its last input back.
    Suffixes(Suffixes<M::Agg>),
}

impl<M: Monoid> Pane<M> {
    fn len(&self) -> usize {
        match self {
            Pane::Lifted(window) => window.len(),
            Pane::Suffixes(suffixes) => suffixes.sums.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the oldest input: at most 2 ⊗.
    fn evict(&mut self) {
        match self {
            Pane::Lifted(window) => {
                window.evict();
            }
            Pane::Suffixes(suffixes) => {
                // In place: popping would copy the aggregate out first.
                let left = suffixes.sums.len().saturating_sub(1);
                suffixes.sums.truncate(left);
            }
        }
    }

    /// The aggregate of the inputs left: at most 1 ⊗.
    fn query(&self, monoid: &M) -> M::Agg {
        match self {
            Pane::Lifted(window) => window.query(),
            Pane::Suffixes(suffixes) => match suffixes.sums.last() {
                Some(sum) => sum.clone(),
                None => monoid.identity(),
            },
        }
    }
}

/// A FIFO window that stores every input as it came, and partial aggregates
/// only per *pane* of `C` consecutive inputs: for partial aggregates much
/// larger than their inputs (a 4 KiB quantile sketch of one `f64`), where a
/// [`DabaLite`] of `n` lifted values would hold `n + 2` of them.
///
/// The window is, oldest first, a head pane, whole panes, and a tail pane:
/// - the head, the oldest pane, holds the lifted inputs it has left, from
///   which evictions take. When it runs out, the oldest whole pane takes its
///   place, already built: one input of it is lifted into the next head at
///   every operation from the moment the head before became the head (then
///   holding a whole pane), so it is complete by the time that head has
///   been evicted. A pane that was whole before its building began is built
///   from its last input back as its suffix aggregates (each step copies the
///   last one and prepends an input, [`LiftInput::prepend_input`]; an evict
///   drops one, a query copies one); a pane that began as the lifted tail
///   stays the `DabaLite` it was built in;
/// - the whole panes between head and tail are one aggregate each, in a
///   `DabaLite` of pane aggregates;
/// - the tail, the youngest pane (fewer than `C` inputs so far), is *folded*
///   while whole panes lie before it: one aggregate that each input joins
///   in place ([`LiftInput::insert_input`]). Once the last whole pane
///   becomes the head, the tail's inputs are lifted into a `DabaLite` one
///   per operation, which catches up before that head runs out (each
///   eviction lifts one, and the head starts with a whole pane). A tail
///   whose pane begins with no whole pane before it is lifted as it goes;
///   when it fills up it becomes the head if there is none, else the next
///   head, complete or under way.
///
/// `query` is `head ⊗ panes ⊗ tail`. Every operation is **worst-case
/// O(1)**: an insert makes at most 10 ⊗ and 2 lifts (the tail's insert, a
/// full tail joining the panes, a step of the next head), an evict at most
/// 7 ⊗ and 1 lift, a query at most 5 ⊗. The window stores `n` inputs and
/// at most `n/C + 3C + 9` partial aggregates (four windows of at most
/// `n/C`, `C`, `C` and `C` values, two extra each, and one pane aggregate
/// in flight); `C` near `√(n/3)` makes that smallest. In a long window the
/// tail is one aggregate, so about `n/C + 2C` are held, and the storage of
/// `2C` is kept (a head of suffixes keeps its room for the next one).
pub struct PanedWindow<M: LiftInput + Clone> {
    monoid: M,
    /// Inputs per pane, `C ≥ 1`.
    pane: usize,
    /// Every input in the window, oldest first.
    inputs: ChunkedDeque<M::Input>,
    /// The oldest pane's remaining lifted inputs, unless the tail is the
    /// only pane (then `None`). Never empty.
    head: Option<Pane<M>>,
    /// The aggregates of the whole panes between head and tail (made when
    /// the first is).
    panes: Option<Box<DabaLite<M>>>,
    /// The lifted inputs of the oldest of `panes`, as far as lifted: present
    /// exactly when `panes` is not empty.
    next: Option<Pane<M>>,
    /// The last input of each whole pane after `next`, oldest first: where
    /// its suffixes begin when it is next.
    pane_ends: ChunkedDeque<Cursor<M::Input>>,
    /// The next input to lift into `next` while it is [`Pane::Suffixes`]
    /// short of a pane.
    back: Cursor<M::Input>,
    /// The next input to lift: into `next` while it is [`Pane::Lifted`]
    /// short of a pane, or into a folded tail being lifted; otherwise the
    /// first input of the pane after `next`.
    build: Cursor<M::Input>,
    /// The youngest pane's lifted inputs: all of them (evicted from only
    /// while it is the only pane), or while it is folded, the first
    /// `tail.len()` (the rest, `lag` of them, lifted from `build`).
    tail: Box<DabaLite<M>>,
    /// The fold of all the tail's inputs, while the tail is folded. Boxed:
    /// a window too short to fold (most keys' windows, at first) does not
    /// carry a large aggregate's room.
    folded: Option<Box<M::Agg>>,
    /// The identity in a box let go by a fold, for the next one.
    spare_fold: Option<Box<M::Agg>>,
    /// The folded tail's inputs not lifted into `tail` yet.
    lag: usize,
    /// An emptied pane window, kept for the next tail while there are whole
    /// panes (a window of large aggregates is large itself, with its two
    /// extra aggregates, so pane windows are boxed and, in long windows,
    /// recycled rather than built and moved).
    spare: Option<Box<DabaLite<M>>>,
    /// Inputs inserted into the tail since it began (`< C`).
    tail_inserted: usize,
}

impl<M: LiftInput + Clone> PanedWindow<M> {
    /// An empty window of panes of `pane` inputs (at least 1).
    pub fn new(monoid: M, pane: usize) -> Self {
        let inputs = ChunkedDeque::new();
        PanedWindow {
            build: inputs.cursor_end(),
            back: inputs.cursor_end(),
            pane_ends: ChunkedDeque::new(),
            inputs,
            pane: pane.max(1),
            head: None,
            panes: None,
            next: None,
            tail: Box::new(DabaLite::new(monoid.clone())),
            folded: None,
            spare_fold: None,
            lag: 0,
            spare: None,
            tail_inserted: 0,
            monoid,
        }
    }

    /// Inputs per pane.
    pub fn pane(&self) -> usize {
        self.pane
    }

    /// Number of inputs in the window.
    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    /// Whether the window holds no input.
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }

    /// Appends `input` as the youngest value. **Worst-case O(1).**
    pub fn insert(&mut self, input: M::Input) {
        let was_empty = self.inputs.is_empty();
        match &mut self.folded {
            Some(fold) => {
                self.monoid.insert_input(fold, &input);
                self.lag += 1;
            }
            None => self.tail.insert(self.monoid.lift_input(&input)),
        }
        self.inputs.push_back(input);
        if was_empty {
            // The cursor of an empty deque with no block is stale after
            // the first push; it is only read once something is lifted
            // from it.
            self.build = self.inputs.cursor_end();
        }
        self.tail_inserted += 1;
        if self.tail_inserted == self.pane {
            self.close_tail();
        }
        self.lift_one();
        self.debug_check();
    }

    /// Drops the oldest value; `false`, changing nothing, when empty.
    /// **Worst-case O(1).**
    pub fn evict(&mut self) -> bool {
        if !self.inputs.drop_front() {
            return false;
        }
        match &mut self.head {
            Some(head) => {
                head.evict();
                if head.is_empty() {
                    let emptied = self.head.take();
                    self.promote_next(emptied);
                }
            }
            None => {
                debug_assert!(self.folded.is_none(), "evicting from a folded tail");
                self.tail.evict();
            }
        }
        self.lift_one();
        self.debug_check();
        true
    }

    /// `v0 ⊗ … ⊗ v(n-1)`, oldest first; the identity when empty.
    /// **Worst-case O(1)**, at most 5 ⊗.
    pub fn query(&self) -> M::Agg {
        let mut agg = match &self.head {
            Some(head) => head.query(&self.monoid),
            None => return self.tail.query(),
        };
        if let Some(panes) = self.panes.as_ref().filter(|p| !p.is_empty()) {
            panes.combine_query_into(&mut agg);
        }
        match &self.folded {
            Some(fold) => self.monoid.combine_into(&mut agg, fold),
            None if !self.tail.is_empty() => self.tail.combine_query_into(&mut agg),
            None => {}
        }
        agg
    }

    /// The tail holds a whole pane: it becomes the head, or the next head,
    /// or one aggregate among the whole panes; a new tail begins, folded if
    /// whole panes lie before it.
    fn close_tail(&mut self) {
        self.tail_inserted = 0;
        let fold = self.folded.take();
        let fresh = self.empty_pane_window();
        let tail = std::mem::replace(&mut self.tail, fresh);
        if self.head.is_none() {
            // The only pane: it keeps its place at the front (it may have
            // lost inputs to evictions already), lifted whole.
            debug_assert!(fold.is_none(), "a folded tail with no head");
            match tail.is_empty() {
                true => self.spare = Some(tail),
                false => self.head = Some(Pane::Lifted(tail)),
            }
            return;
        }
        let pane = match fold {
            Some(fold) => self.let_go_of_fold(fold),
            None => tail.query(),
        };
        let monoid = &self.monoid;
        self.panes
            .get_or_insert_with(|| Box::new(DabaLite::new(monoid.clone())))
            .insert(pane);
        if self.next.is_none() {
            // The oldest whole pane: lifted already, or `lag` inputs short,
            // which `build` points at. Lifted, the pane after it starts with
            // the next input.
            if self.lag == 0 {
                self.build = self.inputs.cursor_end();
            }
            self.next = Some(Pane::Lifted(tail));
        } else {
            // Folded all along: nothing of it was lifted. When it is next,
            // its suffixes begin at its last input, the one just inserted.
            debug_assert!(tail.is_empty());
            self.spare = Some(tail);
            self.pane_ends.push_back(self.inputs.cursor_back());
        }
        self.lag = 0;
        let monoid = &self.monoid;
        let fresh = self.spare_fold.take();
        self.folded = Some(fresh.unwrap_or_else(|| Box::new(monoid.identity())));
    }

    /// Lets `fold` go, returning what it held: its box, reset to the
    /// identity, is kept for the next fold.
    fn let_go_of_fold(&mut self, mut fold: Box<M::Agg>) -> M::Agg {
        let held = std::mem::replace(&mut *fold, self.monoid.identity());
        self.spare_fold = Some(fold);
        held
    }

    /// The head ran out (`emptied`, kept for reuse while there are whole
    /// panes): the oldest whole pane, if any, takes its place (complete:
    /// see the type's docs), and the one after it, if any, starts being
    /// lifted, from its last input back.
    fn promote_next(&mut self, emptied: Option<Pane<M>>) {
        let mut sums = None;
        match emptied {
            Some(Pane::Lifted(window)) if self.whole_panes() > 0 => self.spare = Some(window),
            Some(Pane::Suffixes(suffixes)) => sums = Some(suffixes.sums),
            _ => {}
        }
        let Some(next) = self.next.take() else {
            return;
        };
        debug_assert_eq!(next.len(), self.pane, "next head promoted unfinished");
        if let Some(panes) = &mut self.panes {
            panes.evict();
        }
        self.head = Some(next);
        if self.whole_panes() == 0 {
            // The tail is next; `build` points at its first input.
            self.unfold_if_lifted();
            return;
        }
        let Some(end) = self.pane_ends.pop_front() else {
            debug_assert!(false, "a whole pane after next without its end");
            return;
        };
        self.back = end;
        // The pane after the new next starts after its end.
        self.build = end;
        self.inputs.step(&mut self.build);
        // Reserved whole, so that no step of its building moves the sums.
        let sums = sums.unwrap_or_else(|| Vec::with_capacity(self.pane));
        debug_assert!(sums.is_empty() && sums.capacity() >= self.pane);
        self.next = Some(Pane::Suffixes(Suffixes { sums }));
    }

    /// A folded tail with no whole pane before it and all its inputs
    /// lifted is a lifted tail from now on.
    fn unfold_if_lifted(&mut self) {
        if self.lag == 0
            && self.whole_panes() == 0
            && let Some(fold) = self.folded.take()
        {
            self.let_go_of_fold(fold);
        }
    }

    /// How many whole panes lie between head and tail.
    fn whole_panes(&self) -> usize {
        self.panes.as_ref().map_or(0, |panes| panes.len())
    }

    /// An empty window for a pane: the spare, or a new one.
    fn empty_pane_window(&mut self) -> Box<DabaLite<M>> {
        match self.spare.take() {
            Some(spare) => spare,
            None => Box::new(DabaLite::new(self.monoid.clone())),
        }
    }

    /// Lifts one more input: into the next head while it is short of a
    /// pane (at `build`, or at `back` for suffixes), else into a folded tail
    /// with no whole pane before it (at `build`).
    fn lift_one(&mut self) {
        let target = match &mut self.next {
            Some(Pane::Suffixes(suffixes)) if suffixes.sums.len() < self.pane => {
                let input = self.inputs.get(&self.back);
                let sums = &mut suffixes.sums;
                match sums.len().checked_sub(1) {
                    None => sums.push(self.monoid.lift_input(input)),
                    Some(last) => {
                        sums.extend_from_within(last..);
                        if let Some(sum) = sums.last_mut() {
                            self.monoid.prepend_input(sum, input);
                        }
                    }
                }
                if sums.len() < self.pane {
                    self.inputs.step_back(&mut self.back);
                }
                return;
            }
            Some(Pane::Lifted(next)) if next.len() < self.pane => next,
            Some(_) => return,
            None if self.folded.is_some() && self.lag > 0 => {
                self.lag -= 1;
                &mut self.tail
            }
            None => return,
        };
        target.insert(self.monoid.lift_input(self.inputs.get(&self.build)));
        self.inputs.step(&mut self.build);
        self.unfold_if_lifted();
    }

    /// Checks the pane structure (debug builds only).
    fn debug_check(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        let head = self.head.as_ref().map_or(0, |head| head.len());
        let whole = self.whole_panes() * self.pane;
        debug_assert_eq!(head + whole + self.tail.len() + self.lag, self.inputs.len());
        debug_assert!(self.folded.is_some() || self.lag == 0);
        debug_assert!(self.folded.is_none() || self.head.is_some());
        if self.folded.is_some() && self.whole_panes() > 0 {
            debug_assert!(self.tail.is_empty(), "tail lifted before its turn");
        }
        // A lagging tail, once lifted, catches up before the head runs out.
        let lifting = self.whole_panes() == 0 && self.lag > 0;
        debug_assert!(!lifting || head > self.lag, "tail lifted late");
        debug_assert!(self.head.as_ref().is_none_or(|h| !h.is_empty()));
        debug_assert!(self.head.is_some() || self.whole_panes() == 0);
        debug_assert_eq!(self.next.is_some(), self.whole_panes() > 0);
        debug_assert_eq!(self.pane_ends.len(), self.whole_panes().saturating_sub(1));
        debug_assert!(self.tail_inserted < self.pane);
        if let Some(next) = &self.next {
            // Enough evictions remain before the head runs out.
            debug_assert!(head + next.len() >= self.pane, "next head late");
        }
    }
}

impl<M: LiftInput + Clone> fmt::Debug for PanedWindow<M>
where
    M::Agg: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PanedWindow")
            .field("len", &self.len())
            .field("pane", &self.pane)
            .field("query", &self.query())
            .finish_non_exhaustive()
    }
}

//! The per-aggregate window operator, monomorphized per aggregate function,
//! argument type and window algorithm; called once per batch.

use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use arrow_array::{ArrayRef, BooleanArray};
use sliq_aggregates::{
    Aggregate, AggregateVisitor, OutputSink, OutputType, OutputValue, PanedAggregate,
};
use sliq_sql::Frame;
use sliq_swag::{
    ChunkedDeque, Daba, DabaLite, FifoAggregator, PanedWindow, Recalc, TwoStacks, TwoStacksLite,
};

use crate::columns::{ArrowColumns, ArrowSink};
use crate::expr::RowFailures;
use crate::frame::FramePass;

/// Which FIFO aggregator runs the windows (`SET window_algorithm = '…'`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WindowAlgorithm {
    /// Worst-case O(1), n + 2 aggregates: the default.
    #[default]
    DabaLite,
    /// Worst-case O(1), 2n aggregates.
    Daba,
    /// Amortized O(1), 2n aggregates.
    TwoStacks,
    /// Amortized O(1), n + 1 aggregates.
    TwoStacksLite,
    /// Recomputes every window from scratch: for cross-checks only.
    Recalc,
}

impl WindowAlgorithm {
    /// All algorithms, by their SQL names.
    pub const ALL: [(&'static str, WindowAlgorithm); 5] = [
        ("daba_lite", WindowAlgorithm::DabaLite),
        ("daba", WindowAlgorithm::Daba),
        ("two_stacks", WindowAlgorithm::TwoStacks),
        ("two_stacks_lite", WindowAlgorithm::TwoStacksLite),
        ("recalc", WindowAlgorithm::Recalc),
    ];
}

impl FromStr for WindowAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(s.trim()))
            .map(|(_, a)| *a)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown window algorithm '{s}': expected one of {}",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for WindowAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = Self::ALL
            .iter()
            .find(|(_, a)| a == self)
            .map(|(n, _)| *n)
            .unwrap_or("daba_lite");
        f.write_str(name)
    }
}

/// One aggregate of a query over all its keys' windows.
pub trait AggregateOperator: Send {
    /// Processes one batch, its rows in the visiting order of `frame` (see
    /// [`FramePass`]): `args` are the value arguments and `key_ids` the
    /// rows' keys, in that order. Returns one result per row, in that order,
    /// and the rows whose result could not be computed (NULL), counted
    /// against the batch.
    fn process(
        &mut self,
        args: &[ArrayRef],
        filter: Option<&BooleanArray>,
        key_ids: &[u32],
        keys: usize,
        frame: &FramePass,
    ) -> (ArrayRef, RowFailures);

    /// Drops key `key`'s window, freeing its memory: the key's next row
    /// starts an empty one.
    fn forget(&mut self, key: u32);
}

/// Whether the aggregate's `FILTER` leaves row `row` out (`filter` has no
/// NULLs: they were made false).
#[inline(always)]
pub(crate) fn left_out(filter: Option<&BooleanArray>, row: usize) -> bool {
    filter.is_some_and(|mask| !mask.value(row))
}

/// Row `row`'s partial aggregate: lifted from `columns`, or the identity
/// when the aggregate's `FILTER` leaves the row out.
#[inline]
pub(crate) fn lift_row<A: Aggregate>(
    aggregate: &A,
    columns: &ArrowColumns<'_>,
    filter: Option<&BooleanArray>,
    row: usize,
) -> A::Agg {
    if left_out(filter, row) {
        aggregate.identity()
    } else {
        aggregate.lift(columns, row)
    }
}

/// How many rows ahead the per-key loop prefetches each stage: a window's
/// struct, then the slots its cursors point at. The frame pass uses both
/// for its per-key time deques.
pub(crate) const PREFETCH_STRUCT: usize = 12;
pub(crate) const PREFETCH_SLOTS: usize = 4;

/// A key's window as a [`WindowOperator`] drives it: a row goes in, the
/// frame's oldest rows go out, and the window's aggregate comes back.
trait KeyWindow<A: Aggregate>: Send + Sized {
    /// What a new window needs besides the aggregate.
    type Shape: Copy + Send;
    /// What the window keeps of a row: its partial aggregate, or a paned
    /// window's input.
    type Item: Send;
    /// An empty window.
    fn empty(aggregate: &A, shape: Self::Shape) -> Self;
    /// What the window keeps of row `row` (as of a row that adds nothing
    /// where `filter` leaves it out).
    fn item(
        aggregate: &A,
        columns: &ArrowColumns<'_>,
        filter: Option<&BooleanArray>,
        row: usize,
    ) -> Self::Item;
    /// Appends a row.
    fn insert(&mut self, item: Self::Item);
    /// Appends row `row`.
    #[inline(always)]
    fn insert_row(
        &mut self,
        aggregate: &A,
        columns: &ArrowColumns<'_>,
        filter: Option<&BooleanArray>,
        row: usize,
    ) {
        self.insert(Self::item(aggregate, columns, filter, row));
    }
    /// Drops the oldest row; false (and no change) when empty.
    fn evict(&mut self) -> bool;
    /// The aggregate of the rows in the window.
    fn query(&self) -> A::Agg;
    /// See [`FifoAggregator::prefetch_slots`].
    fn prefetch_slots(&self) {}
    /// Whether rows wait outside the window before they enter it (a frame
    /// ending before the current row): the frame pass then gives each row's
    /// admissions, which [`KeyWindow::admit`] takes in.
    const DELAYED: bool = false;
    /// Moves the `count` oldest waiting rows into the window.
    fn admit(&mut self, _count: u32) {}
}

/// A FIFO aggregator of lifted rows.
struct Lifted<W>(W);

impl<A: Aggregate, W: FifoAggregator<A> + Send> KeyWindow<A> for Lifted<W> {
    type Shape = ();
    type Item = A::Agg;
    fn empty(aggregate: &A, (): ()) -> Self {
        Lifted(W::new(aggregate.clone()))
    }
    #[inline(always)]
    fn item(
        aggregate: &A,
        columns: &ArrowColumns<'_>,
        filter: Option<&BooleanArray>,
        row: usize,
    ) -> A::Agg {
        lift_row(aggregate, columns, filter, row)
    }
    #[inline(always)]
    fn insert(&mut self, item: A::Agg) {
        self.0.insert(item);
    }
    /// Spelled out: through `item` and `insert`, the engine bench's `max`
    /// over ROWS 999 took 1.7 % more instructions (cachegrind).
    #[inline(always)]
    fn insert_row(
        &mut self,
        aggregate: &A,
        columns: &ArrowColumns<'_>,
        filter: Option<&BooleanArray>,
        row: usize,
    ) {
        self.0.insert(lift_row(aggregate, columns, filter, row));
    }
    #[inline(always)]
    fn evict(&mut self) -> bool {
        self.0.evict()
    }
    #[inline(always)]
    fn query(&self) -> A::Agg {
        self.0.query()
    }
    #[inline(always)]
    fn prefetch_slots(&self) {
        self.0.prefetch_slots();
    }
}

/// A paned aggregate's window (a sketch's, see [`PanedAggregate`]): its
/// rows' inputs and a partial aggregate per pane of rows, not one per row.
impl<A: PanedAggregate> KeyWindow<A> for PanedWindow<A> {
    /// Rows per pane.
    type Shape = usize;
    type Item = A::Input;
    fn empty(aggregate: &A, pane: usize) -> Self {
        PanedWindow::new(aggregate.clone(), pane)
    }
    #[inline(always)]
    fn item(
        aggregate: &A,
        columns: &ArrowColumns<'_>,
        filter: Option<&BooleanArray>,
        row: usize,
    ) -> A::Input {
        match left_out(filter, row) {
            true => aggregate.nothing(),
            false => aggregate.input(columns, row),
        }
    }
    #[inline(always)]
    fn insert(&mut self, item: A::Input) {
        PanedWindow::insert(self, item);
    }
    #[inline(always)]
    fn evict(&mut self) -> bool {
        PanedWindow::evict(self)
    }
    #[inline(always)]
    fn query(&self) -> A::Agg {
        PanedWindow::query(self)
    }
}

/// How a frame's latest rows wait before they enter a key's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delay {
    /// The frame ends at the current row: a row enters at once.
    None,
    /// The frame ends `k` rows before the current one: at most `k + 1`
    /// rows wait at a time.
    Rows(u64),
    /// The frame ends some time before the current row: any number of rows
    /// may wait.
    Time,
}

impl Delay {
    /// The delay of `frame`.
    pub fn of(frame: &Frame) -> Self {
        match *frame {
            Frame::RowsBefore { end, .. } | Frame::UnboundedBefore(end) => Delay::Rows(end),
            Frame::RangeBefore { .. } | Frame::UnboundedBeforeTime(_) => Delay::Time,
            Frame::Rows(_) | Frame::Range(_) | Frame::Unbounded => Delay::None,
        }
    }

    /// The room of the ring that holds the waiting rows of a short ROWS
    /// delay (below [`RING_MAX_ROWS`]): a row waits until k younger ones
    /// are in, so with the new row k + 1 wait for a moment. `None` when
    /// they wait in a chunked deque (longer delays, RANGE frames) or not at
    /// all.
    fn ring_room(self) -> Option<usize> {
        match self {
            Delay::Rows(k) if k < RING_MAX_ROWS => Some(k as usize + 1),
            Delay::Rows(_) | Delay::Time | Delay::None => None,
        }
    }
}

/// A queue of rows waiting to enter a key's window.
trait WaitingRows<T>: Send {
    /// An empty queue for up to `rows` rows at a time (a hint).
    fn with_room(rows: usize) -> Self;
    fn push_back(&mut self, item: T);
    fn pop_front(&mut self) -> Option<T>;
    /// Starts fetching the slots the next push and pop touch.
    fn prefetch_ends(&self) {}
}

/// Rows waiting by time: any number, so a chunked deque (no copy as it
/// grows, nothing allocated while it slides).
impl<T: Send> WaitingRows<T> for ChunkedDeque<T> {
    fn with_room(_rows: usize) -> Self {
        ChunkedDeque::new()
    }
    #[inline(always)]
    fn push_back(&mut self, item: T) {
        ChunkedDeque::push_back(self, item);
    }
    #[inline(always)]
    fn pop_front(&mut self) -> Option<T> {
        ChunkedDeque::pop_front(self)
    }
    #[inline(always)]
    fn prefetch_ends(&self) {
        ChunkedDeque::prefetch_ends(self);
    }
}

/// Rows waiting by count, for short delays (below [`RING_MAX_ROWS`]): at
/// most `k + 1`, so a ring allocated once at that size, which never grows.
/// (A chunked deque of one or two rows links and recycles a block every few
/// rows: the engine bench's `max` over ROWS BETWEEN 999 AND 1 PRECEDING took
/// 6 % more instructions with one.)
impl<T: Send> WaitingRows<T> for VecDeque<T> {
    fn with_room(rows: usize) -> Self {
        VecDeque::with_capacity(rows)
    }
    #[inline(always)]
    fn push_back(&mut self, item: T) {
        debug_assert!(
            self.len() < self.capacity(),
            "more rows wait than the frame allows"
        );
        VecDeque::push_back(self, item);
    }
    #[inline(always)]
    fn pop_front(&mut self) -> Option<T> {
        VecDeque::pop_front(self)
    }
}

/// Frames ending fewer rows than this before the current one keep their
/// waiting rows in a ring of k + 1 allocated with the key's window; longer
/// ones in a chunked deque, whose blocks are then large enough to be
/// linked rarely.
const RING_MAX_ROWS: u64 = 64;

/// The window of a frame ending before the current row: the key's latest
/// rows wait in `waiting`, oldest first, as the window keeps them, until
/// the frame pass admits them into `window`. Evicting takes the window's
/// oldest row, or, when the window is empty (the key starts afresh), the
/// oldest waiting one.
struct Delayed<A: Aggregate, K: KeyWindow<A>, Q> {
    waiting: Q,
    window: K,
    _aggregate: PhantomData<fn() -> A>,
}

impl<A: Aggregate, K: KeyWindow<A>, Q: WaitingRows<K::Item>> KeyWindow<A> for Delayed<A, K, Q> {
    /// The window's shape, and how many rows wait at most (a hint).
    type Shape = (K::Shape, usize);
    type Item = K::Item;
    const DELAYED: bool = true;
    fn empty(aggregate: &A, (shape, waiting): Self::Shape) -> Self {
        Delayed {
            waiting: Q::with_room(waiting),
            window: K::empty(aggregate, shape),
            _aggregate: PhantomData,
        }
    }
    #[inline(always)]
    fn item(
        aggregate: &A,
        columns: &ArrowColumns<'_>,
        filter: Option<&BooleanArray>,
        row: usize,
    ) -> K::Item {
        K::item(aggregate, columns, filter, row)
    }
    #[inline(always)]
    fn insert(&mut self, item: K::Item) {
        self.waiting.push_back(item);
    }
    #[inline(always)]
    fn admit(&mut self, count: u32) {
        for _ in 0..count {
            if let Some(item) = self.waiting.pop_front() {
                self.window.insert(item);
            }
        }
    }
    #[inline(always)]
    fn evict(&mut self) -> bool {
        self.window.evict() || self.waiting.pop_front().is_some()
    }
    #[inline(always)]
    fn prefetch_slots(&self) {
        self.window.prefetch_slots();
        self.waiting.prefetch_ends();
    }
    #[inline(always)]
    fn query(&self) -> A::Agg {
        self.window.query()
    }
}

/// An aggregate's windows, one per key.
struct WindowOperator<A: Aggregate, K: KeyWindow<A>> {
    aggregate: A,
    /// What each key's window is made with (a paned window's pane size).
    shape: K::Shape,
    /// By key id; a key past the end has no rows yet.
    windows: Vec<K>,
    output: OutputType,
}

impl<A: Aggregate, K: KeyWindow<A>> AggregateOperator for WindowOperator<A, K> {
    fn process(
        &mut self,
        args: &[ArrayRef],
        filter: Option<&BooleanArray>,
        key_ids: &[u32],
        keys: usize,
        frame: &FramePass,
    ) -> (ArrayRef, RowFailures) {
        while self.windows.len() < keys {
            self.windows.push(K::empty(&self.aggregate, self.shape));
        }
        let columns = ArrowColumns::new(args);
        let mut results = BatchResults::new(&self.output, key_ids.len());
        // As long as the rows (the frame pass made them so): then indexing
        // them by row checks nothing.
        let late = &frame.late[..key_ids.len()];
        let evictions = &frame.evictions[..key_ids.len()];
        let admissions = match K::DELAYED {
            true => &frame.admissions[..key_ids.len()],
            false => &[],
        };
        for (row, &key) in key_ids.iter().enumerate() {
            // Windows of different keys live far apart in memory: fetch the
            // ones a few rows ahead in two stages (window struct, then its
            // slots) so their cache misses overlap. (A forward step reads
            // no block header until it leaves its block.)
            if let Some(&ahead) = key_ids.get(row + PREFETCH_STRUCT) {
                sliq_swag::prefetch_value(self.windows.as_ptr().wrapping_add(ahead as usize));
            }
            if let Some(&ahead) = key_ids.get(row + PREFETCH_SLOTS) {
                self.windows[ahead as usize].prefetch_slots();
            }
            if late[row] {
                results.push_null();
                continue;
            }
            let window = &mut self.windows[key as usize];
            window.insert_row(&self.aggregate, &columns, filter, row);
            if K::DELAYED {
                window.admit(admissions[row]);
            }
            for _ in 0..evictions[row] {
                window.evict();
            }
            results.push(self.aggregate.lower(&window.query()), frame, row);
        }
        results.finish()
    }

    fn forget(&mut self, key: u32) {
        if let Some(window) = self.windows.get_mut(key as usize) {
            *window = K::empty(&self.aggregate, self.shape);
        }
    }
}

/// Rows per pane of a paned aggregate's windows over a frame of
/// `frame_rows` rows (`ROWS n PRECEDING`: n + 1), or over a `RANGE` frame
/// (`None`), whose rows are not known in advance: panes of 16 rows, the
/// best for about 800. `None` for a frame too short to gain from panes:
/// below [`PANED_MIN_ROWS`] they cost more time than the memory they save.
/// Only DABA Lite's windows are paned: the other algorithms serve
/// cross-checks, and a running fold (`unbounded`) evicts nothing.
pub fn pane_rows(
    algorithm: WindowAlgorithm,
    unbounded: bool,
    frame_rows: Option<u64>,
) -> Option<usize> {
    const RANGE_PANE_ROWS: usize = 16;
    if unbounded || algorithm != WindowAlgorithm::DabaLite {
        return None;
    }
    match frame_rows {
        None => Some(RANGE_PANE_ROWS),
        Some(rows) if rows < PANED_MIN_ROWS => None,
        Some(rows) => Some(sliq_swag::pane_for_window(
            usize::try_from(rows).unwrap_or(usize::MAX),
        )),
    }
}

/// The shortest `ROWS` frame whose sketches are paned. Measured on 2M rows,
/// 1,000 keys, `approx_percentile` (4 KiB sketches), against a sketch per
/// row: over `ROWS 29` panes took 33 % more time and more memory, over
/// `ROWS 99` 8 % more time for half the memory, over `ROWS 299` 11 % less
/// time for a quarter, over `ROWS 999` a third of the time and an eighth of
/// the memory.
const PANED_MIN_ROWS: u64 = 128;

/// The aggregate of an `UNBOUNDED PRECEDING` frame over all its keys. No
/// row ever leaves such a frame, so a key needs no window: it keeps one
/// partial aggregate, the fold of its rows so far (`total ⊗ v`, oldest
/// first), and its memory stays constant however long the stream runs.
/// When the frame ends `k` rows before the current one, a key's latest `k`
/// rows (lifted) wait before they join the fold.
struct RunningOperator<A: Aggregate, Q> {
    aggregate: A,
    /// Per key, the fold of its rows so far.
    totals: Vec<A::Agg>,
    /// Per key, the rows waiting to join the fold (a frame ending before
    /// the current row; empty otherwise).
    waiting: Vec<Q>,
    /// Whether the frame ends before the current row, and how many rows
    /// wait at most then (a hint).
    delayed: Option<usize>,
    output: OutputType,
}

/// The operator of an `UNBOUNDED PRECEDING` frame, which ends `delay`
/// before the current row.
fn running_operator<A: Aggregate>(
    aggregate: A,
    output: OutputType,
    delay: Delay,
) -> Box<dyn AggregateOperator> {
    fn with<A: Aggregate, Q: WaitingRows<A::Agg> + 'static>(
        aggregate: A,
        output: OutputType,
        delayed: Option<usize>,
    ) -> Box<dyn AggregateOperator> {
        Box::new(RunningOperator::<A, Q> {
            aggregate,
            totals: Vec::new(),
            waiting: Vec::new(),
            delayed,
            output,
        })
    }
    match (delay, delay.ring_room()) {
        (Delay::None, _) => with::<A, VecDeque<A::Agg>>(aggregate, output, None),
        (_, Some(room)) => with::<A, VecDeque<A::Agg>>(aggregate, output, Some(room)),
        (_, None) => with::<A, ChunkedDeque<A::Agg>>(aggregate, output, Some(0)),
    }
}

impl<A: Aggregate, Q: WaitingRows<A::Agg>> AggregateOperator for RunningOperator<A, Q> {
    fn process(
        &mut self,
        args: &[ArrayRef],
        filter: Option<&BooleanArray>,
        key_ids: &[u32],
        keys: usize,
        frame: &FramePass,
    ) -> (ArrayRef, RowFailures) {
        if self.totals.len() < keys {
            self.totals.resize(keys, self.aggregate.identity());
        }
        if let Some(room) = self.delayed {
            self.waiting
                .resize_with(keys.max(self.waiting.len()), || Q::with_room(room));
        }
        let columns = ArrowColumns::new(args);
        let mut results = BatchResults::new(&self.output, key_ids.len());
        for (row, &key) in key_ids.iter().enumerate() {
            if let Some(&ahead) = key_ids.get(row + PREFETCH_SLOTS) {
                sliq_swag::prefetch_value(self.totals.as_ptr().wrapping_add(ahead as usize));
            }
            // Late rows come only with an event time (RANGE BETWEEN
            // UNBOUNDED PRECEDING AND d PRECEDING).
            if frame.late[row] {
                results.push_null();
                continue;
            }
            let total = &mut self.totals[key as usize];
            if frame.evictions[row] > 0 {
                // The key starts afresh (`key_ttl`).
                *total = self.aggregate.identity();
                if let Some(waiting) = self.waiting.get_mut(key as usize) {
                    while waiting.pop_front().is_some() {}
                }
            }
            let v = lift_row(&self.aggregate, &columns, filter, row);
            match self.delayed {
                None => self.aggregate.combine_into(total, &v),
                Some(_) => {
                    let waiting = &mut self.waiting[key as usize];
                    waiting.push_back(v);
                    for _ in 0..frame.admissions[row] {
                        if let Some(oldest) = waiting.pop_front() {
                            self.aggregate.combine_into(total, &oldest);
                        }
                    }
                }
            }
            results.push(self.aggregate.lower(total), frame, row);
        }
        results.finish()
    }

    fn forget(&mut self, key: u32) {
        if let Some(total) = self.totals.get_mut(key as usize) {
            *total = self.aggregate.identity();
        }
        if let (Some(waiting), Some(room)) = (self.waiting.get_mut(key as usize), self.delayed) {
            *waiting = Q::with_room(room);
        }
    }
}

/// One batch's results of an aggregate, in the rows' visiting order: the
/// values, and how many rows failed (NULL instead) with the first failure.
struct BatchResults<'o> {
    output: &'o OutputType,
    sink: ArrowSink,
    failures: RowFailures,
}

impl<'o> BatchResults<'o> {
    fn new(output: &'o OutputType, rows: usize) -> Self {
        BatchResults {
            output,
            sink: ArrowSink::new(output, rows),
            failures: RowFailures::default(),
        }
    }

    /// Row `row`'s lowered result, or NULL when it failed (counted against
    /// the row's place in its batch). Once per row: always
    /// inlined (as a call, it cost about 2 % of a whole replay).
    #[inline(always)]
    fn push<V: OutputValue>(
        &mut self,
        result: Result<V, sliq_aggregates::AggregateError>,
        frame: &FramePass,
        row: usize,
    ) {
        match result {
            Ok(v) => v.write(&mut self.sink),
            Err(e) => {
                let row = frame.batch_row(row);
                self.failures.add(1, row..row + 1, || e.to_string());
                self.push_null();
            }
        }
    }

    /// A NULL result (a late row).
    #[inline(always)]
    fn push_null(&mut self) {
        write_null(self.output, &mut self.sink);
    }

    fn finish(self) -> (ArrayRef, RowFailures) {
        (self.sink.finish(), self.failures)
    }
}

/// Writes a NULL result of type `output`.
pub(crate) fn write_null(output: &OutputType, sink: &mut ArrowSink) {
    match output {
        OutputType::Scalar(_) => sink.push_null(),
        OutputType::Struct(fields) => sink.push_struct(fields.len(), false),
    }
}

/// Builds the operator for an aggregate, with the chosen algorithm.
pub struct BuildOperator {
    /// The window algorithm.
    pub algorithm: WindowAlgorithm,
    /// The aggregate's result type.
    pub output: OutputType,
    /// The frame is `UNBOUNDED PRECEDING`: a running fold per key, whatever
    /// the algorithm (nothing is ever evicted).
    pub unbounded: bool,
    /// Whether and how each key's latest rows wait before they enter its
    /// window or running fold (a frame ending before the current row).
    pub delay: Delay,
    /// The rows of the frame's windows when it counts them (`ROWS n PRECEDING`:
    /// n + 1), for the panes of a paned aggregate (see [`pane_rows`]).
    pub frame_rows: Option<u64>,
}

impl AggregateVisitor for BuildOperator {
    type Output = Box<dyn AggregateOperator>;

    fn visit<A: Aggregate>(self, aggregate: A) -> Box<dyn AggregateOperator> {
        fn boxed<A: Aggregate, W: FifoAggregator<A> + Send + 'static>(
            a: A,
            output: OutputType,
            delay: Delay,
        ) -> Box<dyn AggregateOperator> {
            windows::<A, Lifted<W>>(a, (), output, delay)
        }
        if self.unbounded {
            return running_operator(aggregate, self.output, self.delay);
        }
        let (output, delay) = (self.output, self.delay);
        match self.algorithm {
            WindowAlgorithm::DabaLite => boxed::<A, DabaLite<A>>(aggregate, output, delay),
            WindowAlgorithm::Daba => boxed::<A, Daba<A>>(aggregate, output, delay),
            WindowAlgorithm::TwoStacks => boxed::<A, TwoStacks<A>>(aggregate, output, delay),
            WindowAlgorithm::TwoStacksLite => {
                boxed::<A, TwoStacksLite<A>>(aggregate, output, delay)
            }
            WindowAlgorithm::Recalc => boxed::<A, Recalc<A>>(aggregate, output, delay),
        }
    }

    /// DABA Lite's windows of a sketch over a long enough frame keep inputs
    /// and panes (see [`pane_rows`]).
    fn visit_paned<A: PanedAggregate>(self, aggregate: A) -> Box<dyn AggregateOperator> {
        let Some(pane) = pane_rows(self.algorithm, self.unbounded, self.frame_rows) else {
            return self.visit(aggregate);
        };
        windows::<A, PanedWindow<A>>(aggregate, pane, self.output, self.delay)
    }
}

/// An operator keeping a `K` per key, behind `delay` when the frame ends
/// before the current row.
fn windows<A: Aggregate, K: KeyWindow<A> + 'static>(
    aggregate: A,
    shape: K::Shape,
    output: OutputType,
    delay: Delay,
) -> Box<dyn AggregateOperator>
where
    K::Shape: 'static,
    K::Item: 'static,
{
    fn boxed<A: Aggregate, K: KeyWindow<A> + 'static>(
        aggregate: A,
        shape: K::Shape,
        output: OutputType,
    ) -> Box<dyn AggregateOperator>
    where
        K::Shape: 'static,
    {
        Box::new(WindowOperator::<A, K> {
            aggregate,
            shape,
            windows: Vec::new(),
            output,
        })
    }
    match (delay, delay.ring_room()) {
        (Delay::None, _) => boxed::<A, K>(aggregate, shape, output),
        (_, Some(room)) => {
            boxed::<A, Delayed<A, K, VecDeque<K::Item>>>(aggregate, (shape, room), output)
        }
        (_, None) => {
            boxed::<A, Delayed<A, K, ChunkedDeque<K::Item>>>(aggregate, (shape, 0), output)
        }
    }
}

/// Whether an aggregate is a [`PanedAggregate`], whose DABA Lite windows
/// over long frames are paned (see [`pane_rows`]).
pub struct IsPaned;

impl AggregateVisitor for IsPaned {
    type Output = bool;
    fn visit<A: Aggregate>(self, _: A) -> bool {
        false
    }
    fn visit_paned<A: PanedAggregate>(self, _: A) -> bool {
        true
    }
}

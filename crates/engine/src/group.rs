//! Several aggregates over the same frame and keys in one window per key.
//!
//! Each key has one [`DabaLiteShape`]: one deque and one set of DABA Lite
//! pointers whose slots are records holding every member aggregate's
//! partial aggregate at a fixed offset. Rows are processed in chunks: the
//! shape pass walks the chunk once, recording DABA Lite's value operations
//! (with pointers to the records) on a tape; then each member replays the
//! tape on its own field of the records, in a loop monomorphized for its
//! aggregate, so no `combine` goes through a dynamic call. Blocks the
//! shape pass drains stay allocated until the chunk is replayed.
//!
//! Compared with one window per aggregate, the pointers, the pointer
//! arithmetic and the cache misses on a key's window are paid once for all
//! of the group's aggregates.
//!
//! Over a frame that ends before the current row, a key's latest rows wait
//! as records of their own, lifted when they arrive, until the frame pass
//! admits them: the shape pass then moves the oldest waiting record into
//! the window where an insert would lift the row.

use std::alloc::Layout;
use std::mem::MaybeUninit;
use std::ptr;

use arrow_array::{ArrayRef, BooleanArray};
use sliq_aggregates::{Aggregate, AggregateVisitor, OutputType, OutputValue};
use sliq_swag::{ChunkedDeque, DabaLiteShape, RetiredBlocks, ValueOps};

use crate::columns::{ArrowColumns, ArrowSink};
use crate::expr::{FailedRows, RowFailures};
use crate::frame::FramePass;
use crate::operator::{lift_row, write_null};

/// Rows per shape pass: the chunk's tape stays in cache for the replays.
const CHUNK_ROWS: usize = 64;

/// Largest record, in 8-byte words; groups whose aggregates need more
/// (large sketches) keep one window per aggregate.
const MAX_RECORD_WORDS: usize = 32;

/// A value operation of the shape pass, on record fields at each member's
/// offset from these pointers.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Write the identity into an uninitialized field.
    Init(*mut u8),
    /// Write the lifted input row into an uninitialized field.
    Lift(*mut u8, u32),
    /// Move the field at the second pointer (a waiting record) into the
    /// uninitialized field at the first, leaving the source uninitialized.
    Move(*mut u8, *mut u8),
    /// `*acc = *acc ⊗ *src`.
    Combine(*mut u8, *const u8),
    /// Replace with the identity.
    Reset(*mut u8),
    /// `*dst = take(*src)`, leaving the identity at `src`.
    Take(*mut u8, *mut u8),
    /// Drop the field, leaving it uninitialized.
    Drop(*mut u8),
    /// Emit `lower(*front ⊗ *back)` (or of `*back` alone when `front` is
    /// null) as the result of this row.
    Query(*const u8, *const u8, u32),
    /// Emit NULL (a late row).
    Null,
}

/// The shape pass's recorder.
#[derive(Default)]
struct Tape {
    ops: Vec<Op>,
    row: u32,
}

impl<T> ValueOps<T> for Tape {
    fn init(&mut self, dst: *mut T) {
        self.ops.push(Op::Init(dst.cast()));
    }
    fn lift(&mut self, dst: *mut T) {
        self.ops.push(Op::Lift(dst.cast(), self.row));
    }
    fn combine(&mut self, acc: *mut T, src: *const T) {
        // The replays will read both: start fetching them now, so that the
        // misses overlap with the rest of the shape pass.
        sliq_swag::prefetch_value(acc);
        sliq_swag::prefetch_value(src);
        self.ops.push(Op::Combine(acc.cast(), src.cast()));
    }
    fn reset(&mut self, dst: *mut T) {
        self.ops.push(Op::Reset(dst.cast()));
    }
    fn take(&mut self, dst: *mut T, src: *mut T) {
        self.ops.push(Op::Take(dst.cast(), src.cast()));
    }
    fn drop_value(&mut self, slot: *mut T) {
        self.ops.push(Op::Drop(slot.cast()));
    }
    fn query(&mut self, front: Option<*const T>, back: *const T) {
        if let Some(front) = front {
            sliq_swag::prefetch_value(front);
        }
        let front = front.map_or(ptr::null(), |f| f.cast());
        self.ops.push(Op::Query(front, back.cast(), self.row));
    }
}

/// The recorder while a waiting record enters a window: the value the
/// window would lift comes from the record.
struct Admitting<'t> {
    tape: &'t mut Tape,
    record: *mut u8,
}

impl<T> ValueOps<T> for Admitting<'_> {
    fn init(&mut self, dst: *mut T) {
        ValueOps::<T>::init(self.tape, dst);
    }
    fn lift(&mut self, dst: *mut T) {
        self.tape.ops.push(Op::Move(dst.cast(), self.record));
    }
    fn combine(&mut self, acc: *mut T, src: *const T) {
        self.tape.combine(acc, src);
    }
    fn reset(&mut self, dst: *mut T) {
        ValueOps::<T>::reset(self.tape, dst);
    }
    fn take(&mut self, dst: *mut T, src: *mut T) {
        self.tape.take(dst, src);
    }
    fn drop_value(&mut self, slot: *mut T) {
        self.tape.drop_value(slot);
    }
    fn query(&mut self, front: Option<*const T>, back: *const T) {
        self.tape.query(front, back);
    }
}

/// Per member: results so far, failures and the first error (with the
/// row it happened on, in visiting order).
struct MemberResults {
    sink: ArrowSink,
    failed: usize,
    first_error: Option<(u32, String)>,
}

/// One aggregate of a group, type-erased for the group.
trait Member: Send {
    /// Its result type.
    fn output(&self) -> &OutputType;

    /// Replays `tape` on this member's field of the records.
    ///
    /// # Safety
    /// Every pointer in `tape` points to a live record of this group, and
    /// the member's fields are in the state the operations expect: `Init`
    /// and `Lift` find them uninitialized, `Move` its target uninitialized
    /// and its source initialized, all others initialized. This holds when
    /// every member replays every tape of the shape pass, in order.
    unsafe fn replay(
        &self,
        tape: &[Op],
        args: &[ArrayRef],
        filter: Option<&BooleanArray>,
        results: &mut MemberResults,
    );

    /// Drops this member's field of `record`.
    ///
    /// # Safety
    /// The field is initialized and not used afterwards.
    unsafe fn drop_field(&self, record: *mut u8);

    /// Sets this member's field of `record` to the identity, dropping the
    /// value it held.
    ///
    /// # Safety
    /// The field is initialized.
    unsafe fn reset_field(&self, record: *mut u8);
}

/// An aggregate at its offset in the records.
struct MemberOf<A: Aggregate> {
    aggregate: A,
    offset: usize,
    output: OutputType,
}

impl<A: Aggregate> MemberOf<A> {
    /// The field at `record` as this member's partial aggregate.
    #[inline]
    fn field(&self, record: *const u8) -> *mut A::Agg {
        record.wrapping_add(self.offset).cast::<A::Agg>().cast_mut()
    }
}

impl<A: Aggregate> Member for MemberOf<A> {
    fn output(&self) -> &OutputType {
        &self.output
    }

    unsafe fn replay(
        &self,
        tape: &[Op],
        args: &[ArrayRef],
        filter: Option<&BooleanArray>,
        results: &mut MemberResults,
    ) {
        let columns = ArrowColumns::new(args);
        let a = &self.aggregate;
        for op in tape {
            // SAFETY: the caller guarantees live records and field states;
            // offsets were laid out for `A::Agg`'s size and alignment inside
            // 8-byte-aligned records; `Combine` and `Take` never name the
            // same record twice (DABA Lite combines distinct slots).
            unsafe {
                match *op {
                    Op::Init(p) => ptr::write(self.field(p), a.identity()),
                    Op::Lift(p, row) => {
                        ptr::write(self.field(p), lift_row(a, &columns, filter, row as usize))
                    }
                    Op::Move(dst, src) => ptr::write(self.field(dst), ptr::read(self.field(src))),
                    Op::Combine(acc, src) => {
                        a.combine_into(&mut *self.field(acc), &*self.field(src))
                    }
                    Op::Reset(p) => *self.field(p) = a.identity(),
                    Op::Take(dst, src) => {
                        let value = ptr::replace(self.field(src), a.identity());
                        *self.field(dst) = value;
                    }
                    Op::Drop(p) => ptr::drop_in_place(self.field(p)),
                    Op::Query(front, back, row) => {
                        let back = &*self.field(back);
                        let lowered = if front.is_null() {
                            a.lower(back)
                        } else {
                            a.lower(&a.combine(&*self.field(front), back))
                        };
                        match lowered {
                            Ok(v) => v.write(&mut results.sink),
                            Err(e) => {
                                results.failed += 1;
                                results
                                    .first_error
                                    .get_or_insert_with(|| (row, e.to_string()));
                                write_null(&self.output, &mut results.sink);
                            }
                        }
                    }
                    Op::Null => write_null(&self.output, &mut results.sink),
                }
            }
        }
    }

    unsafe fn drop_field(&self, record: *mut u8) {
        // SAFETY: the caller guarantees an initialized field.
        unsafe { ptr::drop_in_place(self.field(record)) }
    }

    unsafe fn reset_field(&self, record: *mut u8) {
        // SAFETY: the caller guarantees an initialized field.
        unsafe { *self.field(record) = self.aggregate.identity() }
    }
}

/// A window group's aggregates over their shared per-key windows.
pub trait GroupOperator: Send {
    /// Processes one batch, its rows in the visiting order of `frame` (see
    /// [`FramePass`]), as [`crate::operator::AggregateOperator::process`]
    /// does for each member: `args[i]` are member `i`'s arguments and
    /// `filters[i]` its `FILTER` mask.
    fn process(
        &mut self,
        args: &[Vec<ArrayRef>],
        filters: &[Option<BooleanArray>],
        key_ids: &[u32],
        keys: usize,
        frame: &FramePass,
    ) -> Vec<(ArrayRef, RowFailures)>;

    /// Bytes per record (one per window slot, holding every member).
    fn record_bytes(&self) -> usize;

    /// Drops key `key`'s window, freeing its memory: the key's next row
    /// starts an empty one.
    fn forget(&mut self, key: u32);
}

/// A record of `W` 8-byte words. Partial aggregates align to at most 8
/// bytes (see `build`), so they pack without padding.
type Record<const W: usize> = [u64; W];

/// The shared windows of a group whose records take `W` 8-byte words.
struct SharedWindows<const W: usize> {
    members: Vec<Box<dyn Member>>,
    shapes: Vec<DabaLiteShape<Record<W>>>,
    /// Whether the frame ends before the current row, so rows wait.
    delayed: bool,
    /// By key, when `delayed`: the records of the rows waiting to enter
    /// the key's window, oldest first, every member's field initialized
    /// between batches.
    waiting: Vec<ChunkedDeque<MaybeUninit<Record<W>>>>,
    tape: Tape,
    retired: RetiredBlocks<MaybeUninit<Record<W>>>,
    /// Set while members replay: if a replay panics, the fields' states are
    /// unknown, so dropping the windows leaks their values instead.
    replaying: bool,
}

impl<const W: usize> SharedWindows<W> {
    /// Every member replays the tape; then drained blocks may go.
    fn replay(
        &mut self,
        args: &[Vec<ArrayRef>],
        filters: &[Option<BooleanArray>],
        results: &mut [MemberResults],
    ) {
        self.replaying = true;
        for (((member, args), filter), results) in self
            .members
            .iter()
            .zip(args)
            .zip(filters)
            .zip(results.iter_mut())
        {
            // SAFETY: the tape was recorded on this group's live records
            // (drained blocks are kept in `retired` until below), and every
            // member replays every tape in order.
            unsafe { member.replay(&self.tape.ops, args, filter.as_ref(), results) };
        }
        self.replaying = false;
        self.tape.ops.clear();
        self.retired.clear();
    }
}

impl<const W: usize> GroupOperator for SharedWindows<W> {
    fn process(
        &mut self,
        args: &[Vec<ArrayRef>],
        filters: &[Option<BooleanArray>],
        key_ids: &[u32],
        keys: usize,
        frame: &FramePass,
    ) -> Vec<(ArrayRef, RowFailures)> {
        let rows = key_ids.len();
        let mut results: Vec<MemberResults> = self
            .members
            .iter()
            .map(|m| MemberResults {
                sink: ArrowSink::new(m.output(), rows),
                failed: 0,
                first_error: None,
            })
            .collect();
        // New keys get their windows before any pointer is taken.
        let known = self.shapes.len();
        self.shapes.resize_with(keys.max(known), DabaLiteShape::new);
        for shape in &mut self.shapes[known..] {
            shape.init(&mut self.tape);
        }
        if self.delayed {
            self.waiting
                .resize_with(self.shapes.len(), ChunkedDeque::new);
        }
        for (chunk, chunk_keys) in key_ids.chunks(CHUNK_ROWS).enumerate() {
            let first = chunk * CHUNK_ROWS;
            for (row, &key) in (first..).zip(chunk_keys) {
                self.tape.row = row as u32;
                if frame.late[row] {
                    self.tape.ops.push(Op::Null);
                    continue;
                }
                let shape = &mut self.shapes[key as usize];
                if self.delayed {
                    let waiting = &mut self.waiting[key as usize];
                    waiting.push_back_unwritten();
                    if let Some(record) = waiting.back_mut() {
                        self.tape
                            .ops
                            .push(Op::Lift(record.as_mut_ptr().cast(), row as u32));
                    }
                    for _ in 0..frame.admissions[row] {
                        let Some(record) = waiting.front_mut() else {
                            break;
                        };
                        let record = record.as_mut_ptr().cast();
                        shape.insert(&mut Admitting {
                            tape: &mut self.tape,
                            record,
                        });
                        waiting.drop_front_deferred(&mut self.retired);
                    }
                    for _ in 0..frame.evictions[row] {
                        // An empty window (its key starts afresh) leaves
                        // the oldest waiting row to go.
                        if !shape.evict(&mut self.tape, &mut self.retired)
                            && let Some(record) = waiting.front_mut()
                        {
                            self.tape.ops.push(Op::Drop(record.as_mut_ptr().cast()));
                            waiting.drop_front_deferred(&mut self.retired);
                        }
                    }
                } else {
                    shape.insert(&mut self.tape);
                    for _ in 0..frame.evictions[row] {
                        shape.evict(&mut self.tape, &mut self.retired);
                    }
                }
                shape.query(&mut self.tape);
            }
            self.replay(args, filters, &mut results);
        }
        if !self.tape.ops.is_empty() {
            // Only initializations (an empty batch with new keys).
            self.replay(args, filters, &mut results);
        }
        results
            .into_iter()
            .map(|r| {
                let mut failures = RowFailures {
                    count: r.failed,
                    first: None,
                };
                if let Some((row, message)) = r.first_error {
                    let row = frame.batch_row(row as usize);
                    failures.first = Some(FailedRows {
                        rows: row..row + 1,
                        message,
                    });
                }
                (r.sink.finish(), failures)
            })
            .collect()
    }

    fn record_bytes(&self) -> usize {
        std::mem::size_of::<Record<W>>()
    }

    fn forget(&mut self, key: u32) {
        if self.replaying {
            // A replay panicked half-way: the fields' states are unknown.
            return;
        }
        let Some(shape) = self.shapes.get_mut(key as usize) else {
            return;
        };
        debug_assert!(self.tape.ops.is_empty(), "forgetting between batches only");
        let members = &self.members;
        if let Some(waiting) = self.waiting.get_mut(key as usize) {
            drop_waiting(members, std::mem::take(waiting));
        }
        shape.clear(
            |record| {
                // SAFETY: between batches (the tape is replayed) every
                // member's field of every live record is initialized.
                unsafe { drop_record(members, record.cast()) };
            },
            |extra| {
                for member in members {
                    // SAFETY: as above, for the extra aggregates.
                    unsafe { member.reset_field(extra.cast()) };
                }
            },
        );
    }
}

impl<const W: usize> Drop for SharedWindows<W> {
    fn drop(&mut self) {
        if self.replaying {
            // A replay panicked half-way: leak the values rather than drop
            // fields in unknown states.
            return;
        }
        let members = &self.members;
        for waiting in self.waiting.drain(..) {
            drop_waiting(members, waiting);
        }
        for shape in &mut self.shapes {
            shape.drain(|record| {
                // SAFETY: outside a replay every member's field of every
                // live record and extra aggregate is initialized.
                unsafe { drop_record(members, record.cast()) };
            });
        }
    }
}

/// Drops every member's field of the `waiting` records (between batches,
/// when all are initialized) and frees the deque.
fn drop_waiting<const W: usize>(
    members: &[Box<dyn Member>],
    mut waiting: ChunkedDeque<MaybeUninit<Record<W>>>,
) {
    while let Some(mut record) = waiting.pop_front() {
        // SAFETY: between batches every member's field of a waiting record
        // is initialized (lifted), and the record, moved out of the deque,
        // is not used again.
        unsafe { drop_record(members, record.as_mut_ptr().cast()) };
    }
}

/// Drops every member's field of `record`.
///
/// # Safety
/// Every member's field of `record` is initialized and not used afterwards.
unsafe fn drop_record(members: &[Box<dyn Member>], record: *mut u8) {
    for member in members {
        // SAFETY: the caller guarantees the field is initialized.
        unsafe { member.drop_field(record) };
    }
}

/// The layout of an aggregate's partial aggregate.
pub(crate) struct AggLayout;

impl AggregateVisitor for AggLayout {
    type Output = Layout;
    fn visit<A: Aggregate>(self, _: A) -> Layout {
        Layout::new::<A::Agg>()
    }
}

/// Builds a member at its offset.
struct BuildMember {
    offset: usize,
    output: OutputType,
}

impl AggregateVisitor for BuildMember {
    type Output = Box<dyn Member>;
    fn visit<A: Aggregate>(self, aggregate: A) -> Box<dyn Member> {
        Box::new(MemberOf {
            aggregate,
            offset: self.offset,
            output: self.output,
        })
    }
}

/// A member to be: the resolved aggregate and its result type.
pub struct MemberSpec<'a> {
    /// The aggregate.
    pub aggregate: &'a sliq_aggregates::ResolvedAggregate,
    /// Its result type.
    pub output: OutputType,
}

/// Shared windows for `members` (in order), or `None` when their partial
/// aggregates do not fit one record (see `MAX_RECORD_WORDS`); `delayed`
/// when the frame ends before the current row.
pub fn build(members: &[MemberSpec<'_>], delayed: bool) -> Option<Box<dyn GroupOperator>> {
    let mut offsets = Vec::with_capacity(members.len());
    let mut size = 0usize;
    for m in members {
        let layout = m.aggregate.visit(AggLayout);
        if layout.align() > std::mem::align_of::<u64>() {
            return None;
        }
        let offset = size.next_multiple_of(layout.align());
        offsets.push(offset);
        size = offset + layout.size();
    }
    let words = size.div_ceil(std::mem::size_of::<u64>()).max(1);
    let boxed = members
        .iter()
        .zip(offsets)
        .map(|(m, offset)| {
            m.aggregate.visit(BuildMember {
                offset,
                output: m.output.clone(),
            })
        })
        .collect();
    fn with_words<const W: usize>(
        members: Vec<Box<dyn Member>>,
        delayed: bool,
    ) -> Box<dyn GroupOperator> {
        Box::new(SharedWindows::<W> {
            members,
            shapes: Vec::new(),
            delayed,
            waiting: Vec::new(),
            tape: Tape::default(),
            retired: RetiredBlocks::default(),
            replaying: false,
        })
    }
    Some(match words {
        1 => with_words::<1>(boxed, delayed),
        2 => with_words::<2>(boxed, delayed),
        3 => with_words::<3>(boxed, delayed),
        4 => with_words::<4>(boxed, delayed),
        5 => with_words::<5>(boxed, delayed),
        6 => with_words::<6>(boxed, delayed),
        7 => with_words::<7>(boxed, delayed),
        8 => with_words::<8>(boxed, delayed),
        9 | 10 => with_words::<10>(boxed, delayed),
        11 | 12 => with_words::<12>(boxed, delayed),
        13..=16 => with_words::<16>(boxed, delayed),
        17..=24 => with_words::<24>(boxed, delayed),
        25..=MAX_RECORD_WORDS => with_words::<MAX_RECORD_WORDS>(boxed, delayed),
        _ => return None,
    })
}

// SAFETY: the raw pointers on the tape point into this group's own records,
// which move with it; the tape is empty between calls to `process`.
unsafe impl Send for Tape {}

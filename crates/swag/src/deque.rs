//! [`ChunkedDeque`]: a double-ended queue of linked blocks whose every
//! operation is worst-case O(1) (its own docs say why and how).
//!
//! # Positions and cursors
//!
//! Every element has an absolute position: the first element ever pushed is
//! at 0, and positions never shift when the front is popped. The aggregators
//! keep their sublist boundaries as crate-internal [`Cursor`]s: the address
//! of a slot plus the block that holds it, so stepping, reading and writing
//! never search.
//!
//! All `unsafe` code of the crate lives in this module.

use std::alloc::{self, Layout};
use std::fmt;
use std::marker::PhantomData;
use std::mem::{self, MaybeUninit};
use std::ptr;

/// The smallest block, in elements: a window of one element costs this much.
/// (Two, for elements of [`LARGE_ELEMENT_BYTES`] or more: a window of one
/// 4 KiB sketch costs a block of two, its own slot and the end's, not four.)
pub const MIN_BLOCK: usize = 4;

/// Elements at least this large are prefetched whole (every cache line),
/// [`SLOT_LOOKAHEAD`] slots ahead of every cursor step, in any deque: each
/// spans several cache lines, and a stream of them crosses a page every few
/// steps, where the hardware prefetcher stops. (DABA Lite also inserts them
/// through a call rather than inline code.)
pub(crate) const LARGE_ELEMENT_BYTES: usize = 256;

/// How many slots ahead a stepping cursor prefetches a large element.
const SLOT_LOOKAHEAD: usize = 2;

/// Blocks grow up to about this many bytes (and at least their smallest,
/// [`MIN_BLOCK`] elements or two large ones).
const MAX_BLOCK_BYTES: usize = 8 * 1024;

/// A deque of small elements holding at least this many bytes *streams*:
/// wherever a position enters a block, it prefetches the first
/// [`STREAM_AHEAD_BYTES`] of the block after it (the last ones of the block
/// before, for a cursor stepping back). Such a window outgrows a core's
/// second-level cache (2 MiB on the machine sliq is measured on), and the
/// hardware prefetcher, which stays within a page, lets a cold stream stall
/// where it changes pages: rounds of a 2^20- or 2^22-element DABA Lite had
/// a p99.99 of 400-700 ns against 50-80 ns for a cached one. A streaming
/// deque's blocks are pages, so a position changes pages only where it
/// enters a block, and a step stays one comparison: the block-end test it
/// makes anyway. (Streaming cursors first prefetched 512 bytes ahead at
/// every step, which cost every step of every deque a test of the mode and
/// put both kinds of step in every caller.)
///
/// Smaller deques do not: a cached window does not need it, and if one of
/// many windows (one per key), a line prefetched that far ahead would be
/// needed only after thousands of other windows' steps.
const STREAM_MIN_BYTES: usize = 1 << 20;

/// A deque that streams stops streaming below this many bytes (hysteresis).
const STREAM_STOP_BYTES: usize = STREAM_MIN_BYTES / 2;

/// A deque of small elements holding at least this many bytes links page
/// blocks ([`PAGE_BYTES`], page-aligned), so that by the time it streams
/// nearly all its blocks are page blocks: streaming cursors in unaligned
/// blocks of two pages still stalled now and then (p99.99 160-250 ns against
/// 85-105 in page blocks), and replacing the blocks it had would allocate in
/// the middle of the stream. Smaller deques keep unaligned blocks: page
/// alignment puts every block header in the same cache sets, which cost the
/// engine's ROWS 999 query over 1,000 keys about 10 % of its throughput.
const PAGE_BLOCKS_MIN_BYTES: usize = 64 * 1024;

/// How much of the next block a position entering a block of a streaming
/// deque prefetches. A plain loop over four cold streams in this machine's
/// memory had a p99.99 of 300-400 ns per round without software prefetch,
/// about 40 ns prefetching this far ahead; at a block's entry, 1 KiB or the
/// whole next page made the tail slower (the burst of prefetches waits).
const STREAM_AHEAD_BYTES: usize = 512;

/// Marks the path that calls it as rarely taken, as `std::hint::cold_path`
/// does from Rust 1.95 on: a block boundary, passed once per block. Without
/// it the compiler loads what only that path needs (the streaming flag) on
/// every step.
#[cold]
#[inline]
fn cold_path() {}

/// The size and alignment of a page block, header included, so that a
/// cursor changes pages only where it changes blocks.
const PAGE_BYTES: usize = 4096;

/// The header of one block of the list, which lies right after the
/// block's `cap` slots in the same allocation: a cursor keeps the address
/// of its block's header, which is thus also the end of the block's slots,
/// so a forward step tells that it left its block by one comparison of
/// addresses, without reading anything. The slots hold absolute positions
/// `[start, start + cap)`; only the slots inside the deque's `[front, end)`
/// are initialized.
///
/// Blocks are only ever handled through raw pointers into their
/// allocation, so that slot pointers keep the provenance of the whole
/// allocation.
#[repr(C)]
struct Block<T> {
    prev: *mut Block<T>,
    next: *mut Block<T>,
    /// The first slot of `next` (null while there is none): a cursor
    /// stepping into the next block reads only this header, next to the
    /// slot it leaves, not the next block's, at the far end of its slots.
    next_first: *mut MaybeUninit<T>,
    /// The first slot, where the allocation begins.
    first: *mut MaybeUninit<T>,
    /// Absolute position of the first slot.
    start: usize,
}

impl<T> Block<T> {
    /// Bytes of the header.
    const HEADER_BYTES: usize = mem::size_of::<Block<T>>();

    /// Whether `T` is a large element (see [`LARGE_ELEMENT_BYTES`]).
    const LARGE: bool = mem::size_of::<T>() >= LARGE_ELEMENT_BYTES;

    /// Bytes from one slot to the next: the element's size, and 1 for a
    /// zero-sized element, so that the slots of a block still have distinct
    /// addresses for cursors to compare (they are never read through).
    const STRIDE: usize = if mem::size_of::<T>() == 0 {
        1
    } else {
        mem::size_of::<T>()
    };

    /// Capacities are multiples of this, so that the header after the
    /// slots is aligned.
    const CAP_UNIT: usize = {
        let align = mem::align_of::<Block<T>>();
        let mut unit = 1;
        while !(unit * Self::STRIDE).is_multiple_of(align) {
            unit *= 2;
        }
        unit
    };

    /// The fewest elements a block holds: [`MIN_BLOCK`], or two large ones
    /// (the end lies in an allocated block, so a block of one would have a
    /// second linked with the first element).
    const MIN_ELEMENTS: usize = if Self::LARGE { 2 } else { MIN_BLOCK };

    /// The smallest capacity: [`Self::MIN_ELEMENTS`], rounded up to
    /// [`Self::CAP_UNIT`].
    const MIN_CAP: usize = Self::round_cap(Self::MIN_ELEMENTS);

    /// `cap` rounded up to a multiple of [`Self::CAP_UNIT`].
    const fn round_cap(cap: usize) -> usize {
        cap.div_ceil(Self::CAP_UNIT) * Self::CAP_UNIT
    }

    /// Slots of a page block (see [`PAGE_BLOCKS_MIN_BYTES`]): as many as fit in
    /// [`PAGE_BYTES`] with the header.
    const PAGE_CAP: usize = match mem::size_of::<T>() {
        0 => 0,
        size => (PAGE_BYTES - Self::HEADER_BYTES) / size / Self::CAP_UNIT * Self::CAP_UNIT,
    };

    /// Whether deques of `T` may stream and link page blocks (see
    /// [`STREAM_MIN_BYTES`]): small elements only (large ones are prefetched
    /// whole at every step anyway), and only if page blocks are told apart
    /// from the others by their capacity, which is never a power of two.
    const STREAMS: bool = mem::size_of::<T>() != 0
        && !Self::LARGE
        && Self::PAGE_CAP >= MIN_BLOCK
        && !Self::PAGE_CAP.is_power_of_two();

    /// Whether a block of `cap` slots is a page block.
    const fn is_page_cap(cap: usize) -> bool {
        Self::STREAMS && cap == Self::PAGE_CAP
    }

    /// The allocation of a block of `cap` slots (a multiple of
    /// [`Self::CAP_UNIT`]); a page block is page-aligned.
    fn layout(cap: usize) -> Layout {
        debug_assert!(cap.is_multiple_of(Self::CAP_UNIT));
        // Block capacities are small (see `MAX_BLOCK_BYTES`), so neither step
        // can overflow.
        // Zero-sized elements take a byte each (`STRIDE`).
        let slots = Layout::from_size_align(cap * Self::STRIDE, mem::align_of::<T>())
            .expect("block capacity is bounded");
        let (layout, header_at) = slots
            .extend(Layout::new::<Block<T>>())
            .expect("block capacity is bounded");
        debug_assert_eq!(header_at, cap * Self::STRIDE);
        let layout = if Self::is_page_cap(cap) {
            debug_assert!(layout.size() <= PAGE_BYTES);
            layout
                .align_to(PAGE_BYTES)
                .expect("a page is a valid alignment")
        } else {
            layout
        };
        layout.pad_to_align()
    }

    /// A new, unlinked block with `cap` uninitialized slots.
    fn allocate(cap: usize) -> *mut Block<T> {
        let layout = Self::layout(cap);
        // SAFETY: the layout has a non-zero size (the header).
        let first = unsafe { alloc::alloc(layout) };
        if first.is_null() {
            alloc::handle_alloc_error(layout);
        }
        let block = first.wrapping_add(cap * Self::STRIDE).cast::<Block<T>>();
        // SAFETY: the header's place lies inside the fresh allocation and is
        // aligned (`CAP_UNIT`).
        unsafe {
            block.write(Block {
                prev: ptr::null_mut(),
                next: ptr::null_mut(),
                next_first: ptr::null_mut(),
                first: first.cast(),
                start: 0,
            });
        }
        block
    }

    /// The number of slots of `block`.
    ///
    /// # Safety
    /// `block` is a live block.
    unsafe fn cap(block: *mut Block<T>) -> usize {
        // SAFETY: by the caller's contract.
        unsafe { (block.addr() - (*block).first.addr()) / Self::STRIDE }
    }

    /// Frees a block whose slots hold no element.
    ///
    /// # Safety
    /// `block` came from [`Block::allocate`] and is not used afterwards.
    unsafe fn free(block: *mut Block<T>) {
        // SAFETY: allocated at `first` with this layout (same `cap`); the
        // header needs no drop and the slots hold no element.
        unsafe { alloc::dealloc((*block).first.cast(), Self::layout(Self::cap(block))) }
    }

    /// One past the block's last slot: the header's address.
    #[inline(always)]
    fn limit(block: *mut Block<T>) -> *mut MaybeUninit<T> {
        block.cast()
    }

    /// The cursor slot of absolute position `pos`.
    ///
    /// # Safety
    /// `block` is a live block and `start <= pos < start + cap`.
    unsafe fn slot_of(block: *mut Block<T>, pos: usize) -> *mut MaybeUninit<T> {
        // SAFETY: the header is readable by the caller's contract.
        unsafe {
            (*block)
                .first
                .wrapping_byte_add((pos - (*block).start) * Self::STRIDE)
        }
    }

    /// The absolute position of `slot`, a slot of `block`.
    ///
    /// # Safety
    /// `block` is a live block and `slot` one of its slots.
    unsafe fn pos_of(block: *mut Block<T>, slot: *mut MaybeUninit<T>) -> usize {
        // SAFETY: the header is readable by the caller's contract.
        unsafe { (*block).start + (slot.addr() - (*block).first.addr()) / Self::STRIDE }
    }

    /// Prefetches the element at `slot`: the line holding it, or every line
    /// of a large one. Only an address is taken, nothing is read, and
    /// prefetching never faults: a slot outside the block merely wastes the
    /// prefetch.
    #[inline(always)]
    fn prefetch_slot(slot: *mut MaybeUninit<T>) {
        let slot = slot.cast::<u8>();
        if Self::LARGE {
            // The lines from the slot's first byte on, not every line it
            // spans (`crate::prefetch_value`): slots follow one another, so
            // a 512-byte one straddles a ninth line, and fetching that too
            // made `bloom` rounds 2-4 % slower (paper runner, n = 2^10 to
            // 2^16, four alternating runs on 2026-12-04).
            for line in (0..mem::size_of::<T>()).step_by(64) {
                crate::prefetch(slot.wrapping_add(line));
            }
        } else {
            crate::prefetch(slot);
        }
    }

    /// For a cursor of large elements in `block` that has just stepped
    /// forward to `to` (a slot of the block or its limit; the deque's end,
    /// for a push): prefetches the element [`SLOT_LOOKAHEAD`] slots further,
    /// in this block or the next.
    ///
    /// # Safety
    /// `block` is a live block.
    #[inline(always)]
    unsafe fn prefetch_large_ahead(block: *mut Block<T>, to: *mut MaybeUninit<T>) {
        let limit = Self::limit(block);
        let ahead = to.wrapping_byte_add(SLOT_LOOKAHEAD * Self::STRIDE);
        if ahead < limit {
            Self::prefetch_slot(ahead);
            return;
        }
        // SAFETY: by the caller's contract the header is readable.
        let next_first = unsafe { (*block).next_first };
        if !next_first.is_null() {
            Self::prefetch_slot(next_first.wrapping_byte_add(ahead.addr() - limit.addr()));
        }
    }

    /// Like [`Self::prefetch_large_ahead`] for a cursor of large elements
    /// that has just stepped back to `slot` in `block`.
    ///
    /// # Safety
    /// `block` is a live block holding `slot`.
    #[inline(always)]
    unsafe fn prefetch_large_behind(block: *mut Block<T>, slot: *mut MaybeUninit<T>) {
        let back = SLOT_LOOKAHEAD * Self::STRIDE;
        // SAFETY: by the caller's contract the header is readable.
        let (first, prev) = unsafe { ((*block).first, (*block).prev) };
        let index_bytes = slot.addr() - first.addr();
        if index_bytes >= back {
            Self::prefetch_slot(slot.wrapping_byte_sub(back));
        } else if !prev.is_null() {
            Self::prefetch_slot(Self::limit(prev).wrapping_byte_sub(back - index_bytes));
        }
    }

    /// Prefetches the first [`STREAM_AHEAD_BYTES`] of the slots beginning at
    /// `first` and the header of their block, `block`, if it is not null.
    /// Reads nothing.
    #[inline(always)]
    fn prefetch_head(block: *mut Block<T>, first: *mut MaybeUninit<T>) {
        if block.is_null() {
            return;
        }
        crate::prefetch(block);
        for line in (0..STREAM_AHEAD_BYTES).step_by(64) {
            crate::prefetch(first.cast::<u8>().wrapping_add(line));
        }
    }

    /// Prefetches the header of `block` and the last [`STREAM_AHEAD_BYTES`]
    /// of its slots, if it is not null. Reads nothing.
    #[inline(always)]
    fn prefetch_tail(block: *mut Block<T>) {
        if block.is_null() {
            return;
        }
        crate::prefetch(block);
        let end = block.cast::<u8>();
        for line in (64..=STREAM_AHEAD_BYTES).step_by(64) {
            crate::prefetch(end.wrapping_sub(line));
        }
    }
}

/// A position in a [`ChunkedDeque`]: the address of its slot, and the block
/// that holds it (the address of its header, right after its slots).
///
/// Reading, writing and comparing cursors touch no block header, a forward
/// step reads one only when it leaves its block, and a backward step reads
/// its block's first slot from it: a window's cursors are used every
/// operation, and a header is one more cache line of each window per row
/// in the engine.
///
/// Invariant (upheld by the deque's methods, checked by `debug_assert!`):
/// a cursor handed to the deque has `front <= pos <= end`, and `block` is the
/// block whose slot range contains `pos`. Live positions have distinct
/// slots, so cursors compare by slot. Cursors are plain values: copying one
/// is free, and moving the deque's front or back does not update them, so
/// the owner must not use a cursor that the front has passed or that a
/// `pop_back` has cut off. The aggregators of this crate guarantee it by
/// their pointer-order invariants (`F ≤ L ≤ R ≤ A ≤ B ≤ E`). A deque that
/// never allocated a block hands out cursors with null pointers, which may
/// only be compared with each other: the first push makes them stale, so
/// the aggregators take their cursors anew after it.
pub(crate) struct Cursor<T> {
    block: *mut Block<T>,
    slot: *mut MaybeUninit<T>,
}

// SAFETY: a cursor is a position inside a deque that its owner also owns;
// it is only dereferenced through that deque, so it may move between
// threads whenever the deque's elements may.
unsafe impl<T: Send> Send for Cursor<T> {}
// SAFETY: as above; shared access goes through `&ChunkedDeque<T>`.
unsafe impl<T: Sync> Sync for Cursor<T> {}

impl<T> Clone for Cursor<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Cursor<T> {}

impl<T> PartialEq for Cursor<T> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.slot == other.slot
    }
}

impl<T> Eq for Cursor<T> {}

impl<T> fmt::Debug for Cursor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}", self.pos())
    }
}

impl<T> Cursor<T> {
    /// A cursor at the last slot of `block`. Reads nothing.
    #[inline(always)]
    fn last_of(block: *mut Block<T>) -> Self {
        Cursor {
            block,
            slot: Block::limit(block).wrapping_byte_sub(Block::<T>::STRIDE),
        }
    }

    /// A cursor at `pos`, which `block` (live, or null for a deque without
    /// blocks) holds.
    ///
    /// # Safety
    /// As for [`Block::slot_of`], unless `block` is null.
    unsafe fn at(block: *mut Block<T>, pos: usize) -> Self {
        if block.is_null() {
            return Cursor {
                block,
                slot: ptr::null_mut(),
            };
        }
        Cursor {
            block,
            // SAFETY: by the caller's contract.
            slot: unsafe { Block::slot_of(block, pos) },
        }
    }

    /// The absolute position this cursor points at (reads its block's
    /// header: for checks and rebuilding, not for hot paths).
    pub(crate) fn pos(&self) -> usize {
        if self.block.is_null() {
            return 0;
        }
        // SAFETY: a cursor's block is live (cursor invariant) and its slot
        // one of the block's.
        unsafe { Block::pos_of(self.block, self.slot) }
    }

    /// The element's address (a dangling, aligned one for zero-sized
    /// elements, whose cursor slots are not addresses).
    #[inline(always)]
    fn element(&self) -> *mut MaybeUninit<T> {
        match mem::size_of::<T>() {
            0 => ptr::NonNull::dangling().as_ptr(),
            _ => self.slot,
        }
    }
}

/// A double-ended queue whose every operation is worst-case O(1).
///
/// `std::collections::VecDeque` doubles its buffer when it fills up, copying
/// every element: amortized O(1), but one push in a while costs O(n). The
/// sliding-window aggregators of this crate promise worst-case constant time,
/// so they sit on `ChunkedDeque` instead: a doubly linked list of blocks.
/// Pushing at the back writes into the tail block and links a new block when
/// it fills; popping at the front unlinks the head block once it is drained.
/// Nothing is ever copied or moved after it was written.
///
/// | operation | cost |
/// |---|---|
/// | `push_back`, `pop_front`, `drop_front`, `pop_back` | **O(1) worst case** (at most one block allocation) |
/// | `front`, `back`, `len` | **O(1) worst case** |
///
/// Block sizes follow the queue's length, from [`MIN_BLOCK`] elements (two,
/// when they are large) up to about 8 KiB, so a window of one element costs
/// one small block while a
/// large window is stored in large blocks. One drained block is kept as a
/// spare, so a window that slides at a steady size allocates nothing.
///
/// A deque of small elements past 64 KiB links page-sized, page-aligned
/// blocks, and one that outgrows the caches (1 MiB) *streams*: a position
/// entering a block prefetches the start of the next one, so that the step
/// onto a cold page does not stall (see `STREAM_MIN_BYTES`). Below half
/// that size it stops.
///
/// # Examples
///
/// ```
/// use sliq_swag::ChunkedDeque;
///
/// let mut q = ChunkedDeque::new();
/// for i in 0..1000 {
///     q.push_back(i);
/// }
/// assert_eq!(q.pop_front(), Some(0));
/// assert_eq!(q.pop_back(), Some(999));
/// assert_eq!(q.len(), 998);
/// assert_eq!(q.iter().take(3).copied().collect::<Vec<_>>(), vec![1, 2, 3]);
/// ```
///
/// Invariants:
/// - either no block is allocated (`head`, `tail` and both slots are null,
///   `len` is 0), or `head ..= tail` is a linked chain whose slot ranges are
///   contiguous;
/// - the end always lies inside an allocated block (a full tail gets its
///   successor linked at once), so a cursor at the end is always valid;
/// - `len` is the end's position minus the front's;
/// - slots in `[front, end)` are initialized, all others are not.
///
/// The fields are laid out in this order (`repr(C)`) so that no block
/// pointer lies next to its end's slot: a cursor at an end is then read as
/// two 8-byte loads, each of which the store that last changed its field
/// can forward, where one 16-byte load after a pop or push had changed only
/// the slot waited for that store to reach the cache (DABA Lite's flips
/// read both ends every few rounds in a small window).
#[repr(C)]
pub struct ChunkedDeque<T> {
    head: *mut Block<T>,
    tail: *mut Block<T>,
    /// Number of elements.
    len: usize,
    /// The front's slot: the front is read and popped without a look at the
    /// block's header.
    front_slot: *mut MaybeUninit<T>,
    /// The end's slot.
    end_slot: *mut MaybeUninit<T>,
    /// A drained block kept for reuse, or null.
    spare: *mut Block<T>,
    /// Capacity of the first block, when none is allocated yet (at most
    /// `MAX_BLOCK`, so that it packs with `streaming`).
    first_block: u32,
    /// Whether the deque streams (see [`STREAM_MIN_BYTES`]); decided each
    /// time a block is linked.
    streaming: bool,
    _owns: PhantomData<T>,
}

// SAFETY: the deque owns its elements exclusively, like a `Vec<T>`; the raw
// pointers are never shared outside it.
unsafe impl<T: Send> Send for ChunkedDeque<T> {}
// SAFETY: `&ChunkedDeque<T>` only hands out `&T`.
unsafe impl<T: Sync> Sync for ChunkedDeque<T> {}

impl<T> Default for ChunkedDeque<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> ChunkedDeque<T> {
    /// Largest block, in elements, for this element type.
    const MAX_BLOCK: usize = {
        let n = MAX_BLOCK_BYTES / Block::<T>::STRIDE;
        let least = Block::<T>::MIN_ELEMENTS;
        Block::<T>::round_cap(if n < least { least } else { n })
    };

    /// An empty deque. Allocates nothing until the first push.
    pub const fn new() -> Self {
        Self::with_first_block(Block::<T>::MIN_CAP)
    }

    /// An empty deque whose first block holds about `capacity` elements
    /// (clamped to the block size limits), for windows whose size is known.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_first_block(Self::block_size_for(capacity))
    }

    const fn with_first_block(first_block: usize) -> Self {
        debug_assert!(first_block <= Self::MAX_BLOCK);
        ChunkedDeque {
            head: ptr::null_mut(),
            tail: ptr::null_mut(),
            len: 0,
            front_slot: ptr::null_mut(),
            end_slot: ptr::null_mut(),
            spare: ptr::null_mut(),
            first_block: first_block as u32,
            streaming: false,
            _owns: PhantomData,
        }
    }

    /// The capacity of a block for about `len` elements.
    fn block_size_for(len: usize) -> usize {
        let cap = len
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX)
            .clamp(Block::<T>::MIN_ELEMENTS, Self::MAX_BLOCK);
        Block::<T>::round_cap(cap)
    }

    /// Number of elements. **O(1).**
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the deque holds no element. **O(1).**
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `value` at the back. **Worst-case O(1)**: writes one slot and,
    /// when that fills the tail block, links one block (the spare if it is
    /// large enough, else a fresh allocation).
    #[inline]
    pub fn push_back(&mut self, value: T) {
        self.push_back_inline(value);
    }

    /// [`Self::push_back`], always inlined: a large value then goes from the
    /// caller's frame straight into its slot instead of through a call's
    /// argument.
    #[inline(always)]
    pub(crate) fn push_back_inline(&mut self, value: T) {
        self.ensure_tail();
        self.write_back(value);
    }

    /// [`Self::push_back`] into a deque that holds an element, so that its
    /// blocks are allocated and the first-block check can be skipped.
    #[inline(always)]
    pub(crate) fn push_back_nonempty(&mut self, value: T) {
        debug_assert!(!self.is_empty(), "push_back_nonempty on an empty deque");
        self.write_back(value);
    }

    /// Writes `value` at the end and counts it in. Requires the tail block
    /// allocated.
    #[inline(always)]
    fn write_back(&mut self, value: T) {
        debug_assert!(!self.tail.is_null());
        if Block::<T>::LARGE {
            // A large value is written line by line: fetch the slots
            // coming next first. (The end stays inside its block.)
            // SAFETY: `tail` is a live block.
            unsafe { Block::prefetch_large_ahead(self.tail, self.end_slot) };
        }
        // SAFETY: the end lies in an allocated block (struct invariant after
        // `ensure_tail`); its slot is uninitialized because it is the end.
        unsafe { (*self.cursor_end().element()).write(value) };
        self.advance_end();
    }

    /// Allocates the first block if there is none yet.
    #[inline]
    fn ensure_tail(&mut self) {
        if self.tail.is_null() {
            self.link_first_block(0);
        }
    }

    /// The first block, once per deque, placed at position `start`: out of
    /// line, so that the pushes of a window that slides carry no allocation
    /// code.
    #[cold]
    #[inline(never)]
    fn link_first_block(&mut self, start: usize) {
        let block = self.take_block(self.first_block as usize);
        // SAFETY: `block` is a fresh, exclusively owned block.
        unsafe {
            (*block).start = start;
            self.front_slot = (*block).first;
        }
        self.head = block;
        self.tail = block;
        self.end_slot = self.front_slot;
    }

    /// Counts the slot at the end (just written) in, linking a block when
    /// that fills the tail.
    #[inline]
    fn advance_end(&mut self) {
        self.len += 1;
        let next = self.end_slot.wrapping_byte_add(Block::<T>::STRIDE);
        if next == Block::limit(self.tail) {
            cold_path();
            // SAFETY: the tail is allocated and now full.
            unsafe { self.link_tail() };
        } else {
            self.end_slot = next;
        }
        self.debug_check();
    }

    /// Removes and returns the front element, or `None` when empty.
    /// **Worst-case O(1)**: a drained head block becomes the spare.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        // SAFETY: the slot handed to the first closure is initialized and is
        // read once; `recycle` is given the drained block, owned and unlinked.
        self.remove_front(
            |slot| unsafe { (*slot).assume_init_read() },
            |deque, drained| unsafe { deque.recycle(drained) },
        )
    }

    /// Drops the front element in place; `false` when empty. Like
    /// [`pop_front`](Self::pop_front) without moving the element out, which
    /// for a large element saves a copy. **Worst-case O(1).**
    #[inline]
    pub fn drop_front(&mut self) -> bool {
        // SAFETY: as in `pop_front`; the element is dropped instead of read.
        self.remove_front(
            |slot| unsafe { (*slot).assume_init_drop() },
            |deque, drained| unsafe { deque.recycle(drained) },
        )
        .is_some()
    }

    /// Like [`drop_front`](Self::drop_front), but a drained block that would
    /// be freed goes to `retired` instead, so that its memory stays valid
    /// until `retired` is cleared (for callers that keep raw pointers to
    /// slots for a while, as `DabaLiteShape`'s users do).
    #[inline]
    pub fn drop_front_deferred(&mut self, retired: &mut RetiredBlocks<T>) -> bool {
        // SAFETY: as in `drop_front`.
        self.remove_front(
            |slot| unsafe { (*slot).assume_init_drop() },
            |deque, drained| {
                if deque.spare.is_null() {
                    deque.spare = drained;
                } else {
                    retired.blocks.push(drained);
                }
            },
        )
        .is_some()
    }

    /// Removes the front element: `take` gets its initialized slot and must
    /// read or drop it (the slot counts as uninitialized afterwards); a head
    /// block this drains is unlinked and handed to `release`.
    ///
    /// Always inlined: an evict is this and a few instructions around it,
    /// and left to the compiler's heuristics it became a call in every round
    /// of a window's loop in a build with one codegen unit (as `lto = "fat"`
    /// or `codegen-units = 1` make it), where the function has many callers.
    #[inline(always)]
    fn remove_front<R>(
        &mut self,
        take: impl FnOnce(*mut MaybeUninit<T>) -> R,
        release: impl FnOnce(&mut Self, *mut Block<T>),
    ) -> Option<R> {
        if self.is_empty() {
            return None;
        }
        let mut front = self.cursor_front();
        let taken = take(front.element());
        self.len -= 1;
        // Queries read the front: it moves like a cursor. Past the head's
        // last slot, the end lies in a later block, which is linked.
        let left = self.advance(&mut front);
        self.front_slot = front.slot;
        if left {
            let drained = mem::replace(&mut self.head, front.block);
            // SAFETY: both blocks are live; the drained one is owned and
            // now unlinked.
            unsafe {
                (*front.block).prev = ptr::null_mut();
                (*drained).next = ptr::null_mut();
                (*drained).next_first = ptr::null_mut();
            }
            release(self, drained);
        }
        self.debug_check();
        Some(taken)
    }

    /// Removes and returns the back element, or `None` when empty.
    /// **Worst-case O(1)**: an emptied tail block becomes the spare.
    pub fn pop_back(&mut self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        // SAFETY: non-empty, so blocks are allocated. If the end is the first
        // slot of the tail, the element before it is in the previous block,
        // which exists because the front lies before the end. The slot
        // before the end is initialized; it is read once and then left
        // uninitialized.
        let value = unsafe {
            if self.end_slot == (*self.tail).first {
                let emptied = self.tail;
                let tail = (*emptied).prev;
                (*tail).next = ptr::null_mut();
                (*tail).next_first = ptr::null_mut();
                self.tail = tail;
                self.end_slot = Cursor::last_of(tail).slot;
                self.recycle(emptied);
            } else {
                self.end_slot = self.end_slot.wrapping_byte_sub(Block::<T>::STRIDE);
            }
            self.len -= 1;
            (*self.cursor_end().element()).assume_init_read()
        };
        self.debug_check();
        Some(value)
    }

    /// The front (oldest) element. **O(1).**
    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.is_empty() {
            return None;
        }
        Some(self.get(&self.cursor_front()))
    }

    /// Mutable access to the front (oldest) element. **O(1).**
    #[inline]
    pub fn front_mut(&mut self) -> Option<&mut T> {
        if self.is_empty() {
            return None;
        }
        let front = self.cursor_front();
        Some(self.get_mut(&front))
    }

    /// The back (youngest) element. **O(1).**
    #[inline]
    pub fn back(&self) -> Option<&T> {
        if self.is_empty() {
            return None;
        }
        Some(self.get(&self.cursor_back()))
    }

    /// Mutable access to the back (youngest) element. **O(1).**
    #[inline]
    pub fn back_mut(&mut self) -> Option<&mut T> {
        if self.is_empty() {
            return None;
        }
        let back = self.cursor_back();
        Some(self.get_mut(&back))
    }

    /// Iterates from front (oldest) to back (youngest).
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            deque: self,
            cursor: self.cursor_front(),
            left: self.len(),
        }
    }

    /// Drops every element, keeping one block for reuse.
    pub fn clear(&mut self) {
        while self.drop_front() {}
    }

    /// Heap bytes held by blocks (including the spare), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        let block_bytes = |b: *mut Block<T>| {
            // SAFETY: `b` is an allocated block owned by this deque.
            Block::<T>::layout(unsafe { Block::cap(b) }).size()
        };
        let mut total = 0;
        let mut b = self.head;
        while !b.is_null() {
            total += block_bytes(b);
            // SAFETY: as above; `next` is null or another owned block.
            b = unsafe { (*b).next };
        }
        if !self.spare.is_null() {
            total += block_bytes(self.spare);
        }
        total
    }

    /// A hint: start fetching the front element and the slot the next
    /// `push_back` writes, for a caller about to use this deque (one of
    /// many, e.g. one per key). Changes nothing.
    #[inline]
    pub fn prefetch_ends(&self) {
        self.prefetch_slot(&self.cursor_front(), 0);
        self.prefetch_slot(&self.cursor_end(), 0);
    }

    // ---- crate-internal cursors ----

    /// Prefetches the slot `offset` positions from `c` (reads nothing). The
    /// address is computed in `c`'s block, so past its ends it points at
    /// unrelated memory and the prefetch is merely wasted: prefetching never
    /// faults.
    #[inline]
    pub(crate) fn prefetch_slot(&self, c: &Cursor<T>, offset: isize) {
        let stride = Block::<T>::STRIDE as isize;
        crate::prefetch(c.slot.wrapping_byte_offset(offset.wrapping_mul(stride)));
    }

    /// A cursor at the front position (`F`). On a deque that never held an
    /// element the cursor has no block; it may only be compared.
    #[inline]
    pub(crate) fn cursor_front(&self) -> Cursor<T> {
        Cursor {
            block: self.head,
            slot: self.front_slot,
        }
    }

    /// A cursor at the end position (`E`, one past the back).
    #[inline]
    pub(crate) fn cursor_end(&self) -> Cursor<T> {
        Cursor {
            block: self.tail,
            slot: self.end_slot,
        }
    }

    /// A cursor at absolute position `pos` in `[front, end]`. **O(blocks)**:
    /// for rebuilding cursors after a clone, never on a hot path.
    pub(crate) fn cursor_at(&self, pos: usize) -> Cursor<T> {
        debug_assert!(self.cursor_front().pos() <= pos && pos <= self.cursor_end().pos());
        let mut block = self.head;
        // SAFETY: walks linked, owned blocks; `pos <= end` lies in one of
        // them, which then holds it.
        unsafe {
            while !block.is_null() && pos >= (*block).start + Block::cap(block) {
                block = (*block).next;
            }
            Cursor::at(block, pos)
        }
    }

    /// A cursor at the back element. Requires a non-empty deque.
    pub(crate) fn cursor_back(&self) -> Cursor<T> {
        let mut c = self.cursor_end();
        self.step_back(&mut c);
        c
    }

    /// Moves `c` one position towards the back. Requires `c` before the end.
    #[inline]
    pub(crate) fn step(&self, c: &mut Cursor<T>) {
        self.debug_check_cursor(c);
        debug_assert!(c.pos() < self.cursor_end().pos(), "stepping past the end");
        self.advance(c);
    }

    /// Moves `c`, a position before the end or the front itself, one
    /// position towards the back; returns whether it left its block.
    #[inline(always)]
    fn advance(&self, c: &mut Cursor<T>) -> bool {
        let next = c.slot.wrapping_byte_add(Block::<T>::STRIDE);
        if Block::<T>::LARGE {
            // SAFETY: `c.block` is live (cursor invariant).
            unsafe { Block::prefetch_large_ahead(c.block, next) };
        }
        if next != Block::limit(c.block) {
            c.slot = next;
            return false;
        }
        cold_path();
        // SAFETY: `c.block` is live; past it, the successor is linked
        // because the end lies in an allocated block after `c`.
        unsafe {
            c.slot = (*c.block).next_first;
            c.block = (*c.block).next;
            self.entered_forward(c.block);
        }
        true
    }

    /// Moves `c` one position towards the front. Requires `c` after the
    /// front.
    #[inline]
    pub(crate) fn step_back(&self, c: &mut Cursor<T>) {
        self.debug_check_cursor(c);
        debug_assert!(
            c.pos() > self.cursor_front().pos(),
            "stepping before the front"
        );
        // SAFETY: `c.block` is live (cursor invariant); if `c` is its first
        // slot, the position before it (at least the front) is in the linked
        // predecessor.
        unsafe {
            if c.slot == (*c.block).first {
                cold_path();
                *c = Cursor::last_of((*c.block).prev);
                self.entered_backward(c.block);
            } else {
                c.slot = c.slot.wrapping_byte_sub(Block::<T>::STRIDE);
            }
            if Block::<T>::LARGE {
                Block::prefetch_large_behind(c.block, c.slot);
            }
        }
    }

    /// After a position moved forward into `block`: in a streaming deque,
    /// prefetches the start of the block after it (see [`STREAM_MIN_BYTES`]).
    ///
    /// # Safety
    /// `block` is a live block of this deque.
    #[inline(always)]
    unsafe fn entered_forward(&self, block: *mut Block<T>) {
        if self.streaming {
            // SAFETY: by the caller's contract the header is readable.
            unsafe { Block::prefetch_head((*block).next, (*block).next_first) };
        }
    }

    /// After a cursor moved back into `block`: in a streaming deque,
    /// prefetches the end of the block before it (see [`STREAM_MIN_BYTES`]).
    ///
    /// # Safety
    /// `block` is a live block of this deque.
    #[inline(always)]
    unsafe fn entered_backward(&self, block: *mut Block<T>) {
        if self.streaming {
            // SAFETY: by the caller's contract the header is readable.
            Block::prefetch_tail(unsafe { (*block).prev });
        }
    }

    /// The element at `c`. Requires `c` in `[front, end)`.
    #[inline]
    pub(crate) fn get(&self, c: &Cursor<T>) -> &T {
        self.debug_check_element(c);
        // SAFETY: `c` is a slot of a live block, initialized because it is in
        // `[front, end)`; the borrow is tied to `&self`.
        unsafe { (*c.element()).assume_init_ref() }
    }

    /// The element at `c`, mutably. Requires `c` in `[front, end)`.
    #[inline]
    pub(crate) fn get_mut(&mut self, c: &Cursor<T>) -> &mut T {
        self.debug_check_element(c);
        // SAFETY: as in `get`; the borrow is tied to `&mut self`.
        unsafe { (*c.element()).assume_init_mut() }
    }

    /// The element at `target` mutably and the one at `source` shared.
    /// Requires both in `[front, end)` and at different positions.
    #[inline]
    pub(crate) fn get_pair_mut(&mut self, target: &Cursor<T>, source: &Cursor<T>) -> (&mut T, &T) {
        self.debug_check_element(target);
        self.debug_check_element(source);
        debug_assert!(target != source, "aliasing cursors");
        // SAFETY: both slots are initialized (as in `get`) and distinct, so the
        // two references do not alias; both borrows are tied to `&mut self`.
        unsafe {
            let t = target.element();
            let s = source.element();
            ((*t).assume_init_mut(), (*s).assume_init_ref())
        }
    }

    // ---- block management ----

    /// Links a block after the full tail, so that the end stays inside a
    /// block.
    ///
    /// # Safety
    /// `tail` must be allocated and full, its last element just counted in.
    unsafe fn link_tail(&mut self) {
        let bytes = self.len().saturating_mul(mem::size_of::<T>());
        if Block::<T>::STREAMS {
            let threshold = if self.streaming {
                STREAM_STOP_BYTES
            } else {
                STREAM_MIN_BYTES
            };
            self.streaming = bytes >= threshold;
        }
        let cap = if Block::<T>::STREAMS && bytes >= PAGE_BLOCKS_MIN_BYTES {
            Block::<T>::PAGE_CAP
        } else {
            Self::block_size_for(self.len() + 1)
        };
        let block = self.take_block(cap);
        let tail = self.tail;
        // SAFETY: `block` is exclusively owned; `tail` is allocated and full,
        // so the new end position is one past its last slot.
        unsafe {
            (*block).start = (*tail).start + Block::cap(tail);
            (*block).prev = tail;
            (*block).next = ptr::null_mut();
            (*block).next_first = ptr::null_mut();
            (*tail).next = block;
            (*tail).next_first = (*block).first;
            self.end_slot = (*block).first;
        }
        self.tail = block;
    }

    /// A block of at least `cap` slots: the spare if large enough.
    ///
    /// A deque that starts linking page blocks thus keeps reusing the
    /// (few) blocks it had instead of allocating a page block for each one
    /// it drains: allocations while a large window slides would be its
    /// slowest rounds.
    fn take_block(&mut self, cap: usize) -> *mut Block<T> {
        // SAFETY: a non-null spare is an owned, unlinked block.
        if !self.spare.is_null() && unsafe { Block::cap(self.spare) } >= cap {
            return mem::replace(&mut self.spare, ptr::null_mut());
        }
        Block::allocate(cap)
    }

    /// Keeps a drained, unlinked block as the spare (the larger of the two is
    /// kept) or frees it.
    ///
    /// # Safety
    /// `block` must be owned by this deque, unlinked, and hold no element.
    unsafe fn recycle(&mut self, block: *mut Block<T>) {
        // SAFETY: both are owned blocks holding no element; freeing one that
        // holds only uninitialized slots drops nothing.
        unsafe {
            (*block).prev = ptr::null_mut();
            (*block).next = ptr::null_mut();
            (*block).next_first = ptr::null_mut();
            if self.spare.is_null() {
                self.spare = block;
            } else if Block::cap(block) > Block::cap(self.spare) {
                Block::free(mem::replace(&mut self.spare, block));
            } else {
                Block::free(block);
            }
        }
    }

    fn debug_check(&self) {
        #[cfg(debug_assertions)]
        if !self.head.is_null() {
            let (head, tail) = (self.head, self.tail);
            // SAFETY: head and tail are allocated blocks of this deque.
            unsafe {
                debug_assert!((*head).prev.is_null() && (*tail).next.is_null());
                for (slot, block) in [(self.front_slot, head), (self.end_slot, tail)] {
                    let first = (*block).first;
                    debug_assert!(first <= slot && slot < Block::limit(block));
                    debug_assert_eq!((slot.addr() - first.addr()) % Block::<T>::STRIDE, 0);
                }
            }
            let (front, end) = (self.cursor_front().pos(), self.cursor_end().pos());
            debug_assert_eq!(end - front, self.len, "length out of step");
        }
    }

    fn debug_check_cursor(&self, c: &Cursor<T>) {
        if !cfg!(debug_assertions) {
            return;
        }
        debug_assert!(!c.block.is_null(), "cursor without a block");
        let pos = c.pos();
        let (front, end) = (self.cursor_front().pos(), self.cursor_end().pos());
        debug_assert!(
            front <= pos && pos <= end,
            "cursor {pos} outside [{front}, {end}]"
        );
        debug_assert!(c.slot != Block::limit(c.block), "cursor at its block's end");
    }

    fn debug_check_element(&self, c: &Cursor<T>) {
        self.debug_check_cursor(c);
        debug_assert!(
            c.pos() < self.cursor_end().pos(),
            "cursor at the end has no element"
        );
    }
}

/// Drained blocks whose memory must outlive pointers into them; see
/// [`ChunkedDeque::drop_front_deferred`]. Their slots hold no element.
pub struct RetiredBlocks<T> {
    blocks: Vec<*mut Block<T>>,
}

// SAFETY: the blocks are owned, unlinked and hold no element.
unsafe impl<T: Send> Send for RetiredBlocks<T> {}

impl<T> Default for RetiredBlocks<T> {
    fn default() -> Self {
        RetiredBlocks { blocks: Vec::new() }
    }
}

impl<T> RetiredBlocks<T> {
    /// Frees every retired block.
    pub fn clear(&mut self) {
        for block in self.blocks.drain(..) {
            // SAFETY: retired blocks are owned here, unlinked and empty.
            unsafe { Block::free(block) };
        }
    }
}

impl<T> Drop for RetiredBlocks<T> {
    fn drop(&mut self) {
        self.clear();
    }
}

impl<T> fmt::Debug for RetiredBlocks<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RetiredBlocks({})", self.blocks.len())
    }
}

impl<U> ChunkedDeque<MaybeUninit<U>> {
    /// Appends a slot without writing it, as [`push_back`](Self::push_back)
    /// of `MaybeUninit::uninit()` would, but leaving the memory as it was:
    /// a caller replaying recorded operations on slots later relies on the
    /// bytes of a reused slot staying untouched until then.
    #[inline]
    pub fn push_back_unwritten(&mut self) {
        // An unwritten `MaybeUninit` is a valid element.
        self.ensure_tail();
        self.advance_end();
    }
}

impl<T> Drop for ChunkedDeque<T> {
    fn drop(&mut self) {
        if mem::needs_drop::<T>() {
            self.clear();
        }
        let mut b = self.head;
        while !b.is_null() {
            // SAFETY: every linked block is owned; its elements were dropped
            // above (or need no drop), so freeing the slots drops nothing.
            unsafe {
                let next = (*b).next;
                Block::free(b);
                b = next;
            }
        }
        if !self.spare.is_null() {
            // SAFETY: the spare is owned and holds no element.
            unsafe { Block::free(self.spare) };
        }
    }
}

impl<T: Clone> Clone for ChunkedDeque<T> {
    fn clone(&self) -> Self {
        // Same absolute positions, so cursors can be re-created by position.
        let mut copy = ChunkedDeque::with_first_block(self.first_block as usize);
        if !self.head.is_null() {
            copy.link_first_block(self.cursor_front().pos());
        }
        copy.extend(self.iter().cloned());
        copy
    }
}

impl<T: fmt::Debug> fmt::Debug for ChunkedDeque<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T> Extend<T> for ChunkedDeque<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        for v in iter {
            self.push_back(v);
        }
    }
}

impl<T> FromIterator<T> for ChunkedDeque<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut q = ChunkedDeque::new();
        q.extend(iter);
        q
    }
}

impl<'a, T> IntoIterator for &'a ChunkedDeque<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// Iterator over a [`ChunkedDeque`], front to back.
pub struct Iter<'a, T> {
    deque: &'a ChunkedDeque<T>,
    cursor: Cursor<T>,
    /// Elements not yet yielded.
    left: usize,
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;

    fn next(&mut self) -> Option<&'a T> {
        if self.left == 0 {
            return None;
        }
        let item = self.deque.get(&self.cursor);
        self.deque.step(&mut self.cursor);
        self.left -= 1;
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::collections::VecDeque;
    use std::rc::Rc;

    /// The capacities of the linked blocks, front to back, and whether each
    /// block is page-aligned.
    fn blocks(q: &ChunkedDeque<u64>) -> Vec<(usize, bool)> {
        let mut out = Vec::new();
        let mut b = q.head;
        while !b.is_null() {
            // SAFETY: walks the deque's own linked blocks.
            unsafe {
                let first = (*b).first;
                out.push((Block::cap(b), first.addr().is_multiple_of(PAGE_BYTES)));
                b = (*b).next;
            }
        }
        out
    }

    #[test]
    fn a_large_deque_streams_through_page_blocks_then_stops() {
        let page_cap = Block::<u64>::PAGE_CAP;
        const { assert!(Block::<u64>::STREAMS) };
        assert_eq!(Block::<u64>::layout(page_cap).size(), PAGE_BYTES);
        let mut q = ChunkedDeque::new();
        let mut front = 0u64;
        let mut next = 0u64;
        let threshold = (STREAM_MIN_BYTES / 8) as u64;
        while next < 2 * (PAGE_BLOCKS_MIN_BYTES / 8) as u64 {
            q.push_back(next);
            next += 1;
        }
        // Page blocks come first, streaming later.
        assert_eq!(blocks(&q).last(), Some(&(page_cap, true)));
        assert!(!q.streaming);
        while next < 3 * threshold {
            q.push_back(next);
            next += 1;
        }
        assert!(q.streaming);
        let page_block = (page_cap, true);
        let ordinary =
            |q: &ChunkedDeque<u64>| blocks(q).iter().filter(|&&b| b != page_block).count();
        // Blocks linked once it held STREAM_MIN_BYTES are page blocks.
        let linked = blocks(&q);
        let before = ordinary(&q);
        assert!(before > 0);
        assert!(linked[before..].iter().all(|&b| b == page_block));
        // Sliding by a whole window: drained blocks are reused, the ordinary
        // ones too (no more of them), and from then on nothing is allocated.
        for _ in 0..3 * threshold {
            assert_eq!(q.pop_front(), Some(front));
            front += 1;
            q.push_back(next);
            next += 1;
        }
        assert!(ordinary(&q) <= before);
        let heap = q.heap_bytes();
        for _ in 0..3 * threshold {
            assert_eq!(q.pop_front(), Some(front));
            front += 1;
            q.push_back(next);
            next += 1;
        }
        assert_eq!(q.heap_bytes(), heap);
        // Shrunk below the threshold, it stops streaming.
        while q.len() > 100 {
            assert_eq!(q.pop_front(), Some(front));
            front += 1;
        }
        for _ in 0..2 * page_cap {
            assert_eq!(q.pop_front(), Some(front));
            front += 1;
            q.push_back(next);
            next += 1;
        }
        assert!(!q.streaming);
        assert!(q.iter().copied().eq(front..next));
    }

    #[test]
    fn push_pop_across_many_blocks_matches_vecdeque() {
        let mut q = ChunkedDeque::new();
        let mut model = VecDeque::new();
        let mut next = 0u64;
        // Grow, shrink from both ends, grow again: crosses block boundaries
        // in both directions and reuses the spare.
        for round in 0..6 {
            for _ in 0..(700 + round * 300) {
                q.push_back(next);
                model.push_back(next);
                next += 1;
            }
            for i in 0..(500 + round * 200) {
                match i % 3 {
                    0 => assert_eq!(q.pop_back(), model.pop_back()),
                    1 => assert_eq!(q.pop_front(), model.pop_front()),
                    _ => assert_eq!(q.drop_front(), model.pop_front().is_some()),
                }
            }
            assert_eq!(q.len(), model.len());
            assert_eq!(q.front(), model.front());
            assert_eq!(q.back(), model.back());
            assert_eq!(q.front_mut(), model.front_mut());
            assert_eq!(q.back_mut(), model.back_mut());
            assert!(q.iter().eq(model.iter()));
        }
        while let Some(v) = model.pop_front() {
            assert_eq!(q.pop_front(), Some(v));
        }
        assert_eq!(q.pop_front(), None);
        assert_eq!(q.pop_back(), None);
        assert!(q.is_empty());
    }

    #[test]
    fn empty_deque_allocates_nothing_and_one_element_costs_a_small_block() {
        let mut q: ChunkedDeque<u64> = ChunkedDeque::new();
        assert_eq!(q.heap_bytes(), 0);
        q.push_back(7);
        assert_eq!(q.heap_bytes(), mem::size_of::<Block<u64>>() + MIN_BLOCK * 8);
        // A large element (a sketch) costs a block of two: its slot and
        // the end's.
        let mut sketches: ChunkedDeque<[u64; 512]> = ChunkedDeque::new();
        sketches.push_back([1; 512]);
        assert_eq!(
            sketches.heap_bytes(),
            mem::size_of::<Block<[u64; 512]>>() + 2 * 4096
        );
    }

    #[test]
    fn steady_sliding_reuses_blocks() {
        let mut q = ChunkedDeque::new();
        for i in 0..5000u32 {
            q.push_back(i);
        }
        for i in 5000..20_000u32 {
            q.push_back(i);
            q.pop_front();
        }
        let settled = q.heap_bytes();
        for i in 20_000..100_000u32 {
            q.push_back(i);
            q.pop_front();
            assert!(q.heap_bytes() <= settled);
        }
    }

    #[derive(Clone)]
    struct Tracked(Rc<Cell<i64>>);
    impl Tracked {
        fn new(live: &Rc<Cell<i64>>) -> Self {
            live.set(live.get() + 1);
            Tracked(live.clone())
        }
    }
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.set(self.0.get() - 1);
        }
    }

    #[test]
    fn drops_exactly_the_live_elements() {
        let live = Rc::new(Cell::new(0));
        {
            let mut q = ChunkedDeque::new();
            for _ in 0..1234 {
                q.push_back(Tracked::new(&live));
            }
            for _ in 0..300 {
                q.pop_front();
                q.pop_back();
            }
            assert_eq!(live.get(), 634);
            for _ in 0..100 {
                assert!(q.drop_front());
            }
            assert_eq!(live.get(), 534);
        }
        assert_eq!(live.get(), 0);
    }

    #[test]
    fn cursors_walk_both_directions_over_block_boundaries() {
        let mut q: ChunkedDeque<usize> = (0..100).collect();
        for _ in 0..10 {
            q.pop_front();
        }
        let mut c = q.cursor_front();
        for expected in 10..100 {
            assert_eq!(*q.get(&c), expected);
            q.step(&mut c);
        }
        assert_eq!(c, q.cursor_end());
        for expected in (10..100).rev() {
            q.step_back(&mut c);
            assert_eq!(*q.get(&c), expected);
        }
        let mut target = q.cursor_front();
        let mut source = target;
        q.step(&mut source);
        let (t, s) = q.get_pair_mut(&target, &source);
        *t += *s;
        assert_eq!(q.front(), Some(&21));
        q.step(&mut target);
        *q.get_mut(&target) = 0;
        assert_eq!(q.iter().nth(1), Some(&0));
    }

    /// Pushes, pops at both ends and walks cursors both ways over `T`s made
    /// from indices, against a `VecDeque`; then checks a clone.
    fn walk_and_compare<T: Clone + PartialEq + fmt::Debug>(make: impl Fn(usize) -> T) {
        let mut q = ChunkedDeque::new();
        let mut model = VecDeque::new();
        let mut next = 0;
        for round in 0..4 {
            for _ in 0..(300 + 200 * round) {
                q.push_back(make(next));
                model.push_back(make(next));
                next += 1;
            }
            for i in 0..(150 + 100 * round) {
                if i % 4 == 0 {
                    assert_eq!(q.pop_back(), model.pop_back());
                } else {
                    assert_eq!(q.pop_front(), model.pop_front());
                }
            }
            let mut c = q.cursor_front();
            for expected in &model {
                assert_eq!(q.get(&c), expected);
                q.step(&mut c);
            }
            assert!(c == q.cursor_end());
            for expected in model.iter().rev() {
                q.step_back(&mut c);
                assert_eq!(q.get(&c), expected);
            }
            assert!(c == q.cursor_front());
        }
        let copy = q.clone();
        assert!(copy.iter().eq(model.iter()));
        assert_eq!(copy.cursor_front().pos(), q.cursor_front().pos());
    }

    #[test]
    fn elements_of_odd_sizes_and_alignments_keep_headers_aligned() {
        // One byte: capacities in multiples of 8 (`CAP_UNIT`).
        walk_and_compare(|i| i as u8);
        walk_and_compare(|i| [i as u8; 3]);
        walk_and_compare(|i| i as u32);
        walk_and_compare(|i| (i as u64, i as u32));
        walk_and_compare(|i| i as u128);
        // Large: prefetched whole, never streaming, in blocks from two
        // elements up.
        walk_and_compare(|i| [i as u8; 300]);
        walk_and_compare(|i| [i as u64; 40]);
        walk_and_compare(|i| i.to_string());
    }

    #[test]
    fn zero_sized_elements() {
        let mut q = ChunkedDeque::new();
        for _ in 0..10_000 {
            q.push_back(());
        }
        assert_eq!(q.len(), 10_000);
        assert_eq!(q.pop_back(), Some(()));
        assert_eq!(q.pop_front(), Some(()));
        assert_eq!(q.len(), 9_998);
    }

    #[test]
    fn cursors_of_zero_sized_elements_tell_positions_apart() {
        let mut q = ChunkedDeque::new();
        for _ in 0..100 {
            q.push_back(());
        }
        for _ in 0..37 {
            q.pop_front();
        }
        let (front, end) = (q.cursor_front(), q.cursor_end());
        let mut c = front;
        let mut steps = 0;
        while c != end {
            assert_eq!(c.pos(), 37 + steps);
            assert_eq!(q.get(&c), &());
            q.step(&mut c);
            steps += 1;
        }
        assert_eq!(steps, q.len());
        for _ in 0..steps {
            q.step_back(&mut c);
        }
        assert!(c == front);
    }
}

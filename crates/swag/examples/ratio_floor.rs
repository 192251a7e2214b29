//! How close DABA Lite can come to Two-Stacks Lite on this machine: the
//! paper's static `sum` rounds (evict, insert, query, one sequentially
//! consistent fence) over four storages, side by side.
//!
//! - `ring`: a fixed power-of-two ring, cursors are plain positions. No block
//!   boundaries, so no storage can be cheaper: the algorithms' own floor.
//! - `chunked`: a linked list of fixed 8 KiB blocks, cursors are slot
//!   pointers, a step compares with its block's end computed without a load.
//!   The cheapest chunked deque: sliq's adds block sizes that follow the
//!   window, a header per block, streaming prefetch and worst-case bounds.
//! - `chunked, apart`: the same storage and algorithms with the operations
//!   apart and each ready for an empty window, as `FifoAggregator` has
//!   them: what any implementation of the trait on a chunked deque pays.
//! - `block map`: fixed 8 KiB blocks found through a ring of block
//!   addresses, as C++'s `std::deque` finds them; cursors are positions, so
//!   a step is an addition and an access a load of its block's address.
//! - `block map, apart`: the same with the operations apart (as above).
//! - `sliq`: `DabaLite` and `TwoStacksLite` of this crate.
//!
//! DABA Lite steps four or five cursors per round where Two-Stacks Lite
//! steps two; each step past a block end is a comparison and a branch a ring
//! does not have. On linked blocks the `chunked` ratio is therefore about
//! the smallest this machine gives, and the `chunked, apart` ratio the
//! smallest behind the `FifoAggregator` trait: with its operations apart
//! and ready for an empty window, DABA Lite lost 14-18 % of its speed on the
//! machine of 2026-12-04, Two-Stacks Lite 8 % or nothing. A block map has
//! no test in a step: behind the trait, DABA Lite on it ran at 1.22-1.37×
//! Two-Stacks Lite's time on 2026-12-05 (Two-Stacks Lite pays a map load
//! per access too). What keeps sliq on linked blocks is that a map's blocks
//! share one size, so a one-value window would hold a whole block, and that
//! the map must grow without an O(n) copy (see `docs/performance-log.md`).
//! Since sliq's cursors stopped reading block headers on forward steps
//! (eleventh session of 2026-12-05), its DABA Lite has run at 0.92-0.97x
//! the cheapest chunked deque's behind the trait without the fence, and
//! with it at 0.94-0.97x the ring's, the algorithm's own floor.
//!
//! `cargo run --release -p sliq-swag --example ratio_floor [-- WINDOW [BURSTS] [--no-fence]]`

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::time::Instant;

use sliq_swag::{DabaLite, FifoAggregator, TwoStacksLite, monoids::Sum};

/// Rounds per timed burst.
const ROUNDS: u64 = 2_000_000;

/// The storage operations the two algorithms need, over `u64` values.
trait Storage {
    type Cursor: Copy + PartialEq;
    fn front(&self) -> Self::Cursor;
    fn end(&self) -> Self::Cursor;
    fn step(&self, c: &mut Self::Cursor);
    fn step_back(&self, c: &mut Self::Cursor);
    fn get(&self, c: Self::Cursor) -> u64;
    fn add_to(&mut self, c: Self::Cursor, v: u64);
    fn push_back(&mut self, v: u64);
    fn pop_front(&mut self);
    fn is_empty(&self) -> bool {
        self.front() == self.end()
    }
}

/// The live positions `[front, end)` of a [`Positional`] storage.
#[derive(Default)]
struct Span {
    front: usize,
    end: usize,
}

/// A storage whose cursors are positions that grow forever: a step is an
/// addition, never a test, and an access finds its slot by position. Every
/// position in `[front, end]` has a slot.
trait Positional {
    fn span(&self) -> &Span;
    fn span_mut(&mut self) -> &mut Span;
    fn slot(&self, c: usize) -> *mut u64;
    /// After `end` moved one position forward.
    fn end_moved(&mut self) {}
    /// After `front` moved one position forward.
    fn front_moved(&mut self) {}
}

impl<P: Positional> Storage for P {
    type Cursor = usize;
    fn front(&self) -> usize {
        self.span().front
    }
    fn end(&self) -> usize {
        self.span().end
    }
    #[inline(always)]
    fn step(&self, c: &mut usize) {
        *c += 1;
    }
    #[inline(always)]
    fn step_back(&self, c: &mut usize) {
        *c -= 1;
    }
    #[inline(always)]
    fn get(&self, c: usize) -> u64 {
        // SAFETY: the algorithms read only positions in `[front, end)`.
        unsafe { *self.slot(c) }
    }
    #[inline(always)]
    fn add_to(&mut self, c: usize, v: u64) {
        let slot = self.slot(c);
        // SAFETY: as in `get`.
        unsafe { *slot = (*slot).wrapping_add(v) }
    }
    #[inline(always)]
    fn push_back(&mut self, v: u64) {
        // SAFETY: `end` has a slot (invariant).
        unsafe { *self.slot(self.end()) = v };
        self.span_mut().end += 1;
        self.end_moved();
    }
    #[inline(always)]
    fn pop_front(&mut self) {
        self.span_mut().front += 1;
        self.front_moved();
    }
}

/// A ring of `RING` slots; positions are masked.
struct Ring {
    slots: Box<[u64; RING]>,
    span: Span,
}

const RING: usize = 1 << 16;

impl Positional for Ring {
    fn span(&self) -> &Span {
        &self.span
    }
    fn span_mut(&mut self) -> &mut Span {
        &mut self.span
    }
    #[inline(always)]
    fn slot(&self, c: usize) -> *mut u64 {
        self.slots.as_ptr().cast_mut().wrapping_add(c & (RING - 1))
    }
}

/// Slots per block of [`Chunked`].
const BLOCK: usize = 1024;

struct Block {
    slots: [u64; BLOCK],
    prev: *mut Block,
    next: *mut Block,
}

/// A slot pointer and its block.
#[derive(Clone, Copy)]
struct SlotCursor {
    slot: *mut u64,
    block: *mut Block,
}

impl PartialEq for SlotCursor {
    /// Live slots are distinct: the slot alone tells cursors apart.
    fn eq(&self, other: &Self) -> bool {
        self.slot == other.slot
    }
}

/// Linked fixed-size blocks, one kept spare. Invariant: every cursor handed
/// out points into a live block, at a slot or at the end of its last slot
/// only for `end` while a push links the next block.
struct Chunked {
    front: SlotCursor,
    end: SlotCursor,
    spare: *mut Block,
}

impl Chunked {
    fn new() -> Self {
        let block = Self::block();
        let at = SlotCursor {
            slot: Self::first(block),
            block,
        };
        Chunked {
            front: at,
            end: at,
            spare: std::ptr::null_mut(),
        }
    }

    fn block() -> *mut Block {
        Box::into_raw(Box::new(Block {
            slots: [0; BLOCK],
            prev: std::ptr::null_mut(),
            next: std::ptr::null_mut(),
        }))
    }

    /// The first slot of `block` (no load: an address computation).
    #[inline(always)]
    fn first(block: *mut Block) -> *mut u64 {
        // SAFETY: `block` is live; only the field's address is taken.
        unsafe { std::ptr::addr_of_mut!((*block).slots).cast() }
    }

    /// One past the last slot of `block`.
    #[inline(always)]
    fn limit(block: *mut Block) -> *mut u64 {
        Self::first(block).wrapping_add(BLOCK)
    }

    #[cold]
    #[inline(never)]
    fn link_after_end(&mut self) {
        let block = match std::mem::replace(&mut self.spare, std::ptr::null_mut()) {
            spare if !spare.is_null() => spare,
            _ => Self::block(),
        };
        // SAFETY: both blocks are live and owned by this deque.
        unsafe {
            (*block).prev = self.end.block;
            (*block).next = std::ptr::null_mut();
            (*self.end.block).next = block;
        }
        self.end = SlotCursor {
            slot: Self::first(block),
            block,
        };
    }

    #[cold]
    #[inline(never)]
    fn unlink_front(&mut self) {
        let drained = self.front.block;
        // SAFETY: the front passed the end of its block, so `end` is in a
        // later, linked block; the drained block is owned and unlinked.
        unsafe {
            let next = (*drained).next;
            (*next).prev = std::ptr::null_mut();
            if self.spare.is_null() {
                self.spare = drained;
            } else {
                drop(Box::from_raw(drained));
            }
            self.front = SlotCursor {
                slot: Self::first(next),
                block: next,
            };
        }
    }
}

impl Storage for Chunked {
    type Cursor = SlotCursor;
    fn front(&self) -> SlotCursor {
        self.front
    }
    fn end(&self) -> SlotCursor {
        self.end
    }
    #[inline(always)]
    fn step(&self, c: &mut SlotCursor) {
        c.slot = c.slot.wrapping_add(1);
        if c.slot == Self::limit(c.block) {
            // SAFETY: a cursor below `end` has a linked successor block.
            c.block = unsafe { (*c.block).next };
            c.slot = Self::first(c.block);
        }
    }
    #[inline(always)]
    fn step_back(&self, c: &mut SlotCursor) {
        if c.slot == Self::first(c.block) {
            // SAFETY: a cursor above `front` has a linked predecessor block.
            c.block = unsafe { (*c.block).prev };
            c.slot = Self::limit(c.block);
        }
        c.slot = c.slot.wrapping_sub(1);
    }
    #[inline(always)]
    fn get(&self, c: SlotCursor) -> u64 {
        // SAFETY: the algorithms read only slots in `[front, end)`.
        unsafe { *c.slot }
    }
    #[inline(always)]
    fn add_to(&mut self, c: SlotCursor, v: u64) {
        // SAFETY: as in `get`.
        unsafe { *c.slot = (*c.slot).wrapping_add(v) }
    }
    #[inline(always)]
    fn push_back(&mut self, v: u64) {
        // SAFETY: `end` is a slot of the tail block (invariant).
        unsafe { *self.end.slot = v };
        self.end.slot = self.end.slot.wrapping_add(1);
        if self.end.slot == Self::limit(self.end.block) {
            self.link_after_end();
        }
    }
    #[inline(always)]
    fn pop_front(&mut self) {
        self.front.slot = self.front.slot.wrapping_add(1);
        if self.front.slot == Self::limit(self.front.block) {
            self.unlink_front();
        }
    }
}

impl Drop for Chunked {
    fn drop(&mut self) {
        let mut block = self.front.block;
        while !block.is_null() {
            // SAFETY: the linked blocks and the spare are owned and live.
            let next = unsafe { (*block).next };
            drop(unsafe { Box::from_raw(block) });
            block = next;
        }
        if !self.spare.is_null() {
            drop(unsafe { Box::from_raw(self.spare) });
        }
    }
}

/// Fixed blocks of [`BLOCK`] slots found through a ring of block addresses
/// (the layout of C++'s `std::deque`). Cursors are positions that grow
/// forever, so a step is an addition with no block-end test; each access
/// pays a load of its block's address instead. The map holds up to
/// [`MAP`] blocks and never grows: enough for the windows measured here.
struct BlockMap {
    map: Box<[*mut u64; MAP]>,
    span: Span,
    spare: *mut u64,
}

/// Block addresses the map of [`BlockMap`] holds.
const MAP: usize = 64;

impl BlockMap {
    fn new() -> Self {
        let mut map = Box::new([std::ptr::null_mut(); MAP]);
        map[0] = Self::block();
        BlockMap {
            map,
            span: Span::default(),
            spare: std::ptr::null_mut(),
        }
    }

    fn block() -> *mut u64 {
        Box::into_raw(Box::new([0u64; BLOCK])).cast()
    }
}

impl Positional for BlockMap {
    fn span(&self) -> &Span {
        &self.span
    }
    fn span_mut(&mut self) -> &mut Span {
        &mut self.span
    }
    #[inline(always)]
    fn slot(&self, c: usize) -> *mut u64 {
        self.map[(c / BLOCK) % MAP].wrapping_add(c % BLOCK)
    }
    /// Maps a block when `end` enters an unmapped one.
    #[inline(always)]
    fn end_moved(&mut self) {
        if self.span.end.is_multiple_of(BLOCK) {
            self.map_end_block();
        }
    }
    /// Unmaps the block `front` left, if it left one.
    #[inline(always)]
    fn front_moved(&mut self) {
        if self.span.front.is_multiple_of(BLOCK) {
            self.unmap_front_block();
        }
    }
}

impl BlockMap {
    #[cold]
    #[inline(never)]
    fn map_end_block(&mut self) {
        let Span { front, end } = self.span;
        assert!(end - front < (MAP - 1) * BLOCK, "the map is full");
        let block = match std::mem::replace(&mut self.spare, std::ptr::null_mut()) {
            spare if !spare.is_null() => spare,
            _ => Self::block(),
        };
        self.map[(end / BLOCK) % MAP] = block;
    }

    #[cold]
    #[inline(never)]
    fn unmap_front_block(&mut self) {
        let drained = std::mem::replace(
            &mut self.map[(self.span.front / BLOCK + MAP - 1) % MAP],
            std::ptr::null_mut(),
        );
        match self.spare.is_null() {
            true => self.spare = drained,
            // SAFETY: `drained` came from `Self::block` and is unmapped.
            false => drop(unsafe { Box::from_raw(drained.cast::<[u64; BLOCK]>()) }),
        }
    }
}

impl Drop for BlockMap {
    fn drop(&mut self) {
        for block in self.map.iter().copied().chain([self.spare]) {
            if !block.is_null() {
                // SAFETY: every mapped block and the spare came from
                // `Self::block` and are owned here.
                drop(unsafe { Box::from_raw(block.cast::<[u64; BLOCK]>()) });
            }
        }
    }
}

/// The query of both algorithms: `*F ⊗ aggB`, or `aggB` alone when the
/// front list `[F, B)` is empty.
#[inline(always)]
fn query<S: Storage>(storage: &S, b: S::Cursor, agg_b: u64) -> u64 {
    let front = storage.front();
    match front == b {
        true => agg_b,
        false => storage.get(front).wrapping_add(agg_b),
    }
}

/// DABA Lite for wrapping `u64` sums over `S` (see `sliq_swag::DabaLite`):
/// `L = R` is tested as `L = A`, which the size invariant makes equivalent.
struct Lite<S: Storage> {
    storage: S,
    l: S::Cursor,
    a: S::Cursor,
    b: S::Cursor,
    agg_ra: u64,
    agg_b: u64,
}

impl<S: Storage> Lite<S> {
    fn new(mut storage: S, n: u64) -> Self {
        storage.push_back(0);
        let end = storage.end();
        let mut w = Lite {
            storage,
            l: end,
            a: end,
            b: end,
            agg_ra: 0,
            agg_b: 0,
        };
        for v in 1..n {
            w.insert(v);
        }
        w
    }

    #[inline(always)]
    fn fixup(&mut self) {
        if self.l == self.b {
            self.l = self.storage.front();
            self.a = self.storage.end();
            self.b = self.a;
            self.agg_ra = std::mem::take(&mut self.agg_b);
        }
        if self.l == self.a {
            self.storage.step(&mut self.a);
            self.l = self.a;
        } else {
            self.storage.add_to(self.l, self.agg_ra);
            self.storage.step(&mut self.l);
            let top = self.a;
            self.storage.step_back(&mut self.a);
            if top != self.b {
                let v = self.storage.get(top);
                self.storage.add_to(self.a, v);
            }
        }
    }

    #[inline(always)]
    fn insert(&mut self, v: u64) {
        self.agg_b = self.agg_b.wrapping_add(v);
        self.storage.push_back(v);
        self.fixup();
    }

    #[inline(always)]
    fn round(&mut self, v: u64) -> u64 {
        self.storage.pop_front();
        self.fixup();
        self.insert(v);
        query(&self.storage, self.b, self.agg_b)
    }
}

/// The operations as `FifoAggregator` has them: apart, and each ready for
/// an empty window (the fused `round` above may skip those checks).
impl<S: Storage> Lite<S> {
    #[inline(always)]
    fn evict_checked(&mut self) -> bool {
        if self.storage.is_empty() {
            return false;
        }
        self.storage.pop_front();
        // An emptied window has its pointers at the end already.
        if !self.storage.is_empty() {
            self.fixup();
        }
        true
    }

    #[inline(always)]
    fn insert_checked(&mut self, v: u64) {
        if !self.storage.is_empty() {
            return self.insert(v);
        }
        // The first value is its own front aggregate: every pointer at the end.
        self.storage.push_back(v);
        let end = self.storage.end();
        (self.l, self.a, self.b) = (end, end, end);
    }

    #[inline(always)]
    fn query(&self) -> u64 {
        query(&self.storage, self.b, self.agg_b)
    }
}

/// Two-Stacks Lite for wrapping `u64` sums over `S`.
struct StacksLite<S: Storage> {
    storage: S,
    b: S::Cursor,
    agg_b: u64,
}

impl<S: Storage> StacksLite<S> {
    fn new(storage: S, n: u64) -> Self {
        let b = storage.front();
        let mut w = StacksLite {
            storage,
            b,
            agg_b: 0,
        };
        for v in 0..n {
            w.agg_b = w.agg_b.wrapping_add(v);
            w.storage.push_back(v);
        }
        w
    }

    #[inline(never)]
    fn flip(&mut self) {
        let front = self.storage.front();
        let mut younger = self.storage.end();
        self.storage.step_back(&mut younger);
        while younger != front {
            let mut older = younger;
            self.storage.step_back(&mut older);
            let v = self.storage.get(younger);
            self.storage.add_to(older, v);
            younger = older;
        }
        self.b = self.storage.end();
        self.agg_b = 0;
    }

    #[inline(always)]
    fn round(&mut self, v: u64) -> u64 {
        if self.storage.front() == self.b {
            self.flip();
        }
        self.storage.pop_front();
        self.agg_b = self.agg_b.wrapping_add(v);
        self.storage.push_back(v);
        query(&self.storage, self.b, self.agg_b)
    }
}

/// The operations as `FifoAggregator` has them (see `Lite`'s).
impl<S: Storage> StacksLite<S> {
    #[inline(always)]
    fn evict_checked(&mut self) -> bool {
        if self.storage.is_empty() {
            return false;
        }
        if self.storage.front() == self.b {
            self.flip();
        }
        self.storage.pop_front();
        true
    }

    #[inline(always)]
    fn insert_checked(&mut self, v: u64) {
        let first = self.storage.is_empty();
        self.agg_b = self.agg_b.wrapping_add(v);
        self.storage.push_back(v);
        if first {
            self.b = self.storage.front();
        }
    }

    #[inline(always)]
    fn query(&self) -> u64 {
        query(&self.storage, self.b, self.agg_b)
    }
}

/// Whether each round ends with the fence (`--no-fence` turns it off).
static FENCED: AtomicBool = AtomicBool::new(true);

/// Times `ROUNDS` rounds of `round`, one fence each unless `--no-fence`;
/// seconds.
#[inline(always)]
fn burst(mut round: impl FnMut(u64) -> u64) -> f64 {
    let fenced = FENCED.load(Ordering::Relaxed);
    let start = Instant::now();
    let mut sum = 0u64;
    for v in 0..ROUNDS {
        sum = sum.wrapping_add(round(v));
        if fenced {
            fence(Ordering::SeqCst);
        }
    }
    black_box(sum);
    start.elapsed().as_secs_f64()
}

#[inline(never)]
fn lite_burst<S: Storage>(w: &mut Lite<S>) -> f64 {
    burst(|v| w.round(v))
}

#[inline(never)]
fn stacks_burst<S: Storage>(w: &mut StacksLite<S>) -> f64 {
    burst(|v| w.round(v))
}

#[inline(never)]
fn lite_apart_burst<S: Storage>(w: &mut Lite<S>) -> f64 {
    burst(|v| {
        w.evict_checked();
        w.insert_checked(v);
        w.query()
    })
}

#[inline(never)]
fn stacks_apart_burst<S: Storage>(w: &mut StacksLite<S>) -> f64 {
    burst(|v| {
        w.evict_checked();
        w.insert_checked(v);
        w.query()
    })
}

#[inline(never)]
fn sliq_burst<W: FifoAggregator<Sum<u64>>>(w: &mut W) -> f64 {
    burst(|v| {
        w.evict();
        w.insert(v);
        w.query()
    })
}

fn main() {
    let (flags, numbers): (Vec<String>, Vec<String>) =
        std::env::args().skip(1).partition(|a| a.starts_with("--"));
    let fenced = !flags.iter().any(|f| f == "--no-fence");
    FENCED.store(fenced, Ordering::Relaxed);
    let mut args = numbers.iter().map(|a| a.parse::<u64>());
    let n = args.next().and_then(Result::ok).unwrap_or(1024).max(2);
    let bursts = args.next().and_then(Result::ok).unwrap_or(30).max(1);
    let largest = (RING / 2).min((MAP - 2) * BLOCK) as u64;
    assert!(n < largest, "the storages hold windows below {largest}");

    let mut ring_dl = Lite::new(
        Ring {
            slots: Box::new([0; RING]),
            span: Span::default(),
        },
        n,
    );
    let mut ring_tsl = StacksLite::new(
        Ring {
            slots: Box::new([0; RING]),
            span: Span::default(),
        },
        n,
    );
    let mut chunked_dl = Lite::new(Chunked::new(), n);
    let mut chunked_tsl = StacksLite::new(Chunked::new(), n);
    let mut apart_dl = Lite::new(Chunked::new(), n);
    let mut apart_tsl = StacksLite::new(Chunked::new(), n);
    let mut map_dl = Lite::new(BlockMap::new(), n);
    let mut map_tsl = StacksLite::new(BlockMap::new(), n);
    let mut map_apart_dl = Lite::new(BlockMap::new(), n);
    let mut map_apart_tsl = StacksLite::new(BlockMap::new(), n);
    let mut sliq_dl = DabaLite::new(Sum::<u64>::default());
    let mut sliq_tsl = TwoStacksLite::new(Sum::<u64>::default());
    for v in 0..n {
        sliq_dl.insert(v);
        sliq_tsl.insert(v);
    }

    // Best of alternating bursts: the machine's noise only ever slows one.
    let mut best = [f64::MAX; 12];
    for _ in 0..bursts {
        let times = [
            lite_burst(&mut ring_dl),
            stacks_burst(&mut ring_tsl),
            lite_burst(&mut chunked_dl),
            stacks_burst(&mut chunked_tsl),
            lite_apart_burst(&mut apart_dl),
            stacks_apart_burst(&mut apart_tsl),
            lite_burst(&mut map_dl),
            stacks_burst(&mut map_tsl),
            lite_apart_burst(&mut map_apart_dl),
            stacks_apart_burst(&mut map_apart_tsl),
            sliq_burst(&mut sliq_dl),
            sliq_burst(&mut sliq_tsl),
        ];
        for (b, t) in best.iter_mut().zip(times) {
            *b = b.min(t);
        }
    }
    let rate = |seconds: f64| ROUNDS as f64 / seconds / 1e6;
    let fence_note = if fenced {
        "one SeqCst fence each"
    } else {
        "no fence"
    };
    println!("static sum, n = {n}, best of {bursts} bursts of {ROUNDS} rounds ({fence_note})");
    println!(
        "{:<16} {:>16} {:>16} {:>8}",
        "storage", "DABA Lite M/s", "TS Lite M/s", "ratio"
    );
    let names = [
        "ring",
        "chunked",
        "chunked, apart",
        "block map",
        "block map, apart",
        "sliq",
    ];
    for (name, pair) in names.iter().zip(best.chunks(2)) {
        println!(
            "{name:<16} {:>16.1} {:>16.1} {:>8.2}",
            rate(pair[0]),
            rate(pair[1]),
            pair[0] / pair[1]
        );
    }
}

//! The frame pass: for each row of a batch, how many of its key's oldest
//! rows leave the window (and, for a frame ending before the current row,
//! how many waiting rows enter it), and whether the row is late — computed
//! once per window group and shared by all its aggregates — and the order in
//! which the group's windows visit the rows.

use std::sync::Arc;

use arrow_array::{ArrayRef, UInt32Array};
use arrow_schema::ArrowError;
use sliq_sql::Frame;
use sliq_swag::{ChunkedDeque, SplitDeque};

use crate::operator::{PREFETCH_SLOTS, PREFETCH_STRUCT};

/// Rows are visited key by key only for frames whose windows keep at least
/// this many bytes of partial aggregates per row. Grouping costs about 3 ns
/// a row (a counting sort, arguments and results reordered) and saves cache
/// misses on a key's window state, more the larger it is: a single
/// aggregate of 8 bytes lost by it (engine bench, 1,000 keys, five
/// alternating runs: `max` over ROWS 999 24.9 against 23.4 M rows/s,
/// `count(v)` 30.1 against 26.5, `max` over RANGE '10s' 15.7 against 14.2)
/// and one of 16 or more gained (`sum` 14.4 against 18.3, `avg` 14.7 against
/// 18.3), as do groups, whose replays of their value operations gain far
/// more: 4 aggregates over ROWS 999 went from 7.0 to 10.1 M rows/s.
pub(crate) const GROUP_MIN_BYTES: usize = 16;

/// Batches of at least this many rows may be visited key by key.
const GROUP_MIN_ROWS: usize = 256;

/// Windows are visited key by key only with at least this many keys: a
/// few keys' windows stay in cache whatever the order.
const GROUP_MIN_KEYS: usize = 16;

/// The per-row outputs of the frame pass that [`FrameState::advance`]
/// fills (see [`FramePass`]).
struct FrameOut<'a> {
    evictions: &'a mut Vec<u32>,
    admissions: &'a mut Vec<u32>,
    lengths: &'a mut Vec<u64>,
    count_rows: bool,
    late: &'a mut Vec<bool>,
    late_count: &'a mut usize,
    untimed_count: &'a mut usize,
}

/// Per-row outcome of the frame pass, in the order in which the group's
/// windows visit the batch's rows (see [`FramePass::batch_row`]).
///
/// When several aggregates keep windows over the frame and each key has a
/// few rows in a batch on average, the windows visit the rows grouped by
/// key (a stable counting sort), so that a key's window serves several rows
/// in a row while its cache lines are at hand, instead of one row every few
/// hundred. The operators then see the batch in that order: the arguments
/// through [`FramePass::in_visit_order`], the keys as [`FramePass::keys`];
/// their results go back into batch order through
/// [`FramePass::in_batch_order`]. Keeping each key's rows in batch order is
/// all the windows' semantics need, as keys are independent.
pub struct FramePass {
    /// Bytes of partial aggregates per row that the aggregates keeping
    /// windows over this frame store (rather than only count its rows).
    window_bytes: usize,
    /// Whether the rows are visited grouped by key rather than in batch
    /// order (when nothing needs to be reordered).
    grouped: bool,
    /// When `grouped`, the batch row visited `i`-th (a permutation of
    /// `0..rows`).
    order: UInt32Array,
    /// When `grouped`, where each batch row is in `order`.
    positions: UInt32Array,
    /// Scratch for grouping: each key's next slot in `order`.
    key_slots: Vec<u32>,
    /// The key of each row visited.
    pub keys: Vec<u32>,
    /// Rows to evict from the key's window after inserting this row; for
    /// an unbounded frame, which evicts nothing, non-zero when the key
    /// starts afresh (`key_ttl`) and its running total with it.
    ///
    /// For a frame ending before the current row, a key's rows are its
    /// window's and then the rows waiting to enter it, oldest first: the
    /// row goes in last, the `admissions` oldest waiting rows enter the
    /// window, and then the `evictions` oldest rows leave (the window's, and
    /// the waiting ones only when the key starts afresh).
    pub evictions: Vec<u32>,
    /// Waiting rows that enter the key's window at this row (frames ending
    /// before the current row only; empty otherwise). Never non-zero on a
    /// row whose key starts afresh: only that row is left waiting then.
    pub admissions: Vec<u32>,
    /// Rows in the key's window once this row is in (0 for a late row):
    /// `count(*)` over the frame. Filled only when `count_rows` is set.
    pub lengths: Vec<u64>,
    /// Whether some aggregate counts the frame's rows (set once, when the
    /// query is compiled).
    count_rows: bool,
    /// The row is late (or has no event time) and enters no window.
    pub late: Vec<bool>,
    /// Number of late rows in the batch.
    pub late_count: usize,
    /// How many of them have no event time (NULL).
    pub untimed_count: usize,
}

impl FramePass {
    /// An empty pass; `count_rows` when some aggregate counts the frame's
    /// rows; the windowed aggregates keep `window_bytes` bytes per row.
    pub fn new(count_rows: bool, window_bytes: usize) -> Self {
        FramePass {
            window_bytes,
            grouped: false,
            order: UInt32Array::from(Vec::<u32>::new()),
            positions: UInt32Array::from(Vec::<u32>::new()),
            key_slots: Vec::new(),
            keys: Vec::new(),
            evictions: Vec::new(),
            admissions: Vec::new(),
            lengths: Vec::new(),
            count_rows,
            late: Vec::new(),
            late_count: 0,
            untimed_count: 0,
        }
    }

    /// Sets the visiting order for a batch with `key_ids` out of `keys`
    /// keys: grouped by key when the frame's windows keep
    /// [`GROUP_MIN_BYTES`] per row, the batch [`GROUP_MIN_ROWS`] rows, and the keys
    /// are at least [`GROUP_MIN_KEYS`] and at most half the batch's rows (a
    /// few rows per key on average; a count per key costs no more than the
    /// batch); in batch order otherwise.
    fn set_order(&mut self, key_ids: &[u32], keys: usize) {
        let rows = key_ids.len();
        self.keys.clear();
        self.grouped = self.window_bytes >= GROUP_MIN_BYTES
            && rows >= GROUP_MIN_ROWS
            && (GROUP_MIN_KEYS..=rows / 2).contains(&keys);
        if !self.grouped {
            self.keys.extend_from_slice(key_ids);
            return;
        }
        // Each key's first slot: the rows of the keys before it.
        let slots = &mut self.key_slots;
        slots.clear();
        slots.resize(keys, 0);
        for &key in key_ids {
            slots[key as usize] += 1;
        }
        let mut start = 0;
        for slot in slots.iter_mut() {
            let count = *slot;
            *slot = start;
            start += count;
        }
        debug_assert_eq!(start as usize, rows);
        let mut order = vec![0; rows];
        let mut positions = Vec::with_capacity(rows);
        self.keys.resize(rows, 0);
        // A batch's rows are counted in u32 throughout the engine.
        for (row, &key) in (0..rows as u32).zip(key_ids) {
            let slot = &mut slots[key as usize];
            order[*slot as usize] = row;
            self.keys[*slot as usize] = key;
            positions.push(*slot);
            *slot += 1;
        }
        self.order = UInt32Array::from(order);
        self.positions = UInt32Array::from(positions);
    }

    /// Whether this batch's rows are visited grouped by key (otherwise in
    /// batch order, and nothing needs reordering).
    pub fn is_grouped(&self) -> bool {
        self.grouped
    }

    /// The batch row of the row visited `i`-th.
    pub fn batch_row(&self, i: usize) -> usize {
        match self.grouped {
            true => self.order.values().get(i).map_or(i, |&row| row as usize),
            false => i,
        }
    }

    /// When the batch row `row` is visited.
    pub fn visit_index(&self, row: usize) -> usize {
        match self.grouped {
            true => self
                .positions
                .values()
                .get(row)
                .map_or(row, |&i| i as usize),
            false => row,
        }
    }

    /// `array`, one value per batch row, in visiting order.
    pub fn in_visit_order(&self, array: &ArrayRef) -> Result<ArrayRef, ArrowError> {
        if !self.grouped {
            return Ok(Arc::clone(array));
        }
        arrow_select::take::take(array, &self.order, None)
    }

    /// `results`, one per row in visiting order, in batch order.
    pub fn in_batch_order(&self, results: ArrayRef) -> Result<ArrayRef, ArrowError> {
        if !self.grouped {
            return Ok(results);
        }
        arrow_select::take::take(&results, &self.positions, None)
    }
}

/// Per-key frame state of a window group.
pub enum FrameState {
    /// `ROWS BETWEEN n PRECEDING AND k PRECEDING` (`k = waiting`, 0 for
    /// the current row; `n = u64::MAX` for `UNBOUNDED PRECEDING`): rows
    /// held per key (at most n + 1), of which the latest `k` wait outside
    /// the window.
    Rows {
        preceding: u64,
        waiting: u64,
        held: Vec<u64>,
    },
    /// `RANGE d PRECEDING`: the event times held per key.
    Range {
        width: i64,
        times: Vec<ChunkedDeque<i64>>,
    },
    /// `RANGE BETWEEN start PRECEDING AND end PRECEDING` (`start` is
    /// `None` for `UNBOUNDED PRECEDING`): per key, the event times in the
    /// window (`≥ t − start`) and those waiting to enter it (`> t − end`),
    /// where `t` is the key's newest.
    RangeBefore {
        start: Option<i64>,
        end: i64,
        times: Vec<TimesBefore>,
    },
}

/// A row that arrived below its key's newest event time.
pub struct Late {
    /// Index in the batch.
    pub row: usize,
    /// Its event time; `None` when it is NULL.
    pub event_time: Option<i64>,
    /// The key's newest event time, if it has any.
    pub newest: Option<i64>,
}

impl FrameState {
    /// Empty state for `frame`.
    pub fn new(frame: Frame) -> Self {
        let rows = |preceding, waiting| FrameState::Rows {
            preceding,
            waiting,
            held: Vec::new(),
        };
        match frame {
            Frame::Rows(n) => rows(n, 0),
            Frame::RowsBefore { start, end } => rows(start, end),
            Frame::Range(ms) => FrameState::Range {
                width: ms,
                times: Vec::new(),
            },
            Frame::RangeBefore { start, end } => FrameState::RangeBefore {
                start: Some(start),
                end,
                times: Vec::new(),
            },
            Frame::UnboundedBeforeTime(end) => FrameState::RangeBefore {
                start: None,
                end,
                times: Vec::new(),
            },
            // No row leaves by age; a key that starts afresh evicts its
            // rows so far (at least one), which restarts a running total.
            Frame::Unbounded => rows(u64::MAX, 0),
            Frame::UnboundedBefore(end) => rows(u64::MAX, end),
        }
    }

    fn grow(&mut self, keys: usize) {
        match self {
            FrameState::Rows { held, .. } => held.resize(keys.max(held.len()), 0),
            FrameState::Range { times, .. } => {
                times.resize_with(keys.max(times.len()), ChunkedDeque::new)
            }
            FrameState::RangeBefore { times, .. } => {
                times.resize_with(keys.max(times.len()), Default::default)
            }
        }
    }

    /// Forgets key `key`'s rows: its next row starts an empty frame.
    pub fn forget(&mut self, key: u32) {
        let key = key as usize;
        match self {
            FrameState::Rows { held, .. } => {
                if let Some(h) = held.get_mut(key) {
                    *h = 0;
                }
            }
            FrameState::Range { times, .. } => {
                if let Some(t) = times.get_mut(key) {
                    *t = ChunkedDeque::new();
                }
            }
            FrameState::RangeBefore { times, .. } => {
                if let Some(t) = times.get_mut(key) {
                    *t = Default::default();
                }
            }
        }
    }

    /// Key `key`'s newest event time, if it holds a row (RANGE frames).
    fn newest(&self, key: u32) -> Option<i64> {
        match self {
            FrameState::Range { times, .. } => times.get(key as usize)?.back().copied(),
            FrameState::RangeBefore { times, .. } => times.get(key as usize)?.newest,
            FrameState::Rows { .. } => None,
        }
    }

    /// Late rows of a batch, without changing any state (for `on_late =
    /// 'error'`). Only RANGE frames have late rows; a row whose key restarts
    /// (`restarts`, as [`FrameState::advance`] takes them) is not late.
    pub fn find_late(
        &self,
        key_ids: &[u32],
        times: Option<&[Option<i64>]>,
        restarts: Option<&[bool]>,
    ) -> Vec<Late> {
        let Some(event_times) = times.filter(|_| {
            matches!(
                self,
                FrameState::Range { .. } | FrameState::RangeBefore { .. }
            )
        }) else {
            return Vec::new();
        };
        let mut newest: hashbrown::HashMap<u32, i64> = hashbrown::HashMap::new();
        let mut late = Vec::new();
        for (row, (&key, t)) in key_ids.iter().zip(event_times).enumerate() {
            let restarts = t.is_some() && restarts.is_some_and(|r| r[row]);
            let known = match restarts {
                true => None,
                false => newest.get(&key).copied().or_else(|| self.newest(key)),
            };
            match (t, known) {
                (Some(t), Some(n)) if *t < n => late.push(Late {
                    row,
                    event_time: Some(*t),
                    newest: Some(n),
                }),
                (Some(t), _) => {
                    newest.insert(key, *t);
                }
                (None, _) => late.push(Late {
                    row,
                    event_time: None,
                    newest: known,
                }),
            }
        }
        late
    }

    /// Advances the frames by one batch. `times` holds each row's event time
    /// (RANGE frames only). `restarts`, in batch order, marks the rows whose
    /// key starts afresh (`key_ttl`): its earlier rows leave the frame as
    /// the row comes in (they are its evictions; for an unbounded frame, a
    /// non-zero eviction count means the running total starts over).
    pub fn advance(
        &mut self,
        key_ids: &[u32],
        keys: usize,
        times: Option<&[Option<i64>]>,
        restarts: Option<&[bool]>,
        out: &mut FramePass,
    ) {
        self.grow(keys);
        out.set_order(key_ids, keys);
        out.evictions.clear();
        out.admissions.clear();
        out.lengths.clear();
        out.late.clear();
        out.late_count = 0;
        out.untimed_count = 0;
        let order: &[u32] = match out.grouped {
            true => out.order.values(),
            false => &[],
        };
        let visit_keys = &out.keys;
        let out = FrameOut {
            evictions: &mut out.evictions,
            admissions: &mut out.admissions,
            lengths: &mut out.lengths,
            count_rows: out.count_rows,
            late: &mut out.late,
            late_count: &mut out.late_count,
            untimed_count: &mut out.untimed_count,
        };
        // Two copies of the loops: without `key_ttl` they test nothing more
        // per row than before it.
        match restarts {
            None => self.visit(visit_keys, order, times, out, |_| false),
            Some(restarts) => self.visit(visit_keys, order, times, out, |i| {
                restarts[order.get(i).map_or(i, |&row| row as usize)]
            }),
        }
    }

    /// The per-row loop of [`FrameState::advance`] over the rows in
    /// visiting order (`order`, when grouped), `restarts_at(i)` telling
    /// whether the `i`-th row visited restarts its key.
    fn visit(
        &mut self,
        visit_keys: &[u32],
        order: &[u32],
        times: Option<&[Option<i64>]>,
        out: FrameOut<'_>,
        restarts_at: impl Fn(usize) -> bool,
    ) {
        let FrameOut {
            evictions,
            admissions,
            lengths,
            count_rows,
            late,
            late_count,
            untimed_count,
        } = out;
        match self {
            FrameState::Rows {
                preceding,
                waiting,
                held,
            } => {
                let rows = RowsPass {
                    cap: preceding.saturating_add(1),
                    waiting: *waiting,
                    held,
                    count_rows,
                };
                // Two copies of the loop: frames ending at the current row
                // test nothing more per row than before the others existed.
                match rows.waiting {
                    0 => {
                        rows.visit::<false>(visit_keys, evictions, admissions, lengths, restarts_at)
                    }
                    _ => {
                        rows.visit::<true>(visit_keys, evictions, admissions, lengths, restarts_at)
                    }
                }
                late.resize(visit_keys.len(), false);
            }
            FrameState::Range { width, times: held } => {
                let event_times = times.unwrap_or(&[]);
                for (i, &key) in visit_keys.iter().enumerate() {
                    // Keys' deques lie apart: start fetching those of the
                    // rows a few ahead (struct, then its ends).
                    if let Some(&ahead) = visit_keys.get(i + PREFETCH_STRUCT) {
                        sliq_swag::prefetch_value(held.as_ptr().wrapping_add(ahead as usize));
                    }
                    if let Some(&ahead) = visit_keys.get(i + PREFETCH_SLOTS) {
                        held[ahead as usize].prefetch_ends();
                    }
                    let deque = &mut held[key as usize];
                    let row = order.get(i).map_or(i, |&row| row as usize);
                    let t = event_times.get(row).copied().flatten();
                    // A restarting key's rows all leave; then none is late.
                    let forgotten = match t.is_some() && restarts_at(i) {
                        true => u32::try_from(std::mem::take(deque).len()).unwrap_or(u32::MAX),
                        false => 0,
                    };
                    match t {
                        Some(t) if deque.back().is_none_or(|&newest| t >= newest) => {
                            deque.push_back(t);
                            let bound = t.saturating_sub(*width);
                            let mut evicted = forgotten;
                            while deque.front().is_some_and(|&oldest| oldest < bound) {
                                deque.pop_front();
                                evicted += 1;
                            }
                            evictions.push(evicted);
                            if count_rows {
                                lengths.push(deque.len() as u64);
                            }
                            late.push(false);
                        }
                        _ => {
                            evictions.push(0);
                            if count_rows {
                                lengths.push(0);
                            }
                            late.push(true);
                            *late_count += 1;
                            *untimed_count += usize::from(t.is_none());
                        }
                    }
                }
            }
            FrameState::RangeBefore {
                start,
                end,
                times: held,
            } => {
                let event_times = times.unwrap_or(&[]);
                for (i, &key) in visit_keys.iter().enumerate() {
                    let key_times = &mut held[key as usize];
                    let row = order.get(i).map_or(i, |&row| row as usize);
                    let t = event_times.get(row).copied().flatten();
                    // A restarting key's rows all leave; then none is late.
                    let forgotten = match t.is_some() && restarts_at(i) {
                        true => {
                            let rows = std::mem::take(key_times).rows();
                            u32::try_from(rows).unwrap_or(u32::MAX)
                        }
                        false => 0,
                    };
                    match t {
                        Some(t) if key_times.newest.is_none_or(|newest| t >= newest) => {
                            let (admitted, evicted) = key_times.advance(t, *start, *end);
                            evictions.push(forgotten.saturating_add(evicted));
                            admissions.push(admitted);
                            if count_rows {
                                lengths.push(key_times.in_window);
                            }
                            late.push(false);
                        }
                        _ => {
                            evictions.push(0);
                            admissions.push(0);
                            if count_rows {
                                lengths.push(0);
                            }
                            late.push(true);
                            *late_count += 1;
                            *untimed_count += usize::from(t.is_none());
                        }
                    }
                }
            }
        }
    }
}

/// A key's event times under a RANGE frame ending before the current row.
#[derive(Default)]
pub struct TimesBefore {
    /// The times held, oldest first: the older part is the window (kept
    /// only when the frame has a start, by which they leave), the younger
    /// part the times waiting to enter it.
    times: SplitDeque<i64>,
    /// Rows in the window.
    in_window: u64,
    /// The newest time, by which a row is late.
    newest: Option<i64>,
}

impl TimesBefore {
    /// Rows held: in the window and waiting.
    fn rows(&self) -> u64 {
        self.in_window + self.times.younger_len() as u64
    }

    /// Takes in a row at time `t` (not late): the waiting rows up to
    /// `t − end` enter the window, then the window's rows before
    /// `t − start` leave it. Returns how many entered and how many left.
    fn advance(&mut self, t: i64, start: Option<i64>, end: i64) -> (u32, u32) {
        self.newest = Some(t);
        self.times.push_back(t);
        let admit_to = t.saturating_sub(end);
        let mut admitted = 0;
        while self.times.younger_front().is_some_and(|&o| o <= admit_to) {
            self.times.admit();
            if start.is_none() {
                // An unbounded window keeps no times: none ever leaves.
                self.times.pop_front();
            }
            self.in_window += 1;
            admitted += 1;
        }
        let mut evicted = 0;
        if let Some(start) = start {
            let keep_from = t.saturating_sub(start);
            while self.times.older_front().is_some_and(|&o| o < keep_from) {
                self.times.pop_front();
                self.in_window -= 1;
                evicted += 1;
            }
            debug_assert!(self.times.younger_front().is_none_or(|&o| o >= keep_from));
        }
        debug_assert!(start.is_none() || self.in_window == self.times.older_len() as u64);
        (admitted, evicted)
    }
}

/// The per-row loop of a ROWS frame (an unbounded one has no cap).
struct RowsPass<'a> {
    /// Rows a key holds at most: its window's and the waiting ones.
    cap: u64,
    /// Rows that wait outside the window (0: the frame ends at the row).
    waiting: u64,
    held: &'a mut [u64],
    count_rows: bool,
}

impl RowsPass<'_> {
    /// `DELAYED` when rows wait (`waiting > 0`): then each row's admissions
    /// are pushed too.
    fn visit<const DELAYED: bool>(
        self,
        visit_keys: &[u32],
        evictions: &mut Vec<u32>,
        admissions: &mut Vec<u32>,
        lengths: &mut Vec<u64>,
        restarts_at: impl Fn(usize) -> bool,
    ) {
        debug_assert_eq!(DELAYED, self.waiting > 0);
        for (i, &key) in visit_keys.iter().enumerate() {
            let h = &mut self.held[key as usize];
            let restarts = restarts_at(i);
            if DELAYED {
                // A waiting row enters once `waiting` younger ones are in;
                // a key that starts afresh keeps only its new row, waiting.
                admissions.push(u32::from(!restarts && *h >= self.waiting));
            }
            if restarts {
                // A window of 2^32 rows would take 32 GiB or more.
                let held_rows = std::mem::replace(h, 1);
                evictions.push(u32::try_from(held_rows).unwrap_or(u32::MAX));
            } else if *h < self.cap {
                *h += 1;
                evictions.push(0);
            } else {
                evictions.push(1);
            }
            if self.count_rows {
                lengths.push(h.saturating_sub(self.waiting));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_rows_per_key_are_visited_grouped_by_key_in_batch_order() {
        // 20 keys, 400 rows: key of row r is (r * 7) % 20.
        let key_ids: Vec<u32> = (0..400u32).map(|r| (r * 7) % 20).collect();
        let mut pass = FramePass::new(false, GROUP_MIN_BYTES);
        pass.set_order(&key_ids, 20);
        assert!(pass.grouped);
        let order: Vec<usize> = (0..400).map(|i| pass.batch_row(i)).collect();
        // Each key's rows together, keys ascending, rows in batch order.
        let visited: Vec<(u32, usize)> = order.iter().map(|&r| (key_ids[r], r)).collect();
        assert!(visited.windows(2).all(|w| w[0] < w[1]), "{visited:?}");
        assert_eq!(
            pass.keys,
            visited.iter().map(|&(k, _)| k).collect::<Vec<_>>()
        );
        // Results in visiting order come back in batch order.
        let results: ArrayRef = Arc::new(arrow_array::Int64Array::from(
            order.iter().map(|&r| r as i64).collect::<Vec<_>>(),
        ));
        let back = pass.in_batch_order(results).expect("reordered");
        let back = back
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .expect("i64");
        assert_eq!(back.values().to_vec(), (0..400).collect::<Vec<i64>>());
    }

    #[test]
    fn many_keys_few_keys_or_a_small_batch_keep_batch_order() {
        let mut pass = FramePass::new(false, GROUP_MIN_BYTES);
        for (rows, keys) in [(400u32, 300u32), (400, 8), (100, 20)] {
            let key_ids: Vec<u32> = (0..rows).map(|r| r % keys).collect();
            pass.set_order(&key_ids, keys as usize);
            assert!(!pass.grouped, "{rows} rows, {keys} keys");
            assert_eq!(pass.keys, key_ids);
            assert_eq!(pass.batch_row(7), 7);
        }
    }
}

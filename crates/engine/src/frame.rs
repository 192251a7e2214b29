//! The frame pass: for each row of a batch, how many of its key's oldest
//! rows leave the window, and whether the row is late — computed once per
//! window group and shared by all its aggregates.

use sliq_sql::Frame;
use sliq_swag::ChunkedDeque;

use crate::operator::{PREFETCH_SLOTS, PREFETCH_STRUCT};

/// Per-row outcome of the frame pass.
#[derive(Default)]
pub struct FramePass {
    /// Rows to evict from the key's window after inserting this row.
    pub evictions: Vec<u32>,
    /// Rows in the key's window once this row is in (0 for a late row):
    /// `count(*)` over the frame. Filled only when `count_rows` is set.
    pub lengths: Vec<u64>,
    /// Whether some aggregate counts the frame's rows (set once, when the
    /// query is compiled).
    pub count_rows: bool,
    /// The row is late (or has no event time) and enters no window.
    pub late: Vec<bool>,
    /// Number of late rows in the batch.
    pub late_count: usize,
}

/// Per-key frame state of a window group.
pub enum FrameState {
    /// `ROWS n PRECEDING`: rows held per key (at most n + 1).
    Rows { preceding: u64, held: Vec<u64> },
    /// `RANGE d PRECEDING`: the event times held per key.
    Range {
        width: i64,
        times: Vec<ChunkedDeque<i64>>,
    },
    /// Every row stays: rows so far per key.
    Unbounded { held: Vec<u64> },
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
        match frame {
            Frame::Rows(n) => FrameState::Rows {
                preceding: n,
                held: Vec::new(),
            },
            Frame::Range(ms) => FrameState::Range {
                width: ms,
                times: Vec::new(),
            },
            Frame::Unbounded => FrameState::Unbounded { held: Vec::new() },
        }
    }

    fn grow(&mut self, keys: usize) {
        match self {
            FrameState::Rows { held, .. } | FrameState::Unbounded { held } => {
                held.resize(keys.max(held.len()), 0)
            }
            FrameState::Range { times, .. } => {
                while times.len() < keys {
                    times.push(ChunkedDeque::new());
                }
            }
        }
    }

    /// Late rows of a batch, without changing any state (for `on_late =
    /// 'error'`). Only RANGE frames have late rows.
    pub fn find_late(&self, key_ids: &[u32], times: Option<&[Option<i64>]>) -> Vec<Late> {
        let (FrameState::Range { times: held, .. }, Some(event_times)) = (self, times) else {
            return Vec::new();
        };
        let mut newest: hashbrown::HashMap<u32, i64> = hashbrown::HashMap::new();
        let mut late = Vec::new();
        for (row, (&key, t)) in key_ids.iter().zip(event_times).enumerate() {
            let known = newest
                .get(&key)
                .copied()
                .or_else(|| held.get(key as usize).and_then(|d| d.back().copied()));
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
    /// (RANGE frames only).
    pub fn advance(
        &mut self,
        key_ids: &[u32],
        keys: usize,
        times: Option<&[Option<i64>]>,
        out: &mut FramePass,
    ) {
        self.grow(keys);
        out.evictions.clear();
        out.lengths.clear();
        out.late.clear();
        out.late_count = 0;
        match self {
            FrameState::Rows { preceding, held } => {
                let cap = preceding.saturating_add(1);
                for &key in key_ids {
                    let h = &mut held[key as usize];
                    if *h < cap {
                        *h += 1;
                        out.evictions.push(0);
                    } else {
                        out.evictions.push(1);
                    }
                    if out.count_rows {
                        out.lengths.push(*h);
                    }
                }
                out.late.resize(key_ids.len(), false);
            }
            FrameState::Range { width, times: held } => {
                let event_times = times.unwrap_or(&[]);
                for (row, &key) in key_ids.iter().enumerate() {
                    // Keys' deques lie apart: start fetching those of the
                    // rows a few ahead (struct, then its ends).
                    if let Some(&ahead) = key_ids.get(row + PREFETCH_STRUCT) {
                        sliq_swag::prefetch(held.as_ptr().wrapping_add(ahead as usize));
                    }
                    if let Some(ahead) = key_ids.get(row + PREFETCH_SLOTS) {
                        held[*ahead as usize].prefetch_ends();
                    }
                    let deque = &mut held[key as usize];
                    let t = event_times.get(row).copied().flatten();
                    match t {
                        Some(t) if deque.back().is_none_or(|&newest| t >= newest) => {
                            deque.push_back(t);
                            let bound = t.saturating_sub(*width);
                            let mut evicted = 0;
                            while deque.front().is_some_and(|&oldest| oldest < bound) {
                                deque.pop_front();
                                evicted += 1;
                            }
                            out.evictions.push(evicted);
                            if out.count_rows {
                                out.lengths.push(deque.len() as u64);
                            }
                            out.late.push(false);
                        }
                        _ => {
                            out.evictions.push(0);
                            if out.count_rows {
                                out.lengths.push(0);
                            }
                            out.late.push(true);
                            out.late_count += 1;
                        }
                    }
                }
            }
            FrameState::Unbounded { held } => {
                for &key in key_ids {
                    let h = &mut held[key as usize];
                    *h += 1;
                    if out.count_rows {
                        out.lengths.push(*h);
                    }
                }
                out.evictions.resize(key_ids.len(), 0);
                out.late.resize(key_ids.len(), false);
            }
        }
    }
}

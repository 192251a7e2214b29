//! Time-based windows: a FIFO aggregator plus the timestamps of its values.

use std::fmt;

use crate::deque::ChunkedDeque;
use crate::{DabaLite, FifoAggregator, Monoid};

/// An insert whose timestamp is older than the window's youngest one.
/// The window is left unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfOrder<T> {
    /// The rejected timestamp.
    pub ts: T,
    /// The window's youngest timestamp at the time.
    pub youngest: T,
}

impl<T: fmt::Debug> fmt::Display for OutOfOrder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timestamp {:?} is older than the window's youngest timestamp {:?}",
            self.ts, self.youngest
        )
    }
}

impl<T: fmt::Debug> std::error::Error for OutOfOrder<T> {}

/// A window over timestamped values, for `RANGE` frames: values arrive in
/// timestamp order and leave when they fall out of the range.
///
/// Each operation costs what the underlying aggregator `W` costs (worst-case
/// O(1) for the default [`DabaLite`]) plus O(1) for the timestamp; evicting by
/// time costs that per evicted value.
///
/// ```
/// use sliq_swag::{TimedWindow, monoids::Sum};
///
/// let mut w: TimedWindow<_> = TimedWindow::new(Sum::<u64>::default());
/// w.insert(100, 1).unwrap();
/// w.insert(150, 2).unwrap();
/// w.insert(230, 4).unwrap();
/// assert_eq!(w.evict_older_than(130), 1); // drops ts 100
/// assert_eq!(w.query(), 6);
/// assert_eq!((w.oldest(), w.youngest()), (Some(150), Some(230)));
/// assert!(w.insert(200, 8).is_err()); // out of order: rejected, window unchanged
/// ```
pub struct TimedWindow<M: Monoid, T = i64, W: FifoAggregator<M> = DabaLite<M>> {
    window: W,
    times: ChunkedDeque<T>,
    _monoid: std::marker::PhantomData<fn(M)>,
}

impl<M: Monoid, T: Ord + Copy, W: FifoAggregator<M>> TimedWindow<M, T, W> {
    /// An empty window.
    pub fn new(monoid: M) -> Self {
        Self::from_window(W::new(monoid))
    }

    /// Wraps an empty aggregator (for example one built `with_capacity`).
    pub fn from_window(window: W) -> Self {
        debug_assert!(window.is_empty());
        TimedWindow {
            window,
            times: ChunkedDeque::new(),
            _monoid: std::marker::PhantomData,
        }
    }

    /// Appends `v` with timestamp `ts`. Equal timestamps are allowed; an older
    /// one is rejected with [`OutOfOrder`] and changes nothing.
    pub fn insert(&mut self, ts: T, v: M::Agg) -> Result<(), OutOfOrder<T>> {
        if let Some(&youngest) = self.times.back()
            && ts < youngest
        {
            return Err(OutOfOrder { ts, youngest });
        }
        self.times.push_back(ts);
        self.window.insert(v);
        Ok(())
    }

    /// Evicts every value whose timestamp is strictly older than `bound`,
    /// returning how many were evicted.
    pub fn evict_older_than(&mut self, bound: T) -> usize {
        let mut evicted = 0;
        while let Some(&oldest) = self.times.front() {
            if oldest >= bound {
                break;
            }
            self.evict();
            evicted += 1;
        }
        evicted
    }

    /// Evicts the oldest value; `false` when empty.
    pub fn evict(&mut self) -> bool {
        self.times.pop_front();
        self.window.evict()
    }

    /// Aggregate of the window, oldest first; the identity when empty.
    pub fn query(&self) -> M::Agg {
        self.window.query()
    }

    /// The oldest timestamp, if any.
    pub fn oldest(&self) -> Option<T> {
        self.times.front().copied()
    }

    /// The youngest timestamp, if any.
    pub fn youngest(&self) -> Option<T> {
        self.times.back().copied()
    }

    /// Number of values in the window.
    pub fn len(&self) -> usize {
        self.window.len()
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.window.is_empty()
    }

    /// The underlying aggregator.
    pub fn window(&self) -> &W {
        &self.window
    }
}

impl<M, T, W> fmt::Debug for TimedWindow<M, T, W>
where
    M: Monoid,
    T: Ord + Copy + fmt::Debug,
    W: FifoAggregator<M> + fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimedWindow")
            .field("oldest", &self.oldest())
            .field("youngest", &self.youngest())
            .field("window", &self.window)
            .finish()
    }
}

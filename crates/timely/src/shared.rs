//! State shared by the workers of one process and the caller's thread:
//! the sources to read, the stop flag, the first error, and progress.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::Thread;

use arrow_array::RecordBatch;
use crossbeam_channel::Sender;
use parking_lot::Mutex;

use crate::TimelyError;
use crate::worker::SourceRx;

/// Progress counters, updated by the workers while they run.
#[derive(Debug)]
pub(crate) struct Progress {
    /// Rows read from this process's sources.
    pub rows_read: AtomicU64,
    /// The first epoch not yet gathered (`u64::MAX`: all are).
    frontier: AtomicU64,
    /// Per local worker: the newest event time whose rows every worker has
    /// processed; `NO_SOURCE` for workers without sources, `NOTHING_YET`
    /// before the first epoch completes.
    watermarks: Vec<AtomicI64>,
}

const NO_SOURCE: i64 = i64::MAX;
const NOTHING_YET: i64 = i64::MIN;

impl Progress {
    fn new(local_workers: usize) -> Self {
        Progress {
            rows_read: AtomicU64::new(0),
            frontier: AtomicU64::new(0),
            watermarks: (0..local_workers)
                .map(|_| AtomicI64::new(NO_SOURCE))
                .collect(),
        }
    }

    /// The gather has seen everything before `frontier` (timely's frontier
    /// is global: every worker's gather reports the same one).
    pub fn record_frontier(&self, frontier: Option<u64>) {
        self.frontier
            .store(frontier.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// Local worker `local` reads a source.
    fn mark_source(&self, local: usize) {
        self.watermarks[local].store(NOTHING_YET, Ordering::Relaxed);
    }

    /// Every row local worker `local` read up to event time `time` is done.
    pub fn record_watermark(&self, local: usize, time: i64) {
        self.watermarks[local].fetch_max(time, Ordering::Relaxed);
    }

    /// The first epoch not yet complete everywhere, if any is left.
    pub fn frontier(&self) -> Option<u64> {
        Some(self.frontier.load(Ordering::Relaxed)).filter(|&f| f != u64::MAX)
    }

    /// The event time up to which this process's sources are done (the
    /// least over its source workers), if known.
    pub fn watermark(&self) -> Option<i64> {
        let least = self
            .watermarks
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .min()?;
        Some(least).filter(|&w| w != NO_SOURCE && w != NOTHING_YET)
    }
}

/// The thread of the worker that reads a source, set once the worker
/// starts: the source's reader unparks it when a batch arrives.
pub(crate) type Waker = Arc<OnceLock<Thread>>;

/// What the workers of one process share with each other and the caller.
pub(crate) struct Shared {
    /// Worker threads in this process.
    pub local_workers: usize,
    /// Per local worker, its thread (for its sources' readers).
    wakers: Vec<Waker>,
    /// Per local worker, the sources it reads (taken when it starts).
    sources: Mutex<Vec<Vec<(usize, SourceRx)>>>,
    stop: AtomicBool,
    error: Mutex<Option<TimelyError>>,
    pub progress: Progress,
}

impl Shared {
    /// Sources are dealt to local workers round-robin: source `i` is read by
    /// worker `i % local_workers`.
    pub fn new(wakers: Vec<Waker>, sources: Vec<SourceRx>) -> Self {
        let local_workers = wakers.len();
        let progress = Progress::new(local_workers);
        let mut dealt: Vec<Vec<(usize, SourceRx)>> =
            (0..local_workers).map(|_| Vec::new()).collect();
        for (i, rx) in sources.into_iter().enumerate() {
            progress.mark_source(i % local_workers);
            dealt[i % local_workers].push((i, rx));
        }
        Shared {
            local_workers,
            wakers,
            sources: Mutex::new(dealt),
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
            progress,
        }
    }

    /// The sources of local worker `local` (empty the second time); their
    /// readers wake the calling thread from now on.
    pub fn take_sources(&self, local: usize) -> Vec<(usize, SourceRx)> {
        let _ = self.wakers[local].set(std::thread::current());
        std::mem::take(&mut self.sources.lock()[local])
    }

    /// Asks the sources to stop reading; what was read still completes.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the run was asked to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Records `error` (the first one wins) and stops the run.
    pub fn fail(&self, error: TimelyError) {
        self.error.lock().get_or_insert(error);
        self.stop();
    }

    /// The first error, if any.
    pub fn take_error(&self) -> Option<TimelyError> {
        self.error.lock().take()
    }
}

/// Worker 0's end of the results channel.
pub(crate) struct Gather {
    pub results: Sender<RecordBatch>,
}

impl Gather {
    /// Hands `batch` to the caller; stops the run if the caller is gone.
    pub fn deliver(&self, shared: &Shared, batch: RecordBatch) {
        if self.results.send(batch).is_err() {
            shared.stop();
        }
    }
}

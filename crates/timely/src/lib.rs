//! sliq's continuous queries scaled out on [timely dataflow](timely):
//! worker threads in one process, or several processes connected by
//! timely's networking, with each key's windows on exactly one worker.
//!
//! A [`Job`] is a stream's definition and one `SELECT` over it. Every
//! worker builds its own `sliq_engine::Engine` from the job and runs the
//! query there, with the same planner, expressions and per-key window
//! operators as an embedded engine. The dataflow is:
//!
//! 1. **read**: each source is read by one worker of the process it is
//!    given to (source `i` by local worker `i % workers`); the reader splits
//!    every batch by a fixed hash of the query's partition key
//!    ([`sliq_engine::Partitioner`]);
//! 2. **exchange**: timely's exchange pact sends each part to the worker
//!    that owns its keys, across threads and processes (between processes
//!    as Arrow IPC);
//! 3. **windows**: the worker pushes the part through its engine;
//! 4. **gather**: results are exchanged to worker 0 (in process 0) and
//!    handed to the caller as Arrow record batches.
//!
//! Each input row's result is produced exactly once, and within a key
//! results come in input order (timely channels are FIFO between two
//! workers, and a key's rows all pass through one reader and one window
//! worker). Across keys the order is the order results reach worker 0. A
//! query without partition keys (one global window), or whose windows use
//! different keys, runs all its windows on worker 0. RANGE windows use the
//! stream's event time per key exactly as the embedded engine does; the
//! timely timestamps are read epochs (one per input batch), whose frontier
//! gives the watermark in [`Progress`].
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Float64Array, Int64Array, RecordBatch};
//! use arrow_schema::{DataType, Field, Schema};
//! use sliq_engine::StreamOptions;
//! use sliq_timely::{Config, Job};
//!
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("k", DataType::Int64, false),
//!     Field::new("v", DataType::Float64, false),
//! ]));
//! let batch = RecordBatch::try_new(schema.clone(), vec![
//!     Arc::new(Int64Array::from(vec![1, 2, 1, 2, 1])),
//!     Arc::new(Float64Array::from(vec![5.0, 1.0, 3.0, 4.0, 2.0])),
//! ])?;
//! let job = Job::new("s", schema, StreamOptions::default(),
//!     "SELECT k, max(v) OVER (ROWS 1 PRECEDING) AS m FROM s GROUP BY k");
//! let mut rows = 0;
//! let stats = sliq_timely::run(&job, &Config::workers(2), vec![vec![Ok::<_, String>(batch)]],
//!     |out| { rows += out.num_rows(); Ok::<_, String>(()) })?;
//! assert_eq!(rows, 5);
//! assert_eq!(stats.workers.iter().map(|w| w.rows).sum::<u64>(), 5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod config;
mod job;
mod network;
mod part;
mod shared;
mod worker;

use std::fmt::Display;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use sliq_engine::{EngineError, panic_message};

pub use config::{Cluster, Config};
pub use job::{Job, Setup};

use crate::shared::{Gather, Shared, Waker};

/// What can go wrong running a job.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TimelyError {
    /// The query or a pushed batch failed in the engine.
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// Bad settings (workers, process index, hostfile).
    #[error("{0}")]
    Config(String),
    /// A peer process could not be reached before the deadline.
    #[error(
        "process {process} could not reach process {peer} at {address} within {seconds:.0} s: {why}"
    )]
    Unreachable {
        /// This process.
        process: usize,
        /// The peer that is missing.
        peer: usize,
        /// Its address.
        address: String,
        /// The connect timeout.
        seconds: f64,
        /// The last failure.
        why: String,
    },
    /// Timely's networking failed.
    #[error("network: {0}")]
    Network(String),
    /// A source failed; what it had delivered was processed.
    #[error("source {source_index}: {message}")]
    Source {
        /// The source's position in the list given to [`start`].
        source_index: usize,
        /// What went wrong.
        message: String,
    },
    /// The caller's sink failed.
    #[error("sink: {0}")]
    Sink(String),
    /// A worker thread died (a bug, or a peer process that went away).
    #[error("worker failed: {0}")]
    Worker(String),
}

/// One local worker's counters at the end of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// The worker's index among all workers of the computation.
    pub index: usize,
    /// Rows its windows processed.
    pub rows: u64,
    /// Parts (slices of input batches) it processed.
    pub batches: u64,
    /// Rows late for a RANGE window: their RANGE aggregates are NULL.
    pub late_rows: u64,
    /// How many of the late rows have no event time (NULL).
    pub untimed_rows: u64,
    /// Values that could not be computed from a row's data (overflow,
    /// integer division by zero, a failing CAST) and were emitted as NULL.
    pub failed_results: u64,
    /// The latest such failure's message, if any. It names the row by the
    /// values it read, not by its number: a worker sees only its part of
    /// the stream.
    pub last_failure: Option<String>,
    /// Distinct keys it holds (the most of any of the query's windows).
    pub keys: usize,
    /// Result rows it produced.
    pub rows_out: u64,
}

/// What a run did, as seen from this process.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// This process's workers.
    pub workers: Vec<WorkerStats>,
    /// Rows read from this process's sources.
    pub rows_read: u64,
    /// Result rows handed to the caller (process 0 only).
    pub rows_out: u64,
    /// The partition key, as written in the query (empty: not split).
    pub partition_key: Vec<String>,
    /// The event time up to which every row read here was processed.
    pub watermark: Option<i64>,
    /// Wall-clock time from start to the last result.
    pub elapsed: Duration,
}

/// A snapshot of a running job's progress.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Rows read from this process's sources so far.
    pub rows_read: u64,
    /// Result rows handed to the caller so far.
    pub rows_out: u64,
    /// The first read epoch (input batch) whose results have not all
    /// reached worker 0: timely's progress frontier. `None` once complete.
    pub frontier: Option<u64>,
    /// The event time up to which every row read here was processed (the
    /// stream needs an event-time column).
    pub watermark: Option<i64>,
}

/// A running job: its results arrive here (in process 0).
pub struct Execution {
    results: Receiver<RecordBatch>,
    shared: Arc<Shared>,
    /// Taken by [`Execution::finish`].
    guards: Option<timely::communication::WorkerGuards<Result<WorkerStats, TimelyError>>>,
    schema: SchemaRef,
    partition_key: Vec<String>,
    /// Rows still allowed by the query's LIMIT.
    remaining: Option<u64>,
    rows_out: u64,
    start: Instant,
}

impl std::fmt::Debug for Execution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution")
            .field("progress", &self.progress())
            .finish_non_exhaustive()
    }
}

/// Starts `job` on the workers of `config`, reading `sources` in this
/// process (other processes of a cluster may pass none). Each source is an
/// iterator of batches with the job's stream schema, read on its own thread.
///
/// Fails at once on a bad query or settings, or when peers cannot be
/// reached within `config.connect_timeout`.
pub fn start<I, E>(job: &Job, config: &Config, sources: Vec<I>) -> Result<Execution, TimelyError>
where
    I: IntoIterator<Item = Result<RecordBatch, E>>,
    I::IntoIter: Send + 'static,
    E: Display,
{
    config.check()?;
    // Plan once here, so that a bad query fails before any connection.
    let probe = job.instantiate()?;
    let schema = probe.query.schema();
    let remaining = probe.query.limit();
    let partition_key = probe.engine.partitioner(job.query())?.key_names().to_vec();
    drop(probe);

    let wakers: Vec<Waker> = (0..config.workers).map(|_| Waker::default()).collect();
    let receivers = sources
        .into_iter()
        .enumerate()
        .map(|(i, source)| spawn_reader(source, Arc::clone(&wakers[i % config.workers])))
        .collect();
    let shared = Arc::new(Shared::new(wakers, receivers));
    let (results, incoming) = crossbeam_channel::bounded(64);
    let (builders, others) = network::allocators(config)?;
    let worker_job = job.clone();
    let worker_shared = Arc::clone(&shared);
    let in_flight = config.batches_in_flight.max(1);
    let guards = timely::execute::execute_from(
        builders,
        others,
        timely::WorkerConfig::default(),
        move |worker| {
            let gather = Gather {
                results: results.clone(),
            };
            let outcome =
                worker::run_worker(worker, &worker_job, &worker_shared, in_flight, gather);
            if let Err(e) = &outcome {
                worker_shared.fail(e.clone());
            }
            outcome
        },
    )
    .map_err(TimelyError::Network)?;
    Ok(Execution {
        results: incoming,
        shared,
        guards: Some(guards),
        schema,
        partition_key,
        remaining,
        rows_out: 0,
        start: Instant::now(),
    })
}

/// Reads `source` on its own thread into a small channel, so that a slow
/// or blocking source never holds up a worker; wakes the reading worker
/// (which parks when it has nothing to do) after each batch.
fn spawn_reader<I, E>(source: I, waker: Waker) -> worker::SourceRx
where
    I: IntoIterator<Item = Result<RecordBatch, E>>,
    I::IntoIter: Send + 'static,
    E: Display,
{
    let (tx, rx) = crossbeam_channel::bounded(4);
    let iter = source.into_iter();
    std::thread::spawn(move || {
        for item in iter {
            let failed = item.is_err();
            if tx.send(item.map_err(|e| e.to_string())).is_err() || failed {
                break;
            }
            if let Some(worker) = waker.get() {
                worker.unpark();
            }
        }
        // Dropping the sender ends the source: wake the worker to see it.
        drop(tx);
        if let Some(worker) = waker.get() {
            worker.unpark();
        }
    });
    rx
}

impl Execution {
    /// The result schema.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// The next result batch, waiting for it; `None` once every worker has
    /// finished (or the query's LIMIT was reached).
    pub fn recv(&mut self) -> Option<RecordBatch> {
        loop {
            match self.recv_timeout(Duration::from_secs(3600)) {
                Ok(batch) => return Some(batch),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The next result batch, waiting at most `timeout`;
    /// [`RecvTimeoutError::Disconnected`] once every result was delivered.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<RecordBatch, RecvTimeoutError> {
        if self.remaining == Some(0) {
            return Err(RecvTimeoutError::Disconnected);
        }
        let mut batch = self.results.recv_timeout(timeout)?;
        if let Some(remaining) = &mut self.remaining {
            let rows = batch.num_rows() as u64;
            if rows >= *remaining {
                batch = batch.slice(0, *remaining as usize);
                self.shared.stop();
            }
            *remaining -= batch.num_rows() as u64;
        }
        self.rows_out += batch.num_rows() as u64;
        Ok(batch)
    }

    /// Progress so far.
    pub fn progress(&self) -> Progress {
        let progress = &self.shared.progress;
        Progress {
            rows_read: progress
                .rows_read
                .load(std::sync::atomic::Ordering::Relaxed),
            rows_out: self.rows_out,
            frontier: progress.frontier(),
            watermark: progress.watermark(),
        }
    }

    /// Asks the sources to stop reading; rows already read still produce
    /// their results.
    pub fn stop(&self) {
        self.shared.stop();
    }

    /// Waits for the workers to finish (dropping results not yet received)
    /// and returns the run's counters, or its first error.
    pub fn finish(mut self) -> Result<RunStats, TimelyError> {
        let outcomes = self.join_workers();
        let elapsed = self.start.elapsed();
        let shared = &self.shared;
        let mut workers = Vec::new();
        let mut failure = shared.take_error();
        for outcome in outcomes? {
            match outcome {
                Ok(Ok(stats)) => workers.push(stats),
                Ok(Err(e)) => {
                    failure.get_or_insert(e);
                }
                Err(_) => {
                    // Timely only keeps the payload's Debug form ("Any"); the
                    // panic message itself went to the panic hook.
                    failure.get_or_insert(TimelyError::Worker(
                        "a worker thread panicked (a peer process may have exited)".into(),
                    ));
                }
            }
        }
        if let Some(error) = failure {
            return Err(error);
        }
        let progress = &shared.progress;
        Ok(RunStats {
            workers,
            rows_read: progress
                .rows_read
                .load(std::sync::atomic::Ordering::Relaxed),
            rows_out: self.rows_out,
            partition_key: std::mem::take(&mut self.partition_key),
            watermark: progress.watermark(),
            elapsed,
        })
    }
}

impl Execution {
    /// Waits for every local worker, draining results meanwhile so that
    /// worker 0 never blocks on them. Empty if already joined.
    fn join_workers(&mut self) -> Result<Vec<WorkerOutcome>, TimelyError> {
        let Some(guards) = self.guards.take() else {
            return Ok(Vec::new());
        };
        let results = self.results.clone();
        let drain = std::thread::spawn(move || while results.recv().is_ok() {});
        // Timely's network threads panic when a peer process goes away, and
        // dropping the guards re-raises that here: report it as an error.
        let joined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || guards.join()));
        let _ = drain.join();
        joined.map_err(|panic| {
            TimelyError::Worker(format!(
                "the network failed ({}); a peer process may have exited",
                panic_message(panic.as_ref())
            ))
        })
    }
}

/// What a worker thread returned, or its panic (as timely reports it).
type WorkerOutcome = Result<Result<WorkerStats, TimelyError>, String>;

impl Drop for Execution {
    /// An execution dropped before [`Execution::finish`] stops its sources
    /// and waits for the workers, discarding their results.
    fn drop(&mut self) {
        self.shared.stop();
        let _ = self.join_workers();
    }
}

/// Runs `job` to the end: starts it (see [`start`]), hands every result
/// batch to `sink` in this process, and returns the counters. If `sink`
/// fails, the sources stop and the error is returned.
pub fn run<I, E, F, SE>(
    job: &Job,
    config: &Config,
    sources: Vec<I>,
    mut sink: F,
) -> Result<RunStats, TimelyError>
where
    I: IntoIterator<Item = Result<RecordBatch, E>>,
    I::IntoIter: Send + 'static,
    E: Display,
    F: FnMut(RecordBatch) -> Result<(), SE>,
    SE: Display,
{
    let mut execution = start(job, config, sources)?;
    let mut sink_error = None;
    while let Some(batch) = execution.recv() {
        if let Err(e) = sink(batch) {
            sink_error = Some(TimelyError::Sink(e.to_string()));
            execution.stop();
            break;
        }
    }
    let stats = execution.finish()?;
    match sink_error {
        Some(e) => Err(e),
        None => Ok(stats),
    }
}

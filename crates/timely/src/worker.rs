//! One worker's dataflow: read its sources (if any) and split each batch
//! by key hash, exchange the parts, run each part through the worker's own
//! engine, and gather the results at worker 0.
//!
//! Timely timestamps are epochs: each source worker sends the parts of its
//! `i`-th batch at epoch `i`. The frontier after the windows tells which
//! epochs every worker has finished; it bounds the batches in flight and,
//! mapped back to the event times read by then, is the watermark.

use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_schema::DataType;
use crossbeam_channel::{Receiver, TryRecvError};
use sliq_engine::{EngineError, Partitioner};
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

use crate::job::{Instance, Job};
use crate::part::Part;
use crate::shared::{Gather, Shared};
use crate::{TimelyError, WorkerStats};

/// A source's batches as its reader thread delivers them.
pub(crate) type SourceRx = Receiver<Result<RecordBatch, String>>;

/// Runs one worker to completion.
pub(crate) fn run_worker(
    worker: &mut Worker,
    job: &Job,
    shared: &Arc<Shared>,
    in_flight: u64,
    gather: Gather,
) -> Result<WorkerStats, TimelyError> {
    let index = worker.index();
    let Instance {
        engine,
        stream,
        query,
    } = job.instantiate()?;
    // The dataflow drops its copy when it completes; this one keeps the
    // query registered so that its counters can be read at the end.
    let query = Rc::new(query);
    let windows_query = Rc::clone(&query);
    let mut partitioner = engine.partitioner(job.query())?;
    let schema_check = stream.clone();
    let mut input = InputHandle::<u64, _>::new();
    let probe = ProbeHandle::new();
    let windows_shared = Arc::clone(shared);
    let gather_shared = Arc::clone(shared);
    worker.dataflow::<u64, _, _>(|scope| {
        scope
            .input_from(&mut input)
            .unary(Exchange::new(Part::route), "SliqWindows", move |_, _| {
                move |input, output| {
                    input.for_each(|cap, parts: &mut Vec<Part>| {
                        let mut session = output.session(&cap);
                        for part in parts.drain(..) {
                            match process(&stream, &windows_query, part.batch) {
                                Ok(results) => {
                                    for batch in results {
                                        session.give(Part { dest: 0, batch });
                                    }
                                }
                                Err(e) => windows_shared.fail(e),
                            }
                        }
                    });
                }
            })
            .probe_with(&probe)
            .sink(
                Exchange::new(Part::route),
                "SliqGather",
                move |(input, frontier)| {
                    input.for_each(|_, parts: &mut Vec<Part>| {
                        for part in parts.drain(..) {
                            gather.deliver(&gather_shared, part.batch);
                        }
                    });
                    gather_shared
                        .progress
                        .record_frontier(frontier.frontier().first().copied());
                },
            );
    });

    let local = index % shared.local_workers;
    let sources = shared.take_sources(local);
    let mut newest = None;
    if !sources.is_empty() {
        let feeder = Feeder {
            local,
            stream: schema_check,
            event_time: event_time_column(job),
            in_flight,
        };
        newest = feeder.feed(
            worker,
            &mut input,
            &probe,
            &sources,
            &mut partitioner,
            shared,
        );
    }
    drop(input);
    while worker.has_dataflows() {
        worker.step_or_park(Some(Duration::from_millis(10)));
    }
    if let Some(newest) = newest {
        // Every epoch is complete now.
        shared.progress.record_watermark(local, newest);
    }

    let stats = engine.stats();
    // From the handle: a query that reached its LIMIT is no longer in the
    // engine's list, but its handle keeps its counters.
    let query_stats = query.stats();
    drop(query);
    let stream_stats = stats.streams.first().cloned().unwrap_or_default();
    Ok(WorkerStats {
        index,
        rows: stream_stats.rows,
        batches: stream_stats.batches,
        late_rows: stream_stats.late_rows,
        untimed_rows: query_stats.untimed_rows,
        failed_results: query_stats.failed_results,
        last_failure: query_stats
            .last_failed_row
            .map(|f| format!("a row of stream '{}': {}", f.stream, f.message)),
        keys: query_stats.keys.iter().copied().max().unwrap_or(0),
        rows_out: query_stats.rows_out,
    })
}

/// Pushes one part through the worker's engine and collects its results.
fn process(
    stream: &sliq_engine::Stream,
    query: &sliq_engine::Query,
    batch: RecordBatch,
) -> Result<Vec<RecordBatch>, TimelyError> {
    stream.push(batch)?;
    let mut results = Vec::new();
    loop {
        match query.try_recv() {
            Ok(Some(out)) if out.num_rows() > 0 => results.push(out),
            Ok(Some(_)) => {}
            // The query reached its LIMIT here; the gather trims the total.
            Ok(None) | Err(EngineError::Closed) => return Ok(results),
            Err(e) => return Err(e.into()),
        }
    }
}

/// The index of the stream's event-time column, if it has one.
fn event_time_column(job: &Job) -> Option<usize> {
    let name = job.options().event_time_column()?;
    job.schema().index_of(name).ok()
}

/// The largest event time (ms) in `batch`'s column `column`.
fn max_event_time(batch: &RecordBatch, column: usize) -> Option<i64> {
    let values = arrow_cast::cast(batch.column(column), &DataType::Int64).ok()?;
    values.as_primitive::<Int64Type>().iter().flatten().max()
}

/// What a source worker needs to feed the dataflow.
struct Feeder {
    /// This worker's index in its process.
    local: usize,
    /// The worker's stream, to check each batch's schema before splitting.
    stream: sliq_engine::Stream,
    /// The stream's event-time column.
    event_time: Option<usize>,
    /// Epochs that may be unfinished before reading waits.
    in_flight: u64,
}

type PartInput = InputHandle<u64, timely::container::CapacityContainerBuilder<Vec<Part>>>;

impl Feeder {
    /// Reads `sources` into the dataflow until they end or the run stops,
    /// keeping at most `in_flight` epochs unfinished; returns the newest
    /// event time read.
    fn feed(
        &self,
        worker: &mut Worker,
        input: &mut PartInput,
        probe: &ProbeHandle<u64>,
        sources: &[(usize, SourceRx)],
        partitioner: &mut Partitioner,
        shared: &Shared,
    ) -> Option<i64> {
        let peers = worker.peers();
        let mut open: Vec<bool> = vec![true; sources.len()];
        // (epoch, newest event time read up to it), oldest first.
        let mut pending: VecDeque<(u64, i64)> = VecDeque::new();
        let mut newest: Option<i64> = None;
        while open.iter().any(|&o| o) && !shared.stopped() {
            let epoch = *input.time();
            // Too many epochs unfinished: let the workers catch up, parking
            // (rather than spinning) while they hold both cores.
            while probe.less_than(&epoch.saturating_sub(self.in_flight)) && !shared.stopped() {
                worker.step_or_park(Some(Duration::from_millis(1)));
            }
            let mut received = false;
            for (open, (source_index, rx)) in open.iter_mut().zip(sources) {
                if !*open {
                    continue;
                }
                let fail = |message| TimelyError::Source {
                    source_index: *source_index,
                    message,
                };
                match rx.try_recv() {
                    Ok(Ok(batch)) => {
                        received = true;
                        shared
                            .progress
                            .rows_read
                            .fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
                        let parts = self
                            .stream
                            .check_schema(&batch)
                            .map_err(TimelyError::Engine)
                            .and_then(|()| partitioner.split(&batch, peers).map_err(fail));
                        match parts {
                            Ok(parts) => {
                                let time = self.event_time.and_then(|c| max_event_time(&batch, c));
                                if let Some(t) = time {
                                    newest = Some(newest.map_or(t, |n| n.max(t)));
                                }
                                for (dest, batch) in parts {
                                    input.send(Part { dest, batch });
                                }
                            }
                            Err(e) => shared.fail(e),
                        }
                        let epoch = *input.time();
                        if let Some(newest) = newest {
                            pending.push_back((epoch, newest));
                        }
                        input.advance_to(epoch + 1);
                    }
                    Ok(Err(message)) => {
                        *open = false;
                        shared.fail(fail(message));
                    }
                    Err(TryRecvError::Disconnected) => *open = false,
                    Err(TryRecvError::Empty) => {}
                }
            }
            // Epochs no worker holds any more are complete: the event times
            // read up to them are the watermark.
            while let Some(&(epoch, time)) = pending.front() {
                if probe.less_equal(&epoch) {
                    break;
                }
                pending.pop_front();
                shared.progress.record_watermark(self.local, time);
            }
            if received {
                worker.step();
            } else {
                worker.step_or_park(Some(Duration::from_millis(1)));
            }
        }
        newest
    }
}

//! Streams: the state a stream shares with its queries, and the [`Stream`]
//! handle that pushes batches through them.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{Schema, SchemaRef};
use crossbeam_channel::Sender;
use datafusion_common::DFSchema;
use parking_lot::{Mutex, RwLock};

use crate::error::EngineError;
use crate::expr::physical_expr;
use crate::options::{OnLate, StreamOptions};
use crate::query::{CompiledQuery, event_time_millis};
use crate::stats::{QueryStats, RowFailure, StreamInfo, StreamStats};

/// A query as the stream it reads sees it: where its results go and what
/// it counts.
pub(crate) struct QueryState {
    pub(crate) id: u64,
    pub(crate) sql: String,
    pub(crate) stream: String,
    pub(crate) schema: SchemaRef,
    /// Shared with the [`Query`](crate::Query) handle, which outlives the registration
    /// (after `LIMIT`, or once the stream is dropped).
    pub(crate) compiled: Arc<Mutex<CompiledQuery>>,
    pub(crate) sender: Sender<Result<RecordBatch, EngineError>>,
    pub(crate) stats: Arc<Mutex<QueryStats>>,
    /// `LIMIT n`: stop after `n` rows.
    pub(crate) limit: Option<u64>,
    /// Which of the stream's columns the query reads (by position).
    pub(crate) columns_read: Vec<bool>,
}

/// A snapshot of a query's counters, with its current key counts.
pub(crate) fn query_stats(
    stats: &Mutex<QueryStats>,
    compiled: &Mutex<CompiledQuery>,
) -> QueryStats {
    let mut snapshot = stats.lock().clone();
    let compiled = compiled.lock();
    snapshot.keys = compiled.key_counts();
    snapshot.forgotten_keys = compiled.forgotten_keys();
    snapshot
}

/// A stream, shared by its [`Stream`] handles, its queries and the engine.
pub(crate) struct StreamState {
    pub(crate) name: String,
    pub(crate) schema: SchemaRef,
    pub(crate) options: StreamOptions,
    /// The queries reading the stream; replaced whole (copy on write) when
    /// one starts or stops, so that a push takes a snapshot without copying.
    pub(crate) queries: RwLock<Arc<Vec<Arc<QueryState>>>>,
    /// Serializes pushes, so every query sees batches in one order.
    pub(crate) push_lock: Mutex<()>,
    /// The newest event time pushed so far (`i64::MIN` before any), kept
    /// when idle keys are forgotten (`key_ttl`): their clock.
    pub(crate) clock: Mutex<i64>,
    pub(crate) stats: Mutex<StreamStats>,
}

impl StreamState {
    /// Each row's clock, when idle keys are forgotten (`key_ttl`): the
    /// newest event time of the stream's rows up to and including it (rows
    /// without one keep the clock where it was). `None` without `key_ttl`.
    /// The stream's clock moves on only once the batch is accepted
    /// ([`StreamState::set_clock`]).
    fn clocks(&self, batch: &RecordBatch) -> Option<Vec<i64>> {
        self.options.key_ttl_ms()?;
        let column = batch
            .schema()
            .index_of(self.options.event_time_column()?)
            .ok()?;
        let times = event_time_millis(Arc::clone(batch.column(column))).ok()?;
        let mut now = *self.clock.lock();
        Some(
            times
                .as_primitive::<Int64Type>()
                .iter()
                .map(|t| {
                    now = now.max(t.unwrap_or(i64::MIN));
                    now
                })
                .collect(),
        )
    }

    /// Moves the stream's clock on to the last of an accepted batch's
    /// [`clocks`](StreamState::clocks).
    fn set_clock(&self, clocks: &[i64]) {
        if let Some(&last) = clocks.last() {
            *self.clock.lock() = last;
        }
    }

    /// Replaces the list of queries with `change` applied to a copy.
    pub(crate) fn update_queries(&self, change: impl FnOnce(&mut Vec<Arc<QueryState>>)) {
        let mut queries = self.queries.write();
        let mut updated = queries.as_ref().clone();
        change(&mut updated);
        *queries = Arc::new(updated);
    }
}

/// A batch of literal rows (`INSERT … VALUES`) with the stream's schema.
pub(crate) fn literal_batch(
    schema: &SchemaRef,
    rows: &[Vec<datafusion_expr::Expr>],
) -> Result<RecordBatch, EngineError> {
    let fail = EngineError::Compile;
    let empty = DFSchema::empty();
    let one_row = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )
    .map_err(|e| fail(e.to_string()))?;
    let mut columns: Vec<Vec<ArrayRef>> = vec![Vec::new(); schema.fields().len()];
    for (r, row) in rows.iter().enumerate() {
        for (i, e) in row.iter().enumerate() {
            let physical =
                physical_expr(e, &empty).map_err(|err| fail(format!("INSERT value {e}: {err}")))?;
            let value = physical
                .evaluate(&one_row)
                .and_then(|v| v.into_array(1))
                .map_err(|err| fail(format!("INSERT value {e}: {err}")))?;
            let field = schema.field(i);
            let value = arrow_cast::cast(&value, field.data_type())
                .map_err(|err| fail(format!("INSERT value {e}: {err}")))?;
            if !field.is_nullable() && value.is_null(0) {
                return Err(fail(format!(
                    "INSERT row {}: column '{}' is NOT NULL, but its value is NULL",
                    r + 1,
                    field.name()
                )));
            }
            if let Some(column) = columns.get_mut(i) {
                column.push(value);
            }
        }
    }
    let arrays = columns
        .iter()
        .map(|parts| {
            let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|a| a.as_ref()).collect();
            arrow_select::concat::concat(&refs).map_err(|e| fail(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(Arc::clone(schema), arrays).map_err(|e| fail(e.to_string()))
}

/// A handle for pushing batches into a stream. Cheap to clone.
#[derive(Clone)]
pub struct Stream {
    pub(crate) state: Arc<StreamState>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("name", &self.state.name)
            .finish_non_exhaustive()
    }
}

impl Stream {
    /// The stream's name.
    pub fn name(&self) -> &str {
        &self.state.name
    }

    /// The stream's schema.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.state.schema)
    }

    /// Which of the stream's columns (by position) a running query reads:
    /// those its expressions name, its `RANGE` windows' event time, and the
    /// stream's event time when idle keys are forgotten by it (`key_ttl`).
    /// A source may leave the others NULL without any query's results
    /// changing, until another query starts.
    pub fn columns_read(&self) -> Vec<bool> {
        let state = &self.state;
        let mut read = vec![false; state.schema.fields().len()];
        if state.options.key_ttl_ms().is_some()
            && let Some(column) = state.options.event_time_column()
        {
            sliq_sql::mark_column(&state.schema, column, &mut read);
        }
        for query in state.queries.read().iter() {
            for (read, &by_query) in read.iter_mut().zip(&query.columns_read) {
                *read |= by_query;
            }
        }
        read
    }

    /// Name, schema, options and number of queries.
    pub fn info(&self) -> StreamInfo {
        StreamInfo {
            name: self.state.name.clone(),
            schema: self.schema(),
            options: self.state.options.clone(),
            queries: self.state.queries.read().len(),
        }
    }

    /// Checks that `batch` has the stream's schema (what [`Stream::push`]
    /// checks first), spelling out every difference.
    pub fn check_schema(&self, batch: &RecordBatch) -> Result<(), EngineError> {
        check_schema(&self.state.schema, batch).map_err(|details| EngineError::SchemaMismatch {
            stream: self.state.name.clone(),
            details,
        })
    }

    /// Pushes a batch through every query of the stream, in order.
    ///
    /// A batch whose schema differs is rejected whole, with each difference
    /// spelled out; so is one with late rows when the stream is declared
    /// `on_late = 'error'`. Blocks while a query's subscriber lags
    /// (backpressure: no result is dropped). A query whose expressions fail
    /// on this batch receives the error instead of a result; the others are
    /// unaffected.
    pub fn push(&self, batch: RecordBatch) -> Result<(), EngineError> {
        let state = &self.state;
        if let Err(e) = self.check_schema(&batch) {
            state.stats.lock().rejected_batches += 1;
            return Err(e);
        }
        let _order = state.push_lock.lock();
        // The stream's rows before this batch: they number its rows.
        let rows_before = state.stats.lock().rows;
        let queries = Arc::clone(&state.queries.read());
        let clocks = state.clocks(&batch);
        if state.options.late_policy() == OnLate::Error {
            for q in queries.iter() {
                let late = q.compiled.lock().find_late(&batch, clocks.as_deref());
                if let Ok(late) = late
                    && let Some(first) = late.first()
                {
                    state.stats.lock().rejected_batches += 1;
                    return Err(EngineError::LateRows {
                        stream: state.name.clone(),
                        count: late.len(),
                        first_row: first.row,
                        event_time: first.event_time,
                        newest: first.newest,
                    });
                }
            }
        }
        if let Some(clocks) = &clocks {
            state.set_clock(clocks);
        }
        let mut late_rows = 0;
        for q in queries.iter() {
            // A bug in an expression kernel must not take the engine down:
            // the query that hit it stops with an error, the others go on.
            let mut finished = false;
            let result =
                sliq_sql::panics::catching(|| q.compiled.lock().process(&batch, clocks.as_deref()))
                    .unwrap_or_else(|what| {
                        finished = true;
                        Err(format!("internal error ({what}); the query is stopped"))
                    });
            let message = {
                let mut stats = q.stats.lock();
                stats.batches += 1;
                match result {
                    Ok((mut output, outcome)) => {
                        if let Some(limit) = q.limit {
                            let left = limit.saturating_sub(stats.rows_out) as usize;
                            if output.num_rows() >= left {
                                output = output.slice(0, left);
                                finished = true;
                            }
                        }
                        stats.rows_out += output.num_rows() as u64;
                        stats.late_rows += outcome.late_rows as u64;
                        stats.untimed_rows += outcome.untimed_rows as u64;
                        stats.failed_results += outcome.failures.count as u64;
                        if let Some(first) = outcome.failures.first {
                            let failure = RowFailure {
                                stream: state.name.clone(),
                                rows: rows_before + first.rows.start as u64 + 1
                                    ..=rows_before + first.rows.end as u64,
                                message: first.message,
                            };
                            stats.last_error = Some(failure.to_string());
                            stats.last_failed_row = Some(failure);
                        }
                        late_rows = late_rows.max(outcome.late_rows);
                        Ok(output)
                    }
                    Err(message) => {
                        stats.failed_batches += 1;
                        stats.last_error = Some(message.clone());
                        Err(EngineError::Evaluation {
                            query: q.id,
                            message,
                        })
                    }
                }
            };
            // A dropped subscriber is unregistered by its handle; ignore it here.
            let _ = q.sender.send(message);
            if finished {
                // LIMIT reached, or an internal error: the query ends; its
                // handle drains what was sent.
                let id = q.id;
                state.update_queries(|queries| queries.retain(|q| q.id != id));
            }
        }
        let mut stats = state.stats.lock();
        stats.rows += batch.num_rows() as u64;
        stats.batches += 1;
        stats.late_rows += late_rows as u64;
        Ok(())
    }
}

/// Compares a batch's schema with the stream's, listing every difference.
fn check_schema(expected: &Schema, batch: &RecordBatch) -> Result<(), String> {
    let got = batch.schema();
    let mut problems = Vec::new();
    if got.fields().len() != expected.fields().len() {
        let names = |s: &Schema| {
            s.fields()
                .iter()
                .map(|f| format!("{} {}", f.name(), f.data_type()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        problems.push(format!(
            "expected {} columns ({}), got {} ({})",
            expected.fields().len(),
            names(expected),
            got.fields().len(),
            names(&got)
        ));
    } else {
        for (i, (e, g)) in expected.fields().iter().zip(got.fields()).enumerate() {
            if e.name() != g.name() {
                problems.push(format!(
                    "column {} is named '{}', expected '{}'",
                    i + 1,
                    g.name(),
                    e.name()
                ));
            }
            if e.data_type() != g.data_type() {
                problems.push(format!(
                    "column '{}' is {}, expected {}",
                    e.name(),
                    g.data_type(),
                    e.data_type()
                ));
            }
            let nulls = batch.column(i).null_count();
            if !e.is_nullable() && nulls > 0 {
                problems.push(format!(
                    "column '{}' is NOT NULL but has {nulls} NULL value(s)",
                    e.name()
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

//! The [`Query`] handle: a running query's results and counters; dropping it
//! stops the query.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};
use parking_lot::Mutex;

use crate::error::EngineError;
use crate::query::CompiledQuery;
use crate::stats::QueryStats;
use crate::stream::{StreamState, query_stats};

/// A running continuous query: one result batch per pushed batch.
/// Dropping the handle stops the query.
pub struct Query {
    pub(crate) id: u64,
    pub(crate) schema: SchemaRef,
    pub(crate) limit: Option<u64>,
    pub(crate) receiver: Receiver<Result<RecordBatch, EngineError>>,
    pub(crate) stats: Arc<Mutex<QueryStats>>,
    pub(crate) compiled: Arc<Mutex<CompiledQuery>>,
    pub(crate) stream: Arc<StreamState>,
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("id", &self.id)
            .field("stream", &self.stream.name)
            .finish_non_exhaustive()
    }
}

impl Query {
    /// The query's id (as in `SHOW QUERIES`).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The result schema.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// The query's `LIMIT`, if it has one.
    pub fn limit(&self) -> Option<u64> {
        self.limit
    }

    /// A snapshot of its counters (as in [`Engine::stats`](crate::Engine::stats)), also after it
    /// stopped at its `LIMIT` or its stream was dropped.
    pub fn stats(&self) -> QueryStats {
        query_stats(&self.stats, &self.compiled)
    }

    /// Its latest row whose value could not be computed (as in
    /// [`QueryStats::last_failed_row`]), without the rest of the counters:
    /// cheap enough to ask after every batch.
    pub fn last_failed_row(&self) -> Option<crate::RowFailure> {
        self.stats.lock().last_failed_row.clone()
    }

    /// The next result, waiting for it. [`EngineError::Closed`] once the
    /// stream is dropped and every result was received.
    pub fn recv(&self) -> Result<RecordBatch, EngineError> {
        self.receiver.recv().map_err(|_| EngineError::Closed)?
    }

    /// The next result if one is ready.
    pub fn try_recv(&self) -> Result<Option<RecordBatch>, EngineError> {
        match self.receiver.try_recv() {
            Ok(result) => result.map(Some),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(EngineError::Closed),
        }
    }

    /// The next result, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<RecordBatch, EngineError> {
        match self.receiver.recv_timeout(timeout) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => Err(EngineError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(EngineError::Closed),
        }
    }

    /// Results as they come, until the stream is dropped.
    pub fn iter(&self) -> impl Iterator<Item = Result<RecordBatch, EngineError>> + '_ {
        self.receiver.iter()
    }
}

impl Drop for Query {
    fn drop(&mut self) {
        let id = self.id;
        self.stream
            .update_queries(|queries| queries.retain(|q| q.id != id));
    }
}

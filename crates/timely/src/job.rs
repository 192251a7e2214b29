//! What to run: a stream's definition and one continuous query over it.

use std::sync::Arc;

use arrow_schema::SchemaRef;
use sliq_engine::{Engine, EngineError, Query, Stream, StreamOptions, WindowAlgorithm};

/// Extra setup run on every worker's engine before the query starts, e.g.
/// `register_aggregate` for user-defined aggregates.
pub type Setup = Arc<dyn Fn(&Engine) -> Result<(), EngineError> + Send + Sync>;

/// A stream and a continuous `SELECT` over it, as every worker runs it.
///
/// Each worker builds its own [`Engine`] from the job: the same planner,
/// the same compiled expressions and the same per-key window operators as
/// an embedded engine, fed only the rows whose keys hash to that worker.
#[derive(Clone)]
pub struct Job {
    stream: String,
    schema: SchemaRef,
    options: StreamOptions,
    query: String,
    algorithm: Option<WindowAlgorithm>,
    setup: Option<Setup>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("stream", &self.stream)
            .field("query", &self.query)
            .finish_non_exhaustive()
    }
}

/// One worker's engine, its stream and the running query.
pub(crate) struct Instance {
    pub engine: Engine,
    pub stream: Stream,
    pub query: Query,
}

impl Job {
    /// `query` over the stream `stream` with this schema and options (as
    /// `Engine::register_stream` takes them).
    pub fn new(
        stream: impl Into<String>,
        schema: SchemaRef,
        options: StreamOptions,
        query: impl Into<String>,
    ) -> Self {
        Job {
            stream: stream.into(),
            schema,
            options,
            query: query.into(),
            algorithm: None,
            setup: None,
        }
    }

    /// Runs the windows with `algorithm` instead of the default DABA Lite.
    pub fn window_algorithm(mut self, algorithm: WindowAlgorithm) -> Self {
        self.algorithm = Some(algorithm);
        self
    }

    /// Runs `setup` on every worker's engine before the query starts.
    pub fn setup(
        mut self,
        setup: impl Fn(&Engine) -> Result<(), EngineError> + Send + Sync + 'static,
    ) -> Self {
        self.setup = Some(Arc::new(setup));
        self
    }

    /// The query text.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The stream's schema.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// The stream's options.
    pub fn options(&self) -> &StreamOptions {
        &self.options
    }

    /// A fresh engine with the stream registered and the query running.
    pub(crate) fn instantiate(&self) -> Result<Instance, EngineError> {
        let mut builder = Engine::builder().channel_capacity(4);
        if let Some(algorithm) = self.algorithm {
            builder = builder.window_algorithm(algorithm);
        }
        let engine = builder.build();
        if let Some(setup) = &self.setup {
            setup(&engine)?;
        }
        let stream =
            engine.register_stream(&self.stream, Arc::clone(&self.schema), self.options.clone())?;
        let query = engine.query(&self.query)?;
        Ok(Instance {
            engine,
            stream,
            query,
        })
    }
}

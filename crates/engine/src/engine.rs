//! The embedding API: [`Engine`], [`Stream`] handles and [`Query`] handles.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::partition::Partitioner;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{Schema, SchemaRef};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use datafusion_common::DFSchema;
use datafusion_expr::execution_props::ExecutionProps;
use datafusion_expr::physical_planning_context::PhysicalPlanningContext;
use parking_lot::{Mutex, RwLock};
use sliq_aggregates::{Aggregate, OutputType, ValueType};
use sliq_sql::{
    Catalog, FunctionInfo, QueryPlan, Statement, StreamDefinition, UserAggregate, closest, plan_sql,
};

use crate::error::EngineError;
use crate::operator::WindowAlgorithm;
use crate::query::CompiledQuery;
use crate::udaf::RegisteredAggregate;

/// What happens to a row whose event time is below its key's newest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnLate {
    /// The row still emits a result, with NULL for its RANGE aggregates,
    /// and is counted in the statistics.
    #[default]
    Null,
    /// The whole push fails with [`EngineError::LateRows`]; nothing changes.
    Error,
}

/// How a stream behaves.
#[derive(Clone, Debug, Default)]
pub struct StreamOptions {
    event_time: Option<String>,
    on_late: OnLate,
    extra: Vec<(String, String)>,
}

impl StreamOptions {
    /// Names the event-time column used by `RANGE` frames (TIMESTAMP, or
    /// BIGINT as epoch milliseconds).
    pub fn event_time(mut self, column: &str) -> Self {
        self.event_time = Some(column.to_string());
        self
    }

    /// Sets the late-row policy.
    pub fn on_late(mut self, policy: OnLate) -> Self {
        self.on_late = policy;
        self
    }

    /// Keeps another option (such as a source's `path`), for tools built
    /// on the engine; the engine itself only reports it in `DESCRIBE`.
    pub fn option(mut self, key: &str, value: &str) -> Self {
        self.extra
            .push((key.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// The event-time column, if any.
    pub fn event_time_column(&self) -> Option<&str> {
        self.event_time.as_deref()
    }

    /// The late-row policy.
    pub fn late_policy(&self) -> OnLate {
        self.on_late
    }

    /// The other options, in the order given.
    pub fn options(&self) -> &[(String, String)] {
        &self.extra
    }

    fn from_definition(def: &StreamDefinition) -> Result<Self, EngineError> {
        let mut options = StreamOptions::default();
        for (key, value) in &def.options {
            match key.as_str() {
                "event_time" => options.event_time = Some(value.clone()),
                "on_late" => {
                    options.on_late = match value.to_ascii_lowercase().as_str() {
                        "null" | "emit" => OnLate::Null,
                        "error" => OnLate::Error,
                        other => {
                            return Err(EngineError::InvalidSetting(format!(
                                "on_late = '{other}': expected 'null' or 'error'"
                            )));
                        }
                    }
                }
                _ => options.extra.push((key.clone(), value.clone())),
            }
        }
        Ok(options)
    }
}

/// Counters of one stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// The stream.
    pub name: String,
    /// Rows accepted.
    pub rows: u64,
    /// Batches accepted.
    pub batches: u64,
    /// Rows that were late for some query's RANGE window (counted once per
    /// row, whichever query saw it late).
    pub late_rows: u64,
    /// Batches rejected (schema mismatch, late rows under `on_late = 'error'`).
    pub rejected_batches: u64,
}

/// Counters of one query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryStats {
    /// The query's id.
    pub id: u64,
    /// Its stream.
    pub stream: String,
    /// Its text.
    pub sql: String,
    /// Batches processed.
    pub batches: u64,
    /// Rows emitted.
    pub rows_out: u64,
    /// Rows late for one of its RANGE windows.
    pub late_rows: u64,
    /// Values that could not be computed from a row's data (integer division
    /// by zero, overflow, a failing CAST) and were emitted as NULL.
    pub failed_results: u64,
    /// Batches whose evaluation failed (an error was delivered instead).
    pub failed_batches: u64,
    /// The latest failure, if any.
    pub last_error: Option<String>,
    /// Distinct keys, per window group.
    pub keys: Vec<usize>,
}

/// A snapshot of the engine's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// One entry per stream, by name.
    pub streams: Vec<StreamStats>,
    /// One entry per live query, by id.
    pub queries: Vec<QueryStats>,
}

/// What `DESCRIBE` and `SHOW STREAMS` tell about a stream.
#[derive(Clone, Debug)]
pub struct StreamInfo {
    /// The stream's name.
    pub name: String,
    /// Its columns.
    pub schema: SchemaRef,
    /// Its options.
    pub options: StreamOptions,
    /// Queries reading it.
    pub queries: usize,
}

/// What `SHOW QUERIES` tells about a query.
#[derive(Clone, Debug)]
pub struct QueryInfo {
    /// The query's id.
    pub id: u64,
    /// Its stream.
    pub stream: String,
    /// Its text.
    pub sql: String,
    /// Its result columns.
    pub schema: SchemaRef,
}

/// The result of one statement run by [`Engine::execute`].
#[derive(Debug)]
pub enum Executed {
    /// `CREATE STREAM`
    StreamCreated(Stream),
    /// `DROP STREAM` (false: it did not exist and `IF EXISTS` was given).
    StreamDropped(String, bool),
    /// `SHOW STREAMS`
    Streams(Vec<StreamInfo>),
    /// `SHOW QUERIES`
    Queries(Vec<QueryInfo>),
    /// `SHOW FUNCTIONS`: built-in aggregates, user aggregates, scalar
    /// functions.
    Functions(Vec<FunctionInfo>),
    /// `DESCRIBE`
    Described(StreamInfo),
    /// `EXPLAIN`
    Explained(String),
    /// `SET`
    Set(String, String),
    /// `INSERT`: rows pushed into the stream.
    Inserted(String, usize),
    /// `SELECT`: the running query.
    Query(Query),
}

struct QueryState {
    id: u64,
    sql: String,
    stream: String,
    schema: SchemaRef,
    /// Shared with the [`Query`] handle, which outlives the registration
    /// (after `LIMIT`, or once the stream is dropped).
    compiled: Arc<Mutex<CompiledQuery>>,
    sender: Sender<Result<RecordBatch, EngineError>>,
    stats: Arc<Mutex<QueryStats>>,
    /// `LIMIT n`: stop after `n` rows.
    limit: Option<u64>,
}

/// A snapshot of a query's counters, with its current key counts.
fn query_stats(stats: &Mutex<QueryStats>, compiled: &Mutex<CompiledQuery>) -> QueryStats {
    let mut snapshot = stats.lock().clone();
    snapshot.keys = compiled.lock().key_counts();
    snapshot
}

struct StreamState {
    name: String,
    schema: SchemaRef,
    options: StreamOptions,
    /// The queries reading the stream; replaced whole (copy on write) when
    /// one starts or stops, so that a push takes a snapshot without copying.
    queries: RwLock<Arc<Vec<Arc<QueryState>>>>,
    /// Serializes pushes, so every query sees batches in one order.
    push_lock: Mutex<()>,
    stats: Mutex<StreamStats>,
}

impl StreamState {
    fn update_queries(&self, change: impl FnOnce(&mut Vec<Arc<QueryState>>)) {
        let mut queries = self.queries.write();
        let mut updated = queries.as_ref().clone();
        change(&mut updated);
        *queries = Arc::new(updated);
    }
}

struct Inner {
    streams: RwLock<BTreeMap<String, Arc<StreamState>>>,
    aggregates: RwLock<BTreeMap<String, Arc<RegisteredAggregate>>>,
    algorithm: Mutex<WindowAlgorithm>,
    channel_capacity: usize,
    next_query: AtomicU64,
}

/// The continuous query engine. Cheap to clone (a shared handle), `Send`
/// and `Sync`: streams can be pushed from several threads.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Float64Array, RecordBatch, StringArray};
/// use arrow_schema::{DataType, Field, Schema};
/// use sliq_engine::{Engine, StreamOptions};
///
/// let engine = Engine::new();
/// let schema = Arc::new(Schema::new(vec![
///     Field::new("key", DataType::Utf8, true),
///     Field::new("v", DataType::Float64, true),
/// ]));
/// let s = engine.register_stream("s", schema.clone(), StreamOptions::default())?;
/// let q = engine.query("SELECT key, max(v) OVER (ROWS 1 PRECEDING) AS m FROM s GROUP BY key")?;
/// s.push(RecordBatch::try_new(schema, vec![
///     Arc::new(StringArray::from(vec!["a", "b", "a", "a"])),
///     Arc::new(Float64Array::from(vec![1.0, 5.0, 3.0, 2.0])),
/// ])?)?;
/// let out = q.recv()?;
/// let m = out.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
/// assert_eq!(m.values().to_vec(), vec![1.0, 5.0, 3.0, 3.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("streams", &self.inner.streams.read().len())
            .finish_non_exhaustive()
    }
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

/// Settings for a new [`Engine`].
#[derive(Clone, Debug)]
pub struct EngineBuilder {
    channel_capacity: usize,
    algorithm: WindowAlgorithm,
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            channel_capacity: 64,
            algorithm: WindowAlgorithm::DabaLite,
        }
    }
}

impl EngineBuilder {
    /// How many result batches a query buffers before `push` waits for its
    /// subscriber (backpressure; default 64). A program that pushes and
    /// receives on one thread must receive before the buffer fills.
    pub fn channel_capacity(mut self, batches: usize) -> Self {
        self.channel_capacity = batches.max(1);
        self
    }

    /// The window algorithm of new queries (default DABA Lite).
    pub fn window_algorithm(mut self, algorithm: WindowAlgorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// The engine.
    pub fn build(self) -> Engine {
        Engine {
            inner: Arc::new(Inner {
                streams: RwLock::new(BTreeMap::new()),
                aggregates: RwLock::new(BTreeMap::new()),
                algorithm: Mutex::new(self.algorithm),
                channel_capacity: self.channel_capacity,
                next_query: AtomicU64::new(1),
            }),
        }
    }
}

struct EngineCatalog<'a>(&'a Inner);

impl Catalog for EngineCatalog<'_> {
    fn stream(&self, name: &str) -> Option<(SchemaRef, Option<String>)> {
        find_stream(&self.0.streams.read(), name)
            .map(|s| (Arc::clone(&s.schema), s.options.event_time.clone()))
    }
    fn stream_names(&self) -> Vec<String> {
        self.0.streams.read().keys().cloned().collect()
    }
    fn user_aggregate(&self, name: &str) -> Option<Arc<dyn UserAggregate>> {
        self.0
            .aggregates
            .read()
            .get(name)
            .map(|a| Arc::clone(a) as Arc<dyn UserAggregate>)
    }
}

fn find_stream(
    streams: &BTreeMap<String, Arc<StreamState>>,
    name: &str,
) -> Option<Arc<StreamState>> {
    streams
        .get(name)
        .or_else(|| {
            streams
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        })
        .cloned()
}

impl Engine {
    /// An engine with default settings.
    pub fn new() -> Self {
        EngineBuilder::default().build()
    }

    /// Settings for a new engine.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// Registers a stream with `schema`; batches pushed to it must have
    /// exactly these columns and types.
    pub fn register_stream(
        &self,
        name: &str,
        schema: SchemaRef,
        options: StreamOptions,
    ) -> Result<Stream, EngineError> {
        if name.trim().is_empty() {
            return Err(EngineError::InvalidSetting(
                "a stream needs a name that is not blank".into(),
            ));
        }
        // SQL resolves names without regard to case, so `a` and `A` would be
        // ambiguous in every query.
        let fields = schema.fields();
        if let Some(twice) = fields.iter().enumerate().find_map(|(i, f)| {
            fields[..i]
                .iter()
                .any(|g| g.name().eq_ignore_ascii_case(f.name()))
                .then_some(f)
        }) {
            return Err(EngineError::InvalidSetting(format!(
                "stream '{name}': column '{}' appears twice (names are compared without regard to case)",
                twice.name()
            )));
        }
        if let Some(column) = &options.event_time {
            let ok = schema.field_with_name(column).is_ok_and(|f| {
                matches!(
                    f.data_type(),
                    arrow_schema::DataType::Timestamp(_, _)
                        | arrow_schema::DataType::Int64
                        | arrow_schema::DataType::Int32
                )
            });
            if !ok {
                return Err(EngineError::InvalidSetting(format!(
                    "event_time '{column}' must name a TIMESTAMP or BIGINT column of stream '{name}'"
                )));
            }
        }
        let mut streams = self.inner.streams.write();
        if find_stream(&streams, name).is_some() {
            return Err(EngineError::StreamExists(name.to_string()));
        }
        let state = Arc::new(StreamState {
            name: name.to_string(),
            schema,
            options,
            queries: RwLock::new(Arc::new(Vec::new())),
            push_lock: Mutex::new(()),
            stats: Mutex::new(StreamStats {
                name: name.to_string(),
                ..Default::default()
            }),
        });
        streams.insert(name.to_string(), Arc::clone(&state));
        Ok(Stream { state })
    }

    /// A handle to an existing stream.
    pub fn stream(&self, name: &str) -> Result<Stream, EngineError> {
        let streams = self.inner.streams.read();
        find_stream(&streams, name)
            .map(|state| Stream { state })
            .ok_or_else(|| EngineError::UnknownStream {
                name: name.to_string(),
                suggestion: closest(name, streams.keys().map(String::as_str)),
            })
    }

    /// Removes a stream; its queries end (their `recv` returns
    /// [`EngineError::Closed`] once drained).
    pub fn drop_stream(&self, name: &str) -> Result<(), EngineError> {
        let removed = {
            let mut streams = self.inner.streams.write();
            let key = streams
                .keys()
                .find(|k| k.eq_ignore_ascii_case(name))
                .cloned();
            key.and_then(|k| streams.remove(&k))
        };
        match removed {
            Some(state) => {
                *state.queries.write() = Arc::new(Vec::new());
                Ok(())
            }
            None => Err(self.unknown_stream(name)),
        }
    }

    fn unknown_stream(&self, name: &str) -> EngineError {
        let streams = self.inner.streams.read();
        EngineError::UnknownStream {
            name: name.to_string(),
            suggestion: closest(name, streams.keys().map(String::as_str)),
        }
    }

    /// Registers a user-defined aggregate function, callable from SQL as
    /// `name(args) OVER (…)`. `aggregate` is any [`Aggregate`] (a monoid
    /// with lift and lower); it receives arguments of types `inputs`.
    pub fn register_aggregate<A: Aggregate>(
        &self,
        name: &str,
        inputs: Vec<ValueType>,
        output: OutputType,
        aggregate: A,
    ) -> Result<(), EngineError> {
        let lower = name.to_ascii_lowercase();
        if sliq_aggregates::registry::is_aggregate(&lower) {
            return Err(EngineError::InvalidSetting(format!(
                "'{name}' is a built-in aggregate"
            )));
        }
        let registered = Arc::new(RegisteredAggregate::new(&lower, inputs, output, aggregate));
        self.inner.aggregates.write().insert(lower, registered);
        Ok(())
    }

    /// The window algorithm new queries use.
    pub fn window_algorithm(&self) -> WindowAlgorithm {
        *self.inner.algorithm.lock()
    }

    /// Sets the window algorithm for queries created after this call.
    pub fn set_window_algorithm(&self, algorithm: WindowAlgorithm) {
        *self.inner.algorithm.lock() = algorithm;
    }

    fn plan(&self, sql: &str) -> Result<Vec<Statement>, EngineError> {
        Ok(plan_sql(sql, &EngineCatalog(&self.inner))?)
    }

    /// Starts a continuous query; its results arrive on the returned handle.
    pub fn query(&self, sql: &str) -> Result<Query, EngineError> {
        let mut statements = self.plan(sql)?;
        match (statements.pop(), statements.is_empty()) {
            (Some(Statement::Query(plan)), true) => self.start(&plan),
            _ => Err(EngineError::NotAQuery(format!(
                "query() takes exactly one SELECT; use execute() for: {}",
                sql.trim()
            ))),
        }
    }

    /// How `sql`'s rows can be split between workers so that each key's
    /// windows live on one of them (see [`Partitioner`]); the query is
    /// planned and checked but not started.
    pub fn partitioner(&self, sql: &str) -> Result<Partitioner, EngineError> {
        let mut statements = self.plan(sql)?;
        match (statements.pop(), statements.is_empty()) {
            (Some(Statement::Query(plan)), true) => Partitioner::new(&plan)
                .map_err(|message| EngineError::Evaluation { query: 0, message }),
            _ => Err(EngineError::NotAQuery(
                "partitioner() takes exactly one SELECT".into(),
            )),
        }
    }

    /// The plan of a `SELECT` (with or without `EXPLAIN`), as text.
    pub fn explain(&self, sql: &str) -> Result<String, EngineError> {
        let mut statements = self.plan(sql)?;
        match (statements.pop(), statements.is_empty()) {
            (Some(Statement::Query(plan) | Statement::Explain(plan)), true) => {
                Ok(self.explain_plan(&plan))
            }
            _ => Err(EngineError::NotAQuery(
                "explain() takes exactly one SELECT".into(),
            )),
        }
    }

    /// EXPLAIN's text: the plan, and which aggregates share a window.
    fn explain_plan(&self, plan: &QueryPlan) -> String {
        let algorithm = self.window_algorithm();
        plan.explain(&algorithm.to_string()) + &CompiledQuery::explain_sharing(plan, algorithm)
    }

    /// Runs every statement of `sql` in order, stopping at the first error.
    ///
    /// All the statements run before this returns: the queries of several
    /// `SELECT`s are all registered, and see the same rows. A failing
    /// statement leaves the ones before it done (a stream created, say);
    /// [`Engine::execute_each`] hands each one's result over as it runs.
    pub fn execute(&self, sql: &str) -> Result<Vec<Executed>, EngineError> {
        let mut results = Vec::new();
        self.execute_each(sql, |executed| {
            results.push(executed);
            Ok::<_, EngineError>(())
        })?;
        Ok(results)
    }

    /// Runs the statements of `sql` one after another, calling `each` with a
    /// statement's result before the next statement is planned, and stops at
    /// the first error, of a statement or of `each`. A script runner uses it
    /// to finish with a statement (replay a `SELECT`'s source, say) before
    /// the next one starts. A syntax error anywhere in `sql` runs nothing.
    pub fn execute_each<E: From<EngineError>>(
        &self,
        sql: &str,
        mut each: impl FnMut(Executed) -> Result<(), E>,
    ) -> Result<(), E> {
        let statements = sliq_sql::parse_statements(sql).map_err(EngineError::from)?;
        for statement in &statements {
            // Planned only now: a CREATE STREAM before it must have run.
            let planned = sliq_sql::plan_parsed(statement, sql, &EngineCatalog(&self.inner))
                .map_err(EngineError::from)?;
            each(self.run(planned)?)?;
        }
        Ok(())
    }

    fn run(&self, statement: Statement) -> Result<Executed, EngineError> {
        Ok(match statement {
            Statement::CreateStream(def) => {
                let options = StreamOptions::from_definition(&def)?;
                Executed::StreamCreated(self.register_stream(&def.name, def.schema, options)?)
            }
            Statement::DropStream { name, if_exists } => match self.drop_stream(&name) {
                Ok(()) => Executed::StreamDropped(name, true),
                Err(EngineError::UnknownStream { .. }) if if_exists => {
                    Executed::StreamDropped(name, false)
                }
                Err(e) => return Err(e),
            },
            Statement::ShowStreams => Executed::Streams(self.streams()),
            Statement::ShowQueries => Executed::Queries(self.queries()),
            Statement::ShowFunctions { like } => {
                Executed::Functions(self.functions(like.as_deref()))
            }
            Statement::Describe(name) => Executed::Described(self.stream(&name)?.info()),
            Statement::Explain(plan) => Executed::Explained(self.explain_plan(&plan)),
            Statement::Set { name, value } => {
                match name.as_str() {
                    "window_algorithm" => {
                        let algorithm = value.parse().map_err(EngineError::InvalidSetting)?;
                        self.set_window_algorithm(algorithm);
                    }
                    other => {
                        return Err(EngineError::InvalidSetting(format!(
                            "unknown setting '{other}' (known: window_algorithm)"
                        )));
                    }
                }
                Executed::Set(name, value)
            }
            Statement::Insert { stream, rows } => {
                let handle = self.stream(&stream)?;
                let batch = literal_batch(&handle.state.schema, &rows)?;
                let n = batch.num_rows();
                handle.push(batch)?;
                Executed::Inserted(stream, n)
            }
            Statement::Query(plan) => Executed::Query(self.start(&plan)?),
        })
    }

    fn start(&self, plan: &QueryPlan) -> Result<Query, EngineError> {
        let stream = find_stream(&self.inner.streams.read(), &plan.stream)
            .ok_or_else(|| self.unknown_stream(&plan.stream))?;
        let id = self.inner.next_query.fetch_add(1, Ordering::Relaxed);
        let compiled = CompiledQuery::new(plan, self.window_algorithm())
            .map_err(|message| EngineError::Evaluation { query: id, message })?;
        let (sender, receiver) = crossbeam_channel::bounded(self.inner.channel_capacity);
        let state = Arc::new(QueryState {
            id,
            sql: plan.sql.clone(),
            stream: stream.name.clone(),
            schema: Arc::clone(&plan.output_schema),
            compiled: Arc::new(Mutex::new(compiled)),
            limit: plan.limit,
            sender,
            stats: Arc::new(Mutex::new(QueryStats {
                id,
                stream: stream.name.clone(),
                sql: plan.sql.clone(),
                ..Default::default()
            })),
        });
        let query = Query {
            id,
            schema: Arc::clone(&plan.output_schema),
            limit: plan.limit,
            receiver,
            stats: Arc::clone(&state.stats),
            compiled: Arc::clone(&state.compiled),
            stream: Arc::clone(&stream),
        };
        stream.update_queries(|queries| queries.push(state));
        Ok(query)
    }

    /// Every stream, by name.
    pub fn streams(&self) -> Vec<StreamInfo> {
        self.inner
            .streams
            .read()
            .values()
            .map(|s| {
                Stream {
                    state: Arc::clone(s),
                }
                .info()
            })
            .collect()
    }

    /// Every running query, by id.
    pub fn queries(&self) -> Vec<QueryInfo> {
        let mut all: Vec<QueryInfo> = self
            .inner
            .streams
            .read()
            .values()
            .flat_map(|s| s.queries.read().to_vec())
            .map(|q| QueryInfo {
                id: q.id,
                stream: q.stream.clone(),
                sql: q.sql.clone(),
                schema: Arc::clone(&q.schema),
            })
            .collect();
        all.sort_by_key(|q| q.id);
        all
    }

    /// The functions queries can call whose names match the SQL `LIKE`
    /// pattern `like` (all when `None`): built-in aggregates and this
    /// engine's user aggregates, each sorted by name, then scalar functions.
    pub fn functions(&self, like: Option<&str>) -> Vec<FunctionInfo> {
        let mut all = sliq_sql::builtin_functions();
        let users = self.inner.aggregates.read();
        let at = all
            .iter()
            .position(|f| f.kind != "aggregate")
            .unwrap_or(all.len());
        let user_infos = users.values().map(|u| {
            let inputs: Vec<String> = u.inputs().iter().map(ToString::to_string).collect();
            FunctionInfo {
                name: u.name().to_string(),
                kind: "user aggregate",
                signature: format!("{}({}) -> {}", u.name(), inputs.join(", "), u.output_type()),
            }
        });
        all.splice(at..at, user_infos);
        all.retain(|f| like.is_none_or(|pattern| sliq_sql::like(pattern, &f.name)));
        all
    }

    /// A snapshot of every stream's and query's counters.
    pub fn stats(&self) -> EngineStats {
        let streams = self.inner.streams.read();
        let mut queries: Vec<QueryStats> = streams
            .values()
            .flat_map(|s| s.queries.read().to_vec())
            .map(|q| query_stats(&q.stats, &q.compiled))
            .collect();
        queries.sort_by_key(|q| q.id);
        EngineStats {
            streams: streams.values().map(|s| s.stats.lock().clone()).collect(),
            queries,
        }
    }
}

/// A batch of literal rows (`INSERT … VALUES`) with the stream's schema.
fn literal_batch(
    schema: &SchemaRef,
    rows: &[Vec<datafusion_expr::Expr>],
) -> Result<RecordBatch, EngineError> {
    let fail = |message: String| EngineError::Evaluation { query: 0, message };
    let empty = DFSchema::empty();
    let one_row = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )
    .map_err(|e| fail(e.to_string()))?;
    let mut columns: Vec<Vec<ArrayRef>> = vec![Vec::new(); schema.fields().len()];
    for row in rows {
        for (i, e) in row.iter().enumerate() {
            let physical = datafusion_physical_expr::create_physical_expr(
                e,
                &empty,
                &ExecutionProps::new(),
                &PhysicalPlanningContext::default(),
            )
            .map_err(|err| fail(format!("INSERT value {e}: {err}")))?;
            let value = physical
                .evaluate(&one_row)
                .and_then(|v| v.into_array(1))
                .map_err(|err| fail(format!("INSERT value {e}: {err}")))?;
            let value = arrow_cast::cast(&value, schema.field(i).data_type())
                .map_err(|err| fail(format!("INSERT value {e}: {err}")))?;
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
    state: Arc<StreamState>,
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
        let queries = Arc::clone(&state.queries.read());
        if state.options.on_late == OnLate::Error {
            for q in queries.iter() {
                let late = q.compiled.lock().find_late(&batch);
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
        let mut late_rows = 0;
        for q in queries.iter() {
            // A bug in an expression kernel must not take the engine down:
            // the query that hit it stops with an error, the others go on.
            let mut finished = false;
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                q.compiled.lock().process(&batch)
            }))
            .unwrap_or_else(|panic| {
                finished = true;
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
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
                        stats.failed_results += outcome.failures.count as u64;
                        if outcome.failures.first.is_some() {
                            stats.last_error = outcome.failures.first;
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

/// A running continuous query: one result batch per pushed batch.
/// Dropping the handle stops the query.
pub struct Query {
    id: u64,
    schema: SchemaRef,
    limit: Option<u64>,
    receiver: Receiver<Result<RecordBatch, EngineError>>,
    stats: Arc<Mutex<QueryStats>>,
    compiled: Arc<Mutex<CompiledQuery>>,
    stream: Arc<StreamState>,
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

    /// A snapshot of its counters (as in [`Engine::stats`]), also after it
    /// stopped at its `LIMIT` or its stream was dropped.
    pub fn stats(&self) -> QueryStats {
        query_stats(&self.stats, &self.compiled)
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

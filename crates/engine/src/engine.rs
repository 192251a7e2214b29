//! The [`Engine`]: its streams, its queries and the statements that manage
//! them. The handles it gives out live in `stream` ([`Stream`], which pushes
//! batches) and `subscription` ([`Query`], which receives results).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_schema::SchemaRef;
use parking_lot::{Mutex, RwLock};
use sliq_aggregates::{Aggregate, OutputType, ValueType};
use sliq_sql::{
    Catalog, FunctionInfo, QueryPlan, SqlError, Statement, StreamDefinition, UserAggregate,
    closest, plan_sql,
};

use crate::error::EngineError;
use crate::operator::WindowAlgorithm;
use crate::options::{StreamCheck, StreamOptions, key_ttl_without_event_time};
use crate::partition::Partitioner;
use crate::query::CompiledQuery;
use crate::stats::{EngineStats, QueryInfo, QueryStats, StreamInfo, StreamStats};
use crate::stream::{QueryState, Stream, StreamState, literal_batch, query_stats};
use crate::subscription::Query;
use crate::udaf::RegisteredAggregate;

/// The result of one statement run by [`Engine::execute`].
#[derive(Debug)]
pub enum Executed {
    /// `CREATE STREAM` (false: a stream of that name existed, and `IF NOT
    /// EXISTS` was given; the stream is that one, unchanged).
    StreamCreated(Stream, bool),
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
    /// `SET`: the setting and its new value.
    Set(String, String),
    /// `SHOW name` or `SHOW ALL`: settings and their values.
    Settings(Vec<(String, String)>),
    /// `RESET name` or `RESET ALL`: settings and the defaults they are back to.
    Reset(Vec<(String, String)>),
    /// `INSERT`: rows pushed into the stream.
    Inserted(String, usize),
    /// `SELECT`: the running query.
    Query(Query),
}

/// The settings `SET` changes, `SHOW` reports and `RESET` restores.
const SETTINGS: &[&str] = &["window_algorithm"];

/// The settings `name` stands for: itself, or every one for `None` (`SHOW
/// ALL`, `RESET ALL`).
fn settings_named(name: Option<String>) -> Vec<String> {
    name.map_or_else(
        || SETTINGS.iter().map(|s| s.to_string()).collect(),
        |n| vec![n],
    )
}

fn unknown_setting(name: &str) -> EngineError {
    EngineError::InvalidSetting(format!(
        "unknown setting '{name}' (known: {}; SHOW STREAMS, SHOW QUERIES and SHOW FUNCTIONS list the rest)",
        SETTINGS.join(", ")
    ))
}

struct Inner {
    streams: RwLock<BTreeMap<String, Arc<StreamState>>>,
    aggregates: RwLock<BTreeMap<String, Arc<RegisteredAggregate>>>,
    algorithm: Mutex<WindowAlgorithm>,
    /// What `RESET window_algorithm` restores: the builder's choice.
    default_algorithm: WindowAlgorithm,
    channel_capacity: usize,
    next_query: AtomicU64,
    stream_check: Option<StreamCheck>,
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
    stream_check: Option<StreamCheck>,
}

impl Default for EngineBuilder {
    fn default() -> Self {
        EngineBuilder {
            channel_capacity: 64,
            algorithm: WindowAlgorithm::DabaLite,
            stream_check: None,
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

    /// Runs `check` on every `CREATE STREAM` before the stream is created,
    /// for a program that reads options of its own (a source's `path`,
    /// say): it gets the statement's definition and the options the engine
    /// parsed from it, and refuses the statement with an error that points
    /// at the option at fault ([`StreamDefinition::value_error`]).
    pub fn stream_check(
        mut self,
        check: impl Fn(&StreamDefinition, &StreamOptions) -> Result<(), SqlError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.stream_check = Some(StreamCheck(Arc::new(check)));
        self
    }

    /// The engine.
    pub fn build(self) -> Engine {
        Engine {
            inner: Arc::new(Inner {
                streams: RwLock::new(BTreeMap::new()),
                aggregates: RwLock::new(BTreeMap::new()),
                algorithm: Mutex::new(self.algorithm),
                default_algorithm: self.algorithm,
                channel_capacity: self.channel_capacity,
                next_query: AtomicU64::new(1),
                stream_check: self.stream_check,
            }),
        }
    }
}

struct EngineCatalog<'a>(&'a Inner);

impl Catalog for EngineCatalog<'_> {
    fn stream(&self, name: &str) -> Option<(SchemaRef, Option<String>)> {
        find_stream(&self.0.streams.read(), name).map(|s| {
            (
                Arc::clone(&s.schema),
                s.options.event_time_column().map(str::to_string),
            )
        })
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
        if let Some(column) = options.event_time_column() {
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
        } else if options.key_ttl_ms().is_some() {
            return Err(EngineError::InvalidSetting(key_ttl_without_event_time(
                name,
            )));
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
            clock: Mutex::new(i64::MIN),
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

    /// For `DROP STREAM … RESTRICT`: an error if queries run over `name`.
    fn refuse_if_queried(&self, name: &str) -> Result<(), EngineError> {
        let queries = self
            .stream(name)
            .map_or(0, |stream| stream.state.queries.read().len());
        match queries {
            0 => Ok(()),
            _ => Err(EngineError::StreamInUse {
                stream: name.to_string(),
                queries,
            }),
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

    /// The current value of `setting`, and the one `RESET` gives it.
    fn setting(&self, setting: &str) -> Result<(String, String), EngineError> {
        match setting {
            "window_algorithm" => Ok((
                self.window_algorithm().to_string(),
                self.inner.default_algorithm.to_string(),
            )),
            other => Err(unknown_setting(other)),
        }
    }

    /// `SET setting = value`.
    fn set_setting(&self, setting: &str, value: &str) -> Result<(), EngineError> {
        match setting {
            "window_algorithm" => {
                let algorithm = value.parse().map_err(EngineError::InvalidSetting)?;
                self.set_window_algorithm(algorithm);
                Ok(())
            }
            other => Err(unknown_setting(other)),
        }
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
            (Some(Statement::Query(plan)), true) => {
                Partitioner::new(&plan).map_err(EngineError::Compile)
            }
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
        let mut text =
            plan.explain(&algorithm.to_string()) + &CompiledQuery::explain_sharing(plan, algorithm);
        let ttl = find_stream(&self.inner.streams.read(), &plan.stream)
            .and_then(|s| s.options.key_ttl_ms());
        if let Some(ttl) = ttl {
            text += &format!(
                "  Idle keys: forgotten once the stream's event time is {} past their last row (key_ttl)\n",
                sliq_sql::format_duration(ttl)
            );
        }
        text
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
            each(self.run(planned).map_err(|e| e.with_source(sql))?)?;
        }
        Ok(())
    }

    fn run(&self, statement: Statement) -> Result<Executed, EngineError> {
        Ok(match statement {
            Statement::CreateStream(def) => {
                let options = StreamOptions::from_definition(&def)?;
                if let Some(check) = &self.inner.stream_check {
                    (check.0)(&def, &options)?;
                }
                match self.register_stream(&def.name, def.schema, options) {
                    Ok(stream) => Executed::StreamCreated(stream, true),
                    Err(EngineError::StreamExists(_)) if def.if_not_exists => {
                        Executed::StreamCreated(self.stream(&def.name)?, false)
                    }
                    Err(e) => return Err(e),
                }
            }
            Statement::DropStream {
                name,
                if_exists,
                restrict,
            } => {
                if restrict {
                    self.refuse_if_queried(&name)?;
                }
                match self.drop_stream(&name) {
                    Ok(()) => Executed::StreamDropped(name, true),
                    Err(EngineError::UnknownStream { .. }) if if_exists => {
                        Executed::StreamDropped(name, false)
                    }
                    Err(e) => return Err(e),
                }
            }
            Statement::ShowStreams => Executed::Streams(self.streams()),
            Statement::ShowQueries => Executed::Queries(self.queries()),
            Statement::ShowFunctions { like } => {
                Executed::Functions(self.functions(like.as_deref()))
            }
            Statement::Describe(name) => Executed::Described(self.stream(&name)?.info()),
            Statement::Explain(plan) => Executed::Explained(self.explain_plan(&plan)),
            Statement::Set { name, value } => {
                self.set_setting(&name, &value)?;
                Executed::Set(name, value)
            }
            Statement::Show { name } => Executed::Settings(
                settings_named(name)
                    .into_iter()
                    .map(|setting| {
                        let (current, _) = self.setting(&setting)?;
                        Ok((setting, current))
                    })
                    .collect::<Result<_, EngineError>>()?,
            ),
            Statement::Reset { name } => {
                let mut reset = Vec::new();
                for setting in settings_named(name) {
                    let (_, default) = self.setting(&setting)?;
                    self.set_setting(&setting, &default)?;
                    reset.push((setting, default));
                }
                Executed::Reset(reset)
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
        let mut compiled =
            CompiledQuery::new(plan, self.window_algorithm()).map_err(EngineError::Compile)?;
        let id = self.inner.next_query.fetch_add(1, Ordering::Relaxed);
        if let Some(ttl) = stream.options.key_ttl_ms() {
            compiled = compiled.forgetting_idle_keys(ttl);
        }
        let (sender, receiver) = crossbeam_channel::bounded(self.inner.channel_capacity);
        let state = Arc::new(QueryState {
            id,
            sql: plan.sql.clone(),
            stream: stream.name.clone(),
            schema: Arc::clone(&plan.output_schema),
            compiled: Arc::new(Mutex::new(compiled)),
            limit: plan.limit,
            columns_read: plan.stream_columns_read(),
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

//! Running statements: the engine does the SQL; the session attaches
//! sources to streams and prints query results.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use sliq_engine::{Engine, EngineError, Executed, Query, Stream};

use crate::console::note;
use crate::output::{Destination, OutputError, OutputFormat, ResultWriter};
use crate::replay_failures::ReplayFailures;
use crate::source::{BatchReader, SourceError, SourceSpec};

/// Parsed batches queued for the windows. Deep enough that the reader, the
/// windows and the output thread seldom wait for one another on two cores
/// (from 4: a 2M-row replay 3 % faster).
const QUEUED_INPUT_BATCHES: usize = 16;

/// Why a statement failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// SQL or engine error.
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// A source could not be opened or read.
    #[error("{0}")]
    Source(#[from] SourceError),
    /// Writing results failed.
    #[error("{0}")]
    Output(#[from] OutputError),
    /// Running on timely workers failed.
    #[error("{0}")]
    Timely(#[from] sliq_timely::TimelyError),
    /// A query on timely workers over a stream that no source feeds.
    #[error(
        "stream '{0}' has no source to read: declare one in CREATE STREAM … WITH (path = '…' or source = 'stdin' | 'tcp' | 'generator' | 'debs'); timely workers read sources, not INSERT"
    )]
    NoSource(String),
    /// A query over a stdin source in the REPL, which reads stdin itself.
    #[error(
        "stream '{0}' reads stdin, which the REPL reads its statements from: pipe the data into `sliq -c …` or `sliq -f …` instead, or give the stream a file (path = '…', follow = true) or a socket (source = 'tcp')"
    )]
    StdinInRepl(String),
}

/// A live stream fed by a background thread (the demo feed).
struct Feed {
    stream: String,
    stop: Arc<AtomicBool>,
}

/// A query over a stream that only INSERT feeds. It stands while the next
/// statements run, and each INSERT into its stream prints its rows.
struct Standing {
    query: Query,
    stream: String,
    writer: ResultWriter,
}

/// Statements and their results, for one `sliq` process.
pub struct Session {
    engine: Engine,
    format: OutputFormat,
    /// Sources declared with the streams, by stream name.
    sources: HashMap<String, SourceSpec>,
    feeds: Vec<Feed>,
    /// Queries over streams that only INSERT feeds, in the order started.
    standing: Vec<Standing>,
    /// Set by Ctrl-C: stop the running query.
    interrupted: Arc<AtomicBool>,
    /// The counters at the previous `.stats`, for rates.
    last_stats: (Instant, HashMap<String, u64>),
    /// Where results go (the REPL's `.output`).
    output: Destination,
    /// Print a summary line after each query (and timing in the REPL).
    pub timing: bool,
    /// Run queries on timely dataflow workers instead of the embedded engine.
    timely: Option<sliq_timely::Config>,
    /// The last timely run's counters, for `.stats`.
    last_run: Option<TimelyRun>,
    /// Whether the REPL reads statements from stdin, so that no source may:
    /// a reader left blocked on stdin after Ctrl-C would take the next
    /// statement typed.
    repl_reads_stdin: bool,
}

/// A source opened for one replay.
struct OpenedSource {
    reader: BatchReader,
    /// Stops the reader (and frees its socket) when the replay ends,
    /// however it ends.
    stop: StopOnDrop,
    /// Bytes read so far, for the progress bar.
    bytes_read: Arc<AtomicU64>,
}

/// Raises its flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What `.stats` shows of the last query run on timely workers.
struct TimelyRun {
    sql: String,
    stats: sliq_timely::RunStats,
}

impl Session {
    /// A session printing results in `format`; `interrupted` is raised by Ctrl-C.
    pub fn new(format: OutputFormat, interrupted: Arc<AtomicBool>) -> Self {
        Session {
            engine: Engine::builder()
                .channel_capacity(256)
                // Options no source can use refuse the CREATE, pointing at
                // the option, so that a corrected statement can run next.
                .stream_check(|definition, options| {
                    SourceSpec::from_options(options.options())
                        .map(drop)
                        .map_err(|e| e.in_definition(definition))
                })
                .build(),
            format,
            sources: HashMap::new(),
            feeds: Vec::new(),
            standing: Vec::new(),
            interrupted,
            last_stats: (Instant::now(), HashMap::new()),
            output: Destination::Stdout,
            timing: true,
            timely: None,
            last_run: None,
            repl_reads_stdin: false,
        }
    }

    /// Tells the session that the REPL now reads statements from stdin.
    pub fn start_repl(&mut self) {
        self.repl_reads_stdin = true;
    }

    /// Runs queries on timely dataflow workers (threads of this process,
    /// or processes of a cluster) instead of the embedded engine. Process 0
    /// reads the sources and prints the results; the others lend workers.
    pub fn use_timely(&mut self, config: sliq_timely::Config) {
        self.timely = Some(config);
    }

    /// Whether this process prints results (not a secondary cluster process).
    fn prints_results(&self) -> bool {
        self.timely.as_ref().is_none_or(|c| c.process() == 0)
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The output format.
    pub fn set_format(&mut self, format: OutputFormat) {
        self.format = format;
    }

    /// Sends results to the file `path` (created, or emptied), or back to
    /// standard output for `None`.
    pub fn set_output(&mut self, path: Option<&str>) -> Result<(), SessionError> {
        self.output = match path {
            Some(path) => Destination::file(path)?,
            None => Destination::Stdout,
        };
        Ok(())
    }

    /// The file results go to, or `None` for standard output.
    pub fn output_path(&self) -> Option<&str> {
        self.output.path()
    }

    /// Rows, rates, late rows and keys per stream and query, and the
    /// process's memory, for `.stats`. Rates are since the previous call.
    pub fn stats_report(&mut self) -> String {
        let stats = self.engine.stats();
        let (since, previous) = &self.last_stats;
        let secs = since.elapsed().as_secs_f64().max(1e-9);
        let rate = |key: &str, now: u64| {
            (now.saturating_sub(previous.get(key).copied().unwrap_or(0))) as f64 / secs
        };
        let mut out = String::new();
        let mut counters = HashMap::new();
        for s in &stats.streams {
            let key = format!("stream {}", s.name);
            out.push_str(&format!(
                "{key}: {} rows ({:.0} rows/s), {} batches, {} late, {} rejected batches\n",
                s.rows,
                rate(&key, s.rows),
                s.batches,
                s.late_rows,
                s.rejected_batches
            ));
            counters.insert(key, s.rows);
        }
        for q in &stats.queries {
            let key = format!("query {}", q.id);
            out.push_str(&format!(
                "{key} on {}: {} rows out ({:.0} rows/s), keys {:?}{}, {} late{}, {} failed results{}\n",
                q.stream,
                q.rows_out,
                rate(&key, q.rows_out),
                q.keys,
                match q.forgotten_keys {
                    0 => String::new(),
                    n => format!(" ({n} forgotten)"),
                },
                q.late_rows,
                match q.untimed_rows {
                    0 => String::new(),
                    n => format!(" ({n} without an event time)"),
                },
                q.failed_results,
                q.last_error.as_ref().map(|e| format!(" (last: {e})")).unwrap_or_default()
            ));
            counters.insert(key, q.rows_out);
        }
        if let Some(run) = &self.last_run {
            out.push_str(&timely_report(run));
        }
        if let Some(rss) = resident_memory() {
            out.push_str(&format!(
                "memory: {:.1} MiB resident\n",
                rss as f64 / (1 << 20) as f64
            ));
        }
        self.last_stats = (Instant::now(), counters);
        out
    }

    /// Registers the demo stream `sensors` and feeds it from a background
    /// thread at about 1,000 events/s over 40 sensors.
    pub fn start_demo(&mut self) -> Result<(), SessionError> {
        self.engine.execute(
            "CREATE STREAM sensors (ts TIMESTAMP, sensor VARCHAR, value DOUBLE) WITH (event_time = 'ts')",
        )?;
        let stream = self.engine.stream("sensors")?;
        let spec = SourceSpec::Generator {
            rate: 1000.0,
            keys: 40,
            rows: None,
        };
        if self.timely.is_some() {
            // Timely workers read the feed themselves, query by query.
            self.sources.insert("sensors".into(), spec);
            return Ok(());
        }
        let stop = Arc::new(AtomicBool::new(false));
        let reader = spec.open(
            stream.schema(),
            Some("ts"),
            Arc::clone(&stop),
            Arc::default(),
        )?;
        let flag = Arc::clone(&stop);
        std::thread::spawn(move || {
            for batch in reader {
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                if let Ok(batch) = batch {
                    // A push only fails on a schema mismatch, which the
                    // generator cannot produce.
                    let _ = stream.push(batch);
                }
            }
        });
        self.feeds.push(Feed {
            stream: "sensors".into(),
            stop,
        });
        Ok(())
    }

    /// Runs the statements of `sql` in order, each to its end (a `SELECT`
    /// over a file replays it) before the next one starts, printing results.
    pub fn run(&mut self, sql: &str) -> Result<(), SessionError> {
        let engine = self.engine.clone();
        engine.execute_each(sql, |executed| self.show(executed))
    }

    fn show(&mut self, executed: Executed) -> Result<(), SessionError> {
        match executed {
            Executed::StreamCreated(stream, false) => {
                note!("stream {} exists already; left as it was", stream.name());
            }
            Executed::StreamCreated(stream, true) => {
                let info = stream.info();
                // The engine's stream check read these options already.
                if let Some(spec) = SourceSpec::from_options(info.options.options())? {
                    self.sources.insert(stream.name().to_string(), spec);
                }
                note!("created stream {}", stream.name());
            }
            Executed::StreamDropped(name, existed) => {
                self.sources.remove(&name);
                self.stop_standing(Some(&name));
                // Its feed (the demo's) would go on pushing into the
                // dropped stream, and make a new stream of that name look
                // fed.
                self.feeds.retain(|feed| {
                    let dropped = feed.stream.eq_ignore_ascii_case(&name);
                    if dropped {
                        feed.stop.store(true, Ordering::Relaxed);
                    }
                    !dropped
                });
                if existed {
                    note!("dropped stream {name}");
                }
            }
            Executed::Streams(streams) => {
                if streams.is_empty() {
                    note!("no streams: CREATE STREAM declares one");
                }
                let mut text = String::new();
                for s in streams {
                    let columns: Vec<String> = s
                        .schema
                        .fields()
                        .iter()
                        .map(|f| format!("{} {}", f.name(), sliq_sql::sql_type_name(f.data_type())))
                        .collect();
                    let _ = writeln!(
                        text,
                        "{} ({}) — {} queries",
                        s.name,
                        columns.join(", "),
                        s.queries
                    );
                }
                self.output.write_all(text.as_bytes())?;
            }
            Executed::Queries(queries) => {
                if queries.is_empty() {
                    note!("no queries running");
                }
                let mut text = String::new();
                for q in queries {
                    let _ = writeln!(
                        text,
                        "{}: {} [{}]",
                        q.id,
                        sliq_sql::single_line(&q.sql),
                        q.stream
                    );
                }
                self.output.write_all(text.as_bytes())?;
            }
            Executed::Functions(functions) => {
                let width = functions.iter().map(|f| f.name.len()).max().unwrap_or(0);
                let mut text = String::new();
                for f in functions {
                    let _ = writeln!(text, "{:width$}  {:14}  {}", f.name, f.kind, f.signature);
                }
                self.output.write_all(text.as_bytes())?;
            }
            Executed::Described(info) => {
                let mut text = String::new();
                for f in info.schema.fields() {
                    let time = if info.options.event_time_column() == Some(f.name().as_str()) {
                        "  (event time)"
                    } else {
                        ""
                    };
                    let _ = writeln!(
                        text,
                        "{:<20} {}{}{time}",
                        f.name(),
                        sliq_sql::sql_type_name(f.data_type()),
                        if f.is_nullable() { "" } else { " NOT NULL" }
                    );
                }
                if info.options.late_policy() == sliq_engine::OnLate::Error {
                    let _ = writeln!(text, "  on_late = 'error'");
                }
                if let Some(ttl) = info.options.key_ttl_ms() {
                    let _ = writeln!(text, "  key_ttl = {}", sliq_sql::format_duration(ttl));
                }
                for (k, v) in info.options.options() {
                    let _ = writeln!(text, "  {k} = '{v}'");
                }
                self.output.write_all(text.as_bytes())?;
            }
            Executed::Explained(text) => self.output.write_all(text.as_bytes())?,
            Executed::Set(name, value) => note!("{name} = '{value}'"),
            Executed::Reset(settings) => {
                for (name, value) in settings {
                    note!("{name} = '{value}'");
                }
            }
            Executed::Settings(settings) => {
                let mut text = String::new();
                for (name, value) in settings {
                    let _ = writeln!(text, "{name} = '{value}'");
                }
                self.output.write_all(text.as_bytes())?;
            }
            Executed::Inserted(stream, rows) => {
                // A standing query that this INSERT took to its LIMIT has
                // left the engine, but it saw these rows.
                let watched = self
                    .standing
                    .iter()
                    .any(|s| s.stream.eq_ignore_ascii_case(&stream))
                    || self
                        .engine
                        .streams()
                        .iter()
                        .any(|s| s.name.eq_ignore_ascii_case(&stream) && s.queries > 0);
                match watched {
                    true => note!("inserted {rows} row(s) into {stream}"),
                    // A stream keeps no rows: say where these went.
                    false => note!(
                        "inserted {rows} row(s) into {stream}; no query was running to see them (a query sees only rows that arrive after it starts)"
                    ),
                }
                self.show_standing(&stream)?;
            }
            Executed::Query(query) => self.follow(query)?,
        }
        Ok(())
    }

    /// Prints a query's results: drives its stream's source to the end, or
    /// prints live results until Ctrl-C.
    fn follow(&mut self, query: Query) -> Result<(), SessionError> {
        let stream_name = self
            .engine
            .queries()
            .into_iter()
            .find(|q| q.id == query.id())
            .map(|q| q.stream)
            .unwrap_or_default();
        let stream = self.engine.stream(&stream_name)?;
        let spec = self.sources.get(&stream_name).cloned();
        if self.repl_reads_stdin && matches!(spec, Some(SourceSpec::Stdin { .. })) {
            return Err(SessionError::StdinInRepl(stream_name));
        }
        if spec.is_none() && !self.feeds.iter().any(|f| f.stream == stream_name) {
            // Only INSERT can feed it: waiting here would wait forever.
            if self.timely.is_some() {
                return Err(SessionError::NoSource(stream_name));
            }
            return self.stand(query, stream_name);
        }
        if let (Some(config), Some(spec)) = (self.timely.clone(), &spec) {
            return self.follow_timely(query, &stream, spec, &config);
        }
        let live = spec.as_ref().is_none_or(|s| !s.is_finite());
        // Opened before the header is written: a file that is missing or a
        // server that refuses is the query's error, with no output.
        let source = match spec {
            Some(spec) => {
                let opened = Self::open_source(&spec, &stream)?;
                Some((spec, opened))
            }
            None => None,
        };
        let mut writer =
            ResultWriter::new(self.format, query.schema(), live, self.output.try_clone()?)?;
        // The header shows at once, even before a live source's first row.
        writer.flush()?;
        self.interrupted.store(false, Ordering::Relaxed);
        let start = Instant::now();
        let mut failures = None;
        let rows_in = match source {
            Some((spec, source)) => {
                let rows_before = self
                    .engine
                    .stats()
                    .streams
                    .iter()
                    .find(|s| s.name == stream_name)
                    .map_or(0, |s| s.rows);
                let failures = failures.insert(ReplayFailures::new(spec.name(), rows_before));
                Some(self.drive(&spec, source, &stream, &query, &mut writer, failures)?)
            }
            None => {
                self.print_live(&query, &mut writer)?;
                None
            }
        };
        writer.finish()?;
        Self::note_nulls(&query, failures.as_ref().and_then(|f| f.latest()));
        let secs = start.elapsed().as_secs_f64();
        if self.timing {
            match rows_in {
                Some(rows_in) => {
                    let rate = if secs > 0.0 {
                        rows_in as f64 / secs
                    } else {
                        0.0
                    };
                    note!(
                        "rows in {rows_in}, rows out {}, {secs:.3} s, {rate:.0} rows/s",
                        writer.rows()
                    );
                }
                None => note!("rows out {}, {secs:.3} s", writer.rows()),
            }
        }
        Ok(())
    }

    /// Keeps `query`, over a stream that only INSERT feeds, running while
    /// the next statements run: each INSERT into the stream prints its rows.
    fn stand(&mut self, query: Query, stream: String) -> Result<(), SessionError> {
        let mut writer =
            ResultWriter::immediate(self.format, query.schema(), self.output.try_clone()?)?;
        // A CSV header shows at once.
        writer.flush()?;
        note!(
            "query {} runs over {stream}, which only INSERT feeds: each INSERT INTO {stream} shows its rows",
            query.id()
        );
        self.standing.push(Standing {
            query,
            stream,
            writer,
        });
        Ok(())
    }

    /// Prints the rows that an INSERT into `stream` gave its standing
    /// queries, and ends those that are over (at their LIMIT). A query
    /// whose batch failed ends with that error.
    fn show_standing(&mut self, stream: &str) -> Result<(), SessionError> {
        let mut failure = None;
        let mut i = 0;
        while i < self.standing.len() {
            let standing = &mut self.standing[i];
            if !standing.stream.eq_ignore_ascii_case(stream) {
                i += 1;
                continue;
            }
            let over = loop {
                match standing.query.try_recv() {
                    Ok(Some(batch)) => standing.writer.write(&batch)?,
                    Ok(None) => break false,
                    Err(EngineError::Closed) => break true,
                    Err(e) => {
                        failure.get_or_insert(e);
                        break true;
                    }
                }
            };
            standing.writer.flush()?;
            if over {
                Self::end_standing(self.standing.remove(i))?;
            } else {
                i += 1;
            }
        }
        failure.map_or(Ok(()), |e| Err(e.into()))
    }

    /// Ends the standing queries over `stream`, or all of them for `None`
    /// (`.stop`, and the end of the session); returns how many ended.
    pub fn stop_standing(&mut self, stream: Option<&str>) -> usize {
        let (ended, kept): (Vec<_>, _) = std::mem::take(&mut self.standing)
            .into_iter()
            .partition(|s| stream.is_none_or(|name| s.stream.eq_ignore_ascii_case(name)));
        self.standing = kept;
        let count = ended.len();
        for standing in ended {
            if let Err(e) = Self::end_standing(standing) {
                note!("error: {e}");
            }
        }
        count
    }

    /// Writes out a standing query's last rows and explains its NULLs.
    fn end_standing(mut standing: Standing) -> Result<(), SessionError> {
        standing.writer.finish()?;
        Self::note_nulls(&standing.query, None);
        Ok(())
    }

    /// Says how many of `query`'s rows carry NULL because they were late or a
    /// value could not be computed, so that no NULL goes unexplained.
    /// `replay_failure` names the latest failure by its source line, when
    /// a replay found it.
    fn note_nulls(query: &Query, replay_failure: Option<&str>) {
        let q = query.stats();
        let engine_failure = q.last_failed_row.map(|f| f.to_string());
        note_nulls(
            &format!("query {}", q.id),
            q.late_rows,
            q.untimed_rows,
            q.failed_results,
            replay_failure.or(engine_failure.as_deref()),
        );
    }

    /// Runs `query` on timely workers: process 0 reads `spec` and prints the
    /// results gathered from every worker; other processes lend their workers.
    fn follow_timely(
        &mut self,
        query: Query,
        stream: &Stream,
        spec: &SourceSpec,
        config: &sliq_timely::Config,
    ) -> Result<(), SessionError> {
        let info = stream.info();
        let sql = self
            .engine
            .queries()
            .into_iter()
            .find(|q| q.id == query.id())
            .map(|q| q.sql)
            .unwrap_or_default();
        let id = query.id();
        // The embedded copy only checked the query; the workers run it.
        drop(query);
        let job = sliq_timely::Job::new(&info.name, info.schema, info.options.clone(), &sql)
            .window_algorithm(self.engine.window_algorithm());
        let stop = Arc::new(AtomicBool::new(false));
        let sources = if config.process() == 0 {
            vec![spec.open(
                stream.schema(),
                info.options.event_time_column(),
                Arc::clone(&stop),
                Arc::default(),
            )?]
        } else {
            Vec::new()
        };
        let prints = self.prints_results();
        let live = !spec.is_finite();
        let mut execution = sliq_timely::start(&job, config, sources)?;
        // Only the printing process (0) has results to write.
        let mut writer = prints
            .then(|| {
                ResultWriter::new(
                    self.format,
                    execution.schema(),
                    live,
                    self.output.try_clone()?,
                )
            })
            .transpose()?;
        if let Some(writer) = &mut writer {
            writer.flush()?;
        }
        self.interrupted.store(false, Ordering::Relaxed);
        let result = (|| -> Result<(), SessionError> {
            loop {
                match execution.recv_timeout(Duration::from_millis(100)) {
                    Ok(batch) => {
                        if let Some(writer) = &mut writer {
                            writer.write(&batch)?;
                            if live {
                                writer.flush()?;
                            }
                        }
                    }
                    // Nothing for a while: what is buffered goes out.
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                        if let Some(writer) = &mut writer {
                            writer.flush()?;
                        }
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return Ok(()),
                }
                if self.interrupted.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                    execution.stop();
                }
            }
        })();
        if result.is_err() {
            execution.stop();
        }
        stop.store(true, Ordering::Relaxed);
        let stats = execution.finish()?;
        result?;
        if let Some(writer) = &mut writer {
            writer.finish()?;
        }
        let who = match config.processes() {
            1 => format!("query {id}"),
            _ => format!("query {id} on process {}", config.process()),
        };
        note_nulls(
            &who,
            stats.workers.iter().map(|w| w.late_rows).sum(),
            stats.workers.iter().map(|w| w.untimed_rows).sum(),
            stats.workers.iter().map(|w| w.failed_results).sum(),
            stats.workers.iter().find_map(|w| w.last_failure.as_deref()),
        );
        if self.timing {
            let secs = stats.elapsed.as_secs_f64();
            let rows_in = stats.rows_read;
            let rate = if secs > 0.0 {
                rows_in as f64 / secs
            } else {
                0.0
            };
            let processed: u64 = stats.workers.iter().map(|w| w.rows).sum();
            let first = stats.workers.first().map_or(0, |w| w.index);
            let last = stats.workers.last().map_or(0, |w| w.index);
            note!(
                "process {}: workers {first}..={last} processed {processed} rows; rows in {rows_in}, rows out {}, {secs:.3} s, {rate:.0} rows/s",
                config.process(),
                stats.rows_out,
            );
        }
        self.last_run = Some(TimelyRun { sql, stats });
        Ok(())
    }

    /// Opens `spec` for one replay into `stream`.
    fn open_source(spec: &SourceSpec, stream: &Stream) -> Result<OpenedSource, SessionError> {
        let event_time = stream
            .info()
            .options
            .event_time_column()
            .map(str::to_string);
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        let bytes_read = Arc::new(AtomicU64::new(0));
        let mut reader = spec.open(
            stream.schema(),
            event_time.as_deref(),
            Arc::clone(&stop.0),
            Arc::clone(&bytes_read),
        )?;
        // Only this session starts queries, and it is busy until the replay
        // ends: the columns no query reads now stay unread.
        reader.leave_unread(
            stream
                .columns_read()
                .into_iter()
                .map(|read| !read)
                .collect(),
        );
        Ok(OpenedSource {
            reader,
            stop,
            bytes_read,
        })
    }

    /// Reads `source` (opened from `spec`) into `stream`, writing `query`'s
    /// results and naming its failed values in `failures`; returns rows
    /// read. Parsing runs on its own thread, so that reading, windows and
    /// output overlap on two cores.
    fn drive(
        &self,
        spec: &SourceSpec,
        source: OpenedSource,
        stream: &Stream,
        query: &Query,
        writer: &mut ResultWriter,
        failures: &mut ReplayFailures,
    ) -> Result<u64, SessionError> {
        let OpenedSource {
            mut reader,
            stop,
            bytes_read,
        } = source;
        let live = !spec.is_finite();
        // A replay of a file shows its progress when stderr is a terminal.
        let progress = spec
            .file_size()
            .filter(|_| std::io::stderr().is_terminal())
            .map(|size| {
                let bar = ProgressBar::new(size);
                bar.set_style(
                    ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {msg} ({eta})")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                bar
            });
        let (batches, incoming) = crossbeam_channel::bounded(QUEUED_INPUT_BATCHES);
        {
            let stop = Arc::clone(&stop.0);
            // Not joined: a parser blocked reading stdin or a socket ends at
            // its next batch, when it finds the channel closed.
            std::thread::Builder::new()
                .name("sliq-reader".into())
                .spawn(move || {
                    while let Some(batch) = reader.next() {
                        let failed = batch.is_err();
                        let lines = reader.take_row_lines();
                        if stop.load(Ordering::Relaxed)
                            || batches.send((batch, lines)).is_err()
                            || failed
                        {
                            break;
                        }
                    }
                })
                .map_err(|e| SourceError::io("the reader thread", e))?;
        }
        let mut rows = 0;
        let result = (|| {
            loop {
                let (batch, lines) = match incoming.recv_timeout(Duration::from_millis(100)) {
                    Ok((batch, lines)) => (batch?, lines),
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                        if self.interrupted.load(Ordering::Relaxed) {
                            break;
                        }
                        continue;
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                };
                if self.interrupted.load(Ordering::Relaxed) {
                    break;
                }
                let batch_rows = batch.num_rows();
                rows += batch_rows as u64;
                stream.push(batch)?;
                failures.after_batch(query, batch_rows, &lines);
                loop {
                    match query.try_recv() {
                        Ok(Some(out)) => writer.write(&out)?,
                        Ok(None) => break,
                        // LIMIT reached: the query is over, and so is the replay.
                        Err(EngineError::Closed) => return Ok(()),
                        Err(e) => return Err(e.into()),
                    }
                }
                // Results reach the output as soon as the replay would wait
                // for input: at once from a live source or a slow pipe, in
                // large writes while the reader is ahead.
                if live || incoming.is_empty() {
                    writer.flush()?;
                }
                if let Some(bar) = &progress {
                    bar.set_position(bytes_read.load(Ordering::Relaxed));
                    bar.set_message(format!("{rows} rows"));
                }
            }
            Ok(())
        })();
        drop(stop);
        if let Some(bar) = progress {
            bar.finish_and_clear();
        }
        result.map(|()| rows)
    }

    /// Prints results of a query over a stream fed elsewhere, until Ctrl-C.
    fn print_live(&self, query: &Query, writer: &mut ResultWriter) -> Result<(), SessionError> {
        while !self.interrupted.load(Ordering::Relaxed) {
            match query.recv_timeout(Duration::from_millis(100)) {
                Ok(batch) => {
                    writer.write(&batch)?;
                    writer.flush()?;
                }
                Err(EngineError::Timeout) => {}
                Err(EngineError::Closed) => break,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

/// Says how many of a run's rows carry NULL because they were late (or,
/// `untimed_rows` of those, had no event time) or a value could not be
/// computed (`example`: the latest failure's message), so that no NULL
/// goes unexplained. `who` names the query, and the workers for a timely
/// run.
fn note_nulls(
    who: &str,
    late_rows: u64,
    untimed_rows: u64,
    failed_results: u64,
    example: Option<&str>,
) {
    let late = late_rows.saturating_sub(untimed_rows);
    if late > 0 {
        note!("{who}: {late} late row(s) got NULL for their RANGE aggregates");
    }
    if untimed_rows > 0 {
        note!(
            "{who}: {untimed_rows} row(s) without an event time got NULL for their RANGE aggregates"
        );
    }
    if failed_results > 0 {
        note!(
            "{who}: {failed_results} value(s) could not be computed and are NULL (latest: {})",
            example.unwrap_or("unknown")
        );
    }
}

/// The `.stats` lines of a timely run: per worker, and the watermark.
fn timely_report(run: &TimelyRun) -> String {
    let stats = &run.stats;
    let mut out = format!(
        "timely run of {}: partitioned by {}, {} rows read here, {} rows out, watermark {}\n",
        sliq_sql::single_line(&run.sql),
        if stats.partition_key.is_empty() {
            "nothing (one worker holds every window)".to_string()
        } else {
            stats.partition_key.join(", ")
        },
        stats.rows_read,
        stats.rows_out,
        stats
            .watermark
            .map_or_else(|| "none (no event time)".to_string(), |w| format!("{w} ms")),
    );
    for w in &stats.workers {
        out.push_str(&format!(
            "  worker {}: {} rows in {} parts, {} keys, {} late, {} failed values, {} rows out\n",
            w.index, w.rows, w.batches, w.keys, w.late_rows, w.failed_results, w.rows_out
        ));
    }
    out
}

/// The process's resident memory in bytes (Linux), if known.
fn resident_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

impl Drop for Session {
    /// Feeds stop, and standing queries end, with the session.
    fn drop(&mut self) {
        self.stop_standing(None);
        for feed in &self.feeds {
            feed.stop.store(true, Ordering::Relaxed);
        }
    }
}

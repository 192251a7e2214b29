//! Sources declared in `CREATE STREAM … WITH (…)`: files and stdin in CSV,
//! JSON lines or Arrow IPC, and a generator of synthetic events.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef, TimeUnit};

/// Rows per batch read from files.
pub const BATCH_ROWS: usize = 8192;

/// A failure reading a source.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file or stream cannot be opened or read.
    #[error("{what}: {message}")]
    Io {
        /// The file, or `stdin`.
        what: String,
        /// The operating system's reason.
        message: String,
    },
    /// A line does not parse with the stream's schema.
    #[error("{what}, line {line}: {message}")]
    Malformed {
        /// The file, or `stdin`.
        what: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The `WITH (…)` options do not describe a source sliq can read.
    #[error("{0}")]
    Options(String),
}

/// What to do with a malformed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Stop with an error naming the line (the default).
    Fail,
    /// Report the line on stderr and go on.
    Skip,
}

/// Input format of a file or stdin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values (or another delimiter).
    Csv,
    /// One JSON object per line.
    JsonLines,
    /// Arrow IPC, file or stream format.
    Arrow,
}

/// A source's configuration, from a stream's options.
#[derive(Clone, Debug)]
pub enum SourceSpec {
    /// A file (`path = '…'`).
    File {
        path: PathBuf,
        format: Format,
        header: bool,
        delimiter: u8,
        on_error: OnError,
    },
    /// Standard input (`source = 'stdin'`).
    Stdin {
        format: Format,
        header: bool,
        delimiter: u8,
        on_error: OnError,
    },
    /// Synthetic events (`source = 'generator'`).
    Generator {
        rate: f64,
        keys: u64,
        rows: Option<u64>,
    },
}

fn option<'a>(options: &'a [(String, String)], key: &str) -> Option<&'a str> {
    options
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn flag(options: &[(String, String)], key: &str, default: bool) -> Result<bool, SourceError> {
    match option(options, key).map(str::to_ascii_lowercase).as_deref() {
        None => Ok(default),
        Some("true" | "yes" | "1") => Ok(true),
        Some("false" | "no" | "0") => Ok(false),
        Some(other) => Err(SourceError::Options(format!(
            "{key} = '{other}': expected true or false"
        ))),
    }
}

fn number(options: &[(String, String)], key: &str) -> Result<Option<f64>, SourceError> {
    option(options, key)
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    SourceError::Options(format!("{key} = '{v}': expected a non-negative number"))
                })
        })
        .transpose()
}

impl SourceSpec {
    /// The source a stream's options describe, if any.
    pub fn from_options(options: &[(String, String)]) -> Result<Option<SourceSpec>, SourceError> {
        for unsupported in ["follow", "listen"] {
            if option(options, unsupported).is_some() {
                return Err(SourceError::Options(format!(
                    "the option '{unsupported}' is not implemented yet (files are read once; sources: path, stdin, generator)"
                )));
            }
        }
        let format = match option(options, "format")
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("csv") => Format::Csv,
            Some("jsonl" | "json" | "ndjson") => Format::JsonLines,
            Some("arrow" | "ipc") => Format::Arrow,
            Some(other) => {
                return Err(SourceError::Options(format!(
                    "format = '{other}': expected 'csv', 'jsonl' or 'arrow'"
                )));
            }
        };
        let header = flag(options, "header", true)?;
        let delimiter = match option(options, "delimiter") {
            None => b',',
            Some(d) if d.len() == 1 => d.as_bytes()[0],
            Some("\\t" | "tab") => b'\t',
            Some(d) => {
                return Err(SourceError::Options(format!(
                    "delimiter = '{d}': expected one character"
                )));
            }
        };
        let on_error = match option(options, "on_error")
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("fail") => OnError::Fail,
            Some("skip") => OnError::Skip,
            Some(other) => {
                return Err(SourceError::Options(format!(
                    "on_error = '{other}': expected 'fail' or 'skip'"
                )));
            }
        };
        Ok(
            match (
                option(options, "source")
                    .map(str::to_ascii_lowercase)
                    .as_deref(),
                option(options, "path"),
            ) {
                (Some("file") | None, Some(path)) => Some(SourceSpec::File {
                    path: PathBuf::from(path),
                    format,
                    header,
                    delimiter,
                    on_error,
                }),
                (None, None) => None,
                (Some("stdin"), _) => Some(SourceSpec::Stdin {
                    format,
                    header,
                    delimiter,
                    on_error,
                }),
                (Some("generator"), _) => Some(SourceSpec::Generator {
                    rate: number(options, "rate")?.unwrap_or(0.0),
                    keys: number(options, "keys")?
                        .map(|k| k.max(1.0) as u64)
                        .unwrap_or(10),
                    rows: number(options, "rows")?.map(|r| r as u64),
                }),
                (Some("file"), None) => {
                    return Err(SourceError::Options(
                        "source = 'file' needs path = '…'".into(),
                    ));
                }
                (Some(other), _) => {
                    return Err(SourceError::Options(format!(
                        "source = '{other}' is not supported (use path = '…', source = 'stdin' or source = 'generator')"
                    )));
                }
            },
        )
    }

    /// Whether the source ends by itself.
    pub fn is_finite(&self) -> bool {
        match self {
            SourceSpec::File { .. } | SourceSpec::Stdin { .. } => true,
            SourceSpec::Generator { rows, .. } => rows.is_some(),
        }
    }

    /// Opens the source for a stream with `schema` (`event_time` names its
    /// event-time column, used by the generator).
    pub fn open(
        &self,
        schema: SchemaRef,
        event_time: Option<&str>,
    ) -> Result<BatchReader, SourceError> {
        Ok(match self {
            SourceSpec::File {
                path,
                format,
                header,
                delimiter,
                on_error,
            } => {
                let what = path.display().to_string();
                let file = File::open(path).map_err(|e| SourceError::Io {
                    what: what.clone(),
                    message: e.to_string(),
                })?;
                text_reader(
                    Box::new(BufReader::with_capacity(1 << 20, file)),
                    what,
                    schema,
                    *format,
                    *header,
                    *delimiter,
                    *on_error,
                )?
            }
            SourceSpec::Stdin {
                format,
                header,
                delimiter,
                on_error,
            } => {
                let stdin = BufReader::with_capacity(1 << 20, io::stdin());
                text_reader(
                    Box::new(stdin),
                    "stdin".into(),
                    schema,
                    *format,
                    *header,
                    *delimiter,
                    *on_error,
                )?
            }
            SourceSpec::Generator { rate, keys, rows } => {
                let event_time = event_time.and_then(|c| schema.index_of(c).ok());
                BatchReader::Generator(Generator::new(schema, event_time, *rate, *keys, *rows))
            }
        })
    }
}

fn text_reader(
    input: Box<dyn BufRead + Send>,
    what: String,
    schema: SchemaRef,
    format: Format,
    header: bool,
    delimiter: u8,
    on_error: OnError,
) -> Result<BatchReader, SourceError> {
    Ok(match format {
        Format::Csv => BatchReader::Csv(CsvLines {
            input,
            what,
            schema,
            header,
            delimiter,
            on_error,
            line: 0,
            done: false,
        }),
        Format::JsonLines => {
            let reader = arrow_json::ReaderBuilder::new(schema)
                .with_batch_size(BATCH_ROWS)
                .build(input)
                .map_err(|e| SourceError::Options(format!("{what}: {e}")))?;
            BatchReader::Other(what, Box::new(reader))
        }
        Format::Arrow => {
            let mut bytes = Vec::new();
            let mut input = input;
            input.read_to_end(&mut bytes).map_err(|e| SourceError::Io {
                what: what.clone(),
                message: e.to_string(),
            })?;
            let batches: Vec<Result<RecordBatch, arrow_schema::ArrowError>> =
                if bytes.starts_with(b"ARROW1") {
                    arrow_ipc::reader::FileReader::try_new(io::Cursor::new(bytes), None)
                        .map_err(|e| SourceError::Options(format!("{what}: {e}")))?
                        .collect()
                } else {
                    arrow_ipc::reader::StreamReader::try_new(io::Cursor::new(bytes), None)
                        .map_err(|e| SourceError::Options(format!("{what}: {e}")))?
                        .collect()
                };
            BatchReader::Other(what, Box::new(batches.into_iter()))
        }
    })
}

/// Batches from a source, one at a time.
pub enum BatchReader {
    /// CSV read line by line (so that errors name their line).
    Csv(CsvLines),
    /// JSON lines or Arrow IPC.
    Other(
        String,
        Box<dyn Iterator<Item = Result<RecordBatch, arrow_schema::ArrowError>> + Send>,
    ),
    /// Synthetic events.
    Generator(Generator),
}

impl Iterator for BatchReader {
    type Item = Result<RecordBatch, SourceError>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            BatchReader::Csv(csv) => csv.next_batch().transpose(),
            BatchReader::Other(what, it) => it.next().map(|r| {
                r.map_err(|e| SourceError::Malformed {
                    what: what.clone(),
                    line: 0,
                    message: e.to_string(),
                })
            }),
            BatchReader::Generator(g) => g.next_batch().map(Ok),
        }
    }
}

/// A CSV source decoded in chunks of lines with arrow-csv.
pub struct CsvLines {
    input: Box<dyn BufRead + Send>,
    what: String,
    schema: SchemaRef,
    header: bool,
    delimiter: u8,
    on_error: OnError,
    /// Lines read so far.
    line: usize,
    done: bool,
}

impl CsvLines {
    fn decoder(&self, rows: usize) -> arrow_csv::reader::Decoder {
        arrow_csv::ReaderBuilder::new(Arc::clone(&self.schema))
            .with_header(false)
            .with_delimiter(self.delimiter)
            .with_batch_size(rows.max(1))
            .build_decoder()
    }

    fn decode(
        &self,
        bytes: &[u8],
        rows: usize,
    ) -> Result<Option<RecordBatch>, arrow_schema::ArrowError> {
        let mut decoder = self.decoder(rows);
        let mut offset = 0;
        while offset < bytes.len() {
            let used = decoder.decode(&bytes[offset..])?;
            if used == 0 {
                break;
            }
            offset += used;
        }
        decoder.flush()
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>, SourceError> {
        loop {
            if self.done {
                return Ok(None);
            }
            let mut chunk = Vec::with_capacity(1 << 16);
            let mut starts = Vec::new(); // (line number, byte offset) of each record
            while starts.len() < BATCH_ROWS {
                let at = chunk.len();
                let n = self
                    .input
                    .read_until(b'\n', &mut chunk)
                    .map_err(|e| SourceError::Io {
                        what: self.what.clone(),
                        message: e.to_string(),
                    })?;
                if n == 0 {
                    self.done = true;
                    break;
                }
                self.line += 1;
                if self.header && self.line == 1 {
                    chunk.truncate(at);
                    continue;
                }
                if chunk[at..].iter().all(|b| b.is_ascii_whitespace()) {
                    chunk.truncate(at);
                    continue;
                }
                if !chunk.ends_with(b"\n") {
                    chunk.push(b'\n');
                }
                starts.push((self.line, at));
            }
            if starts.is_empty() {
                continue;
            }
            match self.decode(&chunk, starts.len()) {
                Ok(batch) => return Ok(batch),
                Err(_) => {
                    // Find the bad lines one by one: name them, then fail or skip.
                    let mut good = Vec::new();
                    for (i, &(line, start)) in starts.iter().enumerate() {
                        let end = starts.get(i + 1).map_or(chunk.len(), |&(_, s)| s);
                        match self.decode(&chunk[start..end], 1) {
                            Ok(Some(b)) => good.push(b),
                            Ok(None) => {}
                            Err(e) => {
                                let error = SourceError::Malformed {
                                    what: self.what.clone(),
                                    line,
                                    message: e.to_string(),
                                };
                                match self.on_error {
                                    OnError::Fail => return Err(error),
                                    OnError::Skip => eprintln!("skipped {error}"),
                                }
                            }
                        }
                    }
                    if good.is_empty() {
                        continue;
                    }
                    return arrow_select_concat(&self.schema, &good).map(Some);
                }
            }
        }
    }
}

fn arrow_select_concat(
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<RecordBatch, SourceError> {
    arrow_array::RecordBatch::try_new(
        Arc::clone(schema),
        (0..schema.fields().len())
            .map(|i| {
                let parts: Vec<&dyn arrow_array::Array> =
                    batches.iter().map(|b| b.column(i).as_ref()).collect();
                arrow_cast_concat(&parts)
            })
            .collect::<Result<Vec<_>, _>>()?,
    )
    .map_err(|e| SourceError::Options(e.to_string()))
}

fn arrow_cast_concat(parts: &[&dyn arrow_array::Array]) -> Result<ArrayRef, SourceError> {
    arrow_select::concat::concat(parts).map_err(|e| SourceError::Options(e.to_string()))
}

/// Synthetic events for demos and load tests: the event-time column is the
/// wall clock (or a counter when unthrottled), strings are keys `k0…`,
/// floats drift per key, integers count rows.
pub struct Generator {
    schema: SchemaRef,
    event_time: Option<usize>,
    rate: f64,
    keys: u64,
    remaining: Option<u64>,
    produced: u64,
    started: Instant,
    levels: Vec<f64>,
    state: u64,
}

impl Generator {
    /// A generator of `rows` rows (or endless) at `rate` rows/s (0: as fast
    /// as possible) over `keys` keys.
    pub fn new(
        schema: SchemaRef,
        event_time: Option<usize>,
        rate: f64,
        keys: u64,
        rows: Option<u64>,
    ) -> Self {
        let keys = keys.max(1);
        Generator {
            schema,
            event_time,
            rate,
            keys,
            remaining: rows,
            produced: 0,
            started: Instant::now(),
            levels: (0..keys).map(|k| 20.0 + (k % 7) as f64 * 5.0).collect(),
            state: 0x2545_F491_4F6C_DD1D,
        }
    }

    fn random(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn next_batch(&mut self) -> Option<RecordBatch> {
        let mut rows = if self.rate > 0.0 {
            // Pace to the rate: sleep until the next 50 ms worth of rows is due.
            let due = (self.started.elapsed().as_secs_f64() * self.rate) as u64;
            if due <= self.produced {
                std::thread::sleep(Duration::from_millis(50));
            }
            let due = (self.started.elapsed().as_secs_f64() * self.rate) as u64;
            (due.saturating_sub(self.produced)).clamp(1, BATCH_ROWS as u64) as usize
        } else {
            BATCH_ROWS
        };
        if let Some(left) = self.remaining {
            if left == 0 {
                return None;
            }
            rows = rows.min(left as usize);
            self.remaining = Some(left - rows as u64);
        }
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let keys: Vec<u64> = (0..rows).map(|_| self.random() % self.keys).collect();
        let mut values = Vec::with_capacity(rows);
        for &k in &keys {
            let step = (self.random() % 2001) as f64 / 1000.0 - 1.0;
            let level = &mut self.levels[k as usize];
            *level += step * 0.1;
            values.push((*level * 1000.0).round() / 1000.0);
        }
        let first = self.produced as i64;
        let columns: Vec<ArrayRef> = self
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| -> ArrayRef {
                let is_time = Some(i) == self.event_time;
                let time = |r: usize| {
                    if self.rate > 0.0 {
                        now_ms
                    } else {
                        first + r as i64
                    }
                };
                match f.data_type() {
                    DataType::Timestamp(TimeUnit::Millisecond, _) => {
                        let mut b = TimestampMillisecondBuilder::with_capacity(rows);
                        (0..rows).for_each(|r| b.append_value(time(r)));
                        Arc::new(b.finish())
                    }
                    DataType::Int64 => {
                        let mut b = Int64Builder::with_capacity(rows);
                        (0..rows).for_each(|r| {
                            b.append_value(if is_time { time(r) } else { first + r as i64 })
                        });
                        Arc::new(b.finish())
                    }
                    DataType::Int32 => {
                        let mut b = Int32Builder::with_capacity(rows);
                        (0..rows).for_each(|r| b.append_value((first + r as i64) as i32));
                        Arc::new(b.finish())
                    }
                    DataType::Float64 => {
                        let mut b = Float64Builder::with_capacity(rows);
                        values.iter().for_each(|v| b.append_value(*v));
                        Arc::new(b.finish())
                    }
                    DataType::Utf8 => {
                        // Keys named after the column: `sensor-07`, `key-3`.
                        let mut b = StringBuilder::with_capacity(rows, rows * 12);
                        keys.iter()
                            .for_each(|k| b.append_value(format!("{}-{k:02}", f.name())));
                        Arc::new(b.finish())
                    }
                    DataType::Boolean => {
                        let mut b = BooleanBuilder::with_capacity(rows);
                        keys.iter().for_each(|k| b.append_value(k % 2 == 0));
                        Arc::new(b.finish())
                    }
                    other => arrow_array::new_null_array(other, rows),
                }
            })
            .collect();
        self.produced += rows as u64;
        RecordBatch::try_new(Arc::clone(&self.schema), columns).ok()
    }
}

//! Sources declared in `CREATE STREAM … WITH (…)`: files (optionally
//! followed as they grow), stdin, TCP clients and a TCP server in CSV or
//! JSON lines, Arrow IPC and Parquet files, the DEBS 2012 data, and a
//! generator of synthetic events.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parking_lot::Mutex;

use crate::console::note;
use crate::generator::Generator;

mod buffer;
mod clients;
mod decoder;
mod explain;
mod header;
mod json_keys;
mod lines;
mod numbers;
mod parquet_file;
mod plain_csv;
mod read_types;
mod records;
mod row_lines;
mod structural;

use clients::{ClientLines, SharedClientLines};
pub use lines::Lines;
use records::RecordEnds;
pub use row_lines::RowLines;

/// Rows per batch read from files.
pub const BATCH_ROWS: usize = 8192;

/// The most keys a generator source takes (it keeps one f64 per key).
const MAX_GENERATOR_KEYS: u64 = 10_000_000;

/// A failure reading a source.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file, stream or socket cannot be opened or read.
    #[error("{what}: {message}")]
    Io {
        /// The file, `stdin`, or the address listened on or connected to.
        what: String,
        /// The operating system's reason.
        message: String,
    },
    /// A line does not parse with the stream's schema.
    #[error("{what}, line {line}: {message}")]
    Malformed {
        /// The file, `stdin`, or the address listened on or connected to.
        what: String,
        /// 1-based line number (for TCP, the client's own; `what` names
        /// the client).
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Arrow IPC or Parquet input that does not decode, or whose values do
    /// not convert to the stream's types.
    #[error("{what}, after {batches} batch(es): {message}")]
    Batches {
        /// The file or `stdin`.
        what: String,
        /// The batches read before.
        batches: usize,
        /// What is wrong.
        message: String,
    },
    /// The source cannot be read as the stream declares it (a column the
    /// data lacks, a format the source cannot carry).
    #[error("{0}")]
    Unreadable(String),
    /// The value of one option of the stream is at fault.
    #[error("{message}")]
    BadOption {
        /// The option (its key).
        option: String,
        /// What is wrong.
        message: String,
    },
    /// An option that no one reads, most likely misspelt.
    #[error("{message}")]
    UnknownOption {
        /// The option as written (lower-cased).
        option: String,
        /// What is wrong, with the closest known option.
        message: String,
    },
}

impl SourceError {
    /// The value of `option` is at fault, for `message`.
    fn bad_option(option: &str, message: impl Into<String>) -> Self {
        SourceError::BadOption {
            option: option.to_string(),
            message: message.into(),
        }
    }

    /// As an error of the `CREATE STREAM` that declared `definition`,
    /// pointing at the option at fault.
    pub fn in_definition(self, definition: &sliq_sql::StreamDefinition) -> sliq_sql::SqlError {
        match self {
            SourceError::BadOption { option, message } => definition.value_error(&option, message),
            SourceError::UnknownOption { option, message } => {
                definition.key_error(&option, message)
            }
            other => sliq_sql::SqlError::plan(other.to_string()),
        }
    }

    /// `what` (a file, `stdin`, an address) failed for the operating
    /// system's reason `error`.
    pub(crate) fn io(what: &str, error: std::io::Error) -> Self {
        SourceError::Io {
            what: what.to_string(),
            message: error.to_string(),
        }
    }
}

/// What is wrong with Arrow IPC input, in the reader's words except for an
/// input that ends inside a message.
fn arrow_error_message(e: &arrow_schema::ArrowError) -> String {
    match e {
        arrow_schema::ArrowError::IoError(_, io) if io.kind() == io::ErrorKind::UnexpectedEof => {
            "the input ends inside a message: it is cut short, or not Arrow IPC".to_string()
        }
        other => other.to_string(),
    }
}

/// What to do with a malformed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Stop with an error naming the line (the default).
    Fail,
    /// Report the line on stderr and go on.
    Skip,
}

/// Input format of text sources and files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values (or another delimiter).
    Csv,
    /// One JSON object per line.
    JsonLines,
    /// Arrow IPC, file or stream format (files and stdin only).
    Arrow,
    /// Parquet (files only: its footer is read first).
    Parquet,
}

/// How text lines are read, whatever they come from.
#[derive(Clone, Copy, Debug)]
pub struct TextOptions {
    format: Format,
    header: bool,
    delimiter: u8,
    on_error: OnError,
}

impl TextOptions {
    /// Whether the first line that is not blank is read apart: as a header
    /// (CSV with `header`), or for its keys (JSON lines).
    fn reads_first_line(&self) -> bool {
        match self.format {
            Format::Csv => self.header,
            Format::JsonLines => true,
            _ => false,
        }
    }
}

/// A source's configuration, from a stream's options.
#[derive(Clone, Debug)]
pub enum SourceSpec {
    /// A file (`path = '…'`), read once or followed as it grows (`follow = true`).
    File {
        path: PathBuf,
        text: TextOptions,
        follow: bool,
    },
    /// Standard input (`source = 'stdin'`).
    Stdin { text: TextOptions },
    /// Newline-delimited records from any number of TCP clients
    /// (`source = 'tcp', listen = 'host:port'`).
    TcpClients { listen: String, text: TextOptions },
    /// Newline-delimited records read from a TCP server until it closes the
    /// connection (`source = 'tcp', connect = 'host:port'`).
    TcpServer { connect: String, text: TextOptions },
    /// Synthetic events (`source = 'generator'`).
    Generator {
        rate: f64,
        keys: u64,
        rows: Option<u64>,
    },
    /// The DEBS 2012 Grand Challenge data (`source = 'debs', path = '…'`,
    /// plain or gzip), projected onto the stream's columns by name.
    Debs {
        path: PathBuf,
        out_of_order: sliq_debs::OutOfOrder,
        /// `speed = N`: replay N× faster than recorded (1.0 = real time);
        /// absent: as fast as possible.
        speed: Option<f64>,
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
        Some(other) => Err(SourceError::bad_option(
            key,
            format!("{key} = '{other}': expected true or false"),
        )),
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
                    SourceError::bad_option(
                        key,
                        format!("{key} = '{v}': expected a non-negative number"),
                    )
                })
        })
        .transpose()
}

fn text_options(
    options: &[(String, String)],
    default_header: bool,
) -> Result<TextOptions, SourceError> {
    let format = match option(options, "format")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("csv") => Format::Csv,
        Some("jsonl" | "json" | "ndjson") => Format::JsonLines,
        Some("arrow" | "ipc") => Format::Arrow,
        Some("parquet") => Format::Parquet,
        Some(other) => {
            return Err(SourceError::bad_option(
                "format",
                format!("format = '{other}': expected 'csv', 'jsonl', 'arrow' or 'parquet'"),
            ));
        }
    };
    let delimiter = match option(options, "delimiter") {
        None => b',',
        Some("\\t" | "tab") => b'\t',
        Some(d) if d.len() == 1 => d.as_bytes()[0],
        Some(d) => {
            return Err(SourceError::bad_option(
                "delimiter",
                format!("delimiter = '{d}': expected one character"),
            ));
        }
    };
    let on_error = match option(options, "on_error")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("fail") => OnError::Fail,
        Some("skip") => OnError::Skip,
        Some(other) => {
            return Err(SourceError::bad_option(
                "on_error",
                format!("on_error = '{other}': expected 'fail' or 'skip'"),
            ));
        }
    };
    Ok(TextOptions {
        format,
        header: flag(options, "header", default_header)?,
        delimiter,
        on_error,
    })
}

/// The format a file's extension names, for a stream that gives none:
/// `.jsonl`, `.ndjson` and `.json` are JSON lines, `.arrow`, `.arrows`,
/// `.ipc` and `.feather` Arrow IPC, `.parquet` and `.pq` Parquet, and
/// anything else CSV.
fn format_of_file(path: &str) -> Format {
    let extension = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("jsonl" | "ndjson" | "json") => Format::JsonLines,
        Some("arrow" | "arrows" | "ipc" | "feather") => Format::Arrow,
        Some("parquet" | "pq") => Format::Parquet,
        _ => Format::Csv,
    }
}

/// The `WITH` options the binary reads (the engine takes `event_time` and
/// `on_late` itself; they never reach [`SourceSpec::from_options`]).
const SOURCE_OPTIONS: &[&str] = &[
    "source",
    "path",
    "format",
    "header",
    "delimiter",
    "follow",
    "on_error",
    "listen",
    "connect",
    "rate",
    "keys",
    "rows",
    "out_of_order",
    "delay_ms",
    "speed",
];

impl SourceSpec {
    /// The source a stream's options describe, if any. An option nobody
    /// reads is an error (most likely a misspelt one), with the closest
    /// known name suggested.
    pub fn from_options(options: &[(String, String)]) -> Result<Option<SourceSpec>, SourceError> {
        if let Some((key, _)) = options
            .iter()
            .find(|(key, _)| !SOURCE_OPTIONS.contains(&key.as_str()))
        {
            let known = ["event_time", "on_late", "key_ttl"]
                .iter()
                .chain(SOURCE_OPTIONS);
            let hint = sliq_sql::did_you_mean(&sliq_sql::closest(key, known.copied()));
            return Err(SourceError::UnknownOption {
                option: key.clone(),
                message: format!(
                    "unknown option '{key}'{hint} (streams take event_time, on_late, key_ttl, {})",
                    SOURCE_OPTIONS.join(", ")
                ),
            });
        }
        let source = option(options, "source").map(str::to_ascii_lowercase);
        let spec = match (source.as_deref(), option(options, "path")) {
            (Some("file") | None, Some(path)) => {
                let mut text = text_options(options, true)?;
                if option(options, "format").is_none() {
                    text.format = format_of_file(path);
                }
                let follow = flag(options, "follow", false)?;
                if follow && text.format == Format::Parquet {
                    return Err(SourceError::bad_option(
                        "follow",
                        "follow = 'true' reads text as it is appended; a Parquet file is read whole",
                    ));
                }
                Some(SourceSpec::File {
                    path: PathBuf::from(path),
                    text,
                    follow,
                })
            }
            (None, None) => {
                // No source reads them, but a bad one is still a mistake.
                text_options(options, true)?;
                flag(options, "follow", false)?;
                None
            }
            (Some("stdin"), _) => {
                let text = text_options(options, true)?;
                if text.format == Format::Parquet {
                    return Err(SourceError::bad_option(
                        "format",
                        "format = 'parquet' reads files (path = '…'), not stdin",
                    ));
                }
                Some(SourceSpec::Stdin { text })
            }
            (Some("tcp"), _) => {
                // A server's lines are one text, as stdin's are, that may
                // start with a header; clients' lines interleave, so none
                // is a header unless the stream says so.
                let lines = |default_header| {
                    let text = text_options(options, default_header)?;
                    if matches!(text.format, Format::Arrow | Format::Parquet) {
                        return Err(SourceError::bad_option(
                            "format",
                            "source = 'tcp' reads CSV or JSON lines, not Arrow or Parquet",
                        ));
                    }
                    Ok(text)
                };
                match (option(options, "listen"), option(options, "connect")) {
                    (Some(listen), None) => Some(SourceSpec::TcpClients {
                        listen: listen.to_string(),
                        text: lines(false)?,
                    }),
                    (None, Some(connect)) => Some(SourceSpec::TcpServer {
                        connect: connect.to_string(),
                        text: lines(true)?,
                    }),
                    (Some(_), Some(_)) => {
                        return Err(SourceError::bad_option(
                            "connect",
                            "source = 'tcp' takes listen = 'host:port' (clients send lines to \
                             sliq) or connect = 'host:port' (sliq reads a server's lines), not both",
                        ));
                    }
                    (None, None) => {
                        return Err(SourceError::bad_option(
                            "source",
                            "source = 'tcp' needs listen = 'host:port' (clients send lines to \
                             sliq) or connect = 'host:port' (sliq reads a server's lines)",
                        ));
                    }
                }
            }
            (Some("generator"), _) => Some(SourceSpec::Generator {
                rate: number(options, "rate")?.unwrap_or(0.0),
                keys: match number(options, "keys")? {
                    None => 10,
                    Some(k) if k <= MAX_GENERATOR_KEYS as f64 => (k as u64).max(1),
                    Some(_) => {
                        return Err(SourceError::bad_option(
                            "keys",
                            format!(
                                "keys = '{}': at most {MAX_GENERATOR_KEYS} (the generator keeps \
                                 a level per key)",
                                option(options, "keys").unwrap_or_default()
                            ),
                        ));
                    }
                },
                rows: number(options, "rows")?.map(|r| r as u64),
            }),
            (Some("debs"), Some(path)) => {
                let out_of_order = match option(options, "out_of_order")
                    .map(str::to_ascii_lowercase)
                    .as_deref()
                {
                    None | Some("drop") => sliq_debs::OutOfOrder::Drop,
                    Some("reorder") => sliq_debs::OutOfOrder::Reorder {
                        delay_us: (number(options, "delay_ms")?.unwrap_or(1000.0) * 1000.0) as i64,
                    },
                    Some(other) => {
                        return Err(SourceError::bad_option(
                            "out_of_order",
                            format!("out_of_order = '{other}': expected 'drop' or 'reorder'"),
                        ));
                    }
                };
                let speed = number(options, "speed")?.filter(|s| *s > 0.0);
                Some(SourceSpec::Debs {
                    path: PathBuf::from(path),
                    out_of_order,
                    speed,
                })
            }
            (Some("debs"), None) => {
                return Err(SourceError::bad_option(
                    "source",
                    "source = 'debs' needs path = '…'",
                ));
            }
            (Some("file"), None) => {
                return Err(SourceError::bad_option(
                    "source",
                    "source = 'file' needs path = '…'",
                ));
            }
            (Some(other), _) => {
                return Err(SourceError::bad_option(
                    "source",
                    format!(
                        "source = '{other}' is not supported (use path = '…', source = 'stdin', 'tcp', 'generator' or 'debs')"
                    ),
                ));
            }
        };
        let (what, reads) = Self::options_read(spec.as_ref());
        if let Some((key, _)) = options
            .iter()
            .find(|(key, _)| key != "source" && !reads.contains(&key.as_str()))
        {
            let message = match what {
                None => format!(
                    "{key} means nothing to a stream without a source (path = '…' or \
                     source = '…' declares one)"
                ),
                Some(what) => format!(
                    "{key} means nothing to {what}, which reads {}",
                    reads.join(", ")
                ),
            };
            return Err(SourceError::bad_option(key, message));
        }
        Ok(spec)
    }

    /// What reads a stream's options, named for errors (`None` for a stream
    /// without a source), and the options it reads besides `source`.
    fn options_read(spec: Option<&SourceSpec>) -> (Option<&'static str>, &'static [&'static str]) {
        match spec {
            // Nothing reads them, but a bad one is refused all the same.
            None => (
                None,
                &["format", "header", "delimiter", "on_error", "follow"],
            ),
            Some(SourceSpec::File { .. }) => (
                Some("a file source"),
                &[
                    "path",
                    "format",
                    "header",
                    "delimiter",
                    "on_error",
                    "follow",
                ],
            ),
            Some(SourceSpec::Stdin { .. }) => (
                Some("source = 'stdin'"),
                &["format", "header", "delimiter", "on_error"],
            ),
            Some(SourceSpec::TcpClients { .. }) => (
                Some("source = 'tcp' with listen"),
                &["listen", "format", "header", "delimiter", "on_error"],
            ),
            Some(SourceSpec::TcpServer { .. }) => (
                Some("source = 'tcp' with connect"),
                &["connect", "format", "header", "delimiter", "on_error"],
            ),
            Some(SourceSpec::Generator { .. }) => {
                (Some("source = 'generator'"), &["rate", "keys", "rows"])
            }
            Some(SourceSpec::Debs { .. }) => (
                Some("source = 'debs'"),
                &["path", "out_of_order", "delay_ms", "speed"],
            ),
        }
    }

    /// Whether the source ends by itself.
    pub fn is_finite(&self) -> bool {
        match self {
            SourceSpec::File { follow, .. } => !follow,
            SourceSpec::Stdin { .. } | SourceSpec::Debs { .. } => true,
            SourceSpec::TcpClients { .. } | SourceSpec::TcpServer { .. } => false,
            SourceSpec::Generator { rows, .. } => rows.is_some(),
        }
    }

    /// How messages name the source: its path, `stdin`, its address.
    pub fn name(&self) -> String {
        match self {
            SourceSpec::File { path, .. } | SourceSpec::Debs { path, .. } => {
                path.display().to_string()
            }
            SourceSpec::Stdin { .. } => "stdin".to_string(),
            SourceSpec::TcpServer { connect, .. } => connect.clone(),
            SourceSpec::TcpClients { listen, .. } => listen.clone(),
            SourceSpec::Generator { .. } => "the generator".to_string(),
        }
    }

    /// The size of the file to replay, for a progress bar.
    pub fn file_size(&self) -> Option<u64> {
        match self {
            SourceSpec::File {
                path,
                follow: false,
                ..
            } => std::fs::metadata(path).ok().map(|m| m.len()),
            _ => None,
        }
    }

    /// Opens the source for a stream with `schema` (`event_time` names its
    /// event-time column, used by the generator). Reading stops at the next
    /// batch once `stop` is raised; `progress` counts bytes read from files.
    pub fn open(
        &self,
        schema: SchemaRef,
        event_time: Option<&str>,
        stop: Arc<AtomicBool>,
        progress: Arc<AtomicU64>,
    ) -> Result<BatchReader, SourceError> {
        Ok(match self {
            SourceSpec::File { path, text, follow } => {
                let what = self.name();
                let file = File::open(path).map_err(|e| SourceError::io(&what, e))?;
                if text.format == Format::Parquet {
                    return Ok(BatchReader::Parquet(parquet_file::open(
                        what, file, schema, progress,
                    )?));
                }
                let watched = match follow {
                    true => Some(file.try_clone().map_err(|e| SourceError::io(&what, e))?),
                    false => None,
                };
                let input = Box::new(Counting {
                    inner: file,
                    bytes: progress,
                });
                let live = Liveness {
                    live: *follow,
                    follow: watched,
                    stop,
                };
                text_reader(input, what, schema, *text, live)?
            }
            SourceSpec::Stdin { text } => {
                let live = Liveness {
                    live: true,
                    follow: None,
                    stop,
                };
                text_reader(Box::new(io::stdin()), self.name(), schema, *text, live)?
            }
            SourceSpec::TcpServer { connect, text } => {
                let input = connect_tcp(connect, Arc::clone(&stop))?;
                let live = Liveness {
                    live: true,
                    follow: None,
                    stop,
                };
                text_reader(input, self.name(), schema, *text, live)?
            }
            SourceSpec::TcpClients { listen, text } => {
                let records = RecordEnds::of(text);
                let (input, clients) = listen_tcp(listen, records, Arc::clone(&stop))?;
                let live = Liveness {
                    live: true,
                    follow: None,
                    stop,
                };
                match text_reader(input, self.name(), schema, *text, live)? {
                    BatchReader::Lines(lines) => BatchReader::Lines(lines.naming_clients(clients)),
                    other => other,
                }
            }
            SourceSpec::Generator { rate, keys, rows } => {
                let event_time = event_time.and_then(|c| schema.index_of(c).ok());
                BatchReader::Generator(Generator::new(schema, event_time, *rate, *keys, *rows))
            }
            SourceSpec::Debs {
                path,
                out_of_order,
                speed,
            } => {
                let what = self.name();
                let file = File::open(path).map_err(|e| SourceError::io(&what, e))?;
                let counted = Counting {
                    inner: file,
                    bytes: progress,
                };
                // The reader builds only the stream's columns, after the
                // event time (column 0 of its batches, for pacing).
                let wanted = debs_projection(&schema)?;
                let mut columns = vec![0];
                for &c in &wanted {
                    if !columns.contains(&c) {
                        columns.push(c);
                    }
                }
                let projection = wanted
                    .iter()
                    .map(|c| columns.iter().position(|x| x == c).unwrap_or_default())
                    .collect();
                let reader = sliq_debs::DebsReader::new(counted, *out_of_order)
                    .and_then(|r| r.with_columns(&columns))
                    .map_err(|e| SourceError::io(&what, e))?;
                // Paced replays read small batches, so that time flows smoothly.
                let reader = if speed.is_some() {
                    reader.with_batch_rows(64)
                } else {
                    reader
                };
                BatchReader::Debs {
                    what,
                    reader,
                    schema,
                    projection,
                    pace: speed.map(|s| Pace {
                        speed: s,
                        origin: None,
                    }),
                    reported: false,
                }
            }
        })
    }
}

/// For each column of the stream, its index among the DEBS columns.
fn debs_projection(schema: &SchemaRef) -> Result<Vec<usize>, SourceError> {
    schema
        .fields()
        .iter()
        .map(|f| {
            sliq_debs::FIELDS
                .iter()
                .position(|d| d.eq_ignore_ascii_case(f.name()))
                .ok_or_else(|| {
                    SourceError::Unreadable(format!(
                        "the DEBS data has no column '{}'; its columns are {}",
                        f.name(),
                        sliq_debs::FIELDS.join(", ")
                    ))
                })
        })
        .collect()
}

/// The stream's columns out of a batch read from a file (`positions`: each
/// one's column in the batch), cast to the declared types. A value that
/// does not convert is an error naming its column, never a silent NULL.
fn project(
    batch: &RecordBatch,
    schema: &SchemaRef,
    positions: &[usize],
) -> Result<RecordBatch, String> {
    let strict = arrow_cast::CastOptions {
        safe: false,
        ..arrow_cast::CastOptions::default()
    };
    let columns = positions
        .iter()
        .zip(schema.fields())
        .map(|(&i, f)| {
            arrow_cast::cast_with_options(batch.column(i), f.data_type(), &strict).map_err(|e| {
                let declared = sliq_sql::sql_type_name(f.data_type());
                format!("column '{}' ({declared}): {e}", f.name())
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(Arc::clone(schema), columns).map_err(|e| e.to_string())
}

/// Counts the bytes read through it (for the progress bar).
struct Counting<R> {
    inner: R,
    bytes: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The longest line a source reads: a longer TCP line closes its
/// connection (the line is dropped), and a longer line in a file or on
/// stdin ends the replay with an error, so that no input (a binary file,
/// `/dev/zero`) grows memory without bound while sliq looks for a line
/// break.
pub(super) const MAX_LINE_BYTES: u64 = 16 << 20;

/// How long a query waits for the address it listens on to be released
/// (by the listener of the query before it, which stops within
/// [`ACCEPT_POLL`]) before it reports the address in use.
const BIND_PATIENCE: Duration = Duration::from_secs(1);

/// How often a TCP listener, or the watch on a connection to a server,
/// looks whether its query has stopped.
const ACCEPT_POLL: Duration = Duration::from_millis(50);

/// Accepts TCP clients on `listen` and merges their lines into one stream
/// of bytes (a pipe), until `stop` is raised: then the listener closes and
/// the address is free for the next query over the stream. Each record
/// (its lines, when a quoted CSV cell holds line breaks) is written whole
/// under a lock, so records of different clients never mix, however long,
/// and its lines are recorded in the [`ClientLines`] returned with the pipe.
fn listen_tcp(
    listen: &str,
    records: RecordEnds,
    stop: Arc<AtomicBool>,
) -> Result<(Box<dyn Read + Send>, SharedClientLines), SourceError> {
    let io_error = |e| SourceError::io(listen, e);
    let started = std::time::Instant::now();
    let listener = loop {
        match TcpListener::bind(listen) {
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && started.elapsed() < BIND_PATIENCE => {
                std::thread::sleep(ACCEPT_POLL);
            }
            bound => break bound.map_err(io_error)?,
        }
    };
    // Polled rather than blocked in, so that the thread sees `stop`.
    listener.set_nonblocking(true).map_err(io_error)?;
    let (reader, writer) = io::pipe().map_err(io_error)?;
    note!(
        "listening on {}",
        listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| listen.to_string())
    );
    let writer = Arc::new(Mutex::new(writer));
    let clients = SharedClientLines::default();
    let recorded = Arc::clone(&clients);
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let client = match listener.accept() {
                Ok((client, _)) => client,
                // No client yet (or a passing failure, such as too many
                // open files): look again shortly.
                Err(_) => {
                    std::thread::sleep(ACCEPT_POLL);
                    continue;
                }
            };
            if client.set_nonblocking(false).is_err() {
                continue;
            }
            let out = Arc::clone(&writer);
            let recorded = Arc::clone(&recorded);
            std::thread::spawn(move || forward_records(client, records, &out, &recorded));
        }
    });
    Ok((Box::new(reader), clients))
}

/// How long connecting to a TCP server may take.
const CONNECT_PATIENCE: Duration = Duration::from_secs(10);

/// Connects to the server at `connect` (`host:port`, each of the host's
/// addresses in turn) and reads its lines until it closes the connection.
/// Once `stop` is raised (the query ended) the connection is shut down, so
/// that a read waiting on an idle server ends too.
fn connect_tcp(connect: &str, stop: Arc<AtomicBool>) -> Result<Box<dyn Read + Send>, SourceError> {
    let io_error = |e| SourceError::io(connect, e);
    let mut failure = io::Error::new(io::ErrorKind::NotFound, "the host has no address");
    let mut server = None;
    for address in connect.to_socket_addrs().map_err(io_error)? {
        match TcpStream::connect_timeout(&address, CONNECT_PATIENCE) {
            Ok(stream) => {
                server = Some(stream);
                break;
            }
            Err(e) => failure = e,
        }
    }
    let server = server.ok_or_else(|| io_error(failure))?;
    let watched = server.try_clone().map_err(io_error)?;
    note!(
        "connected to {}",
        server
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| connect.to_string())
    );
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(ACCEPT_POLL);
        }
        let _ = watched.shutdown(Shutdown::Both);
    });
    Ok(Box::new(server))
}

/// Copies a TCP client's records to `out`, recording each of their lines
/// in `recorded`, until it disconnects, the reader side is gone, or it
/// sends a record longer than [`MAX_LINE_BYTES`].
fn forward_records(
    client: TcpStream,
    records: RecordEnds,
    out: &Mutex<io::PipeWriter>,
    recorded: &Mutex<ClientLines>,
) {
    let peer: Arc<str> = client
        .peer_addr()
        .map_or_else(|_| "a client".to_string(), |a| a.to_string())
        .into();
    let mut input = BufReader::new(client);
    let mut record = Vec::new();
    let mut its_line = 0;
    loop {
        record.clear();
        // A line, and the lines after it while a quoted cell is open.
        loop {
            let room = (MAX_LINE_BYTES + 1).saturating_sub(record.len() as u64);
            match (&mut input).take(room).read_until(b'\n', &mut record) {
                Ok(0) if record.is_empty() => return,
                // Gone inside a quoted cell: the record goes as it is
                // (its line break ended the last read).
                Ok(0) => break,
                Err(_) => return,
                Ok(_) => {}
            }
            if record.len() as u64 > MAX_LINE_BYTES {
                let what = match memchr::memchr(b'\n', &record) {
                    None => "a line",
                    Some(_) => "a record (lines joined by a quoted cell)",
                };
                note!("{peer}: {what} longer than {MAX_LINE_BYTES} bytes; connection closed");
                return;
            }
            if !record.ends_with(b"\n") {
                record.push(b'\n'); // the client's last line, without a line break
                break;
            }
            if !records.is_open(&record) {
                break;
            }
        }
        // Recorded under the pipe's lock, so in the pipe's order, and before
        // the record goes in: the reader may read it (and ask whose it is)
        // as soon as it is written.
        let mut out = out.lock();
        let mut recorded = recorded.lock();
        for _ in 0..memchr::memchr_iter(b'\n', &record).count() {
            its_line += 1;
            recorded.record(&peer, its_line);
        }
        drop(recorded);
        if out.write_all(&record).is_err() {
            return;
        }
    }
}

/// Whether a text source is live (emit what has arrived instead of
/// waiting for a full batch) and followed (wait at end of file).
struct Liveness {
    live: bool,
    /// The file being followed (a handle sharing the reader's offset), to
    /// tell when it was truncated.
    follow: Option<File>,
    stop: Arc<AtomicBool>,
}

fn text_reader(
    input: Box<dyn Read + Send>,
    what: String,
    schema: SchemaRef,
    text: TextOptions,
    live: Liveness,
) -> Result<BatchReader, SourceError> {
    let input = BufReader::with_capacity(1 << 20, input);
    Ok(match text.format {
        Format::Csv | Format::JsonLines => {
            BatchReader::Lines(Lines::new(input, what, schema, text, live))
        }
        Format::Parquet => {
            return Err(SourceError::Unreadable(format!(
                "{what}: format = 'parquet' reads files (path = '…')"
            )));
        }
        Format::Arrow => match arrow_batches(input) {
            Ok(reader) => BatchReader::Arrow {
                what,
                reader,
                batches: 0,
            },
            Err(e) => {
                return Err(SourceError::Batches {
                    what,
                    batches: 0,
                    message: arrow_error_message(&e),
                });
            }
        },
    })
}

/// Arrow IPC batches, read as they arrive rather than after the whole input.
type ArrowBatches = arrow_ipc::reader::StreamReader<Box<dyn BufRead + Send>>;

/// The batches of `input`, in Arrow's streaming format or its file format.
/// A file is its magic, zeros up to the writer's alignment (8 or 64 bytes),
/// the same stream of messages, and a footer; writers end that stream with
/// an end-of-stream marker before the footer, so past its padding a file
/// reads as a stream.
fn arrow_batches(
    mut input: BufReader<Box<dyn Read + Send>>,
) -> Result<ArrowBatches, arrow_schema::ArrowError> {
    const FILE_MAGIC: &[u8] = b"ARROW1\0\0";
    /// The next 8 bytes, or fewer at the input's end.
    fn word(input: &mut BufReader<Box<dyn Read + Send>>) -> io::Result<Vec<u8>> {
        let mut word = Vec::with_capacity(8);
        input.take(8).read_to_end(&mut word)?;
        Ok(word)
    }
    let mut head = word(&mut input)?;
    if head == FILE_MAGIC {
        head = word(&mut input)?;
        while head.len() == 8 && head.iter().all(|&b| b == 0) {
            head = word(&mut input)?;
        }
    }
    let stream: Box<dyn BufRead + Send> = Box::new(io::Cursor::new(head).chain(input));
    arrow_ipc::reader::StreamReader::try_new(stream, None)
}

/// Batches from a source, one at a time.
pub enum BatchReader {
    /// CSV or JSON lines, decoded in chunks of lines.
    Lines(Lines),
    /// Arrow IPC, with the number of batches read so far.
    Arrow {
        what: String,
        reader: ArrowBatches,
        batches: usize,
    },
    /// A Parquet file's batches.
    Parquet(parquet_file::ParquetBatches),
    /// Synthetic events.
    Generator(Generator),
    /// DEBS 2012 records, projected onto the stream's columns.
    Debs {
        what: String,
        reader: sliq_debs::DebsReader,
        schema: SchemaRef,
        projection: Vec<usize>,
        pace: Option<Pace>,
        /// Whether the read's skipped lines and events were reported.
        reported: bool,
    },
}

impl BatchReader {
    /// Leaves the stream columns marked in `unread` (by position), which no
    /// running query reads, unparsed where a text reader can: they come out
    /// NULL. Called before the first batch.
    pub fn leave_unread(&mut self, unread: Vec<bool>) {
        if let BatchReader::Lines(lines) = self {
            lines.leave_unread(unread);
        }
    }

    /// The lines the batch [`Iterator::next`] returned last was read from.
    pub fn take_row_lines(&mut self) -> RowLines {
        match self {
            BatchReader::Lines(lines) => lines.take_row_lines(),
            _ => RowLines::Unknown,
        }
    }
}

/// Tells what a DEBS read left out: its malformed lines (the first few by
/// number) and the events it dropped for arriving out of order.
fn report_debs_read(what: &str, stats: &sliq_debs::ReadStats) {
    for skipped in &stats.first_errors {
        note!("skipped {what}, {skipped}");
    }
    let unnamed = stats.malformed - stats.first_errors.len() as u64;
    if unnamed > 0 {
        note!("skipped {unnamed} more malformed line(s) of {what}");
    }
    if stats.dropped > 0 {
        note!(
            "dropped {} event(s) of {what} older than one already replayed (out_of_order = 'drop')",
            stats.dropped
        );
    }
}

/// Replays recorded time `speed`× faster than it was recorded.
pub struct Pace {
    speed: f64,
    /// Wall clock and event time (µs) of the first batch.
    origin: Option<(std::time::Instant, i64)>,
}

impl Pace {
    /// Sleeps until a batch spanning event times `first_us..=last_us` is due
    /// (its last event, counted from the replay's first one).
    fn wait_for(&mut self, first_us: i64, last_us: i64) {
        let (start, first) = *self
            .origin
            .get_or_insert((std::time::Instant::now(), first_us));
        let due = Duration::from_secs_f64(((last_us - first).max(0) as f64 / 1e6) / self.speed);
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
}

impl Iterator for BatchReader {
    type Item = Result<RecordBatch, SourceError>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            BatchReader::Lines(lines) => lines.next_batch().transpose(),
            BatchReader::Arrow {
                what,
                reader,
                batches,
            } => reader.next().map(|read| {
                *batches += 1;
                read.map_err(|e| SourceError::Batches {
                    what: what.clone(),
                    batches: *batches - 1,
                    message: arrow_error_message(&e),
                })
            }),
            BatchReader::Parquet(parquet) => parquet.next_batch(),
            BatchReader::Generator(g) => g.next_batch().map(Ok),
            BatchReader::Debs {
                what,
                reader,
                schema,
                projection,
                pace,
                reported,
            } => {
                let batch = match reader.next_batch() {
                    Ok(Some(batch)) => batch,
                    Ok(None) => {
                        if !std::mem::replace(reported, true) {
                            report_debs_read(what, reader.stats());
                        }
                        return None;
                    }
                    Err(e) => {
                        return Some(Err(SourceError::io(what, e)));
                    }
                };
                if let Some(pace) = pace {
                    use arrow_array::cast::AsArray;
                    let ts = batch
                        .column(0)
                        .as_primitive::<arrow_array::types::TimestampMicrosecondType>();
                    if let (Some(&first), Some(&last)) = (ts.values().first(), ts.values().last()) {
                        pace.wait_for(first, last);
                    }
                }
                Some(
                    project(&batch, schema, projection)
                        .map_err(|message| SourceError::Unreadable(format!("{what}: {message}"))),
                )
            }
        }
    }
}

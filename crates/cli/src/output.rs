//! Writing result batches: aligned tables, CSV or JSON lines.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::csv_encode;
use crate::float_texts::FloatTexts;

/// How results are printed (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Aligned tables (the default on a terminal).
    Table,
    /// CSV with a header line (the default otherwise).
    Csv,
    /// One JSON object per row.
    Json,
}

/// Why results could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Standard output was closed by its reader (`sliq … | head`): nobody
    /// wants more rows, which ends a script quietly.
    #[error("standard output was closed")]
    Closed,
    /// Formatting or writing failed.
    #[error("{0}")]
    Failed(String),
}

/// Where a session's results go: standard output, or the file that the
/// REPL's `.output` named (emptied by `.output`, then written in turn by
/// every statement until the next `.output`).
#[derive(Debug, Default)]
pub enum Destination {
    /// Standard output.
    #[default]
    Stdout,
    /// A file, with the name it was given.
    File {
        /// The name, for messages.
        path: String,
        /// The open file; its clones share one position, so results append.
        file: std::fs::File,
    },
}

impl Destination {
    /// The file `path`, created, or emptied if it exists.
    pub fn file(path: &str) -> Result<Self, OutputError> {
        let file = std::fs::File::create(path)
            .map_err(|e| OutputError::Failed(format!("cannot write {path}: {e}")))?;
        Ok(Destination::File {
            path: path.to_string(),
            file,
        })
    }

    /// The file's name, or `None` for standard output.
    pub fn path(&self) -> Option<&str> {
        match self {
            Destination::Stdout => None,
            Destination::File { path, .. } => Some(path),
        }
    }

    /// Another handle on the same destination, for one query's writer.
    pub fn try_clone(&self) -> Result<Self, OutputError> {
        match self {
            Destination::Stdout => Ok(Destination::Stdout),
            Destination::File { path, file } => Ok(Destination::File {
                path: path.clone(),
                file: file
                    .try_clone()
                    .map_err(|e| OutputError::Failed(format!("cannot write {path}: {e}")))?,
            }),
        }
    }

    /// Writes all of `bytes` (see [`crate::console::write_stdout`] for
    /// standard output's errors).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        match self {
            Destination::Stdout => crate::console::write_stdout(bytes),
            Destination::File { path, file } => file
                .write_all(bytes)
                .map_err(|e| OutputError::Failed(format!("writing {path}: {e}"))),
        }
    }
}

/// Rows a live table shows per refresh.
const LIVE_TABLE_ROWS: usize = 20;
/// How often a live table refreshes.
const LIVE_REFRESH: std::time::Duration = std::time::Duration::from_secs(1);

/// Writes the results of one query to its [`Destination`].
///
/// A replay's results (`live` false) are formatted and written on a thread
/// of their own, so that printing overlaps reading and windows; a live
/// source's results are written as they come. Results pushed before an
/// error or a drop are still written.
pub struct ResultWriter {
    rows: u64,
    sink: Sink,
}

enum Sink {
    Here(Printer),
    Thread {
        /// `None` once closed.
        batches: Option<crossbeam_channel::Sender<Message>>,
        /// `None` once joined.
        thread: Option<std::thread::JoinHandle<Result<(), OutputError>>>,
    },
}

/// What the printing thread is asked to do.
enum Message {
    Batch(RecordBatch),
    Flush,
}

/// Batches queued for the printing thread (backpressure beyond); see
/// `QUEUED_INPUT_BATCHES` in the session.
const QUEUED_BATCHES: usize = 16;

impl ResultWriter {
    /// A writer for one query's results; CSV prints its header at once.
    /// A `live` query shown as a table on standard output refreshes once
    /// per second; into a file, every row is written.
    pub fn new(
        format: OutputFormat,
        schema: SchemaRef,
        live: bool,
        destination: Destination,
    ) -> Result<Self, OutputError> {
        let printer = Printer::new(format, schema, live, destination)?;
        let sink = if live {
            Sink::Here(printer)
        } else {
            let (batches, queue) = crossbeam_channel::bounded(QUEUED_BATCHES);
            let thread = std::thread::Builder::new()
                .name("sliq-output".into())
                .spawn(move || {
                    let mut printer = printer;
                    for message in queue {
                        match message {
                            Message::Batch(batch) => printer.write(&batch)?,
                            Message::Flush => printer.flush()?,
                        }
                    }
                    printer.finish()
                })
                .map_err(|e| OutputError::Failed(format!("starting the output thread: {e}")))?;
            Sink::Thread {
                batches: Some(batches),
                thread: Some(thread),
            }
        };
        Ok(ResultWriter { rows: 0, sink })
    }

    /// A writer that prints every row of each batch as it is written, on
    /// the caller's thread: for a query whose rows come from the session's
    /// own statements (INSERT), so that they show before the next one runs.
    pub fn immediate(
        format: OutputFormat,
        schema: SchemaRef,
        destination: Destination,
    ) -> Result<Self, OutputError> {
        let printer = Printer::new(format, schema, false, destination)?;
        Ok(ResultWriter {
            rows: 0,
            sink: Sink::Here(printer),
        })
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes one batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.rows += batch.num_rows() as u64;
        match &mut self.sink {
            Sink::Here(printer) => printer.write(batch),
            Sink::Thread { .. } => self.send(Message::Batch(batch.clone())),
        }
    }

    /// Writes out what is buffered.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        match &mut self.sink {
            Sink::Here(printer) => printer.flush(),
            Sink::Thread { .. } => self.send(Message::Flush),
        }
    }

    /// Writes out everything (and a live table's last rows).
    pub fn finish(&mut self) -> Result<(), OutputError> {
        match &mut self.sink {
            Sink::Here(printer) => printer.finish(),
            Sink::Thread { .. } => self.join(),
        }
    }

    /// Hands `message` to the printing thread; if that thread has stopped,
    /// its error.
    fn send(&mut self, message: Message) -> Result<(), OutputError> {
        let Sink::Thread { batches, .. } = &self.sink else {
            return Ok(());
        };
        match batches.as_ref().map(|b| b.send(message)) {
            Some(Ok(())) => Ok(()),
            _ => self.join().and(Err(OutputError::Failed(
                "the output thread has stopped".into(),
            ))),
        }
    }

    /// Closes the printing thread's queue and waits for it to write everything.
    fn join(&mut self) -> Result<(), OutputError> {
        let Sink::Thread { batches, thread } = &mut self.sink else {
            return Ok(());
        };
        batches.take();
        match thread.take().map(std::thread::JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            Some(Err(_)) => Err(OutputError::Failed("the output thread failed".into())),
        }
    }
}

impl Drop for ResultWriter {
    /// Writes out what was written before an error ended the query.
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// `batches` as an aligned table, timestamps as the CSV and JSON outputs
/// write them.
fn table_text(batches: &[RecordBatch]) -> Result<String, OutputError> {
    let options = arrow_cast::display::FormatOptions::default()
        .with_timestamp_format(Some(csv_encode::TIMESTAMP_FORMAT));
    arrow_cast::pretty::pretty_format_batches_with_options(batches, &options)
        .map(|table| table.to_string())
        .map_err(|e| OutputError::Failed(format!("formatting: {e}")))
}

/// Formats results and writes them to their destination.
struct Printer {
    format: OutputFormat,
    destination: Destination,
    buffer: Vec<u8>,
    /// The doubles this output printed (CSV).
    float_texts: FloatTexts,
    rows: u64,
    /// A live query shown as a table: instead of every row, the latest
    /// rows once per second (rows since the last refresh, newest last).
    live_table: Option<LiveTable>,
}

struct LiveTable {
    recent: Vec<RecordBatch>,
    since_refresh: u64,
    last_refresh: std::time::Instant,
}

impl Printer {
    fn new(
        format: OutputFormat,
        schema: SchemaRef,
        live: bool,
        destination: Destination,
    ) -> Result<Self, OutputError> {
        let shown = live && format == OutputFormat::Table && destination.path().is_none();
        let live_table = shown.then(|| LiveTable {
            recent: Vec::new(),
            since_refresh: 0,
            last_refresh: std::time::Instant::now(),
        });
        let mut printer = Printer {
            format,
            destination,
            buffer: Vec::with_capacity(1 << 16),
            float_texts: FloatTexts::default(),
            rows: 0,
            live_table,
        };
        if format == OutputFormat::Csv {
            csv_encode::encode_header(&schema, &mut printer.buffer);
        }
        Ok(printer)
    }

    /// Writes one batch.
    fn write(&mut self, batch: &RecordBatch) -> Result<(), OutputError> {
        self.rows += batch.num_rows() as u64;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if let Some(live) = &mut self.live_table {
            live.since_refresh += batch.num_rows() as u64;
            live.recent.push(batch.clone());
            // Keep only the batches holding the newest rows shown.
            let mut kept = 0;
            let keep_from = live.recent.iter().rposition(|b| {
                kept += b.num_rows();
                kept >= LIVE_TABLE_ROWS
            });
            if let Some(i) = keep_from {
                live.recent.drain(..i);
            }
            if live.last_refresh.elapsed() >= LIVE_REFRESH {
                self.refresh()?;
            }
            return Ok(());
        }
        match self.format {
            OutputFormat::Csv => {
                csv_encode::encode(batch, &mut self.buffer, &mut self.float_texts)
                    .map_err(|e| OutputError::Failed(format!("writing CSV: {e}")))?;
            }
            OutputFormat::Json => {
                // Every line names every column, NULLs too, as the CSV
                // header does: a late row's NULL aggregate is `null`, not
                // a missing field.
                let mut json = arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .with_encoder_factory(crate::json_floats::non_finite_as_strings())
                    .with_timestamp_format(csv_encode::TIMESTAMP_FORMAT.to_string())
                    .build::<_, arrow_json::writer::LineDelimited>(&mut self.buffer);
                json.write(batch)
                    .map_err(|e| OutputError::Failed(format!("writing JSON: {e}")))?;
                json.finish()
                    .map_err(|e| OutputError::Failed(format!("writing JSON: {e}")))?;
            }
            OutputFormat::Table => {
                let table = table_text(std::slice::from_ref(batch))?;
                writeln!(self.buffer, "{table}").map_err(|e| OutputError::Failed(e.to_string()))?;
            }
        }
        if self.buffer.len() > 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }

    /// Shows a live table's newest rows.
    fn refresh(&mut self) -> Result<(), OutputError> {
        let Some(live) = &mut self.live_table else {
            return Ok(());
        };
        if live.since_refresh == 0 {
            return Ok(());
        }
        let schema = live.recent[0].schema();
        let all = arrow_select::concat::concat_batches(&schema, &live.recent)
            .map_err(|e| OutputError::Failed(e.to_string()))?;
        let shown = all.num_rows().min(LIVE_TABLE_ROWS);
        let newest = all.slice(all.num_rows() - shown, shown);
        let table = table_text(&[newest])?;
        writeln!(
            self.buffer,
            "{} new rows ({} in all); the newest {shown}:\n{table}",
            live.since_refresh, self.rows
        )
        .map_err(|e| OutputError::Failed(e.to_string()))?;
        live.since_refresh = 0;
        live.recent.clear();
        live.last_refresh = std::time::Instant::now();
        self.flush()
    }

    /// Writes out what is buffered (and a live table's last rows).
    fn finish(&mut self) -> Result<(), OutputError> {
        self.refresh()?;
        self.flush()
    }

    /// Writes out what is buffered.
    fn flush(&mut self) -> Result<(), OutputError> {
        self.destination.write_all(&self.buffer)?;
        self.buffer.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    #[test]
    fn a_live_table_into_a_file_holds_every_row() {
        let path = std::env::temp_dir().join(format!("sliq-live-table-{}", std::process::id()));
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let destination = Destination::file(path.to_str().unwrap()).unwrap();
        let mut writer =
            ResultWriter::new(OutputFormat::Table, schema.clone(), true, destination).unwrap();
        for n in [1, 2] {
            let batch =
                RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![n]))])
                    .unwrap();
            writer.write(&batch).unwrap();
        }
        writer.finish().unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let table = |n| format!("+---+\n| n |\n+---+\n| {n} |\n+---+\n");
        assert_eq!(written, table(1) + &table(2));
    }
}

//! Writing result batches: aligned tables, CSV or JSON lines.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::csv_encode;

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

/// Rows a live table shows per refresh.
const LIVE_TABLE_ROWS: usize = 20;
/// How often a live table refreshes.
const LIVE_REFRESH: std::time::Duration = std::time::Duration::from_secs(1);

/// Writes the results of one query to standard output.
pub struct ResultWriter {
    format: OutputFormat,
    buffer: Vec<u8>,
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

impl ResultWriter {
    /// A writer for one query's results; CSV prints its header at once.
    /// A `live` query shown as a table refreshes once per second.
    pub fn new(format: OutputFormat, schema: SchemaRef, live: bool) -> Result<Self, String> {
        let live_table = (live && format == OutputFormat::Table).then(|| LiveTable {
            recent: Vec::new(),
            since_refresh: 0,
            last_refresh: std::time::Instant::now(),
        });
        let mut writer = ResultWriter {
            format,
            buffer: Vec::with_capacity(1 << 16),
            rows: 0,
            live_table,
        };
        if format == OutputFormat::Csv {
            let mut csv = arrow_csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut writer.buffer);
            csv.write(&RecordBatch::new_empty(schema))
                .map_err(|e| format!("writing CSV: {e}"))?;
        }
        Ok(writer)
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes one batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
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
                csv_encode::encode(batch, &mut self.buffer)
                    .map_err(|e| format!("writing CSV: {e}"))?;
            }
            OutputFormat::Json => {
                let mut json = arrow_json::LineDelimitedWriter::new(&mut self.buffer);
                json.write(batch)
                    .map_err(|e| format!("writing JSON: {e}"))?;
                json.finish().map_err(|e| format!("writing JSON: {e}"))?;
            }
            OutputFormat::Table => {
                let table = arrow_cast::pretty::pretty_format_batches(std::slice::from_ref(batch))
                    .map_err(|e| format!("formatting: {e}"))?;
                writeln!(self.buffer, "{table}").map_err(|e| e.to_string())?;
            }
        }
        if self.buffer.len() > 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }

    /// Shows a live table's newest rows.
    fn refresh(&mut self) -> Result<(), String> {
        let Some(live) = &mut self.live_table else {
            return Ok(());
        };
        if live.since_refresh == 0 {
            return Ok(());
        }
        let schema = live.recent[0].schema();
        let all = arrow_select::concat::concat_batches(&schema, &live.recent)
            .map_err(|e| e.to_string())?;
        let shown = all.num_rows().min(LIVE_TABLE_ROWS);
        let newest = all.slice(all.num_rows() - shown, shown);
        let table = arrow_cast::pretty::pretty_format_batches(&[newest])
            .map_err(|e| format!("formatting: {e}"))?;
        writeln!(
            self.buffer,
            "{} new rows ({} in all); the newest {shown}:\n{table}",
            live.since_refresh, self.rows
        )
        .map_err(|e| e.to_string())?;
        live.since_refresh = 0;
        live.recent.clear();
        live.last_refresh = std::time::Instant::now();
        self.flush()
    }

    /// Writes out what is buffered (and a live table's last rows).
    pub fn finish(&mut self) -> Result<(), String> {
        self.refresh()?;
        self.flush()
    }

    /// Writes out what is buffered.
    pub fn flush(&mut self) -> Result<(), String> {
        let mut out = std::io::stdout().lock();
        out.write_all(&self.buffer)
            .and_then(|()| out.flush())
            .map_err(|e| format!("writing output: {e}"))?;
        self.buffer.clear();
        Ok(())
    }
}

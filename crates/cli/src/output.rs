//! Writing result batches: aligned tables, CSV or JSON lines.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

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

/// Writes the results of one query to standard output.
pub struct ResultWriter {
    format: OutputFormat,
    buffer: Vec<u8>,
    rows: u64,
}

impl ResultWriter {
    /// A writer for one query's results; CSV prints its header at once.
    pub fn new(format: OutputFormat, schema: SchemaRef) -> Result<Self, String> {
        let mut writer = ResultWriter {
            format,
            buffer: Vec::with_capacity(1 << 16),
            rows: 0,
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
        match self.format {
            OutputFormat::Csv => {
                let mut csv = arrow_csv::WriterBuilder::new()
                    .with_header(false)
                    .with_timestamp_format("%Y-%m-%dT%H:%M:%S%.3f".to_string())
                    .build(&mut self.buffer);
                csv.write(batch).map_err(|e| format!("writing CSV: {e}"))?;
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

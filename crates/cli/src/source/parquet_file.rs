//! Parquet files as a replay source. Only the stream's columns are read
//! (found by name, as a CSV header's are), 8,192 rows at a time,
//! and each is cast to the type the stream declares; a value that does not
//! convert stops the replay naming its column, rather than becoming NULL.

use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use super::{BATCH_ROWS, SourceError};

/// The stream's columns, batch by batch, out of one Parquet file.
///
/// Invariant: `positions[i]` is the column of the reader's batches that
/// holds the stream's column `i`.
pub struct ParquetBatches {
    what: String,
    reader: ParquetRecordBatchReader,
    schema: SchemaRef,
    positions: Vec<usize>,
    batches: usize,
    /// Rows read, of `total_rows`, for the progress counter.
    rows_read: u64,
    total_rows: u64,
    file_bytes: u64,
    progress: Arc<AtomicU64>,
}

/// Opens the Parquet file `file` (named `what`) for a stream with `schema`.
/// `progress` follows the rows read as a share of the file's bytes.
pub(super) fn open(
    what: String,
    file: File,
    schema: SchemaRef,
    progress: Arc<AtomicU64>,
) -> Result<ParquetBatches, SourceError> {
    let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let failed = |message: String| SourceError::Batches {
        what: what.clone(),
        batches: 0,
        message,
    };
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| failed(e.to_string()))?;
    let file_schema = Arc::clone(builder.schema());
    let roots = schema
        .fields()
        .iter()
        .map(|f| column_of(&file_schema, f.name()))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            let missing: Vec<&str> = schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .filter(|name| column_of(&file_schema, name).is_none())
                .collect();
            let present: Vec<&str> = file_schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect();
            SourceError::Unreadable(format!(
                "{what} has no column {}; its columns are {}",
                missing
                    .iter()
                    .map(|m| format!("'{m}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
                present.join(", ")
            ))
        })?;
    let total_rows = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| failed(e.to_string()))?;
    // The projected batches hold the chosen columns in the file's order.
    let mut chosen = roots.clone();
    chosen.sort_unstable();
    chosen.dedup();
    let positions = roots
        .iter()
        .map(|r| chosen.iter().position(|c| c == r).unwrap_or_default())
        .collect();
    Ok(ParquetBatches {
        what,
        reader,
        schema,
        positions,
        batches: 0,
        rows_read: 0,
        total_rows,
        file_bytes,
        progress,
    })
}

/// The top-level column of `file_schema` named `name`: exactly, or else
/// ignoring case.
fn column_of(file_schema: &SchemaRef, name: &str) -> Option<usize> {
    let fields = file_schema.fields();
    fields.iter().position(|f| f.name() == name).or_else(|| {
        fields
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(name))
    })
}

impl ParquetBatches {
    /// The next batch in the stream's schema; `None` at the file's end.
    pub(super) fn next_batch(&mut self) -> Option<Result<RecordBatch, SourceError>> {
        let read = self.reader.next()?;
        self.batches += 1;
        let failed = |message: String| SourceError::Batches {
            what: self.what.clone(),
            batches: self.batches - 1,
            message,
        };
        let batch = match read {
            Ok(batch) => batch,
            Err(e) => return Some(Err(failed(e.to_string()))),
        };
        self.rows_read += batch.num_rows() as u64;
        if self.total_rows > 0 {
            let share = self.rows_read.min(self.total_rows) as f64 / self.total_rows as f64;
            self.progress
                .store((share * self.file_bytes as f64) as u64, Ordering::Relaxed);
        }
        Some(super::project(&batch, &self.schema, &self.positions).map_err(failed))
    }
}

//! One push decoder for a text source's format: arrow-csv's or arrow-json's,
//! behind the few calls the readers need.

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use super::{Format, TextOptions};

/// An arrow-csv or arrow-json decoder whose batches hold up to `batch_rows`
/// rows of `schema`.
pub(super) enum TextDecoder {
    Csv(Box<arrow_csv::reader::Decoder>),
    Json {
        decoder: Box<arrow_json::reader::Decoder>,
        batch_rows: usize,
    },
}

impl TextDecoder {
    /// A decoder for `text`'s format (header lines are left to the caller).
    pub(super) fn new(
        schema: SchemaRef,
        text: &TextOptions,
        batch_rows: usize,
    ) -> Result<Self, ArrowError> {
        let batch_rows = batch_rows.max(1);
        Ok(match text.format {
            Format::JsonLines => TextDecoder::Json {
                decoder: Box::new(
                    arrow_json::ReaderBuilder::new(schema)
                        .with_batch_size(batch_rows)
                        .build_decoder()?,
                ),
                batch_rows,
            },
            _ => TextDecoder::Csv(Box::new(
                arrow_csv::ReaderBuilder::new(schema)
                    .with_header(false)
                    .with_delimiter(text.delimiter)
                    .with_batch_size(batch_rows)
                    .build_decoder(),
            )),
        })
    }

    /// Decodes `bytes` (whole records) into one batch of up to `rows` rows.
    pub(super) fn decode_whole(
        schema: SchemaRef,
        text: &TextOptions,
        mut bytes: &[u8],
        rows: usize,
    ) -> Result<Option<RecordBatch>, ArrowError> {
        let mut decoder = Self::new(schema, text, rows)?;
        while !bytes.is_empty() {
            let used = decoder.decode(bytes)?;
            if used == 0 {
                break;
            }
            bytes = &bytes[used..];
        }
        decoder.end_of_input()?;
        decoder.flush()
    }

    /// Takes records from `buf` until a batch is full; the bytes taken.
    pub(super) fn decode(&mut self, buf: &[u8]) -> Result<usize, ArrowError> {
        match self {
            TextDecoder::Csv(d) => d.decode(buf),
            TextDecoder::Json { decoder, .. } => decoder.decode(buf),
        }
    }

    /// Tells the decoder the input ended: a last CSV record needs no line break.
    pub(super) fn end_of_input(&mut self) -> Result<(), ArrowError> {
        match self {
            TextDecoder::Csv(d) => d.decode(&[]).map(drop),
            TextDecoder::Json { .. } => Ok(()),
        }
    }

    /// Whether a batch's rows are decoded.
    pub(super) fn is_full(&self) -> bool {
        match self {
            TextDecoder::Csv(d) => d.capacity() == 0,
            TextDecoder::Json {
                decoder,
                batch_rows,
            } => decoder.len() >= *batch_rows,
        }
    }

    /// The rows decoded so far, as a batch (`None` when there are none).
    pub(super) fn flush(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
        match self {
            TextDecoder::Csv(d) => d.flush(),
            TextDecoder::Json { decoder, .. } => decoder.flush(),
        }
    }
}

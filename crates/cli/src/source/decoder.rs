//! One push decoder for a text source's format: arrow-csv's, arrow-json's or
//! the plain-CSV fast path's, behind the few calls the readers need.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use super::plain_csv::PlainCsv;
use super::read_types::ReadTypes;
use super::{Format, TextOptions};

/// The columns of a text source as they appear in it, and which of them,
/// in the stream's order, make a row of the stream (from a CSV header that
/// lists the stream's columns in another order, or more besides).
#[derive(Clone, Debug)]
pub(super) struct FileColumns {
    /// Every column of the source, in its order; those that are the
    /// stream's have the stream's fields.
    pub(super) schema: SchemaRef,
    /// The source's column of each stream column; `None` when the source's
    /// columns are the stream's.
    pub(super) projection: Option<Vec<usize>>,
    /// The stream's columns, when the source names some of them otherwise
    /// (JSON keys in another case): batches are decoded under the source's
    /// names, then given the stream's.
    pub(super) stream: Option<SchemaRef>,
}

impl FileColumns {
    /// A source whose columns are `schema`'s, in its order.
    pub(super) fn of(schema: SchemaRef) -> Self {
        FileColumns {
            schema,
            projection: None,
            stream: None,
        }
    }
}

/// An arrow-csv, plain-CSV or arrow-json decoder whose batches hold up to
/// `batch_rows` rows of the stream.
pub(super) enum TextDecoder {
    Csv {
        decoder: Box<arrow_csv::reader::Decoder>,
        types: ReadTypes,
    },
    /// Refuses some CSV that arrow-csv accepts (see [`PlainCsv`]).
    Plain(Box<PlainCsv>),
    Json {
        decoder: Box<arrow_json::reader::Decoder>,
        batch_rows: usize,
        nesting: JsonNesting,
        types: ReadTypes,
        /// See [`FileColumns::stream`].
        stream: Option<SchemaRef>,
    },
}

/// The deepest a JSON record may nest arrays and objects (serde_json's
/// default limit). arrow-json reads any depth, but describes a value of the
/// wrong type recursively, one stack frame per level: a line whose VARCHAR
/// field held 100,000 nested arrays overflowed the reader thread's stack.
/// A stream's columns are scalars, so only fields it ignores nest at all.
const MAX_JSON_DEPTH: usize = 128;

/// How deep the JSON text decoded so far is nested, carried from one piece
/// of text to the next.
#[derive(Default)]
pub(super) struct JsonNesting {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl JsonNesting {
    /// Follows `text`, the next piece of the input; an error once arrays and
    /// objects nest deeper than [`MAX_JSON_DEPTH`].
    fn follow(&mut self, text: &[u8]) -> Result<(), ArrowError> {
        for &b in text {
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth > MAX_JSON_DEPTH {
                        return Err(ArrowError::JsonError(format!(
                            "arrays and objects nested deeper than {MAX_JSON_DEPTH} levels"
                        )));
                    }
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        Ok(())
    }
}

impl TextDecoder {
    /// The fastest decoder for `text`'s format: for CSV, the plain-CSV
    /// decoder when the columns' types allow it, which leaves the stream
    /// columns marked in `unread` NULL (see [`PlainCsv::leaving_unread`]).
    pub(super) fn fast(
        columns: &FileColumns,
        text: &TextOptions,
        batch_rows: usize,
        unread: &[bool],
    ) -> Result<Self, ArrowError> {
        if text.format == Format::Csv
            && let Some(plain) = PlainCsv::new(columns, text.delimiter, batch_rows)
        {
            return Ok(TextDecoder::Plain(Box::new(plain.leaving_unread(unread))));
        }
        Self::new(columns, text, batch_rows)
    }

    /// A decoder for `text`'s format that accepts whatever arrow-csv or
    /// arrow-json accepts (header lines are left to the caller).
    pub(super) fn new(
        columns: &FileColumns,
        text: &TextOptions,
        batch_rows: usize,
    ) -> Result<Self, ArrowError> {
        let batch_rows = batch_rows.max(1);
        let types = ReadTypes::of(&columns.schema);
        let schema = Arc::clone(types.read());
        Ok(match text.format {
            // JSON objects name their fields: no projection needed. A number
            // or a boolean read into a text column is its text, as in
            // DuckDB; DOUBLE and REAL columns are read so (`ReadTypes`).
            Format::JsonLines => TextDecoder::Json {
                decoder: Box::new(
                    arrow_json::ReaderBuilder::new(schema)
                        .with_batch_size(batch_rows)
                        .with_coerce_primitive(true)
                        .build_decoder()?,
                ),
                batch_rows,
                nesting: JsonNesting::default(),
                types,
                stream: columns.stream.clone(),
            },
            _ => {
                let mut builder = arrow_csv::ReaderBuilder::new(schema)
                    .with_header(false)
                    .with_delimiter(text.delimiter)
                    .with_batch_size(batch_rows);
                if let Some(projection) = &columns.projection {
                    builder = builder.with_projection(projection.clone());
                }
                TextDecoder::Csv {
                    decoder: Box::new(builder.build_decoder()),
                    types,
                }
            }
        })
    }

    /// Decodes `bytes` (whole records) into one batch of up to `rows` rows
    /// with a decoder that accepts whatever arrow-csv or arrow-json accepts.
    pub(super) fn decode_whole(
        columns: &FileColumns,
        text: &TextOptions,
        bytes: &[u8],
        rows: usize,
    ) -> Result<Option<RecordBatch>, ArrowError> {
        Self::new(columns, text, rows)?.decode_all(bytes)
    }

    /// Decodes `bytes` (whole records, no more than fit one batch) into one
    /// batch.
    pub(super) fn decode_all(
        mut self,
        mut bytes: &[u8],
    ) -> Result<Option<RecordBatch>, ArrowError> {
        while !bytes.is_empty() {
            let used = self.decode(bytes)?;
            if used == 0 {
                break;
            }
            bytes = &bytes[used..];
        }
        // The batch filled up before the text ended: a line held more than
        // one record, and the rest would be lost.
        if !bytes.iter().all(u8::is_ascii_whitespace) {
            let why = match self {
                TextDecoder::Json { .. } => "more than one JSON object",
                _ => "more than one record (a lone carriage return ends one)",
            };
            return Err(ArrowError::ParseError(format!(
                "more records than lines: a line holds {why}"
            )));
        }
        self.end_of_input()?;
        self.flush()
    }

    /// Takes records from `buf` until a batch is full; the bytes taken.
    pub(super) fn decode(&mut self, buf: &[u8]) -> Result<usize, ArrowError> {
        match self {
            TextDecoder::Csv { decoder, .. } => decoder.decode(buf),
            TextDecoder::Plain(d) => d.decode(buf),
            TextDecoder::Json {
                decoder, nesting, ..
            } => {
                let used = decoder.decode(buf)?;
                nesting.follow(&buf[..used])?;
                Ok(used)
            }
        }
    }

    /// Tells the decoder the input ended: a last CSV record needs no line break.
    pub(super) fn end_of_input(&mut self) -> Result<(), ArrowError> {
        match self {
            TextDecoder::Csv { decoder, .. } => decoder.decode(&[]).map(drop),
            TextDecoder::Plain(d) => d.end_of_input(),
            TextDecoder::Json { .. } => Ok(()),
        }
    }

    /// The bytes taken since the last batch, when the decoder keeps them
    /// (the plain-CSV decoder does; after an error, they are the bytes it
    /// took before it).
    pub(super) fn taken_text(&self) -> Option<&[u8]> {
        match self {
            TextDecoder::Plain(d) => Some(d.taken_text()),
            TextDecoder::Csv { .. } | TextDecoder::Json { .. } => None,
        }
    }

    /// The plain-CSV decoder, which can read its input itself (see
    /// [`PlainCsv::read_from`]).
    pub(super) fn plain_mut(&mut self) -> Option<&mut PlainCsv> {
        match self {
            TextDecoder::Plain(d) => Some(d),
            TextDecoder::Csv { .. } | TextDecoder::Json { .. } => None,
        }
    }

    /// The rows of the batch being decoded and their text (blank lines
    /// included), when the decoder keeps the text (see [`PlainCsv::batch`]).
    pub(super) fn kept_batch(&self) -> Option<(usize, &[u8])> {
        match self {
            TextDecoder::Plain(d) => Some(d.batch()),
            TextDecoder::Csv { .. } | TextDecoder::Json { .. } => None,
        }
    }

    /// The line breaks in the text taken since the last batch, when the
    /// decoder counts them (the plain-CSV decoder does, as it splits).
    pub(super) fn taken_line_breaks(&self) -> Option<usize> {
        match self {
            TextDecoder::Plain(d) => Some(d.taken_line_breaks()),
            TextDecoder::Csv { .. } | TextDecoder::Json { .. } => None,
        }
    }

    /// Whether a batch's rows are decoded.
    pub(super) fn is_full(&self) -> bool {
        match self {
            TextDecoder::Csv { decoder, .. } => decoder.capacity() == 0,
            TextDecoder::Plain(d) => d.is_full(),
            TextDecoder::Json {
                decoder,
                batch_rows,
                ..
            } => decoder.len() >= *batch_rows,
        }
    }

    /// The rows decoded so far, as a batch (`None` when there are none).
    pub(super) fn flush(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
        match self {
            TextDecoder::Csv { decoder, types } => {
                decoder.flush()?.map(|b| types.convert(b)).transpose()
            }
            TextDecoder::Plain(d) => d.flush(),
            TextDecoder::Json {
                decoder,
                types,
                stream,
                ..
            } => {
                let batch = decoder.flush()?.map(|b| types.convert(b)).transpose()?;
                match (batch, stream) {
                    (Some(batch), Some(stream)) => {
                        RecordBatch::try_new(Arc::clone(stream), batch.columns().to_vec()).map(Some)
                    }
                    (batch, _) => Ok(batch),
                }
            }
        }
    }
}

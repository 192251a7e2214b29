//! The common kind of CSV decoded fast: no quotes, a one-byte delimiter,
//! columns of numbers, strings, booleans, dates and timestamps.
//!
//! Records and cells are found with bit masks of a batch's delimiters and
//! line breaks, 64 bytes at a time (with `memchr3` around a quote, a carriage
//! return or an irregular record), and each column is parsed in one loop with
//! arrow-cast's parsers, the ones arrow-csv uses; so a batch this decoder
//! accepts comes out exactly as arrow-csv would decode it. arrow-csv's own
//! record splitter goes a byte at a time and copies every cell: a quarter of
//! the reader's time on a file of numbers, and with the loops around it, over
//! a third.
//!
//! Anything else is refused with an error: a quote, a carriage return that
//! does not end a line, a record with the wrong number of fields, a value
//! that does not parse, text that is not UTF-8. The reader then decodes that
//! batch with arrow-csv, which accepts it or names the bad line.

use std::io::{self, Read};
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, PrimitiveBuilder};
use arrow_array::types::{
    Date32Type, Decimal128Type, Decimal256Type, Float32Type, Float64Type, Int8Type, Int16Type,
    Int32Type, Int64Type, TimestampMillisecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch, StringArray, new_null_array,
};
use arrow_buffer::i256;
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_cast::parse::{Parser, parse_decimal, string_to_datetime};
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef, TimeUnit};

use super::buffer::Buffer;
use super::decoder::FileColumns;
use super::numbers::{plain_decimal, plain_decimal128, plain_integer};
use super::read_types::float_cell;
use super::structural::{BLOCK, classify};

/// An offset into a batch's text: 4 bytes, not 8, so that the offsets of a
/// batch's cells (written once, read once per column) take half the cache;
/// a batch's text is refused beyond [`Offset::MAX`] bytes.
type Offset = u32;

/// The most bytes [`PlainCsv::decode`] takes, or [`PlainCsv::read_from`]
/// reads, in one call.
const PIECE: usize = 1 << 16;

/// A push decoder, with arrow-csv's `Decoder` calls, for CSV whose columns
/// are all of the types in [`PlainCsv::supports`].
///
/// Invariants: `text[..scanned]` holds `rows` whole records, each with its
/// line break, and blank lines; `bounds` holds `file_columns + 1` offsets
/// into `text` per record: where each cell starts, then one past the last
/// cell's end (so cell `c` ends one byte before the next offset).
/// `text[scanned..]` is the start of a record not yet complete, whose first
/// `unbroken` bytes hold no line break; or, once the batch is full, text
/// read past its end for the next batch (see [`PlainCsv::read_from`]).
///
/// An error leaves the decoder spent: the caller drops it, as it does
/// arrow-csv's.
pub(super) struct PlainCsv {
    /// The batches' schema: the stream's columns, in its order.
    schema: SchemaRef,
    /// The file column of each of the schema's columns.
    projection: Vec<usize>,
    /// The schema's columns no query reads (by position; none when empty):
    /// their cells are split but not parsed, and come out NULL.
    unread: Vec<bool>,
    /// The NULL array last made for each unread column, shared by every
    /// batch of as many rows: a batch costs no zeroed buffer per such
    /// column.
    null_columns: Vec<Option<ArrayRef>>,
    file_columns: usize,
    delimiter: u8,
    batch_rows: usize,
    text: Buffer<u8>,
    bounds: Buffer<Offset>,
    rows: usize,
    /// The line breaks in `text[..scanned]`: one per record that ends with
    /// one, and one per blank line.
    line_breaks: usize,
    scanned: usize,
    unbroken: usize,
}

impl PlainCsv {
    /// A decoder for `columns`, or `None` when a column's type or the
    /// delimiter is one this decoder does not handle.
    pub(super) fn new(columns: &FileColumns, delimiter: u8, batch_rows: usize) -> Option<Self> {
        if matches!(delimiter, b'"' | b'\n' | b'\r') {
            return None;
        }
        let fields = columns.schema.fields();
        let projection = match &columns.projection {
            Some(projection) => projection.clone(),
            None => (0..fields.len()).collect(),
        };
        let projected = projection
            .iter()
            .map(|&i| fields.get(i).cloned())
            .collect::<Option<Vec<_>>>()?;
        if !projected.iter().all(|f| Self::supports(f.data_type())) {
            return None;
        }
        let schema = Schema::new_with_metadata(projected, columns.schema.metadata().clone());
        Some(PlainCsv {
            schema: Arc::new(schema),
            projection,
            unread: Vec::new(),
            null_columns: Vec::new(),
            file_columns: fields.len(),
            delimiter,
            batch_rows: batch_rows.max(1),
            text: Buffer::default(),
            bounds: Buffer::default(),
            rows: 0,
            line_breaks: 0,
            scanned: 0,
            unbroken: 0,
        })
    }

    /// Leaves the columns marked in `unread` (by position in the stream's
    /// schema) unparsed: they come out as NULL, when their fields allow it.
    pub(super) fn leaving_unread(mut self, unread: &[bool]) -> Self {
        self.unread = unread.to_vec();
        self.null_columns = vec![None; unread.len()];
        self
    }

    /// Whether columns of type `ty` are decoded here.
    fn supports(ty: &DataType) -> bool {
        use DataType::*;
        matches!(
            ty,
            Boolean
                | Int8
                | Int16
                | Int32
                | Int64
                | UInt8
                | UInt16
                | UInt32
                | UInt64
                | Float32
                | Float64
                | Date32
                | Utf8
                | Timestamp(TimeUnit::Millisecond, None)
        ) || matches!(ty, Decimal128(_, scale) if *scale >= 0)
    }

    /// Takes records from `buf` until a batch is full, or from its first
    /// [`PIECE`] bytes; the bytes taken. A record cut off at the end of what
    /// is taken is kept until the next call completes it.
    pub(super) fn decode(&mut self, buf: &[u8]) -> Result<usize, ArrowError> {
        if self.is_full() || buf.is_empty() {
            return Ok(0);
        }
        // The text is copied before it is split, and what lies past the
        // batch's end is copied again by the next call: a piece at a time,
        // that is at most a piece, not most of a large read buffer.
        let buf = &buf[..buf.len().min(PIECE)];
        if Offset::try_from(self.text.len() + buf.len() + 1).is_err() {
            return Err(refused("a batch of more than 4 GiB of text"));
        }
        let before = self.text.len();
        self.text.extend_from_slice(buf);
        let split = self.split(false).inspect_err(|_| {
            // Not taken: the caller reads these bytes again another way.
            self.text.truncate(before);
        })?;
        Ok(match split {
            Some(end) => {
                debug_assert!(end > before, "a batch fills only on a line break in `buf`");
                self.text.truncate(end);
                end - before
            }
            None => buf.len(),
        })
    }

    /// Reads up to a [`PIECE`] of `input` straight into the batch's text,
    /// sparing the copy out of a read buffer; the bytes read, 0 at the end
    /// of the input. [`Self::take_read`] then splits them. Unlike
    /// [`Self::decode`], this takes every byte it reads: what lies past a
    /// full batch's end starts the next batch.
    pub(super) fn read_from(&mut self, input: &mut dyn Read) -> io::Result<usize> {
        self.text.read_from(input, PIECE)
    }

    /// Splits the records read by [`Self::read_from`] (and those left from
    /// the last batch) into cells, until the batch is full. The text of a
    /// record not yet ended stays for the next read.
    pub(super) fn take_read(&mut self) -> Result<(), ArrowError> {
        if self.is_full() {
            return Ok(());
        }
        if Offset::try_from(self.text.len() + 1).is_err() {
            return Err(refused("a batch of more than 4 GiB of text"));
        }
        self.split(false).map(drop)
    }

    /// The bytes taken since the last batch: the records split so far, and
    /// the start of one not yet ended (or, past a full batch, text read for
    /// the next).
    pub(super) fn taken_text(&self) -> &[u8] {
        &self.text
    }

    /// The records of the batch being decoded (and the blank lines among
    /// them), with how many records they are. Not after an error.
    pub(super) fn batch(&self) -> (usize, &[u8]) {
        (self.rows, &self.text[..self.scanned])
    }

    /// The line breaks in the records taken since the last batch (and in
    /// the blank lines among them), counted as they were split.
    pub(super) fn taken_line_breaks(&self) -> usize {
        debug_assert_eq!(
            self.line_breaks,
            memchr::memchr_iter(b'\n', &self.text[..self.scanned]).count()
        );
        self.line_breaks
    }

    /// Tells the decoder the input ended: a last record needs no line break.
    pub(super) fn end_of_input(&mut self) -> Result<(), ArrowError> {
        self.split(true).map(drop)
    }

    /// Whether a batch's rows are decoded.
    pub(super) fn is_full(&self) -> bool {
        self.rows >= self.batch_rows
    }

    /// Splits the records in `text[scanned..]` into cells until the batch is
    /// full (returning where the last record taken ends) or the text ends.
    /// With `last`, the text's end ends a record.
    fn split(&mut self, last: bool) -> Result<Option<usize>, ArrowError> {
        // A record that has not ended yet is split once it has: until a byte
        // that may end it (or that is refused) comes in, only the new bytes
        // are looked at, so a line much longer than a piece costs linear
        // time, not a scan of all of it per piece.
        let new = self.scanned + self.unbroken;
        if !last && memchr::memchr3(b'\n', b'\r', b'"', &self.text[new..]).is_none() {
            self.unbroken = self.text.len() - self.scanned;
            return Ok(None);
        }
        let split = match self.split_blocks() {
            Some(end) => Some(end),
            None => self.split_careful(last)?,
        };
        // Unless the batch is full, the record left unfinished has no line
        // break: the splitters end a record at each one.
        self.unbroken = match split {
            Some(_) => 0,
            None => self.text.len() - self.scanned,
        };
        Ok(split)
    }

    /// [`Self::split`] over whole 64-byte blocks, a mask of their delimiters
    /// and line breaks at a time, while the records in them are regular: no
    /// quote, no carriage return, no blank line, `file_columns` cells each.
    /// Returns where the batch's last record ends once it is full. Otherwise
    /// `scanned` is left at the first record not taken (at most a block
    /// before an irregular one), for [`Self::split_careful`].
    fn split_blocks(&mut self) -> Option<usize> {
        let Self {
            text,
            bounds,
            delimiter,
            file_columns,
            batch_rows,
            ..
        } = self;
        let (columns, batch_rows) = (*file_columns, *batch_rows);
        let mut rows = self.rows;
        // The current record's start, and how many delimiters and line
        // breaks it still has to come: its last is the line break.
        let mut start = self.scanned;
        let mut left = columns;
        bounds.push(start as Offset);
        let mut at_block = start;
        while let Some(block) = text.get(at_block..).and_then(<[u8]>::first_chunk) {
            let masks = classify(block, *delimiter);
            if masks.others != 0 {
                break;
            }
            let before = (start, left, rows);
            let mut count = 0;
            let mut structural = masks.delimiters | masks.newlines;
            // The bytes that end records by the count of cells, and the line
            // breaks up to the last of them: equal in a regular block.
            let (mut ends, mut breaks) = (0, masks.newlines);
            let mut blank_line = false;
            let mut full = None;
            // The block's bounds, written ahead and kept once the block
            // proves regular: a cell's end for each delimiter and line
            // break, a record's start after each line break, so at most two
            // per byte.
            let Some(found) = bounds.room(2 * BLOCK).first_chunk_mut::<{ 2 * BLOCK }>() else {
                break; // never: the room is as long as asked
            };
            while structural != 0 {
                let bit = structural & structural.wrapping_neg();
                let at = at_block + structural.trailing_zeros() as usize;
                // At most two bounds a byte: `count` stays below the room's
                // length, which the mask tells the compiler (no bounds check).
                found[count % (2 * BLOCK)] = (at + 1) as Offset;
                count += 1;
                left -= 1;
                if left == 0 {
                    if at == start {
                        // With one column, a blank line ends a record too.
                        blank_line = true;
                        break;
                    }
                    ends |= bit;
                    rows += 1;
                    if rows >= batch_rows {
                        breaks &= bit | (bit - 1);
                        full = Some(at + 1);
                        break;
                    }
                    found[count % (2 * BLOCK)] = (at + 1) as Offset;
                    count += 1;
                    start = at + 1;
                    left = columns;
                }
                structural &= structural - 1;
            }
            if blank_line || ends != breaks {
                (start, left, rows) = before;
                break;
            }
            bounds.keep(count);
            if let Some(end) = full {
                // In a regular block every record ends with a line break.
                self.line_breaks += rows - self.rows;
                self.rows = rows;
                self.scanned = end;
                return Some(end);
            }
            at_block += BLOCK;
        }
        // Leave the unfinished record to the careful split.
        bounds.truncate(bounds.len() - (columns - left) - 1);
        debug_assert_eq!(bounds.len(), rows * (columns + 1));
        self.line_breaks += rows - self.rows;
        self.rows = rows;
        self.scanned = start;
        None
    }

    /// [`Self::split`] with `memchr3`, for any text: it refuses what this
    /// decoder does not take, and checks each record as it ends.
    fn split_careful(&mut self, last: bool) -> Result<Option<usize>, ArrowError> {
        let Self {
            text,
            bounds,
            delimiter,
            file_columns,
            ..
        } = self;
        let region = &text[self.scanned..];
        if let Some(first) = memchr::memchr(b'\r', region) {
            // csv-core ends a record at a lone carriage return too.
            // (One at the end of `region` is judged once the next byte is in.)
            let lone = memchr::memchr_iter(b'\r', &region[first..])
                .any(|i| region.get(first + i + 1).is_some_and(|&next| next != b'\n'));
            if lone {
                return Err(refused("a carriage return inside a line"));
            }
        }
        let mut start = self.scanned;
        let mut fields = 1;
        bounds.push(start as Offset);
        for i in memchr::memchr3_iter(*delimiter, b'\n', b'"', region) {
            let at = self.scanned + i;
            match text[at] {
                b'\n' => {
                    self.line_breaks += 1;
                    let end = record_end(text, start, at);
                    if end == start && fields == 1 {
                        // A blank line, which arrow-csv skips.
                        bounds.truncate(bounds.len() - 1);
                    } else {
                        finish_record(bounds, fields, *file_columns, end)?;
                        self.rows += 1;
                        if self.rows >= self.batch_rows {
                            self.scanned = at + 1;
                            return Ok(Some(at + 1));
                        }
                    }
                    start = at + 1;
                    fields = 1;
                    bounds.push(start as Offset);
                }
                b'"' => return Err(refused("a quote")),
                _ => {
                    fields += 1;
                    bounds.push((at + 1) as Offset);
                }
            }
        }
        let end = record_end(text, start, text.len());
        if last && end > start {
            finish_record(bounds, fields, *file_columns, end)?;
            self.rows += 1;
            self.scanned = text.len();
        } else {
            bounds.truncate(bounds.len() - fields);
            self.scanned = start;
        }
        Ok(None)
    }

    /// The records decoded so far, as a batch (`None` when there are none).
    pub(super) fn flush(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
        if self.rows == 0 {
            return Ok(None);
        }
        // A batch ends where a record ends: full (text read past it starts
        // the next batch), or at the input's end.
        debug_assert!(
            self.is_full() || self.scanned == self.text.len(),
            "a record is left half taken"
        );
        let rows = self.rows;
        let text = utf8(&self.text[..self.scanned])?;
        let cells = Cells {
            text,
            bounds: &self.bounds,
            stride: self.file_columns + 1,
        };
        let null_columns = &mut self.null_columns;
        let arrays = self
            .schema
            .fields()
            .iter()
            .zip(&self.projection)
            .enumerate()
            .map(|(i, (field, &column))| {
                match (
                    field.is_nullable() && self.unread.get(i) == Some(&true),
                    null_columns.get_mut(i),
                ) {
                    (true, Some(Some(nulls))) if nulls.len() == rows => Ok(Arc::clone(nulls)),
                    (true, Some(kept)) => Ok(Arc::clone(
                        kept.insert(new_null_array(field.data_type(), rows)),
                    )),
                    _ => cells.array(field.data_type(), column, rows),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let batch = RecordBatch::try_new(Arc::clone(&self.schema), arrays)?;
        self.text.remove_front(self.scanned);
        self.bounds.clear();
        self.rows = 0;
        self.line_breaks = 0;
        self.scanned = 0;
        Ok(Some(batch))
    }
}

/// Where the record from `start` to the line end `at` ends: before a
/// carriage return that ends the line, which csv-core treats as part of the
/// line break.
fn record_end(text: &[u8], start: usize, at: usize) -> usize {
    if at > start && text[at - 1] == b'\r' {
        at - 1
    } else {
        at
    }
}

/// Closes a record of `fields` cells ending at `end`, or refuses it when
/// the file has another number of columns.
fn finish_record(
    bounds: &mut Buffer<Offset>,
    fields: usize,
    file_columns: usize,
    end: usize,
) -> Result<(), ArrowError> {
    if fields != file_columns {
        return Err(refused("a record with another number of fields"));
    }
    bounds.push((end + 1) as Offset);
    Ok(())
}

/// `bytes` as text, or an error when they are not UTF-8. Most CSV is ASCII,
/// which std checks with vector instructions: a fourteenth of what its
/// UTF-8 check took on a batch of numbers and short keys.
fn utf8(bytes: &[u8]) -> Result<&str, ArrowError> {
    if bytes.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).map_err(|_| refused("text that is not UTF-8"))
}

fn refused(what: &str) -> ArrowError {
    ArrowError::CsvError(format!("plain CSV decoder refused {what}"))
}

/// The cells of a batch's records.
struct Cells<'a> {
    text: &'a str,
    bounds: &'a [Offset],
    stride: usize,
}

impl<'a> Cells<'a> {
    /// Where the cells of file column `column` are in `text`, record by
    /// record.
    fn spans(&self, column: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.bounds
            .chunks_exact(self.stride)
            .map(move |record| (record[column] as usize, record[column + 1] as usize - 1))
    }

    /// File column `column`'s validity: an empty cell is NULL.
    fn validity(&self, column: usize) -> NullBuffer {
        self.spans(column)
            .map(|(start, end)| start != end)
            .collect()
    }

    /// The cell at `text[start..end]`.
    fn cell(&self, (start, end): (usize, usize)) -> &'a str {
        // Cells start and end next to ASCII delimiters: char boundaries.
        debug_assert!(self.text.is_char_boundary(start));
        self.text.get(start..end).unwrap_or_default()
    }

    /// The cells of file column `column`, record by record.
    fn column(&self, column: usize) -> impl Iterator<Item = &'a str> + '_ {
        self.spans(column).map(|span| self.cell(span))
    }

    /// File column `column` as strings. A cell of up to 16 bytes is copied
    /// as a 16-byte word and the bytes past it dropped again at once: a copy
    /// of fixed length costs less than one of the cell's own length. As in
    /// [`primitive`], the offsets are collected in one pass of known length
    /// and validity comes from a second pass only when a cell is empty.
    fn strings(&self, column: usize) -> Result<StringArray, ArrowError> {
        const WORD: usize = 16;
        let text = self.text.as_bytes();
        // A column's values are at most the batch's text: once that fits
        // an i32, every offset does.
        if i32::try_from(text.len()).is_err() {
            return Err(refused(
                "a batch of more than 2 GiB of text with a string column",
            ));
        }
        let mut values = Vec::with_capacity(text.len() + WORD);
        let mut blank = false;
        let ends = self.spans(column).map(|(start, end)| {
            blank |= start == end;
            match text.get(start..).and_then(<[u8]>::first_chunk::<WORD>) {
                Some(word) if end - start <= WORD => {
                    let len = values.len() + (end - start);
                    values.extend_from_slice(word);
                    values.truncate(len);
                }
                _ => values.extend_from_slice(&text[start..end]),
            }
            values.len() as i32
        });
        let offsets: Vec<i32> = std::iter::once(0).chain(ends).collect();
        let nulls = blank.then(|| self.validity(column));
        debug_assert!(
            StringArray::try_new(
                OffsetBuffer::new(offsets.clone().into()),
                values.clone().into(),
                nulls.clone()
            )
            .is_ok()
        );
        // SAFETY: the values are the cells of `self.text`, a `str`, one
        // after another, and each cell starts and ends next to an ASCII
        // delimiter or line break, on char boundaries: each value, and the
        // whole, is UTF-8. The offsets start at 0, never decrease (a cell's
        // length is added to the last) and end at the values' length; they
        // fit an i32 (checked above), and there is one more than the
        // records, as there is one validity bit per record. Checking this
        // again (`try_new`) took about 1 % of a whole replay's time.
        Ok(unsafe {
            StringArray::new_unchecked(
                OffsetBuffer::new_unchecked(offsets.into()),
                values.into(),
                nulls,
            )
        })
    }

    /// File column `column` as an array of type `ty` (one of those
    /// [`PlainCsv::supports`]); an empty cell is NULL, as in arrow-csv.
    fn array(&self, ty: &DataType, column: usize, rows: usize) -> Result<ArrayRef, ArrowError> {
        let cells = self.column(column);
        match ty {
            DataType::Boolean => {
                let mut builder = BooleanBuilder::with_capacity(rows);
                for cell in cells {
                    if cell.is_empty() {
                        builder.append_null();
                    } else {
                        builder.append_value(parse_bool(cell).ok_or_else(|| unparsable(cell))?);
                    }
                }
                Ok(Arc::new(builder.finish()))
            }
            DataType::Int8 => primitive::<Int8Type>(self, column),
            DataType::Int16 => primitive::<Int16Type>(self, column),
            DataType::Int32 => primitive::<Int32Type>(self, column),
            DataType::Int64 => primitive::<Int64Type>(self, column),
            DataType::UInt8 => primitive::<UInt8Type>(self, column),
            DataType::UInt16 => primitive::<UInt16Type>(self, column),
            DataType::UInt32 => primitive::<UInt32Type>(self, column),
            DataType::UInt64 => primitive::<UInt64Type>(self, column),
            DataType::Float32 => primitive::<Float32Type>(self, column),
            DataType::Float64 => primitive::<Float64Type>(self, column),
            DataType::Date32 => primitive::<Date32Type>(self, column),
            DataType::Timestamp(TimeUnit::Millisecond, None) => {
                let mut builder = PrimitiveBuilder::<TimestampMillisecondType>::with_capacity(rows);
                for cell in cells {
                    if cell.is_empty() {
                        builder.append_null();
                    } else {
                        let time = string_to_datetime(&chrono::Utc, cell)?;
                        builder.append_value(time.timestamp_millis());
                    }
                }
                Ok(Arc::new(builder.finish()))
            }
            DataType::Utf8 => Ok(Arc::new(self.strings(column)?)),
            DataType::Decimal128(precision, scale) if *scale >= 0 => {
                let mut builder = PrimitiveBuilder::<Decimal128Type>::with_capacity(rows)
                    .with_data_type(ty.clone());
                let text = self.text.as_bytes();
                for span in self.spans(column) {
                    if span.0 == span.1 {
                        builder.append_null();
                        continue;
                    }
                    let value = plain_decimal128(
                        text,
                        span.0,
                        span.1,
                        *precision,
                        u32::from(scale.unsigned_abs()),
                    )
                    .or_else(|| decimal_slowly(self.cell(span), *precision, *scale))
                    .ok_or_else(|| unparsable(self.cell(span)))?;
                    builder.append_value(value);
                }
                Ok(Arc::new(builder.finish()))
            }
            other => Err(refused(&format!("a column of type {other}"))),
        }
    }
}

/// File column `column` of `cells`, parsed as `T`.
///
/// The values are collected in one pass of known length, with no capacity
/// check or validity bit per cell (a builder's `append_value` does both);
/// a column with an empty cell gets its validity from a second pass.
fn primitive<T: CellParser>(cells: &Cells<'_>, column: usize) -> Result<ArrayRef, ArrowError> {
    let mut blank = false;
    let mut unparsed = None;
    let values: Vec<T::Native> = cells
        .spans(column)
        .map(|span| {
            if span.0 == span.1 {
                blank = true;
                return T::Native::default();
            }
            T::parse_cell(cells, span).unwrap_or_else(|| {
                unparsed.get_or_insert(span);
                T::Native::default()
            })
        })
        .collect();
    if let Some(span) = unparsed {
        return Err(unparsable(cells.cell(span)));
    }
    let nulls = blank.then(|| cells.validity(column));
    Ok(Arc::new(PrimitiveArray::<T>::try_new(
        values.into(),
        nulls,
    )?))
}

/// A type's cell parser: arrow-cast's, after a fast path for the common
/// form of its numbers where there is one.
trait CellParser: ArrowPrimitiveType + Parser {
    fn parse_cell(cells: &Cells<'_>, span: (usize, usize)) -> Option<Self::Native> {
        Self::parse(cells.cell(span))
    }

    /// arrow-cast's parser, out of the column loop: the fast paths inline
    /// into it, and the rare cell they refuse costs a call.
    #[cold]
    #[inline(never)]
    fn parse_slowly(cell: &str) -> Option<Self::Native> {
        Self::parse(cell)
    }
}

macro_rules! integer_cells {
    ($($ty:ty),*) => {$(
        impl CellParser for $ty {
            #[inline(always)]
            fn parse_cell(cells: &Cells<'_>, span: (usize, usize)) -> Option<Self::Native> {
                let text = cells.text.as_bytes();
                // Signs on unsigned types ("-0") are left to arrow-cast.
                let fast = if Self::Native::MIN == 0 && text[span.0] == b'-' {
                    None
                } else {
                    plain_integer(text, span.0, span.1)
                };
                match fast.and_then(|value| Self::Native::try_from(value).ok()) {
                    Some(value) => Some(value),
                    None => Self::parse_slowly(cells.cell(span)),
                }
            }
        }
    )*};
}

integer_cells!(
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
);

impl CellParser for Float64Type {
    #[inline(always)]
    fn parse_cell(cells: &Cells<'_>, span: (usize, usize)) -> Option<f64> {
        match plain_decimal(cells.text.as_bytes(), span.0, span.1) {
            Some(value) => Some(value),
            None => Self::parse_slowly(cells.cell(span)),
        }
    }

    /// A number past DOUBLE's range is refused (see [`float_cell`]).
    #[cold]
    #[inline(never)]
    fn parse_slowly(cell: &str) -> Option<f64> {
        float_cell::<Self>(cell)
    }
}

impl CellParser for Float32Type {
    /// A number past REAL's range is refused (see [`float_cell`]).
    fn parse_cell(cells: &Cells<'_>, span: (usize, usize)) -> Option<f32> {
        float_cell::<Self>(cells.cell(span))
    }
}
impl CellParser for Date32Type {}

/// A DECIMAL(precision, scale) cell that [`plain_decimal128`] leaves
/// (exponents, blanks arrow-cast trims): arrow-cast's parser with one digit
/// more, rounded half away from zero, as the text decoders' `ReadTypes`
/// reads it.
#[cold]
#[inline(never)]
fn decimal_slowly(cell: &str, precision: u8, scale: i8) -> Option<i128> {
    let wide =
        parse_decimal::<Decimal256Type>(cell, precision.saturating_add(1), scale.saturating_add(1))
            .ok()?;
    let ten = i256::from_i128(10);
    let (quotient, remainder) = (wide.checked_div(ten)?, wide.checked_rem(ten)?);
    let away = match remainder.to_i128()? {
        r if r >= 5 => 1,
        r if r <= -5 => -1,
        _ => 0,
    };
    let value = quotient.to_i128()?.checked_add(away)?;
    (value.unsigned_abs() < 10u128.checked_pow(u32::from(precision))?).then_some(value)
}

fn parse_bool(cell: &str) -> Option<bool> {
    if cell.eq_ignore_ascii_case("false") {
        Some(false)
    } else if cell.eq_ignore_ascii_case("true") {
        Some(true)
    } else {
        None
    }
}

fn unparsable(cell: &str) -> ArrowError {
    ArrowError::ParseError(format!("plain CSV decoder cannot parse '{cell}'"))
}

#[cfg(test)]
mod tests {
    use arrow_schema::Field;
    use proptest::prelude::*;

    use super::super::decoder::TextDecoder;
    use super::*;

    /// Pushes `text` through `decoder` in pieces of `piece` bytes, as a
    /// reader's buffer would, flushing each full batch.
    fn decode_all(
        mut decoder: TextDecoder,
        mut text: &[u8],
        piece: usize,
    ) -> Result<Vec<RecordBatch>, ArrowError> {
        let mut batches = Vec::new();
        while !text.is_empty() {
            let used = decoder.decode(&text[..piece.min(text.len())])?;
            text = &text[used..];
            if decoder.is_full() {
                batches.extend(decoder.flush()?);
            } else {
                assert!(used > 0, "a decoder with room took nothing");
            }
        }
        decoder.end_of_input()?;
        batches.extend(decoder.flush()?);
        Ok(batches)
    }

    /// arrow-csv, as the sources use it (DECIMAL columns read one digit
    /// wider and rounded).
    fn arrow_csv(columns: &FileColumns, batch_rows: usize) -> TextDecoder {
        let csv = crate::source::TextOptions {
            format: crate::source::Format::Csv,
            header: false,
            delimiter: b',',
            on_error: crate::source::OnError::Fail,
        };
        TextDecoder::new(columns, &csv, batch_rows).expect("arrow-csv takes any schema")
    }

    fn plain(columns: &FileColumns, batch_rows: usize) -> TextDecoder {
        match PlainCsv::new(columns, b',', batch_rows) {
            Some(plain) => TextDecoder::Plain(Box::new(plain)),
            None => panic!("the test's types are all plain"),
        }
    }

    /// A column type and cells for it: first values that parse as they
    /// are, then values arrow-csv reads after trimming blanks, NULLs and
    /// values that do not parse.
    fn column() -> impl Strategy<Value = (DataType, Vocabulary)> {
        prop_oneof![
            Just((
                DataType::Int64,
                Vocabulary::new(
                    4,
                    &[
                        "0",
                        "-17",
                        "42",
                        "1330000000014",
                        " 7",
                        "8 ",
                        "",
                        "x",
                        "1.5",
                        "-9223372036854775808",
                        "9223372036854775808",
                        "12345678901234567"
                    ]
                )
            )),
            Just((
                DataType::Int32,
                Vocabulary::new(2, &["5", "-3", "99999999999", "", "+4"])
            )),
            Just((
                DataType::UInt8,
                Vocabulary::new(2, &["5", "255", "256", "-1", "-0", "+0", ""])
            )),
            Just((
                DataType::Float64,
                Vocabulary::new(
                    5,
                    &[
                        "1.5",
                        "-0",
                        "1e3",
                        "NaN",
                        "inf",
                        " 2.5 ",
                        "",
                        "1,5",
                        "abc",
                        "1e400",
                        "-Infinity"
                    ]
                )
            )),
            Just((
                DataType::Float32,
                Vocabulary::new(3, &["0.1", "3", "-inf", "", "e", "1e39", "-3.5e38"])
            )),
            Just((
                DataType::Utf8,
                Vocabulary::new(4, &["k1", "é", " a b ", "x\u{1F600}", ""])
            )),
            Just((
                DataType::Boolean,
                Vocabulary::new(3, &["true", "FALSE", "True", "", "yes", "1"])
            )),
            Just((
                DataType::Date32,
                Vocabulary::new(2, &["2024-02-29", "1970-01-01", "", "2024-13-01"])
            )),
            Just((
                DataType::Decimal128(6, 2),
                Vocabulary::new(
                    7,
                    &[
                        "2.255", "-2.255", "0.004", "+.5", "7.", "9999.99", "-0.005", "",
                        "9999.995", "1e2", " 1", "x", "12345"
                    ]
                )
            )),
            Just((
                DataType::Timestamp(TimeUnit::Millisecond, None),
                Vocabulary::new(
                    2,
                    &["2012-02-22T16:46:28.967", "2012-02-22 16:46:28", "", "noon"]
                )
            )),
        ]
    }

    /// A column's cells: the first `plain` parse as they are; the rest are
    /// drawn for one cell in 16, so that most texts run to many batches.
    #[derive(Clone, Debug)]
    struct Vocabulary {
        plain: usize,
        cells: &'static [&'static str],
    }

    impl Vocabulary {
        fn new(plain: usize, cells: &'static [&'static str]) -> Self {
            Vocabulary { plain, cells }
        }

        fn pick(&self, index: prop::sample::Index, odd: bool) -> &'static str {
            let choices = if odd {
                self.cells
            } else {
                &self.cells[..self.plain]
            };
            choices[index.index(choices.len())]
        }
    }

    /// Text laid out as plain CSV or nearly: `lines` lines, each regular
    /// or, by the weights in `oddities`, with a field too many or too few,
    /// a quote, a carriage return, or blank.
    fn csv_text(
        cells: Vec<Vocabulary>,
        lines: std::ops::Range<usize>,
        oddities: Oddities,
    ) -> impl Strategy<Value = (Vec<u8>, bool)> {
        let columns = cells.len();
        let oddity = proptest::strategy::Union::new_weighted(
            oddities
                .iter()
                .map(|&(weight, oddity)| (weight, Just(oddity)))
                .collect(),
        );
        let lines = proptest::collection::vec(
            (
                proptest::collection::vec(
                    (
                        any::<prop::sample::Index>(),
                        proptest::bool::weighted(1.0 / 16.0),
                    ),
                    columns,
                ),
                oddity,
                any::<bool>(),
            ),
            lines,
        );
        (lines, any::<bool>()).prop_map(move |(lines, final_break)| {
            let mut text = Vec::new();
            let mut irregular = false;
            for (picks, oddity, crlf) in &lines {
                let mut line: Vec<String> = picks
                    .iter()
                    .zip(&cells)
                    .map(|(&(index, odd), vocabulary)| vocabulary.pick(index, odd).to_string())
                    .collect();
                match *oddity {
                    "blank" => line.clear(),
                    "extra" => line.push("1".into()),
                    "short" => drop(line.pop()),
                    "quote" => {
                        line[0] = format!("\"{}\"", line[0]);
                        irregular = true;
                    }
                    "lone cr" => {
                        line[0].push('\r');
                        irregular = true;
                    }
                    _ => {}
                }
                text.extend_from_slice(line.join(",").as_bytes());
                text.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
            if !final_break {
                while text.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
                    text.pop();
                }
            }
            (text, irregular)
        })
    }

    /// Weights of regular lines (`""`) and of the irregular kinds.
    type Oddities = &'static [(u32, &'static str)];

    /// Mostly regular lines, and every kind of irregular one.
    const ALL_ODDITIES: Oddities = &[
        (60, ""),
        (1, "blank"),
        (1, "extra"),
        (1, "short"),
        (1, "quote"),
        (1, "lone cr"),
    ];

    /// Mostly regular lines, and blank ones: these decode, so a record
    /// split in the wrong place around them would show.
    const BLANK_LINES: Oddities = &[(40, ""), (1, "blank")];

    /// A file of 1 to 4 columns drawn from `column`, read whole or in part,
    /// and text for it as [`csv_text`] makes.
    fn case(
        column: impl Strategy<Value = (DataType, Vocabulary)>,
        lines: std::ops::Range<usize>,
        oddities: Oddities,
    ) -> impl Strategy<Value = (FileColumns, Vec<u8>, bool)> {
        proptest::collection::vec(column, 1..5)
            .prop_flat_map(move |columns| {
                let n = columns.len();
                let fields: Vec<Field> = columns
                    .iter()
                    .enumerate()
                    .map(|(i, (ty, _))| Field::new(format!("c{i}"), ty.clone(), i != 0))
                    .collect();
                let cells: Vec<_> = columns.into_iter().map(|(_, cells)| cells).collect();
                let projection =
                    proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 1..=n).prop_shuffle();
                let text = csv_text(cells, lines.clone(), oddities);
                (Just(fields), text, any::<bool>(), projection)
            })
            .prop_map(|(fields, (text, irregular), project, projection)| {
                let schema = Arc::new(Schema::new(fields));
                let columns = FileColumns {
                    schema,
                    projection: project.then_some(projection),
                    stream: None,
                };
                (columns, text, irregular)
            })
    }

    /// What the plain decoder accepts, it decodes exactly as arrow-csv; it
    /// refuses only what arrow-csv refuses, or quotes and carriage returns
    /// inside lines (which it leaves to arrow-csv).
    fn decodes_as_arrow_csv(
        (columns, text, irregular): (FileColumns, Vec<u8>, bool),
        batch_rows: usize,
        piece: usize,
    ) -> Result<(), TestCaseError> {
        let expected = decode_all(arrow_csv(&columns, batch_rows), &text, piece);
        match decode_all(plain(&columns, batch_rows), &text, piece) {
            Ok(batches) => prop_assert_eq!(Ok(batches), expected.map_err(|e| e.to_string())),
            Err(_) => prop_assert!(
                irregular || expected.is_err(),
                "refused text arrow-csv decodes: {:?}",
                String::from_utf8_lossy(&text)
            ),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn plain_decoding_is_arrow_csv_decoding(
            case in case(column(), 0..48, ALL_ODDITIES),
            batch_rows in 1usize..24,
            piece in prop_oneof![1usize..40, 40usize..400],
        ) {
            decodes_as_arrow_csv(case, batch_rows, piece)?;
        }

        /// Long runs of records in large pieces, split a block at a time,
        /// with now and then an irregular line. Text columns take any cell,
        /// so a record split in the wrong place would decode, not fail.
        #[test]
        fn block_splitting_finds_every_irregular_line(
            case in prop_oneof![Just(ALL_ODDITIES), Just(BLANK_LINES)].prop_flat_map(|oddities| {
                let text = Vocabulary::new(5, &["a", "bc", "", "de f", "0123456789abcdefghij"]);
                case(Just((DataType::Utf8, text)), 0..400, oddities)
            }),
            batch_rows in 1usize..200,
            piece in 1usize..3000,
        ) {
            decodes_as_arrow_csv(case, batch_rows, piece)?;
        }
    }

    /// A read buffer many pieces long is taken a piece at a time, records
    /// cut at a piece's end and a record longer than several pieces
    /// included.
    #[test]
    fn a_buffer_longer_than_a_piece_decodes_as_arrow_csv() {
        let columns = FileColumns::of(Arc::new(Schema::new(vec![
            Field::new("seq", DataType::Int64, false),
            Field::new("k", DataType::Utf8, true),
            Field::new("v", DataType::Float64, true),
        ])));
        let mut text: String = (0..20_000)
            .map(|i| format!("{i},k{},{}.{}\n", i % 7, i * 3, i % 10))
            .collect();
        let middle = text.len() / 2;
        let line_start = middle + text[middle..].find('\n').unwrap_or_default() + 1;
        text.insert_str(line_start, &format!("-1,{},0.5\n", "long".repeat(PIECE)));
        assert!(text.len() > 8 * PIECE);
        let expected = decode_all(arrow_csv(&columns, 8192), text.as_bytes(), text.len());
        let batches = decode_all(plain(&columns, 8192), text.as_bytes(), text.len());
        assert_eq!(
            batches.map_err(|e| e.to_string()),
            expected.map_err(|e| e.to_string())
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_refused() {
        let columns = FileColumns::of(Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("v", DataType::Int64, true),
        ])));
        assert!(decode_all(plain(&columns, 4), b"a\xff,1\n", 8).is_err());
        let good = decode_all(plain(&columns, 4), "é,1\nb,2".as_bytes(), 3);
        assert_eq!(
            good.map(|b| b.iter().map(|b| b.num_rows()).sum::<usize>())
                .ok(),
            Some(2)
        );
    }

    #[test]
    fn only_plain_types_and_delimiters_are_taken() {
        let schema = |ty| FileColumns::of(Arc::new(Schema::new(vec![Field::new("c", ty, true)])));
        assert!(PlainCsv::new(&schema(DataType::Int64), b';', 8).is_some());
        assert!(PlainCsv::new(&schema(DataType::Int64), b'"', 8).is_none());
        assert!(PlainCsv::new(&schema(DataType::Decimal128(10, 2)), b',', 8).is_some());
        assert!(PlainCsv::new(&schema(DataType::Decimal128(10, -2)), b',', 8).is_none());
        let utc = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
        assert!(PlainCsv::new(&schema(utc), b',', 8).is_none());
    }
}

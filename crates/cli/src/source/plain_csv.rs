//! The common kind of CSV decoded fast: no quotes, a one-byte delimiter,
//! columns of numbers, strings, booleans, dates and timestamps.
//!
//! Records and cells are found in one pass of `memchr3` over a batch's text,
//! and each column is parsed in one loop with arrow-cast's parsers, the ones
//! arrow-csv uses; so a batch this decoder accepts comes out exactly as
//! arrow-csv would decode it. arrow-csv's own record splitter goes a byte at
//! a time and copies every cell: a quarter of the reader's time on a file of
//! numbers, and with the loops around it, over a third.
//!
//! Anything else is refused with an error: a quote, a carriage return that
//! does not end a line, a record with the wrong number of fields, a value
//! that does not parse, text that is not UTF-8. The reader then decodes that
//! batch with arrow-csv, which accepts it or names the bad line.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, PrimitiveBuilder, StringBuilder};
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    TimestampMillisecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{ArrayRef, ArrowPrimitiveType, RecordBatch};
use arrow_cast::parse::{Parser, string_to_datetime};
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef, TimeUnit};

use super::decoder::FileColumns;

/// A push decoder, with arrow-csv's `Decoder` calls, for CSV whose columns
/// are all of the types in [`PlainCsv::supports`].
///
/// Invariants: `text[..scanned]` holds `rows` whole records, each with its
/// line break, and blank lines; `bounds` holds `file_columns + 1` offsets
/// into `text` per record: where each cell starts, then one past the last
/// cell's end (so cell `c` ends one byte before the next offset).
/// `text[scanned..]` is the start of a record not yet complete.
///
/// An error leaves the decoder spent: the caller drops it, as it does
/// arrow-csv's.
pub(super) struct PlainCsv {
    /// The batches' schema: the stream's columns, in its order.
    schema: SchemaRef,
    /// The file column of each of the schema's columns.
    projection: Vec<usize>,
    file_columns: usize,
    delimiter: u8,
    batch_rows: usize,
    text: Vec<u8>,
    bounds: Vec<usize>,
    rows: usize,
    scanned: usize,
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
            file_columns: fields.len(),
            delimiter,
            batch_rows: batch_rows.max(1),
            text: Vec::new(),
            bounds: Vec::new(),
            rows: 0,
            scanned: 0,
        })
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
        )
    }

    /// Takes records from `buf` until a batch is full; the bytes taken. A
    /// record cut off at the end of `buf` is kept until the next call
    /// completes it.
    pub(super) fn decode(&mut self, buf: &[u8]) -> Result<usize, ArrowError> {
        if self.is_full() || buf.is_empty() {
            return Ok(0);
        }
        let before = self.text.len();
        self.text.extend_from_slice(buf);
        Ok(match self.split(false)? {
            Some(end) => {
                debug_assert!(end > before, "a batch fills only on a line break in `buf`");
                self.text.truncate(end);
                end - before
            }
            None => buf.len(),
        })
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
        bounds.push(start);
        for i in memchr::memchr3_iter(*delimiter, b'\n', b'"', region) {
            let at = self.scanned + i;
            match text[at] {
                b'\n' => {
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
                    bounds.push(start);
                }
                b'"' => return Err(refused("a quote")),
                _ => {
                    fields += 1;
                    bounds.push(at + 1);
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
        let text = std::str::from_utf8(&self.text[..self.scanned])
            .map_err(|_| refused("text that is not UTF-8"))?;
        let cells = Cells {
            text,
            bounds: &self.bounds,
            stride: self.file_columns + 1,
        };
        let arrays = self
            .schema
            .fields()
            .iter()
            .zip(&self.projection)
            .map(|(field, &column)| cells.array(field.data_type(), column, self.rows))
            .collect::<Result<Vec<_>, _>>()?;
        let batch = RecordBatch::try_new(Arc::clone(&self.schema), arrays)?;
        self.text.drain(..self.scanned);
        self.bounds.clear();
        self.rows = 0;
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
    bounds: &mut Vec<usize>,
    fields: usize,
    file_columns: usize,
    end: usize,
) -> Result<(), ArrowError> {
    if fields != file_columns {
        return Err(refused("a record with another number of fields"));
    }
    bounds.push(end + 1);
    Ok(())
}

fn refused(what: &str) -> ArrowError {
    ArrowError::CsvError(format!("plain CSV decoder refused {what}"))
}

/// The cells of a batch's records.
struct Cells<'a> {
    text: &'a str,
    bounds: &'a [usize],
    stride: usize,
}

impl<'a> Cells<'a> {
    /// The cells of file column `column`, record by record.
    fn column(&self, column: usize) -> impl Iterator<Item = &'a str> + '_ {
        self.bounds.chunks_exact(self.stride).map(move |record| {
            let (start, next) = (record[column], record[column + 1]);
            // Cells start and end next to ASCII delimiters: char boundaries.
            debug_assert!(self.text.is_char_boundary(start));
            self.text.get(start..next - 1).unwrap_or_default()
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
            DataType::Int8 => primitive::<Int8Type>(cells, rows),
            DataType::Int16 => primitive::<Int16Type>(cells, rows),
            DataType::Int32 => primitive::<Int32Type>(cells, rows),
            DataType::Int64 => primitive::<Int64Type>(cells, rows),
            DataType::UInt8 => primitive::<UInt8Type>(cells, rows),
            DataType::UInt16 => primitive::<UInt16Type>(cells, rows),
            DataType::UInt32 => primitive::<UInt32Type>(cells, rows),
            DataType::UInt64 => primitive::<UInt64Type>(cells, rows),
            DataType::Float32 => primitive::<Float32Type>(cells, rows),
            DataType::Float64 => primitive::<Float64Type>(cells, rows),
            DataType::Date32 => primitive::<Date32Type>(cells, rows),
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
            DataType::Utf8 => {
                let mut builder = StringBuilder::with_capacity(rows, self.text.len());
                for cell in cells {
                    if cell.is_empty() {
                        builder.append_null();
                    } else {
                        builder.append_value(cell);
                    }
                }
                Ok(Arc::new(builder.finish()))
            }
            other => Err(refused(&format!("a column of type {other}"))),
        }
    }
}

/// A column of `T` parsed from its cells.
fn primitive<'a, T: ArrowPrimitiveType + Parser>(
    cells: impl Iterator<Item = &'a str>,
    rows: usize,
) -> Result<ArrayRef, ArrowError> {
    let mut builder = PrimitiveBuilder::<T>::with_capacity(rows);
    for cell in cells {
        if cell.is_empty() {
            builder.append_null();
        } else {
            builder.append_value(T::parse(cell).ok_or_else(|| unparsable(cell))?);
        }
    }
    Ok(Arc::new(builder.finish()))
}

/// arrow-csv's reading of a boolean cell.
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

    fn arrow_csv(columns: &FileColumns, batch_rows: usize) -> TextDecoder {
        let mut builder = arrow_csv::ReaderBuilder::new(Arc::clone(&columns.schema))
            .with_header(false)
            .with_batch_size(batch_rows);
        if let Some(projection) = &columns.projection {
            builder = builder.with_projection(projection.clone());
        }
        TextDecoder::Csv(Box::new(builder.build_decoder()))
    }

    fn plain(columns: &FileColumns, batch_rows: usize) -> TextDecoder {
        match PlainCsv::new(columns, b',', batch_rows) {
            Some(plain) => TextDecoder::Plain(Box::new(plain)),
            None => panic!("the test's types are all plain"),
        }
    }

    /// A column type and cells for it: good values, values arrow-csv reads
    /// after trimming blanks, NULLs and values that do not parse.
    fn column() -> impl Strategy<Value = (DataType, Vec<&'static str>)> {
        prop_oneof![
            Just((
                DataType::Int64,
                vec!["0", "-17", "42", " 7", "8 ", "", "x", "1.5"]
            )),
            Just((DataType::Int32, vec!["5", "-3", "99999999999", "", "+4"])),
            Just((DataType::UInt8, vec!["5", "255", "256", "-1", ""])),
            Just((
                DataType::Float64,
                vec!["1.5", "-0", "1e3", "NaN", "inf", " 2.5 ", "", "1,5", "abc"]
            )),
            Just((DataType::Float32, vec!["0.1", "3", "-inf", "", "e"])),
            Just((DataType::Utf8, vec!["k1", "é", " a b ", "", "x\u{1F600}"])),
            Just((
                DataType::Boolean,
                vec!["true", "FALSE", "True", "", "yes", "1"]
            )),
            Just((
                DataType::Date32,
                vec!["2024-02-29", "1970-01-01", "", "2024-13-01"]
            )),
            Just((
                DataType::Timestamp(TimeUnit::Millisecond, None),
                vec!["2012-02-22T16:46:28.967", "2012-02-22 16:46:28", "", "noon"]
            )),
        ]
    }

    /// Text laid out as plain CSV or nearly: a line may have a field too
    /// many or too few, a quote, a carriage return, or be blank.
    fn csv_text(
        cells: Vec<Vec<&'static str>>,
        columns: usize,
    ) -> impl Strategy<Value = (Vec<u8>, bool)> {
        let lines = proptest::collection::vec(
            (
                proptest::collection::vec(any::<prop::sample::Index>(), columns),
                prop_oneof![
                    8 => Just(""),
                    1 => Just("blank"),
                    1 => Just("extra"),
                    1 => Just("short"),
                    1 => Just("quote"),
                    1 => Just("lone cr"),
                ],
                any::<bool>(),
            ),
            0..24,
        );
        (lines, any::<bool>()).prop_map(move |(lines, final_break)| {
            let mut text = Vec::new();
            let mut irregular = false;
            for (picks, oddity, crlf) in &lines {
                let mut line: Vec<String> = picks
                    .iter()
                    .zip(&cells)
                    .map(|(pick, vocabulary)| pick.get(vocabulary).to_string())
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

    fn case() -> impl Strategy<Value = (FileColumns, Vec<u8>, bool)> {
        proptest::collection::vec(column(), 1..5)
            .prop_flat_map(|columns| {
                let n = columns.len();
                let fields: Vec<Field> = columns
                    .iter()
                    .enumerate()
                    .map(|(i, (ty, _))| Field::new(format!("c{i}"), ty.clone(), i != 0))
                    .collect();
                let cells: Vec<_> = columns.into_iter().map(|(_, cells)| cells).collect();
                let projection =
                    proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 1..=n).prop_shuffle();
                (Just(fields), csv_text(cells, n), any::<bool>(), projection)
            })
            .prop_map(|(fields, (text, irregular), project, projection)| {
                let schema = Arc::new(Schema::new(fields));
                let columns = FileColumns {
                    schema,
                    projection: project.then_some(projection),
                };
                (columns, text, irregular)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// What the plain decoder accepts, it decodes exactly as arrow-csv;
        /// it refuses only what arrow-csv refuses, or quotes and carriage
        /// returns inside lines (which it leaves to arrow-csv).
        #[test]
        fn plain_decoding_is_arrow_csv_decoding(
            (columns, text, irregular) in case(),
            batch_rows in 1usize..6,
            piece in 1usize..40,
        ) {
            let expected = decode_all(arrow_csv(&columns, batch_rows), &text, piece);
            match decode_all(plain(&columns, batch_rows), &text, piece) {
                Ok(batches) => prop_assert_eq!(Ok(batches), expected.map_err(|e| e.to_string())),
                Err(_) => prop_assert!(
                    irregular || expected.is_err(),
                    "refused text arrow-csv decodes: {:?}",
                    String::from_utf8_lossy(&text)
                ),
            }
        }
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
        assert!(PlainCsv::new(&schema(DataType::Decimal128(10, 2)), b',', 8).is_none());
        let utc = DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
        assert!(PlainCsv::new(&schema(utc), b',', 8).is_none());
    }
}

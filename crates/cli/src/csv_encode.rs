//! CSV encoding of result batches, byte for byte what arrow-csv's writer
//! prints with sliq's options, at a fraction of its cost.
//!
//! arrow-csv formats every cell through a dynamically dispatched formatter
//! into a scratch string and then copies it through the `csv` crate's
//! quoting writer. Results are mostly integers, floats and short strings, so
//! those are written straight into the output buffer here (integers by
//! [`crate::decimal`]; floats by zmij, the same shortest round-trip digits
//! as arrow's ryu, faster; timestamps digit by digit from chrono's calendar,
//! without re-parsing a strftime format per value as arrow's display does);
//! any other type goes through arrow's own `ArrayFormatter`, so every type
//! arrow can print still prints the same. Nested types, which arrow-csv
//! refuses, print as arrow displays them (the table output's text), quoted:
//! `"{min: 1.5, max: 9.0, first: 1.5, last: 9.0}"` for `m4`.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, BooleanArray, LargeStringArray, PrimitiveArray, RecordBatch, StringArray,
    StringViewArray,
};
use arrow_buffer::NullBuffer;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{ArrowError, DataType, TimeUnit};

use sliq_aggregates::write_decimal;

use crate::decimal::{write_i64, write_u64};
use crate::float_texts::FloatTexts;

/// How timestamps print: ISO 8601 with milliseconds, sliq's event-time unit.
pub const TIMESTAMP_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.3f";

/// How many rows ahead a column of doubles asks for its printed texts.
const FLOAT_PREFETCH_ROWS: usize = 16;

/// One column of a batch, ready to print a cell at a time. A plain tag
/// (`repr(u8)`): the encoder matches on it for every cell.
#[repr(u8)]
enum Column<'a> {
    Int8(&'a PrimitiveArray<Int8Type>),
    Int16(&'a PrimitiveArray<Int16Type>),
    Int32(&'a PrimitiveArray<Int32Type>),
    Int64(&'a PrimitiveArray<Int64Type>),
    UInt8(&'a PrimitiveArray<UInt8Type>),
    UInt16(&'a PrimitiveArray<UInt16Type>),
    UInt32(&'a PrimitiveArray<UInt32Type>),
    UInt64(&'a PrimitiveArray<UInt64Type>),
    Float32(&'a PrimitiveArray<Float32Type>),
    /// Doubles, and whether this batch looks them up in the output's table
    /// of printed doubles ([`FloatTexts`]), with its hits so far (it looks
    /// up each value that is not NULL).
    Float64 {
        values: &'a [f64],
        table: bool,
        hits: u32,
    },
    Boolean(&'a BooleanArray),
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
    /// A timestamp without time zone: its values, the multiplier and divisor
    /// that turn them into milliseconds, and arrow's formatter for dates
    /// outside years 0–9999.
    Timestamp(&'a [i64], i64, i64, ArrayFormatter<'a>),
    /// A decimal of scale 0 or more: its unscaled values and the scale.
    Decimal128(&'a PrimitiveArray<Decimal128Type>, usize),
    /// Any other type, through arrow's display (dates, timestamps, …).
    Formatted(ArrayFormatter<'a>),
}

impl<'a> Column<'a> {
    /// Column `index` of a batch: `array`, whose doubles (if any) look up
    /// `texts` as it says.
    fn new(
        array: &'a dyn Array,
        index: usize,
        options: &FormatOptions<'a>,
        texts: &FloatTexts,
    ) -> Result<Self, ArrowError> {
        Ok(match array.data_type() {
            DataType::Int8 => Column::Int8(array.as_primitive()),
            DataType::Int16 => Column::Int16(array.as_primitive()),
            DataType::Int32 => Column::Int32(array.as_primitive()),
            DataType::Int64 => Column::Int64(array.as_primitive()),
            DataType::UInt8 => Column::UInt8(array.as_primitive()),
            DataType::UInt16 => Column::UInt16(array.as_primitive()),
            DataType::UInt32 => Column::UInt32(array.as_primitive()),
            DataType::UInt64 => Column::UInt64(array.as_primitive()),
            DataType::Float32 => Column::Float32(array.as_primitive()),
            DataType::Float64 => Column::Float64 {
                values: array.as_primitive::<Float64Type>().values(),
                table: texts.looks_up(index),
                hits: 0,
            },
            DataType::Boolean => Column::Boolean(array.as_boolean()),
            DataType::Utf8 => Column::Utf8(array.as_string()),
            DataType::LargeUtf8 => Column::LargeUtf8(array.as_string()),
            DataType::Utf8View => Column::Utf8View(array.as_string_view()),
            DataType::Timestamp(unit, None) => {
                let (values, multiplier, divisor): (&[i64], _, _) = match unit {
                    TimeUnit::Second => (
                        array.as_primitive::<TimestampSecondType>().values(),
                        1000,
                        1,
                    ),
                    TimeUnit::Millisecond => (
                        array.as_primitive::<TimestampMillisecondType>().values(),
                        1,
                        1,
                    ),
                    TimeUnit::Microsecond => (
                        array.as_primitive::<TimestampMicrosecondType>().values(),
                        1,
                        1000,
                    ),
                    TimeUnit::Nanosecond => (
                        array.as_primitive::<TimestampNanosecondType>().values(),
                        1,
                        1_000_000,
                    ),
                };
                let fallback = ArrayFormatter::try_new(array, options)?;
                Column::Timestamp(values, multiplier, divisor, fallback)
            }
            // Nested types too (arrow-csv refuses them): `m4`'s struct
            // prints as in the table output, `{min: 1.5, max: 9.0, …}`.
            DataType::Decimal128(_, scale) if *scale >= 0 => {
                Column::Decimal128(array.as_primitive(), *scale as usize)
            }
            _ => Column::Formatted(ArrayFormatter::try_new(array, options)?),
        })
    }

    /// Appends row `row`'s cell (not null) to `out`.
    #[inline]
    fn write(
        &mut self,
        row: usize,
        out: &mut Vec<u8>,
        scratch: &mut String,
        texts: &mut FloatTexts,
    ) -> Result<(), ArrowError> {
        match self {
            Column::Int8(a) => write_i64(out, a.value(row).into()),
            Column::Int16(a) => write_i64(out, a.value(row).into()),
            Column::Int32(a) => write_i64(out, a.value(row).into()),
            Column::Int64(a) => write_i64(out, a.value(row)),
            Column::UInt8(a) => write_u64(out, a.value(row).into()),
            Column::UInt16(a) => write_u64(out, a.value(row).into()),
            Column::UInt32(a) => write_u64(out, a.value(row).into()),
            Column::UInt64(a) => write_u64(out, a.value(row)),
            Column::Float32(a) => write_float(out, a.value(row)),
            Column::Float64 {
                values,
                table: true,
                hits,
            } => {
                if let Some(&ahead) = values.get(row + FLOAT_PREFETCH_ROWS) {
                    texts.prefetch(ahead);
                }
                *hits += u32::from(texts.write(values[row], out, write_float::<f64>));
            }
            Column::Float64 { values, .. } => write_float(out, values[row]),
            Column::Boolean(a) => {
                out.extend_from_slice(if a.value(row) { b"true" } else { b"false" });
            }
            Column::Utf8(a) => write_text(out, a.value(row)),
            Column::LargeUtf8(a) => write_text(out, a.value(row)),
            Column::Utf8View(a) => write_text(out, a.value(row)),
            Column::Timestamp(values, multiplier, divisor, fallback) => {
                let millis = values[row]
                    .checked_mul(*multiplier)
                    .map(|v| v.div_euclid(*divisor));
                if !millis.is_some_and(|ms| write_timestamp_millis(out, ms)) {
                    write_formatted(out, scratch, fallback, row)?;
                }
            }
            Column::Decimal128(a, scale) => write_decimal(out, a.value(row), *scale),
            Column::Formatted(f) => write_formatted(out, scratch, f, row)?,
        }
        Ok(())
    }
}

/// Appends `value` with zmij's shortest round-trip digits, as arrow's ryu
/// prints it.
fn write_float<F: zmij::Float + Into<f64>>(out: &mut Vec<u8>, value: F) {
    let large = value.into().abs() >= 1e7;
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format(value).as_bytes();
    // zmij writes `1e+300` where ryu, arrow's choice, writes `1e300`. It
    // writes no exponent below 1e13, and an exponent has at most three
    // digits: only a large number's last four bytes can hold a `+`.
    let tail = text.len().saturating_sub(4);
    let plus = large
        .then(|| text[tail..].iter().position(|&b| b == b'+'))
        .flatten();
    match plus {
        Some(at) => {
            out.extend_from_slice(&text[..tail + at]);
            out.extend_from_slice(&text[tail + at + 1..]);
        }
        None => out.extend_from_slice(text),
    }
}

/// Appends row `row` as arrow's display prints it.
fn write_formatted(
    out: &mut Vec<u8>,
    scratch: &mut String,
    formatter: &ArrayFormatter<'_>,
    row: usize,
) -> Result<(), ArrowError> {
    use std::fmt::Write;
    scratch.clear();
    write!(scratch, "{}", formatter.value(row))
        .map_err(|e| ArrowError::CsvError(format!("formatting a value: {e}")))?;
    write_text(out, scratch);
    Ok(())
}

/// Appends milliseconds since the epoch in [`TIMESTAMP_FORMAT`]
/// (`2012-02-22T16:46:28.967`); false, writing nothing, outside years 0–9999.
fn write_timestamp_millis(out: &mut Vec<u8>, millis: i64) -> bool {
    use chrono::{Datelike, Timelike};
    let Some(time) = chrono::DateTime::from_timestamp_millis(millis) else {
        return false;
    };
    let date = time.date_naive();
    if !(0..=9999).contains(&date.year()) {
        return false;
    }
    let mut text = *b"0000-00-00T00:00:00.000";
    let mut put = |at: usize, width: usize, mut value: u32| {
        for slot in text[at..at + width].iter_mut().rev() {
            *slot = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, date.year().unsigned_abs());
    put(5, 2, date.month());
    put(8, 2, date.day());
    put(11, 2, time.hour());
    put(14, 2, time.minute());
    put(17, 2, time.second());
    put(20, 3, time.timestamp_subsec_millis());
    out.extend_from_slice(&text);
    true
}

/// Appends `text`, quoted (inner quotes doubled) when it holds a delimiter,
/// a quote or a line break, as the `csv` crate's necessary-quotes style does.
fn write_text(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    if !bytes
        .iter()
        .any(|&b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
    {
        out.extend_from_slice(bytes);
        return;
    }
    out.push(b'"');
    for part in bytes.split_inclusive(|&b| b == b'"') {
        out.extend_from_slice(part);
        if part.ends_with(b"\"") {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

/// Appends the header line of `schema`'s columns to `out`, as arrow-csv's
/// writer prints it (names quoted where needed), for any column types.
pub fn encode_header(schema: &arrow_schema::Schema, out: &mut Vec<u8>) {
    for (i, field) in schema.fields().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_text(out, field.name());
    }
    out.push(b'\n');
}

/// Appends `batch`'s rows to `out` as CSV lines (no header): `,` between
/// cells, `\n` after each row, NULL as an empty cell, timestamps in
/// [`TIMESTAMP_FORMAT`]. Doubles already printed by this output are taken
/// from `texts`.
pub fn encode(
    batch: &RecordBatch,
    out: &mut Vec<u8>,
    texts: &mut FloatTexts,
) -> Result<(), ArrowError> {
    let options = FormatOptions::default()
        .with_null("")
        .with_timestamp_format(Some(TIMESTAMP_FORMAT));
    texts.start_batch(batch.num_columns());
    let mut cells = batch
        .columns()
        .iter()
        .enumerate()
        .map(|(i, array)| {
            Ok(Cells {
                column: Column::new(array.as_ref(), i, &options, texts)?,
                nulls: array.logical_nulls().filter(|n| n.null_count() > 0),
            })
        })
        .collect::<Result<Vec<_>, ArrowError>>()?;
    let Some(last) = cells.len().checked_sub(1) else {
        // Rows without columns: each an empty line, quoted so it is read.
        for _ in 0..batch.num_rows() {
            out.extend_from_slice(b"\"\"\n");
        }
        return Ok(());
    };
    let mut scratch = String::new();
    for row in 0..batch.num_rows() {
        let line_start = out.len();
        for (i, cell) in cells.iter_mut().enumerate() {
            if cell.nulls.as_ref().is_none_or(|n| n.is_valid(row)) {
                cell.column.write(row, out, &mut scratch, texts)?;
            }
            out.push(if i == last { b'\n' } else { b',' });
        }
        // A line of one empty cell is quoted, or it would read as a blank
        // line (a line of more cells holds their commas).
        if out.len() == line_start + 1 {
            out.pop();
            out.extend_from_slice(b"\"\"\n");
        }
    }
    for (i, cell) in cells.iter().enumerate() {
        if let Column::Float64 {
            table: true, hits, ..
        } = cell.column
        {
            let nulls = cell.nulls.as_ref().map_or(0, NullBuffer::null_count);
            let lookups = u32::try_from(batch.num_rows() - nulls).unwrap_or(u32::MAX);
            texts.count(i, lookups, hits);
        }
    }
    Ok(())
}

/// A column and its nulls: none when it has no null (the common case is
/// then one test a cell).
struct Cells<'a> {
    column: Column<'a>,
    nulls: Option<NullBuffer>,
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{
        ArrayRef, BooleanArray, Date32Array, Float32Array, Float64Array, Int8Array, Int32Array,
        Int64Array, LargeStringArray, StringArray, StringViewArray, TimestampMicrosecondArray,
        TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt64Array,
    };
    use proptest::prelude::*;

    use super::*;

    /// What arrow-csv's writer prints for `batch` with sliq's options.
    fn arrow_csv(batch: &RecordBatch) -> String {
        let mut out = Vec::new();
        arrow_csv::WriterBuilder::new()
            .with_header(false)
            .with_timestamp_format(TIMESTAMP_FORMAT.to_string())
            .build(&mut out)
            .write(batch)
            .expect("arrow-csv writes the batch");
        String::from_utf8(out).expect("UTF-8")
    }

    fn ours(batch: &RecordBatch) -> String {
        let mut out = Vec::new();
        encode(batch, &mut out, &mut FloatTexts::default()).expect("encodes");
        String::from_utf8(out).expect("UTF-8")
    }

    fn batch(columns: Vec<ArrayRef>) -> RecordBatch {
        let named = columns
            .into_iter()
            .enumerate()
            .map(|(i, c)| (format!("c{i}"), c));
        RecordBatch::try_from_iter(named).expect("valid batch")
    }

    #[test]
    fn every_type_prints_as_arrow_csv_prints_it() {
        let b = batch(vec![
            Arc::new(Int8Array::from(vec![Some(-128), None, Some(7)])),
            Arc::new(Int32Array::from(vec![Some(i32::MIN), Some(0), None])),
            Arc::new(Int64Array::from(vec![Some(i64::MAX), None, Some(-1)])),
            Arc::new(UInt64Array::from(vec![Some(u64::MAX), Some(0), None])),
            Arc::new(Float32Array::from(vec![
                Some(0.1),
                Some(f32::NAN),
                Some(3e38),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(-0.0),
                Some(f64::INFINITY),
                Some(1e300),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(f64::NEG_INFINITY),
                Some(-1.5e-300),
                Some(123456789012345680.0),
            ])),
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            Arc::new(StringArray::from(vec![
                Some("plain"),
                Some("a,b \"q\""),
                Some("line\nbreak\r"),
            ])),
            Arc::new(LargeStringArray::from(vec![None, Some(""), Some("\"")])),
            Arc::new(StringViewArray::from(vec![
                Some("a view longer than twelve bytes, with a comma"),
                None,
                Some("v"),
            ])),
            Arc::new(TimestampMillisecondArray::from(vec![
                Some(1_330_000_000_014),
                None,
                Some(-1),
            ])),
            Arc::new(Date32Array::from(vec![Some(0), Some(19_000), None])),
        ]);
        assert_eq!(ours(&b), arrow_csv(&b));
    }

    /// Around the magnitudes where zmij starts writing exponents (1e16 for
    /// doubles, 1e13 for floats) and where the encoder starts looking for
    /// their `+`.
    #[test]
    fn floats_near_an_exponent_print_as_arrow_csv_prints_them() {
        let doubles = [
            9_999_999.5,
            1e7,
            -12_345_678.9,
            9_999_999_999_999_998.0,
            1e16,
            -1e16,
            1.5e17,
        ];
        let floats = [9_999_999.0f32, 1e7, 9.999_999e12, 1e13, -2e13, 1e15, 3.5e16];
        let b = batch(vec![
            Arc::new(Float64Array::from(doubles.to_vec())),
            Arc::new(Float32Array::from(floats.to_vec())),
        ]);
        assert_eq!(ours(&b), arrow_csv(&b));
    }

    /// Doubles remembered from earlier batches print as they did the first
    /// time, special values included.
    #[test]
    fn repeated_doubles_across_batches_print_as_arrow_csv_prints_them() {
        let values = [
            -95.976,
            0.1,
            -0.0,
            0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            -1.5e-300,
            123_456_789_012_345_680.0,
            9_999_999.5,
        ];
        let mut texts = FloatTexts::default();
        for round in 0..3 {
            let column: Float64Array = (0..600)
                .map(|i| (i % 5 != 4).then(|| values[(i * 7 + round) % values.len()]))
                .collect();
            let b = batch(vec![Arc::new(column.clone()), Arc::new(column)]);
            let mut out = Vec::new();
            encode(&b, &mut out, &mut texts).expect("encodes");
            assert_eq!(String::from_utf8(out).expect("UTF-8"), arrow_csv(&b));
        }
    }

    #[test]
    fn decimals_print_as_arrow_csv_prints_them() {
        let values = [
            Some(0),
            Some(5),
            Some(-5),
            Some(110),
            Some(-110),
            Some(12_345),
            Some(-99_999),
            None,
            Some(10i128.pow(38) - 1),
            Some(-(10i128.pow(38) - 1)),
        ];
        for (precision, scale) in [(38, 0), (38, 2), (38, 3), (38, 5), (38, 38)] {
            let column = arrow_array::Decimal128Array::from(values.to_vec())
                .with_precision_and_scale(precision, scale)
                .expect("valid decimal type");
            let b = batch(vec![Arc::new(column)]);
            assert_eq!(ours(&b), arrow_csv(&b), "scale {scale}");
        }
    }

    #[test]
    fn headers_print_as_arrow_csv_prints_them() {
        let b = RecordBatch::try_from_iter([
            ("plain", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
            (
                "with, comma",
                Arc::new(Int64Array::from(vec![1])) as ArrayRef,
            ),
            (
                "\"quoted\"",
                Arc::new(Int64Array::from(vec![1])) as ArrayRef,
            ),
            ("sum(v)", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ])
        .expect("valid batch");
        let mut header = Vec::new();
        encode_header(&b.schema(), &mut header);
        let mut arrow = Vec::new();
        arrow_csv::WriterBuilder::new()
            .with_header(true)
            .build(&mut arrow)
            .write(&b.slice(0, 0))
            .expect("arrow-csv writes");
        assert_eq!(String::from_utf8(header), String::from_utf8(arrow));
    }

    #[test]
    fn a_single_empty_cell_is_quoted() {
        let b = batch(vec![Arc::new(StringArray::from(vec![
            Some(""),
            None,
            Some("x"),
        ]))]);
        assert_eq!(ours(&b), "\"\"\n\"\"\nx\n");
        assert_eq!(ours(&b), arrow_csv(&b));
    }

    #[test]
    fn rows_without_columns_print_as_quoted_empty_lines() {
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(2));
        let b = RecordBatch::try_new_with_options(
            Arc::new(arrow_schema::Schema::empty()),
            vec![],
            &options,
        )
        .expect("a batch of rows without columns");
        assert_eq!(ours(&b), "\"\"\n\"\"\n");
    }

    #[test]
    fn nested_types_print_as_the_table_shows_them_quoted() {
        let inner: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let list = arrow_array::ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(1), None]),
            None,
        ]);
        let m4 = arrow_array::StructArray::from(vec![
            (
                Arc::new(arrow_schema::Field::new("min", DataType::Float64, true)),
                Arc::new(Float64Array::from(vec![Some(1.5), None])) as ArrayRef,
            ),
            (
                Arc::new(arrow_schema::Field::new("max", DataType::Float64, true)),
                Arc::new(Float64Array::from(vec![9.0, 2.0])) as ArrayRef,
            ),
        ]);
        let b = batch(vec![inner, Arc::new(list), Arc::new(m4)]);
        assert_eq!(
            ours(&b),
            "1,\"[1, ]\",\"{min: 1.5, max: 9.0}\"\n2,,\"{min: , max: 2.0}\"\n"
        );
    }

    proptest! {
        /// Every unit, across years 0–9999 and beyond (the fallback).
        #[test]
        fn timestamps_print_as_arrow_csv_prints_them(
            millis in proptest::collection::vec(
                prop_oneof![-62_167_219_200_000i64..253_402_300_800_000, any::<i32>().prop_map(i64::from)],
                1..20,
            ),
            far in -400_000_000_000_000i64..400_000_000_000_000,
        ) {
            let mut values = millis.clone();
            values.push(far);
            let b = batch(vec![
                Arc::new(TimestampSecondArray::from(
                    values.iter().map(|v| v / 1000).collect::<Vec<_>>(),
                )),
                Arc::new(TimestampMillisecondArray::from(values.clone())),
                Arc::new(TimestampMicrosecondArray::from(
                    values.iter().map(|v| v.saturating_mul(1000) + 999).collect::<Vec<_>>(),
                )),
                Arc::new(TimestampNanosecondArray::from(
                    values.iter().map(|v| (v % 1_000_000_000) * 1_000_000 - 1).collect::<Vec<_>>(),
                )),
            ]);
            prop_assert_eq!(ours(&b), arrow_csv(&b));
        }

        #[test]
        fn random_batches_print_as_arrow_csv_prints_them(
            rows in proptest::collection::vec(
                (any::<Option<i64>>(), proptest::option::of(any::<u64>().prop_map(f64::from_bits)), proptest::option::of("[a-c,\"\n\r ]{0,6}")),
                0..40,
            )
        ) {
            let ints: Int64Array = rows.iter().map(|r| r.0).collect();
            let floats: Float64Array = rows.iter().map(|r| r.1).collect();
            let strings: StringArray = rows.iter().map(|r| r.2.as_deref()).collect();
            let b = batch(vec![Arc::new(ints), Arc::new(floats), Arc::new(strings.clone())]);
            prop_assert_eq!(ours(&b), arrow_csv(&b));
            let single = batch(vec![Arc::new(strings)]);
            prop_assert_eq!(ours(&single), arrow_csv(&single));
        }
    }
}

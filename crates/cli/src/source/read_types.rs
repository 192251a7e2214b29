//! What arrow's text readers (arrow-csv, arrow-json) read a stream's columns
//! as, and how those values become the stream's: the columns whose text
//! sliq reads as SQL engines do rather than as arrow's parsers do.
//!
//! - **DECIMAL.** arrow's decimal parser drops the digits past the column's
//!   scale, so '2.255' read into a DECIMAL(10, 2) would be 2.25, where a
//!   CAST, an INSERT and other SQL engines give 2.26. So a DECIMAL(p, s)
//!   column is read as DECIMAL(p + 1, s + 1) (256-bit when p is 38) and then
//!   cast to DECIMAL(p, s), which rounds half away from zero: rounding looks
//!   only at the first digit dropped.
//! - **DOUBLE and REAL.** arrow's float parser reads a number past the
//!   type's range, such as `1e400`, as ±∞, where PostgreSQL and DuckDB
//!   refuse it. So these columns are read as text and parsed with
//!   [`float_cell`], which refuses it too.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use arrow_cast::parse::Parser;
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::{ArrowError, DECIMAL128_MAX_PRECISION, DataType, Field, Schema, SchemaRef};

/// A float type whose cells [`float_cell`] reads.
pub(super) trait FloatCell: ArrowPrimitiveType + Parser {
    fn is_infinite(value: Self::Native) -> bool;
}

impl FloatCell for Float64Type {
    fn is_infinite(value: f64) -> bool {
        value.is_infinite()
    }
}

impl FloatCell for Float32Type {
    fn is_infinite(value: f32) -> bool {
        value.is_infinite()
    }
}

/// A DOUBLE or REAL cell as arrow-cast's parser reads it, except that a
/// number past the type's range (`1e400` for a DOUBLE, `1e39` for a REAL)
/// is refused rather than read as ±∞. `inf`, `Infinity` and `NaN`, which
/// name those values (sliq's CSV output writes them), still read: they hold
/// no digit.
pub(super) fn float_cell<T: FloatCell>(cell: &str) -> Option<T::Native> {
    let value = T::parse(cell)?;
    let overflowed = T::is_infinite(value) && cell.bytes().any(|b| b.is_ascii_digit());
    (!overflowed).then_some(value)
}

/// The types arrow's readers read a source's columns as, and the
/// conversions to the stream's types.
pub(super) struct ReadTypes {
    /// The source's columns as the reader reads them.
    read: SchemaRef,
    /// The source's columns as the stream has them, when any column is
    /// read as another type.
    target: Option<SchemaRef>,
}

impl ReadTypes {
    /// How the columns of `schema` (the source's, with the stream's types)
    /// are read.
    pub(super) fn of(schema: &SchemaRef) -> Self {
        let read_as = |field: &Arc<Field>| {
            let read = match field.data_type() {
                DataType::Decimal128(p, s) if *s >= 0 => {
                    let (p, s) = (p.saturating_add(1), s.saturating_add(1));
                    match p {
                        p if p <= DECIMAL128_MAX_PRECISION => DataType::Decimal128(p, s),
                        p => DataType::Decimal256(p, s),
                    }
                }
                DataType::Float64 | DataType::Float32 => DataType::Utf8,
                _ => return Arc::clone(field),
            };
            Arc::new(field.as_ref().clone().with_data_type(read))
        };
        let read = Schema::new_with_metadata(
            schema.fields().iter().map(read_as).collect::<Vec<_>>(),
            schema.metadata().clone(),
        );
        if read == **schema {
            return ReadTypes {
                read: Arc::clone(schema),
                target: None,
            };
        }
        ReadTypes {
            read: Arc::new(read),
            target: Some(Arc::clone(schema)),
        }
    }

    /// The columns as the reader reads them.
    pub(super) fn read(&self) -> &SchemaRef {
        &self.read
    }

    /// `batch` (read with [`Self::read`]'s fields, all or some) with each
    /// column converted to the stream's type; an error names the column and
    /// the value that does not convert.
    pub(super) fn convert(&self, batch: RecordBatch) -> Result<RecordBatch, ArrowError> {
        let Some(target) = &self.target else {
            return Ok(batch);
        };
        let mut fields = Vec::with_capacity(batch.num_columns());
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            match target.field_with_name(field.name()) {
                Ok(wanted) if wanted.data_type() != field.data_type() => {
                    columns.push(convert_column(column, wanted)?);
                    fields.push(Arc::new(wanted.clone()));
                }
                _ => {
                    fields.push(Arc::clone(field));
                    columns.push(Arc::clone(column));
                }
            }
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
    }
}

/// `column`, read as [`ReadTypes::of`] reads `wanted`, as `wanted`'s type.
fn convert_column(column: &ArrayRef, wanted: &Field) -> Result<ArrayRef, ArrowError> {
    let in_column = |e: String| {
        ArrowError::ParseError(format!(
            "column '{}' ({}): {e}",
            wanted.name(),
            sliq_sql::sql_type_name(wanted.data_type())
        ))
    };
    match wanted.data_type() {
        DataType::Float64 => parse_floats::<Float64Type>(column).map_err(in_column),
        DataType::Float32 => parse_floats::<Float32Type>(column).map_err(in_column),
        // A wider decimal, rounded to the stream's scale.
        ty => {
            let strict = CastOptions {
                safe: false,
                ..CastOptions::default()
            };
            cast_with_options(column, ty, &strict).map_err(|e| in_column(e.to_string()))
        }
    }
}

/// The text `column` parsed with [`float_cell`], NULL staying NULL.
fn parse_floats<T: FloatCell>(column: &ArrayRef) -> Result<ArrayRef, String> {
    let texts = column
        .as_string_opt::<i32>()
        .ok_or_else(|| format!("read as {}, not as text", column.data_type()))?;
    let mut bad = None;
    let values: PrimitiveArray<T> = texts
        .iter()
        .map(|text| {
            let text = text?;
            let value = float_cell::<T>(text);
            if value.is_none() && bad.is_none() {
                bad = Some(text);
            }
            value
        })
        .collect();
    match bad {
        Some(text) if T::parse(text).is_some() => {
            Err(format!("cannot read {} (out of range)", quoted_cell(text)))
        }
        Some(text) => Err(format!("cannot read {}", quoted_cell(text))),
        None => Ok(Arc::new(values)),
    }
}

/// A cell's text for a message, in single quotes, its control characters
/// escaped: a quote left open runs to the line's end, and its newline would
/// break the message.
pub(super) fn quoted_cell(text: &str) -> String {
    let shown: String = text
        .chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect();
    format!("'{shown}'")
}

#[cfg(test)]
mod tests {
    use arrow_array::StringArray;

    use super::*;

    #[test]
    fn numbers_past_a_float_types_range_are_refused_and_infinities_read() {
        assert_eq!(float_cell::<Float64Type>("1.5e300"), Some(1.5e300));
        assert_eq!(float_cell::<Float64Type>("1e400"), None);
        assert_eq!(float_cell::<Float64Type>("-1e400"), None);
        assert_eq!(float_cell::<Float64Type>("1e-400"), Some(0.0));
        assert_eq!(float_cell::<Float32Type>("1e39"), None);
        assert_eq!(float_cell::<Float32Type>("1e38"), Some(1e38));
        for (text, value) in [
            ("inf", f64::INFINITY),
            ("-inf", f64::NEG_INFINITY),
            ("Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
        ] {
            assert_eq!(float_cell::<Float64Type>(text), Some(value), "{text}");
        }
        assert!(float_cell::<Float64Type>("NaN").is_some_and(f64::is_nan));
        assert_eq!(float_cell::<Float64Type>("oops"), None);
    }

    #[test]
    fn float_columns_are_read_as_text_and_parsed() {
        let stream = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("v", DataType::Float64, true),
            Field::new("d", DataType::Decimal128(10, 2), true),
        ]));
        let types = ReadTypes::of(&stream);
        assert_eq!(types.read().field(1).data_type(), &DataType::Utf8);
        assert_eq!(
            types.read().field(2).data_type(),
            &DataType::Decimal128(11, 3)
        );
        let read = |v: Vec<Option<&str>>| {
            let columns: Vec<ArrayRef> = vec![Arc::new(StringArray::from(v))];
            let schema = Arc::new(Schema::new(vec![types.read().field(1).clone()]));
            types.convert(RecordBatch::try_new(schema, columns).expect("batch"))
        };
        let batch = read(vec![Some("1.5"), None, Some("-inf")]).expect("reads");
        let values = batch.column(0).as_primitive::<Float64Type>();
        assert_eq!(values.value(0), 1.5);
        assert!(values.is_null(1));
        assert_eq!(values.value(2), f64::NEG_INFINITY);
        assert_eq!(
            read(vec![Some("1"), Some("1e400")])
                .unwrap_err()
                .to_string(),
            "Parser error: column 'v' (DOUBLE): cannot read '1e400' (out of range)"
        );
        assert_eq!(
            read(vec![Some("x")]).unwrap_err().to_string(),
            "Parser error: column 'v' (DOUBLE): cannot read 'x'"
        );
        // Only what is read as another type is converted.
        let plain = ReadTypes::of(&Arc::new(Schema::new(vec![Field::new(
            "n",
            DataType::Int64,
            true,
        )])));
        assert!(plain.target.is_none());
    }
}

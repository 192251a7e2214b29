//! Why a CSV or JSON line does not fit its stream, said in the stream's
//! terms: the number of fields against the stream's columns, the column
//! whose value does not read as its type, the column holding bytes that are
//! not UTF-8, a NOT NULL column the line leaves out. (arrow-csv's own
//! messages number columns from 0 and lines from the start of each decoder,
//! which here is the bad line; arrow-json's name arrow's types and internals.)

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_cast::parse::Parser;
use arrow_schema::{ArrowError, DataType, Field, Schema};

use super::TextOptions;
use super::decoder::{FileColumns, TextDecoder};
use super::read_types::quoted_cell;

/// Why the CSV `line` does not decode with `schema`, the columns of `whose`
/// ("the stream", or "the header" that named them); `None` when it is not a
/// wrong field count or a value of the wrong type.
pub(super) fn explain(
    schema: &Schema,
    whose: &str,
    text: &TextOptions,
    line: &[u8],
) -> Option<String> {
    if let Err(e) = std::str::from_utf8(line) {
        let at = e.valid_up_to();
        let column = field_at(line, at, text.delimiter);
        let name = schema
            .fields()
            .get(column)
            .map_or("?", |f| f.name().as_str());
        return Some(format!(
            "column '{name}': invalid UTF-8 at byte {} of the line",
            at + 1
        ));
    }
    let decode = |schema: Schema| {
        TextDecoder::decode_whole(&FileColumns::of(Arc::new(schema)), text, line, 1)
    };
    let as_text: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| Field::new(f.name(), DataType::Utf8, true))
        .collect();
    let Ok(Some(texts)) = decode(Schema::new(as_text.clone())) else {
        let (found, _) = arrow_csv::reader::Format::default()
            .with_header(false)
            .with_delimiter(text.delimiter)
            .infer_schema(line, Some(1))
            .ok()?;
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        if found.fields().len() == names.len() {
            // The count is right: the decoder's own error says what is not.
            return None;
        }
        return Some(format!(
            "{} fields where {whose} has {} ({})",
            found.fields().len(),
            names.len(),
            names.join(", ")
        ));
    };
    // The first column that fails when it alone is read with its type.
    schema.fields().iter().enumerate().find_map(|(i, field)| {
        let mut fields = as_text.clone();
        fields[i] = field.as_ref().clone();
        decode(Schema::new(fields)).is_err().then(|| {
            let text = texts.column(i).as_string::<i32>().value(0);
            // A number in a TIMESTAMP column is most likely epoch time.
            let hint = match field.data_type() {
                DataType::Timestamp(..) if text.trim().parse::<i64>().is_ok() => {
                    " (a TIMESTAMP column reads dates and times such as 2012-02-22T16:46:28.967; \
                     declare it BIGINT for epoch milliseconds)"
                }
                // A number, as arrow reads text, that the column refused:
                // past the type's range (see `float_cell`).
                DataType::Float64 | DataType::Float32 if Float64Type::parse(text).is_some() => {
                    " (out of range)"
                }
                _ => "",
            };
            format!(
                "column '{}' ({}): cannot read {}{hint}",
                field.name(),
                sliq_sql::sql_type_name(field.data_type()),
                quoted_cell(text)
            )
        })
    })
}

/// arrow-json's `error` for one line of JSON with `schema`, in the stream's
/// terms; `None` for an error it does not know.
pub(super) fn explain_json(schema: &Schema, error: &ArrowError) -> Option<String> {
    let ArrowError::JsonError(message) = error else {
        return None;
    };
    let column = |name: &str| {
        let field = schema.field_with_name(name).ok()?;
        Some(format!(
            "column '{name}' ({})",
            sliq_sql::sql_type_name(field.data_type())
        ))
    };
    if let Some(rest) = message.strip_prefix("whilst decoding field '") {
        let (name, why) = rest.split_once("': ")?;
        let value = match why.strip_prefix("failed to parse ") {
            Some(parsed) => parsed.rsplit_once(" as ")?.0,
            None => why.strip_prefix("expected ")?.split_once(" got ")?.1,
        };
        return Some(format!("{}: cannot read {value}", column(name)?));
    }
    if let Some(value) = message.strip_prefix("expected { got ") {
        return Some(format!("not a JSON object: {value}"));
    }
    let field =
        message.strip_prefix("Encountered unmasked nulls in non-nullable StructArray child: ")?;
    let name = field.split('"').nth(1)?;
    Some(format!(
        "{} is NOT NULL, and the line gives it no value",
        column(name)?
    ))
}

/// The index of the field holding byte `at` of a CSV `line`: delimiters
/// outside double quotes counted before it.
fn field_at(line: &[u8], at: usize, delimiter: u8) -> usize {
    let mut quoted = false;
    let mut field = 0;
    for &byte in &line[..at.min(line.len())] {
        match byte {
            b'"' => quoted = !quoted,
            b if b == delimiter && !quoted => field += 1,
            _ => {}
        }
    }
    field
}

#[cfg(test)]
mod tests {
    use super::super::{Format, OnError};
    use super::*;

    /// CSV options with this delimiter.
    fn csv(delimiter: u8) -> TextOptions {
        TextOptions {
            format: Format::Csv,
            header: false,
            delimiter,
            on_error: OnError::Fail,
        }
    }

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("seq", DataType::Int64, true),
            Field::new("key", DataType::Utf8, true),
            Field::new("v", DataType::Float64, true),
        ])
    }

    #[test]
    fn arrow_json_s_errors_are_said_in_the_stream_s_terms() {
        let schema = Schema::new(vec![
            Field::new("ts", DataType::Int64, false),
            Field::new("key", DataType::Utf8, true),
        ]);
        let said =
            |message: &str| explain_json(&schema, &ArrowError::JsonError(message.to_string()));
        assert_eq!(
            said("whilst decoding field 'ts': failed to parse \"x\" as Int64").as_deref(),
            Some("column 'ts' (BIGINT): cannot read \"x\"")
        );
        assert_eq!(
            said("whilst decoding field 'key': expected string got {\"a\": 1}").as_deref(),
            Some("column 'key' (VARCHAR): cannot read {\"a\": 1}")
        );
        assert_eq!(
            said("expected { got [1, 2, 3]").as_deref(),
            Some("not a JSON object: [1, 2, 3]")
        );
        assert_eq!(
            said("Encountered unmasked nulls in non-nullable StructArray child: Field { \"ts\": Int64 }")
                .as_deref(),
            Some("column 'ts' (BIGINT) is NOT NULL, and the line gives it no value")
        );
        assert_eq!(said("something else"), None);
        assert_eq!(
            said("whilst decoding field 'nope': expected string got 1"),
            None
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_is_named_by_its_column() {
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,a,oops\n").as_deref(),
            Some("column 'v' (DOUBLE): cannot read 'oops'")
        );
        assert_eq!(
            explain(&schema(), "the stream", &csv(b';'), b"x;\"a;b\";2\n").as_deref(),
            Some("column 'seq' (BIGINT): cannot read 'x'")
        );
        // A quote left open runs to the line's end: its newline is shown
        // escaped, so the message stays on one line.
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,a,\"oops\n").as_deref(),
            Some("column 'v' (DOUBLE): cannot read 'oops\\n'")
        );
    }

    #[test]
    fn a_number_past_a_float_columns_range_is_named_as_such() {
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,a,-1e400\n").as_deref(),
            Some("column 'v' (DOUBLE): cannot read '-1e400' (out of range)")
        );
        let real = Schema::new(vec![Field::new("r", DataType::Float32, true)]);
        assert_eq!(
            explain(&real, "the stream", &csv(b','), b"\"1e39\"\n").as_deref(),
            Some("column 'r' (REAL): cannot read '1e39' (out of range)")
        );
        // Infinities written as such read.
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,a,-inf\n"),
            None
        );
    }

    #[test]
    fn epoch_numbers_in_a_timestamp_column_get_a_hint() {
        let schema = Schema::new(vec![Field::new(
            "ts",
            DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
            true,
        )]);
        let reason = explain(&schema, "the stream", &csv(b','), b"1330000000014\n");
        assert!(
            reason.as_deref().is_some_and(|r| r.starts_with(
                "column 'ts' (TIMESTAMP): cannot read '1330000000014' (a TIMESTAMP column reads dates"
            ) && r.ends_with("declare it BIGINT for epoch milliseconds)")),
            "{reason:?}"
        );
        let reason = explain(&schema, "the stream", &csv(b','), b"yesterday\n");
        assert_eq!(
            reason.as_deref(),
            Some("column 'ts' (TIMESTAMP): cannot read 'yesterday'")
        );
    }

    #[test]
    fn a_wrong_field_count_names_the_stream_columns() {
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,a\n").as_deref(),
            Some("2 fields where the stream has 3 (seq, key, v)")
        );
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,\"a,b\",2,3\n").as_deref(),
            Some("4 fields where the stream has 3 (seq, key, v)")
        );
    }

    #[test]
    fn invalid_utf8_is_named_by_its_column_and_byte() {
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,\xff\xfe,2\n").as_deref(),
            Some("column 'key': invalid UTF-8 at byte 3 of the line")
        );
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,\"a,b\",\xc3\n").as_deref(),
            Some("column 'v': invalid UTF-8 at byte 9 of the line")
        );
    }

    #[test]
    fn a_good_line_has_nothing_to_explain() {
        assert_eq!(
            explain(&schema(), "the stream", &csv(b','), b"1,a,2.5\n"),
            None
        );
    }
}

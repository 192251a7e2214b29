//! A CSV header's column names, matched with the stream's columns.
//!
//! Files exported by other tools often list the same columns in another
//! order, or carry more columns than a stream declares. When the header
//! names every column of the stream (ignoring case), the file is read by
//! name: its columns are decoded in its order and projected onto the
//! stream's, and columns the stream does not have are skipped. A header
//! that names none of them is taken as a file whose columns are the
//! stream's under other names, read by position, unless it reads as a row
//! of the stream (its cells parse as the stream's types, some of them not
//! text): then the file has no header, and the line is the first row rather
//! than lost. A header naming some but not all of them is an error: reading
//! it either way would put values into the wrong columns.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::TextOptions;
use super::decoder::{FileColumns, TextDecoder};

/// What the first line of a CSV source read with `header` is.
#[derive(Debug)]
pub(super) enum FirstLine {
    /// A header: how it lays out the stream's columns, and a note for the
    /// user when it names none of them.
    Header(FileColumns, Option<String>),
    /// The first row of a file without a header, and a note saying so.
    Row(String),
}

/// What the first `line` of a source with `header` is, for the stream
/// `schema`.
pub(super) fn first_line(
    line: &[u8],
    schema: &SchemaRef,
    text: &TextOptions,
) -> Result<FirstLine, String> {
    let names = header_names(line, text)?;
    let find = |name: &str| -> Result<Option<usize>, String> {
        let mut found = names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.eq_ignore_ascii_case(name));
        match (found.next(), found.next()) {
            (Some((i, _)), None) => Ok(Some(i)),
            (None, _) => Ok(None),
            (Some(_), Some(_)) => Err(format!("the header names column '{name}' twice")),
        }
    };
    let positions = schema
        .fields()
        .iter()
        .map(|f| find(f.name()))
        .collect::<Result<Vec<_>, _>>()?;
    let stream_names = || {
        schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if positions.iter().all(Option::is_none) {
        let same_count = names.len() == schema.fields().len();
        if same_count && reads_as_row(line, schema, text) {
            return Ok(FirstLine::Row(format!(
                "the first line ({}) is a row of ({}), not a header: reading it as data \
                 (header = false says a file has none)",
                names.join(", "),
                stream_names()
            )));
        }
        let note = same_count.then(|| {
            format!(
                "the header ({}) names none of the stream's columns; reading them by position as ({})",
                names.join(", "),
                stream_names()
            )
        });
        return Ok(FirstLine::Header(FileColumns::of(Arc::clone(schema)), note));
    }
    let projection: Vec<usize> = match positions.iter().copied().collect::<Option<Vec<_>>>() {
        Some(projection) => projection,
        None => {
            let missing: Vec<&str> = schema
                .fields()
                .iter()
                .zip(&positions)
                .filter(|(_, p)| p.is_none())
                .map(|(f, _)| f.name().as_str())
                .collect();
            return Err(format!(
                "the header ({}) lacks the stream's column(s) {} (the stream has {})",
                names.join(", "),
                missing.join(", "),
                stream_names()
            ));
        }
    };
    let in_order = projection.iter().copied().eq(0..names.len());
    if in_order {
        return Ok(FirstLine::Header(FileColumns::of(Arc::clone(schema)), None));
    }
    // The file's columns: the stream's field where it is one, text otherwise
    // (decoded only if projected, which it is not).
    let fields: Vec<Field> = names
        .iter()
        .enumerate()
        .map(|(i, name)| match projection.iter().position(|&p| p == i) {
            Some(column) => schema.field(column).clone(),
            None => Field::new(name, DataType::Utf8, true),
        })
        .collect();
    let columns = FileColumns {
        schema: Arc::new(Schema::new(fields)),
        projection: Some(projection),
        stream: None,
    };
    Ok(FirstLine::Header(columns, None))
}

/// Whether `line` decodes as a row of `schema`, which has a column other
/// than text (a line of names reads as a row of text columns too).
fn reads_as_row(line: &[u8], schema: &SchemaRef, text: &TextOptions) -> bool {
    let typed = schema
        .fields()
        .iter()
        .any(|f| !matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8));
    typed
        && TextDecoder::decode_whole(
            &FileColumns::of(Arc::clone(schema)),
            text,
            without_bom(line),
            1,
        )
        .is_ok_and(|batch| batch.is_some())
}

/// `line` without a UTF-8 byte-order mark.
pub(super) fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// The names in a CSV header line (quotes, a byte-order mark and spaces
/// around names removed).
fn header_names(line: &[u8], text: &TextOptions) -> Result<Vec<String>, String> {
    let line = without_bom(line);
    let (schema, records_after) = arrow_csv::reader::Format::default()
        .with_header(true)
        .with_delimiter(text.delimiter)
        .infer_schema(line, None)
        .map_err(|e| format!("cannot read the header: {e}"))?;
    // csv-core ends a record at a lone carriage return; sliq's lines end at
    // a line feed. Rows after the header in the same line would be lost.
    if records_after > 0 {
        return Err(
            "the first line holds more than one record: its records end in a lone \
                    carriage return, which sliq does not take for a line break (convert the \
                    line breaks to \\n or \\r\\n)"
                .into(),
        );
    }
    Ok(schema
        .fields()
        .iter()
        .map(|f| f.name().trim().to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::super::{Format, OnError};
    use super::*;

    fn csv() -> TextOptions {
        TextOptions {
            format: Format::Csv,
            header: true,
            delimiter: b',',
            on_error: OnError::Fail,
        }
    }

    fn stream() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("ts", DataType::Int64, true),
            Field::new("key", DataType::Utf8, true),
            Field::new("v", DataType::Float64, true),
        ]))
    }

    /// The projection, the file's columns ("name type") and the note.
    type Layout = (Option<Vec<usize>>, Vec<String>, Option<String>);

    fn layout(header: &[u8]) -> Result<Layout, String> {
        let FirstLine::Header(columns, note) = first_line(header, &stream(), &csv())? else {
            return Err("a row, not a header".into());
        };
        let names = columns
            .schema
            .fields()
            .iter()
            .map(|f| format!("{} {}", f.name(), f.data_type()))
            .collect();
        Ok((columns.projection, names, note))
    }

    #[test]
    fn the_stream_order_needs_no_projection() {
        let (projection, _, note) = layout(b"ts,key,v\n").unwrap();
        assert_eq!((projection, note), (None, None));
        let (projection, _, _) = layout(b"\xEF\xBB\xBF\"TS\", Key ,V\r\n").unwrap();
        assert_eq!(projection, None);
    }

    #[test]
    fn another_order_and_more_columns_are_read_by_name() {
        let (projection, names, note) = layout(b"v,extra,ts,key\n").unwrap();
        assert_eq!(projection, Some(vec![2, 3, 0]));
        assert_eq!(names, ["v Float64", "extra Utf8", "ts Int64", "key Utf8"]);
        assert_eq!(note, None);
        let (projection, _, _) = layout(b"ts,key,v,extra\n").unwrap();
        assert_eq!(projection, Some(vec![0, 1, 2]));
    }

    #[test]
    fn other_names_are_read_by_position_with_a_note() {
        let (projection, _, note) = layout(b"a,b,c\n").unwrap();
        assert_eq!(projection, None);
        assert_eq!(
            note.as_deref(),
            Some(
                "the header (a, b, c) names none of the stream's columns; reading them by position as (ts, key, v)"
            )
        );
    }

    #[test]
    fn a_header_naming_only_some_columns_is_refused() {
        assert_eq!(
            layout(b"ts,k,v\n").unwrap_err(),
            "the header (ts, k, v) lacks the stream's column(s) key (the stream has ts, key, v)"
        );
        assert_eq!(
            layout(b"ts,key,v,KEY\n").unwrap_err(),
            "the header names column 'key' twice"
        );
    }

    #[test]
    fn a_first_line_of_records_ending_in_carriage_returns_is_refused() {
        let error = layout(b"ts,key,v\r1,k,2.5\r2,k,3.5\r").unwrap_err();
        assert!(error.contains("lone carriage return"), "{error}");
        assert!(layout(b"ts,key,v\r\n").is_ok());
        assert!(layout(b"ts,key,v\r").is_ok());
    }

    #[test]
    fn a_first_line_that_reads_as_a_row_is_data() {
        for line in [&b"17,k1,2.5\n"[..], b"\xEF\xBB\xBF17,k1,\r\n"] {
            match first_line(line, &stream(), &csv()) {
                Ok(FirstLine::Row(note)) => {
                    assert!(note.starts_with("the first line (17, k1, "), "{note}")
                }
                other => panic!("{other:?}"),
            }
        }
        // Not a row: a value that does not parse, another number of cells.
        assert!(layout(b"17,k1,x\n").is_ok());
        assert!(layout(b"17,k1\n").is_ok());
        // Names read as a row of text columns: a header.
        let text = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Utf8, true),
            Field::new("b", DataType::Utf8, true),
        ]));
        assert!(matches!(
            first_line(b"x,y\n", &text, &csv()),
            Ok(FirstLine::Header(_, Some(_)))
        ));
    }
}

//! A CSV header's column names, matched with the stream's columns.
//!
//! Files exported by other tools often list the same columns in another
//! order, or carry more columns than a stream declares. When the header
//! names every column of the stream (ignoring case), the file is read by
//! name: its columns are decoded in its order and projected onto the
//! stream's, and columns the stream does not have are skipped. A header
//! that names none of them is taken as a file whose columns are the
//! stream's under other names, read by position. A header naming some
//! but not all of them is an error: reading it either way would put values
//! into the wrong columns.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::TextOptions;
use super::decoder::FileColumns;

/// How the header `line` lays out the stream `schema`'s columns, and a note
/// for the user when it names none of them.
pub(super) fn file_columns(
    line: &[u8],
    schema: &SchemaRef,
    text: &TextOptions,
) -> Result<(FileColumns, Option<String>), String> {
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
        let note = (names.len() == schema.fields().len()).then(|| {
            format!(
                "the header ({}) names none of the stream's columns; reading them by position as ({})",
                names.join(", "),
                stream_names()
            )
        });
        return Ok((FileColumns::of(Arc::clone(schema)), note));
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
        return Ok((FileColumns::of(Arc::clone(schema)), None));
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
    };
    Ok((columns, None))
}

/// The names in a CSV header line (quotes, a byte-order mark and spaces
/// around names removed).
fn header_names(line: &[u8], text: &TextOptions) -> Result<Vec<String>, String> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let (schema, _) = arrow_csv::reader::Format::default()
        .with_header(true)
        .with_delimiter(text.delimiter)
        .infer_schema(line, Some(0))
        .map_err(|e| format!("cannot read the header: {e}"))?;
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
        let (columns, note) = file_columns(header, &stream(), &csv())?;
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
}

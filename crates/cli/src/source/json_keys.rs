//! The keys of a JSON lines source's first object, matched with the
//! stream's columns.
//!
//! arrow-json reads a field by its exact name and leaves a column NULL on
//! a line without it, so a key spelt in another case (`"DeviceId"` for a
//! column `deviceId`), or named otherwise (`"device_id"`), would make the
//! column NULL on every line without a word. The first object decides, as
//! a CSV header does: a column that no key names exactly but one key names
//! ignoring case is read from that key; a column that no key names at all
//! is noted, since it reads NULL wherever a line lacks it.

use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};

use super::decoder::FileColumns;

/// Keys listed at most in a note.
const LISTED_KEYS: usize = 12;

/// What the first object of a JSON lines source tells: how to read the
/// stream's columns when it spells some of their names in another case,
/// and a note for the user when it lacks some. Nothing for a line that
/// is not an object (its decoding names what is wrong).
pub(super) fn first_object(
    line: &[u8],
    schema: &SchemaRef,
) -> (Option<FileColumns>, Option<String>) {
    let Ok(object) = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line)
    else {
        return (None, None);
    };
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut renamed = false;
    let mut missing = Vec::new();
    for field in schema.fields() {
        let name = field.name().as_str();
        if keys.contains(&name) {
            fields.push(Arc::clone(field));
            continue;
        }
        let mut alike = keys.iter().filter(|k| k.eq_ignore_ascii_case(name));
        match (alike.next(), alike.next()) {
            (Some(key), None) => {
                fields.push(Arc::new(field.as_ref().clone().with_name(*key)));
                renamed = true;
            }
            _ => {
                fields.push(Arc::clone(field));
                missing.push(name);
            }
        }
    }
    let columns = renamed.then(|| FileColumns {
        schema: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        projection: None,
        stream: Some(Arc::clone(schema)),
    });
    (columns, lacking_note(&missing, &keys))
}

/// The note for the stream's columns `missing` from a first object with
/// `keys`, if any are.
fn lacking_note(missing: &[&str], keys: &[&str]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let named: Vec<String> = missing
        .iter()
        .map(|name| match sliq_sql::closest(name, keys.iter().copied()) {
            Some(key) => format!("'{name}' (a key '{key}' is there)"),
            None => format!("'{name}'"),
        })
        .collect();
    let mut listed: Vec<String> = keys
        .iter()
        .take(LISTED_KEYS)
        .map(|k| format!("'{k}'"))
        .collect();
    if keys.len() > LISTED_KEYS {
        listed.push(format!("and {} more", keys.len() - LISTED_KEYS));
    }
    let listed = match listed.is_empty() {
        true => "none".to_string(),
        false => listed.join(", "),
    };
    Some(format!(
        "the first line has no key for column(s) {} (its keys: {listed}); a line without \
         the key gives the column NULL",
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, Field};

    use super::*;

    fn stream() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("deviceId", DataType::Utf8, true),
            Field::new("temp", DataType::Float64, true),
        ]))
    }

    #[test]
    fn keys_that_name_every_column_change_nothing() {
        let (columns, note) = first_object(br#"{"temp": 2, "deviceId": "a", "x": 1}"#, &stream());
        assert!(columns.is_none());
        assert_eq!(note, None);
    }

    #[test]
    fn a_key_in_another_case_is_read_for_its_column() {
        let (columns, note) = first_object(br#"{"DEVICEID": "a", "temp": 2}"#, &stream());
        let columns = columns.expect("read by the file's names");
        assert!(columns.schema.field_with_name("DEVICEID").is_ok());
        assert_eq!(columns.stream, Some(stream()));
        assert_eq!(note, None);
    }

    #[test]
    fn a_missing_key_is_noted_with_the_closest() {
        let (columns, note) = first_object(br#"{"device_id": "a", "temp": 2}"#, &stream());
        assert!(columns.is_none());
        assert_eq!(
            note.as_deref(),
            Some(
                "the first line has no key for column(s) 'deviceId' (a key 'device_id' is \
                 there) (its keys: 'device_id', 'temp'); a line without the key gives the \
                 column NULL"
            )
        );
        // Two keys alike ignoring case: neither is taken.
        let (columns, note) =
            first_object(br#"{"DeviceId": 1, "deviceid": 2, "temp": 2}"#, &stream());
        assert!(columns.is_none());
        assert!(note.is_some_and(|n| n.contains("column(s) 'deviceId'")));
    }

    #[test]
    fn a_line_that_is_not_an_object_tells_nothing() {
        assert!(matches!(first_object(b"[1, 2]", &stream()), (None, None)));
        assert!(matches!(
            first_object(b"{\"temp\": ", &stream()),
            (None, None)
        ));
    }
}

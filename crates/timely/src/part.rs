//! The records that cross timely's exchange channels: a slice of a record
//! batch addressed to one worker.
//!
//! Between workers of one process a part moves as is; between processes it
//! travels as an Arrow IPC stream (schema and one batch), through timely's
//! bincode encoding.

use std::io::Cursor;

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{self, SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

/// Rows of one batch bound for the worker `dest` (its index among all the
/// workers of the computation).
#[derive(Clone, Debug)]
pub struct Part {
    /// The receiving worker.
    pub dest: usize,
    /// The rows, in the order they had in their input batch.
    pub batch: RecordBatch,
}

impl Part {
    /// Timely's exchange routes a record to worker `hash % peers`.
    pub fn route(&self) -> u64 {
        self.dest as u64
    }
}

/// Encodes `batch` as an Arrow IPC stream.
fn encode(batch: &RecordBatch) -> Result<Vec<u8>, arrow_schema::ArrowError> {
    let mut bytes = Vec::new();
    let mut writer = StreamWriter::try_new(&mut bytes, &batch.schema())?;
    writer.write(batch)?;
    writer.finish()?;
    drop(writer);
    Ok(bytes)
}

/// Decodes the one batch of an Arrow IPC stream.
fn decode(bytes: &[u8]) -> Result<RecordBatch, String> {
    let mut reader = StreamReader::try_new(Cursor::new(bytes), None).map_err(|e| e.to_string())?;
    match reader.next() {
        Some(batch) => batch.map_err(|e| e.to_string()),
        None => Err("an IPC stream without a batch".into()),
    }
}

/// Raw bytes, serialized as one byte string rather than a sequence.
struct IpcBytes<'a>(&'a [u8]);

impl Serialize for IpcBytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let bytes = encode(&self.batch).map_err(ser::Error::custom)?;
        let mut tuple = serializer.serialize_tuple(2)?;
        tuple.serialize_element(&(self.dest as u64))?;
        tuple.serialize_element(&IpcBytes(&bytes))?;
        tuple.end()
    }
}

/// An owned byte string.
struct ByteBuf(Vec<u8>);

impl<'de> Deserialize<'de> for ByteBuf {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BytesVisitor;
        impl<'de> Visitor<'de> for BytesVisitor {
            type Value = ByteBuf;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an Arrow IPC byte string")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v))
            }
        }
        deserializer.deserialize_byte_buf(BytesVisitor)
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PartVisitor;
        impl<'de> Visitor<'de> for PartVisitor {
            type Value = Part;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a worker index and an Arrow IPC stream")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Part, A::Error> {
                let dest: u64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let bytes: ByteBuf = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                let batch = decode(&bytes.0).map_err(de::Error::custom)?;
                Ok(Part {
                    dest: dest as usize,
                    batch,
                })
            }
        }
        deserializer.deserialize_tuple(2, PartVisitor)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, Float64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    #[test]
    fn a_part_survives_timelys_encoding() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, true),
            Field::new("v", DataType::Float64, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
                Arc::new(Float64Array::from(vec![Some(1.5), Some(f64::NAN), None])),
            ],
        )
        .unwrap();
        let part = Part { dest: 3, batch };
        let bytes = bincode::serialize(&part).unwrap();
        let back: Part = bincode::deserialize(&bytes).unwrap();
        assert_eq!(back.dest, 3);
        assert_eq!(back.batch.schema(), part.batch.schema());
        assert_eq!(back.batch.column(0), part.batch.column(0));
        let v = back
            .batch
            .column(1)
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap();
        assert_eq!(v.value(0), 1.5);
        assert!(v.value(1).is_nan());
        assert!(v.is_null(2));
    }

    #[test]
    fn corrupt_bytes_are_an_error_not_a_panic() {
        let part_bytes = bincode::serialize(&(1u64, IpcBytes(b"not arrow"))).unwrap();
        let decoded: Result<Part, _> = bincode::deserialize(&part_bytes);
        assert!(decoded.is_err());
    }
}

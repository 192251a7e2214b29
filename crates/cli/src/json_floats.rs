//! JSON output that keeps NaN and infinities.
//!
//! JSON has no number for NaN or ±∞, and arrow-json writes them as `null`,
//! which a reader cannot tell from SQL NULL (an absent key in sliq's output).
//! Here they become the strings `"NaN"`, `"Infinity"` and `"-Infinity"`, as
//! PostgreSQL's `to_json` writes them; finite values go through arrow-json's
//! own encoder, so they print exactly as before.

use std::sync::{Arc, LazyLock};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, PrimitiveArray};
use arrow_json::writer::{Encoder, EncoderFactory, EncoderOptions, NullableEncoder, make_encoder};
use arrow_schema::{ArrowError, DataType, FieldRef};

/// Options without a factory, for the encoders finite values go through.
static PLAIN: LazyLock<EncoderOptions> = LazyLock::new(EncoderOptions::default);

/// The encoder factory to hand to arrow-json's writer.
pub fn non_finite_as_strings() -> Arc<dyn EncoderFactory> {
    Arc::new(NonFiniteAsStrings)
}

#[derive(Debug)]
struct NonFiniteAsStrings;

impl EncoderFactory for NonFiniteAsStrings {
    fn make_default_encoder<'a>(
        &self,
        field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        let encoder: Box<dyn Encoder + 'a> = match array.data_type() {
            DataType::Float64 => Box::new(FloatEncoder {
                values: array.as_primitive::<Float64Type>(),
                finite: make_encoder(field, array, &PLAIN)?,
            }),
            DataType::Float32 => Box::new(FloatEncoder {
                values: array.as_primitive::<Float32Type>(),
                finite: make_encoder(field, array, &PLAIN)?,
            }),
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(encoder, array.nulls().cloned())))
    }
}

/// A float column: non-finite values as strings, the rest by `finite`.
struct FloatEncoder<'a, T: arrow_array::ArrowPrimitiveType> {
    values: &'a PrimitiveArray<T>,
    finite: NullableEncoder<'a>,
}

impl<T> Encoder for FloatEncoder<'_, T>
where
    T: arrow_array::ArrowPrimitiveType,
    T::Native: Into<f64>,
{
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let value: f64 = self.values.value(idx).into();
        if value.is_nan() {
            out.extend_from_slice(b"\"NaN\"");
        } else if value == f64::INFINITY {
            out.extend_from_slice(b"\"Infinity\"");
        } else if value == f64::NEG_INFINITY {
            out.extend_from_slice(b"\"-Infinity\"");
        } else {
            self.finite.encode(idx, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float32Array, Float64Array, RecordBatch, StructArray};
    use arrow_json::writer::LineDelimited;
    use arrow_schema::{Field, Schema};

    use super::*;

    fn json(batch: &RecordBatch, factory: bool) -> String {
        let mut out = Vec::new();
        let mut builder = arrow_json::WriterBuilder::new();
        if factory {
            builder = builder.with_encoder_factory(non_finite_as_strings());
        }
        let mut writer = builder.build::<_, LineDelimited>(&mut out);
        writer.write(batch).expect("writes");
        writer.finish().expect("finishes");
        drop(writer);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn non_finite_values_become_strings_and_the_rest_prints_as_before() {
        let values = vec![
            Some(1.5),
            None,
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            Some(-0.0),
            Some(1e30),
            Some(0.1),
        ];
        let doubles: ArrayRef = Arc::new(Float64Array::from(values.clone()));
        let floats: ArrayRef = Arc::new(Float32Array::from(
            values
                .iter()
                .map(|v| v.map(|v| v as f32))
                .collect::<Vec<_>>(),
        ));
        let nested: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(Field::new("x", arrow_schema::DataType::Float64, true)),
            Arc::clone(&doubles),
        )]));
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("d", arrow_schema::DataType::Float64, true),
                Field::new("f", arrow_schema::DataType::Float32, true),
                Field::new("s", nested.data_type().clone(), true),
            ])),
            vec![doubles, floats, nested],
        )
        .expect("batch");
        let ours = json(&batch, true);
        let lines: Vec<&str> = ours.lines().collect();
        assert_eq!(lines[1], r#"{"s":{}}"#, "NULL stays an absent key");
        assert_eq!(lines[2], r#"{"d":"NaN","f":"NaN","s":{"x":"NaN"}}"#);
        assert_eq!(
            lines[3],
            r#"{"d":"Infinity","f":"Infinity","s":{"x":"Infinity"}}"#
        );
        assert_eq!(
            lines[4],
            r#"{"d":"-Infinity","f":"-Infinity","s":{"x":"-Infinity"}}"#
        );
        // Finite values exactly as arrow-json writes them.
        let theirs = json(&batch, false);
        for i in [0, 5, 6, 7] {
            assert_eq!(lines[i], theirs.lines().nth(i).expect("line"), "row {i}");
        }
    }
}

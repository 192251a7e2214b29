//! Arrow arrays as aggregate inputs ([`Columns`]) and aggregate results as
//! Arrow arrays ([`OutputSink`]).

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, DurationMillisecondType, Float64Type, Int64Type,
    TimestampMillisecondType,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, Int64Array, PrimitiveArray, StringArray,
    StructArray,
};
use arrow_buffer::{ArrowNativeType, NullBuffer, NullBufferBuilder};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use sliq_aggregates::{Columns, OutputSink, OutputType, ValueType};

/// One argument column, downcast once per batch.
enum Arg<'a> {
    Boolean(&'a BooleanArray),
    Int64(Values<'a, i64>),
    Timestamp(Values<'a, i64>),
    Date(Values<'a, i32>),
    Float64(Values<'a, f64>),
    Utf8(&'a StringArray),
    Decimal(Values<'a, i128>),
    /// A type the aggregate cannot read: every value reads as NULL.
    Unreadable,
}

/// A primitive column's values and its nulls (none when it has no NULL),
/// taken out of the array once per batch: a read of row `row` then loads
/// the value without going through the array's buffers.
struct Values<'a, T> {
    values: &'a [T],
    nulls: Option<&'a NullBuffer>,
}

impl<'a, T: ArrowNativeType> Values<'a, T> {
    fn of<P: ArrowPrimitiveType<Native = T>>(array: &'a PrimitiveArray<P>) -> Self {
        Values {
            values: array.values().as_ref(),
            nulls: array.nulls().filter(|n| n.null_count() > 0),
        }
    }

    #[inline(always)]
    fn is_valid(&self, row: usize) -> bool {
        row < self.values.len() && self.nulls.is_none_or(|n| n.is_valid(row))
    }

    /// Row `row`'s value; `None` for a NULL (or a row past the end).
    #[inline(always)]
    fn get(&self, row: usize) -> Option<T> {
        // `is_valid` checked the bound, so the index is not checked again.
        self.is_valid(row).then(|| self.values[row])
    }
}

/// A batch's argument arrays, in the canonical types of
/// [`sliq_sql::canonical_arrow_type`].
pub struct ArrowColumns<'a> {
    args: Vec<Arg<'a>>,
}

impl<'a> ArrowColumns<'a> {
    /// Wraps `arrays` (one per value argument).
    pub fn new(arrays: &'a [ArrayRef]) -> Self {
        let args = arrays
            .iter()
            .map(|a| match a.data_type() {
                DataType::Boolean => Arg::Boolean(a.as_boolean()),
                DataType::Int64 => Arg::Int64(Values::of(a.as_primitive::<Int64Type>())),
                DataType::Timestamp(TimeUnit::Millisecond, _) => {
                    Arg::Timestamp(Values::of(a.as_primitive::<TimestampMillisecondType>()))
                }
                DataType::Date32 => Arg::Date(Values::of(a.as_primitive::<Date32Type>())),
                // A length of time reads as its count of milliseconds.
                DataType::Duration(TimeUnit::Millisecond) => {
                    Arg::Int64(Values::of(a.as_primitive::<DurationMillisecondType>()))
                }
                DataType::Float64 => Arg::Float64(Values::of(a.as_primitive::<Float64Type>())),
                DataType::Utf8 => Arg::Utf8(a.as_string::<i32>()),
                DataType::Decimal128(_, _) => {
                    Arg::Decimal(Values::of(a.as_primitive::<Decimal128Type>()))
                }
                _ => Arg::Unreadable,
            })
            .collect();
        ArrowColumns { args }
    }
}

impl Columns for ArrowColumns<'_> {
    #[inline]
    fn is_valid(&self, arg: usize, row: usize) -> bool {
        match self.args.get(arg) {
            Some(Arg::Boolean(a)) => a.is_valid(row),
            Some(Arg::Int64(a)) => a.is_valid(row),
            Some(Arg::Timestamp(a)) => a.is_valid(row),
            Some(Arg::Date(a)) => a.is_valid(row),
            Some(Arg::Float64(a)) => a.is_valid(row),
            Some(Arg::Utf8(a)) => a.is_valid(row),
            Some(Arg::Decimal(a)) => a.is_valid(row),
            Some(Arg::Unreadable) | None => false,
        }
    }

    #[inline]
    fn i64(&self, arg: usize, row: usize) -> Option<i64> {
        match self.args.get(arg) {
            Some(Arg::Int64(a) | Arg::Timestamp(a)) => a.get(row),
            Some(Arg::Date(a)) => a.get(row).map(i64::from),
            _ => None,
        }
    }

    #[inline]
    fn f64(&self, arg: usize, row: usize) -> Option<f64> {
        match self.args.get(arg) {
            Some(Arg::Float64(a)) => a.get(row),
            _ => None,
        }
    }

    #[inline]
    fn bool(&self, arg: usize, row: usize) -> Option<bool> {
        match self.args.get(arg) {
            Some(Arg::Boolean(a)) => a.is_valid(row).then(|| a.value(row)),
            _ => None,
        }
    }

    #[inline]
    fn str(&self, arg: usize, row: usize) -> Option<&str> {
        match self.args.get(arg) {
            Some(Arg::Utf8(a)) => a.is_valid(row).then(|| a.value(row)),
            _ => None,
        }
    }

    #[inline]
    fn decimal(&self, arg: usize, row: usize) -> Option<i128> {
        match self.args.get(arg) {
            Some(Arg::Decimal(a)) => a.get(row),
            _ => None,
        }
    }
}

/// A primitive result column's values, collected without arrow's
/// `PrimitiveBuilder`, whose `append_value` stayed a call per row in the
/// windows' loop (2 % of a whole replay's time).
struct Primitive<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    nulls: NullBufferBuilder,
    data_type: DataType,
}

impl<T: ArrowPrimitiveType> Primitive<T> {
    fn with_capacity(rows: usize) -> Self {
        Primitive {
            values: Vec::with_capacity(rows),
            nulls: NullBufferBuilder::new(rows),
            data_type: T::DATA_TYPE,
        }
    }

    #[inline(always)]
    fn push(&mut self, value: T::Native) {
        self.values.push(value);
        self.nulls.append_non_null();
    }

    fn null(&mut self) {
        self.values.push(T::Native::default());
        self.nulls.append_null();
    }

    fn finish(&mut self) -> ArrayRef {
        let values = std::mem::take(&mut self.values);
        Arc::new(
            PrimitiveArray::<T>::new(values.into(), self.nulls.finish())
                .with_data_type(self.data_type.clone()),
        )
    }
}

/// A builder for one scalar result column.
enum ScalarBuilder {
    Boolean(BooleanBuilder),
    Int64(Primitive<Int64Type>),
    Timestamp(Primitive<TimestampMillisecondType>),
    Date(Primitive<Date32Type>),
    Interval(Primitive<DurationMillisecondType>),
    Float64(Primitive<Float64Type>),
    Utf8(StringBuilder),
    Decimal(Primitive<Decimal128Type>),
}

impl ScalarBuilder {
    fn new(t: ValueType, rows: usize) -> Self {
        match t {
            ValueType::Boolean => ScalarBuilder::Boolean(BooleanBuilder::with_capacity(rows)),
            ValueType::Int64 => ScalarBuilder::Int64(Primitive::with_capacity(rows)),
            ValueType::Timestamp => ScalarBuilder::Timestamp(Primitive::with_capacity(rows)),
            ValueType::Date => ScalarBuilder::Date(Primitive::with_capacity(rows)),
            ValueType::Interval => ScalarBuilder::Interval(Primitive::with_capacity(rows)),
            ValueType::Float64 => ScalarBuilder::Float64(Primitive::with_capacity(rows)),
            ValueType::Utf8 => ScalarBuilder::Utf8(StringBuilder::with_capacity(rows, rows * 8)),
            ValueType::Decimal { precision, scale } => ScalarBuilder::Decimal(Primitive {
                data_type: DataType::Decimal128(precision, scale),
                ..Primitive::with_capacity(rows)
            }),
        }
    }

    fn null(&mut self) {
        match self {
            ScalarBuilder::Boolean(b) => b.append_null(),
            ScalarBuilder::Int64(b) => b.null(),
            ScalarBuilder::Timestamp(b) => b.null(),
            ScalarBuilder::Date(b) => b.null(),
            ScalarBuilder::Interval(b) => b.null(),
            ScalarBuilder::Float64(b) => b.null(),
            ScalarBuilder::Utf8(b) => b.append_null(),
            ScalarBuilder::Decimal(b) => b.null(),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            ScalarBuilder::Boolean(b) => Arc::new(b.finish()),
            ScalarBuilder::Int64(b) => b.finish(),
            ScalarBuilder::Timestamp(b) => b.finish(),
            ScalarBuilder::Date(b) => b.finish(),
            ScalarBuilder::Interval(b) => b.finish(),
            ScalarBuilder::Float64(b) => b.finish(),
            ScalarBuilder::Utf8(b) => Arc::new(b.finish()),
            ScalarBuilder::Decimal(b) => b.finish(),
        }
    }
}

/// Collects aggregate results into an Arrow array of the result type.
pub struct ArrowSink {
    columns: Vec<ScalarBuilder>,
    /// For struct results: field names and types, validity, and which field
    /// the next push goes to.
    structure: Option<(Fields, Vec<bool>)>,
    next_field: usize,
}

impl ArrowSink {
    /// A sink for `rows` results of type `t`.
    pub fn new(t: &OutputType, rows: usize) -> Self {
        match t {
            OutputType::Scalar(v) => ArrowSink {
                columns: vec![ScalarBuilder::new(*v, rows)],
                structure: None,
                next_field: 0,
            },
            OutputType::Struct(fields) => ArrowSink {
                columns: fields
                    .iter()
                    .map(|(_, v)| ScalarBuilder::new(*v, rows))
                    .collect(),
                structure: Some((
                    fields
                        .iter()
                        .map(|(n, v)| {
                            Arc::new(Field::new(*n, sliq_sql::canonical_arrow_type(*v), true))
                        })
                        .collect(),
                    Vec::with_capacity(rows),
                )),
                next_field: 0,
            },
        }
    }

    /// The builder the next value goes to.
    #[inline(always)]
    fn target(&mut self) -> &mut ScalarBuilder {
        let i = self.next_field;
        if self.structure.is_some() {
            self.next_field = (self.next_field + 1) % self.columns.len().max(1);
        }
        let last = self.columns.len() - 1;
        &mut self.columns[i.min(last)]
    }

    /// The finished array.
    pub fn finish(mut self) -> ArrayRef {
        let arrays: Vec<ArrayRef> = self.columns.iter_mut().map(ScalarBuilder::finish).collect();
        match self.structure {
            None => arrays
                .into_iter()
                .next()
                .unwrap_or_else(|| Arc::new(Int64Array::from(Vec::<i64>::new()))),
            Some((fields, valid)) => {
                let nulls = valid.contains(&false).then(|| NullBuffer::from(valid));
                Arc::new(StructArray::new(fields, arrays, nulls))
            }
        }
    }
}

impl OutputSink for ArrowSink {
    #[inline(always)]
    fn push_null(&mut self) {
        self.target().null()
    }
    #[inline(always)]
    fn push_i64(&mut self, v: i64) {
        match self.target() {
            ScalarBuilder::Int64(b) => b.push(v),
            ScalarBuilder::Timestamp(b) => b.push(v),
            ScalarBuilder::Date(b) => b.push(v as i32),
            ScalarBuilder::Interval(b) => b.push(v),
            other => other.null(),
        }
    }
    #[inline(always)]
    fn push_f64(&mut self, v: f64) {
        match self.target() {
            ScalarBuilder::Float64(b) => b.push(v),
            other => other.null(),
        }
    }
    #[inline(always)]
    fn push_bool(&mut self, v: bool) {
        match self.target() {
            ScalarBuilder::Boolean(b) => b.append_value(v),
            other => other.null(),
        }
    }
    #[inline(always)]
    fn push_str(&mut self, v: &str) {
        match self.target() {
            ScalarBuilder::Utf8(b) => b.append_value(v),
            other => other.null(),
        }
    }
    #[inline(always)]
    fn push_decimal(&mut self, v: i128) {
        match self.target() {
            ScalarBuilder::Decimal(b) => b.push(v),
            other => other.null(),
        }
    }
    fn push_struct(&mut self, _fields: usize, valid: bool) {
        if let Some((_, validity)) = &mut self.structure {
            validity.push(valid);
            if !valid {
                for c in &mut self.columns {
                    c.null();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_reads_as_none_when_null_or_past_the_end() {
        let with_null = Int64Array::from(vec![Some(1), None, Some(3)]);
        let values = Values::of(&with_null);
        let read: Vec<_> = (0..4).map(|row| values.get(row)).collect();
        assert_eq!(read, vec![Some(1), None, Some(3), None]);
        let without = Int64Array::from(vec![7]);
        let values = Values::of(&without);
        assert_eq!((values.get(0), values.get(1)), (Some(7), None));
    }
}

//! How aggregates read their arguments and write their results, without
//! knowing the engine's column format.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::Literal;

/// Typed, row-addressed access to a call's argument columns. The engine
/// implements it over Arrow arrays, the tests over [`Rows`](crate::Rows).
///
/// `arg` is the argument's position in the call; a method is only called
/// with the type the registry resolved for that argument. Every method
/// returns `None` for NULL.
pub trait Columns {
    /// Whether argument `arg` is non-NULL at `row`.
    fn is_valid(&self, arg: usize, row: usize) -> bool;
    /// An `Int64`, `Timestamp` or `Date` argument.
    fn i64(&self, arg: usize, row: usize) -> Option<i64>;
    /// A `Float64` argument.
    fn f64(&self, arg: usize, row: usize) -> Option<f64>;
    /// A `Boolean` argument.
    fn bool(&self, arg: usize, row: usize) -> Option<bool>;
    /// A `Utf8` argument.
    fn str(&self, arg: usize, row: usize) -> Option<&str>;
    /// A `Decimal` argument: the unscaled value.
    fn decimal(&self, arg: usize, row: usize) -> Option<i128>;
}

/// Receives one aggregate result per window, in the order of the rows.
pub trait OutputSink {
    /// A NULL result.
    fn push_null(&mut self);
    /// An `Int64`, `Timestamp` or `Date` result.
    fn push_i64(&mut self, v: i64);
    /// A `Float64` result.
    fn push_f64(&mut self, v: f64);
    /// A `Boolean` result.
    fn push_bool(&mut self, v: bool);
    /// A `Utf8` result.
    fn push_str(&mut self, v: &str);
    /// A `Decimal` result: the unscaled value, which fits the result's
    /// precision.
    fn push_decimal(&mut self, v: i128);
    /// A struct result of `fields` fields: when `valid`, exactly `fields`
    /// pushes follow, in the declared field order; when not, the struct is
    /// NULL and no push follows.
    fn push_struct(&mut self, fields: usize, valid: bool);
}

/// A value `lower` produces.
pub trait OutputValue {
    /// Writes the value into `sink`.
    fn write<S: OutputSink>(&self, sink: &mut S);
}

/// A SQL scalar type as aggregates hold it: `i64` (also timestamps and
/// dates), `f64`, `bool`, `Arc<str>` (cheap to clone inside aggregates) and
/// `i128` (a decimal's unscaled value; its scale is the type's).
pub trait Scalar: Clone + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// Reads argument `arg` at `row`.
    fn read<C: Columns>(columns: &C, arg: usize, row: usize) -> Option<Self>;

    /// The value's 64-bit hash (for sketches), read without copying it.
    fn read_hash<C: Columns>(columns: &C, arg: usize, row: usize) -> Option<u64> {
        Self::read(columns, arg, row).map(|v| v.hash64())
    }

    /// SQL's total order: for floats, NaN is greater than every number and
    /// `-0.0` equals `0.0` (as in PostgreSQL and DuckDB).
    fn sql_cmp(&self, other: &Self) -> Ordering;

    /// A stable 64-bit hash; equal values (by `sql_cmp`) hash equally.
    fn hash64(&self) -> u64;

    /// The constant as this type, if it converts without loss of meaning.
    fn from_literal(literal: &Literal) -> Option<Self>;

    /// Writes the value into `sink`.
    fn write<S: OutputSink>(&self, sink: &mut S);
}

#[inline]
fn hash_bytes(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

impl Scalar for i64 {
    #[inline]
    fn read<C: Columns>(columns: &C, arg: usize, row: usize) -> Option<i64> {
        columns.i64(arg, row)
    }
    #[inline]
    fn sql_cmp(&self, other: &i64) -> Ordering {
        self.cmp(other)
    }
    #[inline]
    fn hash64(&self) -> u64 {
        hash_bytes(&self.to_le_bytes())
    }
    fn from_literal(literal: &Literal) -> Option<i64> {
        literal.as_i64()
    }
    fn write<S: OutputSink>(&self, sink: &mut S) {
        sink.push_i64(*self)
    }
}

impl Scalar for f64 {
    #[inline]
    fn read<C: Columns>(columns: &C, arg: usize, row: usize) -> Option<f64> {
        columns.f64(arg, row)
    }
    #[inline]
    fn sql_cmp(&self, other: &f64) -> Ordering {
        match (self.is_nan(), other.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            // Neither is NaN, so partial_cmp is total; -0.0 == 0.0.
            (false, false) => self.partial_cmp(other).unwrap_or(Ordering::Equal),
        }
    }
    #[inline]
    fn hash64(&self) -> u64 {
        let canonical = if self.is_nan() {
            f64::NAN
        } else if *self == 0.0 {
            0.0
        } else {
            *self
        };
        hash_bytes(&canonical.to_bits().to_le_bytes())
    }
    fn from_literal(literal: &Literal) -> Option<f64> {
        literal.as_f64()
    }
    #[inline(always)]
    fn write<S: OutputSink>(&self, sink: &mut S) {
        sink.push_f64(*self)
    }
}

impl Scalar for i128 {
    #[inline]
    fn read<C: Columns>(columns: &C, arg: usize, row: usize) -> Option<i128> {
        columns.decimal(arg, row)
    }
    #[inline]
    fn sql_cmp(&self, other: &i128) -> Ordering {
        self.cmp(other)
    }
    #[inline]
    fn hash64(&self) -> u64 {
        hash_bytes(&self.to_le_bytes())
    }
    /// Never: a constant's unscaled value depends on the scale, which only
    /// the type knows: the registry converts decimal constants with
    /// [`Literal::as_decimal`].
    fn from_literal(_literal: &Literal) -> Option<i128> {
        None
    }
    fn write<S: OutputSink>(&self, sink: &mut S) {
        sink.push_decimal(*self)
    }
}

impl Scalar for bool {
    #[inline]
    fn read<C: Columns>(columns: &C, arg: usize, row: usize) -> Option<bool> {
        columns.bool(arg, row)
    }
    #[inline]
    fn sql_cmp(&self, other: &bool) -> Ordering {
        self.cmp(other)
    }
    #[inline]
    fn hash64(&self) -> u64 {
        hash_bytes(&[*self as u8])
    }
    fn from_literal(literal: &Literal) -> Option<bool> {
        match literal {
            Literal::Boolean(b) => Some(*b),
            _ => None,
        }
    }
    fn write<S: OutputSink>(&self, sink: &mut S) {
        sink.push_bool(*self)
    }
}

impl Scalar for Arc<str> {
    #[inline]
    fn read<C: Columns>(columns: &C, arg: usize, row: usize) -> Option<Arc<str>> {
        columns.str(arg, row).map(Arc::from)
    }
    #[inline]
    fn read_hash<C: Columns>(columns: &C, arg: usize, row: usize) -> Option<u64> {
        columns.str(arg, row).map(|s| hash_bytes(s.as_bytes()))
    }
    #[inline]
    fn sql_cmp(&self, other: &Arc<str>) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
    #[inline]
    fn hash64(&self) -> u64 {
        hash_bytes(self.as_bytes())
    }
    fn from_literal(literal: &Literal) -> Option<Arc<str>> {
        match literal {
            Literal::Utf8(s) => Some(Arc::from(s.as_str())),
            _ => None,
        }
    }
    fn write<S: OutputSink>(&self, sink: &mut S) {
        sink.push_str(self)
    }
}

impl<T: Scalar> OutputValue for Option<T> {
    #[inline(always)]
    fn write<S: OutputSink>(&self, sink: &mut S) {
        match self {
            Some(v) => v.write(sink),
            None => sink.push_null(),
        }
    }
}

impl OutputValue for i64 {
    fn write<S: OutputSink>(&self, sink: &mut S) {
        sink.push_i64(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_order_puts_nan_last_and_equates_zeros() {
        assert_eq!(f64::NAN.sql_cmp(&f64::INFINITY), Ordering::Greater);
        assert_eq!(1.0f64.sql_cmp(&f64::NAN), Ordering::Less);
        assert_eq!((-0.0f64).sql_cmp(&0.0), Ordering::Equal);
        assert_eq!((-0.0f64).hash64(), 0.0f64.hash64());
        assert_eq!(f64::NAN.hash64(), (-f64::NAN).hash64());
    }

    #[test]
    fn literals_convert_only_when_meaningful() {
        assert_eq!(f64::from_literal(&Literal::Int64(3)), Some(3.0));
        assert_eq!(i64::from_literal(&Literal::Float64(3.5)), None);
        assert_eq!(bool::from_literal(&Literal::Utf8("x".into())), None);
        assert_eq!(
            <Arc<str>>::from_literal(&Literal::Utf8("x".into())).as_deref(),
            Some("x")
        );
    }

    #[test]
    fn decimal_literals_keep_their_digits() {
        let decimal = |unscaled, precision, scale| Literal::Decimal {
            unscaled,
            precision,
            scale,
        };
        let tenth = decimal(-1005, 4, 3);
        assert_eq!(tenth.to_string(), "-1.005");
        assert_eq!(decimal(5, 3, 3).to_string(), "0.005");
        assert_eq!(f64::from_literal(&tenth), Some(-1.005));
        // To a column's scale, halves away from zero.
        assert_eq!(tenth.as_decimal(10, 2), Some(-101));
        assert_eq!(tenth.as_decimal(10, 4), Some(-10050));
        assert_eq!(tenth.as_decimal(2, 2), None);
        assert_eq!(i64::from_literal(&tenth), None);
        assert_eq!(i64::from_literal(&decimal(7, 1, 0)), Some(7));
    }
}

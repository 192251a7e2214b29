//! `count`, `sum`, `avg`.

use std::marker::PhantomData;

use sliq_swag::Monoid;

use crate::exact::DoubleDouble;
use crate::{Aggregate, AggregateError, Columns, Scalar};

/// The number of rows in the window that count (see [`Counted`]).
#[derive(Clone, Copy, Debug)]
pub struct Count {
    /// Which rows count.
    pub counted: Counted,
}

/// Which rows a [`Count`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// `count(*)`: every row.
    Rows,
    /// `count(x)`: the rows whose `x` is not NULL.
    NonNull,
    /// `count_if(b)`: the rows whose BOOLEAN `b` is true.
    True,
    /// `regr_count(y, x)`: the rows whose `y` and `x` are both present and
    /// finite, the pairs the regression functions use.
    FinitePairs,
}

impl Monoid for Count {
    type Agg = i64;
    #[inline]
    fn identity(&self) -> i64 {
        0
    }
    #[inline]
    fn combine(&self, a: &i64, b: &i64) -> i64 {
        a.wrapping_add(*b)
    }
}

impl Aggregate for Count {
    type Output = i64;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> i64 {
        let counts = match self.counted {
            Counted::Rows => true,
            Counted::NonNull => columns.is_valid(0, row),
            Counted::True => columns.bool(0, row) == Some(true),
            Counted::FinitePairs => [0, 1]
                .iter()
                .all(|&arg| columns.f64(arg, row).is_some_and(f64::is_finite)),
        };
        counts as i64
    }
    fn lower(&self, agg: &i64) -> Result<i64, AggregateError> {
        Ok(*agg)
    }
}

/// A numeric input type and the exact accumulator its sums use.
pub trait Summable: Scalar {
    /// Accumulator: an `i128` for integers (no overflow below 2^64 rows),
    /// double-double for floats (no drift, order-independent in practice).
    type Acc: Copy + Send + Sync + std::fmt::Debug + 'static;
    /// The empty sum.
    const ZERO: Self::Acc;
    /// One value as an accumulator.
    fn to_acc(self) -> Self::Acc;
    /// `a + b`.
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The sum as this type; `Err` naming the type (and the exact value,
    /// when it can be shown) when it does not fit.
    fn finish(acc: Self::Acc) -> Result<Self, String>;
    /// The sum as a float, for `avg`.
    fn to_f64(acc: Self::Acc) -> f64;
}

/// An `i128` kept as two 64-bit halves: it aligns to 8 bytes like every
/// other partial aggregate (an `i128` aligns to 16), so the records of
/// windows shared by several aggregates pack without padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedI128([u64; 2]);

impl PackedI128 {
    const ZERO: PackedI128 = PackedI128([0, 0]);

    #[inline]
    fn new(v: i128) -> Self {
        let bits = v as u128;
        PackedI128([bits as u64, (bits >> 64) as u64])
    }

    #[inline]
    fn get(self) -> i128 {
        ((u128::from(self.0[1]) << 64) | u128::from(self.0[0])) as i128
    }
}

impl Summable for i64 {
    type Acc = PackedI128;
    const ZERO: PackedI128 = PackedI128::ZERO;
    #[inline]
    fn to_acc(self) -> PackedI128 {
        PackedI128::new(i128::from(self))
    }
    #[inline]
    fn add(a: PackedI128, b: PackedI128) -> PackedI128 {
        PackedI128::new(a.get().wrapping_add(b.get()))
    }
    fn finish(acc: PackedI128) -> Result<i64, String> {
        let exact = acc.get();
        i64::try_from(exact).map_err(|_| format!("BIGINT (the exact result is {exact})"))
    }
    fn to_f64(acc: PackedI128) -> f64 {
        acc.get() as f64
    }
}

impl Summable for f64 {
    type Acc = DoubleDouble;
    const ZERO: DoubleDouble = DoubleDouble::ZERO;
    #[inline]
    fn to_acc(self) -> DoubleDouble {
        DoubleDouble::from_f64(self)
    }
    #[inline]
    fn add(a: DoubleDouble, b: DoubleDouble) -> DoubleDouble {
        a + b
    }
    fn finish(acc: DoubleDouble) -> Result<f64, String> {
        Ok(acc.value())
    }
    fn to_f64(acc: DoubleDouble) -> f64 {
        acc.value()
    }
}

/// The largest unscaled magnitude of a `DECIMAL(38, s)`, plus one.
const DECIMAL_LIMIT: i128 = 10i128.pow(38);

/// A 192-bit two's-complement integer, as three 64-bit words, least
/// significant first: the sum of up to 2^64 decimals (each below 10^38 <
/// 2^127 in magnitude) never overflows it, so a decimal sum is exact however
/// DABA Lite associates it, and an overflow of DECIMAL(38) is seen as such.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wide([u64; 3]);

impl Wide {
    const ZERO: Wide = Wide([0; 3]);

    #[inline]
    fn new(v: i128) -> Self {
        let bits = v as u128;
        let sign = if v < 0 { u64::MAX } else { 0 };
        Wide([bits as u64, (bits >> 64) as u64, sign])
    }

    #[inline]
    fn add(self, other: Wide) -> Wide {
        let (w0, c0) = self.0[0].overflowing_add(other.0[0]);
        let (w1, c1a) = self.0[1].overflowing_add(other.0[1]);
        let (w1, c1b) = w1.overflowing_add(u64::from(c0));
        let w2 = self.0[2]
            .wrapping_add(other.0[2])
            .wrapping_add(u64::from(c1a | c1b));
        Wide([w0, w1, w2])
    }

    /// The value, if it fits an `i128`.
    fn to_i128(self) -> Option<i128> {
        let low = (u128::from(self.0[1]) << 64 | u128::from(self.0[0])) as i128;
        let sign = if low < 0 { u64::MAX } else { 0 };
        (self.0[2] == sign).then_some(low)
    }

    fn to_f64(self) -> f64 {
        if let Some(v) = self.to_i128() {
            return v as f64;
        }
        // At least 2^127 in magnitude: the words' rounding is relatively tiny.
        let high = self.0[2] as i64 as f64;
        let low = u128::from(self.0[1]) << 64 | u128::from(self.0[0]);
        high * 2f64.powi(128) + low as f64
    }
}

/// Decimals, as unscaled values of one scale: sums are exact, and fit the
/// result's DECIMAL(38, s) or fail. (`avg` over decimals is
/// [`Avg::scaled`], which knows the scale.)
impl Summable for i128 {
    type Acc = Wide;
    const ZERO: Wide = Wide::ZERO;
    #[inline]
    fn to_acc(self) -> Wide {
        Wide::new(self)
    }
    #[inline]
    fn add(a: Wide, b: Wide) -> Wide {
        a.add(b)
    }
    fn finish(acc: Wide) -> Result<i128, String> {
        match acc.to_i128() {
            Some(v) if v.unsigned_abs() < DECIMAL_LIMIT.unsigned_abs() => Ok(v),
            _ => Err("DECIMAL(38), the widest decimal".to_string()),
        }
    }
    /// The unscaled sum, for [`Avg::scaled`].
    fn to_f64(acc: Wide) -> f64 {
        acc.to_f64()
    }
}

/// The partial aggregate of `sum` and `avg`: exact sum and non-NULL count.
pub type SumAgg<T> = (<T as Summable>::Acc, i64);

fn sum_identity<T: Summable>() -> SumAgg<T> {
    (T::ZERO, 0)
}

#[inline]
fn sum_combine<T: Summable>(a: &SumAgg<T>, b: &SumAgg<T>) -> SumAgg<T> {
    (T::add(a.0, b.0), a.1 + b.1)
}

#[inline]
fn sum_lift<T: Summable, C: Columns>(columns: &C, row: usize) -> SumAgg<T> {
    match T::read(columns, 0, row) {
        Some(v) => (v.to_acc(), 1),
        None => (T::ZERO, 0),
    }
}

/// `sum(x)`: integers sum exactly in `i128` and report overflow of the
/// BIGINT result; decimals sum exactly into a DECIMAL(38) of the same
/// scale; floats sum in double-double precision (IEEE: any NaN
/// gives NaN, +∞ and −∞ give NaN). NULL when no input is non-NULL.
pub struct Sum<T>(PhantomData<T>);

/// `avg(x)` / `mean(x)`: the exact sum divided by the count, as DOUBLE.
/// Over decimals the sum is unscaled: [`Avg::scaled`] divides it by
/// `count × 10^scale` in one division, so `avg` of 1.10 and 2.20 is 1.65
/// rather than the 1.6500000000000001 of their doubles (DuckDB's result).
pub struct Avg<T> {
    /// `10^scale` for decimals, else 1.
    unit: f64,
    values: PhantomData<T>,
}

impl<T> Avg<T> {
    /// The average of unscaled decimals of scale `scale`.
    pub fn scaled(scale: i8) -> Self {
        Avg {
            unit: 10f64.powi(i32::from(scale)),
            values: PhantomData,
        }
    }
}

impl<T> Default for Avg<T> {
    fn default() -> Self {
        Self::scaled(0)
    }
}

impl<T> Default for Sum<T> {
    fn default() -> Self {
        Sum(PhantomData)
    }
}

macro_rules! sum_like {
    ($name:ident) => {
        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $name<T> {}
        impl<T> std::fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}<{}>", stringify!($name), std::any::type_name::<T>())
            }
        }
        impl<T: Summable> Monoid for $name<T> {
            type Agg = SumAgg<T>;
            #[inline]
            fn identity(&self) -> SumAgg<T> {
                sum_identity::<T>()
            }
            #[inline]
            fn combine(&self, a: &SumAgg<T>, b: &SumAgg<T>) -> SumAgg<T> {
                sum_combine::<T>(a, b)
            }
        }
    };
}
sum_like!(Sum);
sum_like!(Avg);

impl<T: Summable> Aggregate for Sum<T> {
    type Output = Option<T>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> SumAgg<T> {
        sum_lift::<T, C>(columns, row)
    }
    fn lower(&self, agg: &SumAgg<T>) -> Result<Option<T>, AggregateError> {
        if agg.1 == 0 {
            return Ok(None);
        }
        T::finish(agg.0)
            .map(Some)
            .map_err(|what| AggregateError::Overflow { name: "sum", what })
    }
}

impl<T: Summable> Aggregate for Avg<T> {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> SumAgg<T> {
        sum_lift::<T, C>(columns, row)
    }
    fn lower(&self, agg: &SumAgg<T>) -> Result<Option<f64>, AggregateError> {
        Ok((agg.1 > 0).then(|| T::to_f64(agg.0) / (agg.1 as f64 * self.unit)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_i128_round_trips_and_aligns_to_8() {
        for v in [
            0,
            1,
            -1,
            i128::from(i64::MIN) - 7,
            i128::MAX,
            i128::MIN,
            1 << 64,
        ] {
            assert_eq!(PackedI128::new(v).get(), v);
        }
        assert_eq!(std::mem::align_of::<SumAgg<i64>>(), 8);
        assert_eq!(std::mem::size_of::<SumAgg<i64>>(), 24);
    }

    #[test]
    fn wide_sums_carry_across_words_and_detect_decimal_overflow() {
        let max = DECIMAL_LIMIT - 1;
        let wide = |vs: &[i128]| vs.iter().fold(Wide::ZERO, |acc, v| acc.add(Wide::new(*v)));
        // Past i128 and back: exact.
        assert_eq!(wide(&[i128::MAX, 1, -1]).to_i128(), Some(i128::MAX));
        assert_eq!(
            wide(&[i128::MAX, i128::MAX, -i128::MAX]).to_i128(),
            Some(i128::MAX)
        );
        assert_eq!(wide(&[i128::MIN, -1]).to_i128(), None);
        assert_eq!(wide(&[-5, 3]).to_i128(), Some(-2));
        assert_eq!(<i128 as Summable>::finish(wide(&[max, max, -max])), Ok(max));
        assert!(<i128 as Summable>::finish(wide(&[max, 1])).is_err());
        assert!(<i128 as Summable>::finish(wide(&[-max, -1])).is_err());
        assert_eq!(wide(&[max, max]).to_f64(), 2e38);
        assert_eq!(wide(&[-7]).to_f64(), -7.0);
    }
}

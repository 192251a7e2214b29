//! `count`, `sum`, `avg`.

use std::marker::PhantomData;

use sliq_swag::Monoid;

use crate::exact::DoubleDouble;
use crate::{Aggregate, AggregateError, Columns, Scalar};

/// `count(*)` (`star`): the number of rows in the window; `count(x)`: the
/// number of rows whose `x` is not NULL.
#[derive(Clone, Copy, Debug, Default)]
pub struct Count {
    /// `count(*)`: every row counts.
    pub star: bool,
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
        (self.star || columns.is_valid(0, row)) as i64
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
    /// The sum as this type; `Err` with the exact value when it does not fit.
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
        i64::try_from(exact).map_err(|_| exact.to_string())
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
/// BIGINT result; floats sum in double-double precision (IEEE: any NaN
/// gives NaN, +∞ and −∞ give NaN). NULL when no input is non-NULL.
pub struct Sum<T>(PhantomData<T>);

/// `avg(x)` / `mean(x)`: the exact sum divided by the count, as DOUBLE.
pub struct Avg<T>(PhantomData<T>);

macro_rules! sum_like {
    ($name:ident) => {
        impl<T> Default for $name<T> {
            fn default() -> Self {
                $name(PhantomData)
            }
        }
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
            .map_err(|value| AggregateError::Overflow { name: "sum", value })
    }
}

impl<T: Summable> Aggregate for Avg<T> {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> SumAgg<T> {
        sum_lift::<T, C>(columns, row)
    }
    fn lower(&self, agg: &SumAgg<T>) -> Result<Option<f64>, AggregateError> {
        Ok((agg.1 > 0).then(|| T::to_f64(agg.0) / agg.1 as f64))
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
}

//! Functions over SQL's order: `min`/`max`, `argmin`/`argmax`,
//! `mincount`/`maxcount`, `first_value`/`last_value`, `m4`.
//!
//! Floats order with NaN above every number and `-0.0 = 0.0` (PostgreSQL,
//! DuckDB), so `max` of a window holding NaN is NaN. On ties the older row
//! wins (`argmax` returns the oldest row's `y`).

use std::cmp::Ordering;
use std::marker::PhantomData;

use sliq_swag::Monoid;

use super::merge;
use crate::{Aggregate, AggregateError, Columns, OutputSink, OutputValue, Scalar};

/// Whether `younger` replaces `older` as the extreme (strictly better).
#[inline]
fn beats<T: Scalar, const MAX: bool>(younger: &T, older: &T) -> bool {
    let want = if MAX {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    younger.sql_cmp(older) == want
}

macro_rules! marker_impls {
    ($name:ident<$($p:ident),*> $(, $c:ident)?) => {
        impl<$($p,)* $(const $c: bool)?> Clone for $name<$($p,)* $($c)?> {
            fn clone(&self) -> Self {
                $name(PhantomData)
            }
        }
        impl<$($p,)* $(const $c: bool)?> Default for $name<$($p,)* $($c)?> {
            fn default() -> Self {
                $name(PhantomData)
            }
        }
        impl<$($p,)* $(const $c: bool)?> std::fmt::Debug for $name<$($p,)* $($c)?> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($name))
            }
        }
    };
}

/// `min(x)` (`MAX = false`) and `max(x)` (`MAX = true`). NULL on a window
/// without non-NULL input.
pub struct Extreme<T, const MAX: bool>(PhantomData<fn() -> T>);
marker_impls!(Extreme<T>, MAX);

impl<T: Scalar, const MAX: bool> Monoid for Extreme<T, MAX> {
    type Agg = Option<T>;
    #[inline]
    fn identity(&self) -> Option<T> {
        None
    }
    #[inline]
    fn combine(&self, a: &Option<T>, b: &Option<T>) -> Option<T> {
        merge(a, b, |x, y| {
            if beats::<T, MAX>(y, x) {
                y.clone()
            } else {
                x.clone()
            }
        })
    }
    #[inline]
    fn combine_into(&self, acc: &mut Option<T>, younger: &Option<T>) {
        match (&*acc, younger) {
            (Some(x), Some(y)) if !beats::<T, MAX>(y, x) => {}
            (_, None) => {}
            _ => *acc = younger.clone(),
        }
    }
}

impl<T: Scalar, const MAX: bool> Aggregate for Extreme<T, MAX> {
    type Output = Option<T>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Option<T> {
        T::read(columns, 0, row)
    }
    fn lower(&self, agg: &Option<T>) -> Result<Option<T>, AggregateError> {
        Ok(agg.clone())
    }
}

/// `min(x)` / `max(x)` over DOUBLE: [`Extreme`]'s results in half the
/// space, compared as integers. A window stores one aggregate per row, and
/// `Option<f64>` takes 16 bytes where [`RankedF64`] takes 8, so a window of
/// floats spans half the cache lines.
#[derive(Clone, Copy, Debug, Default)]
pub struct FloatExtreme<const MAX: bool>;

/// An optional `f64` in 8 bytes, kept as its key in SQL's order, so that
/// comparing two takes an integer comparison rather than the two keys'
/// making (a `max` over a window makes three or four a row).
///
/// A value's key is its bits with those of a negative value flipped but
/// for the sign (the usual total-order key: `-0.0` is -1, `0.0` is 0, and
/// NaN, stored as `f64::NAN`, above +∞); the key is its own inverse. "No
/// value" is the key that never wins, `i64::MIN` for `max` and `i64::MAX`
/// for `min`: the keys of NaNs with every payload bit set (and, for
/// `i64::MIN`, the sign), which no stored value has.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RankedF64<const MAX: bool>(i64);

impl<const MAX: bool> RankedF64<MAX> {
    const NONE: Self = RankedF64(if MAX { i64::MIN } else { i64::MAX });

    /// `v`, with any NaN made `f64::NAN` (SQL does not tell NaNs apart).
    #[inline]
    fn some(v: f64) -> Self {
        let v = if v.is_nan() { f64::NAN } else { v };
        let ranked = RankedF64(total_order_key(v.to_bits() as i64));
        debug_assert_ne!(ranked, Self::NONE);
        ranked
    }

    #[inline]
    fn get(self) -> Option<f64> {
        (self != Self::NONE).then(|| f64::from_bits(total_order_key(self.0) as u64))
    }
}

/// A double's bits as an integer in the doubles' order, or such an integer
/// back as the bits: negative doubles order backwards as integers, so all
/// but the sign bit of those are flipped.
#[inline(always)]
fn total_order_key(bits: i64) -> i64 {
    bits ^ ((bits >> 63) as u64 >> 1) as i64
}

impl<const MAX: bool> std::fmt::Debug for RankedF64<MAX> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

impl<const MAX: bool> FloatExtreme<MAX> {
    /// The older aggregate unless the younger strictly beats it.
    ///
    /// Compares keys and selects rather than branching on the values:
    /// which of two values is larger is a coin toss on most data, and as
    /// branches they were mispredicted about twice per row of a `max` over
    /// a ROWS window. `-0.0` (key -1) and `0.0` (key 0) are equal in SQL,
    /// so neither beats the other.
    #[inline]
    fn pick(older: RankedF64<MAX>, younger: RankedF64<MAX>) -> RankedF64<MAX> {
        let (o, y) = (older.0, younger.0);
        let younger_wins = if MAX {
            (y > o) & ((y | o.wrapping_add(1)) != 0)
        } else {
            (y < o) & ((y.wrapping_add(1) | o) != 0)
        };
        std::hint::select_unpredictable(younger_wins, younger, older)
    }
}

impl<const MAX: bool> Monoid for FloatExtreme<MAX> {
    type Agg = RankedF64<MAX>;
    #[inline]
    fn identity(&self) -> RankedF64<MAX> {
        RankedF64::NONE
    }
    #[inline]
    fn combine(&self, a: &RankedF64<MAX>, b: &RankedF64<MAX>) -> RankedF64<MAX> {
        Self::pick(*a, *b)
    }
}

impl<const MAX: bool> Aggregate for FloatExtreme<MAX> {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> RankedF64<MAX> {
        f64::read(columns, 0, row).map_or(RankedF64::NONE, RankedF64::some)
    }
    fn lower(&self, agg: &RankedF64<MAX>) -> Result<Option<f64>, AggregateError> {
        Ok(agg.get())
    }
}

/// `lag(x [, offset [, default]])`: the `x` of the row `offset` rows before
/// the current one in its key (1 by default; NULLs are values), or
/// `default` (NULL unless given) when the key has no such row yet.
///
/// The engine plans it over `ROWS offset PRECEDING`, whatever the frame of
/// its `OVER` clause (SQL's `lag` ignores the frame): once that window is
/// full, its oldest row is the one wanted. The partial aggregate is the
/// oldest row's value and the number of rows.
#[derive(Clone, Debug)]
pub struct Lag<T> {
    offset: u64,
    default: Option<T>,
}

impl<T> Lag<T> {
    /// `lag` by `offset` rows, `default` before there are that many.
    pub fn new(offset: u64, default: Option<T>) -> Self {
        Lag { offset, default }
    }
}

impl<T: Scalar> Monoid for Lag<T> {
    /// The oldest row's value (`None`: no row) and the number of rows.
    type Agg = (Option<Option<T>>, u64);
    #[inline]
    fn identity(&self) -> Self::Agg {
        (None, 0)
    }
    #[inline]
    fn combine(&self, a: &Self::Agg, b: &Self::Agg) -> Self::Agg {
        let oldest = if a.0.is_some() { &a.0 } else { &b.0 };
        (oldest.clone(), a.1 + b.1)
    }
}

impl<T: Scalar> Aggregate for Lag<T> {
    type Output = Option<T>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Self::Agg {
        (Some(T::read(columns, 0, row)), 1)
    }
    fn lower(&self, agg: &Self::Agg) -> Result<Option<T>, AggregateError> {
        Ok(if agg.1 > self.offset {
            agg.0.clone().flatten()
        } else {
            self.default.clone()
        })
    }
}

/// `argmin(x, y)` / `argmax(x, y)`: the `y` of the row with the smallest /
/// largest `x` (the oldest such row on ties). Rows whose `x` is NULL are
/// skipped; a NULL `y` is a valid answer, unless the aggregate
/// [skips NULL values](Self::skipping_null_values) as DuckDB's and
/// ClickHouse's `arg_max` do.
pub struct ArgExtreme<X, Y, const MAX: bool> {
    skip_null_values: bool,
    types: PhantomData<fn() -> (X, Y)>,
}

impl<X, Y, const MAX: bool> ArgExtreme<X, Y, MAX> {
    /// The aggregate that also skips the rows whose `y` is NULL, so that it
    /// is NULL only when no row has both.
    pub fn skipping_null_values() -> Self {
        ArgExtreme {
            skip_null_values: true,
            types: PhantomData,
        }
    }
}

impl<X, Y, const MAX: bool> Default for ArgExtreme<X, Y, MAX> {
    fn default() -> Self {
        ArgExtreme {
            skip_null_values: false,
            types: PhantomData,
        }
    }
}

impl<X, Y, const MAX: bool> Clone for ArgExtreme<X, Y, MAX> {
    fn clone(&self) -> Self {
        ArgExtreme {
            skip_null_values: self.skip_null_values,
            types: PhantomData,
        }
    }
}

impl<X, Y, const MAX: bool> std::fmt::Debug for ArgExtreme<X, Y, MAX> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgExtreme")
            .field("max", &MAX)
            .field("skip_null_values", &self.skip_null_values)
            .finish()
    }
}

impl<X: Scalar, Y: Scalar, const MAX: bool> Monoid for ArgExtreme<X, Y, MAX> {
    type Agg = Option<(X, Option<Y>)>;
    #[inline]
    fn identity(&self) -> Self::Agg {
        None
    }
    #[inline]
    fn combine(&self, a: &Self::Agg, b: &Self::Agg) -> Self::Agg {
        merge(a, b, |older, younger| {
            if beats::<X, MAX>(&younger.0, &older.0) {
                younger.clone()
            } else {
                older.clone()
            }
        })
    }
}

impl<X: Scalar, Y: Scalar, const MAX: bool> Aggregate for ArgExtreme<X, Y, MAX> {
    type Output = Option<Y>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Self::Agg {
        let x = X::read(columns, 0, row)?;
        let y = Y::read(columns, 1, row);
        if self.skip_null_values && y.is_none() {
            return None;
        }
        Some((x, y))
    }
    fn lower(&self, agg: &Self::Agg) -> Result<Option<Y>, AggregateError> {
        Ok(agg.as_ref().and_then(|(_, y)| y.clone()))
    }
}

/// `mincount(x)` / `maxcount(x)`: how many rows hold the smallest / largest
/// `x`; 0 on a window without non-NULL input.
pub struct ExtremeCount<T, const MAX: bool>(PhantomData<fn() -> T>);
marker_impls!(ExtremeCount<T>, MAX);

impl<T: Scalar, const MAX: bool> Monoid for ExtremeCount<T, MAX> {
    type Agg = Option<(T, i64)>;
    #[inline]
    fn identity(&self) -> Self::Agg {
        None
    }
    #[inline]
    fn combine(&self, a: &Self::Agg, b: &Self::Agg) -> Self::Agg {
        merge(a, b, |(xa, ca), (xb, cb)| match xb.sql_cmp(xa) {
            Ordering::Equal => (xa.clone(), ca + cb),
            _ if beats::<T, MAX>(xb, xa) => (xb.clone(), *cb),
            _ => (xa.clone(), *ca),
        })
    }
}

impl<T: Scalar, const MAX: bool> Aggregate for ExtremeCount<T, MAX> {
    type Output = i64;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Self::Agg {
        T::read(columns, 0, row).map(|x| (x, 1))
    }
    fn lower(&self, agg: &Self::Agg) -> Result<i64, AggregateError> {
        Ok(agg.as_ref().map_or(0, |(_, c)| *c))
    }
}

/// `first_value(x)` (`FIRST = true`) and `last_value(x)`: the oldest /
/// youngest row's `x`. NULLs count as values unless `ignore_nulls`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstLast<T, const FIRST: bool> {
    /// `IGNORE NULLS`: skip rows whose `x` is NULL.
    pub ignore_nulls: bool,
    _t: PhantomData<fn() -> T>,
}

impl<T, const FIRST: bool> FirstLast<T, FIRST> {
    /// `first_value`/`last_value`, `RESPECT NULLS` unless `ignore_nulls`.
    pub fn new(ignore_nulls: bool) -> Self {
        FirstLast {
            ignore_nulls,
            _t: PhantomData,
        }
    }
}

impl<T: Scalar, const FIRST: bool> Monoid for FirstLast<T, FIRST> {
    /// `None`: no row yet; `Some(None)`: a NULL row.
    type Agg = Option<Option<T>>;
    #[inline]
    fn identity(&self) -> Self::Agg {
        None
    }
    #[inline]
    fn combine(&self, a: &Self::Agg, b: &Self::Agg) -> Self::Agg {
        let (keep, other) = if FIRST { (a, b) } else { (b, a) };
        if keep.is_some() {
            keep.clone()
        } else {
            other.clone()
        }
    }
}

impl<T: Scalar, const FIRST: bool> Aggregate for FirstLast<T, FIRST> {
    type Output = Option<T>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Self::Agg {
        match T::read(columns, 0, row) {
            Some(v) => Some(Some(v)),
            None if self.ignore_nulls => None,
            None => Some(None),
        }
    }
    fn lower(&self, agg: &Self::Agg) -> Result<Option<T>, AggregateError> {
        Ok(agg.clone().flatten())
    }
}

/// The four values of the M4 visualization aggregate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct M4State<T> {
    /// Smallest value.
    pub min: T,
    /// Largest value.
    pub max: T,
    /// Oldest value.
    pub first: T,
    /// Youngest value.
    pub last: T,
}

/// `m4(x)`: `{min, max, first, last}` of the non-NULL `x` in the window, as
/// one struct (NULL when there is none).
pub struct M4<T>(PhantomData<fn() -> T>);
marker_impls!(M4<T>);

/// The result of [`M4`].
#[derive(Clone, Debug, PartialEq)]
pub struct M4Output<T>(pub Option<M4State<T>>);

impl<T: Scalar> OutputValue for M4Output<T> {
    fn write<S: OutputSink>(&self, sink: &mut S) {
        match &self.0 {
            Some(m) => {
                sink.push_struct(4, true);
                for v in [&m.min, &m.max, &m.first, &m.last] {
                    v.write(sink);
                }
            }
            None => sink.push_struct(4, false),
        }
    }
}

impl<T: Scalar> Monoid for M4<T> {
    type Agg = Option<M4State<T>>;
    #[inline]
    fn identity(&self) -> Self::Agg {
        None
    }
    #[inline]
    fn combine(&self, a: &Self::Agg, b: &Self::Agg) -> Self::Agg {
        merge(a, b, |x, y| M4State {
            min: if beats::<T, false>(&y.min, &x.min) {
                y.min.clone()
            } else {
                x.min.clone()
            },
            max: if beats::<T, true>(&y.max, &x.max) {
                y.max.clone()
            } else {
                x.max.clone()
            },
            first: x.first.clone(),
            last: y.last.clone(),
        })
    }
}

impl<T: Scalar> Aggregate for M4<T> {
    type Output = M4Output<T>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Self::Agg {
        T::read(columns, 0, row).map(|v| M4State {
            min: v.clone(),
            max: v.clone(),
            first: v.clone(),
            last: v,
        })
    }
    fn lower(&self, agg: &Self::Agg) -> Result<M4Output<T>, AggregateError> {
        Ok(M4Output(agg.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_input_float_has_the_no_value_key() {
        // Even NaNs carrying exactly those keys' bits are stored as values.
        for key in [i64::MIN, i64::MAX] {
            let sneaky = f64::from_bits(total_order_key(key) as u64);
            assert!(sneaky.is_nan());
            let (max, min) = (
                RankedF64::<true>::some(sneaky),
                RankedF64::<false>::some(sneaky),
            );
            assert_ne!(max, RankedF64::NONE);
            assert_ne!(min, RankedF64::NONE);
            assert!(max.get().is_some_and(f64::is_nan));
        }
        assert_eq!(RankedF64::<true>::NONE.get(), None);
        assert_eq!(RankedF64::<false>::NONE.get(), None);
    }

    #[test]
    fn keys_order_as_the_doubles_and_give_them_back() {
        let values = [
            f64::NEG_INFINITY,
            -2.5,
            -f64::MIN_POSITIVE / 2.0,
            -0.0,
            0.0,
            1e-300,
            7.0,
            f64::INFINITY,
            f64::NAN,
        ];
        let keys: Vec<_> = values.iter().map(|&v| RankedF64::<true>::some(v)).collect();
        assert!(keys.windows(2).all(|k| k[0].0 < k[1].0));
        for (v, k) in values.iter().zip(&keys) {
            assert_eq!(k.get().map(f64::to_bits), Some(v.to_bits()));
        }
    }

    #[test]
    fn float_extreme_keeps_the_older_on_ties_and_ranks_nan_highest() {
        let max = FloatExtreme::<true>;
        let min = FloatExtreme::<false>;
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        for (older, younger) in [(-0.0, 0.0), (0.0, -0.0)] {
            let (o, y) = (RankedF64::some(older), RankedF64::some(younger));
            assert_eq!(bits(max.combine(&o, &y).get()), bits(Some(older)));
            let (o, y) = (RankedF64::some(older), RankedF64::some(younger));
            assert_eq!(bits(min.combine(&o, &y).get()), bits(Some(older)));
        }
        let (nan, big) = (RankedF64::some(f64::NAN), RankedF64::some(f64::INFINITY));
        assert!(max.combine(&big, &nan).get().is_some_and(f64::is_nan));
        assert_eq!(max.combine(&max.identity(), &big), big);
        assert_eq!(max.combine(&big, &max.identity()), big);
        let (nan, big) = (RankedF64::some(f64::NAN), RankedF64::some(f64::INFINITY));
        assert_eq!(min.combine(&nan, &big).get(), Some(f64::INFINITY));
        assert_eq!(
            min.combine(&min.identity(), &nan).get().map(f64::is_nan),
            Some(true)
        );
    }

    /// Floats with the edge cases often: zeros of both signs, infinities,
    /// NaNs (of any payload and sign), subnormals; or no value.
    fn maybe_float() -> impl proptest::strategy::Strategy<Value = Option<f64>> {
        use proptest::prelude::*;
        prop_oneof![
            1 => Just(None),
            4 => prop_oneof![
                Just(0.0),
                Just(-0.0),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(f64::MIN_POSITIVE / 2.0),
                Just(-f64::MIN_POSITIVE / 2.0),
                any::<u64>().prop_map(|b| f64::from_bits(b | 0x7FF0_0000_0000_0001)),
                -3.0..3.0f64,
                any::<f64>(),
            ]
            .prop_map(Some),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// The branch-free pick agrees bit for bit with `min` / `max` over
        /// `Option<f64>` in SQL's order (`Extreme`), the general version.
        #[test]
        fn float_extreme_picks_as_extreme_does(older in maybe_float(), younger in maybe_float()) {
            fn as_stored<const MAX: bool>(v: Option<f64>) -> RankedF64<MAX> {
                v.map_or(RankedF64::NONE, RankedF64::some)
            }
            let bits = |v: Option<f64>| v.map(|x| if x.is_nan() { f64::NAN } else { x }.to_bits());
            let expected = Extreme::<f64, true>::default().combine(&older, &younger);
            let got = FloatExtreme::<true>.combine(&as_stored(older), &as_stored(younger));
            proptest::prop_assert_eq!(got.get().map(f64::to_bits), bits(expected));
            let expected = Extreme::<f64, false>::default().combine(&older, &younger);
            let got = FloatExtreme::<false>.combine(&as_stored(older), &as_stored(younger));
            proptest::prop_assert_eq!(got.get().map(f64::to_bits), bits(expected));
        }
    }
}

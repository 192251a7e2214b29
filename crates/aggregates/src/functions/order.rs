//! Functions over SQL's order: `min`/`max`, `argmin`/`argmax`,
//! `mincount`/`maxcount`, `first_value`/`last_value`, `m4`.
//!
//! Floats order with NaN above every number and `-0.0 = 0.0` (PostgreSQL,
//! DuckDB), so `max` of a window holding NaN is NaN. On ties the older row
//! wins (`argmax` returns the oldest row's `y`).

use std::cmp::Ordering;
use std::marker::PhantomData;

use sliq_swag::Monoid;

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

/// Combines two optional aggregates: `both` when each holds a value,
/// otherwise whichever does (the empty one is the identity).
#[inline]
fn merge<T: Clone>(a: &Option<T>, b: &Option<T>, both: impl FnOnce(&T, &T) -> T) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(both(x, y)),
        (Some(_), None) => a.clone(),
        (None, _) => b.clone(),
    }
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

/// `argmin(x, y)` / `argmax(x, y)`: the `y` of the row with the smallest /
/// largest `x` (the oldest such row on ties). Rows whose `x` is NULL are
/// skipped; a NULL `y` is a valid answer.
pub struct ArgExtreme<X, Y, const MAX: bool>(PhantomData<fn() -> (X, Y)>);
marker_impls!(ArgExtreme<X, Y>, MAX);

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
        X::read(columns, 0, row).map(|x| (x, Y::read(columns, 1, row)))
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

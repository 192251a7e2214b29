//! `product`, `bit_and`, `bit_or`, `bit_xor`: one associative operation
//! over the non-NULL values, NULL when there are none.

use sliq_swag::Monoid;

use super::merge;
use crate::{Aggregate, AggregateError, Columns};

/// `product(x numeric)`: the product of the values as a DOUBLE, as in
/// DuckDB. Kept as a product of the window's values, never divided out, so
/// a zero or an infinity leaves the window when its row does.
#[derive(Clone, Copy, Debug, Default)]
pub struct Product;

impl Monoid for Product {
    type Agg = Option<f64>;
    #[inline]
    fn identity(&self) -> Option<f64> {
        None
    }
    #[inline]
    fn combine(&self, a: &Option<f64>, b: &Option<f64>) -> Option<f64> {
        merge(a, b, |x, y| x * y)
    }
}

impl Aggregate for Product {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Option<f64> {
        columns.f64(0, row)
    }
    fn lower(&self, agg: &Option<f64>) -> Result<Option<f64>, AggregateError> {
        Ok(*agg)
    }
}

/// `bit_and(x)`, `bit_or(x)`, `bit_xor(x)` of BIGINT values, for `OP` `'&'`,
/// `'|'` and `'^'`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bitwise<const OP: char>;

impl<const OP: char> Monoid for Bitwise<OP> {
    type Agg = Option<i64>;
    #[inline]
    fn identity(&self) -> Option<i64> {
        None
    }
    #[inline]
    fn combine(&self, a: &Option<i64>, b: &Option<i64>) -> Option<i64> {
        merge(a, b, |x, y| match OP {
            '&' => x & y,
            '|' => x | y,
            _ => x ^ y,
        })
    }
}

impl<const OP: char> Aggregate for Bitwise<OP> {
    type Output = Option<i64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Option<i64> {
        columns.i64(0, row)
    }
    fn lower(&self, agg: &Option<i64>) -> Result<Option<i64>, AggregateError> {
        Ok(*agg)
    }
}

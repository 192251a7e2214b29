//! Ready monoids for examples, tests and benchmarks.
//!
//! sliq's SQL aggregate functions live in `sliq-aggregates`; these are the
//! small algebraic building blocks: [`Sum`], [`Max`], [`Min`], the
//! non-commutative [`Concat`] and [`Affine`], and [`FnMonoid`] to build one
//! from two closures.

use std::fmt;
use std::marker::PhantomData;

use crate::Monoid;

/// Addition. Integers wrap on overflow (so the monoid laws hold for every
/// input); floats add in IEEE arithmetic (associative only up to rounding).
pub struct Sum<T>(PhantomData<T>);

/// Maximum; identity is the type's smallest value.
pub struct Max<T>(PhantomData<T>);

/// Minimum; identity is the type's largest value.
pub struct Min<T>(PhantomData<T>);

macro_rules! phantom_monoid_impls {
    ($($name:ident),*) => {$(
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
        impl<T> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}<{}>", stringify!($name), std::any::type_name::<T>())
            }
        }
    )*};
}
phantom_monoid_impls!(Sum, Max, Min);

macro_rules! integer_monoids {
    ($($t:ty),*) => {$(
        impl Monoid for Sum<$t> {
            type Agg = $t;
            #[inline]
            fn identity(&self) -> $t {
                0
            }
            #[inline]
            fn combine(&self, a: &$t, b: &$t) -> $t {
                a.wrapping_add(*b)
            }
            #[inline]
            fn combine_into(&self, acc: &mut $t, younger: &$t) {
                *acc = acc.wrapping_add(*younger);
            }
        }
        impl Monoid for Max<$t> {
            type Agg = $t;
            #[inline]
            fn identity(&self) -> $t {
                <$t>::MIN
            }
            #[inline]
            fn combine(&self, a: &$t, b: &$t) -> $t {
                *a.max(b)
            }
        }
        impl Monoid for Min<$t> {
            type Agg = $t;
            #[inline]
            fn identity(&self) -> $t {
                <$t>::MAX
            }
            #[inline]
            fn combine(&self, a: &$t, b: &$t) -> $t {
                *a.min(b)
            }
        }
    )*};
}
integer_monoids!(
    i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, usize, isize
);

macro_rules! float_sum {
    ($($t:ty),*) => {$(
        impl Monoid for Sum<$t> {
            type Agg = $t;
            #[inline]
            fn identity(&self) -> $t {
                0.0
            }
            #[inline]
            fn combine(&self, a: &$t, b: &$t) -> $t {
                a + b
            }
        }
    )*};
}
float_sum!(f32, f64);

/// String concatenation: the simplest non-commutative monoid, used to test
/// that every algorithm keeps window order.
#[derive(Clone, Copy, Debug, Default)]
pub struct Concat;

impl Monoid for Concat {
    type Agg = String;
    fn identity(&self) -> String {
        String::new()
    }
    fn combine(&self, a: &String, b: &String) -> String {
        let mut s = String::with_capacity(a.len() + b.len());
        s.push_str(a);
        s.push_str(b);
        s
    }
    fn combine_into(&self, acc: &mut String, younger: &String) {
        acc.push_str(younger);
    }
}

/// Composition of affine maps `x ↦ a·x + b` over wrapping `u64` arithmetic:
/// exact, non-commutative, and cheap. `combine(f, g)` applies `f` first, then
/// `g` (the older map runs first).
#[derive(Clone, Copy, Debug, Default)]
pub struct Affine;

/// An affine map `x ↦ a·x + b` (wrapping), the aggregate of [`Affine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AffineMap {
    /// Slope.
    pub a: u64,
    /// Offset.
    pub b: u64,
}

impl Monoid for Affine {
    type Agg = AffineMap;
    fn identity(&self) -> AffineMap {
        AffineMap { a: 1, b: 0 }
    }
    fn combine(&self, f: &AffineMap, g: &AffineMap) -> AffineMap {
        // g(f(x)) = g.a·(f.a·x + f.b) + g.b
        AffineMap {
            a: g.a.wrapping_mul(f.a),
            b: g.a.wrapping_mul(f.b).wrapping_add(g.b),
        }
    }
}

/// A monoid from an identity value and a combining closure.
///
/// ```
/// use sliq_swag::{FifoAggregator, FnMonoid, TwoStacksLite};
///
/// // Keep the last two characters seen: not commutative.
/// let last_two = FnMonoid::new(String::new(), |a: &String, b: &String| {
///     let s = format!("{a}{b}");
///     s[s.len().saturating_sub(2)..].to_string()
/// });
/// let mut w = TwoStacksLite::new(last_two);
/// for c in ["a", "b", "c"] {
///     w.insert(c.to_string());
/// }
/// assert_eq!(w.query(), "bc");
/// ```
#[derive(Clone)]
pub struct FnMonoid<A, F> {
    identity: A,
    combine: F,
}

impl<A, F> FnMonoid<A, F>
where
    A: Clone,
    F: Fn(&A, &A) -> A,
{
    /// A monoid with identity `identity` and operation `combine`; the caller
    /// vouches for associativity and identity.
    pub fn new(identity: A, combine: F) -> Self {
        FnMonoid { identity, combine }
    }
}

impl<A, F> Monoid for FnMonoid<A, F>
where
    A: Clone,
    F: Fn(&A, &A) -> A,
{
    type Agg = A;
    fn identity(&self) -> A {
        self.identity.clone()
    }
    fn combine(&self, a: &A, b: &A) -> A {
        (self.combine)(a, b)
    }
}

impl<A: fmt::Debug, F> fmt::Debug for FnMonoid<A, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnMonoid")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_composes_older_first() {
        let double = AffineMap { a: 2, b: 0 };
        let inc = AffineMap { a: 1, b: 1 };
        // (x * 2) + 1 vs (x + 1) * 2
        assert_eq!(Affine.combine(&double, &inc), AffineMap { a: 2, b: 1 });
        assert_eq!(Affine.combine(&inc, &double), AffineMap { a: 2, b: 2 });
    }

    #[test]
    fn integer_sum_wraps_instead_of_panicking() {
        assert_eq!(Sum::<u8>::default().combine(&250, &10), 4);
    }

    #[test]
    fn max_min_identities() {
        assert_eq!(Max::<i32>::default().combine(&i32::MIN, &-5), -5);
        assert_eq!(Min::<u16>::default().combine(&u16::MAX, &7), 7);
    }
}

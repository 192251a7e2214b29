//! Double-double ("compensated") float sums: about 106 bits of precision, so
//! a window's sum does not depend on how DABA Lite associated it, and is at
//! least as exact as a batch engine's left-to-right `f64` sum.

/// A float sum kept as an unevaluated pair `hi + lo`, with `|lo| ≤ ulp(hi)/2`
/// after `+` (after [`plus`](Self::plus), `|lo|` may be a little larger).
/// Non-finite sums (±∞, NaN) keep IEEE semantics in `hi` with `lo = 0` after
/// `+`; [`plus`](Self::plus) leaves them NaN.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DoubleDouble {
    hi: f64,
    lo: f64,
}

impl DoubleDouble {
    /// The empty sum.
    pub const ZERO: DoubleDouble = DoubleDouble { hi: 0.0, lo: 0.0 };

    /// The exact value `x`.
    pub fn from_f64(x: f64) -> Self {
        DoubleDouble { hi: x, lo: 0.0 }
    }

    /// The sum rounded to the nearest `f64`.
    pub fn value(self) -> f64 {
        self.hi + self.lo
    }

    /// `self − other`, rounded to `f64` once: the difference of two close
    /// values keeps its digits (their high parts subtract exactly when
    /// within a factor of two of each other, Sterbenz's lemma).
    #[inline]
    pub fn minus(self, other: DoubleDouble) -> f64 {
        (self.hi - other.hi) + (self.lo - other.lo)
    }

    /// `self + x` with Knuth's two-sum, the rounding error carried into
    /// `lo` without renormalizing, as Neumaier's compensated sum does: five
    /// dependent steps where [`Add`](std::ops::Add) takes eight, and no
    /// branch (Dekker's three-step fast two-sum needs the larger operand
    /// first, and choosing it by a branch ran the variance at half speed).
    /// `lo` may then exceed half an ulp of `hi`; [`value`](Self::value)
    /// still rounds `hi + lo` once.
    #[inline]
    pub fn plus(self, x: f64) -> DoubleDouble {
        let (s, err) = two_sum(self.hi, x);
        DoubleDouble {
            hi: s,
            lo: self.lo + err,
        }
    }
}

/// Knuth's two-sum: `a + b` rounded, and the exact error of that rounding
/// (for finite values), whatever their magnitudes.
#[inline]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

impl std::ops::Add for DoubleDouble {
    type Output = DoubleDouble;

    /// `self + other` with Knuth's two-sum on the high parts.
    #[inline]
    fn add(self, other: DoubleDouble) -> DoubleDouble {
        let (s, err) = two_sum(self.hi, other.hi);
        if !s.is_finite() {
            return DoubleDouble { hi: s, lo: 0.0 };
        }
        let lo = err + self.lo + other.lo;
        // Renormalize (fast two-sum, |s| ≥ |lo| after the step above).
        let hi = s + lo;
        DoubleDouble {
            hi,
            lo: lo - (hi - s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancellation_is_exact() {
        let big = DoubleDouble::from_f64(1e17);
        let sum = big + DoubleDouble::from_f64(1.0) + DoubleDouble::from_f64(-1e17);
        assert_eq!(sum.value(), 1.0);
        // A plain f64 sum loses the 1.0.
        assert_eq!(1e17 + 1.0 - 1e17, 0.0);
    }

    #[test]
    fn the_difference_of_close_sums_keeps_its_digits() {
        let a = DoubleDouble::from_f64(1e6).plus(1e-9);
        let b = DoubleDouble::from_f64(1e6);
        assert_eq!(a.minus(b), 1e-9);
        assert_eq!(b.minus(a), -1e-9);
        // A plain f64 sum keeps 1e-9 to about 7 digits.
        assert_ne!((1e6 + 1e-9) - 1e6, 1e-9);
    }

    #[test]
    fn non_finite_values_follow_ieee() {
        let inf = DoubleDouble::from_f64(f64::INFINITY);
        assert_eq!((inf + DoubleDouble::from_f64(1.0)).value(), f64::INFINITY);
        assert!(
            (inf + DoubleDouble::from_f64(f64::NEG_INFINITY))
                .value()
                .is_nan()
        );
        assert!(
            (DoubleDouble::from_f64(f64::NAN) + DoubleDouble::ZERO)
                .value()
                .is_nan()
        );
    }

    #[test]
    fn association_order_does_not_matter_for_ordinary_data() {
        let xs: Vec<f64> = (0..1000)
            .map(|i| ((i * 7919) % 1013) as f64 * 0.1 - 37.3)
            .collect();
        let left = xs.iter().fold(DoubleDouble::ZERO, |acc, x| {
            acc + DoubleDouble::from_f64(*x)
        });
        let right = xs.iter().rev().fold(DoubleDouble::ZERO, |acc, x| {
            DoubleDouble::from_f64(*x) + acc
        });
        assert_eq!(left.value(), right.value());
    }
}

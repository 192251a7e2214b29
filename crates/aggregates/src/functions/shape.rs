//! `skewness`, `kurtosis` and `kurtosis_pop`: the shape of a distribution,
//! from its central moments up to the fourth.

use sliq_swag::Monoid;

use super::stats::merged_mean;
use crate::exact::DoubleDouble;
use crate::{Aggregate, AggregateError, Columns};

/// Count, mean and the sums of second, third and fourth powers of the
/// deviations from the mean, merged with Pébay's formulas (the third and
/// fourth-order terms of Chan et al.'s): never by subtracting values out.
/// The mean is kept in double-double precision, as [`super::Moments`]'s is.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HigherMoments {
    /// Number of values.
    pub n: i64,
    /// Their mean.
    pub mean: DoubleDouble,
    /// Σ (x − mean)².
    pub m2: f64,
    /// Σ (x − mean)³.
    pub m3: f64,
    /// Σ (x − mean)⁴.
    pub m4: f64,
}

impl HigherMoments {
    /// One value `x`: no spread, or NaN for it when `x` is not finite, so
    /// that any NaN or infinite input makes the statistics NaN.
    #[inline]
    fn of(x: f64) -> HigherMoments {
        let spread = if x.is_finite() { 0.0 } else { f64::NAN };
        HigherMoments {
            n: 1,
            mean: DoubleDouble::from_f64(x),
            m2: spread,
            m3: spread,
            m4: spread,
        }
    }

    fn merge(a: &HigherMoments, b: &HigherMoments) -> HigherMoments {
        if a.n == 0 {
            return *b;
        }
        if b.n == 0 {
            return *a;
        }
        let n = a.n + b.n;
        let (na, nb, nf) = (a.n as f64, b.n as f64, n as f64);
        let (d, mean) = merged_mean(a.mean, b.mean, nb / nf);
        let (d2, nab) = (d * d, na * nb);
        HigherMoments {
            n,
            mean,
            m2: a.m2 + b.m2 + d2 * nab / nf,
            m3: a.m3
                + b.m3
                + d2 * d * nab * (na - nb) / (nf * nf)
                + 3.0 * d * (na * b.m2 - nb * a.m2) / nf,
            m4: a.m4
                + b.m4
                + d2 * d2 * nab * (na * na - nab + nb * nb) / (nf * nf * nf)
                + 6.0 * d2 * (na * na * b.m2 + nb * nb * a.m2) / (nf * nf)
                + 4.0 * d * (na * b.m3 - nb * a.m3) / nf,
        }
    }
}

/// Which statistic a [`Shape`] lowers to, as DuckDB defines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeKind {
    /// `skewness`: the sample skewness `√(n(n−1)) / (n−2) · g₁`, where
    /// `g₁ = (m₃/n) / (m₂/n)^{3/2}`; NULL below 3 values.
    Skewness,
    /// `kurtosis`: the sample excess kurtosis
    /// `(n−1)((n+1)g₂ − 3(n−1)) / ((n−2)(n−3))`, where `g₂ = n·m₄ / m₂²`;
    /// NULL below 4 values.
    Kurtosis,
    /// `kurtosis_pop`: the population excess kurtosis `g₂ − 3`.
    KurtosisPop,
}

/// `skewness`, `kurtosis`, `kurtosis_pop`: NULLs skipped; NULL on too few
/// values and where the values do not vary (as in DuckDB); any NaN or
/// infinite input gives NaN.
#[derive(Clone, Copy, Debug)]
pub struct Shape(pub ShapeKind);

impl Monoid for Shape {
    type Agg = HigherMoments;
    #[inline]
    fn identity(&self) -> HigherMoments {
        HigherMoments::default()
    }
    #[inline]
    fn combine(&self, a: &HigherMoments, b: &HigherMoments) -> HigherMoments {
        HigherMoments::merge(a, b)
    }
}

impl Aggregate for Shape {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> HigherMoments {
        columns
            .f64(0, row)
            .map_or_else(HigherMoments::default, HigherMoments::of)
    }
    fn lower(&self, m: &HigherMoments) -> Result<Option<f64>, AggregateError> {
        let n = m.n as f64;
        let least = match self.0 {
            ShapeKind::Skewness => 3,
            ShapeKind::Kurtosis => 4,
            ShapeKind::KurtosisPop => 1,
        };
        if m.n < least {
            return Ok(None);
        }
        if m.m2.is_nan() {
            return Ok(Some(f64::NAN));
        }
        if m.m2 <= 0.0 {
            return Ok(None);
        }
        let g2 = n * m.m4 / (m.m2 * m.m2);
        Ok(Some(match self.0 {
            ShapeKind::Skewness => {
                let g1 = n.sqrt() * m.m3 / m.m2.powf(1.5);
                (n * (n - 1.0)).sqrt() / (n - 2.0) * g1
            }
            ShapeKind::Kurtosis => {
                (n - 1.0) * ((n + 1.0) * g2 - 3.0 * (n - 1.0)) / ((n - 2.0) * (n - 3.0))
            }
            ShapeKind::KurtosisPop => g2 - 3.0,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shape statistics do not move with the data's offset: around 1e9,
    /// merged in any grouping, they are those of 1, 2, 4, 8 (DuckDB's
    /// figures for them).
    #[test]
    fn shape_survives_a_large_offset_and_any_grouping() {
        for offset in [0.0, 1e9] {
            let [a, b, c, d] = [1.0, 2.0, 4.0, 8.0].map(|x| HigherMoments::of(x + offset));
            let merge = HigherMoments::merge;
            for m in [
                merge(&merge(&a, &b), &merge(&c, &d)),
                merge(&a, &merge(&b, &merge(&c, &d))),
                merge(&merge(&merge(&a, &b), &c), &d),
            ] {
                let of = |kind| Shape(kind).lower(&m).unwrap().unwrap();
                let close = |x: f64, want: f64| (x - want).abs() < 1e-12;
                assert!(close(of(ShapeKind::Skewness), 1.1376243669576882), "{m:?}");
                assert!(close(of(ShapeKind::Kurtosis), 0.7576559546313791), "{m:?}");
                assert!(
                    close(of(ShapeKind::KurtosisPop), -1.0989792060491494),
                    "{m:?}"
                );
            }
        }
        // Too few values, or none that vary: NULL.
        let twice = HigherMoments::merge(&HigherMoments::of(3.0), &HigherMoments::of(3.0));
        assert_eq!(Shape(ShapeKind::KurtosisPop).lower(&twice).unwrap(), None);
        assert_eq!(Shape(ShapeKind::Skewness).lower(&twice).unwrap(), None);
    }
}

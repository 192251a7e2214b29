//! `geomean`, the variance family and `relvar`.

use sliq_swag::Monoid;

use crate::exact::DoubleDouble;
use crate::{Aggregate, AggregateError, Columns};

/// `geomean(x)`: `exp(avg(ln x))`. A zero input makes it 0, a negative one
/// NaN (the logarithm's IEEE result); NULLs are skipped.
#[derive(Clone, Copy, Debug, Default)]
pub struct Geomean;

impl Monoid for Geomean {
    /// Exact sum of logarithms and the count.
    type Agg = (DoubleDouble, i64);
    #[inline]
    fn identity(&self) -> Self::Agg {
        (DoubleDouble::ZERO, 0)
    }
    #[inline]
    fn combine(&self, a: &Self::Agg, b: &Self::Agg) -> Self::Agg {
        (a.0 + b.0, a.1 + b.1)
    }
}

impl Aggregate for Geomean {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Self::Agg {
        match columns.f64(0, row) {
            Some(x) => (DoubleDouble::from_f64(x.ln()), 1),
            None => self.identity(),
        }
    }
    fn lower(&self, agg: &Self::Agg) -> Result<Option<f64>, AggregateError> {
        Ok((agg.1 > 0).then(|| (agg.0.value() / agg.1 as f64).exp()))
    }
}

/// Count, mean and sum of squared deviations of a set of values, merged with
/// Chan et al.'s parallel formula — never by subtracting values out.
///
/// The mean is kept in double-double precision. Chan's formula adds
/// `δ² · nₐn_b / n` for `δ`, the difference of the two means; over values
/// far from zero compared with their spread (`1e6 + N(0, 1)`, say) an `f64`
/// mean rounds `δ` by about `ulp(mean) / σ` of itself, and the variance
/// by twice that (about 1e-10 relative, which a batch engine's Welford loop
/// also reaches). With the mean's low half `δ` is exact to `f64` precision.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    /// Number of values.
    pub n: i64,
    /// Their mean.
    pub mean: DoubleDouble,
    /// Sum of squared deviations from the mean.
    pub m2: f64,
}

/// `b − a` for the means of two sets, rounded to `f64`, and the mean of
/// the two merged, `b_share` being the second set's share of the values.
#[inline]
pub(super) fn merged_mean(a: DoubleDouble, b: DoubleDouble, b_share: f64) -> (f64, DoubleDouble) {
    let delta = b.minus(a);
    (delta, a.plus(delta * b_share))
}

impl Moments {
    /// One value `x`: no spread, or NaN for one when `x` is not finite, so
    /// that any NaN or infinite input makes the statistics NaN.
    #[inline]
    fn of(x: f64) -> Moments {
        Moments {
            n: 1,
            mean: DoubleDouble::from_f64(x),
            m2: if x.is_finite() { 0.0 } else { f64::NAN },
        }
    }

    fn merge(a: &Moments, b: &Moments) -> Moments {
        if a.n == 0 {
            return *b;
        }
        if b.n == 0 {
            return *a;
        }
        let n = a.n + b.n;
        let (na, nb, nf) = (a.n as f64, b.n as f64, n as f64);
        let (delta, mean) = merged_mean(a.mean, b.mean, nb / nf);
        Moments {
            n,
            mean,
            m2: a.m2 + b.m2 + delta * delta * (na * nb / nf),
        }
    }
}

/// Which statistic a [`Variance`] lowers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarianceKind {
    /// `var_pop`: `m2 / n`
    VarPop,
    /// `var_samp` / `variance`: `m2 / (n - 1)`, NULL for one value
    VarSamp,
    /// `stddev_pop`
    StddevPop,
    /// `stddev_samp` / `stddev`
    StddevSamp,
}

/// `var_pop`, `var_samp`, `stddev_pop`, `stddev_samp`: NULLs skipped; NULL on
/// an empty window (and for the sample statistics on a single value); any
/// NaN or infinite input gives NaN.
#[derive(Clone, Copy, Debug)]
pub struct Variance(pub VarianceKind);

impl Monoid for Variance {
    type Agg = Moments;
    #[inline]
    fn identity(&self) -> Moments {
        Moments::default()
    }
    #[inline]
    fn combine(&self, a: &Moments, b: &Moments) -> Moments {
        Moments::merge(a, b)
    }
}

impl Aggregate for Variance {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> Moments {
        columns
            .f64(0, row)
            .map_or_else(Moments::default, Moments::of)
    }
    fn lower(&self, m: &Moments) -> Result<Option<f64>, AggregateError> {
        let n = m.n as f64;
        Ok(match self.0 {
            _ if m.n == 0 => None,
            VarianceKind::VarPop => Some(m.m2 / n),
            VarianceKind::StddevPop => Some((m.m2 / n).sqrt()),
            _ if m.n == 1 => None,
            VarianceKind::VarSamp => Some(m.m2 / (n - 1.0)),
            VarianceKind::StddevSamp => Some((m.m2 / (n - 1.0)).sqrt()),
        })
    }
}

/// `relvar(x)`: the relative variation `(max − min) / max` of the paper's
/// DEBS 2012 experiment. The partial aggregate is `(min, max)` with identity
/// `(+∞, −∞)`. NULL for an empty window or a zero max; NaN inputs are
/// skipped.
#[derive(Clone, Copy, Debug, Default)]
pub struct RelVar;

impl Monoid for RelVar {
    type Agg = (f64, f64);
    #[inline]
    fn identity(&self) -> (f64, f64) {
        (f64::INFINITY, f64::NEG_INFINITY)
    }
    #[inline]
    fn combine(&self, a: &(f64, f64), b: &(f64, f64)) -> (f64, f64) {
        (a.0.min(b.0), a.1.max(b.1))
    }
}

impl Aggregate for RelVar {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> (f64, f64) {
        match columns.f64(0, row) {
            Some(x) if !x.is_nan() => (x, x),
            _ => self.identity(),
        }
    }
    fn lower(&self, &(min, max): &(f64, f64)) -> Result<Option<f64>, AggregateError> {
        Ok((min <= max && max != 0.0).then(|| (max - min) / max))
    }
}

/// Co-moments of pairs `(x, y)`: count, means, `Σ(x − x̄)²`, `Σ(y − ȳ)²`
/// and `Σ(x − x̄)(y − ȳ)`, merged with Chan's parallel formula.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CoMoments {
    /// Number of pairs.
    pub n: i64,
    /// Mean of x, in double-double precision as in [`Moments`].
    pub mean_x: DoubleDouble,
    /// Mean of y, likewise.
    pub mean_y: DoubleDouble,
    /// Sum of squared deviations of x.
    pub m2_x: f64,
    /// Sum of squared deviations of y.
    pub m2_y: f64,
    /// Sum of co-deviations of x and y.
    pub c_xy: f64,
}

impl CoMoments {
    fn merge(a: &CoMoments, b: &CoMoments) -> CoMoments {
        if a.n == 0 {
            return *b;
        }
        if b.n == 0 {
            return *a;
        }
        let n = a.n + b.n;
        let (na, nb, nf) = (a.n as f64, b.n as f64, n as f64);
        let (dx, mean_x) = merged_mean(a.mean_x, b.mean_x, nb / nf);
        let (dy, mean_y) = merged_mean(a.mean_y, b.mean_y, nb / nf);
        let weight = na * nb / nf;
        CoMoments {
            n,
            mean_x,
            mean_y,
            m2_x: a.m2_x + b.m2_x + dx * dx * weight,
            m2_y: a.m2_y + b.m2_y + dy * dy * weight,
            c_xy: a.c_xy + b.c_xy + dx * dy * weight,
        }
    }
}

/// Which statistic of pairs `(y, x)` a [`Bivariate`] gives, as SQL (and
/// PostgreSQL) define them over the pairs where both are present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BivariateKind {
    /// `regr_slope`: the least-squares slope of y against x.
    Slope,
    /// `regr_intercept`: where that line crosses x = 0.
    Intercept,
    /// `regr_r2`: the square of the correlation (1 when every y is equal).
    R2,
    /// `corr`: the correlation coefficient.
    Corr,
    /// `covar_pop`: the population covariance.
    CovarPop,
    /// `covar_samp`: the sample covariance.
    CovarSamp,
    /// `regr_avgx`: the mean of x.
    AvgX,
    /// `regr_avgy`: the mean of y.
    AvgY,
    /// `regr_sxx`: the sum of x's squared deviations.
    Sxx,
    /// `regr_syy`: the sum of y's squared deviations.
    Syy,
    /// `regr_sxy`: the sum of their co-deviations.
    Sxy,
}

/// `regr_slope(y, x)`, `corr(y, x)`, `covar_pop(y, x)`, … (SQL's argument
/// order, y first). Pairs with a NULL, NaN or infinite member are skipped.
/// NULL without pairs, with fewer than two where a sample needs them, and
/// where x (or, for `corr`, either) does not vary.
#[derive(Clone, Copy, Debug)]
pub struct Bivariate(pub BivariateKind);

impl Monoid for Bivariate {
    type Agg = CoMoments;
    #[inline]
    fn identity(&self) -> CoMoments {
        CoMoments::default()
    }
    #[inline]
    fn combine(&self, a: &CoMoments, b: &CoMoments) -> CoMoments {
        CoMoments::merge(a, b)
    }
}

impl Aggregate for Bivariate {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> CoMoments {
        match (columns.f64(0, row), columns.f64(1, row)) {
            (Some(y), Some(x)) if y.is_finite() && x.is_finite() => CoMoments {
                n: 1,
                mean_x: DoubleDouble::from_f64(x),
                mean_y: DoubleDouble::from_f64(y),
                ..CoMoments::default()
            },
            _ => CoMoments::default(),
        }
    }
    fn lower(&self, m: &CoMoments) -> Result<Option<f64>, AggregateError> {
        use BivariateKind::*;
        if m.n == 0 {
            return Ok(None);
        }
        let varies = m.m2_x != 0.0;
        Ok(match self.0 {
            Slope => varies.then(|| m.c_xy / m.m2_x),
            Intercept => varies.then(|| m.mean_y.value() - m.c_xy / m.m2_x * m.mean_x.value()),
            R2 if !varies => None,
            R2 if m.m2_y == 0.0 => Some(1.0),
            R2 => Some(m.c_xy * m.c_xy / (m.m2_x * m.m2_y)),
            Corr => (varies && m.m2_y != 0.0).then(|| m.c_xy / (m.m2_x * m.m2_y).sqrt()),
            CovarPop => Some(m.c_xy / m.n as f64),
            CovarSamp => (m.n >= 2).then(|| m.c_xy / (m.n - 1) as f64),
            AvgX => Some(m.mean_x.value()),
            AvgY => Some(m.mean_y.value()),
            Sxx => Some(m.m2_x),
            Syy => Some(m.m2_y),
            Sxy => Some(m.c_xy),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use sliq_swag::{DabaLite, FifoAggregator};

    use super::*;

    /// Whole numbers in `-50..=50` from a fixed pseudo-random sequence.
    fn small_offsets(seed: u64) -> impl FnMut() -> i64 {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as i64 % 101 - 50
        }
    }

    /// The population covariance of `(1e9 + k, 1e9 + l)` over the pairs
    /// `(k, l)`, exactly: `(nΣkl − ΣkΣl) / n²`, in integers.
    fn exact_covar_pop(pairs: &VecDeque<(i64, i64)>) -> f64 {
        let n = pairs.len() as i128;
        let (mut sk, mut sl, mut skl) = (0i128, 0i128, 0i128);
        for &(k, l) in pairs {
            let (k, l) = (k as i128, l as i128);
            (sk, sl, skl) = (sk + k, sl + l, skl + k * l);
        }
        (n * skl - sk * sl) as f64 / (n * n) as f64
    }

    /// The worst relative error of `lower(window)` against `exact` over a
    /// window of 300 pairs sliding over 5,000, each pair `(k, l)` lifted
    /// by `lift(1e9 + k, 1e9 + l)`.
    fn worst_sliding_error<M: Aggregate<Output = Option<f64>>>(
        aggregate: M,
        mut pair: impl FnMut() -> (i64, i64),
        lift: impl Fn(f64, f64) -> M::Agg,
    ) -> f64 {
        let mut window = DabaLite::new(aggregate.clone());
        let mut pairs = VecDeque::new();
        let mut worst = 0.0f64;
        for _ in 0..5_000 {
            let (k, l) = pair();
            window.insert(lift(1e9 + k as f64, 1e9 + l as f64));
            pairs.push_back((k, l));
            if pairs.len() > 300 {
                window.evict();
                pairs.pop_front();
            }
            let got = aggregate.lower(&window.query()).unwrap().unwrap();
            let exact = exact_covar_pop(&pairs);
            if exact != 0.0 {
                worst = worst.max((got - exact).abs() / exact.abs());
            }
        }
        worst
    }

    #[test]
    fn a_sliding_variance_far_from_zero_keeps_f64_precision() {
        // Values 1e9 + k: an f64 mean is off by up to half an ulp of 1e9
        // (6e-8), about 2e-9 of σ; its square would show.
        let mut k = small_offsets(12345);
        let worst = worst_sliding_error(
            Variance(VarianceKind::VarPop),
            || {
                let k = k();
                (k, k)
            },
            |x, _| Moments::of(x),
        );
        assert!(worst < 1e-13, "worst relative error {worst:e}");
    }

    #[test]
    fn a_sliding_covariance_far_from_zero_keeps_f64_precision() {
        let mut offset = small_offsets(99);
        let worst = worst_sliding_error(
            Bivariate(BivariateKind::CovarPop),
            || {
                let k = offset();
                (k, 2 * k + offset())
            },
            |x, y| CoMoments {
                n: 1,
                mean_x: DoubleDouble::from_f64(x),
                mean_y: DoubleDouble::from_f64(y),
                ..CoMoments::default()
            },
        );
        assert!(worst < 1e-12, "worst relative error {worst:e}");
    }
}

//! DDSketch quantiles with a bounded number of buckets.

use sliq_swag::{LiftInput, Monoid};

use crate::{Aggregate, AggregateError, Columns, PanedAggregate};

/// Buckets per sign. With 1 % accuracy they span a factor of about 28,000
/// between the smallest and largest magnitude kept exactly; smaller
/// magnitudes collapse into the lowest bucket (so low quantiles of data
/// spanning more than that range are over-estimated, high ones stay exact).
pub const BUCKETS: usize = 512;

/// Magnitudes below this count as zero.
const MIN_MAGNITUDE: f64 = 1e-300;

/// Dense bucket counts for one sign, collapsing the lowest indices.
/// `counts[j]` holds bucket index `top − (BUCKETS − 1) + j`; `counts[0]`
/// also absorbs every lower index.
#[derive(Clone, PartialEq, Eq)]
struct Store {
    /// Highest bucket index represented, or `None` when empty.
    top: Option<i32>,
    counts: [u32; BUCKETS],
}

impl Default for Store {
    fn default() -> Self {
        Store {
            top: None,
            counts: [0; BUCKETS],
        }
    }
}

impl Store {
    fn lowest(top: i32) -> i64 {
        top as i64 - (BUCKETS as i64 - 1)
    }

    /// Moves the window up so that `new_top` (above the current top) is the
    /// highest index; buckets that fall below the window collapse into slot 0.
    fn raise_top(&mut self, new_top: i32) {
        let Some(top) = self.top else {
            self.top = Some(new_top);
            return;
        };
        debug_assert!(new_top > top);
        let shift = (new_top as i64 - top as i64) as usize;
        if shift >= BUCKETS {
            let total = self
                .counts
                .iter()
                .fold(0u32, |acc, &c| acc.saturating_add(c));
            self.counts.fill(0);
            self.counts[0] = total;
        } else {
            // Old slot j moves to j − shift; slots 0..=shift meet in slot 0.
            let collapsed = self.counts[..=shift]
                .iter()
                .fold(0u32, |acc, &c| acc.saturating_add(c));
            self.counts.copy_within(shift.., 0);
            self.counts[BUCKETS - shift..].fill(0);
            self.counts[0] = collapsed;
        }
        self.top = Some(new_top);
    }

    /// The slot of bucket `index` once `top` is the highest index.
    #[inline]
    fn slot(top: i32, index: i64) -> usize {
        (index - Self::lowest(top)).max(0) as usize
    }

    fn add(&mut self, index: i32, count: u32) {
        if self.top.is_none_or(|top| index > top) {
            self.raise_top(index);
        }
        let slot = Self::slot(self.top.unwrap_or(index), index as i64);
        self.counts[slot] = self.counts[slot].saturating_add(count);
    }

    /// Adds `other`'s counts. The result does not depend on merge order: a
    /// value ends in slot `max(index − lowest(final top), 0)` either way.
    fn merge(&mut self, other: &Store) {
        let Some(other_top) = other.top else {
            return;
        };
        if self.top.is_none_or(|top| other_top > top) {
            self.raise_top(other_top);
        }
        // Other's slot j lands in our slot j − shift; slots at or below
        // `shift` meet in our slot 0. Both loops run over plain slices.
        let shift = (self.top.unwrap_or(other_top) as i64 - other_top as i64) as usize;
        if shift >= BUCKETS {
            self.counts[0] = other
                .counts
                .iter()
                .fold(self.counts[0], |acc, &c| acc.saturating_add(c));
            return;
        }
        let collapsed = other.counts[..=shift]
            .iter()
            .fold(0u32, |acc, &c| acc.saturating_add(c));
        self.counts[0] = self.counts[0].saturating_add(collapsed);
        // Wrapping adds vectorize; a bucket wraps only past 2^32 rows.
        for (a, b) in self.counts[1..BUCKETS - shift]
            .iter_mut()
            .zip(&other.counts[shift + 1..])
        {
            *a = a.wrapping_add(*b);
        }
    }

    #[cfg(test)]
    fn total(&self) -> u64 {
        self.counts.iter().map(|&c| c as u64).sum()
    }

    /// The bucket index holding the value of rank `rank` (from 0) among
    /// this store's values, counted from the lowest index up (`descending`
    /// false) or from the highest down; `Err` with the store's total when
    /// it holds `rank` values or fewer. Whole chunks of slots are skipped by
    /// their sums, so a walk adds up its slots a chunk at a time.
    fn locate(&self, rank: u64, descending: bool) -> Result<i64, u64> {
        const CHUNK: usize = 16;
        let Some(top) = self.top else {
            return Err(0);
        };
        // The `i`-th slot in the walk's order.
        let slot = |i: usize| if descending { BUCKETS - 1 - i } else { i };
        let mut seen = 0u64;
        for start in (0..BUCKETS).step_by(CHUNK) {
            let end = start + CHUNK;
            let slots = match descending {
                false => start..end,
                true => BUCKETS - end..BUCKETS - start,
            };
            let sum: u64 = self.counts[slots].iter().map(|&c| u64::from(c)).sum();
            if seen + sum > rank {
                for i in start..end {
                    seen += u64::from(self.counts[slot(i)]);
                    if seen > rank {
                        return Ok(Self::lowest(top) + slot(i) as i64);
                    }
                }
            }
            seen += sum;
        }
        Err(seen)
    }

    /// `(bucket index, count)` from the lowest index up.
    fn ascending(&self) -> impl DoubleEndedIterator<Item = (i64, u32)> + '_ {
        let lowest = self.top.map_or(0, Self::lowest);
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(move |(j, &c)| (lowest + j as i64, c))
    }
}

/// A DDSketch: signed values bucketed by `⌈log_γ |x|⌉` with
/// `γ = (1 + α) / (1 − α)`, so that every quantile it returns is within
/// relative error `α` of a value of rank `q·(n − 1)` (for magnitudes inside
/// the range its 512 buckets per sign span, a factor of about 28,000 at 1 %).
/// Merging adds bucket counts.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct DdSketch {
    negative: Store,
    zero: u64,
    positive: Store,
    /// Values added, kept so that a quantile need not sum every bucket
    /// before it walks them. The buckets' sum, unless one of 2^32 or more
    /// values saturated.
    count: u64,
}

impl std::fmt::Debug for DdSketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DdSketch(count {})", self.count())
    }
}

impl DdSketch {
    /// Number of values added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Adds `x` using the bucket mapping of `mapping`. NaN and ±∞ are
    /// ignored (they have no bucket).
    pub fn insert(&mut self, x: f64, mapping: &Mapping) {
        if !x.is_finite() {
            return;
        }
        self.count += 1;
        let magnitude = x.abs();
        if magnitude < MIN_MAGNITUDE {
            self.zero += 1;
        } else if x > 0.0 {
            self.positive.add(mapping.index(magnitude), 1);
        } else {
            self.negative.add(mapping.index(magnitude), 1);
        }
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &DdSketch) {
        self.negative.merge(&other.negative);
        self.zero += other.zero;
        self.positive.merge(&other.positive);
        self.count += other.count;
    }

    /// The `q`-quantile (`0 ≤ q ≤ 1`), or `None` when empty.
    pub fn quantile(&self, q: f64, mapping: &Mapping) -> Option<f64> {
        let count = self.count();
        if count == 0 {
            return None;
        }
        let rank = (q.clamp(0.0, 1.0) * (count - 1) as f64).floor() as u64;
        // Most negative first: negative buckets by descending magnitude.
        let negatives = match self.negative.locate(rank, true) {
            Ok(index) => return Some(-mapping.value(index)),
            Err(negatives) => negatives,
        };
        let seen = negatives + self.zero;
        if seen > rank {
            return Some(0.0);
        }
        if let Ok(index) = self.positive.locate(rank - seen, false) {
            return Some(mapping.value(index));
        }
        // Saturated counters can leave the walk short: the top bucket.
        self.positive
            .ascending()
            .next_back()
            .map(|(i, _)| mapping.value(i))
    }
}

/// The logarithmic bucket mapping of a relative accuracy `α`.
#[derive(Clone, Copy, Debug)]
pub struct Mapping {
    gamma: f64,
    inv_ln_gamma: f64,
}

impl Mapping {
    /// The mapping for relative accuracy `alpha` (0 < α < 1).
    pub fn new(alpha: f64) -> Self {
        let gamma = (1.0 + alpha) / (1.0 - alpha);
        Mapping {
            gamma,
            inv_ln_gamma: 1.0 / gamma.ln(),
        }
    }

    #[inline]
    fn index(&self, magnitude: f64) -> i32 {
        (magnitude.ln() * self.inv_ln_gamma).ceil() as i32
    }

    /// The bucket's representative: within `α` of every magnitude in it.
    fn value(&self, index: i64) -> f64 {
        2.0 * self.gamma.powf(index as f64) / (1.0 + self.gamma)
    }
}

/// `approx_percentile(x, q [, accuracy])` and `approx_median(x)`: the
/// `q`-quantile of the window's `x` within relative error `accuracy`
/// (default 1 %), from a [`DdSketch`]. NULL, NaN and ±∞ inputs are skipped;
/// NULL on a window without other input.
#[derive(Clone, Copy, Debug)]
pub struct ApproxPercentile {
    q: f64,
    mapping: Mapping,
}

impl ApproxPercentile {
    /// The default relative accuracy.
    pub const DEFAULT_ACCURACY: f64 = 0.01;

    /// The `q`-quantile (`0 ≤ q ≤ 1`) with relative accuracy `accuracy`
    /// (`0 < accuracy < 1`); the registry checks both ranges.
    pub fn new(q: f64, accuracy: f64) -> Self {
        debug_assert!((0.0..=1.0).contains(&q) && accuracy > 0.0 && accuracy < 1.0);
        ApproxPercentile {
            q,
            mapping: Mapping::new(accuracy),
        }
    }
}

impl Monoid for ApproxPercentile {
    type Agg = DdSketch;
    fn identity(&self) -> DdSketch {
        DdSketch::default()
    }
    fn combine(&self, a: &DdSketch, b: &DdSketch) -> DdSketch {
        let mut out = a.clone();
        out.merge(b);
        out
    }
    #[inline]
    fn combine_into(&self, acc: &mut DdSketch, younger: &DdSketch) {
        acc.merge(younger);
    }
}

impl LiftInput for ApproxPercentile {
    /// The value; `None` for NULL.
    type Input = Option<f64>;
    #[inline]
    fn lift_input(&self, x: &Option<f64>) -> DdSketch {
        let mut sketch = DdSketch::default();
        self.insert_input(&mut sketch, x);
        sketch
    }
    #[inline]
    fn insert_input(&self, sketch: &mut DdSketch, x: &Option<f64>) {
        if let Some(x) = *x {
            sketch.insert(x, &self.mapping);
        }
    }
    /// The sketch is commutative: an insert.
    #[inline]
    fn prepend_input(&self, sketch: &mut DdSketch, x: &Option<f64>) {
        self.insert_input(sketch, x);
    }
}

impl PanedAggregate for ApproxPercentile {
    #[inline]
    fn input<C: Columns>(&self, columns: &C, row: usize) -> Option<f64> {
        columns.f64(0, row)
    }
    fn nothing(&self) -> Option<f64> {
        None
    }
}

impl Aggregate for ApproxPercentile {
    type Output = Option<f64>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> DdSketch {
        self.lift_input(&self.input(columns, row))
    }
    fn lower(&self, agg: &DdSketch) -> Result<Option<f64>, AggregateError> {
        Ok(agg.quantile(self.q, &self.mapping))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quantile by walking every bucket, as the sketch's definition reads.
    fn quantile_bucket_by_bucket(sketch: &DdSketch, q: f64, mapping: &Mapping) -> Option<f64> {
        let count = bucket_sum(sketch);
        if count == 0 {
            return None;
        }
        let rank = (q.clamp(0.0, 1.0) * (count - 1) as f64).floor() as u64;
        let mut seen = 0u64;
        for (index, c) in sketch.negative.ascending().rev() {
            seen += c as u64;
            if seen > rank {
                return Some(-mapping.value(index));
            }
        }
        seen += sketch.zero;
        if seen > rank {
            return Some(0.0);
        }
        for (index, c) in sketch.positive.ascending() {
            seen += c as u64;
            if seen > rank {
                return Some(mapping.value(index));
            }
        }
        None
    }

    /// The sketch's values counted from its buckets.
    fn bucket_sum(sketch: &DdSketch) -> u64 {
        sketch.negative.total() + sketch.zero + sketch.positive.total()
    }

    #[test]
    fn quantiles_skip_whole_chunks_of_buckets_to_the_same_bucket() {
        let mapping = Mapping::new(0.01);
        let mut sketch = DdSketch::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for n in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Magnitudes over six decades, both signs, some zeros.
            let magnitude = 10f64.powf((x % 6000) as f64 / 1000.0 - 3.0);
            let value = match x % 7 {
                0 => 0.0,
                1 | 2 => -magnitude,
                _ => magnitude,
            };
            sketch.insert(value, &mapping);
            if n % 97 == 0 {
                assert_eq!(sketch.count(), bucket_sum(&sketch));
                for q in [0.0, 0.01, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0] {
                    assert_eq!(
                        sketch.quantile(q, &mapping),
                        quantile_bucket_by_bucket(&sketch, q, &mapping),
                        "q = {q} after {n} values"
                    );
                }
            }
        }
    }

    fn exact_quantile(sorted: &[f64], q: f64) -> f64 {
        sorted[(q * (sorted.len() - 1) as f64).floor() as usize]
    }

    #[test]
    fn quantiles_of_skewed_data_are_within_relative_accuracy() {
        // Pareto-distributed values (heavy tail) with a deterministic LCG.
        let mapping = Mapping::new(0.01);
        let mut sketch = DdSketch::default();
        let mut values = Vec::new();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..100_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let x = 1.0 / u.powf(1.0 / 1.5);
            values.push(x);
            sketch.insert(x, &mapping);
        }
        values.sort_by(f64::total_cmp);
        for q in [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0] {
            let expected = exact_quantile(&values, q);
            let got = sketch.quantile(q, &mapping).unwrap();
            assert!(
                (got - expected).abs() <= 0.01 * expected * (1.0 + 1e-9),
                "q {q}: got {got}, exact {expected}"
            );
        }
    }

    #[test]
    fn mixed_signs_and_zeros_keep_their_order() {
        let mapping = Mapping::new(0.01);
        let mut sketch = DdSketch::default();
        for x in [-100.0, -1.0, 0.0, 0.0, 1.0, 100.0, f64::NAN, f64::INFINITY] {
            sketch.insert(x, &mapping);
        }
        assert_eq!(sketch.count(), 6);
        let q = |q| sketch.quantile(q, &mapping).unwrap();
        assert!((q(0.0) + 100.0).abs() <= 1.0);
        assert!((q(0.2) + 1.0).abs() <= 0.01);
        assert_eq!(q(0.5), 0.0);
        assert!((q(1.0) - 100.0).abs() <= 1.0);
        assert_eq!(DdSketch::default().quantile(0.5, &mapping), None);
    }

    #[test]
    fn merging_equals_inserting_everything_and_collapses_low_buckets() {
        let mapping = Mapping::new(0.01);
        let (mut a, mut b, mut all) = (
            DdSketch::default(),
            DdSketch::default(),
            DdSketch::default(),
        );
        // 1e-6 … 1e6 spans more than BUCKETS buckets: low ones collapse.
        for i in 0..2000 {
            let x = 10f64.powf(-6.0 + 12.0 * i as f64 / 2000.0);
            if i % 2 == 0 {
                a.insert(x, &mapping)
            } else {
                b.insert(x, &mapping)
            }
            all.insert(x, &mapping);
        }
        let mut merged = a.clone();
        merged.merge(&b);
        let mut reversed = b.clone();
        reversed.merge(&a);
        assert_eq!(merged, all);
        assert_eq!(reversed, all);
        assert_eq!(merged.count(), 2000);
        assert_eq!(bucket_sum(&merged), 2000);
        // The top quantile is still exact within 1 %.
        let top = merged.quantile(1.0, &mapping).unwrap();
        assert!((top - 10f64.powf(-6.0 + 12.0 * 1999.0 / 2000.0)).abs() <= 0.01 * top);
    }
}

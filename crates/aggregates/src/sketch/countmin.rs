//! Count-Min frequency estimation.

use sliq_swag::LiftInput;

use super::remix;
use crate::{Aggregate, AggregateError, Columns, PanedAggregate, Scalar};

/// Rows of counters (independent hash functions).
pub const DEPTH: usize = 4;
/// Counters per row.
pub const WIDTH: usize = 128;

/// A Count-Min sketch of `DEPTH × WIDTH` counters; counter-wise addition
/// merges, all zeros is the identity. An estimate never under-counts and,
/// with probability `1 − e^−DEPTH` (98 %), over-counts by at most
/// `e / WIDTH` (2.2 %) of the total count.
#[derive(Clone, PartialEq, Eq)]
pub struct CountMinSketch {
    counters: [[u32; WIDTH]; DEPTH],
}

impl Default for CountMinSketch {
    fn default() -> Self {
        CountMinSketch {
            counters: [[0; WIDTH]; DEPTH],
        }
    }
}

impl std::fmt::Debug for CountMinSketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total: u64 = self.counters[0].iter().map(|&c| c as u64).sum();
        write!(f, "CountMinSketch(total {total})")
    }
}

impl CountMinSketch {
    #[inline]
    fn columns(hash: u64) -> [usize; DEPTH] {
        let mut h = hash;
        std::array::from_fn(|_| {
            h = remix(h);
            (h % WIDTH as u64) as usize
        })
    }

    /// Counts one occurrence of a value by its hash.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        for (row, col) in self.counters.iter_mut().zip(Self::columns(hash)) {
            row[col] = row[col].wrapping_add(1);
        }
    }

    /// Estimated occurrences of a value by its hash (never too low).
    pub fn estimate_hash(&self, hash: u64) -> u32 {
        self.counters
            .iter()
            .zip(Self::columns(hash))
            .map(|(row, col)| row[col])
            .min()
            .unwrap_or(0)
    }

    /// Counter-wise sum with `other`.
    #[inline]
    pub fn merge(&mut self, other: &CountMinSketch) {
        // Wrapping adds vectorize on baseline x86-64 (saturating ones do
        // not); a counter wraps only past 2^32 rows in one window, which
        // would hold terabytes of sketches first.
        for (row, other_row) in self.counters.iter_mut().zip(&other.counters) {
            for (a, b) in row.iter_mut().zip(other_row) {
                *a = a.wrapping_add(*b);
            }
        }
    }
}

/// `countmin(x, v)`: Count-Min estimate of how many rows of the window have
/// `x = v`; never below the true count. NULL `x` are skipped.
#[derive(Clone, Debug)]
pub struct CountMin<T> {
    probe_hash: u64,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T: Scalar> CountMin<T> {
    /// Estimates the frequency of `probe`.
    pub fn new(probe: &T) -> Self {
        Self::from_hash(probe.hash64())
    }

    /// Estimates the frequency of the value whose [`Scalar::hash64`] is `probe_hash`.
    pub fn from_hash(probe_hash: u64) -> Self {
        CountMin {
            probe_hash,
            _t: std::marker::PhantomData,
        }
    }
}

hashed_sketch_function!(
    CountMin,
    CountMinSketch,
    merge,
    |_function, sketch, hash| sketch.insert_hash(hash)
);

impl<T: Scalar> Aggregate for CountMin<T> {
    type Output = i64;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> CountMinSketch {
        self.lift_input(&self.input(columns, row))
    }
    fn lower(&self, agg: &CountMinSketch) -> Result<i64, AggregateError> {
        Ok(agg.estimate_hash(self.probe_hash) as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_under_counts_and_stays_within_its_bound() {
        let mut sketch = CountMinSketch::default();
        let mut truth = std::collections::HashMap::new();
        let mut total = 0u64;
        // Zipf-like: value v occurs about 2000 / v times.
        for v in 1..=2000i64 {
            for _ in 0..(2000 / v).max(1) {
                sketch.insert_hash(v.hash64());
                *truth.entry(v).or_insert(0u32) += 1;
                total += 1;
            }
        }
        let bound = (std::f64::consts::E / WIDTH as f64 * total as f64).ceil() as u32;
        let mut within = 0;
        for (v, &count) in &truth {
            let estimate = sketch.estimate_hash(v.hash64());
            assert!(estimate >= count, "under-counted {v}: {estimate} < {count}");
            within += (estimate - count <= bound) as usize;
        }
        assert!(
            within as f64 >= 0.95 * truth.len() as f64,
            "{within} of {} within bound",
            truth.len()
        );
    }
}

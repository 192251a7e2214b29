//! HyperLogLog distinct counting.

use std::marker::PhantomData;

use sliq_swag::LiftInput;

use crate::{Aggregate, AggregateError, Columns, PanedAggregate, Scalar};

/// Register-index bits: 2^10 registers, standard error 1.04 / √1024 ≈ 3.25 %.
pub const PRECISION: u32 = 10;
const REGISTERS: usize = 1 << PRECISION;

/// A HyperLogLog sketch with 2^10 = 1024 one-byte registers. Merging
/// takes the register-wise maximum, so it is a commutative, idempotent
/// monoid with the all-zero sketch as identity.
#[derive(Clone, PartialEq, Eq)]
pub struct HyperLogLog {
    registers: [u8; REGISTERS],
}

impl std::fmt::Debug for HyperLogLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HyperLogLog")
            .field("estimate", &self.estimate())
            .finish()
    }
}

impl Default for HyperLogLog {
    fn default() -> Self {
        HyperLogLog {
            registers: [0; REGISTERS],
        }
    }
}

impl HyperLogLog {
    /// Adds a value by its 64-bit hash.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let index = (hash >> (64 - PRECISION)) as usize;
        // A sentinel bit bounds the rank at 64 - PRECISION + 1.
        let rest = (hash << PRECISION) | (1 << (PRECISION - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        let r = &mut self.registers[index];
        *r = (*r).max(rank);
    }

    /// Register-wise maximum with `other`.
    #[inline]
    pub fn merge(&mut self, other: &HyperLogLog) {
        for (a, b) in self.registers.iter_mut().zip(&other.registers) {
            *a = (*a).max(*b);
        }
    }

    /// Estimated number of distinct values (with linear counting for small
    /// cardinalities).
    pub fn estimate(&self) -> f64 {
        let m = REGISTERS as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        // Σ 2^-r over the registers, from a count of each rank (ranks are at
        // most 64 - PRECISION + 1): exact in 64 fractional bits, rounded once.
        // Four histograms, a register to each in turn: increments of one
        // rank by neighbouring registers (most ranks are 1 to 3) then go to
        // different counters and do not wait on each other.
        let mut lanes = [[0u32; 64]; 4];
        for registers in self.registers.chunks_exact(4) {
            for (lane, &r) in lanes.iter_mut().zip(registers) {
                lane[usize::from(r) & 63] += 1;
            }
        }
        let mut ranks = [0u32; 64];
        for (rank, count) in ranks.iter_mut().enumerate() {
            *count = lanes.iter().map(|lane| lane[rank]).sum();
        }
        let fixed: u128 = ranks
            .iter()
            .enumerate()
            .map(|(rank, &count)| u128::from(count) << (64 - rank))
            .sum();
        let sum = fixed as f64 * f64::powi(2.0, -64);
        let zeros = ranks[0] as usize;
        let raw = alpha * m * m / sum;
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
    }
}

/// `approx_count_distinct(x)`: HyperLogLog estimate of the number of
/// distinct non-NULL `x` in the window (0 when there is none).
pub struct ApproxCountDistinct<T>(PhantomData<fn() -> T>);

impl<T> Default for ApproxCountDistinct<T> {
    fn default() -> Self {
        ApproxCountDistinct(PhantomData)
    }
}

impl<T> Clone for ApproxCountDistinct<T> {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl<T> std::fmt::Debug for ApproxCountDistinct<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApproxCountDistinct")
    }
}

hashed_sketch_function!(
    ApproxCountDistinct,
    HyperLogLog,
    merge,
    |_function, sketch, hash| sketch.insert_hash(hash)
);

impl<T: Scalar> Aggregate for ApproxCountDistinct<T> {
    type Output = i64;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> HyperLogLog {
        self.lift_input(&self.input(columns, row))
    }
    fn lower(&self, agg: &HyperLogLog) -> Result<i64, AggregateError> {
        Ok(agg.estimate().round() as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_is_within_three_standard_errors_on_100k_distinct() {
        let mut sketch = HyperLogLog::default();
        for i in 0..100_000i64 {
            sketch.insert_hash(i.hash64());
            sketch.insert_hash(i.hash64()); // duplicates change nothing
        }
        let error = (sketch.estimate() - 100_000.0).abs() / 100_000.0;
        assert!(
            error < 3.0 * 1.04 / (REGISTERS as f64).sqrt(),
            "relative error {error}"
        );
    }

    /// The estimate by its formula, a register at a time.
    fn estimate_by_formula(sketch: &HyperLogLog) -> f64 {
        let m = REGISTERS as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = sketch
            .registers
            .iter()
            .map(|&r| f64::powi(2.0, -(r as i32)))
            .sum();
        let zeros = sketch.registers.iter().filter(|&&r| r == 0).count();
        let raw = alpha * m * m / sum;
        if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        }
    }

    #[test]
    fn estimate_counts_ranks_as_the_formula_sums_registers() {
        let mut sketch = HyperLogLog::default();
        let mut n = 0i64;
        for step in [0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000] {
            for _ in 0..step {
                sketch.insert_hash(n.hash64());
                n += 1;
            }
            assert_eq!(sketch.estimate(), estimate_by_formula(&sketch), "after {n}");
        }
        // The highest ranks a register can hold.
        sketch.registers.fill(64 - PRECISION as u8 + 1);
        assert_eq!(sketch.estimate(), estimate_by_formula(&sketch));
    }

    #[test]
    fn small_cardinalities_are_nearly_exact() {
        let mut sketch = HyperLogLog::default();
        assert_eq!(sketch.estimate(), 0.0);
        for i in 0..10i64 {
            sketch.insert_hash(i.hash64());
        }
        assert_eq!(sketch.estimate().round(), 10.0);
    }

    #[test]
    fn merge_equals_inserting_everything() {
        let (mut a, mut b, mut all) = Default::default();
        for i in 0..5000i64 {
            let h = i.hash64();
            if i % 3 == 0 {
                HyperLogLog::insert_hash(&mut a, h)
            } else {
                HyperLogLog::insert_hash(&mut b, h)
            }
            HyperLogLog::insert_hash(&mut all, h);
        }
        HyperLogLog::merge(&mut a, &b);
        assert_eq!(a, all);
    }
}

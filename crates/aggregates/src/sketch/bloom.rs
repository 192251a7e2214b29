//! Bloom filter membership.

use sliq_swag::LiftInput;

use crate::{Aggregate, AggregateError, Columns, PanedAggregate, Scalar};

/// Filter size in bits.
pub const BITS: usize = 4096;
const WORDS: usize = BITS / 64;

/// A 4096-bit Bloom filter; union (bitwise OR) merges, the empty filter is
/// the identity.
#[derive(Clone, PartialEq, Eq)]
pub struct BloomFilter {
    words: [u64; WORDS],
}

impl Default for BloomFilter {
    fn default() -> Self {
        BloomFilter { words: [0; WORDS] }
    }
}

impl std::fmt::Debug for BloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ones: u32 = self.words.iter().map(|w| w.count_ones()).sum();
        write!(f, "BloomFilter({ones} of {BITS} bits set)")
    }
}

impl BloomFilter {
    /// The `k` bit positions of a hash (Kirsch–Mitzenmacher double hashing).
    #[inline]
    fn positions(hash: u64, k: u32) -> impl Iterator<Item = usize> {
        let h1 = hash as u32 as usize;
        let h2 = ((hash >> 32) as u32 | 1) as usize;
        (0..k as usize).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % BITS)
    }

    /// Adds a value by its hash, setting `k` bits.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64, k: u32) {
        for bit in Self::positions(hash, k) {
            self.words[bit / 64] |= 1 << (bit % 64);
        }
    }

    /// Whether the value may have been added (never a false negative).
    pub fn may_contain_hash(&self, hash: u64, k: u32) -> bool {
        Self::positions(hash, k).all(|bit| self.words[bit / 64] & (1 << (bit % 64)) != 0)
    }

    /// Bitwise OR with `other`.
    #[inline]
    pub fn union(&mut self, other: &BloomFilter) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= *b;
        }
    }

    /// The expected false-positive rate after `n` distinct inserts with `k`
    /// hashes: `(1 − e^(−k·n/m))^k`.
    pub fn expected_fpr(n: usize, k: u32) -> f64 {
        (1.0 - (-(k as f64) * n as f64 / BITS as f64).exp()).powi(k as i32)
    }
}

/// `bloom_contains(x, v [, hashes])`: whether the window's `x` may contain
/// the constant `v` — `false` is certain, `true` is wrong with the filter's
/// false-positive rate (about 2 % for 500 distinct values with the default
/// 4 hashes; see [`BloomFilter::expected_fpr`]). NULL `x` are skipped.
#[derive(Clone, Debug)]
pub struct BloomContains<T> {
    probe_hash: u64,
    hashes: u32,
    _t: std::marker::PhantomData<fn() -> T>,
}

impl<T: Scalar> BloomContains<T> {
    /// The default number of hash functions.
    pub const DEFAULT_HASHES: u32 = 4;

    /// Tests membership of `probe` with `hashes` hash functions (1 to 16).
    pub fn new(probe: &T, hashes: u32) -> Self {
        Self::from_hash(probe.hash64(), hashes)
    }

    /// Tests membership of the value whose [`Scalar::hash64`] is `probe_hash`.
    pub fn from_hash(probe_hash: u64, hashes: u32) -> Self {
        debug_assert!((1..=16).contains(&hashes));
        BloomContains {
            probe_hash,
            hashes,
            _t: std::marker::PhantomData,
        }
    }
}

hashed_sketch_function!(
    BloomContains,
    BloomFilter,
    union,
    |function, filter, hash| filter.insert_hash(hash, function.hashes)
);

impl<T: Scalar> Aggregate for BloomContains<T> {
    type Output = Option<bool>;
    #[inline]
    fn lift<C: Columns>(&self, columns: &C, row: usize) -> BloomFilter {
        self.lift_input(&self.input(columns, row))
    }
    fn lower(&self, agg: &BloomFilter) -> Result<Option<bool>, AggregateError> {
        Ok(Some(agg.may_contain_hash(self.probe_hash, self.hashes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn false_positive_rate_is_near_its_expectation() {
        let (n, k) = (500, 4);
        let mut filter = BloomFilter::default();
        for i in 0..n as i64 {
            filter.insert_hash(i.hash64(), k);
        }
        for i in 0..n as i64 {
            assert!(
                filter.may_contain_hash(i.hash64(), k),
                "false negative for {i}"
            );
        }
        let trials = 100_000;
        let false_positives = (1_000_000..1_000_000 + trials as i64)
            .filter(|i| filter.may_contain_hash(i.hash64(), k))
            .count();
        let fpr = false_positives as f64 / trials as f64;
        let expected = BloomFilter::expected_fpr(n, k);
        assert!(
            (fpr - expected).abs() < 0.25 * expected,
            "fpr {fpr}, expected {expected}"
        );
    }
}

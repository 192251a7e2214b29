//! The paper's three benchmark operators: `sum`, `geomean`, `bloom`.

use sliq_swag::Monoid;

/// A benchmark operator: a monoid plus the lift applied to each generated
/// item inside the timed loop (as the reference harness does).
pub trait Operator: Monoid + Default + Copy {
    fn lift(&self, item: u64) -> Self::Agg;
    /// Folds the query result into a checksum so the work cannot be elided.
    fn digest(agg: &Self::Agg) -> u64;
}

/// `sum` over u64 (wrapping).
#[derive(Clone, Copy, Default)]
pub struct SumOp;

impl Monoid for SumOp {
    type Agg = u64;
    #[inline]
    fn identity(&self) -> u64 {
        0
    }
    #[inline]
    fn combine(&self, a: &u64, b: &u64) -> u64 {
        a.wrapping_add(*b)
    }
    #[inline]
    fn combine_into(&self, acc: &mut u64, b: &u64) {
        *acc = acc.wrapping_add(*b);
    }
}

impl Operator for SumOp {
    #[inline]
    fn lift(&self, item: u64) -> u64 {
        item
    }
    fn digest(agg: &u64) -> u64 {
        *agg
    }
}

/// Geometric mean: the sum of logarithms and a count.
#[derive(Clone, Copy, Default)]
pub struct GeomeanOp;

impl Monoid for GeomeanOp {
    type Agg = (f64, u64);
    #[inline]
    fn identity(&self) -> (f64, u64) {
        (0.0, 0)
    }
    #[inline]
    fn combine(&self, a: &(f64, u64), b: &(f64, u64)) -> (f64, u64) {
        (a.0 + b.0, a.1 + b.1)
    }
}

impl Operator for GeomeanOp {
    #[inline]
    fn lift(&self, item: u64) -> (f64, u64) {
        (((item % 1000) as f64 + 1.0).ln(), 1)
    }
    /// Lowers as the reference harness's `GeometricMean` does: the mean
    /// of the logarithms in single precision, then `expf`.
    fn digest(agg: &(f64, u64)) -> u64 {
        if agg.1 == 0 {
            0
        } else {
            u64::from(((agg.0 / agg.1 as f64) as f32).exp().to_bits())
        }
    }
}

/// Words in the 4096-bit Bloom filter.
pub const BLOOM_WORDS: usize = 64;

/// A 4096-bit Bloom filter with 4 hash functions; union is ⊗.
#[derive(Clone, Copy, Default)]
pub struct BloomOp;

impl Monoid for BloomOp {
    type Agg = [u64; BLOOM_WORDS];
    #[inline]
    fn identity(&self) -> [u64; BLOOM_WORDS] {
        [0; BLOOM_WORDS]
    }
    #[inline]
    fn combine(&self, a: &[u64; BLOOM_WORDS], b: &[u64; BLOOM_WORDS]) -> [u64; BLOOM_WORDS] {
        let mut out = *a;
        self.combine_into(&mut out, b);
        out
    }
    #[inline]
    fn combine_into(&self, acc: &mut [u64; BLOOM_WORDS], b: &[u64; BLOOM_WORDS]) {
        for (x, y) in acc.iter_mut().zip(b) {
            *x |= *y;
        }
    }
}

impl Operator for BloomOp {
    #[inline]
    fn lift(&self, item: u64) -> [u64; BLOOM_WORDS] {
        let mut filter = [0; BLOOM_WORDS];
        // Four bit positions from two 64-bit hashes (Kirsch–Mitzenmacher).
        let h1 = mix(item);
        let h2 = mix(h1) | 1;
        for i in 0..4u64 {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % 4096;
            filter[(bit / 64) as usize] |= 1 << (bit % 64);
        }
        filter
    }
    fn digest(agg: &[u64; BLOOM_WORDS]) -> u64 {
        agg.iter().fold(0, |acc, w| acc ^ w)
    }
}

/// SplitMix64's finalizer: a fast, well-mixed 64-bit hash.
#[inline]
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

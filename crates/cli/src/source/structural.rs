//! Where a 64-byte block of CSV text has its structural bytes, as bit masks:
//! a few SIMD compares per block instead of one search call per cell.

/// The bytes one [`classify`] call looks at.
pub(super) const BLOCK: usize = 64;

/// Bit masks of a block's structural bytes: bit `i` is set when byte `i` is
/// of that class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Masks {
    /// The delimiter.
    pub delimiters: u64,
    /// `\n`.
    pub newlines: u64,
    /// Quotes and carriage returns: bytes that need csv-core's rules.
    pub others: u64,
}

/// The structural bytes of `block`.
pub(super) fn classify(block: &[u8; BLOCK], delimiter: u8) -> Masks {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of every x86_64 target.
    return unsafe { classify_sse2(block, delimiter) };
    #[cfg(not(target_arch = "x86_64"))]
    classify_scalar(block, delimiter)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn classify_sse2(block: &[u8; BLOCK], delimiter: u8) -> Masks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let splat = |byte: u8| _mm_set1_epi8(byte as i8);
    let (delimiter, newline, quote, cr) =
        (splat(delimiter), splat(b'\n'), splat(b'"'), splat(b'\r'));
    let mut masks = Masks::default();
    for (i, lane) in block.chunks_exact(16).enumerate() {
        // SAFETY: `lane` is 16 readable bytes, and the load is unaligned.
        let bytes = unsafe { _mm_loadu_si128(lane.as_ptr().cast::<__m128i>()) };
        let bits = |equal: __m128i| u64::from(_mm_movemask_epi8(equal) as u16) << (16 * i);
        masks.delimiters |= bits(_mm_cmpeq_epi8(bytes, delimiter));
        masks.newlines |= bits(_mm_cmpeq_epi8(bytes, newline));
        masks.others |= bits(_mm_or_si128(
            _mm_cmpeq_epi8(bytes, quote),
            _mm_cmpeq_epi8(bytes, cr),
        ));
    }
    masks
}

/// [`classify`] a byte at a time: for other targets, and the reference the
/// SIMD version is tested against.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn classify_scalar(block: &[u8; BLOCK], delimiter: u8) -> Masks {
    let mut masks = Masks::default();
    for (i, &byte) in block.iter().enumerate() {
        let bit = 1u64 << i;
        if byte == delimiter {
            masks.delimiters |= bit;
        } else if byte == b'\n' {
            masks.newlines |= bit;
        } else if byte == b'"' || byte == b'\r' {
            masks.others |= bit;
        }
    }
    masks
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn simd_masks_match_bytes(
            bytes in proptest::collection::vec(
                prop_oneof![proptest::sample::select(b",;\n\r\"".to_vec()), any::<u8>()],
                BLOCK,
            ),
            delimiter in proptest::sample::select(b",;\t|".to_vec()),
        ) {
            let block: &[u8; BLOCK] = bytes.first_chunk().expect("the strategy makes a block");
            prop_assert_eq!(classify(block, delimiter), classify_scalar(block, delimiter));
        }
    }

    #[test]
    fn every_lane_lands_on_its_own_bits() {
        let mut block = [b'x'; BLOCK];
        for (i, byte) in [(0, b','), (17, b'\n'), (34, b'"'), (63, b'\r'), (48, b',')] {
            block[i] = byte;
        }
        let masks = classify(&block, b',');
        assert_eq!(masks.delimiters, 1 | 1 << 48);
        assert_eq!(masks.newlines, 1 << 17);
        assert_eq!(masks.others, 1 << 34 | 1 << 63);
    }
}

//! Integers as decimal text, appended to an output buffer with one
//! fixed-size store: the digits are computed in registers, eight at a time,
//! rather than written into a scratch buffer and copied.
//!
//! `itoa` writes into its own buffer, and appending that text to the output
//! is a `memcpy` of a length known only at run time, a library call: for a
//! column of row numbers this took the printer a quarter less time.

/// Numbers below this (10^16) take the fast path; larger ones go to `itoa`.
const FAST_LIMIT: u64 = 10_000_000_000_000_000;

/// 10^k for k in 0..=16.
const POWERS_OF_TEN: [u64; 17] = {
    let mut powers = [1u64; 17];
    let mut k = 1;
    while k < powers.len() {
        powers[k] = powers[k - 1] * 10;
        k += 1;
    }
    powers
};

/// Appends `value` in decimal, as `itoa` (and Rust's `Display`) writes it.
#[inline]
pub fn write_i64(out: &mut Vec<u8>, value: i64) {
    if value < 0 {
        out.push(b'-');
    }
    write_u64(out, value.unsigned_abs());
}

/// Appends `value` in decimal, as `itoa` (and Rust's `Display`) writes it.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, value: u64) {
    if value >= FAST_LIMIT {
        out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
        return;
    }
    let digits = decimal_digits(value);
    let start = out.len();
    // Each store writes the number's digits and then bytes past its end,
    // which the truncation gives back.
    if value < POWERS_OF_TEN[8] {
        let text = eight_digits(value as u32) >> (8 * (8 - digits));
        out.extend_from_slice(&text.to_le_bytes());
    } else {
        let high = eight_digits((value / POWERS_OF_TEN[8]) as u32);
        let low = eight_digits((value % POWERS_OF_TEN[8]) as u32);
        let text = (u128::from(high) | u128::from(low) << 64) >> (8 * (16 - digits));
        out.extend_from_slice(&text.to_le_bytes());
    }
    out.truncate(start + digits);
}

/// How many decimal digits `value` (below 10^16) has; 1 for 0.
#[inline]
fn decimal_digits(value: u64) -> usize {
    debug_assert!(value < FAST_LIMIT);
    let value = value | 1;
    let bits = (u64::BITS - value.leading_zeros()) as usize;
    // ⌊bits × log10(2)⌋: the number of digits of 2^bits - 1, or one less.
    let guess = (bits * 1233) >> 12;
    guess + 1 - usize::from(value < POWERS_OF_TEN[guess])
}

/// `value` (below 10^8) as eight ASCII digits with leading zeros, the most
/// significant in the lowest byte: `value` is split in halves of four
/// digits (32-bit lanes), then pairs (16-bit lanes), then digits (bytes),
/// each division a multiplication and a shift that is exact in the lane's
/// range.
#[inline]
fn eight_digits(value: u32) -> u64 {
    debug_assert!(value < 100_000_000);
    let fours = u64::from(value / 10_000) | u64::from(value % 10_000) << 32;
    // ⌊x / 100⌋ = ⌊x × 10486 / 2^20⌋ for x < 10^4.
    let hundreds = ((fours * 10_486) >> 20) & 0x0000_007f_0000_007f;
    let pairs = (fours - hundreds * 100) << 16 | hundreds;
    // ⌊x / 10⌋ = ⌊x × 103 / 2^10⌋ for x < 100.
    let tens = ((pairs * 103) >> 10) & 0x000f_000f_000f_000f;
    let digits = (pairs - tens * 10) << 8 | tens;
    digits + u64::from_le_bytes([b'0'; 8])
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `value` appended after other output, as the encoder appends it.
    fn appended(write: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = b"x,".to_vec();
        write(&mut out);
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn numbers_around_every_power_of_ten_print_as_display_prints_them() {
        let mut values = vec![0, i64::MIN, i64::MAX, i64::MIN + 1];
        for power in (0..19).map(|k| 10i64.pow(k)) {
            for v in [power - 1, power, power + 1, 2 * power, 9 * power] {
                values.extend([v, -v]);
            }
        }
        for v in values {
            assert_eq!(appended(|out| write_i64(out, v)), format!("x,{v}"));
        }
        for v in [FAST_LIMIT - 1, FAST_LIMIT, u64::MAX] {
            assert_eq!(appended(|out| write_u64(out, v)), format!("x,{v}"));
        }
    }

    #[test]
    fn every_number_below_a_million_prints_as_display_prints_it() {
        let mut out = Vec::new();
        let mut expected = String::new();
        for v in 0..1_000_000u64 {
            write_u64(&mut out, v);
            out.push(b'\n');
            expected.push_str(&format!("{v}\n"));
        }
        assert_eq!(String::from_utf8(out).expect("ASCII"), expected);
    }

    proptest! {
        #[test]
        fn any_number_prints_as_display_prints_it(
            v in prop_oneof![
                any::<i64>(),
                -100_000_000i64..100_000_000,
                (0u32..63).prop_map(|s| (1i64 << s) - 1),
            ],
        ) {
            prop_assert_eq!(appended(|out| write_i64(out, v)), format!("x,{v}"));
            let magnitude = v.unsigned_abs();
            prop_assert_eq!(appended(|out| write_u64(out, magnitude)), format!("x,{magnitude}"));
        }
    }
}

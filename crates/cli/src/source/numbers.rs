//! Fast paths for the commonest forms of number cells: plain integers and
//! short decimals, read as 8-byte words of the text ending where the cell
//! ends, without a loop over their digits or a branch on their sign. Each
//! returns exactly what arrow-cast's parser returns for the text it takes,
//! and `None` for any other text, which then goes to arrow-cast's parser.

/// Each byte of a word set to `byte`.
const fn splat(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

/// `-?[0-9]{1,16}`, the cell `text[start..end]`, as an `i64`.
#[inline(always)]
pub(super) fn plain_integer(text: &[u8], start: usize, end: usize) -> Option<i64> {
    let (negative, start) = split_sign(text, start, end);
    let digits = end - start;
    let magnitude = match digits {
        1..=8 => eight_digits(pad_with_zeros(word(text, end), digits))?,
        9..=16 => {
            let high = pad_with_zeros(word(text, end - 8), digits - 8);
            eight_digits(high)? * 100_000_000 + eight_digits(word(text, end))?
        }
        _ => return None,
    };
    // At most 16 digits: well inside an i64. Negated without a branch (signs
    // in data are unpredictable): two's complement is "flip, then add one".
    let sign = -i64::from(negative);
    Some((magnitude as i64 ^ sign) - sign)
}

/// The cell `text[start..end]` as the unscaled value of a
/// DECIMAL(precision, scale) (see [`sliq_aggregates::parse_decimal`]): what
/// arrow-cast's parser, reading one digit more, and its cast to the
/// column's scale return (see the text decoders' `ReadTypes`). `None`
/// for other text (exponents, blanks) and for values that do not fit the
/// precision once rounded.
#[inline]
pub(super) fn plain_decimal128(
    text: &[u8],
    start: usize,
    end: usize,
    precision: u8,
    scale: u32,
) -> Option<i128> {
    sliq_aggregates::parse_decimal(&text[start..end], precision, scale)
}

/// `-?[0-9]+(\.[0-9]+)?` in at most 8 bytes after the sign, the cell
/// `text[start..end]`, as the nearest `f64`. With so few digits both the
/// integer of the digits and the power of ten are exact doubles, so one
/// correctly rounded division gives the correctly rounded value, which is
/// what arrow-cast's parser returns.
#[inline(always)]
pub(super) fn plain_decimal(text: &[u8], start: usize, end: usize) -> Option<f64> {
    const POWERS_OF_TEN: [f64; 8] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7];
    let (negative, start) = split_sign(text, start, end);
    let width = end - start;
    if !(1..=8).contains(&width) {
        return None;
    }
    let word = word(text, end);
    let dots = zero_bytes(word ^ splat(b'.')) & !0 << (8 * (8 - width));
    // No dot, one dot, or more: `count_ones` without a cost, as the
    // baseline x86-64 target has no `popcnt` (a dozen instructions a cell).
    let (digits, fraction) = match (dots == 0, dots & dots.wrapping_sub(1) == 0) {
        (true, _) => (word, 0),
        (false, true) => {
            // Fraction digits: the bytes above the dot.
            let fraction = (dots.leading_zeros() / 8) as usize;
            if fraction == 0 || fraction + 1 == width {
                return None;
            }
            // Close the gap: the whole digits move up one byte over the dot.
            let above = !0 << (8 * (8 - fraction));
            ((word & above) | ((word << 8) & !above), fraction)
        }
        _ => return None,
    };
    let digits = eight_digits(pad_with_zeros(digits, width - usize::from(fraction > 0)))?;
    // Below 10^8: exact as an i64 and as an f64.
    let magnitude = digits as i64 as f64 / POWERS_OF_TEN[fraction];
    Some(f64::from_bits(
        magnitude.to_bits() | u64::from(negative) << 63,
    ))
}

/// Skips a leading `-` of the cell `text[start..end]`.
fn split_sign(text: &[u8], start: usize, end: usize) -> (bool, usize) {
    let negative = start < end && text.get(start) == Some(&b'-');
    (negative, start + usize::from(negative))
}

/// The 8 bytes of `text` ending at `end` as a little-endian word (the byte
/// before `end` is the highest); `'0'`s stand in for bytes before the
/// text's start.
fn word(text: &[u8], end: usize) -> u64 {
    let bytes = end.checked_sub(8).and_then(|from| text.get(from..end));
    match bytes.and_then(<[u8]>::first_chunk) {
        Some(&bytes) => u64::from_le_bytes(bytes),
        None => {
            let mut bytes = [b'0'; 8];
            let tail = &text[..end.min(text.len())];
            bytes[8 - tail.len()..].copy_from_slice(tail);
            u64::from_le_bytes(bytes)
        }
    }
}

/// `word` with all but its top `digits` (1 to 8) bytes set to `'0'`.
fn pad_with_zeros(word: u64, digits: usize) -> u64 {
    debug_assert!((1..=8).contains(&digits));
    let below = (!0 >> 8) >> (8 * (digits - 1));
    (word & !below) | (splat(b'0') & below)
}

/// The top bit of each byte of `word` that is zero, and no other bit.
fn zero_bytes(word: u64) -> u64 {
    let low_bits = splat(0x7f);
    !(((word & low_bits) + low_bits) | word | low_bits)
}

/// Eight ASCII digits at once (the first, the most significant, in the
/// lowest byte), with a few multiplications of the word holding them;
/// `None` when a byte is not a digit.
fn eight_digits(word: u64) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let digits = word.wrapping_sub(ONES * u64::from(b'0'));
    // A byte above 9 gets its top bit from the addition, one below '0'
    // (borrowing) or above 0x7f has it already.
    if (digits | digits.wrapping_add(ONES * 0x76)) & (ONES * 0x80) != 0 {
        return None;
    }
    // Pairs, then fours, then all eight.
    let pairs = (digits.wrapping_mul(10) + (digits >> 8)) & 0x00ff_00ff_00ff_00ff;
    let fours = (pairs.wrapping_mul(100) + (pairs >> 16)) & 0x0000_ffff_0000_ffff;
    Some((fours.wrapping_mul(10_000) + (fours >> 32)) & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    use arrow_array::types::{Float64Type, Int64Type};
    use arrow_cast::parse::Parser;
    use proptest::prelude::*;

    use super::*;

    /// Text made of the bytes numbers are written with, and a few others.
    fn numberish(len: std::ops::Range<usize>) -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                8 => proptest::char::range('0', '9'),
                1 => proptest::sample::select(vec!['-', '+', '.', 'e', ' ', 'x', '\u{e9}']),
            ],
            len,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    /// `cell` after `before` in one text, as a cell's words see it; and its
    /// span.
    fn in_text(before: &str, cell: &str) -> (Vec<u8>, usize, usize) {
        let text = format!("{before}{cell}").into_bytes();
        (text, before.len(), before.len() + cell.len())
    }

    fn integer(before: &str, cell: &str) -> Option<i64> {
        let (text, start, end) = in_text(before, cell);
        plain_integer(&text, start, end)
    }

    fn decimal(before: &str, cell: &str) -> Option<u64> {
        let (text, start, end) = in_text(before, cell);
        plain_decimal(&text, start, end).map(f64::to_bits)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn integers_parse_as_arrow_cast_parses_them(before in numberish(0..20), cell in numberish(0..20)) {
            if let Some(value) = integer(&before, &cell) {
                prop_assert_eq!(Some(value), Int64Type::parse(&cell), "{:?}", cell);
            }
        }

        #[test]
        fn every_i64_of_16_digits_or_fewer_is_taken(
            before in numberish(0..20),
            value in any::<i64>(),
            digits in 1u32..17,
        ) {
            let value = value % 10i64.pow(digits);
            prop_assert_eq!(integer(&before, &value.to_string()), Some(value));
        }

        #[test]
        fn decimals_parse_as_arrow_cast_parses_them(before in numberish(0..20), cell in numberish(0..20)) {
            if let Some(bits) = decimal(&before, &cell) {
                let arrow = Float64Type::parse(&cell).map(f64::to_bits);
                prop_assert_eq!(Some(bits), arrow, "{:?}", cell);
            }
        }

        #[test]
        fn short_decimals_are_taken_and_round_as_arrow_cast(
            before in numberish(0..20),
            negative in any::<bool>(),
            whole in "[0-9]{1,7}",
            fraction in "[0-9]{0,7}",
        ) {
            let sign = if negative { "-" } else { "" };
            let cell = match fraction.len() {
                0 => format!("{sign}{whole}"),
                _ => format!("{sign}{whole}.{fraction}"),
            };
            let taken = cell.len() - usize::from(negative) <= 8;
            let ours = decimal(&before, &cell);
            prop_assert_eq!(ours.is_some(), taken, "{:?}", cell);
            if taken {
                prop_assert_eq!(ours, Float64Type::parse(&cell).map(f64::to_bits), "{:?}", cell);
            }
        }
    }

    #[test]
    fn edges() {
        assert_eq!(integer("", "9999999999999999"), Some(9_999_999_999_999_999));
        assert_eq!(integer("", "19999999999999999"), None);
        assert_eq!(integer("1,", "-12345678"), Some(-12_345_678));
        assert_eq!(integer("", "00000000"), Some(0));
        assert_eq!(integer("-", "7"), Some(7));
        for refused in ["", "-", "+1", " 1", "1 ", "1.0", "--1", "12345678x", "1-2"] {
            assert_eq!(integer("42", refused), None, "{refused:?}");
        }
        assert_eq!(decimal("", "-0"), Some((-0.0f64).to_bits()));
        assert_eq!(decimal("x", "0.1"), Some(0.1f64.to_bits()));
        assert_eq!(decimal("", "12345678"), Some(12_345_678.0f64.to_bits()));
        assert_eq!(decimal("", "-9.999999"), Some((-9.999999f64).to_bits()));
        assert_eq!(decimal("", "-9.9999999"), None);
        assert_eq!(decimal("1.", "5"), Some(5.0f64.to_bits()));
        for refused in [
            "",
            ".5",
            "5.",
            "1e3",
            "1.2.3",
            "-.5",
            "123456789",
            "NaN",
            "+1",
            "1..2",
        ] {
            assert_eq!(decimal("0", refused), None, "{refused:?}");
        }
    }
}

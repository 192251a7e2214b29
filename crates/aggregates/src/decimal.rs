//! DECIMAL values from text and constants, rounded as SQL rounds them.

/// `[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)` as the unscaled value of a
/// DECIMAL(precision, scale): rounded half away from zero to `scale` digits
/// after the point (as a CAST, DuckDB and PostgreSQL round; rounding looks
/// only at the first digit dropped). `None` for any other text (exponents,
/// blanks) and for a value that does not fit the precision once rounded.
pub fn parse_decimal(text: &[u8], precision: u8, scale: u32) -> Option<i128> {
    let (negative, digits) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mut value, mut kept, mut any_digit) = (0i128, 0u32, false);
    let (mut point, mut round_up, mut dropped) = (false, false, false);
    for &b in digits {
        match b {
            b'0'..=b'9' if point && kept == scale => {
                if !dropped {
                    round_up = b >= b'5';
                    dropped = true;
                }
                any_digit = true;
            }
            b'0'..=b'9' => {
                value = value.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
                kept += u32::from(point);
                any_digit = true;
            }
            b'.' if !point => point = true,
            _ => return None,
        }
    }
    if !any_digit {
        return None;
    }
    value = value.checked_mul(10i128.checked_pow(scale - kept)?)? + i128::from(round_up);
    if value >= 10i128.checked_pow(u32::from(precision))? {
        return None;
    }
    Some(if negative { -value } else { value })
}

/// A finite double as a DECIMAL(precision, scale), from its shortest
/// round-trip digits: the constant `1.005` is the double
/// 1.00499999999999989…, and reads as the 1.01 it was written as.
pub fn decimal_from_f64(v: f64, precision: u8, scale: u32) -> Option<i128> {
    if !v.is_finite() {
        return None;
    }
    // Display never writes an exponent for f64.
    parse_decimal(v.to_string().as_bytes(), precision, scale)
}

/// Appends the decimal `unscaled × 10^-scale` as arrow's display prints it:
/// all `scale` digits after the point, `0.` before a smaller value's
/// (`-0.005`). Arrow formats each value into a new `String`.
pub fn write_decimal(out: &mut Vec<u8>, unscaled: i128, scale: usize) {
    let mut buffer = itoa::Buffer::new();
    let digits = buffer.format(unscaled.unsigned_abs()).as_bytes();
    if unscaled < 0 {
        out.push(b'-');
    }
    if scale == 0 {
        out.extend_from_slice(digits);
    } else if digits.len() > scale {
        let (whole, fraction) = digits.split_at(digits.len() - scale);
        out.extend_from_slice(whole);
        out.push(b'.');
        out.extend_from_slice(fraction);
    } else {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + scale - digits.len(), b'0');
        out.extend_from_slice(digits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_round_half_away_from_zero_and_keep_their_precision() {
        let read = |cell: &str, precision, scale| parse_decimal(cell.as_bytes(), precision, scale);
        assert_eq!(read("2.255", 10, 2), Some(226));
        assert_eq!(read("-2.255", 10, 2), Some(-226));
        assert_eq!(read("2.2549", 10, 2), Some(225));
        assert_eq!(read("+.5", 10, 2), Some(50));
        assert_eq!(read("7.", 3, 0), Some(7));
        assert_eq!(read("0.004", 5, 2), Some(0));
        assert_eq!(read("-0.005", 5, 2), Some(-1));
        assert_eq!(read("99999999.99", 10, 2), Some(9_999_999_999));
        // Past the precision, once rounded, or not a plain decimal.
        for cell in [
            "99999999.995",
            "123456789",
            "1e3",
            ".",
            "-",
            "",
            " 1",
            "1.2.3",
        ] {
            assert_eq!(read(cell, 10, 2), None, "{cell:?}");
        }
        let widest = "9".repeat(38);
        assert_eq!(read(&widest, 38, 0), Some(10i128.pow(38) - 1));
        assert_eq!(read(&format!("{widest}.5"), 38, 0), None);
    }

    #[test]
    fn doubles_read_as_they_were_written() {
        assert_eq!(decimal_from_f64(1.005, 10, 2), Some(101));
        assert_eq!(decimal_from_f64(-0.1, 10, 3), Some(-100));
        assert_eq!(decimal_from_f64(1e-7, 10, 2), Some(0));
        assert_eq!(decimal_from_f64(1e21, 38, 0), Some(10i128.pow(21)));
        assert_eq!(decimal_from_f64(f64::NAN, 10, 2), None);
        assert_eq!(decimal_from_f64(1e9, 10, 2), None);
    }
}

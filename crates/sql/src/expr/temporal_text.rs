//! A TIMESTAMP or a length of time as text, written the way PostgreSQL and
//! DuckDB write them: `2024-01-01 10:00:04.5`, a space between date and
//! time, and `2 days 02:01:04.5` (DuckDB's text for the difference of two
//! timestamps), the fraction of a second only as long as its last non-zero
//! digit. Arrow's cast writes `2024-01-01T10:00:04.500` and `2 days 2 hours
//! 1 mins 4.500 secs`, so `CAST(ts AS VARCHAR)`, `'at ' || ts` and every
//! other such value read as text go through [`temporal_text`] instead.
//! [`super::sql_text()`] writes the call back as the CAST it stands for.

use std::fmt::Write;
use std::sync::{Arc, LazyLock};

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::temporal_conversions::timestamp_s_to_datetime;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use datafusion_common::{DataFusionError, Result, ScalarValue, exec_err};
use datafusion_expr::expr::{Cast, ScalarFunction};
use datafusion_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::error::SqlError;
use crate::expr::sql_text::sql_text;

/// Whether a value of type `from` cast to `target` is written by
/// [`temporal_text`]: a TIMESTAMP without a time zone, or a length of time
/// (the difference of two timestamps), to text.
pub(super) fn writes_temporal_text(from: &DataType, target: &DataType) -> bool {
    matches!(from, DataType::Timestamp(_, None) | DataType::Duration(_)) && target.is_string()
}

/// `CAST(e AS target)` for a TIMESTAMP or a length of time `e` and a text
/// type `target` (see the module docs). A constant is written now; a
/// timestamp out of the calendar's range is an error.
pub(super) fn temporal_text(e: Expr, target: &DataType) -> Result<Expr, SqlError> {
    let Expr::Literal(value, _) = &e else {
        let text =
            Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(&TEMPORAL_TEXT), vec![e]));
        return Ok(match target {
            DataType::Utf8 => text,
            other => Expr::Cast(Cast::new(Box::new(text), other.clone())),
        });
    };
    value
        .to_array()
        .and_then(|array| texts(&array))
        .and_then(|text| ScalarValue::try_from_array(&text, 0))
        .and_then(|text| text.cast_to(target))
        .map(|text| Expr::Literal(text, None))
        .map_err(|_| {
            SqlError::plan(format!(
                "the constant {} cannot be read as VARCHAR",
                sql_text(&e)
            ))
        })
}

/// A TIMESTAMP or length-of-time constant as [`temporal_text`] writes it
/// (for the constants of [`sql_text`]); `None` for any other value.
pub(super) fn constant_text(v: &ScalarValue) -> Option<String> {
    if !writes_temporal_text(&v.data_type(), &DataType::Utf8) {
        return None;
    }
    let text = texts(&v.to_array().ok()?).ok()?;
    let text = text.as_string::<i32>();
    text.is_valid(0).then(|| text.value(0).to_string())
}

/// The value that `e` writes as text, if `e` is a [`temporal_text`] call.
pub(super) fn written_temporal(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::ScalarFunction(f) if f.func.inner().as_ref().is::<TemporalText>() => f.args.first(),
        _ => None,
    }
}

/// The function behind [`temporal_text`]; it has no name a query can call.
static TEMPORAL_TEXT: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(TemporalText::new())));

#[derive(Debug, PartialEq, Eq, Hash)]
struct TemporalText {
    signature: Signature,
}

impl TemporalText {
    fn new() -> Self {
        TemporalText {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for TemporalText {
    fn name(&self) -> &str {
        "sliq_temporal_text"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        match args.args.as_slice() {
            [ColumnarValue::Array(values)] => texts(values).map(ColumnarValue::Array),
            [ColumnarValue::Scalar(value)] => {
                let text = texts(&value.to_array()?)?;
                ScalarValue::try_from_array(&text, 0).map(ColumnarValue::Scalar)
            }
            _ => exec_err!("{} takes one TIMESTAMP or INTERVAL", self.name()),
        }
    }
}

/// How one value, counted in a unit of `per_second` parts of a second, is
/// written into the builder's current string.
type WriteOne = fn(&mut StringBuilder, i64, i64) -> Result<()>;

/// Each timestamp or length of time of `values` as text; NULL stays NULL.
fn texts(values: &ArrayRef) -> Result<ArrayRef> {
    let (unit, write): (TimeUnit, WriteOne) = match values.data_type() {
        &DataType::Timestamp(unit, None) => (unit, write_timestamp),
        &DataType::Duration(unit) => (unit, write_duration),
        other => return exec_err!("cannot write a {other} as a time"),
    };
    let per_second: i64 = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let raw = arrow_cast::cast(values, &DataType::Int64)?;
    let mut out = StringBuilder::with_capacity(raw.len(), raw.len() * 24);
    for value in raw.as_primitive::<Int64Type>() {
        match value {
            Some(value) => {
                write(&mut out, value, per_second)?;
                out.append_value("");
            }
            None => out.append_null(),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// Writes the timestamp `value`, counted in `per_second` parts of a second
/// since 1970-01-01.
fn write_timestamp(out: &mut StringBuilder, value: i64, per_second: i64) -> Result<()> {
    let Some(whole) = timestamp_s_to_datetime(value.div_euclid(per_second)) else {
        return exec_err!("the timestamp {value} (1/{per_second} s) is outside the calendar");
    };
    write!(out, "{whole}").map_err(unwritten)?;
    write_fraction(out, value.rem_euclid(per_second), per_second)
}

/// Writes the length of time `value`, counted in `per_second` parts of a
/// second: whole days, then the time below a day, each with its sign (`-2
/// days -02:01:04.5`); the time is left out when it is 0, unless the days
/// are too (`1 day`, `00:00:00`).
fn write_duration(out: &mut StringBuilder, value: i64, per_second: i64) -> Result<()> {
    let sign = if value < 0 { "-" } else { "" };
    let (value, per_second) = (value.unsigned_abs(), per_second.unsigned_abs());
    let day = 86_400 * per_second;
    let (days, time) = (value / day, value % day);
    if days > 0 {
        let plural = if days == 1 { "" } else { "s" };
        write!(out, "{sign}{days} day{plural}").map_err(unwritten)?;
        if time == 0 {
            return Ok(());
        }
        out.write_char(' ').map_err(unwritten)?;
    }
    let sign = if time > 0 { sign } else { "" };
    let seconds = time / per_second;
    let (hours, minutes, seconds) = (seconds / 3_600, seconds / 60 % 60, seconds % 60);
    write!(out, "{sign}{hours:02}:{minutes:02}:{seconds:02}").map_err(unwritten)?;
    // Both below `per_second`, at most 10^9.
    write_fraction(out, (time % per_second) as i64, per_second as i64)
}

/// Writes `part` of a second (counted in `per_second` parts) as a fraction
/// with no trailing zeros, and nothing when it is 0.
fn write_fraction(out: &mut StringBuilder, part: i64, per_second: i64) -> Result<()> {
    if part == 0 {
        return Ok(());
    }
    let (mut digits, mut width) = (part * (1_000_000_000 / per_second), 9);
    while digits % 10 == 0 {
        digits /= 10;
        width -= 1;
    }
    write!(out, ".{digits:0width$}").map_err(unwritten)
}

/// A write into a string builder, which cannot fail, as an error all the
/// same.
fn unwritten(e: std::fmt::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{
        DurationMillisecondArray, DurationNanosecondArray, TimestampMillisecondArray,
        TimestampNanosecondArray,
    };

    fn written(values: ArrayRef) -> Vec<Option<String>> {
        let text = texts(&values).unwrap();
        text.as_string::<i32>()
            .iter()
            .map(|t| t.map(str::to_string))
            .collect()
    }

    fn some(texts: &[&str]) -> Vec<Option<String>> {
        texts.iter().map(|t| Some(t.to_string())).collect()
    }

    #[test]
    fn timestamps_are_written_with_a_space_and_a_trimmed_fraction() {
        let millis = TimestampMillisecondArray::from(vec![
            Some(1_704_103_204_500),
            Some(1_704_103_200_000),
            None,
            Some(-1),
            Some(1_704_103_200_010),
        ]);
        let mut expected = some(&[
            "2024-01-01 10:00:04.5",
            "2024-01-01 10:00:00",
            "",
            "1969-12-31 23:59:59.999",
            "2024-01-01 10:00:00.01",
        ]);
        expected[2] = None;
        assert_eq!(written(Arc::new(millis)), expected);
        let nanos = TimestampNanosecondArray::from(vec![1_000_000_001, -1_500_000_000]);
        assert_eq!(
            written(Arc::new(nanos)),
            some(&["1970-01-01 00:00:01.000000001", "1969-12-31 23:59:58.5"])
        );
    }

    #[test]
    fn lengths_of_time_are_written_as_duckdb_writes_them() {
        // DuckDB 2.0's text for each difference of two timestamps.
        let day = 86_400_000;
        let millis = DurationMillisecondArray::from(vec![
            2_500,
            2 * day + 7_264_500,
            day,
            -(2 * day + 7_264_500),
            0,
            -4_500,
            1,
            1_096 * day,
            day - 500,
        ]);
        assert_eq!(
            written(Arc::new(millis)),
            some(&[
                "00:00:02.5",
                "2 days 02:01:04.5",
                "1 day",
                "-2 days -02:01:04.5",
                "00:00:00",
                "-00:00:04.5",
                "00:00:00.001",
                "1096 days",
                "23:59:59.5",
            ])
        );
        let nanos = DurationNanosecondArray::from(vec![i64::MIN, 1]);
        assert_eq!(
            written(Arc::new(nanos)),
            some(&["-106751 days -23:47:16.854775808", "00:00:00.000000001"])
        );
    }

    #[test]
    fn a_constant_is_written_at_plan_time() {
        let ts = Expr::Literal(
            ScalarValue::TimestampMillisecond(Some(1_704_103_204_250), None),
            None,
        );
        assert_eq!(
            temporal_text(ts, &DataType::Utf8).unwrap(),
            Expr::Literal(
                ScalarValue::Utf8(Some("2024-01-01 10:00:04.25".into())),
                None
            )
        );
        let null = Expr::Literal(ScalarValue::TimestampMillisecond(None, None), None);
        assert_eq!(
            temporal_text(null, &DataType::Utf8View).unwrap(),
            Expr::Literal(ScalarValue::Utf8View(None), None)
        );
    }
}

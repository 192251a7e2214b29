//! A TIMESTAMP as text, written the way PostgreSQL and DuckDB write it:
//! `2024-01-01 10:00:04.5`, a space between date and time and the fraction
//! of a second only as long as its last non-zero digit. Arrow's cast writes
//! ISO 8601's `2024-01-01T10:00:04.500`, so `CAST(ts AS VARCHAR)`, `'at ' ||
//! ts` and every other TIMESTAMP read as text go through [`timestamp_text`]
//! instead. [`super::sql_text`] writes the call back as the CAST it stands
//! for.

use std::fmt::Write;
use std::sync::{Arc, LazyLock};

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::temporal_conversions::timestamp_s_to_datetime;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use datafusion_common::{DataFusionError, Result, ScalarValue, exec_err};
use datafusion_expr::expr::ScalarFunction;
use datafusion_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::error::SqlError;
use crate::expr::sql_text::sql_text;

/// Whether a value of type `from` cast to `target` is written by
/// [`timestamp_text`]: a TIMESTAMP without a time zone, to text.
pub(super) fn writes_timestamp_text(from: &DataType, target: &DataType) -> bool {
    matches!(from, DataType::Timestamp(_, None)) && *target == DataType::Utf8
}

/// `CAST(e AS VARCHAR)` for a TIMESTAMP `e` (see the module docs). A
/// constant is written now; one out of the calendar's range is an error.
pub(super) fn timestamp_text(e: Expr) -> Result<Expr, SqlError> {
    let Expr::Literal(value, _) = &e else {
        return Ok(Expr::ScalarFunction(ScalarFunction::new_udf(
            Arc::clone(&TIMESTAMP_TEXT),
            vec![e],
        )));
    };
    value
        .to_array()
        .and_then(|array| texts(&array))
        .and_then(|text| ScalarValue::try_from_array(&text, 0))
        .map(|text| Expr::Literal(text, None))
        .map_err(|_| {
            SqlError::plan(format!(
                "the constant {} cannot be read as VARCHAR",
                sql_text(&e)
            ))
        })
}

/// The TIMESTAMP that `e` writes as text, if `e` is a [`timestamp_text`] call.
pub(super) fn written_timestamp(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::ScalarFunction(f) if f.func.inner().as_ref().is::<TimestampText>() => f.args.first(),
        _ => None,
    }
}

/// The function behind [`timestamp_text`]; it has no name a query can call.
static TIMESTAMP_TEXT: LazyLock<Arc<ScalarUDF>> =
    LazyLock::new(|| Arc::new(ScalarUDF::new_from_impl(TimestampText::new())));

#[derive(Debug, PartialEq, Eq, Hash)]
struct TimestampText {
    signature: Signature,
}

impl TimestampText {
    fn new() -> Self {
        TimestampText {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for TimestampText {
    fn name(&self) -> &str {
        "sliq_timestamp_text"
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
            _ => exec_err!("{} takes one TIMESTAMP", self.name()),
        }
    }
}

/// Each timestamp of `values` as text; NULL stays NULL.
fn texts(values: &ArrayRef) -> Result<ArrayRef> {
    let &DataType::Timestamp(unit, None) = values.data_type() else {
        return exec_err!("cannot write a {} as a timestamp", values.data_type());
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
        let Some(value) = value else {
            out.append_null();
            continue;
        };
        let seconds = value.div_euclid(per_second);
        let Some(time) = timestamp_s_to_datetime(seconds) else {
            return exec_err!("the timestamp {value} ({unit:?}) is outside the calendar");
        };
        write_time(
            &mut out,
            time,
            value.rem_euclid(per_second) * (1_000_000_000 / per_second),
        )
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
        out.append_value("");
    }
    Ok(Arc::new(out.finish()))
}

/// Writes `whole` (no fraction of a second) and `nanos`, the fraction, with
/// no trailing zeros and no point when it is zero.
fn write_time(out: &mut impl Write, whole: impl std::fmt::Display, nanos: i64) -> std::fmt::Result {
    write!(out, "{whole}")?;
    if nanos == 0 {
        return Ok(());
    }
    let (mut digits, mut width) = (nanos, 9);
    while digits % 10 == 0 {
        digits /= 10;
        width -= 1;
    }
    write!(out, ".{digits:0width$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::TimestampMillisecondArray;
    use arrow_array::TimestampNanosecondArray;

    fn written(values: ArrayRef) -> Vec<Option<String>> {
        let text = texts(&values).unwrap();
        text.as_string::<i32>()
            .iter()
            .map(|t| t.map(str::to_string))
            .collect()
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
        assert_eq!(
            written(Arc::new(millis)),
            [
                Some("2024-01-01 10:00:04.5".to_string()),
                Some("2024-01-01 10:00:00".to_string()),
                None,
                Some("1969-12-31 23:59:59.999".to_string()),
                Some("2024-01-01 10:00:00.01".to_string()),
            ]
        );
        let nanos = TimestampNanosecondArray::from(vec![1_000_000_001, -1_500_000_000]);
        assert_eq!(
            written(Arc::new(nanos)),
            [
                Some("1970-01-01 00:00:01.000000001".to_string()),
                Some("1969-12-31 23:59:58.5".to_string()),
            ]
        );
    }

    #[test]
    fn a_constant_is_written_at_plan_time() {
        let ts = Expr::Literal(
            ScalarValue::TimestampMillisecond(Some(1_704_103_204_250), None),
            None,
        );
        assert_eq!(
            timestamp_text(ts).unwrap(),
            Expr::Literal(
                ScalarValue::Utf8(Some("2024-01-01 10:00:04.25".into())),
                None
            )
        );
        let null = Expr::Literal(ScalarValue::TimestampMillisecond(None, None), None);
        assert_eq!(
            timestamp_text(null).unwrap(),
            Expr::Literal(ScalarValue::Utf8(None), None)
        );
    }
}

//! Constants in queries: SQL literals as values, and the checks that make
//! a mistake in a constant the query's error at plan time rather than a
//! NULL on every row.

use std::sync::Arc;

use arrow_schema::{ArrowError, DataType, FieldRef};
use datafusion_common::{DataFusionError, ScalarValue};
use datafusion_expr::expr::Cast;
use datafusion_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF};
use datafusion_expr::{Expr, Operator};
use sqlparser::ast::Value;

use super::sql_text::sql_text;
use crate::error::SqlError;
use crate::types::sql_type_name;

/// A SQL literal as a scalar value. A number is a BIGINT when it is a
/// whole number that fits one, an exact DECIMAL(p, 0) when it is a whole
/// number of up to 38 digits (as PostgreSQL's numeric and DuckDB's HUGEINT
/// keep it: `-9223372036854775808` is exact), an exact DECIMAL(p, s) when
/// it is written with a point (`0.1`, as in PostgreSQL and DuckDB), and
/// otherwise (an exponent, more than 38 digits) a DOUBLE, which it must not
/// overflow.
pub fn literal(v: &Value) -> Result<ScalarValue, SqlError> {
    Ok(match v {
        Value::Number(n, _) => {
            if let Ok(i) = n.parse::<i64>() {
                ScalarValue::Int64(Some(i))
            } else if let Some(d) = exact_decimal(n) {
                d
            } else {
                let f: f64 = n
                    .parse()
                    .map_err(|_| SqlError::plan(format!("invalid number {n}")))?;
                if !f.is_finite() {
                    return Err(SqlError::plan(format!(
                        "the number {n} is out of range for DOUBLE"
                    )));
                }
                ScalarValue::Float64(Some(f))
            }
        }
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
            ScalarValue::Utf8(Some(s.clone()))
        }
        Value::Boolean(b) => ScalarValue::Boolean(Some(*b)),
        Value::Null => ScalarValue::Null,
        other => return Err(SqlError::unsupported(format!("the literal {other}"))),
    })
}

/// `-v` as a constant, when `v` is a number: so `-9223372036854775808` is
/// the least BIGINT, not the negation of a number past BIGINT.
pub fn negative_literal(v: &Value) -> Option<Result<ScalarValue, SqlError>> {
    match v {
        Value::Number(n, long) => Some(literal(&Value::Number(format!("-{n}"), *long))),
        _ => None,
    }
}

/// `n` as an exact DECIMAL(p, s) when it is written as digits with at
/// most one point and no exponent (`123`, `0.1`, `-2.50`, `.5`) in at most
/// 38 significant digits: `s` is the number of digits after the point, as
/// written. (A number with an exponent, `1e-3`, is a DOUBLE, as in DuckDB.)
fn exact_decimal(n: &str) -> Option<ScalarValue> {
    let (negative, body) = match n.strip_prefix('-') {
        Some(body) => (true, body),
        None => (false, n),
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    let significant = digits.trim_start_matches('0');
    let scale = fraction.len();
    let precision = significant.len().max(scale).max(1);
    if precision > 38 {
        return None;
    }
    let value: i128 = if significant.is_empty() {
        0
    } else {
        significant.parse().ok()?
    };
    Some(ScalarValue::Decimal128(
        Some(if negative { -value } else { value }),
        precision as u8,
        scale as i8,
    ))
}

/// A cast of a constant, made now: one that fails (`v > 'a'` for a DOUBLE
/// `v`) is an error of the query, as in PostgreSQL and DuckDB, rather than
/// a NULL for every row it meets. Any other expression is left as it is.
pub(super) fn cast_constant(e: Expr) -> Result<Expr, SqlError> {
    let Expr::Cast(Cast { expr, field }) = &e else {
        return Ok(e);
    };
    let data_type = field.data_type();
    let Expr::Literal(value, metadata) = expr.as_ref() else {
        return Ok(e);
    };
    match value.cast_to(data_type) {
        Ok(cast) => Ok(Expr::Literal(cast, metadata.clone())),
        Err(_) => Err(SqlError::plan(format!(
            "the constant {} cannot be read as {}",
            sql_text(expr),
            sql_type_name(data_type)
        ))),
    }
}

/// Why `udf` refuses its constant arguments whatever the rows, if it does:
/// `digest(x, 'sha999')`, `date_trunc('fortnight', t)`, a `date_bin` stride
/// of zero. The call runs once over no rows, with its constants as they
/// are, so such a mistake is the query's error rather than a NULL for every
/// row. A call without constants is not run, and a panic there is no
/// verdict: the rows will tell.
pub(super) fn refused_constant(
    udf: &ScalarUDF,
    args: &[Expr],
    fields: &[FieldRef],
) -> Option<String> {
    if !args.iter().any(|a| matches!(a, Expr::Literal(..))) {
        return None;
    }
    match run_once(udf, args, fields, 0)? {
        Ok(_) => None,
        // DataFusion's prefixes ("Execution error: ") say nothing here.
        Err(DataFusionError::Execution(why) | DataFusionError::Plan(why)) => Some(why),
        Err(e) => Some(e.strip_backtrace()),
    }
}

/// The value of `udf(args)` when every argument is a constant and `udf`
/// gives the same result for the same arguments: the call computed once,
/// now, rather than on every row (`ceil(4.62)` is 5). `None` for any other
/// call, and for one that fails, whose error is [`refused_constant`]'s or
/// the rows'.
pub(super) fn folded_call(
    udf: &ScalarUDF,
    args: &[Expr],
    fields: &[FieldRef],
) -> Option<ScalarValue> {
    let constant = args.iter().all(|a| matches!(a, Expr::Literal(..)));
    if !constant || udf.signature().volatility != datafusion_expr::Volatility::Immutable {
        return None;
    }
    let (return_field, result) = run_once(udf, args, fields, 1)?.ok()?;
    let value = match result {
        ColumnarValue::Scalar(value) => value,
        ColumnarValue::Array(array) if array.len() == 1 => {
            ScalarValue::try_from_array(&array, 0).ok()?
        }
        ColumnarValue::Array(_) => return None,
    };
    (&value.data_type() == return_field.data_type()).then_some(value)
}

/// `udf` run once over `number_rows` rows, its constant arguments as they
/// are and any other NULL on every row: the field it returns and its
/// value. `None` when it panics (no verdict) or an argument's NULLs cannot
/// be made.
fn run_once(
    udf: &ScalarUDF,
    args: &[Expr],
    fields: &[FieldRef],
    number_rows: usize,
) -> Option<datafusion_common::Result<(FieldRef, ColumnarValue)>> {
    let values = args
        .iter()
        .zip(fields)
        .map(|(a, field)| match a {
            Expr::Literal(value, _) => Some(ColumnarValue::Scalar(value.clone())),
            _ => ScalarValue::try_new_null(field.data_type())
                .and_then(|null| null.to_array_of_size(number_rows))
                .ok()
                .map(ColumnarValue::Array),
        })
        .collect::<Option<Vec<_>>>()?;
    let constants: Vec<Option<&ScalarValue>> = args
        .iter()
        .map(|a| match a {
            Expr::Literal(value, _) => Some(value),
            _ => None,
        })
        .collect();
    let run = || {
        let return_field = udf.return_field_from_args(ReturnFieldArgs {
            arg_fields: fields,
            scalar_arguments: &constants,
        })?;
        let value = udf.invoke_with_args(ScalarFunctionArgs {
            args: values,
            arg_fields: fields.to_vec(),
            number_rows,
            return_field: Arc::clone(&return_field),
            config_options: Arc::default(),
        })?;
        Ok((return_field, value))
    };
    crate::panics::catching(run).ok()
}

/// `l op r` computed now, when both operands are numeric constants and
/// `op` is arithmetic: `Some(Ok(value))` to fold it into one constant,
/// `Some(Err(why))` when it divides by zero or overflows (`1 / 0`,
/// `9223372036854775807 + 1`), which is the query's error at plan time,
/// where it can point at the expression, rather than a failure of every
/// row. `None` for anything else, left to the rows.
pub(super) fn constant_arithmetic(
    l: &Expr,
    op: Operator,
    r: &Expr,
) -> Option<Result<ScalarValue, String>> {
    let (Expr::Literal(a, _), Expr::Literal(b, _)) = (l, r) else {
        return None;
    };
    if !(a.data_type().is_numeric() && b.data_type().is_numeric()) {
        return None;
    }
    let result = match op {
        Operator::Plus => a.add_checked(b),
        Operator::Minus => a.sub_checked(b),
        Operator::Multiply => a.mul_checked(b),
        Operator::Divide => a.div(b),
        Operator::Modulo => a.rem(b),
        _ => return None,
    };
    let err = match result {
        Ok(value) => return Some(Ok(value)),
        Err(err) => err,
    };
    let DataFusionError::ArrowError(why, _) = err.find_root() else {
        return None;
    };
    match why.as_ref() {
        ArrowError::DivideByZero => Some(Err("division by zero".to_string())),
        ArrowError::ArithmeticOverflow(_) => Some(Err(format!(
            "the result is out of range for {}",
            sql_type_name(&a.data_type())
        ))),
        _ => None,
    }
}

/// `x op c` for an integer `x` of type `x_type` and a DECIMAL constant `c`,
/// as the same comparison with an integer constant of `x`'s type: `i > 2.5`
/// is `i >= 3`, `i <= 2.5` is `i <= 2`, `i = 2.0` is `i = 2`. The coerced
/// comparison would cast `x` to a DECIMAL on every row. `None` when the
/// integer falls outside `x`'s type, and for `=` and `<>` with a fraction
/// (always false or true, but NULL for a NULL `x`).
pub(super) fn integer_against_decimal(
    x: &Expr,
    x_type: &DataType,
    op: Operator,
    c: &Expr,
) -> Option<Expr> {
    let (op, whole) = integer_bound(x_type, op, c)?;
    Some(Expr::BinaryExpr(datafusion_expr::BinaryExpr::new(
        Box::new(x.clone()),
        op,
        Box::new(Expr::Literal(whole, None)),
    )))
}

/// `x BETWEEN low AND high` for an integer `x` with a DECIMAL constant for a
/// bound, as a BETWEEN of integer constants of `x`'s type (`i BETWEEN 1.5
/// AND 3.5` is `i BETWEEN 2 AND 3`), as [`integer_against_decimal`] does for
/// one comparison. The other bound must have `x`'s type already.
pub(super) fn integer_between(
    x: &Expr,
    x_type: &DataType,
    negated: bool,
    [low, high]: [(&Expr, &DataType); 2],
) -> Option<Expr> {
    let decimal = |e: &Expr| matches!(e, Expr::Literal(ScalarValue::Decimal128(..), _));
    if !(decimal(low.0) || decimal(high.0)) {
        return None;
    }
    let bound = |op, (e, t): (&Expr, &DataType)| match integer_bound(x_type, op, e) {
        Some((_, whole)) => Some(Expr::Literal(whole, None)),
        None => (t == x_type).then(|| e.clone()),
    };
    Some(Expr::Between(datafusion_expr::expr::Between::new(
        Box::new(x.clone()),
        negated,
        Box::new(bound(Operator::GtEq, low)?),
        Box::new(bound(Operator::LtEq, high)?),
    )))
}

/// The comparison and integer constant of `x_type` that `x op c` is for a
/// DECIMAL constant `c` and every integer `x` (see
/// [`integer_against_decimal`]).
fn integer_bound(x_type: &DataType, op: Operator, c: &Expr) -> Option<(Operator, ScalarValue)> {
    let Expr::Literal(ScalarValue::Decimal128(Some(unscaled), _, scale), _) = c else {
        return None;
    };
    if !x_type.is_integer() || *scale < 0 {
        return None;
    }
    let one = 10i128.checked_pow(u32::try_from(*scale).ok()?)?;
    let (floor, fraction) = (unscaled.div_euclid(one), unscaled.rem_euclid(one));
    let (op, whole) = match (op, fraction) {
        (Operator::Eq | Operator::NotEq | Operator::Lt | Operator::LtEq, 0) => (op, floor),
        (Operator::Gt | Operator::GtEq, 0) => (op, floor),
        (Operator::Lt | Operator::LtEq, _) => (Operator::LtEq, floor),
        (Operator::Gt | Operator::GtEq, _) => (Operator::GtEq, floor + 1),
        _ => return None,
    };
    let whole = ScalarValue::Int64(Some(i64::try_from(whole).ok()?))
        .cast_to(x_type)
        .ok()
        .filter(|w| !w.is_null())?;
    Some((op, whole))
}

/// A constant regular expression that does not compile is the query's
/// error; otherwise each row would fail on it (and be NULL).
pub(super) fn check_regex(pattern: &Expr) -> Result<(), SqlError> {
    if let Expr::Literal(ScalarValue::Utf8(Some(p)) | ScalarValue::LargeUtf8(Some(p)), _) = pattern
        && let Err(e) = regex::Regex::new(p)
    {
        let reason = e.to_string();
        // The regex crate draws the pattern with a caret above its message.
        let reason = reason.lines().last().unwrap_or_default().trim();
        let reason = reason.strip_prefix("error: ").unwrap_or(reason);
        return Err(SqlError::plan(format!(
            "invalid regular expression '{p}': {reason}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(n: &str) -> ScalarValue {
        literal(&Value::Number(n.to_string(), false)).unwrap()
    }

    #[test]
    fn numbers_are_bigints_exact_decimals_or_doubles_by_how_they_are_written() {
        let decimal = |v: i128, p: u8, s: i8| ScalarValue::Decimal128(Some(v), p, s);
        assert_eq!(number("42"), ScalarValue::Int64(Some(42)));
        assert_eq!(number("9223372036854775808"), decimal(1 << 63, 19, 0));
        assert_eq!(number("0.1"), decimal(1, 1, 1));
        assert_eq!(number("-2.50"), decimal(-250, 3, 2));
        assert_eq!(number(".5"), decimal(5, 1, 1));
        assert_eq!(number("7."), decimal(7, 1, 0));
        assert_eq!(number("0.001"), decimal(1, 3, 3));
        assert_eq!(number("-0.0"), decimal(0, 1, 1));
        assert_eq!(number("1e-3"), ScalarValue::Float64(Some(1e-3)));
        // Past 38 digits, a DOUBLE.
        let long = format!("0.{}", "3".repeat(39));
        assert_eq!(number(&long), ScalarValue::Float64(Some(1.0 / 3.0)));
        assert!(literal(&Value::Number("1e400".into(), false)).is_err());
    }
}

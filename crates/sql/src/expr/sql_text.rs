//! Planned expressions written back as SQL, for `EXPLAIN` and messages:
//! `v > 1.5 AND k <> 'x'` where DataFusion's own display reads
//! `v > Float64(1.5) AND k != Utf8("x")`.

use arrow_cast::display::{ArrayFormatter, FormatOptions};
use datafusion_common::ScalarValue;
use datafusion_expr::expr::{Between, BinaryExpr, Case, Cast, InList, Like, TryCast};
use datafusion_expr::{Expr, Operator};

use crate::types::sql_type_name;

/// `e` as SQL. Expressions this does not know are shown as DataFusion
/// shows them.
pub fn sql_text(e: &Expr) -> String {
    if let Some(written) = super::float_comparison::written_operand(e) {
        return sql_text(written);
    }
    match e {
        Expr::Literal(v, _) => literal_text(v),
        Expr::Column(c) => c.name.clone(),
        Expr::Alias(alias) => sql_text(&alias.expr),
        Expr::BinaryExpr(b) => binary_text(b),
        // NOT binds less tightly than comparisons, more than AND.
        Expr::Not(x) => format!("NOT {}", operand(x, Operator::And.precedence() + 1)),
        Expr::Negative(x) => super::negation_text(&operand(x, u8::MAX)),
        Expr::IsNull(x) => format!("{} IS NULL", operand(x, u8::MAX)),
        Expr::IsNotNull(x) => format!("{} IS NOT NULL", operand(x, u8::MAX)),
        Expr::IsTrue(x) => format!("{} IS TRUE", operand(x, u8::MAX)),
        Expr::IsFalse(x) => format!("{} IS FALSE", operand(x, u8::MAX)),
        Expr::IsUnknown(x) => format!("{} IS UNKNOWN", operand(x, u8::MAX)),
        Expr::IsNotTrue(x) => format!("{} IS NOT TRUE", operand(x, u8::MAX)),
        Expr::IsNotFalse(x) => format!("{} IS NOT FALSE", operand(x, u8::MAX)),
        Expr::IsNotUnknown(x) => format!("{} IS NOT UNKNOWN", operand(x, u8::MAX)),
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) => {
            let cast = if matches!(e, Expr::TryCast(_)) {
                "TRY_CAST"
            } else {
                "CAST"
            };
            format!(
                "{cast}({} AS {})",
                sql_text(expr),
                sql_type_name(field.data_type())
            )
        }
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => format!(
            "{} {}BETWEEN {} AND {}",
            operand(expr, u8::MAX),
            not(*negated),
            operand(low, u8::MAX),
            operand(high, u8::MAX)
        ),
        Expr::Like(Like {
            negated,
            expr,
            pattern,
            escape_char,
            case_insensitive,
        }) => {
            let like = if *case_insensitive { "ILIKE" } else { "LIKE" };
            let escape = escape_char
                .map(|c| format!(" ESCAPE '{c}'"))
                .unwrap_or_default();
            format!(
                "{} {}{like} {}{escape}",
                operand(expr, u8::MAX),
                not(*negated),
                operand(pattern, u8::MAX)
            )
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => format!(
            "{} {}IN ({})",
            operand(expr, u8::MAX),
            not(*negated),
            list_text(list)
        ),
        Expr::ScalarFunction(_) if let Some(time) = super::temporal_text::written_temporal(e) => {
            format!("CAST({} AS VARCHAR)", sql_text(time))
        }
        Expr::ScalarFunction(f) => format!("{}({})", f.name(), list_text(&f.args)),
        Expr::Case(Case {
            expr,
            when_then_expr,
            else_expr,
        }) => {
            let mut text = "CASE".to_string();
            if let Some(x) = expr {
                text += &format!(" {}", sql_text(x));
            }
            for (when, then) in when_then_expr {
                text += &format!(" WHEN {} THEN {}", sql_text(when), sql_text(then));
            }
            if let Some(x) = else_expr {
                text += &format!(" ELSE {}", sql_text(x));
            }
            text + " END"
        }
        other => other.to_string(),
    }
}

/// A value as SQL writes it as a constant: `'it''s'`, `2.5`, `TRUE`,
/// `TIMESTAMP '2024-01-01 10:00:04.5'`, `NULL`.
pub fn literal_text(v: &ScalarValue) -> String {
    if v.is_null() {
        return "NULL".to_string();
    }
    match v {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => format!("'{}'", s.replace('\'', "''")),
        ScalarValue::Boolean(Some(b)) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        _ if v.data_type().is_temporal() => {
            format!(
                "{} '{}'",
                sql_type_name(&v.data_type()),
                time_constant_text(v)
            )
        }
        _ => v.to_string(),
    }
}

/// A date, time or interval constant: a timestamp or a length of time as
/// `CAST(… AS VARCHAR)` writes it (`2024-01-01 00:00:00.5`), others as
/// arrow formats them (its scalar's own display would give a timestamp's
/// raw count of units).
fn time_constant_text(v: &ScalarValue) -> String {
    if let Some(text) = super::temporal_text::constant_text(v) {
        return text;
    }
    let formatted = v.to_array().ok().and_then(|array| {
        let formatter = ArrayFormatter::try_new(&array, &FormatOptions::default()).ok()?;
        Some(formatter.value(0).to_string())
    });
    formatted.unwrap_or_else(|| v.to_string())
}

/// `l op r`, each operand in parentheses where the operator binds it less
/// tightly than `op` (on the right, also as tightly: `a - (b - c)`).
fn binary_text(b: &BinaryExpr) -> String {
    let precedence = b.op.precedence();
    let op = match b.op {
        Operator::NotEq => "<>".to_string(),
        other => other.to_string(),
    };
    format!(
        "{} {op} {}",
        operand(&b.left, precedence),
        operand(&b.right, precedence.saturating_add(1))
    )
}

/// `e` as an operand of an operator of `precedence` (`u8::MAX` for the
/// operand of `IS NULL`, `BETWEEN` and the like): in parentheses when it is
/// an operation that binds less tightly than that. `NOT`, `BETWEEN`,
/// `LIKE`, `IN` and `IS …` are put in parentheses wherever they stand
/// inside anything but `AND` and `OR`, which is always read right.
fn operand(e: &Expr, precedence: u8) -> String {
    let enclosed = match e {
        Expr::BinaryExpr(b) => b.op.precedence() < precedence,
        Expr::Not(_)
        | Expr::Between(_)
        | Expr::Like(_)
        | Expr::InList(_)
        | Expr::IsNull(_)
        | Expr::IsNotNull(_)
        | Expr::IsTrue(_)
        | Expr::IsFalse(_)
        | Expr::IsUnknown(_)
        | Expr::IsNotTrue(_)
        | Expr::IsNotFalse(_)
        | Expr::IsNotUnknown(_) => precedence > Operator::And.precedence(),
        _ => false,
    };
    match enclosed {
        true => format!("({})", sql_text(e)),
        false => sql_text(e),
    }
}

fn list_text(list: &[Expr]) -> String {
    list.iter().map(sql_text).collect::<Vec<_>>().join(", ")
}

fn not(negated: bool) -> &'static str {
    if negated { "NOT " } else { "" }
}

#[cfg(test)]
mod tests {
    use arrow_schema::DataType;
    use datafusion_expr::{cast, col, lit};

    use super::*;

    #[test]
    fn expressions_read_as_sql() {
        let cases = [
            (
                col("v").gt(lit(1.5)).and(col("k").not_eq(lit("it's"))),
                "v > 1.5 AND k <> 'it''s'",
            ),
            (
                (col("a") - (col("b") - col("c"))) * col("d"),
                "(a - (b - c)) * d",
            ),
            (col("a").or(col("b")).and(col("c")), "(a OR b) AND c"),
            (
                col("i").in_list(vec![lit(1i64), lit(2i64)], true),
                "i NOT IN (1, 2)",
            ),
            (
                cast(col("i"), DataType::Float64).between(lit(0.5), lit(2.5)),
                "CAST(i AS DOUBLE) BETWEEN 0.5 AND 2.5",
            ),
            (!col("k").like(lit("a%")), "k NOT LIKE 'a%'"),
            (Expr::Not(Box::new(col("a").or(col("b")))), "NOT (a OR b)"),
            (Expr::Not(Box::new(col("a").and(col("b")))), "NOT (a AND b)"),
            (
                Expr::Not(Box::new(col("a"))).and(col("b").gt(lit(1i64))),
                "NOT a AND b > 1",
            ),
            (Expr::Not(Box::new(col("a"))).eq(col("b")), "(NOT a) = b"),
            (col("a").is_null().eq(lit(true)), "(a IS NULL) = TRUE"),
            (col("k").is_null().or(lit(true)), "k IS NULL OR TRUE"),
            (lit(ScalarValue::Utf8(None)), "NULL"),
            // `--` would start a comment.
            (Expr::Negative(Box::new(lit(-2i64))), "-(-2)"),
            (Expr::Negative(Box::new(-col("a"))), "-(-a)"),
            (col("a") - lit(-2i64), "a - -2"),
            (
                col("ts").gt(lit(ScalarValue::TimestampMillisecond(
                    Some(1_704_067_200_500),
                    None,
                ))),
                "ts > TIMESTAMP '2024-01-01 00:00:00.5'",
            ),
        ];
        for (e, sql) in cases {
            assert_eq!(sql_text(&e), sql, "{e}");
        }
    }
}

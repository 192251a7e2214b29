//! Float equality as SQL defines it, where DataFusion compares bit patterns.
//!
//! SQL has `-0.0 = 0.0`. DataFusion's comparison operators make `-0.0`
//! `0.0` before comparing, but an `IN` list, the operand of a simple
//! `CASE x WHEN …` and `nullif` compare the bits, so `round(-0.2) IN (0)`
//! was false and `nullif(-0.0, 0)` was `-0.0`, where PostgreSQL and DuckDB
//! give true and NULL. The planner rewrites those three here.

use arrow_schema::DataType;
use datafusion_common::ScalarValue;
use datafusion_expr::expr::Case;
use datafusion_expr::{Expr, Operator, binary_expr};

/// `e`, of type `ty`, with `-0.0` made `0.0` when `ty` is a float (every
/// other value, NaN included, is left as it is), so that comparing bit
/// patterns compares values. A constant is rewritten now.
pub(super) fn zero_unsigned(e: Expr, ty: &DataType) -> Expr {
    if !ty.is_floating() {
        return e;
    }
    // x + 0.0 is x for every x but -0.0, for which it is 0.0 (IEEE 754,
    // rounding to nearest).
    match e {
        Expr::Literal(ScalarValue::Float64(v), metadata) => {
            Expr::Literal(ScalarValue::Float64(v.map(|x| x + 0.0)), metadata)
        }
        Expr::Literal(ScalarValue::Float32(v), metadata) => {
            Expr::Literal(ScalarValue::Float32(v.map(|x| x + 0.0)), metadata)
        }
        other => match ScalarValue::new_zero(ty) {
            Ok(zero) => binary_expr(other, Operator::Plus, Expr::Literal(zero, None)),
            Err(_) => other,
        },
    }
}

/// `nullif(a, b)` for floats `a` and `b` of type `ty`: `CASE WHEN a = b
/// THEN NULL ELSE a END`, whose `=` compares values. `None` when `ty` is
/// not a float, for which DataFusion's `nullif` is right as it is.
pub(super) fn float_nullif(a: &Expr, b: &Expr, ty: &DataType) -> Option<Expr> {
    if !ty.is_floating() {
        return None;
    }
    let null = ScalarValue::try_from(ty).ok()?;
    let equal = binary_expr(a.clone(), Operator::Eq, b.clone());
    Some(Expr::Case(Case::new(
        None,
        vec![(Box::new(equal), Box::new(Expr::Literal(null, None)))],
        Some(Box::new(a.clone())),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_constant_loses_its_sign_of_zero_only() {
        let unsigned = |x: f64| match zero_unsigned(datafusion_expr::lit(x), &DataType::Float64) {
            Expr::Literal(ScalarValue::Float64(Some(y)), _) => y,
            other => panic!("not a constant: {other}"),
        };
        assert!(unsigned(-0.0).is_sign_positive());
        assert_eq!(unsigned(-2.5), -2.5);
        assert!(unsigned(f64::NAN).is_nan());
        assert_eq!(unsigned(f64::NEG_INFINITY), f64::NEG_INFINITY);
    }

    #[test]
    fn other_types_are_left_alone() {
        let e = datafusion_expr::col("x");
        assert_eq!(zero_unsigned(e.clone(), &DataType::Int64), e);
        assert!(float_nullif(&e, &e, &DataType::Utf8).is_none());
    }
}

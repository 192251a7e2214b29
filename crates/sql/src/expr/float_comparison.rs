//! Float comparison as SQL defines it, where DataFusion compares bit
//! patterns or IEEE's total order.
//!
//! SQL has `-0.0 = 0.0`, and PostgreSQL and DuckDB take every NaN as one
//! value, equal to itself and above every number. DataFusion makes `-0.0`
//! `0.0` before its comparison operators, but compares the bits in an `IN`
//! list, the operand of a simple `CASE x WHEN …` and `nullif`, and orders by
//! IEEE's total order everywhere, where a negative NaN (what `0.0 / 0.0`
//! and `power(-1, 0.5)` give on x86-64) sorts below −∞. So `round(-0.2) IN
//! (0)` was false, and `power(v, 0.5) > 0` false for a negative `v` while
//! `CAST('NaN' AS DOUBLE) > 0` was true. The planner gives every float that a
//! comparison reads its canonical form first ([`canonical`]).

use arrow_schema::DataType;
use datafusion_common::ScalarValue;
use datafusion_expr::expr::Case;
use datafusion_expr::{Expr, Operator, binary_expr};

use super::functions::scalar_function;

/// `e`, of type `ty`, with `-0.0` made `0.0` and every NaN the positive
/// quiet NaN when `ty` is a float, every other value left as it is, so that
/// bit patterns and IEEE's total order compare as SQL does. A constant is
/// rewritten now.
pub(super) fn canonical(e: Expr, ty: &DataType) -> Expr {
    if !ty.is_floating() {
        return e;
    }
    // x + 0.0 is x for every x but -0.0, for which it is 0.0 (IEEE 754,
    // rounding to nearest); nanvl then replaces any NaN.
    match e {
        Expr::Literal(ScalarValue::Float64(v), metadata) => Expr::Literal(
            ScalarValue::Float64(v.map(|x| if x.is_nan() { f64::NAN } else { x + 0.0 })),
            metadata,
        ),
        Expr::Literal(ScalarValue::Float32(v), metadata) => Expr::Literal(
            ScalarValue::Float32(v.map(|x| if x.is_nan() { f32::NAN } else { x + 0.0 })),
            metadata,
        ),
        other => {
            let (Ok(zero), Some(nanvl)) = (ScalarValue::new_zero(ty), scalar_function("nanvl"))
            else {
                return other;
            };
            let nan = match ty {
                DataType::Float32 => ScalarValue::Float32(Some(f32::NAN)),
                _ => ScalarValue::Float64(Some(f64::NAN)),
            };
            let unsigned_zero = binary_expr(other, Operator::Plus, Expr::Literal(zero, None));
            match ty {
                // nanvl takes FLOAT and DOUBLE.
                DataType::Float32 | DataType::Float64 => {
                    nanvl.call(vec![unsigned_zero, Expr::Literal(nan, None)])
                }
                _ => unsigned_zero,
            }
        }
    }
}

/// The operand of `e` when `e` is [`canonical`]'s rewrite of it, so that
/// `EXPLAIN` and messages show the expression as it was written.
pub(super) fn written_operand(e: &Expr) -> Option<&Expr> {
    let Expr::ScalarFunction(f) = e else {
        return None;
    };
    let [Expr::BinaryExpr(sum), Expr::Literal(nan, _)] = f.args.as_slice() else {
        return None;
    };
    let is_nan = matches!(nan, ScalarValue::Float64(Some(x)) if x.is_nan())
        || matches!(nan, ScalarValue::Float32(Some(x)) if x.is_nan());
    let adds_zero = sum.op == Operator::Plus
        && matches!(
            sum.right.as_ref(),
            Expr::Literal(
                ScalarValue::Float64(Some(0.0)) | ScalarValue::Float32(Some(0.0)),
                _
            )
        );
    (f.name() == "nanvl" && is_nan && adds_zero).then_some(sum.left.as_ref())
}

/// Whether `op` compares its operands.
pub(super) fn compares(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

/// `nullif(a, b)` for floats `a` and `b` of type `ty`: `CASE WHEN a = b
/// THEN NULL ELSE a END`, comparing their canonical forms. `None` when `ty`
/// is not a float, for which DataFusion's `nullif` is right as it is.
pub(super) fn float_nullif(a: &Expr, b: &Expr, ty: &DataType) -> Option<Expr> {
    if !ty.is_floating() {
        return None;
    }
    let null = ScalarValue::try_from(ty).ok()?;
    let equal = binary_expr(
        canonical(a.clone(), ty),
        Operator::Eq,
        canonical(b.clone(), ty),
    );
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
    fn a_float_constant_loses_the_sign_of_a_zero_or_a_nan_only() {
        let canonical_f64 = |x: f64| match canonical(datafusion_expr::lit(x), &DataType::Float64) {
            Expr::Literal(ScalarValue::Float64(Some(y)), _) => y,
            other => panic!("not a constant: {other}"),
        };
        assert!(canonical_f64(-0.0).is_sign_positive());
        assert_eq!(canonical_f64(-2.5), -2.5);
        let nan = canonical_f64(-f64::NAN);
        assert!(nan.is_nan() && nan.is_sign_positive());
        assert_eq!(canonical_f64(f64::NEG_INFINITY), f64::NEG_INFINITY);
    }

    #[test]
    fn the_rewrite_shows_as_its_operand() {
        let v = datafusion_expr::col("v");
        let rewritten = canonical(v.clone(), &DataType::Float64);
        assert_ne!(rewritten, v);
        assert_eq!(written_operand(&rewritten), Some(&v));
        assert_eq!(written_operand(&v), None);
    }

    #[test]
    fn other_types_are_left_alone() {
        let e = datafusion_expr::col("x");
        assert_eq!(canonical(e.clone(), &DataType::Int64), e);
        assert!(float_nullif(&e, &e, &DataType::Utf8).is_none());
    }
}

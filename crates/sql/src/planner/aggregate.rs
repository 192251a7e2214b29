//! Aggregate calls in select items and `QUALIFY`: each becomes a column of
//! the intermediate schema, computed over a window group.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field};
use datafusion_common::Column;
use datafusion_expr::Expr;
use sliq_aggregates::registry::{self, CallOptions};
use sliq_aggregates::{ArgType, Literal, OutputType, ValueType};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments, NullTreatment};

use super::object_name;
use crate::error::{SqlError, SqlErrorKind};
use crate::expr::{
    Aggregates, DURATION_MS, ExprConverter, Place, SUBQUERY_IN_EXPRESSION, is_scalar_function,
    literal, location_of, negative_literal, over_scalar_function, unknown_function,
};
use crate::plan::{
    AggregateCall, AggregateFunction, Catalog, DistinctCount, WindowGroup, aggregate_column,
};
use crate::types::{canonical_arrow_type, sql_type_name, value_type};

/// The Arrow type of an aggregate result.
pub fn output_arrow_type(t: &OutputType) -> DataType {
    match t {
        OutputType::Scalar(v) => canonical_arrow_type(*v),
        OutputType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|(name, v)| Arc::new(Field::new(*name, canonical_arrow_type(*v), true)))
                .collect(),
        ),
    }
}

pub(super) struct AggregatePlanner<'a> {
    pub(super) converter: &'a ExprConverter<'a>,
    pub(super) catalog: &'a dyn Catalog,
    pub(super) stream_event_time: Option<String>,
    /// Why a RANGE frame without `ORDER BY` has no event time.
    pub(super) no_event_time: String,
    pub(super) group_keys: &'a [Expr],
    pub(super) group_names: &'a [String],
    pub(super) named_windows: &'a HashMap<String, &'a ast::NamedWindowExpr>,
    pub(super) windows: Vec<WindowGroup>,
    pub(super) aggregates: Vec<AggregateCall>,
}

impl AggregatePlanner<'_> {
    pub(super) fn convert_item(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        let converter = self.converter;
        let mut hook = |f: &ast::Function| self.aggregate(f);
        converter.convert(e, &mut Aggregates::Planned(&mut hook))
    }

    fn aggregate(&mut self, f: &ast::Function) -> Result<Expr, SqlError> {
        let name = object_name(&f.name).to_ascii_lowercase();
        let user = self.catalog.user_aggregate(&name);
        if user.is_none() {
            let reason = match name.as_str() {
                "lead" => Some(
                    "lead (a stream cannot wait for later rows; lag reads earlier ones)".into(),
                ),
                "rank" | "dense_rank" | "percent_rank" | "cume_dist" | "ntile" | "nth_value" => {
                    Some(format!(
                        "the window function {name} (row_number, lag, first_value, last_value \
                         and the aggregates are supported)"
                    ))
                }
                "median" | "percentile_cont" | "percentile_disc" | "percentile" | "quantile"
                | "quantile_cont" | "quantile_disc" | "mode" => Some(
                    "exact order statistics, which no window keeps in constant time per row \
                     (try approx_median or approx_percentile)"
                        .into(),
                ),
                "string_agg" | "array_agg" | "listagg" | "group_concat" | "json_agg" => Some(
                    "aggregates whose result grows with the window, which no window computes \
                     in constant time per row (lag and first_value read single rows)"
                        .into(),
                ),
                _ => None,
            };
            if let Some(reason) = reason {
                return Err(SqlError::unsupported(reason).or_at(location_of(&f.name)));
            }
        }
        if user.is_none() && !registry::is_aggregate(&name) {
            return Err(if is_scalar_function(&name) {
                over_scalar_function(&name, location_of(&f.name))
            } else {
                unknown_function(&name, location_of(&f.name))
            });
        }
        let list = match &f.args {
            FunctionArguments::List(list) => Some(list),
            FunctionArguments::None => None,
            FunctionArguments::Subquery(_) => {
                return Err(SqlError::unsupported(SUBQUERY_IN_EXPRESSION));
            }
        };
        let distinct =
            list.is_some_and(|l| l.duplicate_treatment == Some(ast::DuplicateTreatment::Distinct));
        let counts_distinct = distinct && user.is_none() && name == "count";
        if distinct && !counts_distinct && (user.is_some() || !registry::ignores_duplicates(&name))
        {
            return Err(SqlError::unsupported(format!(
                "{name}(DISTINCT …) (count(DISTINCT x) is supported, and DISTINCT where it \
                 changes nothing, as in min and max)"
            ))
            .or_at(location_of(&f.name)));
        }
        let ordered_by = within_group_argument(&name, f)?;
        let mut ignore_nulls = matches!(f.null_treatment, Some(NullTreatment::IgnoreNulls));
        if let Some(l) = list {
            for clause in &l.clauses {
                match clause {
                    ast::FunctionArgumentClause::IgnoreOrRespectNulls(
                        NullTreatment::IgnoreNulls,
                    ) => ignore_nulls = true,
                    ast::FunctionArgumentClause::IgnoreOrRespectNulls(
                        NullTreatment::RespectNulls,
                    ) => {}
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "{other} in an aggregate call"
                        )));
                    }
                }
            }
        }
        // Arguments: expressions become typed columns, literals stay constants.
        let mut arg_types = Vec::new();
        let mut arg_exprs = Vec::new();
        let mut averages_length = false;
        let written = list.map(|l| l.args.as_slice()).unwrap_or_default();
        for arg in ordered_by.iter().chain(written) {
            let e = match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => e,
                FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if name == "count" => continue,
                other => return Err(SqlError::unsupported(format!("the argument {other}"))),
            };
            let hoisted = null_treatment_of_argument(e);
            let e = match &hoisted {
                Some((treatment, plain)) => {
                    ignore_nulls |= *treatment == NullTreatment::IgnoreNulls;
                    plain
                }
                None => e,
            };
            let converted = self.converter.convert_in(e, Place::AggregateArgument)?;
            // avg of a length of time, as DuckDB has it: the average count of
            // milliseconds, read back as a length of time.
            let converted = match self.converter.type_of(&converted)? {
                DataType::Duration(_) if name == "avg" && user.is_none() => {
                    averages_length = true;
                    let millis = self.converter.cast_to(converted, &DURATION_MS)?;
                    self.converter.cast_to(millis, &DataType::Int64)?
                }
                _ => converted,
            };
            let literal_value = match e {
                ast::Expr::Value(v) => to_literal(&literal(&v.value)?),
                ast::Expr::UnaryOp {
                    op: ast::UnaryOperator::Minus,
                    expr,
                } => match expr.as_ref() {
                    ast::Expr::Value(v) => negative_literal(&v.value)
                        .transpose()?
                        .and_then(|negative| to_literal(&negative)),
                    _ => None,
                },
                _ => None,
            };
            let t = self.converter.type_of(&converted)?;
            let ty = value_type(&t).ok_or_else(|| {
                SqlError::at(
                    SqlErrorKind::Plan(format!(
                        "{name} cannot take an argument of type {} ({e})",
                        sql_type_name(&t)
                    )),
                    location_of(e),
                )
            })?;
            arg_types.push(match literal_value {
                Some(l) => ArgType {
                    ty: if l == Literal::Null {
                        ty
                    } else {
                        ArgType::literal(l.clone()).ty
                    },
                    literal: Some(l),
                },
                None => ArgType::column(ty),
            });
            arg_exprs.push(converted);
        }
        let function = match user {
            None if counts_distinct => match arg_types.as_slice() {
                [arg] => AggregateFunction::DistinctCount(DistinctCount::new(arg.ty)),
                _ => {
                    return Err(SqlError::at(
                        SqlErrorKind::Plan(format!(
                            "count(DISTINCT …) takes one argument, got {}",
                            arg_types.len()
                        )),
                        location_of(&f.name),
                    ));
                }
            },
            Some(u) => {
                let given: Vec<ValueType> = arg_types.iter().map(|a| a.ty).collect();
                if given.len() != u.inputs().len() {
                    let expected: Vec<String> =
                        u.inputs().iter().map(ToString::to_string).collect();
                    return Err(SqlError::at(
                        SqlErrorKind::Plan(format!(
                            "{name} takes ({}), got {} arguments",
                            expected.join(", "),
                            given.len()
                        )),
                        location_of(&f.name),
                    ));
                }
                AggregateFunction::User(u)
            }
            None => AggregateFunction::Builtin(
                registry::resolve(&name, &arg_types, CallOptions { ignore_nulls })
                    .map_err(|e| SqlError::at(SqlErrorKind::Aggregate(e), location_of(&f.name)))?,
            ),
        };
        let inputs = function.inputs().to_vec();
        if let AggregateFunction::Builtin(resolved) = &function
            && resolved.swaps_arguments()
            && arg_exprs.len() >= 2
        {
            arg_exprs.swap(0, 1);
        }
        let args = arg_exprs
            .into_iter()
            .zip(&inputs)
            .map(|(e, ty)| self.converter.cast_to(e, &canonical_arrow_type(*ty)))
            .collect::<Result<Vec<_>, _>>()?;
        let filter = f
            .filter
            .as_deref()
            .map(|p| {
                let e = self.converter.convert_in(p, Place::Filter)?;
                self.converter
                    .cast_to(e, &DataType::Boolean)
                    .map_err(|err| err.or_at(location_of(p)))
            })
            .transpose()?;
        let fixed_frame = match &function {
            AggregateFunction::Builtin(resolved) => resolved.fixed_frame(),
            AggregateFunction::User(_) | AggregateFunction::DistinctCount(_) => None,
        };
        if let (Some(_), Some(filter)) = (fixed_frame, &f.filter) {
            // As in PostgreSQL: FILTER belongs to aggregates, and lag or
            // row_number count rows whatever a filter would leave out.
            return Err(SqlError::unsupported(format!(
                "FILTER on the window function {name} (only aggregates take it)"
            ))
            .or_at(location_of(filter.as_ref())));
        }
        let window = self.window(f, fixed_frame)?;
        let mut display = f.clone();
        display.over = None;
        let display = display.to_string();
        // The same call over the same window (in a select item and in
        // QUALIFY, say) is computed once.
        let same = self.aggregates.iter().position(|a| {
            a.window == window && a.display == display && a.args == args && a.filter == filter
        });
        let index = match same {
            Some(index) => index,
            None => {
                self.converter.add_column(
                    &aggregate_column(self.aggregates.len()),
                    output_arrow_type(function.output_type()),
                )?;
                self.aggregates.push(AggregateCall {
                    function,
                    args,
                    filter,
                    window,
                    display,
                });
                self.aggregates.len() - 1
            }
        };
        let result = Expr::Column(Column::new_unqualified(aggregate_column(index)));
        if !averages_length {
            return Ok(result);
        }
        // Rounded to the millisecond.
        let millis = self.converter.cast_to(result, &DataType::Int64)?;
        self.converter.cast_to(millis, &DURATION_MS)
    }
}

/// The value argument of an ordered-set call,
/// `approx_percentile_cont(q) WITHIN GROUP (ORDER BY x)` (DataFusion's and
/// PostgreSQL's form): `x`, which goes first, as in `approx_percentile(x, q)`.
/// `None` for a call without `WITHIN GROUP`.
fn within_group_argument(name: &str, f: &ast::Function) -> Result<Option<FunctionArg>, SqlError> {
    let Some(first) = f.within_group.first() else {
        return Ok(None);
    };
    let refused =
        |what: String, at: &ast::Expr| Err(SqlError::unsupported(what).or_at(location_of(at)));
    if !registry::takes_within_group(name) {
        return refused(
            format!(
                "WITHIN GROUP in {name} (approx_percentile_cont(q) WITHIN GROUP (ORDER BY x) \
                 takes it)"
            ),
            &first.expr,
        );
    }
    let [order] = f.within_group.as_slice() else {
        return refused(
            "WITHIN GROUP ordering by more than one expression".into(),
            &f.within_group[1].expr,
        );
    };
    if order.options.asc == Some(false) {
        return refused(
            "WITHIN GROUP (ORDER BY … DESC) (the percentile 1 − q ascending is the same)".into(),
            &order.expr,
        );
    }
    Ok(Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(
        order.expr.clone(),
    ))))
}

/// A constant argument as the aggregate registry sees it; `None` for one it
/// has no literal for (a typed constant such as `DATE '2024-01-02'`), which
/// is then an argument like any expression.
fn to_literal(v: &datafusion_common::ScalarValue) -> Option<Literal> {
    use datafusion_common::ScalarValue as S;
    Some(match v {
        S::Int64(Some(i)) => Literal::Int64(*i),
        S::Float64(Some(f)) => Literal::Float64(*f),
        S::Decimal128(Some(unscaled), precision, scale) => Literal::Decimal {
            unscaled: *unscaled,
            precision: *precision,
            scale: *scale,
        },
        S::Utf8(Some(s)) => Literal::Utf8(s.clone()),
        S::Boolean(Some(b)) => Literal::Boolean(*b),
        v if v.is_null() => Literal::Null,
        _ => return None,
    })
}

/// `g(…) IGNORE NULLS` written as an aggregate's argument, as in
/// `first_value(upper(s) IGNORE NULLS)`: sqlparser gives the clause to the
/// scalar function `g`, which cannot take it, where DuckDB and BigQuery give
/// it to the aggregate around. Returns the clause and `g(…)` without it.
fn null_treatment_of_argument(e: &ast::Expr) -> Option<(NullTreatment, ast::Expr)> {
    let ast::Expr::Function(g) = e else {
        return None;
    };
    let treatment = g.null_treatment?;
    if g.over.is_some() || !is_scalar_function(&g.name.to_string().to_ascii_lowercase()) {
        return None;
    }
    let mut plain = g.clone();
    plain.null_treatment = None;
    Some((treatment, ast::Expr::Function(plain)))
}

//! sqlparser expressions → type-checked `datafusion_expr::Expr`.
//!
//! Only scalar SQL is converted here; window aggregate calls are handed to
//! a callback (the planner), which replaces each with a column reference.

use std::cell::RefCell;
use std::sync::Arc;

use arrow_schema::{DataType, FieldRef, TimeUnit};
use datafusion_common::{Column, DFSchema, ScalarValue};
use datafusion_expr::expr::{Between, BinaryExpr, Case, Cast, InList, Like};
use datafusion_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion_expr::type_coercion::binary::{BinaryTypeCoercer, comparison_coercion};
use datafusion_expr::{Expr, ExprSchemable, Operator};
use sqlparser::ast::{self, BinaryOperator, Spanned, UnaryOperator, Value};

use crate::error::{Location, SqlError, SqlErrorKind, closest};
use crate::parser::DurationError;
use crate::plan::Catalog;
use crate::types::{arrow_type, sql_type_name};

mod constants;
mod duration_parts;
mod float_comparison;
mod functions;
mod sql_text;
mod temporal_text;

use constants::{
    cast_constant, check_regex, constant_arithmetic, folded_call, integer_against_decimal,
    integer_between, refused_constant,
};
pub use constants::{literal, negative_literal};
use duration_parts::duration_part;
use float_comparison::{canonical, compares, float_nullif};
use functions::{
    DUCKDB_TIME_FUNCTIONS, group_window_function, is_clock_function, is_duckdb_time_function,
    operator_function,
};
pub use functions::{
    FunctionInfo, builtin_functions, is_scalar_call, is_scalar_function, like,
    over_scalar_function, scalar_function, unknown_function,
};
pub use sql_text::{literal_text, sql_text};
use temporal_text::{temporal_text, writes_temporal_text};

/// The location of an AST node's start, when sqlparser knows it.
pub fn location_of(node: &impl Spanned) -> Option<Location> {
    span_location(node.span())
}

/// The location of an identifier.
pub fn ident_location(ident: &ast::Ident) -> Option<Location> {
    span_location(ident.span)
}

/// Where `span` starts, unless it is empty (line 0).
pub fn span_location(span: sqlparser::tokenizer::Span) -> Option<Location> {
    (span.start.line > 0).then_some(Location {
        line: span.start.line,
        column: span.start.column,
    })
}

/// The decimal type of scale 0 that `t`, a decimal with a fraction, rounds
/// into (with a digit more before the point, for a carry: 9.5 is 10);
/// `None` for any other type.
fn whole_decimal(t: &DataType) -> Option<DataType> {
    use arrow_schema::{
        DECIMAL32_MAX_PRECISION, DECIMAL64_MAX_PRECISION, DECIMAL128_MAX_PRECISION,
        DECIMAL256_MAX_PRECISION,
    };
    let digits = |precision: u8, scale: i8, max: u8| {
        (scale > 0).then(|| {
            let whole = i16::from(precision) - i16::from(scale) + 1;
            whole.clamp(1, i16::from(max)) as u8
        })
    };
    match *t {
        DataType::Decimal32(p, s) => {
            digits(p, s, DECIMAL32_MAX_PRECISION).map(|p| DataType::Decimal32(p, 0))
        }
        DataType::Decimal64(p, s) => {
            digits(p, s, DECIMAL64_MAX_PRECISION).map(|p| DataType::Decimal64(p, 0))
        }
        DataType::Decimal128(p, s) => {
            digits(p, s, DECIMAL128_MAX_PRECISION).map(|p| DataType::Decimal128(p, 0))
        }
        DataType::Decimal256(p, s) => {
            digits(p, s, DECIMAL256_MAX_PRECISION).map(|p| DataType::Decimal256(p, 0))
        }
        _ => None,
    }
}

/// For `ceil(x)`, `floor(x)`, `trunc(x)` and `trunc(x, n)` with `x` a
/// DECIMAL(p, s) of a fraction (`s > 0`) and `n` a constant below `s`: `p`,
/// `s` and the scale the result keeps (`n`, or 0 for a negative `n` or
/// none). `None` for any other call.
fn decimal_rounded_to(function: &str, args: &[Expr], fields: &[FieldRef]) -> Option<(u8, i8, i8)> {
    let DataType::Decimal128(precision, scale @ 1..) = *fields.first()?.data_type() else {
        return None;
    };
    let kept = match (function, args) {
        ("ceil" | "floor" | "trunc", [_]) => 0,
        ("trunc", [_, Expr::Literal(ScalarValue::Int64(Some(n)), _)]) if *n < i64::from(scale) => {
            i8::try_from(*n).unwrap_or(0).max(0)
        }
        _ => return None,
    };
    Some((precision, scale, kept))
}

/// `-operand` as SQL, for the text of an operand: `-(-2)`, since `--2`
/// would start a comment.
fn negation_text(operand: &str) -> String {
    match operand.starts_with('-') {
        true => format!("-({operand})"),
        false => format!("-{operand}"),
    }
}

/// `x` (a DOUBLE) rounded to the nearest whole number, halves to the even
/// one: DataFusion's `round` takes halves away from zero, so a half is
/// `2 · round(x / 2)` (both steps exact in binary floating point).
fn round_ties_even(x: Expr) -> Expr {
    let (Some(round), Some(trunc), Some(abs)) = (
        scalar_function("round"),
        scalar_function("trunc"),
        scalar_function("abs"),
    ) else {
        return x;
    };
    let fraction = abs.call(vec![x.clone() - trunc.call(vec![x.clone()])]);
    let half = datafusion_expr::binary_expr(fraction, Operator::Eq, datafusion_expr::lit(0.5f64));
    let even =
        datafusion_expr::lit(2.0f64) * round.call(vec![x.clone() / datafusion_expr::lit(2.0f64)]);
    Expr::Case(Case::new(
        None,
        vec![(Box::new(half), Box::new(even))],
        Some(Box::new(round.call(vec![x]))),
    ))
}

/// `pattern`, a LIKE pattern whose escape character is `escape`, written
/// with backslash escapes instead (a backslash of its own becomes `\\`).
fn with_backslash_escapes(pattern: &str, escape: char) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len() + 2);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c == escape => match chars.next() {
                Some(escaped) => {
                    if matches!(escaped, '%' | '_' | '\\') {
                        out.push('\\');
                    }
                    out.push(escaped);
                }
                None => {
                    return Err(format!(
                        "the LIKE pattern '{pattern}' ends with its escape character '{escape}'"
                    ));
                }
            },
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A clause of `f` that only an aggregate call takes (`DISTINCT`, `FILTER`,
/// `WITHIN GROUP`, `IGNORE NULLS`, an `ORDER BY` among its arguments), as
/// written; `None` if it has none.
fn aggregate_clause(f: &ast::Function, list: Option<&ast::FunctionArgumentList>) -> Option<String> {
    if list.is_some_and(|l| l.duplicate_treatment == Some(ast::DuplicateTreatment::Distinct)) {
        return Some("DISTINCT".into());
    }
    if f.filter.is_some() {
        return Some("FILTER".into());
    }
    if !f.within_group.is_empty() {
        return Some("WITHIN GROUP".into());
    }
    if let Some(treatment) = &f.null_treatment {
        return Some(treatment.to_string());
    }
    list.and_then(|l| l.clauses.first())
        .map(ToString::to_string)
}

/// `e` without the parentheses around it, if any (for naming it in
/// parentheses).
fn unnested(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(inner) => unnested(inner),
        other => other,
    }
}

/// What a subquery inside an expression is refused as: a continuous query
/// reads one stream, or one subquery in `FROM`.
pub(crate) const SUBQUERY_IN_EXPRESSION: &str =
    "subqueries in expressions (a subquery may be read in FROM: SELECT … FROM (SELECT …) AS d)";

/// Converts scalar expressions over a schema. Aggregate calls go to
/// `on_aggregate`, which returns the expression that stands for the result.
pub struct ExprConverter<'a> {
    /// The columns in scope; aggregate results join them as they are planned.
    schema: RefCell<DFSchema>,
    /// What the columns belong to, for errors: `stream 's'` or a subquery.
    relation: String,
    /// The name columns may be qualified with: the stream's, or its alias
    /// in `FROM s AS x` (which then hides the stream's name, as in SQL).
    qualifier: &'a str,
    /// Where user-defined aggregates are found, to tell one standing where
    /// no aggregate may from an unknown function.
    catalog: Option<&'a dyn Catalog>,
}

/// Callback for aggregate calls met inside an expression.
pub type AggregateHook<'h> = dyn FnMut(&ast::Function) -> Result<Expr, SqlError> + 'h;

/// What becomes of the aggregate calls met in an expression.
pub enum Aggregates<'h, 'x> {
    /// The hook plans each one and returns the expression that stands for
    /// its result (select items, `QUALIFY`).
    Planned(&'h mut AggregateHook<'x>),
    /// None may stand here: one is an error that names the place.
    Refused(Place),
}

/// A place in a query where no aggregate (nor `lag` or `row_number`) may
/// stand, named in the error for one that does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// `WHERE`, which filters rows before any window sees them.
    Where,
    /// `GROUP BY` keys.
    GroupBy,
    /// `PARTITION BY` keys.
    PartitionBy,
    /// A window's `ORDER BY`.
    WindowOrder,
    /// An aggregate's arguments.
    AggregateArgument,
    /// An aggregate's `FILTER (WHERE …)`.
    Filter,
    /// `INSERT … VALUES`.
    Values,
}

impl Place {
    /// The message for aggregate (or window function) `name` standing here.
    fn refusal(self, name: &str) -> String {
        let what = match name {
            "lag" | "row_number" => "a window function",
            _ => "an aggregate",
        };
        let (place, hint) = match self {
            Place::Where => ("WHERE", " (QUALIFY filters on aggregates)"),
            Place::GroupBy => ("GROUP BY", ""),
            Place::PartitionBy => ("PARTITION BY", ""),
            Place::WindowOrder => ("a window's ORDER BY", ""),
            Place::AggregateArgument => (
                "the arguments of another aggregate",
                " (aggregates do not nest; a query in FROM can aggregate another's results)",
            ),
            Place::Filter => ("an aggregate's FILTER", ""),
            Place::Values => ("VALUES", ""),
        };
        format!("{name} is {what}, not allowed in {place}{hint}")
    }
}

impl<'a> ExprConverter<'a> {
    /// A converter for expressions over `schema`, a row of `stream`.
    pub fn new(schema: DFSchema, stream: &'a str) -> Self {
        ExprConverter {
            schema: RefCell::new(schema),
            relation: format!("stream '{stream}'"),
            qualifier: stream,
            catalog: None,
        }
    }

    /// A converter for expressions over `schema`, a row of a subquery's
    /// results; its `alias` qualifies the columns (empty: no alias, and
    /// nothing qualifies them).
    pub fn for_subquery(schema: DFSchema, alias: &'a str) -> Self {
        ExprConverter {
            schema: RefCell::new(schema),
            relation: match alias {
                "" => "the subquery".to_string(),
                alias => format!("subquery '{alias}'"),
            },
            qualifier: alias,
            catalog: None,
        }
    }

    /// Columns are qualified with `alias` instead of the stream's name.
    pub fn aliased(mut self, alias: &'a str) -> Self {
        self.qualifier = alias;
        self
    }

    /// User-defined aggregates are looked up in `catalog`.
    pub fn with_catalog(mut self, catalog: &'a dyn Catalog) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Brings a column into scope (an aggregate's result), so that
    /// expressions around the aggregate type-check.
    pub fn add_column(&self, name: &str, data_type: DataType) -> Result<(), SqlError> {
        let mut fields: Vec<arrow_schema::Field> = self
            .schema
            .borrow()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(arrow_schema::Field::new(name, data_type, true));
        let schema = DFSchema::try_from(arrow_schema::Schema::new(fields))
            .map_err(|e| SqlError::plan(e.to_string()))?;
        *self.schema.borrow_mut() = schema;
        Ok(())
    }

    /// Converts `e`; `aggregates` says what its aggregate calls become.
    pub fn convert(
        &self,
        e: &ast::Expr,
        aggregates: &mut Aggregates<'_, '_>,
    ) -> Result<Expr, SqlError> {
        self.convert_inner(e, aggregates)
            .map_err(|err| err.or_at(location_of(e)))
    }

    /// Converts `e`, which stands in `place`, where no aggregate may.
    pub fn convert_in(&self, e: &ast::Expr, place: Place) -> Result<Expr, SqlError> {
        self.convert(e, &mut Aggregates::Refused(place))
    }

    fn convert_inner(
        &self,
        e: &ast::Expr,
        aggregates: &mut Aggregates<'_, '_>,
    ) -> Result<Expr, SqlError> {
        use ast::Expr as A;
        let boxed = |x: Expr| Box::new(x);
        Ok(match e {
            A::Identifier(ident) => self.column(&ident.value, ident_location(ident))?,
            A::CompoundIdentifier(parts) => {
                // `stream.column` (or `alias.column`).
                let (qualifier, column) = match parts.as_slice() {
                    [q, c] => (q, c),
                    _ => return Err(SqlError::unsupported(format!("the name {e}"))),
                };
                if !qualifier.value.eq_ignore_ascii_case(self.qualifier) {
                    return Err(SqlError::at(
                        SqlErrorKind::UnknownStream {
                            name: qualifier.value.clone(),
                            suggestion: (!self.qualifier.is_empty())
                                .then(|| self.qualifier.to_string()),
                        },
                        ident_location(qualifier),
                    ));
                }
                self.column(&column.value, ident_location(column))?
            }
            A::Value(v) => Expr::Literal(literal(&v.value)?, None),
            A::Nested(inner) => self.convert(inner, aggregates)?,
            A::BinaryOp { left, op, right } => {
                let l = self.convert(left, aggregates)?;
                let r = self.convert(right, aggregates)?;
                let op = binary_operator(op)?;
                if matches!(
                    op,
                    Operator::RegexMatch
                        | Operator::RegexIMatch
                        | Operator::RegexNotMatch
                        | Operator::RegexNotIMatch
                ) {
                    check_regex(&r).map_err(|err| err.or_at(location_of(right.as_ref())))?;
                }
                self.binary(l, op, r, [left, right])?
            }
            A::UnaryOp { op, expr } => {
                if *op == UnaryOperator::Minus
                    && let A::Value(v) = expr.as_ref()
                    && let Some(negative) = negative_literal(&v.value)
                {
                    return Ok(Expr::Literal(negative?, None));
                }
                let inner = self.convert(expr, aggregates)?;
                match op {
                    UnaryOperator::Not => {
                        Expr::Not(boxed(self.cast_to(inner, &DataType::Boolean)?))
                    }
                    UnaryOperator::Minus => {
                        let t = self.type_of(&inner)?;
                        if !(t.is_numeric()
                            || t.is_null()
                            || matches!(t, DataType::Interval(_) | DataType::Duration(_)))
                        {
                            return Err(SqlError::at(
                                SqlErrorKind::Plan(format!(
                                    "cannot negate {expr}, a {}",
                                    sql_type_name(&t)
                                )),
                                location_of(expr.as_ref()),
                            ));
                        }
                        // A constant is negated now: `-(-9223372036854775807 - 1)`
                        // is out of range at plan time, not on every row.
                        match inner {
                            Expr::Literal(value, _) if t.is_numeric() => {
                                let negated = value.arithmetic_negate().map_err(|_| {
                                    SqlError::at(
                                        SqlErrorKind::Plan(format!(
                                            "{} cannot be computed: the result is out of range \
                                             for {}",
                                            negation_text(&expr.to_string()),
                                            sql_type_name(&t)
                                        )),
                                        location_of(expr.as_ref()),
                                    )
                                })?;
                                Expr::Literal(negated, None)
                            }
                            // DataFusion negates no length of time: its
                            // count is negated.
                            inner if matches!(t, DataType::Duration(_)) => {
                                let count = self.cast_to(inner, &DataType::Int64)?;
                                self.cast_to(Expr::Negative(boxed(count)), &t)?
                            }
                            inner => Expr::Negative(boxed(inner)),
                        }
                    }
                    UnaryOperator::Plus => inner,
                    other => return Err(SqlError::unsupported(format!("the operator {other}"))),
                }
            }
            A::IsNull(x) => Expr::IsNull(boxed(self.convert(x, aggregates)?)),
            A::IsNotNull(x) => Expr::IsNotNull(boxed(self.convert(x, aggregates)?)),
            A::IsTrue(x) => Expr::IsTrue(boxed(self.convert(x, aggregates)?)),
            A::IsFalse(x) => Expr::IsFalse(boxed(self.convert(x, aggregates)?)),
            A::IsNotTrue(x) => Expr::IsNotTrue(boxed(self.convert(x, aggregates)?)),
            A::IsNotFalse(x) => Expr::IsNotFalse(boxed(self.convert(x, aggregates)?)),
            A::IsUnknown(x) => Expr::IsUnknown(boxed(self.convert(x, aggregates)?)),
            A::IsNotUnknown(x) => Expr::IsNotUnknown(boxed(self.convert(x, aggregates)?)),
            A::IsDistinctFrom(a, b) | A::IsNotDistinctFrom(a, b) => {
                let l = self.convert(a, aggregates)?;
                let r = self.convert(b, aggregates)?;
                let op = match e {
                    A::IsDistinctFrom(..) => Operator::IsDistinctFrom,
                    _ => Operator::IsNotDistinctFrom,
                };
                self.binary(l, op, r, [a, b])?
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (x, lo, hi) = (
                    self.convert(expr, aggregates)?,
                    self.convert(low, aggregates)?,
                    self.convert(high, aggregates)?,
                );
                let types = [&x, &lo, &hi].map(|e| self.type_of(e));
                if let [Ok(xt), Ok(lt), Ok(ht)] = &types
                    && let Some(between) = integer_between(&x, xt, *negated, [(&lo, lt), (&hi, ht)])
                {
                    return Ok(between);
                }
                let common = self.common_type(&[&x, &lo, &hi])?;
                let [x, lo, hi] =
                    <[Expr; 3]>::try_from(self.cast_each_for_comparison(vec![x, lo, hi], &common)?)
                        .map_err(|_| SqlError::plan("BETWEEN takes three operands"))?;
                Expr::Between(Between::new(boxed(x), *negated, boxed(lo), boxed(hi)))
            }
            A::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.convert(expr, aggregates)?;
                let items = list
                    .iter()
                    .map(|i| self.convert(i, aggregates))
                    .collect::<Result<Vec<_>, _>>()?;
                let all: Vec<&Expr> = std::iter::once(&x).chain(items.iter()).collect();
                let common = self.common_type(&all)?;
                let items = self.cast_each_for_comparison(items, &common)?;
                let x = canonical(self.cast_to(x, &common)?, &common);
                if items.iter().all(|i| i.column_refs().is_empty()) {
                    Expr::InList(InList::new(boxed(x), items, *negated))
                } else {
                    // DataFusion takes an IN list whose items all give one
                    // value over no rows for a set of constants, and a CASE
                    // over the row's columns gives one: its set is wrong. A
                    // list that reads the row is the comparisons IN stands
                    // for, which keep its NULLs: x = a OR x = b, and for NOT
                    // IN x <> a AND x <> b.
                    let (op, join): (Operator, fn(Expr, Expr) -> Expr) = if *negated {
                        (Operator::NotEq, Expr::and)
                    } else {
                        (Operator::Eq, Expr::or)
                    };
                    items
                        .into_iter()
                        .map(|i| Expr::BinaryExpr(BinaryExpr::new(boxed(x.clone()), op, boxed(i))))
                        .reduce(join)
                        .ok_or_else(|| SqlError::plan("IN takes at least one value"))?
                }
            }
            A::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => self.like(
                *negated,
                expr,
                pattern,
                escape_char.as_ref(),
                false,
                aggregates,
            )?,
            A::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => self.like(
                *negated,
                expr,
                pattern,
                escape_char.as_ref(),
                true,
                aggregates,
            )?,
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = operand
                    .as_ref()
                    .map(|o| self.convert(o, aggregates))
                    .transpose()?;
                let mut whens = Vec::new();
                let mut thens = Vec::new();
                for c in conditions {
                    whens.push(self.convert(&c.condition, aggregates)?);
                    thens.push(self.convert(&c.result, aggregates)?);
                }
                let otherwise = else_result
                    .as_ref()
                    .map(|x| self.convert(x, aggregates))
                    .transpose()?;
                let result_refs: Vec<&Expr> = thens.iter().chain(otherwise.iter()).collect();
                let result_type = self.common_type(&result_refs)?;
                let (operand, whens) = match operand {
                    Some(op) => {
                        let refs: Vec<&Expr> = std::iter::once(&op).chain(whens.iter()).collect();
                        let t = self.common_type(&refs)?;
                        let whens = self.cast_each_for_comparison(whens, &t)?;
                        (Some(boxed(canonical(self.cast_to(op, &t)?, &t))), whens)
                    }
                    None => {
                        let whens = self.cast_each(whens, &DataType::Boolean)?;
                        (None, whens)
                    }
                };
                let mut pairs = Vec::new();
                for (w, t) in whens.into_iter().zip(thens) {
                    pairs.push((boxed(w), boxed(self.cast_to(t, &result_type)?)));
                }
                let otherwise = otherwise
                    .map(|o| self.cast_to(o, &result_type))
                    .transpose()?
                    .map(boxed);
                Expr::Case(Case::new(operand, pairs, otherwise))
            }
            A::Cast {
                kind,
                expr,
                data_type,
                format,
                ..
            } => {
                if let Some(format) = format {
                    return Err(SqlError::unsupported(format!(
                        "CAST … FORMAT {format} (cast, then format with to_char)"
                    ))
                    .or_at(location_of(e)));
                }
                let inner = self.convert(expr, aggregates)?;
                let target = arrow_type(data_type).map_err(|err| err.or_at(location_of(e)))?;
                let inner = self.rounded_for(inner, &target)?;
                if writes_temporal_text(&self.type_of(&inner)?, &target) {
                    return temporal_text(inner, &target).map_err(|err| err.or_at(location_of(e)));
                }
                match kind {
                    ast::CastKind::TryCast | ast::CastKind::SafeCast => {
                        Expr::TryCast(datafusion_expr::expr::TryCast::new(boxed(inner), target))
                    }
                    _ => cast_constant(Expr::Cast(Cast::new(boxed(inner), target)))?,
                }
            }
            A::Extract { field, expr, .. } => {
                // EXTRACT(MINUTE FROM ts) is date_part('minute', ts).
                let udf = scalar_function("date_part")
                    .ok_or_else(|| SqlError::unsupported(format!("the expression {e}")))?;
                let part = Expr::Literal(
                    ScalarValue::Utf8(Some(field.to_string().to_ascii_lowercase())),
                    None,
                );
                let value = self.convert(expr, aggregates)?;
                self.apply_udf("extract", udf, vec![part, value], location_of(e))?
            }
            A::Ceil { expr, field } | A::Floor { expr, field } => {
                let name = match e {
                    A::Ceil { .. } => "ceil",
                    _ => "floor",
                };
                if !matches!(
                    field,
                    ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime)
                ) {
                    return Err(SqlError::unsupported(format!(
                        "{e} (write {name}(x), round(x, n) or date_trunc)"
                    ))
                    .or_at(location_of(e)));
                }
                let x = self.convert(expr, aggregates)?;
                self.call(name, vec![x], location_of(e))?
            }
            A::Position { expr, r#in } => {
                // POSITION(x IN s) is strpos(s, x).
                let needle = self.convert(expr, aggregates)?;
                let haystack = self.convert(r#in, aggregates)?;
                self.call("strpos", vec![haystack, needle], location_of(e))?
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.convert(expr, aggregates)?];
                args.push(match substring_from {
                    Some(from) => self.convert(from, aggregates)?,
                    None => Expr::Literal(ScalarValue::Int64(Some(1)), None),
                });
                if let Some(length) = substring_for {
                    args.push(self.convert(length, aggregates)?);
                }
                self.call("substr", args, location_of(e))?
            }
            A::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters,
            } => {
                let name = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "ltrim",
                    Some(ast::TrimWhereField::Trailing) => "rtrim",
                    Some(ast::TrimWhereField::Both) | None => "btrim",
                };
                let mut args = vec![self.convert(expr, aggregates)?];
                let what = match (trim_what, trim_characters.as_deref()) {
                    (Some(what), _) => Some(what.as_ref()),
                    (None, Some([what])) => Some(what),
                    (None, Some(_)) => {
                        return Err(SqlError::unsupported(format!(
                            "{e} (trim one string of characters)"
                        )));
                    }
                    (None, None) => None,
                };
                if let Some(what) = what {
                    args.push(self.convert(what, aggregates)?);
                }
                self.call(name, args, location_of(e))?
            }
            A::TypedString(typed) => {
                // DATE '2024-01-01' is CAST('2024-01-01' AS DATE).
                let text = Expr::Literal(literal(&typed.value.value)?, None);
                let target =
                    arrow_type(&typed.data_type).map_err(|err| err.or_at(location_of(e)))?;
                cast_constant(Expr::Cast(Cast::new(boxed(text), target)))
                    .map_err(|err| err.or_at(location_of(e)))?
            }
            A::SimilarTo { .. } => {
                // DataFusion runs SIMILAR TO as a POSIX regex, without
                // SQL's `%` and `_` or its whole-string match.
                return Err(SqlError::unsupported(
                    "SIMILAR TO (write LIKE, or a regular expression with ~)",
                )
                .or_at(location_of(e)));
            }
            A::Function(f) if is_clock_function(f) => {
                return Err(SqlError::unsupported(format!(
                    "{}: a continuous query has no single 'now' (use the stream's event time)",
                    f.name
                ))
                .or_at(location_of(&f.name)));
            }
            A::Function(f) if let Some(refusal) = group_window_function(f) => {
                return Err(refusal);
            }
            A::Function(f) if f.over.is_none() && is_scalar_call(f) => {
                self.scalar_call(f, aggregates)?
            }
            A::Function(f) => match aggregates {
                Aggregates::Planned(plan) => plan(f)?,
                Aggregates::Refused(place) => return Err(self.refused_call(f, *place)),
            },
            A::Subquery(_) | A::InSubquery { .. } | A::Exists { .. } => {
                return Err(SqlError::unsupported(SUBQUERY_IN_EXPRESSION));
            }
            A::Interval(interval) => {
                // A fixed length of time (as in RANGE frames), for
                // `ts - INTERVAL '1' HOUR` or `date_bin(INTERVAL '30' SECOND, ts)`.
                let nanos = match crate::planner::interval_ms(interval) {
                    Err(DurationError::Malformed) => Err(
                        "an interval here is a fixed length of time in ms, s, m, h or d, such as INTERVAL '30' SECOND or INTERVAL '1m30s'",
                    ),
                    // Intervals count nanoseconds in an i64.
                    ms => ms.ok().and_then(|ms| ms.checked_mul(1_000_000)).ok_or(
                        "longer than an interval of time can be (about 292 years)",
                    ),
                }
                .map_err(|why| {
                    SqlError::at(SqlErrorKind::Plan(format!("{e}: {why}")), location_of(e))
                })?;
                Expr::Literal(ScalarValue::new_interval_mdn(0, 0, nanos), None)
            }
            other => return Err(SqlError::unsupported(format!("the expression {other}"))),
        })
    }

    /// The error for call `f` in `place`, where no aggregate may stand: it
    /// is an aggregate, a scalar function given `OVER`, or no function.
    fn refused_call(&self, f: &ast::Function, place: Place) -> SqlError {
        let name = f.name.to_string().to_ascii_lowercase();
        let location = location_of(&f.name);
        let user_aggregate = self
            .catalog
            .is_some_and(|c| c.user_aggregate(&name).is_some());
        if sliq_aggregates::registry::is_aggregate(&name) || user_aggregate {
            SqlError::at(SqlErrorKind::Plan(place.refusal(&name)), location)
        } else if is_scalar_function(&name) {
            over_scalar_function(&name, location)
        } else {
            unknown_function(&name, location)
        }
    }

    /// A scalar function call such as `round(v, 2)` or `lower(key)`.
    fn scalar_call(
        &self,
        f: &ast::Function,
        aggregates: &mut Aggregates<'_, '_>,
    ) -> Result<Expr, SqlError> {
        let name = f.name.to_string().to_ascii_lowercase();
        let udf = scalar_function(&name);
        let operator = operator_function(&name);
        if udf.is_none() && operator.is_none() && !is_duckdb_time_function(&name) {
            return Err(unknown_function(&name, location_of(&f.name)));
        }
        let list = match &f.args {
            ast::FunctionArguments::List(list) => Some(list),
            ast::FunctionArguments::None => None,
            ast::FunctionArguments::Subquery(_) => {
                return Err(SqlError::unsupported(SUBQUERY_IN_EXPRESSION));
            }
        };
        if let Some(clause) = aggregate_clause(f, list) {
            return Err(SqlError::unsupported(format!(
                "{clause} in the scalar function {name} (only aggregates take it)"
            ))
            .or_at(location_of(&f.name)));
        }
        let list = list.map(|l| l.args.as_slice()).unwrap_or_default();
        let mut written = Vec::new();
        for arg in list {
            match arg {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => written.push(e),
                other => {
                    return Err(SqlError::unsupported(format!(
                        "the argument {other} of {name}"
                    )));
                }
            }
        }
        let args = written
            .iter()
            .map(|e| self.convert(e, aggregates))
            .collect::<Result<Vec<_>, _>>()?;
        if is_duckdb_time_function(&name) {
            return self.duckdb_time_function(&name, args, location_of(&f.name));
        }
        let Some(udf) = udf else {
            let (Some(op), [l, r], [l_written, r_written]) =
                (operator, args.as_slice(), written.as_slice())
            else {
                return Err(SqlError::at(
                    SqlErrorKind::Plan(format!("{name} takes two arguments")),
                    location_of(&f.name),
                ));
            };
            return self
                .binary(l.clone(), op, r.clone(), [*l_written, *r_written])
                .map_err(|err| err.or_at(location_of(&f.name)));
        };
        if name.starts_with("regexp_")
            && let Some(pattern) = args.get(1)
        {
            check_regex(pattern).map_err(|err| err.or_at(location_of(&f.name)))?;
        }
        self.apply_udf(&name, udf, args, location_of(&f.name))
    }

    /// One of DuckDB's time functions ([`DUCKDB_TIME_FUNCTIONS`]), written
    /// as DataFusion's: `epoch(t)` as `date_part('epoch', t)`, `epoch_ms` as
    /// casts (TIMESTAMP is in milliseconds), `time_bucket` as `date_bin`
    /// from DuckDB's origin.
    fn duckdb_time_function(
        &self,
        name: &str,
        args: Vec<Expr>,
        location: Option<Location>,
    ) -> Result<Expr, SqlError> {
        /// 2000-01-03 00:00:00, a Monday: DuckDB's origin for buckets.
        const DUCKDB_BUCKET_ORIGIN_MS: i64 = 946_857_600_000;
        let millis = DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None);
        let types = args
            .iter()
            .map(|a| self.type_of(a))
            .collect::<Result<Vec<_>, _>>()?;
        match (name, args.as_slice(), types.as_slice()) {
            ("epoch", [t], _) => self.call(
                "date_part",
                vec![datafusion_expr::lit("epoch"), t.clone()],
                location,
            ),
            ("epoch_ms", [ms], [t]) if t.is_integer() => {
                self.cast_to(self.cast_to(ms.clone(), &DataType::Int64)?, &millis)
            }
            ("epoch_ms", [t], _) => {
                self.cast_to(self.cast_to(t.clone(), &millis)?, &DataType::Int64)
            }
            ("time_bucket", [width, t], _) => {
                let origin = ScalarValue::TimestampMillisecond(Some(DUCKDB_BUCKET_ORIGIN_MS), None);
                let args = vec![width.clone(), t.clone(), Expr::Literal(origin, None)];
                self.call("date_bin", args, location)
            }
            ("time_bucket", [_, _, _], _) => self.call("date_bin", args, location),
            ("date_diff" | "datediff", [Expr::Literal(part, _), start, end], _)
                if let Some(part) = part.try_as_str().flatten() =>
            {
                self.date_diff(&part.to_ascii_lowercase(), start, end, location)
            }
            _ => {
                let signature = DUCKDB_TIME_FUNCTIONS
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or("", |(_, signature)| signature);
                let given: Vec<String> = types.iter().map(sql_type_name).collect();
                Err(SqlError::at(
                    SqlErrorKind::Plan(format!(
                        "{name}({}) does not match any signature of {name}: expected {signature}",
                        given.join(", ")
                    )),
                    location,
                ))
            }
        }
    }

    /// DuckDB's `date_diff(part, start, end)`: how many boundaries of
    /// `part` lie after `start` up to `end` (negative when `end` is
    /// earlier). Fixed parts count the difference of both times truncated
    /// to the part; a week is whole days over 7, as DuckDB counts it; months,
    /// quarters and years count calendar fields.
    fn date_diff(
        &self,
        part: &str,
        start: &Expr,
        end: &Expr,
        location: Option<Location>,
    ) -> Result<Expr, SqlError> {
        let millis = DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None);
        let truncated_ms = |p: &str, t: &Expr| -> Result<Expr, SqlError> {
            let t = self.cast_to(t.clone(), &millis)?;
            let t = self.call("date_trunc", vec![datafusion_expr::lit(p), t], location)?;
            self.cast_to(self.cast_to(t, &millis)?, &DataType::Int64)
        };
        let field = |p: &str, t: &Expr| -> Result<Expr, SqlError> {
            let value = self.call(
                "date_part",
                vec![datafusion_expr::lit(p), t.clone()],
                location,
            )?;
            self.cast_to(value, &DataType::Int64)
        };
        let fixed = |p: &str, unit_ms: i64| -> Result<Expr, SqlError> {
            let elapsed = truncated_ms(p, end)? - truncated_ms(p, start)?;
            Ok(elapsed / datafusion_expr::lit(unit_ms))
        };
        let calendar = |per_year: i64, p: &str| -> Result<Expr, SqlError> {
            let count = |t: &Expr| -> Result<Expr, SqlError> {
                Ok(match per_year {
                    1 => field("year", t)?,
                    _ => field("year", t)? * datafusion_expr::lit(per_year) + field(p, t)?,
                })
            };
            Ok(count(end)? - count(start)?)
        };
        match part {
            "millisecond" | "milliseconds" => fixed("millisecond", 1),
            "second" | "seconds" => fixed("second", 1_000),
            "minute" | "minutes" => fixed("minute", 60_000),
            "hour" | "hours" => fixed("hour", 3_600_000),
            "day" | "days" => fixed("day", 86_400_000),
            "week" | "weeks" => Ok(fixed("day", 86_400_000)? / datafusion_expr::lit(7i64)),
            "month" | "months" => calendar(12, "month"),
            "quarter" | "quarters" => calendar(4, "quarter"),
            "year" | "years" => calendar(1, "year"),
            other => Err(SqlError::at(
                SqlErrorKind::Plan(format!(
                    "date_diff: unknown part '{other}' (millisecond, second, minute, hour, day, \
                     week, month, quarter or year)"
                )),
                location,
            )),
        }
    }

    /// The built-in scalar function `name` applied to `args`, for the
    /// expressions SQL writes with keywords (`POSITION(x IN s)`, `CEIL(x)`).
    fn call(
        &self,
        name: &str,
        args: Vec<Expr>,
        location: Option<Location>,
    ) -> Result<Expr, SqlError> {
        let udf = scalar_function(name)
            .ok_or_else(|| SqlError::unsupported(format!("the function {name}")).or_at(location))?;
        self.apply_udf(name, udf, args, location)
    }

    /// `udf(args)`, with the arguments coerced to its signature; errors
    /// point at `location`, the function's name.
    fn apply_udf(
        &self,
        name: &str,
        udf: &Arc<datafusion_expr::ScalarUDF>,
        args: Vec<Expr>,
        location: Option<Location>,
    ) -> Result<Expr, SqlError> {
        let (args, types): (Vec<Expr>, Vec<DataType>) = self
            .decimals_beside_floats_as_double(args)?
            .into_iter()
            .unzip();
        let fields: Vec<FieldRef> = types
            .into_iter()
            .map(|t| Arc::new(arrow_schema::Field::new("arg", t, true)))
            .collect();
        let coerced =
            datafusion_expr::type_coercion::functions::fields_with_udf(&fields, udf.as_ref())
                .map_err(|e| {
                    let given: Vec<String> = fields
                        .iter()
                        .map(|f| sql_type_name(f.data_type()))
                        .collect();
                    // DataFusion words this as an internal error and asks
                    // for a bug report; for a query it is a wrong call.
                    let expected = match udf.documentation() {
                        // Under the name the query called it by
                        // (`sign` for DataFusion's `signum`).
                        Some(doc) => match doc.syntax_example.strip_prefix(udf.name()) {
                            Some(rest) => format!("expected {name}{rest}"),
                            None => format!("expected {}", doc.syntax_example),
                        },
                        None => e.strip_backtrace(),
                    };
                    SqlError::at(
                        SqlErrorKind::Plan(format!(
                            "{name}({}) does not match any signature of {name}: {expected}",
                            given.join(", ")
                        )),
                        location,
                    )
                })?;
        let args = args
            .into_iter()
            .zip(&coerced)
            .map(|(a, field)| self.cast_to(a, field.data_type()))
            .collect::<Result<Vec<_>, _>>()?;
        if udf.name() == "date_part"
            && let ([Expr::Literal(part, _), d], [_, field]) = (args.as_slice(), coerced.as_slice())
            && let Some(part) = part.try_as_str().flatten()
        {
            // An INTERVAL constant is a length of time too (DataFusion's
            // parts of one count whole seconds, as of a duration).
            let length = match (field.data_type(), d) {
                (DataType::Duration(unit), _) => Some((d.clone(), *unit)),
                (_, Expr::Literal(ScalarValue::IntervalMonthDayNano(Some(v)), _))
                    if v.months == 0 && v.days == 0 =>
                {
                    let nanos = ScalarValue::DurationNanosecond(Some(v.nanoseconds));
                    Some((Expr::Literal(nanos, None), TimeUnit::Nanosecond))
                }
                _ => None,
            };
            if let Some((d, unit)) = length {
                return duration_part(part, d, unit)
                    .map_err(|why| SqlError::at(SqlErrorKind::Plan(why), location));
            }
        }
        if name == "nullif"
            && let ([a, b], [field, _]) = (args.as_slice(), coerced.as_slice())
            && let Some(by_value) = float_nullif(a, b, field.data_type())
        {
            return Ok(by_value);
        }
        let args = match (name, coerced.first()) {
            ("greatest" | "least", Some(field)) => args
                .into_iter()
                .map(|a| canonical(a, field.data_type()))
                .collect(),
            _ => args,
        };
        // DataFusion's ceil, floor and trunc of a DECIMAL keep its scale
        // (`ceil(4.62)` would be 5.00, `trunc(4.62, 1)` 4.60), and its ceil
        // and floor overflow at the top of the precision (`ceil` of the
        // DECIMAL(3, 2) 9.99). As in PostgreSQL and DuckDB, the result keeps
        // the digits it has: a DECIMAL(p, 0), or DECIMAL(p, n) for
        // `trunc(x, n)`. Ceil and floor are computed one digit wider; the
        // rescaling is exact.
        if let Some((precision, scale, kept)) = decimal_rounded_to(udf.name(), &args, &coerced) {
            let (args, coerced) = match udf.name() {
                "trunc" => (args, coerced),
                _ => {
                    let precision = (precision + 1).min(arrow_schema::DECIMAL128_MAX_PRECISION);
                    let wider = DataType::Decimal128(precision, scale);
                    let widened = args
                        .into_iter()
                        .map(|a| self.cast_to(a, &wider))
                        .collect::<Result<_, _>>()?;
                    (
                        widened,
                        vec![Arc::new(arrow_schema::Field::new("arg", wider, true))],
                    )
                }
            };
            let rounded = self.built_call(name, udf, args, &coerced, location)?;
            return self.cast_to(rounded, &DataType::Decimal128(precision, kept));
        }
        self.built_call(name, udf, args, &coerced, location)
    }

    /// `udf(args)` for arguments already coerced to `coerced`: computed now
    /// if they are constants, else rewritten as DataFusion would, else the
    /// call.
    fn built_call(
        &self,
        name: &str,
        udf: &Arc<datafusion_expr::ScalarUDF>,
        args: Vec<Expr>,
        coerced: &[FieldRef],
        location: Option<Location>,
    ) -> Result<Expr, SqlError> {
        // A call of constants is computed now (before DataFusion's rewrite,
        // which turns concat('', '') into a concat() it then refuses).
        if let Some(value) = folded_call(udf, &args, coerced) {
            return Ok(Expr::Literal(value, None));
        }
        // Some functions only run rewritten into other expressions
        // (`coalesce` into CASE, `arrow_cast` into CAST): DataFusion's
        // optimizer asks each function for its rewrite, and so does this.
        let context = SimplifyContext::builder()
            .with_schema(Arc::new(self.schema.borrow().clone()))
            .build();
        match udf.simplify(args, &context) {
            Ok(ExprSimplifyResult::Simplified(rewritten)) => Ok(rewritten),
            Ok(ExprSimplifyResult::Original(args)) => {
                refused_constant(udf, &args, coerced).map_or(Ok(()), |why| {
                    Err(SqlError::at(
                        SqlErrorKind::Plan(format!("{name}: {why}")),
                        location,
                    ))
                })?;
                Ok(Expr::ScalarFunction(
                    datafusion_expr::expr::ScalarFunction::new_udf(Arc::clone(udf), args),
                ))
            }
            Err(e) => Err(SqlError::at(
                SqlErrorKind::Plan(format!("{name}: {}", e.strip_backtrace())),
                location,
            )),
        }
    }

    fn like(
        &self,
        negated: bool,
        expr: &ast::Expr,
        pattern: &ast::Expr,
        escape: Option<&ast::ValueWithSpan>,
        case_insensitive: bool,
        aggregates: &mut Aggregates<'_, '_>,
    ) -> Result<Expr, SqlError> {
        let x = self.cast_to(self.convert(expr, aggregates)?, &DataType::Utf8)?;
        let escape = match escape.map(|v| &v.value) {
            Some(Value::SingleQuotedString(s)) if s.chars().count() == 1 => s.chars().next(),
            Some(other) => {
                return Err(SqlError::plan(format!(
                    "ESCAPE takes one character, got {other}"
                )));
            }
            None => None,
        };
        // Arrow's LIKE escapes with a backslash only: a constant pattern
        // written with another escape character is rewritten to it.
        let (p, escape) = match (escape, pattern) {
            (
                Some(c),
                ast::Expr::Value(ast::ValueWithSpan {
                    value: Value::SingleQuotedString(text),
                    ..
                }),
            ) if c != '\\' => {
                let rewritten = with_backslash_escapes(text, c)
                    .map_err(|e| SqlError::plan(e).or_at(location_of(pattern)))?;
                (
                    Expr::Literal(ScalarValue::Utf8(Some(rewritten)), None),
                    Some('\\'),
                )
            }
            (Some(c), _) if c != '\\' => {
                return Err(SqlError::unsupported(format!(
                    "ESCAPE '{c}' with a pattern that is not a text constant (ESCAPE '\\' \
                     takes any pattern)"
                ))
                .or_at(location_of(pattern)));
            }
            _ => (self.convert(pattern, aggregates)?, escape),
        };
        let p = self.cast_to(p, &DataType::Utf8)?;
        Ok(Expr::Like(Like::new(
            negated,
            Box::new(x),
            Box::new(p),
            escape,
            case_insensitive,
        )))
    }

    fn column(&self, name: &str, location: Option<Location>) -> Result<Expr, SqlError> {
        let schema = self.schema.borrow();
        let fields = schema.fields();
        match crate::plan::column_position(fields, name) {
            Some(i) => Ok(Expr::Column(Column::new_unqualified(fields[i].name()))),
            None => {
                let names: Vec<&str> = fields
                    .iter()
                    .map(|f| f.name().as_str())
                    .filter(|n| !n.starts_with("__agg"))
                    .collect();
                Err(SqlError::at(
                    SqlErrorKind::UnknownColumn {
                        name: name.to_string(),
                        relation: self.relation.clone(),
                        suggestion: closest(name, names.iter().copied()),
                        columns: names.iter().map(|n| n.to_string()).collect(),
                    },
                    location,
                ))
            }
        }
    }

    /// The type of `e` in this schema.
    pub fn type_of(&self, e: &Expr) -> Result<DataType, SqlError> {
        e.get_type(&*self.schema.borrow())
            .map_err(|err| SqlError::plan(err.to_string()))
    }

    /// `e` cast to `target` when its type differs.
    pub fn cast_to(&self, e: Expr, target: &DataType) -> Result<Expr, SqlError> {
        let t = self.type_of(&e)?;
        if &t == target {
            return Ok(e);
        }
        if !arrow_cast_ok(&t, target) {
            return Err(SqlError::plan(format!(
                "cannot use {} ({}) as {}",
                sql_text(&e),
                sql_type_name(&t),
                sql_type_name(target)
            )));
        }
        // Text read as a number, a time or a boolean without a CAST would
        // fail on every row that is not one (`coalesce(key, 5)`, `key IN (1,
        // 2)`); PostgreSQL and DuckDB ask for the CAST. A text constant is
        // read now, and refused now if it does not parse.
        if t.is_string() && !target.is_string() && !matches!(e, Expr::Literal(..)) {
            let (text, to) = (sql_text(&e), sql_type_name(target));
            return Err(SqlError::plan(format!(
                "the text {text} is used as a {to}: write CAST({text} AS {to}) to read it as one"
            )));
        }
        if writes_temporal_text(&t, target) {
            return temporal_text(e, target);
        }
        let e = self.rounded_for(e, target)?;
        cast_constant(Expr::Cast(Cast::new(Box::new(e), target.clone())))
    }

    /// `e`, rounded to a whole number if it is about to be cast to an
    /// integer type, as PostgreSQL and DuckDB cast, where arrow's cast
    /// truncates: a float to the nearest, halves to even (`CAST(2.5 AS INT)`
    /// is 2, `CAST(1.7 AS INT)` 2), a decimal halves away from zero
    /// (`CAST(DECIMAL '2.5' AS INT)` is 3). A constant is rounded now, so
    /// that `cast_constant` still reads it.
    fn rounded_for(&self, e: Expr, target: &DataType) -> Result<Expr, SqlError> {
        if !target.is_integer() {
            return Ok(e);
        }
        let from = self.type_of(&e)?;
        if let Some(whole) = whole_decimal(&from) {
            // Arrow rounds a decimal to a smaller scale halves away from zero.
            return cast_constant(Expr::Cast(Cast::new(Box::new(e), whole)));
        }
        if !from.is_floating() {
            return Ok(e);
        }
        Ok(match e {
            Expr::Literal(ScalarValue::Float64(v), metadata) => {
                Expr::Literal(ScalarValue::Float64(v.map(f64::round_ties_even)), metadata)
            }
            Expr::Literal(ScalarValue::Float32(v), metadata) => {
                Expr::Literal(ScalarValue::Float32(v.map(f32::round_ties_even)), metadata)
            }
            other => {
                // A FLOAT widens to DOUBLE exactly.
                let x = match from {
                    DataType::Float64 => other,
                    _ => Expr::Cast(Cast::new(Box::new(other), DataType::Float64)),
                };
                round_ties_even(x)
            }
        })
    }

    /// `args` with their types, each DECIMAL among them cast to DOUBLE when
    /// one of them is a float (see [`float_with_decimal`]): `greatest(v,
    /// 0.5)`, `power(v, 0.5)`.
    fn decimals_beside_floats_as_double(
        &self,
        args: Vec<Expr>,
    ) -> Result<Vec<(Expr, DataType)>, SqlError> {
        let typed = args
            .into_iter()
            .map(|a| self.type_of(&a).map(|t| (a, t)))
            .collect::<Result<Vec<_>, _>>()?;
        if !typed.iter().any(|(_, t)| t.is_floating()) {
            return Ok(typed);
        }
        typed
            .into_iter()
            .map(|(a, t)| match t.is_decimal() {
                true => Ok((self.cast_to(a, &DataType::Float64)?, DataType::Float64)),
                false => Ok((a, t)),
            })
            .collect()
    }

    /// [`Self::cast_to`] for each of `exprs`.
    fn cast_each(&self, exprs: Vec<Expr>, target: &DataType) -> Result<Vec<Expr>, SqlError> {
        exprs.into_iter().map(|e| self.cast_to(e, target)).collect()
    }

    /// [`Self::cast_each`] for values that are compared (an IN list's, a
    /// simple CASE's, `greatest`'s): floats also take their canonical form
    /// ([`canonical`]).
    fn cast_each_for_comparison(
        &self,
        exprs: Vec<Expr>,
        target: &DataType,
    ) -> Result<Vec<Expr>, SqlError> {
        Ok(self
            .cast_each(exprs, target)?
            .into_iter()
            .map(|e| canonical(e, target))
            .collect())
    }

    fn common_type(&self, exprs: &[&Expr]) -> Result<DataType, SqlError> {
        let mut common: Option<DataType> = None;
        for e in exprs {
            let t = self.type_of(e)?;
            common = Some(match common {
                None => t,
                Some(c) => float_with_decimal(&c, &t)
                    .or_else(|| comparison_coercion(&c, &t))
                    .ok_or_else(|| {
                        SqlError::plan(format!(
                            "{} and {} values cannot be compared or combined",
                            sql_type_name(&c),
                            sql_type_name(&t)
                        ))
                    })?,
            });
        }
        Ok(common.unwrap_or(DataType::Null))
    }

    /// `date op days` for a DATE and a whole number of days (see
    /// [`date_and_days`]): the date's day number, in BIGINT, plus or minus
    /// the days, read back as a DATE (a day number past a DATE's range is
    /// that row's failure, as a failing CAST is).
    fn date_plus_days(
        &self,
        date: &Expr,
        op: Operator,
        days: &Expr,
        written: [&ast::Expr; 2],
    ) -> Result<Expr, SqlError> {
        let day_number = self.cast_to(date.clone(), &DataType::Int32)?;
        let day_number = self.cast_to(day_number, &DataType::Int64)?;
        let days = self.cast_to(days.clone(), &DataType::Int64)?;
        let sum = self.binary(day_number, op, days, written)?;
        let sum = self.cast_to(sum, &DataType::Int32)?;
        self.cast_to(sum, &DataType::Date32)
    }

    /// `length op factor` for a length of time (a Duration) times or over a
    /// number (see [`scaled_length`]): its count of milliseconds times or
    /// over the number, rounded to a whole millisecond, as a length of
    /// time again. An integer product is exact (past BIGINT, that row's
    /// failure); a fraction or a quotient goes through a DOUBLE.
    fn scale_length(
        &self,
        length: &Expr,
        op: Operator,
        factor: &Expr,
        written: [&ast::Expr; 2],
    ) -> Result<Expr, SqlError> {
        let millis = self.cast_to(length.clone(), &DURATION_MS)?;
        let millis = self.cast_to(millis, &DataType::Int64)?;
        let integer = self.type_of(factor)?.is_integer() && op == Operator::Multiply;
        let scaled = match integer {
            true => {
                let factor = self.cast_to(factor.clone(), &DataType::Int64)?;
                self.binary(millis, op, factor, written)?
            }
            false => {
                let millis = self.cast_to(millis, &DataType::Float64)?;
                let factor = self.cast_to(factor.clone(), &DataType::Float64)?;
                let scaled = self.binary(millis, op, factor, written)?;
                self.cast_to(scaled, &DataType::Int64)?
            }
        };
        self.cast_to(scaled, &DURATION_MS)
    }

    /// `l op r`, its operands coerced to types the operator takes; `written`
    /// are the operands as the query wrote them, for the error.
    fn binary(
        &self,
        l: Expr,
        op: Operator,
        r: Expr,
        written: [&ast::Expr; 2],
    ) -> Result<Expr, SqlError> {
        let (lt, rt) = (self.type_of(&l)?, self.type_of(&r)?);
        if let Some((date, days, op)) = date_and_days(&l, &lt, op, &r, &rt) {
            return self.date_plus_days(date, op, days, written);
        }
        let (l, lt) = length_of_time_beside(l, lt, op, &rt);
        let (r, rt) = length_of_time_beside(r, rt, op, &lt);
        if let Some((length, op, factor)) = scaled_length(&l, &lt, op, &r, &rt) {
            return self.scale_length(length, op, factor, written);
        }
        let integer_comparison = integer_against_decimal(&l, &lt, op, &r)
            .or_else(|| integer_against_decimal(&r, &rt, op.swap()?, &l));
        if let Some(comparison) = integer_comparison {
            return Ok(comparison);
        }
        let coerced = match float_with_decimal(&lt, &rt).or_else(|| decimal_division(&lt, op, &rt))
        {
            Some(double) => Ok((double.clone(), double)),
            None => BinaryTypeCoercer::new(&lt, &op, &rt).get_input_types(),
        };
        let (lt2, rt2) = coerced.map_err(|_| {
            SqlError::plan(format!(
                "the operator {op} does not apply to {} ({}) and {} ({})",
                sql_type_name(&lt),
                unnested(written[0]),
                sql_type_name(&rt),
                unnested(written[1])
            ))
        })?;
        let (mut l, mut r) = (self.cast_to(l, &lt2)?, self.cast_to(r, &rt2)?);
        if compares(op) {
            (l, r) = (canonical(l, &lt2), canonical(r, &rt2));
        }
        let folded = constant_arithmetic(&l, op, &r);
        let e = Expr::BinaryExpr(BinaryExpr::new(Box::new(l), op, Box::new(r)));
        match folded {
            Some(Err(why)) => Err(SqlError::plan(format!(
                "{} {op} {} cannot be computed: {why}",
                written[0], written[1]
            ))),
            // Folded only where the constant keeps the expression's type
            // (a DECIMAL's precision may come out otherwise).
            Some(Ok(value)) if value.data_type() == self.type_of(&e)? => {
                Ok(Expr::Literal(value, None))
            }
            _ => Ok(e),
        }
    }
}

/// The DATE, the whole number of days and the operator of `DATE + n`, `n +
/// DATE` or `DATE - n`, which PostgreSQL and DuckDB read as a date that
/// many days later or earlier (DataFusion would take `n` for an interval,
/// and refuse).
fn date_and_days<'a>(
    l: &'a Expr,
    lt: &DataType,
    op: Operator,
    r: &'a Expr,
    rt: &DataType,
) -> Option<(&'a Expr, &'a Expr, Operator)> {
    match (lt, op, rt) {
        (DataType::Date32, Operator::Plus | Operator::Minus, n) if n.is_integer() => {
            Some((l, r, op))
        }
        (n, Operator::Plus, DataType::Date32) if n.is_integer() => Some((r, l, op)),
        _ => None,
    }
}

/// A length of time as sliq keeps one: a count of milliseconds.
pub(crate) const DURATION_MS: DataType = DataType::Duration(TimeUnit::Millisecond);

/// `e`, an INTERVAL constant (sliq's are fixed lengths of time), as a
/// length of time in milliseconds where it meets one, or a number it is
/// multiplied or divided by: `gap + INTERVAL '1' SECOND` and `INTERVAL '1'
/// SECOND * n` are lengths of time (DataFusion's would be a month-day-
/// nanosecond interval, or refused). Anything else is left as it is.
fn length_of_time_beside(e: Expr, t: DataType, op: Operator, other: &DataType) -> (Expr, DataType) {
    let scaled = matches!(op, Operator::Multiply | Operator::Divide) && other.is_numeric();
    if !(scaled || matches!(other, DataType::Duration(_))) {
        return (e, t);
    }
    let Expr::Literal(ScalarValue::IntervalMonthDayNano(Some(v)), _) = &e else {
        return (e, t);
    };
    if v.months != 0 || v.days != 0 {
        return (e, t);
    }
    // In the other's unit, where it is a length of time (so that nothing
    // coerces them into an interval); else in sliq's milliseconds.
    let nanos = v.nanoseconds;
    let length = match other {
        DataType::Duration(TimeUnit::Nanosecond) => {
            Some(ScalarValue::DurationNanosecond(Some(nanos)))
        }
        DataType::Duration(TimeUnit::Microsecond) => {
            (nanos % 1_000 == 0).then(|| ScalarValue::DurationMicrosecond(Some(nanos / 1_000)))
        }
        DataType::Duration(TimeUnit::Second) => (nanos % 1_000_000_000 == 0)
            .then(|| ScalarValue::DurationSecond(Some(nanos / 1_000_000_000))),
        _ => (nanos % 1_000_000 == 0)
            .then(|| ScalarValue::DurationMillisecond(Some(nanos / 1_000_000))),
    };
    match length {
        Some(length) => {
            let t = length.data_type();
            (Expr::Literal(length, None), t)
        }
        None => (e, t),
    }
}

/// The length of time, the operator and the number of `length * n`, `n *
/// length` or `length / n`, which PostgreSQL and DuckDB read as a length of
/// time (DataFusion refuses them).
fn scaled_length<'a>(
    l: &'a Expr,
    lt: &DataType,
    op: Operator,
    r: &'a Expr,
    rt: &DataType,
) -> Option<(&'a Expr, Operator, &'a Expr)> {
    match (lt, op, rt) {
        (DataType::Duration(_), Operator::Multiply | Operator::Divide, n) if n.is_numeric() => {
            Some((l, op, r))
        }
        (n, Operator::Multiply, DataType::Duration(_)) if n.is_numeric() => Some((r, op, l)),
        _ => None,
    }
}

/// DOUBLE, when one of `a` and `b` is a float and the other a DECIMAL: they
/// meet as DOUBLE, as in PostgreSQL and DuckDB. (DataFusion compares them as
/// DECIMAL(30, 15), which casts the float on every row and fails past 10^15.)
fn float_with_decimal(a: &DataType, b: &DataType) -> Option<DataType> {
    ((a.is_floating() && b.is_decimal()) || (a.is_decimal() && b.is_floating()))
        .then_some(DataType::Float64)
}

/// DOUBLE, for a division of numbers of which one is a DECIMAL, as in
/// DuckDB: DataFusion's exact quotient keeps only four more digits than the
/// dividend has (`1 / 3.0` would be 0.3333).
fn decimal_division(a: &DataType, op: Operator, b: &DataType) -> Option<DataType> {
    (op == Operator::Divide
        && (a.is_decimal() || b.is_decimal())
        && a.is_numeric()
        && b.is_numeric())
    .then_some(DataType::Float64)
}

fn arrow_cast_ok(from: &DataType, to: &DataType) -> bool {
    from == &DataType::Null || arrow_cast::can_cast_types(from, to)
}

fn binary_operator(op: &BinaryOperator) -> Result<Operator, SqlError> {
    Ok(match op {
        BinaryOperator::Plus => Operator::Plus,
        BinaryOperator::Minus => Operator::Minus,
        BinaryOperator::Multiply => Operator::Multiply,
        BinaryOperator::Divide => Operator::Divide,
        BinaryOperator::Modulo => Operator::Modulo,
        BinaryOperator::Gt => Operator::Gt,
        BinaryOperator::Lt => Operator::Lt,
        BinaryOperator::GtEq => Operator::GtEq,
        BinaryOperator::LtEq => Operator::LtEq,
        BinaryOperator::Eq => Operator::Eq,
        BinaryOperator::NotEq => Operator::NotEq,
        BinaryOperator::And => Operator::And,
        BinaryOperator::Or => Operator::Or,
        BinaryOperator::StringConcat => Operator::StringConcat,
        BinaryOperator::BitwiseAnd => Operator::BitwiseAnd,
        BinaryOperator::BitwiseOr => Operator::BitwiseOr,
        BinaryOperator::PGBitwiseXor => Operator::BitwiseXor,
        // `^` is a power in PostgreSQL and DuckDB and XOR in MySQL.
        BinaryOperator::BitwiseXor => {
            return Err(SqlError::unsupported(
                "the operator ^, a power in some SQL dialects and XOR in others \
                 (write power(a, b))",
            ));
        }
        BinaryOperator::PGBitwiseShiftLeft => Operator::BitwiseShiftLeft,
        BinaryOperator::PGBitwiseShiftRight => Operator::BitwiseShiftRight,
        BinaryOperator::PGRegexMatch => Operator::RegexMatch,
        BinaryOperator::PGRegexIMatch => Operator::RegexIMatch,
        BinaryOperator::PGRegexNotMatch => Operator::RegexNotMatch,
        BinaryOperator::PGRegexNotIMatch => Operator::RegexNotIMatch,
        other => return Err(SqlError::unsupported(format!("the operator {other}"))),
    })
}

/// A schema's columns as a `DFSchema`.
pub fn df_schema(schema: &arrow_schema::SchemaRef) -> Result<DFSchema, SqlError> {
    DFSchema::try_from(Arc::clone(schema)).map_err(|e| SqlError::plan(e.to_string()))
}

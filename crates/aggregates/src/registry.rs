//! Looking up aggregate functions by name and argument types.
//!
//! [`resolve`] checks a call once, at planning time, and returns a
//! [`ResolvedAggregate`]: the types the engine must feed it, the result type,
//! and [`ResolvedAggregate::visit`], which hands the concrete, monomorphic
//! aggregate to an [`AggregateVisitor`].
//!
//! Value arguments come first; constant parameters (`q` of
//! `approx_percentile`, the probe of `bloom_contains`) follow and are
//! consumed here, so the engine only evaluates [`ResolvedAggregate::inputs`].

use std::sync::Arc;

use crate::functions::{
    ArgExtreme, Avg, Bitwise, Bivariate, BivariateKind, Count, Counted, Extreme, ExtremeCount,
    FirstLast, FloatExtreme, Geomean, Lag, M4, Product, RelVar, Shape, ShapeKind, Sum, Variance,
    VarianceKind,
};
use crate::sketch::{ApproxCountDistinct, ApproxPercentile, BloomContains, CountMin};
use crate::{
    Aggregate, AggregateError, ArgType, Literal, OutputType, PanedAggregate, Scalar, ValueType,
};

/// Receives the concrete aggregate a call resolved to. The engine implements
/// it once, generically, and gets a monomorphized window operator per
/// function and argument type.
pub trait AggregateVisitor {
    /// What the visit produces (an operator, a result, …).
    type Output;
    /// Called with the concrete aggregate.
    fn visit<A: Aggregate>(self, aggregate: A) -> Self::Output;

    /// Called instead of [`visit`](Self::visit) for an aggregate whose
    /// windows may keep inputs and panes; the default visits it as any other.
    fn visit_paned<A: PanedAggregate>(self, aggregate: A) -> Self::Output
    where
        Self: Sized,
    {
        self.visit(aggregate)
    }
}

/// The precision of a decimal `sum`: the widest decimal, as in DuckDB.
const DECIMAL_SUM_PRECISION: u8 = 38;

/// Modifiers written in the call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallOptions {
    /// `IGNORE NULLS` (only `first_value` and `last_value` take it).
    pub ignore_nulls: bool,
}

/// The aggregate functions and their signatures, for errors, help and
/// completion. Aliases point at their canonical name.
pub const FUNCTIONS: &[(&str, &str)] = &[
    (
        "count",
        "count(*), count(x any), count(DISTINCT x any) -> BIGINT",
    ),
    (
        "count_if",
        "count_if(b BOOLEAN) -> BIGINT (rows where b is true)",
    ),
    (
        "sum",
        "sum(x BIGINT) -> BIGINT, sum(x DOUBLE) -> DOUBLE, sum(x DECIMAL(p, s)) -> DECIMAL(38, s), \
         sum(x INTERVAL) -> INTERVAL",
    ),
    (
        "avg",
        "avg(x numeric) -> DOUBLE, avg(x INTERVAL) -> INTERVAL",
    ),
    ("mean", "mean(x numeric) -> DOUBLE (alias of avg)"),
    ("min", "min(x any) -> same type"),
    ("max", "max(x any) -> same type"),
    (
        "bool_and",
        "bool_and(x BOOLEAN) -> BOOLEAN (every non-NULL x is true)",
    ),
    ("every", "every(x BOOLEAN) -> BOOLEAN (alias of bool_and)"),
    ("bool_or", "bool_or(x BOOLEAN) -> BOOLEAN (some x is true)"),
    (
        "any_value",
        "any_value(x any) -> same type (the first non-NULL x, as in DuckDB)",
    ),
    ("geomean", "geomean(x numeric) -> DOUBLE"),
    ("product", "product(x numeric) -> DOUBLE"),
    ("bit_and", "bit_and(x BIGINT) -> BIGINT"),
    ("bit_or", "bit_or(x BIGINT) -> BIGINT"),
    ("bit_xor", "bit_xor(x BIGINT) -> BIGINT"),
    ("var_pop", "var_pop(x numeric) -> DOUBLE"),
    ("var_samp", "var_samp(x numeric) -> DOUBLE"),
    (
        "variance",
        "variance(x numeric) -> DOUBLE (alias of var_samp)",
    ),
    (
        "skewness",
        "skewness(x numeric) -> DOUBLE (sample skewness, as DuckDB's)",
    ),
    (
        "kurtosis",
        "kurtosis(x numeric) -> DOUBLE (sample excess kurtosis, as DuckDB's)",
    ),
    (
        "kurtosis_pop",
        "kurtosis_pop(x numeric) -> DOUBLE (population excess kurtosis)",
    ),
    ("stddev_pop", "stddev_pop(x numeric) -> DOUBLE"),
    ("stddev_samp", "stddev_samp(x numeric) -> DOUBLE"),
    (
        "stddev",
        "stddev(x numeric) -> DOUBLE (alias of stddev_samp)",
    ),
    ("argmax", "argmax(x any, y any) -> type of y"),
    ("argmin", "argmin(x any, y any) -> type of y"),
    (
        "max_by",
        "max_by(x any, y any) -> type of x (argmax(y, x): the x of the row with the greatest y)",
    ),
    (
        "min_by",
        "min_by(x any, y any) -> type of x (argmin(y, x): the x of the row with the least y)",
    ),
    (
        "arg_max",
        "arg_max(x any, y any) -> type of x (max_by over the rows whose x is not NULL, as DuckDB and ClickHouse have it)",
    ),
    (
        "arg_min",
        "arg_min(x any, y any) -> type of x (min_by over the rows whose x is not NULL, as DuckDB and ClickHouse have it)",
    ),
    (
        "arg_max_null",
        "arg_max_null(x any, y any) -> type of x (alias of max_by, as DuckDB has it)",
    ),
    (
        "arg_min_null",
        "arg_min_null(x any, y any) -> type of x (alias of min_by, as DuckDB has it)",
    ),
    ("maxcount", "maxcount(x any) -> BIGINT"),
    ("mincount", "mincount(x any) -> BIGINT"),
    (
        "first_value",
        "first_value(x any) [IGNORE NULLS] -> same type",
    ),
    (
        "last_value",
        "last_value(x any) [IGNORE NULLS] -> same type",
    ),
    (
        "first",
        "first(x any) [IGNORE NULLS] -> same type (alias of first_value, as in DuckDB)",
    ),
    (
        "last",
        "last(x any) [IGNORE NULLS] -> same type (alias of last_value, as in DuckDB)",
    ),
    (
        "row_number",
        "row_number() -> BIGINT (the row's number in its key, from 1)",
    ),
    (
        "lag",
        "lag(x any [, offset 0.. [, default]]) -> same type (over ROWS offset PRECEDING)",
    ),
    (
        "m4",
        "m4(x BIGINT|DOUBLE|DECIMAL|TIMESTAMP|DATE) -> STRUCT(min, max, first, last)",
    ),
    ("relvar", "relvar(x numeric) -> DOUBLE"),
    ("regr_slope", "regr_slope(y numeric, x numeric) -> DOUBLE"),
    (
        "regr_intercept",
        "regr_intercept(y numeric, x numeric) -> DOUBLE",
    ),
    ("regr_r2", "regr_r2(y numeric, x numeric) -> DOUBLE"),
    ("corr", "corr(y numeric, x numeric) -> DOUBLE"),
    ("covar_pop", "covar_pop(y numeric, x numeric) -> DOUBLE"),
    ("covar_samp", "covar_samp(y numeric, x numeric) -> DOUBLE"),
    ("regr_avgx", "regr_avgx(y numeric, x numeric) -> DOUBLE"),
    ("regr_avgy", "regr_avgy(y numeric, x numeric) -> DOUBLE"),
    ("regr_sxx", "regr_sxx(y numeric, x numeric) -> DOUBLE"),
    ("regr_syy", "regr_syy(y numeric, x numeric) -> DOUBLE"),
    ("regr_sxy", "regr_sxy(y numeric, x numeric) -> DOUBLE"),
    (
        "regr_count",
        "regr_count(y numeric, x numeric) -> BIGINT (the pairs the other regr_ functions use)",
    ),
    (
        "approx_count_distinct",
        "approx_count_distinct(x any) -> BIGINT",
    ),
    (
        "bloom_contains",
        "bloom_contains(x any, constant [, hashes 1..16]) -> BOOLEAN",
    ),
    ("countmin", "countmin(x any, constant) -> BIGINT"),
    (
        "approx_percentile",
        "approx_percentile(x numeric, q in [0, 1] [, accuracy in (0, 0.5]]) -> DOUBLE",
    ),
    (
        "approx_quantile",
        "approx_quantile(x numeric, q in [0, 1]) -> DOUBLE (alias of approx_percentile, as DuckDB \
         names it)",
    ),
    (
        "approx_percentile_cont",
        "approx_percentile_cont(x numeric, q in [0, 1]), approx_percentile_cont(q) WITHIN GROUP \
         (ORDER BY x) -> DOUBLE (alias of approx_percentile, as DataFusion names it)",
    ),
    (
        "percentile_approx",
        "percentile_approx(x numeric, q in [0, 1]) -> DOUBLE (alias of approx_percentile, as \
         Spark names it)",
    ),
    (
        "approx_median",
        "approx_median(x numeric [, accuracy in (0, 0.5]]) -> DOUBLE",
    ),
];

/// Whether `name` (lower case) takes its value argument from
/// `WITHIN GROUP (ORDER BY x)`, as `approx_percentile_cont(q) WITHIN GROUP
/// (ORDER BY x)` does; the planner passes it first, as in
/// `approx_percentile(x, q)`.
pub fn takes_within_group(name: &str) -> bool {
    matches!(
        name,
        "approx_percentile" | "approx_percentile_cont" | "approx_quantile" | "percentile_approx"
    )
}

/// Whether `name` (lower case) gives the same result when each distinct
/// value counts once, so that `name(DISTINCT x)` is `name(x)`: `max`, say,
/// but not `sum`.
pub fn ignores_duplicates(name: &str) -> bool {
    matches!(
        name,
        "min"
            | "max"
            | "bool_and"
            | "bool_or"
            | "every"
            | "bit_and"
            | "bit_or"
            | "any_value"
            | "approx_count_distinct"
            | "bloom_contains"
    )
}

/// The names of all aggregate functions, aliases included.
pub fn function_names() -> impl Iterator<Item = &'static str> {
    FUNCTIONS.iter().map(|(name, _)| *name)
}

/// Whether `name` (case-insensitive) is an aggregate function.
pub fn is_aggregate(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    function_names().any(|f| f == name)
}

/// The documented signatures of `name`, if it is an aggregate function.
pub fn signatures(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    FUNCTIONS.iter().find(|(f, _)| *f == name).map(|(_, s)| *s)
}

/// A frame a function fixes for itself (see [`ResolvedAggregate::fixed_frame`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixedFrame {
    /// The row and the `n` before it in its key.
    Rows(u64),
    /// Every row of its key so far.
    Unbounded,
}

/// A resolved call: what to feed it, what it returns, and the concrete
/// aggregate behind it.
#[derive(Clone, Debug)]
pub struct ResolvedAggregate {
    name: &'static str,
    inputs: Vec<ValueType>,
    output: OutputType,
    bound: Bound,
    /// The call's two value arguments go to the aggregate in the other
    /// order (`max_by(x, y)` is `argmax(y, x)`).
    swapped: bool,
}

impl ResolvedAggregate {
    /// The canonical function name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The types of the value arguments the engine must provide, in order:
    /// argument `i` of the call, cast to `inputs()[i]`, except that
    /// [`Self::swaps_arguments`] exchanges the first two.
    pub fn inputs(&self) -> &[ValueType] {
        &self.inputs
    }

    /// Whether the engine must provide the call's first two value arguments
    /// in the other order: `max_by(x, y)` and `min_by(x, y)` (the x of the
    /// row with the greatest or least y, as in Trino, Spark and DuckDB) run
    /// as `argmax(y, x)` and `argmin(y, x)`.
    pub fn swaps_arguments(&self) -> bool {
        self.swapped
    }

    /// The result type.
    pub fn output_type(&self) -> &OutputType {
        &self.output
    }

    /// Whether the result is the number of rows in the frame (`count(*)`,
    /// `row_number()`), which the frame itself knows: such a call needs no
    /// window of its own.
    pub fn counts_frame_rows(&self) -> bool {
        matches!(self.bound, Bound::CountStar | Bound::RowNumber)
    }

    /// The frame the function needs whatever its `OVER` clause says, as
    /// SQL's window functions ignore the frame: `ROWS offset PRECEDING` for
    /// `lag`, every row so far for `row_number`.
    pub fn fixed_frame(&self) -> Option<FixedFrame> {
        match self.bound {
            Bound::Lag { offset, .. } => Some(FixedFrame::Rows(offset)),
            Bound::RowNumber => Some(FixedFrame::Unbounded),
            _ => None,
        }
    }

    /// Hands the concrete aggregate to `visitor`.
    pub fn visit<V: AggregateVisitor>(&self, visitor: V) -> V::Output {
        self.bound.visit(visitor)
    }
}

/// The concrete aggregate of a resolved call.
#[derive(Clone, Debug)]
enum Bound {
    CountStar,
    Count,
    CountIf,
    RegrCount,
    RowNumber,
    Sum(ValueType),
    Avg(ValueType),
    Extreme {
        ty: ValueType,
        max: bool,
    },
    ArgExtreme {
        x: ValueType,
        y: ValueType,
        max: bool,
        skip_null_values: bool,
    },
    ExtremeCount {
        ty: ValueType,
        max: bool,
    },
    FirstLast {
        ty: ValueType,
        first: bool,
        ignore_nulls: bool,
    },
    M4(ValueType),
    Lag {
        ty: ValueType,
        offset: u64,
        default: Literal,
    },
    Geomean,
    Product,
    Bitwise(char),
    Variance(VarianceKind),
    Shape(ShapeKind),
    RelVar,
    Bivariate(BivariateKind),
    ApproxCountDistinct(ValueType),
    BloomContains {
        ty: ValueType,
        probe_hash: u64,
        hashes: u32,
    },
    CountMin {
        ty: ValueType,
        probe_hash: u64,
    },
    ApproxPercentile {
        q: f64,
        accuracy: f64,
    },
}

/// Runs `$body` with `$t` bound to the Rust type that holds `$ty` values.
macro_rules! with_scalar {
    ($ty:expr, $t:ident => $body:expr) => {
        match $ty {
            ValueType::Boolean => {
                type $t = bool;
                $body
            }
            ValueType::Int64 | ValueType::Timestamp | ValueType::Date | ValueType::Interval => {
                type $t = i64;
                $body
            }
            ValueType::Float64 => {
                type $t = f64;
                $body
            }
            ValueType::Utf8 => {
                type $t = Arc<str>;
                $body
            }
            ValueType::Decimal { .. } => {
                type $t = i128;
                $body
            }
        }
    };
}

impl Bound {
    fn visit<V: AggregateVisitor>(&self, v: V) -> V::Output {
        match *self {
            Bound::CountStar | Bound::RowNumber => v.visit(Count {
                counted: Counted::Rows,
            }),
            Bound::Count => v.visit(Count {
                counted: Counted::NonNull,
            }),
            Bound::CountIf => v.visit(Count {
                counted: Counted::True,
            }),
            Bound::RegrCount => v.visit(Count {
                counted: Counted::FinitePairs,
            }),
            Bound::Sum(ValueType::Float64) => v.visit(Sum::<f64>::default()),
            Bound::Sum(ValueType::Decimal { .. }) => v.visit(Sum::<i128>::default()),
            Bound::Sum(_) => v.visit(Sum::<i64>::default()),
            Bound::Avg(ValueType::Float64) => v.visit(Avg::<f64>::default()),
            Bound::Avg(ValueType::Decimal { scale, .. }) => v.visit(Avg::<i128>::scaled(scale)),
            Bound::Avg(_) => v.visit(Avg::<i64>::default()),
            Bound::Extreme {
                ty: ValueType::Float64,
                max,
            } => {
                if max {
                    v.visit(FloatExtreme::<true>)
                } else {
                    v.visit(FloatExtreme::<false>)
                }
            }
            Bound::Extreme { ty, max: true } => {
                with_scalar!(ty, T => v.visit(Extreme::<T, true>::default()))
            }
            Bound::Extreme { ty, max: false } => {
                with_scalar!(ty, T => v.visit(Extreme::<T, false>::default()))
            }
            Bound::ArgExtreme {
                x,
                y,
                max,
                skip_null_values,
            } => with_scalar!(x, X => with_scalar!(y, Y => match (max, skip_null_values) {
                (true, false) => v.visit(ArgExtreme::<X, Y, true>::default()),
                (true, true) => v.visit(ArgExtreme::<X, Y, true>::skipping_null_values()),
                (false, false) => v.visit(ArgExtreme::<X, Y, false>::default()),
                (false, true) => v.visit(ArgExtreme::<X, Y, false>::skipping_null_values()),
            })),
            Bound::ExtremeCount { ty, max: true } => {
                with_scalar!(ty, T => v.visit(ExtremeCount::<T, true>::default()))
            }
            Bound::ExtremeCount { ty, max: false } => {
                with_scalar!(ty, T => v.visit(ExtremeCount::<T, false>::default()))
            }
            Bound::FirstLast {
                ty,
                first: true,
                ignore_nulls,
            } => {
                with_scalar!(ty, T => v.visit(FirstLast::<T, true>::new(ignore_nulls)))
            }
            Bound::FirstLast {
                ty,
                first: false,
                ignore_nulls,
            } => {
                with_scalar!(ty, T => v.visit(FirstLast::<T, false>::new(ignore_nulls)))
            }
            Bound::M4(ValueType::Float64) => v.visit(M4::<f64>::default()),
            Bound::M4(ValueType::Decimal { .. }) => v.visit(M4::<i128>::default()),
            Bound::M4(_) => v.visit(M4::<i64>::default()),
            Bound::Geomean => v.visit(Geomean),
            Bound::Product => v.visit(Product),
            Bound::Bitwise('&') => v.visit(Bitwise::<'&'>),
            Bound::Bitwise('|') => v.visit(Bitwise::<'|'>),
            Bound::Bitwise(_) => v.visit(Bitwise::<'^'>),
            Bound::Variance(kind) => v.visit(Variance(kind)),
            Bound::Shape(kind) => v.visit(Shape(kind)),
            Bound::RelVar => v.visit(RelVar),
            Bound::Bivariate(kind) => v.visit(Bivariate(kind)),
            Bound::ApproxCountDistinct(ty) => {
                with_scalar!(ty, T => v.visit_paned(ApproxCountDistinct::<T>::default()))
            }
            Bound::BloomContains {
                ty,
                probe_hash,
                hashes,
            } => {
                with_scalar!(ty, T => v.visit_paned(BloomContains::<T>::from_hash(probe_hash, hashes)))
            }
            Bound::CountMin { ty, probe_hash } => {
                with_scalar!(ty, T => v.visit_paned(CountMin::<T>::from_hash(probe_hash)))
            }
            Bound::ApproxPercentile { q, accuracy } => {
                v.visit_paned(ApproxPercentile::new(q, accuracy))
            }
            Bound::Lag {
                ty: ValueType::Decimal { precision, scale },
                offset,
                ref default,
            } => v.visit(Lag::<i128>::new(
                offset,
                default.as_decimal(precision, scale),
            )),
            Bound::Lag {
                ty,
                offset,
                ref default,
            } => with_scalar!(ty, T => v.visit(Lag::<T>::new(offset, T::from_literal(default)))),
        }
    }
}

/// Resolves `name(args)` (name case-insensitive).
///
/// Errors name the function, the arguments given and the accepted
/// signatures; an unknown name gets a "did you mean" when one is close.
pub fn resolve(
    name: &str,
    args: &[ArgType],
    options: CallOptions,
) -> Result<ResolvedAggregate, AggregateError> {
    let lower = name.to_ascii_lowercase();
    let Some(&(canonical, _)) = FUNCTIONS.iter().find(|(f, _)| *f == lower) else {
        return Err(unknown_function(name));
    };
    if options.ignore_nulls && !matches!(canonical, "first_value" | "last_value" | "first" | "last")
    {
        return Err(invalid(
            canonical,
            "IGNORE NULLS applies only to first_value and last_value",
        ));
    }
    let call = Call {
        name: canonical,
        args,
    };
    let numeric = |call: &Call| call.numeric_arg(0);
    let (bound, inputs, output) = match (canonical, args.len()) {
        ("count", 0) => (
            Bound::CountStar,
            vec![],
            OutputType::Scalar(ValueType::Int64),
        ),
        ("row_number", 0) => (
            Bound::RowNumber,
            vec![],
            OutputType::Scalar(ValueType::Int64),
        ),
        ("count", 1) => (
            Bound::Count,
            vec![args[0].ty],
            OutputType::Scalar(ValueType::Int64),
        ),
        ("regr_count", 2) => {
            numeric(&call)?;
            call.numeric_arg(1)?;
            (
                Bound::RegrCount,
                vec![ValueType::Float64, ValueType::Float64],
                OutputType::Scalar(ValueType::Int64),
            )
        }
        ("count_if", 1) => {
            if args[0].ty != ValueType::Boolean {
                return Err(call.mismatch());
            }
            (
                Bound::CountIf,
                vec![ValueType::Boolean],
                OutputType::Scalar(ValueType::Int64),
            )
        }
        // Lengths of time add up exactly, as their counts of milliseconds.
        ("sum", 1) if args[0].ty == ValueType::Interval => (
            Bound::Sum(ValueType::Interval),
            vec![ValueType::Interval],
            OutputType::Scalar(ValueType::Interval),
        ),
        ("sum", 1) => {
            let ty = numeric(&call)?;
            let output = match ty {
                ValueType::Decimal { scale, .. } => ValueType::Decimal {
                    precision: DECIMAL_SUM_PRECISION,
                    scale,
                },
                other => other,
            };
            (Bound::Sum(ty), vec![ty], OutputType::Scalar(output))
        }
        ("avg" | "mean", 1) => {
            let ty = numeric(&call)?;
            (
                Bound::Avg(ty),
                vec![ty],
                OutputType::Scalar(ValueType::Float64),
            )
        }
        ("min" | "max", 1) => {
            let ty = args[0].ty;
            (
                Bound::Extreme {
                    ty,
                    max: canonical == "max",
                },
                vec![ty],
                OutputType::Scalar(ty),
            )
        }
        (
            "argmax" | "argmin" | "max_by" | "min_by" | "arg_max" | "arg_min" | "arg_max_null"
            | "arg_min_null",
            2,
        ) => {
            let (x, y) = match canonical {
                _ if takes_value_first(canonical) => (args[1].ty, args[0].ty),
                _ => (args[0].ty, args[1].ty),
            };
            (
                Bound::ArgExtreme {
                    x,
                    y,
                    max: matches!(canonical, "argmax" | "max_by" | "arg_max" | "arg_max_null"),
                    skip_null_values: matches!(canonical, "arg_max" | "arg_min"),
                },
                vec![x, y],
                OutputType::Scalar(y),
            )
        }
        // The least and the greatest boolean: false < true.
        ("bool_and" | "every" | "bool_or", 1) => {
            if args[0].ty != ValueType::Boolean {
                return Err(call.mismatch());
            }
            let bound = Bound::Extreme {
                ty: ValueType::Boolean,
                max: canonical == "bool_or",
            };
            (
                bound,
                vec![ValueType::Boolean],
                OutputType::Scalar(ValueType::Boolean),
            )
        }
        ("maxcount" | "mincount", 1) => {
            let ty = args[0].ty;
            let bound = Bound::ExtremeCount {
                ty,
                max: canonical == "maxcount",
            };
            (bound, vec![ty], OutputType::Scalar(ValueType::Int64))
        }
        ("any_value", 1) => {
            let ty = args[0].ty;
            let bound = Bound::FirstLast {
                ty,
                first: true,
                ignore_nulls: true,
            };
            (bound, vec![ty], OutputType::Scalar(ty))
        }
        ("product", 1) => {
            numeric(&call)?;
            (
                Bound::Product,
                vec![ValueType::Float64],
                OutputType::Scalar(ValueType::Float64),
            )
        }
        ("bit_and" | "bit_or" | "bit_xor", 1) => {
            if args[0].ty != ValueType::Int64 {
                return Err(call.mismatch());
            }
            let op = match canonical {
                "bit_and" => '&',
                "bit_or" => '|',
                _ => '^',
            };
            (
                Bound::Bitwise(op),
                vec![ValueType::Int64],
                OutputType::Scalar(ValueType::Int64),
            )
        }
        ("first_value" | "last_value" | "first" | "last", 1) => {
            let ty = args[0].ty;
            let bound = Bound::FirstLast {
                ty,
                first: matches!(canonical, "first_value" | "first"),
                ignore_nulls: options.ignore_nulls,
            };
            (bound, vec![ty], OutputType::Scalar(ty))
        }
        ("lag", 1..=3) => {
            let ty = args[0].ty;
            let offset = match args.get(1) {
                Some(_) => call.int_param(1, "offset", 0..=i64::MAX)? as u64,
                None => 1,
            };
            let default = match args.get(2) {
                Some(_) => call.default_param(2, ty)?,
                None => Literal::Null,
            };
            let bound = Bound::Lag {
                ty,
                offset,
                default,
            };
            (bound, vec![ty], OutputType::Scalar(ty))
        }
        ("m4", 1) => {
            let ty = args[0].ty;
            if !matches!(
                ty,
                ValueType::Int64
                    | ValueType::Float64
                    | ValueType::Timestamp
                    | ValueType::Date
                    | ValueType::Interval
                    | ValueType::Decimal { .. }
            ) {
                return Err(call.mismatch());
            }
            let fields = ["min", "max", "first", "last"].map(|f| (f, ty)).to_vec();
            (Bound::M4(ty), vec![ty], OutputType::Struct(fields))
        }
        (
            "geomean" | "relvar" | "var_pop" | "var_samp" | "variance" | "stddev_pop"
            | "stddev_samp" | "stddev" | "skewness" | "kurtosis" | "kurtosis_pop",
            1,
        ) => {
            numeric(&call)?;
            let bound = match canonical {
                "geomean" => Bound::Geomean,
                "relvar" => Bound::RelVar,
                "var_pop" => Bound::Variance(VarianceKind::VarPop),
                "var_samp" | "variance" => Bound::Variance(VarianceKind::VarSamp),
                "stddev_pop" => Bound::Variance(VarianceKind::StddevPop),
                "skewness" => Bound::Shape(ShapeKind::Skewness),
                "kurtosis" => Bound::Shape(ShapeKind::Kurtosis),
                "kurtosis_pop" => Bound::Shape(ShapeKind::KurtosisPop),
                _ => Bound::Variance(VarianceKind::StddevSamp),
            };
            (
                bound,
                vec![ValueType::Float64],
                OutputType::Scalar(ValueType::Float64),
            )
        }
        (
            "regr_slope" | "regr_intercept" | "regr_r2" | "corr" | "covar_pop" | "covar_samp"
            | "regr_avgx" | "regr_avgy" | "regr_sxx" | "regr_syy" | "regr_sxy",
            2,
        ) => {
            numeric(&call)?;
            call.numeric_arg(1)?;
            let bound = Bound::Bivariate(match canonical {
                "regr_slope" => BivariateKind::Slope,
                "regr_intercept" => BivariateKind::Intercept,
                "regr_r2" => BivariateKind::R2,
                "corr" => BivariateKind::Corr,
                "covar_pop" => BivariateKind::CovarPop,
                "covar_samp" => BivariateKind::CovarSamp,
                "regr_avgx" => BivariateKind::AvgX,
                "regr_avgy" => BivariateKind::AvgY,
                "regr_sxx" => BivariateKind::Sxx,
                "regr_syy" => BivariateKind::Syy,
                _ => BivariateKind::Sxy,
            });
            (
                bound,
                vec![ValueType::Float64, ValueType::Float64],
                OutputType::Scalar(ValueType::Float64),
            )
        }
        ("approx_count_distinct", 1) => {
            let ty = args[0].ty;
            (
                Bound::ApproxCountDistinct(ty),
                vec![ty],
                OutputType::Scalar(ValueType::Int64),
            )
        }
        ("bloom_contains", 2 | 3) => {
            let ty = args[0].ty;
            let probe_hash = call.probe_hash(1, ty)?;
            let hashes = match args.get(2) {
                Some(_) => call.int_param(2, "hashes", 1..=16)? as u32,
                None => BloomContains::<i64>::DEFAULT_HASHES,
            };
            let bound = Bound::BloomContains {
                ty,
                probe_hash,
                hashes,
            };
            (bound, vec![ty], OutputType::Scalar(ValueType::Boolean))
        }
        ("countmin", 2) => {
            let ty = args[0].ty;
            let probe_hash = call.probe_hash(1, ty)?;
            (
                Bound::CountMin { ty, probe_hash },
                vec![ty],
                OutputType::Scalar(ValueType::Int64),
            )
        }
        ("approx_percentile", 2 | 3)
        | ("approx_quantile" | "approx_percentile_cont" | "percentile_approx", 2) => {
            numeric(&call)?;
            let q = call.float_param(1, "q", 0.0, 1.0)?;
            let accuracy = call.accuracy_param(2)?;
            let bound = Bound::ApproxPercentile { q, accuracy };
            (
                bound,
                vec![ValueType::Float64],
                OutputType::Scalar(ValueType::Float64),
            )
        }
        ("approx_median", 1 | 2) => {
            numeric(&call)?;
            let accuracy = call.accuracy_param(1)?;
            let bound = Bound::ApproxPercentile { q: 0.5, accuracy };
            (
                bound,
                vec![ValueType::Float64],
                OutputType::Scalar(ValueType::Float64),
            )
        }
        _ => return Err(call.mismatch()),
    };
    Ok(ResolvedAggregate {
        name: canonical,
        inputs,
        output,
        bound,
        swapped: takes_value_first(canonical),
    })
}

/// Whether `name` is one of the spellings of `argmax`/`argmin` that take the
/// value returned first and the value compared second (`max_by(x, y)` is
/// `argmax(y, x)`).
fn takes_value_first(name: &str) -> bool {
    matches!(
        name,
        "max_by" | "min_by" | "arg_max" | "arg_min" | "arg_max_null" | "arg_min_null"
    )
}

fn unknown_function(name: &str) -> AggregateError {
    let lower = name.to_ascii_lowercase();
    let suggestion = function_names()
        .map(|f| (strsim::levenshtein(&lower, f), f))
        .filter(|(d, f)| *d <= 2.max(f.len() / 4))
        .min()
        .map(|(_, f)| f.to_string());
    AggregateError::UnknownFunction {
        name: name.to_string(),
        suggestion,
    }
}

fn invalid(name: &str, message: impl Into<String>) -> AggregateError {
    AggregateError::InvalidArgument {
        name: name.to_string(),
        message: message.into(),
    }
}

/// The hash of `literal` as a value of type `ty`, if it converts: a
/// decimal by the type's precision and scale, other types by
/// [`Scalar::from_literal`].
fn constant_of(ty: ValueType, literal: &Literal) -> Option<u64> {
    match ty {
        ValueType::Decimal { precision, scale } => {
            literal.as_decimal(precision, scale).map(|v| v.hash64())
        }
        _ => with_scalar!(ty, T => T::from_literal(literal).map(|v| v.hash64())),
    }
}

/// A call being resolved, for argument checks with good errors.
struct Call<'a> {
    name: &'static str,
    args: &'a [ArgType],
}

impl Call<'_> {
    fn mismatch(&self) -> AggregateError {
        let args: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        AggregateError::Signature {
            name: self.name.to_string(),
            args: args.join(", "),
            expected: signatures(self.name).unwrap_or("").to_string(),
        }
    }

    fn numeric_arg(&self, i: usize) -> Result<ValueType, AggregateError> {
        match self.args.get(i) {
            Some(a) if a.ty.is_numeric() => Ok(a.ty),
            _ => Err(self.mismatch()),
        }
    }

    fn literal(&self, i: usize, what: &str) -> Result<&Literal, AggregateError> {
        match self.args.get(i).and_then(|a| a.literal.as_ref()) {
            Some(l) => Ok(l),
            None => Err(invalid(
                self.name,
                format!("{what} (argument {}) must be a constant", i + 1),
            )),
        }
    }

    fn float_param(&self, i: usize, what: &str, lo: f64, hi: f64) -> Result<f64, AggregateError> {
        let literal = self.literal(i, what)?;
        match literal.as_f64() {
            Some(v) if (lo..=hi).contains(&v) => Ok(v),
            _ => Err(invalid(
                self.name,
                format!("{what} must be a number in [{lo}, {hi}], got {literal}"),
            )),
        }
    }

    fn accuracy_param(&self, i: usize) -> Result<f64, AggregateError> {
        if self.args.len() <= i {
            return Ok(ApproxPercentile::DEFAULT_ACCURACY);
        }
        let accuracy = self.float_param(i, "accuracy", 0.0, 0.5)?;
        if accuracy < 1e-4 {
            return Err(invalid(
                self.name,
                format!("accuracy must be at least 0.0001, got {accuracy:?}"),
            ));
        }
        Ok(accuracy)
    }

    fn int_param(
        &self,
        i: usize,
        what: &str,
        range: std::ops::RangeInclusive<i64>,
    ) -> Result<i64, AggregateError> {
        let literal = self.literal(i, what)?;
        match literal.as_i64() {
            Some(v) if range.contains(&v) => Ok(v),
            _ if *range.end() == i64::MAX => Err(invalid(
                self.name,
                format!(
                    "{what} must be an integer of at least {}, got {literal}",
                    range.start()
                ),
            )),
            _ => Err(invalid(
                self.name,
                format!(
                    "{what} must be an integer in [{}, {}], got {literal}",
                    range.start(),
                    range.end()
                ),
            )),
        }
    }

    /// Constant argument `i`, which must be NULL or a value of type `ty`.
    fn default_param(&self, i: usize, ty: ValueType) -> Result<Literal, AggregateError> {
        let literal = self.literal(i, "the default")?;
        let fits = *literal == Literal::Null || constant_of(ty, literal).is_some();
        if fits {
            Ok(literal.clone())
        } else {
            Err(invalid(
                self.name,
                format!("the default {literal} is not a {ty} value"),
            ))
        }
    }

    /// The hash of constant argument `i` as a value of type `ty`.
    fn probe_hash(&self, i: usize, ty: ValueType) -> Result<u64, AggregateError> {
        let literal = self.literal(i, "the value to look for")?;
        let hash = constant_of(ty, literal);
        hash.ok_or_else(|| {
            invalid(
                self.name,
                format!("cannot compare {ty} values with the constant {literal}"),
            )
        })
    }
}

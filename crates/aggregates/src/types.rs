//! The type vocabulary shared with the planner: argument and result types.

use std::fmt;

/// The types aggregate functions consume and produce. The engine maps its
/// column types onto these (narrower integers widen to `Int64`, `Float32` to
/// `Float64`); `Timestamp` and `Date` are `i64`-backed and keep their unit on
/// the engine side; a `Decimal` value is its unscaled `i128`, its precision
/// and scale belong to the type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// `BOOLEAN`
    Boolean,
    /// `BIGINT` (all integer types widen to it)
    Int64,
    /// `DOUBLE` (`REAL` widens to it)
    Float64,
    /// `VARCHAR`
    Utf8,
    /// `TIMESTAMP`, as an `i64` count of the engine's unit
    Timestamp,
    /// `DATE`, as an `i64` count of days
    Date,
    /// `INTERVAL`, a length of time (the difference of two timestamps), as
    /// an `i64` count of the engine's unit
    Interval,
    /// `DECIMAL(precision, scale)`, as the `i128` value × 10^scale;
    /// `1 ≤ precision ≤ 38` and `0 ≤ scale ≤ precision`.
    Decimal {
        /// Significant digits.
        precision: u8,
        /// Digits after the point.
        scale: i8,
    },
}

impl ValueType {
    /// `Int64`, `Float64` or `Decimal`.
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            ValueType::Int64 | ValueType::Float64 | ValueType::Decimal { .. }
        )
    }

    /// Types with a total SQL order usable by `min`, `max`, `argmax`, …
    pub fn is_ordered(self) -> bool {
        true
    }

    /// Stored as `i64`: `Int64`, `Timestamp`, `Date`, `Interval`.
    pub fn is_i64_backed(self) -> bool {
        matches!(
            self,
            ValueType::Int64 | ValueType::Timestamp | ValueType::Date | ValueType::Interval
        )
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ValueType::Boolean => "BOOLEAN",
            ValueType::Int64 => "BIGINT",
            ValueType::Float64 => "DOUBLE",
            ValueType::Utf8 => "VARCHAR",
            ValueType::Timestamp => "TIMESTAMP",
            ValueType::Date => "DATE",
            ValueType::Interval => "INTERVAL",
            ValueType::Decimal { precision, scale } => {
                return write!(f, "DECIMAL({precision}, {scale})");
            }
        };
        f.write_str(name)
    }
}

/// A constant argument, such as the `0.9` of `approx_percentile(v, 0.9)`.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `NULL`
    Null,
    /// `TRUE` / `FALSE`
    Boolean(bool),
    /// An integer literal.
    Int64(i64),
    /// A number written with an exponent (`1e-3`), or a DOUBLE constant.
    Float64(f64),
    /// An exact number written with a point (`0.90`): `unscaled × 10^-scale`
    /// in a DECIMAL(precision, scale), the scale as written.
    Decimal {
        /// The digits without the point (`90` for `0.90`).
        unscaled: i128,
        /// Significant digits, at least `scale` and at most 38.
        precision: u8,
        /// Digits after the point.
        scale: i8,
    },
    /// A string literal.
    Utf8(String),
}

impl Literal {
    /// The literal as a float, if it is numeric.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Literal::Int64(v) => Some(*v as f64),
            Literal::Float64(v) => Some(*v),
            Literal::Decimal { .. } => self.to_string().parse().ok(),
            _ => None,
        }
    }

    /// The literal as the unscaled value of a DECIMAL(precision, scale), if
    /// it is a number that fits (a double as it was written, rounded half
    /// away from zero).
    pub fn as_decimal(&self, precision: u8, scale: i8) -> Option<i128> {
        let scale = u32::try_from(scale).ok()?;
        match self {
            Literal::Int64(v) => i128::from(*v)
                .checked_mul(10i128.checked_pow(scale)?)
                .filter(|d| d.unsigned_abs() < 10u128.pow(u32::from(precision).min(38))),
            Literal::Float64(v) => crate::decimal_from_f64(*v, precision, scale),
            Literal::Decimal { .. } => {
                crate::parse_decimal(self.to_string().as_bytes(), precision, scale)
            }
            _ => None,
        }
    }

    /// The literal as an integer, if it is an integer.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Literal::Int64(v) => Some(*v),
            Literal::Decimal {
                unscaled, scale: 0, ..
            } => i64::try_from(*unscaled).ok(),
            _ => None,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("NULL"),
            Literal::Boolean(b) => write!(f, "{}", if *b { "TRUE" } else { "FALSE" }),
            Literal::Int64(v) => write!(f, "{v}"),
            Literal::Float64(v) => write!(f, "{v}"),
            Literal::Decimal {
                unscaled, scale, ..
            } => {
                let mut text = Vec::new();
                crate::write_decimal(&mut text, *unscaled, usize::try_from(*scale).unwrap_or(0));
                f.write_str(&String::from_utf8_lossy(&text))
            }
            Literal::Utf8(s) => write!(f, "'{}'", s.replace('\'', "''")),
        }
    }
}

/// One argument of a call, as the planner sees it: its type and, when it is
/// a constant, its value.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgType {
    /// The argument's type (for a `NULL` literal, any type fits).
    pub ty: ValueType,
    /// The value, when the argument is a literal.
    pub literal: Option<Literal>,
}

impl ArgType {
    /// A non-constant argument (a column or an expression over the row).
    pub fn column(ty: ValueType) -> Self {
        ArgType { ty, literal: None }
    }

    /// A constant argument.
    pub fn literal(literal: Literal) -> Self {
        let ty = match &literal {
            Literal::Null | Literal::Int64(_) => ValueType::Int64,
            Literal::Boolean(_) => ValueType::Boolean,
            Literal::Float64(_) => ValueType::Float64,
            Literal::Decimal {
                precision, scale, ..
            } => ValueType::Decimal {
                precision: *precision,
                scale: *scale,
            },
            Literal::Utf8(_) => ValueType::Utf8,
        };
        ArgType {
            ty,
            literal: Some(literal),
        }
    }
}

impl fmt::Display for ArgType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.literal {
            Some(l) => write!(f, "{l}"),
            None => write!(f, "{}", self.ty),
        }
    }
}

/// The result type of an aggregate call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputType {
    /// A single value (possibly NULL).
    Scalar(ValueType),
    /// A struct with named fields, such as `m4`'s `{min, max, first, last}`.
    Struct(Vec<(&'static str, ValueType)>),
}

impl fmt::Display for OutputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputType::Scalar(t) => write!(f, "{t}"),
            OutputType::Struct(fields) => {
                f.write_str("STRUCT(")?;
                for (i, (name, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{name} {t}")?;
                }
                f.write_str(")")
            }
        }
    }
}

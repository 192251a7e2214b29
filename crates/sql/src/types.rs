//! SQL type names and the Arrow types sliq uses for them.

use arrow_schema::{DataType, TimeUnit};
use sliq_aggregates::ValueType;
use sqlparser::ast::DataType as SqlType;

use crate::error::SqlError;

/// The Arrow type of a SQL column type: BOOLEAN, INT/INTEGER, BIGINT,
/// FLOAT/REAL, DOUBLE, VARCHAR/TEXT/STRING, TIMESTAMP (milliseconds), DATE,
/// and DECIMAL/NUMERIC: `Decimal128` with a precision (and scale, 0 if
/// none), DOUBLE without. A `CAST` converts to the same types, so that
/// `CAST(v AS DECIMAL(10, 2))` rounds to cents as SQL engines do.
pub fn arrow_type(sql: &SqlType) -> Result<DataType, SqlError> {
    if let Some(decimal) = decimal_type(sql)? {
        return Ok(decimal);
    }
    Ok(match sql {
        SqlType::Bool | SqlType::Boolean => DataType::Boolean,
        SqlType::TinyInt(_) => DataType::Int8,
        SqlType::SmallInt(_) | SqlType::Int2(_) | SqlType::Int16 => DataType::Int16,
        SqlType::Int(_)
        | SqlType::Integer(_)
        | SqlType::Int4(_)
        | SqlType::Int32
        | SqlType::MediumInt(_) => DataType::Int32,
        SqlType::BigInt(_) | SqlType::Int8(_) | SqlType::Int64 => DataType::Int64,
        // Unsigned integers up to 32 bits (DuckDB's UTINYINT, USMALLINT,
        // UINTEGER, MySQL's UNSIGNED): every value is a BIGINT to the
        // aggregates. A 64-bit one would not be, so it is not offered.
        SqlType::UTinyInt | SqlType::TinyIntUnsigned(_) | SqlType::UInt8 => DataType::UInt8,
        SqlType::USmallInt
        | SqlType::SmallIntUnsigned(_)
        | SqlType::Int2Unsigned(_)
        | SqlType::UInt16 => DataType::UInt16,
        SqlType::IntUnsigned(_)
        | SqlType::IntegerUnsigned(_)
        | SqlType::Int4Unsigned(_)
        | SqlType::MediumIntUnsigned(_)
        | SqlType::UInt32 => DataType::UInt32,
        SqlType::Real | SqlType::Float4 | SqlType::Float32 => DataType::Float32,
        SqlType::Float(_) => DataType::Float32,
        SqlType::Double(_) | SqlType::DoublePrecision | SqlType::Float64 | SqlType::Float8 => {
            DataType::Float64
        }
        SqlType::Numeric(_) | SqlType::Decimal(_) | SqlType::Dec(_) => DataType::Float64,
        SqlType::Varchar(_)
        | SqlType::Char(_)
        | SqlType::Character(_)
        | SqlType::CharacterVarying(_)
        | SqlType::CharVarying(_)
        | SqlType::Nvarchar(_)
        | SqlType::Text
        | SqlType::TinyText
        | SqlType::MediumText
        | SqlType::LongText
        | SqlType::String(_) => DataType::Utf8,
        SqlType::Timestamp(_, _) | SqlType::TimestampNtz(_) | SqlType::Datetime(_) => {
            DataType::Timestamp(TimeUnit::Millisecond, None)
        }
        SqlType::Date => DataType::Date32,
        SqlType::Custom(name, _) if name.to_string().eq_ignore_ascii_case("STRING") => {
            DataType::Utf8
        }
        SqlType::Custom(name, _) if name.to_string().eq_ignore_ascii_case("UINTEGER") => {
            DataType::UInt32
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "column type {other} (use BOOLEAN, INT, BIGINT, REAL, DOUBLE, DECIMAL(p, s), VARCHAR, TIMESTAMP or DATE)"
            )));
        }
    })
}

/// `Decimal128` for a DECIMAL or NUMERIC with a precision; `None` for other
/// types and for a DECIMAL without one (DOUBLE).
fn decimal_type(sql: &SqlType) -> Result<Option<DataType>, SqlError> {
    use sqlparser::ast::ExactNumberInfo;
    let (SqlType::Numeric(info) | SqlType::Decimal(info) | SqlType::Dec(info)) = sql else {
        return Ok(None);
    };
    let (precision, scale) = match *info {
        ExactNumberInfo::None => return Ok(None),
        ExactNumberInfo::Precision(p) => (p, 0),
        ExactNumberInfo::PrecisionAndScale(p, s) => (p, s),
    };
    let max = u64::from(arrow_schema::DECIMAL128_MAX_PRECISION);
    match (u8::try_from(precision), i8::try_from(scale)) {
        (Ok(p), Ok(s)) if (1..=max).contains(&precision) && (0..=i64::from(p)).contains(&scale) => {
            Ok(Some(DataType::Decimal128(p, s)))
        }
        _ => Err(SqlError::plan(format!(
            "{sql}: a DECIMAL's precision is 1 to {max} and its scale 0 to the precision"
        ))),
    }
}

/// `t` as sliq's SQL names it (`INTEGER`, `VARCHAR`, `DECIMAL(10, 2)`,
/// the names `CREATE STREAM` reads as these types), or as arrow does where
/// it has no name.
pub fn sql_type_name(t: &DataType) -> String {
    let name = match t {
        DataType::Boolean => "BOOLEAN",
        DataType::Int8 => "TINYINT",
        DataType::Int16 => "SMALLINT",
        DataType::Int32 => "INTEGER",
        DataType::Int64 => "BIGINT",
        DataType::UInt8 => "UTINYINT",
        DataType::UInt16 => "USMALLINT",
        DataType::UInt32 => "UINTEGER",
        DataType::Float32 => "REAL",
        DataType::Float64 => "DOUBLE",
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "VARCHAR",
        DataType::Date32 => "DATE",
        DataType::Timestamp(_, None) => "TIMESTAMP",
        DataType::Timestamp(_, Some(_)) => "TIMESTAMP WITH TIME ZONE",
        DataType::Duration(_) | DataType::Interval(_) => "INTERVAL",
        DataType::Decimal128(precision, scale) => return format!("DECIMAL({precision}, {scale})"),
        other => return other.to_string(),
    };
    name.to_string()
}

/// The aggregate-facing type of an Arrow type, if aggregates can take it.
/// Integers that fit widen to `Int64`; `UInt64` (which does not), floats and
/// 256-bit decimals become `Float64`; a `Decimal128` keeps its precision and
/// scale; every string type is `Utf8`, every timestamp
/// millisecond `Timestamp`; a dictionary-encoded column has its values' type.
pub fn value_type(arrow: &DataType) -> Option<ValueType> {
    Some(match arrow {
        DataType::Boolean => ValueType::Boolean,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => ValueType::Int64,
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => ValueType::Int64,
        DataType::UInt64 => ValueType::Float64,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => ValueType::Float64,
        // A negative scale (never produced by sliq's SQL) reads as a double.
        DataType::Decimal128(precision, scale) if *scale >= 0 => ValueType::Decimal {
            precision: *precision,
            scale: *scale,
        },
        DataType::Decimal128(_, _) | DataType::Decimal256(_, _) => ValueType::Float64,
        DataType::Dictionary(_, values) => return value_type(values),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => ValueType::Utf8,
        DataType::Timestamp(_, _) => ValueType::Timestamp,
        DataType::Date32 | DataType::Date64 => ValueType::Date,
        DataType::Duration(_) => ValueType::Interval,
        DataType::Null => ValueType::Int64,
        _ => return None,
    })
}

/// The Arrow type the engine feeds to an aggregate argument of type `ty`.
pub fn canonical_arrow_type(ty: ValueType) -> DataType {
    match ty {
        ValueType::Boolean => DataType::Boolean,
        ValueType::Int64 => DataType::Int64,
        ValueType::Float64 => DataType::Float64,
        ValueType::Utf8 => DataType::Utf8,
        ValueType::Timestamp => DataType::Timestamp(TimeUnit::Millisecond, None),
        ValueType::Date => DataType::Date32,
        ValueType::Interval => DataType::Duration(TimeUnit::Millisecond),
        ValueType::Decimal { precision, scale } => DataType::Decimal128(precision, scale),
    }
}

//! The scalar functions a query can call: DataFusion's, less the clock
//! functions a continuous query cannot have, with their documentation for
//! `SHOW FUNCTIONS`.

use std::sync::Arc;

use datafusion_expr::Operator;
use sqlparser::ast;

use crate::error::{Location, SqlError, SqlErrorKind, closest};

/// DataFusion's functions of the time a query starts, which it replaces by
/// a constant when planning a batch query; a continuous query never stops.
const CLOCK_FUNCTIONS: &[&str] = &[
    "now",
    "current_timestamp",
    "current_date",
    "today",
    "current_time",
];

/// The group-window functions of Flink SQL and Calcite (`GROUP BY
/// TUMBLE(ts, INTERVAL '10' SECOND)`), which emit a row per window once it
/// closes; sliq emits a row per event, and spells the same windows as a
/// bucket to group by or a frame.
const GROUP_WINDOW_FUNCTIONS: &[&str] = &[
    "tumble",
    "hop",
    "session",
    "tumble_start",
    "tumble_end",
    "tumble_rowtime",
    "hop_start",
    "hop_end",
    "hop_rowtime",
    "session_start",
    "session_end",
    "session_rowtime",
];

/// Names PostgreSQL and DuckDB give functions that DataFusion has under
/// another name: `(spelling, DataFusion's name)`.
const OTHER_SPELLINGS: &[(&str, &str)] = &[
    ("sign", "signum"),
    ("ceiling", "ceil"),
    ("strftime", "to_char"),
];

/// Functions that PostgreSQL and DuckDB spell out for a binary operator,
/// planned as the operator: `(name, operator, signature)`.
const OPERATOR_FUNCTIONS: &[(&str, Operator, &str)] =
    &[("mod", Operator::Modulo, "mod(a numeric, b numeric): a % b")];

/// DuckDB's time functions, which the planner writes as DataFusion's:
/// `(name, signature)`.
pub(super) const DUCKDB_TIME_FUNCTIONS: &[(&str, &str)] = &[
    (
        "epoch",
        "epoch(t timestamp): the seconds since 1970-01-01 as DOUBLE (EXTRACT(EPOCH FROM t))",
    ),
    (
        "epoch_ms",
        "epoch_ms(t timestamp): the milliseconds since 1970-01-01 as BIGINT; \
         epoch_ms(ms bigint): the TIMESTAMP",
    ),
    (
        "date_diff",
        "date_diff(part text, start timestamp, end timestamp): the boundaries of part \
         ('millisecond', 'second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year') \
         from start to end, as BIGINT; also datediff",
    ),
    (
        "datediff",
        "datediff(part text, start timestamp, end timestamp): date_diff",
    ),
    (
        "time_bucket",
        "time_bucket(width interval, t timestamp[, origin timestamp]): the start of t's bucket, \
         buckets counted from origin (2000-01-03, a Monday)",
    ),
];

/// Whether `name` (lower case) is one of [`DUCKDB_TIME_FUNCTIONS`].
pub(super) fn is_duckdb_time_function(name: &str) -> bool {
    DUCKDB_TIME_FUNCTIONS.iter().any(|(n, _)| *n == name)
}

/// The binary operator that function `name` (lower case) is written for.
pub(super) fn operator_function(name: &str) -> Option<Operator> {
    OPERATOR_FUNCTIONS
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|(_, op, _)| *op)
}

/// Whether `name` (lower case) is a scalar function, one of DataFusion's or
/// one written for an operator.
pub fn is_scalar_function(name: &str) -> bool {
    scalar_function(name).is_some()
        || operator_function(name).is_some()
        || is_duckdb_time_function(name)
}

/// The scalar functions available in expressions, by name and alias.
fn scalar_functions() -> &'static std::collections::HashMap<String, Arc<datafusion_expr::ScalarUDF>>
{
    static FUNCTIONS: std::sync::OnceLock<
        std::collections::HashMap<String, Arc<datafusion_expr::ScalarUDF>>,
    > = std::sync::OnceLock::new();
    FUNCTIONS.get_or_init(|| {
        let mut map = std::collections::HashMap::new();
        for udf in datafusion_functions::all_default_functions()
            .into_iter()
            .filter(|udf| !CLOCK_FUNCTIONS.contains(&udf.name()))
        {
            for alias in udf.aliases() {
                map.insert(alias.to_ascii_lowercase(), Arc::clone(&udf));
            }
            map.insert(udf.name().to_ascii_lowercase(), udf);
        }
        for (spelling, name) in OTHER_SPELLINGS {
            if let Some(udf) = map.get(*name).cloned() {
                map.insert(spelling.to_string(), udf);
            }
        }
        map
    })
}

/// The scalar function `name` (lower case), if sliq has it.
pub fn scalar_function(name: &str) -> Option<&'static Arc<datafusion_expr::ScalarUDF>> {
    scalar_functions().get(name)
}

/// A function queries can call, for `SHOW FUNCTIONS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    /// Its name (lower case).
    pub name: String,
    /// `aggregate`, `scalar` or (engine side) `user aggregate`.
    pub kind: &'static str,
    /// How it is called, with argument and result types where known.
    pub signature: String,
}

/// Every built-in function, aggregates then scalar functions, each sorted
/// by name.
pub fn builtin_functions() -> Vec<FunctionInfo> {
    let aggregates = sliq_aggregates::registry::FUNCTIONS
        .iter()
        .map(|(name, signature)| FunctionInfo {
            name: name.to_string(),
            kind: "aggregate",
            signature: signature.to_string(),
        });
    let mut scalars: Vec<FunctionInfo> = scalar_functions()
        .iter()
        .map(|(name, udf)| FunctionInfo {
            name: name.clone(),
            kind: "scalar",
            signature: udf
                .documentation()
                .map(|d| d.syntax_example.clone())
                .unwrap_or_else(|| format!("{name}(…)")),
        })
        .chain(
            OPERATOR_FUNCTIONS
                .iter()
                .map(|(name, _, signature)| (name, signature))
                .chain(
                    DUCKDB_TIME_FUNCTIONS
                        .iter()
                        .map(|(name, signature)| (name, signature)),
                )
                .map(|(name, signature)| FunctionInfo {
                    name: name.to_string(),
                    kind: "scalar",
                    signature: signature.to_string(),
                }),
        )
        .collect();
    scalars.sort_by(|a, b| a.name.cmp(&b.name));
    let mut all: Vec<FunctionInfo> = aggregates.collect();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all.extend(scalars);
    all
}

/// Whether `text` matches the SQL `LIKE` `pattern` (`%` any run, `_` one
/// character), ignoring ASCII case.
pub fn like(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_ascii_lowercase().chars().collect();
    let t: Vec<char> = text.to_ascii_lowercase().chars().collect();
    // Greedy match with backtracking to the last `%` (linear in practice).
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        match p.get(i) {
            Some('%') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '_' || c == t[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '%')
}

/// Names of all scalar and aggregate functions, for suggestions.
fn function_names() -> impl Iterator<Item = &'static str> {
    scalar_functions()
        .keys()
        .map(String::as_str)
        .chain(OPERATOR_FUNCTIONS.iter().map(|(name, ..)| *name))
        .chain(DUCKDB_TIME_FUNCTIONS.iter().map(|(name, _)| *name))
        .chain(sliq_aggregates::registry::function_names())
}

/// The error for a call of `name` (lower case), which names no function.
pub fn unknown_function(name: &str, location: Option<Location>) -> SqlError {
    SqlError::at(
        SqlErrorKind::UnknownFunction {
            name: name.to_string(),
            suggestion: closest(name, function_names()),
        },
        location,
    )
}

/// The error for scalar function `name` called with `OVER`, which takes an
/// aggregate or a window function.
pub fn over_scalar_function(name: &str, location: Option<Location>) -> SqlError {
    SqlError::at(
        SqlErrorKind::Plan(format!(
            "{name} is a scalar function, not an aggregate: it takes no OVER (it may take an \
             aggregate's result, as in {name}(max(v) OVER (…)))"
        )),
        location,
    )
}

/// Whether `f` is one of [`CLOCK_FUNCTIONS`].
pub(super) fn is_clock_function(f: &ast::Function) -> bool {
    let name = f.name.to_string().to_ascii_lowercase();
    CLOCK_FUNCTIONS.contains(&name.as_str())
}

/// The error for a group-window function (see [`GROUP_WINDOW_FUNCTIONS`])
/// such as `TUMBLE(ts, INTERVAL '10' SECOND)`, with sliq's way to write
/// that window; `None` for another function.
pub(super) fn group_window_function(f: &ast::Function) -> Option<SqlError> {
    let name = f.name.to_string().to_ascii_lowercase();
    if !GROUP_WINDOW_FUNCTIONS.contains(&name.as_str()) {
        return None;
    }
    let args: Vec<String> = match &f.args {
        ast::FunctionArguments::List(list) => list.args.iter().map(|a| a.to_string()).collect(),
        _ => Vec::new(),
    };
    // `(time, first length, last length)`: TUMBLE's size, HOP's slide and
    // size, SESSION's gap.
    let (time, first, last) = match args.as_slice() {
        [time, lengths @ ..] if !lengths.is_empty() => (
            time.as_str(),
            lengths[0].as_str(),
            lengths[lengths.len() - 1].as_str(),
        ),
        _ => ("ts", "INTERVAL '10' SECOND", "INTERVAL '10' SECOND"),
    };
    let instead = match name.split('_').next() {
        Some("tumble") => format!(
            "a tumbling window is a bucket to group by: GROUP BY key, time_bucket({first}, \
             {time}) gives each event its bucket's aggregate so far (key_ttl on the stream \
             forgets buckets gone by)"
        ),
        Some("hop") => format!(
            "a hopping window is a frame that slides with each event: \
             OVER (RANGE BETWEEN {last} PRECEDING AND CURRENT ROW)"
        ),
        _ => format!(
            "a session window is a key's rows without a gap longer than {last} between \
             them: GROUP BY key over a stream created WITH (key_ttl = …) of that gap gives \
             each event its session's aggregate so far (a key idle past the TTL starts afresh)"
        ),
    };
    Some(SqlError::at(
        SqlErrorKind::Unsupported(format!(
            "{}: sliq emits a row for every event, not one per window; {instead}",
            f.name
        )),
        super::location_of(&f.name),
    ))
}

/// Whether a call without `OVER` is a scalar function (not an aggregate).
pub fn is_scalar_call(f: &ast::Function) -> bool {
    let name = f.name.to_string().to_ascii_lowercase();
    !sliq_aggregates::registry::is_aggregate(&name) && is_scalar_function(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_sql_patterns_ignoring_case() {
        for (pattern, text) in [
            ("max", "MAX"),
            ("%max%", "argmax"),
            ("m_x", "max"),
            ("%", ""),
            ("a%b%c", "aXXbYYc"),
            ("%_count%", "approx_count_distinct"),
        ] {
            assert!(like(pattern, text), "{pattern} should match {text}");
        }
        for (pattern, text) in [("max", "maxcount"), ("m_x", "mx"), ("a%b", "ac"), ("_", "")] {
            assert!(!like(pattern, text), "{pattern} should not match {text}");
        }
    }

    #[test]
    fn builtins_list_aggregates_then_scalar_functions() {
        let all = builtin_functions();
        let first_scalar = all.iter().position(|f| f.kind == "scalar").unwrap();
        assert!(all[..first_scalar].iter().all(|f| f.kind == "aggregate"));
        assert!(all[first_scalar..].iter().all(|f| f.kind == "scalar"));
        assert!(
            all.iter()
                .any(|f| f.name == "lag" && f.signature.starts_with("lag(x any"))
        );
        assert!(
            all.iter()
                .any(|f| f.name == "abs" && f.signature == "abs(numeric_expression)")
        );
        for spelling in ["mod", "sign", "ceiling", "strftime"] {
            assert!(all.iter().any(|f| f.name == spelling), "{spelling}");
        }
    }
}

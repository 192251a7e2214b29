//! `OVER` clauses: named windows, `PARTITION BY` and `ORDER BY` checks, and
//! frames (`ROWS n PRECEDING`, `RANGE '10s'`, `UNBOUNDED PRECEDING`).

use arrow_schema::DataType;
use datafusion_expr::Expr;
use sliq_aggregates::FixedFrame;
use sqlparser::ast::{self, WindowFrameBound, WindowFrameUnits, WindowType};

use super::aggregate::AggregatePlanner;
use crate::error::{SqlError, SqlErrorKind};
use crate::expr::{Place, ident_location, location_of};
use crate::parser::{DurationError, duration_ms};
use crate::plan::{Frame, WindowGroup};
use crate::types::sql_type_name;

impl AggregatePlanner<'_> {
    /// The window group of a call's `OVER` clause (found or added).
    /// `fixed` (from `lag`, `row_number`) replaces the frame the call names.
    pub(super) fn window(
        &mut self,
        f: &ast::Function,
        fixed: Option<FixedFrame>,
    ) -> Result<usize, SqlError> {
        let spec = match &f.over {
            None => None,
            Some(WindowType::WindowSpec(spec)) => Some(self.resolve_named(spec)?),
            Some(WindowType::NamedWindow(name)) => {
                match self.named_windows.get(&name.value.to_ascii_lowercase()) {
                    Some(ast::NamedWindowExpr::WindowSpec(spec)) => Some(self.resolve_named(spec)?),
                    Some(ast::NamedWindowExpr::NamedWindow(other)) => {
                        return Err(SqlError::unsupported(format!(
                            "window {name} defined as another window {other}"
                        )));
                    }
                    None => {
                        return Err(SqlError::at(
                            SqlErrorKind::Plan(format!(
                                "unknown window '{name}': define it with WINDOW {name} AS (…)"
                            )),
                            ident_location(name),
                        ));
                    }
                }
            }
        };
        let (keys, key_names) = match &spec {
            Some(s) if !s.partition_by.is_empty() => (
                s.partition_by
                    .iter()
                    .map(|e| self.converter.convert_in(e, Place::PartitionBy))
                    .collect::<Result<Vec<_>, _>>()?,
                s.partition_by.iter().map(ToString::to_string).collect(),
            ),
            _ => (self.group_keys.to_vec(), self.group_names.to_vec()),
        };
        let order_column = match &spec {
            Some(s) => match s.order_by.as_slice() {
                [] => None,
                [o] => match &o.expr {
                    ast::Expr::Identifier(i) => {
                        let column = self.converter.convert_in(&o.expr, Place::WindowOrder)?;
                        if o.options.asc == Some(false) {
                            return Err(SqlError::unsupported(
                                "ORDER BY … DESC in a window (streams arrive in ascending time)",
                            ));
                        }
                        self.check_window_order(i, &column)?;
                        Some(i.value.clone())
                    }
                    other => {
                        return Err(SqlError::unsupported(format!(
                            "ORDER BY {other} in a window (order by a column)"
                        )));
                    }
                },
                _ => {
                    return Err(SqlError::unsupported(
                        "ORDER BY several columns in a window",
                    ));
                }
            },
            None => None,
        };
        let frame = match (fixed, spec.as_ref().and_then(|s| s.window_frame.as_ref())) {
            (Some(FixedFrame::Rows(n)), _) => Frame::Rows(n),
            (Some(FixedFrame::Unbounded), _) | (None, None) => Frame::Unbounded,
            (None, Some(frame)) => self.frame(frame)?,
        };
        let event_time = match frame {
            Frame::Range(_) => {
                let column = order_column
                    .or_else(|| self.stream_event_time.clone())
                    .ok_or_else(|| SqlError::plan(self.no_event_time.clone()))?;
                let e = self.converter.convert_in(
                    &ast::Expr::Identifier(ast::Ident::new(&column)),
                    Place::WindowOrder,
                )?;
                match self.converter.type_of(&e)? {
                    DataType::Timestamp(_, _) | DataType::Int64 | DataType::Int32 => Some(column),
                    other => {
                        return Err(SqlError::plan(format!(
                            "the event-time column '{column}' is {other}; RANGE needs TIMESTAMP or BIGINT (epoch milliseconds)"
                        )));
                    }
                }
            }
            _ => None,
        };
        let existing = self.windows.iter().position(|w| {
            w.frame == frame && w.event_time == event_time && w.key_names == key_names
        });
        Ok(existing.unwrap_or_else(|| {
            self.windows.push(WindowGroup {
                keys,
                key_names,
                frame,
                event_time,
            });
            self.windows.len() - 1
        }))
    }

    /// A window's rows are its stream's rows in arrival order, so `ORDER BY`
    /// in `OVER` may only name the column that order follows: the stream's
    /// event-time column, or, when it declares none, a time or sequence
    /// column (TIMESTAMP or integer; for RANGE frames it becomes the event
    /// time). Ordering by anything else would silently differ from SQL.
    fn check_window_order(&self, column: &ast::Ident, converted: &Expr) -> Result<(), SqlError> {
        let name = &column.value;
        let refused = match &self.stream_event_time {
            Some(event_time) if !event_time.eq_ignore_ascii_case(name) => format!(
                "ORDER BY {name} in a window: rows are windowed in arrival order, which follows \
                 the stream's event-time column '{event_time}'; write ORDER BY {event_time} or \
                 leave ORDER BY out"
            ),
            Some(_) => return Ok(()),
            None => match self.converter.type_of(converted)? {
                DataType::Timestamp(_, _) | DataType::Date32 | DataType::Date64 => return Ok(()),
                t if t.is_integer() => return Ok(()),
                other => format!(
                    "ORDER BY {name} ({}) in a window: rows are windowed in arrival order; \
                     ORDER BY may name the time or sequence column (TIMESTAMP or integer) they \
                     arrive in",
                    sql_type_name(&other)
                ),
            },
        };
        Err(SqlError::at(
            SqlErrorKind::Unsupported(refused),
            ident_location(column),
        ))
    }

    /// A spec that names a base window (`OVER (w ROWS …)`) is not supported;
    /// a plain spec is returned as is.
    fn resolve_named(&self, spec: &ast::WindowSpec) -> Result<ast::WindowSpec, SqlError> {
        match &spec.window_name {
            None => Ok(spec.clone()),
            Some(name) => match self.named_windows.get(&name.value.to_ascii_lowercase()) {
                Some(ast::NamedWindowExpr::WindowSpec(base))
                    if spec.window_frame.is_none() && spec.partition_by.is_empty() =>
                {
                    Ok(base.clone())
                }
                _ => Err(SqlError::unsupported(format!(
                    "refining the named window {name}"
                ))),
            },
        }
    }

    fn frame(&self, frame: &ast::WindowFrame) -> Result<Frame, SqlError> {
        match &frame.end_bound {
            None | Some(WindowFrameBound::CurrentRow) => {}
            Some(WindowFrameBound::Following(_)) => {
                return Err(SqlError::unsupported(
                    "FOLLOWING bounds (a stream cannot wait for later rows)",
                ));
            }
            Some(WindowFrameBound::Preceding(end)) => {
                return Err(SqlError::unsupported(format!(
                    "frames ending before the current row{}",
                    rows_before_hint(frame, end.as_deref())
                )));
            }
        }
        let bound = match &frame.start_bound {
            WindowFrameBound::CurrentRow => {
                return Ok(match frame.units {
                    WindowFrameUnits::Range => Frame::Range(0),
                    _ => Frame::Rows(0),
                });
            }
            WindowFrameBound::Following(_) => {
                return Err(SqlError::unsupported(
                    "FOLLOWING bounds (a stream cannot wait for later rows)",
                ));
            }
            WindowFrameBound::Preceding(None) => return Ok(Frame::Unbounded),
            WindowFrameBound::Preceding(Some(b)) => b.as_ref(),
        };
        match frame.units {
            WindowFrameUnits::Rows => match bound {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => n.parse::<u64>().map(Frame::Rows).map_err(|_| {
                        SqlError::at(
                            SqlErrorKind::Plan(format!(
                                "ROWS needs a whole number of rows, got {n}"
                            )),
                            location_of(bound),
                        )
                    }),
                    other => Err(SqlError::at(
                        SqlErrorKind::Plan(format!("ROWS needs a number of rows, got {other}")),
                        location_of(bound),
                    )),
                },
                other => Err(SqlError::at(
                    SqlErrorKind::Plan(format!(
                        "ROWS needs a constant number of rows, got {other}"
                    )),
                    location_of(bound),
                )),
            },
            WindowFrameUnits::Range => {
                let ms = match bound {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => duration_ms(n),
                        ast::Value::SingleQuotedString(s) => duration_ms(s),
                        _ => Err(DurationError::Malformed),
                    },
                    ast::Expr::Interval(interval) => interval_ms(interval),
                    _ => Err(DurationError::Malformed),
                };
                ms.map(Frame::Range).map_err(|e| {
                    let message = match e {
                        DurationError::TooLong => "RANGE: the duration is longer than a \
                             window can span (at most 2^62 ms, about 146 million years)"
                            .to_string(),
                        DurationError::Malformed => format!(
                            "RANGE needs a duration such as '10s', '1m30s' or INTERVAL '10' SECOND, got {}",
                            as_written(bound)
                        ),
                    };
                    SqlError::at(SqlErrorKind::Plan(message), location_of(bound))
                })
            }
            WindowFrameUnits::Groups => Err(SqlError::unsupported("GROUPS frames")),
        }
    }
}

/// How to have `ROWS BETWEEN n PRECEDING AND k PRECEDING` (`end` is `k`):
/// as a window over `lag(x, k)`, which a query around a `WITH` query keeps.
fn rows_before_hint(frame: &ast::WindowFrame, end: Option<&ast::Expr>) -> String {
    let number = |e: Option<&ast::Expr>| match e {
        Some(ast::Expr::Value(v)) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<u64>().ok(),
            _ => None,
        },
        _ => None,
    };
    let start = match &frame.start_bound {
        WindowFrameBound::Preceding(start) => number(start.as_deref()),
        _ => None,
    };
    match (frame.units, start, number(end)) {
        (WindowFrameUnits::Rows, Some(n), Some(k)) if k >= 1 && n >= k => format!(
            "; the rows {k} to {n} before it are a window over lag(x, {k}): WITH d AS (SELECT *, \
             lag(x, {k}) AS prev FROM s GROUP BY key) SELECT f(prev) OVER (ROWS {} PRECEDING) \
             FROM d GROUP BY key",
            n - k
        ),
        _ => String::new(),
    }
}

/// A RANGE bound as the query wrote it: sqlparser reads the shorthand
/// `RANGE '10s'` as `INTERVAL '10s'`, which the query did not say.
fn as_written(bound: &ast::Expr) -> String {
    match bound {
        ast::Expr::Interval(ast::Interval {
            value,
            leading_field: None,
            ..
        }) => value.to_string(),
        other => other.to_string(),
    }
}

/// The length of a fixed `INTERVAL` (ms, s, m, h, d) in milliseconds.
pub(crate) fn interval_ms(interval: &ast::Interval) -> Result<i64, DurationError> {
    let text = match interval.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(n, _) => n.clone(),
            _ => return Err(DurationError::Malformed),
        },
        _ => return Err(DurationError::Malformed),
    };
    let unit = match &interval.leading_field {
        None => return duration_ms(&text),
        Some(ast::DateTimeField::Millisecond | ast::DateTimeField::Milliseconds) => "ms",
        Some(ast::DateTimeField::Second | ast::DateTimeField::Seconds) => "s",
        Some(ast::DateTimeField::Minute | ast::DateTimeField::Minutes) => "m",
        Some(ast::DateTimeField::Hour | ast::DateTimeField::Hours) => "h",
        Some(ast::DateTimeField::Day | ast::DateTimeField::Days) => "d",
        Some(_) => return Err(DurationError::Malformed),
    };
    let amount: f64 = text.trim().parse().map_err(|_| DurationError::Malformed)?;
    duration_ms(&format!("{amount}{unit}"))
}

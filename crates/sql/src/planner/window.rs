//! `OVER` clauses: named windows, `PARTITION BY` and `ORDER BY` checks, and
//! frames (`ROWS n PRECEDING`, `RANGE '10s'`, `UNBOUNDED PRECEDING`, and frames
//! ending some rows or some time before the current row).

use arrow_schema::DataType;
use datafusion_expr::Expr;
use sliq_aggregates::FixedFrame;
use sqlparser::ast::{self, WindowFrameBound, WindowFrameUnits, WindowType};

use super::aggregate::AggregatePlanner;
use crate::error::{SqlError, SqlErrorKind};
use crate::expr::{Place, ident_location, location_of};
use crate::parser::{DurationError, duration_ms};
use crate::plan::{Frame, WindowGroup, format_duration};
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
            Some(WindowType::NamedWindow(name)) => Some(self.named_window(name, 0)?),
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
                        if o.options.nulls_first == Some(true) {
                            return Err(SqlError::unsupported(
                                "ORDER BY … NULLS FIRST in a window (a row whose time is NULL \
                                 is late, never first)",
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
        let event_time = match frame.is_range() {
            true => {
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
            false => None,
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

    /// `spec` with the named window it starts from, if any, filled in: as
    /// in SQL, `OVER (w ROWS 9 PRECEDING)` is `w`'s `PARTITION BY` and
    /// `ORDER BY` with that frame. A spec that refines `w` may add the
    /// `ORDER BY` it lacks and the frame; not a `PARTITION BY`, and no other
    /// `ORDER BY`.
    fn resolve_named(&self, spec: &ast::WindowSpec) -> Result<ast::WindowSpec, SqlError> {
        self.refined(spec, 0)
    }

    fn refined(&self, spec: &ast::WindowSpec, depth: usize) -> Result<ast::WindowSpec, SqlError> {
        let Some(name) = &spec.window_name else {
            return Ok(spec.clone());
        };
        let base = self.named_window(name, depth)?;
        let adds_to_base = spec.window_frame.is_some() || !spec.order_by.is_empty();
        let refused = if !spec.partition_by.is_empty() {
            Some(format!(
                "a window that refines {name} takes its PARTITION BY and may not write one"
            ))
        } else if !spec.order_by.is_empty() && !base.order_by.is_empty() {
            Some(format!(
                "{name} has an ORDER BY, which a window that refines it may not replace"
            ))
        } else if adds_to_base && base.window_frame.is_some() {
            Some(format!(
                "{name} has a frame, so no window may refine it (leave the frame out of {name}, or write the whole window here)"
            ))
        } else {
            None
        };
        if let Some(why) = refused {
            return Err(SqlError::at(SqlErrorKind::Plan(why), ident_location(name)));
        }
        Ok(ast::WindowSpec {
            window_name: None,
            partition_by: base.partition_by,
            order_by: match spec.order_by.is_empty() {
                true => base.order_by,
                false => spec.order_by.clone(),
            },
            window_frame: spec.window_frame.clone().or(base.window_frame),
        })
    }

    /// The window `WINDOW name AS (…)` defines, itself resolved (it may
    /// start from another named window).
    fn named_window(&self, name: &ast::Ident, depth: usize) -> Result<ast::WindowSpec, SqlError> {
        let plan_error = |why: String| SqlError::at(SqlErrorKind::Plan(why), ident_location(name));
        if depth > self.named_windows.len() {
            return Err(plan_error(format!(
                "the window {name} is defined through itself"
            )));
        }
        match self.named_windows.get(&name.value.to_ascii_lowercase()) {
            Some(ast::NamedWindowExpr::WindowSpec(spec)) => self.refined(spec, depth + 1),
            Some(ast::NamedWindowExpr::NamedWindow(other)) => self.named_window(other, depth + 1),
            None => Err(plan_error(format!(
                "unknown window '{name}': define it with WINDOW {name} AS (…)"
            ))),
        }
    }

    fn frame(&self, frame: &ast::WindowFrame) -> Result<Frame, SqlError> {
        let rows = match frame.units {
            WindowFrameUnits::Rows => true,
            WindowFrameUnits::Range => false,
            WindowFrameUnits::Groups => return Err(SqlError::unsupported("GROUPS frames")),
        };
        let start = frame_bound(&frame.start_bound, rows)?;
        let end = match &frame.end_bound {
            None => Back::By(0),
            Some(bound) => frame_bound(bound, rows)?,
        };
        let end_expr = match &frame.end_bound {
            Some(WindowFrameBound::Preceding(Some(e))) => Some(e.as_ref()),
            _ => None,
        };
        let end = match end {
            Back::By(k) => k,
            Back::Unbounded => {
                return Err(SqlError::plan(
                    "a frame cannot end at UNBOUNDED PRECEDING: it would hold no row",
                ));
            }
        };
        let Back::By(start) = start else {
            // Durations are at most 2^62 ms.
            return Ok(match (end, rows) {
                (0, _) => Frame::Unbounded,
                (k, true) => Frame::UnboundedBefore(k),
                (ms, false) => Frame::UnboundedBeforeTime(ms as i64),
            });
        };
        if end > start {
            let back = |by: u64| match (by, rows) {
                (0, _) => "CURRENT ROW".to_string(),
                (by, true) => format!("{by} PRECEDING"),
                (by, false) => format!("{} PRECEDING", format_duration(by as i64)),
            };
            let message = format!(
                "the frame ends {}, before it starts ({}): it would never hold a row",
                back(end),
                back(start)
            );
            return Err(match end_expr {
                Some(e) => SqlError::at(SqlErrorKind::Plan(message), location_of(e)),
                None => SqlError::plan(message),
            });
        }
        // Both fit: rows are u64 and durations at most 2^62 ms.
        Ok(match (rows, end) {
            (true, 0) => Frame::Rows(start),
            (true, end) => Frame::RowsBefore { start, end },
            (false, 0) => Frame::Range(start as i64),
            (false, end) => Frame::RangeBefore {
                start: start as i64,
                end: end as i64,
            },
        })
    }
}

/// A frame bound: how far before the current row, in the frame's units
/// (rows, or milliseconds for RANGE).
enum Back {
    Unbounded,
    By(u64),
}

/// Reads a frame bound; `rows` for a ROWS frame, else RANGE.
fn frame_bound(bound: &WindowFrameBound, rows: bool) -> Result<Back, SqlError> {
    let back = |expr: &ast::Expr| match rows {
        true => rows_back(expr),
        false => range_back(expr).map(|ms| ms.unsigned_abs()),
    };
    let expr = match bound {
        WindowFrameBound::CurrentRow => return Ok(Back::By(0)),
        // `0 FOLLOWING` is the current row; a later one cannot be waited for.
        WindowFrameBound::Following(Some(e)) if back(e).is_ok_and(|by| by == 0) => {
            return Ok(Back::By(0));
        }
        WindowFrameBound::Following(_) => {
            return Err(SqlError::unsupported(
                "FOLLOWING bounds (a stream cannot wait for later rows)",
            ));
        }
        WindowFrameBound::Preceding(None) => return Ok(Back::Unbounded),
        WindowFrameBound::Preceding(Some(e)) => e.as_ref(),
    };
    back(expr).map(Back::By)
}

/// `n` of `ROWS n PRECEDING`.
fn rows_back(bound: &ast::Expr) -> Result<u64, SqlError> {
    let message = match bound {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => match n.parse::<u64>() {
                Ok(rows) => return Ok(rows),
                Err(_) => format!("ROWS needs a whole number of rows, got {n}"),
            },
            other => format!("ROWS needs a number of rows, got {other}"),
        },
        other => format!("ROWS needs a constant number of rows, got {other}"),
    };
    Err(SqlError::at(
        SqlErrorKind::Plan(message),
        location_of(bound),
    ))
}

/// The duration of `RANGE d PRECEDING`, in milliseconds (never negative).
fn range_back(bound: &ast::Expr) -> Result<i64, SqlError> {
    let ms = match bound {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => duration_ms(n),
            ast::Value::SingleQuotedString(s) => duration_ms(s),
            _ => Err(DurationError::Malformed),
        },
        ast::Expr::Interval(interval) => interval_ms(interval),
        _ => Err(DurationError::Malformed),
    };
    ms.map_err(|e| {
        let message = match e {
            DurationError::TooLong => "RANGE: the duration is longer than a window can span (at \
                                       most 2^62 ms, about 146 million years)"
                .to_string(),
            DurationError::Malformed => format!(
                "RANGE needs a duration such as '10s', '1m30s' or INTERVAL '10' SECOND, got {}",
                as_written(bound)
            ),
        };
        SqlError::at(SqlErrorKind::Plan(message), location_of(bound))
    })
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

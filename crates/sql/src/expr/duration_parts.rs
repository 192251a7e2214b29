//! `date_part` (and `EXTRACT`, `epoch`) of a duration: the difference of
//! two timestamps, such as the gap `ts - lag(ts) OVER (…)` between events,
//! or an INTERVAL constant (sliq's are fixed lengths of time).
//!
//! DuckDB reads such a difference as days and a time of day: `day` counts
//! whole days, `hour`, `minute` and `second` the fields below (`second` of
//! 2 days 2 h 1 min 4.5 s is 4), `millisecond` and `microsecond` the
//! seconds field with its fraction (4500 and 4500000), `epoch` all of it in
//! seconds with the fraction (180064.5); a calendar part (`year`, `month`,
//! …) is 0 and `quarter` 1, and `week` or `dow` is an error. DataFusion's `date_part` counts whole seconds for
//! every part instead: `epoch` of 2.5 s is 2, `hour` of 50 hours is 50, and
//! `microsecond` overflows past 36 minutes. So sliq computes the parts from
//! the duration's count of its unit, with integer arithmetic, which
//! truncates toward zero as DuckDB's does for a negative duration.

use arrow_cast::parse::IntervalUnit;
use arrow_schema::{DataType, TimeUnit};
use datafusion_expr::expr::Cast;
use datafusion_expr::{Expr, lit};

/// `date_part(part, d)` for a duration `d` of `unit` (see the module
/// docs), typed as DataFusion types the part: DOUBLE for `epoch`, BIGINT
/// for `nanosecond`, INT otherwise. `Err` names a part a duration lacks.
pub(super) fn duration_part(part: &str, d: Expr, unit: TimeUnit) -> Result<Expr, String> {
    let per_second: i64 = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let (minute, hour, day) = (60 * per_second, 3_600 * per_second, 86_400 * per_second);
    let count = cast(d, DataType::Int64);
    let lowered = part.trim_matches(['\'', '"']).to_ascii_lowercase();
    if lowered == "epoch" {
        return Ok(cast(count, DataType::Float64) / lit(per_second as f64));
    }
    // The seconds field, with its fraction, in `per` parts of a second.
    let seconds_in = |per: i64| {
        let within_minute = count.clone() % lit(minute);
        if per >= per_second {
            within_minute * lit(per / per_second)
        } else {
            within_minute / lit(per_second / per)
        }
    };
    // A part every duration has the same value of: NULL for a NULL one.
    let same_for_all = |value: i64| count.clone() * lit(0i64) + lit(value);
    let value = match lowered.parse::<IntervalUnit>() {
        Ok(IntervalUnit::Day) => count / lit(day),
        Ok(IntervalUnit::Hour) => count % lit(day) / lit(hour),
        Ok(IntervalUnit::Minute) => count % lit(hour) / lit(minute),
        Ok(IntervalUnit::Second) => count % lit(minute) / lit(per_second),
        Ok(IntervalUnit::Millisecond) => seconds_in(1_000),
        Ok(IntervalUnit::Microsecond) => seconds_in(1_000_000),
        Ok(IntervalUnit::Nanosecond) => return Ok(seconds_in(1_000_000_000)),
        // No months: the calendar's parts are 0, and the quarter (months
        // / 3 + 1) is the first.
        Ok(IntervalUnit::Year | IntervalUnit::Month | IntervalUnit::Decade)
        | Ok(IntervalUnit::Century) => same_for_all(0),
        _ if lowered == "millennium" => same_for_all(0),
        _ if lowered == "quarter" || lowered == "qtr" => same_for_all(1),
        _ => {
            return Err(format!(
                "date_part('{part}', …) does not apply to a length of time (an INTERVAL), \
                 only to a point in time; a length of time has epoch, day, hour, minute, \
                 second, millisecond, microsecond and nanosecond"
            ));
        }
    };
    Ok(cast(value, DataType::Int32))
}

fn cast(e: Expr, to: DataType) -> Expr {
    Expr::Cast(Cast::new(Box::new(e), to))
}

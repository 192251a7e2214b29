-- DEBS 2012 Grand Challenge, Query 1. Each chemical additive sensor (bm05, bm06, bm07) is
-- followed by its release valve (bm08, bm09, bm10). One row per event where a flag changed:
--   * whether each flag changed since the previous event (first_value over ROWS 1 PRECEDING
--     is the previous row's value);
--   * at the event where a valve opens while its sensor is on, the delay since the sensor
--     switched on, in ms: the last time (epoch ms) the valve was off minus the last time the
--     sensor was off;
--   * the trend of each pair's delays over the last 24 hours of event time (least-squares
--     slope, in ms of delay per day), and the alarm: the delay exceeds the smallest one of the
--     last 24 hours by more than 1 %.
-- The WITH query computes the changes and delays and passes on only the events where a flag
-- changed (QUALIFY); the query around it reads those, so its 24-hour windows hold the day's
-- few dozen changes, not the day's 8.6 million events.
--
-- Run from the repository root: cargo run --release -- --format csv -f queries/debs_q1.sql

CREATE STREAM debs (ts TIMESTAMP, bm05 BOOLEAN, bm06 BOOLEAN, bm07 BOOLEAN, bm08 BOOLEAN, bm09 BOOLEAN, bm10 BOOLEAN)
  WITH (source = 'debs', path = '../shared/debs/DEBS2012-small.txt', event_time = 'ts');

WITH changes AS (
  SELECT ts,
         bm05 <> first_value(bm05) OVER p AS bm05_changed,
         bm08 <> first_value(bm08) OVER p AS bm08_changed,
         bm06 <> first_value(bm06) OVER p AS bm06_changed,
         bm09 <> first_value(bm09) OVER p AS bm09_changed,
         bm07 <> first_value(bm07) OVER p AS bm07_changed,
         bm10 <> first_value(bm10) OVER p AS bm10_changed,
         CASE WHEN bm05 AND bm08 AND NOT first_value(bm08) OVER p
              THEN max(CASE WHEN NOT bm08 THEN CAST(ts AS BIGINT) END) OVER h
                 - max(CASE WHEN NOT bm05 THEN CAST(ts AS BIGINT) END) OVER h END AS delay_a_ms,
         CASE WHEN bm06 AND bm09 AND NOT first_value(bm09) OVER p
              THEN max(CASE WHEN NOT bm09 THEN CAST(ts AS BIGINT) END) OVER h
                 - max(CASE WHEN NOT bm06 THEN CAST(ts AS BIGINT) END) OVER h END AS delay_b_ms,
         CASE WHEN bm07 AND bm10 AND NOT first_value(bm10) OVER p
              THEN max(CASE WHEN NOT bm10 THEN CAST(ts AS BIGINT) END) OVER h
                 - max(CASE WHEN NOT bm07 THEN CAST(ts AS BIGINT) END) OVER h END AS delay_c_ms
  FROM debs
  WINDOW p AS (ROWS 1 PRECEDING), h AS (ROWS UNBOUNDED PRECEDING)
  QUALIFY bm05_changed OR bm08_changed OR bm06_changed OR bm09_changed OR bm07_changed OR bm10_changed
)
SELECT ts, bm05_changed, bm08_changed, bm06_changed, bm09_changed, bm07_changed, bm10_changed,
       delay_a_ms, delay_b_ms, delay_c_ms,
       regr_slope(delay_a_ms, CAST(ts AS BIGINT)) OVER d * 86400000 AS trend_a_ms_per_day,
       regr_slope(delay_b_ms, CAST(ts AS BIGINT)) OVER d * 86400000 AS trend_b_ms_per_day,
       regr_slope(delay_c_ms, CAST(ts AS BIGINT)) OVER d * 86400000 AS trend_c_ms_per_day,
       delay_a_ms > 1.01 * min(delay_a_ms) OVER d AS alarm_a,
       delay_b_ms > 1.01 * min(delay_b_ms) OVER d AS alarm_b,
       delay_c_ms > 1.01 * min(delay_c_ms) OVER d AS alarm_c
FROM changes
WINDOW d AS (RANGE '24h');

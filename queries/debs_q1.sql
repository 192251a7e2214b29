-- DEBS 2012 Grand Challenge, Query 1, as far as sliq's SQL reaches today.
-- Each chemical additive sensor (bm05, bm06, bm07) is followed by its release valve
-- (bm08, bm09, bm10). Per event: whether each flag changed since the previous event
-- (first_value over ROWS 1 PRECEDING is the previous row's value), and for each pair the
-- last time (epoch ms) the sensor and the valve were off; while both are on, their
-- difference is the delay between the sensor switching on and the valve following.
--
-- Not covered yet: the 24-hour trend of that delay (regr_slope(delay, ts) OVER
-- (RANGE '24h')) and the 1 % alarm need the delay itself as an aggregate argument,
-- i.e. one continuous query feeding another — sliq does not chain queries yet.
--
-- Run from the repository root: cargo run --release -- --format csv -f queries/debs_q1.sql

CREATE STREAM debs (ts TIMESTAMP, bm05 BOOLEAN, bm06 BOOLEAN, bm07 BOOLEAN, bm08 BOOLEAN, bm09 BOOLEAN, bm10 BOOLEAN)
  WITH (source = 'debs', path = '../shared/debs/DEBS2012-small.txt', event_time = 'ts');

SELECT ts,
       bm05 <> first_value(bm05) OVER p AS bm05_changed,
       bm08 <> first_value(bm08) OVER p AS bm08_changed,
       bm06 <> first_value(bm06) OVER p AS bm06_changed,
       bm09 <> first_value(bm09) OVER p AS bm09_changed,
       bm07 <> first_value(bm07) OVER p AS bm07_changed,
       bm10 <> first_value(bm10) OVER p AS bm10_changed,
       CASE WHEN bm05 AND bm08
            THEN max(CASE WHEN NOT bm08 THEN CAST(ts AS BIGINT) END) OVER h
               - max(CASE WHEN NOT bm05 THEN CAST(ts AS BIGINT) END) OVER h END AS delay_a_ms,
       CASE WHEN bm06 AND bm09
            THEN max(CASE WHEN NOT bm09 THEN CAST(ts AS BIGINT) END) OVER h
               - max(CASE WHEN NOT bm06 THEN CAST(ts AS BIGINT) END) OVER h END AS delay_b_ms,
       CASE WHEN bm07 AND bm10
            THEN max(CASE WHEN NOT bm10 THEN CAST(ts AS BIGINT) END) OVER h
               - max(CASE WHEN NOT bm07 THEN CAST(ts AS BIGINT) END) OVER h END AS delay_c_ms
FROM debs
WINDOW p AS (ROWS 1 PRECEDING), h AS (ROWS UNBOUNDED PRECEDING);

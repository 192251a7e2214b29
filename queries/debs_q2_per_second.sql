-- DEBS 2012 Grand Challenge, Query 2, reported once a second: for the three power phases
-- mf01…mf03, the average and the relative variation (max - min) / max over each second, the
-- 30 % alarm, and the total power over the minute up to the end of that second.
--
-- The WITH query computes the 1-second and 1-minute windows at every event (as debs_q2.sql
-- does); the query around it keeps the first event of each second and reports, with lag, the
-- values at the event before it: the last one of the second that just ended, whose 1-second
-- window is that second. The last second of a replay is reported when the next event comes,
-- so a finite file's last second is not reported.
--
-- Run from the repository root: cargo run --release -- --format csv -f queries/debs_q2_per_second.sql

CREATE STREAM debs (ts TIMESTAMP, mf01 BIGINT, mf02 BIGINT, mf03 BIGINT)
  WITH (source = 'debs', path = '../shared/debs/DEBS2012-small.txt', event_time = 'ts');

WITH per_event AS (
  SELECT ts,
         avg(mf01) OVER s AS avg_mf01, relvar(mf01) OVER s AS rv_mf01,
         avg(mf02) OVER s AS avg_mf02, relvar(mf02) OVER s AS rv_mf02,
         avg(mf03) OVER s AS avg_mf03, relvar(mf03) OVER s AS rv_mf03,
         avg(mf01 + mf02 + mf03) OVER (RANGE '1m') AS power_1m
  FROM debs
  WINDOW s AS (RANGE '1s')
)
SELECT date_trunc('second', lag(ts) OVER p) AS second,
       lag(avg_mf01) OVER p AS avg_mf01, lag(rv_mf01) OVER p AS rv_mf01,
       lag(avg_mf02) OVER p AS avg_mf02, lag(rv_mf02) OVER p AS rv_mf02,
       lag(avg_mf03) OVER p AS avg_mf03, lag(rv_mf03) OVER p AS rv_mf03,
       lag(rv_mf01) OVER p > 0.3 OR lag(rv_mf02) OVER p > 0.3 OR lag(rv_mf03) OVER p > 0.3 AS alarm,
       lag(power_1m) OVER p AS power_1m
FROM per_event
WINDOW p AS (ROWS 1 PRECEDING)
QUALIFY date_trunc('second', ts) <> date_trunc('second', lag(ts) OVER p);

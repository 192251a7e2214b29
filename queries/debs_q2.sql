-- DEBS 2012 Grand Challenge, Query 2, per event.
-- For the three power phases mf01…mf03: the average and the relative variation
-- (max - min) / max over the last second, an alarm when a variation exceeds 30 %,
-- and the total power over the last minute — computed for every event.
--
-- Reported once a second instead of per event: debs_q2_per_second.sql. Not covered: the
-- raw rows from 20 s before an alarm (sliq decides what a row emits when the row arrives,
-- before a later alarm is known; that needs a look-back buffer in the engine).
--
-- Run from the repository root: cargo run --release -- --format csv -f queries/debs_q2.sql

CREATE STREAM debs (ts TIMESTAMP, mf01 BIGINT, mf02 BIGINT, mf03 BIGINT)
  WITH (source = 'debs', path = '../shared/debs/DEBS2012-small.txt', event_time = 'ts');

SELECT ts,
       avg(mf01) OVER s AS avg_mf01, relvar(mf01) OVER s AS rv_mf01,
       avg(mf02) OVER s AS avg_mf02, relvar(mf02) OVER s AS rv_mf02,
       avg(mf03) OVER s AS avg_mf03, relvar(mf03) OVER s AS rv_mf03,
       relvar(mf01) OVER s > 0.3 OR relvar(mf02) OVER s > 0.3 OR relvar(mf03) OVER s > 0.3 AS alarm,
       avg(mf01 + mf02 + mf03) OVER (RANGE '1m') AS power_1m
FROM debs
WINDOW s AS (RANGE '1s');

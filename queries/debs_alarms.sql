-- DEBS 2012 Grand Challenge, Query 2's alarms alone: the events at which the relative
-- variation (max - min) / max of a power phase over the last second exceeds 30 %, with
-- the three variations. QUALIFY drops the other events after they entered the windows.
--
-- Run from the repository root: cargo run --release -- --format csv -f queries/debs_alarms.sql
-- (the real sample has no alarm; generate data with spikes: sliq debs generate …)

CREATE STREAM debs (ts TIMESTAMP, mf01 BIGINT, mf02 BIGINT, mf03 BIGINT)
  WITH (source = 'debs', path = '../shared/debs/DEBS2012-small.txt', event_time = 'ts');

SELECT ts,
       relvar(mf01) OVER s AS rv_mf01,
       relvar(mf02) OVER s AS rv_mf02,
       relvar(mf03) OVER s AS rv_mf03
FROM debs
WINDOW s AS (RANGE '1s')
QUALIFY relvar(mf01) OVER s > 0.3 OR relvar(mf02) OVER s > 0.3 OR relvar(mf03) OVER s > 0.3;

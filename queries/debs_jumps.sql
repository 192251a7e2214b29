-- Sudden changes in power: each event's reading of the three power phases mf01…mf03
-- against their average over the second before it (the events from 1 s to 1 ms earlier;
-- the event itself and others at its own millisecond are left out), as a relative change.
-- NULL for the first event, which has nothing before it.
--
-- Run from the repository root: cargo run --release -- --format csv -f queries/debs_jumps.sql
-- Add QUALIFY abs(mf01 / avg(mf01) OVER before - 1) > 0.2 to keep only the jumps.

CREATE STREAM debs (ts TIMESTAMP, mf01 BIGINT, mf02 BIGINT, mf03 BIGINT)
  WITH (source = 'debs', path = '../shared/debs/DEBS2012-small.txt', event_time = 'ts');

SELECT ts,
       mf01 / avg(mf01) OVER before - 1 AS change_mf01,
       mf02 / avg(mf02) OVER before - 1 AS change_mf02,
       mf03 / avg(mf03) OVER before - 1 AS change_mf03
FROM debs
WINDOW before AS (RANGE BETWEEN '1s' PRECEDING AND '1ms' PRECEDING);

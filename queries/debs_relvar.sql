-- The paper's real-data experiment (its Fig. 12) on the DEBS 2012 Grand Challenge data:
-- the relative variation (max - min) / max of the power reading mf01 over the last second
-- of event time, for every event. relvar lifts each value to a (min, max) pair, combines
-- pairs, and lowers to (max - min) / max.
--
-- Run from the repository root (the real 17,000-line sample sits in ../shared/debs):
--   cargo run --release -- --format csv -f queries/debs_relvar.sql > relvar.csv
-- Change the path to a full allData.txt (plain or .gz) and the RANGE to try other windows.

CREATE STREAM debs (ts TIMESTAMP, "index" BIGINT, mf01 BIGINT)
  WITH (source = 'debs', path = '../shared/debs/DEBS2012-small.txt', out_of_order = 'drop', event_time = 'ts');

SELECT "index", ts, mf01, relvar(mf01) OVER (RANGE '1s') AS relvar_1s FROM debs;

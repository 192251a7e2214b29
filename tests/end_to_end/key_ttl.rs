//! `key_ttl`: keys idle for longer than the TTL (in the stream's event
//! time) are forgotten, their state freed; a key that comes back starts
//! afresh, and keys that stay active keep every result they had.

use std::time::Duration;

use crate::common::{batch, engine_with_s_and, floats, ints, strings};
use arrow_array::RecordBatch;
use proptest::prelude::*;
use sliq::{EngineError, StreamOptions};

/// Aggregates of every kind of per-key state: a shared window (`sum`,
/// `max`, `min` and `max` over strings, one DABA Lite per key), a window of
/// its own (`lag`), a RANGE frame's time deque (`count(*)`), a running
/// total (`row_number`), frames ending before the current row (rows
/// waiting outside a window, a running total, and a time deque), and a
/// distinct count's values.
const EVERY_STATE: &str = "SELECT key, \
     sum(v) OVER w AS s, max(v) OVER w AS m, min(key) OVER w AS lo, max(key) OVER w AS hi, \
     lag(v) OVER (ROWS 1 PRECEDING) AS prev, count(*) OVER (RANGE '1h') AS n, \
     row_number() OVER (PARTITION BY key) AS r, \
     avg(v) OVER (ROWS BETWEEN 5 PRECEDING AND 2 PRECEDING) AS before, \
     sum(v) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS so_far, \
     count(*) OVER (RANGE BETWEEN '1h' PRECEDING AND '1s' PRECEDING) AS earlier, \
     count(DISTINCT v) OVER w AS distinct_v \
     FROM s GROUP BY key WINDOW w AS (ROWS 100 PRECEDING)";

fn with_ttl(ttl: Option<Duration>) -> StreamOptions {
    let options = StreamOptions::default().event_time("ts");
    match ttl {
        Some(ttl) => options.key_ttl(ttl),
        None => options,
    }
}

/// Pushes `batches` through `sql` over a stream with `ttl`; the results.
fn run(
    ttl: Option<Duration>,
    sql: &str,
    batches: &[RecordBatch],
) -> (Vec<RecordBatch>, sliq::QueryStats) {
    let (engine, s) = engine_with_s_and(with_ttl(ttl));
    let q = engine.query(sql).expect("query");
    let out = batches
        .iter()
        .map(|b| {
            s.push(b.clone()).expect("push");
            q.recv().expect("result")
        })
        .collect();
    (out, q.stats())
}

#[test]
fn an_idle_key_is_forgotten_and_comes_back_empty() {
    let a = batch(&[
        (0, Some("a"), Some(1.0)),
        (1, Some("a"), Some(2.0)),
        (2, Some("a"), Some(3.0)),
    ]);
    // Another key moves the stream's event time 10 s on, row by row, so that
    // the sweep (two key ids per row) looks at `a` many times over.
    let others: Vec<_> = (1..=10)
        .map(|i| (i * 1_000, Some("b"), Some(i as f64)))
        .collect();
    let back = batch(&[(10_000, Some("a"), Some(7.0))]);
    let batches = [a, batch(&others), back];

    let (kept, _) = run(None, EVERY_STATE, &batches);
    let (forgot, stats) = run(Some(Duration::from_secs(5)), EVERY_STATE, &batches);
    let (kept, forgot) = (&kept[2], &forgot[2]);
    // Without a TTL, `a` remembers its three rows.
    assert_eq!(floats(kept, "s"), [Some(13.0)]);
    assert_eq!(floats(kept, "prev"), [Some(3.0)]);
    assert_eq!(ints(kept, "n"), [Some(4)]);
    assert_eq!(ints(kept, "r"), [Some(4)]);
    assert_eq!(floats(kept, "before"), [Some(1.5)]);
    assert_eq!(floats(kept, "so_far"), [Some(6.0)]);
    assert_eq!(ints(kept, "earlier"), [Some(3)]);
    // With one, it starts afresh in every kind of state.
    assert_eq!(floats(forgot, "s"), [Some(7.0)]);
    assert_eq!(floats(forgot, "m"), [Some(7.0)]);
    assert_eq!(strings(forgot, "lo"), [Some("a".to_string())]);
    assert_eq!(floats(forgot, "prev"), [None]);
    assert_eq!(ints(forgot, "n"), [Some(1)]);
    assert_eq!(ints(forgot, "r"), [Some(1)]);
    assert_eq!(floats(forgot, "before"), [None]);
    assert_eq!(floats(forgot, "so_far"), [None]);
    assert_eq!(ints(forgot, "earlier"), [Some(0)]);
    assert!(stats.forgotten_keys >= 1, "{stats:?}");
}

#[test]
fn keys_that_come_and_go_keep_the_state_bounded() {
    // 20,000 keys of two rows each, a millisecond apart; a key is idle
    // after its second row.
    let rows: Vec<(i64, String)> = (0..40_000)
        .map(|i| (i, format!("user-{}", i / 2)))
        .collect();
    let batches: Vec<RecordBatch> = rows
        .chunks(1_000)
        .map(|chunk| {
            let chunk: Vec<_> = chunk
                .iter()
                .map(|(ts, key)| (*ts, Some(key.as_str()), Some(1.0)))
                .collect();
            batch(&chunk)
        })
        .collect();
    let (_, kept) = run(None, EVERY_STATE, &batches);
    let (_, forgot) = run(Some(Duration::from_millis(100)), EVERY_STATE, &batches);
    assert!(kept.keys.iter().all(|&k| k == 20_000), "{:?}", kept.keys);
    assert_eq!(kept.forgotten_keys, 0);
    // Keys idle for 100 ms (50 keys' worth of rows) go within a sweep of
    // the key ids, two ids a row: a few batches.
    assert!(forgot.keys.iter().all(|&k| k <= 2_000), "{:?}", forgot.keys);
    assert!(
        forgot.forgotten_keys >= 3 * 18_000,
        "{}",
        forgot.forgotten_keys
    );
}

#[test]
fn the_stages_of_a_query_over_a_subquery_forget_their_keys_too() {
    let sql = "WITH d AS (SELECT ts, key, sum(v) OVER (ROWS 9 PRECEDING) AS s FROM s GROUP BY key) \
               SELECT key, count(*) OVER (ROWS 9 PRECEDING) AS c, s FROM d GROUP BY key";
    let batches = [
        batch(&[(0, Some("a"), Some(1.0)), (1, Some("a"), Some(2.0))]),
        batch(
            &(1..=10)
                .map(|i| (i * 1_000, Some("b"), Some(0.0)))
                .collect::<Vec<_>>(),
        ),
        batch(&[(10_000, Some("a"), Some(5.0))]),
    ];
    let (out, stats) = run(Some(Duration::from_secs(1)), sql, &batches);
    assert_eq!(floats(&out[2], "s"), [Some(5.0)]);
    assert_eq!(ints(&out[2], "c"), [Some(1)]);
    assert_eq!(
        stats.keys,
        [2, 2],
        "inner and outer stages each hold a and b"
    );
    assert!(stats.forgotten_keys >= 2, "{stats:?}");
}

#[test]
fn a_restarting_key_has_no_late_rows_even_under_on_late_error() {
    // a's newest is 5 s; b moves the clock to 20 s; a returns at 3 s.
    let rows = [
        batch(&[
            (5_000, Some("a"), Some(1.0)),
            (20_000, Some("b"), Some(2.0)),
        ]),
        batch(&[(3_000, Some("a"), Some(4.0))]),
    ];
    let sql = "SELECT key, count(*) OVER (RANGE '1h') AS n FROM s GROUP BY key";
    for (ttl, accepted) in [(None, false), (Some(Duration::from_secs(1)), true)] {
        let (engine, s) = engine_with_s_and(with_ttl(ttl).on_late(sliq::OnLate::Error));
        let q = engine.query(sql).expect("query");
        s.push(rows[0].clone()).expect("first batch");
        q.recv().expect("first result");
        let pushed = s.push(rows[1].clone());
        assert_eq!(pushed.is_ok(), accepted, "{ttl:?}: {pushed:?}");
        if accepted {
            assert_eq!(ints(&q.recv().expect("result"), "n"), [Some(1)]);
        }
    }
}

#[test]
fn a_key_seen_only_in_a_refused_push_is_not_held() {
    let options = with_ttl(Some(Duration::from_secs(1))).on_late(sliq::OnLate::Error);
    let (engine, s) = engine_with_s_and(options);
    let sql = "SELECT key, count(*) OVER (RANGE '1h') AS n FROM s GROUP BY key";
    let q = engine.query(sql).expect("query");
    s.push(batch(&[(5_000, Some("a"), Some(1.0))]))
        .expect("first");
    q.recv().expect("first result");
    // a at 3 s is late (the clock is only 1 s past its last row): the push
    // is refused, and c, looked up on the way, has no row.
    let refused = batch(&[(6_000, Some("c"), Some(1.0)), (3_000, Some("a"), Some(1.0))]);
    assert!(s.push(refused).is_err());
    s.push(batch(&[
        (5_500, Some("b"), Some(1.0)),
        (5_600, Some("b"), Some(1.0)),
    ]))
    .expect("third");
    q.recv().expect("third result");
    assert_eq!(q.stats().keys, [2], "a and b");
}

#[test]
fn a_ttl_needs_an_event_time_and_a_duration() {
    let engine = sliq::Engine::new();
    let err = engine
        .register_stream(
            "s",
            crate::common::schema(),
            StreamOptions::default().key_ttl(Duration::from_secs(1)),
        )
        .unwrap_err();
    assert!(matches!(err, EngineError::InvalidSetting(_)), "{err}");
    assert!(
        err.to_string()
            .contains("key_ttl needs an event_time column"),
        "{err}"
    );
    // In SQL, the error points at the option's value.
    for (sql, message) in [
        (
            "CREATE STREAM t (ts BIGINT, k VARCHAR) WITH (event_time = 'ts', key_ttl = 'soon')",
            "key_ttl = 'soon': expected a duration such as '10m', '1h' or '1d12h' \
             at line 1, column 75",
        ),
        (
            "CREATE STREAM t (ts BIGINT, k VARCHAR) WITH (key_ttl = '1h')",
            "stream 't': key_ttl needs an event_time column, since a key is forgotten once \
             the stream's event time has moved past its last row at line 1, column 56",
        ),
    ] {
        let err = engine.execute(sql).unwrap_err().to_string();
        assert_eq!(err.lines().next(), Some(message), "{sql}");
        assert!(err.ends_with('^'), "{err}");
    }
    engine
        .execute(
            "CREATE STREAM t (ts BIGINT, k VARCHAR) WITH (event_time = 'ts', key_ttl = '1h30m')",
        )
        .expect("a TTL in SQL");
    let t = engine.stream("t").expect("stream t");
    assert_eq!(t.info().options.key_ttl_ms(), Some(5_400_000));
}

/// Splits `rows` into batches of the lengths in `cuts`, cycling.
fn batches_of(rows: &[(i64, Option<&str>, Option<f64>)], cuts: &[usize]) -> Vec<RecordBatch> {
    let mut batches = Vec::new();
    let mut start = 0;
    for cut in cuts.iter().cycle() {
        if start >= rows.len() {
            break;
        }
        let end = (start + cut).min(rows.len());
        batches.push(batch(&rows[start..end]));
        start = end;
    }
    batches
}

/// The query's aggregates over every kind of state, for rows with `v`
/// above a threshold, without the key column (renamed in the oracle).
/// Aggregates over one frame share a window per key (frames ending before
/// the current row included).
const AGGREGATES: &str = "SELECT \
     sum(v) OVER w AS s, max(v) OVER w AS m, min(v) OVER w AS lo, \
     lag(v) OVER (ROWS 1 PRECEDING) AS prev, count(*) OVER (RANGE '300ms') AS n, \
     max(v) OVER (RANGE '250ms') AS mr, row_number() OVER (PARTITION BY key) AS r, \
     sum(v) OVER (ROWS BETWEEN 4 PRECEDING AND 2 PRECEDING) AS rb, \
     min(v) OVER (ROWS BETWEEN 4 PRECEDING AND 2 PRECEDING) AS lb, \
     count(*) OVER (ROWS BETWEEN 4 PRECEDING AND 2 PRECEDING) AS cb, \
     sum(v) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS ub, \
     max(v) OVER (RANGE BETWEEN '300ms' PRECEDING AND '100ms' PRECEDING) AS mb, \
     avg(v) OVER (RANGE BETWEEN '300ms' PRECEDING AND '100ms' PRECEDING) AS ab, \
     count(*) OVER (RANGE BETWEEN '300ms' PRECEDING AND '100ms' PRECEDING) AS nb, \
     sum(v) OVER (RANGE BETWEEN UNBOUNDED PRECEDING AND '100ms' PRECEDING) AS sb, \
     count(DISTINCT v) OVER w AS dw, count(DISTINCT v) OVER (ROWS UNBOUNDED PRECEDING) AS du, \
     count(DISTINCT v) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS dub, \
     count(DISTINCT v) OVER (RANGE BETWEEN '300ms' PRECEDING AND '100ms' PRECEDING) AS drb \
     FROM s WHERE v > -40 GROUP BY key WINDOW w AS (ROWS 3 PRECEDING)";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A key restarts at a row whose key's previous row (among the rows
    /// the query reads) came more than the TTL earlier by the stream's
    /// clock, the newest event time so far, whatever other keys brought
    /// it: exactly as if each of the key's spells were a key of its own.
    /// Event time runs forward in each key but not across keys, and the
    /// batches are split at random.
    #[test]
    fn a_key_restarts_exactly_when_it_was_idle_longer_than_the_ttl(
        steps in prop::collection::vec((0usize..4, 0i64..300, -50i32..50), 1..250),
        cuts in prop::collection::vec(1usize..40, 1..20),
        ttl in 1i64..800,
    ) {
        let keys = ["k0", "k1", "k2", "k3"];
        let mut newest = [0i64; 4];
        let rows: Vec<(i64, Option<&str>, Option<f64>)> = steps
            .iter()
            .map(|&(key, step, v)| {
                newest[key] += step;
                (newest[key], Some(keys[key]), Some(f64::from(v)))
            })
            .collect();
        // The oracle: each key's spells as keys of their own.
        let mut clock = i64::MIN;
        let mut last = std::collections::HashMap::new();
        let mut spell = std::collections::HashMap::new();
        let renamed: Vec<String> = rows
            .iter()
            .map(|&(ts, key, v)| {
                clock = clock.max(ts);
                let key = key.unwrap_or_default();
                if v.is_some_and(|v| v > -40.0)
                    && let Some(before) = last.insert(key, clock)
                    && clock - before > ttl
                {
                    *spell.entry(key).or_insert(0) += 1;
                }
                format!("{key}#{}", spell.get(key).copied().unwrap_or(0))
            })
            .collect();
        let spells: Vec<_> = rows
            .iter()
            .zip(&renamed)
            .map(|(&(ts, _, v), key)| (ts, Some(key.as_str()), v))
            .collect();
        let ttl = Duration::from_millis(ttl as u64);
        let (with_ttl, _) = run(Some(ttl), AGGREGATES, &batches_of(&rows, &cuts));
        let (oracle, _) = run(None, AGGREGATES, &[batch(&spells)]);
        let mut offset = 0;
        for got in &with_ttl {
            prop_assert_eq!(got, &oracle[0].slice(offset, got.num_rows()), "rows from {}", offset);
            offset += got.num_rows();
        }
    }

    /// With a TTL longer than any key's idle spell, every result is what
    /// the query gives without one.
    #[test]
    fn keys_active_within_the_ttl_keep_every_result(
        rows in prop::collection::vec((0i64..400, 0usize..5, -50i32..50), 1..300),
        cuts in prop::collection::vec(1usize..40, 1..20),
    ) {
        let keys = ["k0", "k1", "k2", "k3", "k4"];
        let mut ts = 0;
        let rows: Vec<(i64, Option<&str>, Option<f64>)> = rows
            .iter()
            .map(|&(step, key, v)| {
                ts += step;
                (ts, Some(keys[key]), Some(f64::from(v)))
            })
            .collect();
        // Each key's longest idle spell, in the stream's event time.
        let mut last = std::collections::HashMap::new();
        let mut longest = 0;
        for &(ts, key, _) in &rows {
            if let Some(before) = last.insert(key, ts) {
                longest = longest.max(ts - before);
            }
        }
        let batches = batches_of(&rows, &cuts);
        let ttl = Duration::from_millis(longest as u64);
        let (kept, _) = run(None, EVERY_STATE, &batches);
        let (with_ttl, _) = run(Some(ttl), EVERY_STATE, &batches);
        prop_assert_eq!(kept, with_ttl);
    }
}

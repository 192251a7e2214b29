//! The same queries on timely dataflow, with 1 worker, 4 workers in one
//! process and 2 processes × 2 workers (two clusters members on threads of
//! this test, connected over localhost TCP), give the same multiset of rows
//! as the embedded engine, and per key the same sequence.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use sliq_engine::{Engine, StreamOptions};
use sliq_timely::{Config, Job, RunStats};

/// A result row as text, one string per column.
type Row = Vec<String>;

fn rows_of(batch: &RecordBatch) -> Vec<Row> {
    let options = FormatOptions::default().with_null("NULL");
    let formatters: Vec<_> = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
        .collect();
    (0..batch.num_rows())
        .map(|i| formatters.iter().map(|f| f.value(i).to_string()).collect())
        .collect()
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
        Field::new("k", DataType::Utf8, true),
        Field::new("g", DataType::Int64, false),
        Field::new("v", DataType::Float64, true),
    ]))
}

/// `batches` batches of varied sizes over `keys` keys; event time mostly
/// increasing, with a few rows late for their key; some NULL keys/values.
fn data(batches: usize, keys: u64) -> Vec<RecordBatch> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut ts = 1_000_000i64;
    (0..batches)
        .map(|b| {
            let rows = 1 + (b * 37 % 300);
            let mut t = Vec::with_capacity(rows);
            let mut k = Vec::with_capacity(rows);
            let mut g = Vec::with_capacity(rows);
            let mut v = Vec::with_capacity(rows);
            for _ in 0..rows {
                let r = next();
                ts += (r % 40) as i64;
                t.push(if r % 97 == 0 { ts - 5_000 } else { ts });
                let key = r % (keys + 1);
                k.push((key != keys).then(|| format!("key{key}")));
                g.push((r >> 20) as i64 % 3);
                v.push((r % 53 != 0).then(|| ((r >> 8) % 1000) as f64 / 8.0));
            }
            RecordBatch::try_new(
                schema(),
                vec![
                    Arc::new(TimestampMillisecondArray::from(t)),
                    Arc::new(StringArray::from(k)),
                    Arc::new(Int64Array::from(g)),
                    Arc::new(Float64Array::from(v)),
                ],
            )
            .unwrap()
        })
        .collect()
}

const QUERIES: &[&str] = &[
    "SELECT k, max(v) OVER (ROWS 9 PRECEDING) AS m FROM s GROUP BY k",
    "SELECT k, ts, sum(v) OVER (RANGE '2s') AS total, count(*) OVER (RANGE '2s') AS n FROM s GROUP BY k",
    "SELECT k, g, avg(v) OVER (ROWS 4 PRECEDING) AS a, min(v) OVER (ROWS 20 PRECEDING) AS lo \
     FROM s WHERE v > 10 GROUP BY k, g",
    "SELECT k, v * 2 AS twice, first_value(v) OVER (ROWS 3 PRECEDING) AS f FROM s GROUP BY k",
    // One global window: not split, all on one worker.
    "SELECT g, max(v) OVER (ROWS 50 PRECEDING) AS m FROM s",
    // Frames ending before the current row.
    "SELECT k, ts, sum(v) OVER (ROWS BETWEEN 6 PRECEDING AND 2 PRECEDING) AS earlier, \
     max(v) OVER (RANGE BETWEEN '3s' PRECEDING AND '1s' PRECEDING) AS peak, \
     count(v) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS n FROM s GROUP BY k",
    // Each key's values, counted.
    "SELECT k, count(DISTINCT g) OVER (RANGE '3s') AS groups, \
     count(DISTINCT v) OVER (ROWS 20 PRECEDING) AS values FROM s GROUP BY k",
];

/// The embedded engine's rows for `sql`.
fn embedded(sql: &str, input: &[RecordBatch]) -> Vec<Row> {
    embedded_run(sql, input).2
}

/// `input` run through `sql` on an embedded engine: the engine, the query
/// (for their counters) and its rows.
fn embedded_run(sql: &str, input: &[RecordBatch]) -> (Engine, sliq_engine::Query, Vec<Row>) {
    let engine = Engine::new();
    let stream = engine
        .register_stream("s", schema(), StreamOptions::default().event_time("ts"))
        .unwrap();
    let query = engine.query(sql).unwrap();
    let mut rows = Vec::new();
    for batch in input {
        stream.push(batch.clone()).unwrap();
        rows.extend(rows_of(&query.recv().unwrap()));
    }
    (engine, query, rows)
}

fn job(sql: &str) -> Job {
    Job::new(
        "s",
        schema(),
        StreamOptions::default().event_time("ts"),
        sql,
    )
}

/// Runs `sql` with `config`, feeding `input` as one source.
fn distributed(sql: &str, config: &Config, input: Vec<RecordBatch>) -> (Vec<Row>, RunStats) {
    let mut rows = Vec::new();
    let source = input.into_iter().map(Ok::<_, String>);
    let stats = sliq_timely::run(&job(sql), config, vec![source], |batch| {
        rows.extend(rows_of(&batch));
        Ok::<_, String>(())
    })
    .unwrap();
    (rows, stats)
}

/// Checks `got` against `want`: same multiset, and per key (the columns
/// before the first aggregate, `key_columns` of them) the same sequence.
fn assert_equivalent(sql: &str, want: &[Row], got: &[Row], key_columns: usize) {
    let mut want_sorted = want.to_vec();
    let mut got_sorted = got.to_vec();
    want_sorted.sort();
    got_sorted.sort();
    assert_eq!(got.len(), want.len(), "{sql}: row count");
    assert!(want_sorted == got_sorted, "{sql}: different rows");
    let by_key = |rows: &[Row]| {
        let mut keys: BTreeMap<Row, Vec<Row>> = BTreeMap::new();
        for row in rows {
            keys.entry(row[..key_columns].to_vec())
                .or_default()
                .push(row.clone());
        }
        keys
    };
    assert!(by_key(want) == by_key(got), "{sql}: per-key order differs");
}

fn key_columns(sql: &str) -> usize {
    if sql.contains("GROUP BY k, g") {
        2
    } else if sql.contains("GROUP BY") {
        1
    } else {
        0
    }
}

fn free_addresses(n: usize) -> Vec<String> {
    sliq_timely::Cluster::free_local_addresses(n).expect("free local ports")
}

#[test]
fn one_and_four_workers_match_the_embedded_engine() {
    let input = data(60, 37);
    for sql in QUERIES {
        let want = embedded(sql, &input);
        for workers in [1, 4] {
            let (got, stats) = distributed(sql, &Config::workers(workers), input.clone());
            assert_equivalent(sql, &want, &got, key_columns(sql));
            assert_eq!(stats.workers.len(), workers);
            let total: u64 = input.iter().map(|b| b.num_rows() as u64).sum();
            assert_eq!(stats.rows_read, total);
            assert_eq!(stats.workers.iter().map(|w| w.rows).sum::<u64>(), total);
            assert_eq!(
                stats.workers.iter().map(|w| w.rows_out).sum::<u64>(),
                want.len() as u64
            );
            if key_columns(sql) == 1 {
                // Every key (and NULL) lives on exactly one worker.
                assert_eq!(stats.workers.iter().map(|w| w.keys).sum::<usize>(), 38);
            }
            if workers == 4 && key_columns(sql) > 0 {
                let busy = stats.workers.iter().filter(|w| w.rows > 0).count();
                assert!(busy >= 3, "{sql}: keys spread over {busy} of 4 workers");
                assert!(!stats.partition_key.is_empty());
            }
            if key_columns(sql) == 0 {
                assert!(stats.partition_key.is_empty());
            }
        }
    }
}

#[test]
fn two_processes_of_two_workers_match_the_embedded_engine() {
    let input = data(40, 23);
    for sql in QUERIES {
        let want = embedded(sql, &input);
        let addresses = free_addresses(2);
        let peer = {
            let addresses = addresses.clone();
            let sql = sql.to_string();
            // Process 1 reads nothing and prints nothing: its workers hold
            // their share of the keys.
            std::thread::spawn(move || {
                let none: Vec<Vec<Result<RecordBatch, String>>> = Vec::new();
                sliq_timely::run(&job(&sql), &Config::cluster(2, 1, addresses), none, |_| {
                    Err::<(), _>("process 1 must not receive results")
                })
            })
        };
        let (got, stats) = distributed(sql, &Config::cluster(2, 0, addresses), input.clone());
        let peer_stats = peer.join().unwrap().unwrap();
        assert_equivalent(sql, &want, &got, key_columns(sql));
        let total: u64 = input.iter().map(|b| b.num_rows() as u64).sum();
        let processed: u64 = stats
            .workers
            .iter()
            .chain(&peer_stats.workers)
            .map(|w| w.rows)
            .sum();
        assert_eq!(processed, total, "{sql}");
        let indices: Vec<usize> = stats
            .workers
            .iter()
            .chain(&peer_stats.workers)
            .map(|w| w.index)
            .collect();
        assert_eq!(indices, [0, 1, 2, 3]);
        if key_columns(sql) > 0 {
            assert!(
                peer_stats.workers.iter().any(|w| w.rows > 0),
                "{sql}: process 1 got no keys"
            );
        }
    }
}

#[test]
fn late_rows_are_counted_and_the_watermark_reaches_the_newest_event_time() {
    let input = data(30, 11);
    let newest = input
        .iter()
        .flat_map(|b| {
            let ts = b
                .column(0)
                .as_any()
                .downcast_ref::<TimestampMillisecondArray>()
                .unwrap();
            ts.values().to_vec()
        })
        .max()
        .unwrap();
    let sql = QUERIES[1];
    let (engine, ..) = embedded_run(sql, &input);
    let late = engine.stats().streams[0].late_rows;
    assert!(late > 0);
    let (_, stats) = distributed(sql, &Config::workers(3), input);
    assert_eq!(stats.workers.iter().map(|w| w.late_rows).sum::<u64>(), late);
    assert_eq!(stats.watermark, Some(newest));
}

#[test]
fn values_that_cannot_be_computed_are_counted_as_on_the_embedded_engine() {
    // `g` is 0 on about a third of the rows: integer division by zero.
    let input = data(30, 11);
    let sql = "SELECT k, 100 / g AS q, max(v) OVER (ROWS 3 PRECEDING) AS m FROM s GROUP BY k";
    let (_, query, _) = embedded_run(sql, &input);
    let failed = query.stats().failed_results;
    assert!(failed > 0);
    let (_, stats) = distributed(sql, &Config::workers(3), input);
    assert_eq!(
        stats.workers.iter().map(|w| w.failed_results).sum::<u64>(),
        failed
    );
    let messages: Vec<&str> = stats
        .workers
        .iter()
        .filter(|w| w.failed_results > 0)
        .map(|w| w.last_failure.as_deref().unwrap_or_default())
        .collect();
    assert!(!messages.is_empty());
    for m in messages {
        assert!(
            m.contains("evaluating 100 / g") && m.contains("Divide by zero"),
            "{m}"
        );
    }
}

#[test]
fn limit_stops_after_n_rows_and_bad_input_is_an_error() {
    let input = data(30, 5);
    let (rows, stats) = distributed(
        "SELECT k, max(v) OVER (ROWS 3 PRECEDING) AS m FROM s GROUP BY k LIMIT 25",
        &Config::workers(2),
        input.clone(),
    );
    assert_eq!(rows.len(), 25);
    assert_eq!(stats.rows_out, 25);
    // Each worker's query ends at the LIMIT too; its counters survive it.
    let busy: Vec<_> = stats.workers.iter().filter(|w| w.rows > 0).collect();
    assert!(!busy.is_empty());
    for worker in busy {
        assert!(worker.keys > 0, "{worker:?}");
        assert!((1..=25).contains(&worker.rows_out), "{worker:?}");
    }

    let err = sliq_timely::start(
        &job("SELECT k, max(nope) OVER (ROWS 3 PRECEDING) FROM s GROUP BY k"),
        &Config::workers(2),
        Vec::<Vec<Result<RecordBatch, String>>>::new(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");

    // A source that fails half-way: what it delivered is processed, and the
    // run reports the failure.
    let mut source: Vec<Result<RecordBatch, String>> = input[..3].iter().cloned().map(Ok).collect();
    source.push(Err("line 7: bad number".into()));
    let err = sliq_timely::run(&job(QUERIES[0]), &Config::workers(2), vec![source], |_| {
        Ok::<_, String>(())
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "source 0: line 7: bad number");

    // A batch with the wrong schema is rejected by the engine, by name.
    let wrong = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from(vec![1]))],
    )
    .unwrap();
    let err = sliq_timely::run(
        &job(QUERIES[0]),
        &Config::workers(2),
        vec![vec![Ok::<_, String>(wrong)]],
        |_| Ok::<_, String>(()),
    )
    .unwrap_err();
    assert!(err.to_string().contains("batch rejected"), "{err}");
}

#[test]
fn several_sources_are_read_by_different_workers() {
    // Two sources with disjoint keys: per key, order is the source's order.
    let input = data(20, 9);
    let (left, right): (Vec<_>, Vec<_>) = input
        .iter()
        .cloned()
        .enumerate()
        .partition(|(i, _)| i % 2 == 0);
    let sql = "SELECT g, count(*) OVER (ROWS 5 PRECEDING) AS n FROM s GROUP BY g";
    let keep = |batches: Vec<(usize, RecordBatch)>, zero: bool| -> Vec<RecordBatch> {
        batches
            .into_iter()
            .map(|(_, b)| {
                let g = b.column(2).as_any().downcast_ref::<Int64Array>().unwrap();
                let mask: arrow_array::BooleanArray =
                    g.values().iter().map(|&x| Some((x == 0) == zero)).collect();
                arrow_select::filter::filter_record_batch(&b, &mask).unwrap()
            })
            .collect()
    };
    let zeros = keep(left, true);
    let others = keep(right, false);
    let mut want = embedded(sql, &zeros);
    want.extend(embedded(sql, &others));
    let mut got = Vec::new();
    let sources = vec![
        zeros.into_iter().map(Ok::<_, String>).collect::<Vec<_>>(),
        others.into_iter().map(Ok::<_, String>).collect::<Vec<_>>(),
    ];
    sliq_timely::run(&job(sql), &Config::workers(2), sources, |b| {
        got.extend(rows_of(&b));
        Ok::<_, String>(())
    })
    .unwrap();
    assert_equivalent(sql, &want, &got, 1);
}

#[test]
fn a_query_over_a_subquery_is_split_by_the_keys_every_stage_keeps_together() {
    let input = data(60, 37);
    for (sql, split, key_columns) in [
        (
            "SELECT k, d, max(d) OVER (RANGE '2s') AS m \
             FROM (SELECT ts, k, v - lag(v) OVER (ROWS 1 PRECEDING) AS d FROM s GROUP BY k) \
             GROUP BY k",
            true,
            1,
        ),
        // The key renamed, and a finer key outside.
        (
            "SELECT key, g, avg(a) OVER (ROWS 3 PRECEDING) AS aa \
             FROM (SELECT ts, k AS key, g, avg(v) OVER (ROWS 4 PRECEDING) AS a FROM s GROUP BY k) AS d \
             GROUP BY key, g",
            true,
            2,
        ),
        // No windows outside: nothing to keep together there.
        (
            "WITH d AS (SELECT k, avg(v) OVER (ROWS 4 PRECEDING) AS a FROM s GROUP BY k) \
             SELECT k, a * 2 AS twice FROM d WHERE a > 50",
            true,
            1,
        ),
        // A subquery without windows: split by the key of the windows
        // around it, a stream column it passes on renamed.
        (
            "SELECT key, max(x) OVER (ROWS 5 PRECEDING) AS m \
             FROM (SELECT k AS key, v * 2 AS x FROM s WHERE v > 10) GROUP BY key",
            true,
            1,
        ),
        // … but not by a key it computes (the stream has no such column).
        (
            "SELECT key, max(x) OVER (ROWS 5 PRECEDING) AS m \
             FROM (SELECT upper(k) AS key, v AS x FROM s) GROUP BY key",
            false,
            1,
        ),
        // A window over a coarser key mixes the subquery's keys: one worker.
        (
            "SELECT g, max(a) OVER (ROWS 5 PRECEDING) AS m \
             FROM (SELECT k, g, avg(v) OVER (ROWS 4 PRECEDING) AS a FROM s GROUP BY k) GROUP BY g",
            false,
            1,
        ),
    ] {
        let want = embedded(sql, &input);
        let (got, stats) = distributed(sql, &Config::workers(4), input.clone());
        assert_equivalent(sql, &want, &got, key_columns);
        assert_eq!(stats.partition_key.is_empty(), !split, "{sql}");
        let busy = stats.workers.iter().filter(|w| w.rows > 0).count();
        assert_eq!(busy >= 3, split, "{sql}: rows on {busy} of 4 workers");
    }
}

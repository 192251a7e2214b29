//! Engine benchmarks: throughput of continuous window queries, latency of a
//! one-row push to its result, and memory per key.
//!
//! `cargo bench -p sliq --bench engine` (add `-- --quick` for a shorter run;
//! `--only NAME`, `--keys K` and `--batch B` narrow the throughput cases;
//! `--only latency` and `--only memory` run just those measurements)
//!
//! Each throughput case pushes 2M rows `(ts BIGINT, key BIGINT, v DOUBLE)`
//! (1 ms apart, keys uniform at random) through one query, on one thread,
//! receiving every result batch, and reports million rows per second.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use arrow_array::{Float64Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sliq::{Engine, StreamOptions};

/// Counts live heap bytes, for the memory-per-key measurement.
struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only adds bookkeeping.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("ts", DataType::Int64, false),
        Field::new("key", DataType::Int64, false),
        Field::new("v", DataType::Float64, false),
    ]))
}

/// `rows` rows over `keys` keys, deterministic.
fn data(rows: usize, keys: u64) -> RecordBatch {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let key: Vec<i64> = (0..rows).map(|_| (next() % keys) as i64).collect();
    let v: Vec<f64> = (0..rows)
        .map(|_| (next() % 100_000) as f64 / 100.0)
        .collect();
    batch_of((0..rows as i64).collect(), key, v)
}

/// A batch of the benchmark schema.
fn batch_of(ts: Vec<i64>, key: Vec<i64>, v: Vec<f64>) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ts)),
            Arc::new(Int64Array::from(key)),
            Arc::new(Float64Array::from(v)),
        ],
    )
    .expect("valid batch")
}

/// Pushes `input` in batches of `batch` rows through `sql`; rows/s, the
/// median of three runs (each with a fresh engine): the machine is shared.
fn throughput(sql: &str, input: &RecordBatch, batch: usize) -> f64 {
    let mut runs: Vec<f64> = (0..3).map(|_| one_run(sql, input, batch)).collect();
    runs.sort_by(f64::total_cmp);
    runs[1]
}

/// One run of [`throughput`].
fn one_run(sql: &str, input: &RecordBatch, batch: usize) -> f64 {
    let engine = Engine::new();
    let stream = engine
        .register_stream("s", schema(), StreamOptions::default().event_time("ts"))
        .expect("stream");
    let query = engine.query(sql).expect("query");
    let start = Instant::now();
    let mut offset = 0;
    let mut rows_out = 0;
    while offset < input.num_rows() {
        let n = batch.min(input.num_rows() - offset);
        stream.push(input.slice(offset, n)).expect("push");
        rows_out += query.recv().expect("result").num_rows();
        offset += n;
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(rows_out, input.num_rows());
    input.num_rows() as f64 / secs
}

/// Latency of a one-row push to its result, over `pushes` pushes.
fn latency(sql: &str, keys: u64, pushes: usize) -> Vec<Duration> {
    let input = data(pushes + 10_000, keys);
    let engine = Engine::new();
    let stream = engine
        .register_stream("s", schema(), StreamOptions::default().event_time("ts"))
        .expect("stream");
    let query = engine.query(sql).expect("query");
    for i in 0..10_000 {
        stream.push(input.slice(i, 1)).expect("push");
        black_box(query.recv().expect("result"));
    }
    let mut samples = Vec::with_capacity(pushes);
    for i in 10_000..10_000 + pushes {
        let row = input.slice(i, 1);
        let start = Instant::now();
        stream.push(row).expect("push");
        black_box(query.recv().expect("result"));
        samples.push(start.elapsed());
    }
    samples.sort_unstable();
    samples
}

/// Heap bytes per key once `keys` keys have had `rows_per_key` rows each
/// through `sql`, over a stream with `options`.
fn memory_per_key(keys: u64, rows_per_key: u64, sql: &str, options: StreamOptions) -> f64 {
    let rows = (keys * rows_per_key) as i64;
    let input = batch_of(
        (0..rows).collect(),
        (0..rows).map(|i| i % keys as i64).collect(),
        (0..rows).map(|i| (i % 1000) as f64 + 0.5).collect(),
    );
    let engine = Engine::new();
    let stream = engine
        .register_stream("s", schema(), options)
        .expect("stream");
    let query = engine.query(sql).expect("query");
    let before = LIVE.load(Ordering::Relaxed);
    for offset in (0..rows as usize).step_by(8192) {
        stream
            .push(input.slice(offset, 8192.min(rows as usize - offset)))
            .expect("push");
        black_box(query.recv().expect("result"));
    }
    let after = LIVE.load(Ordering::Relaxed);
    (after.saturating_sub(before)) as f64 / keys as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `--only TEXT` runs the throughput cases whose name contains TEXT.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let rows = if quick { 400_000 } else { 2_000_000 };
    let one_row_rows = if quick { 50_000 } else { 200_000 };
    // `--keys K` and `--batch B` run only that key count / batch size.
    let value_of = |flag: &str| -> Option<usize> {
        let i = args.iter().position(|a| a == flag)?;
        args.get(i + 1)?.parse().ok()
    };
    let key_counts: Vec<u64> = match value_of("--keys") {
        Some(k) => vec![k as u64],
        None => vec![1_000, 100_000],
    };
    let batch_sizes: Vec<usize> = match value_of("--batch") {
        Some(b) => vec![b],
        None => vec![8192, 1],
    };
    let queries = [
        (
            "max ROWS 999",
            "SELECT key, max(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
        ),
        (
            "sum ROWS 999",
            "SELECT key, sum(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
        ),
        (
            "avg ROWS 999",
            "SELECT key, avg(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
        ),
        (
            "count ROWS 999",
            "SELECT key, count(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
        ),
        (
            "stddev ROWS 999",
            "SELECT key, stddev_samp(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
        ),
        (
            "4 aggregates ROWS 999",
            "SELECT key, max(v) OVER w AS mx, sum(v) OVER w AS s, avg(v) OVER w AS a, count(*) OVER w AS c \
             FROM s GROUP BY key WINDOW w AS (ROWS 999 PRECEDING)",
        ),
        (
            "max RANGE 10s",
            "SELECT key, max(v) OVER (RANGE '10s') AS m FROM s GROUP BY key",
        ),
        (
            "sum RANGE 10s",
            "SELECT key, sum(v) OVER (RANGE '10s') AS m FROM s GROUP BY key",
        ),
        (
            "4 aggregates RANGE 10s",
            "SELECT key, max(v) OVER w AS mx, sum(v) OVER w AS s, avg(v) OVER w AS a, count(*) OVER w AS c \
             FROM s GROUP BY key WINDOW w AS (RANGE '10s')",
        ),
        // Frames ending before the current row: the latest rows wait
        // outside the window (one for ROWS, about a second's for RANGE).
        (
            "max ROWS 999..1",
            "SELECT key, max(v) OVER (ROWS BETWEEN 999 PRECEDING AND 1 PRECEDING) AS m \
             FROM s GROUP BY key",
        ),
        (
            "4 aggregates ROWS 999..1",
            "SELECT key, max(v) OVER w AS mx, sum(v) OVER w AS s, avg(v) OVER w AS a, count(*) OVER w AS c \
             FROM s GROUP BY key WINDOW w AS (ROWS BETWEEN 999 PRECEDING AND 1 PRECEDING)",
        ),
        (
            "max RANGE 10s..1s",
            "SELECT key, max(v) OVER (RANGE BETWEEN '10s' PRECEDING AND '1s' PRECEDING) AS m \
             FROM s GROUP BY key",
        ),
        // A 4 KiB sketch per pane of 18 rows, the rows' values kept.
        (
            "percentile ROWS 999",
            "SELECT key, approx_percentile(v, 0.9) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
        ),
        // Exact decimals: the CAST, then a 192-bit sum per window.
        (
            "decimal sum ROWS 999",
            "SELECT key, sum(CAST(v AS DECIMAL(10, 2))) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
        ),
        // Hash lookups per row: each key's values (nearly all distinct),
        // and the keys seen in one global window.
        (
            "count distinct ROWS 999",
            "SELECT key, count(DISTINCT v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
        ),
        (
            "count distinct keys 10s",
            "SELECT count(DISTINCT key) OVER (RANGE '10s') AS m FROM s",
        ),
    ];
    println!(
        "{:<24} {:>8} {:>7} {:>10} {:>12}",
        "query", "keys", "batch", "rows", "M rows/s"
    );
    for &keys in &key_counts {
        let input = data(rows, keys);
        let small = input.slice(0, one_row_rows);
        for (name, sql) in queries
            .iter()
            .filter(|(n, _)| only.as_ref().is_none_or(|o| n.contains(o.as_str())))
        {
            for &batch in &batch_sizes {
                let data = if batch == 1 { &small } else { &input };
                let per_s = throughput(sql, data, batch);
                println!(
                    "{name:<24} {keys:>8} {batch:>7} {:>10} {:>12.2}",
                    data.num_rows(),
                    per_s / 1e6
                );
            }
        }
    }
    // `--only latency` and `--only memory` run just that measurement.
    if only
        .as_ref()
        .is_some_and(|o| o != "latency" && o != "memory")
    {
        return;
    }
    println!();
    let pushes = if quick { 20_000 } else { 100_000 };
    let latencies = [&queries[0], &queries[5]];
    for (name, sql) in latencies
        .iter()
        .filter(|_| only.as_deref() != Some("memory"))
    {
        let s = latency(sql, 1_000, pushes);
        let at = |q: f64| s[((s.len() - 1) as f64 * q) as usize].as_nanos();
        println!(
            "latency of a 1-row push to its result, {name}, 1000 keys: p50 {} ns, p99 {} ns, p99.9 {} ns, max {} ns",
            at(0.5),
            at(0.99),
            at(0.999),
            at(1.0)
        );
    }
    println!();
    let keys = if quick { 100_000 } else { 1_000_000 };
    let one_row_max = "SELECT max(v) OVER (ROWS 0 PRECEDING) AS m FROM s GROUP BY key";
    let per_key = memory_per_key(keys, 1, one_row_max, StreamOptions::default());
    println!(
        "memory: {keys} keys with one-row max(v) windows: {per_key:.0} bytes per key ({:.0} MiB in all)",
        per_key * keys as f64 / (1 << 20) as f64
    );
    // The same keys on a stream that may forget them: each key held also
    // keeps its key and its last clock.
    let forgetting = StreamOptions::default()
        .event_time("ts")
        .key_ttl(std::time::Duration::from_secs(3600));
    let per_key = memory_per_key(keys, 1, one_row_max, forgetting);
    println!("memory: the same with key_ttl = '1h': {per_key:.0} bytes per key");
    // Sketches over a long frame, while each key's window is still short.
    for (name, call) in [
        ("approx_percentile", "approx_percentile(v, 0.9)"),
        ("approx_count_distinct", "approx_count_distinct(v)"),
    ] {
        let sql = format!("SELECT {call} OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key");
        for rows in [1, 4, 32] {
            let per_key = memory_per_key(10_000, rows, &sql, StreamOptions::default());
            println!(
                "memory: 10000 keys of {rows}-row {name} windows over ROWS 999: {per_key:.0} bytes per key"
            );
        }
    }
}

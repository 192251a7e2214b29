//! Throughput against worker count for
//! `SELECT key, max(v) OVER (ROWS 999 PRECEDING) FROM s GROUP BY key`
//! over 2M rows and 100,000 keys in 8192-row batches: the embedded engine
//! on one thread, then timely with 1, 2, 4 … worker threads, and two
//! cluster processes (on threads of this process, over localhost TCP).
//!
//! `cargo bench -p sliq-timely --bench scaling [-- --rows N --keys K --workers 1,2,4 --runs R]`
//!
//! Prints M rows/s (best of R runs), the scaling factor against one timely
//! worker, the per-worker efficiency (scaling / workers), and what the
//! exchange costs: one timely worker against the embedded engine, and the
//! key split alone.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Float64Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use sliq_engine::{Engine, StreamOptions};
use sliq_timely::{Config, Job};

const QUERY: &str = "SELECT key, max(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key";

struct Settings {
    rows: usize,
    keys: u64,
    batch: usize,
    workers: Vec<usize>,
    runs: usize,
}

fn settings() -> Settings {
    let mut s = Settings {
        rows: 2_000_000,
        keys: 100_000,
        batch: 8192,
        workers: vec![1, 2, 4],
        runs: 3,
    };
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--rows" => s.rows = value.parse().expect("--rows N"),
            "--keys" => s.keys = value.parse().expect("--keys K"),
            "--batch" => s.batch = value.parse().expect("--batch B"),
            "--runs" => s.runs = value.parse().expect("--runs R"),
            "--workers" => {
                s.workers = value
                    .split(',')
                    .map(|w| w.parse().expect("--workers 1,2,4"))
                    .collect()
            }
            // cargo bench passes --bench; ignore what is not ours.
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    s
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("key", DataType::Int64, false),
        Field::new("v", DataType::Float64, false),
    ]))
}

fn data(s: &Settings) -> Vec<RecordBatch> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut batches = Vec::new();
    let mut left = s.rows;
    while left > 0 {
        let n = left.min(s.batch);
        left -= n;
        let mut keys = Vec::with_capacity(n);
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            keys.push((x % s.keys) as i64);
            values.push((x >> 11) as f64 / (1u64 << 53) as f64);
        }
        batches.push(
            RecordBatch::try_new(
                schema(),
                vec![
                    Arc::new(Int64Array::from(keys)),
                    Arc::new(Float64Array::from(values)),
                ],
            )
            .expect("batch"),
        );
    }
    batches
}

/// Seconds for the embedded engine on this thread, from setup to freeing
/// its windows (as a timely run's time includes both).
fn embedded(input: &[RecordBatch]) -> f64 {
    let start = Instant::now();
    let engine = Engine::new();
    let stream = engine
        .register_stream("s", schema(), StreamOptions::default())
        .expect("stream");
    let query = engine.query(QUERY).expect("query");
    for batch in input {
        stream.push(batch.clone()).expect("push");
        query.recv().expect("result");
    }
    drop((query, stream, engine));
    start.elapsed().as_secs_f64()
}

/// Seconds to split every batch `parts` ways by key, as the reader does.
fn split_only(input: &[RecordBatch], parts: usize) -> f64 {
    let engine = Engine::new();
    engine
        .register_stream("s", schema(), StreamOptions::default())
        .expect("stream");
    let mut partitioner = engine.partitioner(QUERY).expect("partitioner");
    let start = Instant::now();
    for batch in input {
        std::hint::black_box(partitioner.split(batch, parts).expect("split"));
    }
    start.elapsed().as_secs_f64()
}

fn job() -> Job {
    Job::new("s", schema(), StreamOptions::default(), QUERY)
}

/// Seconds for a timely run with `config`, reading `input` in process 0.
fn timely(input: &[RecordBatch], config: &Config) -> f64 {
    let source: Vec<Result<RecordBatch, String>> = input.iter().cloned().map(Ok).collect();
    let start = Instant::now();
    let mut rows = 0;
    let stats = sliq_timely::run(&job(), config, vec![source], |b| {
        rows += b.num_rows();
        Ok::<_, String>(())
    })
    .expect("timely run");
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(rows as u64, stats.rows_read);
    secs
}

/// Seconds for two cluster processes of `workers` workers each (threads
/// here, connected over localhost TCP).
fn cluster(input: &[RecordBatch], workers: usize) -> f64 {
    let addresses: Vec<String> = (0..2)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("port"))
        .collect::<Vec<_>>()
        .iter()
        .map(|l| l.local_addr().expect("address").to_string())
        .collect();
    let peer = {
        let config = Config::cluster(workers, 1, addresses.clone());
        std::thread::spawn(move || {
            let none: Vec<Vec<Result<RecordBatch, String>>> = Vec::new();
            sliq_timely::run(&job(), &config, none, |_| Ok::<_, String>(()))
        })
    };
    // Connecting is not part of the measurement.
    std::thread::sleep(Duration::from_millis(50));
    let secs = timely(input, &Config::cluster(workers, 0, addresses));
    peer.join().expect("peer").expect("peer run");
    secs
}

fn best(runs: usize, mut f: impl FnMut() -> f64) -> f64 {
    (0..runs).map(|_| f()).fold(f64::INFINITY, f64::min)
}

fn main() {
    let s = settings();
    let input = data(&s);
    let rows = s.rows as f64;
    let rate = |secs: f64| rows / secs / 1e6;
    println!(
        "max(v) OVER (ROWS 999 PRECEDING), {} rows, {} keys, {}-row batches, best of {} runs, {} cores",
        s.rows,
        s.keys,
        s.batch,
        s.runs,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let embedded_secs = best(s.runs, || embedded(&input));
    println!(
        "{:<34} {:>10.2} M rows/s",
        "embedded engine, 1 thread",
        rate(embedded_secs)
    );
    let mut one_worker = None;
    println!(
        "{:<34} {:>10} {:>9} {:>11}",
        "timely", "M rows/s", "scaling", "efficiency"
    );
    for &workers in &s.workers {
        let secs = best(s.runs, || timely(&input, &Config::workers(workers)));
        let base = *one_worker.get_or_insert(secs);
        let scaling = base / secs;
        println!(
            "{:<34} {:>10.2} {:>8.2}x {:>10.0}%",
            format!("{workers} worker(s), 1 process"),
            rate(secs),
            scaling,
            100.0 * scaling / workers as f64
        );
    }
    for workers in [1, 2] {
        let secs = best(s.runs, || cluster(&input, workers));
        let scaling = one_worker.unwrap_or(secs) / secs;
        println!(
            "{:<34} {:>10.2} {:>8.2}x {:>10.0}%",
            format!("2 processes × {workers} worker(s)"),
            rate(secs),
            scaling,
            100.0 * scaling / (2 * workers) as f64
        );
    }
    if let Some(one) = one_worker {
        println!(
            "exchange cost: 1 timely worker takes {:.2}x the embedded engine's time ({:.0} ns/row more)",
            one / embedded_secs,
            (one - embedded_secs) / rows * 1e9
        );
    }
    let split = best(s.runs, || split_only(&input, 4));
    println!(
        "key split alone (4 parts): {:.0} ns/row, {:.0}% of the embedded engine's time",
        split / rows * 1e9,
        100.0 * split / embedded_secs
    );
}

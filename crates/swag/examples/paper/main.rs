//! Reproduces the paper's window experiments (Figs. 9–11) for sliq-swag.
//!
//! ```text
//! cargo run --release -p sliq-swag --example paper -- [--full] [--out DIR]
//!     [--only static|dynamic|latency|rust-loop] [--ops sum,geomean,bloom]
//!     [--algorithms daba_lite,daba,two_stacks_lite,two_stacks] [--no-fence]
//!     [--sizes 1024,1048576] [--huge-pages]
//! ```
//!
//! - static: fill a window of n items, then time rounds of evict, insert,
//!   query (the reference harness's loop, with one sequentially consistent
//!   fence per round unless `--no-fence`); million items/s, the median of
//!   three trials (the algorithms take turns within each trial). The table
//!   also gives the rate of the loop with the fence alone, the ceiling of
//!   every column.
//! - dynamic: fill to n and drain to 0 repeatedly, querying after every
//!   operation; million items/s (an item is one insert plus one evict).
//! - latency: the time of each of 4M rounds (400,000 without `--full`) at
//!   n = 2^10 and n = 2^22 (2^16 without `--full`), the two windows taking
//!   turns every 10,000 rounds so that both meet the same noise; min, p50,
//!   p99, p99.9, p99.99 and max in ns.
//!   First it spins on the clock for a second and reports how often the
//!   machine itself stalls a thread (interrupts, hypervisor exits): those
//!   stalls come per unit of time, so they reach p99.99 of any round longer
//!   than 1e-4 / their rate.
//! - rust-loop (only when named with `--only`): the loop of the reference
//!   Rust Two-Stacks Lite's bench, reproduced exactly so that its figures
//!   compare: an `i32` wrapping `sum`, items `1 + i % 101`, the window
//!   filled with items 0 to n - 1, then 30M rounds (7.5M without `--full`)
//!   of fence, evict, insert, query, the results added into a checksum.
//!   Million items/s at n = 2^10 and 2^20 (or `--sizes`), the median of
//!   three trials, the algorithms taking turns.
//!
//! `--huge-pages` reruns the runner with glibc's malloc backing the heap
//! with transparent huge pages, so that a large window's pointers do not miss
//! the TLB at every 4 KiB page.
//!
//! Sizes are 1, 4, 16, … up to 2^22 with `--full` (2^16 otherwise), or the
//! throughput experiments' sizes named with `--sizes` (say, the n = 2^10 and
//! 2^20 of the reference harness's published figures, to alternate runs of
//! the two at the same sizes). Prints tables, writes CSV files and one SVG
//! per figure into DIR (default `target/paper`).

mod operators;
mod plot;

use std::fs;
use std::hint::black_box;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{Ordering, fence};
use std::time::Instant;

use operators::{BloomOp, GeomeanOp, Operator, SumOp};
use sliq_swag::monoids::Sum;
use sliq_swag::{Daba, DabaLite, FifoAggregator, Monoid, TwoStacks, TwoStacksLite};

const ALGORITHMS: [&str; 4] = ["daba_lite", "daba", "two_stacks_lite", "two_stacks"];

const EXPERIMENTS: [&str; 4] = ["static", "dynamic", "latency", "rust-loop"];

struct Config {
    full: bool,
    out: PathBuf,
    only: Option<String>,
    ops: Vec<String>,
    algorithms: Vec<&'static str>,
    fence: bool,
    huge_pages: bool,
    /// The throughput experiments' window sizes, when not the default ones.
    sizes: Option<Vec<usize>>,
}

fn parse_args() -> Result<Config, String> {
    let mut cfg = Config {
        full: false,
        out: PathBuf::from("target/paper"),
        only: None,
        ops: vec!["sum".into(), "geomean".into(), "bloom".into()],
        algorithms: ALGORITHMS.to_vec(),
        fence: true,
        huge_pages: false,
        sizes: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--full" => cfg.full = true,
            "--quick" => cfg.full = false,
            "--no-fence" => cfg.fence = false,
            "--huge-pages" => cfg.huge_pages = true,
            "--out" => cfg.out = args.next().ok_or("--out needs a directory")?.into(),
            "--only" => {
                let name = args.next().ok_or("--only needs an experiment")?;
                if !EXPERIMENTS.contains(&name.as_str()) {
                    return Err(format!(
                        "unknown experiment {name:?}: expected one of {EXPERIMENTS:?}"
                    ));
                }
                cfg.only = Some(name);
            }
            "--ops" => {
                cfg.ops = args
                    .next()
                    .ok_or("--ops needs a list")?
                    .split(',')
                    .map(str::to_string)
                    .collect()
            }
            "--sizes" => {
                let list = args.next().ok_or("--sizes needs a list")?;
                let sizes = list
                    .split(',')
                    .map(|n| match n.parse::<usize>() {
                        Ok(n) if n > 0 => Ok(n),
                        _ => Err(format!("--sizes: {n:?} is not a positive window size")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                cfg.sizes = Some(sizes);
            }
            "--algorithms" => {
                let list = args.next().ok_or("--algorithms needs a list")?;
                cfg.algorithms = Vec::new();
                for name in list.split(',') {
                    match ALGORITHMS.iter().find(|a| **a == name) {
                        Some(a) => cfg.algorithms.push(a),
                        None => {
                            return Err(format!(
                                "unknown algorithm {name:?}: expected one of {ALGORITHMS:?}"
                            ));
                        }
                    }
                }
            }
            "-h" | "--help" => {
                return Err(
                    "usage: paper [--full] [--out DIR] [--only static|dynamic|latency|rust-loop] \
                            [--ops sum,geomean,bloom] [--algorithms …] [--no-fence] \
                            [--sizes N,…] [--huge-pages]"
                        .into(),
                );
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    if let Some(bad) = cfg
        .ops
        .iter()
        .find(|o| !["sum", "geomean", "bloom"].contains(&o.as_str()))
    {
        return Err(format!(
            "unknown operator {bad:?}: expected sum, geomean or bloom"
        ));
    }
    Ok(cfg)
}

/// Static window: fill n, then `rounds` of evict, insert, query. Items/s.
///
/// Not inlined, nor is `run_dynamic`: each algorithm's loop is compiled on
/// its own, as the reference harness's templates are, rather than inside
/// one function of every algorithm and operator, where the registers and
/// layout a loop gets depend on all the others.
#[inline(never)]
fn run_static<O: Operator, W: FifoAggregator<O>>(n: usize, rounds: u64, use_fence: bool) -> f64 {
    let op = O::default();
    let mut w = W::new(op);
    for i in 0..n as u64 {
        w.insert(op.lift(i));
    }
    let mut checksum = 0u64;
    let start = Instant::now();
    for i in 0..rounds {
        w.evict();
        w.insert(op.lift(i));
        checksum ^= O::digest(&w.query());
        if use_fence {
            fence(Ordering::SeqCst);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    black_box(checksum);
    rounds as f64 / secs
}

/// Rounds per second of the static loop without a window: the checksum and
/// the fence alone. No algorithm's static rounds can be faster, so the
/// static table states it beside its figures.
#[inline(never)]
fn run_fence_only(rounds: u64) -> f64 {
    let mut checksum = 0u64;
    let start = Instant::now();
    for i in 0..rounds {
        checksum ^= black_box(i);
        fence(Ordering::SeqCst);
    }
    let secs = start.elapsed().as_secs_f64();
    black_box(checksum);
    rounds as f64 / secs
}

/// The reference Rust Two-Stacks Lite's bench loop, operator and all: the
/// window filled with items `0..n`, then rounds `n..iterations` of fence,
/// evict, insert, query, each result added into a checksum. Items/s and the
/// checksum, which the reference bench prints too.
#[inline(never)]
fn run_rust_loop<O: Monoid<Agg = i32> + Default, W: FifoAggregator<O>>(
    n: usize,
    iterations: usize,
    use_fence: bool,
) -> (f64, i32) {
    let item = |i: usize| (1 + i % 101) as i32;
    let mut w = W::new(O::default());
    for i in 0..n {
        w.insert(item(i));
    }
    let mut force_side_effect = 0i32;
    let start = Instant::now();
    for i in n..iterations {
        if use_fence {
            fence(Ordering::SeqCst);
        }
        w.evict();
        w.insert(item(i));
        force_side_effect = force_side_effect.wrapping_add(w.query());
    }
    let secs = start.elapsed().as_secs_f64();
    ((iterations - n) as f64 / secs, force_side_effect)
}

/// Dynamic window: fill to n and drain, querying after every operation.
/// Items/s, where an item is inserted and evicted once.
#[inline(never)]
fn run_dynamic<O: Operator, W: FifoAggregator<O>>(n: usize, items: u64) -> f64 {
    let op = O::default();
    let mut w = W::new(op);
    let mut checksum = 0u64;
    let cycles = (items / n as u64).max(1);
    let start = Instant::now();
    let mut i = 0u64;
    for _ in 0..cycles {
        for _ in 0..n {
            w.insert(op.lift(i));
            checksum ^= O::digest(&w.query());
            i += 1;
        }
        for _ in 0..n {
            w.evict();
            checksum ^= O::digest(&w.query());
        }
    }
    let secs = start.elapsed().as_secs_f64();
    black_box(checksum);
    (cycles * n as u64) as f64 / secs
}

/// Rounds timed on one window before the other takes its turn.
const LATENCY_TURN: u64 = 10_000;

/// Per-round latencies in ns at static windows of each of `sizes`, whose
/// rounds take turns in blocks of [`LATENCY_TURN`], so that every size meets
/// the same machine noise: the tail percentiles then compare the sizes, not
/// two moments of a shared machine.
fn run_latency<O: Operator, W: FifoAggregator<O>>(
    sizes: [usize; 2],
    rounds: u64,
    use_fence: bool,
) -> [Vec<u64>; 2] {
    let op = O::default();
    let mut windows = sizes.map(|n| {
        let mut w = W::new(op);
        for i in 0..n as u64 {
            w.insert(op.lift(i));
        }
        w
    });
    // Written now, so that no page of them faults in between rounds.
    let mut samples = sizes.map(|_| vec![0u64; rounds as usize]);
    let mut checksum = 0u64;
    let mut done = 0;
    while done < rounds {
        let turn = LATENCY_TURN.min(rounds - done);
        for (w, samples) in windows.iter_mut().zip(&mut samples) {
            for (i, sample) in (done..).zip(&mut samples[done as usize..(done + turn) as usize]) {
                let start = Instant::now();
                w.evict();
                w.insert(op.lift(i));
                checksum ^= O::digest(&w.query());
                if use_fence {
                    fence(Ordering::SeqCst);
                }
                *sample = start.elapsed().as_nanos() as u64;
            }
        }
        done += turn;
    }
    black_box(checksum);
    samples
}

/// Calls `$f::<O, Algorithm<O>>($args)` for the algorithm named `$name`.
macro_rules! with_algorithm {
    ($name:expr, $f:ident::<$o:ty>($($args:expr),*)) => {
        match $name {
            "daba_lite" => $f::<$o, DabaLite<$o>>($($args),*),
            "daba" => $f::<$o, Daba<$o>>($($args),*),
            "two_stacks_lite" => $f::<$o, TwoStacksLite<$o>>($($args),*),
            _ => $f::<$o, TwoStacks<$o>>($($args),*),
        }
    };
}

macro_rules! with_operator {
    ($op:expr, $algo:expr, $f:ident($($args:expr),*)) => {
        match $op {
            "sum" => with_algorithm!($algo, $f::<SumOp>($($args),*)),
            "geomean" => with_algorithm!($algo, $f::<GeomeanOp>($($args),*)),
            _ => with_algorithm!($algo, $f::<BloomOp>($($args),*)),
        }
    };
}

/// Timed rounds per measurement, scaled to the operator's cost.
fn rounds_for(op: &str, full: bool) -> u64 {
    let base = match op {
        "sum" => 4_000_000,
        "geomean" => 2_000_000,
        _ => 800_000,
    };
    if full { base } else { base / 4 }
}

/// Timed rounds per window size in the latency experiment, whatever the
/// operator: p99.99 is the 400th slowest of 4M rounds, where of 400,000 it
/// was the 40th, and one burst of machine noise (a few hundred slow rounds
/// in a row) decided it.
fn latency_rounds(full: bool) -> u64 {
    if full { 4_000_000 } else { 400_000 }
}

fn sizes(full: bool) -> Vec<usize> {
    let max_log4 = if full { 11 } else { 8 };
    (0..=max_log4).map(|k| 1usize << (2 * k)).collect()
}

/// One row of a throughput table.
pub struct Throughput {
    pub op: String,
    pub algorithm: &'static str,
    pub n: usize,
    pub mitems_per_s: f64,
}

/// Percentiles of one latency run.
pub struct Latency {
    pub op: String,
    pub algorithm: &'static str,
    pub n: usize,
    /// min, p50, p99, p99.9, p99.99, max
    pub ns: [u64; 6],
}

pub const PERCENTILE_LABELS: [&str; 6] = ["min", "p50", "p99", "p99.9", "p99.99", "max"];

fn percentiles(mut samples: Vec<u64>) -> [u64; 6] {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    [at(0.0), at(0.5), at(0.99), at(0.999), at(0.9999), at(1.0)]
}

fn throughput_experiment(cfg: &Config, dynamic: bool) -> Vec<Throughput> {
    let mut rows = Vec::new();
    let fence_note = if !dynamic && cfg.fence {
        let mut runs: Vec<f64> = (0..3)
            .map(|_| run_fence_only(rounds_for("sum", cfg.full)))
            .collect();
        runs.sort_by(f64::total_cmp);
        format!(
            " (one SeqCst fence per round; the fence alone: {:.1} M rounds/s)",
            runs[1] / 1e6
        )
    } else {
        String::new()
    };
    let window_sizes = cfg.sizes.clone().unwrap_or_else(|| sizes(cfg.full));
    for op in &cfg.ops {
        println!(
            "\n{} window, {op}: million items/s{fence_note}",
            if dynamic { "dynamic" } else { "static" },
        );
        print_table_header(&cfg.algorithms);
        for &n in &window_sizes {
            let rounds = rounds_for(op, cfg.full) / 2;
            rows.extend(table_row(op, n, &cfg.algorithms, |algo| {
                if dynamic {
                    with_operator!(op.as_str(), algo, run_dynamic(n, rounds))
                } else {
                    with_operator!(op.as_str(), algo, run_static(n, rounds, cfg.fence))
                }
            }));
        }
    }
    rows
}

/// Prints the header of a throughput table: `n`, then one column per
/// algorithm.
fn print_table_header(algorithms: &[&str]) {
    print!("{:>9}", "n");
    for algo in algorithms {
        print!("{algo:>17}");
    }
    println!();
}

/// Measures and prints one row of a throughput table: `run(algorithm)`, in
/// items/s, is the median of three trials, because this machine is shared
/// and noisy. The algorithms take turns within each trial, so that a slow
/// spell of the machine reaches all of them rather than one.
fn table_row(
    op: &str,
    n: usize,
    algorithms: &[&'static str],
    mut run: impl FnMut(&'static str) -> f64,
) -> Vec<Throughput> {
    print!("{n:>9}");
    let _ = std::io::stdout().flush();
    let mut trials = vec![Vec::new(); algorithms.len()];
    for _ in 0..3 {
        for (&algo, runs) in algorithms.iter().zip(&mut trials) {
            runs.push(run(algo));
        }
    }
    let row = algorithms
        .iter()
        .zip(trials)
        .map(|(&algorithm, mut runs)| {
            runs.sort_by(f64::total_cmp);
            let mitems_per_s = runs[1] / 1e6;
            print!("{mitems_per_s:>17.2}");
            Throughput {
                op: op.to_string(),
                algorithm,
                n,
                mitems_per_s,
            }
        })
        .collect();
    println!();
    row
}

/// Rounds of the reference Rust bench's loop, as its harness runs it.
const RUST_LOOP_ROUNDS: usize = 30_000_000;

/// The `rust-loop` experiment: the reference Rust bench's loop at each size
/// (2^10 and 2^20 unless `--sizes`), the median of three trials in which the
/// algorithms take turns. Prints each size's checksum, which every algorithm
/// must reach and the reference bench prints to its standard error.
fn rust_loop_experiment(cfg: &Config) -> Vec<Throughput> {
    let rounds = if cfg.full {
        RUST_LOOP_ROUNDS
    } else {
        RUST_LOOP_ROUNDS / 4
    };
    println!(
        "\nthe reference Rust bench's loop: i32 sum of items 1 + i % 101, {rounds} rounds{}: \
         million items/s",
        if cfg.fence {
            ", one SeqCst fence first in each"
        } else {
            ""
        }
    );
    print_table_header(&cfg.algorithms);
    let window_sizes = cfg.sizes.clone().unwrap_or_else(|| vec![1 << 10, 1 << 20]);
    let mut rows = Vec::new();
    let mut checksums = Vec::new();
    for n in window_sizes {
        let mut sums = Vec::new();
        rows.extend(table_row("sum_i32", n, &cfg.algorithms, |algo| {
            let (per_s, checksum) =
                with_algorithm!(algo, run_rust_loop::<Sum<i32>>(n, n + rounds, cfg.fence));
            sums.push(checksum);
            per_s
        }));
        sums.sort_unstable();
        sums.dedup();
        checksums.push((n, sums));
    }
    for (n, sums) in checksums {
        match sums.as_slice() {
            [sum] => println!("checksum at n = {n}: {sum}"),
            _ => println!("checksum at n = {n}: the algorithms disagree: {sums:?}"),
        }
    }
    rows
}

/// Gaps of at least this much between two consecutive clock reads count as
/// the machine stalling the benchmark (an interrupt, a hypervisor exit, a
/// preemption), not as work.
const STALL_NS: u64 = 2_000;

/// How often the machine stalls a thread that only reads the clock.
struct Stalls {
    per_second: f64,
    median_ns: u64,
    max_ns: u64,
}

/// Spins on the clock for `seconds` and counts the stalls.
fn measure_stalls(seconds: f64) -> Stalls {
    let start = Instant::now();
    let mut last = start;
    let mut gaps = Vec::new();
    loop {
        let now = Instant::now();
        let gap = now.duration_since(last).as_nanos() as u64;
        if gap >= STALL_NS {
            gaps.push(gap);
        }
        last = now;
        if now.duration_since(start).as_secs_f64() >= seconds {
            break;
        }
    }
    gaps.sort_unstable();
    Stalls {
        per_second: gaps.len() as f64 / start.elapsed().as_secs_f64(),
        median_ns: gaps.get(gaps.len() / 2).copied().unwrap_or(0),
        max_ns: gaps.last().copied().unwrap_or(0),
    }
}

fn latency_experiment(cfg: &Config) -> Vec<Latency> {
    let large = if cfg.full { 1 << 22 } else { 1 << 16 };
    let mut rows = Vec::new();
    // Stalls arrive per unit of time, so a share rate × t of rounds lasting
    // t contain one: once that reaches 1e-4, p99.99 shows the machine.
    let stalls = measure_stalls(1.0);
    let limit_ns = if stalls.per_second > 0.0 {
        1e5 / stalls.per_second
    } else {
        f64::INFINITY
    };
    println!(
        "\nmachine noise: {:.0} stalls of {} µs or more per second of clock reads \
         (median {:.1} µs, max {:.1} µs); p99.99 below measures them, not the \
         window, for rounds of {limit_ns:.0} ns or more",
        stalls.per_second,
        STALL_NS / 1000,
        stalls.median_ns as f64 / 1e3,
        stalls.max_ns as f64 / 1e3,
    );
    let sizes = [1usize << 10, large];
    for op in &cfg.ops {
        let rounds = latency_rounds(cfg.full);
        let runs: Vec<_> = cfg
            .algorithms
            .iter()
            .map(|&algo| {
                let samples =
                    with_operator!(op.as_str(), algo, run_latency(sizes, rounds, cfg.fence));
                (algo, samples.map(percentiles))
            })
            .collect();
        for (size, &n) in sizes.iter().enumerate() {
            println!("\nlatency per round, {op}, n = {n}: ns");
            print!("{:>17}", "algorithm");
            for label in PERCENTILE_LABELS {
                print!("{label:>12}");
            }
            println!();
            for &(algo, ref by_size) in &runs {
                let ns = by_size[size];
                print!("{algo:>17}");
                for v in ns {
                    print!("{v:>12}");
                }
                println!();
                rows.push(Latency {
                    op: op.clone(),
                    algorithm: algo,
                    n,
                    ns,
                });
            }
        }
    }
    rows
}

fn write_csv(
    path: &PathBuf,
    header: &str,
    lines: impl Iterator<Item = String>,
) -> std::io::Result<()> {
    let mut text = String::from(header);
    text.push('\n');
    for line in lines {
        text.push_str(&line);
        text.push('\n');
    }
    fs::write(path, text)
}

/// Writes a throughput table's rows as CSV.
fn write_throughput_csv(path: &PathBuf, rows: &[Throughput]) -> std::io::Result<()> {
    let lines = rows
        .iter()
        .map(|r| format!("{},{},{},{:.3}", r.op, r.algorithm, r.n, r.mitems_per_s));
    write_csv(path, "operator,algorithm,n,mitems_per_s", lines)
}

/// glibc's tunable that makes malloc back its heap with transparent huge
/// pages (`madvise(MADV_HUGEPAGE)`); read only when a process starts.
const HUGE_PAGE_TUNABLE: &str = "glibc.malloc.hugetlb=1";

/// With `--huge-pages`, runs this program again with [`HUGE_PAGE_TUNABLE`]
/// set and exits with its status; returns when it is set already (or the
/// flag is absent). Other C libraries ignore the variable.
fn rerun_with_huge_pages(cfg: &Config) {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    if !cfg.huge_pages || tunables.contains(HUGE_PAGE_TUNABLE) {
        return;
    }
    let value = if tunables.is_empty() {
        HUGE_PAGE_TUNABLE.to_string()
    } else {
        format!("{tunables}:{HUGE_PAGE_TUNABLE}")
    };
    let status = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("GLIBC_TUNABLES", value)
            .status()
    });
    match status {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("cannot rerun with huge pages: {e}");
            std::process::exit(1);
        }
    }
}

fn main() {
    let cfg = match parse_args() {
        Ok(cfg) => cfg,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    rerun_with_huge_pages(&cfg);
    if cfg.huge_pages {
        println!("heap backed by transparent huge pages (GLIBC_TUNABLES={HUGE_PAGE_TUNABLE})");
    }
    if let Err(e) = fs::create_dir_all(&cfg.out) {
        eprintln!("cannot create {}: {e}", cfg.out.display());
        std::process::exit(1);
    }
    // Every experiment but `rust-loop`, unless one is named.
    let wants = |name: &str| match cfg.only.as_deref() {
        Some(only) => only == name,
        None => name != "rust-loop",
    };
    let mut written = Vec::new();
    let mut report = |result: std::io::Result<()>, path: PathBuf| match result {
        Ok(()) => written.push(path),
        Err(e) => eprintln!("cannot write {}: {e}", path.display()),
    };

    for (name, dynamic, figure) in [("static", false, "fig9"), ("dynamic", true, "fig10")] {
        if !wants(name) {
            continue;
        }
        let rows = throughput_experiment(&cfg, dynamic);
        let csv = cfg.out.join(format!("{name}.csv"));
        report(write_throughput_csv(&csv, &rows), csv);
        let svg = cfg.out.join(format!("{figure}_{name}_throughput.svg"));
        report(plot::throughput(&svg, name, &rows, &cfg.ops), svg);
    }
    if wants("rust-loop") {
        let rows = rust_loop_experiment(&cfg);
        let csv = cfg.out.join("rust_loop.csv");
        report(write_throughput_csv(&csv, &rows), csv);
    }
    if wants("latency") {
        let rows = latency_experiment(&cfg);
        let csv = cfg.out.join("latency.csv");
        let lines = rows.iter().map(|r| {
            let ns: Vec<String> = r.ns.iter().map(u64::to_string).collect();
            format!("{},{},{},{}", r.op, r.algorithm, r.n, ns.join(","))
        });
        report(
            write_csv(
                &csv,
                "operator,algorithm,n,min_ns,p50_ns,p99_ns,p999_ns,p9999_ns,max_ns",
                lines,
            ),
            csv,
        );
        let svg = cfg.out.join("fig11_latency.svg");
        report(plot::latency(&svg, &rows, &cfg.ops), svg);
    }
    println!();
    for path in written {
        println!("wrote {}", path.display());
    }
}

//! The paper's real-data experiment (Fig. 12): `relvar(mf01) OVER (RANGE τ)`
//! on DEBS 2012 data for window lengths τ from 10 ms to 6 h, with each of
//! the four window algorithms.
//!
//! `cargo bench -p sliq --bench debs_relvar [-- --events N] [-- --path allData.txt] [-- --out DIR]`
//!
//! Without `--path` it replays synthetic data from `sliq debs generate`'s
//! generator (seed 1; 2.2M events ≈ 6 h at 100 Hz by default). Prints a
//! table, writes `debs_relvar.csv` and `fig12_debs_relvar.svg` into DIR
//! (default `target/debs`), and the latency of one-event pushes at τ = 10 min.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::RecordBatch;
use plotters::prelude::*;
use sliq::{Engine, StreamOptions, WindowAlgorithm};

const WINDOWS: [(&str, &str); 8] = [
    ("10ms", "10ms"),
    ("100ms", "100ms"),
    ("1s", "1s"),
    ("10s", "10s"),
    ("1min", "1m"),
    ("10min", "10m"),
    ("1h", "1h"),
    ("6h", "6h"),
];

const ALGORITHMS: [WindowAlgorithm; 4] = [
    WindowAlgorithm::DabaLite,
    WindowAlgorithm::Daba,
    WindowAlgorithm::TwoStacksLite,
    WindowAlgorithm::TwoStacks,
];

fn argument(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The events, projected to `(ts, mf01)`.
fn load(events: u64, path: Option<PathBuf>) -> Vec<RecordBatch> {
    let bytes = match path {
        Some(p) => std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        None => {
            let mut out = Vec::new();
            let config = sliq_debs::GeneratorConfig {
                events,
                ..Default::default()
            };
            sliq_debs::generate(&config, &mut out).expect("in-memory write");
            out
        }
    };
    let reader =
        sliq_debs::DebsReader::new(std::io::Cursor::new(bytes), sliq_debs::OutOfOrder::Drop)
            .expect("reader");
    reader
        .map(|b| {
            let b = b.expect("readable data");
            b.project(&[0, 2]).expect("ts and mf01")
        })
        .collect()
}

fn engine_for(
    algorithm: WindowAlgorithm,
    schema: arrow_schema::SchemaRef,
    tau: &str,
) -> (Engine, sliq::Stream, sliq::Query) {
    let engine = Engine::builder().window_algorithm(algorithm).build();
    let stream = engine
        .register_stream("debs", schema, StreamOptions::default().event_time("ts"))
        .expect("stream");
    let query = engine
        .query(&format!(
            "SELECT relvar(mf01) OVER (RANGE '{tau}') AS rv FROM debs"
        ))
        .expect("query");
    (engine, stream, query)
}

/// Nanoseconds of each one-event push to its result, at τ = 10 min.
fn push_latencies(
    algorithm: WindowAlgorithm,
    schema: &arrow_schema::SchemaRef,
    events: &[RecordBatch],
) -> Vec<u64> {
    let (_engine, stream, query) = engine_for(algorithm, Arc::clone(schema), "10m");
    events
        .iter()
        .map(|b| {
            let start = Instant::now();
            stream.push(b.clone()).expect("push");
            std::hint::black_box(query.recv().expect("result"));
            start.elapsed().as_nanos() as u64
        })
        .collect()
}

fn main() {
    let events: u64 = argument("--events")
        .and_then(|e| e.parse().ok())
        .unwrap_or(2_160_000);
    let out = PathBuf::from(argument("--out").unwrap_or_else(|| "target/debs".into()));
    let batches = load(events, argument("--path").map(PathBuf::from));
    let schema = batches[0].schema();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    println!("relvar(mf01) OVER (RANGE τ) on {rows} DEBS events: million events/s");
    print!("{:>8}", "τ");
    for a in ALGORITHMS {
        print!("{:>17}", a.to_string());
    }
    println!();
    let mut csv = String::from("tau,algorithm,mevents_per_s\n");
    let mut series: Vec<Vec<(usize, f64)>> = vec![Vec::new(); ALGORITHMS.len()];
    for (w, (label, tau)) in WINDOWS.iter().enumerate() {
        print!("{label:>8}");
        for (i, algorithm) in ALGORITHMS.iter().enumerate() {
            let (_engine, stream, query) = engine_for(*algorithm, Arc::clone(&schema), tau);
            let start = Instant::now();
            for b in &batches {
                stream.push(b.clone()).expect("push");
                std::hint::black_box(query.recv().expect("result"));
            }
            let per_s = rows as f64 / start.elapsed().as_secs_f64() / 1e6;
            print!("{per_s:>17.2}");
            csv.push_str(&format!("{label},{algorithm},{per_s:.3}\n"));
            series[i].push((w, per_s));
        }
        println!();
    }
    // Per-event latency at τ = 10 min: one-event pushes through the engine.
    println!("\nlatency of one-event pushes at τ = 10 min (ns): min, p50, p99, p99.9, max");
    let singles: Vec<RecordBatch> = batches
        .iter()
        .flat_map(|b| (0..b.num_rows()).map(move |r| b.slice(r, 1)))
        .take(300_000)
        .collect();
    for algorithm in ALGORITHMS {
        let mut ns = push_latencies(algorithm, &schema, &singles);
        ns.sort_unstable();
        let at = |q: f64| ns[((ns.len() - 1) as f64 * q) as usize];
        println!(
            "{:>17}: {} {} {} {} {}",
            algorithm.to_string(),
            at(0.0),
            at(0.5),
            at(0.99),
            at(0.999),
            at(1.0)
        );
    }
    bulk_eviction(&singles, &schema);
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("debs_relvar.csv"), csv);
        let svg = out.join("fig12_debs_relvar.svg");
        match plot(&svg, &series) {
            Ok(()) => println!(
                "\nwrote {} and {}",
                out.join("debs_relvar.csv").display(),
                svg.display()
            ),
            Err(e) => eprintln!("cannot draw {}: {e}", svg.display()),
        }
    }
}

fn plot(
    path: &std::path::Path,
    series: &[Vec<(usize, f64)>],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (640, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let top = series.iter().flatten().map(|(_, v)| *v).fold(0.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption("relvar(mf01) over RANGE τ, DEBS 2012", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(0f64..(WINDOWS.len() - 1) as f64, 0f64..top.max(1.0))?;
    chart
        .configure_mesh()
        .x_labels(WINDOWS.len())
        .x_label_formatter(&|x| {
            WINDOWS
                .get(x.round() as usize)
                .map(|w| w.0.to_string())
                .unwrap_or_default()
        })
        .x_desc("window τ")
        .y_desc("million events/s")
        .draw()?;
    let colors = [
        RGBColor(214, 39, 40),
        RGBColor(31, 119, 180),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ];
    for ((points, algorithm), color) in series.iter().zip(ALGORITHMS).zip(colors) {
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|(x, y)| (*x as f64, *y)),
                color.stroke_width(2),
            ))?
            .label(algorithm.to_string())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// The paper's bulk-eviction effect: after a gap in event time longer than
/// τ, the first event evicts the whole window at once. Shifts the second
/// half of 120,000 events 15 minutes later and times each one-event push
/// at τ = 10 min.
fn bulk_eviction(singles: &[RecordBatch], schema: &arrow_schema::SchemaRef) {
    use arrow_array::cast::AsArray;
    use arrow_array::types::TimestampMicrosecondType;
    let events = singles.len().min(120_000);
    let half = events / 2;
    let gap_us = 15 * 60 * 1_000_000i64;
    let shifted: Vec<RecordBatch> = singles[..events]
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if i < half {
                return b.clone();
            }
            let ts = b.column(0).as_primitive::<TimestampMicrosecondType>();
            let moved = arrow_array::TimestampMicrosecondArray::from(vec![ts.value(0) + gap_us]);
            RecordBatch::try_new(
                Arc::clone(schema),
                vec![Arc::new(moved), Arc::clone(b.column(1))],
            )
            .expect("same schema")
        })
        .collect();
    println!(
        "\nbulk eviction: {half} events, then a 15-minute gap, at τ = 10 min (one-event pushes, ns)"
    );
    for algorithm in ALGORITHMS {
        let mut ns = push_latencies(algorithm, schema, &shifted);
        let after_gap = ns[half];
        ns.sort_unstable();
        println!(
            "{:>17}: first event after the gap (evicts the whole window) {after_gap}, median {}, p99.9 {}",
            algorithm.to_string(),
            ns[ns.len() / 2],
            ns[ns.len() * 999 / 1000]
        );
    }
}

//! SVG figures for the paper runner, one per figure of the paper.

use std::io;
use std::path::Path;

use plotters::prelude::*;

use crate::{ALGORITHMS, Latency, PERCENTILE_LABELS, Throughput};

const COLORS: [RGBColor; 4] = [
    RGBColor(214, 39, 40),   // daba_lite
    RGBColor(31, 119, 180),  // daba
    RGBColor(44, 160, 44),   // two_stacks_lite
    RGBColor(148, 103, 189), // two_stacks
];

/// `1`, `64`, `4k`, `1M`: compact labels for log axes.
fn compact(x: &f64) -> String {
    let x = *x;
    if x >= 1e6 {
        format!("{}M", trim(x / 1e6))
    } else if x >= 1e3 {
        format!("{}k", trim(x / 1e3))
    } else {
        trim(x)
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.1}");
    s.trim_end_matches(".0").to_string()
}

fn other<E: std::fmt::Display>(e: E) -> io::Error {
    io::Error::other(e.to_string())
}

/// Positive range covering `values`, padded for a log axis.
fn log_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (lo, hi) = values
        .filter(|v| *v > 0.0)
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        0.1..10.0
    } else {
        lo / 1.5..hi * 1.5
    }
}

/// Draws one algorithm's line with its legend entry.
fn add_line<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    points: impl IntoIterator<Item = CT::From>,
    label: &str,
    color: RGBColor,
) -> io::Result<()>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
    CT::From: Clone + 'static,
{
    chart
        .draw_series(LineSeries::new(points, color.stroke_width(2)))
        .map_err(other)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
    Ok(())
}

/// Fig. 9 / Fig. 10: throughput against window size, one panel per operator.
pub fn throughput(
    path: &Path,
    experiment: &str,
    rows: &[Throughput],
    ops: &[String],
) -> io::Result<()> {
    let root = SVGBackend::new(path, (420 * ops.len() as u32, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(other)?;
    let panels = root.split_evenly((1, ops.len()));
    let max_n = rows.iter().map(|r| r.n).max().unwrap_or(1) as f64;
    for (panel, op) in panels.iter().zip(ops) {
        let mine: Vec<&Throughput> = rows.iter().filter(|r| &r.op == op).collect();
        let y = log_range(mine.iter().map(|r| r.mitems_per_s));
        let mut chart = ChartBuilder::on(panel)
            .caption(format!("{experiment} window, {op}"), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(52)
            .build_cartesian_2d((1f64..max_n * 1.5).log_scale(), y.log_scale())
            .map_err(other)?;
        chart
            .configure_mesh()
            .x_desc("window size n")
            .y_desc("million items/s")
            .x_label_formatter(&compact)
            .y_label_formatter(&compact)
            .draw()
            .map_err(other)?;
        for (algo, color) in ALGORITHMS.iter().zip(COLORS) {
            let points = mine
                .iter()
                .filter(|r| r.algorithm == *algo)
                .map(|r| (r.n as f64, r.mitems_per_s));
            add_line(&mut chart, points, algo, color)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(other)?;
    }
    root.present().map_err(other)
}

/// Fig. 11: latency percentiles per round, one panel per operator and size.
pub fn latency(path: &Path, rows: &[Latency], ops: &[String]) -> io::Result<()> {
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let root = SVGBackend::new(path, (420 * sizes.len() as u32, 320 * ops.len() as u32))
        .into_drawing_area();
    root.fill(&WHITE).map_err(other)?;
    let panels = root.split_evenly((ops.len(), sizes.len()));
    let cells = ops
        .iter()
        .flat_map(|op| sizes.iter().map(move |n| (op, *n)));
    for (panel, (op, n)) in panels.iter().zip(cells) {
        let mine: Vec<&Latency> = rows.iter().filter(|r| &r.op == op && r.n == n).collect();
        let y = log_range(
            mine.iter()
                .flat_map(|r| r.ns.iter().map(|v| (*v).max(1) as f64)),
        );
        let mut chart = ChartBuilder::on(panel)
            .caption(format!("{op}, n = {n}: ns per round"), ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(52)
            .build_cartesian_2d(0f64..5.0, y.log_scale())
            .map_err(other)?;
        chart
            .configure_mesh()
            .x_labels(6)
            .x_label_formatter(&|x| {
                PERCENTILE_LABELS
                    .get(x.round() as usize)
                    .copied()
                    .unwrap_or("")
                    .to_string()
            })
            .y_desc("ns")
            .y_label_formatter(&compact)
            .draw()
            .map_err(other)?;
        for (algo, color) in ALGORITHMS.iter().zip(COLORS) {
            let Some(row) = mine.iter().find(|r| r.algorithm == *algo) else {
                continue;
            };
            let points = row
                .ns
                .iter()
                .enumerate()
                .map(|(i, v)| (i as f64, (*v).max(1) as f64));
            add_line(&mut chart, points, algo, color)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(other)?;
    }
    root.present().map_err(other)
}

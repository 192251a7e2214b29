//! The generator: deterministic for a seed, readable by the reader, and
//! within the calibrated ranges.

mod common;

use arrow_array::cast::AsArray;
use common::{ints, read_all as read, times};
use sliq_debs::{GeneratorConfig, OutOfOrder, generate};

fn bytes(config: &GeneratorConfig) -> (Vec<u8>, u64) {
    let mut out = Vec::new();
    let late = generate(config, &mut out).unwrap();
    (out, late)
}

/// An integer column as floats.
fn column(batches: &[arrow_array::RecordBatch], name: &str) -> Vec<f64> {
    ints(batches, name).into_iter().map(|v| v as f64).collect()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let config = GeneratorConfig {
        events: 5_000,
        seed: 7,
        ..Default::default()
    };
    assert_eq!(bytes(&config).0, bytes(&config).0);
    assert_ne!(
        bytes(&config).0,
        bytes(&GeneratorConfig { seed: 8, ..config }).0
    );
}

#[test]
fn statistics_stay_within_the_calibrated_ranges() {
    let config = GeneratorConfig {
        events: 200_000,
        seed: 1,
        out_of_order: 0.015,
        glued: 0.001,
    };
    let (data, late) = bytes(&config);
    let text = std::str::from_utf8(&data).unwrap();
    assert!(text.starts_with("2012-02-22T16:46:28."), "{}", &text[..40]);
    assert!(
        text.split('\n').next().unwrap().ends_with('\r'),
        "CRLF line endings"
    );
    let (batches, stats) = read(data, OutOfOrder::Drop);
    assert_eq!(stats.malformed, 0, "{stats:?}");
    assert!(
        stats.glued > 100 && stats.glued < 300,
        "glued {}",
        stats.glued
    );
    // About 1.5 % of events come late and are dropped.
    assert_eq!(stats.dropped, late);
    let late_fraction = late as f64 / 200_000.0;
    assert!(
        (0.01..0.02).contains(&late_fraction),
        "late {late_fraction}"
    );
    let (mf01, mf02, mf03) = (
        column(&batches, "mf01"),
        column(&batches, "mf02"),
        column(&batches, "mf03"),
    );
    assert!(
        (12_900.0..13_500.0).contains(&mean(&mf01)),
        "mf01 mean {}",
        mean(&mf01)
    );
    let ratio = mean(&mf02) / mean(&mf01);
    assert!((1.09..1.11).contains(&ratio), "mf02 / mf01 {ratio}");
    assert!(
        (7_900.0..8_300.0).contains(&mean(&mf03)),
        "mf03 mean {}",
        mean(&mf03)
    );
    for (name, want) in [("pc13", 70.0), ("pc14", 190.0), ("pc15", 152.0)] {
        let m = mean(&column(&batches, name));
        assert!((m - want).abs() < 1.0, "{name} mean {m}");
    }
    let ts = times(&batches);
    let tick = (ts[ts.len() - 1] - ts[0]) as f64 / (ts.len() - 1) as f64;
    assert!((9_900.0..10_400.0).contains(&tick), "tick {tick} µs");
    // Spikes large enough for Query 2's 30 % alarm happen.
    let max = mf01.iter().cloned().fold(0.0, f64::max);
    assert!(max > 1.45 * 13_050.0 * 0.95, "largest mf01 {max}");
}

#[test]
fn sensors_toggle_and_valves_follow_after_a_few_seconds() {
    let (data, _) = bytes(&GeneratorConfig {
        events: 120_000,
        seed: 3,
        out_of_order: 0.0,
        glued: 0.0,
    });
    let (batches, _) = read(data, OutOfOrder::Drop);
    let flag = |name: &str| -> Vec<bool> {
        batches
            .iter()
            .flat_map(|b| {
                b.column_by_name(name)
                    .unwrap()
                    .as_boolean()
                    .iter()
                    .map(|v| v.unwrap_or(false))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (sensor, valve) = (flag("bm05"), flag("bm08"));
    let first_on = sensor
        .iter()
        .position(|&v| v)
        .expect("the sensor switches on within 20 minutes");
    let valve_on = valve.iter().position(|&v| v).expect("its valve follows");
    let delay_ticks = valve_on - first_on;
    assert!(
        (250..350).contains(&delay_ticks),
        "valve delay {delay_ticks} ticks of ~10 ms"
    );
}

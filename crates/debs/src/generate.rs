//! A deterministic generator of DEBS 2012 data, byte-compatible with the
//! real file, calibrated against the 17,000-line sample in `shared/debs`:
//!
//! | quantity | sample | generator |
//! |---|---|---|
//! | tick | 10.03 ms mean, σ 0.67 ms | 10 ms + N(0, 30 µs), 1 % late by 5–13 ms |
//! | `mf01` | mean 13,053, σ 359, mean step 4.9 | level 13,050 drifting slowly, noise σ 5, spikes |
//! | `mf02 / mf01` | 1.101 | 1.10 (± noise) |
//! | `mf03` | mean 8,089, σ 196 | 8,090 drifting, noise σ 20 |
//! | `pc13…pc15` | 70 / 190 / 152, σ ≈ 4.4, range ± 17 | same means, noise σ 4.4, clamped ± 17 |
//! | `pc25…res` | 0 | 0 |
//!
//! Spikes raise `mf01…mf03` by 10–40 % for about half a second every ~20 s,
//! and by ~50 % every ~5 minutes, so that the Grand Challenge's Query 2
//! alarm (variation above 30 %) fires. Each sensor `bm05…bm07` toggles every
//! ~10 minutes and its valve `bm08…bm10` follows after ~3 s, a delay that
//! drifts upward 2 % per 24 h with jitter (Query 1's trend and alarm). The
//! 38 other flags keep the sample's constant values. A configurable fraction
//! of events is written late (out of order, default 1.5 %) and of lines
//! glued to the next one (default 0).

use std::io::{self, Write};

/// Generator settings.
#[derive(Clone, Debug)]
pub struct GeneratorConfig {
    /// Events to write.
    pub events: u64,
    /// Seed: the same seed writes the same bytes.
    pub seed: u64,
    /// Fraction of events written out of order.
    pub out_of_order: f64,
    /// Fraction of lines glued to the next record.
    pub glued: f64,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            events: 100_000,
            seed: 1,
            out_of_order: 0.015,
            glued: 0.0,
        }
    }
}

/// The sample's first event: 2012-02-22T16:46:28.9670320 UTC, in µs.
const START_US: i64 = 1_329_929_188_967_032;
const FIRST_INDEX: i64 = 2_556_001;
/// The constant flags `pp01…pc23` of the sample (fields 19..56).
const CONSTANT_FLAGS: [u8; 38] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0,
];

/// SplitMix64: small, fast and deterministic.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = self.unit().max(1e-300);
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// `YYYY-MM-DDTHH:MM:SS.fffffff+00:00` for µs since the epoch (7 digits, as
/// the original: the last one is always 0 here).
pub fn format_timestamp(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let micros = us.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}0+00:00",
        tod / 3600,
        tod % 3600 / 60,
        tod % 60
    )
}

/// One sensor and its valve.
struct Additive {
    on: bool,
    valve: bool,
    next_toggle_us: i64,
    valve_due_us: Option<i64>,
}

/// Writes `config.events` events to `out`. Returns how many were written late.
pub fn generate(config: &GeneratorConfig, out: &mut impl Write) -> io::Result<u64> {
    let mut rng = Rng(config.seed ^ 0xDEB5_2012);
    let mut t = START_US;
    let mut level = 13_050.0f64;
    let mut level3 = 8_090.0f64;
    let mut spike_until = i64::MIN;
    let mut spike_factor = 1.0;
    let mut additives: Vec<Additive> = (0..3)
        .map(|i| Additive {
            on: false,
            valve: false,
            next_toggle_us: START_US + (60 + 150 * i) * 1_000_000,
            valve_due_us: None,
        })
        .collect();
    let mut held: Option<(u64, String)> = None; // a record to write late
    let mut late = 0u64;
    let mut pending_glue = false;
    let mut line = String::with_capacity(256);
    for n in 0..config.events {
        // Time: 10 ms ticks with tens of µs of jitter, 1 % late ticks.
        let mut step = 10_000.0 + rng.normal() * 30.0;
        if rng.unit() < 0.01 {
            step += 5_000.0 + rng.unit() * 8_000.0;
        }
        t += step.max(1_000.0) as i64;
        // Power: slow mean-reverting drift, noise, spikes.
        level += (13_050.0 - level) * 0.0005 + rng.normal() * 3.0;
        level3 += (8_090.0 - level3) * 0.0005 + rng.normal() * 2.0;
        if t >= spike_until && rng.unit() < 1.0 / 2_000.0 {
            spike_until = t + 400_000 + (rng.unit() * 200_000.0) as i64;
            spike_factor = if rng.unit() < 0.07 {
                1.5 + rng.unit() * 0.1
            } else {
                1.1 + rng.unit() * 0.3
            };
        }
        let boost = if t < spike_until { spike_factor } else { 1.0 };
        let mf01 = (level * boost + rng.normal() * 5.0).round().max(0.0) as i64;
        let mf02 = (mf01 as f64 * 1.10 + rng.normal() * 8.0).round().max(0.0) as i64;
        let mf03 = (level3 * boost + rng.normal() * 20.0).round().max(0.0) as i64;
        let pc = |rng: &mut Rng, mean: f64| {
            (mean + (rng.normal() * 4.4).clamp(-17.0, 17.0)).round() as i64
        };
        let (pc13, pc14, pc15) = (pc(&mut rng, 70.0), pc(&mut rng, 190.0), pc(&mut rng, 152.0));
        // Sensors toggle every ~10 minutes; valves follow after a delay that
        // drifts upward 2 % per 24 h.
        let days = (t - START_US) as f64 / 86_400e6;
        for a in &mut additives {
            if t >= a.next_toggle_us {
                a.on = !a.on;
                a.next_toggle_us = t + ((540.0 + rng.unit() * 120.0) * 1e6) as i64;
                let delay = 3.0e6 * (1.0 + 0.02 * days) * (1.0 + rng.normal() * 0.002);
                a.valve_due_us = Some(t + delay as i64);
            }
            if a.valve_due_us.is_some_and(|due| t >= due) {
                a.valve = a.on;
                a.valve_due_us = None;
            }
        }
        line.clear();
        line.push_str(&format_timestamp(t));
        let index = FIRST_INDEX + n as i64;
        line.push_str(&format!(
            "\t{index}\t{mf01:04}\t{mf02:04}\t{mf03:04}\t{pc13:04}\t{pc14:04}\t{pc15:04}\t0000\t0000\t0000\t0000"
        ));
        for a in &additives {
            line.push_str(if a.on { "\t1" } else { "\t0" });
        }
        for a in &additives {
            line.push_str(if a.valve { "\t1" } else { "\t0" });
        }
        for f in CONSTANT_FLAGS {
            line.push_str(if f == 1 { "\t1" } else { "\t0" });
        }
        // Out of order: hold this record and write it a few records later.
        if held.is_none() && rng.unit() < config.out_of_order {
            held = Some((n + 1 + rng.next_u64() % 5, line.clone()));
            continue;
        }
        write_record(out, &line, &mut pending_glue, config.glued, &mut rng)?;
        if let Some((due, record)) = held.take() {
            if n >= due {
                late += 1;
                write_record(out, &record, &mut pending_glue, config.glued, &mut rng)?;
            } else {
                held = Some((due, record));
            }
        }
    }
    if let Some((_, record)) = held {
        late += 1;
        write_record(out, &record, &mut pending_glue, config.glued, &mut rng)?;
    }
    if pending_glue {
        out.write_all(b"\r\n")?;
    }
    Ok(late)
}

/// Writes one record; a glued record's line ending is left out, so the next
/// record's timestamp runs into its last flag (as in the real file).
fn write_record(
    out: &mut impl Write,
    record: &str,
    pending_glue: &mut bool,
    glued: f64,
    rng: &mut Rng,
) -> io::Result<()> {
    out.write_all(record.as_bytes())?;
    if !*pending_glue && rng.unit() < glued {
        *pending_glue = true;
    } else {
        *pending_glue = false;
        out.write_all(b"\r\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_format_like_the_original() {
        assert_eq!(
            format_timestamp(START_US),
            "2012-02-22T16:46:28.9670320+00:00"
        );
        assert_eq!(
            crate::parse_timestamp(&format_timestamp(START_US)),
            Some(START_US)
        );
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00.0000000+00:00");
    }
}

//! A query's output equals a from-scratch evaluation: for each row, its
//! key's window is rebuilt from all rows so far and aggregated naively.
//! Random data, keys (NULL included), frames, filters (WHERE and an
//! aggregate's FILTER) and batch splits.
//! Several aggregates over one frame (which share one window per key) give
//! what each gives in a window of its own.

use crate::common::{batch, floats, schema};
use proptest::prelude::*;
use sliq::{Engine, StreamOptions, WindowAlgorithm};

/// A frame from its start to its end before the current row (0: the
/// current row), in rows or milliseconds; `None` for UNBOUNDED PRECEDING.
#[derive(Clone, Debug)]
enum FrameSpec {
    Rows(u64, u64),
    Range(Option<i64>, i64),
    Unbounded(u64),
}

impl FrameSpec {
    fn sql(&self) -> String {
        let end = |k: u64| match k {
            0 => "CURRENT ROW".to_string(),
            k => format!("{k} PRECEDING"),
        };
        match self {
            FrameSpec::Rows(n, 0) => format!("ROWS {n} PRECEDING"),
            FrameSpec::Rows(n, k) => format!("ROWS BETWEEN {n} PRECEDING AND {k} PRECEDING"),
            FrameSpec::Range(Some(ms), e) => {
                format!("RANGE BETWEEN {ms} PRECEDING AND {}", end(*e as u64))
            }
            FrameSpec::Range(None, e) => {
                format!("RANGE BETWEEN UNBOUNDED PRECEDING AND {}", end(*e as u64))
            }
            FrameSpec::Unbounded(k) => {
                format!("ROWS BETWEEN UNBOUNDED PRECEDING AND {}", end(*k))
            }
        }
    }
}

const FUNCTIONS: &[&str] = &[
    "sum",
    "count",
    "min",
    "max",
    "avg",
    "first_value",
    "last_value",
    "maxcount",
    "count_star",
    "count_distinct",
];

type Row = (i64, Option<&'static str>, Option<f64>);

/// The aggregate `f` over the window's values, as SQL defines it.
fn naive(f: &str, window: &[Option<f64>]) -> Option<f64> {
    let present: Vec<f64> = window.iter().flatten().copied().collect();
    match f {
        "count_star" => Some(window.len() as f64),
        "count" => Some(present.len() as f64),
        "count_distinct" => {
            let mut bits: Vec<u64> = present.iter().map(|x| x.to_bits()).collect();
            bits.sort_unstable();
            bits.dedup();
            Some(bits.len() as f64)
        }
        "sum" => (!present.is_empty()).then(|| present.iter().sum()),
        "avg" => (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64),
        "min" => present.iter().copied().reduce(f64::min),
        "max" => present.iter().copied().reduce(f64::max),
        "first_value" => window.first().copied().flatten(),
        "last_value" => window.last().copied().flatten(),
        "maxcount" => Some(match present.iter().copied().reduce(f64::max) {
            Some(m) => present.iter().filter(|x| **x == m).count() as f64,
            None => 0.0,
        }),
        other => panic!("{other}"),
    }
}

/// Expected outputs, one per row that passes the filter `v > min_v`; the
/// aggregate sees only the rows of its frame with `v > agg_min` (`FILTER`).
fn expected(
    rows: &[Row],
    f: &str,
    frame: &FrameSpec,
    min_v: Option<f64>,
    agg_min: Option<f64>,
) -> Vec<Option<f64>> {
    let mut out = Vec::new();
    // Per key: the rows in the window history (ts, v), non-late only for RANGE.
    let mut history: Vec<(Option<&str>, i64, Option<f64>)> = Vec::new();
    // The aggregate over a frame's values, leaving out those FILTER drops.
    let aggregate = |window: &[Option<f64>]| {
        let seen: Vec<Option<f64>> = window
            .iter()
            .copied()
            .filter(|v| agg_min.is_none_or(|min| v.is_some_and(|v| v > min)))
            .collect();
        naive(f, &seen)
    };
    for &(ts, key, v) in rows {
        if let Some(min) = min_v
            && !v.is_some_and(|v| v > min)
        {
            continue;
        }
        let same_key: Vec<&(Option<&str>, i64, Option<f64>)> =
            history.iter().filter(|(k, _, _)| *k == key).collect();
        let result = match frame {
            FrameSpec::Range(width, end) => {
                let newest = same_key.iter().map(|(_, t, _)| *t).max();
                if newest.is_some_and(|n| ts < n) {
                    None // late: NULL, and it joins no window
                } else {
                    history.push((key, ts, v));
                    let window: Vec<Option<f64>> = history
                        .iter()
                        .filter(|(k, t, _)| {
                            *k == key
                                && *t <= ts - end
                                && width.is_none_or(|width| *t >= ts - width)
                        })
                        .map(|(_, _, v)| *v)
                        .collect();
                    aggregate(&window)
                }
            }
            FrameSpec::Rows(_, end) | FrameSpec::Unbounded(end) => {
                // The key's rows so far, this one last: the frame is the
                // `n`-th to the `end`-th before it (all, when unbounded).
                let mut all: Vec<Option<f64>> = same_key.iter().map(|(_, _, v)| *v).collect();
                all.push(v);
                history.push((key, ts, v));
                let last = all.len() - 1;
                let n = match frame {
                    FrameSpec::Rows(n, _) => *n as usize,
                    _ => last,
                };
                let window = match last.checked_sub(*end as usize) {
                    Some(youngest) => &all[last.saturating_sub(n)..=youngest],
                    None => &[][..],
                };
                aggregate(window)
            }
        };
        out.push(result);
    }
    out
}

/// Rows from `keys`, with values mostly present and time mostly rising by
/// up to `max_step` (ties included) but sometimes stepping back (late rows).
fn timed_rows(
    keys: impl Strategy<Value = Option<&'static str>>,
    max_step: i64,
    rows: std::ops::Range<usize>,
) -> impl Strategy<Value = Vec<Row>> {
    let v = prop_oneof![1 => Just(None), 6 => (-20i32..20).prop_map(|x| Some(x as f64 * 0.5))];
    let step = prop_oneof![8 => 0..max_step, 1 => -5i64..0];
    prop::collection::vec((step, keys, v), rows).prop_map(|steps| {
        let mut t = 1_000i64;
        steps
            .into_iter()
            .map(|(step, key, v)| {
                t += step;
                (t, key, v)
            })
            .collect()
    })
}

fn rows() -> impl Strategy<Value = Vec<Row>> {
    let key = prop_oneof![
        Just(None),
        Just(Some("a")),
        Just(Some("b")),
        Just(Some("c"))
    ];
    timed_rows(key, 7, 0..120)
}

/// Frames ending at the current row, and some ending before it.
fn frame() -> impl Strategy<Value = FrameSpec> {
    prop_oneof![
        (0u64..6).prop_map(|n| FrameSpec::Rows(n, 0)),
        (0i64..25).prop_map(|ms| FrameSpec::Range(Some(ms), 0)),
        Just(FrameSpec::Unbounded(0)),
        (1u64..6)
            .prop_flat_map(|n| (Just(n), 1..=n))
            .prop_map(|(n, k)| FrameSpec::Rows(n, k)),
        (1i64..25)
            .prop_flat_map(|ms| (Just(ms), 1..=ms))
            .prop_map(|(ms, e)| FrameSpec::Range(Some(ms), e)),
        (1i64..25).prop_map(|e| FrameSpec::Range(None, e)),
        (1u64..4).prop_map(FrameSpec::Unbounded),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn query_output_equals_a_from_scratch_evaluation(
        rows in rows(),
        f in prop::sample::select(FUNCTIONS),
        frame in frame(),
        filtered in any::<bool>(),
        agg_filtered in any::<bool>(),
        keyed in any::<bool>(),
        splits in prop::collection::vec(1usize..40, 1..6),
        algorithm in prop::sample::select(WindowAlgorithm::ALL.iter().map(|(_, a)| *a).collect::<Vec<_>>()),
    ) {
        let engine = Engine::builder().window_algorithm(algorithm).channel_capacity(1024).build();
        let s = engine.register_stream("s", schema(), StreamOptions::default().event_time("ts")).unwrap();
        let call = match f {
            "count_star" => "count(*)".to_string(),
            "count_distinct" => "count(DISTINCT v)".to_string(),
            f => format!("{f}(v)"),
        };
        let call = if agg_filtered { format!("{call} FILTER (WHERE v > 2)") } else { call };
        let filter = if filtered { " WHERE v > 0" } else { "" };
        let partition = if keyed { "PARTITION BY key ORDER BY ts " } else { "ORDER BY ts " };
        let sql = format!("SELECT {call} OVER ({partition}{}) AS r FROM s{filter}", frame.sql());
        let q = engine.query(&sql).unwrap();

        let mut results = Vec::new();
        let mut rest: &[Row] = &rows;
        let mut cuts = splits.iter().cycle();
        while !rest.is_empty() {
            let n = (*cuts.next().unwrap()).min(rest.len());
            s.push(batch(&rest[..n])).unwrap();
            results.extend(floats(&q.recv().unwrap(), "r"));
            rest = &rest[n..];
        }
        let rows_for_oracle: Vec<Row> = if keyed { rows.clone() } else { rows.iter().map(|&(t, _, v)| (t, None, v)).collect() };
        let want = expected(&rows_for_oracle, f, &frame, filtered.then_some(0.0), agg_filtered.then_some(2.0));
        prop_assert_eq!(results.len(), want.len(), "{}", sql);
        for (i, (got, want)) in results.iter().zip(&want).enumerate() {
            let same = match (got, want) {
                (Some(g), Some(w)) => (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                (None, None) => true,
                _ => false,
            };
            prop_assert!(same, "{} with {:?}: row {} got {:?}, want {:?}", sql, algorithm, i, got, want);
        }
    }
}

/// Functions for the shared-window test: the oracle's, plus string and
/// struct-valued ones whose partial aggregates own heap memory.
const SHARED_FUNCTIONS: &[&str] = &[
    "sum(v)",
    "count(v)",
    "min(v)",
    "max(v)",
    "avg(v)",
    "first_value(v)",
    "last_value(v)",
    "maxcount(v)",
    "count(*)",
    "max(key)",
    "min(key)",
    "last_value(key)",
    "argmax(v, key)",
    "stddev(v)",
    "m4(v)",
    "count(*) FILTER (WHERE v > 1)",
    "sum(v) FILTER (WHERE key = 'a')",
    "first_value(v) FILTER (WHERE v IS NULL OR v < 0)",
    "max(key) FILTER (WHERE v > 0)",
    "lag(v)",
    "lag(key, 1, 'none')",
    "count(DISTINCT v)",
    "count(DISTINCT key) FILTER (WHERE v > 0)",
];

/// Each value of `array` as text (NULL → `None`; structs as `{…}`).
fn as_text(array: &arrow_array::ArrayRef) -> Vec<Option<String>> {
    use arrow_array::Array;
    let formatter =
        arrow_cast::display::ArrayFormatter::try_new(array.as_ref(), &Default::default()).unwrap();
    (0..array.len())
        .map(|i| array.is_valid(i).then(|| formatter.value(i).to_string()))
        .collect()
}

/// Every result column of `sql`, as text per row, pushing `rows` in the
/// given splits through an engine running `algorithm`.
fn run_as_text(
    sql: &str,
    rows: &[Row],
    splits: &[usize],
    algorithm: WindowAlgorithm,
) -> Vec<Vec<Option<String>>> {
    let engine = Engine::builder()
        .window_algorithm(algorithm)
        .channel_capacity(1024)
        .build();
    let s = engine
        .register_stream("s", schema(), StreamOptions::default().event_time("ts"))
        .unwrap();
    let q = engine.query(sql).unwrap();
    let mut columns = vec![Vec::new(); q.schema().fields().len()];
    let mut rest = rows;
    let mut cuts = splits.iter().cycle();
    while !rest.is_empty() {
        let n = (*cuts.next().unwrap()).min(rest.len());
        s.push(batch(&rest[..n])).unwrap();
        let out = q.recv().unwrap();
        for (column, array) in columns.iter_mut().zip(out.columns()) {
            column.extend(as_text(array));
        }
        rest = &rest[n..];
    }
    columns
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn aggregates_sharing_a_window_match_windows_of_their_own(
        rows in rows(),
        picks in prop::collection::vec(prop::sample::select(SHARED_FUNCTIONS), 2..7),
        frame in frame(),
        filtered in any::<bool>(),
        keyed in any::<bool>(),
        splits in prop::collection::vec(1usize..40, 1..6),
    ) {
        let calls: Vec<String> = picks.iter().enumerate().map(|(i, f)| format!("{f} OVER w AS a{i}")).collect();
        let filter = if filtered { " WHERE v > 0" } else { "" };
        let partition = if keyed { "PARTITION BY key ORDER BY ts " } else { "ORDER BY ts " };
        let sql = format!(
            "SELECT {} FROM s{filter} WINDOW w AS ({partition}{})",
            calls.join(", "),
            frame.sql()
        );
        // DABA Lite shares one window per key among the aggregates; the
        // from-scratch algorithm gives each its own.
        let shared = run_as_text(&sql, &rows, &splits, WindowAlgorithm::DabaLite);
        let separate = run_as_text(&sql, &rows, &splits, WindowAlgorithm::Recalc);
        for (i, (got, want)) in shared.iter().zip(&separate).enumerate() {
            let close = got.len() == want.len() && got.iter().zip(want).all(|(g, w)| match (g, w) {
                (Some(g), Some(w)) => g == w || match (g.parse::<f64>(), w.parse::<f64>()) {
                    (Ok(g), Ok(w)) => (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                    _ => false,
                },
                (None, None) => true,
                _ => false,
            });
            prop_assert!(close, "{}: column a{} differs:\n shared   {:?}\n separate {:?}", sql, i, got, want);
        }
    }
}

/// Keys for batches large enough to be visited key by key.
const MANY_KEYS: [&str; 40] = [
    "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "k13", "k14",
    "k15", "k16", "k17", "k18", "k19", "k20", "k21", "k22", "k23", "k24", "k25", "k26", "k27",
    "k28", "k29", "k30", "k31", "k32", "k33", "k34", "k35", "k36", "k37", "k38", "k39",
];

/// 256 to 600 rows over 16 to 40 keys (NULL among them), with late rows:
/// in one batch, the engine visits them grouped by key.
fn many_keyed_rows() -> impl Strategy<Value = Vec<Row>> {
    (16usize..=MANY_KEYS.len()).prop_flat_map(|keys| {
        let key = prop_oneof![
            1 => Just(None),
            20 => (0..keys).prop_map(|k| Some(MANY_KEYS[k])),
        ];
        timed_rows(key, 4, 256..600)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A batch with a few rows per key is visited grouped by key; the same
    /// rows in batches too small for that are visited in batch order. The
    /// results must be the same, row for row.
    #[test]
    fn rows_visited_by_key_give_what_rows_in_batch_order_give(
        rows in many_keyed_rows(),
        picks in prop::collection::vec(prop::sample::select(SHARED_FUNCTIONS), 2..5),
        frame in frame(),
        filtered in any::<bool>(),
        algorithm in prop::sample::select(WindowAlgorithm::ALL.iter().map(|(_, a)| *a).collect::<Vec<_>>()),
    ) {
        let calls: Vec<String> = picks.iter().enumerate().map(|(i, f)| format!("{f} OVER w AS a{i}")).collect();
        let filter = if filtered { " WHERE v > -5" } else { "" };
        let sql = format!(
            "SELECT ts, key, {} FROM s{filter} WINDOW w AS (PARTITION BY key ORDER BY ts {})",
            calls.join(", "),
            frame.sql()
        );
        let whole = run_as_text(&sql, &rows, &[rows.len()], algorithm);
        let small = run_as_text(&sql, &rows, &[37, 64, 5], algorithm);
        prop_assert_eq!(whole, small, "{} with {:?}", sql, algorithm);
    }
}

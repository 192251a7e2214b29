//! Sketches over long frames keep their rows' inputs and one sketch per
//! pane (EXPLAIN's "Paned" line): their results equal, bit for bit, those
//! of the same query whose windows keep a sketch per row under another
//! algorithm (`SET window_algorithm = 'two_stacks_lite'`), over random keys,
//! values, NULLs, late rows, FILTERs and batch sizes.

use crate::common::{batch, engine_with_s, floats};
use proptest::prelude::*;

/// Each sketch function over a `RANGE` frame (always paned) and over a
/// `ROWS` frame long enough to be paned, one with a FILTER, and two over
/// frames ending before the current row.
const SQL: &str = "SELECT \
    approx_percentile(v, 0.9) OVER (RANGE '40s') AS p90, \
    approx_median(v) FILTER (WHERE v > 0) OVER (ROWS 299 PRECEDING) AS med, \
    approx_count_distinct(v) OVER (ROWS 299 PRECEDING) AS d, \
    bloom_contains(v, 3.0) OVER (RANGE '25s') AS has3, \
    countmin(v, 3.0) OVER (ROWS 400 PRECEDING) AS n3, \
    approx_median(v) OVER (ROWS BETWEEN 350 PRECEDING AND 50 PRECEDING) AS med_before, \
    approx_count_distinct(v) OVER (RANGE BETWEEN '40s' PRECEDING AND '5s' PRECEDING) AS d_before \
    FROM s GROUP BY key";

type Row = (i64, Option<&'static str>, Option<f64>);

fn rows() -> impl Strategy<Value = Vec<Row>> {
    // One key most of the time, so that its ROWS frames fill up and slide.
    let key = prop::sample::select(vec![Some("a"), Some("a"), Some("a"), Some("b"), None]);
    // Few distinct values, so that Bloom and Count-Min probes hit; some NULLs.
    let value = prop_oneof![
        8 => (-4i32..12).prop_map(|v| Some(f64::from(v) * 0.5)),
        1 => Just(None),
    ];
    // Mostly rising event time, now and then a step back (a late row).
    let step = prop_oneof![9 => 0i64..400, 1 => -2000i64..0];
    prop::collection::vec((step, key, value), 1..1600).prop_map(|rows| {
        let mut ts = 0;
        rows.into_iter()
            .map(|(step, key, v)| {
                ts += step;
                (ts, key, v)
            })
            .collect()
    })
}

/// The query's output columns over `rows`, pushed in batches of `chunk`.
fn run(algorithm: &str, rows: &[Row], chunk: usize) -> Vec<(String, Vec<Option<f64>>)> {
    let (engine, s) = engine_with_s();
    engine
        .execute(&format!("SET window_algorithm = '{algorithm}'"))
        .unwrap();
    let q = engine.query(SQL).unwrap();
    // `has3` (BOOLEAN) reads as 0.0 and 1.0.
    let mut columns = ["p90", "med", "d", "n3", "has3", "med_before", "d_before"]
        .map(|name| (name.to_string(), Vec::new()));
    for part in rows.chunks(chunk) {
        s.push(batch(part)).unwrap();
        let out = q.recv().unwrap();
        for (name, values) in &mut columns {
            values.extend(floats(&out, name));
        }
    }
    columns.into()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn paned_sketches_equal_a_sketch_per_row(rows in rows(), chunk in 1usize..700) {
        let paned = run("daba_lite", &rows, chunk);
        let recomputed = run("two_stacks_lite", &rows, rows.len());
        for ((name, got), (_, want)) in paned.iter().zip(&recomputed) {
            let bits = |c: &Vec<Option<f64>>| c.iter().map(|v| v.map(f64::to_bits)).collect::<Vec<_>>();
            prop_assert_eq!(bits(got), bits(want), "column {}", name);
        }
    }
}

#[test]
fn explain_names_the_paned_sketches_and_their_panes() {
    let (engine, _s) = engine_with_s();
    let plan = engine.explain(SQL).unwrap();
    for line in [
        "Paned: __agg0 = approx_percentile(v, 0.9) keeps its rows' inputs and one partial aggregate per 16 rows per key",
        "Paned: __agg1 = approx_median(v) FILTER (WHERE v > 0) keeps its rows' inputs and one partial aggregate per 10 rows per key",
        "Paned: __agg4 = countmin(v, 3.0) keeps its rows' inputs and one partial aggregate per 12 rows per key",
        // A window of 301 rows, the 350th to the 50th before the current one.
        "Paned: __agg5 = approx_median(v) keeps its rows' inputs and one partial aggregate per 10 rows per key",
        "Paned: __agg6 = approx_count_distinct(v) keeps its rows' inputs and one partial aggregate per 16 rows per key",
    ] {
        assert!(plan.contains(line), "{line}\n{plan}");
    }
    // Short frames and the other algorithms keep a sketch per row.
    let short = engine
        .explain("SELECT approx_median(v) OVER (ROWS 99 PRECEDING) FROM s GROUP BY key")
        .unwrap();
    assert!(!short.contains("Paned"), "{short}");
    engine
        .execute("SET window_algorithm = 'two_stacks'")
        .unwrap();
    assert!(!engine.explain(SQL).unwrap().contains("Paned"));
}

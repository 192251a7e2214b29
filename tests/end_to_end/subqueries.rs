//! Queries over subqueries (`FROM (SELECT …)`) and `WITH` queries: each
//! stage's results are the next stage's rows, exactly as if they were pushed
//! into a stream of their own.

use crate::common::{batch, engine_with_s, engine_with_s_and, floats, ints, schema, some, strings};
use arrow_array::RecordBatch;
use proptest::prelude::*;
use sliq::{Engine, EngineError, OnLate, StreamOptions};

type Row = (i64, Option<&'static str>, Option<f64>);

const ROWS: &[Row] = &[
    (1_000, Some("a"), Some(1.0)),
    (2_000, Some("b"), Some(5.0)),
    (3_000, Some("a"), Some(3.0)),
    (4_000, Some("a"), Some(2.0)),
    (5_000, Some("b"), Some(1.0)),
    (16_000, Some("a"), Some(7.0)),
];

/// `sql`'s results for [`ROWS`] pushed as one batch.
fn run(sql: &str) -> RecordBatch {
    let (engine, s) = engine_with_s();
    let q = engine.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    s.push(batch(ROWS)).expect("push");
    q.recv().expect("result")
}

fn plan_error(sql: &str) -> String {
    let (engine, _s) = engine_with_s();
    match engine.query(sql) {
        Ok(_) => panic!("{sql} planned"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_subquery_feeds_its_results_to_the_query_around_it() {
    // Per key, the change since the key's previous value, then the largest
    // change over the last 10 s of event time (passed through as `ts`).
    let out = run("SELECT d.key, dv, max(dv) OVER (RANGE '10s') AS m \
         FROM (SELECT ts, key, v - lag(v) OVER (ROWS 1 PRECEDING) AS dv FROM s GROUP BY key) AS d \
         GROUP BY key");
    // a: 1, 3, 2, 7 → dv NULL, 2, -1, 5; at 16 s only the last is in range.
    // b: 5, 1 → dv NULL, -4.
    assert_eq!(
        floats(&out, "dv"),
        vec![None, None, Some(2.0), Some(-1.0), Some(-4.0), Some(5.0)]
    );
    assert_eq!(
        floats(&out, "m"),
        vec![None, None, Some(2.0), Some(2.0), Some(-4.0), Some(5.0)]
    );
    assert_eq!(
        strings(&out, "key"),
        ["a", "b", "a", "a", "b", "a"].map(|k| Some(k.to_string()))
    );
}

#[test]
fn with_queries_read_earlier_ones_and_renamed_event_time_drives_range() {
    let out = run(
        "WITH pairs AS (SELECT ts AS t, key AS k, sum(v) OVER (ROWS 1 PRECEDING) AS s2 \
                        FROM s GROUP BY key), \
              smooth AS (SELECT t, k, s2, avg(s2) OVER (RANGE '2s') AS a FROM pairs GROUP BY k) \
         SELECT t, k, a FROM smooth WHERE a > 2",
    );
    // s2 per key: a 1, 4, 5, 9; b 5, 6. avg over [t − 2 s, t] per key:
    // a 1, 2.5, 4.5, 9; b 5, 6 (the `b` rows are 3 s apart).
    assert_eq!(
        ints(&out, "t"),
        [2_000, 3_000, 4_000, 5_000, 16_000].map(Some)
    );
    assert_eq!(floats(&out, "a"), some(&[5.0, 2.5, 4.5, 6.0, 9.0]));
}

#[test]
fn explain_shows_the_subquery_as_the_source() {
    let (engine, _s) = engine_with_s();
    let text = engine
        .explain(
            "SELECT key, max(m) OVER (ROWS 2 PRECEDING), min(m) OVER (ROWS 2 PRECEDING) \
             FROM (SELECT ts, key, max(v) OVER (ROWS 2 PRECEDING) AS m, \
                          min(v) OVER (ROWS 2 PRECEDING) AS n FROM s GROUP BY key) GROUP BY key",
        )
        .expect("explain");
    assert!(text.contains("  Source: the results of\n    ContinuousQuery: SELECT ts, key, max(v)"));
    assert!(text.contains("      Source: stream s (ts BIGINT, key VARCHAR, v DOUBLE)"));
    assert!(text.contains("      Output: ts BIGINT, key VARCHAR, m DOUBLE, n DOUBLE"));
    assert!(text.contains("  (subquery) Shared: window 0's __agg0, __agg1"));
}

#[test]
fn subqueries_that_cannot_run_are_refused_with_the_reason() {
    for (sql, wanted) in [
        (
            "SELECT x FROM (SELECT ts, v AS x FROM s LIMIT 3)",
            "not supported in continuous queries: LIMIT 3 in a subquery",
        ),
        (
            "SELECT count(*) OVER (RANGE '5s') FROM (SELECT key, v FROM s)",
            "the subquery passes none through: select the event-time column of stream 's'",
        ),
        (
            "SELECT total FROM (SELECT ts, v AS x FROM s) AS d",
            "unknown column 'total' in subquery 'd'; its columns are ts, x",
        ),
        (
            "SELECT y FROM (SELECT ts, v AS x FROM s)",
            "unknown column 'y' in the subquery",
        ),
        (
            "SELECT s.x FROM (SELECT ts, v AS x FROM s) AS d",
            "unknown stream 's'; did you mean 'd'?",
        ),
        (
            "WITH RECURSIVE r AS (SELECT ts FROM s) SELECT ts FROM r",
            "not supported in continuous queries: WITH RECURSIVE",
        ),
        (
            "WITH r (a) AS (SELECT ts FROM s) SELECT a FROM r",
            "column names after a WITH query's name",
        ),
        // A WITH query that nothing reads is checked all the same.
        (
            "WITH unused AS (SELECT nope FROM s) SELECT v FROM s",
            "unknown column 'nope' in stream 's'",
        ),
        // A WITH query reads only the ones before it.
        (
            "WITH a AS (SELECT ts FROM b), b AS (SELECT ts FROM s) SELECT ts FROM a",
            "unknown stream 'b'",
        ),
    ] {
        let error = plan_error(sql);
        assert!(error.contains(wanted), "{sql}\n{error}");
        assert!(error.contains("line 1, column"), "{sql}\n{error}");
    }
}

#[test]
fn the_event_time_passed_on_under_two_names_keeps_its_own() {
    let out = run("SELECT ts, count(*) OVER (ORDER BY ts RANGE '2s') AS c \
         FROM (SELECT ts AS t2, ts FROM s)");
    assert_eq!(ints(&out, "c"), [1, 2, 3, 3, 3, 1].map(Some));
}

#[test]
fn a_chain_of_with_queries_may_be_long_but_not_endless() {
    // `d{i}` adds 1 to `d{i-1}`'s value: n stages add n - 1.
    let chain = |n: usize| {
        let mut ctes = vec!["d0 AS (SELECT ts, v FROM s)".to_string()];
        ctes.extend((1..n).map(|i| format!("d{i} AS (SELECT ts, v + 1 AS v FROM d{})", i - 1)));
        format!("WITH {} SELECT v FROM d{}", ctes.join(", "), n - 1)
    };
    let out = run(&chain(60));
    assert_eq!(floats(&out, "v")[0], Some(60.0));
    // 20,000 stages overflowed the stack while planning: past 64, a chain is
    // refused.
    let error = plan_error(&chain(100));
    assert!(
        error.contains("reading through more than 64 nested queries"),
        "{}",
        &error[..error.len().min(300)]
    );
}

#[test]
fn a_with_query_hides_a_stream_of_its_name() {
    let out = run("WITH s AS (SELECT ts, key, v * 10 AS v FROM s) SELECT v FROM s");
    assert_eq!(
        floats(&out, "v"),
        some(&[10.0, 50.0, 30.0, 20.0, 10.0, 70.0])
    );
}

#[test]
fn late_rows_of_the_stream_are_caught_by_the_innermost_query() {
    let (engine, s) = engine_with_s_and(
        StreamOptions::default()
            .event_time("ts")
            .on_late(OnLate::Error),
    );
    let q = engine
        .query("SELECT ts, m FROM (SELECT ts, max(v) OVER (RANGE '10s') AS m FROM s GROUP BY key)")
        .expect("query");
    s.push(batch(&[(5_000, Some("a"), Some(1.0))]))
        .expect("push");
    let late = s.push(batch(&[(4_000, Some("a"), Some(2.0))]));
    assert!(
        matches!(late, Err(EngineError::LateRows { .. })),
        "{late:?}"
    );
    s.push(batch(&[(6_000, Some("a"), Some(3.0))]))
        .expect("push");
    assert_eq!(floats(&q.recv().expect("first"), "m"), some(&[1.0]));
    assert_eq!(floats(&q.recv().expect("third"), "m"), some(&[3.0]));
    drop(q);

    // In order for each key of the subquery, but not for the one global
    // window around it: that row gets NULL there and is counted.
    let q = engine
        .query(
            "SELECT count(*) OVER (RANGE '10s') AS c \
             FROM (SELECT ts, key, count(*) OVER (RANGE '1s') AS n FROM s GROUP BY key)",
        )
        .expect("query");
    s.push(batch(&[
        (9_000, Some("b"), Some(1.0)),
        (8_000, Some("c"), Some(1.0)),
    ]))
    .expect("a row late only outside the subquery is not an error");
    assert_eq!(ints(&q.recv().expect("result"), "c"), vec![Some(1), None]);
    let late: Vec<u64> = engine.stats().queries.iter().map(|q| q.late_rows).collect();
    assert_eq!(late, vec![1]);
}

/// One stage of a chain: a query reading `{from}`, and the result column
/// that carries the event time on (what a stream of its results declares).
struct Stage {
    sql: &'static str,
    event_time: &'static str,
}

/// Chains of two and three stages, mixing keys, frames, WHERE, QUALIFY and
/// renamed columns.
const CHAINS: &[&[Stage]] = &[
    &[
        Stage {
            sql: "SELECT ts, key, v, v - lag(v) OVER (ROWS 1 PRECEDING) AS dv FROM {from} GROUP BY key",
            event_time: "ts",
        },
        Stage {
            sql: "SELECT key, dv, max(dv) OVER (RANGE '3s') AS m, count(*) OVER (ROWS 2 PRECEDING) AS c \
                  FROM {from} GROUP BY key",
            event_time: "",
        },
    ],
    &[
        Stage {
            sql: "SELECT ts AS t, key AS k, avg(v) OVER (ROWS 2 PRECEDING) AS a FROM {from} \
                  WHERE v > -5 GROUP BY key QUALIFY count(*) OVER (ROWS 2 PRECEDING) > 1",
            event_time: "t",
        },
        Stage {
            sql: "SELECT t, k, sum(a) OVER (RANGE '2s') AS s2, min(a) OVER (ROWS 3 PRECEDING) AS lo \
                  FROM {from} WHERE a IS NOT NULL GROUP BY k",
            event_time: "t",
        },
        Stage {
            sql: "SELECT t, s2, max(lo) OVER (ROWS 4 PRECEDING) AS hi, stddev(s2) OVER (RANGE '4s') AS sd \
                  FROM {from}",
            event_time: "",
        },
    ],
    &[
        Stage {
            sql: "SELECT ts, key, sum(v) OVER (ROWS 3 PRECEDING) AS g FROM {from}",
            event_time: "ts",
        },
        Stage {
            sql: "SELECT key, g, first_value(g) OVER (ROWS 1 PRECEDING) AS p, \
                  max(g) OVER (RANGE '1s') AS m FROM {from} GROUP BY key",
            event_time: "",
        },
    ],
];

/// The chain as one query: each stage reads the one before as a subquery
/// in `FROM`, or (`with`) as a `WITH` query.
fn chained(stages: &[Stage], with: bool) -> String {
    if with {
        let ctes: Vec<String> = stages[..stages.len() - 1]
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let from = if i == 0 {
                    "s".to_string()
                } else {
                    format!("d{i}")
                };
                format!("d{} AS ({})", i + 1, st.sql.replace("{from}", &from))
            })
            .collect();
        let last = stages[stages.len() - 1]
            .sql
            .replace("{from}", &format!("d{}", stages.len() - 1));
        return format!("WITH {} {last}", ctes.join(", "));
    }
    stages
        .iter()
        .enumerate()
        .fold(String::new(), |inner, (i, st)| {
            let from = if i == 0 {
                "s".to_string()
            } else {
                format!("({inner}) AS d{i}")
            };
            st.sql.replace("{from}", &from)
        })
}

/// The chain run stage by stage: each stage's result batches are pushed
/// into a stream of their own, which the next stage reads.
fn piped(stages: &[Stage], batches: &[RecordBatch]) -> Vec<RecordBatch> {
    let mut input = batches.to_vec();
    let mut event_time = "ts";
    for (i, st) in stages.iter().enumerate() {
        let engine = Engine::new();
        let name = format!("d{i}");
        let stream_schema = input.first().map_or_else(schema, |b| b.schema());
        let stream = engine
            .register_stream(
                &name,
                stream_schema,
                StreamOptions::default().event_time(event_time),
            )
            .expect("stage stream");
        let q = engine
            .query(&st.sql.replace("{from}", &name))
            .unwrap_or_else(|e| panic!("stage {i}: {e}"));
        input = input
            .iter()
            .map(|b| {
                stream.push(b.clone()).expect("stage push");
                q.recv().expect("stage result")
            })
            .collect();
        event_time = st.event_time;
    }
    input
}

fn rows() -> impl Strategy<Value = Vec<Row>> {
    let row = (
        0i64..1_500,
        prop_oneof![
            Just(Some("a")),
            Just(Some("b")),
            Just(Some("c")),
            Just(None)
        ],
        prop_oneof![4 => (-10i32..10).prop_map(|x| Some(f64::from(x) / 2.0)), 1 => Just(None)],
    );
    prop::collection::vec(row, 1..120).prop_map(|rows| {
        // Event time never decreases: each row's gap is added to the last.
        let mut ts = 0;
        rows.into_iter()
            .map(|(gap, key, v)| {
                ts += gap;
                (ts, key, v)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_chain_gives_what_its_stages_give_piped_through_streams(
        rows in rows(),
        cuts in prop::collection::vec(1usize..40, 1..6),
        chain in 0..CHAINS.len(),
        with in any::<bool>(),
    ) {
        let stages = CHAINS[chain];
        let mut batches = Vec::new();
        let mut rest = &rows[..];
        for cut in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (now, later) = rest.split_at((*cut).min(rest.len()));
            batches.push(batch(now));
            rest = later;
        }
        let want = piped(stages, &batches);
        let (engine, s) = engine_with_s();
        let sql = chained(stages, with);
        let q = engine.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        for (b, want) in batches.iter().zip(&want) {
            s.push(b.clone()).expect("push");
            let got = q.recv().expect("result");
            prop_assert_eq!(&got, want, "{}", sql);
        }
    }
}

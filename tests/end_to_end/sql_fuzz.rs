//! Malformed and odd SQL never panics: random token soups and mutations of
//! valid statements go through `execute`, `query` and `explain`; each either
//! works or fails with a message, and the engine keeps serving a known query
//! afterwards. A query that plans is also fed a batch (NULLs, NaN, extremes).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::{batch, floats, schema};
use proptest::prelude::*;
use sliq::{Engine, StreamOptions};

/// Keywords and punctuation of the SQL sliq reads, and some it rejects; with
/// the members of [`CLASSES`], the vocabulary of the random statements.
const KEYWORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "OVER",
    "PARTITION",
    "ORDER",
    "BETWEEN",
    "AND",
    "OR",
    "NOT",
    "CURRENT",
    "ROW",
    "UNBOUNDED",
    "INTERVAL",
    "WINDOW",
    "AS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "IS",
    "IN",
    "LIKE",
    "LIMIT",
    "JOIN",
    "ON",
    "DISTINCT",
    "FILTER",
    "QUALIFY",
    "INTERVAL",
    "EXTRACT",
    "FUNCTIONS",
    "CREATE",
    "STREAM",
    "DROP",
    "SHOW",
    "STREAMS",
    "QUERIES",
    "DESCRIBE",
    "EXPLAIN",
    "SET",
    "INSERT",
    "INTO",
    "VALUES",
    "WITH",
    "IF",
    "EXISTS",
    "WITHIN",
    "TOP",
    "ESCAPE",
    "TABLESAMPLE",
    "RETURNING",
    "CONFLICT",
    "DEFAULT",
    "NULLS",
    "IGNORE",
    "RESPECT",
    "EXCLUDE",
    "REPLACE",
    "ALL",
    "FIRST",
    "s",
    "t",
    "w",
    "(",
    ")",
    ",",
    "<=",
    ";",
    ".",
    "'",
    "\"",
    "::",
    "[",
    "]",
];

/// Statements that work, as seeds for mutation.
const SEEDS: &[&str] = &[
    "SELECT key, max(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key",
    "SELECT key, sum(v) OVER (RANGE '10s') FROM s GROUP BY key",
    "SELECT v, avg(v * 2) OVER (PARTITION BY key ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) FROM s",
    "SELECT count(*) OVER (RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW) FROM s WHERE v > 0",
    "SELECT key, min(v) OVER w, maxcount(v) OVER w FROM s GROUP BY key WINDOW w AS (ROWS 5 PRECEDING)",
    "SELECT CASE WHEN v IS NULL THEN 0 ELSE CAST(v AS BIGINT) END, first_value(v) OVER (ROWS UNBOUNDED PRECEDING) FROM s LIMIT 3",
    "CREATE STREAM t (ts TIMESTAMP, k VARCHAR, x DOUBLE) WITH (event_time = 'ts')",
    "EXPLAIN SELECT key, max(v) OVER (ROWS 9 PRECEDING) FROM s GROUP BY key",
    "INSERT INTO s VALUES (1, 'a', 1.5), (2, NULL, NULL)",
    "SET window_algorithm = 'daba'",
    "SELECT count(*) FILTER (WHERE v > 1) OVER w, lag(v, 2, 0) OVER w, row_number() OVER w FROM s GROUP BY key WINDOW w AS (ROWS 3 PRECEDING) QUALIFY sum(v) OVER w > 1",
    "SELECT s.*, date_trunc('minute', CAST(ts AS TIMESTAMP)) - INTERVAL '1' MINUTE, EXTRACT(SECOND FROM CAST(ts AS TIMESTAMP)) FROM s",
    "SHOW FUNCTIONS LIKE '%a_%'",
    "SELECT sum(CAST(v AS DECIMAL(10,2))) OVER w, lag(CAST(v AS NUMERIC(38,3)), 1, 1.005) OVER w, corr(v, ts) OVER w, bool_or(v > 0) OVER w, md5(key) FROM s WINDOW w AS (ROWS 5 PRECEDING)",
    "SELECT abs(v), coalesce(v, 0), concat(key, 'x'), max(round(v)) OVER (ROWS 2 PRECEDING) FROM s WHERE abs(v) > 0",
    "SELECT d.key, max(dv) OVER (RANGE '10s') FROM (SELECT ts, key, v - lag(v) OVER (ROWS 1 PRECEDING) AS dv FROM s GROUP BY key) AS d GROUP BY key",
    "WITH a AS (SELECT ts AS t, key, avg(v) OVER (ROWS 3 PRECEDING) AS m FROM s GROUP BY key QUALIFY m > 0), b AS (SELECT t, key, sum(m) OVER (RANGE '5s') AS x FROM a GROUP BY key) SELECT * FROM b WHERE x > 1",
    "SELECT key, v - avg(v) OVER (ROWS BETWEEN 100 PRECEDING AND 1 PRECEDING), approx_median(v) OVER (ROWS BETWEEN 999 PRECEDING AND 999 PRECEDING) FROM s GROUP BY key",
    "SELECT max(v) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND INTERVAL '1' SECOND PRECEDING), count(*) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) FROM s",
    "SELECT approx_percentile_cont(0.9) WITHIN GROUP (ORDER BY v) OVER w, max(DISTINCT v) OVER w, key LIKE 'a!%' ESCAPE '!' FROM s WINDOW w AS (ROWS 9 PRECEDING)",
    "CREATE STREAM IF NOT EXISTS s (ts BIGINT NOT NULL, key VARCHAR COMMENT 'k', v DOUBLE)",
    "SELECT last_value(upper(key) IGNORE NULLS) OVER w, arg_max(key, v) OVER w, mod(ts, 7), sign(v), v IN (0, -0.0), nullif(v, 0) FROM s WINDOW w AS (ROWS 4 PRECEDING)",
    "SELECT key, count(*) AS n, sum(v * 0.5) FROM s GROUP BY key HAVING n > 1 AND avg(v) > 0.25 QUALIFY max(v) OVER (ROWS 2 PRECEDING) > 1 / 3.0",
    "SELECT max(v) OVER (w ROWS 2 PRECEDING), count(*) OVER w2 FROM s WINDOW w AS (PARTITION BY key), w2 AS (w ORDER BY ts RANGE '5s')",
    "SELECT key, ts % 3, lag(v) OVER (ROWS 1 PRECEDING), count(*) FROM s GROUP BY ALL HAVING count(*) > 1",
    "SELECT * EXCLUDE (ts) REPLACE (max(v) OVER (ROWS 2 PRECEDING) AS v), s.* EXCLUDE key FROM s",
    "SELECT -(-9223372036854775807 - 1), - -v, ceil(CAST(v AS DECIMAL(38, 37))), floor(-2.50), trunc(CAST(v AS DECIMAL(5, 2)), 1) FROM s",
    "SELECT CAST(epoch_ms(ts) AS VARCHAR), key || epoch_ms(ts), TRY_CAST(TIMESTAMP '2024-02-29 12:34:56.5' AS TEXT) FROM s WHERE CAST(epoch_ms(ts) AS VARCHAR) > '1970'",
    "SELECT key, count(DISTINCT v) OVER (ROWS BETWEEN 5 PRECEDING AND 1 PRECEDING), count(DISTINCT upper(key)) FILTER (WHERE v > 0) OVER (RANGE '10s') FROM s GROUP BY key",
];

/// Tokens that may stand in for one another without breaking the syntax, so
/// that the planner and the windows see odd but well-formed queries.
const CLASSES: &[&[&str]] = &[
    &[
        "0",
        "1",
        "999",
        "-1",
        "1.5",
        "-2.50",
        ".5",
        "99999999999999999999.999999999999999999",
        "0.00000000000000000000000000000000000001",
        "1e308",
        "18446744073709551616",
        "9223372036854775807",
        "-9223372036854775808",
        "99999999999999999999999999999999999999",
        "1e400",
    ],
    &[
        "'10s'",
        "'1m30s'",
        "''",
        "'-5s'",
        "'0s'",
        "'abc'",
        "'10'",
        "'1d'",
        "'99999999999999d'",
    ],
    &[
        "max",
        "min",
        "mod",
        "arg_max",
        "arg_min_null",
        "sum",
        "count",
        "avg",
        "first_value",
        "last_value",
        "maxcount",
        "argmax",
        "m4",
        "stddev",
        "var_samp",
        "abs",
        "round",
        "ceil",
        "trunc",
        "coalesce",
        "nvl2",
        "arrow_cast",
        "concat",
        "btrim",
        "lag",
        "row_number",
        "date_trunc",
        "now",
        "corr",
        "covar_samp",
        "regr_r2",
        "bool_and",
        "md5",
        "digest",
        "date_bin",
        "make_date",
        "nope",
    ],
    &["key", "v", "ts", "nope", "NULL"],
    &[
        "BIGINT",
        "DOUBLE",
        "VARCHAR",
        "TIMESTAMP",
        "BOOLEAN",
        "INT",
        "REAL",
        "DATE",
        "DECIMAL(10,2)",
        "NUMERIC(38,0)",
        "DECIMAL(2,5)",
        "BLOB",
        "INT8",
        "UTINYINT",
        "UBIGINT",
    ],
    &["ROWS", "RANGE"],
    &["PRECEDING", "FOLLOWING"],
    &["SECOND", "MINUTE", "HOUR", "DAY", "YEAR"],
    &["+", "-", "*", "/", "%"],
    &[">", "<", "=", "<>", ">="],
];

/// The class of `token`, if it has one.
/// Word `index` of the whole vocabulary: [`KEYWORDS`], then every class.
fn word(index: usize) -> &'static str {
    let all = || KEYWORDS.iter().chain(CLASSES.iter().flat_map(|c| c.iter()));
    all()
        .nth(index % all().count())
        .copied()
        .unwrap_or("SELECT")
}

fn class_of(token: &str) -> Option<&'static [&'static str]> {
    CLASSES.iter().copied().find(|class| class.contains(&token))
}

#[derive(Clone, Debug)]
enum Edit {
    Delete(usize),
    Duplicate(usize),
    Replace(usize, usize),
    Insert(usize, usize),
    Swap(usize),
}

fn apply(tokens: &mut Vec<String>, edit: &Edit) {
    let len = tokens.len().max(1);
    match *edit {
        Edit::Delete(i) if !tokens.is_empty() => {
            tokens.remove(i % len);
        }
        Edit::Duplicate(i) if !tokens.is_empty() => {
            let token = tokens[i % len].clone();
            tokens.insert(i % len, token);
        }
        Edit::Replace(i, w) if !tokens.is_empty() => {
            tokens[i % len] = word(w).to_string();
        }
        Edit::Insert(i, w) => {
            let at = i % (tokens.len() + 1);
            tokens.insert(at, word(w).to_string());
        }
        Edit::Swap(i) if tokens.len() > 1 => {
            let at = i % (tokens.len() - 1);
            tokens.swap(at, at + 1);
        }
        _ => {}
    }
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Delete),
        any::<usize>().prop_map(Edit::Duplicate),
        (any::<usize>(), any::<usize>()).prop_map(|(i, w)| Edit::Replace(i, w)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, w)| Edit::Insert(i, w)),
        any::<usize>().prop_map(Edit::Swap),
    ]
}

/// A seed statement split on spaces and around parentheses and commas.
fn seed_tokens(seed: usize) -> Vec<String> {
    SEEDS[seed]
        .replace('(', " ( ")
        .replace(')', " ) ")
        .replace(',', " , ")
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// A seed statement edited a few times anywhere (mostly syntax errors).
fn mutated() -> impl Strategy<Value = String> {
    (0..SEEDS.len(), prop::collection::vec(edit(), 1..5)).prop_map(|(seed, edits)| {
        let mut tokens = seed_tokens(seed);
        for e in &edits {
            apply(&mut tokens, e);
        }
        tokens.join(" ")
    })
}

/// A seed statement with a few tokens swapped for others of their class
/// (mostly well-formed: wrong types, unknown names, odd frames and numbers).
fn substituted() -> impl Strategy<Value = String> {
    let picks = prop::collection::vec((any::<usize>(), any::<usize>()), 1..4);
    (0..SEEDS.len(), picks).prop_map(|(seed, picks)| {
        let mut tokens = seed_tokens(seed);
        for (at, choice) in picks {
            let at = at % tokens.len();
            if let Some(class) = class_of(&tokens[at]) {
                tokens[at] = class[choice % class.len()].to_string();
            }
        }
        tokens.join(" ")
    })
}

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<usize>(), 0..24)
        .prop_map(|words| words.into_iter().map(word).collect::<Vec<_>>().join(" "))
}

fn engine() -> Engine {
    let engine = Engine::new();
    engine
        .register_stream("s", schema(), StreamOptions::default().event_time("ts"))
        .expect("stream s");
    engine
}

/// Panics anywhere in the process, including ones the engine catches and
/// turns into a query error (those would hide a bug from `catch_unwind`),
/// but not panics raised by test code: other tests in this binary run
/// aggregates that panic on purpose, and this file's own assertions are
/// reported through `catch_unwind`.
static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_tests = info
                .location()
                .is_some_and(|at| at.file().starts_with(TEST_SOURCES));
            if !in_tests {
                PANICS.fetch_add(1, Ordering::SeqCst);
            }
            default(info);
        }));
    });
}

/// Where this binary's sources are, as panic locations name them.
const TEST_SOURCES: &str = "tests/end_to_end/";

/// Runs `sql` every way the engine takes text; fails if anything panicked.
fn exercise(engine: &Engine, sql: &str) -> Result<(), TestCaseError> {
    count_panics();
    let before = PANICS.load(Ordering::SeqCst);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if let Err(e) = engine.explain(sql) {
            assert!(!e.to_string().is_empty(), "empty explain error for {sql:?}");
        }
        if let Err(e) = engine.execute(sql) {
            assert!(!e.to_string().is_empty(), "empty error for {sql:?}");
        }
        match engine.query(sql) {
            Ok(query) => {
                let stream = engine.stream("s").expect("stream s survives");
                let rows = [
                    (1_000, Some("a"), Some(1.5)),
                    (2_000, None, None),
                    (500, Some("a"), Some(f64::NAN)),
                    (3_000, Some("b"), Some(f64::MAX)),
                    (3_000, Some("b"), Some(-0.0)),
                ];
                if stream.push(batch(&rows)).is_ok() {
                    // A result or an error: either way, no panic and no hang.
                    let result = query.recv_timeout(Duration::from_secs(5));
                    // Data may make a value fail (a division by zero), but
                    // never in a way DataFusion calls its own bug: that is a
                    // query the planner should have refused or rewritten.
                    let error = match &result {
                        Err(e) => Some(e.to_string()),
                        Ok(_) => query.stats().last_error,
                    };
                    assert!(
                        !error
                            .as_deref()
                            .is_some_and(|e| e.contains("Internal error")),
                        "{sql:?} planned, then failed on data: {error:?}"
                    );
                }
            }
            Err(e) => assert!(!e.to_string().is_empty(), "empty error for {sql:?}"),
        }
    }));
    prop_assert!(outcome.is_ok(), "the engine panicked on {:?}", sql);
    prop_assert_eq!(
        PANICS.load(Ordering::SeqCst),
        before,
        "a panic was caught inside the engine on {:?}",
        sql
    );
    Ok(())
}

/// The engine still plans and runs a known query.
fn still_serves(engine: &Engine) -> Result<(), TestCaseError> {
    let stream = engine.stream("s");
    prop_assume!(stream.is_ok()); // a fuzz case may legitimately DROP STREAM s
    let query = engine
        .query("SELECT max(v) OVER (ROWS 1 PRECEDING) AS m FROM s")
        .expect("known query plans");
    stream
        .expect("checked above")
        .push(batch(&[(10_000, Some("z"), Some(2.0))]))
        .expect("push");
    let out = query.recv_timeout(Duration::from_secs(5)).expect("result");
    prop_assert_eq!(floats(&out, "m"), vec![Some(2.0)]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn mutated_statements_never_panic(sql in mutated()) {
        let engine = engine();
        exercise(&engine, &sql)?;
        still_serves(&engine)?;
    }

    #[test]
    fn substituted_statements_never_panic(sql in substituted()) {
        let engine = engine();
        exercise(&engine, &sql)?;
        still_serves(&engine)?;
    }

    #[test]
    fn token_soup_never_panics(sql in soup()) {
        let engine = engine();
        exercise(&engine, &sql)?;
        still_serves(&engine)?;
    }
}

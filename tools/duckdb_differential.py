#!/usr/bin/env python3
"""Random queries run by the `sliq` binary and by DuckDB 2.0; reports every row that differs.

Two kinds of query over one generated stream `s (seq, ts, key, v DOUBLE, i BIGINT, b BOOLEAN,
s VARCHAR)`:

- `windows`: one to three aggregates (counts, sums, extremes, moments, regressions, first and
  last values, arg_max, skewness and kurtosis, products, bitwise folds, decimals, FILTER, IGNORE NULLS) over random ROWS and RANGE frames,
  some ending before the current row, partitioned by a key, an expression or nothing, plus
  lag and row_number, under an optional WHERE and an optional QUALIFY or HAVING;
- `expressions`: a random scalar expression (arithmetic, CASE, comparisons, IN, BETWEEN, LIKE,
  string, math and time functions, parts of the difference of two timestamps) per row.

Set-up (once): python3 -m venv /tmp/peers-venv && /tmp/peers-venv/bin/pip install duckdb==2.0.0

    cargo build --release -p sliq-cli
    /tmp/peers-venv/bin/python tools/duckdb_differential.py windows --seed 1 --queries 200
    /tmp/peers-venv/bin/python tools/duckdb_differential.py expressions --seed 1 --queries 300
    /tmp/peers-venv/bin/python tools/duckdb_differential.py windows --workers 3   # on timely

Numbers written with a point are exact DECIMALs in both, and a division with a DECIMAL is a
DOUBLE in both.

Where the two engines differ by design, the expected values are adjusted, not reported:
DuckDB's NaN where PostgreSQL and sliq give NULL (regr_slope, corr without variation), its
NULL count_if on an empty frame (sliq: 0), its NaN for a windowed product over a 0 and partial
products past DOUBLE's range (its plain product and sliq: 0), its DOUBLE-typed `/` on integers (not generated),
and the text of a timestamp or a length of time in sliq's output formats (ISO 8601, not
generated; `CAST(t AS VARCHAR)` and `CAST(t - u AS VARCHAR)` are written as in DuckDB and are
generated).
Floats compare to 1e-9 relative. Exit status 1 when any query differed or failed.
"""
import argparse
import csv
import decimal
import io
import math
import random
import re
import subprocess
import sys

import duckdb

COLUMNS = "seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE, i BIGINT, b BOOLEAN, s VARCHAR"
DUCK_COLUMNS = ("{'seq': 'BIGINT', 'ts': 'BIGINT', 'key': 'VARCHAR', 'v': 'DOUBLE', 'i': 'BIGINT', "
                "'b': 'BOOLEAN', 's': 'VARCHAR'}")


def generate(rng, path, rows):
    """Rows with strictly increasing ts (so RANGE frames have no peers), 5 % NULL keys."""
    ts = 1_700_000_000_000
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["seq", "ts", "key", "v", "i", "b", "s"])
        for seq in range(rows):
            ts += rng.choice([1, 5, 50, 400, 1000, 3000])
            key = None if rng.random() < 0.05 else f"k{rng.randrange(4)}"
            r = rng.random()
            v = None if r < 0.1 else float(rng.randrange(-5, 6)) if r < 0.2 else \
                round(rng.gauss(0, 100), rng.choice([0, 2, 6]))
            i = None if rng.random() < 0.1 else rng.randrange(-1000, 1000)
            b = None if rng.random() < 0.1 else rng.random() < 0.5
            s = None if rng.random() < 0.1 else rng.choice(["a", "b", "ab", "B", "", "zz", "ä", "a b"])
            cells = [seq, ts, key, v, i, b, s]
            w.writerow(["" if x is None else str(x).lower() if isinstance(x, bool) else x for x in cells])


NUM = ["v", "i", "v + i", "v * 2", "abs(v)", "i % 7", "CASE WHEN b THEN v ELSE -v END", "coalesce(v, 0)",
       "CAST(i AS DOUBLE)", "v / 3", "i * i", "-v", "greatest(v, i)", "nullif(i, 0)", "i * 0.25", "v * 1.5",
       "i + 0.1", "i / 4.0"]
BOOL = ["b", "v > 0", "i < 0", "NOT b", "b OR i > 100", "s = 'a'"]
ANY = NUM + ["s", "upper(s)", "s || 'x'"]


def aggregate(rng):
    """(sliq's call, DuckDB's call): the same text but where DuckDB differs by design."""
    x, y = rng.choice(NUM), rng.choice(NUM)
    call = rng.choice([
        "count(*)", f"count({rng.choice(ANY)})", f"sum({x})", f"avg({x})", f"min({rng.choice(ANY)})",
        f"max({rng.choice(ANY)})", f"var_pop({x})", f"var_samp({x})", f"stddev_pop({x})",
        f"stddev_samp({x})", f"bool_and({rng.choice(BOOL)})", f"bool_or({rng.choice(BOOL)})",
        f"corr({x}, {y})", f"covar_pop({x}, {y})", f"covar_samp({x}, {y})", f"regr_slope({x}, {y})",
        f"regr_intercept({x}, {y})", f"regr_sxx({x}, {y})", f"regr_syy({x}, {y})", f"regr_sxy({x}, {y})",
        f"regr_avgx({x}, {y})", f"regr_avgy({x}, {y})", f"count_if({rng.choice(BOOL)})",
        f"first_value({rng.choice(ANY)})", f"last_value({rng.choice(ANY)})",
        f"first_value({rng.choice(ANY)} IGNORE NULLS)", f"last_value({rng.choice(ANY)} IGNORE NULLS)",
        f"arg_max({rng.choice(ANY)}, {x})", f"arg_min({rng.choice(ANY)}, {x})",
        f"max_by({rng.choice(ANY)}, {x})", f"sum(CAST({x} AS DECIMAL(12, 2)))",
        f"avg(CAST({x} AS DECIMAL(12, 2)))", f"max(CAST({x} AS DECIMAL(12, 2)))", "sum(i)", "avg(i)",
        "min(b)", "max(b)", "sum(CAST(i AS INT))", "avg(CAST(i AS REAL))", "sum(CAST(v AS REAL))",
        f"product({rng.choice(['v', 'i % 3', 'v / 10.0', 'CASE WHEN b THEN 2 ELSE 0.5 END'])})",
        "bit_and(i)", "bit_or(i)", "bit_xor(i)", f"any_value({rng.choice(ANY)})",
        f"skewness({x})", f"kurtosis({x})", f"kurtosis_pop({x})", f"regr_count({x}, {y})",
        f"count(DISTINCT {rng.choice(['i % 7', 's', 'upper(s)', 'b', 'key', 'round(v)', 'v', 'i * 0.25'])})",
    ])
    if rng.random() < 0.2:
        call += f" FILTER (WHERE {rng.choice(BOOL)})"
    # DuckDB's max_by keeps rows whose value is NULL only as arg_max_null.
    duck = call.replace("max_by(", "arg_max_null(")
    return call, duck


def frame(rng):
    """(sliq's frame, DuckDB's frame): ts is BIGINT milliseconds, so DuckDB's RANGE counts them."""
    n, d = rng.choice([0, 1, 2, 5, 30]), rng.choice([0, 1, 1000, 5000, 60000])
    kind = rng.randrange(6)
    if kind == 0:
        f = f"ROWS BETWEEN {n} PRECEDING AND CURRENT ROW"
        return f, f
    if kind == 1:
        m = rng.choice([1, 2])
        f = f"ROWS BETWEEN {max(n, m)} PRECEDING AND {m} PRECEDING"
        return f, f
    if kind == 2:
        f = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
        return f, f
    if kind == 3:
        return (f"RANGE BETWEEN INTERVAL '{d}' MILLISECOND PRECEDING AND CURRENT ROW",
                f"RANGE BETWEEN {d} PRECEDING AND CURRENT ROW")
    if kind == 4:
        e = rng.choice([1, 1000])
        d = max(d, e)
        return (f"RANGE BETWEEN INTERVAL '{d}' MILLISECOND PRECEDING AND INTERVAL '{e}' MILLISECOND PRECEDING",
                f"RANGE BETWEEN {d} PRECEDING AND {e} PRECEDING")
    f = "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    return f, f


def window_query(rng):
    part = rng.choice(["PARTITION BY key ", "PARTITION BY key ", "", "PARTITION BY i % 3 "])
    items_s, items_d = [], []
    for j in range(rng.randrange(1, 4)):
        (call, duck_call), (fs, fd) = aggregate(rng), frame(rng)
        items_s.append(f"{call} OVER ({part}ORDER BY ts {fs}) AS r{j}")
        duck_item = f"{duck_call} OVER ({part}ORDER BY ts {fd})"
        if call.startswith("count_if"):
            duck_item = f"coalesce({duck_item}, 0)"
        product = re.match(r"product\((.+?)\)( FILTER .*)?$", call)
        if product:
            # A frame holding a 0 and partial products past DOUBLE's range: DuckDB's segment tree
            # multiplies an overflowed infinity by 0 (NaN), where its plain product and sliq's
            # (whose products keep their exponent apart) give 0.
            arg, keep = product.group(1), product.group(2) or ""
            zeros = f"count_if(({arg}) = 0){keep} OVER ({part}ORDER BY ts {fd})"
            duck_item = f"CASE WHEN {zeros} > 0 THEN 0.0 ELSE {duck_item} END"
        items_d.append(f"{duck_item} AS r{j}")
    if rng.random() < 0.3:
        w = rng.choice([f"lag({rng.choice(ANY)})", f"lag({rng.choice(NUM)}, 2)", f"lag({rng.choice(NUM)}, 1, 0)",
                        "row_number()"])
        items_s.append(f"{w} OVER ({part}ORDER BY ts) AS w")
        items_d.append(f"{w} OVER ({part}ORDER BY ts) AS w")
    where = f" WHERE {rng.choice(BOOL)}" if rng.random() < 0.2 else ""
    # A filter on the results: the rows it drops still entered the windows. sliq reads HAVING as
    # QUALIFY (each row's aggregates as they stand after it); DuckDB has QUALIFY.
    kept_s = kept_d = ""
    if rng.random() < 0.2:
        # (Not on results where DuckDB's NaN stands for sliq's NULL.)
        by_seq = ["seq % 2 = 0", "seq % 3 <> 1"]
        by_r0 = [] if items_s[0].startswith(("regr_", "corr")) else ["r0 IS NOT NULL", "seq % 3 <> 1 AND r0 IS NULL"]
        condition = rng.choice(by_seq + by_r0)
        kept_s, kept_d = f" {rng.choice(['QUALIFY', 'HAVING'])} {condition}", f" QUALIFY {condition}"
    return (f"SELECT seq, {', '.join(items_s)} FROM s{where}{kept_s}",
            f"SELECT seq, {', '.join(items_d)} FROM t{where}{kept_d} ORDER BY seq")


class Expressions:
    """Random typed expressions: numbers, booleans, text and timestamps (`t`)."""

    def __init__(self, rng):
        self.r = rng

    def num(self, d):
        r = self.r
        if d <= 0 or r.random() < 0.25:
            return r.choice(["v", "i", "i", str(r.randrange(-9, 10)), repr(round(r.uniform(-10, 10), 2)), "seq"])
        a = lambda: self.num(d - 1)
        return r.choice([
            lambda: f"({a()} + {a()})", lambda: f"({a()} - {a()})", lambda: f"({a()} * {a()})",
            lambda: f"abs({a()})", lambda: f"(-{a()})", lambda: f"CASE WHEN {self.bool(d - 1)} THEN {a()} ELSE {a()} END",
            lambda: f"coalesce({a()}, {a()})", lambda: f"nullif({a()}, {a()})", lambda: f"greatest({a()}, {a()})",
            lambda: f"least({a()}, {a()})", lambda: f"round({a()})", lambda: f"floor({a()})", lambda: f"ceil({a()})",
            lambda: f"CAST({a()} AS DOUBLE)", lambda: f"CAST({a()} AS BIGINT)", lambda: f"length({self.str(d - 1)})",
            lambda: f"({a()} % {r.choice([3, 7, -4])})", lambda: f"sqrt(abs({a()}))", lambda: f"ln(abs({a()}) + 1)",
            lambda: f"exp(least({a()}, 5))", lambda: f"power({a()}, {r.choice([2, 3, 0.5])})", lambda: f"sign({a()})",
            lambda: f"trunc({a()})", lambda: f"round({a()}, {r.choice([0, 1, 2, -1])})",
            lambda: f"trunc({a()}, {r.choice([0, 1, 2, -1])})",
            lambda: f"mod({a()}, {r.choice([3, -5])})", lambda: f"strpos({self.str(d - 1)}, {self.str(d - 1)})",
            lambda: f"ascii({self.str(d - 1)})", lambda: f"cbrt({a()})", lambda: f"ceiling({a()})",
            lambda: f"EXTRACT({r.choice(['year', 'month', 'day', 'hour', 'minute', 'second', 'dow', 'doy', 'epoch'])} FROM {self.ts(d - 1)})",
            lambda: f"epoch({self.ts(d - 1)})", lambda: f"epoch_ms({self.ts(d - 1)})",
            lambda: f"date_diff('{r.choice(['millisecond', 'second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'])}', {self.ts(d - 1)}, {self.ts(d - 1)})",
            lambda: f"CAST({a()} AS DECIMAL(12, 3))", lambda: f"(CAST({a()} AS DECIMAL(10, 2)) * 3)",
            lambda: "(CAST(i AS DECIMAL(8, 1)) / 4)", lambda: f"date_part('hour', {self.ts(d - 1)})",
            lambda: f"({a()} / {r.choice(['4.0', '0.5', '-2.50', '3.0'])})",
            lambda: f"({a()} * {r.choice(['0.1', '1.25', '-0.003'])})",
            lambda: f"date_part('{r.choice(['epoch', 'day', 'hour', 'minute', 'second', 'millisecond', 'microsecond', 'year', 'quarter'])}', "
                    f"{self.ts(d - 1)} - {self.ts(d - 1)})",
            lambda: f"epoch({self.ts(d - 1)} - {self.ts(d - 1)})",
            lambda: f"epoch(({self.ts(d - 1)} - {self.ts(d - 1)}) * {r.choice(['2', '-3', '0', 'i % 5'])})",
            lambda: f"epoch(INTERVAL '{r.randrange(1, 90)}' SECOND * {r.choice(['i % 7', '2', '0.5'])})",
            lambda: f"date_part('{r.choice(['epoch', 'day', 'hour', 'minute', 'second', 'millisecond', 'microsecond'])}', "
                    f"INTERVAL '{r.choice(['62.5 seconds', '1 day 3 hours 4.25 seconds', '90 minutes', '0.75 seconds'])}')",
        ])()

    def bool(self, d):
        r = self.r
        if d <= 0 or r.random() < 0.2:
            return r.choice(["b", "(v > 0)", "(i < 10)", "(s = 'a')", "true", "false"])
        n, b, s = (lambda: self.num(d - 1)), (lambda: self.bool(d - 1)), (lambda: self.str(d - 1))
        return r.choice([
            lambda: f"({n()} < {n()})", lambda: f"({n()} = {n()})", lambda: f"({n()} <> {n()})",
            lambda: f"({b()} AND {b()})", lambda: f"({b()} OR {b()})", lambda: f"(NOT {b()})",
            lambda: f"({n()} IS NULL)", lambda: f"({n()} IS NOT DISTINCT FROM {n()})",
            lambda: f"({s()} LIKE '{r.choice(['a%', '%b', '_', '%', 'a_b'])}')",
            lambda: f"({n()} BETWEEN {n()} AND {n()})", lambda: f"({n()} IN (1, 2, -3, {n()}))",
            lambda: f"({s()} < {s()})", lambda: f"({b()} IS NOT TRUE)", lambda: f"starts_with({s()}, 'a')",
            lambda: f"({s()} ILIKE 'A%')", lambda: f"({s()} ~ '^[ab]')", lambda: f"({self.ts(d - 1)} < {self.ts(d - 1)})",
            lambda: f"({s()} NOT LIKE '%a%')", lambda: f"({s()} IN ('a', 'b', NULL))",
        ])()

    def str(self, d):
        r = self.r
        if d <= 0 or r.random() < 0.3:
            return r.choice(["s", "s", "key", "'a'", "''", "'Ab c'"])
        s = lambda: self.str(d - 1)
        return r.choice([
            lambda: f"upper({s()})", lambda: f"lower({s()})", lambda: f"({s()} || {s()})",
            lambda: f"substring({s()}, {r.randrange(1, 3)}, {r.randrange(0, 3)})",
            lambda: f"CASE WHEN {self.bool(d - 1)} THEN {s()} ELSE {s()} END", lambda: f"coalesce({s()}, 'z')",
            lambda: f"trim({s()})", lambda: f"replace({s()}, 'a', 'xy')", lambda: "CAST(i AS VARCHAR)",
            lambda: f"left({s()}, 1)", lambda: f"repeat({s()}, 2)", lambda: f"reverse({s()})",
            lambda: f"lpad({s()}, 4, '*')", lambda: f"rpad({s()}, 3)", lambda: f"split_part({s()}, ' ', 1)",
            lambda: f"initcap({s()})", lambda: f"right({s()}, 2)", lambda: f"ltrim({s()}, 'a')",
            lambda: f"concat({s()}, {s()})", lambda: f"concat_ws('-', {s()}, {s()})",
            lambda: f"regexp_replace({s()}, '[ab]', 'Q')", lambda: f"translate({s()}, 'ab', 'xy')",
            lambda: f"md5({s()})", lambda: f"strftime({self.ts(d - 1)}, '%Y-%m-%d %H:%M')",
            lambda: f"CAST({self.ts(d - 1)} AS VARCHAR)", lambda: f"({s()} || {self.ts(d - 1)})",
            lambda: f"CAST({self.ts(d - 1)} - {self.ts(d - 1)} AS VARCHAR)",
            lambda: f"CAST(({self.ts(d - 1)} - {self.ts(d - 1)}) + INTERVAL '{r.randrange(1, 90)}' SECOND AS VARCHAR)",
            lambda: f"CAST(CAST({self.ts(d - 1)} AS DATE) {r.choice(['+', '-'])} {self.num(d - 1)} % 400 AS VARCHAR)",
        ])()

    def ts(self, d):
        r = self.r
        if d <= 0 or r.random() < 0.4:
            return r.choice(["t", "TIMESTAMP '2024-02-29 12:34:56'"])
        return r.choice([f"({self.ts(d - 1)} + INTERVAL '{r.randrange(1, 90)}' MINUTE)",
                         f"({self.ts(d - 1)} - INTERVAL '{r.randrange(1, 3)}' DAY)",
                         f"date_trunc('hour', {self.ts(d - 1)})",
                         f"time_bucket(INTERVAL '{r.choice([10, 90, 3600])}' SECOND, {self.ts(d - 1)})",
                         f"time_bucket(INTERVAL '{r.choice([1, 7])}' DAY, {self.ts(d - 1)})",
                         f"epoch_ms(epoch_ms({self.ts(d - 1)}) + {r.randrange(-999, 1000)})",
                         f"({self.ts(d - 1)} + INTERVAL '1' SECOND * (i % 100))"])


def expression_query(rng):
    g = Expressions(rng)
    e = getattr(g, rng.choice(["num", "bool", "str"]))(rng.randrange(1, 4))
    return (f"SELECT seq, {e} AS r FROM (SELECT seq, ts, key, v, i, b, s, CAST(ts AS TIMESTAMP) AS t FROM s)",
            f"SELECT seq, {e} AS r FROM (SELECT seq, ts, key, v, i, b, s, make_timestamp(ts * 1000) AS t FROM t) ORDER BY seq")


def normal(x):
    if x is None or x == "":
        return None
    if isinstance(x, str):
        if x in ("true", "false"):
            return 1.0 if x == "true" else 0.0
        try:
            return float(x)
        except ValueError:
            return x
    if isinstance(x, (bool, int, float, decimal.Decimal)):
        return float(x)
    return str(x)


def same(a, b):
    a, b = normal(a), normal(b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        # Equal infinities first: their difference is NaN.
        return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return a == b


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["windows", "expressions"])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--rows", type=int, default=300)
    p.add_argument("--workers", type=int, default=0, help="run sliq's queries on this many timely workers")
    p.add_argument("--sliq", default="target/release/sliq")
    p.add_argument("--data", default="/tmp/sliq-differential.csv")
    a = p.parse_args()

    rng = random.Random(a.seed)
    generate(rng, a.data, a.rows)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS SELECT * FROM read_csv('{a.data}', header = true, columns = {DUCK_COLUMNS})")
    make = window_query if a.kind == "windows" else expression_query
    workers = ["--workers", str(a.workers)] if a.workers else []
    bad = 0
    for n in range(a.queries):
        sliq_sql, duck_sql = make(rng)
        try:
            expected = con.execute(duck_sql).fetchall()
            if a.kind == "windows":
                # DuckDB's NaN for a regression without variation is NULL in sliq.
                expected = [[None if isinstance(x, float) and math.isnan(x) else x for x in row]
                            for row in expected]
        except duckdb.Error:
            continue  # DuckDB refuses it (a type it will not coerce, say): nothing to compare
        script = f"CREATE STREAM s ({COLUMNS}) WITH (path = '{a.data}', format = 'csv', event_time = 'ts'); {sliq_sql};"
        run = subprocess.run([a.sliq, "--format", "csv", *workers, "-c", script],
                             capture_output=True, text=True, timeout=120)
        where = f"[seed {a.seed}, query {n}]"
        if run.returncode != 0:
            print(f"{where} sliq failed: {run.stderr.strip()[-300:]}\n  {sliq_sql}")
            bad += 1
            continue
        rows = list(csv.reader(io.StringIO(run.stdout)))[1:]
        if workers:
            rows.sort(key=lambda row: int(row[0]))  # workers interleave keys
        if len(rows) != len(expected):
            print(f"{where} {len(rows)} rows, DuckDB {len(expected)}\n  {sliq_sql}")
            bad += 1
            continue
        for got, want in zip(rows, expected):
            if not all(same(g, w) for g, w in zip(got, want)):
                print(f"{where} seq {want[0]}: sliq {got}, DuckDB {list(want)}\n  {sliq_sql}")
                bad += 1
                break
    print(f"seed {a.seed}: {a.queries} {a.kind} queries, {bad} differed or failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

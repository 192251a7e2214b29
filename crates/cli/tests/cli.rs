//! The real `sliq` binary: scripts over files and stdin, output formats,
//! error paths and exit codes.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

fn sliq() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sliq"))
}

fn run(args: &[&str]) -> Output {
    sliq().args(args).output().expect("sliq runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// This test binary's scratch directory, under cargo's target directory:
/// each run overwrites the last one's files instead of leaving new ones.
fn scratch_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A scratch file with `content`; `name` is unique per test.
fn scratch(name: &str, content: &[u8]) -> PathBuf {
    let path = scratch_dir().join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// Runs `sql` with `--format csv`, `{path}` in it naming a scratch file
/// `name` that holds `text`.
fn csv_script(name: &str, text: &[u8], sql: &str) -> Output {
    let path = scratch(name, text);
    let sql = sql.replace("{path}", &path.display().to_string());
    run(&["--format", "csv", "-c", &sql])
}

const DATA: &str = "seq,ts,key,v\n0,1000,a,5\n1,2000,b,1.5\n2,3000,a,3\n3,14000,a,4\n4,15000,b,\n";

/// Six rows over two keys, one value NULL.
const SMALL: &[u8] = b"ts,k,v\n1,a,1\n2,a,5\n3,b,2\n4,a,\n5,a,7\n6,a,0\n";

#[test]
fn worked_example_prints_a_header_and_one_line_per_row() {
    let path = scratch("data.csv", DATA.as_bytes());
    let sql = format!(
        "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{}', format = 'csv', event_time = 'ts'); \
         SELECT seq, key, max(v) OVER (ROWS 999 PRECEDING) AS m, count(*) OVER (RANGE '10s') AS c FROM s GROUP BY key;",
        path.display()
    );
    let out = run(&["--format", "csv", "-c", &sql]);
    assert!(out.status.success(), "{}", stderr(&out));
    // At 14 s, key a's RANGE window [4 s, 14 s] no longer holds its rows at 1 s and 3 s.
    assert_eq!(
        stdout(&out),
        "seq,key,m,c\n0,a,5.0,1\n1,b,1.5,1\n2,a,5.0,2\n3,a,5.0,1\n4,b,1.5,1\n"
    );
    assert!(
        stderr(&out).contains("rows in 5, rows out 5"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn scripts_json_output_and_stdin() {
    let script = scratch(
        "script.sql",
        b"CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) WITH (source = 'stdin', event_time = 'ts');\n\
          SELECT seq, v, sum(v) OVER (PARTITION BY key ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS total FROM s;\n",
    );
    let mut child = sliq()
        .args(["--format", "json", "-f", script.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(DATA.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(lines[0], r#"{"seq":0,"v":5.0,"total":5.0}"#);
    assert_eq!(lines[2], r#"{"seq":2,"v":3.0,"total":8.0}"#);
    // Every line names every column, a NULL as null.
    assert_eq!(lines[4], r#"{"seq":4,"v":null,"total":1.5}"#);
    assert_eq!(lines.len(), 5);
}

/// Rows piped in show up as results while the pipe is still open, on one
/// thread or on timely workers: the output is written whenever the replay
/// waits for input.
#[test]
fn rows_from_an_open_pipe_are_printed_before_it_closes() {
    use std::io::{BufRead, BufReader};

    for workers in [&[][..], &["--workers", "2"]] {
        let mut child = sliq()
            .args(workers)
            .args([
                "--format",
                "csv",
                "-c",
                "CREATE STREAM s (k VARCHAR, v DOUBLE) WITH (source = 'stdin'); \
                 SELECT k, sum(v) OVER (ROWS 9 PRECEDING) AS total FROM s GROUP BY k;",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(b"k,v\nx,1\nx,2\n").unwrap();
        input.flush().unwrap();
        // Lines as they come, on a thread, so that a missing line fails the
        // test after a while instead of hanging it.
        let output = BufReader::new(child.stdout.take().unwrap());
        let (lines, printed) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in output.lines() {
                if lines.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        let next = || {
            printed
                .recv_timeout(std::time::Duration::from_secs(30))
                .ok()
        };
        let first: Vec<String> = (0..3).map_while(|_| next()).collect();
        if first.len() < 3 {
            child.kill().unwrap();
        }
        assert_eq!(first, ["k,total", "x,1.0", "x,3.0"], "{workers:?}");
        // Only now does the input end.
        input.write_all(b"x,4\n").unwrap();
        drop(input);
        assert_eq!(next(), Some("x,7.0".into()), "{workers:?}");
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn json_lines_and_arrow_files_are_sources_too() {
    let jsonl = scratch(
        "data.jsonl",
        b"{\"k\":\"x\",\"v\":1.0}\n{\"k\":\"x\",\"v\":3.0}\n{\"k\":\"y\",\"v\":2.0}\n",
    );
    let sql = format!(
        "CREATE STREAM j (k VARCHAR, v DOUBLE) WITH (path = '{}', format = 'jsonl'); \
         SELECT k, avg(v) OVER (ROWS 5 PRECEDING) AS a FROM j GROUP BY k;",
        jsonl.display()
    );
    reads_with_and_without_its_format(&sql, "jsonl", "k,a\nx,1.0\nx,2.0\ny,2.0\n");

    use arrow_array::{Float64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["x", "x"])),
            Arc::new(Float64Array::from(vec![4.0, 2.0])),
        ],
    )
    .unwrap();
    let mut bytes = Vec::new();
    let mut writer = arrow_ipc::writer::FileWriter::try_new(&mut bytes, &schema).unwrap();
    writer.write(&batch).unwrap();
    writer.finish().unwrap();
    drop(writer);
    let arrow = scratch("data.arrow", &bytes);
    let sql = format!(
        "CREATE STREAM a (k VARCHAR, v DOUBLE) WITH (path = '{}', format = 'arrow'); \
         SELECT k, min(v) OVER (ROWS 5 PRECEDING) AS lo FROM a GROUP BY k;",
        arrow.display()
    );
    reads_with_and_without_its_format(&sql, "arrow", "k,lo\nx,4.0\nx,2.0\n");
}

/// Runs `sql`, whose stream names `format = '<format>'`, and again without
/// that option (the file's extension names the format): both print
/// `expected` as CSV.
fn reads_with_and_without_its_format(sql: &str, format: &str, expected: &str) {
    let option = format!(", format = '{format}'");
    assert!(sql.contains(&option), "{sql}");
    for sql in [sql.to_string(), sql.replace(&option, "")] {
        let out = run(&["--format", "csv", "-c", &sql]);
        assert!(out.status.success(), "{sql}: {}", stderr(&out));
        assert_eq!(stdout(&out), expected, "{sql}");
    }
}

/// A Parquet file with its columns in another order, an extra one, time in
/// microseconds with a zone, several row groups and zstd pages: the stream
/// reads its own columns by name, cast to the declared types.
fn parquet_file(name: &str, rows: usize, v_as_text: bool) -> PathBuf {
    use arrow_array::TimestampMicrosecondArray;
    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::WriterProperties;
    let v: ArrayRef = match v_as_text {
        true => Arc::new(StringArray::from(
            (0..rows)
                .map(|i| {
                    if i == rows - 1 {
                        "oops".to_string()
                    } else {
                        i.to_string()
                    }
                })
                .collect::<Vec<_>>(),
        )),
        false => Arc::new(Float64Array::from(
            (0..rows).map(|i| i as f64).collect::<Vec<_>>(),
        )),
    };
    let batch = RecordBatch::try_from_iter([
        ("V", v),
        (
            "extra",
            Arc::new(Int64Array::from(vec![7; rows])) as ArrayRef,
        ),
        (
            "k",
            Arc::new(StringArray::from(
                (0..rows).map(|i| ["a", "b"][i % 2]).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
        (
            "ts",
            Arc::new(
                TimestampMicrosecondArray::from(
                    (0..rows).map(|i| i as i64 * 1_000_000).collect::<Vec<_>>(),
                )
                .with_timezone("UTC"),
            ) as ArrayRef,
        ),
    ])
    .unwrap();
    let properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(1000))
        .build();
    let mut bytes = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    scratch(name, &bytes)
}

#[test]
fn parquet_files_are_read_by_column_name_and_cast() {
    let path = parquet_file("events.parquet", 10_000, false);
    let sql = format!(
        "CREATE STREAM p (ts TIMESTAMP, k VARCHAR, v DOUBLE) WITH (path = '{}', event_time = 'ts'); \
         SELECT ts, k, sum(v) OVER (RANGE '2s') AS s FROM p GROUP BY k;",
        path.display()
    );
    let out = run(&["--format", "csv", "-c", &sql]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 10_001);
    assert_eq!(lines[0], "ts,k,s");
    assert_eq!(lines[1], "1970-01-01T00:00:00.000,a,0.0");
    // Row 9,999 (key b, 9,999 s) holds 9,997 and 9,999 within 2 s.
    assert_eq!(lines[10_000], "1970-01-01T02:46:39.000,b,19996.0");

    // A column the file lacks is named, with the columns it has.
    let sql = format!(
        "CREATE STREAM q (ts TIMESTAMP, key VARCHAR) WITH (path = '{}', format = 'parquet'); \
         SELECT key FROM q;",
        path.display()
    );
    let out = run(&["-c", &sql]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("events.parquet has no column 'key'; its columns are V, extra, k, ts"),
        "{}",
        stderr(&out)
    );

    // Text that does not read as the declared type stops the replay there,
    // after the batches before it, naming the column: never a silent NULL.
    let path = parquet_file("text.parquet", 10_000, true);
    let sql = format!(
        "CREATE STREAM t (k VARCHAR, v DOUBLE) WITH (path = '{}'); SELECT k, v FROM t;",
        path.display()
    );
    let out = run(&["--format", "csv", "-c", &sql]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out).lines().count(), 8_193);
    assert!(
        stderr(&out).contains("text.parquet, after 1 batch(es): column 'v' (DOUBLE):"),
        "{}",
        stderr(&out)
    );

    // Not Parquet at all, or asked of stdin: refused with the reason.
    let fake = scratch("fake.parquet", b"k,v\na,1\n");
    let sql = format!(
        "CREATE STREAM f (k VARCHAR, v DOUBLE) WITH (path = '{}'); SELECT k FROM f;",
        fake.display()
    );
    let out = run(&["-c", &sql]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("fake.parquet, after 0 batch(es): "),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "-c",
        "CREATE STREAM s (k VARCHAR) WITH (source = 'stdin', format = 'parquet'); SELECT k FROM s;",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("format = 'parquet' reads files (path = '…'), not stdin"),
        "{}",
        stderr(&out)
    );
}

/// Arrow IPC in its stream format and its file format (padded to 8 or to 64
/// bytes) reads batch by batch; a file cut short gives the rows of its whole
/// batches, then fails naming the file.
#[test]
fn arrow_streams_and_files_read_batch_by_batch() {
    use arrow_array::{Float64Array, RecordBatch, StringArray};
    use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
    use arrow_schema::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Float64, true),
    ]));
    let batch = |k: &str, v: f64| {
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(vec![k; 100])),
                Arc::new(Float64Array::from(vec![v; 100])),
            ],
        )
        .unwrap()
    };
    let batches = [batch("x", 1.0), batch("y", 2.0), batch("x", 3.0)];
    let file = |alignment: usize| {
        let options =
            IpcWriteOptions::try_new(alignment, false, arrow_ipc::MetadataVersion::V5).unwrap();
        let mut bytes = Vec::new();
        let mut writer = FileWriter::try_new_with_options(&mut bytes, &schema, options).unwrap();
        for b in &batches {
            writer.write(b).unwrap();
        }
        writer.finish().unwrap();
        drop(writer);
        bytes
    };
    let mut stream = Vec::new();
    let mut writer = StreamWriter::try_new(&mut stream, &schema).unwrap();
    for b in &batches {
        writer.write(b).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    let read = |name: &str, bytes: &[u8]| {
        let path = scratch(name, bytes);
        let sql = format!(
            "CREATE STREAM a (k VARCHAR, v DOUBLE) WITH (path = '{}', format = 'arrow'); \
             SELECT k, count(*) OVER (ROWS UNBOUNDED PRECEDING) AS n FROM a GROUP BY k;",
            path.display()
        );
        run(&["--format", "csv", "-c", &sql])
    };
    for (name, bytes) in [
        ("a8.arrow", file(8)),
        ("a64.arrow", file(64)),
        ("s.arrows", stream.clone()),
    ] {
        let out = read(name, &bytes);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let text = stdout(&out);
        assert_eq!(text.lines().count(), 301, "{name}");
        assert!(text.ends_with("x,200\n"), "{name}: {text}");
    }
    let cut = &stream[..stream.len() * 2 / 3];
    let out = read("cut.arrows", cut);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).lines().count() > 100, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("cut.arrows, after 1 batch(es): the input ends inside a message"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn generator_source_runs_to_its_row_count() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM g (ts BIGINT, key VARCHAR, v DOUBLE) WITH (source = 'generator', rows = 1000, keys = 7, event_time = 'ts'); \
         SELECT key, count(*) OVER (ROWS UNBOUNDED PRECEDING) AS n FROM g GROUP BY key;",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 1001);
    assert!(stderr(&out).contains("rows in 1000, rows out 1000"));
}

#[test]
fn a_float_cast_to_an_integer_rounds_as_duckdb_does() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM f (v DOUBLE); SELECT CAST(v AS INT) AS i FROM f; \
         INSERT INTO f VALUES (1.5), (-1.5), (0.49), (2.5)",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "i\n2\n-2\n0\n2\n");
}

#[test]
fn a_negative_zero_equals_zero_in_in_lists_case_and_nullif() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM f (v DOUBLE); \
         SELECT round(v) IN (0, 1) AS listed, CASE round(v) WHEN 0 THEN 'zero' ELSE 'other' END AS named, \
                nullif(round(v), 0) AS n FROM f; \
         INSERT INTO f VALUES (-0.2), (0.7), (-3)",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "listed,named,n\ntrue,zero,\ntrue,other,1.0\nfalse,other,-3.0\n"
    );
}
#[test]
fn a_computed_nan_compares_as_every_nan_does() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM f (v DOUBLE); \
         SELECT x > 0 AS above, x = CAST('NaN' AS DOUBLE) AS nan, least(x, 1) AS l \
         FROM (SELECT power(v, 0.5) AS x FROM f); \
         INSERT INTO f VALUES (-1), (0.25)",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "above,nan,l\ntrue,true,1.0\ntrue,false,0.5\n");
}

#[test]
fn mod_sign_and_ceiling_take_postgresqls_names() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM f (v DOUBLE, i INT); \
         SELECT mod(i, 4) AS m, sign(v) AS s, ceiling(v) AS c FROM f; \
         INSERT INTO f VALUES (-1.5, 9), (2.25, -9)",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "m,s,c\n1,-1.0,-1.0\n-1,1.0,3.0\n");
}

#[test]
fn ignore_nulls_may_stand_inside_the_call_as_duckdb_writes_it() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM f (s VARCHAR); \
         SELECT last_value(s IGNORE NULLS) OVER (ROWS 5 PRECEDING) AS inside, \
                last_value(s) IGNORE NULLS OVER (ROWS 5 PRECEDING) AS after FROM f; \
         INSERT INTO f VALUES ('a'), (NULL)",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "inside,after\na,a\na,a\n");
}

#[test]
fn drop_stream_restrict_leaves_a_stream_a_query_stands_over() {
    let out = run(&[
        "-c",
        "CREATE STREAM s (ts BIGINT); SELECT ts FROM s; DROP STREAM s RESTRICT",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "error: stream 's' has 1 running query: DROP STREAM … RESTRICT leaves it \
             (without RESTRICT, the drop ends them)"
        ),
        "{}",
        stderr(&out)
    );
    let out = run(&["-c", "CREATE STREAM s (ts BIGINT); DROP STREAM s RESTRICT"]);
    assert!(
        stderr(&out).contains("dropped stream s"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_script_may_start_with_a_comment() {
    let out = run(&[
        "-c",
        "-- a stream fed by hand\nCREATE STREAM s (ts BIGINT); SHOW STREAMS",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("s (ts BIGINT)"), "{}", stdout(&out));
}

#[test]
fn an_option_its_source_does_not_read_is_refused_where_it_stands() {
    for (options, said) in [
        (
            "source = 'generator', listen = '127.0.0.1:9000'",
            "error: listen means nothing to source = 'generator', which reads rate, keys, rows \
             at line 1, column 66",
        ),
        (
            "source = 'stdin', path = 'data.csv'",
            "error: path means nothing to source = 'stdin', which reads format, header, \
             delimiter, on_error at line 1, column 60",
        ),
        (
            "rate = 5",
            "error: rate means nothing to a stream without a source (path = '…' or source = '…' \
             declares one) at line 1, column 42",
        ),
        (
            "path = 'a.csv', path = 'b.csv'",
            "error: the option 'path' is given twice at line 1, column 51",
        ),
    ] {
        let out = run(&[
            "-c",
            &format!("CREATE STREAM s (ts BIGINT) WITH ({options})"),
        ]);
        assert_eq!(out.status.code(), Some(1), "{options}");
        assert!(stderr(&out).contains(said), "{options}: {}", stderr(&out));
    }
}

#[test]
fn malformed_csv_lines_fail_with_their_line_number_or_are_skipped() {
    let path = scratch(
        "bad.csv",
        b"seq,ts,key,v\n0,1000,a,5\n1,2000,b,oops\n2,3000,a,3\n3,4000\n",
    );
    let create = |on_error: &str| {
        format!(
            "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{}', on_error = '{on_error}'); \
             SELECT seq, count(v) OVER (ROWS 9 PRECEDING) AS n FROM s;",
            path.display()
        )
    };
    let out = run(&["--format", "csv", "-c", &create("fail")]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(
            "bad.csv, line 3: column 'v' (DOUBLE): cannot read 'oops'; the stream stops here \
             (WITH (on_error = 'skip') skips such lines)"
        ),
        "{err}"
    );
    let out = run(&["--format", "csv", "-c", &create("skip")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "seq,n\n0,1\n2,2\n");
    let err = stderr(&out);
    assert!(err.contains("skipped") && err.contains("line 3"), "{err}");
    assert!(
        err.contains("line 5: 2 fields where the stream has 4 (seq, ts, key, v)"),
        "{err}"
    );
}

#[test]
fn numbers_past_doubles_range_are_malformed_and_infinities_read() {
    // `1e400` is no DOUBLE (PostgreSQL and DuckDB refuse it too); `inf`
    // and `Infinity`, which sliq's own CSV and JSON output write, are.
    let query = "SELECT seq, v FROM s;";
    let csv_stream =
        "CREATE STREAM s (seq BIGINT, v DOUBLE) WITH (path = '{path}', on_error = 'skip');";
    for (name, text) in [
        (
            "range.csv",
            &b"seq,v\n0,1.5\n1,1e400\n2,-inf\n3,Infinity\n"[..],
        ),
        // Quoted cells go through arrow-csv.
        (
            "range_quoted.csv",
            b"seq,v\n0,\"1.5\"\n1,\"1e400\"\n2,-inf\n3,Infinity\n",
        ),
    ] {
        let out = csv_script(name, text, &format!("{csv_stream} {query}"));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "seq,v\n0,1.5\n2,-inf\n3,inf\n", "{name}");
        let err = stderr(&out);
        assert!(
            err.contains("line 3: column 'v' (DOUBLE): cannot read '1e400' (out of range)"),
            "{name}: {err}"
        );
    }
    let out = csv_script(
        "range_json.jsonl",
        b"{\"seq\":0,\"v\":1.5,\"k\":\"a\"}\n{\"seq\":1,\"v\":-1e400}\n\
          {\"seq\":2,\"v\":\"-Infinity\",\"k\":7}\n{\"seq\":3,\"v\":\"2.5\",\"k\":true}\n",
        "CREATE STREAM s (seq BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}', format = 'jsonl', \
         on_error = 'skip'); SELECT seq, k, v FROM s;",
    );
    // A number or a boolean in a VARCHAR field is its text, as in DuckDB.
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "seq,k,v\n0,a,1.5\n2,7,-inf\n3,true,2.5\n");
    let err = stderr(&out);
    assert!(
        err.contains("line 2: column 'v' (DOUBLE): cannot read '-1e400' (out of range)"),
        "{err}"
    );
}

#[test]
fn a_malformed_cell_in_a_column_no_query_reads_loses_no_line() {
    // Line 3's `ts` does not parse. A ROWS query that reads seq, key and v
    // leaves `ts` unparsed, so every line comes out; a query that reads
    // `ts` skips line 3 and names it.
    let replay = |name: &str, select: &str| {
        let sql = format!(
            "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) \
             WITH (path = '{{path}}', on_error = 'skip'); {select}"
        );
        let out = csv_script(
            name,
            b"seq,ts,key,v\n0,1000,a,5\n1,later,b,1.5\n2,3000,a,3\n",
            &sql,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        (stdout(&out), stderr(&out))
    };
    let (out, err) = replay(
        "bad_unread.csv",
        "SELECT seq, max(v) OVER (ROWS 9 PRECEDING) AS m FROM s GROUP BY key;",
    );
    assert_eq!(out, "seq,m\n0,5.0\n1,1.5\n2,5.0\n");
    assert!(!err.contains("skipped"), "{err}");

    let (out, err) = replay("bad_read.csv", "SELECT seq, ts FROM s;");
    assert_eq!(out, "seq,ts\n0,1000\n2,3000\n");
    assert!(err.contains("skipped") && err.contains("line 3"), "{err}");
}

#[test]
fn a_file_whose_lines_end_in_lone_carriage_returns_is_refused_not_lost() {
    let out = csv_script(
        "old_mac.csv",
        b"ts,k,v\r1,a,1\r2,a,5\r",
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); \
         SELECT ts, max(v) OVER (ROWS 9 PRECEDING) AS m FROM s;",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("old_mac.csv, line 1: the first line holds more than one record"),
        "{err}"
    );
}

#[test]
fn aggregate_filters_lag_and_row_number_through_the_binary() {
    let out = csv_script(
        "filter.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); \
         SELECT ts, count(*) FILTER (WHERE v > 1) OVER w AS big, count(*) OVER w AS n, \
         lag(v, 1, 0) OVER w AS prev, row_number() OVER w AS rn \
         FROM s GROUP BY k WINDOW w AS (ROWS 2 PRECEDING);",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "ts,big,n,prev,rn\n1,0,1,0.0,1\n2,1,2,1.0,2\n3,1,1,0.0,1\n4,1,3,5.0,3\n5,2,3,,4\n6,1,3,7.0,5\n"
    );
}

#[test]
fn frames_ending_before_the_current_row_through_the_binary() {
    let out = csv_script(
        "before.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}', event_time = 'ts'); \
         SELECT ts, sum(v) OVER w AS before, count(*) OVER w AS n, \
         max(v) OVER (RANGE BETWEEN '3ms' PRECEDING AND '2ms' PRECEDING) AS m \
         FROM s GROUP BY k WINDOW w AS (ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING);",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // Key a: 1 at 1 ms, 5 at 2 ms, NULL at 4 ms, 7 at 5 ms, 0 at 6 ms.
    assert_eq!(
        stdout(&out),
        "ts,before,n,m\n1,,0,\n2,1.0,1,\n3,,0,\n4,6.0,2,5.0\n5,5.0,2,5.0\n6,7.0,2,\n"
    );
}

#[test]
fn qualify_prints_only_alarm_rows() {
    let out = csv_script(
        "alarm.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); \
         SELECT ts, avg(v) OVER w AS a FROM s GROUP BY k \
         WINDOW w AS (ROWS 2 PRECEDING) QUALIFY avg(v) OVER w > 3;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts,a\n5,6.0\n6,3.5\n");
    assert!(
        stderr(&out).contains("rows in 6, rows out 2"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn having_prints_only_the_rows_whose_group_meets_it() {
    let out = csv_script(
        "having.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); \
         SELECT ts, k, count(v) AS n FROM s GROUP BY k HAVING count(v) >= 3;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts,k,n\n5,a,3\n6,a,4\n");
}

#[test]
fn duckdb_and_standard_sql_forms_run_in_the_binary() {
    // Wildcard options, GROUP BY ALL, a refined named window, DuckDB's
    // time functions, a timestamp as text, the parts of a difference of
    // timestamps and the longest of them, and a date plus days, each over
    // SMALL as stream s (ts, k, v).
    for (name, select, expected) in [
        (
            "wildcard",
            "SELECT * EXCLUDE (k) REPLACE (ceil(v / 2) AS v) FROM s WHERE ts <= 3",
            "ts,v\n1,1.0\n2,3.0\n3,1.0\n",
        ),
        (
            "group_by_all",
            "SELECT k, count(*) AS n FROM s GROUP BY ALL",
            "k,n\na,1\na,2\nb,1\na,3\na,4\na,5\n",
        ),
        (
            "refined",
            "SELECT ts, sum(v) OVER (w ROWS 1 PRECEDING) AS s FROM s WINDOW w AS (PARTITION BY k)",
            "ts,s\n1,1.0\n2,6.0\n3,2.0\n4,5.0\n5,7.0\n6,7.0\n",
        ),
        (
            "time_functions",
            "SELECT time_bucket(INTERVAL '7' DAY, epoch_ms(ts)) AS week, epoch(epoch_ms(ts)) AS e, \
                    date_diff('millisecond', epoch_ms(0), epoch_ms(ts)) AS d FROM s WHERE ts = 1",
            "week,e,d\n1969-12-29T00:00:00.000,0.001,1\n",
        ),
        (
            "timestamp_text",
            "SELECT CAST(epoch_ms(ts * 250) AS VARCHAR) AS t, k || epoch_ms(ts * 1000) AS j \
             FROM s WHERE ts <= 2",
            "t,j\n1970-01-01 00:00:00.25,a1970-01-01 00:00:01\n1970-01-01 00:00:00.5,a1970-01-01 00:00:02\n",
        ),
        (
            "duration_parts",
            "SELECT epoch(epoch_ms(ts * 1500) - epoch_ms(0)) AS e, \
                    date_part('millisecond', epoch_ms(ts * 61500) - epoch_ms(0)) AS ms \
             FROM s WHERE ts <= 2",
            "e,ms\n1.5,1500\n3.0,3000\n",
        ),
        (
            "max_gap",
            "SELECT max(epoch_ms(ts * 1500) - epoch_ms(0)) OVER (ROWS 1 PRECEDING) AS m \
             FROM s WHERE ts <= 2",
            "m\nPT1.5S\nPT3S\n",
        ),
        (
            "date_plus_days",
            "SELECT DATE '2024-02-28' + ts AS d, DATE '2024-03-01' - ts AS e FROM s WHERE ts <= 2",
            "d,e\n2024-02-29,2024-02-29\n2024-03-01,2024-02-28\n",
        ),
    ] {
        let script = format!(
            "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{{path}}'); {select};"
        );
        let out = csv_script(&format!("{name}.csv"), SMALL, &script);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(stdout(&out), expected, "{name}");
    }
}

#[test]
fn the_newer_aggregates_run_in_the_binary() {
    let out = csv_script(
        "folds.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); \
         SELECT ts, product(v) OVER w AS p, bit_or(ts) OVER w AS o, any_value(v) OVER w AS a, \
                round(kurtosis_pop(v) OVER w, 6) AS kp, regr_count(v, ts) OVER w AS rc, \
                first(v) OVER w AS f \
         FROM s GROUP BY k WINDOW w AS (ROWS 1 PRECEDING);",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // Two distinct values: a population excess kurtosis of -2.
    assert_eq!(
        stdout(&out),
        "ts,p,o,a,kp,rc,f\n1,1.0,1,1.0,,1,1.0\n2,5.0,3,1.0,-2.0,2,1.0\n3,2.0,3,2.0,,1,2.0\n\
         4,5.0,6,5.0,,1,5.0\n5,7.0,5,7.0,,1,\n6,0.0,7,7.0,-2.0,2,7.0\n"
    );
}

#[test]
fn an_in_list_may_read_the_row_in_the_binary() {
    let out = csv_script(
        "in_list.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); \
         SELECT ts, v IN (0, CASE WHEN k = 'a' THEN ts ELSE 2 END) AS hit FROM s;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "ts,hit\n1,true\n2,false\n3,true\n4,\n5,false\n6,true\n"
    );
}

#[test]
fn a_query_reads_the_results_of_a_with_query() {
    let out = csv_script(
        "chain.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}', event_time = 'ts'); \
         WITH d AS (SELECT ts, k, v - lag(v) OVER (ROWS 1 PRECEDING) AS dv FROM s GROUP BY k) \
         SELECT ts, k, dv, max(dv) OVER (RANGE '3ms') AS m FROM d GROUP BY k;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // Key a's changes: 4 at 2 ms, NULL next to the NULL value, -7 at 6 ms;
    // the largest over [t − 3 ms, t] runs on the subquery's event time.
    assert_eq!(
        stdout(&out),
        "ts,k,dv,m\n1,a,,\n2,a,4.0,4.0\n3,b,,\n4,a,,4.0\n5,a,,4.0\n6,a,-7.0,-7.0\n"
    );
}

#[test]
fn an_idle_key_is_forgotten_on_the_embedded_engine_and_on_timely_workers() {
    // Key a is idle from 2 ms to 20 ms while b moves the event time on.
    let mut data = String::from("ts,k,v\n1,a,1\n2,a,5\n");
    for ts in 3..20 {
        data.push_str(&format!("{ts},b,0\n"));
    }
    data.push_str("20,a,2\n");
    let path = scratch("idle.csv", data.as_bytes());
    let sql = format!(
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{}', event_time = 'ts', key_ttl = '10ms'); \
         DESCRIBE s; SELECT ts, k, sum(v) OVER (ROWS 9 PRECEDING) AS total FROM s WHERE k = 'a' GROUP BY k;",
        path.display()
    );
    for workers in [&[][..], &["--workers", "2"]] {
        let out = sliq()
            .args(workers)
            .args(["--format", "csv", "-c", &sql])
            .output()
            .expect("sliq runs");
        assert!(out.status.success(), "{workers:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("  key_ttl = '10ms'\n"), "{workers:?}: {text}");
        // Forgotten, a starts over: 2, not 1 + 5 + 2.
        assert!(
            text.ends_with("ts,k,total\n1,a,1.0\n2,a,6.0\n20,a,2.0\n"),
            "{workers:?}: {text}"
        );
    }
}

#[test]
fn a_generated_query_too_deep_to_plan_is_refused_not_a_crash() {
    // 20,000 ORs (a generated filter) overflowed the stack and aborted.
    let terms: Vec<String> = (0..20_000).map(|i| format!("v = {i}")).collect();
    let script = format!(
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE);\nSELECT v FROM s WHERE {};\n",
        terms.join(" OR ")
    );
    let out = run(&[
        "-f",
        scratch("deep.sql", script.as_bytes()).to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("an expression nested more than 256 deep")
            && stderr(&out).contains("at line 2, column 1"),
        "{}",
        &stderr(&out)[..stderr(&out).len().min(400)]
    );
}

#[test]
fn a_json_line_nested_too_deep_is_a_bad_line_not_a_crash() {
    // 100,000 nested arrays where a VARCHAR belongs overflowed the reader's
    // stack; brackets inside strings do not nest.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let text = format!(
        "{{\"ts\": 1, \"k\": \"a [[{{\\\" ]\", \"v\": 1}}\n{{\"ts\": 2, \"k\": {deep}, \"v\": 2}}\n{{\"ts\": 3, \"k\": \"c\", \"v\": 3}}\n"
    );
    let out = csv_script(
        "deep.jsonl",
        text.as_bytes(),
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}', format = 'jsonl', on_error = 'skip'); \
         SELECT ts, k FROM s;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts,k\n1,\"a [[{\"\" ]\"\n3,c\n");
    assert!(
        stderr(&out)
            .contains("line 2: Json error: arrays and objects nested deeper than 128 levels"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn json_lines_that_do_not_fit_are_named_in_the_stream_s_terms() {
    let out = csv_script(
        "unfit.jsonl",
        b"{\"ts\": 1, \"k\": \"a\"}\n{\"ts\": \"x\", \"k\": \"b\"}\n[1, 2]\n\
          {\"ts\": 3, \"k\": {\"a\": 1}}\n{\"k\": \"c\"}\n{\"ts\": 4, \"k\": \"d\"}\n",
        "CREATE STREAM s (ts BIGINT NOT NULL, k VARCHAR) \
           WITH (path = '{path}', format = 'jsonl', on_error = 'skip'); \
         SELECT ts, k FROM s;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts,k\n1,a\n4,d\n");
    let err = stderr(&out);
    for said in [
        "unfit.jsonl, line 2: column 'ts' (BIGINT): cannot read \"x\"",
        "unfit.jsonl, line 3: not a JSON object: [1, 2]",
        "unfit.jsonl, line 4: column 'k' (VARCHAR): cannot read {\"a\": 1}",
        "unfit.jsonl, line 5: column 'ts' (BIGINT) is NOT NULL, and the line gives it no value",
    ] {
        assert!(err.contains(said), "{said}\n{err}");
    }
}

#[test]
fn count_distinct_over_a_time_window_in_the_binary() {
    // Distinct users per page over the last 10 s of each page's views.
    let out = csv_script(
        "views.csv",
        b"ts,page,user\n1000,home,ann\n2000,home,bob\n3000,docs,ann\n4000,home,ann\n\
          13000,home,cid\n14500,home,cid\n",
        "CREATE STREAM views (ts BIGINT, page VARCHAR, user VARCHAR) \
           WITH (path = '{path}', event_time = 'ts'); \
         SELECT page, user, count(DISTINCT user) OVER (RANGE '10s') AS users \
           FROM views GROUP BY page;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "page,user,users\nhome,ann,1\nhome,bob,2\ndocs,ann,1\nhome,ann,2\nhome,cid,2\nhome,cid,1\n"
    );
}

#[test]
fn lengths_of_time_scale_in_the_binary() {
    // A deadline n seconds after each event, and twice the gap since the
    // one before; every format writes a length of time in ISO 8601.
    let out = csv_script(
        "deadlines.csv",
        b"ts,n\n2024-01-01 00:00:01,30\n2024-01-01 00:00:03.5,2\n",
        "CREATE STREAM s (ts TIMESTAMP, n BIGINT) WITH (path = '{path}', event_time = 'ts'); \
         SELECT ts + INTERVAL '1' SECOND * n AS due, \
                (ts - lag(ts) OVER (ROWS 1 PRECEDING)) * 2 AS twice, \
                INTERVAL '90' SECOND / 4 AS quarter, \
                avg(ts - TIMESTAMP '2024-01-01') OVER (ROWS 9 PRECEDING) AS mean FROM s;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "due,twice,quarter,mean\n2024-01-01T00:00:31.000,,PT22.5S,PT1S\n\
         2024-01-01T00:00:05.500,PT5S,PT22.5S,PT2.25S\n"
    );
}

#[test]
fn json_keys_in_another_case_are_read_and_missing_ones_are_noted() {
    // The first object decides, as a CSV header does: "DeviceId" is read
    // for deviceId (after a byte order mark); no key names "temp".
    let out = csv_script(
        "keys.jsonl",
        b"\xEF\xBB\xBF{\"DeviceId\": \"a\", \"temperature\": 2, \"seq\": 1}\n\
          {\"DeviceId\": \"b\", \"temperature\": 3, \"seq\": 2}\n",
        "CREATE STREAM s (seq BIGINT, deviceId VARCHAR, temp DOUBLE) \
           WITH (path = '{path}'); \
         SELECT seq, deviceId, temp FROM s;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "seq,deviceId,temp\n1,a,\n2,b,\n");
    let err = stderr(&out);
    assert!(
        err.contains(
            "keys.jsonl: the first line has no key for column(s) 'temp' (its keys: \
             'DeviceId', 'seq', 'temperature'); a line without the key gives the column NULL"
        ),
        "{err}"
    );
}

#[test]
fn a_file_without_line_breaks_ends_the_replay_instead_of_filling_memory() {
    // /dev/zero, or a binary file read as CSV, grew one line buffer until
    // the allocator gave up; the rows before such a line still come out.
    let mut text = b"ts,k,v\n1,a,1\n2,b,2\n".to_vec();
    text.resize(text.len() + (17 << 20), 0);
    let out = csv_script(
        "zeros.csv",
        &text,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); SELECT * FROM s;",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts,k,v\n1,a,1.0\n2,b,2.0\n");
    assert!(
        stderr(&out).contains("zeros.csv, line 4: no line break in 16 MiB; is it a CSV file?"),
        "{}",
        stderr(&out)
    );
    // Without a header the first line is read in bulk: it looped forever.
    let out = csv_script(
        "zeros-only.csv",
        &text[20..],
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}', header = false); \
         SELECT * FROM s;",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("zeros-only.csv, line 1: no line break in 16 MiB"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn date_functions_make_per_minute_partitions() {
    let out = csv_script(
        "minutes.csv",
        b"ts,v\n2026-12-03T10:00:05,1\n2026-12-03T10:00:45,2\n2026-12-03T10:01:10,3\n",
        "CREATE STREAM s (ts TIMESTAMP, v DOUBLE) WITH (path = '{path}'); \
         SELECT date_trunc('minute', ts) AS minute, \
         count(*) OVER (PARTITION BY date_trunc('minute', ts)) AS n FROM s;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "minute,n\n2026-12-03T10:00:00.000,1\n2026-12-03T10:00:00.000,2\n2026-12-03T10:01:00.000,1\n"
    );
}

#[test]
fn csv_headers_map_columns_by_name() {
    let select = |path: &std::path::Path| {
        format!(
            "CREATE STREAM s (ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{}'); \
             SELECT ts, key, sum(v) OVER (ROWS 9 PRECEDING) AS s FROM s;",
            path.display()
        )
    };
    // Another order and a column the stream lacks, from a file and from stdin.
    let text = b"KEY,note,v,ts\na,\"x, y\",1.5,1\nb,z,2.5,2\n";
    let path = scratch("reordered.csv", text);
    let out = run(&["--format", "csv", "-c", &select(&path)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts,key,s\n1,a,1.5\n2,b,4.0\n");
    let mut child = sliq()
        .args([
            "--format",
            "csv",
            "-c",
            "CREATE STREAM s (ts BIGINT, key VARCHAR, v DOUBLE) WITH (source = 'stdin'); \
             SELECT s.* FROM s;",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(stdout(&out), "ts,key,v\n1,a,1.5\n2,b,2.5\n");
    // Other names: by position, with a note.
    let path = scratch("renamed.csv", b"a,b,c\n1,a,1.5\n");
    let out = run(&["--format", "csv", "-c", &select(&path)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts,key,s\n1,a,1.5\n");
    assert!(
        stderr(&out).contains("names none of the stream's columns; reading them by position"),
        "{}",
        stderr(&out)
    );
    // No header: the first line reads as a row, and stays one.
    let path = scratch("headerless.csv", b"1,a,1.5\n2,a,2.5\n");
    let out = run(&["--format", "csv", "-c", &select(&path)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts,key,s\n1,a,1.5\n2,a,4.0\n");
    assert!(
        stderr(&out).contains("is a row of (ts, key, v), not a header: reading it as data"),
        "{}",
        stderr(&out)
    );
    // Some of the names: refused, naming what is missing.
    let path = scratch("partial.csv", b"ts,k,v\n1,a,1.5\n");
    let out = run(&["--format", "csv", "-c", &select(&path)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "partial.csv, line 1: the header (ts, k, v) lacks the stream's column(s) key"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn results_before_a_failing_batch_are_all_printed() {
    // 20,000 good lines, then a bad one in the third batch of 8,192 rows.
    let mut text = String::from("seq,ts,key,v\n");
    for seq in 0..20_000 {
        text.push_str(&format!(
            "{seq},{},k{},{}.25\n",
            1000 + seq,
            seq % 7,
            seq % 100
        ));
    }
    text.push_str("20000,21000,k0,oops\n");
    let path = scratch("late_bad.csv", text.as_bytes());
    let out = run(&[
        "--format",
        "csv",
        "-c",
        &format!(
            "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{}'); \
             SELECT seq, max(v) OVER (ROWS 9 PRECEDING) AS m FROM s GROUP BY key;",
            path.display()
        ),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("late_bad.csv, line 20002:"),
        "{}",
        stderr(&out)
    );
    // Every good line before the bad one, in its batch too.
    let printed = stdout(&out);
    assert_eq!(
        printed.lines().count(),
        1 + 20_000,
        "{}",
        &printed[printed.len() - 200..]
    );
    assert!(
        printed.ends_with("19999,99.25\n"),
        "{}",
        &printed[printed.len() - 200..]
    );
}

#[test]
fn nulls_from_late_rows_and_failed_values_are_explained() {
    // Row 3 is late for key a, row 5 has no event time; row 2 divides by
    // zero.
    let path = scratch(
        "nulls.csv",
        b"ts,k,x,y\n1000,a,6,3\n2000,b,1,0\n500,a,8,2\n3000,a,9,3\n,b,7,7\n",
    );
    let sql = format!(
        "CREATE STREAM s (ts BIGINT, k VARCHAR, x BIGINT, y BIGINT) \
         WITH (path = '{}', event_time = 'ts'); \
         SELECT k, x / y AS q, sum(x) OVER (RANGE '10s') AS s FROM s GROUP BY k;",
        path.display()
    );
    for workers in [&[][..], &["--workers", "2"]] {
        let out = run(&[workers, &["--format", "csv", "-c", &sql]].concat());
        assert!(out.status.success(), "{workers:?}: {}", stderr(&out));
        // Timely workers gather their rows in no fixed order across keys.
        let mut lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
        lines[1..].sort();
        assert_eq!(
            lines,
            ["k,q,s", "a,2,6", "a,3,15", "a,4,", "b,,1", "b,1,"],
            "{workers:?}"
        );
        let err = stderr(&out);
        for said in [
            "query 1: 1 late row(s) got NULL for their RANGE aggregates",
            "query 1: 1 row(s) without an event time got NULL for their RANGE aggregates",
        ] {
            assert!(err.contains(said), "{workers:?}: {said}\n{err}");
        }
        // A timely worker sees only its part of the stream: the row is
        // named by its values alone.
        let row = match workers.len() {
            0 => format!("{}, line 3", path.display()),
            _ => "a row of stream 's'".to_string(),
        };
        assert!(
            err.contains(&format!(
                "query 1: 1 value(s) could not be computed and are NULL (latest: {row}: \
                 evaluating x / y where x = 1, y = 0: Divide by zero error)"
            )),
            "{workers:?}: {err}"
        );
    }
}

#[test]
fn a_failed_value_is_named_by_its_line_in_every_replay() {
    // Line 4 is malformed and skipped; line 6 divides by zero, and WHERE
    // drops line 3 before it. The second query replays the file into the
    // same stream, whose rows the engine numbers on from the first replay.
    let path = scratch(
        "failed_lines.csv",
        b"ts,x,y\n1,6,3\n2,-1,0\nbad\n3,8,2\n4,9,0\n5,4,2\n",
    );
    let sql = format!(
        "CREATE STREAM s (ts BIGINT, x BIGINT, y BIGINT) WITH (path = '{}', on_error = 'skip'); \
         SELECT x / y AS q FROM s WHERE x > 0; SELECT x / y AS q FROM s WHERE x > 0;",
        path.display()
    );
    let out = run(&["--format", "csv", "-c", &sql]);
    assert!(out.status.success(), "{}", stderr(&out));
    // (A lone NULL is written "" in CSV, so that its line is not blank.)
    assert_eq!(stdout(&out), "q\n2\n4\n\"\"\n2\nq\n2\n4\n\"\"\n2\n");
    let err = stderr(&out);
    for query in 1..=2 {
        assert!(
            err.contains(&format!(
                "query {query}: 1 value(s) could not be computed and are NULL (latest: {}, \
                 line 6: evaluating x / y where x = 9, y = 0: Divide by zero error)",
                path.display()
            )),
            "{err}"
        );
    }
}

/// Blank lines and a quoted cell of two lines do not shift the line a
/// failed value is named by, in a file read whole.
#[test]
fn a_failed_value_is_named_by_its_line_past_blank_lines_and_quoted_ones() {
    let path = scratch(
        "failed_after_blanks.csv",
        b"k,v\na,1\n\n\"x\ny\",2\n  \nb,0\n\n",
    );
    let sql = format!(
        "CREATE STREAM s (k VARCHAR, v BIGINT) WITH (path = '{}'); SELECT 10 / v AS q FROM s;",
        path.display()
    );
    let out = run(&["--format", "csv", "-c", &sql]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "q\n10\n5\n\"\"\n");
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "(latest: {}, line 7: evaluating 10 / v where v = 0: Divide by zero error)",
            path.display()
        )),
        "{err}"
    );
}

#[test]
fn a_reader_that_closes_the_output_ends_the_replay_quietly() {
    // Like `sliq -c … | head -2`: more rows than a pipe buffers, a reader
    // that stops after two lines.
    let mut text = String::from("seq,ts,key,v\n");
    for seq in 0..100_000 {
        text.push_str(&format!("{seq},{},k{},1.5\n", 1000 + seq, seq % 7));
    }
    let path = scratch("closed_pipe.csv", text.as_bytes());
    let mut child = sliq()
        .args([
            "--format",
            "csv",
            "-c",
            &format!(
                "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{}'); \
                 SELECT seq, count(*) OVER (ROWS 9 PRECEDING) AS n FROM s GROUP BY key;",
                path.display()
            ),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sliq starts");
    let mut first = String::new();
    {
        use std::io::BufRead;
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        for _ in 0..2 {
            out.read_line(&mut first).expect("a line");
        }
    } // dropping the reader closes the pipe
    let out = child.wait_with_output().expect("sliq ends");
    assert_eq!(first, "seq,n\n0,1\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("error"), "{}", stderr(&out));
}

#[test]
fn closed_stdout_and_stderr_end_a_script_quietly_without_a_panic() {
    // Like `sliq -c … 2>&1 | head -0`: both streams are pipes whose reader
    // is already gone, so every write fails with a broken pipe.
    let path = scratch("closed_both.csv", DATA.as_bytes());
    let script = format!(
        "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{}'); \
         SHOW STREAMS; DESCRIBE s; EXPLAIN SELECT max(v) OVER (ROWS 2 PRECEDING) FROM s; \
         SELECT seq, max(v) OVER (ROWS 2 PRECEDING) AS m FROM s;",
        path.display()
    );
    for closed_stdout in [true, false] {
        let mut child = sliq()
            .args(["--format", "csv", "-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sliq starts");
        let stdout = child.stdout.take();
        if closed_stdout {
            drop(stdout);
        }
        drop(child.stderr.take());
        let status = child.wait().expect("sliq ends");
        assert!(status.success(), "closed stdout: {closed_stdout}: {status}");
    }
}

#[test]
fn a_misspelt_stream_option_is_refused_and_the_stream_not_created() {
    let out = run(&[
        "--no-demo",
        "-c",
        "CREATE STREAM s (ts BIGINT, v DOUBLE) WITH (pth = 'data.csv', event_time = 'ts');",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("unknown option 'pth'; did you mean 'path'?")
            && err.contains(") at line 1, column 45\n"),
        "{err}"
    );
    // A value no source takes is pointed at too.
    let out = run(&[
        "--no-demo",
        "-c",
        "CREATE STREAM s (ts BIGINT, v DOUBLE)\n  WITH (path = 'data.csv', delimiter = ';;');",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let caret = format!("  {}^", " ".repeat(39));
    assert_eq!(
        stderr(&out).lines().collect::<Vec<_>>(),
        [
            "error: delimiter = ';;': expected one character at line 2, column 40",
            "    WITH (path = 'data.csv', delimiter = ';;');",
            caret.as_str(),
        ]
    );
    // In the REPL the corrected statement can follow at once.
    let mut child = sliq()
        .arg("--no-demo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sliq starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(
            b"CREATE STREAM s (v DOUBLE) WITH (fromat = 'csv');\n\
              CREATE STREAM s (v DOUBLE);\nSHOW STREAMS;\n",
        )
        .expect("statements written");
    let out = child.wait_with_output().expect("sliq ends");
    assert!(stderr(&out).contains("unknown option 'fromat'; did you mean 'format'?"));
    assert!(
        stdout(&out).contains("s (v DOUBLE) — 0 queries"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_generator_with_more_keys_than_it_can_hold_is_refused() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM s (ts BIGINT, key VARCHAR, v DOUBLE) \
         WITH (source = 'generator', keys = '99999999999999999999', rows = '3'); \
         SELECT max(v) OVER (ROWS 2 PRECEDING) FROM s GROUP BY key;",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("keys = '99999999999999999999': at most 10000000"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn show_functions_lists_matching_names_with_signatures() {
    let out = run(&["-c", "SHOW FUNCTIONS LIKE '%max%'"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    let names: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        names,
        [
            "arg_max",
            "arg_max_null",
            "argmax",
            "max",
            "max_by",
            "maxcount"
        ],
        "{lines:?}"
    );
    assert!(
        lines[3].contains("aggregate") && lines[3].ends_with("max(x any) -> same type"),
        "{lines:?}"
    );
}

#[test]
fn empty_listings_say_so_on_stderr() {
    let out = run(&["-c", "SHOW STREAMS; SHOW QUERIES;"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(
        err.contains("no streams") && err.contains("no queries"),
        "{err}"
    );
}

#[test]
fn show_queries_lists_each_query_as_written_on_one_line() {
    let out = run(&[
        "-c",
        "CREATE STREAM s (ts BIGINT, key VARCHAR, v DOUBLE) WITH (event_time = 'ts');\n\
         select key, max(v) over (range '10s') AS m\n   FROM s GROUP BY key;\n\
         SHOW QUERIES;",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "key,m\n1: select key, max(v) over (range '10s') AS m FROM s GROUP BY key [s]\n"
    );
}

#[test]
fn statement_errors_exit_1_with_a_caret_and_bad_arguments_exit_2() {
    let out = run(&[
        "-c",
        "CREATE STREAM s (v DOUBLE); SELECT max(v) OVER (ROWS 3 PRECEDING FROM s;",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("syntax error") && err.contains('^'), "{err}");

    // A constant the function refuses is the statement's error, with a
    // caret under the function's name, not a NULL on every row.
    let out = run(&[
        "-c",
        "CREATE STREAM s (k VARCHAR); SELECT k, digest(k, 'sha999') FROM s;",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("digest: There is no built-in digest algorithm named 'sha999'")
            && err.contains("line 1, column 40")
            && err.contains('^'),
        "{err}"
    );

    // An aggregate where none may stand is named with the place, and a
    // name that is no function as unknown there too.
    for (sql, message) in [
        (
            "CREATE STREAM s (v DOUBLE); SELECT v FROM s WHERE max(v) > 1;",
            "max is an aggregate, not allowed in WHERE (QUALIFY filters on aggregates) \
             at line 1, column 51",
        ),
        (
            "CREATE STREAM s (v DOUBLE); SELECT v FROM s WHERE foo(v) > 1;",
            "unknown function 'foo'",
        ),
        // Constant arithmetic that fails fails the statement, at its place.
        (
            "CREATE STREAM s (v DOUBLE); SELECT v, 1 / 0 AS x FROM s;",
            "1 / 0 cannot be computed: division by zero at line 1, column 39",
        ),
    ] {
        let out = run(&["-c", sql]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains(message) && err.contains('^'), "{err}");
    }

    let out = run(&["-c", "SELECT max(v) OVER (ROWS 3 PRECEDING) FROM nowhere;"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("unknown stream 'nowhere'"),
        "{}",
        stderr(&out)
    );

    let out = run(&[
        "-c",
        "CREATE STREAM s (v DOUBLE) WITH (path = '/definitely/not/here.csv'); SELECT v FROM s;",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/definitely/not/here.csv"),
        "{}",
        stderr(&out)
    );

    let out = run(&["-f", "/definitely/not/here.sql"]);
    assert_eq!(out.status.code(), Some(1));

    for workers in ["0", "100000", "many"] {
        let out = run(&["--workers", workers, "-c", "SHOW STREAMS;"]);
        assert_eq!(out.status.code(), Some(2), "--workers {workers}");
        assert!(
            stderr(&out).contains("expected a whole number from 1 to 1024"),
            "{}",
            stderr(&out)
        );
    }

    let out = run(&["--format", "yaml", "-c", "SHOW STREAMS;"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Lines of a child's output, as they come.
fn lines_of(reader: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(reader)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn next_line(rx: &std::sync::mpsc::Receiver<String>) -> String {
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("a line within 20 s")
}

/// A TCP port nothing listens on (just now).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `sliq --format csv -c sql` running in the background: the child and its
/// stdout and stderr lines as they come.
fn running_script(
    sql: &str,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<String>,
    std::sync::mpsc::Receiver<String>,
) {
    let mut child = sliq()
        .args(["--format", "csv", "-c", sql])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    (child, out, err)
}

/// The REPL (with `args`) fed `input` through a pipe, to its end.
fn piped_repl(args: &[&str], input: &[u8]) -> Output {
    let mut child = sliq()
        .args(args)
        .env("HOME", scratch_dir()) // the REPL's history goes there
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sliq starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input).expect("writes");
    drop(stdin);
    child.wait_with_output().expect("sliq ends")
}

/// A running sum over two rows of a followed scratch file `name`, once
/// their results are printed: the file, the child, its stdout and stderr.
fn followed_sum(
    name: &str,
) -> (
    PathBuf,
    std::process::Child,
    std::sync::mpsc::Receiver<String>,
    std::sync::mpsc::Receiver<String>,
) {
    let path = scratch(name, b"ts,v\n1,1.5\n2,2.5\n");
    let sql = format!(
        "CREATE STREAM g (ts BIGINT, v DOUBLE) WITH (path = '{}', follow = true); \
         SELECT ts, sum(v) OVER (ROWS 1 PRECEDING) AS s FROM g;",
        path.display()
    );
    let (child, out, err) = running_script(&sql);
    assert_eq!(next_line(&out), "ts,s");
    assert_eq!(next_line(&out), "1,1.5");
    assert_eq!(next_line(&out), "2,4.0");
    (path, child, out, err)
}

#[test]
fn follow_mode_reads_lines_appended_while_it_runs() {
    let (path, mut child, out, _err) = followed_sum("growing.csv");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"3,10\n4,")
        .unwrap();
    assert_eq!(next_line(&out), "3,12.5");
    // The half-written line waits for its end.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"0.5\n")
        .unwrap();
    assert_eq!(next_line(&out), "4,10.5");
    child.kill().unwrap();
    let _ = child.wait();
}

#[test]
fn a_followed_file_truncated_in_place_is_read_again_from_its_start() {
    // Log rotation by copytruncate: the file empties, then grows again,
    // header first. Its new lines must not be lost past the old offset.
    let (path, mut child, out, err) = followed_sum("rotated.csv");
    std::fs::write(&path, b"").unwrap();
    assert_eq!(next_line(&err), "created stream g");
    assert!(next_line(&err).ends_with("rotated.csv: truncated; reading it again from the start"));
    std::fs::write(&path, b"ts,v\n3,10\n").unwrap();
    assert_eq!(next_line(&out), "3,12.5");
    child.kill().unwrap();
    let _ = child.wait();
}

/// A `sliq` counting rows per key `k` of a TCP source on a free port, once
/// it listens and has printed its header: the child, its port, and its
/// stdout and stderr lines.
fn tcp_counting_query() -> (
    std::process::Child,
    u16,
    std::sync::mpsc::Receiver<String>,
    std::sync::mpsc::Receiver<String>,
) {
    let port = free_port();
    let sql = format!(
        "CREATE STREAM t (k VARCHAR, v DOUBLE) WITH (source = 'tcp', listen = '127.0.0.1:{port}'); \
         SELECT k, count(*) OVER (ROWS UNBOUNDED PRECEDING) AS n FROM t GROUP BY k;"
    );
    let (child, out, err) = running_script(&sql);
    assert!(next_line(&err).contains("created stream t"));
    assert!(next_line(&err).starts_with("listening on 127.0.0.1:"));
    assert_eq!(next_line(&out), "k,n");
    (child, port, out, err)
}

#[test]
fn tcp_source_merges_lines_from_several_clients() {
    let (mut child, port, out, _err) = tcp_counting_query();
    let mut first = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    first.write_all(b"a,1\n").unwrap();
    assert_eq!(next_line(&out), "a,1");
    let mut second = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    second.write_all(b"a,2\nb,3\n").unwrap();
    assert_eq!(next_line(&out), "a,2");
    assert_eq!(next_line(&out), "b,1");
    child.kill().unwrap();
    let _ = child.wait();
}

#[test]
fn a_malformed_tcp_line_is_named_by_its_client_and_its_line_there() {
    let port = free_port();
    let sql = format!(
        "CREATE STREAM t (k VARCHAR, v DOUBLE) \
         WITH (source = 'tcp', listen = '127.0.0.1:{port}', on_error = 'skip'); \
         SELECT k, v FROM t;"
    );
    let (mut child, out, err) = running_script(&sql);
    assert!(next_line(&err).contains("created stream t"));
    assert!(next_line(&err).starts_with("listening on 127.0.0.1:"));
    assert_eq!(next_line(&out), "k,v");
    let mut first = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    first.write_all(b"a,1\n").unwrap();
    assert_eq!(next_line(&out), "a,1.0");
    let mut second = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    second.write_all(b"b,2\nb,oops\n").unwrap();
    assert_eq!(next_line(&out), "b,2.0");
    let client = |c: &std::net::TcpStream| c.local_addr().unwrap();
    assert_eq!(
        next_line(&err),
        format!(
            "skipped 127.0.0.1:{port}, client {}, line 2: column 'v' (DOUBLE): cannot read 'oops'",
            client(&second)
        )
    );
    first.write_all(b"a\n").unwrap();
    assert_eq!(
        next_line(&err),
        format!(
            "skipped 127.0.0.1:{port}, client {}, line 2: 1 fields where the stream has 2 (k, v)",
            client(&first)
        )
    );
    child.kill().unwrap();
    let _ = child.wait();
}

/// A quoted CSV cell may hold line breaks (RFC 4180): its record is read
/// whole wherever lines are read one by one, and the lines after it keep
/// their numbers.
#[test]
fn a_quoted_cell_of_several_lines_is_one_row() {
    // A file, with a bad line in the same batch: the good rows are all
    // kept, the bad line is named by its own number.
    let data = scratch(
        "quoted_lines.csv",
        b"k,v\na,1\n\"two\nlines\",2\na,oops\n\"x,\"\"y\"\"\n\",3\nb,4\n\"open,5\nc,6\n",
    );
    let sql = format!(
        "CREATE STREAM t (k VARCHAR, v DOUBLE) WITH (path = '{}', on_error = 'skip'); \
         SELECT length(k) AS n, v FROM t;",
        data.display()
    );
    let out = run(&["--format", "csv", "-c", &sql]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "n,v\n1,1.0\n9,2.0\n6,3.0\n1,4.0\n");
    let quoted_data = data.display().to_string();
    assert!(
        stderr(&out).contains(&format!(
            "skipped {quoted_data}, line 5: column 'v' (DOUBLE): cannot read 'oops'"
        )),
        "{}",
        stderr(&out)
    );
    // A quote never closed takes the rest of the file into its cell.
    assert!(
        stderr(&out).contains(&format!(
            "skipped {quoted_data}, line 9: 1 fields where the stream has 2 (k, v) (a quote \
             opened on this line is never closed: the lines after it were read into its cell)"
        )),
        "{}",
        stderr(&out)
    );
    // Piped in, where lines are read as they come.
    let mut child = sliq()
        .args([
            "--format",
            "csv",
            "-c",
            "CREATE STREAM t (k VARCHAR, v DOUBLE) WITH (source = 'stdin', on_error = 'skip'); \
             SELECT length(k) AS n, v FROM t;",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(b"k,v\n\"two\n").unwrap();
    input.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    input.write_all(b"lines\",2\na,oops\n").unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "n,v\n9,2.0\n");
    assert!(
        stderr(&out).contains("skipped stdin, line 4: column 'v' (DOUBLE): cannot read 'oops'"),
        "{}",
        stderr(&out)
    );
}

/// Over TCP, a client's record of several lines goes in whole, even while
/// another client's lines arrive between its lines.
#[test]
fn a_tcp_clients_record_of_several_lines_is_not_split_by_another_client() {
    let (mut child, port, out, err) = tcp_counting_query();
    let mut first = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    first.write_all(b"\"two\n").unwrap();
    first.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut second = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    second.write_all(b"b,1\n").unwrap();
    assert_eq!(next_line(&out), "b,1");
    first.write_all(b"lines\",1\nb,1\n").unwrap();
    // CSV output quotes the key, over two lines.
    assert_eq!(next_line(&out), "\"two");
    assert_eq!(next_line(&out), "lines\",1");
    assert_eq!(next_line(&out), "b,2");
    // The first client's next record is its line 4.
    first.write_all(b"c\n").unwrap();
    let client = first.local_addr().unwrap();
    let said = next_line(&err);
    assert!(
        said.contains(&format!("client {client}, line 4: 1 fields")),
        "{said}"
    );
    child.kill().unwrap();
    let _ = child.wait();
}

#[test]
fn a_query_over_a_tcp_stream_frees_its_port_for_the_next_one() {
    // The first query ends at its LIMIT; the second listens on the same
    // address (it was "already in use" while the first one's listener
    // lived on).
    let port = free_port();
    let sql = format!(
        "CREATE STREAM t (k VARCHAR, v DOUBLE) WITH (source = 'tcp', listen = '127.0.0.1:{port}'); \
         SELECT k, v FROM t LIMIT 1; SELECT k, v FROM t LIMIT 1;"
    );
    let (mut child, out, err) = running_script(&sql);
    for (line, row) in [("a,1\n", "a,1.0"), ("b,2\n", "b,2.0")] {
        assert!(next_line(&err).contains(if row == "a,1.0" {
            "created stream t"
        } else {
            "rows out 1"
        }));
        assert!(next_line(&err).starts_with("listening on 127.0.0.1:"));
        assert_eq!(next_line(&out), "k,v");
        let mut client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        client.write_all(line.as_bytes()).unwrap();
        assert_eq!(next_line(&out), row);
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// A server for a `connect` source to read from, and its port.
fn feed_server() -> (std::net::TcpListener, u16) {
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    (server, port)
}

#[test]
fn a_tcp_server_s_lines_are_read_live_until_it_closes() {
    let (server, port) = feed_server();
    let sql = format!(
        "CREATE STREAM t (k VARCHAR, v DOUBLE) \
         WITH (source = 'tcp', connect = '127.0.0.1:{port}', on_error = 'skip'); \
         SELECT k, sum(v) OVER (ROWS 9 PRECEDING) AS total FROM t GROUP BY k;"
    );
    let (mut child, out, err) = running_script(&sql);
    let (mut feed, _) = server.accept().unwrap();
    assert!(next_line(&err).contains("created stream t"));
    assert_eq!(next_line(&err), format!("connected to 127.0.0.1:{port}"));
    assert_eq!(next_line(&out), "k,total");
    // A header, as a file may have; each row shows up while the
    // connection stays open, and a malformed one is named by its line.
    feed.write_all(b"k,v\na,1\n").unwrap();
    assert_eq!(next_line(&out), "a,1.0");
    feed.write_all(b"a,oops\na,2\n").unwrap();
    assert_eq!(
        next_line(&err),
        format!("skipped 127.0.0.1:{port}, line 3: column 'v' (DOUBLE): cannot read 'oops'")
    );
    assert_eq!(next_line(&out), "a,3.0");
    // The server closing the connection ends the query and the script.
    drop(feed);
    assert!(next_line(&err).contains("rows in 2, rows out 2"));
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn a_query_at_its_limit_lets_go_of_an_idle_tcp_server() {
    let (server, port) = feed_server();
    let sql = format!(
        "CREATE STREAM t (k VARCHAR, v DOUBLE) WITH (source = 'tcp', connect = '127.0.0.1:{port}'); \
         SELECT k, v FROM t LIMIT 1;"
    );
    let (mut child, out, _err) = running_script(&sql);
    let (mut feed, _) = server.accept().unwrap();
    assert_eq!(next_line(&out), "k,v");
    feed.write_all(b"a,1\n").unwrap();
    assert_eq!(next_line(&out), "a,1.0");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    // The connection was shut down, though the server sent nothing more.
    let mut rest = Vec::new();
    feed.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    assert_eq!(std::io::Read::read_to_end(&mut feed, &mut rest).unwrap(), 0);
}

#[test]
fn a_source_that_does_not_open_and_two_tcp_endpoints_are_errors() {
    let port = free_port();
    let out = run(&[
        "-c",
        &format!(
            "CREATE STREAM t (k VARCHAR) WITH (source = 'tcp', connect = '127.0.0.1:{port}'); \
             SELECT k FROM t;"
        ),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("error: 127.0.0.1:{port}: Connection refused")),
        "{}",
        stderr(&out)
    );
    // A source that does not open prints no header, as a missing file does.
    assert_eq!(stdout(&out), "");
    let out = run(&[
        "-c",
        "CREATE STREAM t (k VARCHAR) WITH (path = '/nonexistent-dir/t.csv'); SELECT k FROM t;",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("error: /nonexistent-dir/t.csv: No such file or directory"),
        "{}",
        stderr(&out)
    );
    for (options, said) in [
        (
            "source = 'tcp', connect = 'h:1', listen = 'h:2'",
            "error: source = 'tcp' takes listen = 'host:port' (clients send lines to sliq) or \
             connect = 'host:port' (sliq reads a server's lines), not both at line 1, column 61",
        ),
        (
            "source = 'tcp'",
            "error: source = 'tcp' needs listen = 'host:port' (clients send lines to sliq) or \
             connect = 'host:port' (sliq reads a server's lines) at line 1, column 44",
        ),
        (
            "source = 'tcp', connect = 'h:1', follow = true",
            "error: follow means nothing to source = 'tcp' with connect, which reads connect, \
             format, header, delimiter, on_error at line 1, column 77",
        ),
    ] {
        let out = run(&[
            "-c",
            &format!("CREATE STREAM t (k VARCHAR) WITH ({options})"),
        ]);
        assert_eq!(out.status.code(), Some(1), "{options}");
        assert_eq!(stderr(&out).lines().next(), Some(said), "{options}");
    }
}

#[test]
fn tcp_clients_long_lines_stay_whole_and_an_endless_one_is_cut_off() {
    let (mut child, port, out, err) = tcp_counting_query();
    // Two clients at once, each line far longer than a pipe writes at once.
    let long_key = |c: char| c.to_string().repeat(100_000);
    let senders: Vec<_> = ['a', 'b']
        .into_iter()
        .map(|c| {
            let line = format!("{},1\n", long_key(c)).repeat(20);
            std::thread::spawn(move || {
                let mut client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                client.write_all(line.as_bytes()).unwrap();
            })
        })
        .collect();
    let mut counts = std::collections::HashMap::new();
    for _ in 0..40 {
        let line = next_line(&out);
        let (key, n) = line.rsplit_once(',').expect("key,n");
        assert!(key == long_key('a') || key == long_key('b'), "mixed line");
        let seen = counts.entry(key.to_string()).or_insert(0);
        *seen += 1;
        assert_eq!(n, seen.to_string());
    }
    senders.into_iter().for_each(|s| s.join().unwrap());
    // A client whose line never ends is disconnected; others carry on.
    let mut endless = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..17 {
        if endless.write_all(&chunk).is_err() {
            break; // already cut off
        }
    }
    assert!(next_line(&err).contains("a line longer than 16777216 bytes; connection closed"));
    let mut other = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    other.write_all(b"c,1\n").unwrap();
    assert_eq!(next_line(&out), "c,1");
    child.kill().unwrap();
    let _ = child.wait();
}

#[test]
fn limit_stops_a_query_and_its_replay() {
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM g (ts BIGINT, key VARCHAR, v DOUBLE) WITH (source = 'generator', rows = 100000, event_time = 'ts'); \
         SELECT ts FROM g LIMIT 3;",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ts\n0\n1\n2\n");
}

/// `(ms, mf01, mf02, mf03)` of each line of a DEBS text file.
fn debs_rows(path: &std::path::Path) -> Vec<(i64, f64, f64, f64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let (hms, frac) = f[0][11..].split_once('.').unwrap();
            let secs: Vec<i64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
            let us = (secs[0] * 3600 + secs[1] * 60 + secs[2]) * 1_000_000
                + frac[..6].parse::<i64>().unwrap();
            (
                us / 1000,
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect()
}

/// `f` over the values of `rows[..=i]` with time in `[t - width, t]`.
fn over_range(
    rows: &[(i64, f64, f64, f64)],
    i: usize,
    width: i64,
    value: impl Fn(&(i64, f64, f64, f64)) -> f64,
    f: impl Fn(&[f64]) -> f64,
) -> f64 {
    let t = rows[i].0;
    let window: Vec<f64> = rows[..=i]
        .iter()
        .filter(|r| r.0 >= t - width)
        .map(value)
        .collect();
    f(&window)
}

fn relvar(xs: &[f64]) -> f64 {
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    (hi - lo) / hi
}

fn average(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Column `name` of CSV output, parsed as floats (empty: NaN).
fn csv_column(text: &str, name: &str) -> Vec<f64> {
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let at = header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    text.lines()
        .skip(1)
        .map(|l| l.split(',').nth(at).unwrap().parse().unwrap_or(f64::NAN))
        .collect()
}

#[test]
fn debs_query_files_on_the_real_sample_match_an_independent_computation() {
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../debs/tests/data/sample200.txt");
    let rows = debs_rows(&sample);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);

    let out = run(&[
        "--format",
        "csv",
        "-f",
        &query_file("debs_relvar.sql", &sample),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = csv_column(&stdout(&out), "relvar_1s");
    assert_eq!(got.len(), rows.len());
    for (i, g) in got.iter().enumerate() {
        assert!(
            close(*g, over_range(&rows, i, 1000, |r| r.1, relvar)),
            "relvar row {i}"
        );
    }

    let out = run(&["--format", "csv", "-f", &query_file("debs_q2.sql", &sample)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (avg, rv3, power) = (
        csv_column(&text, "avg_mf01"),
        csv_column(&text, "rv_mf03"),
        csv_column(&text, "power_1m"),
    );
    for i in 0..rows.len() {
        assert!(
            close(avg[i], over_range(&rows, i, 1000, |r| r.1, average)),
            "avg row {i}"
        );
        assert!(
            close(rv3[i], over_range(&rows, i, 1000, |r| r.3, relvar)),
            "relvar mf03 row {i}"
        );
        assert!(
            close(
                power[i],
                over_range(&rows, i, 60_000, |r| r.1 + r.2 + r.3, average)
            ),
            "power row {i}"
        );
    }
    assert!(
        !text.contains(",true,"),
        "the sample's largest variation is below 30 %"
    );

    // Each phase against the average of the second before the event.
    let out = run(&[
        "--format",
        "csv",
        "-f",
        &query_file("debs_jumps.sql", &sample),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let change = csv_column(&stdout(&out), "change_mf02");
    assert_eq!(change.len(), rows.len());
    assert!(change[0].is_nan(), "nothing before the first event");
    for (i, got) in change.iter().enumerate().skip(1) {
        let t = rows[i].0;
        let before: Vec<f64> = rows[..i]
            .iter()
            .filter(|r| (t - 1000..=t - 1).contains(&r.0))
            .map(|r| r.2)
            .collect();
        assert!(
            close(*got, rows[i].2 / average(&before) - 1.0),
            "change row {i}"
        );
    }

    // The sample's additive flags are all 0: no change, so no row.
    let out = run(&["--format", "csv", "-f", &query_file("debs_q1.sql", &sample)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("ts,bm05_changed,"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        stderr(&out).contains(&format!("rows in {}, rows out 0", rows.len())),
        "{}",
        stderr(&out)
    );

    let err = run(&[
        "-c",
        "CREATE STREAM d (nope BIGINT) WITH (source = 'debs', path = 'x'); SELECT nope FROM d;",
    ]);
    assert_eq!(err.status.code(), Some(1));
}

/// A DEBS replay says what it left out: malformed lines by number, and the
/// events it dropped for arriving out of order.
#[test]
fn debs_replays_report_skipped_lines_and_dropped_events() {
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../debs/tests/data/sample200.txt");
    let text = std::fs::read_to_string(sample).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut damaged = lines[..50].join("\n");
    damaged.push_str("\nnot a DEBS record\n");
    damaged.push_str(&lines[50..100].join("\n"));
    // An event from earlier on comes again: out of order.
    damaged.push('\n');
    damaged.push_str(lines[10]);
    damaged.push('\n');
    damaged.push_str(&lines[100..].join("\n"));
    damaged.push('\n');
    let path = scratch("damaged.txt", damaged.as_bytes());
    let sql = format!(
        "CREATE STREAM d (ts TIMESTAMP, mf01 BIGINT) WITH (source = 'debs', path = '{}', \
         out_of_order = 'drop', event_time = 'ts'); SELECT mf01 FROM d;",
        path.display()
    );
    let out = run(&["--format", "csv", "-c", &sql]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count() - 1, lines.len());
    let err = stderr(&out);
    assert!(
        err.contains("damaged.txt, line 51: 1 fields, expected 56"),
        "{err}"
    );
    assert!(
        err.contains("dropped 1 event(s) of") && err.contains("out_of_order = 'drop'"),
        "{err}"
    );
}

#[test]
fn debs_generate_writes_a_deterministic_file_the_debs_source_reads() {
    let dir = scratch_dir();
    let (a, b) = (dir.join("gen-a.txt"), dir.join("gen-b.txt"));
    for path in [&a, &b] {
        let out = run(&[
            "debs",
            "generate",
            "--events",
            "3000",
            "--seed",
            "9",
            "-o",
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with("wrote 3000 events"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let sql = format!(
        "CREATE STREAM d (ts TIMESTAMP, mf01 BIGINT) WITH (source = 'debs', path = '{}', event_time = 'ts'); \
         SELECT mf01, max(mf01) OVER (RANGE '1s') AS hi FROM d;",
        a.display()
    );
    let out = run(&["--format", "csv", "-c", &sql]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = stdout(&out).lines().count() - 1;
    assert!(
        (2_900..=3_000).contains(&rows),
        "{rows} in-order rows of 3000"
    );
}

#[test]
fn debs_replay_at_recorded_speed_takes_the_recorded_time() {
    // 200 events at 100 Hz span 2 s; at speed 10 the replay takes about 0.2 s.
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../debs/tests/data/sample200.txt");
    let sql = format!(
        "CREATE STREAM debs (ts TIMESTAMP, mf01 BIGINT) WITH (source = 'debs', path = '{}', speed = 10, event_time = 'ts'); \
         SELECT mf01 FROM debs;",
        sample.display()
    );
    let start = std::time::Instant::now();
    let out = run(&["--format", "csv", "-c", &sql]);
    let took = start.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 201);
    assert!(
        took >= std::time::Duration::from_millis(180),
        "replay took {took:?}"
    );
}

/// A shipped query file, copied with its DEBS path pointed at `data`.
/// Milliseconds since midnight of a `2012-02-22T16:47:31.981` timestamp.
fn ms_of_day(ts: &str) -> f64 {
    let time = ts.split('T').nth(1).unwrap();
    let parts: Vec<f64> = time.split(':').map(|p| p.parse().unwrap()).collect();
    ((parts[0] * 60.0 + parts[1]) * 60.0 + parts[2]) * 1000.0
}

/// The slope of the least-squares line through `(x, y)` points.
fn least_squares_slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x / n, sy + y / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), (x, y)| {
        (sxy + (x - mx) * (y - my), sxx + (x - mx) * (x - mx))
    });
    sxy / sxx
}

fn query_file(name: &str, data: &std::path::Path) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../queries")
        .join(name);
    let sql = std::fs::read_to_string(path)
        .unwrap()
        .replace("../shared/debs/DEBS2012-small.txt", data.to_str().unwrap());
    scratch(name, sql.as_bytes()).to_str().unwrap().to_string()
}

#[test]
fn debs_queries_find_valve_delays_and_power_alarms_in_generated_data() {
    let dir = scratch_dir();
    let data = dir.join("q-data.txt");
    let out = run(&[
        "debs",
        "generate",
        "--events",
        "150000",
        "--seed",
        "4",
        "--out-of-order",
        "0",
        "-o",
        data.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Q1: when valve A opens after its sensor, the delay is the generator's ~3 s.
    let out = run(&["--format", "csv", "-f", &query_file("debs_q1.sql", &data)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (at, trend_at, alarm_at) = (
        column("delay_a_ms"),
        column("trend_a_ms_per_day"),
        column("alarm_a"),
    );
    let delays: Vec<f64> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(at)?.parse().ok())
        .collect();
    assert!(delays.len() >= 2, "valve A opened after its sensor twice");
    assert!(
        delays.iter().all(|d| (2_900.0..3_100.0).contains(d)),
        "delays {:?}",
        &delays[..5.min(delays.len())]
    );
    let changes = text
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(1) == Some("true"))
        .count();
    assert!(changes >= 1, "bm05 changed at least once");
    assert!(
        text.lines()
            .skip(1)
            .all(|l| l.split(',').skip(1).take(6).any(|c| c == "true")),
        "only events where a flag changed"
    );
    // The 24-hour trend (the data spans 25 minutes): on every row, the
    // least-squares slope of the delays so far against their event time.
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut trends = 0;
    for line in text.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        if let Ok(delay) = cells[at].parse::<f64>() {
            points.push((ms_of_day(cells[0]), delay));
            // The alarm: 1 % above the smallest delay of the last 24 hours.
            let smallest = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let alarm = (delay > 1.01 * smallest).to_string();
            assert_eq!(cells[alarm_at], alarm, "{line}");
        }
        let Ok(trend) = cells[trend_at].parse::<f64>() else {
            assert!(points.len() < 2, "no trend at {line}");
            continue;
        };
        let want = least_squares_slope(&points) * 86_400_000.0;
        assert!(
            (trend - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{line}: trend {trend}, want {want}"
        );
        trends += 1;
    }
    assert!(trends > 0);

    // Q2: the generator's largest spikes raise the 30 % alarm.
    let out = run(&["--format", "csv", "-f", &query_file("debs_q2.sql", &data)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let alarm = header.iter().position(|h| *h == "alarm").unwrap();
    let alarms = text
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(alarm) == Some("true"))
        .count();
    assert!(alarms > 0, "no alarm in 25 minutes of data with spikes");
    assert_eq!(text.lines().count(), 150_001);

    // Once a second: each second's row is the per-event row of its last
    // event (a WITH query and lag over its results).
    let last_of_second: std::collections::BTreeMap<&str, &str> = text
        .lines()
        .skip(1)
        .filter_map(|l| Some((l.get(..19)?, l.get(23..)?)))
        .collect();
    let out = run(&[
        "--format",
        "csv",
        "-f",
        &query_file("debs_q2_per_second.sql", &data),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let per_second = stdout(&out);
    assert!(
        per_second.starts_with("second,avg_mf01,rv_mf01,"),
        "{per_second}"
    );
    // 150,000 events at 100 Hz: 25 minutes, the last second unreported.
    assert_eq!(per_second.lines().count() - 1, last_of_second.len() - 1);
    for line in per_second.lines().skip(1) {
        let (second, values) = (&line[..19], &line[23..]);
        assert!(line[19..23] == *".000", "{line}");
        assert_eq!(last_of_second.get(second), Some(&values), "{line}");
    }

    // The alarms alone (QUALIFY): the same events, each above 30 % somewhere.
    let out = run(&[
        "--format",
        "csv",
        "-f",
        &query_file("debs_alarms.sql", &data),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1 + alarms);
    assert!(
        text.lines().skip(1).all(|l| l
            .split(',')
            .skip(1)
            .any(|rv| rv.parse::<f64>().is_ok_and(|rv| rv > 0.3))),
        "{}",
        &text[..text.len().min(300)]
    );
}

#[test]
fn rows_inserted_while_no_query_runs_are_said_to_reach_none() {
    let out = run(&[
        "-c",
        "CREATE STREAM t (ts BIGINT, \"Wert\" DOUBLE); INSERT INTO t VALUES (1, 2.0); \
         INSERT INTO t (\"Wert\", TS) VALUES (3.0, 2)",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out)
            .matches("row(s) into t; no query was running to see them")
            .count(),
        2,
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_query_over_a_stream_only_insert_feeds_shows_the_rows_of_each_insert() {
    // It stands while the script goes on: each INSERT prints its rows, a
    // LIMIT or DROP STREAM ends it, and so does the end of the script.
    let out = run(&[
        "--format",
        "csv",
        "-c",
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (event_time = 'ts'); \
         SELECT k, sum(v) OVER (ROWS 1 PRECEDING) AS t FROM s GROUP BY k; \
         INSERT INTO s VALUES (1000, 'a', 1.5), (2000, 'b', 2); \
         SELECT k, count(*) OVER (RANGE '1s') AS c FROM s GROUP BY k LIMIT 2; \
         INSERT INTO s VALUES (3000, 'a', 1), (1500, 'a', 4); \
         INSERT INTO s VALUES (4000, 'a', 5); \
         DROP STREAM s; \
         CREATE STREAM s (v DOUBLE); \
         SELECT v FROM s;",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "k,t\na,1.5\nb,2.0\nk,c\na,2.5\na,5.0\na,1\na,\na,9.0\nv\n"
    );
    let err = stderr(&out);
    for said in [
        "query 1 runs over s, which only INSERT feeds: each INSERT INTO s shows its rows",
        "query 2: 1 late row(s) got NULL for their RANGE aggregates",
        "inserted 1 row(s) into s\n",
        "query 3 runs over s",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }

    // Timely workers read sources only: there, such a query is refused.
    let out = run(&[
        "--workers",
        "2",
        "-c",
        "CREATE STREAM s (v DOUBLE); SELECT v FROM s;",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("stream 's' has no source to read"),
        "{}",
        stderr(&out)
    );

    // In the REPL, .stop ends them.
    let out = piped_repl(
        &["--no-demo", "--format", "csv"],
        b"CREATE STREAM s (v DOUBLE);\n\
          SELECT v * 2 AS w FROM s;\n\
          INSERT INTO s VALUES (1);\n\
          .stop\n\
          INSERT INTO s VALUES (2);\n",
    );
    assert!(stdout(&out).ends_with("\nw\n2.0\n"), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("1 standing query(ies) ended\n")
            && err.contains("inserted 1 row(s) into s; no query was running to see them"),
        "{err}"
    );
}

#[test]
fn each_select_of_a_script_replays_its_file_once_after_the_one_before() {
    // Registered all at once, the second query would also see the first
    // replay's rows (printing them twice) and reach its LIMIT during it.
    let out = csv_script(
        "twice.csv",
        DATA.as_bytes(),
        "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{path}', event_time = 'ts'); \
         SELECT seq FROM s WHERE seq < 2; \
         SELECT seq, max(v) OVER (ROWS 9 PRECEDING) AS m FROM s GROUP BY key LIMIT 2; \
         SELECT seq FROM s WHERE seq < 2 LIMIT 1;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "seq\n0\n1\nseq,m\n0,5.0\n1,1.5\nseq\n0\n");
}

#[test]
fn a_failing_statement_leaves_the_ones_before_it_in_effect() {
    // The REPL reads piped statements too; the first line's CREATE runs,
    // its SELECT fails, and the stream keeps its file for the next line.
    let path = scratch("kept.csv", DATA.as_bytes());
    let script = format!(
        "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{}', event_time = 'ts'); SELECT nope FROM s;\n\
         SELECT seq FROM s LIMIT 1;\n",
        path.display()
    );
    let out = piped_repl(&["--no-demo", "--format", "csv"], script.as_bytes());
    assert!(
        stderr(&out).contains("unknown column 'nope' in stream 's'"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("no source"), "{}", stderr(&out));
    assert!(stdout(&out).ends_with("seq\n0\n"), "{}", stdout(&out));
}

#[test]
fn a_struct_result_prints_in_csv_as_the_table_shows_it() {
    // arrow-csv refuses nested columns; m4's struct prints quoted.
    let out = csv_script(
        "m4.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}', event_time = 'ts'); \
         SELECT ts, m4(v) OVER (ROWS 1 PRECEDING) AS m FROM s LIMIT 2;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "ts,m\n1,\"{min: 1.0, max: 1.0, first: 1.0, last: 1.0}\"\n2,\"{min: 1.0, max: 5.0, first: 1.0, last: 5.0}\"\n"
    );
}

#[test]
fn the_repl_refuses_a_query_over_stdin_which_it_reads_itself() {
    // A reader left blocked on stdin after Ctrl-C would take the next
    // statement typed; the REPL says so instead, and goes on.
    let out = piped_repl(
        &["--no-demo", "--format", "csv"],
        b"CREATE STREAM s (ts BIGINT, v DOUBLE) WITH (source = 'stdin');\n\
          SELECT ts, v FROM s;\n\
          SHOW STREAMS;\n",
    );
    assert!(
        stderr(&out).contains("stream 's' reads stdin, which the REPL reads its statements from"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("s (ts BIGINT, v DOUBLE)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn dropping_the_demo_stream_stops_its_feed() {
    // A new stream of the same name has no source: its query waits for
    // INSERTs, and no row of the old stream's feed reaches it.
    let out = piped_repl(
        &["--format", "csv"],
        b"DROP STREAM sensors;\n\
          CREATE STREAM sensors (ts TIMESTAMP, sensor VARCHAR, value DOUBLE);\n\
          SELECT sensor FROM sensors;\n\
          .stats\n",
    );
    assert!(
        stderr(&out).contains("query 1 runs over sensors, which only INSERT feeds"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("stream sensors: 0 rows"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn stats_tell_rows_without_an_event_time_apart() {
    let out = piped_repl(
        &["--no-demo", "--format", "csv"],
        b"CREATE STREAM n (ts BIGINT, k VARCHAR) WITH (event_time = 'ts');\n\
          SELECT k, count(*) OVER (RANGE '1s') AS c FROM n GROUP BY k;\n\
          INSERT INTO n VALUES (5000, 'a'), (NULL, 'a'), (1000, 'a');\n\
          .stats\n",
    );
    assert!(
        stdout(&out).contains(", 2 late (1 without an event time), 0 failed results"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn dot_commands_without_a_valid_argument_say_how_to_use_them() {
    let out = piped_repl(
        &["--no-demo"],
        b".timing maybe\n.timing off\n.timing\n.format\n.format xml\n.stop now\n\
          .timing on please\n.format csv json\n",
    );
    let err = stderr(&out);
    for said in [
        "timing is on: .timing on|off",
        "timing is off: .timing on|off",
        "usage: .format table|csv|json",
        "unknown format 'xml': expected table, csv or json",
        "usage: .stop (it takes no argument)",
        "usage: .timing on|off",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
    // `.format` alone, then `.format csv json`.
    assert_eq!(
        err.matches("usage: .format table|csv|json").count(),
        2,
        "{err}"
    );
}

#[test]
fn dot_output_sends_results_and_listings_to_a_file_until_reset() {
    let data = scratch(
        "dot_output.csv",
        b"ts,key,v\n1000,a,1\n2000,a,2\n3000,b,4\n",
    );
    let results = scratch_dir().join("dot_output_results.csv");
    std::fs::write(&results, b"left over from before\n").unwrap();
    let input = format!(
        ".format csv\n\
         .output '{results}'\n\
         CREATE STREAM s (ts BIGINT, key VARCHAR, v DOUBLE) WITH (path = '{data}', event_time = 'ts');\n\
         SELECT ts, sum(v) OVER (ROWS 1 PRECEDING) AS r FROM s GROUP BY key;\n\
         SHOW STREAMS;\n\
         .output\n\
         SELECT ts FROM s;\n\
         .output /nonexistent-dir/out.csv\n",
        results = results.display(),
        data = data.display(),
    );
    let out = piped_repl(&["--no-demo"], input.as_bytes());
    let written = std::fs::read_to_string(&results).unwrap();
    assert_eq!(
        written,
        "ts,r\n1000,1.0\n2000,3.0\n3000,4.0\n\
         s (ts BIGINT, key VARCHAR, v DOUBLE) — 0 queries\n"
    );
    // Back on the screen: only the last query's rows.
    assert!(
        stdout(&out).ends_with("ts\n1000\n2000\n3000\n"),
        "{}",
        stdout(&out)
    );
    let err = stderr(&out);
    for said in [
        format!("results go to {}", results.display()),
        "results go to the screen".to_string(),
        "error: cannot write /nonexistent-dir/out.csv: No such file or directory".to_string(),
    ] {
        assert!(err.contains(&said), "{said}: {err}");
    }
}

#[test]
fn dot_read_runs_a_script_in_the_repl() {
    let data = scratch("dot_read.csv", b"ts,v\n1,1.5\n2,2.5\n");
    let script = scratch(
        "dot_read.sql",
        format!(
            "CREATE STREAM r (ts BIGINT, v DOUBLE) WITH (path = '{}', event_time = 'ts');\n\
             SELECT ts, sum(v) OVER (ROWS 1 PRECEDING) AS s FROM r;\n",
            data.display()
        )
        .as_bytes(),
    );
    let input = format!(
        ".format csv\n.read\n.read /nonexistent-dir/q.sql\n.read {}\n",
        script.display()
    );
    let out = piped_repl(&["--no-demo"], input.as_bytes());
    assert!(
        stdout(&out).ends_with("ts,s\n1,1.5\n2,4.0\n"),
        "{}",
        stdout(&out)
    );
    let err = stderr(&out);
    for said in [
        "usage: .read FILE",
        "error: cannot read /nonexistent-dir/q.sql: No such file or directory",
        "created stream r",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
}

#[test]
fn settings_are_shown_on_stdout_and_changed_on_stderr() {
    let out = run(&[
        "-c",
        "SET window_algorithm = 'daba'; SHOW window_algorithm; RESET ALL; SHOW ALL",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "window_algorithm = 'daba'\nwindow_algorithm = 'daba_lite'\n"
    );
    assert_eq!(
        stderr(&out),
        "window_algorithm = 'daba'\nwindow_algorithm = 'daba_lite'\n"
    );
}

#[test]
fn paned_sketches_replay_as_a_sketch_per_row_does() {
    // 3,000 rows over three keys: each key's ROWS 299 frame fills and slides.
    let mut text = String::from("ts,k,v\n");
    for i in 0..3000 {
        text += &format!("{},k{},{}\n", i * 10, i % 3, (i * 37 % 101) as f64 / 4.0);
    }
    let query = "SELECT ts, approx_percentile(v, 0.9) OVER (ROWS 299 PRECEDING) AS p, \
                 approx_count_distinct(v) OVER (RANGE '2s') AS d FROM s GROUP BY k;";
    let script = |algorithm: &str| {
        format!(
            "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{{path}}', event_time = 'ts'); \
             SET window_algorithm = '{algorithm}'; EXPLAIN {query} {query}"
        )
    };
    let paned = csv_script("paned.csv", text.as_bytes(), &script("daba_lite"));
    let per_row = csv_script("paned.csv", text.as_bytes(), &script("two_stacks_lite"));
    assert!(paned.status.success(), "{}", stderr(&paned));
    let (paned, per_row) = (stdout(&paned), stdout(&per_row));
    assert!(
        paned.contains("Paned: __agg0 = approx_percentile(v, 0.9) keeps its rows' inputs and one partial aggregate per 10 rows per key"),
        "{paned}"
    );
    assert!(!per_row.contains("Paned"), "{per_row}");
    let results = |out: &str| {
        out.lines()
            .skip_while(|l| !l.starts_with("ts,p,d"))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(results(&paned).len(), 3001);
    assert_eq!(results(&paned), results(&per_row));
}

#[test]
fn other_engines_spellings_of_percentiles_and_distinct_run_in_the_binary() {
    // Key a's frames hold 1 | 1, 5 | 1, 5, NULL | 5, NULL, 7 | NULL, 7, 0:
    // the 0.5 quantile is the value of rank 0.5·(n − 1) among the values
    // that are not NULL, rounded down: 1, 1, 1, 5, 0.
    let out = csv_script(
        "spellings.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); \
         SELECT ts, round(approx_percentile_cont(0.5) WITHIN GROUP (ORDER BY v) OVER w) AS p, \
         round(approx_quantile(v, 0.5) OVER w) AS q, max(DISTINCT v) OVER w AS m \
         FROM s GROUP BY k WINDOW w AS (ROWS 2 PRECEDING);",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "ts,p,q,m\n1,1.0,1.0,1.0\n2,1.0,1.0,5.0\n3,2.0,2.0,2.0\n4,1.0,1.0,5.0\n5,5.0,5.0,7.0\n6,0.0,0.0,7.0\n"
    );
    let out = csv_script(
        "spellings.csv",
        SMALL,
        "CREATE STREAM s (ts BIGINT, k VARCHAR, v DOUBLE) WITH (path = '{path}'); \
         SELECT sum(DISTINCT v) OVER (ROWS 2 PRECEDING) FROM s;",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "error: not supported in continuous queries: sum(DISTINCT …) (count(DISTINCT x) is \
             supported, and DISTINCT where it changes nothing, as in min and max) at line 1, column"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn create_stream_if_not_exists_and_clauses_a_stream_cannot_honour() {
    let out = run(&[
        "-c",
        "CREATE STREAM IF NOT EXISTS s (ts BIGINT, v DOUBLE); \
         CREATE STREAM IF NOT EXISTS s (other VARCHAR); DESCRIBE s",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("created stream s\nstream s exists already; left as it was\n"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("v "), "{}", stdout(&out));
    // A clause sliq cannot honour stops the script, named, where it stands.
    let out = run(&[
        "-c",
        "CREATE STREAM s (ts BIGINT, v DOUBLE); SELECT TOP 2 v FROM s",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "error: not supported in continuous queries: TOP (use LIMIT n to stop after n rows) \
             at line 1, column 40"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn debs_generate_names_the_file_it_cannot_write() {
    let out = run(&[
        "debs",
        "generate",
        "--events",
        "10",
        "-o",
        "/nonexistent-dir/debs.txt",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("error: writing /nonexistent-dir/debs.txt: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn decimal_columns_print_and_sum_exactly_in_every_format() {
    let text = b"k,price\na,1.10\na,2.20\nb,0.5\na,3.30\n";
    let sql = "CREATE STREAM p (k VARCHAR, price DECIMAL(10, 2)) WITH (path = '{path}', format = 'csv'); \
               SELECT k, price, sum(price) OVER (ROWS 9 PRECEDING) AS total, \
                      avg(price) OVER (ROWS 9 PRECEDING) AS mean FROM p GROUP BY k;";
    let out = csv_script("decimal.csv", text, sql);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "k,price,total,mean\na,1.10,1.10,1.1\na,2.20,3.30,1.65\nb,0.50,0.50,0.5\na,3.30,6.60,2.2\n"
    );
    let path = scratch("decimal.csv", text);
    let sql = sql.replace("{path}", &path.display().to_string());
    let out = run(&["--format", "json", "-c", &sql]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(r#"{"k":"a","price":2.20,"total":3.30,"mean":1.65}"#),
        "{}",
        stdout(&out)
    );
}

#[test]
fn every_format_writes_timestamps_alike() {
    let path = scratch(
        "times.csv",
        b"ts,k\n2024-01-01 10:00:00,a\n2024-01-01 10:00:04.5,b\n",
    );
    let sql = format!(
        "CREATE STREAM t (ts TIMESTAMP, k VARCHAR) WITH (path = '{}'); SELECT ts, k FROM t;",
        path.display()
    );
    let written = |format: &str| {
        let out = run(&["--format", format, "-c", &sql]);
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(
        written("csv"),
        "ts,k\n2024-01-01T10:00:00.000,a\n2024-01-01T10:00:04.500,b\n"
    );
    assert_eq!(
        written("json"),
        "{\"ts\":\"2024-01-01T10:00:00.000\",\"k\":\"a\"}\n\
         {\"ts\":\"2024-01-01T10:00:04.500\",\"k\":\"b\"}\n"
    );
    let table = written("table");
    assert!(
        table.contains("| 2024-01-01T10:00:00.000 | a |\n| 2024-01-01T10:00:04.500 | b |"),
        "{table}"
    );
}

#[test]
fn columns_declared_with_other_engines_type_names_read_and_aggregate() {
    let out = csv_script(
        "aliases.csv",
        b"ts,k,x,y,z\n1,1,2.5,3,4.25\n2,1,1.5,65535,5\n3,2,7,250,6\n",
        "CREATE STREAM t (ts INT8, k UTINYINT, x FLOAT8, y INT2 UNSIGNED, z DEC(5, 1)) \
           WITH (path = '{path}', format = 'csv', event_time = 'ts'); \
         SELECT k, sum(y) OVER (ROWS 5 PRECEDING) AS s, sum(z) OVER (ROWS 5 PRECEDING) AS sz, \
                avg(x) OVER (RANGE '1s') AS ax FROM t GROUP BY k;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "k,s,sz,ax\n1,3,4.3,2.5\n1,65538,9.3,2.0\n2,250,6.0,7.0\n"
    );
}

#[test]
fn whole_numbers_past_bigint_print_exactly() {
    let out = csv_script(
        "big.csv",
        b"k\na\n",
        "CREATE STREAM b (k VARCHAR) WITH (path = '{path}', format = 'csv'); \
         SELECT -9223372036854775808 AS least, 18446744073709551616 * 2 AS twice FROM b;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "least,twice\n-9223372036854775808,36893488147419103232\n"
    );
}

#[test]
fn numbers_written_with_a_point_are_exact_decimals() {
    let out = csv_script(
        "point.csv",
        b"k,v\na,2\na,4\n",
        "CREATE STREAM p (k VARCHAR, v DOUBLE) WITH (path = '{path}', format = 'csv'); \
         SELECT 0.1 + 0.2 = 0.3 AS exact, sum(0.1) OVER (ROWS 9 PRECEDING) AS tenths, \
                -2.50 AS kept, 1 / 4.0 AS quarter, v > 2.5 AS above FROM p;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "exact,tenths,kept,quarter,above\ntrue,0.1,-2.50,0.25,false\ntrue,0.2,-2.50,0.25,true\n"
    );
}

#[test]
fn decimal_cells_round_half_away_from_zero_to_the_columns_scale() {
    // arrow's parser alone would drop the third digit (2.25, -2.25).
    let sql = "CREATE STREAM p (k VARCHAR, price DECIMAL(10, 2)) WITH (path = '{path}', format = '{format}'); \
               SELECT k, price FROM p;";
    let csv = b"k,price\na,2.255\na,-2.255\na,2.254\nb,99999999.995\n";
    let out = csv_script("round.csv", csv, &sql.replace("{format}", "csv"));
    assert_eq!(stdout(&out), "k,price\na,2.26\na,-2.26\na,2.25\n");
    // Rounded up, the last value needs eleven digits: its line is named.
    assert!(
        stderr(&out).contains(
            "round.csv, line 5: column 'price' (DECIMAL(10, 2)): cannot read '99999999.995'"
        ),
        "{}",
        stderr(&out)
    );
    let json = b"{\"k\":\"a\",\"price\":2.255}\n{\"k\":\"b\",\"price\":\"1.005\"}\n";
    let out = csv_script("round.json", json, &sql.replace("{format}", "json"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "k,price\na,2.26\nb,1.01\n");
}

#[test]
fn hash_functions_print_as_hex() {
    let out = csv_script(
        "hash.csv",
        b"k\na\n",
        "CREATE STREAM h (k VARCHAR) WITH (path = '{path}', format = 'csv'); \
         SELECT md5(k) AS m, sha256(k) AS s FROM h;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "m,s\n0cc175b9c0f1b6a831c399e269772661,\
         ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb\n"
    );
}

#[test]
fn correlation_over_a_window_prints_per_row() {
    let out = csv_script(
        "corr.csv",
        b"x,y\n1,2\n2,4\n3,5\n4,4\n5,5\n",
        "CREATE STREAM c (x BIGINT, y DOUBLE) WITH (path = '{path}', format = 'csv'); \
         SELECT x, corr(y, x) OVER (ROWS 4 PRECEDING) AS r, \
                covar_samp(y, x) OVER (ROWS 4 PRECEDING) AS cs FROM c;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // One pair: no correlation and no sample covariance; then the line
    // through (1, 2) and (2, 4); at the end 6 / sqrt(60) and 6 / 4.
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[..3], ["x,r,cs", "1,,", "2,1.0,1.0"]);
    let want = [
        (3.0 / (28.0f64 / 3.0).sqrt(), 1.5),
        (3.5 / 23.75f64.sqrt(), 3.5 / 3.0),
        (6.0 / 60f64.sqrt(), 1.5),
    ];
    for (line, (r, cs)) in lines[3..].iter().zip(want) {
        let cells: Vec<f64> = line
            .split(',')
            .skip(1)
            .map(|c| c.parse().unwrap())
            .collect();
        assert!(
            (cells[0] - r).abs() < 1e-12 && (cells[1] - cs).abs() < 1e-12,
            "{line}"
        );
    }
    assert_eq!(lines.len(), 6);
}

#[test]
fn bool_and_bool_or_and_count_if_print_per_row() {
    let out = csv_script(
        "bools.csv",
        b"id,ok\n1,true\n2,\n3,false\n4,true\n",
        "CREATE STREAM b (id BIGINT, ok BOOLEAN) WITH (path = '{path}', format = 'csv'); \
         SELECT bool_and(ok) OVER (ROWS 1 PRECEDING) AS a, bool_or(ok) OVER (ROWS 1 PRECEDING) AS o, \
                count_if(ok) OVER (ROWS 1 PRECEDING) AS n FROM b;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "a,o,n\ntrue,true,1\ntrue,true,1\nfalse,false,0\nfalse,true,1\n"
    );
}

#[test]
fn max_by_returns_the_first_argument_at_the_greatest_second() {
    // arg_max skips the rows whose name is NULL, as DuckDB's does.
    let out = csv_script(
        "max_by.csv",
        b"name,score\nann,3\nbob,9\ncy,4\n,10\ndi,1\n",
        "CREATE STREAM m (name VARCHAR, score BIGINT) WITH (path = '{path}', format = 'csv'); \
         SELECT max_by(name, score) OVER (ROWS 1 PRECEDING) AS best, \
                arg_max(name, score) OVER (ROWS 1 PRECEDING) AS duck FROM m;",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "best,duck\nann,ann\nbob,bob\nbob,bob\n,cy\n,di\n"
    );
}

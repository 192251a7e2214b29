//! `sliq --workers N` and clusters of `sliq` processes: the same rows as
//! the embedded engine (as a multiset, and per key in the same order), a
//! bounded wait for missing peers, and the watermark in `.stats`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn sliq() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sliq"))
}

/// This test binary's scratch directory, under cargo's target directory:
/// each run overwrites the last one's files instead of leaving new ones.
fn scratch_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("timely");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 3,000 rows over 61 keys, event time increasing with a few late rows.
fn data_file(test: &str) -> PathBuf {
    let path = scratch_dir().join(format!("{test}.csv"));
    let mut csv = String::from("seq,ts,key,v\n");
    let mut x = 12345u64;
    let mut ts = 0i64;
    for seq in 0..3000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ts += ((x >> 40) % 50) as i64;
        let late = if (x >> 20).is_multiple_of(89) {
            3000
        } else {
            0
        };
        let value = if (x >> 30).is_multiple_of(41) {
            String::new()
        } else {
            format!("{}", (x >> 33) % 997)
        };
        csv.push_str(&format!(
            "{seq},{},k{},{value}\n",
            ts - late,
            (x >> 50) % 61
        ));
    }
    std::fs::write(&path, csv).unwrap();
    path
}

fn script(path: &Path, select: &str) -> String {
    format!(
        "CREATE STREAM s (seq BIGINT, ts BIGINT, key VARCHAR, v DOUBLE) \
         WITH (path = '{}', format = 'csv', event_time = 'ts'); {select};",
        path.display()
    )
}

const SELECTS: &[&str] = &[
    "SELECT key, seq, max(v) OVER (ROWS 99 PRECEDING) AS m, avg(v) OVER (ROWS 9 PRECEDING) AS a FROM s GROUP BY key",
    "SELECT key, seq, sum(v) OVER (RANGE '1s') AS total, count(*) OVER (RANGE '1s') AS n FROM s WHERE v > 100 GROUP BY key",
];

fn csv_lines(out: &Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "sliq failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Same header, same multiset of rows, and per key (the first column) the
/// same sequence.
fn assert_equivalent(want: &[String], got: &[String]) {
    assert_eq!(got.first(), want.first(), "header");
    assert_eq!(got.len(), want.len(), "row count");
    let mut a = want[1..].to_vec();
    let mut b = got[1..].to_vec();
    a.sort();
    b.sort();
    assert!(a == b, "different rows");
    let by_key = |rows: &[String]| {
        let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for row in rows {
            let key = row.split(',').next().unwrap().to_string();
            keys.entry(key).or_default().push(row.clone());
        }
        keys
    };
    assert!(by_key(&want[1..]) == by_key(&got[1..]), "per-key order");
}

fn run(args: &[&str]) -> Output {
    sliq().args(args).output().expect("sliq runs")
}

#[test]
fn one_and_four_workers_print_what_the_embedded_engine_prints() {
    let path = data_file("one_and_four");
    for select in SELECTS {
        let sql = script(&path, select);
        let want = csv_lines(&run(&["--format", "csv", "-c", &sql]));
        if !select.contains("WHERE") {
            assert_eq!(want.len(), 3001);
        }
        for workers in ["1", "4"] {
            let out = run(&["--workers", workers, "--format", "csv", "-c", &sql]);
            assert_equivalent(&want, &csv_lines(&out));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("rows in 3000"), "{stderr}");
        }
    }
}

fn free_ports(n: usize) -> Vec<String> {
    sliq_timely::Cluster::free_local_addresses(n).expect("free local ports")
}

#[test]
fn two_processes_of_two_workers_print_what_the_embedded_engine_prints() {
    let path = data_file("two_processes");
    for select in SELECTS {
        let sql = script(&path, select);
        let want = csv_lines(&run(&["--format", "csv", "-c", &sql]));
        let hostfile = scratch_dir().join("hosts.txt");
        std::fs::write(&hostfile, free_ports(2).join("\n") + "\n").unwrap();
        let hostfile = hostfile.to_str().unwrap();
        let cluster = |process: &str| {
            let mut cmd = sliq();
            cmd.args([
                "--workers",
                "2",
                "--process",
                process,
                "--processes",
                "2",
                "--hostfile",
                hostfile,
                "--format",
                "csv",
                "-c",
                &sql,
            ]);
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            cmd
        };
        let second = cluster("1").spawn().unwrap();
        let first = cluster("0").output().unwrap();
        let second = second.wait_with_output().unwrap();
        assert_equivalent(&want, &csv_lines(&first));
        // Process 1 prints nothing: its workers' results go to process 0.
        assert!(csv_lines(&second).is_empty());
        let stderr = String::from_utf8_lossy(&second.stderr);
        assert!(
            stderr.contains("process 1: workers 2..=3 processed"),
            "{stderr}"
        );
    }
}

#[test]
fn a_process_without_its_peers_gives_up_with_a_clear_error() {
    let path = data_file("lonely");
    let hostfile = scratch_dir().join("lonely-hosts.txt");
    std::fs::write(&hostfile, free_ports(2).join("\n")).unwrap();
    let start = std::time::Instant::now();
    let out = run(&[
        "--workers",
        "2",
        "--process",
        "1",
        "--processes",
        "2",
        "--hostfile",
        hostfile.to_str().unwrap(),
        "--connect-timeout",
        "1",
        "-c",
        &script(&path, SELECTS[0]),
    ]);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: process 1 could not reach process 0 at 127.0.0.1:"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout");

    let bad = run(&[
        "--workers",
        "2",
        "--process",
        "3",
        "--processes",
        "2",
        "--hostfile",
        hostfile.to_str().unwrap(),
        "-c",
        "SELECT 1",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("process 3 does not exist"));
}

#[test]
fn stats_show_each_worker_and_the_watermark() {
    use rexpect::session::spawn_command;
    let path = data_file("stats");
    let mut cmd = sliq();
    let home = scratch_dir().join("home");
    std::fs::create_dir_all(&home).unwrap();
    cmd.env("HOME", &home);
    cmd.args([
        "--workers",
        "2",
        "--no-demo",
        "--interactive",
        "--format",
        "csv",
        "-c",
        &script(&path, SELECTS[0]),
    ]);
    let mut p = spawn_command(cmd, Some(30_000)).expect("sliq starts in a pty");
    p.exp_string("processed").unwrap();
    p.exp_string("sliq> ").unwrap();
    p.send_line(".stats").unwrap();
    p.exp_regex(r"timely run of SELECT .*: partitioned by key, 3000 rows read here, 3000 rows out, watermark \d+ ms")
        .unwrap();
    p.exp_regex(
        r"worker 0: [1-9]\d* rows in \d+ parts, [1-9]\d* keys, \d+ late, 0 failed values, [1-9]\d* rows out",
    )
    .unwrap();
    p.exp_regex(
        r"worker 1: [1-9]\d* rows in \d+ parts, [1-9]\d* keys, \d+ late, 0 failed values, [1-9]\d* rows out",
    )
    .unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

/// Everything `child` wrote to its piped standard error, to its end.
fn stderr_of(child: &mut std::process::Child) -> String {
    use std::io::Read;
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("standard error piped")
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
}

#[test]
fn a_peer_that_dies_mid_run_ends_the_run_with_an_error() {
    use std::io::Read;
    let hostfile = scratch_dir().join("dying-hosts.txt");
    std::fs::write(&hostfile, free_ports(2).join("\n")).unwrap();
    let sql = "CREATE STREAM g (ts TIMESTAMP, sensor VARCHAR, value DOUBLE) \
               WITH (source = 'generator', rate = 100000, keys = 100, event_time = 'ts'); \
               SELECT sensor, max(value) OVER (ROWS 9 PRECEDING) AS m FROM g GROUP BY sensor;";
    let cluster = |process: &str| {
        let mut cmd = sliq();
        cmd.args([
            "--workers",
            "1",
            "--process",
            process,
            "--processes",
            "2",
            "--hostfile",
            hostfile.to_str().unwrap(),
            "--format",
            "csv",
            "-c",
            sql,
        ]);
        cmd.env_remove("RUST_BACKTRACE");
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().unwrap()
    };
    let mut peer = cluster("1");
    let mut first = cluster("0");
    // Wait until results flow, then kill the peer.
    let mut stdout = first.stdout.take().unwrap();
    let mut buffer = [0u8; 4096];
    let mut seen = 0;
    while seen < 100_000 {
        let n = stdout.read(&mut buffer).unwrap();
        if n == 0 {
            let stderr = stderr_of(&mut first);
            let _ = peer.kill();
            panic!("process 0 ended early ({:?}): {stderr}", first.wait());
        }
        seen += n;
    }
    peer.kill().unwrap();
    peer.wait().unwrap();
    let drain = std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = first.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "process 0 still running after its peer died"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    drain.join().unwrap().unwrap();
    let stderr = stderr_of(&mut first);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("a peer process may have exited"),
        "{stderr}"
    );
}

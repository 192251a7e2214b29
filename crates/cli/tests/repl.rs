//! The REPL in a pseudo-terminal: the demo stream, a query's live results,
//! Ctrl-C back to the prompt, dot commands, and Ctrl-D to leave.

use rexpect::session::spawn_command;

#[test]
fn repl_runs_the_demo_query_and_reads_a_result() {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sliq"));
    // A history file of its own, under cargo's target directory.
    let home = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("repl");
    std::fs::create_dir_all(&home).unwrap();
    cmd.env("HOME", &home);
    let mut p = spawn_command(cmd, Some(30_000)).expect("sliq starts in a pty");
    p.exp_string("A live demo stream is running: sensors")
        .unwrap();
    p.exp_string("sliq> ").unwrap();
    p.send_line("SELECT sensor, value, max(value) OVER (ROWS 99 PRECEDING) AS peak")
        .unwrap();
    p.exp_string("..> ").unwrap();
    p.send_line("FROM sensors GROUP BY sensor;").unwrap();
    // The live table refreshes with the newest rows.
    p.exp_string("| sensor").unwrap();
    p.exp_regex(r"\| sensor-\d\d \| -?\d+\.\d+").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("rows out").unwrap();
    p.exp_string("sliq> ").unwrap();
    p.send_line(".stats").unwrap();
    p.exp_regex(r"stream sensors: \d+ rows \(\d+ rows/s\)")
        .unwrap();
    p.exp_string("MiB resident").unwrap();
    p.send_line(".streams").unwrap();
    p.exp_string("sensors (ts TIMESTAMP, sensor VARCHAR")
        .unwrap();
    p.send_line("SELECT nope FROM sensors;").unwrap();
    p.exp_string("unknown column 'nope' in stream 'sensors'")
        .unwrap();
    p.exp_string("sliq> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

//! The interactive shell (rustyline): multi-line statements ending in `;`,
//! persistent history, and dot commands.

use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use crate::output::OutputFormat;
use crate::session::Session;

const HELP: &str = "\
Statements end with ';' and may span lines. Ctrl-C stops a running query; Ctrl-D exits.
  CREATE STREAM s (ts TIMESTAMP, key VARCHAR, v DOUBLE) WITH (path = 'data.csv', format = 'csv', event_time = 'ts');
  SELECT key, max(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key;
  EXPLAIN SELECT …;  SHOW STREAMS;  SHOW QUERIES;  DESCRIBE s;  DROP STREAM s;
  INSERT INTO s VALUES (…);  SET window_algorithm = 'daba_lite';
Dot commands:
  .help      this text          .streams   list streams
  .queries   list queries       .stats     rows, late rows and keys per stream and query
  .timing on|off                .format table|csv|json
  .quit      leave";

fn banner(demo: bool) {
    println!(
        "sliq {} — continuous SQL over sliding windows. Type .help for help.",
        env!("CARGO_PKG_VERSION")
    );
    if demo {
        println!(
            "A live demo stream is running: sensors (ts TIMESTAMP, sensor VARCHAR, value DOUBLE), ~1000 events/s."
        );
        println!("Try:");
        println!(
            "  SELECT sensor, value, max(value) OVER (ROWS 99 PRECEDING) AS peak FROM sensors GROUP BY sensor;"
        );
        println!(
            "  SELECT sensor, avg(value) OVER (RANGE '10s') AS avg10s, approx_percentile(value, 0.9) OVER (RANGE '1m') AS p90 FROM sensors GROUP BY sensor;"
        );
    }
}

fn history_path() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".sliq_history"))
}

fn dot_command(session: &mut Session, line: &str) -> bool {
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some(".quit" | ".exit"), _) => return false,
        (Some(".help"), _) => println!("{HELP}"),
        (Some(".streams"), _) => report(session.run("SHOW STREAMS")),
        (Some(".queries"), _) => report(session.run("SHOW QUERIES")),
        (Some(".stats"), _) => {
            let stats = session.engine().stats();
            for s in stats.streams {
                println!(
                    "stream {}: {} rows in {} batches, {} late, {} rejected batches",
                    s.name, s.rows, s.batches, s.late_rows, s.rejected_batches
                );
            }
            for q in stats.queries {
                println!(
                    "query {} on {}: {} rows out, keys {:?}, {} late, {} failed results{}",
                    q.id,
                    q.stream,
                    q.rows_out,
                    q.keys,
                    q.late_rows,
                    q.failed_results,
                    q.last_error
                        .map(|e| format!(" (last: {e})"))
                        .unwrap_or_default()
                );
            }
        }
        (Some(".timing"), Some(v)) => session.timing = v.eq_ignore_ascii_case("on"),
        (Some(".format"), Some(f)) => match f.to_ascii_lowercase().as_str() {
            "table" => session.set_format(OutputFormat::Table),
            "csv" => session.set_format(OutputFormat::Csv),
            "json" => session.set_format(OutputFormat::Json),
            other => eprintln!("unknown format '{other}': expected table, csv or json"),
        },
        (Some(other), _) => eprintln!("unknown command {other}; try .help"),
        (None, _) => {}
    }
    true
}

fn report(result: Result<(), crate::session::SessionError>) {
    if let Err(e) = result {
        eprintln!("error: {e}");
    }
}

/// Runs the REPL until `.quit`, Ctrl-D, or Ctrl-C at an empty prompt twice.
pub fn run(session: &mut Session, demo: bool) {
    let mut editor = match DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return;
        }
    };
    let history = history_path();
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    banner(demo);
    let mut pending = String::new();
    let mut interrupts = 0;
    loop {
        let prompt = if pending.is_empty() {
            "sliq> "
        } else {
            "  ..> "
        };
        match editor.readline(prompt) {
            Ok(line) => {
                interrupts = 0;
                let trimmed = line.trim();
                if pending.is_empty() && trimmed.starts_with('.') {
                    let _ = editor.add_history_entry(trimmed);
                    if !dot_command(session, trimmed) {
                        break;
                    }
                    continue;
                }
                pending.push_str(&line);
                pending.push('\n');
                if trimmed.ends_with(';') {
                    let statement = std::mem::take(&mut pending);
                    let _ = editor.add_history_entry(statement.trim());
                    report(session.run(&statement));
                }
            }
            Err(ReadlineError::Interrupted) => {
                if !pending.is_empty() {
                    pending.clear();
                    continue;
                }
                interrupts += 1;
                if interrupts >= 2 {
                    break;
                }
                println!("(Ctrl-C again or Ctrl-D to exit)");
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
}

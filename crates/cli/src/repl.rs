//! The interactive shell (rustyline): multi-line statements ending in `;`,
//! persistent history, and dot commands.

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use sliq_engine::Engine;

use crate::console::{note, say};
use crate::output::OutputFormat;
use crate::session::Session;

const HELP: &str = "\
Statements end with ';' and may span lines. Ctrl-C stops a running query; Ctrl-D exits.
  CREATE STREAM s (ts TIMESTAMP, key VARCHAR, v DOUBLE) WITH (path = 'data.csv', format = 'csv', event_time = 'ts');
  SELECT key, max(v) OVER (ROWS 999 PRECEDING) AS m FROM s GROUP BY key;
  WITH d AS (SELECT ts, key, v - lag(v) OVER (ROWS 1 PRECEDING) AS dv FROM s GROUP BY key)
    SELECT key, max(dv) OVER (RANGE '10s') FROM d GROUP BY key;    -- a query over a query
  SELECT key, v - avg(v) OVER (ROWS BETWEEN 100 PRECEDING AND 1 PRECEDING) AS jump FROM s GROUP BY key;
  EXPLAIN SELECT …;  SHOW STREAMS;  SHOW QUERIES;  SHOW FUNCTIONS [LIKE '%max%'];
  DESCRIBE s;  DROP STREAM s;
  INSERT INTO s VALUES (…);  SET window_algorithm = 'daba';  SHOW ALL;  RESET ALL;
Dot commands:
  .help      this text          .streams   list streams
  .queries   list queries       .stats     rows, late rows and keys per stream and query
  .timing on|off                .format table|csv|json
  .output FILE   results into FILE (emptied first)      .output   results back on the screen
  .read FILE     run the statements in FILE
  .stop      end the queries over streams that only INSERT feeds
  .quit      leave";

/// The dot commands, for tab completion (`dot_command` runs them).
const DOT_COMMANDS: &[&str] = &[
    ".help", ".streams", ".queries", ".stats", ".timing", ".format", ".output", ".read", ".stop",
    ".quit", ".exit",
];

/// SQL keywords offered by tab completion.
const KEYWORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "BY",
    "OVER",
    "PARTITION",
    "ORDER",
    "ROWS",
    "RANGE",
    "BETWEEN",
    "PRECEDING",
    "CURRENT",
    "ROW",
    "UNBOUNDED",
    "AND",
    "OR",
    "NOT",
    "AS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "LIMIT",
    "WINDOW",
    "INTERVAL",
    "CREATE",
    "STREAM",
    "DROP",
    "SHOW",
    "STREAMS",
    "QUERIES",
    "FUNCTIONS",
    "LIKE",
    "QUALIFY",
    "FILTER",
    "EXTRACT",
    "DESCRIBE",
    "EXPLAIN",
    "INSERT",
    "INTO",
    "VALUES",
    "SET",
    "RESET",
    "ALL",
    "WITH",
    "TIMESTAMP",
    "BIGINT",
    "DOUBLE",
    "VARCHAR",
    "BOOLEAN",
    "INT",
    "IGNORE",
    "NULLS",
    "NULL",
];

/// Tab completion of keywords, aggregate functions, streams and columns.
struct SliqHelper {
    engine: Engine,
}

impl SliqHelper {
    fn candidates(&self) -> Vec<String> {
        let mut all: Vec<String> = KEYWORDS.iter().map(|k| k.to_string()).collect();
        all.extend(sliq_aggregates::registry::function_names().map(str::to_string));
        for stream in self.engine.streams() {
            all.extend(stream.schema.fields().iter().map(|f| f.name().clone()));
            all.push(stream.name);
        }
        all.sort();
        all.dedup();
        all
    }
}

impl Completer for SliqHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let before = line.get(..pos).unwrap_or(line);
        let command = before.trim_start();
        if command.starts_with('.') {
            return Ok(complete_dot_command(before, command));
        }
        // The word under the cursor starts after the last character that
        // cannot be in one (which may take several bytes, as `…` does).
        let start = before
            .char_indices()
            .rfind(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        if word.is_empty() {
            return Ok((pos, Vec::new()));
        }
        let lower = word.to_ascii_lowercase();
        let upper = word.chars().next().is_some_and(char::is_uppercase);
        let matches = self
            .candidates()
            .into_iter()
            .filter(|c| c.to_ascii_lowercase().starts_with(&lower))
            .map(|c| {
                if upper && KEYWORDS.contains(&c.as_str()) {
                    c
                } else if KEYWORDS.contains(&c.as_str()) {
                    c.to_ascii_lowercase()
                } else {
                    c
                }
            })
            .collect();
        Ok((start, matches))
    }
}

/// Completes the dot command `command` (the end of `before`, the line up to
/// the cursor), or the file name after `.output` or `.read`.
fn complete_dot_command(before: &str, command: &str) -> (usize, Vec<String>) {
    let start = before.len() - command.len();
    match command.split_once(char::is_whitespace) {
        None => {
            let names = DOT_COMMANDS.iter().filter(|c| c.starts_with(command));
            (start, names.map(|c| c.to_string()).collect())
        }
        Some((".output" | ".read", _)) => {
            let files = rustyline::completion::FilenameCompleter::new();
            match files.complete_path(before, before.len()) {
                Ok((at, pairs)) => (at, pairs.into_iter().map(|p| p.replacement).collect()),
                Err(_) => (before.len(), Vec::new()),
            }
        }
        Some(_) => (before.len(), Vec::new()),
    }
}

impl Hinter for SliqHelper {
    type Hint = String;
}
impl Highlighter for SliqHelper {}
impl Validator for SliqHelper {}
impl Helper for SliqHelper {}

fn banner(demo: bool) {
    say!(
        "sliq {} — continuous SQL over sliding windows. Type .help for help.",
        env!("CARGO_PKG_VERSION")
    );
    if demo {
        say!(
            "A live demo stream is running: sensors (ts TIMESTAMP, sensor VARCHAR, value DOUBLE), ~1000 events/s."
        );
        say!("Try:");
        say!(
            "  SELECT sensor, value, max(value) OVER (ROWS 99 PRECEDING) AS peak FROM sensors GROUP BY sensor;"
        );
        say!(
            "  SELECT sensor, avg(value) OVER (RANGE '10s') AS avg10s, approx_percentile(value, 0.9) OVER (RANGE '1m') AS p90 FROM sensors GROUP BY sensor;"
        );
    }
}

fn history_path() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".sliq_history"))
}

fn dot_command(session: &mut Session, line: &str) -> bool {
    let mut words = line.split_whitespace();
    let (command, argument, extra) = (words.next(), words.next(), words.next());
    match (command, argument) {
        (Some(".quit" | ".exit"), _) => return false,
        (Some(c @ (".help" | ".streams" | ".queries" | ".stats" | ".stop")), Some(_)) => {
            note!("usage: {c} (it takes no argument)")
        }
        (Some(".timing"), Some(_)) if extra.is_some() => note!("usage: .timing on|off"),
        (Some(".format"), Some(_)) if extra.is_some() => note!("usage: .format table|csv|json"),
        (Some(".help"), _) => say!("{HELP}"),
        (Some(".streams"), _) => report(session.run("SHOW STREAMS")),
        (Some(".queries"), _) => report(session.run("SHOW QUERIES")),
        (Some(".stats"), _) => say!("{}", session.stats_report().trim_end()),
        (Some(".stop"), _) => match session.stop_standing(None) {
            0 => note!("no query stands over a stream that only INSERT feeds"),
            n => note!("{n} standing query(ies) ended"),
        },
        (Some(".timing"), v) => match v.map(str::to_ascii_lowercase).as_deref() {
            Some("on") => session.timing = true,
            Some("off") => session.timing = false,
            _ => note!(
                "timing is {}: .timing on|off",
                if session.timing { "on" } else { "off" }
            ),
        },
        (Some(".format"), f) => match f.map(str::to_ascii_lowercase).as_deref() {
            Some("table") => session.set_format(OutputFormat::Table),
            Some("csv") => session.set_format(OutputFormat::Csv),
            Some("json") => session.set_format(OutputFormat::Json),
            Some(other) => note!("unknown format '{other}': expected table, csv or json"),
            None => note!("usage: .format table|csv|json"),
        },
        (Some(".output"), _) => set_output(session, path_argument(line)),
        (Some(".read"), None) => note!("usage: .read FILE"),
        (Some(".read"), Some(_)) => read_script(session, path_argument(line).unwrap_or_default()),
        (Some(other), _) => note!("unknown command {other}; try .help"),
        (None, _) => {}
    }
    true
}

/// The file name after a dot command: the rest of the line, in single
/// quotes or not; `None` when there is none.
fn path_argument(line: &str) -> Option<&str> {
    let (_, rest) = line.trim().split_once(char::is_whitespace)?;
    let rest = rest.trim();
    let path = rest
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or(rest);
    (!path.is_empty()).then_some(path)
}

/// `.output FILE`, or `.output` alone for the screen.
fn set_output(session: &mut Session, path: Option<&str>) {
    report(session.set_output(path));
    match session.output_path() {
        Some(path) => note!("results go to {path}"),
        None => note!("results go to the screen"),
    }
}

/// `.read FILE`: its statements, as `sliq -f FILE` runs them.
fn read_script(session: &mut Session, path: &str) {
    match std::fs::read_to_string(path) {
        Ok(sql) => report(session.run(&sql)),
        Err(e) => note!("error: cannot read {path}: {e}"),
    }
}

fn report(result: Result<(), crate::session::SessionError>) {
    if let Err(e) = result {
        note!("error: {e}");
    }
}

/// Runs the REPL until `.quit`, Ctrl-D, or Ctrl-C at an empty prompt twice.
pub fn run(session: &mut Session, demo: bool) {
    let mut editor: Editor<SliqHelper, DefaultHistory> = match Editor::new() {
        Ok(e) => e,
        Err(e) => {
            note!("error: cannot start the line editor: {e}");
            return;
        }
    };
    editor.set_helper(Some(SliqHelper {
        engine: session.engine().clone(),
    }));
    let history = history_path();
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    session.start_repl();
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
                say!("(Ctrl-C again or Ctrl-D to exit)");
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                note!("error: {e}");
                break;
            }
        }
    }
    if let Some(h) = &history {
        let _ = editor.save_history(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_every_dot_command() {
        for command in DOT_COMMANDS.iter().filter(|c| **c != ".exit") {
            assert!(HELP.contains(&format!("{command} ")), "{command}");
        }
    }

    #[test]
    fn completes_keywords_functions_streams_and_columns() {
        let engine = Engine::new();
        engine
            .execute("CREATE STREAM sensors (ts TIMESTAMP, sensor VARCHAR, value DOUBLE)")
            .unwrap();
        let helper = SliqHelper { engine };
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let complete = |line: &str| helper.complete(line, line.len(), &ctx).unwrap();
        assert_eq!(complete("SEL"), (0, vec!["SELECT".to_string()]));
        assert_eq!(complete("sel"), (0, vec!["select".to_string()]));
        assert_eq!(
            complete("SELECT approx_p"),
            (
                7,
                vec![
                    "approx_percentile".to_string(),
                    "approx_percentile_cont".to_string()
                ]
            )
        );
        let (start, columns) = complete("SELECT max(val");
        assert_eq!(start, 11);
        assert!(columns.contains(&"value".to_string()), "{columns:?}");
        assert_eq!(
            complete("FROM sens").1,
            vec!["sensor".to_string(), "sensors".to_string()]
        );
        assert!(complete("SELECT ").1.is_empty());
        assert_eq!(complete("SHOW FUNC").1, vec!["FUNCTIONS".to_string()]);
        assert_eq!(complete("SELECT QUAL").1, vec!["QUALIFY".to_string()]);
        assert_eq!(complete("SELECT row_n").1, vec!["row_number".to_string()]);
        assert_eq!(complete("  .o"), (2, vec![".output".to_string()]));
        assert_eq!(
            complete(".st").1,
            vec![
                ".streams".to_string(),
                ".stats".to_string(),
                ".stop".to_string()
            ]
        );
        assert!(complete(".format cs").1.is_empty());
        let dir = std::env::temp_dir().join(format!("sliq-complete-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("results.csv"), b"").unwrap();
        let line = format!(".output {}/res", dir.display());
        let (start, files) = complete(&line);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(start, ".output ".len());
        assert_eq!(files, vec![format!("{}/results.csv", dir.display())]);
        // A word after a character of several bytes.
        assert_eq!(complete("SELECT …SEL"), (10, vec!["SELECT".to_string()]));
        assert_eq!(complete("SELECT 'é'"), (11, Vec::<String>::new()));
    }
}

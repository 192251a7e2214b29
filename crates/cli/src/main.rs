//! `sliq`: continuous SQL window queries from the command line.
//!
//! - `sliq`: a REPL with a live demo stream `sensors`.
//! - `sliq -c "STMT; …"` / `sliq -f script.sql`: run statements and exit
//!   (add `--interactive` to continue in the REPL).
//!
//! Exit status: 0 on success, 1 when a statement fails (the error goes to
//! stderr), 2 on bad arguments.

mod generator;
mod output;
mod repl;
mod session;
mod source;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

use crate::output::OutputFormat;
use crate::session::Session;

/// Continuous SQL window queries over live feeds, in worst-case constant time per event.
#[derive(Parser, Debug)]
#[command(name = "sliq", version, about)]
struct Args {
    /// Run these `;`-separated statements, then exit.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    command: Option<String>,
    /// Run the statements in this file, then exit.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    file: Option<PathBuf>,
    /// Start the REPL after -c / -f.
    #[arg(long)]
    interactive: bool,
    /// Result format (default: table on a terminal, csv otherwise).
    #[arg(long, value_enum)]
    format: Option<OutputFormat>,
    /// Start the REPL without the demo stream `sensors`.
    #[arg(long)]
    no_demo: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let format = args.format.unwrap_or(if std::io::stdout().is_terminal() {
        OutputFormat::Table
    } else {
        OutputFormat::Csv
    });
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = Arc::clone(&interrupted);
        // Ctrl-C stops the running query; rustyline handles it at the prompt.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed));
    }
    let mut session = Session::new(format, Arc::clone(&interrupted));
    let scripted = args.command.is_some() || args.file.is_some();
    if let Some(path) = &args.file {
        let sql = match std::fs::read_to_string(path) {
            Ok(sql) => sql,
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                return ExitCode::from(1);
            }
        };
        if let Err(e) = session.run(&sql) {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    }
    if let Some(sql) = &args.command
        && let Err(e) = session.run(sql)
    {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    if scripted && !args.interactive {
        return ExitCode::SUCCESS;
    }
    if !args.no_demo
        && let Err(e) = session.start_demo()
    {
        eprintln!("error: cannot start the demo stream: {e}");
    }
    repl::run(&mut session, !args.no_demo);
    ExitCode::SUCCESS
}

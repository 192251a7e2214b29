//! `sliq`: continuous SQL window queries from the command line.
//!
//! - `sliq`: a REPL with a live demo stream `sensors`.
//! - `sliq -c "STMT; …"` / `sliq -f script.sql`: run statements and exit
//!   (add `--interactive` to continue in the REPL).
//! - `sliq --workers N …`: queries run on N timely dataflow workers,
//!   partitioned by key; with `--process I --processes P --hostfile FILE`,
//!   on P processes (process 0 reads the sources and prints the results).
//!
//! Exit status: 0 on success, 1 when a statement fails (the error goes to
//! stderr), 2 on bad arguments.

mod console;
mod csv_encode;
mod decimal;
mod float_texts;
mod generator;
mod json_floats;
mod output;
mod repl;
mod replay_failures;
mod session;
mod source;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand};

use crate::console::note;
use crate::output::{OutputError, OutputFormat};
use crate::session::{Session, SessionError};

/// mimalloc rather than glibc's malloc: a batch's Arrow buffers are
/// allocated on one thread (reader, windows) and freed on another (windows,
/// output), which glibc's per-thread arenas handle slowly. A 2M-row replay
/// of `max(v) OVER (ROWS 999 PRECEDING)` took 9 % less CPU and wall time.
///
/// With transparent huge pages (mimalloc's default on Linux; set
/// `MIMALLOC_ALLOW_THP=0` to turn them off): a query keeps one window per
/// key, and with a thousand keys of a thousand rows each the windows'
/// blocks span 16 MiB, more than the TLB covers in 4 KiB pages. Each row
/// touches a few pages of a random key's window. With huge pages the `max`
/// replay's windows thread took 67-96 CPU-ms instead of 84-123 (eight
/// alternating runs in a fast and in a slow spell of the machine). An
/// earlier build, whose windows thread was not its slowest, was built
/// without them, after a replay started right after DuckDB waited on the
/// kernel compacting memory (163-221 ms against 157-171); that did not
/// recur in eighteen such rounds.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Continuous SQL window queries over live feeds, in worst-case constant time per event.
#[derive(Parser, Debug)]
#[command(name = "sliq", version, about)]
struct Args {
    /// Run these `;`-separated statements, then exit.
    #[arg(
        short = 'c',
        long = "command",
        value_name = "SQL",
        allow_hyphen_values = true
    )]
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
    /// Run queries on this many timely dataflow worker threads (per
    /// process), partitioned by key, instead of the embedded engine.
    #[arg(long, value_name = "N", value_parser = thread_count)]
    workers: Option<usize>,
    /// This process's index in a cluster (0 reads the sources and prints).
    #[arg(long, value_name = "I", default_value_t = 0, requires = "hostfile")]
    process: usize,
    /// Number of processes in the cluster.
    #[arg(long, value_name = "P", default_value_t = 1, requires = "hostfile", value_parser = thread_count)]
    processes: usize,
    /// The cluster's addresses: one `host:port` line per process, in order.
    #[arg(long, value_name = "FILE")]
    hostfile: Option<PathBuf>,
    /// Seconds to wait for the other processes of the cluster.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    connect_timeout: f64,
    #[command(subcommand)]
    tool: Option<Tool>,
}

/// Tools besides the query runner.
#[derive(Subcommand, Debug)]
enum Tool {
    /// The DEBS 2012 Grand Challenge data.
    Debs {
        #[command(subcommand)]
        action: DebsAction,
    },
}

#[derive(Subcommand, Debug)]
enum DebsAction {
    /// Write synthetic DEBS 2012 data in the original text format.
    Generate {
        /// Number of events.
        #[arg(long, default_value_t = 1_000_000)]
        events: u64,
        /// Seed: the same seed writes the same file.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Fraction of events written out of order.
        #[arg(long, default_value_t = 0.015)]
        out_of_order: f64,
        /// Fraction of lines glued to the next record.
        #[arg(long, default_value_t = 0.0)]
        glued: f64,
        /// Output file (standard output if absent).
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
    },
}

/// Runs `sliq debs generate …`.
fn debs_generate(action: DebsAction) -> ExitCode {
    let DebsAction::Generate {
        events,
        seed,
        out_of_order,
        glued,
        output,
    } = action;
    let config = sliq_debs::GeneratorConfig {
        events,
        seed,
        out_of_order,
        glued,
    };
    let result = match &output {
        Some(path) => std::fs::File::create(path).and_then(|f| {
            let mut out = std::io::BufWriter::new(f);
            let late = sliq_debs::generate(&config, &mut out)?;
            std::io::Write::flush(&mut out)?;
            Ok(late)
        }),
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            sliq_debs::generate(&config, &mut out)
                .and_then(|late| std::io::Write::flush(&mut out).map(|()| late))
        }
    };
    match result {
        Ok(late) => {
            note!("wrote {events} events ({late} out of order)");
            ExitCode::SUCCESS
        }
        // Its reader stopped early (`sliq debs generate | head`).
        Err(e) if output.is_none() && e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            let place = output
                .as_ref()
                .map_or_else(|| "stdout".to_string(), |p| p.display().to_string());
            note!("error: writing {place}: {e}");
            ExitCode::from(1)
        }
    }
}

/// The most workers per process, and processes per cluster, the binary starts.
const MAX_THREADS: usize = 1024;

/// Parses a worker or process count: 1 to [`MAX_THREADS`].
fn thread_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number from 1 to {MAX_THREADS}")),
    }
}

/// The timely settings asked for, if any (`--workers`, or a cluster).
fn timely_config(args: &Args) -> Result<Option<sliq_timely::Config>, sliq_timely::TimelyError> {
    let workers = args.workers.unwrap_or(1);
    let timeout = std::time::Duration::from_secs_f64(args.connect_timeout.max(0.0));
    let config = match &args.hostfile {
        Some(hostfile) => {
            sliq_timely::Config::from_hostfile(workers, args.process, args.processes, hostfile)?
        }
        None if args.workers.is_some() => sliq_timely::Config::workers(workers),
        None => return Ok(None),
    };
    config.check()?;
    Ok(Some(config.connect_timeout(timeout)))
}

/// Panics (a bug, or timely's network threads when a peer process goes
/// away) print one line naming the thread, unless `RUST_BACKTRACE` asks
/// for the full report; the failure itself surfaces as an error. A panic
/// sliq catches (an expression kernel's, or a function's trial run at plan
/// time; see [`sliq_engine::panic_is_caught`]) prints nothing here: the
/// engine counts it with its message, and the query goes on.
fn install_panic_hook() {
    let full_report = std::panic::take_hook();
    let backtrace = std::env::var_os("RUST_BACKTRACE").is_some();
    std::panic::set_hook(Box::new(move |info| {
        if sliq_engine::panic_is_caught() {
            return;
        }
        if backtrace {
            return full_report(info);
        }
        let thread = std::thread::current();
        note!(
            "sliq: thread '{}' failed: {}",
            thread.name().unwrap_or("unnamed"),
            info.payload_as_str().unwrap_or("no message")
        );
    }));
}

/// A script's exit on error: 1 with the error, except when the reader of
/// standard output closed it (`sliq -c … | head`), which ends it quietly.
fn script_failed(error: &SessionError) -> ExitCode {
    if matches!(error, SessionError::Output(OutputError::Closed)) {
        return ExitCode::SUCCESS;
    }
    note!("error: {error}");
    ExitCode::from(1)
}

fn main() -> ExitCode {
    install_panic_hook();
    let args = Args::parse();
    if let Some(Tool::Debs { action }) = args.tool {
        return debs_generate(action);
    }
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
    match timely_config(&args) {
        Ok(Some(config)) => session.use_timely(config),
        Ok(None) => {}
        Err(e) => {
            note!("error: {e}");
            return ExitCode::from(2);
        }
    }
    let scripted = args.command.is_some() || args.file.is_some();
    if let Some(path) = &args.file {
        let sql = match std::fs::read_to_string(path) {
            Ok(sql) => sql,
            Err(e) => {
                note!("error: cannot read {}: {e}", path.display());
                return ExitCode::from(1);
            }
        };
        if let Err(e) = session.run(&sql) {
            return script_failed(&e);
        }
    }
    if let Some(sql) = &args.command
        && let Err(e) = session.run(sql)
    {
        return script_failed(&e);
    }
    if scripted && !args.interactive {
        return ExitCode::SUCCESS;
    }
    if !args.no_demo
        && let Err(e) = session.start_demo()
    {
        note!("error: cannot start the demo stream: {e}");
    }
    repl::run(&mut session, !args.no_demo);
    ExitCode::SUCCESS
}

//! Writing to standard output and standard error without panicking.
//!
//! `println!` and `eprintln!` panic when their stream is closed, and a
//! script's output is often a pipe whose reader stops early
//! (`sliq -c … 2>&1 | head`). Messages on standard error go through
//! [`note!`], which drops what cannot be written (there is no one left to
//! tell). What a statement prints on standard output goes through
//! [`write_stdout`], whose [`OutputError::Closed`] ends a script quietly.

use std::io::Write;

use crate::output::OutputError;

/// `eprintln!` that ignores a closed or failing standard error.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use note;

/// `println!` that ignores a closed or failing standard output, for the
/// REPL's own banners and help (a statement's output uses [`write_stdout`]).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
pub(crate) use say;

/// Writes `bytes` to standard output and flushes: [`OutputError::Closed`]
/// when its reader has gone, [`OutputError::Failed`] on any other error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), OutputError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => OutputError::Closed,
            _ => OutputError::Failed(format!("writing output: {e}")),
        })
}

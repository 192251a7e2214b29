//! Which TCP client sent each line of a socket source, for messages about a
//! line.
//!
//! The clients of a `source = 'tcp'` stream write their lines, whole, into
//! one pipe that the stream reads as a single text; its line numbers count
//! over all clients. [`ClientLines`] records, as each line goes into the
//! pipe, whose line it is, so that a malformed line is named by its client
//! and its line number there.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

/// The record shared by a socket's client threads and its reader.
pub(crate) type SharedClientLines = Arc<Mutex<ClientLines>>;

/// The clients' lines in the order they went into the pipe, as runs of
/// consecutive lines of one client. Lines are numbered from 1, on both
/// sides.
#[derive(Debug, Default)]
pub(crate) struct ClientLines {
    /// `(first line in the pipe, client, that line's number at the client)`,
    /// the first lines in increasing order.
    runs: VecDeque<(usize, Arc<str>, usize)>,
    /// Lines written into the pipe so far.
    written: usize,
}

impl ClientLines {
    /// Records the next line of the pipe: line `its_line` of `client`.
    pub(crate) fn record(&mut self, client: &Arc<str>, its_line: usize) {
        self.written += 1;
        let continues = self.runs.back().is_some_and(|(first, c, its_first)| {
            Arc::ptr_eq(c, client) && its_first + (self.written - first) == its_line
        });
        if !continues {
            self.runs
                .push_back((self.written, Arc::clone(client), its_line));
        }
    }

    /// The client that sent line `line` of the pipe, and its number there;
    /// `None` for a line not recorded (or forgotten).
    pub(crate) fn origin(&self, line: usize) -> Option<(Arc<str>, usize)> {
        if line > self.written {
            return None;
        }
        let run = self.runs.partition_point(|(first, ..)| *first <= line);
        let (first, client, its_first) = self.runs.get(run.checked_sub(1)?)?;
        Some((Arc::clone(client), its_first + (line - first)))
    }

    /// Forgets the runs that hold only lines before `line`, which the
    /// reader will not name again: memory follows the lines not yet read.
    pub(crate) fn forget_before(&mut self, line: usize) {
        while self.runs.get(1).is_some_and(|(first, ..)| *first <= line) {
            self.runs.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_interleaved_clients_are_named_by_their_client() {
        let (a, b): (Arc<str>, Arc<str>) = ("a:1".into(), "b:2".into());
        let mut lines = ClientLines::default();
        for (client, its_line) in [(&a, 1), (&a, 2), (&b, 1), (&a, 3), (&b, 2), (&b, 3)] {
            lines.record(client, its_line);
        }
        let named = |lines: &ClientLines, line| {
            lines
                .origin(line)
                .map(|(client, its_line)| (client.to_string(), its_line))
        };
        let expected = [
            ("a:1", 1),
            ("a:1", 2),
            ("b:2", 1),
            ("a:1", 3),
            ("b:2", 2),
            ("b:2", 3),
        ];
        for (line, (client, its_line)) in (1..).zip(expected) {
            assert_eq!(named(&lines, line), Some((client.to_string(), its_line)));
        }
        assert_eq!(named(&lines, 0), None);
        assert_eq!(named(&lines, 7), None);
        assert_eq!(lines.runs.len(), 4, "one run per change of client");

        // Forgotten runs are the ones wholly before the line asked for.
        lines.forget_before(5);
        assert_eq!(lines.runs.len(), 1);
        assert_eq!(named(&lines, 5), Some(("b:2".to_string(), 2)));
        assert_eq!(named(&lines, 3), None);
    }

    #[test]
    fn a_client_that_reconnects_starts_a_run_of_its_own() {
        let (first, again): (Arc<str>, Arc<str>) = ("a:1".into(), "a:1".into());
        let mut lines = ClientLines::default();
        lines.record(&first, 1);
        lines.record(&again, 1);
        assert_eq!(lines.origin(2).map(|(_, n)| n), Some(1));
    }
}

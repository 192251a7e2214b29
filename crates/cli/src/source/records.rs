//! Where a record of a text source ends.
//!
//! A JSON-lines record is a line. A CSV record ends at the first line break
//! outside a quoted cell: a quoted cell may hold line breaks (RFC 4180), as
//! spreadsheets write a cell of several lines. The quoting rules are those
//! of csv-core, which arrow-csv decodes with: a quote opens a quoted cell
//! only where the cell starts, a doubled quote inside one is a quote, and
//! elsewhere a quote is text.

use super::{Format, TextOptions};

/// How the records of a text source end.
#[derive(Clone, Copy, Debug)]
pub(super) struct RecordEnds {
    /// CSV's cell delimiter; `None` for a format whose records are lines.
    csv_delimiter: Option<u8>,
}

impl RecordEnds {
    pub(super) fn of(text: &TextOptions) -> Self {
        RecordEnds {
            csv_delimiter: (text.format == Format::Csv).then_some(text.delimiter),
        }
    }

    /// The length of the record at the start of `bytes`, its line break
    /// included; `None` when `bytes` ends inside it.
    #[inline]
    pub(super) fn first_len(self, bytes: &[u8]) -> Option<usize> {
        let line_break = memchr::memchr(b'\n', bytes)?;
        match self.csv_delimiter {
            // A line without a quote is a record whole (the common case,
            // found without looking at each byte).
            Some(delimiter) if memchr::memchr(b'"', &bytes[..line_break]).is_some() => {
                csv_record_len(bytes, delimiter)
            }
            _ => Some(line_break + 1),
        }
    }

    /// Whether `record`, read from a record's start up to a line break,
    /// goes on past it: the break lies inside a quoted cell.
    pub(super) fn is_open(self, record: &[u8]) -> bool {
        self.first_len(record).is_none()
    }

    /// The whole records of `bytes`, in order, each with its line break;
    /// a record `bytes` ends inside is left out.
    pub(super) fn whole(self, bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
        let mut rest = bytes;
        std::iter::from_fn(move || {
            let (record, after) = rest.split_at(self.first_len(rest)?);
            rest = after;
            Some(record)
        })
    }

    /// The length of the whole records at the start of `bytes`, at most
    /// `most` of them.
    pub(super) fn whole_len(self, bytes: &[u8], most: usize) -> usize {
        self.whole(bytes).take(most).map(<[u8]>::len).sum()
    }
}

/// Where csv-core stands in a record, as far as line breaks go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cell {
    /// At the start of a cell: a quote here opens a quoted cell.
    Start,
    /// In a cell that is not quoted, or in what follows a quoted cell's
    /// closing quote: a quote is text.
    Plain,
    /// In a quoted cell: a line break is text.
    Quoted,
    /// Just past a quote inside a quoted cell: a second quote makes it a
    /// quote in the text; anything else closed the cell.
    QuoteInQuoted,
}

/// [`RecordEnds::first_len`] of a CSV record, byte by byte.
fn csv_record_len(bytes: &[u8], delimiter: u8) -> Option<usize> {
    let mut cell = Cell::Start;
    for (at, &b) in bytes.iter().enumerate() {
        cell = match (cell, b) {
            (Cell::Quoted, b'"') => Cell::QuoteInQuoted,
            (Cell::Quoted, _) => Cell::Quoted,
            (Cell::Start | Cell::QuoteInQuoted, b'"') => Cell::Quoted,
            (_, b'\n') => return Some(at + 1),
            (_, b) if b == delimiter => Cell::Start,
            _ => Cell::Plain,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const CSV: RecordEnds = RecordEnds {
        csv_delimiter: Some(b','),
    };

    #[test]
    fn a_quoted_cell_holds_line_breaks() {
        let text = b"1,\"two\nlines\",3\n4,5,6\n";
        assert_eq!(CSV.first_len(text), Some(16));
        assert!(
            CSV.whole(text)
                .eq([&b"1,\"two\nlines\",3\n"[..], b"4,5,6\n"])
        );
        assert_eq!(CSV.whole_len(text, 10), text.len());
        assert_eq!(CSV.whole_len(text, 1), 16);
        // A record not yet whole is not taken.
        assert_eq!(CSV.first_len(b"1,\"two\n"), None);
        assert_eq!(CSV.whole_len(b"4,5,6\n1,\"two\n", 10), 6);
    }

    #[test]
    fn quotes_open_a_quoted_cell_only_at_its_start() {
        // Text quotes: inside a plain cell, and after a closing quote.
        assert_eq!(CSV.first_len(b"1,a\"b,3\n4\n"), Some(8));
        assert_eq!(CSV.first_len(b"1,\"a\"b\"c,3\n"), Some(11));
        // A doubled quote is a quote in the cell, which goes on.
        assert_eq!(CSV.first_len(b"\"a\"\"\nb\",3\n"), Some(10));
        // Another delimiter.
        let tabs = RecordEnds {
            csv_delimiter: Some(b'\t'),
        };
        assert_eq!(tabs.first_len(b"1\t\"a\nb\"\n"), Some(8));
        assert_eq!(CSV.first_len(b"1\t\"a\nb\"\n"), Some(5));
    }

    #[test]
    fn a_json_record_is_a_line() {
        let json = RecordEnds {
            csv_delimiter: None,
        };
        assert_eq!(json.first_len(b"{\"a\": \"\n\"}\n"), Some(8));
    }

    /// A cell as csv-core reads it, and as a writer would quote it.
    fn cell() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9 ]{0,4}",
            "[a-z\"\n,]{0,6}".prop_map(|s| format!("\"{}\"", s.replace('"', "\"\""))),
            // Malformed quoting, as csv-core still reads it.
            "[a-z]{0,2}\"[a-z\n]{0,3}",
        ]
    }

    proptest! {
        /// The records found are the ones csv-core reads, each whole.
        #[test]
        fn records_end_where_csv_core_ends_them(
            rows in prop::collection::vec(prop::collection::vec(cell(), 1..4), 1..6)
        ) {
            // (No blank line: the reader leaves those out before.)
            let text: String = rows
                .iter()
                .map(|cells| match cells.join(",") {
                    blank if blank.is_empty() => "x\n".to_string(),
                    line => line + "\n",
                })
                .collect();
            let bytes = text.as_bytes();
            let records: Vec<&[u8]> = CSV.whole(bytes).collect();
            let taken = CSV.whole_len(bytes, usize::MAX);
            let mut reader = csv_core::Reader::new();
            let (mut output, mut ends) = (vec![0; bytes.len() + 1], vec![0; bytes.len() + 1]);
            // csv-core reads a blank line as part of the record after it;
            // the reader leaves blank records out.
            let (mut at, mut blank) = (0, 0);
            for record in &records {
                if record == b"\n" {
                    blank += 1;
                    continue;
                }
                let (result, read, _, _) = reader.read_record(&bytes[at..], &mut output, &mut ends);
                prop_assert_eq!(result, csv_core::ReadRecordResult::Record);
                prop_assert_eq!(read, blank + record.len(), "{:?}", String::from_utf8_lossy(record));
                (at, blank) = (at + read, 0);
            }
            prop_assert_eq!(at + blank, taken);
            // What is left is a record that csv-core does not end either.
            if taken < bytes.len() {
                let (result, ..) = reader.read_record(&bytes[at..], &mut output, &mut ends);
                prop_assert_eq!(result, csv_core::ReadRecordResult::InputEmpty);
            }
        }
    }
}

//! The DEBS 2012 Grand Challenge manufacturing data as Arrow record batches.
//!
//! The file (`allData.txt`, 32M lines at about 100 Hz) has no header and 56
//! tab-separated fields per line, CRLF line endings and timestamps like
//! `2012-02-22T16:46:28.9670320+00:00`. [`DebsReader`] streams it (plain or
//! gzip) into batches of [`schema()`]:
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `ts` | `Timestamp(µs)` | event time, UTC (100 ns digits truncated to µs) |
//! | `index` | `Int64` | running record number |
//! | `mf01`…`mf03` | `Int64` | electrical power, main phases 1–3 |
//! | `pc13`…`pc15`, `pc25`…`pc27`, `res` | `Int64` | anode current and voltage drops, reserved |
//! | `bm05`…`bm07` | `Boolean` | chemical additive sensors A–C |
//! | `bm08`…`bm10` | `Boolean` | their release valves |
//! | `pp01`…`pp21`, `pp31`…`pp36`, `pc01`…`pc06`, `pc19`…`pc23` | `Boolean` | undocumented flags |
//!
//! Lines holding two records glued together (111 fields: the first record's
//! last flag runs into the second's timestamp) are split; malformed lines are
//! reported with their line number, counted, and skipped; the cleaned-copy
//! timestamp variant `YYYY-MM-DD HH:MM:SS.fff` is accepted too. Events whose
//! time goes backwards are dropped (as the paper did, counted) or reordered
//! within a bounded delay: see [`OutOfOrder`].

use std::cmp::Reverse;
mod generate;

pub use generate::{GeneratorConfig, format_timestamp, generate};

use std::collections::BinaryHeap;
use std::io::{self, BufRead, BufReader, Read};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Int64Builder, TimestampMicrosecondBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

/// Field names, in file order.
pub const FIELDS: [&str; 56] = [
    "ts", "index", "mf01", "mf02", "mf03", "pc13", "pc14", "pc15", "pc25", "pc26", "pc27", "res",
    "bm05", "bm06", "bm07", "bm08", "bm09", "bm10", "pp01", "pp02", "pp03", "pp04", "pp05", "pp06",
    "pp07", "pp08", "pp09", "pp10", "pp11", "pp12", "pp13", "pp14", "pp15", "pp16", "pp17", "pp18",
    "pp19", "pp20", "pp21", "pp31", "pp32", "pp33", "pp34", "pp35", "pp36", "pc01", "pc02", "pc03",
    "pc04", "pc05", "pc06", "pc19", "pc20", "pc21", "pc22", "pc23",
];

/// Fields 1..12 are integers; 12.. are 0/1 flags.
const FIRST_FLAG: usize = 12;

/// The most fields a line is split into: two glued records, plus a
/// trailing separator or two.
const MAX_FIELDS: usize = 114;

/// The Arrow schema of the batches.
pub fn schema() -> SchemaRef {
    let fields: Vec<Field> = FIELDS
        .iter()
        .enumerate()
        .map(|(i, name)| match i {
            0 => Field::new(
                *name,
                DataType::Timestamp(TimeUnit::Microsecond, None),
                false,
            ),
            i if i < FIRST_FLAG => Field::new(*name, DataType::Int64, false),
            _ => Field::new(*name, DataType::Boolean, false),
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// What to do with an event older than one already read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutOfOrder {
    /// Drop it (the paper's choice: about 1.5 % of the full file).
    Drop,
    /// Hold events up to this many microseconds and emit them in time
    /// order; events later than that are dropped.
    Reorder {
        /// The bounded delay, in microseconds.
        delay_us: i64,
    },
}

/// A line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct Malformed {
    /// 1-based line number.
    pub line: u64,
    /// What is wrong with it.
    pub message: String,
}

/// Counters of a read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Lines read.
    pub lines: u64,
    /// Records emitted.
    pub records: u64,
    /// Lines that held two records.
    pub glued: u64,
    /// Malformed lines skipped.
    pub malformed: u64,
    /// Events dropped for being out of order.
    pub dropped: u64,
    /// Events emitted in a different order than read.
    pub reordered: u64,
    /// The first few malformed lines, for reports.
    pub first_errors: Vec<Malformed>,
}

/// One parsed record.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Record {
    ts_us: i64,
    /// Read order, so that equal timestamps keep their order in the heap.
    seq: u64,
    ints: [i64; FIRST_FLAG - 1],
    flags: [bool; 56 - FIRST_FLAG],
}

/// Streams DEBS 2012 records as Arrow batches; see the crate docs.
pub struct DebsReader {
    input: Box<dyn BufRead + Send>,
    policy: OutOfOrder,
    /// Indices into [`FIELDS`] of the columns the batches hold, in order.
    columns: Vec<usize>,
    schema: SchemaRef,
    batch_rows: usize,
    stats: ReadStats,
    newest: Option<i64>,
    held: BinaryHeap<Reverse<Record>>,
    line: Vec<u8>,
    /// Where the fields of the line being read are in it.
    spans: Vec<Range<usize>>,
    done: bool,
}

impl DebsReader {
    /// Reads `input` (plain text or gzip, detected by its magic bytes).
    pub fn new(input: impl Read + Send + 'static, policy: OutOfOrder) -> io::Result<Self> {
        let mut buffered = BufReader::with_capacity(1 << 20, input);
        let gzip = buffered.fill_buf()?.starts_with(&[0x1f, 0x8b]);
        let input: Box<dyn BufRead + Send> = if gzip {
            Box::new(BufReader::with_capacity(
                1 << 20,
                flate2::read::MultiGzDecoder::new(buffered),
            ))
        } else {
            Box::new(buffered)
        };
        Ok(DebsReader {
            input,
            policy,
            columns: (0..FIELDS.len()).collect(),
            schema: schema(),
            batch_rows: 8192,
            stats: ReadStats::default(),
            newest: None,
            held: BinaryHeap::new(),
            line: Vec::new(),
            spans: Vec::with_capacity(MAX_FIELDS),
            done: false,
        })
    }

    /// Batches holding only these columns (indices into [`FIELDS`], in the
    /// order given; the default is all 56). Every field of every line is
    /// still parsed and checked, so the same lines count as malformed; only
    /// the columns nobody reads are not built. An index past the last field
    /// is an `InvalidInput` error.
    pub fn with_columns(mut self, columns: &[usize]) -> io::Result<Self> {
        if let Some(&bad) = columns.iter().find(|&&c| c >= FIELDS.len()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("column {bad}: the DEBS data has {} fields", FIELDS.len()),
            ));
        }
        let all = schema();
        self.schema = Arc::new(all.project(columns).map_err(io::Error::other)?);
        self.columns = columns.to_vec();
        Ok(self)
    }

    /// The schema of the batches: [`schema()`], or the columns chosen with
    /// [`with_columns`](Self::with_columns).
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    /// Rows per batch (default 8192).
    pub fn with_batch_rows(mut self, rows: usize) -> Self {
        self.batch_rows = rows.max(1);
        self
    }

    /// Counters so far.
    pub fn stats(&self) -> &ReadStats {
        &self.stats
    }

    fn malformed(&mut self, message: String) {
        self.stats.malformed += 1;
        if self.stats.first_errors.len() < 10 {
            self.stats.first_errors.push(Malformed {
                line: self.stats.lines,
                message,
            });
        }
    }

    /// Reads the next line's records into `out` (in time order per policy).
    fn read_line(&mut self, out: &mut Vec<Record>) -> io::Result<bool> {
        self.line.clear();
        if self.input.read_until(b'\n', &mut self.line)? == 0 {
            return Ok(false);
        }
        self.stats.lines += 1;
        let text = match std::str::from_utf8(&self.line) {
            Ok(t) => t.trim_end_matches(['\r', '\n']),
            Err(_) => {
                self.malformed("not UTF-8".into());
                return Ok(true);
            }
        };
        if text.trim().is_empty() {
            return Ok(true);
        }
        let mut count = split_fields(text, &mut self.spans);
        let spans = &self.spans;
        // Tabs are ASCII: every span lies on character boundaries.
        let field = |i: usize| {
            let span = spans.get(i).cloned().unwrap_or_default();
            text.get(span).unwrap_or_default()
        };
        // Trailing separators (an empty last field) are harmless.
        while count > 56
            && count != 111
            && count <= MAX_FIELDS
            && field(count - 1).trim().is_empty()
        {
            count -= 1;
        }
        let (first, second) = match count {
            56 => (parse_record(field), None),
            111 => {
                // The first record's last flag runs into the second's timestamp.
                self.stats.glued += 1;
                match field(55).split_at_checked(1) {
                    Some((flag, ts)) => {
                        let first = |i| if i == 55 { flag } else { field(i) };
                        let second = |i| if i == 0 { ts } else { field(55 + i) };
                        (parse_record(first), Some(parse_record(second)))
                    }
                    _ => (
                        Err("glued line whose field 56 does not start with a flag".to_string()),
                        None,
                    ),
                }
            }
            n => (
                Err(format!(
                    "{n} fields, expected 56 (or 111 for two glued records)"
                )),
                None,
            ),
        };
        for record in std::iter::once(first).chain(second) {
            match record {
                Ok(mut r) => {
                    r.seq = self.stats.lines;
                    self.admit(r, out);
                }
                Err(message) => self.malformed(message),
            }
        }
        Ok(true)
    }

    /// Applies the out-of-order policy.
    fn admit(&mut self, r: Record, out: &mut Vec<Record>) {
        match self.policy {
            OutOfOrder::Drop => {
                if self.newest.is_some_and(|n| r.ts_us < n) {
                    self.stats.dropped += 1;
                } else {
                    self.newest = Some(r.ts_us);
                    out.push(r);
                }
            }
            OutOfOrder::Reorder { delay_us } => {
                let newest = self.newest.map_or(r.ts_us, |n| n.max(r.ts_us));
                let emitted_up_to = self.newest.map(|n| n - delay_us);
                if emitted_up_to.is_some_and(|bound| r.ts_us < bound) {
                    self.stats.dropped += 1;
                    return;
                }
                if self.newest.is_some_and(|n| r.ts_us < n) {
                    self.stats.reordered += 1;
                }
                self.newest = Some(newest);
                self.held.push(Reverse(r));
                while self
                    .held
                    .peek()
                    .is_some_and(|Reverse(h)| h.ts_us < newest - delay_us)
                {
                    if let Some(Reverse(h)) = self.held.pop() {
                        out.push(h);
                    }
                }
            }
        }
    }

    /// The next batch, or `None` at the end.
    pub fn next_batch(&mut self) -> io::Result<Option<RecordBatch>> {
        let mut records = Vec::with_capacity(self.batch_rows);
        while !self.done && records.len() < self.batch_rows {
            if !self.read_line(&mut records)? {
                self.done = true;
                while let Some(Reverse(h)) = self.held.pop() {
                    records.push(h);
                }
            }
        }
        if records.is_empty() {
            return Ok(None);
        }
        self.stats.records += records.len() as u64;
        Ok(Some(to_batch(&records, &self.columns, &self.schema)))
    }
}

impl Iterator for DebsReader {
    type Item = io::Result<RecordBatch>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().transpose()
    }
}

/// The batch of `records` holding `columns` (indices into [`FIELDS`]),
/// whose schema is `schema`.
fn to_batch(records: &[Record], columns: &[usize], schema: &SchemaRef) -> RecordBatch {
    let n = records.len();
    let arrays: Vec<ArrayRef> = columns
        .iter()
        .map(|&c| -> ArrayRef {
            match c {
                0 => {
                    let mut b = TimestampMicrosecondBuilder::with_capacity(n);
                    records.iter().for_each(|r| b.append_value(r.ts_us));
                    Arc::new(b.finish())
                }
                c if c < FIRST_FLAG => {
                    let mut b = Int64Builder::with_capacity(n);
                    records.iter().for_each(|r| b.append_value(r.ints[c - 1]));
                    Arc::new(b.finish())
                }
                c => {
                    let mut b = BooleanBuilder::with_capacity(n);
                    records
                        .iter()
                        .for_each(|r| b.append_value(r.flags[c - FIRST_FLAG]));
                    Arc::new(b.finish())
                }
            }
        })
        .collect();
    // The columns match the schema by construction.
    RecordBatch::try_new(Arc::clone(schema), arrays)
        .unwrap_or_else(|_| RecordBatch::new_empty(Arc::clone(schema)))
}

/// Splits `text` at tabs into `spans` (the first [`MAX_FIELDS`] fields;
/// the rest are only counted) and returns the number of fields.
fn split_fields(text: &str, spans: &mut Vec<Range<usize>>) -> usize {
    spans.clear();
    let mut count = 0;
    let mut start = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if b == b'\t' {
            if count < MAX_FIELDS {
                spans.push(start..i);
            }
            count += 1;
            start = i + 1;
        }
    }
    if count < MAX_FIELDS {
        spans.push(start..text.len());
    }
    count + 1
}

/// The record whose field `i` (of 56) is `field(i)`.
fn parse_record<'a>(field: impl Fn(usize) -> &'a str) -> Result<Record, String> {
    let ts = field(0);
    let ts_us = parse_timestamp(ts).ok_or_else(|| format!("bad timestamp '{ts}'"))?;
    let mut ints = [0i64; FIRST_FLAG - 1];
    for (i, slot) in ints.iter_mut().enumerate() {
        let f = field(i + 1);
        // Fields rarely carry spaces: trim only when a plain parse fails.
        if let Ok(v) = f.parse() {
            *slot = v;
            continue;
        }
        let f = f.trim();
        *slot = f.parse().map_err(|_| {
            format!(
                "field {} ({}) is '{f}', expected an integer",
                i + 2,
                FIELDS[i + 1]
            )
        })?;
    }
    let mut flags = [false; 56 - FIRST_FLAG];
    for (i, slot) in flags.iter_mut().enumerate() {
        let f = field(i + FIRST_FLAG);
        *slot = match f.as_bytes() {
            b"0" => false,
            b"1" => true,
            _ => match f.trim() {
                "0" => false,
                "1" => true,
                other => {
                    return Err(format!(
                        "field {} ({}) is '{other}', expected 0 or 1",
                        i + FIRST_FLAG + 1,
                        FIELDS[i + FIRST_FLAG]
                    ));
                }
            },
        };
    }
    Ok(Record {
        ts_us,
        seq: 0,
        ints,
        flags,
    })
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2012-02-22T16:46:28.9670320+00:00` or `2012-02-22 16:46:28.967` → µs
/// since the epoch (UTC; a numeric offset is applied).
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let b = text.trim().as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (digits(&b[0..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let (h, mi, s) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &b[19..];
    let mut micros = 0i64;
    if let Some(frac) = rest.strip_prefix(b".") {
        let count = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if count == 0 {
            return None;
        }
        // Microseconds: the first six digits, the rest truncated.
        let kept = count.min(6);
        micros = digits(&frac[..kept])? * 10i64.pow((6 - kept) as u32);
        rest = &frac[count..];
    }
    let offset_s = match rest {
        b"" | b"Z" => 0,
        [sign @ (b'+' | b'-'), hours @ .., b':', m1, m2] if hours.len() == 2 => {
            let sign = if *sign == b'-' { -1 } else { 1 };
            sign * (digits(hours)? * 3600 + digits(&[*m1, *m2])? * 60)
        }
        _ => return None,
    };
    let seconds = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset_s;
    Some(seconds * 1_000_000 + micros)
}

/// The value of an all-digit byte string (at most 18 digits here).
fn digits(bytes: &[u8]) -> Option<i64> {
    bytes.iter().try_fold(0i64, |value, &b| {
        b.is_ascii_digit().then(|| value * 10 + i64::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_to_utc_microseconds() {
        // 2012-02-22T16:46:28Z = 1329929188 s.
        assert_eq!(
            parse_timestamp("2012-02-22T16:46:28.9670320+00:00"),
            Some(1_329_929_188_967_032)
        );
        assert_eq!(
            parse_timestamp("2012-02-22 16:46:28.967"),
            Some(1_329_929_188_967_000)
        );
        assert_eq!(
            parse_timestamp("2012-02-22T18:46:28.5+02:00"),
            Some(1_329_929_188_500_000)
        );
        assert_eq!(parse_timestamp("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_timestamp("2012-13-22T16:46:28"), None);
        assert_eq!(parse_timestamp("yesterday"), None);
        // Bad input is refused, never a panic (a multi-byte character
        // straddling a field boundary used to panic on slicing).
        assert_eq!(parse_timestamp("2012-02-22T16:46:2é.5"), None);
        assert_eq!(parse_timestamp("2012-02-22T16:46:28.+00:00"), None);
        assert_eq!(parse_timestamp("2012-02-22T16:46:28.5+0:000"), None);
        assert_eq!(
            parse_timestamp("2012-02-22T16:46:28.1234567890-01:30"),
            Some(1_329_929_188_123_456 + 5_400_000_000)
        );
    }

    #[test]
    fn hostile_lines_are_counted_as_malformed_never_a_panic() {
        let good = |ts: &str| {
            let mut fields = vec![ts.to_string()];
            fields.extend((1..FIRST_FLAG).map(|i| i.to_string()));
            fields.extend((FIRST_FLAG..56).map(|_| "0".to_string()));
            fields.join("\t")
        };
        let glued_multibyte = {
            // Field 56 of a glued line starting with a two-byte character.
            let first = good("2012-02-22T16:46:28.1+00:00");
            let (head, _) = first.rsplit_once('\t').expect("56 fields");
            format!("{head}\té{}", good("2012-02-22T16:46:28.2+00:00"))
        };
        let text = [
            good("2012-02-22T16:46:28.0+00:00"),
            format!("x{}", "\t".repeat(300)),
            good("2012-02-22T16:46:2é.5+00:00"),
            glued_multibyte,
            "é\tü".to_string(),
            good("2012-02-22T16:46:29.0+00:00"),
        ]
        .join("\n");
        let mut reader =
            DebsReader::new(io::Cursor::new(text.into_bytes()), OutOfOrder::Drop).expect("reads");
        let mut rows = 0;
        while let Some(batch) = reader.next_batch().expect("reads") {
            rows += batch.num_rows();
        }
        assert_eq!(rows, 2);
        assert_eq!(reader.stats().malformed, 4, "{:?}", reader.stats());
    }

    #[test]
    fn fields_split_as_str_split_splits_them() {
        // A small deterministic generator of lines mixing tabs, digits,
        // multi-byte characters and the bytes around the tab value.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let alphabet = [
            "\t", "\t\t", "0", "12", "é", "\u{8}", "\n", "\u{9}x", "ü\t", "\u{7f}",
        ];
        for len in 0..400 {
            let mut line = String::new();
            for _ in 0..len % 97 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                line.push_str(alphabet[(state % alphabet.len() as u64) as usize]);
            }
            let mut spans = Vec::new();
            let count = split_fields(&line, &mut spans);
            let expected: Vec<&str> = line.split('\t').collect();
            assert_eq!(count, expected.len(), "{line:?}");
            let fields: Vec<&str> = spans.iter().map(|span| &line[span.clone()]).collect();
            assert_eq!(fields, &expected[..count.min(MAX_FIELDS)], "{line:?}");
        }
    }
}

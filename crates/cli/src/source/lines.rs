//! Text sources (CSV or JSON lines), decoded into batches of up to
//! [`BATCH_ROWS`] rows.
//!
//! A file read once goes through one decoder, without splitting it into
//! lines: the plain-CSV fast path, which reads the file straight into its
//! own text, until a batch needs arrow-csv (quoted cells, say), or
//! arrow-json, fed from the read buffer. Live sources
//! (stdin, sockets, followed files) are read in whole lines as they arrive,
//! and a live batch holds the lines that have arrived. Whenever a batch does
//! not decode, its lines go to arrow-csv or arrow-json in halves until each
//! bad line stands alone, so that each malformed line (one holding more than
//! one record among them) is named by its number and failed on or skipped
//! (`on_error`).

use std::io::{BufRead, BufReader, Read, Seek};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use crate::console::note;

use super::clients::SharedClientLines;
use super::decoder::{FileColumns, TextDecoder};
use super::records::RecordEnds;
use super::row_lines::RowLines;
use super::{BATCH_ROWS, Format, Liveness, MAX_LINE_BYTES, OnError, SourceError, TextOptions};
use super::{explain, header, json_keys};

/// A text source decoded into batches.
pub struct Lines {
    input: BufReader<Box<dyn Read + Send>>,
    what: String,
    schema: SchemaRef,
    /// The columns as the source lays them out (a CSV header may reorder
    /// them or add others).
    columns: FileColumns,
    text: TextOptions,
    /// Where the source's records end: a quoted CSV cell may hold line
    /// breaks.
    records: RecordEnds,
    live: Liveness,
    /// Lines read so far (blank lines and the header included).
    line: usize,
    /// Whether the first line that is not blank is yet to be read: as a
    /// header (CSV with `header`), or for its keys (JSON lines).
    expects_header: bool,
    /// Text taken from the input but not decoded yet, which comes before
    /// the rest of it: the first line, when it turned out to be a row
    /// rather than a header, or the lines past a batch read line by line
    /// (see [`Lines::split_lines`]). Only the bulk decoder takes it.
    held: Vec<u8>,
    /// A line read up to the end of a followed file, not yet complete.
    pending: Vec<u8>,
    /// The decoder of a file read once, kept from batch to batch.
    bulk: Option<TextDecoder>,
    /// Whether batches may go to the plain-CSV fast path: until arrow-csv
    /// accepts a batch it refused (quoted cells, say), or when the format
    /// or the columns' types are not for it.
    plain: bool,
    /// The bytes the bulk decoder took for the batch being decoded.
    bulk_read: Vec<u8>,
    /// The stream's columns no query reads, which the plain-CSV decoder
    /// leaves NULL (see [`Lines::leave_unread`]).
    unread: Vec<bool>,
    /// A malformed line that stops the replay, held back while the good
    /// lines before it in its batch are returned.
    failed: Option<SourceError>,
    done: bool,
    /// For a socket source, which client sent each line.
    clients: Option<SharedClientLines>,
    /// The lines of the batch returned last.
    row_lines: RowLines,
}

/// A batch's text: whole records, with the number of the line each starts
/// on and its byte offset (blank lines and the header already left out).
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    starts: Vec<(usize, usize)>,
}

impl Chunk {
    /// The text of the records `records`.
    fn text_of(&self, records: Range<usize>) -> &[u8] {
        let start = self
            .starts
            .get(records.start)
            .map_or(self.bytes.len(), |&(_, s)| s);
        let end = self
            .starts
            .get(records.end)
            .map_or(self.bytes.len(), |&(_, s)| s);
        self.bytes.get(start..end).unwrap_or_default()
    }
}

impl Lines {
    pub(super) fn new(
        input: BufReader<Box<dyn Read + Send>>,
        what: String,
        schema: SchemaRef,
        text: TextOptions,
        live: Liveness,
    ) -> Self {
        Lines {
            input,
            what,
            columns: FileColumns::of(Arc::clone(&schema)),
            schema,
            records: RecordEnds::of(&text),
            text,
            live,
            line: 0,
            expects_header: text.reads_first_line(),
            held: Vec::new(),
            pending: Vec::new(),
            bulk: None,
            plain: true,
            bulk_read: Vec::new(),
            unread: Vec::new(),
            failed: None,
            done: false,
            clients: None,
            row_lines: RowLines::Unknown,
        }
    }

    /// The lines the batch returned last was read from. Not known for a
    /// socket source with clients, whose lines are numbered per client.
    pub fn take_row_lines(&mut self) -> RowLines {
        match self.clients {
            Some(_) => RowLines::Unknown,
            None => std::mem::take(&mut self.row_lines),
        }
    }

    /// Names a malformed line by the client that sent it and its line
    /// number there, as `clients` records them (a socket source, whose
    /// clients' lines are read as one text).
    pub(super) fn naming_clients(mut self, clients: SharedClientLines) -> Self {
        self.clients = Some(clients);
        self
    }

    /// The source and the line number that name line `line` of the input:
    /// for a socket source, the client that sent it and its line there.
    fn place(&self, line: usize) -> (String, usize) {
        let origin = self.clients.as_ref().and_then(|c| c.lock().origin(line));
        match origin {
            Some((client, its_line)) => (format!("{}, client {client}", self.what), its_line),
            None => (self.what.clone(), line),
        }
    }

    /// The error of line `line` of the input.
    fn malformed(&self, line: usize, message: String) -> SourceError {
        let (what, line) = self.place(line);
        SourceError::Malformed {
            what,
            line,
            message,
        }
    }

    /// Leaves the stream columns marked in `unread` (by position) NULL
    /// where the plain-CSV decoder reads: no query reads them, so their
    /// cells need not be parsed. Other decoders still fill them in.
    pub fn leave_unread(&mut self, unread: Vec<bool>) {
        self.unread = unread;
        // A decoder already made keeps what it was made with.
        debug_assert!(self.bulk.is_none(), "set before the first batch");
    }

    /// The next batch; `None` at the end of the input (or once stopped).
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>, SourceError> {
        loop {
            if let Some(error) = self.failed.take() {
                return Err(error);
            }
            if let Some(clients) = &self.clients {
                // A socket source is live: every line read so far was
                // decoded, and its errors named.
                debug_assert!(self.live.live && self.held.is_empty());
                clients.lock().forget_before(self.line + 1);
            }
            if self.done || self.live.stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let mut chunk = Chunk::default();
            if !self.live.live {
                match self.decode_bulk()? {
                    Ok(batch) => return Ok(batch),
                    // Finish the batch a line at a time, to name the bad line.
                    Err(read) => self.split_lines(read, &mut chunk)?,
                }
            }
            self.read_lines(&mut chunk)?;
            if chunk.starts.is_empty() {
                continue;
            }
            if let Ok(batch) = self.decode_lines(&chunk.bytes, chunk.starts.len()) {
                self.row_lines = RowLines::of(chunk.starts.iter().map(|&(line, _)| line).collect());
                return Ok(batch);
            }
            if let Some(batch) = self.decode_each_line(&chunk)? {
                return Ok(Some(batch));
            }
        }
    }

    /// Decodes the next batch of a file straight from the read buffer. On a
    /// decoding error, returns the bytes read for this batch (without having
    /// counted their lines): the caller decodes them line by line.
    fn decode_bulk(&mut self) -> Result<Result<Option<RecordBatch>, Vec<u8>>, SourceError> {
        while self.expects_header {
            let mut first = Vec::new();
            if !self.read_line(&mut first)? {
                self.done = true;
                return Ok(Ok(None));
            }
            self.line += 1;
            if is_blank(&first) {
                continue;
            }
            if self.read_first_line(&first)? {
                // A row: its line is counted with the batch that takes it.
                self.line -= 1;
                self.held = header::without_bom(&first).to_vec();
            }
        }
        let decoder = match &mut self.bulk {
            Some(decoder) => decoder,
            empty => {
                let made = match self.plain {
                    true => TextDecoder::fast(&self.columns, &self.text, BATCH_ROWS, &self.unread),
                    false => TextDecoder::new(&self.columns, &self.text, BATCH_ROWS),
                };
                match made {
                    Ok(decoder) => empty.insert(decoder),
                    Err(e) => return Err(SourceError::Unreadable(format!("{}: {e}", self.what))),
                }
            }
        };
        // The bytes taken for this batch, for counting its lines or reading
        // it again line by line: the plain decoder keeps them itself.
        let read = &mut self.bulk_read;
        read.clear();
        let keeps_text = decoder.taken_text().is_some();
        // Bytes taken since the last line break (not counting text the
        // plain decoder kept from the last batch: at most a piece, so a line
        // too long is refused at most a piece later).
        let mut unbroken = 0;
        // The last byte taken: whether the input's last line has its break.
        let mut last_byte = None;
        let decoded = loop {
            let held = !self.held.is_empty();
            if !held
                && self.input.buffer().is_empty()
                && let Some(plain) = decoder.plain_mut()
            {
                // The plain decoder reads the input straight into its own
                // text, sparing a copy; it splits what it read (and what it
                // kept from the last batch) before it reads more.
                if let Err(e) = plain.take_read() {
                    break Err(e);
                }
                if plain.is_full() {
                    break Ok(());
                }
                let got = plain
                    .read_from(self.input.get_mut())
                    .map_err(|e| SourceError::io(&self.what, e))?;
                if got == 0 {
                    self.done = true;
                    break plain.end_of_input();
                }
                let text = plain.taken_text();
                unbroken = unbroken_after(unbroken, &text[text.len() - got..]);
                last_byte = text.last().copied();
            } else {
                let buffered = match held {
                    true => &self.held,
                    false => self
                        .input
                        .fill_buf()
                        .map_err(|e| SourceError::io(&self.what, e))?,
                };
                if buffered.is_empty() {
                    self.done = true;
                    break decoder.end_of_input();
                }
                let used = match decoder.decode(buffered) {
                    Ok(used) => used,
                    Err(e) => break Err(e),
                };
                unbroken = unbroken_after(unbroken, &buffered[..used]);
                last_byte = buffered[..used].last().copied().or(last_byte);
                if !keeps_text {
                    read.extend_from_slice(&buffered[..used]);
                }
                match held {
                    true => drop(self.held.drain(..used)),
                    false => self.input.consume(used),
                }
            }
            if unbroken as u64 > MAX_LINE_BYTES {
                // The lines before it are read again one by one, and the
                // error comes next. What was taken of this line holds no
                // line break (a break would have reset the count below the
                // limit), so dropping it with the line loses no other line.
                let lines = line_breaks(decoder.taken_text().unwrap_or(read));
                // (Files and stdin only: a socket source is live.)
                self.failed = Some(SourceError::Malformed {
                    what: self.what.clone(),
                    line: self.line + lines + 1,
                    message: line_too_long(&self.text),
                });
                break Err(ArrowError::ParseError("a line too long".into()));
            }
            if decoder.is_full() {
                break Ok(());
            }
        };
        let counted = decoded.map(|()| {
            decoder
                .taken_line_breaks()
                .unwrap_or_else(|| line_breaks(read))
        });
        // The input's last line may lack its line break.
        let unbroken_end = usize::from(self.done && last_byte.is_some_and(|b| b != b'\n'));
        // The plain decoder lets go of its text as it flushes: its rows'
        // lines are found before, when they are not one line each.
        let kept_lines = match &counted {
            Ok(lines) => decoder
                .kept_batch()
                .filter(|&(rows, _)| rows != lines + unbroken_end)
                .map(|(_, text)| record_lines(self.records, text, self.line + 1)),
            Err(_) => None,
        };
        match counted.and_then(|lines| Ok((lines, decoder.flush()?))) {
            Ok((lines, batch)) => {
                // One row per line, unless the batch held blank lines or
                // quoted cells of several lines.
                let rows = batch.as_ref().map_or(0, |b| b.num_rows());
                self.row_lines = match rows == lines + unbroken_end {
                    true => RowLines::From(self.line + 1),
                    false => {
                        let lines = kept_lines
                            .unwrap_or_else(|| record_lines(self.records, read, self.line + 1));
                        match lines.len() == rows {
                            true => RowLines::of(lines),
                            false => RowLines::Unknown,
                        }
                    }
                };
                self.line += lines;
                Ok(Ok(batch))
            }
            Err(_) => {
                if let Some(text) = decoder.taken_text() {
                    read.extend_from_slice(text);
                }
                self.bulk = None;
                // The line-by-line reading goes on from here: the text
                // held back must come before what is still in the input.
                read.append(&mut self.held);
                self.done = false;
                Ok(Err(std::mem::take(read)))
            }
        }
    }

    /// Appends the lines of `read` (completed up to its line's end from the
    /// input) to `chunk`, leaving out blank lines and the header, up to a
    /// batch's rows: the plain decoder reads ahead of its batch, and the
    /// lines past it are held for the next batch.
    fn split_lines(&mut self, mut read: Vec<u8>, chunk: &mut Chunk) -> Result<(), SourceError> {
        if self.failed.is_some() {
            // The last line is the one too long to read: the lines before
            // it (fewer than a batch's: the decoder splits what it reads
            // before reading on, and the batch was not full).
            let whole = read
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |at| at + 1);
            read.truncate(whole);
        }
        let mut at = 0;
        while at < read.len() {
            if chunk.starts.len() >= BATCH_ROWS {
                // The error branch of `decode_bulk` put what was held
                // into `read`.
                debug_assert!(self.held.is_empty());
                self.held = read.split_off(at);
                return Ok(());
            }
            let end = match self.records.first_len(&read[at..]) {
                Some(len) => at + len,
                // Cut short by a line too long to read: decoded as it is.
                None if self.failed.is_some() => read.len(),
                None => {
                    // The record goes on past what the decoder took.
                    self.read_rest_of_record(&mut read, at, self.line + 1)?;
                    read.len()
                }
            };
            self.add_record(&read[at..end], chunk)?;
            at = end;
        }
        Ok(())
    }

    /// Reads the lines that complete the record that starts at `record[at..]`
    /// (on line `first_line`), appending them to `record`: up to its end,
    /// or to the end of the input.
    fn read_rest_of_record(
        &mut self,
        record: &mut Vec<u8>,
        at: usize,
        first_line: usize,
    ) -> Result<(), SourceError> {
        loop {
            if !self.read_line(record)? {
                if !record.ends_with(b"\n") {
                    record.push(b'\n'); // the last line, without a line break
                }
                return Ok(());
            }
            if !self.records.is_open(&record[at..]) {
                return Ok(());
            }
            if (record.len() - at) as u64 > MAX_LINE_BYTES {
                return Err(self.malformed(
                    first_line,
                    format!(
                        "a quoted cell not closed within {} MiB (a quote opens a cell that may \
                         hold line breaks, up to its closing quote)",
                        MAX_LINE_BYTES >> 20
                    ),
                ));
            }
        }
    }

    /// Adds the record that starts on the next line to `chunk`, unless it
    /// is blank or the header, and counts its lines.
    fn add_record(&mut self, record: &[u8], chunk: &mut Chunk) -> Result<(), SourceError> {
        self.line += 1;
        self.add_line(record, chunk)?;
        self.line += line_breaks(record).saturating_sub(1);
        Ok(())
    }

    /// Adds the record starting on line `self.line` to `chunk`, unless it is
    /// blank or the header (which says how the columns are laid out).
    fn add_line(&mut self, mut line: &[u8], chunk: &mut Chunk) -> Result<(), SourceError> {
        if self.expects_header && !is_blank(line) {
            if !self.read_first_line(line)? {
                return Ok(());
            }
            line = header::without_bom(line);
        }
        if !is_blank(line) {
            chunk.starts.push((self.line, chunk.bytes.len()));
            chunk.bytes.extend_from_slice(line);
        }
        Ok(())
    }

    /// Reads the first line that is not blank (line `self.line`) of a CSV
    /// source with `header`: a header, matched with the stream's columns,
    /// or (true) the first row of a file without one. Of JSON lines: the
    /// first row (true), whose keys are matched with the stream's columns.
    fn read_first_line(&mut self, line: &[u8]) -> Result<bool, SourceError> {
        self.expects_header = false;
        if self.text.format == Format::JsonLines {
            let (columns, remark) =
                json_keys::first_object(header::without_bom(line), &self.schema);
            if let Some(columns) = columns {
                self.columns = columns;
            }
            if let Some(remark) = remark {
                note!("{}: {remark}", self.what);
            }
            return Ok(true);
        }
        let first = header::first_line(line, &self.schema, &self.text)
            .map_err(|message| self.malformed(self.line, message))?;
        let (row, remark) = match first {
            header::FirstLine::Header(columns, remark) => {
                self.columns = columns;
                (false, remark)
            }
            header::FirstLine::Row(remark) => (true, Some(remark)),
        };
        if let Some(remark) = remark {
            note!("{}: {remark}", self.what);
        }
        Ok(row)
    }

    /// Reads lines into `chunk` until it holds a batch's rows, the input
    /// ends, or (live sources) no further whole line has arrived yet.
    fn read_lines(&mut self, chunk: &mut Chunk) -> Result<(), SourceError> {
        let mut line = Vec::new();
        while chunk.starts.len() < BATCH_ROWS && self.failed.is_none() {
            if self.take_buffered_lines(chunk, &mut line)? {
                continue;
            }
            // A live source emits what has arrived rather than wait.
            if self.live.live && !chunk.starts.is_empty() {
                break;
            }
            line.clear();
            let read = self.read_line(&mut line).and_then(|more| {
                if more && self.records.is_open(&line) {
                    self.read_rest_of_record(&mut line, 0, self.line + 1)?;
                }
                Ok(more)
            });
            match read {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                // The lines before it are decoded first.
                Err(e) if !chunk.starts.is_empty() => {
                    self.failed = Some(e);
                    break;
                }
                Err(e) => return Err(e),
            }
            self.add_record(&line, chunk)?;
        }
        Ok(())
    }

    /// Adds the whole records waiting in the read buffer, up to a batch's
    /// rows, to `chunk` (through `scratch`); false, reading nothing, when
    /// there is none. Taking them all at once spares a search and a copy
    /// per line.
    fn take_buffered_lines(
        &mut self,
        chunk: &mut Chunk,
        scratch: &mut Vec<u8>,
    ) -> Result<bool, SourceError> {
        if !self.pending.is_empty() {
            return Ok(false);
        }
        let room = BATCH_ROWS - chunk.starts.len();
        let taken = self.records.whole_len(self.input.buffer(), room);
        if taken == 0 {
            return Ok(false);
        }
        scratch.clear();
        scratch.extend_from_slice(&self.input.buffer()[..taken]);
        self.input.consume(taken);
        for record in self.records.whole(scratch) {
            self.add_record(record, chunk)?;
        }
        Ok(true)
    }

    /// Decodes `bytes` (whole lines) into one batch: with the plain-CSV
    /// decoder while the source is plain CSV, else with arrow-csv or
    /// arrow-json. When arrow-csv decodes lines the plain decoder refused
    /// (quoted cells, say), the source is not plain: the rest of it goes
    /// to arrow-csv.
    fn decode_lines(
        &mut self,
        bytes: &[u8],
        rows: usize,
    ) -> Result<Option<RecordBatch>, ArrowError> {
        if self.plain {
            match TextDecoder::fast(&self.columns, &self.text, rows, &self.unread)? {
                plain @ TextDecoder::Plain(_) => {
                    if let Ok(batch) = plain.decode_all(bytes) {
                        return Ok(batch);
                    }
                    let decoded = self.decode(bytes, rows);
                    self.plain = decoded.is_err();
                    return decoded;
                }
                _ => self.plain = false,
            }
        }
        self.decode(bytes, rows)
    }

    /// Decodes `bytes` (whole lines) into one batch with arrow-csv or
    /// arrow-json, whose errors name what is wrong.
    fn decode(&self, bytes: &[u8], rows: usize) -> Result<Option<RecordBatch>, ArrowError> {
        TextDecoder::decode_whole(&self.columns, &self.text, bytes, rows)
    }

    /// Decodes `chunk` around its malformed lines: names each of them, then
    /// skips it or fails; the good lines form the batch. On failing, the
    /// good lines before the bad one still come out, as a batch of their
    /// own, and the error follows on the next call.
    ///
    /// A run of lines that does not decode is halved until each bad line
    /// stands alone, left half first, so a batch with one bad line costs
    /// a few decodes of the batch rather than one decode per line.
    fn decode_each_line(&mut self, chunk: &Chunk) -> Result<Option<RecordBatch>, SourceError> {
        // Runs still to decode, the next on top; the whole chunk is known
        // not to decode.
        let mut pending = Vec::new();
        let halve = |records: Range<usize>, pending: &mut Vec<Range<usize>>| {
            let middle = records.start + records.len() / 2;
            pending.push(middle..records.end);
            pending.push(records.start..middle);
        };
        halve(0..chunk.starts.len(), &mut pending);
        let mut good = Vec::new();
        let mut good_lines = Vec::new();
        while let Some(records) = pending.pop() {
            if records.is_empty() {
                continue;
            }
            let text = chunk.text_of(records.clone());
            let e = match self.decode_lines(text, records.len()) {
                Ok(batch) => {
                    if batch.is_some() {
                        good_lines.extend(chunk.starts[records].iter().map(|&(line, _)| line));
                    }
                    good.extend(batch);
                    continue;
                }
                Err(_) if records.len() > 1 => {
                    halve(records, &mut pending);
                    continue;
                }
                Err(e) => e,
            };
            let explained = match self.text.format {
                Format::Csv => {
                    let whose = match self.columns.projection {
                        Some(_) => "the header",
                        None => "the stream",
                    };
                    explain::explain(&self.columns.schema, whose, &self.text, text)
                }
                Format::JsonLines => explain::explain_json(&self.columns.schema, &e),
                _ => None,
            };
            // sliq's own parse errors say what and where without arrow's
            // "Parser error: " in front.
            let mut message = explained.unwrap_or_else(|| match e {
                ArrowError::ParseError(message) => message,
                other => other.to_string(),
            });
            if self.records.is_open(text) {
                message.push_str(
                    " (a quote opened on this line is never closed: the lines after it were \
                     read into its cell)",
                );
            }
            let error = |message| self.malformed(chunk.starts[records.start].0, message);
            match self.text.on_error {
                OnError::Skip => note!("skipped {}", error(message)),
                OnError::Fail => {
                    let error = error(format!(
                        "{message}; the stream stops here (WITH (on_error = 'skip') skips such lines)"
                    ));
                    if good.is_empty() {
                        return Err(error);
                    }
                    self.done = true;
                    self.failed = Some(error);
                    break;
                }
            }
        }
        if good.is_empty() {
            return Ok(None);
        }
        self.row_lines = RowLines::of(good_lines);
        arrow_select::concat::concat_batches(&self.schema, &good)
            .map(Some)
            .map_err(|e| SourceError::Unreadable(e.to_string()))
    }

    /// Whether the followed file is now shorter than what was read of it;
    /// if so, the reader is moved back to its start.
    fn truncated(&mut self) -> Result<bool, SourceError> {
        let Some(file) = &mut self.live.follow else {
            return Ok(false);
        };
        let io_error = |e| SourceError::io(&self.what, e);
        // At the end of input the read buffer is empty, so the shared
        // offset is where the reading stands.
        let read = file.stream_position().map_err(io_error)?;
        let length = file.metadata().map_err(io_error)?.len();
        if length >= read {
            return Ok(false);
        }
        file.seek(std::io::SeekFrom::Start(0)).map_err(io_error)?;
        Ok(true)
    }

    /// The next complete line, appended to `chunk`; false at the end of the input.
    fn read_line(&mut self, chunk: &mut Vec<u8>) -> Result<bool, SourceError> {
        loop {
            let room = (MAX_LINE_BYTES + 1).saturating_sub(self.pending.len() as u64);
            let n = (&mut self.input)
                .take(room)
                .read_until(b'\n', &mut self.pending)
                .map_err(|e| SourceError::io(&self.what, e))?;
            if self.pending.len() as u64 > MAX_LINE_BYTES {
                return Err(self.malformed(self.line + 1, line_too_long(&self.text)));
            }
            let complete = self.pending.ends_with(b"\n");
            let follow = self.live.follow.is_some();
            if complete || (n == 0 && !follow && !self.pending.is_empty()) {
                chunk.append(&mut self.pending);
                if !complete {
                    chunk.push(b'\n');
                }
                return Ok(true);
            }
            if n == 0 {
                if !follow || self.live.stop.load(Ordering::Relaxed) {
                    return Ok(false);
                }
                if self.truncated()? {
                    // Rotated in place (copytruncate): read it again from
                    // the start, header included, as `tail -f` does.
                    note!("{}: truncated; reading it again from the start", self.what);
                    self.pending.clear();
                    self.line = 0;
                    self.expects_header = self.text.reads_first_line();
                    continue;
                }
                // Following a file: wait for the writer.
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// The line each record of `text` (whole records, the last one's line
/// break perhaps missing) starts on, the first on `first_line`, leaving out
/// blank lines.
fn record_lines(records: RecordEnds, text: &[u8], first_line: usize) -> Vec<usize> {
    let mut lines = Vec::new();
    let (mut at, mut line) = (0, first_line);
    while at < text.len() {
        let len = records.first_len(&text[at..]).unwrap_or(text.len() - at);
        let record = &text[at..at + len];
        if !is_blank(record) {
            lines.push(line);
        }
        line += line_breaks(record);
        at += len;
    }
    lines
}

/// Whether `line` holds nothing but blanks.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| b.is_ascii_whitespace())
}

/// What is wrong with a line still without a line break after
/// [`MAX_LINE_BYTES`]: the replay cannot go on past it.
fn line_too_long(text: &TextOptions) -> String {
    let format = match text.format {
        Format::JsonLines => "JSON lines",
        _ => "CSV",
    };
    format!(
        "no line break in {} MiB; is it a {format} file?",
        MAX_LINE_BYTES >> 20
    )
}

/// The bytes since the last line break once `more` follows `unbroken` such
/// bytes.
fn unbroken_after(unbroken: usize, more: &[u8]) -> usize {
    match memchr::memrchr(b'\n', more) {
        Some(at) => more.len() - at - 1,
        None => unbroken + more.len(),
    }
}

/// How many line breaks `bytes` holds.
fn line_breaks(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    use arrow_schema::{DataType, Field, Schema};
    use proptest::prelude::*;

    use super::*;

    /// A source over `text` with columns `seq BIGINT, v DOUBLE` (CSV with a
    /// header, or JSON lines); `live` reads it a line at a time, as stdin is
    /// read.
    fn source(text: &[u8], format: Format, on_error: OnError, live: bool) -> Lines {
        let schema = Arc::new(Schema::new(vec![
            Field::new("seq", DataType::Int64, true),
            Field::new("v", DataType::Float64, true),
        ]));
        let input: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(text.to_vec()));
        let options = TextOptions {
            format,
            header: format == Format::Csv,
            delimiter: b',',
            on_error,
        };
        let liveness = Liveness {
            live,
            follow: None,
            stop: Arc::new(AtomicBool::new(false)),
        };
        Lines::new(
            BufReader::with_capacity(1 << 12, input),
            "t.csv".into(),
            schema,
            options,
            liveness,
        )
    }

    /// The `seq` of every row read, or the first error; checks batch sizes.
    fn read_all(mut lines: Lines) -> Result<Vec<i64>, String> {
        let mut seqs = Vec::new();
        while let Some(batch) = lines.next_batch().map_err(|e| e.to_string())? {
            assert!((1..=BATCH_ROWS).contains(&batch.num_rows()));
            seqs.extend(batch.column(0).as_primitive::<Int64Type>().values());
        }
        Ok(seqs)
    }

    /// One line of a test file.
    #[derive(Clone, Debug)]
    enum Line {
        Good(i64),
        GoodCrlf(i64),
        /// Quoted cells: arrow-csv's to decode, not the plain decoder's.
        GoodQuoted(i64),
        /// A quoted cell of two lines (CSV; in JSON, an escaped line break).
        GoodTwoLines(i64),
        Blank,
        BadValue,
        MissingField,
    }

    impl Line {
        /// The row it holds, if it is good.
        fn good(&self) -> Option<i64> {
            match self {
                Line::Good(s) | Line::GoodCrlf(s) | Line::GoodQuoted(s) | Line::GoodTwoLines(s) => {
                    Some(*s)
                }
                Line::Blank | Line::BadValue | Line::MissingField => None,
            }
        }

        /// Whether it is malformed: skipped, or where a replay fails.
        fn is_bad(&self) -> bool {
            matches!(self, Line::BadValue | Line::MissingField)
        }

        /// The lines it takes in `format`.
        fn lines(&self, format: Format) -> usize {
            match self {
                Line::GoodTwoLines(_) if format == Format::Csv => 2,
                _ => 1,
            }
        }
    }

    /// The number of the line each of `lines` starts on: a CSV file's
    /// line 1 is its header.
    fn line_numbers(lines: &[Line], format: Format) -> Vec<usize> {
        let mut next = 1 + usize::from(format == Format::Csv);
        lines
            .iter()
            .map(|l| {
                next += l.lines(format);
                next - l.lines(format)
            })
            .collect()
    }

    /// A CSV file's header names a column the stream lacks, `note`, which a
    /// line may leave out.
    fn render(lines: &[Line], final_newline: bool, format: Format) -> Vec<u8> {
        let csv = format == Format::Csv;
        let mut text = if csv {
            b"seq,v,note\n".to_vec()
        } else {
            Vec::new()
        };
        for line in lines {
            let line = match (line, csv) {
                (Line::Good(seq), true) => format!("{seq},1.5,\n"),
                (Line::Good(seq), false) => format!("{{\"seq\": {seq}, \"v\": 1.5}}\n"),
                (Line::GoodCrlf(seq), true) => format!("{seq},-2,x\r\n"),
                (Line::GoodCrlf(seq), false) => format!("{{\"v\": -2, \"seq\": {seq}}}\r\n"),
                (Line::GoodQuoted(seq), true) => format!("\"{seq}\",\"0.5\",\"\"\n"),
                (Line::GoodQuoted(seq), false) => format!("{{\"seq\":{seq},\"v\":0.5}}\n"),
                (Line::GoodTwoLines(seq), true) => format!("{seq},0.5,\"two\nlines\"\n"),
                (Line::GoodTwoLines(seq), false) => {
                    format!("{{\"seq\":{seq},\"v\":0.5,\"note\":\"two\\nlines\"}}\n")
                }
                (Line::Blank, _) => "  \n".to_string(),
                (Line::BadValue, true) => "7,oops,\n".to_string(),
                (Line::BadValue, false) => "{\"seq\": 7, \"v\": \"oops\"}\n".to_string(),
                (Line::MissingField, true) => "8\n".to_string(),
                // An object left open: JSON's equivalent of a short line.
                (Line::MissingField, false) => "{\"seq\": 8\n".to_string(),
            };
            text.extend_from_slice(line.as_bytes());
        }
        if !final_newline && text.ends_with(b"\n") {
            text.pop();
        }
        text
    }

    fn line_strategy() -> impl Strategy<Value = Line> {
        prop_oneof![
            8 => (0i64..1000).prop_map(Line::Good),
            2 => (0i64..1000).prop_map(Line::GoodCrlf),
            1 => (0i64..1000).prop_map(Line::GoodQuoted),
            1 => (0i64..1000).prop_map(Line::GoodTwoLines),
            1 => Just(Line::Blank),
            1 => Just(Line::BadValue),
            1 => Just(Line::MissingField),
        ]
    }

    proptest! {
        /// Read whole or a line at a time, a file gives the same rows, and
        /// the same first bad line.
        #[test]
        fn bulk_and_line_reading_agree(
            lines in proptest::collection::vec(line_strategy(), 0..40),
            final_newline: bool,
            json: bool,
        ) {
            let format = if json { Format::JsonLines } else { Format::Csv };
            let text = render(&lines, final_newline, format);
            let good: Vec<i64> = lines.iter().filter_map(Line::good).collect();
            for live in [false, true] {
                let read = read_all(source(&text, format, OnError::Skip, live));
                prop_assert_eq!(&read, &Ok(good.clone()));
            }
            let first_bad = lines.iter().position(Line::is_bad);
            for live in [false, true] {
                let read = read_all(source(&text, format, OnError::Fail, live));
                match first_bad {
                    None => prop_assert_eq!(&read, &Ok(good.clone())),
                    Some(i) => {
                        let error = read.expect_err("a bad line fails");
                        let line = format!("t.csv, line {}:", line_numbers(&lines, format)[i]);
                        prop_assert!(error.starts_with(&line), "{}", error);
                    }
                }
            }
        }
    }

    proptest! {
        /// Each row's line, when the reader knows it, is the line it was
        /// read from; it knows every row's line when no bad line was
        /// skipped.
        #[test]
        fn rows_know_their_lines(
            lines in proptest::collection::vec(line_strategy(), 0..40),
            final_newline: bool,
            json: bool,
        ) {
            let format = if json { Format::JsonLines } else { Format::Csv };
            let text = render(&lines, final_newline, format);
            let want: Vec<(i64, usize)> = lines
                .iter()
                .zip(line_numbers(&lines, format))
                .filter_map(|(l, number)| Some((l.good()?, number)))
                .collect();
            let skips_none = !lines.iter().any(Line::is_bad);
            for live in [false, true] {
                let mut reader = source(&text, format, OnError::Skip, live);
                let mut got = Vec::new();
                while let Some(batch) = reader.next_batch().expect("skips bad lines") {
                    let row_lines = reader.take_row_lines();
                    let seqs = batch.column(0).as_primitive::<Int64Type>().values().to_vec();
                    got.extend(seqs.into_iter().enumerate().map(|(row, seq)| (seq, row_lines.line(row))));
                }
                prop_assert_eq!(got.len(), want.len());
                for ((seq, line), (want_seq, want_line)) in got.iter().zip(&want) {
                    prop_assert_eq!(seq, want_seq);
                    prop_assert!(line.is_none_or(|l| l == *want_line), "{:?} for line {}", line, want_line);
                    prop_assert!(line.is_some() || !skips_none, "live: {}", live);
                }
            }
        }
    }

    #[test]
    fn rows_of_later_batches_know_their_lines() {
        // Line 1 is the header, line seq + 2 holds row seq; a bad line at
        // 12,000 sends that batch line by line.
        let mut text = b"seq,v\n".to_vec();
        for seq in 0..20_000 {
            match seq {
                12_000 => text.extend_from_slice(b"bad\n"),
                _ => text.extend_from_slice(format!("{seq},1\n").as_bytes()),
            }
        }
        for live in [false, true] {
            let mut reader = source(&text, Format::Csv, OnError::Skip, live);
            let mut rows = 0;
            while let Some(batch) = reader.next_batch().expect("skips the bad line") {
                let row_lines = reader.take_row_lines();
                let seqs = batch.column(0).as_primitive::<Int64Type>();
                for (row, seq) in seqs.values().iter().enumerate() {
                    assert_eq!(row_lines.line(row), Some(*seq as usize + 2), "live: {live}");
                }
                rows += batch.num_rows();
            }
            assert_eq!(rows, 19_999);
        }
    }

    /// A line that holds two records (CSV records ended by a lone carriage
    /// return, two JSON objects) is a bad line, not one record and a loss.
    #[test]
    fn a_line_holding_two_records_is_refused_not_half_read() {
        let cases: [(&[u8], Format, bool); 3] = [
            (b"seq,v\n1,1.5\n2,1\r3,2\n4,1\n", Format::Csv, false),
            (b"seq,v\n1,1.5\n2,1\r3,2\n4,1\n", Format::Csv, true),
            (
                b"{\"seq\":1}\n{\"seq\":2} {\"seq\":3}\n{\"seq\":4}\n",
                Format::JsonLines,
                true,
            ),
        ];
        for (text, format, live) in cases {
            let skipped = read_all(source(text, format, OnError::Skip, live));
            assert_eq!(skipped, Ok(vec![1, 4]), "{format:?}, live: {live}");
            let error = read_all(source(text, format, OnError::Fail, live)).expect_err("fails");
            let line = if format == Format::Csv { 3 } else { 2 };
            assert!(
                error.starts_with(&format!("t.csv, line {line}: "))
                    && error.contains("more than one"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_bad_line_in_a_later_batch_is_named_by_its_line_number() {
        let rows = 3 * BATCH_ROWS;
        let bad = 2 * BATCH_ROWS + 100;
        let mut lines: Vec<Line> = (0..rows as i64).map(Line::Good).collect();
        lines[bad] = Line::BadValue;
        let text = render(&lines, true, Format::Csv);
        for live in [false, true] {
            let error =
                read_all(source(&text, Format::Csv, OnError::Fail, live)).expect_err("fails");
            assert!(
                error.starts_with(&format!("t.csv, line {}:", bad + 2)),
                "{error}"
            );
            let read = read_all(source(&text, Format::Csv, OnError::Skip, live)).expect("skips");
            assert_eq!(read.len(), rows - 1);
            assert!(
                read.iter()
                    .copied()
                    .eq((0..rows as i64).filter(|&s| s != bad as i64))
            );
        }
    }

    #[test]
    fn lines_read_past_a_full_batch_start_the_next() {
        // Short lines: one read takes more than a batch's rows, and the
        // rows past it wait for the next batch, a bad line among them.
        let rows = 5 * BATCH_ROWS;
        let bad = 3 * BATCH_ROWS + 7;
        let mut lines: Vec<Line> = (0..rows as i64).map(|i| Line::Good(i % 10)).collect();
        lines[bad] = Line::BadValue;
        let text = render(&lines, true, Format::Csv);
        let good = (0..rows).filter(|&i| i != bad).map(|i| i as i64 % 10);
        let read = read_all(source(&text, Format::Csv, OnError::Skip, false)).expect("skips");
        assert!(read.into_iter().eq(good));
        let error = read_all(source(&text, Format::Csv, OnError::Fail, false)).expect_err("fails");
        assert!(
            error.starts_with(&format!("t.csv, line {}:", bad + 2)),
            "{error}"
        );
    }

    #[test]
    fn quotes_in_a_later_batch_hand_the_file_to_arrow_csv() {
        // Early in its batch, and after many read buffers of it were taken.
        for at in [5, 5000] {
            let rows = 3 * BATCH_ROWS;
            let mut lines: Vec<Line> = (0..rows as i64).map(Line::Good).collect();
            lines[BATCH_ROWS + at] = Line::GoodQuoted((BATCH_ROWS + at) as i64);
            let text = render(&lines, true, Format::Csv);
            let mut source = source(&text, Format::Csv, OnError::Fail, false);
            let mut seqs = Vec::new();
            let mut plain_after = Vec::new();
            while let Some(batch) = source.next_batch().expect("reads") {
                seqs.extend(
                    batch
                        .column(0)
                        .as_primitive::<Int64Type>()
                        .values()
                        .iter()
                        .copied(),
                );
                plain_after.push(source.plain);
            }
            assert!(seqs.into_iter().eq(0..rows as i64), "quote at {at}");
            assert_eq!(plain_after, [true, false, false]);
        }
    }

    #[test]
    fn a_first_line_that_is_a_row_is_not_lost_as_a_header() {
        for live in [false, true] {
            let read = |text: &[u8], on_error| read_all(source(text, Format::Csv, on_error, live));
            assert_eq!(read(b"1,1.5\n2,2.5", OnError::Fail), Ok(vec![1, 2]));
            assert_eq!(
                read(b"\xEF\xBB\xBF1,1.5\r\n2,2.5\r\n", OnError::Fail),
                Ok(vec![1, 2])
            );
            // Quotes send the batch, first row included, to arrow-csv.
            assert_eq!(
                read(b"1,1.5\n\"2\",\"2.5\"\n3,1\n", OnError::Fail),
                Ok(vec![1, 2, 3])
            );
            assert_eq!(read(b"1,1.5\n2,oops\n3,1\n", OnError::Skip), Ok(vec![1, 3]));
            let error = read(b"1,1.5\n2,oops\n", OnError::Fail).expect_err("fails");
            assert!(error.starts_with("t.csv, line 2:"), "{error}");
            // A header is still a header, after blank lines too.
            assert_eq!(read(b"a,b\n1,1.5\n", OnError::Fail), Ok(vec![1]));
            assert_eq!(read(b"\n \r\nseq,v\n1,1.5\n", OnError::Fail), Ok(vec![1]));
            let error = read(b"\n\nseq,w\n1,1.5\n", OnError::Fail).expect_err("fails");
            assert!(error.starts_with("t.csv, line 3: the header"), "{error}");
            let error = read(b"\n1,1.5\n2,oops\n", OnError::Fail).expect_err("fails");
            assert!(error.starts_with("t.csv, line 3:"), "{error}");
        }
    }
}

//! The reader on real DEBS 2012 lines: every field, gzip, glued and
//! malformed lines, and both out-of-order policies.

mod common;

use std::io::Write;

use common::{ints, read_all, times};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use sliq_debs::{DebsReader, FIELDS, OutOfOrder, parse_timestamp, schema};

/// The first 200 lines of the real sample, byte for byte (CRLF endings).
const SAMPLE: &[u8] = include_bytes!("data/sample200.txt");

fn lines() -> Vec<&'static str> {
    std::str::from_utf8(SAMPLE)
        .unwrap()
        .split_inclusive('\n')
        .collect()
}

#[test]
fn every_field_of_the_sample_is_typed_and_read() {
    let (batches, stats) = read_all(SAMPLE.to_vec(), OutOfOrder::Drop);
    assert_eq!(stats.records, 200);
    assert_eq!((stats.malformed, stats.glued, stats.dropped), (0, 0, 0));
    assert_eq!(batches[0].schema(), schema());
    assert_eq!(batches[0].num_columns(), 56);
    // First line: 2012-02-22T16:46:28.9670320 index 2556001 mf 13056 14406 8119, pc 71 193 150 …
    assert_eq!(
        times(&batches)[0],
        parse_timestamp("2012-02-22T16:46:28.9670320+00:00").unwrap()
    );
    assert_eq!(ints(&batches, "index")[..3], [2556001, 2556002, 2556003]);
    assert_eq!(ints(&batches, "mf01")[0], 13056);
    assert_eq!(ints(&batches, "mf02")[0], 14406);
    assert_eq!(ints(&batches, "pc14")[0], 193);
    // Each flag column matches the text of the first line.
    let first: Vec<&str> = lines()[0].trim_end().split('\t').collect();
    for (i, name) in FIELDS.iter().enumerate().skip(12) {
        let flag = batches[0]
            .column_by_name(name)
            .unwrap()
            .as_boolean()
            .value(0);
        assert_eq!(flag, first[i] == "1", "{name}");
    }
    // Consecutive index, non-decreasing time.
    let index = ints(&batches, "index");
    assert!(index.windows(2).all(|w| w[1] == w[0] + 1));
    assert!(times(&batches).windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn gzip_input_reads_the_same() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(SAMPLE).unwrap();
    let (plain, _) = read_all(SAMPLE.to_vec(), OutOfOrder::Drop);
    let (zipped, stats) = read_all(gz.finish().unwrap(), OutOfOrder::Drop);
    assert_eq!(stats.records, 200);
    assert_eq!(ints(&plain, "mf03"), ints(&zipped, "mf03"));
}

#[test]
fn glued_lines_are_split_and_malformed_lines_named_and_skipped() {
    let l = lines();
    let mut text = String::new();
    text.push_str(l[0]);
    // Two records on one line: the first's last flag runs into the next timestamp.
    text.push_str(l[1].trim_end());
    text.push_str(l[2]);
    text.push_str("2012-02-22T16:46:29.0000000+00:00\t1\t2\n"); // line 3: too few fields
    text.push_str(&l[3].replacen("\t13047\t", "\tlots\t", 1)); // line 4: bad integer (if present)
    text.push_str(&l[4].replacen("2012-02-22T", "2012-02-32T", 1)); // line 5: bad date
    text.push_str(l[5]);
    let (batches, stats) = read_all(text.into_bytes(), OutOfOrder::Drop);
    assert_eq!(stats.glued, 1);
    assert_eq!(stats.lines, 6);
    assert!(stats.malformed >= 2, "{stats:?}");
    assert!(
        stats
            .first_errors
            .iter()
            .any(|e| e.line == 3 && e.message.contains("3 fields")),
        "{stats:?}"
    );
    assert!(
        stats
            .first_errors
            .iter()
            .any(|e| e.line == 5 && e.message.contains("bad timestamp")),
        "{stats:?}"
    );
    let index = ints(&batches, "index");
    assert_eq!(&index[..3], &[2556001, 2556002, 2556003]);
    assert_eq!(*index.last().unwrap(), 2556006);
}

#[test]
fn out_of_order_events_are_dropped_or_reordered() {
    let l = lines();
    // Swap lines 10 and 11, and move line 20 to after line 40.
    let mut order: Vec<usize> = (0..60).collect();
    order.swap(10, 11);
    let late = order.remove(20);
    order.insert(40, late);
    let text: String = order.iter().map(|&i| l[i]).collect();

    let (batches, stats) = read_all(text.clone().into_bytes(), OutOfOrder::Drop);
    assert_eq!(stats.dropped, 2, "{stats:?}");
    assert_eq!(stats.records, 58);
    assert!(times(&batches).windows(2).all(|w| w[0] <= w[1]));

    // A 1-second delay absorbs both: everything comes out, in time order.
    let (batches, stats) = read_all(
        text.clone().into_bytes(),
        OutOfOrder::Reorder {
            delay_us: 1_000_000,
        },
    );
    assert_eq!((stats.records, stats.dropped), (60, 0));
    assert_eq!(stats.reordered, 2);
    assert_eq!(
        ints(&batches, "index"),
        (2556001..2556061).collect::<Vec<_>>()
    );

    // A 50 ms delay absorbs the swap but not an event 20 records (≈ 200 ms) late.
    let (_, stats) = read_all(text.into_bytes(), OutOfOrder::Reorder { delay_us: 50_000 });
    assert_eq!((stats.records, stats.dropped, stats.reordered), (59, 1, 1));
}

#[test]
fn the_whole_real_sample_when_shared_data_is_present() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/debs/DEBS2012-small.txt");
    let Ok(file) = std::fs::File::open(&path) else {
        eprintln!("skipped: {} is not present", path.display());
        return;
    };
    let mut reader = DebsReader::new(file, OutOfOrder::Drop).unwrap();
    let mut rows = 0;
    let mut max_mf01 = 0;
    for batch in reader.by_ref() {
        let batch = batch.unwrap();
        rows += batch.num_rows();
        max_mf01 = max_mf01.max(
            *batch
                .column(2)
                .as_primitive::<Int64Type>()
                .values()
                .iter()
                .max()
                .unwrap(),
        );
    }
    let stats = reader.stats();
    assert_eq!(
        (rows, stats.lines, stats.dropped, stats.malformed),
        (17_000, 17_000, 0, 0)
    );
    assert!(max_mf01 > 10_000);
}

#[test]
fn trailing_separators_and_spaces_are_tolerated() {
    let l = lines();
    let text = format!("{}\t\r\n{}\t\t\n{}", l[0].trim_end(), l[1].trim_end(), l[2]);
    let (batches, stats) = read_all(text.into_bytes(), OutOfOrder::Drop);
    assert_eq!((stats.records, stats.malformed), (3, 0), "{stats:?}");
    assert_eq!(ints(&batches, "index"), vec![2556001, 2556002, 2556003]);
}

#[test]
fn chosen_columns_hold_what_the_full_batches_hold() {
    let l = lines();
    // A malformed flag in a column that is not chosen still makes the line malformed.
    let bad_flag = {
        let mut fields: Vec<&str> = l[3].trim_end().split('\t').collect();
        fields[40] = "7";
        fields.join("\t") + "\r\n"
    };
    let text = [l[0], l[1], l[2], &bad_flag, l[4]].concat().into_bytes();
    let (full, full_stats) = read_all(text.clone(), OutOfOrder::Drop);
    let mut reader = DebsReader::new(std::io::Cursor::new(text), OutOfOrder::Drop)
        .unwrap()
        .with_columns(&[2, 0, 47])
        .unwrap();
    let chosen: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(reader.stats(), &full_stats);
    assert_eq!(full_stats.malformed, 1);
    let names: Vec<_> = reader
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["mf01", "ts", FIELDS[47]]);
    assert_eq!(chosen[0].schema(), reader.schema());
    assert_eq!(ints(&chosen, "mf01"), ints(&full, "mf01"));
    for name in ["ts", FIELDS[47]] {
        assert_eq!(
            chosen[0].column_by_name(name).unwrap(),
            full[0].column_by_name(name).unwrap(),
            "{name}"
        );
    }

    let error = DebsReader::new(std::io::Cursor::new(Vec::new()), OutOfOrder::Drop)
        .unwrap()
        .with_columns(&[0, 56])
        .err()
        .expect("an index past the last field is refused");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
}

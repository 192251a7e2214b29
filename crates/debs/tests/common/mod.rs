//! Helpers shared by the DEBS tests.

#![allow(dead_code)]

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMicrosecondType};
use sliq_debs::{DebsReader, OutOfOrder, ReadStats};

/// Every batch of `bytes` (64 rows each, to cross batch boundaries) and the read's counters.
pub fn read_all(bytes: Vec<u8>, policy: OutOfOrder) -> (Vec<RecordBatch>, ReadStats) {
    let mut reader = DebsReader::new(std::io::Cursor::new(bytes), policy)
        .unwrap()
        .with_batch_rows(64);
    let batches: Vec<RecordBatch> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    (batches, reader.stats().clone())
}

/// An integer column over all batches.
pub fn ints(batches: &[RecordBatch], column: &str) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            b.column_by_name(column)
                .unwrap()
                .as_primitive::<Int64Type>()
                .values()
                .to_vec()
        })
        .collect()
}

/// The event times (µs) over all batches.
pub fn times(batches: &[RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<TimestampMicrosecondType>()
                .values()
                .to_vec()
        })
        .collect()
}

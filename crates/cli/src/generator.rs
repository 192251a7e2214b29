//! Synthetic events for demos and load tests.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef, TimeUnit};

use crate::source::BATCH_ROWS;

/// Synthetic events for demos and load tests: the event-time column is the
/// wall clock (or a counter when unthrottled), strings are keys `k0…`,
/// floats drift per key, integers count rows.
pub struct Generator {
    schema: SchemaRef,
    event_time: Option<usize>,
    rate: f64,
    keys: u64,
    remaining: Option<u64>,
    produced: u64,
    started: Instant,
    levels: Vec<f64>,
    state: u64,
}

impl Generator {
    /// A generator of `rows` rows (or endless) at `rate` rows/s (0: as fast
    /// as possible) over `keys` keys.
    pub fn new(
        schema: SchemaRef,
        event_time: Option<usize>,
        rate: f64,
        keys: u64,
        rows: Option<u64>,
    ) -> Self {
        let keys = keys.max(1);
        Generator {
            schema,
            event_time,
            rate,
            keys,
            remaining: rows,
            produced: 0,
            started: Instant::now(),
            levels: (0..keys).map(|k| 20.0 + (k % 7) as f64 * 5.0).collect(),
            state: 0x2545_F491_4F6C_DD1D,
        }
    }

    fn random(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// The next batch, or `None` once `rows` rows were produced.
    pub fn next_batch(&mut self) -> Option<RecordBatch> {
        let mut rows = if self.rate > 0.0 {
            // Pace to the rate: sleep until the next 50 ms worth of rows is due.
            let due = (self.started.elapsed().as_secs_f64() * self.rate) as u64;
            if due <= self.produced {
                std::thread::sleep(Duration::from_millis(50));
            }
            let due = (self.started.elapsed().as_secs_f64() * self.rate) as u64;
            (due.saturating_sub(self.produced)).clamp(1, BATCH_ROWS as u64) as usize
        } else {
            BATCH_ROWS
        };
        if let Some(left) = self.remaining {
            if left == 0 {
                return None;
            }
            rows = rows.min(left as usize);
            self.remaining = Some(left - rows as u64);
        }
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let keys: Vec<u64> = (0..rows).map(|_| self.random() % self.keys).collect();
        let mut values = Vec::with_capacity(rows);
        for &k in &keys {
            let step = (self.random() % 2001) as f64 / 1000.0 - 1.0;
            let level = &mut self.levels[k as usize];
            *level += step * 0.1;
            values.push((*level * 1000.0).round() / 1000.0);
        }
        let first = self.produced as i64;
        let columns: Vec<ArrayRef> = self
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| -> ArrayRef {
                let is_time = Some(i) == self.event_time;
                let time = |r: usize| {
                    if self.rate > 0.0 {
                        now_ms
                    } else {
                        first + r as i64
                    }
                };
                match f.data_type() {
                    DataType::Timestamp(TimeUnit::Millisecond, _) => {
                        let mut b = TimestampMillisecondBuilder::with_capacity(rows);
                        (0..rows).for_each(|r| b.append_value(time(r)));
                        Arc::new(b.finish())
                    }
                    DataType::Int64 => {
                        let mut b = Int64Builder::with_capacity(rows);
                        (0..rows).for_each(|r| {
                            b.append_value(if is_time { time(r) } else { first + r as i64 })
                        });
                        Arc::new(b.finish())
                    }
                    DataType::Int32 => {
                        let mut b = Int32Builder::with_capacity(rows);
                        (0..rows).for_each(|r| b.append_value((first + r as i64) as i32));
                        Arc::new(b.finish())
                    }
                    DataType::Float64 => {
                        let mut b = Float64Builder::with_capacity(rows);
                        values.iter().for_each(|v| b.append_value(*v));
                        Arc::new(b.finish())
                    }
                    DataType::Utf8 => {
                        // Keys named after the column: `sensor-07`, `key-3`.
                        let mut b = StringBuilder::with_capacity(rows, rows * 12);
                        keys.iter()
                            .for_each(|k| b.append_value(format!("{}-{k:02}", f.name())));
                        Arc::new(b.finish())
                    }
                    DataType::Boolean => {
                        let mut b = BooleanBuilder::with_capacity(rows);
                        keys.iter().for_each(|k| b.append_value(k % 2 == 0));
                        Arc::new(b.finish())
                    }
                    other => arrow_array::new_null_array(other, rows),
                }
            })
            .collect();
        self.produced += rows as u64;
        RecordBatch::try_new(Arc::clone(&self.schema), columns).ok()
    }
}

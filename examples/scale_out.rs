//! Running a sliq query on timely dataflow workers, partitioned by key.
//!
//! One process, four worker threads:
//!
//! ```text
//! cargo run --release -p sliq --example scale_out -- --workers 4
//! ```
//!
//! Two processes of two workers each (process 0 reads the data and prints
//! the results; run the second command in another terminal):
//!
//! ```text
//! printf '127.0.0.1:2101\n127.0.0.1:2102\n' > hosts.txt
//! cargo run --release -p sliq --example scale_out -- --workers 2 --process 0 --processes 2 --hostfile hosts.txt
//! cargo run --release -p sliq --example scale_out -- --workers 2 --process 1 --processes 2 --hostfile hosts.txt
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{Float64Array, RecordBatch, StringArray, TimestampMillisecondArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use sliq::StreamOptions;
use sliq_timely::{Config, Job};

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Millisecond, None),
            false,
        ),
        Field::new("sensor", DataType::Utf8, false),
        Field::new("value", DataType::Float64, false),
    ]))
}

/// `batches` batches of 4096 readings from 10,000 sensors, 1 ms apart.
fn readings(batches: usize) -> impl Iterator<Item = Result<RecordBatch, String>> + Send {
    (0..batches).map(|b| {
        let rows = 4096;
        let first = (b * rows) as i64;
        let ts: Vec<i64> = (first..first + rows as i64).collect();
        let sensors: Vec<String> = ts
            .iter()
            .map(|t| format!("sensor-{}", (t * 7919) % 10_000))
            .collect();
        let values: Vec<f64> = ts.iter().map(|t| ((t * 31) % 1000) as f64 / 10.0).collect();
        RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(TimestampMillisecondArray::from(ts)),
                Arc::new(StringArray::from(sensors)),
                Arc::new(Float64Array::from(values)),
            ],
        )
        .map_err(|e| e.to_string())
    })
}

fn config() -> Result<Config, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let workers = value("--workers").map_or(Ok(2), |w| w.parse())?;
    Ok(match value("--hostfile") {
        Some(hostfile) => Config::from_hostfile(
            workers,
            value("--process").map_or(Ok(0), |p| p.parse())?,
            value("--processes").map_or(Ok(2), |p| p.parse())?,
            &PathBuf::from(hostfile),
        )?,
        None => Config::workers(workers),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = config()?;
    let job = Job::new(
        "readings",
        schema(),
        StreamOptions::default().event_time("ts"),
        "SELECT sensor, value, max(value) OVER (RANGE '10s') AS peak, \
                avg(value) OVER (ROWS 99 PRECEDING) AS recent \
         FROM readings GROUP BY sensor",
    );
    // Only process 0 reads the data; the exchange brings every worker its keys.
    let sources: Vec<_> = if config.process() == 0 {
        vec![readings(250)]
    } else {
        Vec::new()
    };
    let mut shown = 0;
    let stats = sliq_timely::run(&job, &config, sources, |batch| {
        if shown < 3 {
            println!(
                "{}",
                arrow_cast::pretty::pretty_format_batches(&[
                    batch.slice(0, batch.num_rows().min(2))
                ])?
            );
            shown += 1;
        }
        Ok::<_, arrow_schema::ArrowError>(())
    })?;
    println!(
        "process {}: read {} rows, {} results, {:.2} s, partitioned by {:?}, watermark {:?}",
        config.process(),
        stats.rows_read,
        stats.rows_out,
        stats.elapsed.as_secs_f64(),
        stats.partition_key,
        stats.watermark
    );
    for w in &stats.workers {
        println!("  worker {}: {} rows, {} keys", w.index, w.rows, w.keys);
    }
    Ok(())
}

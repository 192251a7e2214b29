//! Splitting a stream between workers by a query's partition key, so that
//! every key's windows live in exactly one place (used by `sliq-timely`).
//!
//! A row's partition is a fixed hash (xxh3 of the key in Arrow's row
//! format, floats made SQL-equal first as for grouping) of the key columns
//! of the query's windows: the same key gives the same partition in every
//! process that runs the same build, whatever the batch it arrives in. A
//! query without keys (one global window), or whose windows are
//! partitioned by different keys (in a query over a subquery: keys that do
//! not include the subquery's), cannot be split: all its rows go to
//! partition 0.

use std::sync::Arc;

use arrow_array::{RecordBatch, UInt32Array};
use arrow_row::RowConverter;
use arrow_schema::SchemaRef;
use arrow_select::take::take_record_batch;
use datafusion_expr::Expr;
use sliq_sql::{QueryPlan, WindowGroup};

use crate::expr::{CompiledExpr, RowFailures};
use crate::keys::{key_sort_field, sql_equal_floats};

/// The keys a query's rows can be split by, over the stream's columns: the
/// keys of the first query in the chain that has windows (the innermost one
/// that reads the stream has `plan.input == None`), when every window of
/// every query keeps the rows of one such key together.
///
/// The first windowed query's windows must all have the same keys; if it
/// reads a subquery, each key must be a column that the queries below pass
/// on unchanged from the stream (renamed or not). A query after it may have
/// windows only if each of them is keyed by (at least) every one of those
/// key columns as they are passed on (`SELECT k AS key, … GROUP BY k` read
/// by `… GROUP BY key, sensor`): then all rows of one of its keys hash
/// alike. Otherwise the chain cannot be split.
struct SplitKeys {
    /// The partition key, over the stream's columns.
    keys: Vec<Expr>,
    /// The key as written in the query that set it.
    key_names: Vec<String>,
    /// For each key, the result columns of the query examined last that
    /// carry it unchanged (empty when none does).
    carried: Vec<Vec<String>>,
}

/// How far a chain of queries can be split, query by query from the one
/// that reads the stream.
enum Split {
    /// No query so far has windows: for each stream column, the result
    /// columns of the last query that carry it unchanged.
    Free(Vec<(String, Vec<String>)>),
    /// Split by these keys.
    Keyed(SplitKeys),
}

impl SplitKeys {
    /// The split of `plan`'s rows, with the schema of the stream they come from.
    fn of(plan: &QueryPlan) -> Option<(Self, &SchemaRef)> {
        let (split, stream_schema) = Self::walk(plan)?;
        match split {
            Split::Keyed(keys) => Some((keys, stream_schema)),
            Split::Free(_) => None,
        }
    }

    fn walk(plan: &QueryPlan) -> Option<(Split, &SchemaRef)> {
        let (split, stream_schema) = match plan.input.as_deref() {
            None => {
                let columns = plan.input_schema.fields().iter();
                let carried = columns.map(|f| (f.name().clone(), vec![f.name().clone()]));
                (Split::Free(carried.collect()), &plan.input_schema)
            }
            Some(input) => Self::walk(input)?,
        };
        let split = match split {
            Split::Free(columns) if plan.windows.is_empty() => Split::Free(columns),
            Split::Free(columns) => Split::Keyed(Self::first_keys(plan, &columns)?),
            Split::Keyed(keys) => {
                let keeps_keys_together = |w: &WindowGroup| {
                    keys.carried.iter().all(|names| {
                        w.keys
                            .iter()
                            .filter_map(column_name)
                            .any(|k| names.iter().any(|n| n == k))
                    })
                };
                if !plan.windows.iter().all(keeps_keys_together) {
                    return None;
                }
                Split::Keyed(keys)
            }
        };
        // The names under which each carried column leaves this query.
        let passed_on = |names: &[String]| -> Vec<String> {
            plan.outputs
                .iter()
                .filter(|(_, e)| column_name(e).is_some_and(|c| names.iter().any(|n| n == c)))
                .map(|(name, _)| name.clone())
                .collect()
        };
        let split = match split {
            Split::Free(columns) => Split::Free(
                columns
                    .into_iter()
                    .map(|(column, names)| (column, passed_on(&names)))
                    .collect(),
            ),
            Split::Keyed(mut keys) => {
                for names in &mut keys.carried {
                    *names = passed_on(names);
                }
                Split::Keyed(keys)
            }
        };
        Some((split, stream_schema))
    }

    /// The keys of `plan`, the first query of its chain with windows, which
    /// must all agree; `columns` tells which stream column each of its input
    /// columns carries (every one, when `plan` reads the stream itself).
    fn first_keys(plan: &QueryPlan, columns: &[(String, Vec<String>)]) -> Option<Self> {
        let first = plan.windows.first()?;
        if first.keys.is_empty() || plan.windows.iter().any(|w| w.keys != first.keys) {
            return None;
        }
        let keys = match plan.input {
            // Over the stream: any expression of its columns.
            None => first.keys.clone(),
            // Over a subquery: columns it passes on from the stream.
            Some(_) => first
                .keys
                .iter()
                .map(|k| {
                    let name = column_name(k)?;
                    let (column, _) = columns
                        .iter()
                        .find(|(_, names)| names.iter().any(|n| n == name))?;
                    Some(Expr::Column(datafusion_common::Column::new_unqualified(
                        column,
                    )))
                })
                .collect::<Option<Vec<_>>>()?,
        };
        let carried = first
            .keys
            .iter()
            .map(|k| column_name(k).map(str::to_string).into_iter().collect())
            .collect();
        Some(SplitKeys {
            keys,
            key_names: first.key_names.clone(),
            carried,
        })
    }
}

/// The column `e` reads, when it is a plain column reference.
fn column_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Column(c) => Some(c.name.as_str()),
        _ => None,
    }
}

/// How a query's rows are split between partitions.
pub struct Partitioner {
    keys: Vec<CompiledExpr>,
    key_names: Vec<String>,
    converter: Option<RowConverter>,
    /// Per partition, the rows of the current batch (reused between batches).
    rows: Vec<Vec<u32>>,
}

impl std::fmt::Debug for Partitioner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partitioner")
            .field("keys", &self.key_names)
            .finish_non_exhaustive()
    }
}

impl Partitioner {
    /// The partitioner of `plan`: by its windows' keys when they all agree
    /// (see [`SplitKeys`] for a query over a subquery).
    pub(crate) fn new(plan: &QueryPlan) -> Result<Self, String> {
        let Some(split) = SplitKeys::of(plan) else {
            return Ok(Partitioner {
                keys: Vec::new(),
                key_names: Vec::new(),
                converter: None,
                rows: Vec::new(),
            });
        };
        let (split, stream_schema) = split;
        let input = datafusion_common::DFSchema::try_from(Arc::clone(stream_schema))
            .map_err(|e| e.to_string())?;
        let keys = split
            .keys
            .iter()
            .map(|k| CompiledExpr::new(k, &input))
            .collect::<Result<Vec<_>, _>>()?;
        let fields = keys.iter().map(|k| key_sort_field(k.data_type())).collect();
        let converter = RowConverter::new(fields)
            .map_err(|e| format!("cannot partition by these key types: {e}"))?;
        Ok(Partitioner {
            keys,
            key_names: split.key_names,
            converter: Some(converter),
            rows: Vec::new(),
        })
    }

    /// The partition key as written in the query; empty when the query's
    /// rows cannot be split (they all go to partition 0).
    pub fn key_names(&self) -> &[String] {
        &self.key_names
    }

    /// Splits `batch` into at most `partitions` batches, each paired with its
    /// partition number; rows keep their order within each part, and empty
    /// parts are left out.
    pub fn split(
        &mut self,
        batch: &RecordBatch,
        partitions: usize,
    ) -> Result<Vec<(usize, RecordBatch)>, String> {
        let Some(converter) = &self.converter else {
            return Ok(vec![(0, batch.clone())]);
        };
        if partitions <= 1 || batch.num_rows() == 0 {
            return Ok(vec![(0, batch.clone())]);
        }
        let keys = self
            .keys
            .iter()
            // A key that fails on a row's data is NULL there, as in the
            // query itself (which counts the failure).
            .map(|k| {
                k.evaluate_rows(batch, &mut RowFailures::default())
                    .and_then(|column| sql_equal_floats(&column))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let encoded = converter
            .convert_columns(&keys)
            .map_err(|e| format!("cannot encode partition keys: {e}"))?;
        self.rows.resize_with(partitions, Vec::new);
        for part in &mut self.rows {
            part.clear();
        }
        for (i, row) in encoded.iter().enumerate() {
            let part = xxhash_rust::xxh3::xxh3_64(row.as_ref()) % partitions as u64;
            self.rows[part as usize].push(i as u32);
        }
        let mut parts = Vec::new();
        for (part, rows) in self.rows.iter().enumerate() {
            if rows.is_empty() {
                continue;
            }
            if rows.len() == batch.num_rows() {
                parts.push((part, batch.clone()));
                continue;
            }
            let indices = UInt32Array::from_iter_values(rows.iter().copied());
            let taken =
                take_record_batch(batch, &indices).map_err(|e| format!("splitting rows: {e}"))?;
            parts.push((part, taken));
        }
        debug_assert_eq!(
            parts.iter().map(|(_, b)| b.num_rows()).sum::<usize>(),
            batch.num_rows()
        );
        Ok(parts)
    }
}

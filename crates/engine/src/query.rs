//! A planned query compiled to physical expressions and window operators,
//! processing one input batch into one output batch.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, SchemaRef, TimeUnit};
use datafusion_common::DFSchema;
use datafusion_expr::Expr;
use sliq_sql::{AggregateFunction, Frame, QueryPlan};

use crate::distinct::distinct_count_operator;
use crate::expr::{CompiledExpr, RowFailures};
use crate::frame::{FramePass, FrameState, Late};
use crate::group::{self, GroupOperator, MemberSpec};
use crate::keys::KeyMap;
use crate::operator::{
    AggregateOperator, BuildOperator, Delay, IsPaned, WindowAlgorithm, pane_rows,
};
use crate::udaf::RegisteredAggregate;

/// What one stage of a query (a subquery, or the query around it) made of
/// a batch.
struct Stage {
    /// Its output rows.
    rows: RecordBatch,
    /// Late rows, and failures counted against the pushed batch's rows.
    outcome: BatchOutcome,
    /// The output rows' clocks.
    clocks: Option<Vec<i64>>,
    /// Where the output rows came from.
    origins: RowOrigins,
}

/// Which rows of a pushed batch a stage's output rows are: the masks that
/// kept them (WHERE, HAVING and QUALIFY of each stage), the first applied
/// first. Every other step keeps the rows one for one.
#[derive(Default)]
struct RowOrigins {
    kept: Vec<BooleanArray>,
}

impl RowOrigins {
    /// `failures`, counted against the rows these origins kept, counted
    /// against the pushed batch.
    fn trace(&self, failures: RowFailures) -> RowFailures {
        self.kept
            .iter()
            .rev()
            .fold(failures, |failures, kept| failures.through(Some(kept)))
    }
}

/// What processing a batch produced besides its output.
#[derive(Debug, Default, Clone)]
pub struct BatchOutcome {
    /// Rows that were late for some RANGE window.
    pub late_rows: usize,
    /// How many of them have no event time (NULL).
    pub untimed_rows: usize,
    /// Values that could not be computed (NULL instead): an expression
    /// failing on a row's data, an aggregate overflowing.
    pub failures: RowFailures,
}

struct CompiledWindow {
    keys: Vec<CompiledExpr>,
    key_map: KeyMap,
    event_time: Option<CompiledExpr>,
    frame: FrameState,
    key_ids: Vec<u32>,
    pass: FramePass,
    /// This batch's arguments in the pass's visiting order.
    visited: VisitedArgs,
    /// How idle keys are forgotten, under `key_ttl`.
    expiry: Option<KeyExpiry>,
    /// This batch's rows whose key restarts (batch order), under `key_ttl`.
    restarts: Vec<bool>,
}

/// Forgetting a window group's idle keys (`key_ttl`). A row whose key's
/// previous row came more than the TTL earlier, by the stream's clock (the
/// newest event time of the stream's rows up to each row), restarts its
/// key: the key's earlier rows leave its windows as the row comes in. Which
/// rows restart depends on the rows alone, not on how they are batched.
/// Memory is freed apart from that: each batch looks at up to two key ids
/// per row, round-robin, and forgets the keys idle longer than the TTL at
/// the batch's last clock. Any later row of such a key restarts it anyway
/// (the clock never goes back), so when a key is forgotten changes no
/// result; every key is looked at within `keys / 2` rows, and the cost per
/// row stays constant.
struct KeyExpiry {
    /// Milliseconds of the stream's clock a key may stay idle.
    ttl: i64,
    /// Per key id, the stream's clock at the key's last row ([`NO_ROW`]
    /// for a key without one, or forgotten).
    last_active: Vec<i64>,
    /// The next key id the sweep looks at.
    cursor: usize,
    /// Keys forgotten so far.
    forgotten: u64,
}

/// [`KeyExpiry::last_active`] of a key that has no row yet.
const NO_ROW: i64 = i64::MIN;

impl KeyExpiry {
    fn new(ttl: i64) -> Self {
        KeyExpiry {
            ttl,
            last_active: Vec::new(),
            cursor: 0,
            forgotten: 0,
        }
    }

    /// Whether a key last active at `last` restarts at `clock`.
    fn idle(&self, last: i64, clock: i64) -> bool {
        last != NO_ROW && clock.saturating_sub(last) > self.ttl
    }

    /// Marks in `restarts` the rows (batch order) whose key restarts, and
    /// notes each row's clock as its key's last.
    fn restarts(&mut self, key_ids: &[u32], keys: usize, clocks: &[i64], restarts: &mut Vec<bool>) {
        debug_assert_eq!(key_ids.len(), clocks.len());
        if self.last_active.len() < keys {
            self.last_active.resize(keys, NO_ROW);
        }
        restarts.clear();
        for (&key, &clock) in key_ids.iter().zip(clocks) {
            let last = std::mem::replace(&mut self.last_active[key as usize], clock);
            restarts.push(self.idle(last, clock));
        }
    }

    /// Which rows (batch order) [`Self::restarts`] will mark, without
    /// noting anything.
    fn restarts_ahead(&self, key_ids: &[u32], clocks: &[i64]) -> Vec<bool> {
        let mut last: hashbrown::HashMap<u32, i64> = hashbrown::HashMap::new();
        key_ids
            .iter()
            .zip(clocks)
            .map(|(&key, &clock)| {
                let before = last.insert(key, clock).unwrap_or_else(|| {
                    self.last_active
                        .get(key as usize)
                        .copied()
                        .unwrap_or(NO_ROW)
                });
                self.idle(before, clock)
            })
            .collect()
    }

    /// Appends to `idle` the live keys among the next `2 × rows` ids that
    /// have been idle longer than the TTL at `clock`, or have no row.
    fn sweep(&mut self, key_map: &KeyMap, rows: usize, clock: i64, idle: &mut Vec<u32>) {
        let ids = self.last_active.len().min(key_map.key_count());
        for _ in 0..(2 * rows).min(ids) {
            let id = self.cursor.min(ids - 1);
            self.cursor = if id + 1 < ids { id + 1 } else { 0 };
            // A live key without a row was only looked up (the late-row
            // check of a push that was then refused): nothing holds it.
            let last = self.last_active[id];
            if (last == NO_ROW || self.idle(last, clock)) && key_map.is_live(id as u32) {
                idle.push(id as u32);
            }
        }
    }
}

struct CompiledAggregate {
    args: Vec<CompiledExpr>,
    /// `FILTER (WHERE …)`.
    filter: Option<CompiledExpr>,
    window: usize,
    /// It is its frame's row count (see [`counts_frame_rows`]).
    counts_frame: bool,
    /// Its own windows, or `None` when it is a member of a [`CompiledGroup`]
    /// or counts its frame's rows.
    operator: Option<Box<dyn AggregateOperator>>,
}

/// Bytes per row that `function`'s window stores: its partial aggregate's
/// size. A user-defined aggregate's is not known here, nor what a distinct
/// count's hash lookups cost; they count as large enough for their rows to
/// be visited key by key.
fn window_bytes_per_row(function: &AggregateFunction) -> usize {
    match function {
        AggregateFunction::Builtin(resolved) => resolved.visit(group::AggLayout).size(),
        AggregateFunction::User(_) | AggregateFunction::DistinctCount(_) => {
            crate::frame::GROUP_MIN_BYTES
        }
    }
}

/// Whether `call` is the number of rows in its frame (`count(*)` or
/// `row_number()` without FILTER), which the frame pass knows: it then
/// needs no window, and no field in a shared window's records.
fn counts_frame_rows(call: &sliq_sql::AggregateCall) -> bool {
    call.filter.is_none()
        && matches!(&call.function, AggregateFunction::Builtin(f) if f.counts_frame_rows())
}

/// The rows of `frame`'s windows when it counts them (`ROWS n PRECEDING`:
/// n + 1; `ROWS BETWEEN n PRECEDING AND k PRECEDING`: n − k + 1).
fn frame_rows(frame: &Frame) -> Option<u64> {
    match *frame {
        Frame::Rows(n) => Some(n.saturating_add(1)),
        Frame::RowsBefore { start, end } => Some(start.saturating_sub(end).saturating_add(1)),
        Frame::Range(_) | Frame::RangeBefore { .. } => None,
        Frame::Unbounded | Frame::UnboundedBefore(_) | Frame::UnboundedBeforeTime(_) => None,
    }
}

/// The rows per pane of `call`'s windows, if they are paned (a sketch; see
/// `pane_rows`).
fn paned_rows(
    call: &sliq_sql::AggregateCall,
    frame: &Frame,
    algorithm: WindowAlgorithm,
) -> Option<usize> {
    let sketch = matches!(&call.function, AggregateFunction::Builtin(f) if f.visit(IsPaned));
    pane_rows(algorithm, frame.is_unbounded(), frame_rows(frame)).filter(|_| sketch)
}

/// Aggregates over the same window group sharing one window per key.
struct CompiledGroup {
    window: usize,
    /// The members' indices among the query's aggregates.
    members: Vec<usize>,
    operator: Box<dyn GroupOperator>,
}

/// A query ready to run.
pub struct CompiledQuery {
    /// The subquery whose results are this query's rows: it processes each
    /// batch first.
    input: Option<Box<CompiledQuery>>,
    filter: Option<CompiledExpr>,
    windows: Vec<CompiledWindow>,
    aggregates: Vec<CompiledAggregate>,
    groups: Vec<CompiledGroup>,
    intermediate_schema: SchemaRef,
    /// `HAVING` and `QUALIFY`, over the intermediate row.
    result_filter: Option<CompiledExpr>,
    outputs: Vec<CompiledExpr>,
    output_schema: SchemaRef,
}

/// Event times as `Int64` milliseconds: TIMESTAMPs of any unit, dates,
/// and BIGINT or INT taken as milliseconds.
pub(crate) fn event_time_millis(array: ArrayRef) -> Result<ArrayRef, String> {
    let ms = match array.data_type() {
        DataType::Timestamp(TimeUnit::Millisecond, _) | DataType::Int64 => array,
        DataType::Timestamp(_, _) | DataType::Int32 | DataType::Date32 | DataType::Date64 => {
            let target = match array.data_type() {
                DataType::Int32 => DataType::Int64,
                _ => DataType::Timestamp(TimeUnit::Millisecond, None),
            };
            arrow_cast::cast(&array, &target).map_err(|e| format!("event time: {e}"))?
        }
        other => {
            return Err(format!(
                "event time must be TIMESTAMP or BIGINT, not {other}"
            ));
        }
    };
    cast_if_needed(&ms, &DataType::Int64).map_err(|e| format!("event time: {e}"))
}

/// The values of the rows `kept` keeps (all of them without a mask).
fn rows_kept(values: &[i64], kept: Option<&BooleanArray>) -> Vec<i64> {
    match kept {
        None => values.to_vec(),
        Some(mask) => values
            .iter()
            .zip(mask.values().iter())
            .filter_map(|(&v, keep)| keep.then_some(v))
            .collect(),
    }
}

/// Which rows of `batch` the predicate `p` holds for: NULL, and a failure
/// to evaluate (counted in `failures`), count as false.
fn row_mask(
    p: &CompiledExpr,
    batch: &RecordBatch,
    failures: &mut RowFailures,
) -> Result<BooleanArray, String> {
    let mask = p.evaluate_rows(batch, failures)?;
    let mask: &BooleanArray = mask
        .as_boolean_opt()
        .ok_or_else(|| format!("{p} did not evaluate to BOOLEAN"))?;
    Ok(if mask.null_count() > 0 {
        arrow_select::filter::prep_null_mask_filter(mask)
    } else {
        mask.clone()
    })
}

impl CompiledQuery {
    /// Compiles `plan` with window algorithm `algorithm`.
    pub fn new(plan: &QueryPlan, algorithm: WindowAlgorithm) -> Result<Self, String> {
        let subquery = plan
            .input
            .as_deref()
            .map(|p| CompiledQuery::new(p, algorithm).map(Box::new))
            .transpose()?;
        let input =
            DFSchema::try_from(Arc::clone(&plan.input_schema)).map_err(|e| e.to_string())?;
        let intermediate =
            DFSchema::try_from(Arc::clone(&plan.intermediate_schema)).map_err(|e| e.to_string())?;
        let filter = plan
            .filter
            .as_ref()
            .map(|f| CompiledExpr::new(f, &input))
            .transpose()?
            .map(|f| f.written_as(plan.written.filter.as_deref()));
        let mut windows = Vec::new();
        for (index, w) in plan.windows.iter().enumerate() {
            let keys = w
                .keys
                .iter()
                .map(|k| CompiledExpr::new(k, &input))
                .collect::<Result<Vec<_>, _>>()?;
            let key_types: Vec<DataType> = keys.iter().map(|k| k.data_type().clone()).collect();
            let event_time = w
                .event_time
                .as_ref()
                .map(|c| {
                    CompiledExpr::new(
                        &Expr::Column(datafusion_common::Column::new_unqualified(c)),
                        &input,
                    )
                })
                .transpose()?;
            windows.push(CompiledWindow {
                keys,
                key_map: KeyMap::new(&key_types)?,
                event_time,
                frame: FrameState::new(w.frame),
                key_ids: Vec::new(),
                pass: FramePass::new(
                    plan.aggregates
                        .iter()
                        .any(|a| a.window == index && counts_frame_rows(a)),
                    plan.aggregates
                        .iter()
                        .filter(|a| a.window == index && !counts_frame_rows(a))
                        .map(|a| window_bytes_per_row(&a.function))
                        .sum(),
                ),
                visited: VisitedArgs::default(),
                expiry: None,
                restarts: Vec::new(),
            });
        }
        let groups = Self::shared_groups(plan, algorithm);
        let grouped = |i: usize| groups.iter().any(|g| g.members.contains(&i));
        let mut aggregates = Vec::new();
        for (i, a) in plan.aggregates.iter().enumerate() {
            let args = a
                .args
                .iter()
                .map(|e| CompiledExpr::new(e, &input))
                .collect::<Result<Vec<_>, _>>()?;
            let output = a.function.output_type().clone();
            let counts_frame = counts_frame_rows(a);
            let frame = plan.windows[a.window].frame;
            let (unbounded, delay) = (frame.is_unbounded(), Delay::of(&frame));
            let operator = match &a.function {
                _ if counts_frame => None,
                AggregateFunction::Builtin(_) if grouped(i) => None,
                AggregateFunction::Builtin(resolved) => Some(resolved.visit(BuildOperator {
                    algorithm,
                    output,
                    unbounded,
                    delay,
                    frame_rows: frame_rows(&frame),
                })),
                AggregateFunction::DistinctCount(distinct) => Some(distinct_count_operator(
                    distinct.input(),
                    unbounded,
                    delay != Delay::None,
                )),
                AggregateFunction::User(user) => {
                    match user.as_any().downcast_ref::<RegisteredAggregate>() {
                        Some(registered) => Some(registered.build(algorithm, unbounded, delay)),
                        None => {
                            return Err(format!(
                                "aggregate {} was not registered with this engine",
                                user.name()
                            ));
                        }
                    }
                }
            };
            let filter = a
                .filter
                .as_ref()
                .map(|f| CompiledExpr::new(f, &input))
                .transpose()?;
            aggregates.push(CompiledAggregate {
                counts_frame,
                args,
                filter,
                window: a.window,
                operator,
            });
        }
        // Messages name an aggregate's result by its call.
        let calls: HashMap<String, String> = plan
            .aggregates
            .iter()
            .enumerate()
            .map(|(i, a)| (sliq_sql::aggregate_column(i), a.display.clone()))
            .collect();
        let outputs = plan
            .outputs
            .iter()
            .enumerate()
            .map(|(i, (_, e))| {
                let written = plan.written.outputs.get(i).and_then(Option::as_deref);
                CompiledExpr::new_showing(e, &intermediate, &calls).map(|e| e.written_as(written))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let result_filter = plan
            .result_filter
            .as_ref()
            .map(|f| CompiledExpr::new_showing(&f.condition, &intermediate, &calls))
            .transpose()?;
        Ok(CompiledQuery {
            input: subquery,
            filter,
            windows,
            aggregates,
            groups,
            intermediate_schema: Arc::clone(&plan.intermediate_schema),
            result_filter,
            outputs,
            output_schema: Arc::clone(&plan.output_schema),
        })
    }

    /// This query, restarting and forgetting keys idle for more than
    /// `ttl_ms` of the stream's clock (see [`KeyExpiry`] and
    /// `StreamOptions::key_ttl`), in every stage. The global window of a
    /// query without keys is not a key: it never restarts.
    pub fn forgetting_idle_keys(mut self, ttl_ms: i64) -> Self {
        self.input = self
            .input
            .map(|input| Box::new(input.forgetting_idle_keys(ttl_ms)));
        for w in &mut self.windows {
            if !w.keys.is_empty() {
                w.key_map.remember_keys();
                w.expiry = Some(KeyExpiry::new(ttl_ms));
            }
        }
        self
    }

    /// Forgets the idle keys that this batch's sweep finds (see
    /// [`KeyExpiry`]) at `clock`, the stream's clock after the batch.
    fn forget_idle_keys(&mut self, rows: usize, clock: i64) {
        let mut idle = Vec::new();
        for window in 0..self.windows.len() {
            let w = &mut self.windows[window];
            let Some(expiry) = &mut w.expiry else {
                continue;
            };
            idle.clear();
            expiry.sweep(&w.key_map, rows, clock, &mut idle);
            for &key in &idle {
                self.forget_key(window, key);
            }
        }
    }

    /// Drops every state window group `window` keeps for `key`.
    fn forget_key(&mut self, window: usize, key: u32) {
        let w = &mut self.windows[window];
        if !w.key_map.forget(key) {
            return;
        }
        w.frame.forget(key);
        if let Some(expiry) = &mut w.expiry {
            expiry.forgotten += 1;
            if let Some(last) = expiry.last_active.get_mut(key as usize) {
                *last = NO_ROW;
            }
        }
        for a in self.aggregates.iter_mut().filter(|a| a.window == window) {
            if let Some(operator) = &mut a.operator {
                operator.forget(key);
            }
        }
        for g in self.groups.iter_mut().filter(|g| g.window == window) {
            g.operator.forget(key);
        }
    }

    /// The window groups whose built-in aggregates (two or more) share one
    /// DABA Lite per key. Other algorithms (for cross-checks) keep one
    /// window per aggregate, and so do `UNBOUNDED PRECEDING` frames, whose
    /// aggregates keep a running fold per key instead of a window, and
    /// frames ending before the current row, whose latest rows wait outside
    /// the window.
    fn shared_groups(plan: &QueryPlan, algorithm: WindowAlgorithm) -> Vec<CompiledGroup> {
        if algorithm != WindowAlgorithm::DabaLite {
            return Vec::new();
        }
        let mut groups = Vec::new();
        for (window, group) in plan.windows.iter().enumerate() {
            if group.frame.is_unbounded() {
                continue;
            }
            let (members, specs): (Vec<usize>, Vec<MemberSpec<'_>>) = plan
                .aggregates
                .iter()
                .enumerate()
                .filter(|(_, a)| a.window == window && !counts_frame_rows(a))
                .filter_map(|(i, a)| match &a.function {
                    AggregateFunction::Builtin(aggregate) => Some((
                        i,
                        MemberSpec {
                            aggregate,
                            output: a.function.output_type().clone(),
                        },
                    )),
                    AggregateFunction::User(_) | AggregateFunction::DistinctCount(_) => None,
                })
                .unzip();
            if members.len() < 2 {
                continue;
            }
            if let Some(operator) = group::build(&specs, group.frame.ends_before_current_row()) {
                groups.push(CompiledGroup {
                    window,
                    members,
                    operator,
                });
            }
        }
        groups
    }

    /// EXPLAIN lines naming the aggregates that share one window per key,
    /// and those that only count their frame's rows.
    pub fn explain_sharing(plan: &QueryPlan, algorithm: WindowAlgorithm) -> String {
        let subquery = plan.input.as_deref().map(|input| {
            let lines = Self::explain_sharing(input, algorithm);
            lines
                .lines()
                .map(|l| format!("  (subquery) {}\n", l.trim_start()))
                .collect::<String>()
        });
        let counted = plan
            .aggregates
            .iter()
            .enumerate()
            .filter(|(_, a)| counts_frame_rows(a))
            .map(|(i, a)| {
                format!(
                    "  Counted: {} = {} is window {}'s row count (no window of its own)\n",
                    sliq_sql::aggregate_column(i),
                    a.display,
                    a.window
                )
            });
        let paned = plan
            .aggregates
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let rows = paned_rows(a, &plan.windows[a.window].frame, algorithm)?;
                Some(format!(
                    "  Paned: {} = {} keeps its rows' inputs and one partial aggregate per {rows} rows per key\n",
                    sliq_sql::aggregate_column(i),
                    a.display,
                ))
            });
        let shared = Self::shared_groups(plan, algorithm).into_iter().map(|g| {
            let names: Vec<String> = g
                .members
                .iter()
                .map(|&i| sliq_sql::aggregate_column(i))
                .collect();
            format!(
                "  Shared: window {}'s {} keep one DABA Lite per key ({}-byte records)\n",
                g.window,
                names.join(", "),
                g.operator.record_bytes()
            )
        });
        subquery
            .into_iter()
            .chain(shared)
            .chain(paned)
            .chain(counted)
            .collect()
    }

    /// The rows of `batch` that pass WHERE. A row whose predicate fails to
    /// evaluate does not pass (as NULL does) and counts in `failures`.
    fn filtered(
        &self,
        batch: &RecordBatch,
        failures: &mut RowFailures,
    ) -> Result<(RecordBatch, Option<BooleanArray>), String> {
        let Some(filter) = &self.filter else {
            return Ok((batch.clone(), None));
        };
        let mask = row_mask(filter, batch, failures)?;
        let kept = arrow_select::filter::filter_record_batch(batch, &mask)
            .map_err(|e| format!("filtering: {e}"))?;
        Ok((kept, Some(mask)))
    }

    /// Each row's event time in milliseconds (NULL stays `None`).
    fn event_times(e: &CompiledExpr, batch: &RecordBatch) -> Result<Vec<Option<i64>>, String> {
        let ms = event_time_millis(e.evaluate(batch)?)?;
        Ok(ms.as_primitive::<Int64Type>().iter().collect())
    }

    /// Late rows of `batch` for any RANGE window, without changing state.
    /// A query over a subquery asks the innermost one, which reads the
    /// stream's rows: the rows of the queries around it do not exist yet.
    /// `clocks` are the rows' clocks, as [`Self::process`] will get them:
    /// a row whose key restarts (`key_ttl`) is not late.
    pub fn find_late(
        &mut self,
        batch: &RecordBatch,
        clocks: Option<&[i64]>,
    ) -> Result<Vec<Late>, String> {
        if let Some(input) = &mut self.input {
            return input.find_late(batch, clocks);
        }
        // Failures are counted when the batch is processed.
        let mut failures = RowFailures::default();
        let (batch, kept) = self.filtered(batch, &mut failures)?;
        let clocks = clocks.map(|c| rows_kept(c, kept.as_ref()));
        let mut late = Vec::new();
        for w in &mut self.windows {
            let Some(e) = &w.event_time else { continue };
            let times = Self::event_times(e, &batch)?;
            let keys = w
                .keys
                .iter()
                .map(|k| k.evaluate_rows(&batch, &mut failures))
                .collect::<Result<Vec<_>, _>>()?;
            // Assigning ids only adds entries for new keys: harmless here.
            w.key_map.assign(&keys, batch.num_rows(), &mut w.key_ids)?;
            let restarts = match (&w.expiry, &clocks) {
                (Some(expiry), Some(clocks)) => Some(expiry.restarts_ahead(&w.key_ids, clocks)),
                _ => None,
            };
            late.extend(
                w.frame
                    .find_late(&w.key_ids, Some(&times), restarts.as_deref()),
            );
        }
        // Rows are named by their place in the pushed batch, not among the
        // rows WHERE kept.
        if let Some(kept) = kept.filter(|_| !late.is_empty()) {
            let positions: Vec<usize> = kept.values().set_indices().collect();
            for late in &mut late {
                debug_assert!(late.row < positions.len(), "a late row WHERE did not keep");
                late.row = positions.get(late.row).copied().unwrap_or(late.row);
            }
        }
        Ok(late)
    }

    /// Runs one batch through the query (through its subquery first).
    /// `clocks` holds, per row, the stream's clock (its newest event time up
    /// to that row), by which idle keys restart and are forgotten (see
    /// [`Self::forgetting_idle_keys`]).
    ///
    /// Failures are counted against the rows of `batch`, whichever stage
    /// they happened in.
    pub fn process(
        &mut self,
        batch: &RecordBatch,
        clocks: Option<&[i64]>,
    ) -> Result<(RecordBatch, BatchOutcome), String> {
        let stage = self.process_stage(batch, clocks)?;
        Ok((stage.rows, stage.outcome))
    }

    /// [`Self::process`], also telling where the output rows came from.
    fn process_stage(
        &mut self,
        batch: &RecordBatch,
        clocks: Option<&[i64]>,
    ) -> Result<Stage, String> {
        let Some(input) = &mut self.input else {
            return self.process_own(batch, clocks);
        };
        let inner = input.process_stage(batch, clocks)?;
        let own = self.process_own(&inner.rows, inner.clocks.as_deref())?;
        let mut outcome = inner.outcome;
        outcome.late_rows = outcome.late_rows.max(own.outcome.late_rows);
        outcome.untimed_rows = outcome.untimed_rows.max(own.outcome.untimed_rows);
        outcome
            .failures
            .merge(inner.origins.trace(own.outcome.failures));
        let mut origins = inner.origins;
        origins.kept.extend(own.origins.kept);
        Ok(Stage {
            outcome,
            origins,
            ..own
        })
    }

    /// Runs one batch of this query's own input rows through its windows.
    fn process_own(
        &mut self,
        batch: &RecordBatch,
        clocks: Option<&[i64]>,
    ) -> Result<Stage, String> {
        let mut outcome = BatchOutcome::default();
        let (batch, kept) = self.filtered(batch, &mut outcome.failures)?;
        // Failures counted against the rows WHERE kept, then against the
        // rows HAVING or QUALIFY kept.
        let mut kept_failures = RowFailures::default();
        let mut output_failures = RowFailures::default();
        let clocks = clocks.map(|c| rows_kept(c, kept.as_ref()));
        let rows = batch.num_rows();
        // Evaluate everything that can fail before changing any state.
        let mut window_inputs = Vec::with_capacity(self.windows.len());
        for w in &self.windows {
            let keys = w
                .keys
                .iter()
                .map(|k| k.evaluate_rows(&batch, &mut kept_failures))
                .collect::<Result<Vec<_>, _>>()?;
            let times = w
                .event_time
                .as_ref()
                .map(|e| Self::event_times(e, &batch))
                .transpose()?;
            window_inputs.push((keys, times));
        }
        let args = self
            .aggregates
            .iter()
            .map(|a| {
                a.args
                    .iter()
                    .map(|e| e.evaluate_rows(&batch, &mut kept_failures))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let masks = self
            .aggregates
            .iter()
            .map(|a| {
                a.filter
                    .as_ref()
                    .map(|f| row_mask(f, &batch, &mut kept_failures))
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;

        for (w, (keys, times)) in self.windows.iter_mut().zip(&window_inputs) {
            w.key_map.assign(keys, rows, &mut w.key_ids)?;
            w.visited.done.clear();
            let restarts = match (&mut w.expiry, &clocks) {
                (Some(expiry), Some(clocks)) => {
                    let keys = w.key_map.key_count();
                    expiry.restarts(&w.key_ids, keys, clocks, &mut w.restarts);
                    Some(&w.restarts[..])
                }
                _ => None,
            };
            w.frame.advance(
                &w.key_ids,
                w.key_map.key_count(),
                times.as_deref(),
                restarts,
                &mut w.pass,
            );
            outcome.late_rows = outcome.late_rows.max(w.pass.late_count);
            outcome.untimed_rows = outcome.untimed_rows.max(w.pass.untimed_count);
        }
        let mut results: Vec<Option<(ArrayRef, RowFailures)>> =
            (0..self.aggregates.len()).map(|_| None).collect();
        for g in &mut self.groups {
            let w = &mut self.windows[g.window];
            let mut member_args = Vec::with_capacity(g.members.len());
            let mut member_masks = Vec::with_capacity(g.members.len());
            for &i in &g.members {
                let (args, mask) = w.visited.of(&w.pass, &args[i], masks[i].as_ref())?;
                member_args.push(args);
                member_masks.push(mask);
            }
            let outputs = g.operator.process(
                &member_args,
                &member_masks,
                &w.pass.keys,
                w.key_map.key_count(),
                &w.pass,
            );
            for (&i, (array, failures)) in g.members.iter().zip(outputs) {
                let array = w.pass.in_batch_order(array).map_err(reordering)?;
                results[i] = Some((array, failures));
            }
        }
        for (((a, args), mask), result) in self
            .aggregates
            .iter_mut()
            .zip(&args)
            .zip(&masks)
            .zip(&mut results)
        {
            let w = &mut self.windows[a.window];
            if a.counts_frame {
                *result = Some((frame_counts(&w.pass), RowFailures::default()));
            } else if let Some(operator) = &mut a.operator {
                let reordered;
                let (args, mask) = if w.pass.is_grouped() {
                    reordered = w.visited.of(&w.pass, args, mask.as_ref())?;
                    (&reordered.0[..], reordered.1.as_ref())
                } else {
                    (&args[..], mask.as_ref())
                };
                let (array, failures) =
                    operator.process(args, mask, &w.pass.keys, w.key_map.key_count(), &w.pass);
                let array = w.pass.in_batch_order(array).map_err(reordering)?;
                *result = Some((array, failures));
            }
        }
        if let Some(&clock) = clocks.as_ref().and_then(|c| c.last()) {
            self.forget_idle_keys(rows, clock);
        }
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        for result in results {
            let (array, failures) =
                result.ok_or("an aggregate without an operator (a planning bug)")?;
            kept_failures.merge(failures);
            columns.push(array);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let intermediate = RecordBatch::try_new_with_options(
            Arc::clone(&self.intermediate_schema),
            columns,
            &options,
        )
        .map_err(|e| format!("assembling results: {e}"))?;
        // HAVING and QUALIFY drop rows after their windows took them in.
        let (intermediate, clocks, results_kept) = match &self.result_filter {
            Some(q) => {
                let mask = row_mask(q, &intermediate, &mut kept_failures)?;
                let kept = arrow_select::filter::filter_record_batch(&intermediate, &mask)
                    .map_err(|e| format!("filtering results: {e}"))?;
                (kept, clocks.map(|c| rows_kept(&c, Some(&mask))), Some(mask))
            }
            None => (intermediate, clocks, None),
        };
        let options = RecordBatchOptions::new().with_row_count(Some(intermediate.num_rows()));
        let out = self
            .outputs
            .iter()
            .map(|e| e.evaluate_rows(&intermediate, &mut output_failures))
            .collect::<Result<Vec<_>, _>>()?;
        kept_failures.merge(output_failures.through(results_kept.as_ref()));
        outcome.failures.merge(kept_failures.through(kept.as_ref()));
        let origins = RowOrigins {
            kept: kept.into_iter().chain(results_kept).collect(),
        };
        let out = out
            .into_iter()
            .zip(self.output_schema.fields())
            .map(|(array, field)| {
                if array.data_type() == field.data_type() {
                    Ok(array)
                } else {
                    arrow_cast::cast(&array, field.data_type())
                        .map_err(|e| format!("output {}: {e}", field.name()))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rows =
            RecordBatch::try_new_with_options(Arc::clone(&self.output_schema), out, &options)
                .map_err(|e| format!("assembling output: {e}"))?;
        Ok(Stage {
            rows,
            outcome,
            clocks,
            origins,
        })
    }

    /// Number of keys per window group (seen and not forgotten), the
    /// subquery's first.
    pub fn key_counts(&self) -> Vec<usize> {
        let mut counts = self
            .input
            .as_ref()
            .map(|input| input.key_counts())
            .unwrap_or_default();
        counts.extend(self.windows.iter().map(|w| w.key_map.live_keys()));
        counts
    }

    /// Keys forgotten for being idle (`key_ttl`), in every stage.
    pub fn forgotten_keys(&self) -> u64 {
        let own: u64 = self
            .windows
            .iter()
            .filter_map(|w| w.expiry.as_ref())
            .map(|e| e.forgotten)
            .sum();
        own + self
            .input
            .as_ref()
            .map_or(0, |input| input.forgotten_keys())
    }
}

/// Aggregates' arguments put into a window's visiting order (see
/// [`FramePass`]), each array once however many aggregates read it (as in
/// `max(v), avg(v)`).
#[derive(Default)]
struct VisitedArgs {
    /// Arrays in batch order, and in visiting order.
    done: Vec<(ArrayRef, ArrayRef)>,
}

impl VisitedArgs {
    /// `array` in `pass`'s visiting order.
    fn array(&mut self, pass: &FramePass, array: &ArrayRef) -> Result<ArrayRef, String> {
        if let Some((_, visited)) = self.done.iter().find(|(a, _)| Arc::ptr_eq(a, array)) {
            return Ok(Arc::clone(visited));
        }
        let visited = pass.in_visit_order(array).map_err(reordering)?;
        self.done.push((Arc::clone(array), Arc::clone(&visited)));
        Ok(visited)
    }

    /// An aggregate's arguments and `FILTER` mask in `pass`'s visiting order.
    fn of(
        &mut self,
        pass: &FramePass,
        args: &[ArrayRef],
        mask: Option<&BooleanArray>,
    ) -> Result<(Vec<ArrayRef>, Option<BooleanArray>), String> {
        if !pass.is_grouped() {
            return Ok((args.to_vec(), mask.cloned()));
        }
        let args = args
            .iter()
            .map(|a| self.array(pass, a))
            .collect::<Result<Vec<_>, _>>()?;
        let mask = mask
            .map(|m| {
                let m: ArrayRef = Arc::new(m.clone());
                pass.in_visit_order(&m).map(|m| m.as_boolean().clone())
            })
            .transpose()
            .map_err(reordering)?;
        Ok((args, mask))
    }
}

/// The error of putting a batch's rows into or out of visiting order.
fn reordering(e: arrow_schema::ArrowError) -> String {
    format!("reordering a batch's rows by key: {e}")
}

/// Each row's frame row count as `count(*)` gives it: NULL for a late row,
/// which joins no RANGE window.
fn frame_counts(pass: &FramePass) -> ArrayRef {
    let counts = (0..pass.lengths.len()).map(|row| {
        let i = pass.visit_index(row);
        // A window never holds more rows than fit in memory.
        (!pass.late[i]).then_some(pass.lengths[i] as i64)
    });
    Arc::new(counts.collect::<arrow_array::Int64Array>())
}

/// `array` as `to`, without copying when it already is (`arrow_cast::cast`
/// rebuilds the array even then). A timestamp in milliseconds reads as
/// `Int64` by reinterpreting its buffer.
pub(crate) fn cast_if_needed(
    array: &ArrayRef,
    to: &DataType,
) -> Result<ArrayRef, arrow_schema::ArrowError> {
    match (array.data_type(), to) {
        (from, to) if from == to => Ok(Arc::clone(array)),
        (DataType::Timestamp(TimeUnit::Millisecond, _), DataType::Int64) => {
            let ts = array.as_primitive::<arrow_array::types::TimestampMillisecondType>();
            Ok(Arc::new(arrow_array::Int64Array::new(
                ts.values().clone(),
                ts.nulls().cloned(),
            )))
        }
        _ => arrow_cast::cast(array, to),
    }
}

//! `count(DISTINCT x)` over windows.
//!
//! The number of distinct values in a window is no monoid of constant size:
//! a window's values must be known to tell whether the one leaving was the
//! last of its kind. Each key keeps its window's values, as small ids in
//! arrival order, and how many times each id occurs; a row that enters
//! counts its value in, a row that leaves counts it out, and the result is
//! the number of ids counted. Expected O(1) per row (hash lookups), exact
//! for every type (values are compared, never their hashes), O(n) memory
//! per window of n rows, as a window's partial aggregates are.
//!
//! A fixed-width value (a number, a time, a BOOLEAN) is its own id: the
//! window holds its bits, and a row costs a lookup in its key's counts and
//! nothing more. A text is interned once per operator, so that a string
//! held by many windows, or many times by one, is stored once, and the
//! windows hold its `u32` id; an id is reused once no window holds its
//! value.

use std::hash::Hash;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, DurationMillisecondType, Float64Type, Int64Type,
    TimestampMillisecondType,
};
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array};
use arrow_schema::DataType;
use hashbrown::hash_map::Entry;
use hashbrown::{Equivalent, HashMap};
use sliq_aggregates::ValueType;
use sliq_swag::ChunkedDeque;

use crate::expr::RowFailures;
use crate::frame::FramePass;
use crate::operator::{AggregateOperator, left_out};

/// A value of `x`, as the window compares it: a fixed-width value by its
/// bits (a DOUBLE's `-0.0` as `0.0` and every NaN as one, as comparisons
/// see them), text by its characters (shared by the interner's map and its
/// entry, so that a new text is copied once).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Value {
    Fixed(i128),
    Text(Arc<str>),
}

/// A [`Value`] borrowed from a batch, to look one up without copying it.
/// Hashes as the [`Value`] it equals (same variants, same order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum ValueRef<'a> {
    Fixed(i128),
    Text(&'a str),
}

impl Equivalent<Value> for ValueRef<'_> {
    fn equivalent(&self, value: &Value) -> bool {
        match (self, value) {
            (ValueRef::Fixed(a), Value::Fixed(b)) => a == b,
            (ValueRef::Text(a), Value::Text(b)) => *a == b.as_ref(),
            _ => false,
        }
    }
}

impl ValueRef<'_> {
    fn to_owned(self) -> Value {
        match self {
            ValueRef::Fixed(v) => Value::Fixed(v),
            ValueRef::Text(s) => Value::Text(Arc::from(s)),
        }
    }
}

/// How the windows name their values: what they store for a row, and
/// what keeps the values those ids stand for.
trait ValueIds: Default {
    /// What a window stores for a row.
    type Id: Copy + Eq + Hash;

    /// The id of a row that adds no value: its `x` is NULL, or the
    /// aggregate's FILTER leaves it out. It takes its place in the window
    /// all the same. No value has it.
    const NO_VALUE: Self::Id;

    /// The id of `value`, counting one more row that holds it.
    fn acquire(&mut self, value: ValueRef<'_>) -> Self::Id;

    /// Counts `rows` fewer rows holding `id`'s value.
    fn release(&mut self, id: Self::Id, rows: u32);
}

/// Fixed-width values are their own ids, kept by the windows themselves.
#[derive(Default)]
struct OwnBits;

impl ValueIds for OwnBits {
    type Id = i128;

    /// Above every value: a DECIMAL has at most 38 digits (below 10^38, where
    /// `i128::MAX` is about 1.7·10^38), and the other types fit 64 bits.
    const NO_VALUE: i128 = i128::MAX;

    #[inline]
    fn acquire(&mut self, value: ValueRef<'_>) -> i128 {
        match value {
            ValueRef::Fixed(bits) => bits,
            ValueRef::Text(_) => {
                debug_assert!(false, "a text value where fixed-width ones were planned");
                Self::NO_VALUE
            }
        }
    }

    #[inline]
    fn release(&mut self, _: i128, _: u32) {}
}

/// The distinct texts the windows hold, each with an id and the number
/// of rows, over all windows, that hold it.
#[derive(Default)]
struct Interner {
    ids: HashMap<Value, u32>,
    /// By id: the value and its rows; `None` for a free id.
    entries: Vec<Option<(Value, u32)>>,
    free: Vec<u32>,
}

impl ValueIds for Interner {
    type Id = u32;

    const NO_VALUE: u32 = u32::MAX;

    fn acquire(&mut self, value: ValueRef<'_>) -> u32 {
        if let Some(&id) = self.ids.get(&value) {
            if let Some((_, rows)) = &mut self.entries[id as usize] {
                *rows += 1;
            }
            return id;
        }
        let owned = value.to_owned();
        let entry = Some((owned.clone(), 1));
        let id = match self.free.pop() {
            Some(id) => {
                self.entries[id as usize] = entry;
                id
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        };
        debug_assert!(id != Self::NO_VALUE, "ids ran into the no-value mark");
        self.ids.insert(owned, id);
        id
    }

    /// Frees the id when no row holds its value.
    fn release(&mut self, id: u32, rows: u32) {
        if id == Self::NO_VALUE {
            return;
        }
        let Some(slot) = self.entries.get_mut(id as usize) else {
            debug_assert!(false, "release of an unknown id {id}");
            return;
        };
        if let Some((value, held)) = slot {
            debug_assert!(*held >= rows, "released more rows than hold id {id}");
            *held = held.saturating_sub(rows);
            if *held == 0 {
                self.ids.remove(&*value);
                *slot = None;
                self.free.push(id);
            }
        }
    }
}

/// One key's rows: the window's values in arrival order, the rows waiting
/// to enter it (a frame ending before the current row), and how many of
/// the window's rows hold each value.
struct KeyValues<I> {
    /// Value id → rows of the window holding it (never 0).
    counts: HashMap<I, u32>,
    /// The window's ids, oldest first; empty for an unbounded frame, whose
    /// rows never leave.
    window: ChunkedDeque<I>,
    /// Rows not in the window yet, oldest first.
    waiting: ChunkedDeque<I>,
}

impl<I> Default for KeyValues<I> {
    fn default() -> Self {
        KeyValues {
            counts: HashMap::default(),
            window: ChunkedDeque::default(),
            waiting: ChunkedDeque::default(),
        }
    }
}

impl<I: Copy + Eq + Hash> KeyValues<I> {
    /// A row holding `id` enters the window; `keeps_ids` unless the frame
    /// is unbounded.
    fn enter<V: ValueIds<Id = I>>(&mut self, id: I, keeps_ids: bool) {
        if keeps_ids {
            self.window.push_back(id);
        }
        if id != V::NO_VALUE {
            *self.counts.entry(id).or_insert(0) += 1;
        }
    }

    /// Counts a row holding `id` out of the window, and out of `values`.
    fn count_out<V: ValueIds<Id = I>>(&mut self, id: I, values: &mut V) {
        if id == V::NO_VALUE {
            return;
        }
        // One lookup: the entry is removed in place with its last row.
        if let Entry::Occupied(mut rows) = self.counts.entry(id) {
            if *rows.get() > 1 {
                *rows.get_mut() -= 1;
            } else {
                rows.remove();
            }
        }
        values.release(id, 1);
    }

    /// Lets every row go: the key starts afresh or is forgotten.
    fn clear<V: ValueIds<Id = I>>(&mut self, values: &mut V) {
        for (id, rows) in self.counts.drain() {
            values.release(id, rows);
        }
        // An unbounded frame's window keeps no ids: its rows are all in
        // `counts`.
        self.window.clear();
        while let Some(id) = self.waiting.pop_front() {
            values.release(id, 1);
        }
    }
}

/// `count(DISTINCT x)` over every key's window.
struct DistinctCountOperator<V: ValueIds> {
    values: V,
    keys: Vec<KeyValues<V::Id>>,
    /// The frame starts at the key's first row: rows leave only when the
    /// key starts afresh.
    unbounded: bool,
    /// The frame ends before the current row: rows wait before they enter.
    delayed: bool,
}

/// The operator for an `x` of type `input`: texts interned, every other
/// type by its own bits.
pub(crate) fn distinct_count_operator(
    input: ValueType,
    unbounded: bool,
    delayed: bool,
) -> Box<dyn AggregateOperator> {
    match input {
        ValueType::Utf8 => Box::new(DistinctCountOperator::<Interner>::new(unbounded, delayed)),
        _ => Box::new(DistinctCountOperator::<OwnBits>::new(unbounded, delayed)),
    }
}

impl<V: ValueIds> DistinctCountOperator<V> {
    fn new(unbounded: bool, delayed: bool) -> Self {
        DistinctCountOperator {
            values: V::default(),
            keys: Vec::new(),
            unbounded,
            delayed,
        }
    }

    /// Row `row`'s value id (acquired) or [`ValueIds::NO_VALUE`].
    fn value_of(&mut self, x: &Column<'_>, filter: Option<&BooleanArray>, row: usize) -> V::Id {
        if left_out(filter, row) {
            return V::NO_VALUE;
        }
        match x.get(row) {
            Some(value) => self.values.acquire(value),
            None => V::NO_VALUE,
        }
    }
}

impl<V: ValueIds + Send> AggregateOperator for DistinctCountOperator<V>
where
    V::Id: Send,
{
    fn process(
        &mut self,
        args: &[ArrayRef],
        filter: Option<&BooleanArray>,
        key_ids: &[u32],
        keys: usize,
        frame: &FramePass,
    ) -> (ArrayRef, RowFailures) {
        if self.keys.len() < keys {
            self.keys.resize_with(keys, KeyValues::default);
        }
        let x = args.first().map(|a| Column::of(a.as_ref()));
        let mut out = Vec::with_capacity(key_ids.len());
        for (row, &key) in key_ids.iter().enumerate() {
            if frame.late[row] {
                out.push(None);
                continue;
            }
            let id = match &x {
                Some(x) => self.value_of(x, filter, row),
                None => V::NO_VALUE,
            };
            let (values, state) = (&mut self.values, &mut self.keys[key as usize]);
            let evictions = frame.evictions[row];
            if self.unbounded && evictions > 0 {
                // The key starts afresh (`key_ttl`), this row first.
                state.clear(values);
            }
            let keeps_ids = !self.unbounded;
            if self.delayed {
                state.waiting.push_back(id);
                for _ in 0..frame.admissions[row] {
                    match state.waiting.pop_front() {
                        Some(id) => state.enter::<V>(id, keeps_ids),
                        None => break,
                    }
                }
            } else {
                state.enter::<V>(id, keeps_ids);
            }
            if !self.unbounded {
                for _ in 0..evictions {
                    match state.window.pop_front() {
                        Some(id) => state.count_out(id, values),
                        // Past the window, only when the key starts afresh.
                        None => match state.waiting.pop_front() {
                            Some(id) => values.release(id, 1),
                            None => break,
                        },
                    }
                }
            }
            out.push(Some(state.counts.len() as i64));
        }
        (Arc::new(Int64Array::from(out)), RowFailures::default())
    }

    fn forget(&mut self, key: u32) {
        if let Some(state) = self.keys.get_mut(key as usize) {
            state.clear(&mut self.values);
            *state = KeyValues::default();
        }
    }
}

/// `x`'s values in a batch, read as [`ValueRef`]s.
enum Column<'a> {
    Boolean(&'a BooleanArray),
    Int64(&'a arrow_array::PrimitiveArray<Int64Type>),
    Float64(&'a arrow_array::PrimitiveArray<Float64Type>),
    Text(&'a arrow_array::StringArray),
    Timestamp(&'a arrow_array::PrimitiveArray<TimestampMillisecondType>),
    Date(&'a arrow_array::PrimitiveArray<Date32Type>),
    Interval(&'a arrow_array::PrimitiveArray<DurationMillisecondType>),
    Decimal(&'a arrow_array::PrimitiveArray<Decimal128Type>),
    /// A type the planner does not hand over: every value is NULL.
    Other,
}

impl<'a> Column<'a> {
    fn of(array: &'a dyn Array) -> Self {
        match array.data_type() {
            DataType::Boolean => Column::Boolean(array.as_boolean()),
            DataType::Int64 => Column::Int64(array.as_primitive()),
            DataType::Float64 => Column::Float64(array.as_primitive()),
            DataType::Utf8 => Column::Text(array.as_string()),
            DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, _) => {
                Column::Timestamp(array.as_primitive())
            }
            DataType::Date32 => Column::Date(array.as_primitive()),
            DataType::Duration(arrow_schema::TimeUnit::Millisecond) => {
                Column::Interval(array.as_primitive())
            }
            DataType::Decimal128(..) => Column::Decimal(array.as_primitive()),
            _ => {
                debug_assert!(false, "count(DISTINCT) of {}", array.data_type());
                Column::Other
            }
        }
    }

    /// Row `row`'s value; `None` for NULL.
    #[inline]
    fn get(&self, row: usize) -> Option<ValueRef<'a>> {
        let fixed =
            |array: &dyn Array, v: i128| (!array.is_null(row)).then_some(ValueRef::Fixed(v));
        match self {
            Column::Boolean(a) => fixed(*a, i128::from(a.value(row))),
            Column::Int64(a) => fixed(*a, i128::from(a.value(row))),
            Column::Float64(a) => {
                // One NaN, and 0.0 for -0.0: as comparisons see them.
                let x = a.value(row) + 0.0;
                let bits = if x.is_nan() {
                    f64::NAN.to_bits()
                } else {
                    x.to_bits()
                };
                fixed(*a, i128::from(bits))
            }
            Column::Text(a) => (!a.is_null(row)).then(|| ValueRef::Text(a.value(row))),
            Column::Timestamp(a) => fixed(*a, i128::from(a.value(row))),
            Column::Date(a) => fixed(*a, i128::from(a.value(row))),
            Column::Interval(a) => fixed(*a, i128::from(a.value(row))),
            Column::Decimal(a) => fixed(*a, a.value(row)),
            Column::Other => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_freed_with_its_last_row_and_reused() {
        let mut values = Interner::default();
        let a = values.acquire(ValueRef::Text("a"));
        assert_eq!(values.acquire(ValueRef::Text("a")), a);
        let b = values.acquire(ValueRef::Fixed(7));
        values.release(a, 1);
        assert_eq!(values.ids.len(), 2, "one row still holds 'a'");
        values.release(a, 1);
        assert_eq!(values.ids.len(), 1);
        // The text 7 and the number 7 are different values.
        let c = values.acquire(ValueRef::Text("7"));
        assert_eq!(c, a, "the freed id is reused");
        assert_ne!(c, b);
        values.release(Interner::NO_VALUE, 1);
        assert_eq!(values.entries.len(), 2);
    }

    #[test]
    fn a_sliding_window_of_ever_new_values_holds_only_its_own() {
        // Each key's window keeps 3 rows; 10,000 distinct strings pass by.
        let mut values = Interner::default();
        let mut state = KeyValues::default();
        for i in 0..10_000 {
            let text = format!("value {i}");
            let id = values.acquire(ValueRef::Text(&text));
            state.enter::<Interner>(id, true);
            if state.window.len() > 3
                && let Some(old) = state.window.pop_front()
            {
                state.count_out(old, &mut values);
            }
            assert_eq!(state.counts.len(), state.window.len().min(3));
        }
        assert!(values.entries.len() <= 4, "{} ids", values.entries.len());
        state.clear(&mut values);
        assert!(values.ids.is_empty());
    }

    #[test]
    fn no_fixed_width_value_reads_as_no_value() {
        let largest = 10_i128.pow(38) - 1;
        let decimals = arrow_array::Decimal128Array::from(vec![largest, -largest])
            .with_precision_and_scale(38, 0)
            .unwrap();
        let integers = Int64Array::from(vec![i64::MIN, i64::MAX, -1]);
        let doubles = arrow_array::Float64Array::from(vec![f64::NAN, f64::INFINITY, f64::MIN]);
        for array in [&decimals as &dyn Array, &integers, &doubles] {
            let column = Column::of(array);
            for row in 0..array.len() {
                let value = column.get(row).unwrap();
                assert_ne!(
                    OwnBits.acquire(value),
                    OwnBits::NO_VALUE,
                    "{array:?} row {row}"
                );
            }
        }
    }

    #[test]
    fn doubles_compare_as_sql_compares_them() {
        let x = arrow_array::Float64Array::from(vec![
            Some(0.0),
            Some(-0.0),
            Some(f64::NAN),
            Some(-f64::NAN),
            None,
        ]);
        let column = Column::of(&x);
        assert_eq!(column.get(0), column.get(1));
        assert_eq!(column.get(2), column.get(3));
        assert_ne!(column.get(0), column.get(2));
        assert!(column.get(4).is_none());
    }
}

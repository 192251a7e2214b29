//! Dense ids for partition keys: each distinct key of a window group gets a
//! small integer, so per-key state lives in plain vectors.
//!
//! A single integer-like or string key is hashed directly; anything else
//! (several columns, booleans, floats, …) goes through Arrow's row format.
//! NULL is a key of its own in every case; float keys group as SQL compares
//! them (`-0.0 = 0.0`, all NaNs one key).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef};
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType;
use hashbrown::HashMap;

type FastMap<K> = HashMap<K, u32, foldhash::fast::FixedState>;

enum Encoding {
    /// No keys: one global window.
    Global,
    /// One key column that casts losslessly to `Int64`.
    Int64(FastMap<i64>),
    /// One string key column: keys of up to 15 bytes packed into a word
    /// (see [`pack_short`]), longer ones boxed.
    Utf8 {
        short: FastMap<u128>,
        long: FastMap<Box<str>>,
    },
    /// Anything else, compared in Arrow's row format; `floats` when a key
    /// column holds floats (see [`sql_equal_floats`]).
    Rows {
        converter: RowConverter,
        floats: bool,
        map: FastMap<Box<[u8]>>,
    },
}

/// A float key column with `-0.0` made `0.0` and every NaN the same NaN, so
/// that keys group as SQL compares them (`-0.0 = 0.0`, NaN equals NaN)
/// rather than by bit pattern; other columns as they are.
pub(crate) fn sql_equal_floats(column: &ArrayRef) -> Result<ArrayRef, String> {
    fn canonical(v: f64) -> f64 {
        if v == 0.0 {
            0.0
        } else if v.is_nan() {
            f64::NAN
        } else {
            v
        }
    }
    Ok(match column.data_type() {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            let column = crate::query::cast_if_needed(column, &DataType::Float64)
                .map_err(|e| format!("key: {e}"))?;
            let column = column.as_primitive::<Float64Type>();
            Arc::new(column.unary::<_, Float64Type>(canonical))
        }
        _ => Arc::clone(column),
    })
}

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

/// How a key column of type `t` is encoded in Arrow's row format: floats as
/// `Float64`, once passed through [`sql_equal_floats`].
pub(crate) fn key_sort_field(t: &DataType) -> SortField {
    SortField::new(if is_float(t) {
        DataType::Float64
    } else {
        t.clone()
    })
}

/// The longest string key [`pack_short`] packs.
const SHORT_KEY: usize = 15;

/// The bits of a key's first `n` bytes, by `n`: a shift of a `u128` by a
/// variable count takes a dozen instructions, a load one.
const SHORT_KEY_BYTES: [u128; SHORT_KEY + 1] = {
    let mut masks = [0; SHORT_KEY + 1];
    let mut n = 1;
    while n <= SHORT_KEY {
        masks[n] = (1 << (8 * n)) - 1;
        n += 1;
    }
    masks
};

/// `text[start..end]` packed into one word when it is at most
/// [`SHORT_KEY`] bytes long: the bytes in the low end (little-endian), zeros
/// above them, the length in the top byte, so that two keys pack alike
/// exactly when they are equal. Hashing and comparing a word is cheaper than
/// hashing and comparing a string behind a pointer.
fn pack_short(text: &[u8], start: usize, end: usize) -> Option<u128> {
    let len = end - start;
    if len > SHORT_KEY {
        return None;
    }
    // Read a whole word from `start` when the text reaches that far, and
    // clear the bytes past the key.
    let word = match text.get(start..start + 16) {
        Some(bytes) => u128::from_le_bytes(bytes.try_into().ok()?),
        None => {
            let mut bytes = [0; 16];
            bytes[..len].copy_from_slice(text.get(start..end)?);
            u128::from_le_bytes(bytes)
        }
    };
    Some(word & SHORT_KEY_BYTES[len] | (len as u128) << 120)
}

/// Maps the key columns of each row to a dense key id (0, 1, 2, … in order
/// of first appearance). A map that [remembers](KeyMap::remember_keys) its
/// keys can also [forget](KeyMap::forget) one: its id is then given to the
/// next new key, so that per-key state, kept in vectors indexed by id,
/// stays as large as the most keys alive at once.
pub struct KeyMap {
    encoding: Encoding,
    null_id: Option<u32>,
    /// Ids handed out so far: every id is below it.
    count: u32,
    /// Forgotten ids, given out again before new ones.
    free: Vec<u32>,
    /// Per id, its key, when keys can be forgotten.
    remembered: Option<Vec<Remembered>>,
}

/// A key as its map holds it, so that it can be removed from the map.
#[derive(Debug, Default, Clone, PartialEq)]
enum Remembered {
    /// A forgotten id (or one never handed out).
    #[default]
    Free,
    Null,
    Int64(i64),
    /// A packed short string (see [`pack_short`]) as two words: 8-byte
    /// alignment keeps the enum at 24 bytes rather than 32.
    Short([u64; 2]),
    Long(Box<str>),
    Row(Box<[u8]>),
}

/// The next id for a new key: a forgotten one first. `remembered` records
/// the key under it. Out of line: the per-row loops stay small for the
/// rows whose key is known, nearly all of them.
#[cold]
#[inline(never)]
fn fresh(
    count: &mut u32,
    free: &mut Vec<u32>,
    remembered: &mut Option<Vec<Remembered>>,
    key: impl FnOnce() -> Remembered,
) -> u32 {
    let id = free.pop().unwrap_or_else(|| {
        let id = *count;
        *count += 1;
        id
    });
    if let Some(keys) = remembered {
        if keys.len() <= id as usize {
            keys.resize(id as usize + 1, Remembered::Free);
        }
        keys[id as usize] = key();
    }
    id
}

fn is_integer_like(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::Timestamp(_, _)
    )
}

impl KeyMap {
    /// A map for keys of these types; no keys means one global window.
    pub fn new(types: &[DataType]) -> Result<Self, String> {
        let encoding = match types {
            [] => Encoding::Global,
            [t] if is_integer_like(t) => Encoding::Int64(FastMap::default()),
            [DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View] => Encoding::Utf8 {
                short: FastMap::default(),
                long: FastMap::default(),
            },
            _ => {
                let floats = types.iter().any(is_float);
                let fields = types.iter().map(key_sort_field).collect();
                let converter = RowConverter::new(fields)
                    .map_err(|e| format!("cannot group by these key types: {e}"))?;
                Encoding::Rows {
                    converter,
                    floats,
                    map: FastMap::default(),
                }
            }
        };
        Ok(KeyMap {
            encoding,
            null_id: None,
            count: 0,
            free: Vec::new(),
            remembered: None,
        })
    }

    /// Keeps each key beside its id from now on, so that the map can
    /// [forget](KeyMap::forget) keys (24 bytes more per key, and a long
    /// string key's copy); call it before the first key comes.
    pub fn remember_keys(&mut self) {
        debug_assert_eq!(self.count, 0, "keys seen before remembering began");
        self.remembered = Some(Vec::new());
    }

    /// Number of ids handed out: every id is below it (1 for the global
    /// window). Per-key state is sized by it.
    pub fn key_count(&self) -> usize {
        match self.encoding {
            Encoding::Global => 1,
            _ => self.count as usize,
        }
    }

    /// Number of keys in the map: those seen and not forgotten.
    pub fn live_keys(&self) -> usize {
        self.key_count() - self.free.len()
    }

    /// Whether `id` belongs to a key in the map.
    pub fn is_live(&self, id: u32) -> bool {
        match (&self.encoding, &self.remembered) {
            (Encoding::Global, _) => id == 0,
            (_, Some(keys)) => keys
                .get(id as usize)
                .is_some_and(|k| *k != Remembered::Free),
            (_, None) => id < self.count,
        }
    }

    /// Removes the key of `id` from the map; its id goes to the next new
    /// key. `false` (and no change) unless the map remembers its keys and
    /// `id` is live. The global window's one key is never forgotten.
    pub fn forget(&mut self, id: u32) -> bool {
        let Some(slot) = self
            .remembered
            .as_mut()
            .and_then(|keys| keys.get_mut(id as usize))
        else {
            return false;
        };
        if *slot == Remembered::Free {
            return false;
        }
        let removed = match (&mut self.encoding, std::mem::take(slot)) {
            (_, Remembered::Null) => self.null_id.take().is_some(),
            (Encoding::Int64(map), Remembered::Int64(k)) => map.remove(&k).is_some(),
            (Encoding::Utf8 { short, .. }, Remembered::Short([low, high])) => short
                .remove(&(u128::from(high) << 64 | u128::from(low)))
                .is_some(),
            (Encoding::Utf8 { long, .. }, Remembered::Long(key)) => long.remove(&key).is_some(),
            (Encoding::Rows { map, .. }, Remembered::Row(bytes)) => map.remove(&bytes).is_some(),
            _ => false,
        };
        debug_assert!(removed, "key id {id} was remembered but not in the map");
        if removed {
            self.free.push(id);
        }
        removed
    }

    /// Writes the key id of each of `rows` rows into `out`.
    pub fn assign(
        &mut self,
        keys: &[ArrayRef],
        rows: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), String> {
        out.clear();
        out.reserve(rows);
        let KeyMap {
            encoding,
            null_id,
            count,
            free,
            remembered,
        } = self;
        let mut new_id = |key: &dyn Fn() -> Remembered| fresh(count, free, remembered, key);
        match encoding {
            Encoding::Global => out.resize(rows, 0),
            Encoding::Int64(map) => {
                let column = crate::query::cast_if_needed(&keys[0], &DataType::Int64)
                    .map_err(|e| format!("key: {e}"))?;
                let column = column.as_primitive::<Int64Type>();
                for (i, &k) in column.values().iter().enumerate() {
                    let id = if column.is_null(i) {
                        *null_id.get_or_insert_with(|| new_id(&|| Remembered::Null))
                    } else {
                        *map.entry(k)
                            .or_insert_with(|| new_id(&|| Remembered::Int64(k)))
                    };
                    out.push(id);
                }
            }
            Encoding::Utf8 { short, long } => {
                let column = crate::query::cast_if_needed(&keys[0], &DataType::Utf8)
                    .map_err(|e| format!("key: {e}"))?;
                let column = column.as_string::<i32>();
                let text = column.values().as_slice();
                for (i, span) in column.offsets().windows(2).enumerate() {
                    let (start, end) = (span[0] as usize, span[1] as usize);
                    let id = if column.is_null(i) {
                        *null_id.get_or_insert_with(|| new_id(&|| Remembered::Null))
                    } else if let Some(word) = pack_short(text, start, end) {
                        *short.entry(word).or_insert_with(|| {
                            new_id(&|| Remembered::Short([word as u64, (word >> 64) as u64]))
                        })
                    } else {
                        let key = column.value(i);
                        match long.get(key) {
                            Some(&id) => id,
                            None => {
                                let id = new_id(&|| Remembered::Long(key.into()));
                                long.insert(key.into(), id);
                                id
                            }
                        }
                    };
                    out.push(id);
                }
            }
            Encoding::Rows {
                converter,
                floats,
                map,
            } => {
                let converted = if *floats {
                    let keys = keys
                        .iter()
                        .map(sql_equal_floats)
                        .collect::<Result<Vec<_>, _>>()?;
                    converter.convert_columns(&keys)
                } else {
                    converter.convert_columns(keys)
                }
                .map_err(|e| format!("cannot encode keys: {e}"))?;
                for row in converted.iter() {
                    let bytes = row.as_ref();
                    let id = match map.get(bytes) {
                        Some(&id) => id,
                        None => {
                            let id = new_id(&|| Remembered::Row(bytes.into()));
                            map.insert(bytes.into(), id);
                            id
                        }
                    };
                    out.push(id);
                }
            }
        }
        debug_assert_eq!(out.len(), rows);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap as StdHashMap;

    use arrow_array::{Int64Array, StringArray};
    use proptest::prelude::*;

    use super::*;

    /// Ids numbered by first appearance, NULL a key of its own.
    fn reference_ids<K: Eq + std::hash::Hash + Clone>(
        seen: &mut StdHashMap<Option<K>, u32>,
        keys: &[Option<K>],
    ) -> Vec<u32> {
        keys.iter()
            .map(|k| {
                let next = seen.len() as u32;
                *seen.entry(k.clone()).or_insert(next)
            })
            .collect()
    }

    /// A map for keys of `types` that can forget them.
    fn remembering(types: &[DataType]) -> KeyMap {
        let mut map = KeyMap::new(types).expect("key types");
        map.remember_keys();
        map
    }

    /// A model's live keys, by whatever key type.
    trait LiveIds {
        /// Removes the `index`-th live key (in id order), returning its id.
        fn take(&mut self, index: &prop::sample::Index) -> Option<u32>;
    }

    impl<K: Eq + std::hash::Hash + Clone> LiveIds for StdHashMap<Option<K>, u32> {
        fn take(&mut self, index: &prop::sample::Index) -> Option<u32> {
            if self.is_empty() {
                return None;
            }
            let mut by_id: Vec<(u32, Option<K>)> =
                self.iter().map(|(k, &id)| (id, k.clone())).collect();
            by_id.sort_by_key(|(id, _)| *id);
            let (id, key) = by_id.swap_remove(index.index(by_id.len()));
            self.remove(&key);
            Some(id)
        }
    }

    #[test]
    fn a_remembered_key_takes_three_words() {
        assert_eq!(std::mem::size_of::<Remembered>(), 24);
    }

    #[test]
    fn a_map_that_does_not_remember_its_keys_forgets_none() {
        let mut map = KeyMap::new(&[DataType::Int64]).expect("int keys");
        let column: ArrayRef = Arc::new(Int64Array::from(vec![1, 2]));
        let mut ids = Vec::new();
        map.assign(&[column], 2, &mut ids).expect("assign");
        assert!(!map.forget(0));
        assert_eq!(map.live_keys(), 2);
        let mut global = remembering(&[]);
        assert!(!global.forget(0));
        assert!(global.is_live(0));
    }

    #[test]
    fn short_keys_pack_their_length_so_trailing_zero_bytes_count() {
        let text = b"a\0\0b";
        assert_ne!(pack_short(text, 0, 1), pack_short(text, 0, 2));
        assert_ne!(pack_short(text, 1, 2), pack_short(text, 1, 1));
        assert_eq!(
            pack_short(b"abc", 0, 3),
            pack_short(b"xabcdefghijklmnopq", 1, 4)
        );
        assert_eq!(pack_short(&[b'k'; 20], 0, 16), None);
    }

    #[test]
    fn integer_keys_number_by_first_appearance() {
        let mut map = KeyMap::new(&[DataType::Int64]).expect("int keys");
        let column: ArrayRef = Arc::new(Int64Array::from(vec![Some(7), None, Some(7), Some(-1)]));
        let mut ids = Vec::new();
        map.assign(&[column], 4, &mut ids).expect("assign");
        assert_eq!(ids, [0, 1, 0, 2]);
        assert_eq!(map.key_count(), 3);
    }

    /// Checks `ids` for `keys` against `live` (each live key's id): a live
    /// key keeps its id, a new one gets an id no live key has.
    fn check_ids<K: Eq + std::hash::Hash + Clone + std::fmt::Debug>(
        live: &mut StdHashMap<Option<K>, u32>,
        keys: &[Option<K>],
        ids: &[u32],
    ) -> Result<(), TestCaseError> {
        for (key, &id) in keys.iter().zip(ids) {
            match live.get(key) {
                Some(&known) => prop_assert_eq!(known, id, "{:?} changed its id", key),
                None => {
                    prop_assert!(
                        !live.values().any(|&other| other == id),
                        "id {} reused while live",
                        id
                    );
                    live.insert(key.clone(), id);
                }
            }
        }
        Ok(())
    }

    proptest! {
        /// Keys forgotten between batches free their ids for new keys, and
        /// come back as new keys; the others keep their ids.
        #[test]
        fn forgotten_keys_free_their_ids(
            batches in prop::collection::vec(
                (
                    prop::collection::vec(prop::option::weighted(0.9, "[ab]{0,2}|[a-z]{16,18}"), 0..30),
                    prop::collection::vec(prop::option::weighted(0.9, -3i64..4), 0..30),
                    prop::collection::vec(any::<prop::sample::Index>(), 0..6),
                ),
                1..8,
            ),
        ) {
            let mut strings = remembering(&[DataType::Utf8]);
            let mut ints = remembering(&[DataType::Int64]);
            let mut pairs = remembering(&[DataType::Int64, DataType::Utf8]);
            let (mut live_strings, mut live_ints, mut live_pairs) =
                (StdHashMap::new(), StdHashMap::new(), StdHashMap::new());
            let mut ids = Vec::new();
            let mut peak = 0;
            for (text, numbers, forget) in &batches {
                let column: ArrayRef = Arc::new(StringArray::from(text.clone()));
                strings.assign(&[Arc::clone(&column)], text.len(), &mut ids).expect("assign");
                check_ids(&mut live_strings, text, &ids)?;
                peak = peak.max(live_strings.len());
                let numeric: ArrayRef = Arc::new(Int64Array::from(numbers.clone()));
                ints.assign(&[Arc::clone(&numeric)], numbers.len(), &mut ids).expect("assign");
                check_ids(&mut live_ints, numbers, &ids)?;
                let n = text.len().min(numbers.len());
                pairs
                    .assign(&[numeric.slice(0, n), column.slice(0, n)], n, &mut ids)
                    .expect("assign");
                let both: Vec<_> = (0..n).map(|i| Some((numbers[i], text[i].clone()))).collect();
                check_ids(&mut live_pairs, &both, &ids)?;
                // Forget a few live keys of each map.
                for index in forget {
                    for (map, live) in [
                        (&mut strings, &mut live_strings as &mut dyn LiveIds),
                        (&mut ints, &mut live_ints),
                        (&mut pairs, &mut live_pairs),
                    ] {
                        if let Some(id) = live.take(index) {
                            prop_assert!(map.is_live(id));
                            prop_assert!(map.forget(id));
                            prop_assert!(!map.is_live(id));
                            prop_assert!(!map.forget(id), "forgotten twice");
                        }
                    }
                }
                prop_assert_eq!(strings.live_keys(), live_strings.len());
                prop_assert_eq!(ints.live_keys(), live_ints.len());
                prop_assert_eq!(pairs.live_keys(), live_pairs.len());
                // Ids grow only when none is free: never past the most keys
                // alive at once.
                peak = peak.max(live_strings.len());
                prop_assert!(strings.key_count() <= peak);
            }
        }

        /// Batches of string keys, short and long, with NULLs and zero bytes,
        /// some sliced out of a larger array, get the ids a plain map gives.
        #[test]
        fn string_keys_number_by_first_appearance(
            batches in prop::collection::vec(
                (
                    prop::collection::vec(
                        prop::option::weighted(0.9, "[ab\\x00]{0,3}|[a-z]{12,20}"),
                        0..40,
                    ),
                    0usize..3,
                ),
                1..5,
            ),
        ) {
            let mut map = KeyMap::new(&[DataType::Utf8]).expect("string keys");
            let mut seen = StdHashMap::new();
            let mut ids = Vec::new();
            for (keys, skip) in &batches {
                let skip = (*skip).min(keys.len());
                let whole = StringArray::from(keys.clone());
                let column: ArrayRef = Arc::new(whole.slice(skip, keys.len() - skip));
                map.assign(&[column], keys.len() - skip, &mut ids).expect("assign");
                prop_assert_eq!(&ids, &reference_ids(&mut seen, &keys[skip..]));
            }
            prop_assert_eq!(map.key_count(), seen.len());
        }
    }
}

//! Dense ids for partition keys: each distinct key of a window group gets a
//! small integer, so per-key state lives in plain vectors.

use arrow_array::ArrayRef;
use arrow_row::{RowConverter, SortField};
use hashbrown::HashMap;

/// Maps the key columns of each row to a dense key id (0, 1, 2, … in order
/// of first appearance). Any hashable Arrow type, several columns, and NULL
/// (its own key) work: keys are compared in Arrow's row format.
pub struct KeyMap {
    converter: Option<RowConverter>,
    ids: HashMap<Box<[u8]>, u32, foldhash::fast::FixedState>,
    count: u32,
}

impl KeyMap {
    /// A map for keys of these types; no keys means one global window.
    pub fn new(types: &[arrow_schema::DataType]) -> Result<Self, String> {
        let converter = if types.is_empty() {
            None
        } else {
            let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
            Some(
                RowConverter::new(fields)
                    .map_err(|e| format!("cannot group by these key types: {e}"))?,
            )
        };
        Ok(KeyMap {
            converter,
            ids: HashMap::with_hasher(foldhash::fast::FixedState::default()),
            count: 0,
        })
    }

    /// Number of distinct keys seen.
    pub fn key_count(&self) -> usize {
        if self.converter.is_none() {
            1
        } else {
            self.count as usize
        }
    }

    /// Writes the key id of each of `rows` rows into `out`.
    pub fn assign(
        &mut self,
        keys: &[ArrayRef],
        rows: usize,
        out: &mut Vec<u32>,
    ) -> Result<(), String> {
        out.clear();
        let Some(converter) = &self.converter else {
            out.resize(rows, 0);
            return Ok(());
        };
        let converted = converter
            .convert_columns(keys)
            .map_err(|e| format!("cannot encode keys: {e}"))?;
        out.reserve(rows);
        for row in converted.iter() {
            let bytes = row.as_ref();
            let id = match self.ids.get(bytes) {
                Some(&id) => id,
                None => {
                    let id = self.count;
                    self.ids.insert(bytes.into(), id);
                    self.count += 1;
                    id
                }
            };
            out.push(id);
        }
        Ok(())
    }

    /// Approximate heap bytes per key of the map itself.
    pub fn heap_bytes(&self) -> usize {
        self.ids.capacity() * (std::mem::size_of::<(Box<[u8]>, u32)>() + 1)
            + self.ids.keys().map(|k| k.len()).sum::<usize>()
    }
}

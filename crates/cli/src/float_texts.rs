//! Printed doubles remembered by bit pattern, per output.
//!
//! A window's `min`, `max`, `first_value` or `last_value` keeps one value
//! for many rows, and sensors repeat readings: a `max` over ROWS 999 per key
//! printed the same few thousand doubles for 2M rows (85 % of them found
//! here). Printing a double (zmij's shortest round-trip digits) costs about
//! 22 ns on sliq's machine; with the table, that replay's printer took 47
//! CPU-ms instead of 72.
//! A column whose values rarely repeat (an `avg`, a `sum`) would only pay
//! for the lookups, so each column is watched: after a batch with few hits
//! it prints directly for a while, then tries again.

/// Remembered texts: a direct-mapped table, by a hash of the bits.
const ENTRIES: usize = 4096;

/// The longest text remembered: an entry takes 32 bytes, half a cache
/// line, so a lookup touches one line. zmij's longest double is 24 bytes;
/// doubles that long (17 digits and an exponent) are printed each time.
const TEXT_BYTES: usize = 23;

/// A column with fewer hits than one lookup in this many stops looking: a
/// miss costs a lookup and an entry written besides the printing, and a
/// `max` over RANGE windows of a few rows, found 29 % of the time, ran
/// about as fast with the table as without it.
const MIN_HIT_SHARE: u32 = 2;

/// Lookups a batch needs before its hits are judged.
const MIN_LOOKUPS: u32 = 256;

/// Batches a column prints directly before trying the table again.
const SKIPPED_BATCHES: u32 = 16;

/// One remembered text; `len` 0 for none.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Entry {
    bits: u64,
    len: u8,
    text: [u8; TEXT_BYTES],
}

const _: () = assert!(std::mem::size_of::<Entry>() == 32);

/// How one column has been using the table.
#[derive(Clone, Copy, Debug, Default)]
struct ColumnUse {
    /// Batches left to print directly (0: looking up).
    skipping: u32,
    lookups: u32,
    hits: u32,
}

/// The texts of one output's doubles, and how its columns use them.
pub struct FloatTexts {
    /// Indexed by [`entry_index`], which is below [`ENTRIES`] by its shift:
    /// an array, so a lookup carries no bounds check.
    entries: Box<[Entry; ENTRIES]>,
    columns: Vec<ColumnUse>,
}

impl Default for FloatTexts {
    fn default() -> Self {
        let empty = Entry {
            bits: 0,
            len: 0,
            text: [0; TEXT_BYTES],
        };
        FloatTexts {
            entries: Box::new([empty; ENTRIES]),
            columns: Vec::new(),
        }
    }
}

impl FloatTexts {
    /// Starts a batch of `columns` columns: a column that found too few of
    /// its values in the last batch prints directly for a while.
    pub fn start_batch(&mut self, columns: usize) {
        self.columns.resize(columns, ColumnUse::default());
        for column in &mut self.columns {
            if column.skipping > 0 {
                column.skipping -= 1;
            } else if column.lookups >= MIN_LOOKUPS && column.hits * MIN_HIT_SHARE < column.lookups
            {
                column.skipping = SKIPPED_BATCHES;
            }
            column.lookups = 0;
            column.hits = 0;
        }
    }

    /// Whether column `column` looks its doubles up in this batch (see
    /// [`Self::start_batch`]); if so, it reports its lookups with
    /// [`Self::count`].
    pub fn looks_up(&self, column: usize) -> bool {
        self.columns.get(column).is_some_and(|u| u.skipping == 0)
    }

    /// Adds a batch's `lookups` and `hits` in column `column`.
    pub fn count(&mut self, column: usize, lookups: u32, hits: u32) {
        if let Some(usage) = self.columns.get_mut(column) {
            usage.lookups += lookups;
            usage.hits += hits;
        }
    }

    /// Asks for the entry of `value`, to be written a few rows on, to be
    /// brought into the cache: the table is larger than the cache it shares
    /// with the other threads, and a miss on it was the printer's slowest
    /// step.
    #[inline]
    pub fn prefetch(&self, value: f64) {
        sliq_swag::prefetch(&self.entries[entry_index(value)]);
    }

    /// Appends `value` as `print` prints it, from the table when it is there
    /// (and then into the table); whether it was there.
    #[inline]
    pub fn write(
        &mut self,
        value: f64,
        out: &mut Vec<u8>,
        print: impl FnOnce(&mut Vec<u8>, f64),
    ) -> bool {
        let bits = value.to_bits();
        let entry = &mut self.entries[entry_index(value)];
        let start = out.len();
        if entry.len != 0 && entry.bits == bits {
            // A copy of fixed length, then the bytes past the text dropped.
            out.extend_from_slice(&entry.text);
            out.truncate(start + usize::from(entry.len));
            return true;
        }
        print(out, value);
        let text = &out[start..];
        if let Ok(len) = u8::try_from(text.len())
            && text.len() <= TEXT_BYTES
        {
            entry.bits = bits;
            entry.len = len;
            entry.text[..text.len()].copy_from_slice(text);
        }
        false
    }
}

/// The table entry of `value`, by a hash of its bits.
#[inline(always)]
fn entry_index(value: f64) -> usize {
    let hash = value.to_bits().wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (hash >> (64 - ENTRIES.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print(out: &mut Vec<u8>, value: f64) {
        out.extend_from_slice(format!("<{value}>").as_bytes());
    }

    #[test]
    fn repeated_values_print_the_same_text_found_or_not() {
        let mut texts = FloatTexts::default();
        let mut found = Vec::new();
        let mut direct = Vec::new();
        texts.start_batch(1);
        let mut hits = 0;
        for i in 0..10_000 {
            let value = f64::from(i % 7) * 0.5 - 1.0;
            hits += u32::from(texts.write(value, &mut found, print));
            print(&mut direct, value);
        }
        assert_eq!(found, direct);
        assert_eq!(hits, 10_000 - 7);
    }

    #[test]
    fn a_column_of_unique_values_stops_looking_then_tries_again() {
        let mut texts = FloatTexts::default();
        let mut out = Vec::new();
        // One batch as the encoder writes it: a column either looks all its
        // values up or none.
        let mut batch = |texts: &mut FloatTexts, first: u32| {
            texts.start_batch(2);
            let looking = [texts.looks_up(0), texts.looks_up(1)];
            let mut hits = [0, 0];
            for i in first..first + 1000 {
                for (column, value) in [(0, f64::from(i)), (1, 1.5)] {
                    if looking[column] {
                        hits[column] += u32::from(texts.write(value, &mut out, print));
                    }
                }
            }
            for column in 0..2 {
                let lookups = if looking[column] { 1000 } else { 0 };
                texts.count(column, lookups, hits[column]);
            }
            looking
        };
        assert_eq!(batch(&mut texts, 0), [true, true]);
        assert_eq!(batch(&mut texts, 1000), [false, true], "skipping");
        assert_eq!(
            texts.columns[1].hits, 1000,
            "the other column keeps looking"
        );
        for n in 0..SKIPPED_BATCHES - 1 {
            assert_eq!(batch(&mut texts, 2000 + 1000 * n), [false, true]);
        }
        assert_eq!(batch(&mut texts, 100_000), [true, true], "trying again");
    }

    #[test]
    fn every_text_is_checked_against_its_bits() {
        let mut texts = FloatTexts::default();
        texts.start_batch(1);
        let mut out = Vec::new();
        // Many values landing in the same entries replace one another.
        let values: Vec<f64> = (0..20_000).map(|i| f64::from(i) * 0.25).collect();
        for &v in values.iter().chain(values.iter().rev()) {
            out.clear();
            texts.write(v, &mut out, print);
            assert_eq!(out, format!("<{v}>").into_bytes());
        }
    }
}

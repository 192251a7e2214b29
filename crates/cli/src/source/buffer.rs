//! A growable buffer whose room past its contents stays initialized.
//!
//! Input can be read straight into such a buffer (`Read::read` wants
//! initialized memory, and zeroing a `Vec`'s spare room before every read
//! costs about what copying out of a separate read buffer does), and values
//! can be written ahead into its room and kept or dropped as a whole (the
//! cell bounds of a 64-byte block, kept once the block proves regular),
//! with neither a capacity check per value nor a copy afterwards. The room
//! is zeroed once, when the buffer grows, and reused from then on.

use std::io::{self, Read};
use std::ops::Deref;

/// Values, and initialized room after them.
///
/// Invariant: `len <= values.len()`; the contents are `values[..len]`, and
/// `values[len..]` is room for more (initialized, its contents meaningless).
#[derive(Debug, Default)]
pub(super) struct Buffer<T> {
    values: Vec<T>,
    len: usize,
}

impl<T: Copy + Default> Buffer<T> {
    /// Room for `wanted` more values, after the contents: write into it,
    /// then [`Self::keep`] what was written.
    #[inline]
    pub(super) fn room(&mut self, wanted: usize) -> &mut [T] {
        let needed = self.len + wanted;
        if self.values.len() < needed {
            self.grow(needed);
        }
        &mut self.values[self.len..needed]
    }

    #[cold]
    fn grow(&mut self, needed: usize) {
        // Initialized once per growth, not per use.
        self.values
            .resize(needed.max(2 * self.values.len()), T::default());
    }

    /// Adds the first `written` values of the room to the contents.
    #[inline]
    pub(super) fn keep(&mut self, written: usize) {
        debug_assert!(
            self.len + written <= self.values.len(),
            "kept beyond the room"
        );
        self.len = (self.len + written).min(self.values.len());
    }

    /// Appends `value`.
    #[inline]
    pub(super) fn push(&mut self, value: T) {
        self.room(1)[0] = value;
        self.len += 1;
    }

    /// Appends `more`.
    pub(super) fn extend_from_slice(&mut self, more: &[T]) {
        self.room(more.len()).copy_from_slice(more);
        self.len += more.len();
    }

    /// Shortens the contents to their first `len` values (no change if
    /// they are shorter).
    pub(super) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Empties the buffer, keeping its room.
    pub(super) fn clear(&mut self) {
        self.len = 0;
    }

    /// Drops the first `taken` values, moving the rest to the front.
    pub(super) fn remove_front(&mut self, taken: usize) {
        let taken = taken.min(self.len);
        self.values.copy_within(taken..self.len, 0);
        self.len -= taken;
    }
}

impl Buffer<u8> {
    /// Reads up to `most` bytes of `input` onto the end (one `read` call,
    /// retried if interrupted); the bytes read, 0 at the end of the input.
    pub(super) fn read_from(&mut self, input: &mut dyn Read, most: usize) -> io::Result<usize> {
        let room = self.room(most);
        let read = loop {
            match input.read(room) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                done => break done?,
            }
        };
        // A reader never claims more than the room it was given.
        let read = read.min(most);
        self.keep(read);
        Ok(read)
    }
}

impl<T> Deref for Buffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.values[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_copies_append() {
        let mut text = Buffer::default();
        text.extend_from_slice(b"ab");
        let mut input: &[u8] = b"cdefg";
        assert_eq!(text.read_from(&mut input, 3).unwrap(), 3);
        assert_eq!(&*text, b"abcde");
        assert_eq!(text.read_from(&mut input, 8).unwrap(), 2);
        assert_eq!(text.read_from(&mut input, 8).unwrap(), 0);
        assert_eq!(&*text, b"abcdefg");
    }

    #[test]
    fn values_written_ahead_count_only_once_kept() {
        let mut bounds = Buffer::<u32>::default();
        bounds.push(1);
        let room = bounds.room(4);
        room[..3].copy_from_slice(&[2, 3, 4]);
        assert_eq!(&*bounds, &[1]);
        bounds.keep(2);
        assert_eq!(&*bounds, &[1, 2, 3]);
        bounds.room(4)[0] = 9;
        bounds.push(5);
        assert_eq!(&*bounds, &[1, 2, 3, 5]);
        bounds.clear();
        assert!(bounds.is_empty());
    }

    #[test]
    fn room_left_by_shorter_contents_is_reused_not_shown() {
        let mut text = Buffer::default();
        text.extend_from_slice(b"0123456789");
        text.remove_front(7);
        assert_eq!(&*text, b"789");
        text.truncate(2);
        assert_eq!(&*text, b"78");
        text.truncate(5);
        assert_eq!(&*text, b"78");
        let mut input: &[u8] = b"x";
        assert_eq!(text.read_from(&mut input, 4).unwrap(), 1);
        assert_eq!(&*text, b"78x");
        text.remove_front(9);
        assert!(text.is_empty());
    }

    #[test]
    fn an_interrupted_read_is_retried_and_an_error_changes_nothing() {
        struct Flaky(Vec<io::ErrorKind>);
        impl Read for Flaky {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                match self.0.pop() {
                    Some(kind) => Err(kind.into()),
                    None => {
                        buf[0] = b'!';
                        Ok(1)
                    }
                }
            }
        }
        let mut text = Buffer::default();
        text.extend_from_slice(b"a");
        let mut input = Flaky(vec![io::ErrorKind::Interrupted]);
        assert_eq!(text.read_from(&mut input, 2).unwrap(), 1);
        let mut failing = Flaky(vec![io::ErrorKind::Other]);
        assert!(text.read_from(&mut failing, 2).is_err());
        assert_eq!(&*text, b"a!");
    }
}

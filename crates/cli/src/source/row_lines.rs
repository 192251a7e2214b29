//! Which lines of a text source a batch's rows were read from, so that a
//! message about a row can name its line.

/// The lines a batch's rows were read from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RowLines {
    /// Not known: the source is not lines (Arrow, Parquet, generated
    /// events), its lines are a socket's clients' (numbered per client),
    /// or the batch's records did not match its rows one for one.
    #[default]
    Unknown,
    /// Row `i` is line `first + i` (lines counted from 1).
    From(usize),
    /// Row `i` starts on line `lines[i]`: the batch skipped a blank or
    /// malformed line, or a quoted cell held a line break.
    Each(Vec<usize>),
}

impl RowLines {
    /// The lines `lines`, one per row in order: [`RowLines::From`] when
    /// they follow one another.
    pub fn of(lines: Vec<usize>) -> Self {
        match (lines.first(), lines.last()) {
            (Some(&first), Some(&last)) if last - first + 1 == lines.len() => RowLines::From(first),
            (Some(_), _) => RowLines::Each(lines),
            (None, _) => RowLines::Unknown,
        }
    }

    /// The line row `row` (from 0) of the batch was read from, if known.
    pub fn line(&self, row: usize) -> Option<usize> {
        match self {
            RowLines::Unknown => None,
            RowLines::From(first) => first.checked_add(row),
            RowLines::Each(lines) => lines.get(row).copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RowLines;

    #[test]
    fn lines_that_follow_one_another_are_a_first_line() {
        assert_eq!(RowLines::of(vec![2, 3, 4]), RowLines::From(2));
        assert_eq!(RowLines::of(vec![2, 4]), RowLines::Each(vec![2, 4]));
        assert_eq!(RowLines::of(Vec::new()), RowLines::Unknown);
        assert_eq!(RowLines::From(2).line(2), Some(4));
        assert_eq!(RowLines::Each(vec![2, 4]).line(1), Some(4));
        assert_eq!(RowLines::Each(vec![2, 4]).line(2), None);
        assert_eq!(RowLines::Unknown.line(0), None);
    }
}

//! The lines of a file, or of one piece of a large file, indexed by their 0-based index in the
//! whole file. Parsers report `index + 1` as the line number; reading a large file piece by
//! piece ([`super::stream`]) hands them a piece whose indices are still those of the file, so
//! every line number, note and problem comes out as a whole-file read would give it.

use std::ops::{Index, Range, RangeFrom};

#[derive(Debug, Clone, Copy)]
pub struct FileLines<'a> {
    /// The file index of `lines[0]`.
    first: usize,
    lines: &'a [&'a str],
}

impl<'a> FileLines<'a> {
    /// A whole file's lines.
    pub fn whole(lines: &'a [&'a str]) -> FileLines<'a> {
        FileLines { first: 0, lines }
    }

    /// Lines whose first is line `first` (0-based) of its file.
    pub fn starting_at(first: usize, lines: &'a [&'a str]) -> FileLines<'a> {
        FileLines { first, lines }
    }

    /// One past the file index of the last line held.
    pub fn end(&self) -> usize {
        self.first + self.lines.len()
    }

    /// The lines of a range of file indices (clamped to the lines held).
    pub fn slice(&self, range: Range<usize>) -> &'a [&'a str] {
        let lines: &'a [&'a str] = self.lines;
        let end = range.end.min(self.end()).saturating_sub(self.first);
        let start = range.start.saturating_sub(self.first).min(end);
        &lines[start..end]
    }
}

impl<'a> Index<usize> for FileLines<'a> {
    type Output = &'a str;
    fn index(&self, i: usize) -> &&'a str {
        &self.lines[i - self.first]
    }
}

impl<'a> Index<Range<usize>> for FileLines<'a> {
    type Output = [&'a str];
    fn index(&self, r: Range<usize>) -> &[&'a str] {
        &self.lines[r.start - self.first..r.end - self.first]
    }
}

impl<'a> Index<RangeFrom<usize>> for FileLines<'a> {
    type Output = [&'a str];
    fn index(&self, r: RangeFrom<usize>) -> &[&'a str] {
        &self.lines[r.start - self.first..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_the_files() {
        let piece = ["c", "d", "e"];
        let lines = FileLines::starting_at(2, &piece);
        assert_eq!(lines[2], "c");
        assert_eq!(&lines[3..5], &["d", "e"]);
        assert_eq!(&lines[4..], &["e"]);
        assert_eq!(lines.end(), 5);
        assert_eq!(lines.slice(0..4), &["c", "d"]);
        assert_eq!(lines.slice(3..9), &["d", "e"]);
    }
}

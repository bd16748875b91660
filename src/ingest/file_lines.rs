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
    /// The text the lines were cut from at its newlines, when known ([`FileLines::cut_from`]):
    /// a block's lines are then one span of it ([`FileLines::span`]).
    text: &'a str,
}

impl<'a> FileLines<'a> {
    /// A whole file's lines.
    pub fn whole(lines: &'a [&'a str]) -> FileLines<'a> {
        FileLines::starting_at(0, lines)
    }

    /// Lines whose first is line `first` (0-based) of its file.
    pub fn starting_at(first: usize, lines: &'a [&'a str]) -> FileLines<'a> {
        FileLines {
            first,
            lines,
            text: "",
        }
    }

    /// The same lines, cut from `text` at its newlines (most are slices of it; one that is not,
    /// such as a long line emptied, only makes [`FileLines::span`] say `None` around it).
    pub fn cut_from(self, text: &'a str) -> FileLines<'a> {
        FileLines { text, ..self }
    }

    /// The text of the lines of `range`, newlines between them, when they lie one after
    /// another in the text they were cut from: a search for a word in them all is one search
    /// of this text rather than one per line. Holds every line of `range` and nothing else.
    pub fn span(&self, range: Range<usize>) -> Option<&'a str> {
        let lines = self.slice(range);
        let base = self.text.as_ptr() as usize;
        let offset = |l: &str| (l.as_ptr() as usize).checked_sub(base);
        let start = offset(lines.first()?)?;
        let mut end = start;
        for (k, l) in lines.iter().enumerate() {
            if k > 0 {
                // The line before ended at a newline, and this one starts right after it.
                if self.text.as_bytes().get(end) != Some(&b'\n') || offset(l)? != end + 1 {
                    return None;
                }
                end += 1;
            }
            end += l.len();
        }
        self.text.get(start..end)
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

    #[test]
    fn a_span_is_the_text_of_lines_that_lie_one_after_another() {
        let text = "a\nbb\n\nccc\nd";
        let mut lines: Vec<&str> = text.split('\n').collect();
        let file = FileLines::starting_at(10, &lines).cut_from(text);
        assert_eq!(file.span(10..15), Some(text));
        assert_eq!(file.span(11..14), Some("bb\n\nccc"));
        assert_eq!(file.span(12..13), Some(""));
        assert_eq!(file.span(14..99), Some("d"));
        assert_eq!(file.span(12..12), None);
        // Without the text, or with a line that is not a slice of it where it should be.
        assert_eq!(FileLines::starting_at(10, &lines).span(10..12), None);
        lines[2] = "";
        let file = FileLines::starting_at(10, &lines).cut_from(text);
        assert_eq!(file.span(11..14), None);
        assert_eq!(file.span(13..15), Some("ccc\nd"));
        let other = String::from("a\nbb");
        let parts: Vec<&str> = other.split('\n').collect();
        assert_eq!(FileLines::whole(&parts).cut_from(text).span(0..2), None);
        // Lines of the text that skip one between them.
        let skipping = [lines[0], lines[3]];
        assert_eq!(FileLines::whole(&skipping).cut_from(text).span(0..2), None);
    }
}

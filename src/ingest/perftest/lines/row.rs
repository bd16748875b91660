//! A perftest result row (` 65536  5000  11403.46  11401.91  0.182431`): the line most of a
//! sweep is made of, so it is scanned once, byte by byte, and a plain cell's value is worked
//! out on the way instead of by a second pass over its text.

use crate::ingest::common::{decimal, leading_number, TrimWs};
use nom::branch::alt;
use nom::bytes::complete::tag_no_case;
use nom::character::complete::char;
use nom::combinator::{opt, recognize};
use nom::sequence::preceded;
use nom::{IResult, Parser};

/// A data row: the numbers it starts with and any text glued after them.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    pub values: Vec<Cell<'a>>,
    /// Non-space text right after the last number (`时延测试` in a copied page), if any.
    pub trailing: &'a str,
}

/// One number of a row: its text as printed, and its digits when it is plain
/// (`digits[.digits]`, at most 15 digits), read while the row was scanned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cell<'a> {
    pub text: &'a str,
    plain: Option<Plain>,
}

/// `mantissa / 10^fraction` with the point after `whole` digits: an integer below 2^53 over
/// an exact power of ten, which IEEE division rounds as `str::parse::<f64>` does (see
/// [`decimal`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Plain {
    mantissa: u64,
    /// Digits after the point; `None` without a point.
    fraction: Option<u8>,
}

impl<'a> Cell<'a> {
    /// A cell whose value is read from its text when asked.
    pub fn new(text: &'a str) -> Self {
        Cell { text, plain: None }
    }

    /// The value as `decimal` reads the text.
    pub fn float(&self) -> Option<f64> {
        const POW10: [f64; 16] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
        ];
        match self.plain {
            Some(p) => Some(p.mantissa as f64 / POW10[usize::from(p.fraction.unwrap_or(0))]),
            None => decimal(self.text),
        }
    }

    /// The value as `str::parse::<u64>` reads the text.
    pub fn integer(&self) -> Option<u64> {
        match self.plain {
            Some(Plain {
                mantissa,
                fraction: None,
            }) => Some(mantissa),
            Some(_) => None,
            None => self.text.parse().ok(),
        }
    }
}

/// Reads ` 2          1000           0.061539            0.058761            3.672573`.
pub fn row(line: &str) -> Option<Row<'_>> {
    row_in(line, Vec::with_capacity(8))
}

/// [`row`], its values kept in `values` (empty; a caller reading many rows hands back the
/// vector of the last, see [`recycle`]).
pub fn row_in<'a>(line: &'a str, mut values: Vec<Cell<'a>>) -> Option<Row<'a>> {
    // `many1(terminated(number, space0))`, unrolled: this runs on every table row.
    let b = line.as_bytes();
    let blanks = |mut i: usize| {
        // Columns are padded with runs of spaces: looked at eight bytes at a time.
        while let Some(&eight) = b.get(i..).and_then(|r| r.first_chunk::<8>()) {
            let differ = u64::from_le_bytes(eight) ^ u64::from_le_bytes([b' '; 8]);
            if differ != 0 {
                i += (differ.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        while i < b.len() && matches!(b[i], b' ' | b'\t') {
            i += 1;
        }
        i
    };
    let mut at = blanks(0);
    while at < b.len() {
        let (end, plain) = if b[at].is_ascii_digit() {
            plain_number(b, at)
        } else {
            // A sign, `nan` or `inf`: rare, read by the general scanner.
            match number(&line[at..]) {
                Ok((after, _)) => (line.len() - after.len(), None),
                Err(_) => break,
            }
        };
        values.push(Cell {
            text: &line[at..end],
            plain,
        });
        at = blanks(end);
    }
    if values.is_empty() {
        return None;
    }
    // The first value is the message size: an integer.
    if values[0]
        .text
        .bytes()
        .any(|b| matches!(b, b'.' | b'e' | b'E' | b'-' | b'n' | b'N'))
    {
        return None;
    }
    let trailing = line[at..].trim_ws();
    // A row never ends in ASCII letters or punctuation glued to a number ("2x", "10.5us").
    if let Some(c) = trailing.chars().next() {
        if c.is_ascii() {
            return None;
        }
    }
    Some(Row { values, trailing })
}

/// The number starting with the digit at `b[at]`, as far as [`leading_number`] reads it: its
/// end, and its digits when it is plain.
fn plain_number(b: &[u8], at: usize) -> (usize, Option<Plain>) {
    let mut i = at;
    let mut mantissa: u64 = 0;
    let mut digits = 0;
    let mut fraction = None;
    // The whole part's digits and the fraction's are read by two copies of one loop: a
    // closure shared by both cost 0.3 % more instructions over a perftest corpus.
    while i < b.len() && b[i].is_ascii_digit() {
        mantissa = mantissa
            .wrapping_mul(10)
            .wrapping_add(u64::from(b[i] - b'0'));
        i += 1;
    }
    digits += i - at;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            mantissa = mantissa
                .wrapping_mul(10)
                .wrapping_add(u64::from(b[i] - b'0'));
            i += 1;
        }
        digits += i - start;
        fraction = Some((i - start) as u8);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > start {
            // An exponent: the general parser reads it.
            return (j, None);
        }
    }
    // The limit `decimal` works out by hand; longer numbers go to the general parser.
    let plain = (digits <= 15).then_some(Plain { mantissa, fraction });
    (i, plain)
}

/// A number as perftest prints it: `2`, `0.061539`, `11403.46`, `1e+06`, `-nan`, `inf`.
fn number(input: &str) -> IResult<&str, &str> {
    let signs = input.bytes().take_while(|&b| b == b'-').count();
    if matches!(input.as_bytes().get(signs), Some(b'n' | b'N' | b'i' | b'I')) {
        return recognize(preceded(
            opt(char('-')),
            alt((tag_no_case("nan"), tag_no_case("inf"))),
        ))
        .parse(input);
    }
    // Scanned by hand: `recognize` over optional parts misreports the slice at end of input.
    match leading_number(input) {
        Some((num, rest)) => Ok((rest, num)),
        None => Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Digit,
        ))),
    }
}

/// `values` emptied, for values of other lines: the same allocation (collected in place).
pub fn recycle<'y>(mut values: Vec<Cell<'_>>) -> Vec<Cell<'y>> {
    values.clear();
    // Maps no element (the vector is empty): only the type changes.
    values.into_iter().map(|_| Cell::new("")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scanner reads every number as the general scanner and parsers do.
    #[test]
    fn cells_read_as_their_text() {
        let lines = [
            " 2 1000 0.061539 0.058761 3.672573",
            "65536 5000 11403.46 11401.91 0.182431",
            "8 1000 1e+06 1E-3 0.5e2 -nan inf -1 -0.25",
            "1234567890123456 123456789012345 1234567.89012345 0.000000000000001 007 5.",
            "18446744073709551615 18446744073709551616 99999999999999999999.5",
        ];
        for line in lines {
            let Some(r) = row(line) else { continue };
            for cell in &r.values {
                let text = cell.text;
                let bits = |v: Option<f64>| v.map(f64::to_bits);
                assert_eq!(
                    bits(cell.float()),
                    bits(decimal(text)),
                    "{text:?} as a float"
                );
                assert_eq!(cell.integer(), text.parse::<u64>().ok(), "{text:?} as u64");
            }
        }
        let r = row(lines[2]).unwrap();
        let texts: Vec<_> = r.values.iter().map(|c| c.text).collect();
        assert_eq!(
            texts,
            ["8", "1000", "1e+06", "1E-3", "0.5e2", "-nan", "inf", "-1", "-0.25"]
        );
        assert_eq!(r.values[3].float(), Some(0.001));
        // An exponent without digits, or a sign without a number, is text glued to the row.
        for glued in ["8 1000 5e", "8 1000 7e+", "8 1000 --2", "8 1000 2x"] {
            assert_eq!(row(glued), None, "{glued:?}");
        }
        let r = row(lines[3]).unwrap();
        assert_eq!(r.values.len(), 6);
        assert_eq!(r.values[1].integer(), Some(123_456_789_012_345));
        assert_eq!(r.values[5].text, "5.");
        let r = row(lines[4]).unwrap();
        assert_eq!(r.values[0].integer(), Some(u64::MAX));
        assert_eq!(r.values[1].integer(), None);
    }
}

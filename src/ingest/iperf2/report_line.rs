//! The iperf 2 report line, `[  4]  0.0-15.8 sec  45.0 GBytes  24.4 Gbits/sec`, read by hand:
//! the nom grammar it was read with is kept in the tests, and every fixture line is read by
//! both.

use crate::ingest::common::{decimal, is_ascii_ws, leading_number, TrimWs};

/// One `[ ID] Interval Transfer Bandwidth ...` report line, before unit conversion.
#[derive(Debug, PartialEq)]
pub struct Report<'a> {
    pub id: &'a str,
    pub start: f64,
    pub end: f64,
    pub transfer: f64,
    pub transfer_unit: &'a str,
    pub rate: f64,
    pub rate_unit: &'a str,
    /// Columns after the rate (UDP jitter/loss, enhanced TCP/UDP statistics).
    pub rest: &'a str,
}

/// Reads `[  4]  0.0-15.8 sec  45.0 GBytes  24.4 Gbits/sec` (optionally after `^C`) as the
/// tests' `nom_report` does, by hand: its combinators cost more than the rest of the parse.
/// `space0`/`space1` are spaces and tabs; a word runs to Unicode whitespace.
pub fn report(line: &str) -> Option<Report<'_>> {
    let s = line.strip_prefix("^C").unwrap_or(line);
    let s = blanks0(s).strip_prefix('[')?;
    let close = memchr::memchr(b']', s.as_bytes())?;
    let (id, s) = (&s[..close], &s[close + 1..]);
    let (start, s) = num(blanks0(s))?;
    let (end, s) = num(blanks0(s.strip_prefix('-')?))?;
    let s = blanks1(s)?.strip_prefix("sec")?;
    let (transfer, s) = num(blanks1(s)?)?;
    let (transfer_unit, s) = word(blanks1(s)?)?;
    let (rate, s) = num(blanks1(s)?)?;
    let (rate_unit, rest) = word(blanks1(s)?)?;
    // A copy may glue the next paragraph to the unit ("Gbits/sec3、RDMA性能测试").
    let glued = rate_unit.as_bytes().windows(4).position(|w| w == b"/sec");
    let (rate_unit, rest) = match glued {
        Some(i) if i + 4 < rate_unit.len() => (&rate_unit[..i + 4], &rate_unit[i + 4..]),
        _ => (rate_unit, rest),
    };
    Some(Report {
        id: id.trim_ws(),
        start,
        end,
        transfer,
        transfer_unit,
        rate,
        rate_unit,
        rest: rest.trim_ws(),
    })
}

/// `s` past its leading spaces and tabs (nom's `space0`).
fn blanks0(s: &str) -> &str {
    &s[s.bytes().take_while(|b| matches!(b, b' ' | b'\t')).count()..]
}

/// `s` past one or more spaces and tabs (nom's `space1`), or `None`.
fn blanks1(s: &str) -> Option<&str> {
    let rest = blanks0(s);
    (rest.len() < s.len()).then_some(rest)
}

/// A number at the start of `s`, and what follows it.
fn num(s: &str) -> Option<(f64, &str)> {
    let (n, rest) = leading_number(s)?;
    // `decimal` reads it as `str::parse` does, most numbers without the general parser.
    Some((decimal(n)?, rest))
}

/// One or more characters up to Unicode whitespace, and what follows them.
fn word(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    let ascii = b.iter().position(|&c| !c.is_ascii() || is_ascii_ws(c));
    let end = match ascii {
        // Past ASCII, the characters decide (U+3000 and the like are whitespace).
        Some(i) if !b[i].is_ascii() => s[i..].find(char::is_whitespace).map_or(s.len(), |j| i + j),
        Some(i) => i,
        None => s.len(),
    };
    (end > 0).then(|| (&s[..end], &s[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nom::bytes::complete::{tag, take_until};
    use nom::character::complete::{char, space0, space1};
    use nom::combinator::opt;
    use nom::sequence::delimited;
    use nom::{IResult, Parser};

    fn nom_num(input: &str) -> IResult<&str, f64> {
        let fail = |kind| nom::Err::Error(nom::error::Error::new(input, kind));
        let (n, rest) = leading_number(input).ok_or_else(|| fail(nom::error::ErrorKind::Digit))?;
        let v = n.parse().map_err(|_| fail(nom::error::ErrorKind::Float))?;
        Ok((rest, v))
    }

    fn nom_word(input: &str) -> IResult<&str, &str> {
        nom::bytes::complete::take_while1(|c: char| !c.is_whitespace())(input)
    }

    /// The report line's grammar in nom, as it was read before [`report`]: the reference.
    pub(super) fn nom_report(line: &str) -> Option<Report<'_>> {
        let parsed: IResult<&str, _> = (
            opt(tag("^C")),
            space0,
            delimited(char('['), take_until("]"), char(']')),
            space0,
            nom_num,
            char('-'),
            space0,
            nom_num,
            space1,
            tag("sec"),
            space1,
            nom_num,
            space1,
            nom_word,
            space1,
            nom_num,
            space1,
            nom_word,
        )
            .parse(line);
        // The parts that are not separators: the id, the numbers and the two units.
        let (rest, p) = parsed.ok()?;
        let (id, start, end, transfer, transfer_unit) = (p.2, p.4, p.7, p.11, p.13);
        let (rate, rate_unit) = (p.15, p.17);
        let (rate_unit, rest) = match rate_unit.find("/sec") {
            Some(i) if i + 4 < rate_unit.len() => (&rate_unit[..i + 4], &rate_unit[i + 4..]),
            _ => (rate_unit, rest),
        };
        Some(Report {
            id: id.trim(),
            start,
            end,
            transfer,
            transfer_unit,
            rate,
            rate_unit,
            rest: rest.trim(),
        })
    }

    #[test]
    fn report_by_hand_reads_every_line_as_the_grammar_does() {
        let mut lines = crate::ingest::fixture_lines_with(&["fixtures", "../shared/samples"], "");
        lines.extend(
            [
                "^C[  3]  0.0-15.8 sec  44.3 GBytes  24.0 Gbits/sec",
                "  \t[SUM]\t0.0- 1.0 sec 11.2 GBytes 96.1 Gbits/sec",
                "[SUM] 0.0-60.0 sec 656 GBytes 93.9 Gbits/sec3、RDMA性能测试",
                "[ 4] 0.0-1.0 sec 1 GB\u{3000}2 Gbits/sec",
                "[ 4] 0.0-1.0 sec 1 GB 2 Gbits/sec\u{3000}x",
                "[ 4] 0.0-1.0 sec 1 GB\x0b2 Gbits/sec",
                "[ 4] 0.0-1.0 sec 1 GB 2 Gbits/sex",
                "[ 4] 0.0-1.0sec 1 GB 2 Gbits/sec",
                "[ 4] 0.0 -1.0 sec 1 GB 2 Gbits/sec",
                "[ 4] -1e3-1.0e-2 sec 1.5e+2 GB 2. Gbits/sec  rest  ",
                "[ 4 0.0-1.0 sec 1 GB 2 Gbits/sec",
                "[ 4] 0.0-1.0 sec 1 GB 2",
                "[ 4] 0.0-1.0 sec 1 GB 2 ",
                "",
            ]
            .map(String::from),
        );
        for l in &lines {
            assert_eq!(report(l), nom_report(l), "{l:?}");
        }
    }

    #[test]
    fn report_lines() {
        let r = report("[SUM]  0.0-15.8 sec   180 GBytes  97.9 Gbits/sec").unwrap();
        assert_eq!(
            (r.id, r.start, r.end, r.transfer, r.transfer_unit),
            ("SUM", 0.0, 15.8, 180.0, "GBytes")
        );
        let r = report("^C[  3]  0.0-15.8 sec  44.3 GBytes  24.0 Gbits/sec").unwrap();
        assert_eq!(r.id, "3");
        let r = report("[SUM] 0.0- 1.0 sec 11.2 GBytes 96.1 Gbits/sec").unwrap();
        assert_eq!((r.start, r.end), (0.0, 1.0));
        let r = report("[SUM] 0.0-60.0 sec 656 GBytes 93.9 Gbits/sec3、RDMA性能测试").unwrap();
        assert_eq!(
            (r.rate, r.rate_unit, r.rest),
            (93.9, "Gbits/sec", "3、RDMA性能测试")
        );
        let r = report("[ *1] 0.0000-1.0002 sec  1.34 GBytes  11.5 Gbits/sec").unwrap();
        assert_eq!(r.id, "*1");
        assert!(report("[ ID] Interval       Transfer     Bandwidth").is_none());
    }
}

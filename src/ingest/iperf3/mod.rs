//! iperf3 client and server output: text (interval lines, `sender`/`receiver` summaries,
//! `Retr`/`Cwnd`, UDP jitter and lost/total, `--bidir` roles `[TX-C]`, `(omitted)` intervals,
//! `--timestamps` prefixes, `iperf3: error - ...`) and `-J` JSON documents (including one that
//! reports an error, and warning lines printed before the JSON).

use super::adapter::Block;
use super::common::{decimal, is_ascii_ws, leading_number, TrimWs};
use super::draft::status_of;
use super::udp_loss::{udp_loss, Printer};
use super::{Problem, RunDraft};
use crate::model::{Measurement, Role};
use crate::units::{iperf_bytes, iperf_rate_gbps};
use std::collections::BTreeMap;

mod doc;
mod json;

crate::ingest::adapter::declare_parser!(Iperf3, Iperf3, markers: MARKERS);

/// What each test of [`detect`] looks for, as the line prints it.
const MARKERS: &[&str] = &[
    "Connecting to host ",
    "iperf3: error",
    "Accepted connection from ",
    "\"intervals\":",
    "{\"event\":",
    "iperf Done.",
];

/// Does a block without a command look like iperf3 output?
pub fn detect(lines: &[&str]) -> bool {
    // A block without any marker (most prose) is ruled out without looking for titles and
    // timestamps per line.
    if !lines.iter().any(|l| MARKERS.iter().any(|m| l.contains(m))) {
        return false;
    }
    let title = title_of(lines);
    lines.iter().any(|l| {
        let t = strip_timestamp(strip_title(l, title)).trim_ws();
        t.starts_with("Connecting to host ")
            || t.starts_with("iperf3: error")
            || t.starts_with("Accepted connection from ")
            || t.contains("\"intervals\":")
            || json::is_stream_event(t)
            || t == "iperf Done."
    })
}

/// What follows `TITLE:  ` on the lines that tell a `--title` apart from other colons.
const TITLED_LINES: [&str; 3] = [
    "Connecting to host ",
    "Server listening on ",
    "Accepted connection",
];

/// The `-T TITLE` of a capture whose every line starts `TITLE:  ` (iperf3's own prefix): the
/// first line where a one-word prefix and two spaces stand before what iperf3 prints first.
fn title_of<'a>(lines: &[&'a str]) -> Option<&'a str> {
    lines.iter().find_map(|l| {
        // `split_once(":  ")` without a substring searcher per line.
        let at = super::common::find(l, ":  ")?;
        let (title, rest) = (&l[..at], &l[at + 3..]);
        (!title.is_empty()
            && !title.contains(char::is_whitespace)
            && TITLED_LINES
                .iter()
                .any(|s| rest.trim_start_ws().starts_with(s)))
        .then_some(title)
    })
}

/// A line without its `TITLE:` prefix.
fn strip_title<'a>(line: &'a str, title: Option<&str>) -> &'a str {
    title
        .and_then(|t| line.strip_prefix(t))
        .and_then(|r| r.strip_prefix(':'))
        .unwrap_or(line)
}

crate::ingest::common::per_thread_regex! {
    static TIMESTAMP = r"^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} ";
}

/// Removes the `--timestamps` prefix (`Wed Dec  2 16:07:31 2026 `).
fn strip_timestamp(line: &str) -> &str {
    // Most lines start with `[`: only a capital letter can start a timestamp.
    if !line.starts_with(|c: char| c.is_ascii_uppercase()) {
        return line;
    }
    // The pattern's day and month names end with spaces at bytes 3 and 7, and its shortest
    // match is 25 bytes: other lines that start with a capital are not compared with it.
    let b = line.as_bytes();
    if b.len() < 25 || b[3] != b' ' || b[7] != b' ' {
        return line;
    }
    if !b[..25].is_ascii() {
        // `\d` takes non-ASCII digits too: the regex decides.
        return match TIMESTAMP.with(|re| re.find(line)) {
            Some(m) => &line[m.end()..],
            None => line,
        };
    }
    // The pattern byte by byte: `A` a capital, `a` a small letter, `d` a digit, `_` a blank
    // or a digit; anything else stands for itself.
    const SHAPE: &[u8; 25] = b"Aaa Aaa _d dd:dd:dd dddd ";
    let fits = SHAPE.iter().zip(b).all(|(&want, &c)| match want {
        b'A' => c.is_ascii_uppercase(),
        b'a' => c.is_ascii_lowercase(),
        b'd' => c.is_ascii_digit(),
        b'_' => c == b' ' || c.is_ascii_digit(),
        _ => c == want,
    });
    if fits {
        &line[25..]
    } else {
        line
    }
}

/// The fields of a report line, `[ ID][ROLE] START-END sec TRANSFER TUNIT RATE RUNIT/sec REST`
/// (`[  5]   0.00-1.00   sec   432 MBytes  3.59 Gbits/sec   28    767 KBytes`), read by hand:
/// a regex with named groups cost half the time of a long interval log.
struct Report<'a> {
    id: &'a str,
    role: Option<&'a str>,
    start: &'a str,
    end: &'a str,
    transfer: &'a str,
    tunit: &'a str,
    rate: &'a str,
    runit: &'a str,
    rest: &'a str,
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// The next whitespace-separated word of `s` and what follows it.
fn word(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start_ws();
    // The first whitespace, found byte by byte among ASCII (`find(char::is_whitespace)`
    // decodes every character); from a non-ASCII byte on, by character.
    let b = s.as_bytes();
    let end = match b.iter().position(|&c| is_ascii_ws(c) || !c.is_ascii()) {
        Some(i) if !b[i].is_ascii() => i + s[i..].find(char::is_whitespace).unwrap_or(s.len() - i),
        Some(i) => i,
        None => s.len(),
    };
    (end > 0).then(|| (&s[..end], &s[end..]))
}

fn report_fields(line: &str) -> Option<Report<'_>> {
    let (id, rest) = line.strip_prefix('[')?.split_once(']')?;
    let id = id.trim_start_ws();
    if id != "SUM" && (id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let (role, rest) = match rest.strip_prefix('[') {
        Some(r) => {
            let (role, rest) = r.split_once(']')?;
            let b = role.as_bytes();
            let ok = b.len() == 4
                && b[..2].iter().all(u8::is_ascii_uppercase)
                && b[2] == b'-'
                && matches!(b[3], b'C' | b'S');
            if !ok {
                return None;
            }
            (Some(role), rest)
        }
        None => (None, rest),
    };
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let (interval, rest) = word(rest)?;
    let (start, end) = interval.split_once('-')?;
    let (sec, rest) = word(rest)?;
    let (transfer, rest) = word(rest)?;
    let (tunit, rest) = word(rest)?;
    let (rate, rest) = word(rest)?;
    let (runit, rest) = word(rest)?;
    let numbers = [start, end, transfer, rate].into_iter().all(is_number);
    (numbers && sec == "sec" && runit.ends_with("/sec") && runit.len() > 4).then_some(Report {
        id,
        role,
        start,
        end,
        transfer,
        tunit,
        rate,
        runit,
        rest,
    })
}

/// Reads one report line into a measurement.
fn report(line: &str, i: usize, raw: &str) -> Option<Result<Measurement, String>> {
    let c = report_fields(line)?;
    Some((|| {
        // `decimal` reads a number as `str::parse` does, most without the general parser.
        let transfer = decimal(c.transfer).ok_or_else(|| "bad transfer".to_string())?;
        let rate = decimal(c.rate).ok_or_else(|| "bad rate".to_string())?;
        let mut m = Measurement {
            line: i as u32 + 1,
            raw_text: raw.to_string(),
            raw_unit: crate::units::printed(c.runit),
            bw_avg_gbps: Some(
                iperf_rate_gbps(rate, c.runit)
                    .ok_or_else(|| format!("unknown iperf3 unit {:?}", c.runit))?,
            ),
            sparse: crate::model::Sparse {
                interval_start_s: decimal(c.start),
                interval_end_s: decimal(c.end),
                stream: Some(match c.role {
                    Some(r) => format!("{} {r}", c.id),
                    None => c.id.to_string(),
                }),
                transfer_bytes: Some(
                    iperf_bytes(transfer, c.tunit)
                        .ok_or_else(|| format!("unknown iperf3 unit {:?}", c.tunit))?,
                ),
                row_kind: Some("interval".into()),
                ..Default::default()
            }
            .into(),
            ..Measurement::default()
        };
        // Borrowed from the line: most report lines are TCP intervals, read without a copy.
        let mut rest = c.rest.trim_ws();
        for kind in ["sender", "receiver", "(omitted)"] {
            if let Some(r) = rest.strip_suffix(kind) {
                m.row_kind = Some(kind.trim_matches(['(', ')']).to_string());
                rest = r.trim_ws();
            }
        }
        // The UDP summary's loss is in parentheses with a `%`: other lines skip the pattern.
        let udp = || udp_loss(rest, Printer::Iperf3);
        if let Some(u) = rest.contains('%').then(udp).flatten() {
            m.jitter_ms = u.jitter.parse().ok();
            m.lost = u.lost.parse().ok();
            m.total = u.total.parse().ok();
            m.loss_pct = u.pct.parse().ok();
        } else {
            // TCP: `Retr  Cwnd` (`28    767 KBytes`); UDP intervals: total datagrams. Up to
            // four words are looked at (more match neither shape), without a vector.
            let mut words = [""; 4];
            let mut n = 0;
            for w in rest.split_whitespace().take(4) {
                words[n] = w;
                n += 1;
            }
            match &words[..n] {
                [retr, cwnd, unit] => {
                    m.retransmits = retr.parse().ok();
                    m.cwnd_bytes = decimal(cwnd).and_then(|v| iperf_bytes(v, unit));
                }
                [n] if leading_number(n).is_some_and(|(_, r)| r.is_empty()) => {
                    if m.row_kind.as_deref() == Some("sender")
                        || m.row_kind.as_deref() == Some("receiver")
                    {
                        m.retransmits = n.parse().ok();
                    } else {
                        // UDP interval lines carry the datagram count; TCP interval SUM lines the retransmits.
                        m.total = n.parse().ok();
                    }
                }
                _ => {}
            }
        }
        Ok(m)
    })())
}

/// Parses one block of iperf3 output (text or JSON).
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    let (source, all, range, command) = block.parts();
    if let Some(drafts) = json::parse_block(block, problems) {
        return drafts;
    }
    let flag = |f: &str| command.and_then(|c| c.flags.get(f));
    let mut role = if flag("-s").is_some() {
        Role::Server
    } else if flag("-c").is_some() {
        Role::Client
    } else {
        Role::Unknown
    };
    let mut udp = flag("-u").is_some();
    let title = flag("-T")
        .or(flag("--title"))
        .map(|t| t.as_ref())
        .or_else(|| title_of(&all[range.clone()]));
    let mut facts = BTreeMap::new();
    if let Some(t) = title {
        facts.insert("title".into(), t.to_string());
    }
    let mut notes = Vec::new();
    let mut errors = Vec::new();
    let mut rows = Vec::new();
    for i in range.clone() {
        let t = strip_timestamp(strip_title(all[i], title)).trim_ws();
        if t.is_empty() || t.starts_with("- -") || t.starts_with("[ ID]") || t.starts_with("----") {
            if t.contains("Datagrams") || t.contains("Jitter") {
                udp = true;
            }
            continue;
        }
        if let Some(r) = report(t, i, all[i]) {
            match r {
                Ok(m) => rows.push(m),
                Err(why) => problems.push(Problem::new(source, i as u32 + 1, why)),
            }
            continue;
        }
        if let Some(rest) = t.strip_prefix("Connecting to host ") {
            role = Role::Client;
            facts.insert("connecting_to".into(), rest.to_string());
        } else if let Some(rest) = t.strip_prefix("Server listening on ") {
            role = Role::Server;
            facts.insert("listening".into(), rest.to_string());
        } else if let Some(rest) = t.strip_prefix("Accepted connection from ") {
            facts.insert(
                "peer".into(),
                rest.split(',').next().unwrap_or(rest).to_string(),
            );
        } else if t.starts_with("Reverse mode") {
            facts.insert("reverse".into(), "true".into());
        } else if t.starts_with("iperf3: error") || t.starts_with("iperf3: ") && t.contains("error")
        {
            errors.push(t.to_string());
        } else if t.starts_with("iperf Done.") || t.starts_with('[') && t.contains(" connected to ")
        {
        } else if t.starts_with("warning") || t.starts_with("Warning") || t.starts_with("iperf3: ")
        {
            notes.push(format!("line {}: {t}", i + 1));
        }
    }
    if rows.iter().any(|m| m.jitter_ms.is_some()) {
        udp = true;
    }
    vec![RunDraft {
        test: Some(if udp { "iperf3_udp" } else { "iperf3_tcp" }.into()),
        role,
        status: status_of(!rows.is_empty(), !errors.is_empty()),
        facts,
        notes,
        error: (!errors.is_empty()).then(|| errors.join("\n")),
        measurements: rows,
        ..RunDraft::new(crate::model::Tool::Iperf3, range)
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_reports() {
        let line = "[  5]   0.00-1.01   sec   432 MBytes  3.59 Gbits/sec   28    767 KBytes       ";
        let m = report(line.trim_ws(), 0, line).unwrap().unwrap();
        assert_eq!(
            (m.retransmits, m.cwnd_bytes),
            (Some(28), Some(767.0 * 1024.0))
        );
        assert_eq!(m.transfer_bytes, Some(432.0 * 1048576.0));
        let line = "[SUM]   0.00-2.01   sec  1.72 GBytes  7.36 Gbits/sec                  receiver";
        let m = report(line, 0, line).unwrap().unwrap();
        assert_eq!(
            (m.stream.as_deref(), m.row_kind.as_deref()),
            (Some("SUM"), Some("receiver"))
        );
        let line =
            "[  5][TX-C]   0.00-2.00   sec  1.04 GBytes  4.44 Gbits/sec    8             sender";
        let m = report(line, 0, line).unwrap().unwrap();
        assert_eq!(
            (m.stream.as_deref(), m.retransmits),
            (Some("5 TX-C"), Some(8))
        );
        let line =
            "[  5]   0.00-2.00   sec  23.8 MBytes  99.8 Mbits/sec  0.005 ms  0/763 (0%)  receiver";
        let m = report(line, 0, line).unwrap().unwrap();
        assert_eq!(
            (m.jitter_ms, m.lost, m.total),
            (Some(0.005), Some(0), Some(763))
        );
        let line =
            "[  5]   0.00-1.00   sec   721 MBytes  6.04 Gbits/sec                  (omitted)";
        assert_eq!(
            report(line, 0, line).unwrap().unwrap().row_kind.as_deref(),
            Some("omitted")
        );
        assert_eq!(
            strip_timestamp("Wed Dec  2 16:07:31 2026 [  5] x"),
            "[  5] x"
        );
    }

    /// `word`, `strip_timestamp` and `title_of` read every line as the general searches they
    /// replaced do: the fixtures' lines and lines made to sit on their edges.
    #[test]
    fn line_scans_read_as_the_general_searches() {
        let mut lines = crate::ingest::fixture_lines_with(&["fixtures", "../shared/samples"], "");
        lines.extend(
            [
                "",
                " ",
                "a",
                "ab\u{a0}cd ef",
                "é x",
                "x\u{3000}y",
                "\tword\x0bnext",
                "Wed Dec  2 16:07:31 2026 [  5] x",
                "Wed Dec  2 16:07:31 2026 ",
                "Wed Dec  2 16:07:31 202",
                "Wed Dec ١٢ 16:07:31 2026 x",
                "Wed Dec 12 16:07:31 2026 x",
                "Wed Dec 1  16:07:31 2026 x",
                "Wed Dec  2 16:07:31 2026x",
                "Wed Dec  2 16.07:31 2026 x",
                "Wed Dec  2 16:07:31 20266 x",
                "Wed Dec  2 16:07:3a 2026 x",
                "Wed Déc  2 16:07:31 2026 x",
                "Wed Dec  2 16:07:31 2026 é",
                "Wed DeC  2 16:07:31 2026 x",
                "Wed Dec\t 2 16:07:31 2026 x",
                "Wed  Dec 2 16:07:31 2026 x",
                "WED Dec  2 16:07:31 2026 x",
                "Connecting to host",
                "host1:  Connecting to host x",
                "host 1:  Server listening on 5201",
                "h::  Accepted connection from",
                "h: :  x",
                "h:",
                "h:  ",
                ":  Server listening on 1",
                "a:b:  Accepted connection",
            ]
            .map(String::from),
        );
        fn word_by_chars(s: &str) -> Option<(&str, &str)> {
            let s = s.trim_start();
            let end = s.find(char::is_whitespace).unwrap_or(s.len());
            (end > 0).then(|| (&s[..end], &s[end..]))
        }
        let timestamp_by_regex = |l: &str| match TIMESTAMP.with(|re| re.find(l)) {
            Some(m) => l[m.end()..].to_string(),
            None => l.to_string(),
        };
        let title_by_split = |l: &str| {
            let (title, rest) = l.split_once(":  ")?;
            (!title.is_empty()
                && !title.contains(char::is_whitespace)
                && TITLED_LINES
                    .iter()
                    .any(|s| rest.trim_start().starts_with(s)))
            .then(|| title.to_string())
        };
        for l in &lines {
            assert_eq!(word(l), word_by_chars(l), "word of {l:?}");
            assert_eq!(
                strip_timestamp(l),
                timestamp_by_regex(l),
                "timestamp of {l:?}"
            );
            assert_eq!(
                title_of(&[l]).map(String::from),
                title_by_split(l),
                "title of {l:?}"
            );
        }
    }
}

//! qperf output: one `test_name:` block per test (and per message size in `-oo msg_size:...`
//! sweeps) with `key = value unit` lines; `-v`/`-vv`/`-vu`/`-vc`/`-vs`/`-vt` add keys. qperf is
//! 1000-based throughout (see `units`), except `KiB` sizes, whose parenthesised number is exact.
//! One run per test name of the command; each block of that test is one measurement. `conf`
//! becomes a run of facts (node, CPU, OS, qperf version on both sides).

use super::adapter::Block;
use super::{Problem, RunDraft};
use crate::ingest::common::TrimWs;
use crate::model::{Facts, Measurement, Role, RunStatus};
use crate::units::{qperf_bw_gbps, qperf_count, qperf_rate_mpps, qperf_size_bytes, qperf_time_us};
use std::collections::BTreeMap;

crate::ingest::common::per_thread_regex! {
    static VALUE = r"^(?P<num>-?[\d,]*\.?\d+)\s*(?P<word>thousand|million|billion|trillion)?\s*(?P<unit>[^(]*?)\s*(?:\((?P<exact>[\d,]+)\))?$";
}

/// A numeric qperf value taken apart: `1.2 million/sec`, `64 KB (65,536)`, `-3 us`.
#[derive(Debug, PartialEq)]
struct Value<'a> {
    num: &'a str,
    word: Option<&'a str>,
    unit: &'a str,
    exact: Option<&'a str>,
}

/// A value as `VALUE` captures it; `None` for a text value.
fn by_regex(value: &str) -> Option<Value<'_>> {
    let c = VALUE.with(|re| re.captures(value))?;
    Some(Value {
        num: c.name("num")?.as_str(),
        word: c.name("word").map(|w| w.as_str()),
        unit: c.name("unit").map_or("", |u| u.as_str()),
        exact: c.name("exact").map(|e| e.as_str()),
    })
}

/// Reads a value as `VALUE` reads it (by hand on ASCII text, where that regex costs a
/// backtracking search per value); `None` for a text value.
fn value_parts(value: &str) -> Option<Value<'_>> {
    if !value.is_ascii() {
        // `\d` and `\s` take non-ASCII digits and blanks too: the regex decides.
        return by_regex(value);
    }
    let b = value.as_bytes();
    let digits_from = |i: usize| i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let sign = usize::from(value.starts_with('-'));
    let run = sign
        + b[sign..]
            .iter()
            .take_while(|&&c| c.is_ascii_digit() || c == b',')
            .count();
    // `[\d,]*\.?\d+`: a fraction if one follows the run, else the run to its last digit.
    let num_end = if b.get(run) == Some(&b'.') && b.get(run + 1).is_some_and(u8::is_ascii_digit) {
        digits_from(run + 1)
    } else {
        sign + b[sign..run].iter().rposition(u8::is_ascii_digit)? + 1
    };
    let rest = value[num_end..].trim_start_ws();
    let word = ["thousand", "million", "billion", "trillion"]
        .into_iter()
        .find(|w| rest.starts_with(w));
    let tail = word.map_or(rest, |w| rest[w.len()..].trim_start_ws());
    // The unit holds no `(`: one may only open the exact count that ends the value.
    let (unit, exact) = match tail.find('(') {
        None => (tail, None),
        Some(open) => {
            let exact = tail[open + 1..].strip_suffix(')')?;
            let ok = !exact.is_empty() && exact.bytes().all(|c| c.is_ascii_digit() || c == b',');
            ok.then_some((&tail[..open], Some(exact)))?
        }
    };
    Some(Value {
        num: &value[..num_end],
        word,
        unit: unit.trim_end_ws(),
        exact,
    })
}

/// `tcp_bw:`: a test name (a lowercase letter, then lowercase letters, digits and `_`) and a
/// colon ending the line. Read by hand, as `^([a-z][a-z0-9_]*):\s*$` reads it: every line of
/// a block is tried.
fn test_header(line: &str) -> Option<&str> {
    let name = line.trim_end_ws().strip_suffix(':')?;
    let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    ok.then_some(name)
}

/// Whether `lines` hold a `conf` test, the one whose results are facts of the whole file.
pub fn has_conf_test(lines: &[&str]) -> bool {
    lines.iter().any(|l| test_header(l) == Some("conf"))
}

/// `    bw  =  1.2 GB/sec` → (`bw`, `1.2 GB/sec`): indented, a key of lowercase letters and
/// `_`, whitespace on both sides of `=`. Read by hand, as `^\s+([a-z_]+)\s+=\s+(.*?)\s*$`
/// reads it.
fn key_value(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start_ws();
    if rest.len() == line.len() {
        return None;
    }
    let key_end = rest
        .bytes()
        .position(|b| !(b.is_ascii_lowercase() || b == b'_'))
        .unwrap_or(rest.len());
    let (key, rest) = rest.split_at(key_end);
    let after_key = rest.trim_start_ws();
    if key.is_empty() || after_key.len() == rest.len() {
        return None;
    }
    let after_eq = after_key.strip_prefix('=')?;
    let value = after_eq.trim_start_ws();
    if value.len() == after_eq.len() {
        return None;
    }
    Some((key, value.trim_end_ws()))
}

crate::ingest::adapter::declare_parser!(Qperf, Qperf);

/// Does a block without a command look like qperf output?
pub fn detect(lines: &[&str]) -> bool {
    // A test name, then its first value; qperf may print `warning: -cm1 set but not used in
    // test tcp_bw` between the two.
    lines.iter().enumerate().any(|(i, l)| {
        test_header(l).is_some_and(super::command::is_qperf_test)
            && lines[i + 1..]
                .iter()
                .find(|l| !l.trim_start_ws().starts_with("warning:"))
                .is_some_and(|l| key_value(l).is_some())
    })
}

/// One `test:` block: its measurement, its text facts and its first line.
type TestBlock = (Measurement, Facts, usize);

/// Applies one `key = value` line to a measurement. Returns false for a value it cannot read.
fn apply(m: &mut Measurement, key: &str, value: &str, facts: &mut Facts) -> bool {
    let Some(v) = value_parts(value) else {
        // Text values: `conf` keys, `loc_cpu = 20 Cores: Mixed CPUs`.
        facts.insert(key.to_string().into(), value.to_string());
        return true;
    };
    let Some(n) = qperf_count(v.num, v.word) else {
        return false;
    };
    let unit = v.unit.trim_ws();
    let ok = match key {
        "bw" | "recv_bw" => {
            m.raw_unit = crate::units::printed(unit);
            m.bw_avg_gbps = qperf_bw_gbps(n, unit);
            m.bw_avg_gbps.is_some()
        }
        "latency" => {
            m.raw_unit = crate::units::printed(unit);
            m.lat_avg_us = qperf_time_us(n, unit);
            m.lat_avg_us.is_some()
        }
        "msg_rate" => {
            m.msg_rate_mpps = qperf_rate_mpps(n, unit);
            m.msg_rate_mpps.is_some()
        }
        "msg_size" => {
            let exact = v.exact.and_then(|e| e.replace(',', "").parse::<u64>().ok());
            m.msg_size_bytes =
                exact.or_else(|| qperf_size_bytes(n, unit).map(|b| b.round() as u64));
            m.msg_size_bytes.is_some()
        }
        "loc_cpus_used" | "send_cpus_used" if unit == "% cpus" => {
            m.cpu_local_pct = Some(n);
            true
        }
        "rem_cpus_used" | "recv_cpus_used" if unit == "% cpus" => {
            m.cpu_remote_pct = Some(n);
            true
        }
        _ => true,
    };
    m.extra.insert(key.to_string(), value.to_string());
    ok
}

/// Parses one block of qperf output: one run per test name (the server prints nothing but
/// errors).
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    let (tests, errors) = read_tests(block, problems);
    let role = if block
        .command
        .is_some_and(|c| c.peer.is_none() && !c.flags.contains_key("tests"))
    {
        Role::Server
    } else {
        Role::Client
    };
    let range = block.range.clone();
    let mut out = Vec::new();
    for (test, entries) in tests {
        let start = entries.first().map_or(range.start, |e| e.2);
        let mut facts = BTreeMap::new();
        let mut rows = Vec::new();
        for (m, f, _) in entries {
            facts.extend(f);
            if m.bw_avg_gbps.is_some() || m.lat_avg_us.is_some() || m.msg_rate_mpps.is_some() {
                rows.push(m);
            }
        }
        // Errors printed inside a test block (`127.0.0.1: failed to connect`) belong to it.
        let own_errors: Vec<_> = errors.iter().filter(|(i, _)| *i > start).cloned().collect();
        let status = if !rows.is_empty() || test == "conf" {
            RunStatus::Ok
        } else if !own_errors.is_empty() {
            RunStatus::Failed
        } else {
            RunStatus::NoResults
        };
        let first = if out.is_empty() { range.start } else { start };
        out.push(RunDraft {
            test: Some(test),
            role,
            status,
            facts,
            error: error_text(&own_errors).filter(|_| rows.is_empty()),
            measurements: rows,
            ..RunDraft::new(crate::model::Tool::Qperf, first..range.end)
        });
    }
    if out.is_empty() && (block.command.is_some() || !errors.is_empty()) {
        // Nothing but errors (or nothing at all) after a qperf command: a failed run of the
        // first test it named.
        let test = block
            .command
            .and_then(|c| c.flags.get("tests"))
            .map_or("qperf", |t| t.split(',').next().unwrap_or("qperf"));
        out.push(RunDraft {
            test: Some(test.to_string()),
            role,
            status: if errors.is_empty() {
                RunStatus::NoResults
            } else {
                RunStatus::Failed
            },
            error: error_text(&errors),
            ..RunDraft::new(crate::model::Tool::Qperf, range)
        });
    }
    out
}

/// Error lines joined, or `None` when there are none.
fn error_text(errors: &[(usize, String)]) -> Option<String> {
    (!errors.is_empty()).then(|| {
        errors
            .iter()
            .map(|(_, e)| e.clone())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The test blocks of a qperf block grouped by test name in order of appearance, and the
/// error lines with their line index.
type Tests = (Vec<(String, Vec<TestBlock>)>, Vec<(usize, String)>);

fn read_tests(block: &Block, problems: &mut Vec<Problem>) -> Tests {
    let mut tests: Vec<(String, Vec<TestBlock>)> = Vec::new();
    let mut errors = Vec::new();
    let mut current: Option<(String, TestBlock)> = None;
    let mut flush = |current: &mut Option<(String, TestBlock)>| {
        if let Some((test, b)) = current.take() {
            match tests.iter_mut().find(|(t, _)| *t == test) {
                Some((_, list)) => list.push(b),
                None => tests.push((test, vec![b])),
            }
        }
    };
    for i in block.range.clone() {
        let line = block.lines[i];
        if line.trim_ws().is_empty() {
            continue;
        }
        if let Some(test) = test_header(line) {
            flush(&mut current);
            let m = Measurement {
                line: i as u32 + 1,
                raw_text: line.trim_ws().to_string(),
                ..Measurement::default()
            };
            current = Some((test.to_string(), (m, BTreeMap::new(), i)));
        } else if let (Some((key, value)), Some((test, (m, facts, _)))) =
            (key_value(line), current.as_mut())
        {
            if test == "conf" {
                // `loc_cpu = 20 Cores: Mixed CPUs` is a description, not a number.
                facts.insert(key.to_string().into(), value.to_string());
            } else if !apply(m, key, value, facts) {
                problems.push(Problem::new(
                    block.source,
                    i as u32 + 1,
                    format!("qperf value not understood: {:?}", line.trim_ws()),
                ));
            }
            if matches!(key, "bw" | "recv_bw" | "latency") {
                m.line = i as u32 + 1;
            }
            m.raw_text.push_str(" | ");
            m.raw_text.push_str(&super::common::squash(line));
        } else {
            // qperf's own complaints; anything else is prose around the capture.
            let t = line.trim_ws();
            if t.starts_with("warning:") {
                // `warning: -cm1 set but not used in test uc_bw`: a note on the current test.
                if let Some((_, (_, facts, _))) = current.as_mut() {
                    facts.insert("warning".into(), t.to_string());
                }
            } else if ERROR_WORDS.iter().any(|w| crate::ingest::common::has(t, w)) && t.is_ascii() {
                errors.push((i, t.to_string()));
            }
        }
    }
    flush(&mut current);
    (tests, errors)
}

/// Words of qperf's error messages.
const ERROR_WORDS: &[&str] = &[
    "failed",
    "bad test",
    "error",
    "refused",
    "timed out",
    "unknown",
    "invalid",
    "not ",
];

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    /// The hand readers answer as the regexes they replaced, on every line of the project's
    /// qperf output and on hand-made edge cases.
    #[test]
    fn headers_and_values_read_by_hand_as_the_regexes_read_them() {
        let header = Regex::new(r"^(?P<test>[a-z][a-z0-9_]*):\s*$").unwrap();
        let pair = Regex::new(r"^\s+(?P<key>[a-z_]+)\s+=\s+(?P<value>.*?)\s*$").unwrap();
        let mut lines: Vec<String> = [
            "tcp_bw:",
            "tcp_bw:  ",
            "tcp_bw: :",
            "Tcp_bw:",
            "tcp-bw:",
            "rc_lat:\u{3000}",
            ":",
            "    bw  =  1.2 GB/sec",
            "    bw =1",
            "    bw= 1",
            "bw = 1",
            "    bw =  ",
            "    bw =   x  y  ",
            "\u{3000}latency = 5 us",
            "    b2 = 1",
            "    _ = 1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        lines.extend(crate::ingest::fixture_lines_with(&["fixtures"], "="));
        lines.extend(crate::ingest::fixture_lines_with(&["fixtures"], ":"));
        let mut pairs = 0;
        for line in &lines {
            let want = header
                .captures(line)
                .map(|c| c.name("test").unwrap().as_str());
            assert_eq!(test_header(line), want, "{line:?}");
            let want = pair.captures(line).map(|c| {
                (
                    c.name("key").unwrap().as_str(),
                    c.name("value").unwrap().as_str(),
                )
            });
            pairs += usize::from(want.is_some());
            assert_eq!(key_value(line), want, "{line:?}");
        }
        assert!(pairs > 100, "{pairs}");
    }

    #[test]
    fn values_read_by_hand_as_the_regex_reads_them() {
        let mut values: Vec<String> = [
            "1.2 GB/sec",
            "64 KB (65,536)",
            "64 KB  (65,536)",
            "-3 us",
            "1,234 us",
            "1,234, us",
            ",5 x",
            "5. us",
            ".5",
            "-.5 ms",
            "5million",
            "5 millionaire",
            "2 thousand (2,000)",
            "7 (1a)",
            "7 x (1) y",
            "7 x ( 1)",
            "7 ()",
            "7 (1)(2)",
            "1.2.3 GB",
            "--5",
            "-",
            "abc",
            "20 Cores: Mixed CPUs",
            "3 ٣ us",
            "4\u{3000}us",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for line in crate::ingest::fixture_lines_with(&["fixtures"], "=") {
            values.extend(key_value(&line).map(|(_, v)| v.to_string()));
        }
        let mut numbers = 0;
        for value in &values {
            let want = by_regex(value);
            numbers += usize::from(want.is_some());
            assert_eq!(value_parts(value), want, "{value:?}");
        }
        assert!(numbers > 100, "{numbers}");
    }
}

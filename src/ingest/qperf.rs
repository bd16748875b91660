//! qperf output: one `test_name:` block per test (and per message size in `-oo msg_size:...`
//! sweeps) with `key = value unit` lines; `-v`/`-vv`/`-vu`/`-vc`/`-vs`/`-vt` add keys. qperf is
//! 1000-based throughout (see `units`), except `KiB` sizes, whose parenthesised number is exact.
//! One run per test name of the command; each block of that test is one measurement. `conf`
//! becomes a run of facts (node, CPU, OS, qperf version on both sides).

use super::adapter::{Block, Parser};
use super::{Problem, RunDraft};
use crate::model::{Measurement, Role, RunStatus};
use crate::units::{qperf_bw_gbps, qperf_count, qperf_rate_mpps, qperf_size_bytes, qperf_time_us};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static TEST_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<test>[a-z][a-z0-9_]*):\s*$").expect("qperf header regex"));
static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(?P<key>[a-z_]+)\s+=\s+(?P<value>.*?)\s*$").expect("qperf key regex")
});
static VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<num>-?[\d,]*\.?\d+)\s*(?P<word>thousand|million|billion|trillion)?\s*(?P<unit>[^(]*?)\s*(?:\((?P<exact>[\d,]+)\))?$")
        .expect("qperf value regex")
});

/// `tcp_bw:`: a lowercase word and a colon ending the line (checked before the regex runs,
/// since every line of a block is tried).
fn test_header(line: &str) -> Option<regex::Captures<'_>> {
    let t = line.trim_end();
    if !t.ends_with(':') || !line.starts_with(|c: char| c.is_ascii_lowercase()) {
        return None;
    }
    TEST_HEADER.captures(line)
}

/// `    bw  =  1.2 GB/sec`: indented, with ` = ` in it (checked before the regex runs).
fn key_value(line: &str) -> Option<regex::Captures<'_>> {
    if !line.starts_with(char::is_whitespace) || !line.contains('=') {
        return None;
    }
    KEY_VALUE.captures(line)
}

/// The qperf adapter.
pub struct Qperf;

impl Parser for Qperf {
    fn family(&self) -> &'static str {
        "qperf"
    }
    fn detect(&self, text: &[&str]) -> bool {
        detect(text)
    }
    fn parse_block(&self, block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
        parse_block(block, problems)
    }
}

/// Does a block without a command look like qperf output?
pub fn detect(lines: &[&str]) -> bool {
    lines.windows(2).any(|w| {
        test_header(w[0]).is_some_and(|c| super::command::is_qperf_test(&c["test"]))
            && key_value(w[1]).is_some()
    })
}

/// One `test:` block: its measurement, its text facts and its first line.
type TestBlock = (Measurement, BTreeMap<String, String>, usize);

/// Applies one `key = value` line to a measurement. Returns false for a value it cannot read.
fn apply(
    m: &mut Measurement,
    key: &str,
    value: &str,
    facts: &mut BTreeMap<String, String>,
) -> bool {
    let Some(c) = VALUE.captures(value) else {
        // Text values: `conf` keys, `loc_cpu = 20 Cores: Mixed CPUs`.
        facts.insert(key.to_string(), value.to_string());
        return true;
    };
    let word = c.name("word").map(|w| w.as_str());
    let Some(n) = qperf_count(&c["num"], word) else {
        return false;
    };
    let unit = c["unit"].trim();
    let ok = match key {
        "bw" | "recv_bw" => {
            m.raw_unit = unit.to_string();
            m.bw_avg_gbps = qperf_bw_gbps(n, unit);
            m.bw_avg_gbps.is_some()
        }
        "latency" => {
            m.raw_unit = unit.to_string();
            m.lat_avg_us = qperf_time_us(n, unit);
            m.lat_avg_us.is_some()
        }
        "msg_rate" => {
            m.msg_rate_mpps = qperf_rate_mpps(n, unit);
            m.msg_rate_mpps.is_some()
        }
        "msg_size" => {
            let exact = c
                .name("exact")
                .and_then(|e| e.as_str().replace(',', "").parse::<u64>().ok());
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

/// Parses one block of qperf output.
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    let (source, all, range, command) = (
        block.source,
        block.lines,
        block.range.clone(),
        block.command,
    );
    // (test, measurement, facts, start line) per test block, in order.
    let mut blocks: Vec<(String, Measurement, BTreeMap<String, String>, usize)> = Vec::new();
    let mut errors = Vec::new();
    for i in range.clone() {
        let line = all[i];
        if line.trim().is_empty() {
            continue;
        }
        if let Some(c) = test_header(line) {
            let m = Measurement {
                line: i as u32 + 1,
                raw_text: line.trim().to_string(),
                ..Measurement::default()
            };
            blocks.push((c["test"].to_string(), m, BTreeMap::new(), i));
            continue;
        }
        if let (Some(c), Some((test, m, facts, _))) = (key_value(line), blocks.last_mut()) {
            if test == "conf" {
                // `loc_cpu = 20 Cores: Mixed CPUs` is a description, not a number.
                facts.insert(c["key"].to_string(), c["value"].to_string());
            } else if !apply(m, &c["key"], &c["value"], facts) {
                problems.push(Problem::new(
                    source,
                    i as u32 + 1,
                    format!("qperf value not understood: {:?}", line.trim()),
                ));
            }
            if matches!(&c["key"], "bw" | "recv_bw" | "latency") {
                m.line = i as u32 + 1;
            }
            m.raw_text.push_str(" | ");
            m.raw_text.push_str(&super::common::squash(line));
            continue;
        }
        // qperf's own complaints; anything else is prose around the capture.
        let t = line.trim();
        if t.starts_with("warning:") {
            // `warning: -cm1 set but not used in test uc_bw`: a note on the current test.
            if let Some((_, _, facts, _)) = blocks.last_mut() {
                facts.insert("warning".into(), t.to_string());
            }
            continue;
        }
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
        if ERROR_WORDS.iter().any(|w| t.contains(w)) && t.is_ascii() {
            errors.push((i, t.to_string()));
        }
    }
    let role = if command.is_some_and(|c| c.peer.is_none() && !c.flags.contains_key("tests")) {
        Role::Server
    } else {
        Role::Client
    };
    // The server prints nothing but errors; a client run is one per test name.
    let mut order: Vec<String> = Vec::new();
    let mut by_test: BTreeMap<String, Vec<TestBlock>> = BTreeMap::new();
    for (test, m, facts, i) in blocks {
        if !order.contains(&test) {
            order.push(test.clone());
        }
        by_test.entry(test).or_default().push((m, facts, i));
    }
    let error_text = |errs: &[(usize, String)]| {
        (!errs.is_empty()).then(|| {
            errs.iter()
                .map(|(_, e)| e.clone())
                .collect::<Vec<_>>()
                .join("\n")
        })
    };
    let mut out = Vec::new();
    for test in &order {
        let entries = by_test.remove(test).unwrap_or_default();
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
        out.push(RunDraft {
            keep: true,
            start: if out.is_empty() { range.start } else { start },
            end: range.end,
            tool: "qperf".into(),
            test: Some(test.clone()),
            test_hint: None,
            kind_hint: None,
            role,
            status,
            facts,
            notes: Vec::new(),
            error: if rows.is_empty() {
                error_text(&own_errors)
            } else {
                None
            },
            measurements: rows,
        });
    }
    if out.is_empty() && (command.is_some() || !errors.is_empty()) {
        let status = if errors.is_empty() {
            RunStatus::NoResults
        } else {
            RunStatus::Failed
        };
        let test = command
            .and_then(|c| c.flags.get("tests"))
            .map_or("qperf", |t| t.split(',').next().unwrap_or("qperf"))
            .to_string();
        out.push(RunDraft {
            keep: true,
            start: range.start,
            end: range.end,
            tool: "qperf".into(),
            test: Some(test),
            test_hint: None,
            kind_hint: None,
            role,
            status,
            facts: BTreeMap::new(),
            notes: Vec::new(),
            error: error_text(&errors),
            measurements: Vec::new(),
        });
    }
    out
}

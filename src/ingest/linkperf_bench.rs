//! Logs of `linkperf bench` (the native verbs runner): a perftest-like table per test under a
//! `# linkperf bench` header whose `Key: value` fields, `device.*` facts, per-size check and
//! percentile lines carry everything the stored run holds. `linkperf bench` builds its own
//! stored runs by reading its log back through this parser, so a stored run and an import of
//! its log are the same run (same id: importing the log again stores nothing new).

use super::adapter::{Block, Parser};
use super::common::snake_key;
use super::{Problem, RunDraft};
use crate::model::{Measurement, Role, RunStatus};
use crate::verbs::options::BenchTest;
use std::collections::BTreeMap;

pub const HEADER: &str = "# linkperf bench ";

/// The linkperf-verbs adapter.
pub struct BenchLog;

impl Parser for BenchLog {
    fn family(&self) -> &'static str {
        "linkperf-verbs"
    }
    fn detect(&self, text: &[&str]) -> bool {
        detect(text)
    }
    fn parse_block(&self, block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
        parse_block(block, problems)
    }
    fn exclusive(&self) -> bool {
        true
    }
}

pub fn detect(lines: &[&str]) -> bool {
    lines.iter().any(|l| l.starts_with(HEADER))
}

/// `Key: value` fields separated by two or more spaces.
fn fields(text: &str) -> Vec<(String, String)> {
    text.split("  ")
        .filter_map(|f| f.trim().split_once(": "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn numbers(line: &str) -> Option<Vec<f64>> {
    line.split_whitespace().map(|w| w.parse().ok()).collect()
}

#[derive(PartialEq)]
enum Section {
    Header,
    Table,
    After,
    Intervals,
}

/// Parses every `linkperf bench` test block in `range`.
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    let (source, all, range) = (block.source, block.lines, block.range.clone());
    let starts: Vec<usize> = range
        .clone()
        .filter(|&i| all[i].starts_with(HEADER))
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let end = starts.get(k + 1).copied().unwrap_or(range.end);
            parse_test(source, all, s, end, problems)
        })
        .collect()
}

fn parse_test(
    source: &str,
    all: &[&str],
    start: usize,
    end: usize,
    problems: &mut Vec<Problem>,
) -> RunDraft {
    let mut facts = BTreeMap::new();
    let mut test = None;
    let mut rows: Vec<Measurement> = Vec::new();
    let mut unit = "";
    let mut section = Section::Header;
    let mut rules = 0;
    if let Some(v) = all[start]
        .strip_prefix(HEADER)
        .and_then(|r| r.split_whitespace().next())
    {
        facts.insert("linkperf_version".to_string(), v.to_string());
    }
    if let Some(p) = all[start].split("protocol v").nth(1) {
        facts.insert(
            "protocol_version".to_string(),
            p.trim_end_matches(')').to_string(),
        );
    }
    let bad = |problems: &mut Vec<Problem>, i: usize, why: &str| {
        problems.push(Problem::new(source, i as u32 + 1, why.to_string()));
    };
    for (i, line) in all.iter().enumerate().take(end).skip(start + 1) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("-----") {
            rules += 1;
            section = if rules == 1 {
                Section::Table
            } else {
                Section::After
            };
            continue;
        }
        if let Some(h) = t.strip_prefix("# ") {
            if section == Section::Header && test.is_none() {
                match BenchTest::ALL.iter().find(|b| b.title() == h) {
                    Some(b) => {
                        test = Some(*b);
                        if b.is_atomic() {
                            let kind = if *b == BenchTest::FetchAddLat {
                                "FETCH_AND_ADD"
                            } else {
                                "CMP_AND_SWAP"
                            };
                            facts.insert("atomic_type".into(), kind.into());
                        }
                    }
                    None => bad(problems, i, "unknown linkperf bench test title"),
                }
                continue;
            }
            if let Some((k, v)) = h.strip_prefix("device.").and_then(|d| d.split_once(": ")) {
                facts.insert(format!("device.{k}"), v.to_string());
                continue;
            }
            if let Some(size) = h.strip_prefix("bandwidth over time, ") {
                let _ = size;
                section = Section::Intervals;
                continue;
            }
            if let Some((size, rest)) = h.split_once(" bytes: ") {
                let size: Option<u64> = size.parse().ok();
                let row = rows
                    .iter_mut()
                    .find(|m| m.row_kind.is_none() && m.msg_size_bytes == size);
                match (row, rest.split_once(": ")) {
                    (Some(m), Some(("verified", v))) => {
                        m.extra.insert("verified".into(), v.to_string());
                    }
                    (Some(m), Some(("percentiles[usec]", v))) => {
                        for (k, x) in v.split_whitespace().filter_map(|p| p.split_once('=')) {
                            m.extra.insert(k.to_string(), x.to_string());
                        }
                    }
                    _ => bad(problems, i, "a per-size line without its table row"),
                }
                continue;
            }
            for (k, v) in fields(h) {
                let key = match k.as_str() {
                    "QPs" => "number_of_qps".to_string(),
                    "Link type" => "link_type".to_string(),
                    "Device" => "device".to_string(),
                    other => snake_key(other),
                };
                facts.insert(key, v);
            }
            continue;
        }
        if t.starts_with("#bytes") {
            unit = if t.contains("t_min[usec]") {
                "usec"
            } else {
                "Gb/sec"
            };
            continue;
        }
        let Some(v) = numbers(t) else {
            bad(problems, i, "not a row of a linkperf bench table");
            continue;
        };
        let base = Measurement {
            line: i as u32 + 1,
            raw_text: line.to_string(),
            msg_size_bytes: v.first().map(|&s| s as u64),
            ..Measurement::default()
        };
        let m = match (&section, unit, v.len()) {
            (Section::Table, "Gb/sec", 5) => Measurement {
                raw_unit: "Gb/sec".into(),
                iterations: Some(v[1] as u64),
                bw_peak_gbps: Some(v[2]),
                bw_avg_gbps: Some(v[3]),
                msg_rate_mpps: Some(v[4]),
                ..base
            },
            (Section::Table, "usec", 9) => Measurement {
                raw_unit: "usec".into(),
                iterations: Some(v[1] as u64),
                lat_min_us: Some(v[2]),
                lat_max_us: Some(v[3]),
                lat_typical_us: Some(v[4]),
                lat_avg_us: Some(v[5]),
                lat_stdev_us: Some(v[6]),
                lat_p99_us: Some(v[7]),
                lat_p999_us: Some(v[8]),
                ..base
            },
            (Section::Intervals, _, 5) => Measurement {
                raw_unit: "Gb/sec".into(),
                interval_start_s: Some(v[1]),
                interval_end_s: Some(v[2]),
                transfer_bytes: Some(v[3]),
                bw_avg_gbps: Some(v[4]),
                row_kind: Some("interval".into()),
                ..base
            },
            _ => {
                bad(problems, i, "a row with the wrong number of columns");
                continue;
            }
        };
        rows.push(m);
    }
    let status = if rules >= 2 {
        RunStatus::Ok
    } else {
        RunStatus::Interrupted
    };
    RunDraft {
        keep: true,
        start,
        end,
        tool: "linkperf-verbs".into(),
        test: test.map(|t| t.perftest_name().to_string()),
        test_hint: None,
        kind_hint: None,
        role: Role::Client,
        status,
        facts,
        notes: Vec::new(),
        error: None,
        measurements: rows,
    }
}

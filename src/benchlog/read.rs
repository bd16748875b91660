//! Reads `linkperf bench` logs back (the import adapter of the format [`super::write`]
//! writes).

use crate::ingest::adapter::Block;
use crate::ingest::common::snake_key;
use crate::ingest::file_lines::FileLines;
use crate::ingest::{Problem, RunDraft};
use crate::model::{Measurement, Role, RunStatus};
use crate::verbs::options::BenchTest;
use std::collections::BTreeMap;

use super::HEADER;

crate::ingest::adapter::declare_parser!(
    BenchLog,
    LinkperfVerbs,
    fn exclusive(&self) -> bool {
        true
    }
);

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
    all: FileLines,
    start: usize,
    end: usize,
    problems: &mut Vec<Problem>,
) -> RunDraft {
    let mut t = TestReader {
        source,
        problems,
        facts: BTreeMap::new(),
        test: None,
        rows: Vec::new(),
        unit: "",
        section: Section::Header,
        rules: 0,
    };
    t.first_line(all[start]);
    for i in start + 1..end.min(all.end()) {
        t.line(i, all[i]);
    }
    RunDraft {
        test: t.test.map(|t| t.perftest_name().to_string()),
        role: Role::Client,
        status: if t.rules >= 2 {
            RunStatus::Ok
        } else {
            RunStatus::Interrupted
        },
        facts: t.facts,
        measurements: t.rows,
        ..RunDraft::new(crate::model::Tool::LinkperfVerbs, start..end)
    }
}

/// One test block while its lines are read.
struct TestReader<'a, 'p> {
    source: &'a str,
    problems: &'p mut Vec<Problem>,
    facts: crate::model::Facts,
    test: Option<BenchTest>,
    rows: Vec<Measurement>,
    /// The table's unit, from its header: `Gb/sec` or `usec`.
    unit: &'static str,
    section: Section,
    rules: usize,
}

impl TestReader<'_, '_> {
    fn bad(&mut self, i: usize, why: &str) {
        self.problems
            .push(Problem::new(self.source, i as u32 + 1, why.to_string()));
    }

    /// `# linkperf bench VERSION (native verbs, protocol vN)`.
    fn first_line(&mut self, line: &str) {
        if let Some(v) = line
            .strip_prefix(HEADER)
            .and_then(|r| r.split_whitespace().next())
        {
            self.facts.insert("linkperf_version".into(), v.to_string());
        }
        if let Some(p) = line.split("protocol v").nth(1) {
            self.facts.insert(
                "protocol_version".into(),
                p.trim_end_matches(')').to_string(),
            );
        }
    }

    fn line(&mut self, i: usize, line: &str) {
        let t = line.trim();
        if t.is_empty() {
            return;
        }
        if t.starts_with("-----") {
            self.rules += 1;
            self.section = if self.rules == 1 {
                Section::Table
            } else {
                Section::After
            };
        } else if let Some(h) = t.strip_prefix("# ") {
            self.comment(i, h);
        } else if t.starts_with("#bytes") {
            self.unit = if t.contains("t_min[usec]") {
                "usec"
            } else {
                "Gb/sec"
            };
        } else {
            self.row(i, line, t);
        }
    }

    /// A `# ` line: the test title, a device fact, a per-size line, the bandwidth-over-time
    /// heading, or header fields.
    fn comment(&mut self, i: usize, h: &str) {
        if self.section == Section::Header && self.test.is_none() {
            self.title(i, h);
        } else if let Some((k, v)) = h.strip_prefix("device.").and_then(|d| d.split_once(": ")) {
            self.facts
                .insert(format!("device.{k}").into(), v.to_string());
        } else if h.starts_with("bandwidth over time, ") {
            self.section = Section::Intervals;
        } else if let Some((size, rest)) = h.split_once(" bytes: ") {
            self.per_size(i, size, rest);
        } else {
            for (k, v) in fields(h) {
                let key: crate::model::Word = match k.as_str() {
                    "QPs" => "number_of_qps".into(),
                    "Link type" => "link_type".into(),
                    "Device" => "device".into(),
                    other => snake_key(other).into(),
                };
                self.facts.insert(key, v);
            }
        }
    }

    fn title(&mut self, i: usize, h: &str) {
        let Some(b) = BenchTest::ALL.iter().find(|b| b.title() == h) else {
            self.bad(i, "unknown linkperf bench test title");
            return;
        };
        self.test = Some(*b);
        if b.is_atomic() {
            let kind = if *b == BenchTest::FetchAddLat {
                "FETCH_AND_ADD"
            } else {
                "CMP_AND_SWAP"
            };
            self.facts.insert("atomic_type".into(), kind.into());
        }
    }

    /// `# SIZE bytes: verified: …` or `# SIZE bytes: percentiles[usec]: p50=… …`.
    fn per_size(&mut self, i: usize, size: &str, rest: &str) {
        let size: Option<u64> = size.parse().ok();
        let row = self
            .rows
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
            _ => self.bad(i, "a per-size line without its table row"),
        }
    }

    /// A row of the table or of a bandwidth-over-time table.
    fn row(&mut self, i: usize, line: &str, t: &str) {
        let Some(v) = numbers(t) else {
            self.bad(i, "not a row of a linkperf bench table");
            return;
        };
        let base = Measurement {
            line: i as u32 + 1,
            raw_text: line.to_string(),
            msg_size_bytes: v.first().map(|&s| s as u64),
            ..Measurement::default()
        };
        let m = match (&self.section, self.unit, v.len()) {
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
                bw_avg_gbps: Some(v[4]),
                sparse: crate::model::Sparse {
                    interval_start_s: Some(v[1]),
                    interval_end_s: Some(v[2]),
                    transfer_bytes: Some(v[3]),
                    row_kind: Some("interval".into()),
                    ..Default::default()
                }
                .into(),
                ..base
            },
            _ => {
                self.bad(i, "a row with the wrong number of columns");
                return;
            }
        };
        self.rows.push(m);
    }
}

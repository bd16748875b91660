//! perftest `--out_json` files. Since perftest 6.20 they are JSON; older builds (and Debian 12's
//! 4.5) write the same keys without quotes and with trailing commas, so a lenient key/value
//! reader takes over when strict JSON fails. The file records no bandwidth unit: it is MiB/s or
//! Gb/s depending on `--report_gbits`, which the file does not say. The unit is therefore inferred
//! from `MsgRate × MsgSize`, which fixes the byte rate; the two candidate units differ by a
//! factor of 119.2, so the match is unambiguous.

use super::lines::title;
use crate::ingest::{Problem, RunDraft};
use crate::model::{Measurement, Role, RunStatus};
use crate::units::{gbps_from_msg_rate, BwUnit};
use std::collections::{BTreeMap, HashMap};

/// How many of a file's first lines [`detect`] looks at.
pub const HEAD_LINES: usize = 5;

/// Is this file a perftest JSON result?
pub fn detect(lines: &[&str]) -> bool {
    let first = lines.iter().map(|l| l.trim()).find(|l| !l.is_empty());
    let starts = matches!(
        first,
        Some("{") | Some("{\"test_info\": {") | Some("test_info: {")
    ) || first.is_some_and(|l| l.starts_with('{') && l.contains("test_info"));
    starts
        && lines
            .iter()
            .take(HEAD_LINES)
            .any(|l| l.contains("test_info"))
}

/// Flattened `section.key → (value, line)` pairs.
type Pairs = BTreeMap<String, (String, usize)>;

/// perftest writes about 30 `test_info` and 15 `results` keys; a section with more than this is
/// not perftest output, and what is past the limit is cut off with a problem, so a file of a
/// million keys costs no more than one of this many.
pub const MAX_SECTION_KEYS: usize = 4096;

/// What a section held past [`MAX_SECTION_KEYS`]: how many keys, and the 0-based line of the
/// first (0 when strict JSON on one line does not say).
#[derive(Default)]
struct Overflow {
    keys: usize,
    first_line: Option<usize>,
    section: &'static str,
}

impl Overflow {
    fn note(&mut self, section: &'static str, line: usize) {
        if self.keys == 0 {
            self.first_line = Some(line);
            self.section = section;
        }
        self.keys += 1;
    }
}

/// The first line each quoted key (`"key":`) stands on, found in one pass over the file: a
/// search per key was quadratic (a 20,000-key file took 21 s).
fn key_lines<'a>(lines: &[&'a str]) -> HashMap<&'a str, usize> {
    let mut out = HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        let mut rest = *line;
        while let Some(open) = rest.find('"') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('"') else {
                break;
            };
            let tail = &after[close + 1..];
            if tail.trim_start().starts_with(':') {
                out.entry(&after[..close]).or_insert(i);
            }
            rest = tail;
        }
    }
    out
}

fn strict(lines: &[&str], overflow: &mut Overflow) -> Option<Pairs> {
    let mut v: serde_json::Value = serde_json::from_str(&lines.join("\n")).ok()?;
    let key_lines = key_lines(lines);
    let mut out = Pairs::new();
    for section in ["test_info", "results"] {
        let serde_json::Value::Object(obj) = v.get_mut(section)?.take() else {
            return None;
        };
        // Consumed, not cloned: the document's memory is handed over key by key.
        for (n, (k, val)) in obj.into_iter().enumerate() {
            let line = key_lines.get(k.as_str()).copied().unwrap_or(0);
            if n >= MAX_SECTION_KEYS {
                overflow.note(section, line);
                continue;
            }
            let s = match val {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            out.insert(format!("{section}.{k}"), (s, line));
        }
    }
    Some(out)
}

fn lenient(lines: &[&str], overflow: &mut Overflow) -> Pairs {
    let mut out = Pairs::new();
    let mut section: Option<&'static str> = None;
    let mut in_section = 0;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim().trim_end_matches(',');
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        let k = k.trim().trim_matches('"');
        let v = v.trim().trim_matches('"');
        if v.starts_with('{') {
            // perftest's sections; keys of any other object are kept under its name too.
            section = Some(match k {
                "test_info" => "test_info",
                "results" => "results",
                _ => "other",
            });
            in_section = 0;
            continue;
        }
        let Some(section) = section.filter(|_| !k.is_empty()) else {
            continue;
        };
        in_section += 1;
        if in_section > MAX_SECTION_KEYS {
            overflow.note(section, i);
            continue;
        }
        out.insert(format!("{section}.{k}"), (v.to_string(), i));
    }
    out
}

/// The file's key/value pairs, strict JSON first; keys past [`MAX_SECTION_KEYS`] are reported.
fn pairs(source: &str, lines: &[&str], problems: &mut Vec<Problem>) -> Pairs {
    let mut overflow = Overflow::default();
    let pairs = strict(lines, &mut overflow).unwrap_or_else(|| {
        overflow = Overflow::default();
        lenient(lines, &mut overflow)
    });
    if overflow.keys > 0 {
        problems.push(Problem::new(
            source,
            overflow.first_line.unwrap_or(0) as u32 + 1,
            format!(
                "perftest JSON section {} has {} keys past the first {MAX_SECTION_KEYS}; they are skipped",
                overflow.section, overflow.keys
            ),
        ));
    }
    pairs
}

/// Parses a whole `--out_json` file into one run; keys past [`MAX_SECTION_KEYS`] go to
/// `problems`.
pub fn parse(
    source: &str,
    lines: &[&str],
    problems: &mut Vec<Problem>,
) -> Result<RunDraft, Problem> {
    let pairs = pairs(source, lines, problems);
    let get = |k: &str| pairs.get(k).map(|(v, _)| v.as_str());
    let num = |k: &str| {
        get(k)
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite())
    };
    let results_line = pairs
        .iter()
        .filter(|(k, _)| k.starts_with("results."))
        .map(|(_, (_, l))| *l)
        .min()
        .ok_or_else(|| {
            Problem::new(
                source,
                lines.len() as u32,
                "perftest JSON without a results section (truncated?)".into(),
            )
        })?;
    let size = get("results.MsgSize")
        .and_then(|v| v.parse::<u64>().ok())
        .ok_or_else(|| {
            Problem::new(
                source,
                results_line as u32 + 1,
                "perftest JSON results without MsgSize".into(),
            )
        })?;
    let test_text = get("test_info.test").unwrap_or("");
    let title_text = test_text
        .replace("_BW_Test", " BW Test")
        .replace("_Latency_Test", " Latency Test")
        .replace("_Bidirectional", " Bidirectional");
    let parsed_title = title(&title_text);
    let mut facts = BTreeMap::new();
    for (k, (v, _)) in pairs.iter().filter(|(k, _)| k.starts_with("test_info.")) {
        facts.insert(
            crate::ingest::common::snake_key(&k["test_info.".len()..]).into(),
            v.clone(),
        );
    }
    let mut notes = Vec::new();
    let mut m = Measurement {
        line: results_line as u32 + 1,
        raw_text: lines[results_line..]
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" "),
        msg_size_bytes: Some(size),
        iterations: get("results.n_iterations").and_then(|v| v.parse().ok()),
        msg_rate_mpps: num("results.MsgRate"),
        lat_min_us: num("results.t_min"),
        lat_max_us: num("results.t_max"),
        lat_typical_us: num("results.t_typical"),
        lat_avg_us: num("results.t_avg"),
        lat_stdev_us: num("results.t_stdev"),
        lat_p99_us: num("results.percentile_99"),
        lat_p999_us: num("results.percentile_99.9"),
        tps: num("results.tps_average"),
        cpu_util_pct: num("results.CPU_util"),
        raw_unit: "usec".into(),
        ..Measurement::default()
    };
    if let Some(avg) = num("results.BW_average") {
        let rate = m.msg_rate_mpps.ok_or_else(|| {
            Problem::new(
                source,
                results_line as u32 + 1,
                "perftest JSON has BW_average but no MsgRate: its unit cannot be known".into(),
            )
        })?;
        let expect = gbps_from_msg_rate(rate, size);
        let unit = [BwUnit::PerftestGbps, BwUnit::PerftestMiBps]
            .into_iter()
            .min_by(|a, b| {
                let da = (a.to_gbps(avg) / expect).ln().abs();
                let db = (b.to_gbps(avg) / expect).ln().abs();
                da.total_cmp(&db)
            })
            .expect("two candidates");
        notes.push(format!(
            "bandwidth unit {unit} inferred from MsgRate × MsgSize (the JSON file records none)"
        ));
        m.raw_unit = unit.to_string().into();
        m.bw_avg_gbps = Some(unit.to_gbps(avg));
        m.bw_peak_gbps = num("results.BW_peak")
            .filter(|&p| p > 0.0)
            .map(|p| unit.to_gbps(p));
    }
    Ok(RunDraft {
        keep: true,
        start: 0,
        end: lines.len(),
        tool: crate::model::Tool::Perftest,
        test: parsed_title
            .as_ref()
            .map(|t| format!("ib_{}_{}", t.verb, t.kind)),
        test_hint: None,
        kind_hint: None,
        role: Role::Unknown,
        status: RunStatus::Ok,
        facts,
        notes,
        error: None,
        measurements: vec![m],
    })
}

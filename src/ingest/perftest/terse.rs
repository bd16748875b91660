//! `--output=bandwidth|message_rate|latency`, what scripts run: perftest prints no banner and
//! no table, only each result as `%lf` on a line of its own — the average bandwidth in the run's
//! unit (`MB/sec`, which is MiB/s, or Gb/s with `--report_gbits`), the message rate in Mpps, or
//! the average latency (`t_avg`) in µs. The message sizes are not printed: they come from the
//! command line (`-s N`, the tool's default size, or the `-a` sweep of 2 B to 8 MiB, of which a
//! server prints only the last).

use super::lines;
use crate::ingest::adapter::Block;
use crate::ingest::draft::status_of;
use crate::ingest::{Problem, RunDraft};
use crate::model::{CommandLine, Measurement, Tool};
use crate::units::BwUnit;

/// What a terse result line is.
#[derive(Clone, Copy)]
enum Output {
    Bandwidth(BwUnit),
    MessageRate,
    Latency,
}

/// The sizes of `-a`: 2^1 .. 2^23 bytes.
const SWEEP: std::ops::RangeInclusive<u32> = 1..=23;

/// Reads a block typed with `--output=…`; `None` when the command has no such flag (the full
/// output is then read by the walker).
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Option<Vec<RunDraft>> {
    let (source, all, range, command) = block.parts();
    let c = command?;
    let output = match c.flags.get("output")?.as_ref() {
        "bandwidth" if c.flags.contains_key("report_gbits") => {
            Output::Bandwidth(BwUnit::PerftestGbps)
        }
        "bandwidth" => Output::Bandwidth(BwUnit::PerftestMiBps),
        "message_rate" => Output::MessageRate,
        "latency" => Output::Latency,
        _ => return None,
    };
    let mut values = Vec::new();
    let mut notes = Vec::new();
    let mut errors = Vec::new();
    for i in range.clone() {
        let t = all[i].trim();
        if t.is_empty() || lines::is_rule(t) {
            continue;
        }
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() && t.as_bytes()[0].is_ascii_digit() => values.push((i, v)),
            _ if lines::is_error(t) => errors.push(t.to_string()),
            _ if lines::is_warning(t) => notes.push(format!("line {}: {t}", i + 1)),
            _ => problems.push(Problem::new(
                source,
                i as u32 + 1,
                format!("not a perftest --output={} value: {t:?}", output.name()),
            )),
        }
    }
    let sizes = sizes(c, values.len(), &mut notes);
    let rows = values
        .iter()
        .zip(sizes)
        .map(|(&(i, v), size)| output.row(i, all[i], v, size))
        .collect::<Vec<_>>();
    Some(vec![RunDraft {
        test_hint: Some(c.program.to_string()),
        status: status_of(!rows.is_empty(), !errors.is_empty()),
        facts: [("output".into(), output.name().to_string())].into(),
        notes,
        error: (!errors.is_empty()).then(|| errors.join("\n")),
        measurements: rows,
        ..RunDraft::new(Tool::Perftest, range)
    }])
}

/// The message size of each of `n` values, from the command line.
fn sizes(c: &CommandLine, n: usize, notes: &mut Vec<String>) -> Vec<Option<u64>> {
    if c.flags.contains_key("all") {
        let sweep: Vec<Option<u64>> = SWEEP.map(|k| Some(1u64 << k)).collect();
        return match n {
            _ if n == sweep.len() => sweep,
            // The server side of a sweep prints the last size's result only.
            1 => vec![sweep[sweep.len() - 1]],
            _ => {
                notes.push(format!(
                    "--output with -a printed {n} values, not one per size of the sweep ({}): \
                     their sizes are unknown",
                    sweep.len()
                ));
                vec![None; n]
            }
        };
    }
    let size = c
        .flags
        .get("size")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| default_size(&c.program));
    vec![Some(size); n]
}

/// perftest's message size without `-s`: 8 B for atomics, 2 B for latency, 64 KiB otherwise.
fn default_size(program: &str) -> u64 {
    if program.contains("atomic") {
        8
    } else if program.ends_with("_lat") {
        2
    } else {
        65536
    }
}

impl Output {
    fn name(self) -> &'static str {
        match self {
            Output::Bandwidth(_) => "bandwidth",
            Output::MessageRate => "message_rate",
            Output::Latency => "latency",
        }
    }

    fn row(self, i: usize, raw: &str, v: f64, size: Option<u64>) -> Measurement {
        let mut m = Measurement {
            line: i as u32 + 1,
            raw_text: raw.to_string(),
            msg_size_bytes: size,
            ..Measurement::default()
        };
        match self {
            Output::Bandwidth(unit) => {
                // Not printed: the label perftest's table would carry for this unit.
                m.raw_unit = match unit {
                    BwUnit::PerftestGbps => "Gb/sec",
                    BwUnit::PerftestMiBps => "MB/sec",
                }
                .into();
                m.bw_avg_gbps = Some(unit.to_gbps(v));
            }
            Output::MessageRate => {
                m.raw_unit = "Mpps".into();
                m.msg_rate_mpps = Some(v);
            }
            Output::Latency => {
                m.raw_unit = "usec".into();
                m.lat_avg_us = Some(v);
            }
        }
        m
    }
}

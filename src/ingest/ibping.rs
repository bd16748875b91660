//! ibping output: `Pong from HOST (Lid N): time 0.019 ms` replies and the statistics block
//! (`N packets transmitted, M received, P% packet loss, time T ms` and
//! `rtt min/avg/max = a/b/c ms`). Times are ms.
//!
//! ibping in rdma-core 25 and later has a timer bug: times come out about 10x too small, or
//! about 900 ms when a ping crosses a second boundary. The numbers are kept as printed and the
//! run is marked suspect (`facts.suspect`) when they look like either symptom.

use super::adapter::Block;
use super::draft::status_of;
use super::{Problem, RunDraft};
use crate::ingest::common::TrimWs;
use crate::model::{Measurement, Role};
use std::collections::BTreeMap;

// Numbers are `digits[.digits]` as ibping prints them: a time such as `0.22.6019` is no number,
// and its line goes to the problems rather than into a row as not-a-number.
crate::ingest::common::per_thread_regex! {
    static PONG = r"^Pong from (?P<host>.+?) \((?P<addr>[^)]*)\): time (?P<ms>\d+(?:\.\d+)?) ms";
    static STATS = r"^(?P<tx>\d+) packets transmitted, (?P<rx>\d+) received, (?P<loss>\d+(?:\.\d+)?)% packet loss, time (?P<time>\d+(?:\.\d+)?) ?ms";
    static RTT = r"^rtt min/avg/max = (?P<min>\d+(?:\.\d+)?)/(?P<avg>\d+(?:\.\d+)?)/(?P<max>\d+(?:\.\d+)?) ms";
}

crate::ingest::adapter::declare_parser!(Ibping, Ibping,
    markers: &["Pong from ", "ibping statistics ---"]);

/// Does a block without a command look like ibping output?
pub fn detect(lines: &[&str]) -> bool {
    lines.iter().any(|l| {
        let t = l.trim_ws();
        (t.starts_with("Pong from ") && PONG.with(|re| re.is_match(t)))
            || (memchr::memchr(b'-', l.as_bytes()).is_some() && l.contains("ibping statistics ---"))
    })
}

/// A MAD round trip through the HCA and the remote agent takes tens of microseconds at least.
const FASTEST_PLAUSIBLE_MS: f64 = 0.05;

/// Parses one block of ibping output.
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    let (source, all, range, command) = block.parts();
    let mut rows = Vec::new();
    let mut summary = Measurement::default();
    let mut has_summary = false;
    let mut facts = BTreeMap::new();
    let mut errors = Vec::new();
    for i in range.clone() {
        let t = all[i].trim_ws();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = PONG.with(|re| re.captures(t)) {
            // `digits[.digits]` always reads as a float (a very long one as infinity).
            let ms: f64 = c["ms"].parse().unwrap_or(f64::INFINITY);
            facts.insert("target".into(), format!("{} ({})", &c["host"], &c["addr"]));
            rows.push(Measurement {
                line: i as u32 + 1,
                raw_text: all[i].to_string(),
                raw_unit: "ms".into(),
                lat_avg_us: Some(ms * 1000.0),
                sparse: crate::model::Sparse {
                    row_kind: Some("sample".into()),
                    ..Default::default()
                }
                .into(),
                ..Measurement::default()
            });
        } else if let Some(c) = STATS.with(|re| re.captures(t)) {
            let (Ok(tx), Ok(rx)) = (c["tx"].parse::<u64>(), c["rx"].parse::<u64>()) else {
                problems.push(Problem::new(
                    source,
                    i as u32 + 1,
                    format!("ibping packet count beyond 64 bits: {t:?}"),
                ));
                continue;
            };
            has_summary = true;
            summary.line = i as u32 + 1;
            summary.raw_text = t.to_string();
            summary.total = Some(tx);
            summary.lost = Some(tx.saturating_sub(rx));
            summary.loss_pct = c["loss"].parse().ok();
            summary
                .extra
                .insert("time".into(), format!("{} ms", &c["time"]));
        } else if let Some(c) = RTT.with(|re| re.captures(t)) {
            has_summary = true;
            let us = |k: &str| c[k].parse::<f64>().ok().map(|v| v * 1000.0);
            summary.lat_min_us = us("min");
            summary.lat_avg_us = us("avg");
            summary.lat_max_us = us("max");
            if summary.line == 0 {
                // No statistics line above it (cut or garbled): the row is this line's.
                summary.line = i as u32 + 1;
                summary.raw_text = t.to_string();
            } else {
                summary.raw_text = format!("{} | {t}", summary.raw_text);
            }
            summary.raw_unit = "ms".into();
        } else if t.starts_with("---") && t.ends_with("---") {
            facts.insert(
                "target".into(),
                t.trim_matches(['-', ' '])
                    .trim_end_matches(" ibping statistics")
                    .to_string(),
            );
        } else if t.starts_with("ibwarn")
            || t.starts_with("ibpanic")
            || t.contains("failed")
            || t.contains("can't")
        {
            errors.push(t.to_string());
        } else if t.starts_with("Pong")
            || t.starts_with("rtt ")
            || t.contains("packets transmitted")
        {
            // Anything else is prose around the capture.
            problems.push(Problem::new(
                source,
                i as u32 + 1,
                format!("ibping line not understood: {t:?}"),
            ));
        }
    }
    if has_summary {
        summary.row_kind = Some("summary".into());
        rows.push(summary);
    }
    let mut notes = Vec::new();
    if let Some(why) = suspect(&rows) {
        notes.push(format!("suspect numbers: {why}"));
        facts.insert("suspect".into(), why.into());
    }
    let server = command.is_some_and(|c| c.flags.contains_key("-S"));
    let status = status_of(!rows.is_empty(), !errors.is_empty());
    vec![RunDraft {
        test: Some("ibping".into()),
        role: if server { Role::Server } else { Role::Client },
        status,
        facts,
        notes,
        error: (!errors.is_empty()).then(|| errors.join("\n")),
        measurements: rows,
        ..RunDraft::new(crate::model::Tool::Ibping, range)
    }]
}

/// Why the times of a capture cannot be trusted: rdma-core 25 and later have a timer bug
/// that shows in the numbers themselves.
fn suspect(rows: &[Measurement]) -> Option<&'static str> {
    let times: Vec<f64> = rows
        .iter()
        .filter_map(|m| m.lat_avg_us.or(m.lat_max_us))
        .collect();
    let max_ms = rows
        .iter()
        .filter_map(|m| m.lat_max_us.or(m.lat_avg_us))
        .fold(0.0f64, f64::max)
        / 1000.0;
    let avg_ms = rows
        .iter()
        .find(|m| m.row_kind.as_deref() == Some("summary"))
        .and_then(|m| m.lat_avg_us)
        .or_else(|| (!times.is_empty()).then(|| times.iter().sum::<f64>() / times.len() as f64))
        .map(|us| us / 1000.0);
    if max_ms >= 900.0 && avg_ms.is_some_and(|a| a < 100.0) {
        Some("timer bug: a reply that crossed a second reads ~900 ms (rdma-core >= 25)")
    } else if avg_ms.is_some_and(|a| a < FASTEST_PLAUSIBLE_MS) {
        Some(
            "round trips under 0.05 ms: rdma-core >= 25 timer bug reports times about 10x too small",
        )
    } else {
        None
    }
}

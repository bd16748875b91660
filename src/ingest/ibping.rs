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
        (t.starts_with("Pong from ") && pong(t).is_some())
            || crate::ingest::common::has(l, "ibping statistics ---")
    })
}

/// Where a capture's target was read.
enum Target<'a> {
    /// `Pong from HOST (ADDR)`.
    Reply(&'a str, &'a str),
    /// `--- NAME ibping statistics ---`.
    Statistics(&'a str),
}

/// A `Pong from HOST (ADDR): time MS ms` line's parts.
struct Pong<'a> {
    host: &'a str,
    addr: &'a str,
    ms: &'a str,
}

/// A reply line as [`PONG`] reads it: every line of a capture is asked, most are replies. An
/// ASCII line is read by hand (the shortest host that lets the rest match, as the pattern's
/// lazy `.+?` takes); any other goes to the pattern, whose `\d` takes digits of every script.
fn pong(t: &str) -> Option<Pong<'_>> {
    if !t.is_ascii() {
        return PONG.with(|re| {
            let c = re.captures(t)?;
            let part = |k: &str| c.name(k).map_or("", |m| m.as_str());
            Some(Pong {
                host: part("host"),
                addr: part("addr"),
                ms: part("ms"),
            })
        });
    }
    let rest = t.strip_prefix("Pong from ")?;
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    for at in memchr::memmem::find_iter(rest.as_bytes(), b" (").filter(|&at| at > 0) {
        let after = &rest[at + 2..];
        // The address runs to the first `)`: a later ` (` has no other.
        let close = memchr::memchr(b')', after.as_bytes())?;
        let Some(time) = after[close..].strip_prefix("): time ") else {
            continue;
        };
        let mut end = digits(time);
        if end == 0 {
            continue;
        }
        if let Some(fraction) = time[end..].strip_prefix('.') {
            let f = digits(fraction);
            if f > 0 {
                end += 1 + f;
            }
        }
        if time[end..].starts_with(" ms") {
            return Some(Pong {
                host: &rest[..at],
                addr: &after[..close],
                ms: &time[..end],
            });
        }
    }
    None
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
    // The last line that names the target: a reply's host and address, or the statistics
    // header; written into the facts once, at the end.
    let mut target = None;
    let mut errors = Vec::new();
    for i in range.clone() {
        let t = all[i].trim_ws();
        if t.is_empty() {
            continue;
        }
        if let Some(p) = pong(t) {
            // `digits[.digits]` always reads as a float (a very long one as infinity).
            let ms: f64 = p.ms.parse().unwrap_or(f64::INFINITY);
            target = Some(Target::Reply(p.host, p.addr));
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
            target = Some(Target::Statistics(
                t.trim_matches(['-', ' '])
                    .trim_end_matches(" ibping statistics"),
            ));
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
    match target {
        Some(Target::Reply(host, addr)) => {
            facts.insert("target".into(), format!("{host} ({addr})"))
        }
        Some(Target::Statistics(name)) => facts.insert("target".into(), name.to_string()),
        None => None,
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The pattern's reading of a reply line, for comparison.
    fn by_pattern(t: &str) -> Option<(String, String, String)> {
        PONG.with(|re| {
            let c = re.captures(t)?;
            Some((c["host"].into(), c["addr"].into(), c["ms"].into()))
        })
    }

    /// `pong` reads every line as the pattern does: the fixtures' lines and shapes that make
    /// the lazy host, the address and the time take a second look.
    #[test]
    fn pong_reads_as_the_pattern() {
        let mut lines = crate::ingest::fixture_lines_with(&["fixtures", "../shared/samples"], "");
        lines.iter_mut().for_each(|l| *l = l.trim_ws().to_string());
        lines.extend(
            [
                "Pong from h (Lid 2): time 0.019 ms",
                "Pong from h (a) (Lid 2): time 0.019 ms",
                "Pong from h (Lid 2): time 0.22.6019 ms",
                "Pong from h (Lid 2): time 0.22.6019 ms (x): time 1 ms",
                "Pong from h (Lid 2): time 5. ms",
                "Pong from h (Lid 2): time .5 ms",
                "Pong from h (Lid 2): time 7 msec",
                "Pong from h (Lid 2: time 7 ms",
                "Pong from  (x): time 1 ms",
                "Pong from   (x): time 1 ms",
                "Pong from h ((x)): time 1 ms",
                "Pong from h (x)): time 1 ms",
                "Pong from h (): time 1 ms",
                "Pong from h (x): time 1 ms trailing",
                "Pong from h (x): time ms",
                "Pong from ĥost (Lid 2): time 0.019 ms",
                "Pong from h (Lid 2): time ٣ ms",
                "Pong from h (Lid 2): time 1٣ ms",
                "Pong from h",
                "Pong from ",
                "pong from h (x): time 1 ms",
            ]
            .map(String::from),
        );
        let mut replies = 0;
        for t in &lines {
            let hand = pong(t).map(|p| (p.host.into(), p.addr.into(), p.ms.into()));
            assert_eq!(hand, by_pattern(t), "{t:?}");
            replies += usize::from(hand.is_some());
        }
        assert!(replies > 10, "{replies} reply lines");
    }
}

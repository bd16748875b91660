//! perftest (`ib_send_bw`, `ib_read_bw`, `ib_write_bw`, `ib_atomic_bw`, the `_lat` tools and
//! `raw_ethernet_bw`) text output: banner, address lines, waiting box, BW and latency tables
//! in every known layout, warnings inside tables and copy-and-paste damage. Also `--out_json`
//! files (see [`json`]).
//!
//! The parser walks a block line by line; each line is classified by the small parsers in
//! [`lines`]. A run starts at the waiting box, banner or table header and ends at the next
//! banner or at the end of the block. Lines inside a table that are neither rows nor known
//! warnings are reported as problems with their line number, never dropped silently.

pub mod json;
pub mod lines;

use super::adapter::{Block, Parser};
use super::{Problem, RunDraft};
use crate::model::{Measurement, Role, RunStatus};
use crate::units::BwUnit;
use lines::Column;
use std::collections::BTreeMap;

/// The perftest adapter.
pub struct Perftest;

impl Parser for Perftest {
    fn family(&self) -> &'static str {
        "perftest"
    }
    fn detect(&self, text: &[&str]) -> bool {
        detect(text)
    }
    fn parse_block(&self, block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
        parse_block(block, problems)
    }
    fn finish(&self, run: &mut crate::model::Run) {
        apply_command(run);
    }
}

/// Does this block look like perftest output (used when no command names the tool)?
pub fn detect(text: &[&str]) -> bool {
    text.iter()
        .any(|l| lines::title(l).is_some() || lines::header(l).is_some())
}

/// Test name from a banner title and connection type: `RDMA_Write BW` → `ib_write_bw`.
fn test_name(title: &lines::Title, connection: Option<&str>) -> String {
    if connection == Some("RawEth") {
        return format!("raw_ethernet_{}", title.kind);
    }
    format!("ib_{}_{}", title.verb, title.kind)
}

/// Recognises `ib_write_bw`, `write_bw`, `write-lat`, ... in a file name.
fn test_from_file_name(source: &str) -> Option<String> {
    let name = source
        .rsplit('/')
        .next()
        .unwrap_or(source)
        .to_ascii_lowercase()
        .replace('-', "_");
    const TESTS: [&str; 8] = [
        "send_bw",
        "send_lat",
        "write_bw",
        "write_lat",
        "read_bw",
        "read_lat",
        "atomic_bw",
        "atomic_lat",
    ];
    TESTS
        .iter()
        .find(|t| name.contains(*t))
        .map(|t| format!("ib_{t}"))
}

#[derive(Default)]
struct Draft {
    start: usize,
    end: usize,
    title: Option<lines::Title>,
    waiting: bool,
    facts: BTreeMap<String, String>,
    notes: Vec<String>,
    errors: Vec<String>,
    header: Option<Vec<Column>>,
    header_line: usize,
    table_open: bool,
    rows: Vec<Measurement>,
    /// Rows that were reported as problems (wrong column count, ...).
    bad_rows: usize,
    interrupted: bool,
    /// `-H`/`-U` raw samples: the unit their list header names, and the values printed since
    /// (with the line of the first) waiting for the result row perftest prints after them.
    sample_unit: Option<&'static str>,
    pending_samples: Vec<f64>,
    pending_samples_line: usize,
    /// Samples that cannot be stored as µs (CPU cycles, no unit, no row after them).
    unstored_samples: usize,
    /// `#, cycles`: the table's latency columns are CPU cycles despite their `[usec]` header.
    cycles: bool,
    report_both: Option<&'static str>,
    local_qps: usize,
    remote_qps: usize,
    peak_not_measured: bool,
}

impl Draft {
    fn touch(&mut self, i: usize) {
        self.end = i + 1;
    }

    fn meaningful(&self) -> bool {
        self.title.is_some() || self.header.is_some() || self.waiting || !self.errors.is_empty()
    }
}

/// Parses one block. `is_perftest_command` is true when the prompt named a perftest program.
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    let (source, all, range) = (block.source, block.lines, block.range.clone());
    let is_perftest_command = block.named;
    let mut out = Vec::new();
    let mut draft: Option<Draft> = None;
    let mut pending: Vec<(usize, String)> = Vec::new();
    let problem = |problems: &mut Vec<Problem>, i: usize, msg: String| {
        problems.push(Problem::new(source, i as u32 + 1, msg));
    };
    let open = |draft: &mut Option<Draft>, pending: &mut Vec<(usize, String)>, i: usize| {
        if draft.is_none() {
            let start = pending.first().map_or(i, |p| p.0);
            let mut d = Draft {
                start,
                end: i + 1,
                ..Draft::default()
            };
            d.notes.extend(
                pending
                    .drain(..)
                    .map(|(l, n)| format!("line {}: {}", l + 1, n)),
            );
            *draft = Some(d);
        }
    };

    for i in range.clone() {
        let line = all[i];
        if line.trim().is_empty() {
            continue;
        }
        // Fast path for the most common line: a data row of an open table.
        if let Some(d) = draft
            .as_mut()
            .filter(|d| d.table_open && d.report_both.is_none())
        {
            if line.trim_start().starts_with(|c: char| c.is_ascii_digit())
                && !lines::is_sample(line)
            {
                if let Some(row) = lines::row(line) {
                    d.touch(i);
                    let cols = d.header.as_ref().expect("open table has a header");
                    match measurement(cols, &row, i, line) {
                        Ok(m) => push_row(d, m, &row, i),
                        Err(why) => {
                            d.bad_rows += 1;
                            problem(problems, i, why);
                        }
                    }
                    continue;
                }
            }
        }
        if lines::is_rule(line) {
            if let Some(d) = draft.as_mut() {
                d.touch(i);
                if d.table_open {
                    d.table_open = false;
                    d.report_both = None;
                }
            }
            continue;
        }
        if lines::is_waiting(line) || lines::is_star_rule(line) {
            // A new waiting box after a finished table is the next run; the rdma_cm variant
            // ("Waiting for client rdma_cm QP to connect") sits inside the banner of this one.
            if draft.as_ref().is_some_and(|d| d.header.is_some()) {
                out.extend(draft.take().map(|d| finish(d, source, all, problems)));
            }
            open(&mut draft, &mut pending, i);
            let d = draft.as_mut().expect("draft opened");
            d.touch(i);
            if lines::is_waiting(line) {
                d.waiting = true;
                d.facts.insert("waiting_for_client".into(), "yes".into());
            }
            continue;
        }
        if let Some(t) = lines::title(line) {
            if draft
                .as_ref()
                .is_some_and(|d| d.title.is_some() || d.header.is_some())
            {
                out.extend(draft.take().map(|d| finish(d, source, all, problems)));
            }
            open(&mut draft, &mut pending, i);
            let d = draft.as_mut().expect("draft opened");
            d.touch(i);
            d.facts.insert("title".into(), t.text.clone());
            d.title = Some(t);
            continue;
        }
        if let Some(cols) = lines::header(line) {
            open(&mut draft, &mut pending, i);
            let d = draft.as_mut().expect("draft opened");
            d.touch(i);
            d.header = Some(cols);
            d.header_line = i;
            d.table_open = true;
            continue;
        }
        let Some(d) = draft.as_mut() else {
            // Before any perftest output: keep warnings for the run that follows; anything
            // else is surrounding prose.
            if lines::is_warning(line) {
                pending.push((i, line.trim().to_string()));
            } else if lines::is_error(line) && is_perftest_command {
                open(&mut draft, &mut pending, i);
                let d = draft.as_mut().expect("draft opened");
                d.touch(i);
                d.errors.push(line.trim().to_string());
            }
            continue;
        };
        if let Some((side, rest)) = lines::address(line) {
            d.touch(i);
            let n = if side == "local" {
                &mut d.local_qps
            } else {
                &mut d.remote_qps
            };
            *n += 1;
            let key = if *n == 1 {
                format!("{side}_address")
            } else {
                format!("{side}_address_{n}")
            };
            d.facts.insert(key, rest);
            continue;
        }
        if let Some(g) = lines::gid(line) {
            d.touch(i);
            let (side, n) = if d.remote_qps > 0 {
                ("remote", d.remote_qps)
            } else {
                ("local", d.local_qps)
            };
            let key = if n <= 1 {
                format!("{side}_gid")
            } else {
                format!("{side}_gid_{n}")
            };
            d.facts.insert(key, g);
            continue;
        }
        if let Some(pairs) = lines::banner_pairs(line) {
            d.touch(i);
            for (k, v) in pairs {
                d.facts.insert(k, v);
            }
            continue;
        }
        let t = line.trim();
        if t.starts_with("Local results:") || t.starts_with("Remote results:") {
            d.touch(i);
            d.report_both = Some(if t.starts_with("Local") {
                "local"
            } else {
                "remote"
            });
            continue;
        }
        if let Some(unit) = lines::sample_header(line) {
            d.touch(i);
            d.sample_unit = Some(unit);
            d.cycles |= unit == "cycles";
            continue;
        }
        if let Some((index, value)) = lines::sample(line) {
            d.touch(i);
            if d.pending_samples.is_empty() {
                d.pending_samples_line = i;
            }
            if index != d.pending_samples.len() as u64 + 1 {
                d.notes.push(format!(
                    "line {}: raw sample {index} follows sample {} (lines lost in the copy?)",
                    i + 1,
                    d.pending_samples.len()
                ));
            }
            d.pending_samples.push(value);
            continue;
        }
        if lines::is_interrupt(line) {
            d.touch(i);
            d.interrupted = true;
            continue;
        }
        if lines::is_warning(line) {
            d.touch(i);
            d.notes.push(format!("line {}: {}", i + 1, t));
            continue;
        }
        if d.table_open {
            if let Some(row) = lines::row(line) {
                d.touch(i);
                let cols = d.header.as_ref().expect("open table has a header");
                match measurement(cols, &row, i, line) {
                    Ok(m) => match d.report_both {
                        Some(side) => {
                            d.facts.insert(format!("{side}_result"), t.to_string());
                        }
                        None => push_row(d, m, &row, i),
                    },
                    Err(why) => {
                        d.bad_rows += 1;
                        problem(problems, i, why);
                    }
                }
                continue;
            }
            if lines::is_error(line) {
                d.touch(i);
                d.errors.push(t.to_string());
                continue;
            }
            d.touch(i);
            problem(
                problems,
                i,
                format!("unrecognised line inside a perftest table: {t:?}"),
            );
            continue;
        }
        if lines::is_error(line) {
            d.touch(i);
            d.errors.push(t.to_string());
            continue;
        }
        if d.title.is_some() && d.header.is_none() && d.end == i {
            // A banner line this parser does not know (a newer perftest): keep it as a fact.
            if let Some((k, v)) = t.split_once(" : ").or_else(|| t.split_once(':')) {
                d.touch(i);
                d.facts
                    .insert(super::common::snake_key(k), v.trim().to_string());
                continue;
            }
        }
        // Anything else after the output is prose around the capture: the run is over.
        if d.header.is_some() && !d.table_open {
            out.extend(draft.take().map(|d| finish(d, source, all, problems)));
        }
    }
    if let Some(d) = draft.take() {
        out.push(finish(d, source, all, problems));
    }
    out.retain(|r| r.keep);
    out
}

/// Adds a parsed row to the run, noting glued text and unmeasured peaks.
fn push_row(d: &mut Draft, mut m: Measurement, row: &lines::Row<'_>, i: usize) {
    if !row.trailing.is_empty() {
        d.notes.push(format!(
            "line {}: text glued after the row ignored: {:?}",
            i + 1,
            row.trailing
        ));
    }
    if m.bw_peak_gbps == Some(0.0) && m.bw_avg_gbps.is_some_and(|v| v > 0.0) {
        m.bw_peak_gbps = None;
        d.peak_not_measured = true;
    }
    // perftest prints a size's raw samples just before its result row.
    let samples = std::mem::take(&mut d.pending_samples);
    if d.sample_unit == Some("usec") {
        m.samples_us = samples;
    } else {
        d.unstored_samples += samples.len();
    }
    d.rows.push(m);
}

/// With `-C` perftest prints latencies in CPU cycles under the same `[usec]` header and no
/// clock rate to convert them: keep them as cycle values in `extra`, never as microseconds.
/// Returns whether any row had latencies to move.
pub fn latency_in_cycles(rows: &mut [Measurement]) -> bool {
    let mut moved = false;
    for m in rows {
        let fields = [
            ("t_min_cycles", &mut m.lat_min_us),
            ("t_max_cycles", &mut m.lat_max_us),
            ("t_typical_cycles", &mut m.lat_typical_us),
            ("t_avg_cycles", &mut m.lat_avg_us),
            ("t_stdev_cycles", &mut m.lat_stdev_us),
            ("p99_cycles", &mut m.lat_p99_us),
            ("p999_cycles", &mut m.lat_p999_us),
        ];
        let mut any = false;
        for (key, field) in fields {
            if let Some(v) = field.take() {
                m.extra.insert(key.to_string(), v.to_string());
                any = true;
            }
        }
        if any {
            m.raw_unit = "cycles".into();
            moved = true;
        }
    }
    moved
}

const CYCLES_NOTE: &str = "latencies are CPU cycles (-C/--report-cycles) under a [usec] header: \
kept as *_cycles in extra, not as µs (perftest prints no clock rate to convert them)";

/// Builds a measurement from a row, checking it against the header.
fn measurement(
    cols: &[Column],
    row: &lines::Row<'_>,
    i: usize,
    raw: &str,
) -> Result<Measurement, String> {
    if row.values.len() != cols.len() {
        return Err(format!(
            "perftest row has {} values but its header has {} columns: {:?}",
            row.values.len(),
            cols.len(),
            raw.trim()
        ));
    }
    let mut m = Measurement {
        line: i as u32 + 1,
        raw_text: raw.to_string(),
        ..Measurement::default()
    };
    let mut unit = "usec";
    for (col, text) in cols.iter().zip(&row.values) {
        let f = text.parse::<f64>().ok().filter(|v| v.is_finite());
        let int = || text.parse::<u64>().ok();
        let bw = |u: &str| -> Result<Option<f64>, String> {
            let unit = BwUnit::from_perftest_label(u)
                .ok_or_else(|| format!("unknown perftest bandwidth unit {u:?}"))?;
            Ok(f.map(|v| unit.to_gbps(v)))
        };
        match col {
            Column::Bytes => m.msg_size_bytes = int(),
            Column::Iterations => m.iterations = int(),
            Column::Sl => m.sl = int().map(|v| v as u32),
            Column::BwPeak(u) => {
                unit = u;
                m.bw_peak_gbps = bw(u)?;
            }
            Column::BwAvg(u) => {
                unit = u;
                m.bw_avg_gbps = bw(u)?;
            }
            Column::MsgRate => m.msg_rate_mpps = f,
            Column::BwPort1(u) => m.bw_port1_gbps = bw(u)?,
            Column::MsgRatePort1 => m.msg_rate_port1_mpps = f,
            Column::BwPort2(u) => m.bw_port2_gbps = bw(u)?,
            Column::MsgRatePort2 => m.msg_rate_port2_mpps = f,
            Column::CpuUtil => m.cpu_util_pct = f,
            Column::TMin => m.lat_min_us = f,
            Column::TMax => m.lat_max_us = f,
            Column::TTypical => m.lat_typical_us = f,
            Column::TAvg => m.lat_avg_us = f,
            Column::TStdev => m.lat_stdev_us = f,
            Column::P99 => m.lat_p99_us = f,
            Column::P999 => m.lat_p999_us = f,
            Column::Tps => m.tps = f,
        }
    }
    if m.msg_size_bytes.is_none() || m.iterations.is_none() {
        return Err(format!(
            "perftest row does not start with two integers: {:?}",
            raw.trim()
        ));
    }
    m.raw_unit = unit.to_string();
    Ok(m)
}

fn finish(d: Draft, source: &str, all: &[&str], problems: &mut Vec<Problem>) -> RunDraft {
    let keep = d.meaningful();
    let mut notes = d.notes;
    let mut rows = d.rows;
    let mut facts = d.facts;
    if rows.iter().any(|m| !m.samples_us.is_empty()) {
        // `-H` lists are sorted by perftest (a distribution), `-U` lists are in iteration order
        // (a time series); the log does not say which flag made them, the data does.
        let sorted = rows
            .iter()
            .all(|m| m.samples_us.windows(2).all(|w| w[0] <= w[1]));
        facts.insert(
            "samples_sorted".into(),
            if sorted { "yes" } else { "no" }.into(),
        );
    }
    if d.cycles && latency_in_cycles(&mut rows) {
        notes.push(CYCLES_NOTE.into());
    }
    if d.unstored_samples > 0 {
        let why = match d.sample_unit {
            Some("cycles") => "in CPU cycles, which perftest gives no clock rate to convert",
            _ => "without a `#, usec` header",
        };
        notes.push(format!(
            "{} raw latency samples (-H/-U) not stored: {why}",
            d.unstored_samples
        ));
    }
    if !d.pending_samples.is_empty() {
        notes.push(format!(
            "{} raw latency samples from line {} have no result row after them (output cut \
             off?): not stored",
            d.pending_samples.len(),
            d.pending_samples_line + 1
        ));
    }
    if d.peak_not_measured {
        notes.push(
            "BW peak printed as 0.00 (not measured: server side, -N or -D); stored as null".into(),
        );
    }
    let status = if !rows.is_empty() {
        RunStatus::Ok
    } else if !d.errors.is_empty() {
        RunStatus::Failed
    } else if d.interrupted {
        RunStatus::Interrupted
    } else if d.header.is_some() {
        if d.bad_rows == 0 {
            problems.push(Problem::new(
                source,
                d.header_line as u32 + 1,
                "perftest table header without any rows (output cut off?)".into(),
            ));
        }
        RunStatus::Interrupted
    } else {
        RunStatus::NoResults
    };
    if d.table_open
        && !rows.is_empty()
        && d.end < all.len()
        && !lines::is_rule(all[d.end.min(all.len() - 1)])
    {
        notes.push("table not closed by a rule line (copy cut short?)".into());
    }
    let connection = facts.get("connection_type").map(String::as_str);
    let test = d.title.as_ref().map(|t| test_name(t, connection));
    let kind_from_header = d.header.as_ref().map(|h| {
        if h.iter().any(|c| matches!(c, Column::BwAvg(_))) {
            "bw"
        } else {
            "lat"
        }
    });
    let role = if d.waiting {
        Role::Server
    } else if d.title.as_ref().is_some_and(|t| t.bidirectional) {
        Role::Unknown
    } else if facts.contains_key("tx_depth") {
        Role::Client
    } else if facts.contains_key("rx_depth") || d.title.is_some() {
        Role::Server
    } else {
        Role::Unknown
    };
    RunDraft {
        keep,
        start: d.start,
        end: d.end.max(d.start + 1),
        tool: "perftest".into(),
        test,
        test_hint: test_from_file_name(source),
        kind_hint: kind_from_header,
        role,
        status,
        facts,
        notes,
        error: (!d.errors.is_empty()).then(|| d.errors.join("\n")),
        measurements: rows,
    }
}

/// Applies what the command line says to a perftest run: without the waiting box, a peer
/// address means client and none means server; `-d` names the device when the banner has none.
pub fn apply_command(run: &mut crate::model::Run) {
    let Some(cmd) = run.command.as_ref() else {
        return;
    };
    if super::command::tool_family(&cmd.program) != Some("perftest") {
        return;
    }
    if !run.facts.contains_key("waiting_for_client") {
        run.role = if cmd.peer.is_some() {
            Role::Client
        } else {
            Role::Server
        };
    }
    if run.device.is_none() {
        run.device = cmd.flags.get("ib-dev").cloned();
    }
    // Without -H/-U only the command line tells that the latencies are cycles.
    if cmd.flags.contains_key("report-cycles") && latency_in_cycles(&mut run.measurements) {
        run.notes.push(CYCLES_NOTE.into());
    }
}

//! iperf3's JSON: `-J` documents (one, or the same one twice as iperf3 3.16 and 3.17 print
//! it, or several runs' documents one after another; `nan` values of old builds) and
//! `--json-stream` (iperf3 3.17+: one `{"event": …, "data": …}` object per line, so each
//! interval row has its own line).

use super::doc::{Doc, End, Event, EventData, Point, Tree};
use crate::ingest::adapter::Block;
use crate::ingest::common::TrimWs;
use crate::ingest::file_lines::FileLines;
use crate::ingest::{Problem, RunDraft};
use crate::model::{CommandLine, Measurement, Role, RunStatus};
use serde_json::Value;
use std::collections::BTreeMap;

/// Reads the block when it holds iperf3 JSON of either form; `None` when it is text.
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Option<Vec<RunDraft>> {
    let (source, all, range, command) = block.parts();
    // Either form holds a `{`, which most text blocks do not: one search of their text.
    if all
        .span(range.clone())
        .is_some_and(|text| memchr::memchr(b'{', text.as_bytes()).is_none())
    {
        return None;
    }
    if range.clone().any(|i| is_stream_event(all[i])) {
        return Some(stream(source, all, range, command, problems));
    }
    let json_start = range.clone().find(|&i| all[i].trim_ws() == "{")?;
    Some(documents(source, all, range, json_start, command, problems))
}

/// A `--json-stream` line: `{"event":"start","data":{…}}`.
pub fn is_stream_event(line: &str) -> bool {
    // Asked of every line of every iperf3 block: the blanks skipped byte by byte.
    line.trim_start_ws().starts_with("{\"event\":")
}

/// Where a document's rows stand: the line of each interval (one line for all of a `-J`
/// document, its own line in a stream) and of the end summary.
struct Lines {
    intervals: Vec<usize>,
    first: usize,
    end: usize,
}

impl Lines {
    fn interval(&self, k: usize) -> usize {
        self.intervals.get(k).copied().unwrap_or(self.first)
    }
}

/// The 0-based lines in `all` of ascending byte `offsets` into the lines from `first` joined by
/// `\n`, in one pass over them (a block of many documents must not walk its lines per document).
fn lines_of(all: FileLines, first: usize, offsets: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut lines = all[first..].iter().enumerate();
    let (mut line, mut end) = (first, 0);
    offsets
        .map(|offset| {
            while offset >= end {
                match lines.next() {
                    Some((i, l)) => (line, end) = (first + i, end + l.len() + 1),
                    None => return all.end().saturating_sub(1),
                }
            }
            line
        })
        .collect()
}

crate::ingest::common::per_thread_regex! {
    static NAN = r"(:\s*)-?(?:nan|inf)\b";
}

/// iperf3 builds with an old cJSON print a NaN as `nan` or `-nan` (a UDP interval without
/// packets has a lost percentage of 0/0), which is not JSON. Such values read as missing, and
/// the lines they stood on are returned for a note.
fn without_nan(text: &str, first: usize) -> Option<(String, Vec<usize>)> {
    let mut changed = Vec::new();
    let out: Vec<String> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| {
            let fixed = NAN.with(|re| re.replace_all(l, "${1}null"));
            if fixed != l {
                changed.push(first + i);
            }
            fixed.into_owned()
        })
        .collect();
    (!changed.is_empty()).then(|| (out.join("\n"), changed))
}

/// The documents of a `-J` block, in order, each with the byte offset it starts at, and the
/// error that stopped the reading, if any.
fn read_documents(text: &str) -> (Vec<(usize, Doc<'_>)>, Option<serde_json::Error>) {
    let mut docs = Vec::new();
    let mut it = serde_json::Deserializer::from_str(text).into_iter::<Doc>();
    loop {
        let at = it.byte_offset();
        match it.next() {
            None => return (docs, None),
            Some(Ok(v)) => {
                let skipped = text[at..].len() - text[at..].trim_start().len();
                docs.push((at + skipped, v));
            }
            Some(Err(e)) => return (docs, Some(e)),
        }
    }
}

fn documents(
    source: &str,
    all: FileLines,
    range: std::ops::Range<usize>,
    json_start: usize,
    command: Option<&CommandLine>,
    problems: &mut Vec<Problem>,
) -> Vec<RunDraft> {
    let mut notes: Vec<String> = (range.start..json_start)
        .filter(|&i| !all[i].trim().is_empty())
        .map(|i| format!("line {}: {}", i + 1, all[i].trim()))
        .collect();
    // The documents' text as the file holds it, where its lines lie one after another there
    // (a copy of every document was a tenth of reading it).
    let joined: String;
    let text = match all.span(json_start..range.end) {
        Some(span) => span,
        None => {
            joined = all[json_start..range.end].join("\n");
            &joined
        }
    };
    // Declared before the documents, which may borrow it.
    let fixed: String;
    let (mut docs, mut error) = read_documents(text);
    if error.is_some() {
        if let Some((f, lines)) = without_nan(text, json_start) {
            fixed = f;
            let (d, e) = read_documents(&fixed);
            if d.len() > docs.len() {
                (docs, error) = (d, e);
                notes.extend(
                    lines.iter().map(|l| {
                        format!("line {}: nan is not JSON; read as a missing value", l + 1)
                    }),
                );
            }
        }
    }
    if let Some(why) = error {
        // serde counts lines from the start of the text, 1-based.
        let line = (json_start + why.line())
            .saturating_sub(1)
            .min(range.end.saturating_sub(1));
        let message = if docs.is_empty() {
            format!(
                "iperf3 JSON document starting at line {} is not valid JSON ({why}); truncated?",
                json_start + 1
            )
        } else {
            format!("text after the iperf3 JSON document is not JSON ({why}); not read")
        };
        problems.push(Problem::new(source, line as u32 + 1, message));
    }
    let mut drafts: Vec<RunDraft> = Vec::new();
    let mut first: Option<&Doc> = None;
    let starts = lines_of(all, json_start, docs.iter().map(|(at, _)| *at));
    for (k, (_, doc)) in docs.iter().enumerate() {
        if first == Some(doc) {
            // iperf3 3.16 and 3.17 print the whole -J document twice (esnet/iperf#1688).
            if let Some(d) = drafts.last_mut() {
                d.notes.push(format!(
                    "line {}: the same JSON document again (iperf3 3.16/3.17 print -J output twice); read once",
                    starts[k] + 1
                ));
            }
            continue;
        }
        first = Some(doc);
        let (from, lines_from) = if k == 0 {
            (range.start, json_start)
        } else {
            (starts[k], starts[k])
        };
        // A run's lines end where the next document starts, its copy included: a log with
        // the document twice is the same run as one with it once.
        let to = starts.get(k + 1).copied().unwrap_or(range.end);
        let lines = Lines {
            intervals: Vec::new(),
            first: lines_from,
            end: lines_from,
        };
        let notes = if k == 0 {
            std::mem::take(&mut notes)
        } else {
            Vec::new()
        };
        drafts.push(draft(doc, &lines, from..to, command, notes));
    }
    drafts
}

/// `--json-stream`: the events of one test, one per line.
fn stream(
    source: &str,
    all: FileLines,
    range: std::ops::Range<usize>,
    command: Option<&CommandLine>,
    problems: &mut Vec<Problem>,
) -> Vec<RunDraft> {
    let mut start = Tree::Null;
    let mut intervals = Vec::new();
    let mut lines = Lines {
        intervals: Vec::new(),
        first: range.start,
        end: range.start,
    };
    let mut end = End::Other(Value::Null);
    let mut error: Option<String> = None;
    let mut notes = Vec::new();
    for i in range.clone() {
        let t = all[i].trim();
        if t.is_empty() {
            continue;
        }
        if !is_stream_event(t) {
            notes.push(format!("line {}: {t}", i + 1));
            continue;
        }
        let event = match Event::read(t) {
            Ok(v) => v,
            Err(e) => {
                problems.push(Problem::new(
                    source,
                    i as u32 + 1,
                    format!("iperf3 --json-stream event is not valid JSON ({e}); truncated?"),
                ));
                continue;
            }
        };
        match (event.name.as_str(), event.data) {
            (Some("start"), EventData::Start(data)) => (start, lines.first) = (data, i),
            (Some("interval"), EventData::Interval(data)) => {
                intervals.push(data);
                lines.intervals.push(i);
            }
            (Some("end"), EventData::End(data)) => (end, lines.end) = (data, i),
            (Some("error"), EventData::Value(data)) => {
                let why = data
                    .as_str()
                    .map_or_else(|| data.to_string(), str::to_string);
                error = Some(match error {
                    Some(e) => format!("{e}\n{why}"),
                    None => why,
                });
            }
            // `server_output_json` / `server_output_text` (--get-server-output) and events of
            // later versions: the server's own capture is its own run.
            (Some(other), _) => notes.push(format!("line {}: {other} event not read", i + 1)),
            (None, _) => notes.push(format!("line {}: event without a name not read", i + 1)),
        }
    }
    let doc = Doc::of_stream(start, intervals, end, error);
    vec![draft(&doc, &lines, range, command, notes)]
}

/// One run from a document (or the document a stream adds up to).
fn draft(
    doc: &Doc,
    lines: &Lines,
    range: std::ops::Range<usize>,
    command: Option<&CommandLine>,
    notes: Vec<String>,
) -> RunDraft {
    let start = doc.start();
    let test_start = &start["test_start"];
    let udp = test_start["protocol"].as_str() == Some("UDP")
        || command.is_some_and(|c| c.flags.contains_key("-u"));
    let accepted = start.get("accepted_connection").is_some();
    let server_flag = command.is_some_and(|c| c.flags.contains_key("-s"));
    let role = if start.get("connecting_to").is_none() && (accepted || server_flag) {
        Role::Server
    } else {
        Role::Client
    };
    let facts = json_facts(start);
    let rows = json_rows(doc, lines);
    let error = doc.rest("error").as_str().map(str::to_string);
    let status = match (&error, rows.is_empty()) {
        (_, false) => RunStatus::Ok,
        (Some(_), true) => RunStatus::Failed,
        (None, true) => RunStatus::NoResults,
    };
    RunDraft {
        test: Some(if udp { "iperf3_udp" } else { "iperf3_tcp" }.into()),
        role,
        status,
        facts,
        notes,
        error,
        measurements: rows,
        ..RunDraft::new(crate::model::Tool::Iperf3, range)
    }
}

fn f(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

/// The numbers of one interval or summary object, read in one pass over its entries.
#[derive(Default)]
struct PointFields {
    bits_per_second: Option<f64>,
    start: Option<f64>,
    end: Option<f64>,
    bytes: Option<f64>,
    retransmits: Option<u64>,
    snd_cwnd: Option<f64>,
    rtt: Option<f64>,
    jitter_ms: Option<f64>,
    lost_packets: Option<u64>,
    packets: Option<u64>,
    lost_percent: Option<f64>,
    omitted: bool,
}

impl PointFields {
    fn of(point: &Point) -> PointFields {
        let mut p = PointFields::default();
        for (k, v) in point.entries() {
            match k.as_ref() {
                "bits_per_second" => p.bits_per_second = v.as_f64(),
                "start" => p.start = v.as_f64(),
                "end" => p.end = v.as_f64(),
                "bytes" => p.bytes = v.as_f64(),
                "retransmits" => p.retransmits = v.as_u64(),
                "snd_cwnd" => p.snd_cwnd = v.as_f64(),
                "rtt" => p.rtt = v.as_f64(),
                "jitter_ms" => p.jitter_ms = v.as_f64(),
                "lost_packets" => p.lost_packets = v.as_u64(),
                "packets" => p.packets = v.as_u64(),
                "lost_percent" => p.lost_percent = v.as_f64(),
                "omitted" => p.omitted = v.as_bool() == Some(true),
                _ => {}
            }
        }
        p
    }
}

/// One interval or summary object (`{"start":..,"end":..,"bytes":..,"bits_per_second":..}`).
fn json_point(point: &Point, stream: String, kind: &str, line: usize) -> Measurement {
    let p = PointFields::of(point);
    Measurement {
        line: line as u32 + 1,
        raw_text: point.to_json(),
        raw_unit: "bits_per_second (JSON)".into(),
        bw_avg_gbps: p.bits_per_second.map(|b| b / 1e9),
        sparse: crate::model::Sparse {
            interval_start_s: p.start,
            interval_end_s: p.end,
            stream: Some(stream),
            row_kind: Some(if p.omitted { "omitted" } else { kind }.into()),
            transfer_bytes: p.bytes,
            retransmits: p.retransmits,
            cwnd_bytes: p.snd_cwnd,
            rtt_us: p.rtt,
            jitter_ms: p.jitter_ms,
            lost: p.lost_packets,
            total: p.packets,
            loss_pct: p.lost_percent,
            ..Default::default()
        }
        .into(),
        ..Measurement::default()
    }
}

/// The test's setup from the JSON `start` object.
fn json_facts(start: &Tree) -> crate::model::Facts {
    let test_start = &start["test_start"];
    let mut facts = BTreeMap::new();
    for (k, v) in [
        ("version", &start["version"]),
        ("system_info", &start["system_info"]),
        ("num_streams", &test_start["num_streams"]),
        ("blksize", &test_start["blksize"]),
        ("duration", &test_start["duration"]),
        ("reverse", &test_start["reverse"]),
        ("bidir", &test_start["bidir"]),
        ("tcp_mss_default", &start["tcp_mss_default"]),
    ] {
        if !v.is_null() {
            facts.insert(
                k.into(),
                v.as_str().map_or_else(|| v.to_json(), str::to_string),
            );
        }
    }
    facts
}

/// Every interval and summary of every stream (and their sums), in document order; the
/// summaries carry the CPU use of both hosts.
fn json_rows(doc: &Doc, lines: &Lines) -> Vec<Measurement> {
    let bidir = doc.start()["test_start"]["bidir"].as_u64() == Some(1);
    let socket_name = |s: &Point| {
        let id = s.get("socket").map_or_else(String::new, |v| {
            serde_json::to_string(v).expect("a JSON value always serializes")
        });
        match s.get("sender").and_then(|v| v.as_bool()) {
            Some(true) if bidir => format!("{id} TX"),
            Some(false) if bidir => format!("{id} RX"),
            _ => id,
        }
    };
    let mut rows = Vec::new();
    for (k, interval) in doc.intervals().iter().enumerate() {
        let line = lines.interval(k);
        let Some(interval) = interval.keys() else {
            continue;
        };
        for s in interval.streams.iter().flat_map(|l| l.items()) {
            rows.push(json_point(s, socket_name(s), "interval", line));
        }
        for (sum, name) in [
            (&interval.sum, "SUM"),
            (&interval.sum_bidir_reverse, "SUM RX"),
        ] {
            if let Some(sum) = sum {
                rows.push(json_point(sum, name.into(), "interval", line));
            }
        }
    }
    if let Some(end) = doc.end() {
        for s in end.streams.iter().flat_map(|l| l.items()) {
            let Some(s) = s.keys() else {
                continue;
            };
            for (v, kind) in [
                (&s.sender, "sender"),
                (&s.receiver, "receiver"),
                (&s.udp, "receiver"),
            ] {
                if let Some(v) = v {
                    rows.push(json_point(v, socket_name(v), kind, lines.end));
                }
            }
        }
        for (v, kind) in [
            (&end.sum_sent, "sender"),
            (&end.sum_received, "receiver"),
            (&end.sum, "receiver"),
        ] {
            if let Some(v) = v {
                rows.push(json_point(v, "SUM".into(), kind, lines.end));
            }
        }
    }
    let cpu = doc.cpu();
    for m in rows
        .iter_mut()
        .filter(|m| m.row_kind.as_deref() != Some("interval"))
    {
        m.cpu_local_pct = f(cpu, "host_total");
        m.cpu_remote_pct = f(cpu, "remote_total");
    }
    rows
}

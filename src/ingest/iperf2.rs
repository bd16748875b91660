//! iperf 2 (2.0.x to 2.2.x) client and server output: text reports with one or many streams
//! (`[SUM]` lines, threads in any order), interval reports (`0.0- 1.0 sec` too), `^C` glued to a
//! report, captures filtered through `| grep SUM`, enhanced (`-e`) TCP and UDP columns, UDP
//! jitter/loss, reverse and full-duplex ids (`[ *1]`), every `-f` unit, and `-y C` CSV.
//!
//! A client block is one run. A server block holds one run per client session: a session
//! starts with its `connected with` lines and ends with its `[SUM]` line (or when every
//! stream it announced has reported its whole-test line).

use super::adapter::Block;
use super::{Problem, RunDraft};
use crate::ingest::common::{find, has, has_ignore_ascii_case, TrimWs};
use crate::ingest::udp_loss::{udp_loss, Printer};
use crate::model::{Facts, Measurement, Role, RunStatus};
use crate::units::{iperf_bytes, iperf_rate_gbps};
use std::collections::{BTreeMap, BTreeSet};

// Markers: the banners, a sum line, the commas of a CSV line.
crate::ingest::adapter::declare_parser!(Iperf2, Iperf2,
    markers: &["Client connecting to ", "Server listening on ", "[SUM]", ","]);

/// Does a block without a command look like iperf 2 output?
pub fn detect(lines: &[&str]) -> bool {
    lines.iter().any(|l| {
        l.starts_with("Client connecting to ")
            || l.starts_with("Server listening on ")
            || (has(l, "[SUM]") && has(l, " sec "))
            || csv_fields(l).is_some()
    })
}

mod columns;
mod report_line;
pub use report_line::{report, Report};

/// The fields of a `-y C` CSV line (timestamp first), or `None`.
fn csv_fields(line: &str) -> Option<Vec<&str>> {
    // Nine fields are eight commas: most lines have none, and are not split.
    memchr::memchr_iter(b',', line.as_bytes()).nth(7)?;
    let fields: Vec<&str> = line.trim_ws().split(',').collect();
    if fields.len() < 9 {
        return None;
    }
    let ts = fields[0].rsplit(':').next()?;
    let digits = ts.split('.').next()?;
    (digits.len() == 14 && digits.bytes().all(|b| b.is_ascii_digit())).then_some(fields)
}

/// The banner's buffer sizes (`TCP window size: 85.0 KByte (default)`) by their fact keys.
const BUFFER_SIZES: [(&str, &str); 4] = [
    ("TCP window size", "tcp_window_size"),
    ("UDP buffer size", "udp_buffer_size"),
    ("Write buffer size", "write_buffer_size"),
    ("Read buffer size", "read_buffer_size"),
];

/// (fact key, value) of a buffer size line: a printed key, then `:`. Every line of a log is
/// asked, so only those that start as a key does are compared.
fn buffer_size(t: &str) -> Option<(&'static str, &str)> {
    if !matches!(t.as_bytes().first(), Some(b'T' | b'U' | b'W' | b'R')) {
        return None;
    }
    BUFFER_SIZES
        .iter()
        .find_map(|&(printed, key)| Some((key, t.strip_prefix(printed)?.strip_prefix(':')?)))
}

/// Converts one report line into a measurement (row kind is decided later, per stream).
fn measurement(r: &Report<'_>, line: usize, raw: &str) -> Result<Measurement, String> {
    let transfer = iperf_bytes(r.transfer, r.transfer_unit)
        .ok_or_else(|| format!("unknown iperf transfer unit {:?}", r.transfer_unit))?;
    let gbps = iperf_rate_gbps(r.rate, r.rate_unit)
        .ok_or_else(|| format!("unknown iperf rate unit {:?}", r.rate_unit))?;
    let mut m = Measurement {
        line: line as u32 + 1,
        raw_text: raw.to_string(),
        raw_unit: crate::units::printed(r.rate_unit),
        bw_avg_gbps: Some(gbps),
        sparse: crate::model::Sparse {
            interval_start_s: Some(r.start),
            interval_end_s: Some(r.end),
            stream: Some(r.id.to_string()),
            transfer_bytes: Some(transfer),
            ..Default::default()
        }
        .into(),
        ..Measurement::default()
    };
    let mut rest = r.rest;
    // Each shape's own characters looked for first: most report lines end at the rate.
    let udp_loss = || udp_loss(r.rest, Printer::Iperf2);
    if let Some(u) = r.rest.contains('%').then(udp_loss).flatten() {
        m.jitter_ms = u.jitter.parse().ok();
        m.lost = u.lost.parse().ok();
        m.total = u.total.parse().ok();
        m.loss_pct = u.pct.parse().ok();
        rest = u.rest;
        if let Some(l) = columns::udp_latency(rest) {
            let us = |v: &str| v.parse::<f64>().ok().map(|v| v * 1000.0);
            m.lat_avg_us = us(l.avg);
            m.lat_min_us = us(l.min);
            m.lat_max_us = us(l.max);
            m.lat_stdev_us = us(l.stdev);
        }
    } else if let Some(c) = has(r.rest, "K/")
        .then(|| columns::tcp_enhanced(r.rest))
        .flatten()
    {
        m.retransmits = c.retry.parse().ok();
        m.cwnd_bytes = c.cwnd_kib.parse::<f64>().ok().map(|k| k * 1024.0);
        m.rtt_us = c.rtt_us.parse().ok();
    }
    if !rest.is_empty() {
        m.extra.insert("columns".into(), rest.to_string());
    }
    Ok(m)
}

#[derive(Default)]
struct Session {
    start: usize,
    end: usize,
    rows: Vec<Measurement>,
    announced: BTreeSet<String>,
    reported: BTreeSet<String>,
    peer: Option<String>,
    done: bool,
}

/// Marks each stream's whole-test line as `total` and the others as `interval`.
fn classify(rows: &mut [Measurement]) {
    let totals = whole_test_rows(rows);
    for (i, m) in rows
        .iter_mut()
        .enumerate()
        .filter(|(_, m)| m.row_kind.is_none())
    {
        m.row_kind = Some(
            if totals.contains(&i) {
                "total"
            } else {
                "interval"
            }
            .into(),
        );
    }
}

/// The row of each stream that reports the whole test: among its rows not classified yet,
/// the one from 0.0 that ends last, when it is the stream's only row or ends no earlier than
/// any of the stream's rows. Streams by the name they borrow from the rows (no copies).
fn whole_test_rows(rows: &[Measurement]) -> Vec<usize> {
    fn stream(m: &Measurement) -> &str {
        m.sparse
            .held()
            .and_then(|s| s.stream.as_deref())
            .unwrap_or("")
    }
    let mut best: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, m) in rows
        .iter()
        .enumerate()
        .filter(|(_, m)| m.row_kind.is_none())
    {
        let s = stream(m);
        *count.entry(s).or_default() += 1;
        if m.interval_start_s == Some(0.0) {
            let end = m.interval_end_s.unwrap_or(0.0);
            let e = best.entry(s).or_insert((end, i));
            if end >= e.0 {
                *e = (end, i);
            }
        }
    }
    let mut max_end: BTreeMap<&str, f64> = BTreeMap::new();
    for m in rows {
        let e = max_end.entry(stream(m)).or_insert(0.0f64);
        *e = e.max(m.interval_end_s.unwrap_or(0.0));
    }
    best.into_iter()
        .filter(|(s, (end, _))| count[s] == 1 || *end >= max_end[s])
        .map(|(_, (_, j))| j)
        .collect()
}

/// Parses one block of iperf 2 output.
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    let flag = |f: &str| block.command.and_then(|c| c.flags.get(f));
    let role = if flag("-s").is_some() || flag("--server").is_some() {
        Role::Server
    } else if flag("-c").is_some() || flag("--client").is_some() {
        Role::Client
    } else {
        Role::Unknown
    };
    let udp = flag("-u").is_some() || flag("--udp").is_some();
    let mut r = Reader::new(block.source, problems, role, udp, block.range.start);
    for i in block.range.clone() {
        r.line(i, block.lines[i]);
    }
    r.drafts(block)
}

/// The state of one block while its lines are read.
struct Reader<'a, 'p> {
    source: &'a str,
    problems: &'p mut Vec<Problem>,
    role: Role,
    udp: bool,
    facts: crate::model::Facts,
    notes: Vec<String>,
    /// (line, text) of error lines.
    errors: Vec<(usize, String)>,
    interrupted: bool,
    sessions: Vec<Session>,
    csv_rows: usize,
    /// The UDP client prints the server's view of the test after `Server Report:`.
    server_report_next: bool,
}

impl<'a, 'p> Reader<'a, 'p> {
    /// A reader of a block whose first session starts at line `start`.
    fn new(
        source: &'a str,
        problems: &'p mut Vec<Problem>,
        role: Role,
        udp: bool,
        start: usize,
    ) -> Self {
        Reader {
            source,
            problems,
            role,
            udp,
            facts: BTreeMap::new(),
            notes: Vec::new(),
            errors: Vec::new(),
            interrupted: false,
            sessions: vec![Session {
                start,
                ..Session::default()
            }],
            csv_rows: 0,
            server_report_next: false,
        }
    }

    fn line(&mut self, i: usize, line: &str) {
        let t = line.trim_ws();
        if t.is_empty() {
            return;
        }
        if t.starts_with("^C") {
            self.interrupted = true;
        }
        if self.setup(t) {
            return;
        }
        if let Some(r) = report(line) {
            self.report(i, line, &r);
        } else if let Some(f) = csv_fields(t) {
            self.csv(i, line, &f);
        } else if t.starts_with('[') && has(t, "] local ") && has(t, " connected with ") {
            self.connected(i, t);
        } else if t.starts_with("[ ID]") || t.starts_with("----") || t.starts_with("[ CT]") {
            // Column headers and rules carry nothing.
        } else if t.starts_with('[') && has(t, " sec") {
            // Shaped like a report but cut short or garbled (`[  1] 1.0000-2.0000 sec  693 MBytes  5.`).
            self.problem(i, format!("incomplete iperf report line: {t:?}"));
        } else {
            self.other(i, t);
        }
    }

    fn problem(&mut self, i: usize, why: String) {
        self.problems
            .push(Problem::new(self.source, i as u32 + 1, why));
    }

    /// The banner: listening, connecting, buffer sizes.
    fn setup(&mut self, t: &str) -> bool {
        if let Some(rest) = t.strip_prefix("Server listening on ") {
            self.role = Role::Server;
            self.udp |= rest.starts_with("UDP");
            self.facts.insert("listening".into(), rest.to_string());
        } else if let Some(rest) = t.strip_prefix("Client connecting to ") {
            if self.role == Role::Unknown {
                self.role = Role::Client;
            }
            self.udp |= rest.contains("UDP port");
            self.facts.insert("connecting_to".into(), rest.to_string());
        } else if let Some((key, v)) = buffer_size(t) {
            self.facts.insert(key.into(), v.trim_ws().to_string());
        } else {
            return false;
        }
        true
    }

    /// A text report line (interval or whole test) of one stream or of `[SUM]`.
    fn report(&mut self, i: usize, line: &str, r: &Report<'_>) {
        let is_server = self.role == Role::Server;
        let session = self.sessions.last_mut().expect("one session");
        session.end = i + 1;
        match measurement(r, i, line) {
            Ok(mut m) => {
                if std::mem::take(&mut self.server_report_next) {
                    m.row_kind = Some("server_report".into());
                }
                self.udp |= m.jitter_ms.is_some();
                if r.id.starts_with("SUM") {
                    session.done = is_server;
                } else if !session.reported.contains(r.id) {
                    // Most report lines are of a stream already seen: no copy of its id.
                    session.reported.insert(r.id.to_string());
                }
                session.rows.push(m);
            }
            Err(why) => self.problem(i, why),
        }
    }

    /// A `-y C` line.
    fn csv(&mut self, i: usize, line: &str, f: &[&str]) {
        let session = self.sessions.last_mut().expect("one session");
        session.end = i + 1;
        match csv_measurement(f, i, line) {
            Ok(m) => {
                self.udp |= m.jitter_ms.is_some();
                self.csv_rows += 1;
                session.rows.push(m);
            }
            Err(why) => self.problem(i, why),
        }
    }

    /// `[  3] local … connected with …`: a stream of the current session, or the first of the
    /// next client's session on a server whose last session is complete.
    fn connected(&mut self, i: usize, t: &str) {
        let id = t[1..t.find(']').unwrap_or(1)].trim_ws().to_string();
        // The first word after the first ` connected with ` and before any second one.
        const WITH: &str = " connected with ";
        let peer = find(t, WITH).and_then(|at| {
            let r = &t[at + WITH.len()..];
            r[..find(r, WITH).unwrap_or(r.len())]
                .split_whitespace()
                .next()
        });
        let session = self.sessions.last_mut().expect("one session");
        let complete = session.done
            || (!session.announced.is_empty() && session.announced.is_subset(&session.reported));
        if self.role == Role::Server && complete && !session.rows.is_empty() {
            self.sessions.push(Session {
                start: i,
                ..Session::default()
            });
        }
        let session = self.sessions.last_mut().expect("one session");
        if session.rows.is_empty() && session.announced.is_empty() {
            session.start = i;
        }
        session.end = i + 1;
        session.announced.insert(id);
        if session.peer.is_none() {
            session.peer = peer.map(str::to_string);
        }
    }

    /// Errors, and the notes worth keeping (datagram counts, warnings, TOS).
    fn other(&mut self, i: usize, t: &str) {
        // Matched in either case, without a lowered copy of every line.
        if has_ignore_ascii_case(t, "failed")
            || has_ignore_ascii_case(t, "refused")
            || t.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("error"))
            || has_ignore_ascii_case(t, "no route to host")
        {
            self.errors.push((i, t.to_string()));
            return;
        }
        if has(t, "Server Report") {
            self.server_report_next = true;
        }
        if has(t, "datagrams")
            || has(t, "Server Report")
            || t.starts_with("WARNING")
            || t.starts_with("Sending ")
            || t.starts_with("TOS set")
        {
            self.notes.push(format!("line {}: {t}", i + 1));
        }
    }

    /// One run per session; the first carries the block's notes and errors.
    fn drafts(mut self, block: &Block) -> Vec<RunDraft> {
        if self.csv_rows > 0 {
            self.facts.insert("format".into(), "csv".into());
        }
        let range = block.range.clone();
        let has_error = !self.errors.is_empty();
        let mut error = has_error.then(|| {
            let errors: Vec<&str> = self.errors.iter().map(|(_, e)| e.as_str()).collect();
            errors.join("\n")
        });
        let n_sessions = self.sessions.len();
        let mut out = Vec::new();
        for (k, mut s) in std::mem::take(&mut self.sessions).into_iter().enumerate() {
            let first_block = k == 0;
            if s.rows.is_empty() && !(first_block && (has_error || n_sessions == 1)) {
                continue;
            }
            classify(&mut s.rows);
            let status = if !s.rows.is_empty() {
                RunStatus::Ok
            } else if has_error {
                RunStatus::Failed
            } else if self.interrupted {
                RunStatus::Interrupted
            } else {
                RunStatus::NoResults
            };
            out.push(RunDraft {
                keep: !s.rows.is_empty() || status == RunStatus::Failed || block.command.is_some(),
                start: if first_block { range.start } else { s.start },
                end: if k + 1 == n_sessions {
                    range.end
                } else {
                    s.end.max(s.start + 1)
                },
                tool: crate::model::Tool::Iperf2,
                test: Some(if self.udp { "iperf2_udp" } else { "iperf2_tcp" }.into()),
                test_hint: None,
                kind_hint: None,
                role: self.role,
                status,
                facts: session_facts(&mut self.facts, k + 1 == n_sessions, &s),
                // The first session takes the block's notes and error.
                notes: if first_block {
                    std::mem::take(&mut self.notes)
                } else {
                    Vec::new()
                },
                error: if first_block { error.take() } else { None },
                measurements: s.rows,
            });
        }
        out
    }
}

/// The block's facts with the session's peer and stream count: the last session takes the
/// block's facts, the others copy them.
fn session_facts(facts: &mut Facts, last: bool, s: &Session) -> Facts {
    let mut facts = super::common::take_or_copy(facts, last);
    if let Some(p) = &s.peer {
        facts.insert("peer".into(), p.clone());
    }
    let streams: BTreeSet<&String> = s
        .rows
        .iter()
        .filter_map(|m| m.stream.as_ref())
        .filter(|s| !s.starts_with("SUM"))
        .collect();
    facts.insert("streams".into(), streams.len().to_string());
    facts
}

/// One `-y C` line: `timestamp,local_ip,local_port,remote_ip,remote_port,id,start-end,bytes,bits/s`
/// (UDP adds `jitter_ms,lost,total,loss%,out_of_order`). Bytes and bits/s are plain units.
fn csv_measurement(f: &[&str], line: usize, raw: &str) -> Result<Measurement, String> {
    let bad = |what: &str| format!("iperf CSV line: bad {what}: {:?}", raw.trim_ws());
    let (start, end) = f[6].split_once('-').ok_or_else(|| bad("interval"))?;
    let start: f64 = start.trim_ws().parse().map_err(|_| bad("interval"))?;
    let end: f64 = end.trim_ws().parse().map_err(|_| bad("interval"))?;
    let bytes: f64 = f[7].parse().map_err(|_| bad("byte count"))?;
    let bits: f64 = f[8].parse().map_err(|_| bad("rate"))?;
    let id = f[5].trim_ws();
    // iperf 2.0 marks sums with a negative group id; 2.1+ with port 0.
    let stream = if id.starts_with('-') || f[2] == "0" {
        "SUM".to_string()
    } else {
        id.to_string()
    };
    let mut m = Measurement {
        line: line as u32 + 1,
        raw_text: raw.to_string(),
        raw_unit: "bits/sec (CSV)".into(),
        bw_avg_gbps: Some(bits / 1e9),
        sparse: crate::model::Sparse {
            interval_start_s: Some(start),
            interval_end_s: Some(end),
            stream: Some(stream),
            transfer_bytes: Some(bytes),
            ..Default::default()
        }
        .into(),
        ..Measurement::default()
    };
    if f.len() >= 13 {
        m.jitter_ms = f[9].parse().ok();
        m.lost = f[10].parse().ok();
        m.total = f[11].parse().ok();
        m.loss_pct = f[12].parse().ok();
    }
    m.extra.insert("local".into(), format!("{}:{}", f[1], f[2]));
    m.extra
        .insert("remote".into(), format!("{}:{}", f[3], f[4]));
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_and_enhanced_columns() {
        let line = "[  1] 0.0000-2.0002 sec  25.0 MBytes   105 Mbits/sec   0.001 ms 0/17837 (0%)";
        let m = measurement(&report(line).unwrap(), 0, line).unwrap();
        assert_eq!(
            (m.jitter_ms, m.lost, m.total, m.loss_pct),
            (Some(0.001), Some(0), Some(17837), Some(0.0))
        );
        let line = "[  1] 0.0000-1.0000 sec   727 MBytes  6.10 Gbits/sec  5819/0          2     2302K/390(427) us  1955662";
        let m = measurement(&report(line).unwrap(), 0, line).unwrap();
        assert_eq!(
            (m.retransmits, m.cwnd_bytes, m.rtt_us),
            (Some(2), Some(2302.0 * 1024.0), Some(390.0))
        );
    }

    /// The buffer size lines give the facts that splitting at the first `:` and taking the
    /// key's snake case gave, on hand-made lines and every fixture line.
    #[test]
    fn buffer_sizes_as_split_at_the_colon() {
        fn by_split(t: &str) -> Option<(String, &str)> {
            t.split_once(':')
                .filter(|(k, _)| BUFFER_SIZES.iter().any(|(p, _)| p == k))
                .map(|(k, v)| (crate::ingest::common::snake_key(k), v))
        }
        let mut lines: Vec<String> = [
            "TCP window size: 85.0 KByte (default)",
            "TCP window size:",
            "TCP window size :1",
            "TCP window size: a: b",
            "UDP buffer size:  208 KByte",
            "Write buffer size: 128 KByte",
            "Read buffer size:128 KByte",
            "Read buffer sizes: 1",
            "TCP window",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        lines.extend(crate::ingest::fixture_lines_with(&["fixtures"], ":"));
        let mut found = 0;
        for t in &lines {
            let got = buffer_size(t).map(|(k, v)| (k.to_string(), v));
            found += usize::from(got.is_some());
            assert_eq!(got, by_split(t), "{t:?}");
        }
        assert!(found > 20, "{found}");
    }

    /// A `connected with` line's peer is the first word after the first ` connected with `
    /// and before a second, as splitting at it took it.
    #[test]
    fn peer_of_a_connected_line_as_split_at_the_words() {
        let mut lines: Vec<String> = [
            "[  3] local 10.0.0.1 port 5001 connected with 10.0.0.2 port 4242",
            "[  3] local a connected with  connected with b",
            "[  3] local a connected with b connected with c",
            "[  3] local a connected with ",
            "[  3] local a connected with",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        lines.extend(crate::ingest::fixture_lines_with(
            &["fixtures"],
            " connected with ",
        ));
        for t in &lines {
            let mut problems = Vec::new();
            let mut reader = Reader::new("x", &mut problems, Role::Server, false, 0);
            reader.connected(0, t);
            let want = t
                .split(" connected with ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next());
            assert_eq!(reader.sessions[0].peer.as_deref(), want, "{t:?}");
        }
        assert!(lines.len() > 10, "{}", lines.len());
    }
}

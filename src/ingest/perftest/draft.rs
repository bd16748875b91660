//! One perftest run while its block is read ([`Draft`]), how a table row becomes a
//! [`Measurement`], and how a finished draft becomes a [`RunDraft`] with its status, role, notes
//! and test name.

use super::lines::{self, Column};
use crate::ingest::common::TrimWs;
use crate::ingest::file_lines::FileLines;
use crate::ingest::{Problem, RunDraft};
use crate::model::{Measurement, Role, RunStatus};

#[derive(Default)]
pub(super) struct Draft {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) title: Option<lines::Title>,
    pub(super) waiting: bool,
    /// What the banner said, in the order read: the run's map is built once from them when
    /// the draft is finished (a later value of a key wins, as inserting each would), not a
    /// tree insert per banner value.
    pub(super) facts: Vec<(crate::model::Word, String)>,
    pub(super) notes: Vec<String>,
    pub(super) errors: Vec<String>,
    pub(super) header: Option<Vec<Column>>,
    pub(super) header_line: usize,
    pub(super) table_open: bool,
    pub(super) rows: Vec<Measurement>,
    /// Rows that were reported as problems (wrong column count, ...).
    pub(super) bad_rows: usize,
    pub(super) interrupted: bool,
    /// `-H`/`-U` raw samples: the unit their list header names, and the values printed since
    /// (with the line of the first) waiting for the result row perftest prints after them.
    pub(super) sample_unit: Option<&'static str>,
    pub(super) pending_samples: Vec<f64>,
    pub(super) pending_samples_line: usize,
    /// Samples that cannot be stored as µs (CPU cycles, no unit, no row after them).
    pub(super) unstored_samples: usize,
    /// `#, cycles`: the table's latency columns are CPU cycles despite their `[usec]` header.
    pub(super) cycles: bool,
    pub(super) report_both: Option<&'static str>,
    pub(super) local_qps: usize,
    pub(super) remote_qps: usize,
    pub(super) peak_not_measured: bool,
}

impl Draft {
    pub(super) fn touch(&mut self, i: usize) {
        self.end = i + 1;
    }

    pub(super) fn meaningful(&self) -> bool {
        self.title.is_some() || self.header.is_some() || self.waiting || !self.errors.is_empty()
    }
}

/// The facts read, as a map: the last value of a key, as inserting each in turn keeps. Sorted
/// and built at once.
fn into_facts(mut read: Vec<(crate::model::Word, String)>) -> crate::model::Facts {
    use crate::ingest::common::text_head;
    // The facts' places are sorted, each beside its key's first eight bytes: the sort moves
    // and compares sixteen-byte integers, not the facts (sorting these took 1.8 % of a
    // perftest import's instructions). Equal keys stay in the order they were read.
    let mut order: Vec<(u64, u32)> = read
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (text_head(k), i as u32))
        .collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| read[a.1 as usize].0.cmp(&read[b.1 as usize].0))
            .then(a.1.cmp(&b.1))
    });
    let mut sorted = Vec::with_capacity(order.len());
    for (n, &(head, i)) in order.iter().enumerate() {
        // Of equal keys, the one read last.
        let superseded = order.get(n + 1).is_some_and(|&(next_head, next)| {
            next_head == head && read[next as usize].0 == read[i as usize].0
        });
        if !superseded {
            sorted.push(std::mem::take(&mut read[i as usize]));
        }
    }
    sorted.into_iter().collect()
}

/// Test name from a banner title and connection type: `RDMA_Write BW` → `ib_write_bw`.
fn test_name(title: &lines::Title, connection: Option<&str>) -> String {
    // Joined, not formatted: one name a run, and `format!` ran its formatter over each piece.
    if connection == Some("RawEth") {
        return ["raw_ethernet_", title.kind].concat();
    }
    ["ib_", title.verb, "_", title.kind].concat()
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
        .find(|t| crate::ingest::common::has(&name, t))
        .map(|t| format!("ib_{t}"))
}

/// Adds a row to the run (read by [`read_row`] into a slot of the run's rows, not moved
/// there: a measurement is some 300 bytes and every table row is one), noting glued text and
/// unmeasured peaks; the row is left out where it does not fit the header, and the reason
/// returned.
pub(super) fn push_row(
    d: &mut Draft,
    cols: &[Column],
    row: &lines::Row<'_>,
    i: usize,
    raw: &str,
) -> Result<(), String> {
    d.rows.push(Measurement::default());
    let m = d.rows.last_mut().expect("just pushed");
    if let Err(why) = read_row(m, cols, row, i, raw) {
        d.rows.pop();
        return Err(why);
    }
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
    Ok(())
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

pub(super) const CYCLES_NOTE: &str =
    "latencies are CPU cycles (-C/--report-cycles) under a [usec] header: \
kept as *_cycles in extra, not as µs (perftest prints no clock rate to convert them)";

/// Builds a measurement from a row, checking it against the header.
pub(super) fn measurement(
    cols: &[Column],
    row: &lines::Row<'_>,
    i: usize,
    raw: &str,
) -> Result<Measurement, String> {
    let mut m = Measurement::default();
    read_row(&mut m, cols, row, i, raw)?;
    Ok(m)
}

/// Reads a row into `m` (a default measurement), checking it against the header.
fn read_row(
    m: &mut Measurement,
    cols: &[Column],
    row: &lines::Row<'_>,
    i: usize,
    raw: &str,
) -> Result<(), String> {
    if row.values.len() != cols.len() {
        return Err(format!(
            "perftest row has {} values but its header has {} columns: {:?}",
            row.values.len(),
            cols.len(),
            raw.trim_ws()
        ));
    }
    m.line = i as u32 + 1;
    m.raw_text = raw.to_string();
    let mut unit = "usec";
    for (col, cell) in cols.iter().zip(&row.values) {
        // Parsed only for the columns that hold decimals.
        let f = || cell.float().filter(|v| v.is_finite());
        let int = || cell.integer();
        let bw = |b: &lines::BwLabel| -> Result<Option<f64>, String> {
            let unit = b
                .unit
                .ok_or_else(|| format!("unknown perftest bandwidth unit {:?}", b.label))?;
            Ok(f().map(|v| unit.to_gbps(v)))
        };
        match col {
            Column::Bytes => m.msg_size_bytes = int(),
            Column::Iterations => m.iterations = int(),
            Column::Sl => m.sl = int().map(|v| v as u32),
            Column::BwPeak(u) => {
                unit = &u.label;
                m.bw_peak_gbps = bw(u)?;
            }
            Column::BwAvg(u) => {
                unit = &u.label;
                m.bw_avg_gbps = bw(u)?;
            }
            Column::MsgRate => m.msg_rate_mpps = f(),
            Column::BwPort1(u) => m.bw_port1_gbps = bw(u)?,
            Column::MsgRatePort1 => m.msg_rate_port1_mpps = f(),
            Column::BwPort2(u) => m.bw_port2_gbps = bw(u)?,
            Column::MsgRatePort2 => m.msg_rate_port2_mpps = f(),
            Column::CpuUtil => m.cpu_util_pct = f(),
            Column::TMin => m.lat_min_us = f(),
            Column::TMax => m.lat_max_us = f(),
            Column::TTypical => m.lat_typical_us = f(),
            Column::TAvg => m.lat_avg_us = f(),
            Column::TStdev => m.lat_stdev_us = f(),
            Column::P99 => m.lat_p99_us = f(),
            Column::P999 => m.lat_p999_us = f(),
            Column::Tps => m.tps = f(),
        }
    }
    if m.msg_size_bytes.is_none() || m.iterations.is_none() {
        return Err(format!(
            "perftest row does not start with two integers: {:?}",
            raw.trim_ws()
        ));
    }
    m.raw_unit = crate::units::printed(unit);
    Ok(())
}

pub(super) fn finish(
    d: Draft,
    source: &str,
    all: FileLines,
    problems: &mut Vec<Problem>,
) -> RunDraft {
    let keep = d.meaningful();
    let mut notes = d.notes;
    let mut rows = d.rows;
    let mut facts = into_facts(d.facts);
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
        && d.end < all.end()
        && !lines::is_rule(all[d.end.min(all.end() - 1)])
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
        tool: crate::model::Tool::Perftest,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The map inserting each fact in turn gives: what `into_facts` is held to.
    fn inserted_in_turn(read: &[(crate::model::Word, String)]) -> crate::model::Facts {
        let mut inserted = crate::model::Facts::new();
        for (k, v) in read {
            inserted.insert(k.clone(), v.clone());
        }
        inserted
    }

    /// The map a draft's facts become is the one inserting them in turn gives.
    #[test]
    fn facts_keep_the_last_value_of_a_key_as_inserts_would() {
        let read: Vec<(crate::model::Word, String)> = [
            ("mtu", "1024"),
            ("link_type", "IB"),
            ("mtu", "4096"),
            ("gid_index", "3"),
            ("link_type", "Ethernet"),
            ("mtu", "2048"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.to_string()))
        .collect();
        let inserted = inserted_in_turn(&read);
        assert_eq!(into_facts(read), inserted);
        assert_eq!(inserted["mtu"], "2048");
    }

    /// Keys that share their first eight bytes, are shorter than eight, are prefixes of one
    /// another or repeat: the map is the one inserting them in turn gives.
    #[test]
    fn facts_with_like_keys_keep_the_last_value_as_inserts_would() {
        let keys = [
            "device.port1.state",
            "device.port1.rate",
            "device",
            "device.",
            "device.port1.state",
            "dev",
            "",
            "a",
            "device.fw_ver",
            "device\0",
            "dev",
            "zzzzzzzzz",
            "zzzzzzzz",
            "é",
            "device.port1.rate",
        ];
        let read: Vec<(crate::model::Word, String)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.to_string().into(), i.to_string()))
            .collect();
        let inserted = inserted_in_turn(&read);
        assert_eq!(into_facts(read), inserted);
        assert_eq!(inserted["dev"], "10");
    }
}

//! A sweep (`-a`) against single-size runs of the same setup: the value a sweep printed at a
//! size should agree, within noise, with runs that measured only that size.

use super::Finding;
use crate::model::{Measurement, Run};
use crate::normalize::platform::Platform;
use super::sweep_rows::{Names, Row, Rows};
use std::collections::BTreeMap;

/// Smallest disagreement called a finding: repeats of one perftest point on a quiet fabric
/// differ by a few percent; a sweep runs each size for fewer iterations.
const MIN_DIFFERENCE: f64 = 0.10;

/// What must match for a sweep and a single-size run to be the same setup: tool, test, role,
/// host, device, connection type, QPs, MTU, platform and the flags other than size and length,
/// `|` between them. Written into one string: this runs once per run of an import.
fn setup(run: &Run, platform: &Platform) -> String {
    use std::fmt::Write;
    let mut key = String::with_capacity(128);
    for part in [
        run.tool.as_str(),
        run.test.as_str(),
        run.role.as_str(),
        run.host.as_deref().unwrap_or(""),
        run.device.as_deref().unwrap_or(""),
        run.connection_type.as_deref().unwrap_or(""),
    ] {
        key.push_str(part);
        key.push('|');
    }
    if let Some(q) = run.qps {
        let _ = write!(key, "{q}");
    }
    key.push('|');
    if let Some(m) = run.mtu {
        let _ = write!(key, "{m}");
    }
    key.push('|');
    key.push_str(platform.get("platform").map_or("", |r| r.value.as_str()));
    key.push('|');
    let flags = run.command.as_ref().map(|c| &c.flags).into_iter().flatten();
    let mut first = true;
    for (k, v) in flags.filter(|(k, _)| !matches!(k.as_ref(), "all" | "size" | "iters" | "duration")) {
        if !first {
            key.push(' ');
        }
        first = false;
        key.push_str(k);
        key.push('=');
        key.push_str(v);
    }
    key
}

/// The value compared: bandwidth for bandwidth rows, typical latency for latency rows.
fn value(m: &Measurement) -> Option<(&'static str, f64)> {
    m.bw_avg_gbps
        .map(|v| ("bw_avg_gbps", v))
        .or(m.lat_typical_us.map(|v| ("lat_typical_us", v)))
}

/// Rows with a size and a value, and whether the run is a sweep (more than one size).
fn sized(run: &Run) -> (bool, Vec<(u64, &'static str, f64, u32)>) {
    let rows: Vec<_> = run
        .measurements
        .iter()
        .filter(|m| m.stream.is_none())
        .filter_map(|m| {
            let (metric, v) = value(m)?;
            Some((m.msg_size_bytes?, metric, v, m.line))
        })
        .collect();
    let first = rows.first().map(|r| r.0);
    (rows.iter().any(|r| Some(r.0) != first), rows)
}

/// What the rule needs of the runs seen so far: single-size values by (setup, size, metric),
/// and the sweeps' rows. Kept without the runs, so a file read in pieces is checked as a
/// whole one is ([`Sweeps::merge`]).
/// The single-size values of one (setup, size, metric), with the source and line of each.
type Singles = Vec<(f64, u32, u32)>;

/// The metrics compared, by the number a [`Row`] stores.
const METRICS: [&str; 2] = ["bw_avg_gbps", "lat_typical_us"];

/// What the rule needs of the runs seen so far: single-size values by (setup, size, metric),
/// and the sweeps' rows. Kept without the runs (names by number, many rows in a temporary
/// file), so a file read in pieces is checked as a whole one is ([`Sweeps::merge`]).
#[derive(Debug, Default)]
pub struct Sweeps {
    names: Names,
    singles: BTreeMap<(u32, u64, u8), Singles>,
    rows: Rows,
}

impl Sweeps {
    pub fn add(&mut self, run: &Run, platform: &Platform) {
        let (is_sweep, rows) = sized(run);
        if rows.is_empty() {
            return;
        }
        let setup = self.names.id(&setup(run, platform));
        let source = self.names.id(&run.source);
        if is_sweep {
            let test = self.names.id(&run.test);
            for (size, metric, value, line) in rows {
                self.rows.push(Row {
                    setup,
                    source,
                    test,
                    line,
                    size,
                    metric: metric_id(metric),
                    value,
                });
            }
        } else {
            for (size, metric, v, line) in rows {
                self.singles
                    .entry((setup, size, metric_id(metric)))
                    .or_default()
                    .push((v, source, line));
            }
        }
    }

    /// Takes what `later` saw, as if its runs had been added after these.
    pub fn merge(&mut self, later: Sweeps) {
        let ids = self.names.map(&later.names);
        let id = |n: u32| ids[n as usize];
        for ((setup, size, metric), v) in later.singles {
            self.singles
                .entry((id(setup), size, metric))
                .or_default()
                .extend(v.into_iter().map(|(v, source, line)| (v, id(source), line)));
        }
        let rows = &mut self.rows;
        let read = later.rows.for_each(|r| {
            rows.push(Row {
                setup: id(r.setup),
                source: id(r.source),
                test: id(r.test),
                ..r
            })
        });
        if let Err(e) = read {
            self.singles.clear();
            self.names = Names::default();
            self.rows = Rows::default();
            eprintln!("linkperf: sweeps not compared with single-size runs: {e}");
        }
    }

    /// The findings over every run added.
    pub fn finish(self, out: &mut Vec<Finding>) {
        let (names, singles) = (&self.names, &self.singles);
        let read = self.rows.for_each(|r| {
            let Some(single) = singles.get(&(r.setup, r.size, r.metric)) else {
                return;
            };
            let metric = METRICS[usize::from(r.metric)];
            if let Some(message) = disagreement(names, single, r.size, metric, r.value) {
                out.push(Finding {
                    rule: "sweep_vs_single",
                    source: names.get(r.source).to_string(),
                    line: r.line,
                    test: names.get(r.test).to_string(),
                    message,
                });
            }
        });
        if let Err(e) = read {
            // Findings are advice: the import goes on, and says what it could not check.
            eprintln!("linkperf: sweeps not compared with single-size runs: {e}");
        }
    }
}

fn metric_id(metric: &str) -> u8 {
    METRICS.iter().position(|m| *m == metric).unwrap_or(0) as u8
}

/// What is wrong with a sweep's value `v` against the single-size values of its setup, if it
/// is off by more than noise.
fn disagreement(
    names: &Names,
    single: &[(f64, u32, u32)],
    size: u64,
    metric: &str,
    v: f64,
) -> Option<String> {
    let values: Vec<f64> = single.iter().map(|s| s.0).collect();
    let median = crate::stats::median(&values);
    if median <= 0.0 {
        return None;
    }
    let noise = if values.len() > 1 {
        3.0 * crate::stats::cv(&values)
    } else {
        0.0
    };
    let diff = (v - median) / median;
    if diff.abs() <= MIN_DIFFERENCE.max(noise) {
        return None;
    }
    let sources: Vec<String> = single
        .iter()
        .take(3)
        .map(|&(_, source, line)| format!("{}:{line}", names.get(source)))
        .collect();
    Some(format!(
        "{size} B: the sweep's {metric} {v} is {:+.1} % from the median {median} of {} single-size run(s) of the same setup ({})",
        diff * 100.0,
        values.len(),
        sources.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CommandLine, Role};
    use crate::normalize::platform::{Resolved, Source};

    /// The key as the fields joined by `|` (flags `k=v` joined by spaces) spells it.
    fn joined(run: &Run, platform: &Platform) -> String {
        let flags: Vec<String> = run
            .command
            .iter()
            .flat_map(|c| &c.flags)
            .filter(|(k, _)| !matches!(k.as_ref(), "all" | "size" | "iters" | "duration"))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        [
            run.tool.clone(),
            run.test.clone(),
            run.role.as_str().to_string(),
            run.host.clone().unwrap_or_default(),
            run.device.clone().unwrap_or_default(),
            run.connection_type.clone().unwrap_or_default(),
            run.qps.map_or(String::new(), |q| q.to_string()),
            run.mtu.map_or(String::new(), |m| m.to_string()),
            platform.get("platform").map_or("", |r| r.value.as_str()).to_string(),
            flags.join(" "),
        ]
        .join("|")
    }

    #[test]
    fn setup_is_the_fields_joined() {
        let bare = Run::default();
        let mut full = Run {
            tool: "perftest".into(),
            test: "ib_write_bw".into(),
            role: Role::Client,
            host: Some("node1".into()),
            device: Some("mlx5_0".into()),
            connection_type: Some("RC".into()),
            qps: Some(4),
            mtu: Some(4096),
            ..Run::default()
        };
        let flags = [("all", "true"), ("bidirectional", "true"), ("size", "65536"), ("tx-depth", "128")];
        full.command = Some(CommandLine {
            flags: flags.iter().map(|&(k, v)| (k.into(), v.into())).collect(),
            ..CommandLine::default()
        });
        let mut platform = Platform::new();
        for run in [&bare, &full] {
            assert_eq!(setup(run, &platform), joined(run, &platform));
        }
        platform.insert(
            "platform".into(),
            Resolved {
                value: "Kunpeng 920".into(),
                from: Source::Label,
            },
        );
        for run in [&bare, &full] {
            assert_eq!(setup(run, &platform), joined(run, &platform));
        }
        assert_eq!(
            setup(&full, &platform),
            "perftest|ib_write_bw|client|node1|mlx5_0|RC|4|4096|Kunpeng 920|bidirectional=true tx-depth=128"
        );
    }
}

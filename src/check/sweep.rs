//! A sweep (`-a`) against single-size runs of the same setup: the value a sweep printed at a
//! size should agree, within noise, with runs that measured only that size.

use super::Finding;
use crate::model::{Measurement, Run};
use crate::normalize::platform::Platform;
use std::collections::BTreeMap;

/// Smallest disagreement called a finding: repeats of one perftest point on a quiet fabric
/// differ by a few percent; a sweep runs each size for fewer iterations.
const MIN_DIFFERENCE: f64 = 0.10;

/// What must match for a sweep and a single-size run to be the same setup.
fn setup(run: &Run, platform: &Platform) -> String {
    let p = |k: &str| platform.get(k).map_or("", |r| r.value.as_str()).to_string();
    let flags: Vec<String> = run
        .command
        .as_ref()
        .map(|c| {
            c.flags
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "all" | "size" | "iters" | "duration"))
                .map(|(k, v)| format!("{k}={v}"))
                .collect()
        })
        .unwrap_or_default();
    [
        run.tool.clone(),
        run.test.clone(),
        run.role.as_str().to_string(),
        run.host.clone().unwrap_or_default(),
        run.device.clone().unwrap_or_default(),
        run.connection_type.clone().unwrap_or_default(),
        run.qps.map_or(String::new(), |q| q.to_string()),
        run.mtu.map_or(String::new(), |m| m.to_string()),
        p("platform"),
        flags.join(" "),
    ]
    .join("|")
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
/// The single-size values of one (setup, size, metric), with `source:line` of each.
type Singles = Vec<(f64, String)>;

#[derive(Debug, Default)]
pub struct Sweeps {
    singles: BTreeMap<(String, u64, &'static str), Singles>,
    sweeps: Vec<Sweep>,
}

#[derive(Debug)]
struct Sweep {
    source: String,
    test: String,
    key: String,
    rows: Vec<(u64, &'static str, f64, u32)>,
}

impl Sweeps {
    pub fn add(&mut self, run: &Run, platform: &Platform) {
        let (is_sweep, rows) = sized(run);
        let key = setup(run, platform);
        if is_sweep {
            self.sweeps.push(Sweep {
                source: run.source.clone(),
                test: run.test.clone(),
                key,
                rows,
            });
        } else {
            for (size, metric, v, line) in rows {
                self.singles
                    .entry((key.clone(), size, metric))
                    .or_default()
                    .push((v, format!("{}:{line}", run.source)));
            }
        }
    }

    /// Takes what `later` saw, as if its runs had been added after these.
    pub fn merge(&mut self, later: Sweeps) {
        for (k, mut v) in later.singles {
            self.singles.entry(k).or_default().append(&mut v);
        }
        self.sweeps.extend(later.sweeps);
    }

    /// The findings over every run added.
    pub fn finish(self, out: &mut Vec<Finding>) {
        for sweep in &self.sweeps {
            for &(size, metric, v, line) in &sweep.rows {
                let Some(single) = self.singles.get(&(sweep.key.clone(), size, metric)) else {
                    continue;
                };
                if let Some(message) = disagreement(single, size, metric, v) {
                    out.push(Finding {
                        rule: "sweep_vs_single",
                        source: sweep.source.clone(),
                        line,
                        test: sweep.test.clone(),
                        message,
                    });
                }
            }
        }
    }
}

/// What is wrong with a sweep's value `v` against the single-size values of its setup, if it
/// is off by more than noise.
fn disagreement(single: &[(f64, String)], size: u64, metric: &str, v: f64) -> Option<String> {
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
    let sources: Vec<&str> = single.iter().take(3).map(|s| s.1.as_str()).collect();
    Some(format!(
        "{size} B: the sweep's {metric} {v} is {:+.1} % from the median {median} of {} single-size run(s) of the same setup ({})",
        diff * 100.0,
        values.len(),
        sources.join(", ")
    ))
}

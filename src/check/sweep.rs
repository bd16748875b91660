//! A sweep (`-a`) against single-size runs of the same setup: the value a sweep printed at a
//! size should agree, within noise, with runs that measured only that size.

use super::Finding;
use crate::model::{Measurement, Run};
use crate::normalize::platform::Platform;
use std::collections::BTreeMap;
use std::borrow::Borrow;

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

pub fn check<R: Borrow<Run>>(selected: &[(R, Platform)], out: &mut Vec<Finding>) {
    type Singles<'a> = Vec<(f64, String)>;
    let mut singles: BTreeMap<(String, u64, &'static str), Singles> = BTreeMap::new();
    let mut sweeps = Vec::new();
    for (run, platform) in selected {
        let run = run.borrow();
        let (is_sweep, rows) = sized(run);
        let key = setup(run, platform);
        if is_sweep {
            sweeps.push((run, key, rows));
        } else {
            for (size, metric, v, line) in rows {
                singles
                    .entry((key.clone(), size, metric))
                    .or_default()
                    .push((v, format!("{}:{line}", run.source)));
            }
        }
    }
    for (run, key, rows) in sweeps {
        for (size, metric, v, line) in rows {
            let Some(single) = singles.get(&(key.clone(), size, metric)) else {
                continue;
            };
            let values: Vec<f64> = single.iter().map(|s| s.0).collect();
            let median = crate::stats::median(&values);
            if median <= 0.0 {
                continue;
            }
            let noise = if values.len() > 1 {
                3.0 * crate::stats::cv(&values)
            } else {
                0.0
            };
            let diff = (v - median) / median;
            if diff.abs() > MIN_DIFFERENCE.max(noise) {
                let sources: Vec<&str> = single.iter().take(3).map(|s| s.1.as_str()).collect();
                out.push(Finding {
                    rule: "sweep_vs_single",
                    source: run.source.clone(),
                    line,
                    test: run.test.clone(),
                    message: format!(
                        "{size} B: the sweep's {metric} {v} is {:+.1} % from the median {median} of {} single-size run(s) of the same setup ({})",
                        diff * 100.0,
                        values.len(),
                        sources.join(", ")
                    ),
                });
            }
        }
    }
}

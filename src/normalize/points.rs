//! Which measurement rows are comparable points, which metric each reports, and the key that
//! pairs a point across groups: (tool, test, role, connection type, MTU, QPs, message size).
//! The dimension being compared (`--by platform`, `--by mtu`, `--by label:NAME`) is taken out
//! of the key and becomes the point's group.

use super::platform::Platform;
use crate::model::{Measurement, Run};
use anyhow::{bail, Result};
use serde::Serialize;

/// Metrics `--metric` accepts, with their direction.
pub const METRICS: &[(&str, Direction)] = &[
    ("bw_avg_gbps", Direction::HigherIsBetter),
    ("bw_peak_gbps", Direction::HigherIsBetter),
    ("msg_rate_mpps", Direction::HigherIsBetter),
    ("tps", Direction::HigherIsBetter),
    ("lat_typical_us", Direction::LowerIsBetter),
    ("lat_avg_us", Direction::LowerIsBetter),
    ("lat_min_us", Direction::LowerIsBetter),
    ("lat_max_us", Direction::LowerIsBetter),
    ("lat_p99_us", Direction::LowerIsBetter),
    ("lat_p999_us", Direction::LowerIsBetter),
    ("lat_stdev_us", Direction::LowerIsBetter),
    ("retransmits", Direction::LowerIsBetter),
    ("jitter_ms", Direction::LowerIsBetter),
    ("loss_pct", Direction::LowerIsBetter),
];

/// Whether a larger value of a metric is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

/// The direction of a metric, or an error listing the valid metrics.
pub fn direction(metric: &str) -> Result<Direction> {
    match METRICS.iter().find(|(m, _)| *m == metric) {
        Some((_, d)) => Ok(*d),
        None => bail!(
            "unknown metric {metric:?}. Choose from: {}",
            METRICS
                .iter()
                .map(|(m, _)| *m)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Reads a metric from a measurement (the float columns by their table, `retransmits` as a
/// count).
pub fn value(m: &Measurement, metric: &str) -> Option<f64> {
    if metric == "retransmits" {
        return m.retransmits.map(|v| v as f64);
    }
    METRICS.iter().find(|(name, _)| *name == metric)?;
    (crate::columns::float_column(metric)?.get)(m)
}

/// The headline metric of a row when none is asked for: bandwidth for bandwidth tests, the
/// typical (median) latency for latency tests, the average where no median is printed.
pub fn default_metric(m: &Measurement) -> Option<&'static str> {
    if m.bw_avg_gbps.is_some() {
        Some("bw_avg_gbps")
    } else if m.lat_typical_us.is_some() {
        Some("lat_typical_us")
    } else if m.lat_avg_us.is_some() {
        Some("lat_avg_us")
    } else if m.tps.is_some() {
        Some("tps")
    } else {
        None
    }
}

/// The pairing key of a point.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct PointKey {
    pub tool: String,
    pub test: String,
    pub role: String,
    pub connection_type: String,
    /// `*` when MTU is the compared dimension.
    pub mtu: String,
    pub qps: String,
    pub msg_size_bytes: Option<u64>,
    pub metric: String,
}

/// One measured value of one run, ready to aggregate.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub group: String,
    pub key: PointKey,
    pub value: f64,
    pub run_id: String,
    pub source: String,
    pub line: u32,
    pub link_speed_gbps: Option<f64>,
}

/// Rows that are whole-test results: not intervals, omitted warm-up, single pings or the
/// sender's side of an iperf3 summary (the receiver's is what arrived); for multi-stream iperf
/// runs only the `[SUM]` rows.
fn result_rows(run: &Run) -> impl Iterator<Item = &Measurement> {
    let has_sum = run
        .measurements
        .iter()
        .any(|m| m.stream.as_deref().is_some_and(|s| s.starts_with("SUM")));
    run.measurements.iter().filter(move |m| {
        let kind_ok = !matches!(
            m.row_kind.as_deref(),
            Some("interval" | "omitted" | "sample" | "sender" | "server_report")
        );
        let stream_ok = !has_sum || m.stream.as_deref().is_some_and(|s| s.starts_with("SUM"));
        kind_ok && stream_ok
    })
}

/// The value of dimension `by` for a run (`platform`, `mtu`, `label:NAME`, any platform key).
pub fn dimension(run: &Run, platform: &Platform, by: &str) -> Option<String> {
    let key = by.strip_prefix("label:").unwrap_or(by);
    match key {
        "mtu" => run.mtu.map(|m| m.to_string()),
        "tool" => Some(run.tool.clone()),
        "host" => run.host.clone(),
        "device" => run.device.clone(),
        "role" => Some(run.role.as_str().to_string()),
        "qps" => run.qps.map(|q| q.to_string()),
        "connection_type" => run.connection_type.clone(),
        "source" => Some(run.source.clone()),
        _ => platform.get(key).map(|r| r.value.clone()),
    }
}

/// Turns runs into points grouped by `by`. `metric` None picks each row's headline metric.
pub fn points(runs: &[(Run, Platform)], by: &str, metric: Option<&str>) -> Vec<Point> {
    let mut out = Vec::new();
    for (run, platform) in runs {
        let Some(group) = dimension(run, platform, by) else {
            continue;
        };
        let link_speed = platform
            .get("link_speed_gbps")
            .and_then(|r| r.value.parse::<f64>().ok());
        for m in result_rows(run) {
            let Some(metric) = metric.or_else(|| default_metric(m)) else {
                continue;
            };
            let Some(v) = value(m, metric) else { continue };
            out.push(Point {
                group: group.clone(),
                key: PointKey {
                    // `*` when tools are compared: perftest and the native runner line up.
                    tool: if by == "tool" {
                        "*".into()
                    } else {
                        run.tool.clone()
                    },
                    test: run.test.clone(),
                    role: run.role.as_str().to_string(),
                    connection_type: run.connection_type.clone().unwrap_or_else(|| "-".into()),
                    mtu: if by == "mtu" {
                        "*".into()
                    } else {
                        run.mtu.map_or("-".into(), |m| m.to_string())
                    },
                    qps: run.qps.map_or("-".into(), |q| q.to_string()),
                    msg_size_bytes: m.msg_size_bytes,
                    metric: metric.to_string(),
                },
                value: v,
                run_id: run.run_id.clone(),
                source: run.source.clone(),
                line: m.line,
                link_speed_gbps: link_speed,
            });
        }
    }
    out
}

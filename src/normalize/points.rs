//! Which measurement rows are comparable points, which metric each reports, and the key that
//! pairs a point across groups: (tool, test, role, connection type, MTU, QPs, message size).
//! The dimension being compared (`--by platform`, `--by mtu`, `--by label:NAME`) is taken out
//! of the key and becomes the point's group.
//!
//! Points are computed on columns: a frame of measurement rows (read straight from the store,
//! or built from runs in memory) goes through [`values`] once, and the per-run parts of the key
//! ([`RunKey`]) are joined by run index, so a selection of 100,000 runs never becomes millions
//! of `Measurement` or `Point` structs on the way to its aggregates.

use super::platform::Platform;
use crate::model::Run;
use anyhow::{Context, Result};
use polars::prelude::*;
use serde::Serialize;

pub use crate::metric::Direction;
use crate::metric::Metric;

/// Metrics `--metric` accepts, with their direction, in [`Metric::ALL`] order (the order
/// [`values`] numbers them in).
pub const METRICS: [(&str, Direction); 14] = {
    let mut out = [("", Direction::HigherIsBetter); 14];
    let mut i = 0;
    while i < Metric::ALL.len() {
        out[i] = (Metric::ALL[i].as_str(), Metric::ALL[i].direction());
        i += 1;
    }
    out
};

/// The direction of a metric, or an error listing the valid metrics.
pub fn direction(metric: &str) -> Result<Direction> {
    Ok(Metric::parse(metric)?.direction())
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

/// The headline metric of a row when none is asked for, in the order tried: bandwidth for
/// bandwidth tests, the typical (median) latency for latency tests, the average where no median
/// is printed, transactions per second for duration latency tests.
const HEADLINE: &[&str] = &["bw_avg_gbps", "lat_typical_us", "lat_avg_us", "tps"];

/// The measurement columns [`values`] reads for `metrics` (none: each row's headline metric):
/// what decides whether a row is a whole-test result, its size and line, and those metrics.
pub fn input_columns(metrics: &[&str]) -> Vec<&'static str> {
    let mut c = vec!["line", "msg_size_bytes", "stream", "row_kind"];
    let wanted = |m: &str| {
        if metrics.is_empty() {
            HEADLINE.contains(&m)
        } else {
            metrics.contains(&m)
        }
    };
    c.extend(METRICS.iter().map(|(m, _)| *m).filter(|m| wanted(m)));
    c
}

/// The name of metric number `index` (as [`values`] numbers them).
pub fn metric_name(index: u32) -> &'static str {
    METRICS[index as usize].0
}

fn metric_index(metric: &str) -> Result<u32> {
    direction(metric)?;
    Ok(METRICS
        .iter()
        .position(|(m, _)| *m == metric)
        .expect("direction() knows it") as u32)
}

/// The rows worth charting for a test: client rows where there are any (perftest servers of
/// write/read tests repeat the client's numbers), else all.
pub fn prefer_client(points: Vec<Point>) -> Vec<Point> {
    if points.iter().any(|p| p.key.role == "client") {
        points
            .into_iter()
            .filter(|p| p.key.role == "client")
            .collect()
    } else {
        points
    }
}

/// The rows of in-memory runs as the frame [`values`] reads: `run` (the index into `runs`) and
/// the [`input_columns`].
pub fn rows_frame(runs: &[(Run, Platform)]) -> Result<DataFrame> {
    let rows: Vec<(u32, &crate::model::Measurement)> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, (r, _))| r.measurements.iter().map(move |m| (i as u32, m)))
        .collect();
    let mut columns = vec![Column::new(
        "run".into(),
        rows.iter().map(|(i, _)| *i).collect::<Vec<u32>>(),
    )];
    for name in input_columns(&METRICS.iter().map(|(m, _)| *m).collect::<Vec<_>>()) {
        let field = crate::columns::point_field(name).expect("every input is a point column");
        columns.push(field.frame_column(name, rows.iter().map(|(_, m)| *m)));
    }
    Ok(DataFrame::new(rows.len(), columns)?)
}

/// Which rows are whole-test results: not intervals, omitted warm-up, single pings or the
/// sender's side of an iperf3 summary (the receiver's is what arrived); for multi-stream iperf
/// runs only the `[SUM]` rows.
fn result_rows(rows: &DataFrame) -> Result<BooleanChunked> {
    let run = rows.column("run")?.u32()?;
    let stream = rows.column("stream")?.str()?;
    let kind = rows.column("row_kind")?.str()?;
    let is_sum = |s: Option<&str>| s.is_some_and(|s| s.starts_with("SUM"));
    let runs = run.max().map_or(0, |m| m as usize + 1);
    let mut has_sum = vec![false; runs];
    for (r, s) in run.iter().zip(stream.iter()) {
        if let (Some(r), true) = (r, is_sum(s)) {
            has_sum[r as usize] = true;
        }
    }
    Ok(run
        .iter()
        .zip(stream.iter())
        .zip(kind.iter())
        .map(|((r, s), k)| {
            let kind_ok = !matches!(
                k,
                Some("interval" | "omitted" | "sample" | "sender" | "server_report")
            );
            let stream_ok = !r.is_some_and(|r| has_sum[r as usize]) || is_sum(s);
            Some(kind_ok && stream_ok)
        })
        .collect::<BooleanChunked>())
}

/// The comparable values of measurement `rows` (a frame with `run` and the [`input_columns`]):
/// the whole-test result rows that report `metric` (None: each row's headline metric), as
/// columns `run`, `line`, `msg_size_bytes`, `metric` (index into [`METRICS`]) and `value`, in
/// the order of `rows`.
pub fn values(rows: &DataFrame, metric: Option<&str>) -> Result<DataFrame> {
    let out = [
        col("run"),
        col("line"),
        col("msg_size_bytes"),
        col("metric"),
        col("value"),
    ];
    if rows.height() == 0 {
        return Ok(DataFrame::new(
            0,
            vec![
                Column::new("run".into(), Vec::<u32>::new()),
                Column::new("line".into(), Vec::<u32>::new()),
                Column::new("msg_size_bytes".into(), Vec::<Option<u64>>::new()),
                Column::new("metric".into(), Vec::<u32>::new()),
                Column::new("value".into(), Vec::<f64>::new()),
            ],
        )?);
    }
    let results = rows.filter(&result_rows(rows)?)?;
    let (metric, value) = match metric {
        Some(m) => (lit(metric_index(m)?), col(m).cast(DataType::Float64)),
        None => {
            // Nested from the last choice outwards: the first headline present wins.
            let mut metric = lit(Null {}).cast(DataType::UInt32);
            let mut value = lit(Null {}).cast(DataType::Float64);
            for name in HEADLINE.iter().rev() {
                let present = col(*name).is_not_null();
                metric = when(present.clone())
                    .then(lit(metric_index(name)?))
                    .otherwise(metric);
                value = when(present).then(col(*name)).otherwise(value);
            }
            (metric, value)
        }
    };
    results
        .lazy()
        .with_columns([
            metric.cast(DataType::UInt32).alias("metric"),
            value.alias("value"),
        ])
        .filter(col("value").is_not_null())
        .select(out)
        .collect()
        .map_err(anyhow::Error::from)
        .context("cannot compute the points' values")
}

/// The parts of a point's key and group that come from its run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunKey {
    pub group: String,
    pub tool: String,
    pub test: String,
    pub role: String,
    pub connection_type: String,
    pub mtu: String,
    pub qps: String,
}

impl RunKey {
    /// The run's key under `--by by`; None when the run has no value for `by`.
    pub fn of(run: &Run, platform: &Platform, by: &str) -> Option<RunKey> {
        Some(RunKey {
            group: dimension(run, platform, by)?,
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
        })
    }

    /// The whole point key at one size and metric.
    pub fn point_key(&self, msg_size_bytes: Option<u64>, metric: &str) -> PointKey {
        PointKey {
            tool: self.tool.clone(),
            test: self.test.clone(),
            role: self.role.clone(),
            connection_type: self.connection_type.clone(),
            mtu: self.mtu.clone(),
            qps: self.qps.clone(),
            msg_size_bytes,
            metric: metric.to_string(),
        }
    }
}

/// The link speed a run's platform resolved to, for line-rate shares.
pub fn link_speed(platform: &Platform) -> Option<f64> {
    platform
        .get("link_speed_gbps")
        .and_then(|r| r.value.parse::<f64>().ok())
}

/// The columns of a [`values`] frame as vectors, for row-wise reading by index.
pub struct ValueColumns {
    pub run: Vec<u32>,
    pub line: Vec<u32>,
    pub msg_size_bytes: Vec<Option<u64>>,
    pub metric: Vec<u32>,
    pub value: Vec<f64>,
}

impl ValueColumns {
    pub fn of(values: &DataFrame) -> Result<ValueColumns> {
        let dense = |name: &str| -> Result<Vec<u32>> {
            Ok(values
                .column(name)?
                .u32()?
                .iter()
                .map(|v| v.unwrap_or(0))
                .collect())
        };
        Ok(ValueColumns {
            run: dense("run")?,
            line: dense("line")?,
            msg_size_bytes: values.column("msg_size_bytes")?.u64()?.iter().collect(),
            metric: dense("metric")?,
            value: values
                .column("value")?
                .f64()?
                .iter()
                .map(|v| v.unwrap_or(f64::NAN))
                .collect(),
        })
    }

    /// Row `i` as (run, line, size, metric, value).
    pub fn row(&self, i: usize) -> (usize, u32, Option<u64>, u32, f64) {
        (
            self.run[i] as usize,
            self.line[i],
            self.msg_size_bytes[i],
            self.metric[i],
            self.value[i],
        )
    }
}

/// Turns runs into points grouped by `by`. `metric` None picks each row's headline metric.
pub fn points(runs: &[(Run, Platform)], by: &str, metric: Option<&str>) -> Result<Vec<Point>> {
    let values = values(&rows_frame(runs)?, metric)?;
    let cols = ValueColumns::of(&values)?;
    let keys: Vec<Option<RunKey>> = runs.iter().map(|(r, p)| RunKey::of(r, p, by)).collect();
    let mut out = Vec::with_capacity(values.height());
    for i in 0..values.height() {
        let (run, line, size, metric, value) = cols.row(i);
        let Some(key) = &keys[run] else { continue };
        let (r, p) = &runs[run];
        out.push(Point {
            group: key.group.clone(),
            key: key.point_key(size, metric_name(metric)),
            value,
            run_id: r.run_id.clone(),
            source: r.source.clone(),
            line,
            link_speed_gbps: link_speed(p),
        });
    }
    Ok(out)
}

//! The public export schema: one flat row per measurement point, the columns users script
//! against (documented in README.md), plus the `--where` filter shared by the read verbs.

use crate::model::{Measurement, Run};
use crate::normalize::platform::{Platform, Resolved, PLATFORM_KEYS};
use anyhow::{bail, Result};
use polars::prelude::{Column, DataFrame};
use serde::Serialize;
use std::collections::BTreeMap;

/// One exported measurement point. Field order is the column order.
#[derive(Debug, Clone, Serialize)]
pub struct ExportRow {
    pub run_id: String,
    pub source: String,
    /// Line of the measurement row in `source`.
    pub line: u32,
    pub tool: String,
    pub test: String,
    pub role: String,
    pub host: Option<String>,
    pub device: Option<String>,
    pub mtu: Option<u32>,
    pub link_layer: Option<String>,
    pub connection_type: Option<String>,
    pub qps: Option<u32>,
    pub msg_size_bytes: Option<u64>,
    pub iterations: Option<u64>,
    pub bw_peak_gbps: Option<f64>,
    pub bw_avg_gbps: Option<f64>,
    pub msg_rate_mpps: Option<f64>,
    pub lat_min_us: Option<f64>,
    pub lat_max_us: Option<f64>,
    pub lat_typical_us: Option<f64>,
    pub lat_avg_us: Option<f64>,
    pub lat_stdev_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    pub lat_p999_us: Option<f64>,
    pub raw_unit: String,
    pub labels: BTreeMap<String, String>,
    pub raw_text: String,
    /// Line where the run starts (its prompt or first output line).
    pub run_line: u32,
    pub status: String,
    pub command: Option<String>,
    pub tps: Option<f64>,
    pub cpu_util_pct: Option<f64>,
    pub interval_start_s: Option<f64>,
    pub interval_end_s: Option<f64>,
    pub stream: Option<String>,
    pub row_kind: Option<String>,
    pub transfer_bytes: Option<f64>,
    pub retransmits: Option<u64>,
    pub cwnd_bytes: Option<f64>,
    pub rtt_us: Option<f64>,
    pub jitter_ms: Option<f64>,
    pub lost: Option<u64>,
    pub total: Option<u64>,
    pub loss_pct: Option<f64>,
    pub cpu_local_pct: Option<f64>,
    pub cpu_remote_pct: Option<f64>,
    /// The resolved platform name (see `normalize::platform`).
    pub platform: String,
    /// Every resolved platform value with where it came from (label, config, device facts, built-in).
    pub resolved: BTreeMap<String, Resolved>,
    pub extra: BTreeMap<String, String>,
}

impl ExportRow {
    fn new(r: &Run, p: &Platform, m: &Measurement) -> ExportRow {
        ExportRow {
            run_id: r.run_id.clone(),
            source: r.source.clone(),
            line: m.line,
            tool: r.tool.clone(),
            test: r.test.clone(),
            role: r.role.as_str().to_string(),
            host: r.host.clone(),
            device: r.device.clone(),
            mtu: r.mtu,
            link_layer: r.link_layer.clone(),
            connection_type: r.connection_type.clone(),
            qps: r.qps,
            msg_size_bytes: m.msg_size_bytes,
            iterations: m.iterations,
            bw_peak_gbps: m.bw_peak_gbps,
            bw_avg_gbps: m.bw_avg_gbps,
            msg_rate_mpps: m.msg_rate_mpps,
            lat_min_us: m.lat_min_us,
            lat_max_us: m.lat_max_us,
            lat_typical_us: m.lat_typical_us,
            lat_avg_us: m.lat_avg_us,
            lat_stdev_us: m.lat_stdev_us,
            lat_p99_us: m.lat_p99_us,
            lat_p999_us: m.lat_p999_us,
            raw_unit: m.raw_unit.clone(),
            labels: r.labels.clone(),
            raw_text: m.raw_text.clone(),
            run_line: r.line,
            status: r.status.as_str().to_string(),
            command: r.command.as_ref().map(|c| c.raw.clone()),
            tps: m.tps,
            cpu_util_pct: m.cpu_util_pct,
            interval_start_s: m.interval_start_s,
            interval_end_s: m.interval_end_s,
            stream: m.stream.clone(),
            row_kind: m.row_kind.clone(),
            transfer_bytes: m.transfer_bytes,
            retransmits: m.retransmits,
            cwnd_bytes: m.cwnd_bytes,
            rtt_us: m.rtt_us,
            jitter_ms: m.jitter_ms,
            lost: m.lost,
            total: m.total,
            loss_pct: m.loss_pct,
            cpu_local_pct: m.cpu_local_pct,
            cpu_remote_pct: m.cpu_remote_pct,
            extra: m.extra.clone(),
            platform: p
                .get("platform")
                .map(|r| r.value.clone())
                .unwrap_or_default(),
            resolved: p.clone(),
        }
    }
}

/// Flattens runs into export rows, in store order.
pub fn rows(runs: &[(Run, Platform)]) -> Vec<ExportRow> {
    runs.iter()
        .flat_map(|(r, p)| r.measurements.iter().map(move |m| ExportRow::new(r, p, m)))
        .collect()
}

/// Run-level keys `--where` accepts besides labels.
pub const WHERE_KEYS: &[&str] = &[
    "run_id",
    "source",
    "tool",
    "test",
    "role",
    "status",
    "host",
    "device",
    "mtu",
    "link_layer",
    "connection_type",
    "qps",
];

/// A parsed `--where key=value[,key=value...]` filter: every condition must hold.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    conditions: Vec<(String, String)>,
}

impl Filter {
    /// Parses the `--where` arguments. Keys are checked against `runs` so a typo is an error
    /// that lists the valid choices rather than an empty result.
    pub fn parse(args: &[String], runs: &[(Run, Platform)]) -> Result<Filter> {
        let mut keys: Vec<&str> = runs
            .iter()
            .flat_map(|(_, p)| p.keys().map(String::as_str))
            .collect();
        keys.sort();
        keys.dedup();
        Filter::parse_known(args, &keys)
    }

    /// Parses the `--where` arguments; `keys` are the label and platform keys the selection can
    /// have besides the run columns and [`PLATFORM_KEYS`].
    pub fn parse_known(args: &[String], keys: &[&str]) -> Result<Filter> {
        let mut conditions = Vec::new();
        for arg in args {
            for part in arg.split(',').filter(|p| !p.trim().is_empty()) {
                let Some((k, v)) = part.split_once('=') else {
                    bail!("--where {part:?}: expected key=value");
                };
                let k = k
                    .trim()
                    .strip_prefix("label:")
                    .unwrap_or(k.trim())
                    .to_string();
                let known = WHERE_KEYS.contains(&k.as_str())
                    || PLATFORM_KEYS.contains(&k.as_str())
                    || keys.contains(&k.as_str());
                if !known {
                    let labels: Vec<&str> = keys
                        .iter()
                        .copied()
                        .filter(|k| !PLATFORM_KEYS.contains(k) && !WHERE_KEYS.contains(k))
                        .collect();
                    bail!(
                        "--where: unknown key {k:?}. Choose from: {}, {}{}{}",
                        WHERE_KEYS.join(", "),
                        PLATFORM_KEYS.join(", "),
                        if labels.is_empty() { "" } else { "; labels: " },
                        labels.join(", ")
                    );
                }
                conditions.push((k, v.trim().to_string()));
            }
        }
        Ok(Filter { conditions })
    }

    /// A predicate over the store's runs columns that every run this filter keeps satisfies
    /// (it may keep a few more; [`Filter::matches`] decides). Run columns compare directly. A
    /// label wins over every other source of a key, so a run whose `label:KEY` differs can be
    /// left unread; where the key can also come from a project rule, device facts or built-in
    /// knowledge (`derived`), a run without the label must still be read.
    pub fn pushdown(
        &self,
        label_columns: &std::collections::BTreeSet<String>,
        derived: &dyn Fn(&str) -> bool,
    ) -> Option<polars::prelude::Expr> {
        use polars::prelude::{col, lit};
        let mut out: Option<polars::prelude::Expr> = None;
        for (k, v) in &self.conditions {
            let e = match k.as_str() {
                "mtu" | "qps" => match v.parse::<u32>() {
                    Ok(n) if n.to_string() == *v => col(k.as_str()).eq(lit(n)),
                    _ => lit(false),
                },
                key if WHERE_KEYS.contains(&key) => col(key).eq(lit(v.as_str())),
                key => {
                    let name = format!("{}{key}", crate::store::frames::LABEL_PREFIX);
                    let present = label_columns.contains(key);
                    match (present, derived(key)) {
                        (true, true) => col(name.as_str())
                            .is_null()
                            .or(col(name.as_str()).eq(lit(v.as_str()))),
                        (true, false) => col(name.as_str()).eq(lit(v.as_str())),
                        (false, true) => continue,
                        (false, false) => lit(false),
                    }
                }
            };
            out = Some(match out {
                Some(acc) => acc.and(e),
                None => e,
            });
        }
        out
    }

    pub fn matches(&self, r: &Run, p: &Platform) -> bool {
        self.conditions
            .iter()
            .all(|(k, v)| run_value(r, p, k).as_deref() == Some(v.as_str()))
    }
}

fn run_value(r: &Run, p: &Platform, key: &str) -> Option<String> {
    Some(match key {
        "run_id" => r.run_id.clone(),
        "source" => r.source.clone(),
        "tool" => r.tool.clone(),
        "test" => r.test.clone(),
        "role" => r.role.as_str().to_string(),
        "status" => r.status.as_str().to_string(),
        "host" => r.host.clone()?,
        "device" => r.device.clone()?,
        "mtu" => r.mtu?.to_string(),
        "link_layer" => r.link_layer.clone()?,
        "connection_type" => r.connection_type.clone()?,
        "qps" => r.qps?.to_string(),
        other => p.get(other)?.value.clone(),
    })
}

/// JSON Lines: one object per row (export rows keep labels as an object).
pub fn to_jsonl<T: Serialize>(rows: &[T]) -> String {
    let mut out = String::new();
    for r in rows {
        out.push_str(&serde_json::to_string(r).expect("export rows serialize"));
        out.push('\n');
    }
    out
}

/// The rows as a polars frame (labels as JSON text), for CSV and Parquet.
pub fn to_frame(rows: &[ExportRow]) -> Result<DataFrame> {
    let s = |f: &dyn Fn(&ExportRow) -> Option<String>| rows.iter().map(f).collect::<Vec<_>>();
    let fl = |name: &str, f: &dyn Fn(&ExportRow) -> Option<f64>| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
    };
    let columns = vec![
        Column::new("run_id".into(), s(&|r| Some(r.run_id.clone()))),
        Column::new("source".into(), s(&|r| Some(r.source.clone()))),
        Column::new(
            "line".into(),
            rows.iter().map(|r| r.line).collect::<Vec<u32>>(),
        ),
        Column::new("tool".into(), s(&|r| Some(r.tool.clone()))),
        Column::new("test".into(), s(&|r| Some(r.test.clone()))),
        Column::new("role".into(), s(&|r| Some(r.role.clone()))),
        Column::new("host".into(), s(&|r| r.host.clone())),
        Column::new("device".into(), s(&|r| r.device.clone())),
        Column::new("mtu".into(), rows.iter().map(|r| r.mtu).collect::<Vec<_>>()),
        Column::new("link_layer".into(), s(&|r| r.link_layer.clone())),
        Column::new("connection_type".into(), s(&|r| r.connection_type.clone())),
        Column::new("qps".into(), rows.iter().map(|r| r.qps).collect::<Vec<_>>()),
        Column::new(
            "msg_size_bytes".into(),
            rows.iter().map(|r| r.msg_size_bytes).collect::<Vec<_>>(),
        ),
        Column::new(
            "iterations".into(),
            rows.iter().map(|r| r.iterations).collect::<Vec<_>>(),
        ),
        fl("bw_peak_gbps", &|r| r.bw_peak_gbps),
        fl("bw_avg_gbps", &|r| r.bw_avg_gbps),
        fl("msg_rate_mpps", &|r| r.msg_rate_mpps),
        fl("lat_min_us", &|r| r.lat_min_us),
        fl("lat_max_us", &|r| r.lat_max_us),
        fl("lat_typical_us", &|r| r.lat_typical_us),
        fl("lat_avg_us", &|r| r.lat_avg_us),
        fl("lat_stdev_us", &|r| r.lat_stdev_us),
        fl("lat_p99_us", &|r| r.lat_p99_us),
        fl("lat_p999_us", &|r| r.lat_p999_us),
        Column::new("raw_unit".into(), s(&|r| Some(r.raw_unit.clone()))),
        Column::new(
            "labels".into(),
            s(&|r| Some(serde_json::to_string(&r.labels).expect("labels serialize"))),
        ),
        Column::new("raw_text".into(), s(&|r| Some(r.raw_text.clone()))),
        Column::new(
            "run_line".into(),
            rows.iter().map(|r| r.run_line).collect::<Vec<u32>>(),
        ),
        Column::new("status".into(), s(&|r| Some(r.status.clone()))),
        Column::new("command".into(), s(&|r| r.command.clone())),
        fl("tps", &|r| r.tps),
        fl("cpu_util_pct", &|r| r.cpu_util_pct),
        fl("interval_start_s", &|r| r.interval_start_s),
        fl("interval_end_s", &|r| r.interval_end_s),
        Column::new("stream".into(), s(&|r| r.stream.clone())),
        Column::new("row_kind".into(), s(&|r| r.row_kind.clone())),
        fl("transfer_bytes", &|r| r.transfer_bytes),
        Column::new(
            "retransmits".into(),
            rows.iter().map(|r| r.retransmits).collect::<Vec<_>>(),
        ),
        fl("cwnd_bytes", &|r| r.cwnd_bytes),
        fl("rtt_us", &|r| r.rtt_us),
        fl("jitter_ms", &|r| r.jitter_ms),
        Column::new(
            "lost".into(),
            rows.iter().map(|r| r.lost).collect::<Vec<_>>(),
        ),
        Column::new(
            "total".into(),
            rows.iter().map(|r| r.total).collect::<Vec<_>>(),
        ),
        fl("loss_pct", &|r| r.loss_pct),
        fl("cpu_local_pct", &|r| r.cpu_local_pct),
        fl("cpu_remote_pct", &|r| r.cpu_remote_pct),
        Column::new("platform".into(), s(&|r| Some(r.platform.clone()))),
        Column::new(
            "resolved".into(),
            s(&|r| Some(serde_json::to_string(&r.resolved).expect("resolved serializes"))),
        ),
        Column::new(
            "extra".into(),
            s(&|r| Some(serde_json::to_string(&r.extra).expect("extra serializes"))),
        ),
    ];
    Ok(DataFrame::new(rows.len(), columns)?)
}

/// Reads a file written by `linkperf export` (JSON Lines, CSV or Parquet) back into runs, so
/// an exported baseline can be gated against. Facts and notes are not part of the export and
/// come back empty.
pub fn read(path: &std::path::Path) -> Result<Vec<Run>> {
    use anyhow::Context;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let rows: Vec<serde_json::Map<String, serde_json::Value>> = match ext {
        "jsonl" | "json" | "ndjson" => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| {
                    serde_json::from_str(l).map_err(|e| {
                        anyhow::anyhow!("{}:{}: not an export row: {e}", path.display(), i + 1)
                    })
                })
                .collect::<Result<_>>()?
        }
        "csv" | "parquet" => {
            use polars::prelude::{CsvReadOptions, ParquetReader, SerReader};
            let df = if ext == "csv" {
                CsvReadOptions::default()
                    .with_has_header(true)
                    .try_into_reader_with_file_path(Some(path.to_path_buf()))
                    .and_then(|r| r.finish())
            } else {
                let f = std::fs::File::open(path)
                    .with_context(|| format!("cannot open {}", path.display()))?;
                ParquetReader::new(f).finish()
            }
            .map_err(|e| anyhow::anyhow!("{}: not a linkperf export: {e}", path.display()))?;
            frame_rows(&df).with_context(|| format!("{}: not a linkperf export", path.display()))?
        }
        _ => bail!(
            "{}: unknown export format (expected .jsonl, .csv or .parquet)",
            path.display()
        ),
    };
    rows_to_runs(&rows).with_context(|| format!("{}: not a linkperf export", path.display()))
}

/// The cells of a frame as JSON values, row by row.
fn frame_rows(df: &DataFrame) -> Result<Vec<serde_json::Map<String, serde_json::Value>>> {
    use polars::prelude::AnyValue;
    let mut rows = vec![serde_json::Map::new(); df.height()];
    for c in df.columns() {
        let name = c.name().to_string();
        for (i, row) in rows.iter_mut().enumerate() {
            let v = match c.get(i)? {
                AnyValue::Null => serde_json::Value::Null,
                AnyValue::String(s) => serde_json::Value::String(s.to_string()),
                AnyValue::StringOwned(s) => serde_json::Value::String(s.to_string()),
                AnyValue::Boolean(b) => serde_json::Value::Bool(b),
                AnyValue::Float64(f) => serde_json::json!(f),
                AnyValue::Float32(f) => serde_json::json!(f64::from(f)),
                AnyValue::Int64(v) => serde_json::json!(v),
                AnyValue::Int32(v) => serde_json::json!(v),
                AnyValue::UInt64(v) => serde_json::json!(v),
                AnyValue::UInt32(v) => serde_json::json!(v),
                other => serde_json::Value::String(other.to_string()),
            };
            row.insert(name.clone(), v);
        }
    }
    Ok(rows)
}

/// Groups export rows by run id back into runs.
fn rows_to_runs(rows: &[serde_json::Map<String, serde_json::Value>]) -> Result<Vec<Run>> {
    use crate::model::{Role, RunStatus};
    let mut runs: Vec<Run> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let s = |k: &str| r.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let f = |k: &str| r.get(k).and_then(|v| v.as_f64());
        let u = |k: &str| {
            r.get(k)
                .and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)))
        };
        let Some(run_id) = s("run_id") else {
            bail!("row {} has no run_id", i + 1);
        };
        let labels: BTreeMap<String, String> = match r.get("labels") {
            Some(serde_json::Value::String(text)) => serde_json::from_str(text)?,
            Some(v @ serde_json::Value::Object(_)) => serde_json::from_value(v.clone())?,
            _ => BTreeMap::new(),
        };
        let pos = *index.entry(run_id.clone()).or_insert_with(|| {
            runs.push(Run {
                run_id: run_id.clone(),
                source: s("source").unwrap_or_default(),
                line: u("run_line").unwrap_or(0) as u32,
                tool: s("tool").unwrap_or_default(),
                test: s("test").unwrap_or_default(),
                role: Role::parse(&s("role").unwrap_or_default()),
                status: RunStatus::parse(&s("status").unwrap_or_else(|| "ok".into())),
                host: s("host"),
                command: None,
                device: s("device"),
                mtu: u("mtu").map(|v| v as u32),
                link_layer: s("link_layer"),
                connection_type: s("connection_type"),
                qps: u("qps").map(|v| v as u32),
                facts: BTreeMap::new(),
                notes: Vec::new(),
                error: None,
                labels,
                measurements: Vec::new(),
            });
            runs.len() - 1
        });
        runs[pos].measurements.push(Measurement {
            line: u("line").unwrap_or(0) as u32,
            raw_text: s("raw_text").unwrap_or_default(),
            raw_unit: s("raw_unit").unwrap_or_default(),
            msg_size_bytes: u("msg_size_bytes"),
            iterations: u("iterations"),
            bw_peak_gbps: f("bw_peak_gbps"),
            bw_avg_gbps: f("bw_avg_gbps"),
            msg_rate_mpps: f("msg_rate_mpps"),
            lat_min_us: f("lat_min_us"),
            lat_max_us: f("lat_max_us"),
            lat_typical_us: f("lat_typical_us"),
            lat_avg_us: f("lat_avg_us"),
            lat_stdev_us: f("lat_stdev_us"),
            lat_p99_us: f("lat_p99_us"),
            lat_p999_us: f("lat_p999_us"),
            tps: f("tps"),
            cpu_util_pct: f("cpu_util_pct"),
            interval_start_s: f("interval_start_s"),
            interval_end_s: f("interval_end_s"),
            stream: s("stream"),
            row_kind: s("row_kind"),
            transfer_bytes: f("transfer_bytes"),
            retransmits: u("retransmits"),
            jitter_ms: f("jitter_ms"),
            lost: u("lost"),
            total: u("total"),
            loss_pct: f("loss_pct"),
            ..Measurement::default()
        });
    }
    Ok(runs)
}

/// One per-iteration latency sample of a native runner row (`linkperf export --samples`), for
/// percentiles of any order and histograms outside linkperf.
#[derive(Debug, Clone, Serialize)]
pub struct SampleRow {
    pub run_id: String,
    pub source: String,
    /// Line of the summary row the sample belongs to.
    pub line: u32,
    pub tool: String,
    pub test: String,
    pub platform: Option<String>,
    pub msg_size_bytes: Option<u64>,
    /// 0-based iteration.
    pub seq: u32,
    pub latency_us: f64,
}

pub fn sample_rows(runs: &[(Run, Platform)]) -> Vec<SampleRow> {
    let mut out = Vec::new();
    for (r, p) in runs {
        for m in &r.measurements {
            for (i, &v) in m.samples_us.iter().enumerate() {
                out.push(SampleRow {
                    run_id: r.run_id.clone(),
                    source: r.source.clone(),
                    line: m.line,
                    tool: r.tool.clone(),
                    test: r.test.clone(),
                    platform: p.get("platform").map(|x| x.value.clone()),
                    msg_size_bytes: m.msg_size_bytes,
                    seq: i as u32,
                    latency_us: v,
                });
            }
        }
    }
    out
}

pub fn samples_to_frame(rows: &[SampleRow]) -> Result<DataFrame> {
    let s = |f: &dyn Fn(&SampleRow) -> Option<String>| rows.iter().map(f).collect::<Vec<_>>();
    Ok(DataFrame::new(
        rows.len(),
        vec![
            Column::new("run_id".into(), s(&|r| Some(r.run_id.clone()))),
            Column::new("source".into(), s(&|r| Some(r.source.clone()))),
            Column::new(
                "line".into(),
                rows.iter().map(|r| r.line).collect::<Vec<u32>>(),
            ),
            Column::new("tool".into(), s(&|r| Some(r.tool.clone()))),
            Column::new("test".into(), s(&|r| Some(r.test.clone()))),
            Column::new("platform".into(), s(&|r| r.platform.clone())),
            Column::new(
                "msg_size_bytes".into(),
                rows.iter().map(|r| r.msg_size_bytes).collect::<Vec<_>>(),
            ),
            Column::new(
                "seq".into(),
                rows.iter().map(|r| r.seq).collect::<Vec<u32>>(),
            ),
            Column::new(
                "latency_us".into(),
                rows.iter().map(|r| r.latency_us).collect::<Vec<f64>>(),
            ),
        ],
    )?)
}

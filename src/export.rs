//! The public export schema: one flat row per measurement point, the columns users script
//! against (documented in README.md), plus the `--where` filter shared by the read commands.

use crate::columns::{point_field, run_field, Field, Source, EXPORT_COLUMNS, RUN_COLUMNS};
use crate::model::{Measurement, Run};
use crate::normalize::platform::{Platform, PLATFORM_KEYS};
use anyhow::{bail, Result};
use polars::prelude::{Column, DataFrame};
use serde::Serialize;
use std::collections::BTreeMap;

/// One exported measurement point: a run, its resolved platform and one of its rows. It
/// serializes (and becomes a frame row) in [`EXPORT_COLUMNS`] order.
#[derive(Debug, Clone, Copy)]
pub struct ExportRow<'a> {
    pub run: &'a Run,
    pub platform: &'a Platform,
    pub point: &'a Measurement,
}

/// An export column with its schema field looked up once.
enum Plan {
    Run(&'static Field<Run>),
    Point(&'static Field<Measurement>),
    Other(Source),
}

fn plan() -> &'static [(&'static str, Plan)] {
    static PLAN: std::sync::OnceLock<Vec<(&'static str, Plan)>> = std::sync::OnceLock::new();
    PLAN.get_or_init(|| {
        EXPORT_COLUMNS
            .iter()
            .map(|c| {
                let plan = match c.source {
                    Source::Run(n) => Plan::Run(run_field(n).expect("a run column")),
                    Source::Point(n) => Plan::Point(point_field(n).expect("a point column")),
                    other => Plan::Other(other),
                };
                (c.name, plan)
            })
            .collect()
    })
}

impl ExportRow<'_> {
    fn platform_name(&self) -> &str {
        self.platform
            .get("platform")
            .map_or("", |r| r.value.as_str())
    }
}

impl Serialize for ExportRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let plan = plan();
        let mut map = s.serialize_map(Some(plan.len()))?;
        for (name, p) in plan {
            match p {
                Plan::Run(f) => map.serialize_entry(name, &f.cell(self.run))?,
                Plan::Point(f) => map.serialize_entry(name, &f.cell(self.point))?,
                Plan::Other(Source::Labels) => map.serialize_entry(name, &self.run.labels)?,
                Plan::Other(Source::Command) => {
                    map.serialize_entry(name, &self.run.command.as_ref().map(|c| c.raw.as_str()))?
                }
                Plan::Other(Source::Platform) => map.serialize_entry(name, self.platform_name())?,
                Plan::Other(Source::Resolved) => map.serialize_entry(name, self.platform)?,
                Plan::Other(_) => map.serialize_entry(name, &self.point.extra)?,
            }
        }
        map.end()
    }
}

/// Flattens runs into export rows, in store order.
pub fn rows(runs: &[(Run, Platform)]) -> Vec<ExportRow<'_>> {
    runs.iter()
        .flat_map(|(run, platform)| {
            run.measurements.iter().map(move |point| ExportRow {
                run,
                platform,
                point,
            })
        })
        .collect()
}

/// Run-level keys `--where` accepts besides labels and platform keys: the run columns but the
/// run's line.
pub fn where_keys() -> Vec<&'static str> {
    RUN_COLUMNS
        .iter()
        .map(|c| c.name)
        .filter(|n| *n != "line")
        .collect()
}

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
                let where_keys = where_keys();
                let known = where_keys.contains(&k.as_str())
                    || PLATFORM_KEYS.contains(&k.as_str())
                    || keys.contains(&k.as_str());
                if !known {
                    let labels: Vec<&str> = keys
                        .iter()
                        .copied()
                        .filter(|k| !PLATFORM_KEYS.contains(k) && !where_keys.contains(k))
                        .collect();
                    bail!(
                        "--where: unknown key {k:?}. Choose from: {}, {}{}{}",
                        where_keys.join(", "),
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
            let field = run_field(k).filter(|f| f.name != "line");
            let e = match k.as_str() {
                key if field.is_some_and(|f| f.is_integer()) => match v.parse::<u32>() {
                    Ok(n) if n.to_string() == *v => col(key).eq(lit(n)),
                    _ => lit(false),
                },
                key if field.is_some() => col(key).eq(lit(v.as_str())),
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
    match run_field(key).filter(|f| f.name != "line") {
        Some(f) => f.cell(r).text(),
        None => Some(p.get(key)?.value.clone()),
    }
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

/// The rows as a polars frame (labels, resolved platform and extra as JSON text), for CSV and
/// Parquet.
pub fn to_frame(rows: &[ExportRow]) -> Result<DataFrame> {
    let json = |f: &dyn Fn(&ExportRow) -> String| rows.iter().map(f).collect::<Vec<_>>();
    let columns = plan()
        .iter()
        .map(|(name, p)| match p {
            Plan::Run(f) => f.frame_column(name, rows.iter().map(|r| r.run)),
            Plan::Point(f) => f.frame_column(name, rows.iter().map(|r| r.point)),
            Plan::Other(Source::Command) => Column::new(
                (*name).into(),
                rows.iter()
                    .map(|r| r.run.command.as_ref().map(|c| c.raw.as_str()))
                    .collect::<Vec<_>>(),
            ),
            Plan::Other(Source::Platform) => Column::new(
                (*name).into(),
                rows.iter().map(|r| r.platform_name()).collect::<Vec<_>>(),
            ),
            Plan::Other(Source::Labels) => {
                Column::new((*name).into(), json(&|r| json_text(&r.run.labels)))
            }
            Plan::Other(Source::Resolved) => {
                Column::new((*name).into(), json(&|r| json_text(r.platform)))
            }
            Plan::Other(_) => Column::new((*name).into(), json(&|r| json_text(&r.point.extra))),
        })
        .collect();
    Ok(DataFrame::new(rows.len(), columns)?)
}

/// A map as JSON text, for a CSV or Parquet cell.
fn json_text<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("maps of strings serialize")
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
    let mut runs: Vec<Run> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let Some(run_id) = r.get("run_id").and_then(|v| v.as_str()).map(str::to_string) else {
            bail!("row {} has no run_id", i + 1);
        };
        let labels: BTreeMap<String, String> = match r.get("labels") {
            Some(serde_json::Value::String(text)) => serde_json::from_str(text)?,
            Some(v @ serde_json::Value::Object(_)) => serde_json::from_value(v.clone())?,
            _ => BTreeMap::new(),
        };
        let pos = *index.entry(run_id).or_insert_with(|| {
            let mut run = Run {
                labels,
                ..Run::default()
            };
            set_fields(&mut run, r, |s| match s {
                Source::Run(n) => run_field(n),
                _ => None,
            });
            runs.push(run);
            runs.len() - 1
        });
        let mut point = Measurement::default();
        set_fields(&mut point, r, |s| match s {
            Source::Point(n) => point_field(n),
            _ => None,
        });
        runs[pos].measurements.push(point);
    }
    Ok(runs)
}

/// Sets the fields of `record` that an export row's columns carry.
fn set_fields<R: 'static>(
    record: &mut R,
    row: &serde_json::Map<String, serde_json::Value>,
    field: impl Fn(Source) -> Option<&'static Field<R>>,
) {
    for c in EXPORT_COLUMNS {
        if let Some(f) = field(c.source) {
            f.set_json(record, row.get(c.name));
        }
    }
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

/// One counter that changed across a run (`linkperf export --counters`), with the run it
/// belongs to and where its `after` value was read.
#[derive(Debug, Clone, Serialize)]
pub struct CounterRow {
    pub run_id: String,
    /// The run's log and first line.
    pub source: String,
    pub line: u32,
    pub tool: String,
    pub test: String,
    pub role: String,
    pub platform: Option<String>,
    pub host: String,
    pub group: String,
    pub object: String,
    pub name: String,
    pub before: u64,
    pub after: u64,
    pub delta: u64,
    pub note: Option<String>,
    /// The counters file and the line of the `after` value.
    pub counters_source: String,
    pub counters_line: u32,
}

pub fn counter_rows(runs: &[(Run, Platform)]) -> Vec<CounterRow> {
    let mut out = Vec::new();
    for (r, p) in runs {
        for c in &r.counters {
            out.push(CounterRow {
                run_id: r.run_id.clone(),
                source: r.source.clone(),
                line: r.line,
                tool: r.tool.clone(),
                test: r.test.clone(),
                role: r.role.as_str().to_string(),
                platform: p.get("platform").map(|x| x.value.clone()),
                host: c.host.clone(),
                group: c.group.clone(),
                object: c.object.clone(),
                name: c.name.clone(),
                before: c.before,
                after: c.after,
                delta: c.delta,
                note: c.note.clone(),
                counters_source: c.source.clone(),
                counters_line: c.line,
            });
        }
    }
    out
}

pub fn counters_to_frame(rows: &[CounterRow]) -> Result<DataFrame> {
    let s = |f: &dyn Fn(&CounterRow) -> Option<String>| rows.iter().map(f).collect::<Vec<_>>();
    let n = |f: &dyn Fn(&CounterRow) -> u64| rows.iter().map(f).collect::<Vec<_>>();
    let l = |f: &dyn Fn(&CounterRow) -> u32| rows.iter().map(f).collect::<Vec<_>>();
    Ok(DataFrame::new(
        rows.len(),
        vec![
            Column::new("run_id".into(), s(&|r| Some(r.run_id.clone()))),
            Column::new("source".into(), s(&|r| Some(r.source.clone()))),
            Column::new("line".into(), l(&|r| r.line)),
            Column::new("tool".into(), s(&|r| Some(r.tool.clone()))),
            Column::new("test".into(), s(&|r| Some(r.test.clone()))),
            Column::new("role".into(), s(&|r| Some(r.role.clone()))),
            Column::new("platform".into(), s(&|r| r.platform.clone())),
            Column::new("host".into(), s(&|r| Some(r.host.clone()))),
            Column::new("group".into(), s(&|r| Some(r.group.clone()))),
            Column::new("object".into(), s(&|r| Some(r.object.clone()))),
            Column::new("name".into(), s(&|r| Some(r.name.clone()))),
            Column::new("before".into(), n(&|r| r.before)),
            Column::new("after".into(), n(&|r| r.after)),
            Column::new("delta".into(), n(&|r| r.delta)),
            Column::new("note".into(), s(&|r| r.note.clone())),
            Column::new("counters_source".into(), s(&|r| Some(r.counters_source.clone()))),
            Column::new("counters_line".into(), l(&|r| r.counters_line)),
        ],
    )?)
}

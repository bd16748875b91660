//! The report's view model: every number pre-formatted, every chart rendered, every value with
//! its provenance. Templates only lay these out; they compute nothing.

use super::charts::{self, BarChart, Series, XAxis, XyChart};
use crate::compare::{self, Verdict};
use crate::config::Config;
use crate::format;
use crate::model::Run;
use crate::normalize::aggregate::{self, Aggregate};
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, Point};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One table cell: text, a CSS class (`better`, `worse`, `num`) and provenance for the tooltip.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub text: String,
    pub class: String,
    pub source: String,
}

impl Cell {
    pub(super) fn text(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            class: String::new(),
            source: String::new(),
        }
    }
    pub(super) fn num(v: f64, source: &str) -> Cell {
        Cell {
            text: format::num(v),
            class: "num".into(),
            source: source.to_string(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub id: String,
    pub title: String,
    /// Path of the SVG file beside the Markdown report.
    pub file: String,
    pub svg: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub id: String,
    pub title: String,
    pub charts: Vec<Chart>,
    pub table: Table,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlatformView {
    pub name: String,
    /// `key: value (source)` lines.
    pub facts: Vec<String>,
    pub runs: usize,
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    pub group: String,
    pub label: String,
    pub value: String,
    pub detail: String,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Context {
    pub title: String,
    pub generator: String,
    pub selection: String,
    pub by: String,
    pub baseline: String,
    pub tests: Vec<String>,
    pub platforms: Vec<PlatformView>,
    pub headlines: Vec<Headline>,
    pub findings: Vec<String>,
    pub sections: Vec<Section>,
    pub comparison: Table,
    /// Points some group lacks, one line per (test, role, MTU), instead of rows of `missing`.
    pub only_in_some: Vec<String>,
    /// Each test's headline point over the runs' order, when the selection holds a history.
    pub history: Option<super::history::History>,
    pub regressions: Option<Table>,
}

/// Options of a report.
pub struct Options<'a> {
    pub title: &'a str,
    pub by: &'a str,
    pub baseline: Option<&'a str>,
    pub filters: &'a [String],
    pub gate: Option<serde_json::Value>,
    /// What orders runs for the history section: `source` or `label:NAME`.
    pub history_by: &'a str,
}

/// Provenance that stays readable (and the HTML small) for points aggregated over many runs:
/// the first three `source:line`s and how many more.
fn provenance(sources: &[String]) -> String {
    let shown = sources
        .iter()
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match sources.len() {
        n if n > 3 => format!("{shown} and {} more", n - 3),
        _ => shown,
    }
}

pub(super) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn size_text(s: Option<u64>) -> String {
    s.map_or("-".into(), |b| charts::bytes_label(b as f64))
}

/// The rows worth charting for a test: client rows where there are any (perftest servers of
/// write/read tests repeat the client's numbers), else all.
fn prefer_client(points: Vec<Point>) -> Vec<Point> {
    if points.iter().any(|p| p.key.role == "client") {
        points
            .into_iter()
            .filter(|p| p.key.role == "client")
            .collect()
    } else {
        points
    }
}

/// Series per group (and per MTU when a group has several), from aggregates of one metric.
fn series_from(
    aggs: &[Aggregate],
    colours: &BTreeMap<String, usize>,
    dashed: bool,
    suffix: &str,
) -> Vec<Series> {
    let mut by_series: BTreeMap<(String, String), Vec<&Aggregate>> = BTreeMap::new();
    for a in aggs {
        by_series
            .entry((a.group.clone(), a.key.mtu.clone()))
            .or_default()
            .push(a);
    }
    let mtus_per_group: BTreeMap<&str, usize> =
        by_series.keys().fold(BTreeMap::new(), |mut m, (g, _)| {
            *m.entry(g.as_str()).or_default() += 1;
            m
        });
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    by_series
        .iter()
        .map(|((group, mtu), list)| {
            let mut list = list.clone();
            list.sort_by_key(|a| a.key.msg_size_bytes);
            let name = if mtus_per_group[group.as_str()] > 1 {
                format!("{group} MTU {mtu}{suffix}")
            } else {
                format!("{group}{suffix}")
            };
            // Each MTU of a group gets the next colour after the group's own.
            let nth = seen.entry(group.as_str()).or_default();
            let idx = colours.get(group).copied().unwrap_or(0) + *nth;
            *nth += 1;
            Series {
                name,
                points: list
                    .iter()
                    .filter_map(|a| Some((a.key.msg_size_bytes? as f64, a.median)))
                    .collect(),
                whiskers: list
                    .iter()
                    .filter(|a| a.n > 1)
                    .filter_map(|a| Some((a.key.msg_size_bytes? as f64, a.min, a.max)))
                    .collect(),
                dashed,
                colour: idx,
            }
        })
        .collect()
}

pub(super) fn chart(section: &str, kind: &str, title: String, svg: String) -> Chart {
    let id = format!("{}-{}", slug(section), kind);
    Chart {
        file: format!("charts/{id}.svg"),
        id,
        title,
        svg,
    }
}

/// A table of aggregated values: one row per point and group.
fn value_table(aggs: &[Aggregate]) -> Table {
    let headers = [
        "group", "role", "mtu", "size", "metric", "median", "n", "min", "max", "cv", "source",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows = aggs
        .iter()
        .map(|a| {
            let src = a.sources.first().cloned().unwrap_or_default();
            vec![
                Cell::text(&a.group),
                Cell::text(&a.key.role),
                Cell::text(&a.key.mtu),
                Cell::text(size_text(a.key.msg_size_bytes)),
                Cell::text(&a.key.metric),
                Cell::num(a.median, &provenance(&a.sources)),
                Cell::text(a.n.to_string()),
                Cell::num(a.min, ""),
                Cell::num(a.max, ""),
                Cell::text(format::pct(a.cv)),
                Cell::text(src),
            ]
        })
        .collect();
    Table { headers, rows }
}

fn metric_label(metric: &str) -> &'static str {
    match metric {
        "bw_avg_gbps" => "bandwidth, Gbit/s",
        "msg_rate_mpps" => "message rate, Mpps",
        "lat_typical_us" => "typical latency, µs",
        "lat_avg_us" => "average latency, µs",
        _ => "value",
    }
}

/// Builds the perftest / qperf section of one test: charts against message size and a table.
fn sized_section(
    test: &str,
    by_metric: &BTreeMap<&str, Vec<Point>>,
    colours: &BTreeMap<String, usize>,
    line_rates: &BTreeSet<String>,
) -> Result<Option<Section>> {
    let pick = |metric: &str| -> Result<Vec<Aggregate>> {
        let pts: Vec<Point> = by_metric
            .get(metric)
            .into_iter()
            .flatten()
            .filter(|p| p.key.test == test)
            .cloned()
            .collect();
        aggregate::aggregate(&prefer_client(pts))
    };
    let mut charts_out = Vec::new();
    let mut table_aggs = Vec::new();
    let bw = pick("bw_avg_gbps")?;
    let lat_metric = if pick("lat_typical_us")?.is_empty() {
        "lat_avg_us"
    } else {
        "lat_typical_us"
    };
    let lat = pick(lat_metric)?;
    if bw.iter().any(|a| a.key.msg_size_bytes.is_some()) {
        let hlines = line_rates
            .iter()
            .filter_map(|r| Some((r.parse::<f64>().ok()?, format!("line rate {r} Gbit/s"))))
            .collect();
        let svg = charts::render_xy(&XyChart {
            title: format!("{test}: bandwidth by message size"),
            x_axis: XAxis::Bytes,
            x_desc: "message size".into(),
            y_desc: "bandwidth (Gbit/s)".into(),
            y_log: false,
            series: series_from(&bw, colours, false, ""),
            hlines,
            ..Default::default()
        })?;
        charts_out.push(chart(
            test,
            "bandwidth",
            format!("{test}: bandwidth by message size"),
            svg,
        ));
        let rate = pick("msg_rate_mpps")?;
        if !rate.is_empty() {
            let svg = charts::render_xy(&XyChart {
                title: format!("{test}: message rate by message size"),
                x_axis: XAxis::Bytes,
                x_desc: "message size".into(),
                y_desc: "message rate (Mpps)".into(),
                y_log: false,
                series: series_from(&rate, colours, false, ""),
                hlines: vec![],
                ..Default::default()
            })?;
            charts_out.push(chart(
                test,
                "msgrate",
                format!("{test}: message rate by message size"),
                svg,
            ));
            table_aggs.extend(rate);
        }
        table_aggs.extend(bw.clone());
    }
    if lat.iter().any(|a| a.key.msg_size_bytes.is_some()) && bw.is_empty() {
        let mut series = series_from(&lat, colours, false, "");
        for (metric, suffix) in [("lat_p99_us", " p99"), ("lat_p999_us", " p99.9")] {
            let tail = pick(metric)?;
            series.extend(series_from(&tail, colours, true, suffix));
            table_aggs.extend(tail);
        }
        let svg = latency_by_size_svg(format!("{test}: latency by message size"), series)?;
        charts_out.push(chart(
            test,
            "latency",
            format!(
                "{test}: {} and tail percentiles by message size",
                metric_label(lat_metric)
            ),
            svg,
        ));
        table_aggs.extend(lat);
    } else if bw.is_empty() {
        table_aggs.extend(lat);
    }
    if table_aggs.is_empty() {
        return Ok(None);
    }
    table_aggs.sort_by(|a, b| {
        (&a.key.metric, &a.key.msg_size_bytes, &a.group).cmp(&(
            &b.key.metric,
            &b.key.msg_size_bytes,
            &b.group,
        ))
    });
    Ok(Some(Section {
        id: slug(test),
        title: test.to_string(),
        charts: charts_out,
        table: value_table(&table_aggs),
    }))
}

/// Percentiles a raw-sample chart can show, with the fewest samples that resolve each one.
const SAMPLE_PERCENTILES: [(f64, &str, usize); 5] = [
    (50.0, "p50", 1),
    (90.0, "p90", 10),
    (99.0, "p99", 100),
    (99.9, "p99.9", 1000),
    (99.99, "p99.99", 10000),
];

/// Latency percentiles computed from raw per-iteration samples (`linkperf bench`, perftest
/// `-H`/`-U`) by message size: tails of any order, not just the p99/p99.9 perftest prints.
/// Repeats of a point are pooled; client-side samples are preferred, as for the other charts.
/// A percentile is drawn only at sizes with enough samples to resolve it.
fn sample_percentile_chart(
    test: &str,
    selected: &[(Run, Platform)],
    by: &str,
    colours: &BTreeMap<String, usize>,
) -> Result<Option<Chart>> {
    let (series, counts) = sample_percentile_series(test, selected, by, colours);
    let (Some(lo), Some(hi)) = (counts.first(), counts.last()) else {
        return Ok(None);
    };
    let n = if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    };
    let title = format!("{test}: latency percentiles from raw samples ({n} per size)");
    let svg = latency_by_size_svg(title.clone(), series)?;
    Ok(Some(chart(test, "samples", title, svg)))
}

/// Latency against message size, on a log scale: a sweep's latencies span decades.
fn latency_by_size_svg(title: String, series: Vec<Series>) -> Result<String> {
    charts::render_xy(&XyChart {
        title,
        x_axis: XAxis::Bytes,
        x_desc: "message size".into(),
        y_desc: "latency (µs, log scale)".into(),
        y_log: true,
        series,
        hlines: vec![],
        ..Default::default()
    })
}

/// The series of [`sample_percentile_chart`] and the sample counts per (group, size) behind them.
fn sample_percentile_series(
    test: &str,
    selected: &[(Run, Platform)],
    by: &str,
    colours: &BTreeMap<String, usize>,
) -> (Vec<Series>, BTreeSet<usize>) {
    let with_samples: Vec<&(Run, Platform)> = selected
        .iter()
        .filter(|(r, _)| r.test == test)
        .filter(|(r, _)| r.measurements.iter().any(|m| !m.samples_us.is_empty()))
        .collect();
    let any_client = with_samples
        .iter()
        .any(|(r, _)| r.role == crate::model::Role::Client);
    let mut pooled: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for (r, p) in with_samples {
        if any_client && r.role != crate::model::Role::Client {
            continue;
        }
        let Some(group) = points::dimension(r, p, by) else {
            continue;
        };
        for m in &r.measurements {
            if let Some(size) = m.msg_size_bytes.filter(|_| !m.samples_us.is_empty()) {
                let e = pooled.entry(group.clone()).or_default().entry(size);
                e.or_default().extend_from_slice(&m.samples_us);
            }
        }
    }
    let mut series = Vec::new();
    let mut counts = BTreeSet::new();
    for (group, sizes) in &pooled {
        let base = colours.get(group).copied().unwrap_or(0);
        let sorted: BTreeMap<u64, Vec<f64>> = sizes
            .iter()
            .map(|(size, v)| (*size, crate::stats::samples::sorted(v)))
            .collect();
        counts.extend(sorted.values().map(Vec::len));
        for (i, (p, name, min_n)) in SAMPLE_PERCENTILES.iter().enumerate() {
            let points: Vec<(f64, f64)> = sorted
                .iter()
                .filter(|(_, v)| v.len() >= *min_n)
                .filter_map(|(size, v)| {
                    Some((*size as f64, crate::stats::samples::percentile(v, *p)?))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            series.push(Series {
                name: format!("{group} {name}"),
                points,
                whiskers: vec![],
                dashed: i > 0,
                colour: base + usize::from(i > 0),
            });
        }
    }
    (series, counts)
}

/// Throughput over time from interval rows (iperf `-i`, `linkperf bench --interval`): one line
/// per run (the first eight), its `SUM` stream when it has several.
fn timeline_chart(
    test: &str,
    runs: &[&(Run, Platform)],
    by: &str,
    colours: &BTreeMap<String, usize>,
) -> Result<Option<Chart>> {
    let mut series = Vec::new();
    for (i, (run, p)) in runs.iter().take(8).enumerate() {
        let has_sum = run
            .measurements
            .iter()
            .any(|m| m.stream.as_deref() == Some("SUM"));
        let points: Vec<(f64, f64)> = run
            .measurements
            .iter()
            .filter(|m| m.row_kind.as_deref() == Some("interval"))
            .filter(|m| !has_sum || m.stream.as_deref() == Some("SUM"))
            .filter_map(|m| Some((m.interval_end_s?, m.bw_avg_gbps?)))
            .collect();
        if points.len() < 2 {
            continue;
        }
        let group = points::dimension(run, p, by).unwrap_or_default();
        series.push(Series {
            name: format!(
                "{group} {} {}:{}",
                run.role.as_str(),
                run.source.rsplit('/').next().unwrap_or(""),
                run.line
            ),
            points,
            whiskers: vec![],
            dashed: false,
            colour: colours.get(&group).copied().unwrap_or(0) + i,
        });
    }
    if series.is_empty() {
        return Ok(None);
    }
    let svg = charts::render_xy(&XyChart {
        title: format!("{test}: throughput over time"),
        x_axis: XAxis::Seconds,
        x_desc: "time (s)".into(),
        y_desc: "throughput (Gbit/s)".into(),
        y_log: false,
        series,
        hlines: vec![],
        ..Default::default()
    })?;
    Ok(Some(chart(
        test,
        "timeline",
        format!("{test}: throughput over time (interval reports)"),
        svg,
    )))
}

/// iperf sections: aggregate throughput over time per run and per-stream totals.
fn iperf_section(
    test: &str,
    selected: &[(Run, Platform)],
    by: &str,
    colours: &BTreeMap<String, usize>,
) -> Result<Option<Section>> {
    let runs: Vec<&(Run, Platform)> = selected
        .iter()
        .filter(|(r, _)| r.test == test && !r.measurements.is_empty())
        .collect();
    if runs.is_empty() {
        return Ok(None);
    }
    let mut charts_out: Vec<Chart> = timeline_chart(test, &runs, by, colours)?
        .into_iter()
        .collect();
    // Fairness: the whole-test line of each stream of the run with the most streams.
    if let Some((run, _)) = runs.iter().max_by_key(|(r, _)| {
        r.facts
            .get("streams")
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(0)
    }) {
        let bars: Vec<(String, f64, usize)> = run
            .measurements
            .iter()
            .filter(|m| matches!(m.row_kind.as_deref(), Some("total" | "receiver")))
            .filter(|m| m.stream.as_deref().is_some_and(|s| !s.starts_with("SUM")))
            .filter_map(|m| Some((m.stream.clone()?, m.bw_avg_gbps?, 0)))
            .collect();
        if bars.len() > 1 {
            let svg = charts::render_bars(&BarChart {
                title: format!(
                    "{test}: per-stream totals ({}:{})",
                    run.source.rsplit('/').next().unwrap_or(""),
                    run.line
                ),
                x_desc: "stream".into(),
                y_desc: "throughput (Gbit/s)".into(),
                bars,
            })?;
            charts_out.push(chart(
                test,
                "streams",
                format!("{test}: per-stream totals (fairness)"),
                svg,
            ));
        }
    }
    let pts = points::points(
        &runs.iter().map(|rp| (*rp).clone()).collect::<Vec<_>>(),
        by,
        None,
    )?;
    let aggs = aggregate::aggregate(&pts)?;
    Ok(Some(Section {
        id: slug(test),
        title: test.to_string(),
        charts: charts_out,
        table: value_table(&aggs),
    }))
}

/// ibping: the distribution of reply times.
fn ibping_section(selected: &[(Run, Platform)]) -> Result<Option<Section>> {
    let samples: Vec<(f64, String)> = selected
        .iter()
        .filter(|(r, _)| r.tool == "ibping")
        .flat_map(|(r, _)| {
            r.measurements
                .iter()
                .filter(|m| m.row_kind.as_deref() == Some("sample"))
                .filter_map(move |m| Some((m.lat_avg_us?, format!("{}:{}", r.source, m.line))))
        })
        .collect();
    if samples.is_empty() {
        return Ok(None);
    }
    let (lo, hi) = samples
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), s| {
            (a.min(s.0), b.max(s.0))
        });
    let bins = 8usize;
    let width = ((hi - lo) / bins as f64).max(1e-9);
    let mut counts = vec![0usize; bins];
    for (v, _) in &samples {
        counts[(((v - lo) / width) as usize).min(bins - 1)] += 1;
    }
    let bars = counts
        .iter()
        .enumerate()
        .map(|(i, c)| (format::num(lo + width * (i as f64 + 0.5)), *c as f64, 0))
        .collect();
    let svg = charts::render_bars(&BarChart {
        title: "ibping: reply time distribution".into(),
        x_desc: "round trip (µs, bin centre)".into(),
        y_desc: "replies".into(),
        bars,
    })?;
    let table = Table {
        headers: vec!["reply".into(), "rtt (µs)".into(), "source".into()],
        rows: samples
            .iter()
            .enumerate()
            .map(|(i, (v, s))| {
                vec![
                    Cell::text((i + 1).to_string()),
                    Cell::num(*v, s),
                    Cell::text(s.clone()),
                ]
            })
            .collect(),
    };
    Ok(Some(Section {
        id: "ibping".into(),
        title: "ibping".into(),
        charts: vec![chart(
            "ibping",
            "rtt",
            "ibping: reply time distribution".into(),
            svg,
        )],
        table,
    }))
}

/// Builds the whole context.
pub fn build(selected: &[(Run, Platform)], config: &Config, opts: &Options<'_>) -> Result<Context> {
    let by = opts.by;
    let groups: BTreeSet<String> = selected
        .iter()
        .filter_map(|(r, p)| points::dimension(r, p, by))
        .collect();
    let colours: BTreeMap<String, usize> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.clone(), i * 3))
        .collect();
    let line_rates: BTreeSet<String> = selected
        .iter()
        .filter_map(|(_, p)| p.get("link_speed_gbps").map(|r| r.value.clone()))
        .collect();

    // Platforms with their facts and sources.
    let mut platforms: BTreeMap<String, (BTreeSet<String>, usize, BTreeSet<String>)> =
        BTreeMap::new();
    for (r, p) in selected {
        let Some(g) = points::dimension(r, p, by) else {
            continue;
        };
        let e = platforms.entry(g).or_default();
        e.1 += 1;
        e.2.insert(r.source.clone());
        for (k, v) in p {
            if k != by {
                e.0.insert(format!("{k}: {} ({})", v.value, v.from.as_str()));
            }
        }
        if let Some(d) = &r.device {
            e.0.insert(format!("device: {d}"));
        }
    }
    let platforms = platforms
        .into_iter()
        .map(|(name, (facts, runs, sources))| PlatformView {
            name,
            facts: facts.into_iter().collect(),
            runs,
            sources: sources.into_iter().collect(),
        })
        .collect();

    // Sections, one per test.
    let tests: BTreeSet<(String, String)> = selected
        .iter()
        .filter(|(r, _)| r.tool != "devinfo" && !r.measurements.is_empty())
        .map(|(r, _)| (r.tool.clone(), r.test.clone()))
        .collect();
    // Points of each charted metric, computed once for all sections.
    let by_metric: BTreeMap<&str, Vec<Point>> = [
        "bw_avg_gbps",
        "msg_rate_mpps",
        "lat_typical_us",
        "lat_avg_us",
        "lat_p99_us",
        "lat_p999_us",
    ]
    .into_iter()
    .map(|m| Ok((m, points::points(selected, by, Some(m))?)))
    .collect::<Result<_>>()?;
    let mut sections = Vec::new();
    // A sized section covers every tool that ran the test (perftest and `linkperf bench` both
    // run `ib_write_bw`): one section per test name.
    let mut sized_done = BTreeSet::new();
    for (tool, test) in &tests {
        let s = match tool.as_str() {
            "iperf2" | "iperf3" => iperf_section(test, selected, by, &colours)?,
            "ibping" => None,
            _ if !sized_done.insert(test.as_str()) => None,
            _ => sized_section(test, &by_metric, &colours, &line_rates)?
                .map(|mut s| -> Result<Section> {
                    let runs: Vec<&(Run, Platform)> = selected
                        .iter()
                        .filter(|(r, _)| &r.test == test)
                        .filter(|(r, _)| {
                            r.measurements
                                .iter()
                                .any(|m| m.row_kind.as_deref() == Some("interval"))
                        })
                        .collect();
                    s.charts.extend(timeline_chart(test, &runs, by, &colours)?);
                    s.charts
                        .extend(sample_percentile_chart(test, selected, by, &colours)?);
                    Ok(s)
                })
                .transpose()?,
        };
        sections.extend(s);
    }
    sections.extend(ibping_section(selected)?);

    // Comparison of every group against the baseline, with the metric's direction.
    let cmp_points = points::points(selected, by, None)?;
    let aggs = aggregate::aggregate(&prefer_client(cmp_points))?;
    let comparison = compare::compare(
        aggs,
        &compare::Options {
            by,
            baseline: opts.baseline,
            same_within: 0.01,
            line_rate_floor: config.compare.line_rate_finding_below,
            noisy_cv: config.compare.noisy_cv_above,
        },
    )?;
    let mut headers: Vec<String> = ["test", "role", "mtu", "size", "metric"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for g in &comparison.groups {
        headers.push(g.clone());
        if g != &comparison.baseline {
            headers.push(format!("{g} vs {}", comparison.baseline));
        }
    }
    let (complete, partial) = compare::fold(&comparison);
    let only_in_some: Vec<String> = partial.iter().map(compare::Partial::describe).collect();
    let rows = complete
        .iter()
        .map(|r| {
            let mut row = vec![
                Cell::text(&r.key.test),
                Cell::text(&r.key.role),
                Cell::text(&r.key.mtu),
                Cell::text(size_text(r.key.msg_size_bytes)),
                Cell::text(&r.key.metric),
            ];
            for c in &r.cells {
                row.push(match &c.stats {
                    Some(s) => Cell::num(s.median, &provenance(&s.sources)),
                    None => Cell::text("missing"),
                });
                if c.group != comparison.baseline {
                    let class = match c.verdict {
                        Verdict::Better => "better",
                        Verdict::Worse => "worse",
                        _ => "",
                    };
                    let text = match c.ratio {
                        Some(ratio)
                            if matches!(
                                c.verdict,
                                Verdict::Better | Verdict::Worse | Verdict::Same
                            ) =>
                        {
                            format!("{} {}", format::ratio(ratio), c.verdict.as_str())
                        }
                        _ => c.verdict.as_str().to_string(),
                    };
                    row.push(Cell {
                        text,
                        class: class.into(),
                        source: String::new(),
                    });
                }
            }
            row
        })
        .collect();

    // Headlines: per group, from perftest points of each metric (iperf separately).
    let headline_aggs = |metric: &str, tool: &str| -> Result<Vec<Aggregate>> {
        let pts = points::points(selected, by, Some(metric))?
            .into_iter()
            .filter(|p| p.key.tool == tool)
            .collect();
        aggregate::aggregate(&prefer_client(pts))
    };
    let (bw_aggs, rate_aggs) = (
        headline_aggs("bw_avg_gbps", "perftest")?,
        headline_aggs("msg_rate_mpps", "perftest")?,
    );
    let (lat_aggs, tcp_aggs) = (
        headline_aggs("lat_typical_us", "perftest")?,
        headline_aggs("bw_avg_gbps", "iperf2")?,
    );
    let tcp3_aggs = headline_aggs("bw_avg_gbps", "iperf3")?;
    let mut headlines = Vec::new();
    for g in &comparison.groups {
        let best = |aggs: &[Aggregate], max_size: Option<u64>, lowest: bool| -> Option<Aggregate> {
            aggs.iter()
                .filter(|a| {
                    &a.group == g
                        && max_size.is_none_or(|m| a.key.msg_size_bytes.is_some_and(|s| s <= m))
                })
                .max_by(|a, b| {
                    if lowest {
                        b.median.total_cmp(&a.median)
                    } else {
                        a.median.total_cmp(&b.median)
                    }
                })
                .cloned()
        };
        let mut push = |label: &str, a: Option<Aggregate>, unit: &str, with_share: bool| {
            let Some(a) = a else { return };
            let share = a
                .link_speed_gbps
                .filter(|_| with_share)
                .map(|s| {
                    format!(
                        ", {} of the {s} Gbit/s line rate",
                        format::pct(a.median / s)
                    )
                })
                .unwrap_or_default();
            let at = a
                .key
                .msg_size_bytes
                .map(|s| format!(" at {}", size_text(Some(s))))
                .unwrap_or_default();
            headlines.push(Headline {
                group: g.clone(),
                label: label.into(),
                value: format!("{} {unit}", format::num(a.median)),
                detail: format!("{} {} MTU {}{at}{share}", a.key.test, a.key.role, a.key.mtu),
                source: provenance(&a.sources),
            });
        };
        push(
            "peak RDMA bandwidth",
            best(&bw_aggs, None, false),
            "Gbit/s",
            true,
        );
        push(
            "best small-message rate",
            best(&rate_aggs, Some(64), false),
            "Mpps",
            false,
        );
        push(
            "lowest latency (typical)",
            best(&lat_aggs, None, true),
            "µs",
            false,
        );
        push(
            "TCP throughput (iperf)",
            best(&tcp_aggs, None, false).or_else(|| best(&tcp3_aggs, None, false)),
            "Gbit/s",
            true,
        );
    }
    let mut findings: Vec<String> = comparison
        .findings
        .iter()
        .map(|f| format!("{}: {} ({})", f.group, f.message, provenance(&f.sources)))
        .collect();
    findings.extend(mtu_findings(selected, by)?);

    let regressions = opts.gate.as_ref().map(gate_table);
    Ok(Context {
        title: opts.title.to_string(),
        generator: format!("linkperf {}", env!("CARGO_PKG_VERSION")),
        selection: if opts.filters.is_empty() {
            "all stored runs".into()
        } else {
            opts.filters.join(", ")
        },
        by: by.to_string(),
        baseline: comparison.baseline.clone(),
        tests: tests.iter().map(|(_, t)| t.clone()).collect(),
        platforms,
        headlines,
        findings,
        sections,
        comparison: Table { headers, rows },
        only_in_some,
        history: super::history::section(selected, config, opts.history_by)?,
        regressions,
    })
}

/// "MTU 1024 costs 6.3 % bandwidth" for groups measured at several MTUs (largest message).
fn mtu_findings(selected: &[(Run, Platform)], by: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let group_of: BTreeMap<&str, String> = selected
        .iter()
        .filter_map(|(r, p)| Some((r.run_id.as_str(), points::dimension(r, p, by)?)))
        .collect();
    let all = prefer_client(points::points(selected, "mtu", Some("bw_avg_gbps"))?);
    let groups: BTreeSet<&String> = group_of.values().collect();
    for g in groups {
        let mine: Vec<Point> = all
            .iter()
            .filter(|p| group_of.get(p.run_id.as_str()) == Some(g))
            .cloned()
            .collect();
        let aggs = aggregate::aggregate(&mine)?;
        let mut by_test: BTreeMap<&str, Vec<&Aggregate>> = BTreeMap::new();
        for a in &aggs {
            by_test.entry(a.key.test.as_str()).or_default().push(a);
        }
        for (test, list) in by_test {
            let Some(size) = list.iter().filter_map(|a| a.key.msg_size_bytes).max() else {
                continue;
            };
            let at: Vec<&&Aggregate> = list
                .iter()
                .filter(|a| a.key.msg_size_bytes == Some(size))
                .collect();
            let (Some(lo), Some(hi)) = (
                at.iter().min_by(|a, b| {
                    a.group
                        .parse::<f64>()
                        .unwrap_or(0.0)
                        .total_cmp(&b.group.parse::<f64>().unwrap_or(0.0))
                }),
                at.iter().max_by(|a, b| {
                    a.group
                        .parse::<f64>()
                        .unwrap_or(0.0)
                        .total_cmp(&b.group.parse::<f64>().unwrap_or(0.0))
                }),
            ) else {
                continue;
            };
            if lo.group != hi.group && hi.median > 0.0 {
                let cost = (hi.median - lo.median) / hi.median;
                out.push(format!(
                    "{g}: MTU {} costs {} bandwidth against MTU {} on {test} at {} ({} vs {} Gbit/s)",
                    lo.group,
                    format::pct(cost),
                    hi.group,
                    size_text(Some(size)),
                    format::num(lo.median),
                    format::num(hi.median)
                ));
            }
        }
    }
    Ok(out)
}

/// The regressions section from a `linkperf gate --json` file.
fn gate_table(gate: &serde_json::Value) -> Table {
    let headers = [
        "verdict",
        "test",
        "role",
        "size",
        "metric",
        "baseline",
        "current",
        "change",
        "config change",
        "why",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows = gate["points"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| matches!(p["outcome"].as_str(), Some("regressed" | "missing")))
        .map(|p| {
            let f = |k: &str| p[k].as_f64().map_or("-".into(), format::num);
            vec![
                Cell {
                    text: p["outcome"].as_str().unwrap_or("").into(),
                    class: "worse".into(),
                    source: String::new(),
                },
                Cell::text(p["test"].as_str().unwrap_or("")),
                Cell::text(p["role"].as_str().unwrap_or("")),
                Cell::text(size_text(p["msg_size_bytes"].as_u64())),
                Cell::text(p["metric"].as_str().unwrap_or("")),
                Cell::text(f("baseline_median")),
                Cell::text(f("current_median")),
                Cell::text(
                    p["change"]
                        .as_f64()
                        .map_or("-".into(), |c| format!("{:+.1} %", c * 100.0)),
                ),
                Cell::text(
                    p["config_changes"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str())
                                .collect::<Vec<_>>()
                                .join("; ")
                        })
                        .unwrap_or_default(),
                ),
                Cell::text(p["reason"].as_str().unwrap_or("")),
            ]
        })
        .collect();
    Table { headers, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab_runs(file: &str) -> Vec<(Run, Platform)> {
        let path = format!("fixtures/perftest/rxe-lab/{file}");
        let bytes = std::fs::read(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        crate::ingest::parse_bytes(&path, &bytes)
            .runs
            .into_iter()
            .map(|r| (r, Platform::new()))
            .collect()
    }

    #[test]
    fn raw_sample_percentiles_by_size_prefer_the_client() {
        let mut runs = lab_runs("read_lat-sweep-unsorted-client.txt");
        runs.extend(lab_runs("write_lat-unsorted-server.txt"));
        let colours = BTreeMap::from([("perftest".to_string(), 3)]);
        let (series, counts) = sample_percentile_series("ib_read_lat", &runs, "tool", &colours);
        // Five samples per size resolve the median only.
        assert_eq!(counts, BTreeSet::from([5]));
        assert_eq!(series.len(), 1);
        assert_eq!(
            (series[0].name.as_str(), series[0].colour),
            ("perftest p50", 3)
        );
        assert_eq!(series[0].points.len(), 23);
        // 2 B: 2449.19 253.873 113.246 95.412 89.6668 → nearest-rank median 113.246.
        assert_eq!(series[0].points[0], (2.0, 113.246));

        // 39 samples resolve p90 too; the tails are dashed in the group's second colour.
        let (series, _) = sample_percentile_series("ib_write_lat", &runs, "tool", &colours);
        let names: Vec<_> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["perftest p50", "perftest p90"]);
        assert!(series[1].dashed && series[1].colour == 4);
        let client_only = lab_runs("write_lat-unsorted-client.txt");
        let mut both = client_only.clone();
        both.extend(lab_runs("write_lat-unsorted-server.txt"));
        let (from_both, _) = sample_percentile_series("ib_write_lat", &both, "tool", &colours);
        let (from_client, _) =
            sample_percentile_series("ib_write_lat", &client_only, "tool", &colours);
        assert_eq!(from_both[0].points, from_client[0].points);

        assert!(
            sample_percentile_series("ib_send_bw", &runs, "tool", &colours)
                .0
                .is_empty()
        );
    }
}

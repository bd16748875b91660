//! Sections of sized tests (perftest and the native runner): bandwidth, message rate and
//! latency against message size, one series per group, with a table of the values.

use super::samples::latency_by_size_svg;
use super::view::{chart, provenance, size_text, slug, Cell, Section, Table};
use crate::format;
use crate::normalize::aggregate::{self, Aggregate};
use crate::normalize::points::{prefer_client, Point};
use crate::report::charts::{self, Series, XAxis, XyChart};
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};

/// The metrics the sized sections chart.
pub(super) const CHARTED_METRICS: [&str; 6] = [
    "bw_avg_gbps",
    "msg_rate_mpps",
    "lat_typical_us",
    "lat_avg_us",
    "lat_p99_us",
    "lat_p999_us",
];

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

/// A table of aggregated values: one row per point and group.
pub(super) fn value_table(aggs: &[Aggregate]) -> Table {
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
pub(super) fn sized_section(
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

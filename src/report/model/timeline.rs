//! Sections and charts over time: iperf throughput per interval, `linkperf bench --interval`
//! slices, and ibping replies.

use super::sized::value_table;
use super::view::{chart, slug, Cell, Chart, Section, Table};
use crate::format;
use crate::model::Run;
use crate::normalize::aggregate;
use crate::normalize::platform::Platform;
use crate::normalize::points;
use crate::report::charts::{self, BarChart, Series, XAxis, XyChart};
use anyhow::Result;
use std::collections::BTreeMap;

/// Throughput over time from interval rows (iperf `-i`, `linkperf bench --interval`): one line
/// per run (the first eight), its `SUM` stream when it has several.
pub(super) fn timeline_chart(
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
pub(super) fn iperf_section(
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
pub(super) fn ibping_section(selected: &[(Run, Platform)]) -> Result<Option<Section>> {
    let samples: Vec<(f64, String)> = selected
        .iter()
        .filter(|(r, _)| r.tool == crate::model::Tool::Ibping)
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

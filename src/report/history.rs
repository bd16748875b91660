//! The report's history section: when a selection holds runs of the same point at four or more
//! positions of an order (nights by a label, builds, files by name), one chart per test of its
//! headline point over that order — median and min–max of the repeats at each position, the
//! change points PELT finds, the first segment's mean and the gate's threshold from it — and a
//! table of every series' latest step, judged like a gate decision.

use super::charts::{self, Series as Line, XAxis, XyChart};
use super::model::{chart, Cell, Chart, Table};
use crate::config::Config;
use crate::format;
use crate::model::Run;
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, Direction};
use crate::trend::{self, Series};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Fewest positions a history needs: two segments of two, the least PELT splits.
const MIN_POSITIONS: usize = 4;

#[derive(Debug, Clone, Serialize)]
pub struct History {
    /// What orders the runs (`night`, `source`).
    pub order_by: String,
    pub charts: Vec<Chart>,
    pub steps: Table,
}

/// The series a test's chart shows, per platform: the client side where there is one, the
/// largest message size for bandwidth and rate, the smallest for latency.
fn headline<'a>(series: &[&'a Series]) -> Vec<&'a Series> {
    let has_client = series.iter().any(|s| s.key.role == "client");
    let mut best: BTreeMap<&str, &Series> = BTreeMap::new();
    for s in series
        .iter()
        .filter(|s| !has_client || s.key.role == "client")
    {
        let better = |current: &Series| {
            let higher =
                points::direction(&s.key.metric).is_ok_and(|d| d == Direction::HigherIsBetter);
            let (a, b) = (s.key.msg_size_bytes, current.key.msg_size_bytes);
            if higher {
                a > b
            } else {
                a < b
            }
        };
        match best.get(s.platform.as_str()) {
            Some(current) if !better(current) => {}
            _ => {
                best.insert(&s.platform, s);
            }
        }
    }
    best.into_values().collect()
}

/// The median, minimum and maximum of the values at each position of `order`.
fn per_position(s: &Series, order: &[String]) -> Vec<(f64, f64, f64, f64)> {
    let mut at: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (o, v, _) in &s.values {
        at.entry(o.as_str()).or_default().push(*v);
    }
    order
        .iter()
        .enumerate()
        .filter_map(|(i, o)| {
            let vs = at.get(o.as_str())?;
            let min = vs.iter().copied().fold(f64::INFINITY, f64::min);
            let max = vs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Some((i as f64, crate::stats::median(vs), min, max))
        })
        .collect()
}

fn test_chart(test: &str, shown: &[&Series], axis: &str, config: &Config) -> Result<Chart> {
    let order: Vec<String> = {
        let mut o: Vec<String> = shown
            .iter()
            .flat_map(|s| s.values.iter().map(|v| v.0.clone()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        o.sort_by(|a, b| trend::order_cmp(a, b));
        o
    };
    let position = |o: &str| order.iter().position(|x| x == o).unwrap_or(0) as f64;
    let mut lines = Vec::new();
    let (mut hlines, mut vlines) = (Vec::new(), Vec::new());
    for (colour, s) in shown.iter().enumerate() {
        let at = per_position(s, &order);
        let size = s
            .key
            .msg_size_bytes
            .map(|b| format!(" {}", format::bytes_label(b as f64)));
        lines.push(Line {
            name: format!("{}{}", s.platform, size.unwrap_or_default()),
            points: at.iter().map(|p| (p.0, p.1)).collect(),
            whiskers: at.iter().map(|p| (p.0, p.2, p.3)).collect(),
            dashed: false,
            colour,
        });
        for c in &s.change_points {
            vlines.push((
                position(&s.values[c.index].0),
                format!("step at {}", s.values[c.index].0),
            ));
        }
        // The first segment's mean and where the gate's threshold puts the bad side of it.
        let first_end = s.change_points.first().map_or(s.values.len(), |c| c.index);
        let base = s.values[..first_end].iter().map(|v| v.1).sum::<f64>() / first_end as f64;
        let rule = crate::gate::rule_for(
            &config.gate,
            &s.key.test,
            &s.key.metric,
            s.key.msg_size_bytes,
        );
        let bad = match points::direction(&s.key.metric) {
            Ok(Direction::LowerIsBetter) => base * (1.0 + rule.threshold),
            _ => base * (1.0 - rule.threshold),
        };
        hlines.push((base, format!("{}: first mean", s.platform)));
        hlines.push((
            bad,
            format!("{}: gate {:.0} %", s.platform, rule.threshold * 100.0),
        ));
    }
    let metric = &shown[0].key.metric;
    let svg = charts::render_xy(&XyChart {
        title: format!("{test}: {metric} by {axis}"),
        x_axis: XAxis::Order,
        x_desc: axis.to_string(),
        y_desc: metric.clone(),
        y_log: false,
        series: lines,
        hlines,
        vlines,
        x_labels: order,
    })?;
    Ok(chart(
        test,
        "history",
        format!("{test}: {metric} over {axis}"),
        svg,
    ))
}

/// The history section, when some point spans enough positions of `order_by`.
pub fn section(
    selected: &[(Run, Platform)],
    config: &Config,
    order_by: &str,
) -> Result<Option<History>> {
    let all = trend::series(
        selected,
        &trend::Options {
            order_by,
            metric: None,
            pair_by: crate::gate::DEFAULT_PAIR_BY,
            min_change: 0.005,
        },
    )?;
    let long: Vec<&Series> = all
        .iter()
        .filter(|s| trend::positions(s) >= MIN_POSITIONS)
        .collect();
    if long.is_empty() {
        return Ok(None);
    }
    let axis = order_by.strip_prefix("label:").unwrap_or(order_by);
    let mut by_test: BTreeMap<(&str, &str), Vec<&Series>> = BTreeMap::new();
    for s in &long {
        by_test
            .entry((s.key.test.as_str(), s.key.metric.as_str()))
            .or_default()
            .push(s);
    }
    let mut charts_out = Vec::new();
    for ((test, _), series) in &by_test {
        charts_out.push(test_chart(test, &headline(series), axis, config)?);
    }
    let headers = [
        "platform",
        "test",
        "role",
        "size",
        "metric",
        "step at",
        "before",
        "after",
        "change",
        "verdict",
        "config change",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut rows = Vec::new();
    for s in &long {
        let Some(step) = trend::latest_step(s, &config.gate) else {
            continue;
        };
        let (verdict, class) = if step.regression {
            ("regression", "worse")
        } else if step.worse_by < -step.threshold {
            ("improvement", "better")
        } else {
            ("within threshold", "")
        };
        rows.push(vec![
            Cell::text(&s.platform),
            Cell::text(&s.key.test),
            Cell::text(&s.key.role),
            Cell::text(
                s.key
                    .msg_size_bytes
                    .map_or("-".into(), |b| format::bytes_label(b as f64)),
            ),
            Cell::text(&s.key.metric),
            Cell::text(format!("{axis}={}", step.order)),
            Cell::num(step.mean_before, &step.source),
            Cell::num(step.mean_after, &step.source),
            Cell::text(format!("{:+.1} %", step.relative_change * 100.0)),
            Cell {
                text: verdict.into(),
                class: class.into(),
                source: String::new(),
            },
            Cell::text(step.config_changes.join("; ")),
        ]);
    }
    Ok(Some(History {
        order_by: axis.to_string(),
        charts: charts_out,
        steps: Table { headers, rows },
    }))
}

//! `linkperf history`: each point's metric over the stored runs, in a chosen order, with the
//! change points PELT finds (see `changepoint`), so a slow drift shows even when every step is
//! under the gate's threshold.

use crate::changepoint::{self, ChangePoint};
use crate::cli::HistoryArgs;
use crate::config::Config;
use crate::format;
use crate::normalize::points::{self, PointKey};
use crate::ExitStatus;
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// (order value, metric value, source:line).
type HistoryValue = (String, f64, String);

#[derive(Debug, Serialize)]
struct Series {
    platform: String,
    key: PointKey,
    /// (order value, metric value, source:line) in history order.
    values: Vec<HistoryValue>,
    change_points: Vec<ChangePoint>,
}

pub fn run(store_dir: &Path, config: &Config, args: &HistoryArgs) -> Result<ExitStatus> {
    if let Some(m) = &args.metric {
        points::direction(m)?;
    }
    let selected = super::selection::load(store_dir, config, &args.filters)?;
    if selected.is_empty() {
        bail!(
            "the selection is empty: no stored run matches {:?}",
            args.filters
        );
    }
    let order_of =
        |run: &crate::model::Run, p: &crate::normalize::platform::Platform| -> Option<String> {
            match args.order_by.as_str() {
                "source" => Some(format!("{}:{:08}", run.source, run.line)),
                other => points::dimension(run, p, other),
            }
        };
    let runs_by_id: BTreeMap<&str, &(crate::model::Run, crate::normalize::platform::Platform)> =
        selected
            .iter()
            .map(|rp| (rp.0.run_id.as_str(), rp))
            .collect();
    let pts = points::points(&selected, "platform", args.metric.as_deref())?;
    let mut series: BTreeMap<(String, PointKey), Vec<HistoryValue>> = BTreeMap::new();
    for p in &pts {
        let (run, platform) = runs_by_id[p.run_id.as_str()];
        let Some(order) = order_of(run, platform) else {
            continue;
        };
        let mut key = p.key.clone();
        if args.order_by == "mtu" {
            // The order dimension is the axis of the series, not part of its key.
            key.mtu = "*".into();
        }
        series.entry((p.group.clone(), key)).or_default().push((
            order,
            p.value,
            format!("{}:{}", p.source, p.line),
        ));
    }
    let mut out = Vec::new();
    for ((platform, key), mut values) in series {
        // Numbers (MTU, dates as numbers) in numeric order, text in text order.
        values.sort_by(|a, b| match (a.0.parse::<f64>(), b.0.parse::<f64>()) {
            (Ok(x), Ok(y)) => x.total_cmp(&y),
            _ => a.0.cmp(&b.0),
        });
        let xs: Vec<f64> = values.iter().map(|v| v.1).collect();
        let change_points = changepoint::detect(&xs, 2, args.min_change);
        if args.all || !change_points.is_empty() {
            out.push(Series {
                platform,
                key,
                values,
                change_points,
            });
        }
    }
    let mut stdout = std::io::stdout().lock();
    if args.json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&out)?)?;
        return Ok(ExitStatus::Success);
    }
    for s in &out {
        let k = &s.key;
        writeln!(
            stdout,
            "{} {} {} {} B {} ({} runs): {}",
            s.platform,
            k.test,
            k.role,
            k.msg_size_bytes.map_or("-".into(), |v| v.to_string()),
            k.metric,
            s.values.len(),
            s.values
                .iter()
                .map(|v| format::num(v.1))
                .collect::<Vec<_>>()
                .join(" ")
        )?;
        for c in &s.change_points {
            writeln!(
                stdout,
                "  change point before run {} ({}): {} → {} ({:+.1} %)",
                c.index + 1,
                s.values[c.index].2,
                format::num(c.mean_before),
                format::num(c.mean_after),
                c.relative_change * 100.0
            )?;
        }
    }
    if out.is_empty() {
        writeln!(
            stdout,
            "no change points found (use --all to list every series)"
        )?;
    }
    Ok(ExitStatus::Success)
}

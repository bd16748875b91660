//! A metric over the runs of each point in a chosen order (a label such as `night`, the MTU, or
//! the source path and line), with the change points PELT finds ([`crate::changepoint`]), and
//! whether the latest step is a regression beyond the gate's threshold. `history` prints and
//! gates on it; the report charts it.
//!
//! Points pair as in `gate`: by test, role, connection type, QPs, message size and platform by
//! default, so a configuration change between runs (MTU 4096 one night, 1024 the next) is a step
//! in one series, named with the change, not two series.

use crate::changepoint::{self, ChangePoint};
use crate::config::GateConfig;
use crate::gate;
use crate::model::Run;
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, Direction, PointKey};
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Keys a series can be split by (`--pair-by`): the gate's, less host and device.
pub const PAIR_KEYS: &[&str] = gate::PAIR_KEYS.split_at(7).0;

/// How series are formed.
pub struct Options<'a> {
    /// `source` (path, then line), `mtu`, or any dimension `points::dimension` knows
    /// (`label:NAME`, a platform key).
    pub order_by: &'a str,
    pub metric: Option<&'a str>,
    pub pair_by: &'a [&'a str],
    /// Smallest relative mean shift reported (0.005 = 0.5 %).
    pub min_change: f64,
}

/// (order value, metric value, source:line).
pub type HistoryValue = (String, f64, String);

/// One point's values in history order.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub platform: String,
    /// The pairing key; parts not in `--pair-by` are `*` (or no size).
    pub key: PointKey,
    pub values: Vec<HistoryValue>,
    pub change_points: Vec<ChangePoint>,
    /// Configuration facts of each value's run (MTU, TX depth, inline size, firmware, driver).
    #[serde(skip)]
    pub configs: Vec<Vec<(&'static str, String)>>,
}

/// The latest change point of a series, judged like a gate decision.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Index of the first value after the step.
    pub index: usize,
    /// Its order value (`09` for `--order-by label:night`) and `source:line`.
    pub order: String,
    pub source: String,
    pub mean_before: f64,
    pub mean_after: f64,
    pub relative_change: f64,
    /// The change in the bad direction (positive = worse).
    pub worse_by: f64,
    pub threshold: f64,
    /// A step in the bad direction beyond the threshold.
    pub regression: bool,
    /// Configuration that differs across the step, e.g. `mtu 4096 → 1024`.
    pub config_changes: Vec<String>,
}

/// Numbers (MTU, nights, dates as numbers) in numeric order, text in text order.
pub fn order_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    }
}

/// Every series of the selection, sorted by platform and key.
pub fn series(selected: &[(Run, Platform)], opts: &Options<'_>) -> Result<Vec<Series>> {
    let order_of = |run: &Run, p: &Platform| -> Option<String> {
        match opts.order_by {
            "source" => Some(format!("{}:{:08}", run.source, run.line)),
            other => points::dimension(run, p, other),
        }
    };
    let has = |k: &str| opts.pair_by.contains(&k);
    let star = |k: &str, v: String| if has(k) { v } else { "*".to_string() };
    let runs_by_id: BTreeMap<&str, &(Run, Platform)> = selected
        .iter()
        .map(|rp| (rp.0.run_id.as_str(), rp))
        .collect();
    type Entry = (HistoryValue, Vec<(&'static str, String)>);
    let mut grouped: BTreeMap<(String, PointKey), Vec<Entry>> = BTreeMap::new();
    for p in points::points(selected, "platform", opts.metric)? {
        let (run, platform) = runs_by_id[p.run_id.as_str()];
        let Some(order) = order_of(run, platform) else {
            continue;
        };
        let key = PointKey {
            tool: p.key.tool,
            test: star("test", p.key.test),
            role: star("role", p.key.role),
            connection_type: star("connection_type", p.key.connection_type),
            // The order dimension is the axis of the series, never part of its key.
            mtu: if opts.order_by == "mtu" {
                "*".into()
            } else {
                star("mtu", p.key.mtu)
            },
            qps: star("qps", p.key.qps),
            msg_size_bytes: p.key.msg_size_bytes.filter(|_| has("msg_size")),
            metric: p.key.metric,
        };
        grouped
            .entry((star("platform", p.group), key))
            .or_default()
            .push((
                (order, p.value, format!("{}:{}", p.source, p.line)),
                gate::config_facts(run, platform),
            ));
    }
    Ok(grouped
        .into_iter()
        .map(|((platform, key), mut entries)| {
            // Stable: repeats at one order value keep their source order.
            entries.sort_by(|a, b| order_cmp(&a.0 .0, &b.0 .0));
            let xs: Vec<f64> = entries.iter().map(|e| e.0 .1).collect();
            let change_points = changepoint::detect(&xs, 2, opts.min_change);
            let (values, configs) = entries.into_iter().unzip();
            Series {
                platform,
                key,
                values,
                change_points,
                configs,
            }
        })
        .collect())
}

/// Distinct order values of a series (how many nights, builds, MTUs it spans).
pub fn positions(s: &Series) -> usize {
    s.values
        .iter()
        .map(|v| v.0.as_str())
        .collect::<BTreeSet<_>>()
        .len()
}

/// The latest change point of `s` as a gate would judge it: its direction and the gate's
/// threshold for the metric at that test and size.
pub fn latest_step(s: &Series, config: &GateConfig) -> Option<Step> {
    let last = s.change_points.last()?;
    let direction = points::direction(&s.key.metric).ok()?;
    let worse_by = match direction {
        Direction::HigherIsBetter => -last.relative_change,
        Direction::LowerIsBetter => last.relative_change,
    };
    let rule = gate::rule_for(config, &s.key.test, &s.key.metric, s.key.msg_size_bytes);
    // The segment before the step starts at the previous change point.
    let start = s.change_points.iter().rev().nth(1).map_or(0, |c| c.index);
    let facts = |range: std::ops::Range<usize>| {
        let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for config in &s.configs[range] {
            for (k, v) in config {
                out.entry(k).or_default().insert(v.as_str());
            }
        }
        out
    };
    let (before, after) = (facts(start..last.index), facts(last.index..s.values.len()));
    let list = |v: &BTreeSet<&str>| v.iter().copied().collect::<Vec<_>>().join("/");
    let config_changes = before
        .iter()
        .filter_map(|(k, b)| {
            let a = after.get(k)?;
            (a != b).then(|| format!("{k} {} → {}", list(b), list(a)))
        })
        .collect();
    let (order, _, source) = &s.values[last.index];
    Some(Step {
        index: last.index,
        order: order.clone(),
        source: source.clone(),
        mean_before: last.mean_before,
        mean_after: last.mean_after,
        relative_change: last.relative_change,
        worse_by,
        threshold: rule.threshold,
        regression: worse_by > rule.threshold,
        config_changes,
    })
}

/// `kunpeng920 ib_write_bw client 65536 B bw_avg_gbps`.
pub fn describe(s: &Series) -> String {
    let k = &s.key;
    let mut parts = vec![s.platform.as_str(), k.test.as_str(), k.role.as_str()];
    if k.connection_type != "*" && k.connection_type != "-" {
        parts.push(&k.connection_type);
    }
    let size = k.msg_size_bytes.map(|b| format!("{b} B"));
    let mtu = (k.mtu != "*" && k.mtu != "-").then(|| format!("MTU {}", k.mtu));
    let mut out = parts.join(" ");
    for extra in [mtu, size].into_iter().flatten() {
        out.push(' ');
        out.push_str(&extra);
    }
    out.push(' ');
    out.push_str(&k.metric);
    out
}

//! Pairing: the points of a baseline and a current selection that share a key (`--pair-by`) are
//! one pair, decided by [`super::decide`]; configuration that differs inside a pair (MTU, TX
//! depth, inline size, firmware, driver) is reported with it.

use super::{Decision, Rule};
use crate::config::GateConfig;
use crate::model::Run;
use crate::normalize::aggregate;
use crate::normalize::points::{self, PointKey, RunKey};
use crate::selection::Selection;
use anyhow::Result;
use polars::prelude::{col, Column, DataFrame, IntoLazy};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// One decided point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GatePoint {
    pub test: String,
    pub role: String,
    pub connection_type: String,
    pub qps: String,
    pub msg_size_bytes: Option<u64>,
    pub platform: String,
    pub metric: String,
    pub rule: Rule,
    #[serde(flatten)]
    pub decision: Decision,
    pub baseline_n: usize,
    pub current_n: usize,
    /// 95 % confidence interval of current median / baseline median (needs repeats on one
    /// side), and how it was computed (`bootstrap`, or `order statistics` for large samples).
    pub ratio_ci: Option<(f64, f64)>,
    pub ratio_ci_method: Option<String>,
    /// Baseline or current repeats vary more than `[gate] noisy_cv_above`.
    pub noisy: bool,
    /// Configuration that differs inside the pair, e.g. `mtu 4096 → 1024`.
    pub config_changes: Vec<String>,
    /// Counters that changed across the current and the baseline runs of the point, summed
    /// over repeats, those that tell why first (`rx_pause +1.2M, cnp_sent +40k`); empty when
    /// the runs carry no counters.
    #[serde(default)]
    pub counters: String,
    #[serde(default)]
    pub baseline_counters: String,
    pub baseline_sources: Vec<String>,
    pub current_sources: Vec<String>,
}

impl GatePoint {
    /// `test role size B metric`, for annotations and a stable order.
    pub fn name(&self) -> String {
        format!(
            "{} {} {} B {}",
            self.test,
            self.role,
            self.msg_size_bytes.map_or("-".into(), |s| s.to_string()),
            self.metric
        )
    }
}

impl GatePoint {
    /// The counters beside the verdict: `rx_pause +1.2M (baseline: rx_pause +3)`.
    pub fn counters_text(&self) -> String {
        match (self.counters.is_empty(), self.baseline_counters.is_empty()) {
            (_, true) => self.counters.clone(),
            (true, false) => format!("(baseline: {})", self.baseline_counters),
            (false, false) => format!("{} (baseline: {})", self.counters, self.baseline_counters),
        }
    }
}

/// What a pair's points have in common, from its first point.
struct Sample {
    key: PointKey,
    platform: String,
}

#[derive(Default)]
struct Side {
    values: Vec<f64>,
    sources: Vec<String>,
    config: BTreeMap<&'static str, BTreeSet<String>>,
    link_speed: Option<f64>,
    sample: Option<Sample>,
    /// The sides' runs, as indexes into the selection's runs (for their counters).
    runs: Vec<usize>,
}

/// The pairing key of a run under `--pair-by`, without the parts each point adds (its size,
/// when `msg_size` is a pairing key, and its metric).
fn run_pair_key(key: &RunKey, run: &Run, pair_by: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = pair_by
        .iter()
        .filter(|k| **k != "msg_size")
        .map(|k| match *k {
            "test" => key.test.clone(),
            "role" => key.role.clone(),
            "connection_type" => key.connection_type.clone(),
            "qps" => key.qps.clone(),
            "platform" => key.group.clone(),
            "mtu" => run.mtu.map_or("-".into(), |m| m.to_string()),
            "host" => run.host.clone().unwrap_or_default(),
            _ => run.device.clone().unwrap_or_default(),
        })
        .collect();
    out.push(key.tool.clone());
    out
}

/// The full pairing key: the run's part with the point's size put where `msg_size` stands in
/// `pair_by`, then tool and metric.
fn pair_key(run_part: &[String], size: Option<u64>, metric: &str, pair_by: &[&str]) -> Vec<String> {
    let mut key = Vec::with_capacity(run_part.len() + 2);
    let mut parts = run_part.iter();
    for k in pair_by {
        if *k == "msg_size" {
            key.push(size.map_or("-".into(), |s| s.to_string()));
        } else {
            key.extend(parts.next().cloned());
        }
    }
    key.extend(parts.cloned());
    key.push(metric.to_string());
    key
}

/// Groups one side's points by pairing key, in columns: each run's part of the key and its
/// configuration facts are computed once, and polars groups the points by (run key, size,
/// metric).
fn collect(
    side: &Selection,
    metrics: &[String],
    pair_by: &[&str],
) -> Result<BTreeMap<Vec<String>, Side>> {
    let values = if metrics.is_empty() {
        points::values(&side.rows, None)?
    } else {
        let mut all: Option<DataFrame> = None;
        for m in metrics {
            let v = points::values(&side.rows, Some(m))?;
            all = Some(match all {
                None => v,
                Some(mut a) => {
                    a.vstack_mut_owned(v)?;
                    a
                }
            });
        }
        all.expect("metrics is not empty")
    };
    let mut ids: HashMap<Vec<String>, u32> = HashMap::new();
    let mut run_parts: Vec<Vec<String>> = Vec::new();
    type RunInfo = (u32, RunKey, Vec<(&'static str, String)>, Option<f64>);
    let mut run_info: Vec<Option<RunInfo>> = Vec::new();
    for (run, platform) in &side.runs {
        run_info.push(RunKey::of(run, platform, "platform").map(|key| {
            let part = run_pair_key(&key, run, pair_by);
            let id = *ids.entry(part.clone()).or_insert_with(|| {
                run_parts.push(part);
                run_parts.len() as u32 - 1
            });
            (
                id,
                key,
                super::config_facts(run, platform),
                points::link_speed(platform),
            )
        }));
    }
    let prefixes: Vec<String> = side
        .runs
        .iter()
        .map(|(r, _)| format!("{}:", r.source))
        .collect();
    let pid: Vec<Option<u32>> = values
        .column("run")?
        .u32()?
        .iter()
        .map(|r| r.and_then(|r| run_info[r as usize].as_ref().map(|i| i.0)))
        .collect();
    let mut values = values;
    values.with_column(Column::new("pid".into(), pid))?;
    let values = values.lazy().filter(col("pid").is_not_null()).collect()?;
    let cols = points::ValueColumns::of(&values)?;
    let group_keys: &[&str] = if pair_by.contains(&"msg_size") {
        &["pid", "msg_size_bytes", "metric"]
    } else {
        &["pid", "metric"]
    };
    let mut out = BTreeMap::new();
    let groups = aggregate::group_stats(values.clone(), group_keys)?;
    for g in groups {
        let mut side_out = Side::default();
        let mut last_run = None;
        for &row in &g.rows {
            let (run, line, size, metric, value) = cols.row(row as usize);
            let (_, key, facts, link_speed) =
                run_info[run].as_ref().expect("rows of keyed runs only");
            side_out.values.push(value);
            side_out
                .sources
                .push(aggregate::with_line(&prefixes[run], line));
            side_out.link_speed = side_out.link_speed.or(*link_speed);
            if side_out.sample.is_none() {
                side_out.sample = Some(Sample {
                    key: key.point_key(size, points::metric_name(metric)),
                    platform: key.group.clone(),
                });
            }
            // A run's rows are adjacent (rows are in run order): its facts are added once.
            if last_run.replace(run) != Some(run) {
                side_out.runs.push(run);
                for (k, v) in facts {
                    let seen = side_out.config.entry(*k).or_default();
                    if !seen.contains(v) {
                        seen.insert(v.clone());
                    }
                }
            }
        }
        let first = cols.row(g.rows[0] as usize);
        let part = &run_parts[run_info[first.0].as_ref().expect("keyed").0 as usize];
        out.insert(
            pair_key(part, first.2, points::metric_name(first.3), pair_by),
            side_out,
        );
    }
    Ok(out)
}

/// How many counters a gate verdict names.
const COUNTERS_SHOWN: usize = 4;

/// The counter summary of some runs of a side.
fn counters_of(side: &Selection, runs: &[usize]) -> String {
    crate::counters::summary(
        runs.iter().flat_map(|&i| side.runs[i].0.counters.iter()),
        COUNTERS_SHOWN,
    )
}

/// Pairs and decides every point.
pub fn evaluate(
    baseline: &Selection,
    current: &Selection,
    metrics: &[String],
    pair_by: &[&str],
    config: &GateConfig,
) -> Result<Vec<GatePoint>> {
    let (bs, cs) = (
        collect(baseline, metrics, pair_by)?,
        collect(current, metrics, pair_by)?,
    );
    let keys: BTreeSet<&Vec<String>> = bs.keys().chain(cs.keys()).collect();
    let empty = Side::default();
    let mut out = Vec::new();
    for key in keys {
        let b = bs.get(key).unwrap_or(&empty);
        let c = cs.get(key).unwrap_or(&empty);
        let sample = b
            .sample
            .as_ref()
            .or(c.sample.as_ref())
            .expect("a paired point has a side");
        let metric = sample.key.metric.clone();
        let Ok(direction) = points::direction(&metric) else {
            continue;
        };
        let rule = super::rule_for(config, &sample.key.test, &metric, sample.key.msg_size_bytes);
        let decision = super::decide(
            &b.values,
            &c.values,
            direction,
            &rule,
            c.link_speed.or(b.link_speed),
        );
        let ci = crate::stats::ratio_ci95(&b.values, &c.values);
        let mut config_changes = Vec::new();
        for (k, before) in &b.config {
            if let Some(after) = c.config.get(k) {
                if before != after {
                    let list =
                        |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join("/");
                    config_changes.push(format!("{k} {} → {}", list(before), list(after)));
                }
            }
        }
        out.push(GatePoint {
            test: sample.key.test.clone(),
            role: sample.key.role.clone(),
            connection_type: sample.key.connection_type.clone(),
            qps: sample.key.qps.clone(),
            msg_size_bytes: sample.key.msg_size_bytes,
            platform: sample.platform.clone(),
            metric,
            rule,
            decision,
            baseline_n: b.values.len(),
            current_n: c.values.len(),
            ratio_ci: ci.map(|x| x.0),
            ratio_ci_method: ci.map(|x| x.1.to_string()),
            noisy: [&b.values, &c.values]
                .iter()
                .any(|v| v.len() > 1 && crate::stats::cv(v) > config.noisy_cv_above),
            config_changes,
            counters: counters_of(current, &c.runs),
            baseline_counters: counters_of(baseline, &b.runs),
            baseline_sources: b.sources.clone(),
            current_sources: c.sources.clone(),
        });
    }
    out.sort_by(|a, b| {
        a.decision
            .outcome
            .cmp(&b.decision.outcome)
            .then(b.decision.worse_by.total_cmp(&a.decision.worse_by))
            .then_with(|| a.name().cmp(&b.name()))
    });
    Ok(out)
}

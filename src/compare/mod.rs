//! Comparison of groups (platforms, MTUs, label values) point by point: for every key the
//! median of each group, its ratio to the baseline group and the difference, judged with the
//! direction of the metric (bandwidth and message rate: higher is better; latency: lower).
//! Points missing on one side are kept as `missing`. Pure functions over aggregates: no I/O.

pub mod mtu;

use crate::normalize::aggregate::Aggregate;
use crate::normalize::points::{direction, Direction, PointKey};
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How a group's value compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Baseline,
    Better,
    Worse,
    /// Within the `same_within` tolerance of the baseline.
    Same,
    /// This group has no value for the point.
    Missing,
    /// The baseline has no value for the point, so there is nothing to compare with.
    NoBaseline,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Baseline => "baseline",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Missing => "missing",
            Verdict::NoBaseline => "no baseline",
        }
    }
}

/// One group's value at one point.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub group: String,
    pub stats: Option<Aggregate>,
    /// value / baseline value.
    pub ratio: Option<f64>,
    /// value − baseline value, in the metric's unit.
    pub diff: Option<f64>,
    pub verdict: Verdict,
    /// Share of the link speed (bandwidth metrics, when the speed is known).
    pub line_rate_share: Option<f64>,
    /// 95 % confidence interval of `ratio` (needs repeats on at least one side), and how it was
    /// computed (`bootstrap`, or `order statistics` for large samples).
    pub ratio_ci: Option<(f64, f64)>,
    pub ratio_ci_method: Option<&'static str>,
    /// The repeats vary more than `noisy_cv` (coefficient of variation).
    pub noisy: bool,
}

/// One point across all groups.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: PointKey,
    pub direction: Direction,
    pub cells: Vec<Cell>,
}

/// Something worth a reader's attention, with provenance.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub group: String,
    pub key: PointKey,
    pub message: String,
    pub sources: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub by: String,
    pub baseline: String,
    /// Baseline first, then the other groups in sorted order.
    pub groups: Vec<String>,
    pub rows: Vec<Row>,
    pub findings: Vec<Finding>,
}

/// Settings of a comparison.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    pub by: &'a str,
    pub baseline: Option<&'a str>,
    /// Relative change below which two values count as the same (0.01 = 1 %).
    pub same_within: f64,
    /// Bandwidth below this share of the link speed is a finding.
    pub line_rate_floor: f64,
    /// Repeats with a coefficient of variation above this are flagged `noisy`.
    pub noisy_cv: f64,
}

/// Numeric order when both groups are numbers (MTUs, speeds), text order otherwise.
fn group_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    }
}

fn is_bandwidth(metric: &str) -> bool {
    metric.starts_with("bw_")
}

/// Compares aggregates group against baseline. The aggregates move into the comparison's
/// cells (their values and sources can be millions for a large selection).
pub fn compare(aggs: Vec<Aggregate>, opts: &Options<'_>) -> Result<Comparison> {
    let all_groups: BTreeSet<String> = aggs.iter().map(|a| a.group.clone()).collect();
    let baseline = match opts.baseline {
        Some(b) if all_groups.contains(b) => b.to_string(),
        Some(b) => bail!(
            "--baseline {b:?} is not a {} in the selection. Choose from: {}",
            opts.by,
            all_groups.iter().cloned().collect::<Vec<_>>().join(", ")
        ),
        None => match all_groups.iter().min_by(|a, b| group_order(a, b)) {
            Some(g) => g.to_string(),
            None => bail!("nothing to compare: the selection has no measurement points"),
        },
    };
    let mut groups = vec![baseline.clone()];
    groups.extend(
        all_groups
            .iter()
            .filter(|g| **g != baseline)
            .map(|g| g.to_string()),
    );
    // MTUs and speeds are numbers: 512 before 1024.
    groups[1..].sort_by(|a, b| group_order(a, b));

    let mut by_key: BTreeMap<PointKey, BTreeMap<String, Aggregate>> = BTreeMap::new();
    for a in aggs {
        by_key
            .entry(a.key.clone())
            .or_default()
            .insert(a.group.clone(), a);
    }
    let mut rows = Vec::new();
    let mut findings = Vec::new();
    for (key, mut cells_by_group) in by_key {
        let dir = direction(&key.metric)?;
        let base = cells_by_group.get(baseline.as_str()).map(|a| a.median);
        let base_values = cells_by_group
            .get(baseline.as_str())
            .map(|a| a.values.clone());
        let mut cells = Vec::new();
        for g in &groups {
            let stats = cells_by_group.remove(g.as_str());
            let value = stats.as_ref().map(|a| a.median);
            let (ratio, diff) = match (value, base) {
                (Some(v), Some(b)) if b != 0.0 => (Some(v / b), Some(v - b)),
                (Some(v), Some(b)) => (None, Some(v - b)),
                _ => (None, None),
            };
            let verdict = verdict(g == &baseline, value, base, ratio, dir, opts.same_within);
            let line_rate_share = stats
                .as_ref()
                .filter(|_| is_bandwidth(&key.metric))
                .and_then(|a| Some(a.median / a.link_speed_gbps.filter(|s| *s > 0.0)?));
            if let (Some(share), Some(a)) = (line_rate_share, &stats) {
                if share < opts.line_rate_floor {
                    findings.push(below_line_rate(g, &key, a, share, opts.line_rate_floor));
                }
            }
            let ci = match (&stats, &base_values) {
                (Some(a), Some(b)) if g != &baseline => crate::stats::ratio_ci95(b, &a.values),
                _ => None,
            };
            let noisy = stats
                .as_ref()
                .is_some_and(|a| a.n > 1 && a.cv > opts.noisy_cv);
            cells.push(Cell {
                group: g.clone(),
                stats,
                ratio,
                diff,
                verdict,
                line_rate_share,
                ratio_ci: ci.map(|c| c.0),
                ratio_ci_method: ci.map(|c| c.1),
                noisy,
            });
        }
        rows.push(Row {
            key: key.clone(),
            direction: dir,
            cells,
        });
    }
    Ok(Comparison {
        by: opts.by.to_string(),
        baseline,
        groups,
        rows,
        findings,
    })
}

/// A group's verdict at one point against the baseline's value.
fn verdict(
    is_baseline: bool,
    value: Option<f64>,
    base: Option<f64>,
    ratio: Option<f64>,
    dir: Direction,
    same_within: f64,
) -> Verdict {
    match (is_baseline, value, base, ratio) {
        (true, Some(_), _, _) => Verdict::Baseline,
        (_, None, _, _) => Verdict::Missing,
        (false, Some(_), None, _) => Verdict::NoBaseline,
        (false, Some(_), Some(_), Some(r)) if (r - 1.0).abs() <= same_within => Verdict::Same,
        (false, Some(v), Some(b), _) => {
            let better = match dir {
                Direction::HigherIsBetter => v > b,
                Direction::LowerIsBetter => v < b,
            };
            if better {
                Verdict::Better
            } else {
                Verdict::Worse
            }
        }
    }
}

/// `ib_write_bw 65536 B: 85.2 % of the 100 Gbit/s link (below 90 %)`.
fn below_line_rate(group: &str, key: &PointKey, a: &Aggregate, share: f64, floor: f64) -> Finding {
    Finding {
        group: group.to_string(),
        key: key.clone(),
        message: format!(
            "{} {} B: {:.1} % of the {} Gbit/s link (below {:.0} %)",
            key.test,
            key.msg_size_bytes.map_or("-".into(), |s| s.to_string()),
            share * 100.0,
            a.link_speed_gbps.unwrap_or(0.0),
            floor * 100.0
        ),
        sources: a.sources.clone(),
    }
}

/// Points of one (test, role, MTU) that not every group has, folded into one line: a comparison
/// of platforms where one ran MTU 1024 and the other did not would otherwise list every size of
/// it as `missing`.
#[derive(Debug, Clone, Serialize)]
pub struct Partial {
    pub test: String,
    pub role: String,
    pub mtu: String,
    /// How many points (rows) are folded.
    pub points: usize,
    /// Their message sizes, distinct and sorted.
    pub sizes: Vec<Option<u64>>,
    /// Groups that have some of these points, with how many.
    pub present: Vec<(String, usize)>,
    /// Groups that lack some of them, with how many.
    pub missing: Vec<(String, usize)>,
}

impl Partial {
    /// `kunpeng920 only: ib_read_bw client, MTU 1024, 23 sizes (2 B … 8 MiB); missing in s5000c-b850`.
    pub fn describe(&self) -> String {
        let sizes: Vec<u64> = self.sizes.iter().flatten().copied().collect();
        let what = match (sizes.first(), sizes.last()) {
            (Some(lo), Some(hi)) if lo != hi => format!(
                "{} sizes ({} … {})",
                sizes.len(),
                crate::format::bytes_label(*lo as f64),
                crate::format::bytes_label(*hi as f64)
            ),
            (Some(one), _) => format!("size {}", crate::format::bytes_label(*one as f64)),
            _ if self.points == 1 => "1 point".to_string(),
            _ => format!("{} points", self.points),
        };
        let mtu = if self.mtu == "-" {
            String::new()
        } else {
            format!(", MTU {}", self.mtu)
        };
        let uniform = self.present.iter().all(|(_, n)| *n == self.points)
            && self.missing.iter().all(|(_, n)| *n == self.points);
        let list = |groups: &[(String, usize)], counts: bool| {
            groups
                .iter()
                .map(|(g, n)| {
                    if counts {
                        format!("{g} ({n})")
                    } else {
                        g.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if uniform {
            format!(
                "{} only: {} {}{mtu}, {what}; missing in {}",
                list(&self.present, false),
                self.test,
                self.role,
                list(&self.missing, false)
            )
        } else {
            format!(
                "{} {}{mtu}: {what} not in every group; present in {}; missing in {}",
                self.test,
                self.role,
                list(&self.present, true),
                list(&self.missing, true)
            )
        }
    }
}

/// Splits a comparison's rows into those every group has and, for the rest, one [`Partial`] per
/// (test, role, MTU), in row order.
pub fn fold(c: &Comparison) -> (Vec<&Row>, Vec<Partial>) {
    let mut complete = Vec::new();
    let mut partial: BTreeMap<(&str, &str, &str), Vec<&Row>> = BTreeMap::new();
    let mut order = Vec::new();
    for r in &c.rows {
        if r.cells.iter().all(|cell| cell.stats.is_some()) {
            complete.push(r);
        } else {
            let key = (r.key.test.as_str(), r.key.role.as_str(), r.key.mtu.as_str());
            if !partial.contains_key(&key) {
                order.push(key);
            }
            partial.entry(key).or_default().push(r);
        }
    }
    let folded = order
        .into_iter()
        .map(|key| {
            let rows = &partial[&key];
            let count = |has: bool| -> Vec<(String, usize)> {
                c.groups
                    .iter()
                    .filter_map(|g| {
                        let n = rows
                            .iter()
                            .filter(|r| {
                                r.cells
                                    .iter()
                                    .any(|cell| &cell.group == g && cell.stats.is_some() == has)
                            })
                            .count();
                        (n > 0).then(|| (g.clone(), n))
                    })
                    .collect()
            };
            let sizes: BTreeSet<Option<u64>> = rows.iter().map(|r| r.key.msg_size_bytes).collect();
            Partial {
                test: key.0.to_string(),
                role: key.1.to_string(),
                mtu: key.2.to_string(),
                points: rows.len(),
                sizes: sizes.into_iter().collect(),
                present: count(true),
                missing: count(false),
            }
        })
        .collect();
    (complete, folded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agg(group: &str, metric: &str, size: u64, median: f64) -> Aggregate {
        Aggregate {
            group: group.into(),
            key: PointKey {
                tool: "perftest".into(),
                test: "t".into(),
                role: "client".into(),
                connection_type: "RC".into(),
                mtu: "4096".into(),
                qps: "1".into(),
                msg_size_bytes: Some(size),
                metric: metric.into(),
            },
            n: 1,
            median,
            mean: median,
            min: median,
            max: median,
            stddev: 0.0,
            cv: 0.0,
            link_speed_gbps: Some(10.0),
            run_ids: vec![],
            sources: vec![],
            values: vec![median],
        }
    }

    fn opts(baseline: Option<&str>) -> Options<'_> {
        Options {
            by: "platform",
            baseline,
            same_within: 0.01,
            line_rate_floor: 0.9,
            noisy_cv: 0.05,
        }
    }

    #[test]
    fn direction_decides_better_and_worse() {
        let aggs = vec![
            agg("a", "lat_typical_us", 2, 1.97),
            agg("b", "lat_typical_us", 2, 5.43),
            agg("a", "bw_avg_gbps", 8, 9.0),
            agg("b", "bw_avg_gbps", 8, 9.5),
        ];
        let c = compare(aggs.clone(), &opts(Some("a"))).unwrap();
        let lat = c
            .rows
            .iter()
            .find(|r| r.key.metric == "lat_typical_us")
            .unwrap();
        assert_eq!(lat.cells[1].verdict, Verdict::Worse);
        assert!((lat.cells[1].ratio.unwrap() - 5.43 / 1.97).abs() < 1e-12);
        let bw = c
            .rows
            .iter()
            .find(|r| r.key.metric == "bw_avg_gbps")
            .unwrap();
        assert_eq!(bw.cells[1].verdict, Verdict::Better);
        assert_eq!(bw.cells[0].verdict, Verdict::Baseline);
        // 9.0 of 10 Gbit/s is not below 90 %; 9.5 neither.
        assert!(c.findings.is_empty());
    }

    #[test]
    fn missing_points_are_kept_and_unknown_baseline_lists_groups() {
        let aggs = vec![
            agg("a", "bw_avg_gbps", 2, 1.0),
            agg("b", "bw_avg_gbps", 4, 1.0),
        ];
        let c = compare(aggs.clone(), &opts(None)).unwrap();
        assert_eq!(c.rows.len(), 2);
        assert_eq!(c.rows[0].cells[1].verdict, Verdict::Missing);
        assert_eq!(c.rows[1].cells[1].verdict, Verdict::NoBaseline);
        let e = compare(aggs.clone(), &opts(Some("zz")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("Choose from: a, b"), "{e}");
    }

    #[test]
    fn line_rate_findings() {
        let aggs = vec![agg("a", "bw_avg_gbps", 65536, 8.0)];
        let c = compare(aggs.clone(), &opts(None)).unwrap();
        assert!((c.rows[0].cells[0].line_rate_share.unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(c.findings.len(), 1);
        assert!(c.findings[0]
            .message
            .contains("80.0 % of the 10 Gbit/s link"));
    }
}

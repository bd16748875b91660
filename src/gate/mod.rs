//! The CI gate's decision, as pure functions: given the baseline and current values of one
//! point (possibly several runs each), the metric's direction and its rule, say whether the
//! point regressed, improved or is unchanged.
//!
//! "Regressed" needs both a change beyond the rule's relative threshold in the bad direction
//! and, when either side has repeated runs, statistical significance (two-sided Mann-Whitney U,
//! p < alpha). With a single run on each side the threshold alone decides, and the decision
//! says so. A bandwidth floor (share of line rate) fails a point on its own.

use crate::config::GateConfig;
use crate::metric::Metric;
use crate::model::Run;
use crate::normalize::platform::Platform;
use crate::normalize::points::Direction;
use crate::stats;
use serde::{Deserialize, Serialize};

pub mod junit;
pub mod markdown;
pub mod pairing;
pub mod table;

pub use pairing::{evaluate, GatePoint};

/// What `gate --json FILE` writes and `report --gate FILE` reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateResult {
    pub failed: bool,
    /// Worst first.
    pub points: Vec<GatePoint>,
}

/// Keys points can be paired by (`gate --pair-by`, `history --pair-by`).
pub const PAIR_KEYS: &[&str] = &[
    "test",
    "role",
    "connection_type",
    "qps",
    "msg_size",
    "platform",
    "mtu",
    "host",
    "device",
];

/// The default pairing: MTU, host and device left out, so a run at another MTU pairs with the
/// baseline and the change is reported.
pub const DEFAULT_PAIR_BY: &[&str] = PAIR_KEYS.split_at(6).0;

/// One key of `--pair-by`, spelt as [`PAIR_KEYS`] spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum PairKey {
    Test,
    Role,
    ConnectionType,
    Qps,
    MsgSize,
    Platform,
    Mtu,
    Host,
    Device,
}

impl PairKey {
    pub fn as_str(self) -> &'static str {
        match self {
            PairKey::Test => "test",
            PairKey::Role => "role",
            PairKey::ConnectionType => "connection_type",
            PairKey::Qps => "qps",
            PairKey::MsgSize => "msg_size",
            PairKey::Platform => "platform",
            PairKey::Mtu => "mtu",
            PairKey::Host => "host",
            PairKey::Device => "device",
        }
    }
}

/// The names of `keys`, with an error naming the `allowed` keys where one is not.
pub fn pair_by(keys: &[PairKey], allowed: &[&str]) -> anyhow::Result<Vec<&'static str>> {
    let keys: Vec<&'static str> = keys.iter().map(|k| k.as_str()).collect();
    if let Some(bad) = keys.iter().find(|k| !allowed.contains(k)) {
        anyhow::bail!(
            "--pair-by {bad:?} is not a key here. Choose from: {}",
            allowed.join(", ")
        );
    }
    Ok(keys)
}

/// The rule for a metric at a point: the last matching `[[gate.rule]]`, else `[gate.thresholds]`,
/// else the default.
pub fn rule_for(config: &GateConfig, test: &str, metric: &str, size: Option<u64>) -> Rule {
    let known = Metric::parse(metric).ok();
    let mut rule = Rule {
        threshold: known
            .and_then(|m| config.thresholds.get(&m))
            .copied()
            .unwrap_or_else(|| known.map_or(0.10, Metric::default_threshold)),
        floor_line_rate: None,
        alpha: config.alpha,
    };
    for r in &config.rules {
        let applies = r.test.as_deref().is_none_or(|t| t == test)
            && r.metric.is_none_or(|m| m.as_str() == metric)
            && r.min_size.is_none_or(|min| size.is_some_and(|s| s >= min))
            && r.max_size.is_none_or(|max| size.is_some_and(|s| s <= max));
        if applies {
            if let Some(t) = r.threshold {
                rule.threshold = t;
            }
            if r.floor_line_rate.is_some() && metric.starts_with("bw_") {
                rule.floor_line_rate = r.floor_line_rate;
            }
        }
    }
    rule
}

/// Configuration facts of a run that explain performance changes.
pub fn config_facts(run: &Run, p: &Platform) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(m) = run.mtu {
        out.push(("mtu", m.to_string()));
    }
    for (key, fact) in [
        ("tx_depth", "tx_depth"),
        ("inline", "max_inline_data"),
        ("outstanding_reads", "outstand_reads"),
    ] {
        if let Some(v) = run.facts.get(fact) {
            out.push((key, v.clone()));
        }
    }
    for key in ["firmware", "driver"] {
        if let Some(r) = p.get(key) {
            out.push((key, r.value.clone()));
        }
    }
    out
}

/// The rule for one metric at one point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Relative change in the bad direction beyond which a point regresses (0.05 = 5 %).
    pub threshold: f64,
    /// Bandwidth must stay at or above this share of the link speed, when it is known.
    pub floor_line_rate: Option<f64>,
    /// Significance level for repeated runs.
    pub alpha: f64,
}

/// The gate's verdict for one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Regressed,
    /// In the baseline but not in the current selection.
    Missing,
    Improved,
    Unchanged,
    /// In the current selection only.
    New,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Regressed => "regressed",
            Outcome::Missing => "missing",
            Outcome::Improved => "improved",
            Outcome::Unchanged => "unchanged",
            Outcome::New => "new",
        }
    }
}

/// What was decided for one point, with the numbers behind it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decision {
    pub outcome: Outcome,
    pub baseline_median: Option<f64>,
    pub current_median: Option<f64>,
    /// (current − baseline) / baseline.
    pub change: Option<f64>,
    /// The change in the bad direction (positive = worse), for sorting worst first.
    pub worse_by: f64,
    pub p_value: Option<f64>,
    /// `threshold only (single runs)` or `Mann-Whitney U (n=5 vs 5)`.
    pub method: String,
    pub reason: String,
}

/// Decides one point. `link_speed_gbps` is used only for the bandwidth floor.
pub fn decide(
    baseline: &[f64],
    current: &[f64],
    direction: Direction,
    rule: &Rule,
    link_speed_gbps: Option<f64>,
) -> Decision {
    let base = (!baseline.is_empty()).then(|| stats::median(baseline));
    let cur = (!current.is_empty()).then(|| stats::median(current));
    let (Some(b), Some(c)) = (base, cur) else {
        let outcome = if cur.is_none() {
            Outcome::Missing
        } else {
            Outcome::New
        };
        return Decision {
            outcome,
            baseline_median: base,
            current_median: cur,
            change: None,
            worse_by: if outcome == Outcome::Missing {
                f64::INFINITY
            } else {
                0.0
            },
            p_value: None,
            method: "pairing".into(),
            reason: if outcome == Outcome::Missing {
                "no current value for this point".into()
            } else {
                "no baseline value for this point".into()
            },
        };
    };
    let change = if b != 0.0 { (c - b) / b.abs() } else { 0.0 };
    let worse_by = match direction {
        Direction::HigherIsBetter => -change,
        Direction::LowerIsBetter => change,
    };
    let repeated = baseline.len() > 1 || current.len() > 1;
    let (p_value, significant, method) = if repeated {
        let m = stats::mann_whitney(baseline, current);
        let p = m.map_or(1.0, |m| m.p_value);
        (
            Some(p),
            p < rule.alpha,
            format!("Mann-Whitney U (n={} vs {})", baseline.len(), current.len()),
        )
    } else {
        (None, true, "threshold only (single runs)".to_string())
    };
    let beyond = worse_by > rule.threshold;
    let better_beyond = -worse_by > rule.threshold;
    let floor = rule
        .floor_line_rate
        .zip(link_speed_gbps.filter(|s| *s > 0.0))
        .filter(|(floor, speed)| c / speed < *floor);
    let pct = |v: f64| format!("{:+.1} %", v * 100.0);
    let (outcome, reason) = if let Some((floor, speed)) = floor {
        (
            Outcome::Regressed,
            format!(
                "{:.1} % of the {speed} Gbit/s link, below the {:.0} % floor",
                c / speed * 100.0,
                floor * 100.0
            ),
        )
    } else if beyond && significant {
        (
            Outcome::Regressed,
            format!(
                "{} beyond the {:.0} % threshold",
                pct(change),
                rule.threshold * 100.0
            ),
        )
    } else if beyond {
        (
            Outcome::Unchanged,
            format!(
                "{} but not significant (p = {:.3})",
                pct(change),
                p_value.unwrap_or(1.0)
            ),
        )
    } else if better_beyond && significant {
        (
            Outcome::Improved,
            format!(
                "{} beyond the {:.0} % threshold",
                pct(change),
                rule.threshold * 100.0
            ),
        )
    } else {
        (
            Outcome::Unchanged,
            format!(
                "{} within the {:.0} % threshold",
                pct(change),
                rule.threshold * 100.0
            ),
        )
    };
    Decision {
        outcome,
        baseline_median: Some(b),
        current_median: Some(c),
        change: Some(change),
        worse_by,
        p_value,
        method,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(metric: &str) -> Rule {
        rule_for(&GateConfig::default(), "", metric, None)
    }

    fn one(base: f64, cur: f64, metric: &str, dir: Direction) -> Outcome {
        decide(&[base], &[cur], dir, &rule(metric), None).outcome
    }

    #[test]
    fn latency_threshold_boundaries() {
        let lower = Direction::LowerIsBetter;
        assert_eq!(
            one(100.0, 109.9, "lat_typical_us", lower),
            Outcome::Unchanged
        );
        assert_eq!(
            one(100.0, 110.1, "lat_typical_us", lower),
            Outcome::Regressed
        );
        assert_eq!(one(100.0, 89.9, "lat_typical_us", lower), Outcome::Improved);
        assert_eq!(one(100.0, 119.9, "lat_p99_us", lower), Outcome::Unchanged);
        assert_eq!(one(100.0, 120.1, "lat_p99_us", lower), Outcome::Regressed);
    }

    #[test]
    fn bandwidth_threshold_boundaries() {
        let higher = Direction::HigherIsBetter;
        assert_eq!(one(100.0, 95.1, "bw_avg_gbps", higher), Outcome::Unchanged);
        assert_eq!(one(100.0, 94.9, "bw_avg_gbps", higher), Outcome::Regressed);
        assert_eq!(
            one(100.0, 94.9, "msg_rate_mpps", higher),
            Outcome::Regressed
        );
        // An increase is never a regression, however large.
        assert_eq!(one(100.0, 300.0, "bw_avg_gbps", higher), Outcome::Improved);
        assert_eq!(one(100.0, 104.0, "bw_avg_gbps", higher), Outcome::Unchanged);
    }

    #[test]
    fn single_runs_say_so() {
        let d = decide(
            &[100.0],
            &[90.0],
            Direction::HigherIsBetter,
            &rule("bw_avg_gbps"),
            None,
        );
        assert_eq!(d.method, "threshold only (single runs)");
        assert_eq!(d.p_value, None);
    }

    #[test]
    fn repeats_need_significance() {
        let mut r = rule("bw_avg_gbps");
        r.threshold = 0.02;
        // 3 % lower with 0.2 % noise: beyond 2 % and significant.
        let base = [100.0, 100.2, 99.8, 100.1, 99.9];
        let tight = [97.0, 97.2, 96.8, 97.1, 96.9];
        let d = decide(&base, &tight, Direction::HigherIsBetter, &r, None);
        assert_eq!(d.outcome, Outcome::Regressed, "{d:?}");
        assert!(d.p_value.unwrap() < 0.01);
        // 3 % lower with 5 % noise: the medians differ by more than 2 % but not significantly.
        let noisy_base = [100.0, 105.0, 95.0, 103.0, 97.0];
        let noisy_cur = [97.0, 102.0, 92.0, 100.0, 94.0];
        let d = decide(&noisy_base, &noisy_cur, Direction::HigherIsBetter, &r, None);
        assert_eq!(d.outcome, Outcome::Unchanged, "{d:?}");
        assert!(d.p_value.unwrap() > 0.05);
        assert!(d.reason.contains("not significant"));
    }

    #[test]
    fn floor_and_missing() {
        let mut r = rule("bw_avg_gbps");
        r.floor_line_rate = Some(0.9);
        let d = decide(&[9.0], &[8.8], Direction::HigherIsBetter, &r, Some(10.0));
        assert_eq!(d.outcome, Outcome::Regressed);
        assert!(d.reason.contains("88.0 % of the 10 Gbit/s link"));
        assert_eq!(
            decide(&[1.0], &[], Direction::HigherIsBetter, &r, None).outcome,
            Outcome::Missing
        );
        assert_eq!(
            decide(&[], &[1.0], Direction::HigherIsBetter, &r, None).outcome,
            Outcome::New
        );
    }

    #[test]
    fn pair_keys_are_the_enum() {
        use clap::ValueEnum;
        let names: Vec<&str> = PairKey::value_variants()
            .iter()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(names, PAIR_KEYS);
        for k in PairKey::value_variants() {
            assert_eq!(k.to_possible_value().unwrap().get_name(), k.as_str());
        }
    }
}

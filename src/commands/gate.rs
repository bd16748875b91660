//! `linkperf gate`: pairs the points of a baseline and a current selection, decides each with
//! [`crate::gate::decide`], reports configuration that changed inside a pair (MTU, TX depth,
//! inline size, firmware, driver), and exits 1 when anything regressed (or went missing).
//! Outputs: a table worst first, `--json`, `--junit`, `--markdown`, the GitHub job summary
//! and `::error` annotations.

use crate::cli::GateArgs;
use crate::config::{Config, GateConfig};
use crate::format;
use crate::gate::{self, Decision, Outcome, Rule};
use crate::model::Run;
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, Point};
use crate::ExitStatus;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

const PAIR_KEYS: &[&str] = &[
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

/// One decided point.
#[derive(Debug, Clone, Serialize)]
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
    /// Configuration that differs inside the pair, e.g. `mtu 4096 → 1024`.
    pub config_changes: Vec<String>,
    pub baseline_sources: Vec<String>,
    pub current_sources: Vec<String>,
}

impl GatePoint {
    fn name(&self) -> String {
        format!(
            "{} {} {} B {}",
            self.test,
            self.role,
            self.msg_size_bytes.map_or("-".into(), |s| s.to_string()),
            self.metric
        )
    }
}

/// Configuration facts of a run that explain performance changes.
fn config_facts(run: &Run, p: &Platform) -> Vec<(&'static str, String)> {
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

/// The pairing key of a point under `--pair-by`.
fn pair_key(p: &Point, run: &Run, pair_by: &[&str]) -> Vec<String> {
    let mut key: Vec<String> = pair_by
        .iter()
        .map(|k| match *k {
            "test" => p.key.test.clone(),
            "role" => p.key.role.clone(),
            "connection_type" => p.key.connection_type.clone(),
            "qps" => p.key.qps.clone(),
            "msg_size" => p.key.msg_size_bytes.map_or("-".into(), |s| s.to_string()),
            "platform" => p.group.clone(),
            "mtu" => run.mtu.map_or("-".into(), |m| m.to_string()),
            "host" => run.host.clone().unwrap_or_default(),
            _ => run.device.clone().unwrap_or_default(),
        })
        .collect();
    key.push(p.key.tool.clone());
    key.push(p.key.metric.clone());
    key
}

/// The rule for a metric at a point: the last matching `[[gate.rule]]`, else `[gate.thresholds]`,
/// else the default.
fn rule_for(config: &GateConfig, test: &str, metric: &str, size: Option<u64>) -> Rule {
    let mut rule = Rule {
        threshold: config
            .thresholds
            .get(metric)
            .copied()
            .unwrap_or_else(|| gate::default_threshold(metric)),
        floor_line_rate: None,
        alpha: config.alpha,
    };
    for r in &config.rules {
        let applies = r.test.as_deref().is_none_or(|t| t == test)
            && r.metric.as_deref().is_none_or(|m| m == metric)
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

#[derive(Default)]
struct Side<'a> {
    values: Vec<f64>,
    sources: Vec<String>,
    config: BTreeMap<&'static str, BTreeSet<String>>,
    link_speed: Option<f64>,
    sample: Option<&'a Point>,
}

fn collect<'a>(
    pts: &'a [Point],
    runs: &BTreeMap<&str, &(Run, Platform)>,
    pair_by: &[&str],
) -> BTreeMap<Vec<String>, Side<'a>> {
    let mut out: BTreeMap<Vec<String>, Side<'a>> = BTreeMap::new();
    for p in pts {
        let Some((run, platform)) = runs.get(p.run_id.as_str()).copied() else {
            continue;
        };
        let side = out.entry(pair_key(p, run, pair_by)).or_default();
        side.values.push(p.value);
        side.sources.push(format!("{}:{}", p.source, p.line));
        side.link_speed = side.link_speed.or(p.link_speed_gbps);
        side.sample.get_or_insert(p);
        for (k, v) in config_facts(run, platform) {
            side.config.entry(k).or_default().insert(v);
        }
    }
    out
}

fn index(runs: &[(Run, Platform)]) -> BTreeMap<&str, &(Run, Platform)> {
    runs.iter().map(|rp| (rp.0.run_id.as_str(), rp)).collect()
}

fn side_points(runs: &[(Run, Platform)], metrics: &[String]) -> Vec<Point> {
    if metrics.is_empty() {
        points::points(runs, "platform", None)
    } else {
        metrics
            .iter()
            .flat_map(|m| points::points(runs, "platform", Some(m)))
            .collect()
    }
}

/// Pairs and decides every point.
pub fn evaluate(
    baseline: &[(Run, Platform)],
    current: &[(Run, Platform)],
    metrics: &[String],
    pair_by: &[&str],
    config: &GateConfig,
) -> Vec<GatePoint> {
    let (bp, cp) = (
        side_points(baseline, metrics),
        side_points(current, metrics),
    );
    let (bi, ci) = (index(baseline), index(current));
    let (bs, cs) = (collect(&bp, &bi, pair_by), collect(&cp, &ci, pair_by));
    let keys: BTreeSet<&Vec<String>> = bs.keys().chain(cs.keys()).collect();
    let empty = Side::default();
    let mut out = Vec::new();
    for key in keys {
        let b = bs.get(key).unwrap_or(&empty);
        let c = cs.get(key).unwrap_or(&empty);
        let sample = b.sample.or(c.sample).expect("a paired point has a side");
        let metric = sample.key.metric.clone();
        let Ok(direction) = points::direction(&metric) else {
            continue;
        };
        let rule = rule_for(config, &sample.key.test, &metric, sample.key.msg_size_bytes);
        let decision = gate::decide(
            &b.values,
            &c.values,
            direction,
            &rule,
            c.link_speed.or(b.link_speed),
        );
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
            platform: sample.group.clone(),
            metric,
            rule,
            decision,
            baseline_n: b.values.len(),
            current_n: c.values.len(),
            config_changes,
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
    out
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".into(), format::num)
}

fn change(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{:+.1} %", c * 100.0))
}

fn table_rows(points: &[GatePoint]) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = [
        "verdict",
        "test",
        "role",
        "size",
        "metric",
        "baseline",
        "current",
        "change",
        "p",
        "config change",
        "why",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let rows = points
        .iter()
        .map(|p| {
            vec![
                p.decision.outcome.as_str().to_string(),
                p.test.clone(),
                p.role.clone(),
                p.msg_size_bytes.map_or("-".into(), |s| s.to_string()),
                p.metric.clone(),
                num(p.decision.baseline_median),
                num(p.decision.current_median),
                change(p.decision.change),
                p.decision.p_value.map_or("-".into(), |v| format!("{v:.3}")),
                p.config_changes.join("; "),
                format!("{} [{}]", p.decision.reason, p.decision.method),
            ]
        })
        .collect();
    (headers, rows)
}

/// The gate's summary line.
fn summary(points: &[GatePoint], failed: bool) -> String {
    let count = |o: Outcome| points.iter().filter(|p| p.decision.outcome == o).count();
    format!(
        "gate {}: {} regressed, {} missing, {} improved, {} unchanged, {} new ({} points)",
        if failed { "FAILED" } else { "passed" },
        count(Outcome::Regressed),
        count(Outcome::Missing),
        count(Outcome::Improved),
        count(Outcome::Unchanged),
        count(Outcome::New),
        points.len()
    )
}

/// Markdown: the summary, the failing points, and (unless compact) every point.
pub fn markdown(points: &[GatePoint], failed: bool, compact: bool) -> String {
    let mut out = format!("### linkperf gate\n\n{}\n\n", summary(points, failed));
    let bad: Vec<GatePoint> = points
        .iter()
        .filter(|p| matches!(p.decision.outcome, Outcome::Regressed | Outcome::Missing))
        .cloned()
        .collect();
    let single = points
        .iter()
        .any(|p| p.decision.p_value.is_none() && p.decision.baseline_median.is_some());
    if !bad.is_empty() {
        let (h, r) = table_rows(&bad);
        out.push_str(&format::markdown_table(&h, &r));
        out.push('\n');
    }
    if single {
        out.push_str(
            "Points with a single run on each side were decided by the threshold alone.\n\n",
        );
    }
    if !compact {
        let (h, r) = table_rows(points);
        out.push_str("<details><summary>All points</summary>\n\n");
        out.push_str(&format::markdown_table(&h, &r));
        out.push_str("\n</details>\n");
    }
    out
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JUnit XML: one test case per test and size (and metric); failures carry both values.
pub fn junit(points: &[GatePoint]) -> String {
    let failures = points
        .iter()
        .filter(|p| matches!(p.decision.outcome, Outcome::Regressed | Outcome::Missing))
        .count();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"linkperf gate\" tests=\"{}\" failures=\"{failures}\">\n",
        points.len()
    );
    for p in points {
        out.push_str(&format!(
            "  <testcase classname=\"{}\" name=\"{}\">",
            xml(&p.test),
            xml(&p.name())
        ));
        if matches!(p.decision.outcome, Outcome::Regressed | Outcome::Missing) {
            let msg = format!(
                "{}: baseline {} current {} ({}){}",
                p.decision.outcome.as_str(),
                num(p.decision.baseline_median),
                num(p.decision.current_median),
                p.decision.reason,
                if p.config_changes.is_empty() {
                    String::new()
                } else {
                    format!("; config change: {}", p.config_changes.join("; "))
                }
            );
            out.push_str(&format!(
                "\n    <failure message=\"{}\">{}</failure>\n  ",
                xml(&msg),
                xml(&p.current_sources.join("\n"))
            ));
        }
        out.push_str("</testcase>\n");
    }
    out.push_str("</testsuite>\n</testsuites>\n");
    out
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    super::export::write_atomic(path, text.as_bytes())
}

pub fn run(store_dir: &Path, config: &Config, args: &GateArgs) -> Result<ExitStatus> {
    for m in &args.metrics {
        points::direction(m)?;
    }
    let pair_by: Vec<&str> = args
        .pair_by
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(bad) = pair_by.iter().find(|k| !PAIR_KEYS.contains(k)) {
        bail!(
            "--pair-by {bad:?} is not a key. Choose from: {}",
            PAIR_KEYS.join(", ")
        );
    }
    let side = |path: Option<&Path>, own: &[String], what: &str| -> Result<Vec<(Run, Platform)>> {
        let filters: Vec<String> = args.filters.iter().chain(own).cloned().collect();
        let runs = super::selection::load_source(path, store_dir, config, &filters)
            .with_context(|| format!("cannot read the {what}"))?;
        if runs.iter().all(|(r, _)| r.measurements.is_empty()) {
            bail!("the {what} selection is empty: no run with measurements matches {filters:?}");
        }
        Ok(runs)
    };
    let baseline = side(args.baseline.as_deref(), &args.baseline_where, "baseline")?;
    let current = side(args.current.as_deref(), &args.current_where, "current")?;
    let points = evaluate(&baseline, &current, &args.metrics, &pair_by, &config.gate);
    if points.is_empty() {
        bail!("no comparable points in the baseline and current selections");
    }
    let missing_fails = config.gate.missing != "ignore";
    let failed = points.iter().any(|p| {
        p.decision.outcome == Outcome::Regressed
            || (missing_fails && p.decision.outcome == Outcome::Missing)
    });

    let (h, r) = table_rows(&points);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(format::text_table(&h, &r).as_bytes())?;
    writeln!(stdout, "{}", summary(&points, failed))?;
    if let Some(path) = &args.json {
        write_file(
            path,
            &(serde_json::to_string_pretty(
                &serde_json::json!({ "failed": failed, "points": points }),
            )? + "\n"),
        )?;
    }
    if let Some(path) = &args.junit {
        write_file(path, &junit(&points))?;
    }
    if let Some(path) = &args.markdown {
        write_file(path, &markdown(&points, failed, false))?;
    }
    if let Some(summary_path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary_path)
            .with_context(|| {
                format!(
                    "cannot append to GITHUB_STEP_SUMMARY {}",
                    summary_path.to_string_lossy()
                )
            })?;
        f.write_all(markdown(&points, failed, true).as_bytes())?;
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        for p in points
            .iter()
            .filter(|p| matches!(p.decision.outcome, Outcome::Regressed | Outcome::Missing))
        {
            writeln!(
                stdout,
                "::error title=linkperf gate: {}::{} baseline {} current {} ({})",
                p.name(),
                p.decision.outcome.as_str(),
                num(p.decision.baseline_median),
                num(p.decision.current_median),
                p.decision.reason
            )?;
        }
    }
    Ok(if failed {
        ExitStatus::Regression
    } else {
        ExitStatus::Success
    })
}

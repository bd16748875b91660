//! The gate's text table (stdout) and summary line; the Markdown output reuses both.

use super::{GatePoint, Outcome};
use crate::format;

pub fn num(v: Option<f64>) -> String {
    v.map_or("-".into(), format::num)
}

fn change(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{:+.1} %", c * 100.0))
}

/// The change, its 95 % interval where repeats give one, and a `noisy` flag.
fn change_with_ci(p: &GatePoint) -> String {
    let mut out = change(p.decision.change);
    if let Some((lo, hi)) = p.ratio_ci {
        out.push_str(&format!(
            " [{:+.1}, {:+.1}]",
            (lo - 1.0) * 100.0,
            (hi - 1.0) * 100.0
        ));
    }
    if p.noisy {
        out.push_str(" noisy");
    }
    out
}

/// The columns of the gate's table; the report's regressions section shows all but `p`.
pub const HEADERS: [&str; 12] = [
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
    "counters",
    "why",
];

/// Whether the `counters` column has anything to show: runs without counters files (imported
/// logs) leave it out.
pub fn shows_counters(points: &[GatePoint]) -> bool {
    points.iter().any(|p| !p.counters_text().is_empty())
}

/// Removes column `name` from a table.
pub fn without_column<T>(headers: &mut Vec<String>, rows: &mut [Vec<T>], name: &str) {
    if let Some(i) = headers.iter().position(|h| h == name) {
        headers.remove(i);
        for r in rows.iter_mut() {
            r.remove(i);
        }
    }
}

pub fn table_rows(points: &[GatePoint]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut headers: Vec<String> = HEADERS.iter().map(|s| s.to_string()).collect();
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
                change_with_ci(p),
                p.decision.p_value.map_or("-".into(), |v| format!("{v:.3}")),
                p.config_changes.join("; "),
                p.counters_text(),
                format!("{} [{}]", p.decision.reason, p.decision.method),
            ]
        })
        .collect::<Vec<_>>();
    let mut rows = rows;
    if !shows_counters(points) {
        without_column(&mut headers, &mut rows, "counters");
    }
    (headers, rows)
}

/// The gate's summary line.
pub fn summary(points: &[GatePoint], failed: bool) -> String {
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

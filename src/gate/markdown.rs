//! `gate --markdown FILE` and the GitHub job summary.

use super::table::{summary, table_rows};
use super::{GatePoint, Outcome};
use crate::format;

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

//! The comparison table: every point of every group against the baseline group, with the
//! ratio and verdict; points some group lacks are folded into one line each.

use super::view::{provenance, size_text, Cell, Table};
use super::Options;
use crate::compare::{self, Comparison, Verdict};
use crate::config::Config;
use crate::format;
use crate::model::Run;
use crate::normalize::aggregate;
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, prefer_client};
use anyhow::Result;

/// Every group against the baseline, with the metric's direction.
pub(super) fn compare(
    selected: &[(Run, Platform)],
    config: &Config,
    opts: &Options<'_>,
) -> Result<Comparison> {
    let aggs = aggregate::aggregate(&prefer_client(points::points(selected, opts.by, None)?))?;
    compare::compare(
        aggs,
        &compare::Options {
            by: opts.by,
            baseline: opts.baseline,
            same_within: 0.01,
            line_rate_floor: config.compare.line_rate_finding_below,
            noisy_cv: config.compare.noisy_cv_above,
        },
    )
}

/// The table of the points every group has, and one line per partial point.
pub(super) fn table(comparison: &Comparison) -> (Table, Vec<String>) {
    let mut headers: Vec<String> = ["test", "role", "mtu", "size", "metric"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for g in &comparison.groups {
        headers.push(g.clone());
        if g != &comparison.baseline {
            headers.push(format!("{g} vs {}", comparison.baseline));
        }
    }
    let (complete, partial) = compare::fold(comparison);
    let only_in_some: Vec<String> = partial.iter().map(compare::Partial::describe).collect();
    let rows = complete
        .iter()
        .map(|r| {
            let mut row = vec![
                Cell::text(&r.key.test),
                Cell::text(&r.key.role),
                Cell::text(&r.key.mtu),
                Cell::text(size_text(r.key.msg_size_bytes)),
                Cell::text(&r.key.metric),
            ];
            for c in &r.cells {
                row.push(match &c.stats {
                    Some(s) => Cell::num(s.median, &provenance(&s.sources)),
                    None => Cell::text("missing"),
                });
                if c.group != comparison.baseline {
                    row.push(verdict_cell(c));
                }
            }
            row
        })
        .collect();
    (Table { headers, rows }, only_in_some)
}

/// `1.02× better`, coloured by the verdict.
fn verdict_cell(c: &compare::Cell) -> Cell {
    let class = match c.verdict {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        _ => "",
    };
    let text = match c.ratio {
        Some(ratio) if matches!(c.verdict, Verdict::Better | Verdict::Worse | Verdict::Same) => {
            format!("{} {}", format::ratio(ratio), c.verdict.as_str())
        }
        _ => c.verdict.as_str().to_string(),
    };
    Cell {
        text,
        class: class.into(),
        source: String::new(),
    }
}

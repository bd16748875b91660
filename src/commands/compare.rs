//! `linkperf compare`: groups (platforms, MTUs, label values) against a baseline, point by
//! point, as a table, Markdown, JSON or CSV.

use crate::cli::{CompareArgs, CompareFormat};
use crate::compare::{self, Comparison, Verdict};
use crate::config::Config;
use crate::exit::ExitStatus;
use crate::format;
use crate::normalize::{aggregate, platform::PLATFORM_KEYS};
use anyhow::{bail, Result};
use std::io::Write;
use std::path::Path;

/// Dimensions `--by` accepts besides `label:NAME` and the platform keys.
const BY_KEYS: &[&str] = &[
    "mtu",
    "tool",
    "host",
    "device",
    "qps",
    "connection_type",
    "role",
    "source",
];

pub fn run(store_dir: &Path, config: &Config, args: &CompareArgs) -> Result<ExitStatus> {
    let metric = args.metric.map(|m| m.as_str());
    let metrics: Vec<&str> = metric.into_iter().collect();
    let selection =
        crate::selection::load_rows(store_dir, config, &args.selection.filters, &metrics)?;
    let selected = &selection.runs;
    let by = args.by.as_str();
    let known_by = BY_KEYS.contains(&by)
        || PLATFORM_KEYS.contains(&by)
        || by
            .strip_prefix("label:")
            .is_some_and(|l| selected.iter().any(|(_, p)| p.contains_key(l)));
    if !known_by {
        let mut labels: Vec<String> = selected
            .iter()
            .flat_map(|(_, p)| {
                p.keys()
                    .filter(|k| !PLATFORM_KEYS.contains(&k.as_str()))
                    .map(|k| format!("label:{k}"))
            })
            .collect();
        labels.sort();
        labels.dedup();
        bail!(
            "--by {by:?} is not a dimension. Choose from: {}, {}{}{}",
            PLATFORM_KEYS.join(", "),
            BY_KEYS.join(", "),
            if labels.is_empty() { "" } else { ", " },
            labels.join(", ")
        );
    }
    if selected.is_empty() {
        bail!(
            "the selection is empty: no stored run matches {:?}",
            args.selection.filters
        );
    }
    let aggs = aggregate::aggregate_rows(selected, &selection.rows, by, metric)?;
    if aggs.is_empty() {
        bail!("the selection has no comparable measurement points");
    }
    let comparison = compare::compare(
        aggs,
        &compare::Options {
            by,
            baseline: args.baseline.as_deref(),
            same_within: args.same_within,
            line_rate_floor: config.compare.line_rate_finding_below,
            noisy_cv: config.compare.noisy_cv_above,
        },
    )?;
    let text = match args.format {
        CompareFormat::Json => serde_json::to_string_pretty(&comparison)? + "\n",
        CompareFormat::Table => render(&comparison, Style::Text, args.show_missing),
        CompareFormat::Markdown => render(&comparison, Style::Markdown, args.show_missing),
        CompareFormat::Csv => render(&comparison, Style::Csv, true),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    super::free_at_exit((comparison, selection));
    Ok(ExitStatus::Success)
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Text,
    Markdown,
    Csv,
}

/// One table row per point; per group its median (with n and CV for repeats), then for the
/// other groups the ratio to the baseline and the verdict, and the share of line rate. Points
/// some group lacks are folded into one line per (test, role, MTU) below the table unless
/// `show_missing`.
fn render(c: &Comparison, style: Style, show_missing: bool) -> String {
    let (complete, partial) = compare::fold(c);
    let shown: Vec<&compare::Row> = if show_missing {
        c.rows.iter().collect()
    } else {
        complete
    };
    let mut headers: Vec<String> = ["test", "role", "conn", "mtu", "qps", "size", "metric"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for g in &c.groups {
        headers.push(g.clone());
        if g != &c.baseline {
            headers.push(format!("{g} vs {}", c.baseline));
        }
    }
    let any_line_rate = shown
        .iter()
        .any(|r| r.cells.iter().any(|x| x.line_rate_share.is_some()));
    if any_line_rate {
        headers.push("line rate".into());
    }
    let mut rows = Vec::new();
    for r in &shown {
        let k = &r.key;
        let mut row = vec![
            k.test.clone(),
            k.role.clone(),
            k.connection_type.clone(),
            k.mtu.clone(),
            k.qps.clone(),
            k.msg_size_bytes.map_or("-".into(), |s| s.to_string()),
            k.metric.clone(),
        ];
        let mut shares = Vec::new();
        for cell in &r.cells {
            row.push(match &cell.stats {
                Some(s) if s.n > 1 => format!(
                    "{} (n={}, cv {}{})",
                    format::num(s.median),
                    s.n,
                    format::pct(s.cv),
                    if cell.noisy { ", noisy" } else { "" }
                ),
                Some(s) => format::num(s.median),
                None => "missing".into(),
            });
            if cell.group != c.baseline {
                row.push(match (cell.verdict, cell.ratio) {
                    (Verdict::Missing | Verdict::NoBaseline, _) => {
                        cell.verdict.as_str().to_string()
                    }
                    (v, Some(ratio)) => match cell.ratio_ci {
                        // The 95 % interval of the ratio, where repeats give one.
                        Some((lo, hi)) => format!(
                            "{} [{:.2}–{:.2}] {}",
                            format::ratio(ratio),
                            lo,
                            hi,
                            v.as_str()
                        ),
                        None => format!("{} {}", format::ratio(ratio), v.as_str()),
                    },
                    (v, None) => v.as_str().to_string(),
                });
            }
            if let Some(share) = cell.line_rate_share {
                shares.push(format!("{}: {}", cell.group, format::pct(share)));
            }
        }
        if any_line_rate {
            row.push(shares.join("; "));
        }
        rows.push(row);
    }
    let mut out = match style {
        Style::Text => format::text_table(&headers, &rows),
        Style::Markdown => format::markdown_table(&headers, &rows),
        Style::Csv => return format::csv(&headers, &rows),
    };
    if !show_missing && !partial.is_empty() {
        out.push_str(if style == Style::Markdown {
            "\n**Only in some groups** (`--show-missing` lists every point)\n\n"
        } else {
            "\nOnly in some groups (--show-missing lists every point):\n"
        });
        for p in &partial {
            out.push_str(&format!("- {}\n", p.describe()));
        }
    }
    if !c.findings.is_empty() {
        out.push_str(if style == Style::Markdown {
            "\n**Findings**\n\n"
        } else {
            "\nFindings:\n"
        });
        for f in &c.findings {
            out.push_str(&format!(
                "- {}: {} ({})\n",
                f.group,
                f.message,
                f.sources.join(", ")
            ));
        }
    }
    out
}
